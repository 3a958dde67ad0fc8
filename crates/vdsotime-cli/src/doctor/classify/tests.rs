//! The classifier on simulated machines: small changes to one healthy profile. The
//! scenario profiles saved under tests/profiles are judged in `scenario_tests.rs`.

use super::*;
use crate::doctor::findings::Code;
use crate::doctor::profile::Cost;
use crate::doctor::seccomp::{Outcome, ProbeCall, ProbeReport};
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

/// The project's machine kind, as vdso-facts.md measured it, proved by the probe.
fn healthy() -> Profile {
    let costs = vec![
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
    ];
    let calls = costs
        .iter()
        .map(|c| ProbeCall {
            function: c.function.clone(),
            clock: c.clock.clone(),
            route: c.route.clone(),
            outcome: Outcome::NoSyscall,
        })
        .collect();
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
                tsc: true,
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
            tsc_unstable_reason: None,
            kernel_cmdline: Some("BOOT_IMAGE=/vmlinuz root=/dev/vda1 quiet".into()),
            emulator: None,
            aux_clocks_enabled: None,
        },
        has_vdso: true,
        arch: "x86_64".into(),
        missing_symbols: vec![],
        costs,
        probe: Some(ProbeReport {
            method: Method::Seccomp,
            unavailable: None,
            calls,
        }),
    }
}

/// Makes the probe see `clock` (None: gettimeofday) enter the kernel, at syscall cost.
fn falls_back(p: &mut Profile, function: &str, clock: Option<&str>) {
    for c in &mut p.costs {
        if c.function == function && c.clock.as_deref() == clock {
            c.vdsotime_ns = c.syscall_ns * 1.05;
            c.libc_ns = Some(c.syscall_ns * 1.06);
        }
    }
    for c in &mut p.probe.as_mut().unwrap().calls {
        if c.function == function && c.clock.as_deref() == clock {
            c.outcome = Outcome::Syscall;
        }
    }
}

fn codes(v: &Verdict) -> Vec<Code> {
    v.findings.iter().map(|f| f.code).collect()
}

#[test]
fn healthy_machine_is_healthy_and_says_why() {
    let v = classify(&healthy());
    assert_eq!(v.status, "healthy", "{v:?}");
    assert!(v.findings.iter().all(|f| f.severity <= Severity::Note));
    let first = &v.findings[0];
    assert_eq!(first.code, Code::VdsoServesAll);
    assert!(
        first.message.contains("proved under a seccomp filter"),
        "{}",
        first.message
    );
    assert_eq!(first.vdso_ns, Some(23.0));
}

#[test]
fn late_clock_fallback_only_warns_and_names_the_kernel() {
    let mut p = healthy();
    p.facts.kernel_release = "4.19.0-27-amd64".into();
    falls_back(&mut p, "clock_gettime", Some("CLOCK_BOOTTIME"));
    let v = classify(&p);
    assert_eq!(v.status, "healthy", "{v:?}");
    let f = v
        .findings
        .iter()
        .find(|f| f.code == Code::ClockServedBySyscall)
        .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.subject.clock.as_deref(), Some("BOOTTIME"));
    assert!(
        f.message
            .contains("this kernel's vDSO does not serve CLOCK_BOOTTIME")
            && f.message.contains("Linux 4.19.0-27-amd64, older than 5.3"),
        "{}",
        f.message
    );
    assert!(!codes(&v).contains(&Code::VdsoServesAll), "{v:?}");
}

#[test]
fn no_hedge_about_kernel_versions_it_can_rule_out() {
    let mut p = healthy();
    p.facts.kernel_release = "6.12.38+deb13-amd64".into();
    falls_back(&mut p, "clock_gettime", Some("CLOCK_BOOTTIME"));
    for f in &classify(&p).findings {
        assert!(!f.message.contains("before 5.3"), "{}", f.message);
        assert!(!f.message.contains(" or the kernel"), "{}", f.message);
    }
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
    let f = v
        .findings
        .iter()
        .find(|f| f.code == Code::LibcMakesSyscall)
        .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f
        .message
        .contains("C library makes a system call for gettimeofday()"));
    assert_eq!(f.libc_ns, Some(235.0));
}

#[test]
fn timing_decides_without_a_probe() {
    let mut p = healthy();
    p.probe = None;
    p.facts.clocksource = Some("hpet".into());
    for c in &mut p.costs {
        if c.clock.as_deref() != Some("CLOCK_MONOTONIC_COARSE") && c.function != "time" {
            c.vdsotime_ns = c.syscall_ns * 1.02;
        }
    }
    let v = classify(&p);
    assert!(v.degraded());
    assert_eq!(v.findings[0].code, Code::ClocksourceNotVdsoCapable);
    assert!(v.findings[0].message.contains("(judged by timing)"));
    assert!(codes(&v).contains(&Code::SeccompUnavailable));
}

#[test]
fn the_probe_outranks_timing() {
    // A noisy machine made the served MONOTONIC look as slow as the syscall.
    let mut p = healthy();
    p.costs[0].vdsotime_ns = 240.0;
    assert_eq!(classify(&p).status, "healthy");
    // And a fallback that happened to look cheap is still a fallback.
    let mut p = healthy();
    p.probe.as_mut().unwrap().calls[0].outcome = Outcome::Syscall;
    let v = classify(&p);
    assert!(v.degraded(), "{v:?}");
}

#[test]
fn unstable_tsc_flags_and_namespace_are_reported() {
    let mut p = healthy();
    p.facts.cpu_flags.nonstop_tsc = false;
    p.facts.tsc_marked_unstable = Some(true);
    p.facts.tsc_unstable_reason = Some("clocksource watchdog".into());
    p.facts.clocksource = Some("kvm-clock".into());
    p.facts.clocksources_available = vec!["kvm-clock".into(), "hpet".into()];
    p.facts.timens_offsets = vec![TimensOffset {
        clock: "monotonic".into(),
        secs: 3600,
        nsecs: 0,
    }];
    let v = classify(&p);
    assert_eq!(v.status, "healthy", "kvm-clock is served: {v:?}");
    assert_eq!(v.findings[0].code, Code::TscMarkedUnstable);
    assert_eq!(v.findings[0].severity, Severity::Warning);
    let msgs: Vec<&str> = v.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("nonstop_tsc")));
    assert!(msgs
        .iter()
        .any(|m| m.contains("time namespace (monotonic 3600s 0ns)")));
}

#[test]
fn missing_symbol_is_a_cause() {
    let mut p = healthy();
    p.missing_symbols = vec!["__vdso_clock_gettime@LINUX_2.6".into()];
    let v = classify(&p);
    assert!(v.degraded());
    assert_eq!(v.findings[0].code, Code::VdsoSymbolMissing);
    assert_eq!(
        v.findings[0].subject.function.as_deref(),
        Some("clock_gettime")
    );
    let mut p = healthy();
    p.missing_symbols = vec!["__vdso_getcpu@LINUX_2.6".into()];
    assert!(!classify(&p).degraded());
}

#[test]
fn no_ok_under_a_degraded_verdict() {
    let mut p = healthy();
    falls_back(&mut p, "clock_gettime", Some("CLOCK_MONOTONIC"));
    let v = classify(&p);
    assert!(v.degraded());
    assert!(
        v.findings.iter().all(|f| f.severity != Severity::Ok),
        "{v:?}"
    );
}

#[test]
fn a_slow_reading_by_timing_alone_is_not_blamed_on_the_vdso() {
    let mut p = healthy();
    p.probe = None;
    p.costs[0].vdsotime_ns = 240.0; // MONOTONIC looked as slow as the syscall
    let v = classify(&p);
    let f = v
        .findings
        .iter()
        .find(|f| f.code == Code::ClockServedBySyscall)
        .unwrap();
    assert!(
        f.message
            .contains("judged by timing, which a busy machine can mislead"),
        "{}",
        f.message
    );
    assert!(
        !codes(&v).contains(&Code::ClocksourceNotVdsoCapable),
        "tsc is readable: {v:?}"
    );
}

/// Whether `message` calls something fast or slow without a measured figure: every
/// "faster" or "slower" must follow a ratio ("7.50x faster"), and no speed adjective
/// stands alone.
fn speed_without_a_figure(message: &str) -> Option<String> {
    let words: Vec<&str> = message.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let w = w
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        let ratio_before = i > 0 && words[i - 1].trim_start_matches('(').ends_with('x');
        match w.as_str() {
            "faster" | "slower" if ratio_before => {}
            "faster" | "slower" | "slightly" | "fast" | "slow" | "quicker" | "cheaper" => {
                return Some(w);
            }
            _ => {}
        }
    }
    None
}

#[test]
fn the_speed_check_catches_an_adjective_and_accepts_a_ratio() {
    assert_eq!(
        speed_without_a_figure("tsc is also available and is slightly faster."),
        Some("slightly".into())
    );
    assert_eq!(
        speed_without_a_figure("tsc is faster"),
        Some("faster".into())
    );
    assert_eq!(speed_without_a_figure("160 ns (7.59x faster)."), None);
}

/// On kvm-clock with tsc available, the doctor quotes what it measured on kvm-clock and
/// says tsc was not measured: no claim about tsc's speed.
#[test]
fn kvm_clock_with_tsc_available_quotes_the_measurement_not_an_adjective() {
    let mut p = healthy();
    p.facts.clocksource = Some("kvm-clock".into());
    p.facts.hypervisor = Some("KVM".into());
    let v = classify(&p);
    let f = v
        .findings
        .iter()
        .find(|f| f.code == Code::ClocksourceVdsoCapable)
        .unwrap();
    assert!(
        f.message.contains(
            "clock_gettime(MONOTONIC) took 23.0 ns here on kvm-clock; tsc was not measured"
        ),
        "{}",
        f.message
    );
    for f in &v.findings {
        assert_eq!(speed_without_a_figure(&f.message), None, "{}", f.message);
    }
}

/// No finding of any saved scenario, nor of the simulated machines here, calls a speed
/// by an adjective.
#[test]
fn no_finding_names_a_speed_without_its_figure() {
    let saved = [
        include_str!("../../../tests/profiles/healthy.json"),
        include_str!("../../../tests/profiles/hpet.json"),
        include_str!("../../../tests/profiles/acpi_pm.json"),
        include_str!("../../../tests/profiles/no_vdso.json"),
        include_str!("../../../tests/profiles/time_namespace.json"),
        include_str!("../../../tests/profiles/tsc_unstable.json"),
        include_str!("../../../tests/profiles/tsc_watchdog.json"),
        include_str!("../../../tests/profiles/aux_served.json"),
        include_str!("../../../tests/profiles/aux_not_served.json"),
    ];
    let mut verdicts: Vec<Verdict> = saved
        .iter()
        .map(|json| super::scenarios::scenario(json).1)
        .collect();
    let mut slow = healthy();
    slow.probe = None;
    slow.costs[0].vdsotime_ns = 240.0;
    verdicts.push(classify(&slow));
    verdicts.push(classify(&healthy()));
    for f in verdicts.iter().flat_map(|v| &v.findings) {
        assert_eq!(speed_without_a_figure(&f.message), None, "{}", f.message);
    }
}
