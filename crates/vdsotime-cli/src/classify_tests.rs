//! Simulated machines for the doctor's classifier.

use super::*;
use crate::facts::{CpuFlags, SystemFacts, TimensOffset};

fn cost(function: &str, clock: Option<&str>, v: f64, libc: f64, sys: f64) -> Cost {
    Cost {
        function: function.into(),
        clock: clock.map(str::to_string),
        clock_id: None,
        route: format!("__vdso_{function}@LINUX_2.6"),
        vdsotime_ns: v,
        libc_ns: Some(libc),
        syscall_ns: sys,
    }
}

/// The project's machine kind, as vdso-facts.md measured it.
fn healthy() -> Profile {
    Profile {
        facts: SystemFacts {
            kernel_release: "6.1.0".into(),
            machine: "x86_64".into(),
            page_size: 4096,
            cpu_model: Some("Test".into()),
            cpus: 2,
            clocksource: Some("tsc".into()),
            clocksources_available: vec!["tsc".into(), "kvm-clock".into(), "hpet".into()],
            cpu_flags: CpuFlags {
                known: true,
                constant_tsc: true,
                nonstop_tsc: true,
                rdtscp: true,
                tsc_known_freq: true,
                hypervisor: false,
            },
            hypervisor: None,
            dmi_product: None,
            timens_offsets: vec![],
            tsc_marked_unstable: Some(false),
        },
        has_vdso: true,
        arch: "x86_64".into(),
        missing_symbols: vec![],
        costs: vec![
            cost("clock_gettime", Some("CLOCK_MONOTONIC"), 23.0, 24.0, 230.0),
            cost("clock_gettime", Some("CLOCK_REALTIME"), 23.0, 24.0, 230.0),
            cost(
                "clock_gettime",
                Some("CLOCK_MONOTONIC_COARSE"),
                3.0,
                4.6,
                200.0,
            ),
            cost("clock_gettime", Some("CLOCK_BOOTTIME"), 23.0, 24.0, 230.0),
            cost("gettimeofday", None, 24.0, 25.0, 230.0),
            cost("time", None, 2.4, 3.0, 200.0),
        ],
    }
}

#[test]
fn healthy_machine_is_healthy() {
    let v = classify(&healthy());
    assert_eq!(v.status, "healthy", "{v:?}");
    assert!(v.findings.iter().all(|f| f.severity <= Severity::Note));
}

#[test]
fn vdso_costing_a_syscall_is_degraded() {
    let mut p = healthy();
    for c in &mut p.costs {
        c.vdsotime_ns = c.syscall_ns * 1.05;
        c.libc_ns = Some(c.syscall_ns);
    }
    let v = classify(&p);
    assert!(v.degraded());
    assert_eq!(v.findings[0].severity, Severity::Degraded);
    assert!(v.findings[0].message.contains("falls back"));
}

#[test]
fn late_clock_fallback_only_warns() {
    let mut p = healthy();
    p.costs[3].vdsotime_ns = 240.0; // BOOTTIME, as on the seed's pre-5.3 x86 kernel
    let v = classify(&p);
    assert_eq!(v.status, "healthy");
    assert!(v
        .findings
        .iter()
        .any(|f| f.severity == Severity::Warning && f.message.contains("BOOTTIME")));
}

#[test]
fn hpet_is_degraded_with_advice() {
    let mut p = healthy();
    p.facts.clocksource = Some("hpet".into());
    let v = classify(&p);
    assert!(v.degraded());
    let m = &v.findings[0].message;
    assert!(
        m.contains("echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "{m}"
    );
    assert!(m.contains("clocksource=tsc"));
}

#[test]
fn xen_without_alternative_says_so() {
    let mut p = healthy();
    p.facts.clocksource = Some("xen".into());
    p.facts.clocksources_available = vec!["xen".into(), "hpet".into()];
    p.facts.hypervisor = Some("xen".into());
    let v = classify(&p);
    assert!(v.degraded());
    assert!(v
        .findings
        .iter()
        .any(|f| f.message.contains("No vDSO-capable clocksource")));
    assert!(v
        .findings
        .iter()
        .any(|f| f.message.contains("virtual machine (xen)")));
}

#[test]
fn arm64_counter_is_fine() {
    let mut p = healthy();
    p.facts.machine = "aarch64".into();
    p.facts.cpu_flags = CpuFlags::default();
    p.facts.clocksource = Some("arch_sys_counter".into());
    assert_eq!(classify(&p).status, "healthy");
}

#[test]
fn libc_syscall_is_a_warning() {
    let mut p = healthy();
    p.costs[4].libc_ns = Some(235.0); // gettimeofday through libc costs a syscall
    let v = classify(&p);
    assert_eq!(v.status, "healthy");
    assert!(v
        .findings
        .iter()
        .any(|f| f.severity == Severity::Warning && f.message.contains("C library")));
}

#[test]
fn unstable_tsc_and_namespace_are_reported() {
    let mut p = healthy();
    p.facts.cpu_flags.nonstop_tsc = false;
    p.facts.tsc_marked_unstable = Some(true);
    p.facts.timens_offsets = vec![TimensOffset {
        clock: "monotonic".into(),
        secs: 3600,
        nsecs: 0,
    }];
    let v = classify(&p);
    let msgs: Vec<&str> = v.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("nonstop_tsc")));
    assert!(msgs.iter().any(|m| m.contains("Marking TSC unstable")));
    assert!(msgs
        .iter()
        .any(|m| m.contains("time namespace (monotonic 3600s 0ns)")));
}

#[test]
fn missing_vdso_or_symbol_is_degraded() {
    let mut p = healthy();
    p.missing_symbols = vec!["__vdso_clock_gettime@LINUX_2.6".into()];
    assert!(classify(&p).degraded());
    let mut p = healthy();
    p.missing_symbols = vec!["__vdso_getcpu@LINUX_2.6".into()];
    assert!(!classify(&p).degraded());
    let mut p = healthy();
    p.has_vdso = false;
    assert!(classify(&p).degraded());
}
