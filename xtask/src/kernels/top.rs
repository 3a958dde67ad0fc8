//! `vdsotime top` inside a machine whose clocksource the vDSO cannot read: the init's
//! `vm-top-watch` (xtask/vm-init/src/timeloop.rs) starts processes that read the time
//! through the C library's `clock_gettime`, prints `loop PID CLOCK HZ` for each, and runs
//! `vdsotime top --once --format json` while they read. The judge holds `top` to what the
//! machine itself says (`vm-truth`'s seccomp probe: clock_gettime entered the kernel):
//! every process started is listed, with a `clock_gettime` row for its clock, each of its
//! rows with reason `clocksource` and a fix that points to `vdsotime doctor`; and no
//! other process's reading of a clock the vDSO serves is given a later reason (the
//! clocksource applies to every process). An empty document, a failed run or a loop that
//! ended before `top` did is a failure.

pub mod count;
pub mod overhead;

use super::json::{self, Value};
use super::judge::Truth;

/// The run the plan adds: label, timeout (s), argv.
pub const RUN: (&str, u64, &[&str]) = (
    "top",
    180,
    &[
        "/bin/vm-top-watch",
        "/bin/vdsotime",
        "top",
        "--once",
        "--duration",
        "5",
        "--format",
        "json",
    ],
);

/// The clocks the vDSO serves by reading the clocksource.
const READ_FROM_CLOCKSOURCE: &[&str] = &[
    "CLOCK_REALTIME",
    "CLOCK_MONOTONIC",
    "CLOCK_MONOTONIC_RAW",
    "CLOCK_BOOTTIME",
    "CLOCK_TAI",
];

/// The system calls that read the clocksource for a clock above (not `time`: the vDSO's
/// time() returns the last tick's seconds under any clocksource).
const CLOCK_READS: &[&str] = &["clock_gettime", "clock_gettime64", "gettimeofday"];

/// A process `vm-top-watch` started.
#[derive(Debug, PartialEq)]
struct Loop {
    pid: u32,
    clock: String,
    hz: u32,
}

/// `loop PID CLOCK HZ` lines.
fn loops(lines: &[String]) -> Vec<Loop> {
    lines
        .iter()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["loop", pid, clock, hz] => Some(Loop {
                pid: pid.parse().ok()?,
                clock: clock.to_string(),
                hz: hz.parse().ok()?,
            }),
            _ => None,
        })
        .collect()
}

/// Judges the `top` run: its output lines and exit code, against the machine's reading.
/// `Ok` is the report line; `Err` every reason the run is wrong.
pub fn judge(
    lines: &[String],
    exit: Option<i32>,
    truth: Option<&Truth>,
) -> Result<String, Vec<String>> {
    let mut failures = Vec::new();
    match truth {
        Some(t) if t.vdso && t.probe == "kernel" => {}
        Some(t) => failures.push(format!(
            "the machine's clock_gettime did not enter the kernel (probe {:?}, vDSO {}): no \
             clocksource for top to blame",
            t.probe,
            if t.vdso { "mapped" } else { "absent" }
        )),
        None => failures.push("no reading of the machine".to_string()),
    }
    if exit != Some(0) {
        failures.push(format!("exit status {exit:?}"));
    }
    for l in lines.iter().filter(|l| l.contains("ended early")) {
        failures.push(l.clone());
    }
    let started = loops(lines);
    if started.is_empty() {
        failures.push("no time-reading process was started".to_string());
    }
    let doc = match json::document(lines) {
        Ok(d) => d,
        Err(e) => {
            failures.push(format!("top --format json: {e}"));
            return Err(failures);
        }
    };
    let rows = doc.get("rows").map_or(&[][..], Value::as_array);
    if rows.is_empty() {
        failures.push("top listed no process".to_string());
    }
    let pid = |r: &Value| r.get("pid").and_then(Value::as_f64);
    let mut listed = Vec::new();
    for l in &started {
        let mine: Vec<&Value> = rows
            .iter()
            .filter(|r| pid(r) == Some(f64::from(l.pid)))
            .collect();
        let read = mine.iter().find(|r| {
            r.str_at("syscall").starts_with("clock_gettime")
                && r.str_at("clock") == l.clock
                && r.get("calls").and_then(Value::as_f64).unwrap_or(0.0) > 0.0
        });
        match read {
            Some(r) => listed.push(format!(
                "{} pid {} {} {} {:.0}/s (paced at {}/s)",
                r.str_at("comm"),
                l.pid,
                r.str_at("syscall"),
                l.clock,
                r.get("per_second").and_then(Value::as_f64).unwrap_or(0.0),
                l.hz
            )),
            None => failures.push(format!(
                "pid {} (clock_gettime {}) not listed",
                l.pid, l.clock
            )),
        }
        for r in mine.into_iter().filter(|r| reads_clocksource(r)) {
            failures.extend(clocksource_row(r));
        }
    }
    // Every other process that read a clock the vDSO would serve from the clocksource.
    let others: Vec<&Value> = rows
        .iter()
        .filter(|r| !started.iter().any(|l| pid(r) == Some(f64::from(l.pid))))
        .filter(|r| reads_clocksource(r))
        .collect();
    for r in &others {
        failures.extend(clocksource_row(r));
    }
    if failures.is_empty() {
        Ok(format!(
            "top: every process started listed with reason clocksource: {}; {} other row(s) \
             reading the clocksource's clocks, also clocksource",
            listed.join(", "),
            others.len()
        ))
    } else {
        Err(failures)
    }
}

/// Whether row `r` is a read of a clock the vDSO would serve from the clocksource (a
/// clock call of such a clock, or gettimeofday, which has none): the rows the
/// clocksource reason must explain, whoever made them.
fn reads_clocksource(r: &Value) -> bool {
    CLOCK_READS.contains(&r.str_at("syscall"))
        && (r.get("clock") == Some(&Value::Null)
            || READ_FROM_CLOCKSOURCE.contains(&r.str_at("clock")))
}

/// What is wrong with a row that should say `clocksource`.
fn clocksource_row(r: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let what = || {
        format!(
            "{} pid {} {} {}",
            r.str_at("comm"),
            r.get("pid").and_then(Value::as_f64).unwrap_or(-1.0),
            r.str_at("syscall"),
            r.str_at("clock")
        )
    };
    if r.str_at("reason") != "clocksource" {
        out.push(format!(
            "{}: reason {:?}, not clocksource",
            what(),
            r.str_at("reason")
        ));
    } else if !r.str_at("fix").contains("vdsotime doctor") {
        out.push(format!(
            "{}: the fix does not point to vdsotime doctor",
            what()
        ));
    }
    out
}

#[cfg(test)]
mod tests;
