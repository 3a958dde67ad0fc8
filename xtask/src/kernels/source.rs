//! A kernel built from Debian's own source package (`linux-source-<ver>`), for what no
//! Debian kernel image has: the auxiliary clocks (`CONFIG_POSIX_AUX_CLOCKS`, off in
//! Debian's configurations). The configuration is `make tinyconfig` and the options of the
//! machine's fragment (`xtask/kernel-config/<machine>.config`), each checked to have held.
//!
//! The fetch step downloads the source package through the private apt (the suites tried
//! in the machine's order); the build happens when the machine's boot is prepared, so that
//! the machines before it boot meanwhile. The image is kept under
//! `~/.cache/vdsotime/kernels/<source version>-<configuration hash>/` (outside the clone:
//! `cargo clean` keeps it); once there, nothing is downloaded or built, the newest source
//! version built with the configuration being used.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::kernel::{exports_getrandom, Kernel, Unbootable, Unbuilt};
use super::machines::Machine;
use super::unpack::{CONFIG, RELEASE};
use crate::apt;
use crate::debs::PrivateApt;

/// What building a kernel needs besides gcc and make (which the cross toolchains bring).
pub const BUILD_DEPENDS: &[&str] = &["flex", "bison", "bc", "libelf-dev", "xz-utils"];

/// The image in a cached build's directory; the package it came from is beside it.
const IMAGE: &str = "bzImage";
const PACKAGE: &str = "package";

/// Where built kernels are kept (see [`crate::cache`]).
fn cache_root() -> PathBuf {
    crate::cache::dir("kernels")
}

/// The configuration's hash: a changed fragment builds again.
pub fn config_hash(config: &str) -> String {
    crate::cache::hash(config)
}

/// The source version of a package's file name:
/// `linux-source-7.3_7.3.4-1~bpo13+1_all.deb` gives `7.3.4-1~bpo13+1`.
fn version_of(deb_name: &str) -> Option<&str> {
    deb_name.split('_').nth(1)
}

/// The kernel built for `config` already in the cache (the newest source version).
pub fn cached(m: &Machine, config: &'static str) -> Option<Kernel> {
    let suffix = format!("-{}", config_hash(config));
    let mut dirs: Vec<PathBuf> = fs::read_dir(cache_root())
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&suffix))
                && p.join(IMAGE).is_file()
        })
        .collect();
    // Newest last: directory names start with the Debian version.
    dirs.sort_by(|a, b| version_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
    kernel_in(m, &dirs.pop()?)
}

/// Compares two names by their runs of digits as numbers (7.10 after 7.9).
fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(u64, String)> {
        let mut out = Vec::new();
        let mut digits = String::new();
        let mut other = String::new();
        for c in s.chars() {
            if c.is_ascii_digit() {
                if !other.is_empty() {
                    out.push((0, std::mem::take(&mut other)));
                }
                digits.push(c);
            } else {
                if !digits.is_empty() {
                    out.push((digits.parse().unwrap_or(u64::MAX), String::new()));
                    digits.clear();
                }
                other.push(c);
            }
        }
        if !digits.is_empty() {
            out.push((digits.parse().unwrap_or(u64::MAX), String::new()));
        }
        if !other.is_empty() {
            out.push((0, other));
        }
        out
    }
    parts(a).cmp(&parts(b))
}

/// The kernel of one cache directory.
fn kernel_in(m: &Machine, dir: &Path) -> Option<Kernel> {
    let read = |f: &str| fs::read_to_string(dir.join(f)).ok();
    let package = read(PACKAGE)?;
    let mut lines = package.lines();
    let package = lines.next()?.to_string();
    let suite = lines.next()?.to_string();
    Some(Kernel {
        image: dir.join(IMAGE),
        release: read(RELEASE)?.trim().to_string(),
        package: format!("{package}, built from tinyconfig + {}.config", m.name),
        getrandom: exports_getrandom(&read(CONFIG)?),
        suite,
        passed_over: lines.map(str::to_string).collect(),
        unbuilt: None,
    })
}

/// Downloads `m`'s source package from `suite` into `dir`: a kernel to build.
pub fn fetch(
    apt: &PrivateApt,
    dir: &Path,
    m: &Machine,
    config: &'static str,
    (suite, packages): (&str, &[String]),
    passed_over: &[String],
) -> Result<Kernel, Unbootable> {
    let _ = fs::remove_dir_all(dir);
    let package = packages.first().ok_or(Unbootable::Failed(format!(
        "{}: no source package resolved",
        m.name
    )))?;
    println!("kernels: {}: apt-get download {package}", m.name);
    let deb = apt
        .download(package, dir)
        .map_err(|e| Unbootable::Unavailable(format!("{}: {}", e.package, e.reason)))?;
    let name = deb
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Kernel {
        image: PathBuf::new(),
        release: version_of(&name).unwrap_or("?").to_string(),
        package: name,
        getrandom: false,
        suite: suite.to_string(),
        passed_over: passed_over.to_vec(),
        unbuilt: Some(Unbuilt { deb, config }),
    })
}

/// The source packages the metapackages resolve to (`linux-source` → `linux-source-7.3`),
/// for each (machine, suite).
pub fn resolve(
    apt: &PrivateApt,
    candidates: &[(&Machine, String)],
) -> Vec<Result<Vec<String>, String>> {
    let metas: Vec<String> = candidates
        .iter()
        .map(|(m, suite)| format!("{}:{}/{suite}", m.kernel_package, m.deb_arch))
        .collect();
    apt.dependencies(&metas)
        .into_iter()
        .zip(candidates.iter().zip(&metas))
        .map(|(deps, ((m, suite), meta))| {
            deps.into_iter()
                .find(|d| d.starts_with("linux-source-"))
                .map(|d| vec![format!("{d}:{}/{suite}", m.deb_arch)])
                .ok_or_else(|| format!("its index names no linux-source-* for {meta}"))
        })
        .collect()
}

/// Builds `kernel` if it is not built yet (its output in `log`), keeping the image in the
/// cache; a kernel already built is returned as it is.
pub fn ensure_built(m: &Machine, kernel: Kernel, log: &Path) -> Result<Kernel, Unbootable> {
    let Some(unbuilt) = &kernel.unbuilt else {
        return Ok(kernel);
    };
    let failed = Unbootable::Failed;
    let version = version_of(&kernel.package).unwrap_or("unknown");
    let dir = cache_root().join(format!("{version}-{}", config_hash(unbuilt.config)));
    if let Some(k) = kernel_in(m, &dir).filter(|k| k.image.is_file()) {
        return Ok(k);
    }
    let work = unbuilt.deb.with_file_name("build");
    let started = Instant::now();
    println!(
        "kernels: {}: building a kernel from {} (tinyconfig + {}.config; log {})",
        m.name,
        kernel.package,
        m.name,
        log.display()
    );
    let tree = unpack_source(&unbuilt.deb, &work).map_err(failed)?;
    let fragment = work.join("fragment.config");
    fs::write(&fragment, unbuilt.config)
        .map_err(|e| failed(format!("{}: {e}", fragment.display())))?;
    let jobs = std::thread::available_parallelism().map_or(1, usize::from);
    let make = |args: &[&str]| {
        let mut cmd = Command::new("nice");
        cmd.args(["-n", "10", "make", "-C"]).arg(&tree).args(args);
        apt::logged(cmd, log, &format!("make {}", args.join(" ")))
    };
    make(&["tinyconfig"]).map_err(failed)?;
    let mut merge = Command::new(tree.join("scripts/kconfig/merge_config.sh"));
    merge
        .current_dir(&tree)
        .args(["-m", ".config"])
        .arg(&fragment);
    apt::logged(merge, log, "merge_config.sh").map_err(failed)?;
    make(&["olddefconfig"]).map_err(failed)?;
    let config = fs::read_to_string(tree.join(".config")).map_err(|e| failed(e.to_string()))?;
    let lost = not_kept(unbuilt.config, &config);
    if !lost.is_empty() {
        return Err(failed(format!(
            "the configuration lost {} (a dependency is missing from {}.config)",
            lost.join(", "),
            m.name
        )));
    }
    make(&[&format!("-j{jobs}"), "bzImage"]).map_err(failed)?;
    let release = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(&tree)
        .arg("kernelrelease")
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .map_err(|e| failed(format!("make kernelrelease: {e}")))?;
    // Written beside, then renamed: an interrupted run leaves no half-kept kernel.
    let mut tmp = dir.clone().into_os_string();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    let _ = fs::remove_dir_all(&tmp);
    let keep = |r: std::io::Result<()>| r.map_err(|e| failed(format!("{}: {e}", tmp.display())));
    keep(fs::create_dir_all(&tmp))?;
    keep(fs::copy(tree.join("arch/x86/boot/bzImage"), tmp.join(IMAGE)).map(drop))?;
    keep(fs::write(tmp.join(CONFIG), &config))?;
    keep(fs::write(tmp.join(RELEASE), &release))?;
    let origin = [
        vec![kernel.package.clone(), kernel.suite.clone()],
        kernel.passed_over.clone(),
    ];
    keep(fs::write(tmp.join(PACKAGE), origin.concat().join("\n")))?;
    let _ = fs::remove_dir_all(&dir);
    keep(fs::rename(&tmp, &dir))?;
    let _ = fs::remove_dir_all(&work);
    println!(
        "kernels: {}: built {release} in {} s, kept in {}",
        m.name,
        started.elapsed().as_secs(),
        dir.display()
    );
    kernel_in(m, &dir).ok_or_else(|| failed(format!("{}: no kernel kept", dir.display())))
}

/// Unpacks the source tarball the package holds (`usr/src/linux-source-<ver>.tar.xz`)
/// into `work`; returns the tree.
fn unpack_source(deb: &Path, work: &Path) -> Result<PathBuf, String> {
    let _ = fs::remove_dir_all(work);
    fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    let script = "dpkg-deb --fsys-tarfile \"$1\" \
        | tar -xO --wildcards './usr/src/linux-source-*.tar.xz' \
        | tar -xJ -C \"$2\"";
    let status = Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(deb)
        .arg(work)
        .status()
        .map_err(|e| format!("sh: {e}"))?;
    if !status.success() {
        return Err(format!("unpacking {}: {status}", deb.display()));
    }
    let tree = fs::read_dir(work)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("Makefile").is_file());
    tree.ok_or_else(|| format!("{}: no kernel tree in {}", work.display(), deb.display()))
}

/// The `CONFIG_X=y` lines of `fragment` that `config` does not have.
fn not_kept(fragment: &str, config: &str) -> Vec<String> {
    fragment
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("CONFIG_"))
        .filter(|l| !config.lines().any(|c| c.trim() == *l))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_hashes_and_lost_options() {
        assert_eq!(
            version_of("linux-source-7.3_7.3.4-1~bpo13+1_all.deb"),
            Some("7.3.4-1~bpo13+1")
        );
        assert_eq!(config_hash(""), "cbf29ce484222325");
        assert_ne!(config_hash("CONFIG_A=y\n"), config_hash("CONFIG_B=y\n"));
        assert_eq!(
            version_cmp("7.10.1-1-abc", "7.9.3-1-abc"),
            std::cmp::Ordering::Greater
        );
        let fragment = "# comment\nCONFIG_A=y\nCONFIG_B=y\n";
        assert_eq!(
            not_kept(fragment, "CONFIG_A=y\n# CONFIG_B is not set\n"),
            ["CONFIG_B=y"]
        );
        assert!(not_kept(fragment, "CONFIG_B=y\nCONFIG_A=y\n").is_empty());
    }

    #[test]
    fn the_aux_machine_has_a_fragment_that_enables_aux_clocks() {
        let m = super::super::machines::select("x86_64-aux")[0];
        let config = m.source_config.unwrap();
        assert!(config.lines().any(|l| l == "CONFIG_POSIX_AUX_CLOCKS=y"));
        assert!(config.lines().any(|l| l == "CONFIG_TIME_NS=y"));
    }
}
