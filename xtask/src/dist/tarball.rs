//! The static tool binaries: `vdsotime-<version>-<target>.tar.gz` for each musl target,
//! laid out as a prefix (`bin/`, `share/man/`, the completions, `share/doc/vdsotime/` with
//! the README, the licenses and `copyright`, the notices of every linked crate and musl):
//! `tar -xzf ... -C /usr/local --strip-components=1` installs it.
//! The tool's own install script fills it for `--prefix /usr/local`, so it holds what a
//! source install there holds, and the systemd units it ships (`lib/systemd/system/`) name
//! `/usr/local/bin/vdsotime` and `/usr/local/share/doc/vdsotime/`: paths that exist after
//! that documented install.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::apt;

/// Where the documented install unpacks a tarball (`tar -C /usr/local --strip-components=1`).
pub const INSTALL_PREFIX: &str = "/usr/local";

/// The musl targets a static binary is made for.
pub const TARGETS: &[&str] = &["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"];

/// Builds the tool for `target` (statically linked: musl's default) and packs it into
/// `out`, returning the tarball's path. `work` is scratch space.
pub fn build(
    root: &Path,
    target: &str,
    version: &str,
    target_dir: &Path,
    work: &Path,
    out: &Path,
    log: &Path,
) -> Result<PathBuf, String> {
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .args(["build", "--release", "--locked", "-p", "vdsotime-cli"])
        .args(["--target", target])
        .current_dir(root);
    if target.starts_with("aarch64") {
        // Rust's own lld with its self-contained musl: nothing to install.
        cargo.env("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER", "rust-lld");
    }
    apt::logged(cargo, log, &format!("cargo build ({target})"))?;

    let name = format!("vdsotime-{version}-{target}");
    let stage = work.join(target);
    if stage.exists() {
        fs::remove_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
    }
    fs::create_dir_all(&stage).map_err(|e| format!("{}: {e}", stage.display()))?;
    // The aarch64 tool runs under QEMU (binfmt_misc) to write its man pages and completions.
    // Installed for the prefix the tarball is unpacked into, then moved to the tarball's
    // top directory, which --strip-components=1 removes.
    let staged = stage.join("staged");
    let mut install = Command::new(root.join("crates/vdsotime-cli/install.sh"));
    install
        .args(["--prefix", INSTALL_PREFIX])
        .arg("--from")
        .arg(target_dir.join(target).join("release"))
        .env("DESTDIR", &staged);
    apt::logged(install, log, &format!("install.sh ({target})"))?;
    let prefix = staged.join(INSTALL_PREFIX.trim_start_matches('/'));
    fs::rename(&prefix, stage.join(&name)).map_err(|e| format!("{}: {e}", prefix.display()))?;
    fs::remove_dir_all(&staged).map_err(|e| format!("{}: {e}", staged.display()))?;
    let doc = stage.join(&name).join("share/doc/vdsotime");
    fs::create_dir_all(&doc).map_err(|e| format!("{}: {e}", doc.display()))?;
    for file in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
        fs::copy(root.join(file), doc.join(file)).map_err(|e| format!("{file}: {e}"))?;
    }
    // The notices of everything linked in: debian/copyright's, and musl's.
    let notices = super::copyright::tarball_notices(root)?;
    fs::write(doc.join("copyright"), notices).map_err(|e| format!("copyright: {e}"))?;
    let tarball = out.join(format!("{name}.tar.gz"));
    let mut tar = Command::new("tar");
    // Owned by root, in a stable order: the archive does not depend on who built it.
    tar.args([
        "--owner=0",
        "--group=0",
        "--numeric-owner",
        "--sort=name",
        "-czf",
    ])
    .arg(&tarball)
    .arg("-C")
    .arg(&stage)
    .arg(&name);
    apt::logged(tar, log, &format!("tar ({target})"))?;
    Ok(tarball)
}

/// Writes `SHA256SUMS` in `dir` over `files` (all in `dir`), as `sha256sum -c` reads it.
pub fn checksums(dir: &Path, files: &[PathBuf], log: &Path) -> Result<PathBuf, String> {
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    let out = Command::new("sha256sum")
        .args(&names)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("sha256sum: {e}"))?;
    if !out.status.success() {
        let _ = fs::write(log, &out.stderr);
        return Err(format!("sha256sum failed, see {}", log.display()));
    }
    let path = dir.join("SHA256SUMS");
    fs::write(&path, &out.stdout).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}
