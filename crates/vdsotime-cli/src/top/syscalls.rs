//! The time system calls `top` counts, by number: this architecture's own, and on x86_64
//! those of 32-bit (i386) processes, whose numbers differ. The tracepoint reports a
//! task's number in its own ABI, so a number is read with the ABI of the process's
//! executable.

/// A counted system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Call {
    /// clock_gettime (its 32-bit time_t form on 32-bit ABIs).
    ClockGettime,
    /// clock_gettime64, the 64-bit time_t form of 32-bit ABIs.
    ClockGettime64,
    /// gettimeofday.
    Gettimeofday,
    /// time.
    Time,
    /// clock_getres.
    ClockGetres,
    /// clock_getres_time64.
    ClockGetresTime64,
    /// getcpu.
    Getcpu,
    /// getrandom.
    Getrandom,
}

impl Call {
    /// The system call's name.
    pub fn name(self) -> &'static str {
        match self {
            Call::ClockGettime => "clock_gettime",
            Call::ClockGettime64 => "clock_gettime64",
            Call::Gettimeofday => "gettimeofday",
            Call::Time => "time",
            Call::ClockGetres => "clock_getres",
            Call::ClockGetresTime64 => "clock_getres_time64",
            Call::Getcpu => "getcpu",
            Call::Getrandom => "getrandom",
        }
    }

    /// Whether its first argument is a clock id.
    pub fn takes_clock(self) -> bool {
        matches!(
            self,
            Call::ClockGettime | Call::ClockGettime64 | Call::ClockGetres | Call::ClockGetresTime64
        )
    }

    /// Whether it may read the clocksource (what a clocksource the vDSO cannot read sends
    /// into the kernel), depending on the clock for those that take one. Not `time`: the
    /// vDSO's time() returns the last tick's seconds under any clocksource (musl's time()
    /// calls clock_gettime(CLOCK_REALTIME), which shows as that call).
    pub fn reads_clocksource(self) -> bool {
        matches!(
            self,
            Call::ClockGettime | Call::ClockGettime64 | Call::Gettimeofday
        )
    }
}

/// A process's system call ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abi {
    /// This architecture's own.
    Native,
    /// x86_64's 32-bit (i386) compat ABI.
    I386,
}

/// This architecture's numbers.
fn native() -> Vec<(i64, Call)> {
    use linux_raw_sys::general as nr;
    let mut v = vec![
        (nr::__NR_clock_gettime, Call::ClockGettime),
        (nr::__NR_gettimeofday, Call::Gettimeofday),
        (nr::__NR_clock_getres, Call::ClockGetres),
        (nr::__NR_getcpu, Call::Getcpu),
        (nr::__NR_getrandom, Call::Getrandom),
    ];
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    v.push((nr::__NR_time, Call::Time));
    #[cfg(target_pointer_width = "32")]
    v.extend([
        (nr::__NR_clock_gettime64, Call::ClockGettime64),
        (nr::__NR_clock_getres_time64, Call::ClockGetresTime64),
    ]);
    v.into_iter().map(|(n, c)| (i64::from(n), c)).collect()
}

/// i386's numbers (arch/x86/entry/syscalls/syscall_32.tbl), for i386 processes on x86_64.
const I386: [(i64, Call); 8] = [
    (13, Call::Time),
    (78, Call::Gettimeofday),
    (265, Call::ClockGettime),
    (266, Call::ClockGetres),
    (318, Call::Getcpu),
    (355, Call::Getrandom),
    (403, Call::ClockGettime64),
    (406, Call::ClockGetresTime64),
];

/// The table for `abi`: each counted call's number.
pub fn table(abi: Abi) -> Vec<(i64, Call)> {
    match abi {
        Abi::Native => native(),
        Abi::I386 if cfg!(target_arch = "x86_64") => I386.to_vec(),
        Abi::I386 => Vec::new(),
    }
}

/// Every number the tracepoint filter must let through: both ABIs' on x86_64. An i386
/// number that is another native call (13 is rt_sigaction) is sampled and then dropped
/// for a native process by [`call`].
pub fn numbers() -> Vec<i64> {
    let mut v: Vec<i64> = table(Abi::Native)
        .into_iter()
        .chain(table(Abi::I386))
        .map(|(n, _)| n)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The numbers of [`numbers`] whose first argument is a clock id in either ABI (a
/// counter that cannot tell the ABIs apart keeps that argument for these).
pub fn clock_numbers() -> Vec<i64> {
    let mut v: Vec<i64> = table(Abi::Native)
        .into_iter()
        .chain(table(Abi::I386))
        .filter(|(_, c)| c.takes_clock())
        .map(|(n, _)| n)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The call that number `nr` is in `abi`, if it is one of the counted.
pub fn call(abi: Abi, nr: i64) -> Option<Call> {
    table(abi)
        .into_iter()
        .find(|(n, _)| *n == nr)
        .map(|(_, c)| c)
}

/// The number of `call` in `abi`, if it has one.
// The fentry counter's: a 32-bit build has none.
#[cfg_attr(not(target_pointer_width = "64"), allow(dead_code))]
pub fn number(abi: Abi, call: Call) -> Option<i64> {
    table(abi)
        .into_iter()
        .find(|(_, c)| *c == call)
        .map(|(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_native_number_maps_back() {
        for (n, c) in native() {
            assert_eq!(call(Abi::Native, n), Some(c));
            assert_eq!(number(Abi::Native, c), Some(n));
            assert!(numbers().contains(&n));
            assert_eq!(clock_numbers().contains(&n), c.takes_clock());
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn an_i386_number_is_read_in_its_abi() {
        assert_eq!(call(Abi::I386, 403), Some(Call::ClockGettime64));
        assert_eq!(call(Abi::Native, 13), None, "rt_sigaction is not counted");
        assert_eq!(call(Abi::Native, 318), Some(Call::Getrandom));
        assert_eq!(call(Abi::I386, 318), Some(Call::Getcpu));
    }
}
