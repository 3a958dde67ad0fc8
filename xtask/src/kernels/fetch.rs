//! Fetching each machine's Debian kernel: through a private apt state directory (its own
//! sources, lists and cache, with the foreign architectures), whose entries reuse the mirror
//! URIs and key of the machine's own apt sources, so no host name is written anywhere and
//! the machine's apt configuration is left alone.
//!
//! Only the kernel image is kept (`<cache>/<machine>/kernel`, with `release` and `package`
//! beside it); once every chosen machine has one, nothing is fetched at all.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::machines::{Machine, Suite};
use crate::apt;

/// A kernel ready to boot.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub image: PathBuf,
    /// `uname -r` of the kernel, from its file name (`vmlinuz-<release>`).
    pub release: String,
    /// The Debian package and version it came from.
    pub package: String,
}

/// The kernel already in the cache for `m`.
pub fn cached(cache: &Path, m: &Machine) -> Option<Kernel> {
    let dir = cache.join(m.name);
    let image = dir.join("kernel");
    let read = |f: &str| {
        fs::read_to_string(dir.join(f))
            .ok()
            .map(|s| s.trim().to_string())
    };
    (image.is_file()).then_some(())?;
    Some(Kernel {
        image,
        release: read("release")?,
        package: read("package")?,
    })
}

/// The Debian suite name of `suite` on a machine running `codename`.
fn suite_name(suite: Suite, codename: &str) -> String {
    match suite {
        Suite::Release => codename.to_string(),
        Suite::Backports => format!("{codename}-backports"),
        Suite::Named(name) => name.to_string(),
    }
}

/// The private apt: `apt-get`/`apt-cache` with every state and source path under `dir`.
struct PrivateApt {
    dir: PathBuf,
    log: PathBuf,
    arches: String,
}

impl PrivateApt {
    /// Writes the sources: one line per suite, limited to the architectures it must serve.
    fn create(
        dir: &Path,
        machines: &[Machine],
        codename: &str,
        log: &Path,
    ) -> Result<Self, String> {
        let (uris, key) = apt::release_source(codename)?;
        let mut lines = String::new();
        let mut suites: Vec<(String, Vec<&str>)> = Vec::new();
        for m in machines {
            let name = suite_name(m.suite, codename);
            match suites.iter_mut().find(|(s, _)| *s == name) {
                Some((_, arches)) if !arches.contains(&m.deb_arch) => arches.push(m.deb_arch),
                Some(_) => {}
                None => suites.push((name, vec![m.deb_arch])),
            }
        }
        let mut all_arches = vec!["amd64"];
        for (suite, arches) in &suites {
            let mut options = format!("arch={}", arches.join(","));
            if let Some(key) = &key {
                options.push_str(&format!(" signed-by={key}"));
            }
            for uri in &uris {
                lines.push_str(&format!("deb [{options}] {uri} {suite} main\n"));
            }
            all_arches.extend(
                arches
                    .iter()
                    .filter(|a| !all_arches.contains(a))
                    .collect::<Vec<_>>(),
            );
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

    fn command(&self, program: &str) -> Command {
        let d = self.dir.display();
        let mut cmd = Command::new(program);
        for option in [
            format!("Dir::State={d}/state"),
            format!("Dir::State::status={d}/state/status"),
            format!("Dir::Cache={d}/cache"),
            format!("Dir::Etc::sourcelist={d}/sources.list"),
            format!("Dir::Etc::sourceparts={d}/empty"),
            format!("Dir::Etc::parts={d}/empty"),
            format!("Dir::Etc::preferencesparts={d}/empty"),
            format!("APT::Architectures={}", self.arches),
            "Acquire::Languages=none".to_string(),
            "APT::Sandbox::User=root".to_string(),
        ] {
            cmd.arg("-o").arg(option);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Runs `cmd` with its output appended to the log; the error names the log.
    fn logged(&self, mut cmd: Command, what: &str) -> Result<(), String> {
        let log = File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("{}: {e}", self.log.display()))?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let status = cmd
            .stdout(log)
            .stderr(err)
            .status()
            .map_err(|e| format!("{what}: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed ({status}), see {}",
                self.log.display()
            ))
        }
    }

    /// The kernel image package `meta` (`linux-image-arm64:arm64/bookworm`) depends on.
    fn image_package(&self, meta: &str) -> Result<String, String> {
        let out = self
            .command("apt-cache")
            .args(["depends", "--no-recommends", "--no-suggests", meta])
            .output()
            .map_err(|e| format!("apt-cache: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("Depends: "))
            .find(|p| p.starts_with("linux-image-"))
            .map(str::to_string)
            .ok_or_else(|| format!("no kernel image package found for {meta}"))
    }
}

/// The kernel of every machine in `machines`, from the cache or fetched into it; a
/// machine's error is the reason it is UNAVAILABLE.
pub fn kernels(cache: &Path, machines: &[Machine], log: &Path) -> Vec<Result<Kernel, String>> {
    let missing: Vec<Machine> = machines
        .iter()
        .filter(|m| cached(cache, m).is_none())
        .copied()
        .collect();
    if missing.is_empty() {
        return machines
            .iter()
            .map(|m| cached(cache, m).ok_or_else(|| "not in the cache".to_string()))
            .collect();
    }
    let setup = apt::codename()
        .ok_or_else(|| "no VERSION_CODENAME in /etc/os-release".to_string())
        .and_then(|codename| {
            let apt = PrivateApt::create(&cache.join("apt"), &missing, &codename, log)?;
            println!("kernels: apt-get update (private lists: {})", apt.arches);
            // A mirror in mid-sync can fail one index; what matters is whether the
            // packages can be found, which each machine finds out below.
            if let Err(e) = apt.logged(
                {
                    let mut c = apt.command("apt-get");
                    c.args(["-q", "update"]);
                    c
                },
                "apt-get update",
            ) {
                println!("kernels: {e} (continuing with the indexes that arrived)");
            }
            Ok((apt, codename))
        });
    machines
        .iter()
        .map(|m| {
            if let Some(k) = cached(cache, m) {
                return Ok(k);
            }
            let (apt, codename) = setup.as_ref().map_err(Clone::clone)?;
            fetch(apt, &cache.join(m.name), m, codename)
        })
        .collect()
}

/// Downloads `m`'s kernel package and keeps only its kernel image.
fn fetch(apt: &PrivateApt, dir: &Path, m: &Machine, codename: &str) -> Result<Kernel, String> {
    let suite = suite_name(m.suite, codename);
    let meta = format!("{}:{}/{suite}", m.kernel_package, m.deb_arch);
    let package = apt.image_package(&meta)?;
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    println!("kernels: {}: apt-get download {package} ({suite})", m.name);
    let mut download = apt.command("apt-get");
    download.current_dir(dir).args(["-q", "download", &package]);
    apt.logged(download, &format!("apt-get download {package}"))?;
    let deb = only_file(dir, ".deb")?;
    extract_kernel(&deb, dir)?;
    let deb_name = deb.file_name().map(|n| n.to_string_lossy().into_owned());
    let _ = fs::remove_file(&deb);
    fs::write(dir.join("package"), deb_name.unwrap_or(package))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    cached(dir.parent().unwrap_or(dir), m)
        .ok_or_else(|| format!("{}: no kernel kept", dir.display()))
}

/// The one file in `dir` whose name ends with `suffix`.
fn only_file(dir: &Path, suffix: &str) -> Result<PathBuf, String> {
    let found: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    match &found[..] {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "{}: expected one *{suffix}, found {}",
            dir.display(),
            found.len()
        )),
    }
}

/// Unpacks `boot/vmlinu[xz]-<release>` from the package into `dir/kernel` and `dir/release`.
fn extract_kernel(deb: &Path, dir: &Path) -> Result<(), String> {
    let mut dpkg = Command::new("dpkg-deb")
        .arg("--fsys-tarfile")
        .arg(deb)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("dpkg-deb: {e}"))?;
    let tar_in = dpkg.stdout.take().ok_or("dpkg-deb: no stdout")?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dir)
        .args(["--wildcards", "./boot/vmlinu*"])
        .stdin(tar_in)
        .status()
        .map_err(|e| format!("tar: {e}"))?;
    let dpkg = dpkg.wait().map_err(|e| e.to_string())?;
    if !tar.success() || !dpkg.success() {
        return Err(format!(
            "unpacking {}: dpkg-deb {dpkg}, tar {tar}",
            deb.display()
        ));
    }
    let boot = dir.join("boot");
    let image = only_file(&boot, "")?;
    let name = image
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let release = name
        .strip_prefix("vmlinuz-")
        .or_else(|| name.strip_prefix("vmlinux-"))
        .ok_or_else(|| format!("unexpected kernel file {name}"))?;
    fs::write(dir.join("release"), release).map_err(|e| e.to_string())?;
    fs::rename(&image, dir.join("kernel")).map_err(|e| e.to_string())?;
    let _ = fs::remove_dir_all(&boot);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_are_relative_to_the_release() {
        assert_eq!(suite_name(Suite::Release, "bookworm"), "bookworm");
        assert_eq!(
            suite_name(Suite::Backports, "bookworm"),
            "bookworm-backports"
        );
        assert_eq!(suite_name(Suite::Named("trixie"), "bookworm"), "trixie");
    }
}
