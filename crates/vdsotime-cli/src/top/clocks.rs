//! What a clock id passed to the kernel is: a name, and whether the vDSO could ever
//! serve it (the kernel's posix-timers encoding of CPU-time and fd clocks).

use vdsotime::ClockId;

use crate::names;

/// The kinds of clock the vDSO never serves, and the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A clock the vDSO serves where the clocksource allows.
    Served,
    /// CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, or another process's or thread's
    /// CPU clock (clock_getcpuclockid).
    CpuTime,
    /// A dynamic clock: a file descriptor's (a PTP device).
    Dynamic,
    /// An auxiliary clock (CLOCK_AUX0..7) that is not enabled.
    AuxDisabled,
    /// Any other id: alarm clocks, ids the kernel refuses.
    NotServed,
}

/// The name of clock id `id`: `CLOCK_MONOTONIC`, `CPUCLOCK_SCHED(pid 42)`,
/// `CLOCK_FD(fd 5)`, `clock id 12`.
pub fn name(id: i32) -> String {
    if id >= 0 {
        return names::clock_full(ClockId::from_raw(id));
    }
    // include/linux/posix-timers_types.h: ~id >> 3 is the pid (or fd), the low two bits
    // the kind, bit 2 per-thread.
    let who = !id >> 3;
    let what = match id & 3 {
        0 => "PROF",
        1 => "VIRT",
        2 => "SCHED",
        _ if id & 7 == 3 => return format!("CLOCK_FD(fd {who})"),
        _ => return format!("clock id {id}"),
    };
    let scope = if id & 4 != 0 { "tid" } else { "pid" };
    let who = if who == 0 {
        "self".to_string()
    } else {
        who.to_string()
    };
    format!("CPUCLOCK_{what}({scope} {who})")
}

/// What clock `id` is, with `aux_enabled` the enabled auxiliary clock ids.
pub fn kind(id: i32, aux_enabled: &[i32]) -> Kind {
    const CPUTIME: [i32; 2] = [2, 3];
    match id {
        _ if id < 0 && id & 7 == 3 => Kind::Dynamic,
        _ if id < 0 && id & 3 != 3 => Kind::CpuTime,
        _ if id < 0 => Kind::NotServed,
        _ if CPUTIME.contains(&id) => Kind::CpuTime,
        0 | 1 | 4..=7 | 11 => Kind::Served,
        16..=23 if aux_enabled.contains(&id) => Kind::Served,
        16..=23 => Kind::AuxDisabled,
        _ => Kind::NotServed,
    }
}

/// Whether the vDSO reads the clocksource for clock `id` (so that a clocksource it
/// cannot read sends it to the kernel): the high-resolution clocks and the aux clocks,
/// not the coarse ones, which it serves from the last tick's time under any clocksource.
pub fn reads_clocksource(id: i32) -> bool {
    matches!(id, 0 | 1 | 4 | 7 | 11 | 16..=23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_kind_of_id() {
        assert_eq!(name(1), "CLOCK_MONOTONIC");
        assert_eq!(name(2), "CLOCK_PROCESS_CPUTIME_ID");
        assert_eq!(name(12), "clock id 12");
        // make_process_cpuclock(42, CPUCLOCK_SCHED) and FD_TO_CLOCKID(5).
        assert_eq!(name(!42 << 3 | 2), "CPUCLOCK_SCHED(pid 42)");
        assert_eq!(name(!42 << 3 | 2 | 4), "CPUCLOCK_SCHED(tid 42)");
        assert_eq!(name(!5 << 3 | 3), "CLOCK_FD(fd 5)");
        // Per-thread bit with the fd kind: no such clock (the kernel says EINVAL).
        assert_eq!(name(-1), "clock id -1");
        assert_eq!(name(i32::MIN | 7), format!("clock id {}", i32::MIN | 7));
    }

    #[test]
    fn sorts_the_ids_the_vdso_never_serves() {
        assert_eq!(kind(1, &[]), Kind::Served);
        assert_eq!(kind(2, &[]), Kind::CpuTime);
        assert_eq!(kind(3, &[]), Kind::CpuTime);
        assert_eq!(kind(!42 << 3 | 2, &[]), Kind::CpuTime);
        assert_eq!(kind(!5 << 3 | 3, &[]), Kind::Dynamic);
        assert_eq!(kind(16, &[]), Kind::AuxDisabled);
        assert_eq!(kind(16, &[16]), Kind::Served);
        assert_eq!(kind(8, &[]), Kind::NotServed);
        assert_eq!(kind(-1, &[]), Kind::NotServed);
    }
}
