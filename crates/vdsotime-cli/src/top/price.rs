//! What one call of a row costs here, measured for its own clock: a CPU-time clock's
//! system call costs more than CLOCK_MONOTONIC's, so each listed clock is timed with
//! direct system calls on this host (once per clock, then kept). A clock the vDSO never
//! serves has no vDSO cost to save: its row is priced, not counted as waste.

use std::time::Instant;

use crate::top::clocks::{self, Kind};
use crate::top::syscalls::Call;

/// Calls per timed round, and rounds (the fastest is kept: the least disturbed).
const CALLS: u32 = 2000;
const ROUNDS: usize = 5;

/// The clock this process times in place of `id`, the same for every id whose call costs
/// the same (so a process passing thousands of ids costs one timing per kind, not one per
/// id): its own CPU-time clock for another process's, one id for every id the kernel
/// refuses; `None` for a file descriptor's, which only its owner holds.
pub fn priced_as(id: i32) -> Option<i32> {
    /// An id no kernel has a clock for (past the auxiliary clocks).
    const REFUSED: i32 = 24;
    const ALARMS: [i32; 2] = [8, 9];
    match clocks::kind(id, &[]) {
        Kind::Dynamic => None,
        Kind::CpuTime if id < 0 => Some(if id & 4 != 0 { 3 } else { 2 }),
        Kind::NotServed if !ALARMS.contains(&id) => Some(REFUSED),
        _ => Some(id),
    }
}

/// ns one direct `call` with clock `id` costs here; `None` for a call this does not
/// time (those without a clock, priced by the doctor) or a clock it cannot hold.
pub fn syscall_ns(call: Call, id: i32) -> Option<f64> {
    let nr = match call {
        Call::ClockGettime => libc::SYS_clock_gettime,
        Call::ClockGetres => libc::SYS_clock_getres,
        _ => return None,
    };
    let id = priced_as(id)?;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let best = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..CALLS {
                // SAFETY: a clock call with a valid out-pointer; a refused id is EINVAL.
                unsafe { libc::syscall(nr, id, &mut ts) };
            }
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    Some(best * 1e9 / f64::from(CALLS))
}

/// Whether the vDSO could ever serve `call` with clock `clock` (what its waste is
/// measured against).
pub fn has_vdso_path(clock: Option<i32>, aux_enabled: &[i32]) -> bool {
    clock.is_none_or(|id| clocks::kind(id, aux_enabled) == Kind::Served)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_cost_the_same_are_priced_once() {
        for refused in [10, 12, 15, 24, 1000, i32::MAX, -1] {
            assert_eq!(priced_as(refused), Some(24), "{refused}");
        }
        assert_eq!(priced_as(8), Some(8));
        assert_eq!(priced_as(1), Some(1));
        assert_eq!(priced_as(17), Some(17));
        assert_eq!(priced_as(!42 << 3 | 2), Some(2));
        assert_eq!(priced_as(!42 << 3 | 2 | 4), Some(3));
        assert_eq!(priced_as(!5 << 3 | 3), None);
    }

    #[test]
    fn a_cpu_time_clock_is_priced_on_its_own_and_has_no_vdso_path() {
        let _alone = crate::top::one_flood_at_a_time();
        let cpu = syscall_ns(Call::ClockGettime, 2).expect("timed");
        let mono = syscall_ns(Call::ClockGettime, 1).expect("timed");
        assert!(cpu > 0.0 && mono > 0.0, "{cpu} {mono}");
        assert!(!has_vdso_path(Some(2), &[]));
        assert!(has_vdso_path(Some(1), &[]));
        assert!(has_vdso_path(None, &[]));
        assert_eq!(syscall_ns(Call::Getcpu, 0), None);
    }
}
