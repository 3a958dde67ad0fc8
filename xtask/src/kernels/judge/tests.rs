//! The judge on doctor documents shaped like the contract's, right and wrong.

use super::*;

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

fn truth(current: &str, probe: &str, klog: &str) -> Truth {
    Truth::parse(&lines(&format!(
        "cmdline console=ttyS0\ncurrent_clocksource {current}\n\
         available_clocksource tsc hpet acpi_pm\nvdso 0x7fff0000\nclock_gettime {probe}\n{klog}"
    )))
}

/// A doctor document whose reading of the machine is `current` among `available`.
fn doc_seeing(status: &str, finding: &str, current: &str, available: &str) -> Vec<String> {
    let available: Vec<String> = available
        .split_whitespace()
        .map(|a| format!("{a:?}"))
        .collect();
    lines(&format!(
        r#"{{"schema_version": 1, "verdict": {{"status": "{status}", "findings": [{finding}]}},
        "paths": [{{"function": "clock_gettime", "clock": "MONOTONIC", "path": "vdso",
        "method": "seccomp", "vdso_ns": 40.5, "syscall_ns": 900}}],
        "profile": {{"facts": {{"clocksource": "{current}",
        "clocksources_available": [{}]}}}}}}"#,
        available.join(", ")
    ))
}

/// A doctor document that saw what [`truth`] says, with `current` in use.
fn doc_on(current: &str, status: &str, finding: &str) -> Vec<String> {
    doc_seeing(status, finding, current, "tsc hpet acpi_pm")
}

fn doc(status: &str, finding: &str) -> Vec<String> {
    doc_on("hpet", status, finding)
}

const HPET_FIX: &str = r#"{"code": "clocksource_not_vdso_capable", "severity": "degraded",
    "subject": {"clocksource": "hpet"}, "message": "The clocksource is hpet, which the vDSO
    cannot read. The command line selects it (clocksource=hpet). Switch to tsc (listed in available_clocksource): echo tsc >
    /sys/devices/system/clocksource/clocksource0/current_clocksource, or boot with
    clocksource=tsc."}"#;

#[test]
fn the_truth_decides_what_the_verdict_must_be() {
    let t = truth(
        "tsc",
        "vdso",
        "klog <6>[ 0.3] clocksource: Switched to clocksource tsc",
    );
    assert_eq!(Expected::from_truth(&t), Ok(Expected::Healthy));
    assert_eq!(t.choice(), ["clocksource: Switched to clocksource tsc"]);
    let t = truth("hpet", "kernel", "");
    assert_eq!(
        Expected::from_truth(&t),
        Ok(Expected::NotVdsoCapable("hpet".into()))
    );
    let t = truth(
        "hpet",
        "kernel",
        "klog <6>[ 0.0] tsc: Marking TSC unstable due to boot parameter",
    );
    assert_eq!(
        Expected::from_truth(&t),
        Ok(Expected::TscUnstable("hpet".into()))
    );
    let mut t = truth("tsc", "kernel", "");
    t.vdso = false;
    assert_eq!(Expected::from_truth(&t), Ok(Expected::NoVdso));
    assert!(Expected::from_truth(&truth("tsc", "error x", "")).is_err());
}

#[test]
fn a_right_hpet_verdict_passes_and_its_row_is_filled() {
    let t = truth("hpet", "kernel", "");
    let want = Expected::from_truth(&t).unwrap();
    let j = doctor(&doc("degraded", HPET_FIX), Some(2), &want, &t, None);
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    assert_eq!(j.code, "clocksource_not_vdso_capable");
    assert_eq!((j.vdso_ns, j.syscall_ns), (Some(40.5), Some(900.0)));
    assert_eq!(
        j.sentence,
        "The clocksource is hpet, which the vDSO\n    cannot read."
    );
}

#[test]
fn wrong_verdicts_fail_with_the_reason() {
    let t = truth("hpet", "kernel", "");
    let want = Expected::from_truth(&t).unwrap();
    // Exit 1 for a degraded machine.
    let j = doctor(&doc("degraded", HPET_FIX), Some(1), &want, &t, None);
    assert!(j.failures.iter().any(|f| f.contains("exit status")));
    // A symptom first.
    let symptom =
        format!(r#"{{"code": "clock_served_by_syscall", "message": "slow"}}, {HPET_FIX}"#);
    let j = doctor(&doc("degraded", &symptom), Some(2), &want, &t, None);
    assert!(j.failures.iter().any(|f| f.contains("first finding")));
    // A fix to a clocksource the vDSO cannot read either.
    let acpi = HPET_FIX.replace("tsc", "acpi_pm");
    let j = doctor(&doc("degraded", &acpi), Some(2), &want, &t, None);
    assert!(j.failures.iter().any(|f| f.contains("no fix")), "{j:?}");
    // Healthy but said degraded; no JSON at all.
    let ok = Expected::Healthy;
    let j = doctor(
        &doc("degraded", HPET_FIX),
        Some(2),
        &ok,
        &truth("tsc", "vdso", ""),
        None,
    );
    assert!(j.failures.len() >= 3, "{:?}", j.failures);
    assert!(!doctor(&lines("error: boom"), Some(1), &ok, &t, None)
        .failures
        .is_empty());
}

#[test]
fn no_vdso_must_name_the_causes_and_nothing_false() {
    let mut t = truth("tsc", "kernel", "");
    t.vdso = false;
    let right = r#"{"code": "no_vdso", "severity": "degraded", "message": "This process has
        no vDSO: the kernel was booted with vdso=0, or it runs under an emulator such as
        valgrind."}"#;
    let paths_ok = |d: Vec<String>| -> Vec<String> {
        d.into_iter()
            .map(|l| l.replace(r#""path": "vdso""#, r#""path": "no-vdso""#))
            .collect()
    };
    let j = doctor(
        &paths_ok(doc_on("tsc", "degraded", right)),
        Some(2),
        &Expected::NoVdso,
        &t,
        None,
    );
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    let ok_line = format!(
        r#"{right}, {{"code": "clocksource_ok", "severity": "ok", "message": "tsc is fine"}}"#
    );
    let j = doctor(
        &paths_ok(doc_on("tsc", "degraded", &ok_line)),
        Some(2),
        &Expected::NoVdso,
        &t,
        None,
    );
    assert_eq!(j.failures.len(), 1, "{:?}", j.failures);
    let j = doctor(
        &doc_on("tsc", "degraded", right),
        Some(2),
        &Expected::NoVdso,
        &t,
        None,
    );
    assert!(j.failures.iter().any(|f| f.contains("through the vDSO")));
}

/// The machine's reading taken seconds after boot, while the kernel still listed
/// `tsc-early`, and the reading after the doctor, once `tsc` had replaced it.
fn early_and_late() -> (Truth, Truth) {
    let reading = |available: &str| {
        Truth::parse(&lines(&format!(
            "current_clocksource hpet\navailable_clocksource {available}\n\
             vdso 0x7fff0000\nclock_gettime kernel"
        )))
    };
    (
        reading("tsc-early hpet acpi_pm"),
        reading("tsc hpet acpi_pm"),
    )
}

/// The race: the doctor ran after `tsc` replaced `tsc-early` and rightly said "Switch to
/// tsc"; judged against the early reading it was called wrong. It is judged by what it saw.
#[test]
fn the_doctor_is_judged_by_what_it_saw_when_it_looked() {
    let (early, late) = early_and_late();
    let want = Expected::from_truth(&early).unwrap();
    let later = doc_seeing("degraded", HPET_FIX, "hpet", "tsc hpet acpi_pm");
    let j = doctor(&later, Some(2), &want, &early, Some(&late));
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    // Without the reading after, its reading matches none the machine gave: that is
    // said, and nothing is blamed on the fix.
    let j = doctor(&later, Some(2), &want, &early, None);
    assert_eq!(j.failures.len(), 1, "{:?}", j.failures);
    assert!(j.failures[0].contains("the doctor read clocksource hpet"));
    // A reading the machine never gave is a failure, even with a right fix.
    let wrong = doc_seeing("degraded", HPET_FIX, "hpet", "tsc hpet");
    let j = doctor(&wrong, Some(2), &want, &early, Some(&late));
    assert!(j.failures.iter().any(|f| f.contains("before it")), "{j:?}");
    // No reading in the document at all.
    let bare = doc("degraded", HPET_FIX)
        .into_iter()
        .map(|l| l.replace("\"facts\"", "\"other\""))
        .collect::<Vec<_>>();
    let j = doctor(&bare, Some(2), &want, &early, Some(&late));
    assert!(
        j.failures.iter().any(|f| f.contains("no profile.facts")),
        "{j:?}"
    );
}

/// A doctor that looked while only `tsc-early` was listed names `tsc`, which replaces it:
/// accepted; naming a clocksource nobody lists is not.
#[test]
fn tsc_stands_for_tsc_early_until_it_registers() {
    let (early, late) = early_and_late();
    let want = Expected::from_truth(&early).unwrap();
    let seen_early = doc_seeing("degraded", HPET_FIX, "hpet", "tsc-early hpet acpi_pm");
    let j = doctor(&seen_early, Some(2), &want, &early, Some(&late));
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    let kvm = HPET_FIX.replace("tsc", "kvm-clock");
    let j = doctor(
        &doc_seeing("degraded", &kvm, "hpet", "tsc-early hpet acpi_pm"),
        Some(2),
        &want,
        &early,
        Some(&late),
    );
    assert!(j.failures.iter().any(|f| f.contains("no fix")), "{j:?}");
}
