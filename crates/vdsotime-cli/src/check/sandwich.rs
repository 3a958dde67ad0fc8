//! The heart of `check`: a library reading sandwiched between two syscall readings,
//! repeated on a pinned thread until a deadline (the kernel's vdso_test_correctness
//! method, zero tolerance), plus a cross-thread monotonicity test.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use vdsotime::{ClockId, Errno, Timespec, Timeval};

use crate::check::fault::Lib;
use crate::check::tally::Tally;
use crate::names;

/// Clocks that never go backwards, within a thread and across threads.
pub const MONOTONIC_FAMILY: [ClockId; 5] = [
    ClockId::MONOTONIC,
    ClockId::MONOTONIC_RAW,
    ClockId::MONOTONIC_COARSE,
    ClockId::BOOTTIME,
    ClockId::BOOTTIME_ALARM,
];

/// The latest reading any thread took of each monotonic clock (ns), published
/// after the reading completed. A reading started after seeing a value must not
/// be below it.
#[derive(Debug, Default)]
pub struct Latest([AtomicU64; MONOTONIC_FAMILY.len()]);

fn as_ns(t: Timespec) -> u64 {
    u64::try_from(i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)).unwrap_or(0)
}

fn show(r: &Result<Timespec, Errno>) -> String {
    match r {
        Ok(t) => format!("{}.{:09}", t.tv_sec, t.tv_nsec),
        Err(e) => e.name().to_string(),
    }
}

fn show_tv(t: &Timeval) -> String {
    format!("{}.{:06}", t.tv_sec, t.tv_usec)
}

fn tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    let t: libc::c_long = unsafe { libc::syscall(libc::SYS_gettid) };
    // A `long`: 64 bits wide on 64-bit targets, where a thread id still fits an i32.
    #[allow(clippy::useless_conversion)]
    i32::try_from(t).unwrap_or(0)
}

/// Pins the calling thread to one CPU.
pub fn pin(cpu: usize) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain old data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes inside `set`; `cpu` comes from sched_getaffinity, so it is
    // below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 means this thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 {
        Ok(())
    } else {
        Err(format!(
            "sched_setaffinity(CPU {cpu}): {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// Clocks a worker reads: the eleven named ones, the enabled auxiliary clocks and the
/// CPU-time clocks of this process and this thread by id (negative ids, served only by
/// the syscall).
fn worker_clocks() -> Vec<(ClockId, String)> {
    let mut v: Vec<(ClockId, String)> = [ClockId::ALL.to_vec(), crate::aux_clocks::enabled()]
        .concat()
        .into_iter()
        .map(|c| (c, names::clock_short(c)))
        .collect();
    let pid = std::process::id() as i32;
    v.push((ClockId::process_cputime(pid), "process_cputime(pid)".into()));
    v.push((ClockId::thread_cputime(tid()), "thread_cputime(tid)".into()));
    v
}

fn sandwich_clock(
    lib: &Lib,
    c: ClockId,
    name: &str,
    slot: Option<&AtomicU64>,
    last: &mut Option<Timespec>,
    t: &mut Tally,
) {
    let s1 = vdsotime::syscall::clock_gettime(c);
    let seen = slot.map_or(0, |a| a.load(Ordering::Acquire));
    let l = lib.clock_gettime(c);
    let s2 = vdsotime::syscall::clock_gettime(c);
    let subject = format!("clock_gettime({name})");
    match (&s1, &l, &s2) {
        (Ok(a), Ok(b), Ok(z)) => {
            t.expect("within syscall bracket", &subject, a <= b && b <= z, || {
                format!(
                    "syscall {} <= library {} <= syscall {} does not hold",
                    show(&s1),
                    show(&l),
                    show(&s2)
                )
            });
            t.expect(
                "normalized",
                &subject,
                (0..1_000_000_000).contains(&b.tv_nsec) && b.tv_sec >= 0,
                || format!("library returned tv_sec {} tv_nsec {}", b.tv_sec, b.tv_nsec),
            );
            if let Some(slot) = slot {
                let prev = *last;
                t.expect(
                    "never backwards (this thread)",
                    &subject,
                    prev.is_none_or(|p| p <= *b),
                    || {
                        format!(
                            "library went from {} back to {}",
                            show(&Ok(prev.unwrap_or(*b))),
                            show(&l)
                        )
                    },
                );
                *last = Some(*b);
                let n = as_ns(*b);
                t.expect(
                    "never backwards (across threads)",
                    &subject,
                    n >= seen,
                    || format!("library read {n} ns after another thread had read {seen} ns"),
                );
                slot.fetch_max(n, Ordering::AcqRel);
            }
        }
        (Err(e1), _, Err(e2)) if e1 == e2 => {
            t.expect(
                "errno parity",
                &subject,
                l.as_ref().err() == Some(e1),
                || format!("syscall says {}, library says {}", e1.name(), show(&l)),
            );
        }
        _ => t.expect("errno parity", &subject, false, || {
            format!(
                "syscall {} / library {} / syscall {} disagree on success",
                show(&s1),
                show(&l),
                show(&s2)
            )
        }),
    }
}

fn sandwich_timeofday(lib: &Lib, t: &mut Tally) {
    let s1 = vdsotime::syscall::gettimeofday_tz();
    let l = lib.gettimeofday_tz();
    let s2 = vdsotime::syscall::gettimeofday_tz();
    match (s1, l, s2) {
        (Ok((a, _)), Ok((b, ltz)), Ok((z, stz))) => {
            t.expect(
                "within syscall bracket",
                "gettimeofday",
                a <= b && b <= z,
                || {
                    format!(
                        "syscall {} <= library {} <= syscall {} does not hold",
                        show_tv(&a),
                        show_tv(&b),
                        show_tv(&z)
                    )
                },
            );
            t.expect(
                "normalized",
                "gettimeofday",
                (0..1_000_000).contains(&b.tv_usec) && b.tv_sec >= 0,
                || format!("library returned tv_sec {} tv_usec {}", b.tv_sec, b.tv_usec),
            );
            t.expect(
                "timezone equals syscall's",
                "gettimeofday",
                ltz == stz,
                || format!("library {ltz:?}, syscall {stz:?}"),
            );
        }
        (s1, l, s2) => t.expect("errno parity", "gettimeofday", false, || {
            format!(
                "syscall {:?} / library {:?} / syscall {:?}",
                s1.err(),
                l.err(),
                s2.err()
            )
        }),
    }
}

/// `time()` between the seconds of two `CLOCK_REALTIME_COARSE` syscalls, as the core's
/// tests bracket it: the `time` syscall reads the timekeeper's seconds without its
/// sequence count and can trail the vDSO by one second as a second turns (seen on Linux
/// 6.18), while the coarse clock's seconds are what `time()` is.
fn sandwich_time(lib: &Lib, t: &mut Tally) {
    let coarse = || vdsotime::syscall::clock_gettime(ClockId::REALTIME_COARSE).map(|ts| ts.tv_sec);
    let (a, b, z) = (coarse(), lib.time(), coarse());
    let verdict = time_bracket(a, b, z);
    t.expect("within syscall bracket", "time", verdict.is_ok(), || {
        verdict.unwrap_err()
    });
}

/// Whether `lib` lies between the coarse seconds read before and after it.
fn time_bracket(
    before: Result<i64, Errno>,
    lib: i64,
    after: Result<i64, Errno>,
) -> Result<(), String> {
    match (before, after) {
        (Ok(a), Ok(z)) if a <= lib && lib <= z => Ok(()),
        (Ok(a), Ok(z)) => Err(format!(
            "REALTIME_COARSE syscall {a} <= library time {lib} <= {z} does not hold"
        )),
        (a, z) => Err(format!("REALTIME_COARSE syscall failed: {a:?}, {z:?}")),
    }
}

fn check_getcpu(lib: &Lib, cpu: usize, t: &mut Tally) {
    let subject = format!("getcpu on CPU {cpu}");
    let l = lib.getcpu();
    let s = vdsotime::syscall::getcpu();
    let ok = matches!((l, s), (Ok((lc, ln)), Ok((sc, sn))) if lc as usize == cpu && sc as usize == cpu && ln == sn);
    t.expect("pinned CPU reported", &subject, ok, || {
        format!("pinned to {cpu}: library {l:?}, syscall {s:?}")
    });
}

/// One pinned worker: sandwiches every clock, gettimeofday and time, and checks
/// getcpu, until `deadline`.
pub fn worker(lib: &Lib, cpu: usize, deadline: Instant, latest: &Latest) -> Tally {
    let mut t = Tally::default();
    if let Err(e) = pin(cpu) {
        t.expect(
            "pinned CPU reported",
            &format!("getcpu on CPU {cpu}"),
            false,
            || e,
        );
        return t;
    }
    let clocks = worker_clocks();
    let mut last: Vec<Option<Timespec>> = vec![None; clocks.len()];
    loop {
        for (i, (c, name)) in clocks.iter().enumerate() {
            let slot = MONOTONIC_FAMILY
                .iter()
                .position(|m| m == c)
                .map(|k| &latest.0[k]);
            sandwich_clock(lib, *c, name, slot, &mut last[i], &mut t);
        }
        sandwich_timeofday(lib, &mut t);
        sandwich_time(lib, &mut t);
        check_getcpu(lib, cpu, &mut t);
        if Instant::now() >= deadline {
            return t;
        }
    }
}

/// clock_getres equality and errno parity for named, CPU-time and invalid ids.
pub fn static_checks(lib: &Lib) -> Tally {
    let mut t = Tally::default();
    let mut ids: Vec<(ClockId, String)> = worker_clocks();
    ids.extend(
        names::INVALID_IDS
            .iter()
            .map(|&i| (ClockId::from_raw(i), format!("id {i}"))),
    );
    for (c, name) in &ids {
        let l = lib.clock_getres(*c);
        let s = vdsotime::syscall::clock_getres(*c);
        t.expect(
            "equals syscall",
            &format!("clock_getres({name})"),
            l == s,
            || format!("library {}, syscall {}", show(&l), show(&s)),
        );
    }
    for &i in &names::INVALID_IDS {
        let c = ClockId::from_raw(i);
        let l = lib.clock_gettime(c);
        let s = vdsotime::syscall::clock_gettime(c);
        let ok = matches!((&l, &s), (Err(a), Err(b)) if a == b && *a == Errno::EINVAL);
        t.expect(
            "EINVAL like the kernel",
            &format!("clock_gettime(id {i})"),
            ok,
            || format!("library {}, syscall {}", show(&l), show(&s)),
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's `time` syscall may still say 99 when the vDSO and the coarse clock
    /// say 100 (Linux 6.18): bracketed by `time` syscalls (99, 99) the library's correct
    /// 100 failed `check`; bracketed by the coarse clock it passes, and real faults fail.
    #[test]
    fn time_is_bracketed_by_the_coarse_clock() {
        let (time_syscall, coarse_before, vdso, coarse_after) = (99, 99, 100, 100);
        assert!(
            !(time_syscall <= vdso && vdso <= time_syscall),
            "the old bracket"
        );
        assert_eq!(
            time_bracket(Ok(coarse_before), vdso, Ok(coarse_after)),
            Ok(())
        );
        assert!(
            time_bracket(Ok(99), 101, Ok(100)).is_err(),
            "a second ahead"
        );
        assert!(
            time_bracket(Ok(100), 99, Ok(100)).is_err(),
            "a second behind"
        );
        assert!(
            time_bracket(Err(Errno::EPERM), 100, Ok(100)).is_err(),
            "no oracle"
        );
    }

    #[test]
    fn time_agrees_with_the_coarse_clock_here() {
        let mut t = Tally::default();
        let lib = Lib::new(Vec::new());
        for _ in 0..10_000 {
            sandwich_time(&lib, &mut t);
        }
        assert!(t.passed());
    }
}
