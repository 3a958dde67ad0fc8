//! The input series of the alert rules' unit tests (fleet/vdsotime.rules.test.yml) are
//! the doctor's own output: this test runs `vdsotime doctor --profile P --format
//! prometheus` for each host's profiles, lays the series out minute by minute as
//! node_exporter would serve them (the `instance` and `job` labels added; a series that
//! leaves the file goes stale), and checks that the file holds exactly that between its
//! `generated` markers. With `VDSOTIME_BLESS=1` it writes it there instead. So the rules
//! are tested against what the doctor writes today, and cannot drift from it.

use std::fmt::Write;

use crate::doctor::judge;
use crate::fleet::fleet_file;

/// Minutes the test file covers: samples at minutes 0 to `MINUTES`.
const MINUTES: usize = 90;

/// A replayed host: its profile phases (profile, first minute, end minute), and the
/// minute its doctor stops running, if it does.
struct Host {
    name: &'static str,
    phases: &'static [(&'static str, usize, usize)],
    stops: Option<usize>,
}

/// The hosts of the test file; see its header for what each must fire.
const HOSTS: &[Host] = &[
    Host {
        name: "healthy-host",
        phases: &[("healthy", 0, MINUTES)],
        stops: None,
    },
    Host {
        name: "hpet-host",
        phases: &[
            ("healthy", 0, 20),
            ("hpet", 20, 60),
            ("healthy", 60, MINUTES),
        ],
        stops: None,
    },
    Host {
        name: "acpi-pm-host",
        phases: &[("acpi_pm", 0, MINUTES)],
        stops: None,
    },
    Host {
        name: "watchdog-host",
        phases: &[("healthy", 0, 30), ("tsc_watchdog", 30, MINUTES)],
        stops: None,
    },
    Host {
        name: "unstable-host",
        phases: &[("tsc_unstable", 0, MINUTES)],
        stops: None,
    },
    Host {
        name: "no-vdso-host",
        phases: &[("no_vdso", 0, MINUTES)],
        stops: None,
    },
    Host {
        name: "stale-host",
        phases: &[("healthy", 0, MINUTES)],
        stops: Some(20),
    },
    Host {
        name: "blind-host",
        phases: &[("kernel_log_unreadable", 0, MINUTES)],
        stops: None,
    },
    Host {
        name: "absent-host",
        phases: &[],
        stops: None,
    },
];

/// One minute's sample of a series.
#[derive(Clone, Copy, PartialEq)]
enum Sample {
    Absent,
    Stale,
    Value(f64),
}

/// `values:` in promtool's expanding notation: runs of one value as `vxN`, arithmetic
/// runs as `a+bxN`, absent minutes as `_xN`.
fn expand(samples: &[Sample]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < samples.len() {
        match samples[i] {
            Sample::Absent => {
                let n = samples[i..]
                    .iter()
                    .take_while(|s| **s == Sample::Absent)
                    .count();
                out.push(format!("_x{n}"));
                i += n;
            }
            Sample::Stale => {
                out.push("stale".into());
                i += 1;
            }
            Sample::Value(v) => {
                let step = match samples.get(i + 1) {
                    Some(Sample::Value(w)) => w - v,
                    _ => 0.0,
                };
                let mut n = 1;
                while let Some(Sample::Value(w)) = samples.get(i + n) {
                    if *w != v + step * n as f64 {
                        break;
                    }
                    n += 1;
                }
                out.push(if n == 1 {
                    format!("{v}")
                } else if step == 0.0 {
                    format!("{v}x{}", n - 1)
                } else {
                    format!("{v}{step:+}x{}", n - 1)
                });
                i += n;
            }
        }
    }
    out.join(" ")
}

/// `name{labels}` of an exposition line with the host's labels added, and its value.
fn series(line: &str, host: &str) -> (String, f64) {
    let (id, value) = line.rsplit_once(' ').unwrap();
    let added = format!("instance=\"{host}:9100\",job=\"node\"");
    let id = match id.strip_suffix('}') {
        Some(head) => format!("{head},{added}}}"),
        None => format!("{id}{{{added}}}"),
    };
    (id, value.parse().unwrap())
}

/// The `input_series:` entries of every host, as the test file holds them.
fn generated() -> String {
    let mut out = String::new();
    for h in HOSTS {
        let mut names: Vec<String> = Vec::new();
        let mut rows: Vec<Vec<Sample>> = Vec::new();
        for &(profile, from, to) in h.phases {
            let (_, text) = judge(profile, &["--format", "prometheus"]);
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                if line.starts_with("vdsotime_doctor_last_run_timestamp_seconds ") {
                    continue;
                }
                let (id, v) = series(line, h.name);
                let row = match names.iter().position(|n| *n == id) {
                    Some(r) => r,
                    None => {
                        names.push(id);
                        rows.push(vec![Sample::Absent; MINUTES + 1]);
                        rows.len() - 1
                    }
                };
                for s in &mut rows[row][from..to.min(MINUTES + 1)] {
                    *s = Sample::Value(v);
                }
            }
        }
        // node_exporter stops serving a series the new file lacks: stale at once.
        for row in &mut rows {
            for m in 1..row.len() {
                if row[m] == Sample::Absent && matches!(row[m - 1], Sample::Value(_)) {
                    row[m] = Sample::Stale;
                }
            }
        }
        let phases: Vec<String> = h
            .phases
            .iter()
            .map(|(p, from, to)| format!("{p}.json from minute {from} to {to}"))
            .collect();
        let _ = writeln!(
            out,
            "      # {}: {}",
            h.name,
            if phases.is_empty() {
                "node_exporter only".into()
            } else {
                phases.join(", ")
            }
        );
        let up = format!("up{{instance=\"{}:9100\",job=\"node\"}}", h.name);
        let _ = writeln!(out, "      - series: '{up}'\n        values: '1x{MINUTES}'");
        for (id, row) in names.iter().zip(&rows) {
            let _ = writeln!(
                out,
                "      - series: '{id}'\n        values: '{}'",
                expand(row)
            );
        }
        if !h.phases.is_empty() {
            let stop = h.stops.unwrap_or(MINUTES + 1);
            let ts: Vec<Sample> = (0..=MINUTES)
                .map(|m| Sample::Value((m.min(stop) * 60) as f64))
                .collect();
            let _ = writeln!(
                out,
                "      - series: 'vdsotime_doctor_last_run_timestamp_seconds{{instance=\"{}:9100\",job=\"node\"}}'\n        values: '{}'",
                h.name,
                expand(&ts)
            );
        }
    }
    out
}

const BEGIN: &str =
    "      # generated:begin (tests/cli/fleet_rules.rs; VDSOTIME_BLESS=1 rewrites)\n";
const END: &str = "      # generated:end\n";

#[test]
fn the_rules_tests_replay_the_doctors_real_output() {
    let path = fleet_file("vdsotime.rules.test.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find(BEGIN).expect("the begin marker") + BEGIN.len();
    let end = text.find(END).expect("the end marker");
    let want = generated();
    if std::env::var_os("VDSOTIME_BLESS").is_some() {
        let new = format!("{}{want}{}", &text[..start], &text[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert!(
        text[start..end] == want,
        "{} is not the doctor's output: rerun with VDSOTIME_BLESS=1 and review the diff",
        path.display()
    );
}

#[test]
fn expanding_notation() {
    use Sample::*;
    assert_eq!(expand(&[Value(1.0), Value(1.0), Value(1.0)]), "1x2");
    assert_eq!(
        expand(&[Value(0.0), Value(60.0), Value(120.0), Value(120.0)]),
        "0+60x2 120"
    );
    assert_eq!(
        expand(&[Absent, Absent, Value(3.0), Stale, Absent]),
        "_x2 3 stale _x1"
    );
}
