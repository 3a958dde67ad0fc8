//! Fetching each machine's Debian kernel, through the private apt of [`crate::debs`] (the
//! machine's own apt setup is left alone, and no host name is written anywhere).
//!
//! Only the kernel image is kept (`<cache>/<machine>/kernel`, with its `config`, `release`
//! and `package` beside it); once every chosen machine has one, nothing is fetched at all.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::machines::{Machine, Suite};
use crate::apt;
use crate::debs::PrivateApt;

/// A kernel ready to boot.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub image: PathBuf,
    /// `uname -r` of the kernel, from its file name (`vmlinuz-<release>`).
    pub release: String,
    /// The Debian packages (file names, so with their versions) it came from.
    pub package: String,
    /// Its configuration builds the vDSO's getrandom.
    pub getrandom: bool,
}

/// The files kept in a machine's cache directory.
const KERNEL: &str = "kernel";
const CONFIG: &str = "config";
const RELEASE: &str = "release";
const PACKAGE: &str = "package";

/// The kernel already in the cache for `m`.
pub fn cached(cache: &Path, m: &Machine) -> Option<Kernel> {
    let dir = cache.join(m.name);
    let image = dir.join(KERNEL);
    let read = |f: &str| {
        fs::read_to_string(dir.join(f))
            .ok()
            .map(|s| s.trim().to_string())
    };
    (image.is_file()).then_some(())?;
    Some(Kernel {
        image,
        release: read(RELEASE)?,
        package: read(PACKAGE)?,
        getrandom: exports_getrandom(&read(CONFIG)?),
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
    let resolved = match &setup {
        Ok((apt, codename)) => resolve(apt, &missing, codename),
        Err(e) => vec![Err(e.clone()); missing.len()],
    };
    let mut resolved = missing.iter().map(|m| m.name).zip(resolved);
    machines
        .iter()
        .map(|m| {
            if let Some(k) = cached(cache, m) {
                return Ok(k);
            }
            let (_, packages) = resolved.find(|(name, _)| *name == m.name).ok_or("lost")?;
            let (apt, _) = setup.as_ref().map_err(Clone::clone)?;
            fetch(apt, &cache.join(m.name), m, &packages?)
        })
        .collect()
}

/// The packages that hold each machine's kernel image and configuration, looked up for
/// all machines at once (see [`PrivateApt::dependencies`]). Debian's 7.x packages split
/// the kernel: `linux-image-<ver>` then depends on `linux-binary-<ver>` (the image at
/// `usr/lib/modules/<ver>/vmlinuz`) and `linux-base-<ver>` (its `config`), and holds
/// nothing itself (the mirror may not even serve it); before, `linux-image-<ver>` held
/// `boot/vmlinuz-<ver>` and `boot/config-<ver>`.
fn resolve(
    apt: &PrivateApt,
    machines: &[Machine],
    codename: &str,
) -> Vec<Result<Vec<String>, String>> {
    let qualified = |m: &Machine, p: &str| {
        let suite = suite_name(m.suite, codename);
        if p.contains(':') {
            format!("{p}/{suite}")
        } else {
            format!("{p}:{}/{suite}", m.deb_arch)
        }
    };
    let metas: Vec<String> = machines
        .iter()
        .map(|m| qualified(m, &format!("{}:{}", m.kernel_package, m.deb_arch)))
        .collect();
    let images: Vec<Result<String, String>> = apt
        .dependencies(&metas)
        .into_iter()
        .zip(&metas)
        .map(|(deps, meta)| {
            deps.into_iter()
                .find(|d| d.starts_with("linux-image-"))
                .ok_or_else(|| format!("no linux-image-* dependency found for {meta}"))
        })
        .collect();
    let asked: Vec<String> = machines
        .iter()
        .zip(&images)
        .filter_map(|(m, i)| Some(qualified(m, i.as_ref().ok()?)))
        .collect();
    let mut parts = apt.dependencies(&asked).into_iter();
    images
        .into_iter()
        .map(|image| {
            let image = image?;
            let deps = parts.next().unwrap_or_default();
            let split: Vec<String> = ["linux-binary-", "linux-base-"]
                .iter()
                .filter_map(|prefix| deps.iter().find(|d| d.starts_with(prefix)).cloned())
                .collect();
            Ok(if split.len() == 2 { split } else { vec![image] })
        })
        .collect()
}

/// Downloads `packages` and keeps the kernel image and configuration they hold.
fn fetch(apt: &PrivateApt, dir: &Path, m: &Machine, packages: &[String]) -> Result<Kernel, String> {
    let _ = fs::remove_dir_all(dir);
    let mut debs = Vec::new();
    for package in packages {
        println!("kernels: {}: apt-get download {package}", m.name);
        let deb = apt.download(package, dir)?;
        extract(&deb, dir)?;
        debs.push(
            deb.file_name()
                .map_or(package.to_string(), |n| n.to_string_lossy().into_owned()),
        );
        fs::remove_file(&deb).map_err(|e| format!("{}: {e}", deb.display()))?;
    }
    for file in [KERNEL, CONFIG, RELEASE] {
        if !dir.join(file).is_file() {
            return Err(format!("no {file} found in {}", debs.join(", ")));
        }
    }
    fs::write(dir.join(PACKAGE), debs.join(" + "))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    cached(dir.parent().unwrap_or(dir), m)
        .ok_or_else(|| format!("{}: no kernel kept", dir.display()))
}

/// Where a kernel package keeps its image and configuration (old layout, 7.x layout).
const MEMBERS: &[&str] = &[
    "./boot/vmlinu*",
    "./boot/config-*",
    "./usr/lib/modules/*/vmlinu*",
    "./usr/lib/modules/*/config",
];

/// Unpacks whichever of [`MEMBERS`] the package has into `dir/kernel`, `dir/config` and
/// `dir/release` (the `uname -r` in the file or directory name).
fn extract(deb: &Path, dir: &Path) -> Result<(), String> {
    let tmp = dir.join("unpacked");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let mut dpkg = Command::new("dpkg-deb")
        .arg("--fsys-tarfile")
        .arg(deb)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("dpkg-deb: {e}"))?;
    let tar_in = dpkg.stdout.take().ok_or("dpkg-deb: no stdout")?;
    // tar fails on a pattern the package lacks (each layout lacks two): what was found
    // is checked below instead.
    let _ = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(&tmp)
        .arg("--wildcards")
        .args(MEMBERS)
        .stdin(tar_in)
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("tar: {e}"))?;
    let dpkg = dpkg.wait().map_err(|e| e.to_string())?;
    if !dpkg.success() {
        return Err(format!("unpacking {}: dpkg-deb {dpkg}", deb.display()));
    }
    for (from, release) in found(&tmp) {
        let name = from.file_name().map(|n| n.to_string_lossy().into_owned());
        let to = if name.as_deref().is_some_and(|n| n.starts_with("config")) {
            CONFIG
        } else {
            fs::write(dir.join(RELEASE), &release).map_err(|e| e.to_string())?;
            KERNEL
        };
        fs::rename(&from, dir.join(to)).map_err(|e| format!("{}: {e}", from.display()))?;
    }
    let _ = fs::remove_dir_all(&tmp);
    Ok(())
}

/// (file, kernel release) of every image and configuration unpacked under `tmp`.
fn found(tmp: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let files = |d: PathBuf| -> Vec<PathBuf> {
        fs::read_dir(d)
            .map(|r| r.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    for f in files(tmp.join("boot")) {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        let release = name.as_deref().and_then(|n| {
            ["vmlinuz-", "vmlinux-", "config-"]
                .iter()
                .find_map(|p| n.strip_prefix(p))
        });
        if let Some(r) = release.map(str::to_string) {
            out.push((f, r));
        }
    }
    for d in files(tmp.join("usr/lib/modules")) {
        let release = d.file_name().map(|n| n.to_string_lossy().into_owned());
        for f in files(d) {
            out.push((f, release.clone().unwrap_or_default()));
        }
    }
    out
}

/// Whether the kernel's configuration builds the vDSO's getrandom
/// (`CONFIG_VDSO_GETRANDOM=y`, lib/vdso/Kconfig): its tests must then run there.
pub fn exports_getrandom(config: &str) -> bool {
    config
        .lines()
        .any(|l| l.trim() == "CONFIG_VDSO_GETRANDOM=y")
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

    #[test]
    fn both_layouts_give_image_config_and_release() {
        let tmp = std::env::temp_dir().join(format!("xtask-fetch-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        for f in ["boot/vmlinuz-6.12.1-amd64", "boot/config-6.12.1-amd64"] {
            fs::create_dir_all(tmp.join(f).parent().unwrap()).unwrap();
            fs::write(tmp.join(f), "x").unwrap();
        }
        let dir = tmp.join("usr/lib/modules/7.0.3+bpo-amd64");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("vmlinuz"), "x").unwrap();
        let mut got: Vec<(String, String)> = found(&tmp)
            .into_iter()
            .map(|(f, r)| (f.strip_prefix(&tmp).unwrap().display().to_string(), r))
            .collect();
        got.sort();
        let want = [
            ("boot/config-6.12.1-amd64", "6.12.1-amd64"),
            ("boot/vmlinuz-6.12.1-amd64", "6.12.1-amd64"),
            ("usr/lib/modules/7.0.3+bpo-amd64/vmlinuz", "7.0.3+bpo-amd64"),
        ];
        assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
        let _ = fs::remove_dir_all(&tmp);
        assert!(exports_getrandom("# x\nCONFIG_VDSO_GETRANDOM=y\n"));
        assert!(!exports_getrandom("# CONFIG_VDSO_GETRANDOM is not set\n"));
    }
}
