//! Finding a QEMU user-mode emulator that gives its guests a vDSO.
//!
//! QEMU maps a vDSO of its own into user-mode guests only since 8.1; Debian bookworm's 7.2 has
//! none, so every guest would silently take the syscall path. Backports carries 10.x, whose
//! static binaries are `qemu-<arch>` (the `qemu-<arch>-static` names are compatibility links).

use std::process::{Command, Stdio};

/// The oldest QEMU whose user mode provides a guest vDSO.
pub const MIN_VERSION: (u32, u32) = (8, 1);

/// A usable emulator: the command to run and the version it reported.
#[derive(Debug, Clone)]
pub struct Emulator {
    pub command: String,
    pub version: String,
}

/// Parses `qemu-aarch64 version 10.0.2 (Debian ...)` into (major, minor) and the version text.
fn parse_version(output: &str) -> Option<((u32, u32), String)> {
    let first = output.lines().next()?;
    let text = first.split(" version ").nth(1)?.split_whitespace().next()?;
    let mut parts = text.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some(((major, minor), text.to_string()))
}

/// Finds `qemu-<arch>-static` or `qemu-<arch>` at version >= [`MIN_VERSION`].
///
/// The error says what was found instead (too old, or nothing).
pub fn find(arch: &str) -> Result<Emulator, String> {
    let mut seen = Vec::new();
    for command in [format!("qemu-{arch}-static"), format!("qemu-{arch}")] {
        let Ok(out) = Command::new(&command)
            .arg("--version")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
        else {
            continue;
        };
        match parse_version(&String::from_utf8_lossy(&out.stdout)) {
            Some((v, version)) if v >= MIN_VERSION => return Ok(Emulator { command, version }),
            Some((_, version)) => seen.push(format!("{command} {version}")),
            None => seen.push(format!("{command} (unreadable --version)")),
        }
    }
    let (major, minor) = MIN_VERSION;
    if seen.is_empty() {
        Err(format!("no qemu-{arch}(-static) found"))
    } else {
        Err(format!(
            "{} is older than {major}.{minor} (no guest vDSO)",
            seen.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_compare() {
        let (v, text) =
            parse_version("qemu-aarch64 version 10.0.2 (Debian 1:10.0.2+ds-2)\nCopyright").unwrap();
        assert_eq!((v, text.as_str()), ((10, 0), "10.0.2"));
        assert!(v >= MIN_VERSION);
        let (old, _) = parse_version("qemu-aarch64 version 7.2.17 (Debian)").unwrap();
        assert!(old < MIN_VERSION);
        let (just, _) = parse_version("qemu-arm version 8.1.0").unwrap();
        assert!(just >= MIN_VERSION);
        assert!(parse_version("garbage").is_none());
    }
}
