use crate::*;

fn failing(v: &serde_json::Value) -> Vec<(String, String)> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| {
            (
                c["subject"].as_str().unwrap().to_string(),
                c["check"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn check_passes_on_this_machine() {
    let v = json(&["check", "--duration", "0.5"], 0);
    assert_eq!(v["passed"], true);
    assert!(failing(&v).is_empty());
    let checks = v["checks"].as_array().unwrap();
    let has = |subject: &str, check: &str| {
        checks.iter().any(|c| {
            c["subject"] == subject && c["check"] == check && c["checked"].as_u64().unwrap() > 0
        })
    };
    for clock in [
        "REALTIME",
        "MONOTONIC",
        "MONOTONIC_RAW",
        "REALTIME_COARSE",
        "MONOTONIC_COARSE",
        "BOOTTIME",
        "TAI",
    ] {
        let s = format!("clock_gettime({clock})");
        assert!(has(&s, "within syscall bracket"), "{s}");
        assert!(has(&s, "normalized"), "{s}");
        assert!(has(&format!("clock_getres({clock})"), "equals syscall"));
    }
    for clock in ["MONOTONIC", "MONOTONIC_RAW", "MONOTONIC_COARSE", "BOOTTIME"] {
        assert!(has(
            &format!("clock_gettime({clock})"),
            "never backwards (across threads)"
        ));
    }
    assert!(has("gettimeofday", "within syscall bracket"));
    assert!(has("gettimeofday", "timezone equals syscall's"));
    assert!(has("time", "within syscall bracket"));
    assert!(has(
        "clock_gettime(process_cputime(pid))",
        "within syscall bracket"
    ));
    for id in ["-1", "10", "12", "1000", "-2147483648", "2147483647"] {
        assert!(
            has(&format!("clock_gettime(id {id})"), "EINVAL like the kernel"),
            "{id}"
        );
        assert!(
            has(&format!("clock_getres(id {id})"), "equals syscall"),
            "{id}"
        );
    }
    for cpu in v["cpus"].as_array().unwrap() {
        assert!(
            has(&format!("getcpu on CPU {cpu}"), "pinned CPU reported"),
            "cpu {cpu}"
        );
    }
}

/// The result is the first line; the passing checks are listed only on request.
#[test]
fn check_text_leads_with_the_result() {
    let (c, out, err) = parts(&run(&["check", "--duration", "0.2", "--threads", "1"]));
    assert_eq!(c, 0, "{out}\n{err}");
    assert!(out.starts_with("PASS: "), "the result comes first:\n{out}");
    assert!(
        !out.contains("| PASS"),
        "passing rows only with --verbose:\n{out}"
    );
    assert!(!out.contains("FAIL"), "{out}");
    assert!(out.lines().count() <= 3, "a passing check is short:\n{out}");

    let (c, out, err) = parts(&run(&[
        "check",
        "--duration",
        "0.2",
        "--threads",
        "1",
        "--verbose",
    ]));
    assert_eq!(c, 0, "{out}\n{err}");
    assert!(out.starts_with("PASS: "), "{out}");
    assert!(out.contains("| PASS"), "{out}");
    assert!(
        out.contains("readings:"),
        "the columns are explained:\n{out}"
    );
}

#[test]
fn shifted_realtime_fails_only_realtime() {
    let o = run_env(
        &["check", "--duration", "0.3", "--json"],
        &[("VDSOTIME_FAULT", "shift-realtime-ns:1000")],
    );
    let (c, out, err) = parts(&o);
    assert_eq!(
        c, 1,
        "a reading 1 us late must fail the bracket\n{out}\n{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["passed"], false);
    let f = failing(&v);
    assert!(
        f.contains(&(
            "clock_gettime(REALTIME)".into(),
            "within syscall bracket".into()
        )),
        "{f:?}"
    );
    assert!(
        f.iter().all(|(s, _)| s == "clock_gettime(REALTIME)"),
        "only REALTIME was broken: {f:?}"
    );
}

#[test]
fn each_fault_is_caught() {
    let cases = [
        ("denorm-monotonic", "clock_gettime(MONOTONIC)", "normalized"),
        (
            "shift-monotonic-ns:-5000000",
            "clock_gettime(MONOTONIC)",
            "within syscall bracket",
        ),
        (
            "shift-gettimeofday-us:-2000000",
            "gettimeofday",
            "within syscall bracket",
        ),
        ("shift-time-s:2", "time", "within syscall bracket"),
        (
            "getres-monotonic-ns:1",
            "clock_getres(MONOTONIC)",
            "equals syscall",
        ),
        ("getcpu-plus:1", "getcpu on CPU ", "pinned CPU reported"),
        (
            "accept-invalid",
            "clock_gettime(id 1000)",
            "EINVAL like the kernel",
        ),
    ];
    // Subjects are matched as prefixes: the getcpu row names whichever CPU the single
    // worker was pinned to.
    for (fault, subject, check) in cases {
        let (c, out, err) = parts(&run(&[
            "check",
            "--duration",
            "0.1",
            "--threads",
            "1",
            "--fault",
            fault,
        ]));
        assert_eq!(c, 1, "{fault} was not caught\n{out}\n{err}");
        assert!(
            out.starts_with("FAIL: "),
            "{fault}: the result comes first\n{out}"
        );
        assert!(!out.contains("| PASS"), "{fault}: only the failures\n{out}");
        let cells = |l: &str| {
            l.split('|')
                .map(str::trim)
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let row = out
            .lines()
            .map(cells)
            .find(|c| c.len() > 3 && c[2].starts_with(subject) && c[3] == check)
            .unwrap_or_else(|| panic!("{fault}: no row for {subject} {check}\n{out}"));
        assert_eq!(row[1], "FAIL", "{fault}: {row:?}");
    }
}

#[test]
fn bad_fault_spec_is_an_error() {
    let (c, _, err) = parts(&run_env(
        &["check", "--duration", "0.1"],
        &[("VDSOTIME_FAULT", "explode")],
    ));
    assert_eq!(c, 1);
    assert!(err.contains("unknown fault"), "{err}");
}
