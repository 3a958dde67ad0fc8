//! How many system calls a call really makes, counted by `strace` (the Go runtime's
//! `TestUsingVDSO`): none for a vDSO-served clock, exactly one for a clock only the
//! kernel serves (CPU time) and for an invalid id — never vDSO-then-syscall.

mod support;

use std::process::Command;
use vdsotime::ClockId;

const CALLS: usize = 100;

fn strace_available() -> bool {
    Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the child case under strace and returns how many clock_gettime syscalls it made.
fn count_syscalls(case: &str) -> usize {
    let log = std::env::temp_dir().join(format!("vdsotime-strace-{}-{case}", std::process::id()));
    let log_arg = log.to_str().expect("temp path is UTF-8");
    let strace = [
        "strace",
        "-f",
        "-qq",
        "-e",
        "trace=clock_gettime,clock_gettime64",
        "-o",
        log_arg,
    ];
    let out = support::child::rerun("child", ("VDSOTIME_STRACE_CASE", case), &strace);
    assert!(out.status.success(), "child {case} failed: {out:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    text.lines().filter(|l| l.contains("clock_gettime")).count()
}

#[test]
fn child() {
    let Some(case) = std::env::var_os("VDSOTIME_STRACE_CASE") else {
        return;
    };
    let clock = match case.to_str().unwrap() {
        "none" => return,
        "vdso" => ClockId::MONOTONIC,
        "cputime" => ClockId::PROCESS_CPUTIME_ID,
        "invalid" => ClockId::from_raw(12),
        other => panic!("unknown case {other}"),
    };
    for _ in 0..CALLS {
        let _ = std::hint::black_box(vdsotime::clock_gettime(std::hint::black_box(clock)));
    }
}

#[test]
fn syscalls_per_call() {
    if !strace_available() {
        // QEMU user mode runs the tests of other architectures without a guest strace.
        assert!(
            std::env::var_os("VDSOTIME_EMULATOR").is_some(),
            "strace is required for this test"
        );
        eprintln!(
            "skipped: no strace under {:?}",
            std::env::var_os("VDSOTIME_EMULATOR")
        );
        return;
    }
    // Whatever the test harness itself does, measured with no calls at all.
    let baseline = count_syscalls("none");
    let made = |case| count_syscalls(case) - baseline;
    if vdsotime::vdso().is_some() {
        assert_eq!(
            made("vdso"),
            0,
            "MONOTONIC made syscalls although the vDSO serves it"
        );
    }
    assert_eq!(
        made("cputime"),
        CALLS,
        "CPU-time clock: not exactly one syscall per call"
    );
    assert_eq!(
        made("invalid"),
        CALLS,
        "invalid clock: not exactly one syscall per call"
    );
}
