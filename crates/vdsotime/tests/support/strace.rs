//! Whether `strace` can count this process's system calls: the tests that count them
//! skip (visibly) where it cannot.

#![allow(dead_code)]

/// Why strace cannot count this process's system calls here, if it cannot: no strace,
/// an emulator (`cargo xtask cross` sets `VDSOTIME_EMULATOR`), whose own system calls
/// the host's strace would count instead of the guest's, or valgrind, whose own reads of
/// its internal pipe a traced child would add to the program's.
pub fn unusable() -> Option<String> {
    if let Some(emulator) = std::env::var_os("VDSOTIME_EMULATOR") {
        return Some(format!(
            "strace would trace the emulator ({emulator:?}), not the guest"
        ));
    }
    if under_valgrind() {
        return Some(
            "strace would count valgrind's own system calls with the program's".to_string(),
        );
    }
    let works = super::process::run(
        std::process::Command::new("strace").arg("-V"),
        std::time::Duration::from_secs(60),
    )
    .is_ok_and(|o| o.status.success());
    (!works).then(|| "`strace -V` does not run here".to_string())
}

/// Whether this process runs under valgrind, which maps its preload objects into it.
fn under_valgrind() -> bool {
    std::fs::read_to_string("/proc/self/maps").is_ok_and(|maps| maps.contains("vgpreload"))
}
