//! The doctor's symptoms: each call that enters the kernel where the vDSO should have
//! answered, with its cost and the reason, and C libraries that make the syscall.

use crate::doctor::call_paths::{PathEntry, PathKind, FALLBACK_RATIO};
use crate::doctor::classify::aux_clocks;
use crate::doctor::classify::clocksources;
use crate::doctor::classify::scene::Scene;
use crate::doctor::findings::{Code, Finding, Role, Severity, Subject};
use crate::doctor::seccomp::Method;
use crate::output;

/// Clocks whose fallback costs every program on the machine: degraded. The others
/// (BOOTTIME, TAI, MONOTONIC_RAW, clock_getres, getcpu, getrandom) only warn.
fn essential(e: &PathEntry) -> bool {
    match (e.function.as_str(), e.clock.as_deref()) {
        ("clock_gettime", Some(c)) => matches!(
            c,
            "REALTIME" | "MONOTONIC" | "REALTIME_COARSE" | "MONOTONIC_COARSE"
        ),
        (f, None) => f == "gettimeofday" || f == "time",
        _ => false,
    }
}

/// Calls whose vDSO code reads the clocksource (the others read the data page alone).
fn reads_counter(e: &PathEntry) -> bool {
    match (e.function.as_str(), e.clock.as_deref()) {
        ("clock_gettime", Some(c)) => !c.ends_with("_COARSE"),
        (f, _) => f == "gettimeofday",
    }
}

/// Why `e` enters the kernel, as far as the scene tells.
fn reason(s: &Scene, e: &PathEntry) -> String {
    let f = &s.p.facts;
    let cs = f.clocksource.as_deref().unwrap_or("in use");
    if s.slow_clocksource.is_some() && reads_counter(e) {
        return format!("because the clocksource {cs} cannot be read from user space (above)");
    }
    match e.function.as_str() {
        "getcpu" => return "because the vDSO's getcpu cannot read the CPU number on this machine".into(),
        "getrandom" => return "because the vDSO's generator asked the kernel (not yet seeded, or just reseeded)".into(),
        "clock_getres" => return "because this kernel's vDSO does not answer clock_getres for this clock".into(),
        _ => {}
    }
    if aux_clocks::vdso_lacks(s, e) {
        return "because this process's vDSO does not serve the auxiliary clocks (above)".into();
    }
    let monotonic_served = s.reference().is_some_and(|r| r.path == PathKind::Vdso);
    if monotonic_served && e.function == "clock_gettime" && reads_counter(e) {
        let clock = e.clock.as_deref().unwrap_or("");
        let old = match (
            clocksources::kernel_version(&f.kernel_release),
            clocksources::generic_vdso_since(&f.machine),
        ) {
            (Some(v), Some(since)) if v < since => format!(
                " (Linux {}, older than {}.{}, whose generic vDSO serves every high-resolution clock)",
                f.kernel_release, since.0, since.1
            ),
            _ => String::new(),
        };
        return format!("because this kernel's vDSO does not serve CLOCK_{clock}{old}, while it serves MONOTONIC from the same clocksource");
    }
    if e.method == Method::Timing {
        return format!("although the clocksource {cs} is one the vDSO reads: without the seccomp proof this is judged by timing, which a busy machine can mislead (measure longer with --duration 0.5)");
    }
    format!("although the clocksource {cs} is one the vDSO reads: the vDSO itself chose the system call")
}

fn fallback(s: &Scene, e: &PathEntry, out: &mut Vec<Finding>) {
    let severity = if essential(e) {
        Severity::Degraded
    } else {
        Severity::Warning
    };
    let how = match e.method {
        Method::Seccomp => "caught under seccomp",
        _ => "judged by its cost",
    };
    let cost = match (e.vdso_ns, e.syscall_ns) {
        (Some(v), Some(sys)) => format!(
            ": {} ns against {} ns for the system call",
            output::ns(v),
            output::ns(sys)
        ),
        _ => String::new(),
    };
    out.push(
        Finding::new(
            Code::ClockServedBySyscall,
            severity,
            Role::Symptom,
            format!(
                "{} enters the kernel inside the vDSO ({how}){cost}, {}.",
                e.label(),
                reason(s, e)
            ),
        )
        .about(Subject {
            function: Some(e.function.clone()),
            clock: e.clock.clone(),
            clocksource: s.p.facts.clocksource.clone(),
        })
        .costs(e.vdso_ns, e.syscall_ns),
    );
}

fn libc_syscall(e: &PathEntry, out: &mut Vec<Finding>) {
    let (Some(l), Some(v), Some(sys)) = (e.libc_ns, e.vdso_ns, e.syscall_ns) else {
        return;
    };
    if l / sys <= FALLBACK_RATIO {
        return;
    }
    let mut f = Finding::new(
        Code::LibcMakesSyscall,
        Severity::Warning,
        Role::Symptom,
        format!(
            "Your C library makes a system call for {} ({} ns, while vdsotime takes {} ns): programs calling it through libc pay the syscall; link vdsotime or its preload library.",
            e.label(),
            output::ns(l),
            output::ns(v)
        ),
    )
    .about(Subject {
        function: Some(e.function.clone()),
        clock: e.clock.clone(),
        clocksource: None,
    })
    .costs(Some(v), Some(sys));
    f.libc_ns = Some(l);
    out.push(f);
}

/// One finding per call that enters the kernel where the vDSO should answer, and per
/// call the C library sends to the kernel; nothing per call without a vDSO (the
/// cause says it once).
pub fn judge(s: &Scene, out: &mut Vec<Finding>) {
    for e in &s.paths {
        match e.path {
            PathKind::VdsoFallback => fallback(s, e, out),
            PathKind::Vdso | PathKind::Rseq => libc_syscall(e, out),
            PathKind::NoVdso | PathKind::Syscall => {}
        }
    }
}
