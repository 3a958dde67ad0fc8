//! Names shared by every subcommand: clocks, functions, ELF machines.

use vdsotime::{ClockId, Function};

/// The id bench measures as "unsupported", as bionic's BM_time_clock_gettime_unsupported
/// does: the first id past CLOCK_TAI, which the kernel rejects with EINVAL.
pub const UNSUPPORTED: ClockId = ClockId::from_raw(12);

/// The first CLOCK_AUX id (Linux 6.17+): served by the vDSO only where the kernel has
/// auxiliary clocks and this one is enabled, otherwise refused with EINVAL. Bench
/// measures it to show what such an id costs on each path.
pub const AUX: ClockId = ClockId::from_raw(16);

/// Invalid clock ids whose errors must match the kernel's (vdso_test_correctness).
pub const INVALID_IDS: [i32; 6] = [-1, 10, 12, 1000, i32::MIN, i32::MAX];

/// `CLOCK_MONOTONIC`, `CLOCK_AUX0`, or `clock id 12` for ids without a name.
pub fn clock_full(c: ClockId) -> String {
    if c.is_aux() {
        return format!("CLOCK_{}", clock_short(c));
    }
    c.name()
        .map_or_else(|| format!("clock id {}", c.as_raw()), str::to_string)
}

/// `MONOTONIC`, or `id 12`: for table cells.
pub fn clock_short(c: ClockId) -> String {
    if c.is_aux() {
        return format!("AUX{}", c.as_raw() - AUX.as_raw());
    }
    c.name().map_or_else(
        || format!("id {}", c.as_raw()),
        |n| clock_label(n).to_string(),
    )
}

/// A full clock name as tables show it: `CLOCK_MONOTONIC_RAW` -> `MONOTONIC_RAW`.
pub fn clock_label(full: &str) -> &str {
    full.trim_start_matches("CLOCK_")
}

/// Parses `realtime`, `CLOCK_REALTIME`, `monotonic-coarse` or a number.
pub fn parse_clock(s: &str) -> Option<ClockId> {
    if let Ok(n) = s.parse::<i32>() {
        return Some(ClockId::from_raw(n));
    }
    let want = s.to_ascii_uppercase().replace('-', "_");
    let want = want.trim_start_matches("CLOCK_");
    ClockId::ALL.into_iter().find(|c| {
        c.name()
            .is_some_and(|n| n.trim_start_matches("CLOCK_") == want)
    })
}

/// The C name of a library function.
pub fn function_name(f: Function) -> &'static str {
    match f {
        Function::ClockGettime(_) => "clock_gettime",
        Function::ClockGetres(_) => "clock_getres",
        Function::Gettimeofday => "gettimeofday",
        Function::Time => "time",
        Function::Getcpu => "getcpu",
        Function::Getrandom => "getrandom",
    }
}

/// The clock argument of a library function, if it takes one.
pub fn function_clock(f: Function) -> Option<ClockId> {
    match f {
        Function::ClockGettime(c) | Function::ClockGetres(c) => Some(c),
        _ => None,
    }
}

/// `clock_gettime(MONOTONIC)` or `time()`.
pub fn function_label(f: Function) -> String {
    match function_clock(f) {
        Some(c) => format!("{}({})", function_name(f), clock_short(c)),
        None => format!("{}()", function_name(f)),
    }
}

/// Every library function with every clock it can take (the enabled auxiliary clocks
/// too), as `info` lists paths.
pub fn all_functions() -> Vec<Function> {
    let clocks = [ClockId::ALL.to_vec(), crate::aux_clocks::enabled()].concat();
    let mut v: Vec<Function> = clocks.iter().copied().map(Function::ClockGettime).collect();
    v.extend(clocks.iter().copied().map(Function::ClockGetres));
    v.extend([
        Function::Gettimeofday,
        Function::Time,
        Function::Getcpu,
        Function::Getrandom,
    ]);
    v
}

/// The readable name of an ELF e_machine value.
pub fn machine_name(m: u16) -> &'static str {
    match m {
        3 => "i386",
        8 => "mips",
        20 => "powerpc",
        21 => "powerpc64",
        22 => "s390",
        40 => "arm",
        62 => "x86_64",
        183 => "aarch64",
        243 => "riscv",
        252 => "csky",
        258 => "loongarch",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_names_round_trip() {
        for c in ClockId::ALL {
            assert_eq!(parse_clock(&clock_short(c).to_lowercase()), Some(c));
            assert_eq!(parse_clock(&clock_full(c)), Some(c));
        }
        assert_eq!(
            parse_clock("monotonic-coarse"),
            Some(ClockId::MONOTONIC_COARSE)
        );
        assert_eq!(parse_clock("12"), Some(UNSUPPORTED));
        assert_eq!(parse_clock("nope"), None);
        assert_eq!(clock_short(UNSUPPORTED), "id 12");
        assert_eq!(clock_short(ClockId::aux(3)), "AUX3");
        assert_eq!(clock_full(AUX), "CLOCK_AUX0");
    }

    #[test]
    fn labels() {
        assert_eq!(
            function_label(Function::ClockGettime(ClockId::MONOTONIC)),
            "clock_gettime(MONOTONIC)"
        );
        assert_eq!(function_label(Function::Time), "time()");
        let aux = crate::aux_clocks::enabled().len();
        assert_eq!(all_functions().len(), 26 + 2 * aux);
    }
}
