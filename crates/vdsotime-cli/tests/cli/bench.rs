use crate::*;

const LIBRARY: [&str; 5] = [
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "getcpu",
];

/// Every numeric field of a measurement is positive and finite (clock_id is an id,
/// and 0 is CLOCK_REALTIME).
fn check_measurement(m: &serde_json::Value, trials: u64) {
    let obj = m.as_object().unwrap();
    for (k, v) in obj {
        if v.is_number() && k != "clock_id" {
            positive(v, &format!("{k} of {m}"));
        }
    }
    assert!(m["function"].is_string());
    assert!(m["clock"].is_string() || m["clock"].is_null());
    assert!(!m["path"].as_str().unwrap().is_empty());
    assert_eq!(m["trials"].as_u64(), Some(trials), "{m}");
    assert!(
        m["ns"].as_f64().unwrap() <= m["median_ns"].as_f64().unwrap() * 1.000_001,
        "{m}"
    );
}

#[test]
fn bench_json_svg_and_peers() {
    let d = scratch("bench");
    let svg = d.join("bench.svg");
    let v = json(
        &[
            "bench",
            "--trials",
            "2",
            "--calls",
            "300",
            "--peers",
            "--svg",
            svg.to_str().unwrap(),
        ],
        0,
    );
    positive(&v["header"]["loop_overhead_ns"], "loop overhead");
    assert_eq!(v["header"]["trials"], 2);
    let ms = v["measurements"].as_array().unwrap();
    for m in ms {
        check_measurement(m, 2);
        assert_eq!(m["calls"], 300);
    }
    let has = |f: &str, clock: Option<&str>, path: &str| {
        ms.iter()
            .any(|m| m["function"] == f && m["path"] == path && m["clock"].as_str() == clock)
    };
    let clocks = [
        "CLOCK_REALTIME",
        "CLOCK_MONOTONIC",
        "CLOCK_PROCESS_CPUTIME_ID",
        "CLOCK_THREAD_CPUTIME_ID",
        "CLOCK_MONOTONIC_RAW",
        "CLOCK_REALTIME_COARSE",
        "CLOCK_MONOTONIC_COARSE",
        "CLOCK_BOOTTIME",
        "CLOCK_REALTIME_ALARM",
        "CLOCK_BOOTTIME_ALARM",
        "CLOCK_TAI",
        "clock id 12",
    ];
    for path in ["vdsotime", "libc", "syscall"] {
        for c in clocks {
            assert!(
                has("clock_gettime", Some(c), path),
                "clock_gettime {c} via {path}"
            );
        }
        assert!(has("clock_getres", Some("CLOCK_MONOTONIC"), path));
        for f in ["gettimeofday", "time", "getcpu"] {
            assert!(has(f, None, path), "{f} via {path}");
        }
    }
    // The raw symbol is measured wherever the vDSO exports one.
    assert!(has("clock_gettime", Some("CLOCK_MONOTONIC"), "vdso-raw"));
    for m in ms
        .iter()
        .filter(|m| m["path"] == "vdsotime" && LIBRARY.contains(&m["function"].as_str().unwrap()))
    {
        let route = m["route"].as_str().unwrap();
        assert!(route == "syscall" || route.contains('@'), "{route}");
    }
    for peer in [
        "std::time::Instant::now",
        "std::time::SystemTime::now",
        "rustix::time::clock_gettime",
        "quanta::Instant::now",
        "minstant::Instant::now",
        "coarsetime::Instant::now",
        "vdsotime::Instant::now",
    ] {
        assert!(
            ms.iter().any(|m| m["function"] == peer),
            "peer {peer} missing"
        );
    }
    assert!(ms.iter().any(|m| m["function"]
        .as_str()
        .unwrap()
        .starts_with("vdsotime wall clock")));

    // The chart: well-formed XML with one bar per measurement, in order.
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let bars: Vec<_> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("bar"))
        .collect();
    assert_eq!(bars.len(), ms.len());
    for (bar, m) in bars.iter().zip(ms) {
        assert_eq!(bar.attribute("data-path"), m["path"].as_str());
        assert_eq!(bar.attribute("data-function"), m["function"].as_str());
        let ns: f64 = bar.attribute("data-ns").unwrap().parse().unwrap();
        let want = m["ns"].as_f64().unwrap();
        assert!(
            (ns - want).abs() <= want * 1e-12,
            "bar {ns} vs measurement {want}"
        );
        let w: f64 = bar.attribute("width").unwrap().parse().unwrap();
        assert!(w > 0.0);
    }
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn bench_threads_report_throughput() {
    let v = json(
        &["bench", "--trials", "1", "--calls", "200", "--threads", "2"],
        0,
    );
    assert_eq!(v["header"]["threads"], 2);
    for m in v["measurements"].as_array().unwrap() {
        check_measurement(m, 1);
        assert_eq!(m["threads"], 2);
    }
}

#[test]
fn bench_table_is_seed_style() {
    let (c, out, err) = parts(&run(&["bench", "--trials", "1", "--calls", "200"]));
    assert_eq!(c, 0, "{err}");
    for col in [
        "| function",
        "vdsotime",
        "vdso-raw",
        "libc",
        "syscall",
        "speed-up",
        "vdsotime/raw",
    ] {
        assert!(out.contains(col), "missing column {col}:\n{out}");
    }
    assert!(out.contains("clock_gettime(MONOTONIC)") && out.contains("clock_gettime(id 12)"));
    assert!(
        out.contains("empty loop"),
        "loop overhead not reported:\n{out}"
    );
    // No progress bar when stderr is not a terminal.
    assert!(err.is_empty(), "stderr: {err}");
}

#[test]
fn bench_rejects_bad_duration() {
    let (c, _, err) = parts(&run(&["bench", "--duration", "0"]));
    assert_eq!(c, 1);
    assert!(err.contains("--duration"));
}
