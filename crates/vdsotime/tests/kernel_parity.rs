//! The library against the kernel: every clock and function, through the fast path
//! and the forced syscall path, compared with raw system calls taken just before and
//! after (zero tolerance), and errors compared errno for errno.

mod support;

use support::kernel;
use support::skip::skip;
use vdsotime::{arch, ClockId, Errno, Function, Path, Timespec};

/// The named clocks, then the invalid and dynamic ids the kernel's selftests use.
fn every_clock() -> Vec<ClockId> {
    let mut ids = ClockId::ALL.to_vec();
    for raw in [-1, 10, 12, 16, 31, 32, 1000, i32::MIN, i32::MAX] {
        ids.push(ClockId::from_raw(raw));
    }
    ids.push(ClockId::process_cputime(0));
    ids.push(ClockId::thread_cputime(0));
    ids.push(ClockId::process_cputime(std::process::id() as i32));
    ids.push(ClockId::from_fd(1000)); // not open: EINVAL
    ids
}

#[test]
fn clock_gettime_is_bracketed_by_the_syscall() {
    for _ in 0..100 {
        for clock in every_clock() {
            kernel::assert_bracketed(clock, "clock_gettime", vdsotime::clock_gettime);
            kernel::assert_bracketed(
                clock,
                "syscall::clock_gettime",
                vdsotime::syscall::clock_gettime,
            );
        }
    }
}

#[test]
fn invalid_clocks_give_einval_like_the_kernel() {
    for raw in [-1, 10, 12, 1000, i32::MIN, i32::MAX] {
        let id = ClockId::from_raw(raw);
        assert_eq!(
            kernel::clock_gettime(id),
            Err(Errno::EINVAL),
            "kernel, id {raw}"
        );
        assert_eq!(
            vdsotime::clock_gettime(id),
            Err(Errno::EINVAL),
            "library, id {raw}"
        );
        assert_eq!(
            vdsotime::clock_getres(id),
            Err(Errno::EINVAL),
            "library getres, id {raw}"
        );
        assert_eq!(
            vdsotime::syscall::clock_gettime(id),
            Err(Errno::EINVAL),
            "syscall path, id {raw}"
        );
    }
}

#[test]
fn clock_getres_equals_the_syscall_exactly() {
    for clock in every_clock() {
        let want = kernel::clock_getres(clock);
        assert_eq!(vdsotime::clock_getres(clock), want, "clock_getres {clock}");
        assert_eq!(
            vdsotime::syscall::clock_getres(clock),
            want,
            "syscall::clock_getres {clock}"
        );
    }
}

#[test]
fn gettimeofday_is_bracketed_by_realtime_and_the_syscall() {
    for _ in 0..1000 {
        let before = kernel::clock_gettime(ClockId::REALTIME)
            .unwrap()
            .to_timeval();
        let (sys_before, _) = kernel::gettimeofday();
        let lib = vdsotime::gettimeofday().unwrap();
        let forced = vdsotime::syscall::gettimeofday().unwrap();
        let (sys_after, _) = kernel::gettimeofday();
        let after = kernel::clock_gettime(ClockId::REALTIME)
            .unwrap()
            .to_timeval();
        assert!(lib.is_normalized() && forced.is_normalized());
        assert!(
            before <= sys_before
                && sys_before <= lib
                && lib <= forced
                && forced <= sys_after
                && sys_after <= after
        );
    }
}

#[test]
fn gettimeofday_timezone_equals_the_kernels() {
    let (_, tz) = kernel::gettimeofday();
    let (tv, lib_tz) = vdsotime::gettimeofday_tz().unwrap();
    assert_eq!(lib_tz, tz);
    assert!(tv.is_normalized());
    assert_eq!(vdsotime::syscall::gettimeofday_tz().unwrap().1, tz);
}

#[test]
fn time_is_the_coarse_realtime_second() {
    let coarse = || {
        kernel::clock_gettime(ClockId::REALTIME_COARSE)
            .unwrap()
            .tv_sec
    };
    for _ in 0..1000 {
        let before = coarse();
        let lib = vdsotime::time();
        let after = coarse();
        let forced = vdsotime::syscall::time();
        let last = coarse();
        assert!(
            before <= lib && lib <= after,
            "time {lib} outside [{before}, {after}]"
        );
        // The kernel's own `time` syscall reads the seconds without the timekeeper's
        // sequence count and can trail the vDSO's by one second as the second turns
        // (seen on Linux 6.18); the forced path mirrors the kernel, lag included.
        assert!(
            after - 1 <= forced && forced <= last,
            "syscall::time {forced} outside [{after} - 1, {last}]"
        );
    }
}

#[test]
fn time_advances_across_a_sleep() {
    let t0 = vdsotime::time();
    std::thread::sleep(std::time::Duration::from_millis(1010));
    assert!(vdsotime::time() > t0);
}

#[test]
fn getcpu_matches_the_syscall_when_pinned() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut checked = 0;
    for cpu in 0..cpus {
        // SAFETY: a zeroed cpu_set_t is valid; sched_setaffinity only reads it.
        let pinned = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0
        };
        if !pinned {
            continue; // not in this process's allowed set
        }
        let (kcpu, knode) = kernel::getcpu();
        assert_eq!(kcpu as usize, cpu);
        assert_eq!(vdsotime::getcpu(), Ok((kcpu, knode)));
        assert_eq!(vdsotime::syscall::getcpu(), Ok((kcpu, knode)));
        checked += 1;
    }
    if checked == 0 {
        skip(
            "getcpu_matches_the_syscall_when_pinned",
            "affinity",
            format_args!("could not pin to any of {cpus} CPUs"),
        );
    }
}

#[test]
fn instant_and_durations_follow_monotonic() {
    let before = kernel::clock_gettime(ClockId::MONOTONIC).unwrap();
    let i = vdsotime::Instant::now();
    let after = kernel::clock_gettime(ClockId::MONOTONIC).unwrap();
    assert!(before <= i.as_timespec() && i.as_timespec() <= after);
    let later = i.checked_add(std::time::Duration::from_secs(5)).unwrap();
    assert_eq!(later.duration_since(i), std::time::Duration::from_secs(5));
    assert_eq!(
        later.checked_sub(std::time::Duration::from_secs(5)),
        Some(i)
    );
}

/// The conversion to `SystemTime` exists only with the `std` feature.
#[cfg(feature = "std")]
#[test]
fn system_time_conversion_agrees_with_std() {
    let before = std::time::SystemTime::now();
    let now = vdsotime::clock_gettime(ClockId::REALTIME).unwrap();
    let lib = std::time::SystemTime::try_from(now).unwrap();
    let after = std::time::SystemTime::now();
    assert!(before <= lib && lib <= after);
}

/// The vDSO of the test process, parsed: the architecture's whole symbol table must be
/// there with its version, and the paths must name those symbols.
#[test]
fn live_image_has_the_native_table() {
    let Some(v) = vdsotime::vdso() else {
        assert_eq!(
            std::env::var("VDSOTIME_EXPECT_NO_VDSO").as_deref(),
            Ok("1"),
            "no vDSO found"
        );
        assert_eq!(
            vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC)),
            Path::Syscall
        );
        return skip(
            "live_image_has_the_native_table",
            "vdso",
            "no vDSO in this process: only the syscall path was checked",
        );
    };
    assert!(v.is_native());
    let table = v.arch().unwrap();
    assert_eq!(table, arch::NATIVE);
    assert_eq!(v.base(), vdsotime::auxv::sysinfo_ehdr().unwrap());
    // Section headers end the image, so readelf accepts a dump of it.
    assert!(v.bytes().len() > 1024);
    for name in table.symbols() {
        // Not every kernel has every symbol (clock_getres_time64 is new); the core ones must be.
        if let Some(s) = v.lookup(name, Some(table.version)) {
            assert_eq!(s.version.unwrap_or(table.version), table.version);
            assert!(
                v.symbols().any(|t| t == s),
                "{name} found by lookup but not listed"
            );
        }
    }
    let core = table.clock_gettime64.or(table.clock_gettime).unwrap();
    assert!(
        v.lookup(core, Some(table.version)).is_some(),
        "{core} missing"
    );
    match vdsotime::path(Function::ClockGettime(ClockId::MONOTONIC)) {
        Path::Vdso { symbol, .. } => assert_eq!(symbol, core),
        other => panic!("MONOTONIC not served by the vDSO: {other}"),
    }
    assert_eq!(
        vdsotime::path(Function::ClockGettime(ClockId::PROCESS_CPUTIME_ID)),
        Path::Syscall
    );
}

#[test]
fn raw_symbols_answer_like_the_library() {
    let Some(f) = vdsotime::raw::clock_gettime() else {
        // powerpc's vDSO needs the asm call sequence: `raw` hands out nothing there.
        let why = if cfg!(target_arch = "powerpc64") {
            "no raw symbols on powerpc, by design"
        } else {
            "no vDSO in this process"
        };
        return skip("raw_symbols_answer_like_the_library", "vdso", why);
    };
    let before = kernel::clock_gettime(ClockId::MONOTONIC).unwrap();
    let mut ts = Timespec::default();
    // SAFETY: `f` is the vDSO's clock_gettime with this exact signature.
    assert_eq!(unsafe { f(ClockId::MONOTONIC.as_raw(), &mut ts) }, 0);
    let after = kernel::clock_gettime(ClockId::MONOTONIC).unwrap();
    assert!(before <= ts && ts <= after);
}

/// In a fresh process, 32 threads make their very first call at once: the lazy
/// initializer races with itself and every result must still be right.
#[test]
fn threads_racing_the_first_call_all_get_correct_results() {
    if std::env::var_os("VDSOTIME_RACE_CHILD").is_some() {
        return race_child();
    }
    let out = support::child::rerun(
        "threads_racing_the_first_call_all_get_correct_results",
        ("VDSOTIME_RACE_CHILD", "1"),
        &[],
    );
    support::child::assert_ran(&out, "race child ok");
}

fn race_child() {
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(32));
    let threads: Vec<_> = (0..32)
        .map(|i| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let clock = [
                    ClockId::MONOTONIC,
                    ClockId::REALTIME,
                    ClockId::BOOTTIME,
                    ClockId::MONOTONIC_COARSE,
                ][i % 4];
                let before = kernel::clock_gettime(clock).unwrap();
                barrier.wait();
                let got = vdsotime::clock_gettime(clock).unwrap();
                let t = vdsotime::time();
                let after = kernel::clock_gettime(clock).unwrap();
                assert!(
                    before <= got && got <= after,
                    "{clock}: {got:?} outside [{before:?}, {after:?}]"
                );
                assert!(t > 1_600_000_000);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    println!("race child ok");
}

/// The C-shaped calls write through the pointer on success, leave it untouched on
/// error, and answer exactly like the syscall.
#[test]
fn pointer_calls_match_the_kernel_and_leave_output_untouched_on_error() {
    let untouched = Timespec {
        tv_sec: -7,
        tv_nsec: -7,
    };
    for clock in every_clock() {
        kernel::assert_bracketed(clock, "clock_gettime_to", |c| {
            let mut ts = untouched;
            // SAFETY: `ts` is writable.
            match unsafe { vdsotime::clock_gettime_to(c, &mut ts) } {
                Ok(()) => Ok(ts),
                Err(e) => {
                    assert_eq!(ts, untouched, "{c}: output written on error");
                    Err(e)
                }
            }
        });
        let mut res = untouched;
        // SAFETY: `res` is writable.
        let got = unsafe { vdsotime::clock_getres_to(clock, &mut res) };
        match kernel::clock_getres(clock) {
            Ok(want) => assert_eq!((got, res), (Ok(()), want), "clock_getres_to {clock}"),
            Err(e) => assert_eq!((got, res), (Err(e), untouched), "clock_getres_to {clock}"),
        }
        // SAFETY: a null result pointer is allowed: only the clock is checked.
        let got = unsafe { vdsotime::clock_getres_to(clock, std::ptr::null_mut()) };
        assert_eq!(
            got,
            kernel::clock_getres(clock).map(|_| ()),
            "clock_getres_to(NULL) {clock}"
        );
    }
    let (mut tv, mut tz) = (vdsotime::Timeval::default(), vdsotime::Timezone::default());
    let before = kernel::gettimeofday();
    // SAFETY: both outputs are writable.
    let got = unsafe { vdsotime::gettimeofday_to(&mut tv, &mut tz) };
    assert_eq!(got, Ok(()));
    let after = kernel::gettimeofday();
    assert!(before.0 <= tv && tv <= after.0 && tz == after.1);
}
