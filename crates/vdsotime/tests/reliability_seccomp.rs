//! seccomp: a child process forbids the time syscalls (clock_gettime, clock_gettime64,
//! gettimeofday, time → EPERM) before its first library call. The clocks the vDSO serves
//! must keep working; the others must come back as `Err(EPERM)` values; nothing may panic
//! or abort. (The C library's behaviour under the same filter is tested with libvdsotime.)

mod reliability_common;

use std::time::Duration;

use reliability_common::{child_mode, libc_clock_gettime, ns, run_child, skip::skip};
use vdsotime::{ClockId, Errno};

const TEST: &str = "time_syscalls_forbidden_by_seccomp";

/// The audit architecture the filter accepts; other ABIs' calls are killed.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// Syscall numbers denied with EPERM. 403 is clock_gettime64 of the 32-bit ABIs; it is no
/// syscall on 64-bit ones, but listing it keeps the filter the same everywhere.
#[cfg(target_arch = "x86_64")]
const DENIED: &[u32] = &[
    libc::SYS_clock_gettime as u32,
    403,
    libc::SYS_gettimeofday as u32,
    libc::SYS_time as u32,
];
#[cfg(target_arch = "aarch64")]
const DENIED: &[u32] = &[
    libc::SYS_clock_gettime as u32,
    403,
    libc::SYS_gettimeofday as u32,
];

/// Clock sources whose readings the vDSO can make without a syscall.
const VDSO_CLOCKSOURCES: &[&str] = &[
    "tsc",
    "kvm-clock",
    "hyperv_clocksource_tsc_page",
    "arch_sys_counter",
];

#[test]
fn time_syscalls_forbidden_by_seccomp() {
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return skip(
            TEST,
            "seccomp",
            "no seccomp filter written for this architecture",
        );
    }
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

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn install_filter() {
    use libc::{sock_filter, sock_fprog, BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let stmt = |code: u32, k: u32| sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |k: u32, jt: u8, jf: u8| sock_filter {
        code: (BPF_JMP | BPF_JEQ | BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let n = DENIED.len() as u8;
    let mut prog = vec![
        // offsetof(struct seccomp_data, arch) == 4, nr == 0.
        stmt(BPF_LD | BPF_W | BPF_ABS, 4),
        jump(AUDIT_ARCH, 1, 0),
        stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
        stmt(BPF_LD | BPF_W | BPF_ABS, 0),
    ];
    for (i, &nr) in DENIED.iter().enumerate() {
        // Match: jump over the remaining tests and the ALLOW to the ERRNO return.
        prog.push(jump(nr, n - i as u8, 0));
    }
    prog.push(stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW));
    prog.push(stmt(
        BPF_RET | BPF_K,
        libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
    ));
    let fprog = sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_mut_ptr(),
    };
    // SAFETY: plain prctl call with integer arguments.
    let r = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    assert_eq!(
        r,
        0,
        "PR_SET_NO_NEW_PRIVS: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: fprog points to a valid BPF program that outlives the call; TSYNC applies it
    // to every thread of the process (the test harness may have more than one).
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_TSYNC,
            &fprog as *const sock_fprog,
        )
    };
    let err = std::io::Error::last_os_error();
    // QEMU user mode cannot filter its guest's syscalls and refuses with ENOSYS.
    if r != 0
        && err.raw_os_error() == Some(libc::ENOSYS)
        && std::env::var_os("VDSOTIME_EMULATOR").is_some()
    {
        println!(
            "SECCOMP_UNSUPPORTED by {:?}",
            std::env::var_os("VDSOTIME_EMULATOR")
        );
        std::process::exit(0);
    }
    assert_eq!(r, 0, "seccomp(SET_MODE_FILTER): {err}");
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn install_filter() {}

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
        let before = raw_vdso(clock).expect("vDSO has clock_gettime");
        let lib = vdsotime::clock_gettime(clock).map(ns);
        let after = raw_vdso(clock).expect("vDSO has clock_gettime");
        println!("{clock:?}: vDSO {before:?}, library {lib:?}");
        match (before, lib, after) {
            (Ok(b), Ok(v), Ok(a)) => assert!(b <= v && v <= a, "{clock:?}: {v} not in [{b}, {a}]"),
            (Err(_), Err(e), Err(_)) => assert_eq!(e, Errno::EPERM, "{clock:?}"),
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
