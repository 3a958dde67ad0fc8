//! Debian packages of other architectures, downloaded and unpacked without installing them:
//! a private apt state directory (its own sources, lists and cache, the foreign
//! architectures), whose entries reuse the mirror URIs and key of the machine's own apt
//! sources, so no host name is written anywhere and the machine's apt setup is left alone.
//! Used for the kernels of `cargo xtask kernels` and the i386 musl sysroot of the C runs.

use std::fs;
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
            let mut options = format!("arch={}", arches.join(","));
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

    /// The first dependency of `package` (`name:arch/suite`) whose name starts with `prefix`:
    /// the versioned package a Debian metapackage stands for.
    pub fn dependency(&self, package: &str, prefix: &str) -> Result<String, String> {
        let out = self
            .command("apt-cache")
            .args(["depends", "--no-recommends", "--no-suggests", package])
            .output()
            .map_err(|e| format!("apt-cache: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("Depends: "))
            .find(|p| p.starts_with(prefix))
            .map(str::to_string)
            .ok_or_else(|| format!("no {prefix}* dependency found for {package}"))
    }

    /// Downloads `package` (`name:arch`) into `dir`; returns the .deb.
    pub fn download(&self, package: &str, dir: &Path) -> Result<PathBuf, String> {
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = package.split([':', '/']).next().unwrap_or(package);
        let mut cmd = self.command("apt-get");
        cmd.current_dir(dir).args(["-q", "download", package]);
        self.logged(cmd, &format!("apt-get download {package}"))?;
        only_file(dir, &format!("{name}_"), ".deb")
    }
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
