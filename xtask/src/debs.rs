//! Debian packages of other architectures, downloaded and unpacked without installing them:
//! a private apt state directory (its own sources, lists and cache, the foreign
//! architectures), whose entries reuse the mirror URIs and key of the machine's own apt
//! sources, so no host name is written anywhere and the machine's apt setup is left alone.
//! Used for the kernels of `cargo xtask kernels` and the i386 musl sysroot of the C runs.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::apt;

/// `apt-get`/`apt-cache` with every state and source path under one directory.
#[derive(Debug)]
pub struct PrivateApt {
    dir: PathBuf,
    log: PathBuf,
    /// APT::Architectures: the host's and every foreign one the sources serve.
    pub arches: String,
}

impl PrivateApt {
    /// Writes the sources: one line per (suite, architectures), from the mirror that serves
    /// the machine's release `codename`.
    pub fn create(
        dir: &Path,
        suites: &[(String, Vec<&str>)],
        codename: &str,
        log: &Path,
    ) -> Result<Self, String> {
        let (uris, key) = apt::release_source(codename)?;
        let mut lines = String::new();
        let mut all_arches = vec!["amd64"];
        for (suite, arches) in suites {
            // The package lists only (no DEP-11 metadata the machine's apt may ask for).
            let mut options = format!("arch={} target=Packages", arches.join(","));
            if let Some(key) = &key {
                options.push_str(&format!(" signed-by={key}"));
            }
            for uri in &uris {
                lines.push_str(&format!("deb [{options}] {uri} {suite} main\n"));
            }
            for a in arches {
                if !all_arches.contains(a) {
                    all_arches.push(a);
                }
            }
        }
        for sub in ["state/lists/partial", "cache/archives/partial", "empty"] {
            fs::create_dir_all(dir.join(sub)).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let write = |name: &str, text: &str| {
            fs::write(dir.join(name), text).map_err(|e| format!("{}/{name}: {e}", dir.display()))
        };
        write("sources.list", &lines)?;
        write("state/status", "")?;
        Ok(Self {
            dir: dir.to_path_buf(),
            log: log.to_path_buf(),
            arches: all_arches.join(","),
        })
    }

    /// An apt command on the private state. The machine's own apt configuration is still
    /// read (apt reads it before any `-o`), which may turn apt's binary cache off (Docker
    /// images' `docker-clean`): every run would then parse every index again, 15 s with
    /// six suites and seven architectures, so the cache is named here (and removed when
    /// this value is dropped: 600 MB).
    fn command(&self, program: &str) -> Command {
        let d = self.dir.display();
        let mut cmd = Command::new(program);
        for option in [
            format!("Dir::State={d}/state"),
            format!("Dir::State::status={d}/state/status"),
            format!("Dir::Cache={d}/cache"),
            format!("Dir::Cache::pkgcache={d}/cache/{}", BINARY_CACHES[0]),
            format!("Dir::Cache::srcpkgcache={d}/cache/{}", BINARY_CACHES[1]),
            format!("Dir::Etc::sourcelist={d}/sources.list"),
            format!("Dir::Etc::sourceparts={d}/empty"),
            format!("Dir::Etc::parts={d}/empty"),
            format!("Dir::Etc::preferencesparts={d}/empty"),
            format!("APT::Architectures={}", self.arches),
            "Acquire::Languages=none".to_string(),
            // A mirror may fail a request for a moment; a 404 fails again at once.
            "Acquire::Retries=3".to_string(),
            "APT::Sandbox::User=root".to_string(),
        ] {
            cmd.arg("-o").arg(option);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    fn logged(&self, cmd: Command, what: &str) -> Result<(), String> {
        apt::logged(cmd, &self.log, what)
    }

    /// `apt-get update`. A mirror in mid-sync can fail one index; what matters is whether
    /// the packages can be found afterwards, so a failure is reported, not returned.
    pub fn update(&self) {
        let mut cmd = self.command("apt-get");
        cmd.args(["-q", "update"]);
        if let Err(e) = self.logged(cmd, "apt-get update") {
            println!("apt (private): {e} (continuing with the indexes that arrived)");
        }
    }

    /// The `Depends:` of each of `packages` (`name:arch/suite`; none for one apt does not
    /// know), in one `apt-cache depends` run: each run reads every index of every suite
    /// and architecture again (10 to 25 s with seven architectures and five suites).
    pub fn dependencies(&self, packages: &[String]) -> Vec<Vec<String>> {
        let Ok(run) = self
            .command("apt-cache")
            .args(["depends", "--no-recommends", "--no-suggests"])
            .args(packages)
            .output()
        else {
            return vec![Vec::new(); packages.len()];
        };
        parse_depends(&String::from_utf8_lossy(&run.stdout), packages)
    }

    /// Downloads `package` (`name:arch`, `name:arch/suite`) into `dir`; returns the .deb,
    /// or apt's reason, its whole output going to the log.
    pub fn download(&self, package: &str, dir: &Path) -> Result<PathBuf, Failed> {
        let name = package.split([':', '/']).next().unwrap_or(package);
        let failed = |reason: String| Failed {
            package: name.to_string(),
            reason,
            log: self.log.clone(),
        };
        fs::create_dir_all(dir).map_err(|e| failed(format!("{}: {e}", dir.display())))?;
        let out = self
            .command("apt-get")
            .current_dir(dir)
            .args(["-q", "download", package])
            .output()
            .map_err(|e| failed(format!("apt-get: {e}")))?;
        let text = [out.stdout, out.stderr].concat();
        fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .and_then(|mut log| log.write_all(&text))
            .map_err(|e| failed(format!("{}: {e}", self.log.display())))?;
        if !out.status.success() {
            return Err(failed(apt_error(&String::from_utf8_lossy(&text))));
        }
        only_file(dir, &format!("{name}_"), ".deb").map_err(failed)
    }
}

/// apt's binary caches of the indexes, in the private `cache` directory.
const BINARY_CACHES: [&str; 2] = ["pkgcache.bin", "srcpkgcache.bin"];

impl Drop for PrivateApt {
    fn drop(&mut self) {
        for name in BINARY_CACHES {
            let _ = fs::remove_file(self.dir.join("cache").join(name));
        }
    }
}

/// A download that failed: the package, apt's reason, and the log that has the rest.
#[derive(Debug, Clone)]
pub struct Failed {
    pub package: String,
    pub reason: String,
    pub log: PathBuf,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (package, reason, log) = (&self.package, &self.reason, self.log.display());
        write!(f, "{package}: download failed: {reason} (see {log})")
    }
}

/// apt's reason for a failure, from its last `E:` line, without the URL (which names
/// the mirror): `Failed to fetch <url>  404  Not Found [IP: ...]` gives `404 Not Found`.
fn apt_error(output: &str) -> String {
    let Some(line) = output.lines().rev().find_map(|l| l.strip_prefix("E: ")) else {
        return format!("failed ({} lines of output)", output.lines().count());
    };
    match line.strip_prefix("Failed to fetch ") {
        Some(rest) => {
            let words: Vec<&str> = rest
                .split(" [IP:")
                .next()
                .unwrap_or(rest)
                .split_whitespace()
                .skip(1)
                .collect();
            words.join(" ")
        }
        None => line.trim().to_string(),
    }
}

/// The `Depends:` of each of `packages` in `apt-cache depends` output: one block per package
/// apt found, in the order asked, headed by its name (with `:arch` unless it is the host's).
fn parse_depends(text: &str, packages: &[String]) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); packages.len()];
    let mut next = 0;
    let mut current = None;
    for line in text.lines() {
        if !line.starts_with(' ') {
            current = packages[next..]
                .iter()
                .position(|p| {
                    let name = p.split('/').next().unwrap_or(p);
                    name == line || name.split(':').next() == Some(line)
                })
                .map(|i| next + i);
            if let Some(i) = current {
                next = i + 1;
            }
        } else if let (Some(i), Some(dep)) = (current, line.trim().strip_prefix("Depends: ")) {
            out[i].push(dep.to_string());
        }
    }
    out
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
pub fn only_file(dir: &Path, prefix: &str, suffix: &str) -> Result<PathBuf, String> {
    let found: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(prefix) && f.ends_with(suffix))
        })
        .collect();
    match &found[..] {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "{}: expected one {prefix}*{suffix}, found {}",
            dir.display(),
            found.len()
        )),
    }
}

/// Unpacks a package's files into `dir` (`dpkg-deb -x`).
pub fn unpack(deb: &Path, dir: &Path) -> Result<(), String> {
    let status = Command::new("dpkg-deb")
        .arg("-x")
        .arg(deb)
        .arg(dir)
        .status()
        .map_err(|e| format!("dpkg-deb: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("dpkg-deb -x {} failed ({status})", deb.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apt_errors_keep_the_reason_and_drop_the_url() {
        let out = "Err:1 http://m.example/debian sid/main s390x linux-binary-7 s390x 7-1\n\
                   \x20 404  Not Found [IP: 192.0.2.1 80]\n\
                   E: Failed to fetch http://m.example/debian/pool/main/l/linux/x.deb  \
                   404  Not Found [IP: 192.0.2.1 80]\n";
        assert_eq!(apt_error(out), "404 Not Found");
        let out = "Reading package lists...\nE: Can't select candidate version\n";
        assert_eq!(apt_error(out), "Can't select candidate version");
        assert_eq!(apt_error("a\nb\n"), "failed (2 lines of output)");
    }

    #[test]
    fn depends_blocks_map_to_the_packages_asked_even_when_one_is_unknown() {
        let asked = [
            "linux-image-arm64:arm64/bookworm",
            "nosuch:arm64/sid",
            "linux-image-amd64:amd64/trixie",
            "linux-image-arm64:arm64/trixie-backports",
        ]
        .map(String::from);
        let text = "linux-image-arm64:arm64\n  Depends: linux-image-6.1.0-50-arm64:arm64\n\
                    linux-image-amd64\n |Depends: <dracut>\n  Depends: linux-image-6.12.1-amd64\n\
                    linux-image-arm64:arm64\n  Depends: linux-base-arm64:arm64\n\
                    \x20 Depends: linux-image-7.3.4+deb13-arm64:arm64\n    linux-foo\n";
        let got = parse_depends(text, &asked);
        assert_eq!(got[0], ["linux-image-6.1.0-50-arm64:arm64"]);
        assert!(got[1].is_empty());
        assert_eq!(got[2], ["linux-image-6.12.1-amd64"]);
        assert_eq!(
            got[3],
            [
                "linux-base-arm64:arm64",
                "linux-image-7.3.4+deb13-arm64:arm64"
            ]
        );
    }
}
