//! Registering QEMU with the kernel's binfmt_misc, so a foreign test binary that runs
//! itself again (`Command::new(current_exe())`, as the seccomp, time-namespace and
//! first-call tests do) starts under QEMU too instead of failing with ENOEXEC.
//!
//! Uses the magic and mask QEMU ships in `/usr/share/qemu/binfmt.d/qemu-<arch>.conf`, with
//! the `F` flag: the kernel opens the (static) emulator once, at registration.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const DIR: &str = "/proc/sys/fs/binfmt_misc";

/// The absolute path of `command`, searched in PATH.
pub fn which(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| p.is_file())
}

/// Makes binaries of `arch` start under `emulator`; Ok if some handler already does.
pub fn ensure(arch: &str, emulator: &str) -> Result<(), String> {
    let register = Path::new(DIR).join("register");
    if !register.exists() {
        let _ = Command::new("mount")
            .args(["-t", "binfmt_misc", "binfmt_misc", DIR])
            .status();
        if !register.exists() {
            return Err(format!("{DIR} is not mounted and cannot be"));
        }
    }
    let name = format!("qemu-{arch}");
    let entry = Path::new(DIR).join(&name);
    if let Ok(text) = fs::read_to_string(&entry) {
        if text.lines().next() == Some("enabled") {
            return Ok(());
        }
        return Err(format!("{} exists but is disabled", entry.display()));
    }
    let conf = format!("/usr/share/qemu/binfmt.d/{name}.conf");
    let line = fs::read_to_string(&conf).map_err(|e| format!("{conf}: {e}"))?;
    // :name:type:offset:magic:mask:interpreter:flags
    let fields: Vec<&str> = line.trim().split(':').collect();
    let [_, _, kind, offset, magic, mask, _, _] = fields[..] else {
        return Err(format!("{conf}: unexpected format"));
    };
    let interpreter = which(emulator).ok_or_else(|| format!("{emulator} not in PATH"))?;
    let rule = format!(
        ":{name}:{kind}:{offset}:{magic}:{mask}:{}:F",
        interpreter.display()
    );
    fs::write(&register, rule).map_err(|e| format!("registering {name}: {e}"))?;
    println!("binfmt: registered {name} -> {}", interpreter.display());
    Ok(())
}
