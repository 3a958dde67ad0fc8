//! The probe against this machine's kernel. The proof must be able to say both
//! things: a call the vDSO never serves (a CPU-time clock) must come out `Syscall`,
//! and where the clocksource is one the vDSO reads, every counter clock `NoSyscall`.

use super::*;
use crate::skip::skip;
use vdsotime::ClockId;

/// The probe's report, or `None` after a visible skip where it cannot prove anything.
fn proved(test: &str, functions: &[Function]) -> Option<ProbeReport> {
    if vdsotime::vdso().is_none() {
        skip(test, "vdso", "this process has no vDSO");
        return None;
    }
    let r = probe(functions);
    if r.method != Method::Seccomp {
        skip(test, "seccomp", format!("{:?}", r.unavailable));
        return None;
    }
    Some(r)
}

#[test]
fn a_cpu_time_clock_enters_the_kernel_and_monotonic_does_not() {
    const TEST: &str = "a_cpu_time_clock_enters_the_kernel_and_monotonic_does_not";
    let rows = [
        Function::ClockGettime(ClockId::PROCESS_CPUTIME_ID),
        Function::ClockGettime(ClockId::MONOTONIC_COARSE),
        Function::ClockGettime(ClockId::THREAD_CPUTIME_ID),
    ];
    let Some(r) = proved(TEST, &rows) else {
        return;
    };
    let outcomes: Vec<Outcome> = r.calls.iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        [Outcome::Syscall, Outcome::NoSyscall, Outcome::Syscall],
        "{r:#?}"
    );
}

#[test]
fn every_counter_clock_is_served_where_the_clocksource_is_tsc() {
    const TEST: &str = "every_counter_clock_is_served_where_the_clocksource_is_tsc";
    let cs =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if cs.trim() != "tsc" && cs.trim() != "arch_sys_counter" {
        return skip(
            TEST,
            "vdso",
            format!(
                "the clocksource is {:?}, not one the vDSO always reads",
                cs.trim()
            ),
        );
    }
    let Some(r) = proved(TEST, &rows()) else {
        return;
    };
    assert_eq!(r.calls.len(), rows().len());
    for c in &r.calls {
        let time_call = c.function != "getrandom";
        if time_call {
            assert_eq!(c.outcome, Outcome::NoSyscall, "{c:?}");
        }
    }
    let monotonic = r
        .calls
        .iter()
        .find(|c| c.function == "clock_gettime" && c.clock.as_deref() == Some("CLOCK_MONOTONIC"))
        .unwrap();
    assert_eq!(monotonic.outcome, Outcome::NoSyscall);
}

#[test]
fn the_filter_denies_exactly_the_time_calls() {
    const TEST: &str = "the_filter_denies_exactly_the_time_calls";
    let rows = [Function::ClockGetres(ClockId::PROCESS_CPUTIME_ID)];
    let Some(r) = proved(TEST, &rows) else {
        return;
    };
    // The generic vDSO answers clock_getres of CPU-time clocks through the kernel.
    assert_eq!(r.calls[0].outcome, Outcome::Syscall, "{r:#?}");
}
