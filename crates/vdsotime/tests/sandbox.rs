//! A sandboxed process: `vdsotime::init()`, then a seccomp allowlist whose default action
//! kills (only `write`, to report, and `exit_group`, to leave), then every clock the vDSO
//! serves, gettimeofday, time, clock_getres and getcpu (where the vDSO or glibc's rseq
//! area answers it). All must succeed: `init` did the first call's system call (the check
//! that the vDSO is mapped) before the sandbox. The
//! same program without `init` must die of SIGSYS on its first call: the proof that the
//! filter kills what it does not allow.

mod reliability_common;

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use reliability_common::seccomp::install_kill_allowlist;
use reliability_common::{child_mode, run_child, skip::skip};
use vdsotime::ClockId;

const TEST: &str = "init_then_a_kill_allowlist_reads_every_clock";

/// Clocksources the vDSO reads without entering the kernel.
const VDSO_CLOCKSOURCES: &[&str] = &["tsc", "hyperv_clocksource_tsc_page", "arch_sys_counter"];

/// The clocks read inside the sandbox.
const CLOCKS: [(ClockId, &str); 7] = [
    (ClockId::REALTIME, "REALTIME"),
    (ClockId::MONOTONIC, "MONOTONIC"),
    (ClockId::BOOTTIME, "BOOTTIME"),
    (ClockId::TAI, "TAI"),
    (ClockId::REALTIME_COARSE, "REALTIME_COARSE"),
    (ClockId::MONOTONIC_COARSE, "MONOTONIC_COARSE"),
    (ClockId::MONOTONIC_RAW, "MONOTONIC_RAW"),
];

#[test]
fn init_then_a_kill_allowlist_reads_every_clock() {
    match child_mode().as_deref() {
        Some("sandbox-init") => return child(true),
        Some("sandbox-no-init") => return child(false),
        _ => {}
    }
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return skip(
            TEST,
            "seccomp",
            "no seccomp filter written for this architecture",
        );
    }
    let clocksource =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let clocksource = clocksource.trim();
    if vdsotime::vdso().is_none() {
        return skip(TEST, "vdso", "no vDSO: the clocks are system calls here");
    }
    if !VDSO_CLOCKSOURCES.contains(&clocksource) {
        return skip(
            TEST,
            "vdso-clocksource",
            format!("clocksource {clocksource:?}: the clocks are system calls here"),
        );
    }
    let timeout = Duration::from_secs(60);
    let run = run_child(TEST, "sandbox-init", &[], timeout);
    if run.stdout.contains("SECCOMP_UNSUPPORTED") {
        return skip(
            TEST,
            "seccomp",
            "the emulator does not implement seccomp filters",
        );
    }
    print!("{}", run.stdout);
    assert!(
        run.status.success() && run.values("SANDBOX_OK").len() == 1,
        "after init, the sandboxed calls must all succeed: {run:#?}"
    );
    let run = run_child(TEST, "sandbox-no-init", &[], timeout);
    assert_eq!(
        run.status.signal(),
        Some(libc::SIGSYS),
        "without init, the first call makes a system call the sandbox kills: {run:#?}"
    );
    println!("without init: killed by SIGSYS, as the filter says");
}

/// Inside the child: nothing but `write` and `exit_group` once the filter is in, so the
/// report is written into a buffer allocated before it, and the child leaves by `_exit`.
fn child(init: bool) {
    let mut out = String::with_capacity(1 << 12);
    if init {
        vdsotime::init();
    }
    // getcpu is a system call where neither the vDSO nor an rseq area answers it (no
    // `getcpu` in aarch64's vDSO, and a musl program has no rseq area): not called there.
    // Asked before the sandbox: `path` confirms the vDSO is still mapped, a system call
    // (and only after `init`, so that the control without it finds the vDSO in the sandbox).
    let getcpu_avoids_the_kernel =
        init && vdsotime::path(vdsotime::Function::Getcpu) != vdsotime::Path::Syscall;
    install_kill_allowlist(&[libc::SYS_write, libc::SYS_exit_group]);
    let mut ok = true;
    for (clock, name) in CLOCKS {
        let now = vdsotime::clock_gettime(clock);
        let res = vdsotime::clock_getres(clock);
        ok &= now.is_ok() && res.is_ok();
        let _ = writeln!(
            out,
            "{name}: {:?}, resolution {:?}",
            now.is_ok(),
            res.is_ok()
        );
    }
    let tv = vdsotime::gettimeofday();
    let t = vdsotime::time();
    let cpu = if getcpu_avoids_the_kernel {
        let cpu = vdsotime::getcpu();
        ok &= cpu.is_ok();
        if cpu.is_ok() {
            "ok"
        } else {
            "failed"
        }
    } else {
        "not called (a system call here)"
    };
    ok &= tv.is_ok() && t > 0;
    let _ = writeln!(out, "gettimeofday {:?}, time {t}, getcpu {cpu}", tv.is_ok());
    if ok {
        out.push_str("SANDBOX_OK\n");
    }
    // SAFETY: writes the buffer's bytes to standard output, then leaves the process at
    // once (exit_group), running nothing that could make another system call.
    unsafe {
        libc::write(1, out.as_ptr().cast(), out.len());
        libc::_exit(0);
    }
}
