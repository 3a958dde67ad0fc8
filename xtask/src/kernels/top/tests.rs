use super::*;

fn truth(probe: &str) -> Truth {
    Truth {
        current: "hpet".into(),
        available: vec!["tsc".into(), "hpet".into(), "acpi_pm".into()],
        vdso: true,
        probe: probe.into(),
        klog: Vec::new(),
    }
}

fn row(pid: u32, comm: &str, syscall: &str, clock: &str, reason: &str) -> String {
    let clock = if clock.is_empty() {
        "null".to_string()
    } else {
        format!("{clock:?}")
    };
    format!(
        r#"{{"pid": {pid}, "comm": "{comm}", "exe": "/bin/{comm}", "syscall": "{syscall}",
        "clock": {clock}, "calls": 900, "per_second": 180.0, "reason": "{reason}",
        "fix": "the clocksource hpet cannot be read by the vDSO: run `vdsotime doctor` for the cause and the fix",
        "wasted_cpu": 0.01, "exited": false}}"#
    )
}

/// What `vm-top-watch` prints: its loop lines, then top's document with `rows`.
fn output(rows: &[String]) -> Vec<String> {
    let mut lines = vec![
        "loop 41 CLOCK_MONOTONIC 200".to_string(),
        "loop 42 CLOCK_REALTIME 50".to_string(),
    ];
    let doc = format!(
        r#"{{"interval_seconds": 5.0, "pid": null, "clocksource": "hpet",
        "total_per_second": 400.0, "total_wasted_cpu": 0.02, "lost_samples": 0,
        "pid_exited": null, "rows": [{}]}}"#,
        rows.join(",")
    );
    lines.extend(doc.lines().map(str::to_string));
    lines
}

fn good_rows() -> Vec<String> {
    vec![
        row(
            41,
            "vm-timeloop",
            "clock_gettime",
            "CLOCK_MONOTONIC",
            "clocksource",
        ),
        row(
            42,
            "vm-timeloop",
            "clock_gettime",
            "CLOCK_REALTIME",
            "clocksource",
        ),
        row(1, "init", "clock_gettime", "CLOCK_MONOTONIC", "clocksource"),
        // A CPU-time clock keeps its own reason.
        row(
            1,
            "init",
            "clock_gettime",
            "CLOCK_PROCESS_CPUTIME_ID",
            "cpu_time_clock",
        ),
    ]
}

#[test]
fn every_loop_listed_with_the_clocksource_reason_passes() {
    let line = judge(&output(&good_rows()), Some(0), Some(&truth("kernel"))).unwrap();
    assert!(
        line.contains("vm-timeloop pid 41 clock_gettime CLOCK_MONOTONIC 180/s"),
        "{line}"
    );
    assert!(line.contains("pid 42"), "{line}");
    assert!(line.contains("1 other row"), "{line}");
}

#[test]
fn a_loop_missing_from_tops_output_fails() {
    let mut rows = good_rows();
    rows.remove(1);
    let e = judge(&output(&rows), Some(0), Some(&truth("kernel"))).unwrap_err();
    assert_eq!(e, ["pid 42 (clock_gettime CLOCK_REALTIME) not listed"]);
}

#[test]
fn an_empty_or_failed_run_fails() {
    let e = judge(&output(&[]), Some(0), Some(&truth("kernel"))).unwrap_err();
    assert!(e.contains(&"top listed no process".to_string()), "{e:?}");
    assert!(e.iter().filter(|f| f.ends_with("not listed")).count() == 2);
    let lines = vec![
        "loop 41 CLOCK_MONOTONIC 200".to_string(),
        "vdsotime top: needs root or CAP_PERFMON".to_string(),
    ];
    let e = judge(&lines, Some(77), Some(&truth("kernel"))).unwrap_err();
    assert_eq!(
        e,
        [
            "exit status Some(77)",
            "top --format json: no JSON document in the output"
        ]
    );
    let e = judge(&output(&good_rows())[2..], Some(0), Some(&truth("kernel"))).unwrap_err();
    assert_eq!(e, ["no time-reading process was started"]);
}

#[test]
fn another_reason_or_fix_fails() {
    let mut rows = good_rows();
    rows[0] = row(
        41,
        "vm-timeloop",
        "clock_gettime",
        "CLOCK_MONOTONIC",
        "static_binary",
    );
    rows[2] = row(1, "init", "gettimeofday", "", "direct_syscall");
    let e = judge(&output(&rows), Some(0), Some(&truth("kernel"))).unwrap_err();
    assert_eq!(
        e,
        [
            "vm-timeloop pid 41 clock_gettime CLOCK_MONOTONIC: reason \"static_binary\", not clocksource",
            "init pid 1 gettimeofday : reason \"direct_syscall\", not clocksource",
        ]
    );
    let rows: Vec<String> = good_rows()
        .iter()
        .map(|r| r.replace("vdsotime doctor", "the manual"))
        .collect();
    let e = judge(&output(&rows), Some(0), Some(&truth("kernel"))).unwrap_err();
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(e
        .iter()
        .all(|f| f.ends_with("does not point to vdsotime doctor")));
}

#[test]
fn a_machine_whose_vdso_reads_the_clocksource_or_a_loop_that_died_fails() {
    let e = judge(&output(&good_rows()), Some(0), Some(&truth("vdso"))).unwrap_err();
    assert!(e[0].contains("did not enter the kernel"), "{e:?}");
    assert!(judge(&output(&good_rows()), Some(0), None).is_err());
    let mut lines = output(&good_rows());
    lines.push("loop 41 ended early: exit status: 1".to_string());
    let e = judge(&lines, Some(0), Some(&truth("kernel"))).unwrap_err();
    assert_eq!(e, ["loop 41 ended early: exit status: 1"]);
}
