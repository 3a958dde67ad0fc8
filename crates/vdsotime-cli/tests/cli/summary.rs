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

/// An operator reads the first lines: the verdict leads, and every column of the table is
/// explained under it.
#[test]
fn default_run_leads_with_the_verdict_and_explains_its_columns() {
    let (c, out, err) = parts(&run(&[]));
    assert_eq!(c, 0, "{err}");
    assert!(
        out.starts_with("doctor verdict: "),
        "the verdict comes first:\n{out}"
    );
    let at = |part: &str| {
        out.find(part)
            .unwrap_or_else(|| panic!("missing {part:?}:\n{out}"))
    };
    assert!(at("| function") > at("doctor verdict:"), "{out}");
    assert!(
        at("vDSO:") > at("| function"),
        "the machine's detail comes last:\n{out}"
    );
    assert!(
        !out.contains("| symbol"),
        "the symbol table is info's:\n{out}"
    );
    let legend = out[at("| function")..]
        .lines()
        .find(|l| !l.starts_with('|'))
        .unwrap_or_default();
    for column in ["ns:", "speed-up:", "vdsotime/raw:", "vdsotime path:"] {
        assert!(
            legend.contains(column),
            "{column} is not explained under the table:\n{out}"
        );
    }
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
