use crate::*;

#[test]
fn default_run_summarizes_benches_and_judges() {
    let (c, out, err) = parts(&run(&[]));
    assert_eq!(c, 0, "{err}");
    for part in [
        "vDSO:",
        "clocksource:",
        "| function",
        "speed-up",
        "doctor verdict:",
    ] {
        assert!(out.contains(part), "missing {part:?}:\n{out}");
    }
    assert!(out.contains(clock_gettime_symbol()));
}

#[test]
fn default_run_json() {
    let v = json(&[], 0);
    assert!(v["info"]["vdso"]["symbols"].is_array());
    assert!(!v["bench"]["measurements"].as_array().unwrap().is_empty());
    assert!(matches!(
        v["verdict"]["status"].as_str(),
        Some("healthy" | "degraded")
    ));
    positive(&v["seconds"], "seconds");
}
