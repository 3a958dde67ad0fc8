//! Whether `strace` can count this process's system calls: the tests that count them
//! skip (visibly) where it cannot.

#![allow(dead_code)]

/// Why strace cannot count this process's system calls here, if it cannot: no strace,
/// or an emulator (`cargo xtask cross` sets `VDSOTIME_EMULATOR`), whose own system calls
/// the host's strace would count instead of the guest's.
pub fn unusable() -> Option<String> {
    if let Some(emulator) = std::env::var_os("VDSOTIME_EMULATOR") {
        return Some(format!(
            "strace would trace the emulator ({emulator:?}), not the guest"
        ));
    }
    let works = super::process::run(
        std::process::Command::new("strace").arg("-V"),
        std::time::Duration::from_secs(60),
    )
    .is_ok_and(|o| o.status.success());
    (!works).then(|| "`strace -V` does not run here".to_string())
}
