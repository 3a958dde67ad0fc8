//! The rustix and std paths of a bench row, where those crates offer the call: what a
//! Rust program reaches for today instead of vdsotime. Clock ids go through
//! `black_box`, as in every other path, so no column gets a compile-time constant.

use std::hint::black_box;

use rustix::time::{ClockId as RustixClock, DynamicClockId};
use vdsotime::{ClockId, Function};

use crate::measure;
use crate::measure::Probe;

/// rustix's `ClockId` for `c`, if it has one: not for unnamed ids, nor for TAI
/// (behind its `linux_4_11` feature).
fn rustix_clock(c: ClockId) -> Option<RustixClock> {
    Some(match c {
        ClockId::REALTIME => RustixClock::Realtime,
        ClockId::MONOTONIC => RustixClock::Monotonic,
        ClockId::PROCESS_CPUTIME_ID => RustixClock::ProcessCPUTime,
        ClockId::THREAD_CPUTIME_ID => RustixClock::ThreadCPUTime,
        ClockId::MONOTONIC_RAW => RustixClock::MonotonicRaw,
        ClockId::REALTIME_COARSE => RustixClock::RealtimeCoarse,
        ClockId::MONOTONIC_COARSE => RustixClock::MonotonicCoarse,
        ClockId::BOOTTIME => RustixClock::Boottime,
        ClockId::REALTIME_ALARM => RustixClock::RealtimeAlarm,
        ClockId::BOOTTIME_ALARM => RustixClock::BoottimeAlarm,
        _ => return None,
    })
}

/// rustix's `DynamicClockId` for `c`, if it can name it.
fn rustix_dynamic(c: ClockId) -> Option<DynamicClockId<'static>> {
    match c {
        ClockId::TAI => Some(DynamicClockId::Tai),
        _ => rustix_clock(c).map(DynamicClockId::Known),
    }
}

/// Consumes a rustix timespec field by field, as the other paths do.
#[inline(always)]
fn consume(t: rustix::time::Timespec) {
    measure::field(t.tv_sec);
    measure::field(t.tv_nsec);
}

/// rustix: `clock_gettime_dynamic` (fallible, any named clock), its `clock_getres`
/// (a syscall) and `sched_getcpu` (its vDSO getcpu); it has no gettimeofday or time.
pub fn rustix_probe(f: Function) -> Option<Probe> {
    match f {
        Function::ClockGettime(c) => {
            let id = rustix_dynamic(c)?;
            Some(Probe::new(
                move || match rustix::time::clock_gettime_dynamic(black_box(id)) {
                    Ok(t) => consume(t),
                    Err(e) => drop(black_box(e)),
                },
            ))
        }
        Function::ClockGetres(c) => {
            let id = rustix_clock(c)?;
            Some(Probe::new(move || {
                consume(rustix::time::clock_getres(black_box(id)));
            }))
        }
        Function::Getcpu => Some(Probe::new(|| {
            black_box(rustix::thread::sched_getcpu());
        })),
        // rustix's getrandom is the system call: `vdsotime bench-getrandom`'s column.
        Function::Gettimeofday | Function::Time | Function::Getrandom => None,
    }
}

/// std: `Instant::now` (CLOCK_MONOTONIC) and `SystemTime::now` (CLOCK_REALTIME).
pub fn std_probe(f: Function) -> Option<Probe> {
    match f {
        Function::ClockGettime(ClockId::MONOTONIC) => Some(Probe::new(|| {
            black_box(std::time::Instant::now());
        })),
        Function::ClockGettime(ClockId::REALTIME) => Some(Probe::new(|| {
            black_box(std::time::SystemTime::now());
        })),
        _ => None,
    }
}
