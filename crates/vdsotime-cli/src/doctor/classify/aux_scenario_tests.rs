//! The auxiliary clocks' scenarios (tests/profiles/aux_*.json, each says what was
//! simulated): an enabled one served, one the vDSO does not serve and why, one behind a
//! clocksource the vDSO cannot read, and kernels with none enabled or none at all.

use super::scenarios::{codes, honest, scenario};
use super::*;
use crate::doctor::findings::Code;

const SERVED: &str = include_str!("../../../tests/profiles/aux_served.json");
const NOT_SERVED: &str = include_str!("../../../tests/profiles/aux_not_served.json");

fn find(v: &Verdict, code: Code) -> Option<&crate::doctor::findings::Finding> {
    v.findings.iter().find(|f| f.code == code)
}

#[test]
fn an_enabled_aux_clock_served_is_said_with_its_proof() {
    let (_, v) = scenario(SERVED);
    assert_eq!(v.status, "healthy", "{v:#?}");
    honest(&v);
    let served = find(&v, Code::AuxClocksServed).expect("aux_clocks_served");
    assert_eq!(served.severity, Severity::Ok);
    assert!(
        served.message.starts_with(
            "The enabled auxiliary clock AUX0 is answered in user space by the vDSO (proved under a seccomp filter"
        ),
        "{}",
        served.message
    );
    assert!(served.message.contains("clock_gettime(AUX0) costs"));
    assert_eq!(served.subject.clock.as_deref(), Some("AUX0"));
    assert!(codes(&v).contains(&Code::VdsoServesAll));
    for quiet in [Code::VdsoLacksAuxClocks, Code::AuxClocksNoneEnabled] {
        assert!(!codes(&v).contains(&quiet), "{quiet:?}");
    }
}

#[test]
fn an_enabled_aux_clock_the_vdso_does_not_serve_is_a_cause_with_a_fix() {
    let (_, v) = scenario(NOT_SERVED);
    // A warning, as for the other clocks not every program reads: the verdict stays.
    assert_eq!(v.status, "healthy", "{v:#?}");
    honest(&v);
    assert_eq!(
        codes(&v)[..2],
        [Code::VdsoLacksAuxClocks, Code::ClockServedBySyscall]
    );
    let cause = &v.findings[0];
    assert_eq!(
        (cause.severity, cause.role),
        (Severity::Warning, Role::Cause)
    );
    assert_eq!(cause.subject.clock.as_deref(), Some("AUX0"));
    let m = &cause.message;
    assert!(
        m.starts_with("The auxiliary clock AUX0 is enabled, but this process's vDSO does not serve it (proved: under a seccomp filter, the vDSO's clock_gettime(AUX0) made the system call), while it serves clock_gettime(MONOTONIC)"),
        "{m}"
    );
    assert!(m.contains("every read of AUX0 is a system call ("), "{m}");
    // x86_64 on 7.3 has the generic vDSO: what is left is a vDSO not the kernel's own.
    assert!(m.contains("this vDSO is not the kernel's own"), "{m}");
    assert!(m.contains("The readings are right"), "{m}");
    assert_eq!(
        cause.fix.as_ref().and_then(|f| f.kernel.as_deref()),
        Some("Linux 6.17 or later with the generic vDSO")
    );
    assert!(cause.vdso_ns.is_some() && cause.syscall_ns.is_some());
    let symptom = &v.findings[1];
    assert_eq!(symptom.severity, Severity::Warning);
    assert!(
        symptom
            .message
            .contains("because this process's vDSO does not serve the auxiliary clocks (above)"),
        "{}",
        symptom.message
    );
    for absent in [Code::AuxClocksServed, Code::VdsoServesAll] {
        assert!(!codes(&v).contains(&absent), "{absent:?}");
    }
}

#[test]
fn the_cause_names_an_old_kernel_or_an_architecture_without_the_generic_vdso() {
    let (mut p, _) = scenario(NOT_SERVED);
    p.facts.kernel_release = "6.12.0-aux-backport".into();
    let m = classify(&p).findings[0].message.clone();
    assert!(
        m.contains("Linux 6.12.0-aux-backport is older than 6.17, whose vDSO serves them"),
        "{m}"
    );
    let (mut p, _) = scenario(NOT_SERVED);
    p.facts.machine = "riscv32".into();
    let m = classify(&p).findings[0].message.clone();
    assert!(
        m.contains("The riscv32 kernel's vDSO is not the generic one"),
        "{m}"
    );
}

#[test]
fn behind_a_clocksource_the_vdso_cannot_read_the_clocksource_explains_it() {
    let (mut p, _) = scenario(NOT_SERVED);
    p.facts.clocksource = Some("hpet".into());
    if let Some(r) = p.probe.as_mut() {
        for c in r.calls.iter_mut().filter(|c| c.function == "clock_gettime") {
            if !c.clock.as_deref().unwrap_or("").ends_with("_COARSE") {
                c.outcome = crate::doctor::seccomp::Outcome::Syscall;
            }
        }
    }
    let v = classify(&p);
    assert!(v.degraded());
    assert_eq!(codes(&v)[0], Code::ClocksourceNotVdsoCapable);
    assert!(!codes(&v).contains(&Code::VdsoLacksAuxClocks), "{v:#?}");
    let aux = v
        .findings
        .iter()
        .find(|f| f.subject.clock.as_deref() == Some("AUX0"))
        .expect("the AUX0 symptom");
    assert_eq!(aux.code, Code::ClockServedBySyscall);
    assert!(
        aux.message
            .contains("because the clocksource hpet cannot be read from user space (above)"),
        "{}",
        aux.message
    );
}

#[test]
fn none_enabled_is_a_note_and_no_aux_clocks_is_silence() {
    let (mut p, _) = scenario(include_str!("../../../tests/profiles/healthy.json"));
    assert_eq!(
        p.facts.aux_clocks_enabled, None,
        "a profile saved before the field"
    );
    let silent = classify(&p);
    p.facts.aux_clocks_enabled = Some(vec![]);
    let v = classify(&p);
    assert_eq!(v.status, "healthy");
    let note = find(&v, Code::AuxClocksNoneEnabled).expect("the note");
    assert_eq!((note.severity, note.role), (Severity::Note, Role::Context));
    assert!(
        note.message.contains("none of them enabled"),
        "{}",
        note.message
    );
    let mut without = v.findings.clone();
    without.retain(|f| f.code != Code::AuxClocksNoneEnabled);
    assert_eq!(without, silent.findings);
}
