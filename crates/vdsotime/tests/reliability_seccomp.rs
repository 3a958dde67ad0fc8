//! seccomp: a child process forbids the time syscalls (clock_gettime, clock_gettime64,
//! gettimeofday, time → EPERM) before its first library call. The clocks the vDSO serves
//! must keep working; the others must come back as `Err(EPERM)` values; nothing may panic
//! or abort. (The C library's behaviour under the same filter is tested with libvdsotime.)

mod reliability_common;

use std::time::Duration;

use reliability_common::seccomp::install_filter;
use reliability_common::{child_mode, libc_clock_gettime, ns, run_child, skip::skip};
use vdsotime::{ClockId, Errno};

const TEST: &str = "time_syscalls_forbidden_by_seccomp";

/// Clock sources whose readings the vDSO can make without a syscall.
const VDSO_CLOCKSOURCES: &[&str] = &[
    "tsc",
    "kvm-clock",
    "hyperv_clocksource_tsc_page",
    "arch_sys_counter",
    "riscv_clocksource",
    "timebase",
    "tod",
];

#[test]
fn time_syscalls_forbidden_by_seccomp() {
    if child_mode().as_deref() == Some("seccomp") {
        child();
        return;
    }
    let run = run_child(TEST, "seccomp", &[], Duration::from_secs(60));
    println!("{}", run.stdout);
    assert!(run.status.success(), "child under seccomp failed: {run:#?}");
    if run.stdout.contains("SECCOMP_UNSUPPORTED") {
        return skip(
            TEST,
            "seccomp",
            "the emulator does not implement seccomp filters",
        );
    }
    assert_eq!(
        run.values("SECCOMP_OK").len(),
        1,
        "child did not finish: {run:#?}"
    );
}

/// Calls the vDSO's clock_gettime directly: the oracle for what the vDSO can serve here.
fn raw_vdso(clock: ClockId) -> Option<Result<i128, Errno>> {
    let f = vdsotime::raw::clock_gettime()?;
    let mut ts = vdsotime::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: an entry point the library resolved from the vDSO; it writes one timespec.
    let r = unsafe { f(clock.as_raw(), &mut ts) };
    Some(if r == 0 {
        Ok(ns(ts))
    } else {
        Err(Errno::from_raw(-r))
    })
}

fn child() {
    // Read before the filter; the library must not have been called yet in this process.
    let clocksource =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default()
            .trim()
            .to_owned();
    install_filter();
    println!("filter installed; clocksource {clocksource:?}");

    // The filter works: the raw syscalls fail.
    assert_eq!(
        libc_clock_gettime(ClockId::MONOTONIC).err(),
        Some(Errno::EPERM)
    );
    assert_eq!(
        vdsotime::syscall::clock_gettime(ClockId::REALTIME),
        Err(Errno::EPERM)
    );
    assert_eq!(
        vdsotime::syscall::clock_gettime(ClockId::MONOTONIC),
        Err(Errno::EPERM)
    );
    assert_eq!(vdsotime::syscall::gettimeofday().err(), Some(Errno::EPERM));
    assert_eq!(vdsotime::syscall::time(), -1);

    let Some(vdso) = vdsotime::vdso() else {
        skip(
            TEST,
            "vdso",
            "no vDSO: only the syscall half (every clock EPERM) ran",
        );
        for clock in ClockId::ALL {
            assert_eq!(
                vdsotime::clock_gettime(clock),
                Err(Errno::EPERM),
                "{clock:?}"
            );
        }
        println!("SECCOMP_OK");
        leave();
    };
    println!("vDSO at {:#x}, {} bytes", vdso.base(), vdso.bytes().len());

    // Coarse clocks only read the data page: the vDSO always serves them.
    for clock in [ClockId::REALTIME_COARSE, ClockId::MONOTONIC_COARSE] {
        let v = vdsotime::clock_gettime(clock);
        assert!(v.is_ok(), "{clock:?} under seccomp: {v:?}");
    }
    assert!(
        vdsotime::time() > 0,
        "time() under seccomp: {}",
        vdsotime::time()
    );

    // High-resolution clocks: whatever the vDSO itself can do, the library does.
    let served = VDSO_CLOCKSOURCES.contains(&clocksource.as_str());
    let hires = [
        ClockId::REALTIME,
        ClockId::MONOTONIC,
        ClockId::MONOTONIC_RAW,
        ClockId::BOOTTIME,
        ClockId::TAI,
    ];
    for clock in hires {
        // No raw entry where the vDSO's functions do not follow the C calling convention
        // (powerpc): there the library alone, which serves the clock or says EPERM.
        let raw = vdsotime::raw::clock_gettime().is_some();
        let before = raw.then(|| raw_vdso(clock).expect("vDSO has clock_gettime"));
        let lib = vdsotime::clock_gettime(clock).map(ns);
        let after = raw.then(|| raw_vdso(clock).expect("vDSO has clock_gettime"));
        println!("{clock:?}: vDSO {before:?}, library {lib:?}");
        match (before, lib, after) {
            (Some(Ok(b)), Ok(v), Some(Ok(a))) => {
                assert!(b <= v && v <= a, "{clock:?}: {v} not in [{b}, {a}]")
            }
            (Some(Err(_)), Err(e), Some(Err(_))) | (None, Err(e), None) => {
                assert_eq!(e, Errno::EPERM, "{clock:?}")
            }
            (None, Ok(_), None) => {}
            other => panic!("{clock:?}: vDSO and library disagree: {other:?}"),
        }
        if served && (clock == ClockId::REALTIME || clock == ClockId::MONOTONIC) {
            assert!(
                lib.is_ok(),
                "{clock:?} with clocksource {clocksource}: {lib:?}"
            );
        }
    }
    if served {
        let tv = vdsotime::gettimeofday();
        assert!(tv.is_ok(), "gettimeofday under seccomp: {tv:?}");
    }

    // Clocks the vDSO does not serve: an EPERM value, not a panic.
    for clock in [
        ClockId::PROCESS_CPUTIME_ID,
        ClockId::THREAD_CPUTIME_ID,
        ClockId::REALTIME_ALARM,
        ClockId::BOOTTIME_ALARM,
        ClockId::process_cputime(std::process::id() as i32),
    ] {
        assert_eq!(
            vdsotime::clock_gettime(clock),
            Err(Errno::EPERM),
            "{clock:?}"
        );
    }
    for id in [-1, 10, 12, i32::MAX] {
        // The kernel would say EINVAL, but its syscall is now EPERM: either is honest.
        let r = vdsotime::clock_gettime(ClockId::from_raw(id));
        println!("invalid id {id}: {r:?}");
        assert!(
            r == Err(Errno::EPERM) || r == Err(Errno::EINVAL),
            "id {id}: {r:?}"
        );
    }

    // clock_getres is not filtered: the library must still agree with the syscall.
    for clock in ClockId::ALL {
        assert_eq!(
            vdsotime::clock_getres(clock),
            vdsotime::syscall::clock_getres(clock),
            "{clock:?}"
        );
    }
    let _ = vdsotime::Instant::now().elapsed();
    println!("SECCOMP_OK");
    leave();
}

/// Ends the child before the test harness times the test: the harness reads its clock
/// through libc, which makes the now forbidden syscall where libc cannot use the vDSO
/// (musl needs DT_HASH, which Debian's 7.x arm64 vDSO lacks), and would panic on EPERM.
fn leave() -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(0)
}
