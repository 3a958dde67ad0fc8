//! `doctor --format prometheus`, read back by the strict parser in `expfmt`.

use std::collections::BTreeMap;

use crate::doctor::judge;
use crate::expfmt::{self, Family};
use crate::*;

fn metrics(text: &str) -> BTreeMap<String, Family> {
    expfmt::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn one(m: &BTreeMap<String, Family>, name: &str) -> f64 {
    let f = &m[name];
    assert_eq!(f.samples.len(), 1, "{name}");
    f.samples[0].value
}

/// Every family is a documented gauge, each call has one 0-or-1 vdso_serves gauge, and
/// the per-path breakdown, when there (`--metrics full`), has exactly one path per call
/// that agrees with it.
fn well_formed(m: &BTreeMap<String, Family>) {
    for (name, f) in m {
        assert!(name.starts_with("vdsotime_"), "{name}");
        assert_eq!(f.kind.as_deref(), Some("gauge"), "{name}");
        assert!(f.help.as_deref().is_some_and(|h| !h.is_empty()), "{name}");
    }
    let mut serves: BTreeMap<(String, String), f64> = BTreeMap::new();
    for s in &m["vdsotime_vdso_serves"].samples {
        assert!(s.value == 0.0 || s.value == 1.0, "{s:?}");
        let key = (s.labels["function"].clone(), s.labels["clock"].clone());
        assert!(serves.insert(key, s.value).is_none(), "{s:?} twice");
    }
    assert!(serves.len() >= 10, "{serves:?}");
    if let Some(f) = m.get("vdsotime_call_path") {
        let mut paths: BTreeMap<(String, String), f64> = BTreeMap::new();
        for s in &f.samples {
            assert!(s.value == 0.0 || s.value == 1.0, "{s:?}");
            let key = (s.labels["function"].clone(), s.labels["clock"].clone());
            *paths.entry(key.clone()).or_default() += s.value;
            if s.value == 1.0 {
                let user_space = ["vdso", "rseq"].contains(&s.labels["path"].as_str());
                assert_eq!(serves[&key] == 1.0, user_space, "{s:?}");
            }
        }
        assert_eq!(paths.len(), serves.len(), "{paths:?}");
        assert!(paths.values().all(|&n| n == 1.0), "{paths:?}");
        for s in &m["vdsotime_call_duration_seconds"].samples {
            assert!(
                s.value > 0.0 && s.value < 1e-3,
                "not seconds per call: {s:?}"
            );
            let digits = format!("{:e}", s.value);
            let mantissa = digits.split('e').next().unwrap().replace(['.', '-'], "");
            assert!(mantissa.len() <= 4, "more than 4 significant digits: {s:?}");
        }
    }
    let info = &m["vdsotime_doctor_info"].samples[0];
    assert_eq!(info.labels["schema_version"], "1");
}

fn serves(m: &BTreeMap<String, Family>, function: &str, clock: &str) -> f64 {
    m["vdsotime_vdso_serves"]
        .samples
        .iter()
        .find(|s| s.labels["function"] == function && s.labels["clock"] == clock)
        .map(|s| s.value)
        .unwrap()
}

fn path_of(m: &BTreeMap<String, Family>, function: &str, clock: &str) -> String {
    m["vdsotime_call_path"]
        .samples
        .iter()
        .find(|s| s.value == 1.0 && s.labels["function"] == function && s.labels["clock"] == clock)
        .map(|s| s.labels["path"].clone())
        .unwrap()
}

/// The number of series a run exports: the samples of every family.
pub fn series(m: &BTreeMap<String, Family>) -> usize {
    m.values().map(|f| f.samples.len()).sum()
}

/// By default every profile's metrics are at most 40 series (the figure docs/fleet.md
/// states is the healthy host's), without the per-path breakdown; `--metrics full` adds
/// it; an unknown set is a usage error.
#[test]
fn the_default_metrics_are_few_and_full_is_opt_in() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/fleet.md"))
        .unwrap();
    for name in [
        "healthy",
        "hpet",
        "acpi_pm",
        "tsc_unstable",
        "tsc_watchdog",
        "no_vdso",
        "time_namespace",
        "aux_served",
        "aux_not_served",
    ] {
        let (_, out) = judge(name, &["--format", "prometheus"]);
        let m = metrics(&out);
        well_formed(&m);
        assert!(series(&m) <= 40, "{name}: {} series\n{out}", series(&m));
        assert!(!m.contains_key("vdsotime_call_path"), "{name}");
        assert!(!m.contains_key("vdsotime_call_duration_seconds"), "{name}");
        if name == "healthy" {
            let said = format!("**{} series**", series(&m));
            assert!(doc.contains(&said), "docs/fleet.md does not say {said}");
        }
        let (_, out) = judge(name, &["--format", "prometheus", "--metrics", "full"]);
        let full = metrics(&out);
        well_formed(&full);
        assert!(full.contains_key("vdsotime_call_path"), "{name}");
        assert!(series(&full) > series(&m) * 3, "{name}");
    }
    let (c, out, err) = parts(&run(&[
        "doctor",
        "--format",
        "prometheus",
        "--metrics",
        "everything",
    ]));
    assert_eq!(c, 64, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("invalid value 'everything' for '--metrics <SET>'")
            && err.contains("default, full"),
        "{err}"
    );
}

#[test]
fn this_machine_as_metrics() {
    let (c, out, err) = parts(&run(&[
        "doctor",
        "--duration",
        "0.005",
        "--format",
        "prometheus",
    ]));
    assert!(c == 0 || c == 2, "{err}");
    let m = metrics(&out);
    well_formed(&m);
    assert_eq!(
        one(&m, "vdsotime_doctor_healthy"),
        if c == 0 { 1.0 } else { 0.0 }
    );
    let cs =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
    assert_eq!(
        m["vdsotime_clocksource_info"].samples[0].labels["clocksource"],
        cs
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let ran = one(&m, "vdsotime_doctor_last_run_timestamp_seconds");
    assert!((now - ran).abs() < 600.0, "{ran} vs {now}");
}

#[test]
fn the_documentation_lists_every_metric() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/doctor.md"))
        .unwrap();
    let (_, out) = judge(
        "tsc_watchdog",
        &["--format", "prometheus", "--metrics", "full"],
    );
    for name in metrics(&out).keys() {
        assert!(
            doc.contains(&format!("| `{name}` |")),
            "docs/doctor.md lacks {name}"
        );
    }
}

#[test]
fn scenarios_as_metrics() {
    for (name, healthy, path) in [
        ("healthy", 1.0, "vdso"),
        ("hpet", 0.0, "vdso-fallback"),
        ("tsc_unstable", 0.0, "vdso-fallback"),
        ("no_vdso", 0.0, "no-vdso"),
    ] {
        let (c, out) = judge(name, &["--format", "prometheus", "--metrics", "full"]);
        assert_eq!(c == 0, healthy == 1.0, "{name}");
        let m = metrics(&out);
        well_formed(&m);
        assert_eq!(one(&m, "vdsotime_doctor_healthy"), healthy, "{name}");
        assert_eq!(path_of(&m, "clock_gettime", "MONOTONIC"), path, "{name}");
        assert_eq!(path_of(&m, "gettimeofday", ""), path, "{name}");
        assert_eq!(serves(&m, "clock_gettime", "MONOTONIC"), healthy, "{name}");
        let degraded: f64 = m["vdsotime_findings"]
            .samples
            .iter()
            .filter(|s| s.labels["severity"] == "degraded")
            .map(|s| s.value)
            .sum();
        assert_eq!(degraded > 0.0, healthy == 0.0, "{name}");
    }
    let (_, out) = judge("hpet", &["--format", "prometheus"]);
    let m = metrics(&out);
    assert_eq!(
        m["vdsotime_clocksource_info"].samples[0].labels["clocksource"],
        "hpet"
    );
    assert!(m["vdsotime_findings"]
        .samples
        .iter()
        .any(|s| { s.labels["code"] == "clocksource_not_vdso_capable" && s.value == 1.0 }));
    assert_eq!(one(&m, "vdsotime_vdso_present"), 1.0);
    let (_, out) = judge("no_vdso", &["--format", "prometheus"]);
    assert_eq!(one(&metrics(&out), "vdsotime_vdso_present"), 0.0);
}

#[test]
fn aux_clocks_as_metrics_json_and_text() {
    let finding = |m: &BTreeMap<String, Family>, code: &str, severity: &str| {
        m["vdsotime_findings"]
            .samples
            .iter()
            .any(|s| s.labels["code"] == code && s.labels["severity"] == severity && s.value == 1.0)
    };
    let (c, out) = judge(
        "aux_not_served",
        &["--format", "prometheus", "--metrics", "full"],
    );
    assert_eq!(c, 0);
    let m = metrics(&out);
    well_formed(&m);
    assert_eq!(path_of(&m, "clock_gettime", "AUX0"), "vdso-fallback");
    assert_eq!(serves(&m, "clock_gettime", "AUX0"), 0.0);
    assert!(finding(&m, "vdso_lacks_aux_clocks", "warning"), "{out}");
    let (_, out) = judge("aux_not_served", &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cause = &v["verdict"]["findings"][0];
    assert_eq!(cause["code"], "vdso_lacks_aux_clocks");
    assert_eq!(cause["subject"]["clock"], "AUX0");
    assert_eq!(
        cause["fix"]["kernel"],
        "Linux 6.17 or later with the generic vDSO"
    );
    let (_, text) = judge("aux_not_served", &[]);
    assert!(
        text.contains("WARNING  [vdso_lacks_aux_clocks] The auxiliary clock AUX0 is enabled"),
        "{text}"
    );
    let (c, out) = judge(
        "aux_served",
        &["--format", "prometheus", "--metrics", "full"],
    );
    assert_eq!(c, 0);
    let m = metrics(&out);
    assert_eq!(path_of(&m, "clock_gettime", "AUX0"), "vdso");
    assert_eq!(serves(&m, "clock_gettime", "AUX0"), 1.0);
    assert!(finding(&m, "aux_clocks_served", "ok"), "{out}");
}
