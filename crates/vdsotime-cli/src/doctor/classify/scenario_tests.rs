//! The scenarios the doctor must get right, as saved profiles (tests/profiles: each
//! says what was simulated): the code, order and wording of what it says.

use super::*;
use crate::doctor::findings::Code;

pub(super) fn scenario(json: &str) -> (Profile, Verdict) {
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    let p: Profile = serde_json::from_value(doc["profile"].clone()).unwrap();
    let v = classify(&p);
    (p, v)
}

pub(super) fn codes(v: &Verdict) -> Vec<Code> {
    v.findings.iter().map(|f| f.code).collect()
}

/// Nothing that contradicts a degraded verdict, and no hedge.
pub(super) fn honest(v: &Verdict) {
    for f in &v.findings {
        if v.degraded() {
            assert_ne!(f.severity, Severity::Ok, "{}", f.message);
        }
        for bad in [
            "on this architecture",
            "before 5.3",
            "or the kernel (before",
        ] {
            assert!(!f.message.contains(bad), "{bad:?} in {}", f.message);
        }
    }
}

/// The clocksource fix, as the message and the `fix` field say it.
fn names_the_switch(f: &crate::doctor::findings::Finding, to: &str) {
    let m = &f.message;
    assert!(
        m.contains(&format!(
            "Switch to {to}, which is listed in available_clocksource"
        )),
        "{m}"
    );
    assert!(
        m.contains(&format!(
            "`echo {to} > /sys/devices/system/clocksource/clocksource0/current_clocksource`"
        )),
        "{m}"
    );
    assert!(m.contains(&format!("`clocksource={to}`")), "{m}");
    let fix = f.fix.as_ref().unwrap();
    assert_eq!(fix.clocksource.as_deref(), Some(to));
    assert_eq!(
        fix.boot.as_deref(),
        Some(format!("clocksource={to}").as_str())
    );
}

#[test]
fn hpet_cause_first_with_the_switch_to_tsc() {
    let (_, v) = scenario(include_str!("../../../tests/profiles/hpet.json"));
    assert!(v.degraded());
    honest(&v);
    let first = &v.findings[0];
    assert_eq!(first.code, Code::ClocksourceNotVdsoCapable);
    assert_eq!(first.subject.clocksource.as_deref(), Some("hpet"));
    assert!(first
        .message
        .starts_with("The clocksource is hpet, which the vDSO cannot read (proved"));
    assert!(
        first.message.contains("(`clocksource=hpet`)"),
        "{}",
        first.message
    );
    names_the_switch(first, "tsc");
    // Then the symptoms, the essential clocks first, each with its numbers.
    let symptoms: Vec<_> = v
        .findings
        .iter()
        .filter(|f| f.code == Code::ClockServedBySyscall)
        .collect();
    assert_eq!(symptoms.len(), 6, "{v:#?}");
    assert_eq!(symptoms[0].severity, Severity::Degraded);
    assert!(symptoms
        .iter()
        .all(|f| f.vdso_ns.is_some() && f.syscall_ns.is_some()));
    assert!(symptoms
        .iter()
        .all(|f| f.message.contains("caught under seccomp")));
    assert!(
        !codes(&v).contains(&Code::TscMarkedUnstable),
        "the TSC is still offered"
    );
}

#[test]
fn acpi_pm_is_judged_like_hpet() {
    let (_, v) = scenario(include_str!("../../../tests/profiles/acpi_pm.json"));
    assert!(v.degraded());
    honest(&v);
    assert_eq!(v.findings[0].code, Code::ClocksourceNotVdsoCapable);
    assert_eq!(
        v.findings[0].subject.clocksource.as_deref(),
        Some("acpi_pm")
    );
    names_the_switch(&v.findings[0], "tsc");
}

#[test]
fn tsc_unstable_boot_parameter_is_the_root_cause() {
    let (_, v) = scenario(include_str!("../../../tests/profiles/tsc_unstable.json"));
    assert!(v.degraded());
    honest(&v);
    assert_eq!(
        &codes(&v)[..3],
        [
            Code::TscMarkedUnstable,
            Code::ClocksourceNotVdsoCapable,
            Code::ClockServedBySyscall
        ]
    );
    let first = &v.findings[0];
    assert_eq!(first.severity, Severity::Degraded);
    assert_eq!(first.subject.clocksource.as_deref(), Some("hpet"));
    let m = &first.message;
    assert!(
        m.contains("the kernel command line has `tsc=unstable`"),
        "{m}"
    );
    assert!(
        m.contains("so the clocksource is hpet, which the vDSO cannot read"),
        "{m}"
    );
    assert!(m.contains("never registers the TSC"), "{m}");
    assert!(
        m.contains("remove `tsc=unstable` from the kernel command line and reboot"),
        "{m}"
    );
    assert_eq!(
        first.fix.as_ref().unwrap().boot.as_deref(),
        Some("remove tsc=unstable")
    );
    // Nothing readable is offered: no switch is suggested, and it says why.
    let cs = &v.findings[1].message;
    assert!(
        cs.contains(
            "No clocksource the vDSO can read is offered (available_clocksource: hpet acpi_pm)"
        ),
        "{cs}"
    );
    assert!(!cs.contains("Switch to"), "{cs}");
}

#[test]
fn tsc_rejected_by_the_watchdog_says_why_and_what_to_do() {
    let (_, v) = scenario(include_str!("../../../tests/profiles/tsc_watchdog.json"));
    assert!(v.degraded());
    honest(&v);
    let first = &v.findings[0];
    assert_eq!(first.code, Code::TscMarkedUnstable);
    let m = &first.message;
    assert!(
        m.contains("\"Marking TSC unstable due to clocksource watchdog\""),
        "{m}"
    );
    assert!(m.contains("stays unusable until the next boot"), "{m}");
    assert!(m.contains("`tsc=reliable`"), "{m}");
    assert!(m.contains("constant_tsc and nonstop_tsc"), "{m}");
}

#[test]
fn tsc_unstable_under_kvm_suggests_kvm_clock_with_its_condition() {
    let (mut p, _) = scenario(include_str!("../../../tests/profiles/tsc_unstable.json"));
    p.facts.clocksources_available = vec!["kvm-clock".into(), "hpet".into(), "acpi_pm".into()];
    let v = classify(&p);
    let first = &v.findings[0];
    assert_eq!(first.code, Code::TscMarkedUnstable);
    assert!(
        first.message.contains("Until then: Switch to kvm-clock"),
        "{}",
        first.message
    );
    assert!(
        first.message.contains("only when the host marks it stable"),
        "{}",
        first.message
    );
    names_the_switch(&v.findings[1], "kvm-clock");
}

#[test]
fn no_vdso_is_one_finding_naming_the_real_causes() {
    let (_, v) = scenario(include_str!("../../../tests/profiles/no_vdso.json"));
    assert!(v.degraded());
    honest(&v);
    assert_eq!(codes(&v)[0], Code::NoVdso);
    assert_eq!(
        v.findings
            .iter()
            .filter(|f| f.severity == Severity::Degraded)
            .count(),
        1,
        "one cause, no symptom per call: {v:#?}"
    );
    let m = &v.findings[0].message;
    assert!(m.contains("`vdso=0`") && m.contains("valgrind"), "{m}");
    assert!(
        m.contains("Here the kernel command line has `vdso=0`"),
        "{m}"
    );
    assert!(
        m.contains("getcpu() is still answered in user space, from the rseq area glibc registered"),
        "{m}"
    );
    for f in &v.findings {
        assert!(!f.message.contains("served by the vDSO"), "{}", f.message);
        assert!(!f.message.contains("which the vDSO reads"), "{}", f.message);
    }
    assert!(!codes(&v).contains(&Code::SeccompUnavailable));
}

#[test]
fn no_vdso_under_valgrind_says_valgrind() {
    let (mut p, _) = scenario(include_str!("../../../tests/profiles/no_vdso.json"));
    p.facts.kernel_cmdline = Some("BOOT_IMAGE=/vmlinuz root=/dev/vda1".into());
    p.facts.emulator = Some("valgrind".into());
    let v = classify(&p);
    let m = &v.findings[0].message;
    assert!(m.contains("Here the process runs under valgrind"), "{m}");
    assert!(!m.contains("Here the kernel command line"), "{m}");
}

#[test]
fn time_namespace_is_healthy_with_a_note() {
    let (_, v) = scenario(include_str!("../../../tests/profiles/time_namespace.json"));
    assert_eq!(v.status, "healthy", "{v:#?}");
    honest(&v);
    assert!(codes(&v).contains(&Code::TimeNamespace));
    assert!(codes(&v).contains(&Code::VdsoServesAll));
}

#[test]
fn healthy_says_what_works_and_how_it_knows() {
    let (p, v) = scenario(include_str!("../../../tests/profiles/healthy.json"));
    assert_eq!(v.status, "healthy");
    honest(&v);
    assert!(
        v.findings.iter().all(|f| f.severity <= Severity::Note),
        "{v:#?}"
    );
    let serves = v
        .findings
        .iter()
        .find(|f| f.code == Code::VdsoServesAll)
        .unwrap();
    assert!(serves.message.contains("proved under a seccomp filter"));
    let rseq = p.costs.iter().any(|c| c.route.starts_with("rseq"));
    assert_eq!(codes(&v).contains(&Code::GetcpuFromRseq), rseq);
}

/// Seconds after boot the kernel lists the TSC as tsc-early (until it has refined the
/// calibration): not a TSC marked unstable; the switch names tsc, the name that stays.
#[test]
fn hpet_while_the_tsc_is_still_tsc_early() {
    let (mut p, _) = scenario(include_str!("../../../tests/profiles/hpet.json"));
    assert!(p.facts.cpu_flags.tsc);
    p.facts.clocksources_available = vec!["tsc-early".into(), "hpet".into(), "acpi_pm".into()];
    let v = classify(&p);
    honest(&v);
    assert!(!codes(&v).contains(&Code::TscMarkedUnstable), "{v:?}");
    let first = &v.findings[0];
    assert_eq!(first.code, Code::ClocksourceNotVdsoCapable);
    assert!(
        first
            .message
            .contains("Switch to tsc, which available_clocksource still lists as tsc-early"),
        "{}",
        first.message
    );
    assert_eq!(
        first.fix.as_ref().and_then(|f| f.clocksource.as_deref()),
        Some("tsc")
    );
}
