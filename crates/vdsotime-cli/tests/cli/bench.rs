use crate::*;

const LIBRARY: [&str; 5] = [
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "getcpu",
];

/// Every numeric field of a measurement is positive and finite (clock_id is an id,
/// and 0 is CLOCK_REALTIME); the ratio fields are numbers together or null together,
/// with q1 <= median <= q3.
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
    let ratios = ["ratio_q1", "ratio_to_raw", "ratio_q3"].map(|k| {
        assert!(obj.contains_key(k), "{k} missing: {m}");
        m[k].as_f64()
    });
    match ratios {
        [Some(q1), Some(med), Some(q3)] => assert!(q1 <= med && med <= q3, "{m}"),
        [None, None, None] => {}
        _ => panic!("ratio fields partly null: {m}"),
    }
}

/// The cell of `function(clock)` through `path`, if measured.
fn cell<'a>(
    ms: &'a [serde_json::Value],
    function: &str,
    clock: Option<&str>,
    path: &str,
) -> Option<&'a serde_json::Value> {
    ms.iter()
        .find(|m| m["function"] == function && m["path"] == path && m["clock"].as_str() == clock)
}

const CLOCKS: [&str; 13] = [
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
    "CLOCK_AUX0",
];

/// The first-call probe's paths, in the order `bench` prints them.
const FIRST_CALL_PATHS: &[&str] = &[
    "vdsotime",
    "init",
    "vdsotime-after-init",
    "rustix",
    "glibc",
    "std",
];

#[test]
fn bench_json_svg_and_peers() {
    let d = scratch("bench");
    let svg = d.join("bench.svg");
    let v = json(
        &[
            "bench",
            "--trials",
            "3",
            "--calls",
            "300",
            "--peers",
            "--first-call-runs",
            "2",
            "--svg",
            svg.to_str().unwrap(),
        ],
        0,
    );
    positive(&v["header"]["loop_overhead_ns"], "loop overhead");
    assert_eq!(v["header"]["trials"], 3);
    assert!(v["header"]["trial_us"].is_null(), "--calls fixes the count");
    assert_eq!(v["first_call"]["runs"], 2);
    // The first call side by side; vdsotime's own figures are also the older field's.
    let paths = &v["first_call_paths"];
    check_first_calls(
        paths,
        2,
        "rustix",
        FIRST_CALL_PATHS,
        &["vdsotime", "init", "vdsotime-after-init"],
    );
    let own = &paths["paths"][0];
    for k in ["runs", "min_ns", "median_ns", "allocations"] {
        assert_eq!(v["first_call"][k], own[k], "{k}");
    }
    let ms = v["measurements"].as_array().unwrap();
    for m in ms {
        check_measurement(m, 3);
        assert_eq!(m["calls"], 300);
    }
    let has = |f: &str, clock: Option<&str>, path: &str| cell(ms, f, clock, path).is_some();
    for path in ["vdsotime", "libc", "syscall"] {
        for c in CLOCKS {
            assert!(
                has("clock_gettime", Some(c), path),
                "clock_gettime {c} via {path}"
            );
        }
        for c in [
            "CLOCK_MONOTONIC",
            "CLOCK_MONOTONIC_COARSE",
            "CLOCK_PROCESS_CPUTIME_ID",
        ] {
            assert!(has("clock_getres", Some(c), path), "clock_getres {c}");
        }
        for f in ["gettimeofday", "time", "getcpu"] {
            assert!(has(f, None, path), "{f} via {path}");
        }
    }
    // rustix where it can name the clock; std where it reads that clock.
    for c in &CLOCKS[..11] {
        assert!(has("clock_gettime", Some(c), "rustix"), "rustix {c}");
    }
    assert!(!has("clock_gettime", Some("clock id 12"), "rustix"));
    assert!(!has("gettimeofday", None, "rustix") && has("getcpu", None, "rustix"));
    let std_rows: Vec<_> = ms.iter().filter(|m| m["path"] == "std").collect();
    assert_eq!(std_rows.len(), 2, "std: Instant and SystemTime only");
    assert!(has("clock_gettime", Some("CLOCK_MONOTONIC"), "std"));
    assert!(has("clock_gettime", Some("CLOCK_REALTIME"), "std"));

    // The raw symbol is measured wherever the vDSO exports one; every path of its
    // row is a ratio to it, and it is exactly 1 against itself.
    assert!(has("clock_gettime", Some("CLOCK_MONOTONIC"), "vdso-raw"));
    for m in ms
        .iter()
        .filter(|m| LIBRARY.contains(&m["function"].as_str().unwrap()))
    {
        let raw = cell(
            ms,
            m["function"].as_str().unwrap(),
            m["clock"].as_str(),
            "vdso-raw",
        );
        assert_eq!(m["ratio_to_raw"].is_number(), raw.is_some(), "{m}");
        if m["path"] == "vdso-raw" {
            for k in ["ratio_q1", "ratio_to_raw", "ratio_q3"] {
                assert_eq!(m[k].as_f64(), Some(1.0), "{m}");
            }
        }
    }
    for m in ms
        .iter()
        .filter(|m| m["path"] == "vdsotime" && LIBRARY.contains(&m["function"].as_str().unwrap()))
    {
        let route = m["route"].as_str().unwrap();
        // getcpu is answered from glibc's rseq area where glibc registered one.
        let rseq = m["function"] == "getcpu" && route == "rseq area (glibc)";
        assert!(route == "syscall" || route.contains('@') || rseq, "{route}");
    }
    for peer in [
        "rustix::time::clock_gettime",
        "quanta::Instant::now",
        "minstant::Instant::now",
        "coarsetime::Instant::now",
        "vdsotime::Instant::now",
        "libc::syscall(SYS_clock_gettime)",
    ] {
        let m = ms.iter().find(|m| m["function"] == peer);
        let m = m.unwrap_or_else(|| panic!("peer {peer} missing"));
        // Each peer is a ratio to the raw reading of its clock, measured with it.
        assert_eq!(m["ratio_to_raw"].is_number(), raw_symbol_exists(ms), "{m}");
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

/// Whether this process's vDSO gave a raw clock_gettime (not on powerpc, not without a vDSO).
fn raw_symbol_exists(ms: &[serde_json::Value]) -> bool {
    cell(ms, "clock_gettime", Some("CLOCK_MONOTONIC"), "vdso-raw").is_some()
}

#[test]
fn bench_sizes_trials_by_time_unless_calls_are_given() {
    let v = json(
        &[
            "bench",
            "--trials",
            "2",
            "--trial-us",
            "50",
            "--first-call-runs",
            "0",
        ],
        0,
    );
    assert_eq!(v["header"]["trial_us"], 50.0);
    assert!(v["first_call"].is_null());
    let ms = v["measurements"].as_array().unwrap();
    for m in ms {
        check_measurement(m, 2);
    }
    // Sized from a warm-up to about 50 µs, never below the floor of 100 calls.
    assert!(ms.iter().all(|m| m["calls"].as_u64().unwrap() >= 100));
}

#[test]
fn bench_threads_report_throughput() {
    let v = json(
        &[
            "bench",
            "--trials",
            "1",
            "--calls",
            "200",
            "--threads",
            "2",
            "--first-call-runs",
            "0",
        ],
        0,
    );
    assert_eq!(v["header"]["threads"], 2);
    for m in v["measurements"].as_array().unwrap() {
        check_measurement(m, 1);
        assert_eq!(m["threads"], 2);
    }
}

#[test]
fn bench_tables_show_ns_and_ratios() {
    let (c, out, err) = parts(&run(&[
        "bench",
        "--trials",
        "2",
        "--calls",
        "200",
        "--first-call-runs",
        "0",
    ]));
    assert_eq!(c, 0, "{err}");
    for col in [
        "| function",
        "vdsotime",
        "vdso-raw",
        "libc",
        "rustix",
        "std",
        "syscall",
        "speed-up",
        "vdsotime/raw",
        "libc/raw",
        "rustix/raw",
        "std/raw",
        "syscall/raw",
    ] {
        assert!(out.contains(col), "missing column {col}:\n{out}");
    }
    assert!(out.contains("clock_gettime(MONOTONIC)") && out.contains("clock_gettime(id 12)"));
    assert!(out.contains("clock_gettime(AUX0)") && out.contains("clock_getres(MONOTONIC_COARSE)"));
    assert!(out.contains("interleaved: 2 rounds"), "{out}");
    assert!(out.contains("median [q1-q3] over 2 rounds"), "{out}");
    // The ratio table's cells: `median [q1-q3]`, three decimals below 10.
    let mono = out
        .lines()
        .filter(|l| l.starts_with("| clock_gettime(MONOTONIC) "))
        .nth(1)
        .unwrap_or_else(|| panic!("no ratio row:\n{out}"));
    let cells: Vec<&str> = mono.split('|').map(str::trim).collect();
    let well_formed = |c: &str| {
        let (med, range) = c.split_once(" [").unwrap_or_else(|| panic!("{c:?}"));
        let (q1, q3) = range.trim_end_matches(']').split_once('-').unwrap();
        [med, q1, q3].iter().all(|x| x.parse::<f64>().is_ok())
    };
    // function, vdsotime, libc, rustix, std, syscall: every path has a ratio here.
    assert!(cells[2..7].iter().all(|c| well_formed(c)), "{mono}\n{out}");
    assert!(
        out.contains("ns per call for the timing loop itself"),
        "loop overhead not reported:\n{out}"
    );
    // No progress bar when stderr is not a terminal.
    assert!(err.is_empty(), "stderr: {err}");
}

/// The text output shows the first call side by side, one line per path.
#[test]
fn bench_text_shows_the_first_call_of_every_path() {
    let (c, out, err) = parts(&run(&[
        "bench",
        "--trials",
        "1",
        "--calls",
        "100",
        "--first-call-runs",
        "1",
    ]));
    assert_eq!(c, 0, "{err}");
    let at = out
        .find("first clock_gettime(MONOTONIC) in a fresh process: 1 rounds")
        .unwrap_or_else(|| panic!("no first-call table:\n{out}"));
    let table = &out[at..];
    for path in FIRST_CALL_PATHS {
        assert!(
            table.lines().any(|l| l.starts_with(&format!("| {path} "))),
            "no line for {path}:\n{table}"
        );
    }
    assert!(table.contains("x/rustix median [q1-q3]"), "{table}");
    assert!(table.contains("minstant"), "the note on the probe: {table}");
}

/// The probe a round spawns: one line, `ns allocations page-faults`, for each path.
#[test]
fn first_call_probe_prints_its_measurement() {
    for path in [
        "vdsotime",
        "init",
        "rustix",
        "glibc",
        "std",
        "getrandom-syscall",
    ] {
        let (c, out, err) = parts(&run(&["first-call-probe", path]));
        assert_eq!(c, 0, "{path}: {err}");
        let fields: Vec<u64> = out
            .split_whitespace()
            .map(|f| f.parse().unwrap_or_else(|_| panic!("{path}: {out}")))
            .collect();
        assert_eq!(fields.len(), 3, "{path}: {out}");
    }
    let (c, _, err) = parts(&run(&["first-call-probe", "nonsense"]));
    assert_eq!(c, 64, "{err}");
}

#[test]
fn bench_rejects_bad_trial_length() {
    for bad in ["0", "-5", "nan", "inf"] {
        let (c, _, err) = parts(&run(&["bench", &format!("--trial-us={bad}")]));
        assert_eq!(c, 64, "{bad}: a usage error");
        assert!(err.contains("--trial-us"), "{bad}: {err}");
    }
}

#[test]
fn bench_rejects_zero_trials() {
    for command in ["bench", "bench-getrandom"] {
        for bad in ["0", "-1", "many"] {
            let (c, out, err) = parts(&run(&[command, &format!("--trials={bad}")]));
            assert_eq!(
                c, 64,
                "{command} --trials {bad}: a usage error, not a run: {out}"
            );
            assert!(err.contains("--trials"), "{command} {bad}: {err}");
            assert!(out.is_empty(), "{command} {bad}: nothing measured: {out}");
        }
    }
}
