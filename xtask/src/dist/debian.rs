//! The Debian packages: debian/ holds the rules; this runs `dpkg-buildpackage` on a copy of
//! the source (it writes its output next to the source directory and its build state into
//! debian/, neither of which belongs in the checkout), once per architecture, with one
//! cargo target directory shared by every build.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::apt;
use crate::toolchain;

/// A Debian architecture to build for, and what cross-building it takes.
#[derive(Debug, Clone, Copy)]
pub struct DebArch {
    /// Debian's name (`amd64`).
    pub name: &'static str,
    /// The GNU triplet (multiarch directory, cross tools' prefix).
    pub gnu: &'static str,
    /// Rust's target triple.
    pub rust: &'static str,
    /// The QEMU user-mode emulator's name, for a foreign architecture.
    pub qemu: Option<&'static str>,
}

pub const AMD64: DebArch = DebArch {
    name: "amd64",
    gnu: "x86_64-linux-gnu",
    rust: "x86_64-unknown-linux-gnu",
    qemu: None,
};

pub const ARM64: DebArch = DebArch {
    name: "arm64",
    gnu: "aarch64-linux-gnu",
    rust: "aarch64-unknown-linux-gnu",
    qemu: Some("aarch64"),
};

impl DebArch {
    /// Debian packages a cross build needs: the host architecture's libc and libgcc to
    /// link against (the same ones `cargo xtask cross` links its glibc targets with), and
    /// its binutils for dh_strip and dh_shlibdeps.
    pub fn cross_packages(&self) -> Vec<String> {
        if self.qemu.is_none() {
            return Vec::new();
        }
        ["libc6-dev-{}-cross", "libgcc-12-dev-{}-cross"]
            .iter()
            .map(|p| p.replace("{}", self.name))
            .chain([format!("binutils-{}", self.gnu)])
            .collect()
    }
}

/// Every file of the checkout that git knows of or would add (tracked, or untracked and
/// not ignored), relative to `root`.
fn source_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git ls-files failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| PathBuf::from(String::from_utf8_lossy(name).into_owned()))
        .filter(|p| root.join(p).is_file())
        .collect())
}

/// Copies the source into `dir/vdsotime` (emptied first), keeping file modes.
fn copy_source(root: &Path, dir: &Path) -> Result<PathBuf, String> {
    let src = dir.join("vdsotime");
    if src.exists() {
        fs::remove_dir_all(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    }
    for file in source_files(root)? {
        let to = src.join(&file);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        fs::copy(root.join(&file), &to).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(src)
}

/// Builds the packages of `arch` in `work` (a directory of its own), returning the .deb
/// files. The build's output goes to `log`.
pub fn build(root: &Path, arch: DebArch, work: &Path, log: &Path) -> Result<Vec<PathBuf>, String> {
    if work.exists() {
        fs::remove_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    }
    fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    let src = copy_source(root, work)?;
    let mut cmd = Command::new("dpkg-buildpackage");
    // -d: cargo and rustc come from rustup, not from Debian packages (docs/packaging.md).
    cmd.args(["-b", "-us", "-uc", "-d"])
        .current_dir(&src)
        .env("CARGO_TARGET_DIR", toolchain::target_dir());
    if arch.qemu.is_some() {
        cmd.arg(format!("--host-arch={}", arch.name));
        let key = arch.rust.to_ascii_uppercase().replace('-', "_");
        // Linked as `cargo xtask cross` links its glibc targets: clang driving Rust's lld,
        // against Debian's cross libc; dynamically here.
        let gcc_ld = toolchain::rust_tool("gcc-ld")?;
        let flags = format!(
            "-C link-arg=--target={} -C link-arg=-fuse-ld=lld -C link-arg=-B{}",
            arch.gnu,
            gcc_ld.display()
        );
        cmd.env(format!("CARGO_TARGET_{key}_LINKER"), "clang")
            .env(format!("CARGO_TARGET_{key}_RUSTFLAGS"), flags)
            // The tool runs once at install time to write its man pages and completions.
            .env("QEMU_LD_PREFIX", format!("/usr/{}", arch.gnu));
    }
    apt::logged(cmd, log, &format!("dpkg-buildpackage ({})", arch.name))?;
    let mut debs: Vec<PathBuf> = fs::read_dir(work)
        .map_err(|e| format!("{}: {e}", work.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    debs.sort();
    if debs.is_empty() {
        return Err(format!(
            "dpkg-buildpackage ({}) wrote no .deb (see {})",
            arch.name,
            log.display()
        ));
    }
    Ok(debs)
}
