//! Debian packages: what is installed, adding the backports suite, installing what is missing.
//!
//! The backports entry reuses the mirror URIs the machine already uses for its release, read
//! at run time from its apt sources, so no host name is ever written into the project.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::Duration;

/// Where the backports entry is written when the machine has none.
const BACKPORTS_FILE: &str = "/etc/apt/sources.list.d/vdsotime-backports.sources";

/// True when `dpkg -s` reports the package installed.
pub fn is_installed(package: &str) -> bool {
    let Ok(out) = Command::new("dpkg")
        .args(["-s", package])
        .stderr(Stdio::null())
        .output()
    else {
        return false;
    };
    out.status.success()
        && String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.trim() == "Status: install ok installed")
}

/// The release codename (`bookworm`), from /etc/os-release.
pub fn codename() -> Option<String> {
    let text = fs::read_to_string("/etc/os-release").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .map(|v| v.trim_matches('"').to_string())
        .filter(|v| !v.is_empty())
}

/// One apt source: its URIs, suites and key (the parts a backports entry reuses).
#[derive(Debug, Default)]
struct Source {
    uris: Vec<String>,
    suites: Vec<String>,
    signed_by: Option<String>,
}

/// Parses deb822 `.sources` stanzas (only `Types: deb` ones).
fn parse_deb822(text: &str) -> Vec<Source> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let mut src = Source::default();
        let mut is_deb = false;
        for line in stanza.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let words = || value.split_whitespace().map(str::to_string);
            match key.trim() {
                "Types" => is_deb = words().any(|w| w == "deb"),
                "URIs" => src.uris = words().collect(),
                "Suites" => src.suites = words().collect(),
                "Signed-By" => src.signed_by = Some(value.trim().to_string()),
                "Enabled" => is_deb &= value.trim() != "no",
                _ => {}
            }
        }
        if is_deb && !src.uris.is_empty() {
            out.push(src);
        }
    }
    out
}

/// Parses one-line `deb [options] URI suite components` entries.
fn parse_one_line(text: &str) -> Vec<Source> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("deb ") else {
            continue;
        };
        let mut rest = rest.trim_start();
        let mut signed_by = None;
        if let Some(opts) = rest.strip_prefix('[') {
            let Some((options, after)) = opts.split_once(']') else {
                continue;
            };
            signed_by = options
                .split_whitespace()
                .find_map(|o| o.strip_prefix("signed-by="))
                .map(str::to_string);
            rest = after;
        }
        let mut words = rest.split_whitespace();
        if let (Some(uri), Some(suite)) = (words.next(), words.next()) {
            out.push(Source {
                uris: vec![uri.to_string()],
                suites: vec![suite.to_string()],
                signed_by,
            });
        }
    }
    out
}

/// Every enabled `deb` source of the machine.
fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    if let Ok(text) = fs::read_to_string("/etc/apt/sources.list") {
        out.extend(parse_one_line(&text));
    }
    let Ok(dir) = fs::read_dir("/etc/apt/sources.list.d") else {
        return out;
    };
    let mut paths: Vec<_> = dir.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        match path.extension().and_then(|e| e.to_str()) {
            Some("sources") => out.extend(parse_deb822(&text)),
            Some("list") => out.extend(parse_one_line(&text)),
            _ => {}
        }
    }
    out
}

/// Makes `<codename>-backports` available, returning its suite name.
///
/// Reuses the URIs and key of the source that serves `<codename>` itself.
pub fn ensure_backports(codename: &str) -> Result<String, String> {
    let suite = format!("{codename}-backports");
    let all = sources();
    if all.iter().any(|s| s.suites.contains(&suite)) {
        return Ok(suite);
    }
    let (uris, key) = release_source(codename)?;
    let mut entry = format!(
        "Types: deb\nURIs: {}\nSuites: {suite}\nComponents: main\n",
        uris.join(" ")
    );
    if let Some(key) = &key {
        entry.push_str(&format!("Signed-By: {key}\n"));
    }
    fs::write(BACKPORTS_FILE, entry).map_err(|e| format!("writing {BACKPORTS_FILE}: {e}"))?;
    println!("apt: added {suite} ({BACKPORTS_FILE})");
    Ok(suite)
}

/// The mirror URIs and key of the apt source that serves the release `codename` itself:
/// what an entry for another suite of the same mirror reuses.
pub fn release_source(codename: &str) -> Result<(Vec<String>, Option<String>), String> {
    sources()
        .into_iter()
        .find(|s| s.suites.iter().any(|x| x == codename))
        .map(|s| (s.uris, s.signed_by))
        .ok_or_else(|| format!("no apt source serves suite {codename}"))
}

/// How many times an apt command is run before its failure counts, and the pause between:
/// a mirror may fail a request or be in mid-sync for a moment, and one failed `apt-get
/// update` on a fresh machine would leave a whole CI step without its emulators.
const APT_ATTEMPTS: u32 = 3;
const APT_PAUSE: Duration = Duration::from_secs(15);

/// Runs an apt command, its output appended to `log`, again after a failure (each
/// download also retried by apt itself); the error names the log.
fn apt(args: &[&str], log: &Path) -> Result<(), String> {
    let what = format!("apt-get {}", args.first().copied().unwrap_or(""));
    let mut attempt = 1;
    loop {
        let mut cmd = Command::new("apt-get");
        cmd.args(["-o", "Acquire::Retries=3"])
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive");
        match logged(cmd, log, &what) {
            Err(e) if attempt < APT_ATTEMPTS => {
                println!(
                    "apt: {e}; again in {} s (attempt {attempt} of {APT_ATTEMPTS})",
                    APT_PAUSE.as_secs()
                );
                sleep(APT_PAUSE);
                attempt += 1;
            }
            result => return result,
        }
    }
}

/// Runs `cmd` without input, its output appended to `log`; the error names `what` and the log.
pub fn logged(mut cmd: Command, log: &Path, what: &str) -> Result<(), String> {
    let file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .status()
        .map_err(|e| format!("{what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status}), see {}", log.display()))
    }
}

/// `apt-get update`. One index that fails (a mirror in mid-sync) fails the command but may
/// not matter: whether the packages can be installed afterwards is what counts, so a
/// failure is reported, not returned, and the install that follows decides.
pub fn update(log: &Path) {
    println!("apt: apt-get update");
    if let Err(e) = apt(&["update"], log) {
        println!("apt: {e} (continuing with the package lists that arrived)");
    }
}

/// Installs `packages` (names may carry `/suite`) without recommends.
pub fn install(packages: &[String], log: &Path) -> Result<(), String> {
    install_from(None, packages, log)
}

/// Installs `packages` without recommends, their dependencies too from `suite` when given
/// (`-t`: qemu-system from backports needs backports' firmware packages).
pub fn install_from(suite: Option<&str>, packages: &[String], log: &Path) -> Result<(), String> {
    println!("apt: installing {}", packages.join(" "));
    let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
    if let Some(suite) = suite {
        args.extend(["-t", suite]);
    }
    args.extend(packages.iter().map(String::as_str));
    apt(&args, log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deb822_stanzas_give_uris_suites_and_key() {
        let text = "Types: deb\n# a comment\nURIs: http://mirror.example/debian\n\
                    Suites: bookworm bookworm-updates\nComponents: main\n\
                    Signed-By: /usr/share/keyrings/k.gpg\n\n\
                    Types: deb-src\nURIs: http://src.example/\nSuites: bookworm\n";
        let s = parse_deb822(text);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].uris, ["http://mirror.example/debian"]);
        assert_eq!(s[0].suites, ["bookworm", "bookworm-updates"]);
        assert_eq!(s[0].signed_by.as_deref(), Some("/usr/share/keyrings/k.gpg"));
    }

    #[test]
    fn one_line_entries_with_options() {
        let text = "# deb http://old.example/ bookworm main\n\
                    deb [arch=amd64 signed-by=/k.gpg] http://m.example/debian bookworm main\n\
                    deb-src http://m.example/debian bookworm main\n";
        let s = parse_one_line(text);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].uris, ["http://m.example/debian"]);
        assert_eq!(s[0].suites, ["bookworm"]);
        assert_eq!(s[0].signed_by.as_deref(), Some("/k.gpg"));
    }
}
