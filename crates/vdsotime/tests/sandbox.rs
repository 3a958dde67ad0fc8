//! A sandboxed process: `vdsotime::init()`, then a seccomp allowlist whose default action
//! kills (only `write`, to report, and `exit_group`, to leave), then every call the vDSO
//! answers here: clock_gettime and clock_getres of REALTIME, MONOTONIC, BOOTTIME, TAI, the
//! coarse clocks and MONOTONIC_RAW, gettimeofday, time and getcpu. All must succeed:
//! `init` did the first call's system call (the check that the vDSO is mapped) before the
//! sandbox. The same program without `init` must die of SIGSYS on its first call: the
//! proof that the filter kills what it does not allow.
//!
//! Runs on every architecture (the filters: reliability_common/seccomp.rs). A call that is
//! a system call here is not made in the sandbox, and the child says which and why: the
//! counter clocks and gettimeofday where the clocksource is one the vDSO cannot read (the
//! vDSO then makes the system call itself: `hpet` on the i686 machine), and getcpu where
//! neither the vDSO (none on aarch64 and arm; riscv64's is the system call) nor glibc's
//! rseq area answers it.

mod reliability_common;

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use reliability_common::seccomp::install_kill_allowlist;
use reliability_common::{child_mode, run_child, skip::skip};
use vdsotime::{path, ClockId, Function, Path};

const TEST: &str = "init_then_a_kill_allowlist_reads_every_clock";

/// Clocksources the vDSO reads without entering the kernel, on some architecture each
/// (x86 with `tsc` or Hyper-V's page; arm and arm64; riscv64; powerpc; s390x).
const VDSO_CLOCKSOURCES: &[&str] = &[
    "tsc",
    "hyperv_clocksource_tsc_page",
    "arch_sys_counter",
    "riscv_clocksource",
    "timebase",
    "tod",
];

/// The clocks read inside the sandbox, and whether reading one needs the clocksource's
/// counter (the coarse clocks read the data page only).
const CLOCKS: [(ClockId, &str, bool); 7] = [
    (ClockId::REALTIME, "REALTIME", true),
    (ClockId::MONOTONIC, "MONOTONIC", true),
    (ClockId::BOOTTIME, "BOOTTIME", true),
    (ClockId::TAI, "TAI", true),
    (ClockId::REALTIME_COARSE, "REALTIME_COARSE", false),
    (ClockId::MONOTONIC_COARSE, "MONOTONIC_COARSE", false),
    (ClockId::MONOTONIC_RAW, "MONOTONIC_RAW", true),
];

/// Whether getcpu by `p` stays in user space: riscv64's vDSO `__vdso_getcpu` is itself the
/// system call (its body is `ecall`), so only glibc's rseq area answers there.
fn getcpu_in_user_space(p: Path) -> bool {
    match p {
        Path::Rseq => true,
        Path::Vdso { .. } | Path::VdsoCoarse { .. } => !cfg!(target_arch = "riscv64"),
        Path::Syscall => false,
    }
}

/// The current clocksource's name.
fn clocksource() -> String {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Which calls answer in user space here, asked before the sandbox (`path` confirms the
/// vDSO is mapped: a system call). Without `init` every call is made: the first one dies.
struct Plan {
    counter: bool,
    gettime: [bool; 7],
    getres: [bool; 7],
    gettimeofday: bool,
    time: bool,
    getcpu: bool,
}

impl Plan {
    fn new(init: bool) -> Plan {
        let counter = !init || VDSO_CLOCKSOURCES.contains(&clocksource().as_str());
        let served = |f| !init || path(f).is_vdso();
        Plan {
            counter,
            gettime: CLOCKS.map(|(c, _, needs_counter)| {
                served(Function::ClockGettime(c)) && (counter || !needs_counter)
            }),
            getres: CLOCKS.map(|(c, _, _)| served(Function::ClockGetres(c))),
            gettimeofday: served(Function::Gettimeofday) && counter,
            time: served(Function::Time),
            getcpu: !init || getcpu_in_user_space(path(Function::Getcpu)),
        }
    }
}

#[test]
fn init_then_a_kill_allowlist_reads_every_clock() {
    match child_mode().as_deref() {
        Some("sandbox-init") => return child(true),
        Some("sandbox-no-init") => return child(false),
        _ => {}
    }
    if vdsotime::vdso().is_none() {
        return skip(TEST, "vdso", "no vDSO: the clocks are system calls here");
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
    let plan = Plan::new(init);
    if !plan.counter {
        let _ = writeln!(
            out,
            "clocksource {:?}, which the vDSO cannot read: the counter clocks and \
             gettimeofday are system calls here, not made",
            clocksource()
        );
    }
    install_kill_allowlist(&[libc::SYS_write, libc::SYS_exit_group]);
    let mut ok = true;
    let mut made = 0;
    for (i, (clock, name, _)) in CLOCKS.into_iter().enumerate() {
        let now = plan.gettime[i].then(|| vdsotime::clock_gettime(clock).is_ok());
        let res = plan.getres[i].then(|| vdsotime::clock_getres(clock).is_ok());
        for r in [now, res].into_iter().flatten() {
            ok &= r;
            made += 1;
        }
        let _ = writeln!(out, "{name}: {}, resolution {}", said(now), said(res));
    }
    let tv = plan.gettimeofday.then(|| vdsotime::gettimeofday().is_ok());
    let t = plan.time.then(|| vdsotime::time() > 0);
    let cpu = plan.getcpu.then(|| vdsotime::getcpu().is_ok());
    for r in [tv, t, cpu].into_iter().flatten() {
        ok &= r;
        made += 1;
    }
    let _ = writeln!(
        out,
        "gettimeofday {}, time {}, getcpu {}",
        said(tv),
        said(t),
        said(cpu)
    );
    if ok && made > 0 {
        let _ = writeln!(out, "SANDBOX_OK {made} calls");
    }
    // SAFETY: writes the buffer's bytes to standard output, then leaves the process at
    // once (exit_group), running nothing that could make another system call.
    unsafe {
        libc::write(1, out.as_ptr().cast(), out.len());
        libc::_exit(0);
    }
}

/// How a call went: made and succeeded, made and failed, or not made.
fn said(r: Option<bool>) -> &'static str {
    match r {
        Some(true) => "ok",
        Some(false) => "FAILED",
        None => "not made (a system call here)",
    }
}
