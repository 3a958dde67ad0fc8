//! The fleet machine's root file system before the project's packages: Debian 13 (trixie,
//! amd64) made by `mmdebstrap` from the mirror the machine's own apt sources use for its
//! release (read at run time, as `cargo xtask dist` does for its fresh roots), with
//! Debian's kernel and initramfs, systemd as init, node_exporter and Prometheus.
//!
//! Making it downloads about 200 MB and takes minutes, and nothing in it changes with the
//! project: it is kept as a tarball in the cache outside the clone
//! (`~/.cache/vdsotime/fleet/root-<hash>.tar`, the hash over the suite, the package list
//! and the mirror), and made again only when one of those changes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{apt, cache};

/// The release the machine runs.
pub const SUITE: &str = "trixie";

/// The packages beyond `--variant=apt`: the kernel (with initramfs-tools, which makes its
/// initrd), systemd as PID 1 with udev, Debian's node_exporter and Prometheus, and what the
/// guest's test script uses (curl and jq for Prometheus' API, procps, kmod for the 9p
/// module).
pub const PACKAGES: &[&str] = &[
    "linux-image-amd64",
    "initramfs-tools",
    "systemd",
    "systemd-sysv",
    "udev",
    "kmod",
    "prometheus-node-exporter",
    "prometheus",
    "curl",
    "jq",
    "procps",
];

/// The cached root for the current inputs, made if missing; the log gets mmdebstrap's output.
pub fn root(log: &Path) -> Result<PathBuf, String> {
    let codename = apt::codename().ok_or("no VERSION_CODENAME in /etc/os-release")?;
    let (uris, key) = apt::release_source(&codename)?;
    let options = key.map_or(String::new(), |k| format!("[signed-by={k}] "));
    let sources: Vec<String> = uris
        .iter()
        .map(|u| format!("deb {options}{u} {SUITE} main"))
        .collect();
    let inputs = format!("{SUITE}\n{}\n{}\n", PACKAGES.join(","), sources.join("\n"));
    let dir = cache::dir("fleet");
    let tar = dir.join(format!("root-{}.tar", cache::hash(&inputs)));
    if tar.is_file() {
        println!("root: cached, {}", tar.display());
        return Ok(tar);
    }
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let partial = tar.with_extension("tar.partial");
    let mut cmd = Command::new("mmdebstrap");
    cmd.args([
        "--quiet",
        "--variant=apt",
        "--mode=root",
        "--architectures=amd64",
    ])
    .arg(format!("--include={}", PACKAGES.join(",")))
    .args(["--format=tar", SUITE])
    .arg(&partial)
    .args(&sources);
    println!(
        "root: mmdebstrap {SUITE} (not cached yet; {})",
        log.display()
    );
    apt::logged(cmd, log, "mmdebstrap")?;
    fs::rename(&partial, &tar).map_err(|e| format!("{}: {e}", tar.display()))?;
    // Roots made for older inputs are of no further use.
    for entry in fs::read_dir(&dir).map_err(|e| e.to_string())?.flatten() {
        let p = entry.path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if p != tar && name.is_some_and(|n| n.starts_with("root-")) {
            let _ = fs::remove_file(&p);
        }
    }
    println!("root: made, {}", tar.display());
    Ok(tar)
}
