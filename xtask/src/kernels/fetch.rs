//! Fetching each machine's Debian kernel, through the private apt of [`crate::debs`] (the
//! machine's own apt setup is left alone, and no host name is written anywhere).
//!
//! Only the kernel image is kept (`<cache>/<machine>/kernel`, with `release` and `package`
//! beside it); once every chosen machine has one, nothing is fetched at all.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::machines::{Machine, Suite};
use crate::apt;
use crate::debs::{self, PrivateApt};

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
            let mut suites: Vec<(String, Vec<&str>)> = Vec::new();
            for m in &missing {
                let name = suite_name(m.suite, &codename);
                match suites.iter_mut().find(|(s, _)| *s == name) {
                    Some((_, arches)) if !arches.contains(&m.deb_arch) => arches.push(m.deb_arch),
                    Some(_) => {}
                    None => suites.push((name, vec![m.deb_arch])),
                }
            }
            let apt = PrivateApt::create(&cache.join("apt"), &suites, &codename, log)?;
            println!("kernels: apt-get update (private lists: {})", apt.arches);
            apt.update();
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
    let package = apt.dependency(&meta, "linux-image-")?;
    let _ = fs::remove_dir_all(dir);
    println!("kernels: {}: apt-get download {package} ({suite})", m.name);
    let deb = apt.download(&package, dir)?;
    extract_kernel(&deb, dir)?;
    let deb_name = deb.file_name().map(|n| n.to_string_lossy().into_owned());
    let _ = fs::remove_file(&deb);
    fs::write(dir.join("package"), deb_name.unwrap_or(package))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    cached(dir.parent().unwrap_or(dir), m)
        .ok_or_else(|| format!("{}: no kernel kept", dir.display()))
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
    let image = debs::only_file(&boot, "vmlinu", "")?;
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
