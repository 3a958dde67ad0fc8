//! What `cargo xtask dist` needs on the machine, installed when missing: Debian's packaging
//! tools, the arm64 cross libraries, a QEMU that runs arm64 binaries (registered with
//! binfmt_misc: the arm64 tool runs at build time to write its man pages), and Rust's std
//! for every target built.

use std::path::Path;

use crate::{apt, binfmt, qemu, toolchain};

use super::debian::DebArch;

/// Debian packages every run needs: dpkg-buildpackage with debhelper, lintian, the C
/// compiler driver the cross builds link with, and mmdebstrap for the fresh-root tests
/// (with arch-test, which it needs for a foreign root).
const TOOLS: &[&str] = &["debhelper", "lintian", "mmdebstrap", "arch-test", "clang"];

/// Installs what is missing for building `arches` and `musl` targets.
pub fn prepare(arches: &[DebArch], musl: &[&str], log: &Path) -> Result<(), String> {
    let mut missing: Vec<String> = TOOLS
        .iter()
        .map(|p| p.to_string())
        .chain(arches.iter().flat_map(DebArch::cross_packages))
        .filter(|p| !apt::is_installed(p))
        .collect();
    let foreign: Vec<&str> = arches.iter().filter_map(|a| a.qemu).collect();
    let need_qemu = foreign.iter().any(|arch| qemu::find(arch).is_err())
        || musl
            .iter()
            .any(|t| t.starts_with("aarch64") && qemu::find("aarch64").is_err());
    if need_qemu {
        // Backports' QEMU, as `cargo xtask cross` installs it (bookworm's has no guest vDSO).
        let codename = apt::codename().ok_or("no VERSION_CODENAME in /etc/os-release")?;
        let suite = apt::ensure_backports(&codename)?;
        missing.push(format!("qemu-user/{suite}"));
    }
    if !missing.is_empty() {
        apt::update(log);
        apt::install(&missing, log)?;
    }
    let emulate = foreign.iter().copied().chain(
        musl.iter()
            .filter(|t| t.starts_with("aarch64"))
            .map(|_| "aarch64"),
    );
    for arch in emulate {
        let emulator = qemu::find(arch)?;
        binfmt::ensure(arch, &emulator.command)?;
    }
    for triple in arches.iter().map(|a| a.rust).chain(musl.iter().copied()) {
        toolchain::ensure_std_for(triple, true, log)?;
    }
    Ok(())
}
