//! The rows as a table for people and as the `--format json` document.

use serde::Serialize;

use crate::output;
use crate::top::host::Host;
use crate::top::source::Chosen;
use crate::top::tally::{Row, Tally};

/// The `--format json` document.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// Seconds watched.
    pub interval_seconds: f64,
    /// `--pid`, if given.
    pub pid: Option<u32>,
    /// The current clocksource.
    pub clocksource: Option<&'a str>,
    /// Calls per second of every row.
    pub total_per_second: f64,
    /// CPU seconds per second all rows waste against the vDSO.
    pub total_wasted_cpu: f64,
    /// How the calls were counted: `tracepoint` (BPF in the kernel) or `perf`.
    pub backend: &'static str,
    /// Why that backend and not a better one (`null`: the best there is).
    pub backend_reason: Option<&'a str>,
    /// Calls not counted: samples the kernel dropped (perf's buffers full) or calls the
    /// kernel's full map could not count (tracepoint): the counts are low by that many.
    pub lost_samples: u64,
    /// Calls of tasks in PID namespaces below this one's, which have no id here and are
    /// not in the rows (tracepoint, run inside a PID namespace).
    pub calls_outside_pid_namespace: u64,
    /// With `--pid`: whether that process had exited by the end.
    pub pid_exited: Option<bool>,
    /// One row per (process, system call, clock), most calls first.
    pub rows: &'a [Row],
}

impl<'a> Document<'a> {
    /// The document of `rows` over `seconds`.
    pub fn new(
        rows: &'a [Row],
        seconds: f64,
        tally: &Tally,
        chosen: &'a Chosen,
        host: &'a Host,
    ) -> Self {
        let pid = tally.only;
        Document {
            interval_seconds: seconds,
            pid,
            clocksource: host.clocksource.as_deref(),
            total_per_second: rows.iter().map(|r| r.per_second).sum(),
            total_wasted_cpu: rows.iter().filter_map(|r| r.wasted_cpu).sum(),
            backend: chosen.name,
            backend_reason: chosen.reason.as_deref(),
            lost_samples: tally.lost,
            calls_outside_pid_namespace: tally.outside,
            pid_exited: pid.map(|p| !crate::top::process::alive(p)),
            rows,
        }
    }
}

/// Calls per second as a table cell: `2000`, `0.5`.
fn rate(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// CPU share as a cell: `0.41%`.
fn cpu(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.2}%", v * 100.0))
}

/// Rows the table shows; the JSON document has them all.
pub const TABLE_ROWS: usize = 30;

/// The table (at most `max_rows` rows, [`TABLE_ROWS`] when printed once), its totals
/// line, and each distinct fix once.
pub fn text(doc: &Document, max_rows: usize) -> String {
    let mut out = format!(
        "Time system calls over {:.1} s{}: {} calls/s, wasting {} of a CPU against the vDSO \
         (clocksource {}).\n",
        doc.interval_seconds,
        doc.pid.map(|p| format!(" of pid {p}")).unwrap_or_default(),
        rate(doc.total_per_second),
        cpu(Some(doc.total_wasted_cpu)),
        doc.clocksource.unwrap_or("unknown"),
    );
    out += &format!(
        "Counted by: {}{}.\n",
        doc.backend,
        doc.backend_reason
            .map(|r| format!(" ({r})"))
            .unwrap_or_default()
    );
    if doc.lost_samples > 0 {
        let how = if doc.backend == "perf" {
            "the kernel dropped them, buffers full"
        } else {
            "the kernel's map was full"
        };
        out += &format!(
            "{} calls were not counted ({how}): the counts are that much low.\n",
            doc.lost_samples
        );
    }
    if doc.calls_outside_pid_namespace > 0 {
        out += &format!(
            "{} calls came from processes in PID namespaces below this one, which have no \
             id here; they are not in the table.\n",
            doc.calls_outside_pid_namespace
        );
    }
    if let (Some(pid), Some(true)) = (doc.pid, doc.pid_exited) {
        out += &format!("Process {pid} exited during the interval.\n");
    }
    if doc.rows.is_empty() {
        out += "No process entered the kernel for the time.\n";
        return out;
    }
    let mut t = output::table(&[
        "PID",
        "COMM",
        "SYSCALL",
        "CLOCK",
        "CALLS",
        "CALLS/S",
        "WASTED CPU",
        "REASON",
    ]);
    for r in doc.rows.iter().take(max_rows) {
        let comm = if r.exited {
            format!("{} (exited)", r.comm)
        } else {
            r.comm.clone()
        };
        t.add_row(vec![
            r.pid.to_string(),
            comm,
            r.syscall.to_string(),
            r.clock.clone().unwrap_or_else(|| "-".into()),
            r.calls.to_string(),
            rate(r.per_second),
            cpu(r.wasted_cpu),
            r.reason.to_string(),
        ]);
    }
    out += &format!("{t}\n");
    if doc.rows.len() > max_rows {
        out += &format!(
            "... and {} more rows with fewer calls (--json lists every row).\n",
            doc.rows.len() - max_rows
        );
    }
    out += "\nFixes:\n";
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for r in doc.rows.iter().take(max_rows) {
        if !seen.contains(&(r.reason, r.fix.as_str())) {
            seen.push((r.reason, &r.fix));
            out += &format!("  {}: {}\n", r.reason, r.fix);
        }
    }
    out
}
