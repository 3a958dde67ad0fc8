//! How many system calls a call really makes, counted by `strace` (the Go runtime's
//! `TestUsingVDSO`): none where the vDSO (or the rseq area) answers, exactly one
//! everywhere else — for every function, with and without a vDSO, and on errors too:
//! never vDSO-then-syscall, never a syscall retried.

mod support;

use std::hint::black_box;
use support::skip::skip;
use vdsotime::{ClockId, RseqArea, Timespec, Timeval};

const CALLS: usize = 100;

/// The syscalls any case may make, as strace names them.
const TRACED: &str =
    "trace=clock_gettime,clock_gettime64,clock_getres,clock_getres_time64,gettimeofday,time,getcpu";

/// The system calls that finding the vDSO could make: `prctl` (`PR_GET_AUXV`) and
/// reading `/proc/self/auxv`.
const LOOKING: &str = "trace=prctl,openat,read,close";

/// The system call that confirms an image can (still) be read before it is read.
const CONFIRMING: &str = "trace=rt_sigprocmask";

/// Runs the child case under strace (after `prefix`, e.g. `env VAR=value`) and returns
/// how many of the traced syscalls it made.
fn count_syscalls(case: &str, prefix: &[&str]) -> usize {
    count_traced(case, prefix, TRACED)
}

/// [`count_syscalls`] of the system calls `trace` names (an strace `-e` expression).
fn count_traced(case: &str, prefix: &[&str], trace: &str) -> usize {
    // A log of its own for every run: tests run in parallel, and several trace one case.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let log = std::env::temp_dir().join(format!(
        "vdsotime-strace-{}-{run}-{}",
        std::process::id(),
        case.replace('/', "-")
    ));
    let log_arg = log.to_str().expect("temp path is UTF-8");
    let mut wrapper = prefix.to_vec();
    wrapper.extend(["strace", "-f", "-qq", "-e", trace, "-o", log_arg]);
    let out = support::child::rerun("child", ("VDSOTIME_STRACE_CASE", case), &wrapper);
    assert!(out.status.success(), "child {case} failed: {out:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !is_resumed_half(l) && !is_signal_mask_change(l))
        .count()
}

/// The second half of a call that strace split between threads (`<... NAME resumed>`):
/// its first half (`NAME(... <unfinished ...>`) is the call, counted once.
fn is_resumed_half(line: &str) -> bool {
    line.contains("<... ") && line.contains(" resumed>")
}

/// A real change of the signal mask (`SIG_BLOCK`, `SIG_UNBLOCK`, `SIG_SETMASK`), as the C
/// library makes around creating a thread, not the readability check, which passes a
/// `how` the kernel refuses: those are not the library's, and how many a run makes
/// depends on the threads the test harness starts.
fn is_signal_mask_change(line: &str) -> bool {
    line.contains("rt_sigprocmask(SIG_")
}

/// An address the kernel answers with `EFAULT`.
fn bad<T>() -> *mut T {
    8 as *mut T
}

/// The child: `<call>/<vdso|novdso>`, making `CALLS` calls of one function.
#[test]
fn child() {
    let Some(case) = std::env::var_os("VDSOTIME_STRACE_CASE") else {
        return; // not a child: nothing to do (the parent below runs the cases)
    };
    let case = case.into_string().unwrap();
    let (call, mode) = case.split_once('/').unwrap();
    if mode == "novdso" {
        // SAFETY: 0 means "no vDSO"; no other thread uses the library yet.
        unsafe { vdsotime::init_from_image(0) };
    }
    if mode == "caller" {
        let addr = vdsotime::auxv::sysinfo_ehdr().expect("the parent saw a vDSO");
        // SAFETY: this process's own vDSO, named by the caller as a runtime would.
        unsafe { vdsotime::init_from_image(addr) };
    }
    let clock = |raw| black_box(ClockId::from_raw(raw));
    let mut ts = Timespec::default();
    let mut tv = Timeval::default();
    for _ in 0..CALLS {
        // The errors are the point of some cases; the results are checked elsewhere.
        let _ = black_box(match call {
            "none" => Ok(()),
            "gettime-monotonic" => vdsotime::clock_gettime(clock(1)).map(drop),
            "gettime-cputime" => vdsotime::clock_gettime(clock(2)).map(drop),
            "gettime-invalid" => vdsotime::clock_gettime(clock(12)).map(drop),
            "gettime-aux" => vdsotime::clock_gettime(ClockId::aux(0)).map(drop),
            "getres-monotonic" => vdsotime::clock_getres(clock(1)).map(drop),
            "getres-invalid" => vdsotime::clock_getres(clock(12)).map(drop),
            "getres-aux" => vdsotime::clock_getres(ClockId::aux(0)).map(drop),
            "gettimeofday" => vdsotime::gettimeofday().map(drop),
            "time" => {
                black_box(vdsotime::time());
                Ok(())
            }
            "getcpu" => vdsotime::getcpu().map(drop),
            "every" => every_function(),
            // Errors of the syscall itself (only without a vDSO: the vDSO would fault).
            // SAFETY: the kernel checks the address and answers EFAULT.
            "gettime-efault" => unsafe { vdsotime::clock_gettime_to(clock(1), bad()) },
            // SAFETY: as above.
            "gettimeofday-efault" => unsafe { vdsotime::gettimeofday_to(bad(), bad()) },
            other => panic!("unknown case {other}"),
        });
    }
    // Keep the buffers alive so the cases above cannot be folded away.
    black_box((&mut ts, &mut tv));
}

/// One call of each function (the first in the process, the first time).
fn every_function() -> Result<(), vdsotime::Errno> {
    vdsotime::clock_gettime(ClockId::MONOTONIC)?;
    vdsotime::clock_getres(ClockId::MONOTONIC)?;
    vdsotime::gettimeofday()?;
    black_box(vdsotime::time());
    vdsotime::getcpu()?;
    black_box(vdsotime::path(vdsotime::Function::Time));
    black_box(vdsotime::raw::clock_gettime());
    Ok(())
}

/// What each call is expected to cost, in syscalls per call.
fn expected(call: &str, vdso: bool) -> usize {
    let aux_enabled = vdsotime::syscall::clock_getres(ClockId::aux(0)).is_ok();
    let rseq_node = matches!(vdsotime::rseq::area(), RseqArea::Glibc { node: true, .. });
    match call {
        "getcpu" if rseq_node => 0,
        "getcpu" => usize::from(!(vdso && vdsotime::arch::NATIVE.getcpu.is_some())),
        "gettime-aux" if vdso && aux_enabled => 0,
        "gettime-cputime" | "gettime-invalid" | "gettime-aux" | "getres-invalid" | "getres-aux" => {
            1
        }
        "gettime-efault" | "gettimeofday-efault" => 1,
        _ if vdso => 0,
        _ => 1,
    }
}

#[test]
fn syscalls_per_call() {
    const TEST: &str = "syscalls_per_call";
    if let Some(why) = support::strace::unusable() {
        return skip(TEST, "strace", why);
    }
    // Whatever the test harness itself does, measured with no calls at all.
    let baseline = count_syscalls("none/vdso", &[]);
    let calls = [
        "gettime-monotonic",
        "gettime-cputime",
        "gettime-invalid",
        "gettime-aux",
        "getres-monotonic",
        "getres-invalid",
        "getres-aux",
        "gettimeofday",
        "time",
        "getcpu",
    ];
    let have_vdso = vdsotime::vdso().is_some();
    if !have_vdso {
        skip(TEST, "vdso", "no vDSO: only the syscall path was counted");
    }
    let mut failures = Vec::new();
    let mut check = |case: String, prefix: &[&str], per_call: usize| {
        let made = count_syscalls(&case, prefix).saturating_sub(baseline);
        eprintln!("{case}: {made} syscalls for {CALLS} calls");
        if made != per_call * CALLS {
            failures.push(format!("{case}: {made}, expected {}", per_call * CALLS));
        }
    };
    for call in calls {
        if have_vdso {
            check(format!("{call}/vdso"), &[], expected(call, true));
        }
        check(format!("{call}/novdso"), &[], expected(call, false));
    }
    // getcpu without glibc's rseq area: the vDSO, or exactly one syscall.
    let no_rseq = ["env", "GLIBC_TUNABLES=glibc.pthread.rseq=0"];
    check("getcpu/novdso".into(), &no_rseq, 1);
    if have_vdso {
        let by_vdso = vdsotime::arch::NATIVE.getcpu.is_some();
        check("getcpu/vdso".into(), &no_rseq, usize::from(!by_vdso));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Finding the vDSO through this process's own auxiliary vector (libc's `getauxval`)
/// makes no system call (without the `std` feature: the reads of `/proc/self/auxv`, once). Binding a function confirms the image's first page can still be
/// read (a process may have unmapped its vDSO, or made it unreadable) by exactly one
/// `rt_sigprocmask`, on the call that binds it and never again; an address the caller
/// names gets more, one for its first page and then one for each 4 KiB of the image.
#[test]
fn binding_confirms_the_mapping_by_one_system_call() {
    const TEST: &str = "binding_confirms_the_mapping_by_one_system_call";
    if let Some(why) = support::strace::unusable() {
        return skip(TEST, "strace", why);
    }
    let baseline = count_traced("none/vdso", &[], LOOKING);
    let first = count_traced("every/vdso", &[], LOOKING).saturating_sub(baseline);
    if cfg!(feature = "std") {
        assert_eq!(
            first, 0,
            "the first calls looked for the vDSO by system call"
        );
    } else {
        // Without libc's getauxval the vector is read from /proc/self/auxv (or
        // PR_GET_AUXV): once when the first function binds, whichever functions follow,
        // and once more for `path()`, which looks the vDSO up afresh at each call.
        let one = count_traced("gettime-monotonic/vdso", &[], LOOKING).saturating_sub(baseline);
        assert!(one > 0, "no system call read the auxiliary vector");
        assert_eq!(
            first,
            2 * one,
            "the functions' first calls looked for the vDSO more than once"
        );
    }
    if vdsotime::vdso().is_none() {
        return skip(TEST, "vdso", "no vDSO: no image to confirm");
    }
    let before = count_traced("none/vdso", &[], CONFIRMING);
    for call in [
        "gettime-monotonic",
        "getres-monotonic",
        "gettimeofday",
        "time",
    ] {
        let made = count_traced(&format!("{call}/vdso"), &[], CONFIRMING).saturating_sub(before);
        // A 32-bit vDSO has no 64-bit `time`: `time` is served through the
        // `clock_gettime` entry (its coarse clock), which its first call binds too.
        let bindings = match (call, vdsotime::path(vdsotime::Function::Time)) {
            ("time", vdsotime::Path::VdsoCoarse { .. }) => 2,
            _ => 1,
        };
        assert_eq!(made, bindings, "{call}: rt_sigprocmask for {CALLS} calls");
    }
    let given = count_traced("gettime-monotonic/caller", &[], CONFIRMING).saturating_sub(before);
    let pages = vdsotime::vdso().map_or(0, |v| v.bytes().len().div_ceil(4096));
    assert_eq!(
        given,
        1 + pages + 1,
        "rt_sigprocmask for the caller's first page and each page of the image, then on binding"
    );
}

/// A syscall that fails is not made again: exactly one per call. The kernel's errors
/// come from bad pointers, so only without a vDSO (which would fault on them); valgrind's
/// memcheck flags those pointers, so `scripts/reliability/valgrind.sh` skips this test.
#[test]
fn failed_syscalls_are_not_repeated() {
    if let Some(why) = support::strace::unusable() {
        return skip("failed_syscalls_are_not_repeated", "strace", why);
    }
    let baseline = count_syscalls("none/novdso", &[]);
    for call in ["gettime-efault", "gettimeofday-efault"] {
        let made = count_syscalls(&format!("{call}/novdso"), &[]).saturating_sub(baseline);
        assert_eq!(made, expected(call, false) * CALLS, "{call}");
    }
}
