//! What building for a target needs on this machine: Rust's std for it (rustup), and for
//! glibc targets clang, Debian's static cross libc and Rust's bundled lld. Shared by
//! `cargo xtask cross` and `cargo xtask kernels`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::apt;
use crate::targets::{self, Target};

/// The workspace root (the xtask crate's parent directory).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// Output of `rustc <args>`, trimmed.
fn rustc(args: &[&str]) -> String {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    Command::new(rustc)
        .args(args)
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_default()
}

/// A tool the Rust toolchain ships for the host (`rust-objcopy`, `gcc-ld`).
pub fn rust_tool(name: &str) -> Result<PathBuf, String> {
    let version = rustc(&["-vV"]);
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .ok_or("rustc -vV names no host")?;
    let path = Path::new(&rustc(&["--print", "sysroot"]))
        .join("lib/rustlib")
        .join(host)
        .join("bin")
        .join(name);
    if path.exists() {
        Ok(path)
    } else {
        Err(format!("the Rust toolchain has no {}", path.display()))
    }
}

/// Rust's bundled `gcc-ld` directory (its `ld.lld` runs `rust-lld`), for `clang -B`.
fn gcc_ld_dir() -> Result<PathBuf, String> {
    let dir = rust_tool("gcc-ld")?;
    if dir.join("ld.lld").is_file() {
        Ok(dir)
    } else {
        Err(format!("{} has no ld.lld (rust-lld)", dir.display()))
    }
}

/// The active toolchain's library directory for `triple` (`.../lib/rustlib/<triple>/lib`).
pub fn rust_sysroot_lib(triple: &str) -> Result<PathBuf, String> {
    let sysroot = rustc(&["--print", "sysroot"]);
    if sysroot.is_empty() {
        return Err("rustc --print sysroot printed nothing".to_string());
    }
    Ok(Path::new(&sysroot)
        .join("lib/rustlib")
        .join(triple)
        .join("lib"))
}

/// True when the Rust standard library for `triple` is in the active toolchain's sysroot.
fn has_std(triple: &str) -> bool {
    let Ok(lib) = rust_sysroot_lib(triple) else {
        return false;
    };
    fs::read_dir(lib).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
    })
}

/// Makes the target's std available (rustup target add); the error is the UNAVAILABLE reason.
pub fn ensure_std(t: &Target, install: bool, log: &Path) -> Result<(), String> {
    ensure_std_for(t.triple, install, log)
}

/// Makes Rust's std for the target `triple` available (rustup target add).
pub fn ensure_std_for(triple: &str, install: bool, log: &Path) -> Result<(), String> {
    if has_std(triple) {
        return Ok(());
    }
    if !install {
        return Err(format!("Rust std for {triple} is not installed"));
    }
    println!("rustup: target add {triple}");
    let out = Command::new("rustup")
        .args(["target", "add", triple])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("rustup: {e}"))?;
    let _ = fs::write(log, [out.stdout, out.stderr].concat());
    if out.status.success() && has_std(triple) {
        Ok(())
    } else {
        Err(format!(
            "`rustup target add {triple}` failed (see {})",
            log.display()
        ))
    }
}

/// Whether `command --version` runs.
fn runs(command: &str) -> bool {
    Command::new(command)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Where cargo writes: `CARGO_TARGET_DIR`, else the workspace's `target/`.
pub fn target_dir() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// The linking packages the chosen targets need and this machine lacks.
pub fn missing_packages(chosen: &[Target]) -> Vec<String> {
    let mut missing: Vec<String> = Vec::new();
    for t in chosen {
        for p in t.packages() {
            if !missing.iter().any(|g| g == p) && !apt::is_installed(p) {
                missing.push(p.to_string());
            }
        }
    }
    missing
}

/// Makes `t` buildable (std installed when `install`), returning its extra rustc flags;
/// the error is the reason the target is UNAVAILABLE. `install_err` is why installing its
/// packages failed, if it did.
pub fn prepare(
    t: &Target,
    install: bool,
    install_err: Option<&str>,
    logs: &Path,
) -> Result<Vec<String>, String> {
    ensure_std(t, install, &logs.join(format!("{}.rustup.log", t.triple)))?;
    let why = || {
        install_err
            .unwrap_or("not installed (--no-install)")
            .to_string()
    };
    if let targets::Linker::Clang { .. } = t.linker {
        if !runs(targets::CLANG) {
            return Err(format!("linker {} missing: {}", targets::CLANG, why()));
        }
        if let Some(p) = t.packages().into_iter().find(|p| !apt::is_installed(p)) {
            return Err(format!("package {p} missing: {}", why()));
        }
        return Ok(t.extra_flags(&gcc_ld_dir()?));
    }
    Ok(Vec::new())
}
