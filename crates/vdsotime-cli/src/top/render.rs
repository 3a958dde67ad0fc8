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
    /// With `--pid`: what the count of its threads still misses (set from
    /// [`crate::top::perf::Tracer::thread_limit`]).
    pub thread_limit: Option<&'static str>,
    /// With `--pid`: whether that process had exited by the end.
    pub pid_exited: Option<bool>,
    /// One row per (process, system call, clock), most calls first.
    pub rows: &'a [Row],
}

impl<'a> Document<'a> {
    /// The document of `rows` over `seconds`, as `tally` counted them with `chosen`.
    pub fn new(
        rows: &'a [Row],
        seconds: f64,
        tally: &Tally,
        chosen: &'a Chosen,
        host: &'a Host,
    ) -> Self {
        let mut doc = Document::of(rows, seconds, tally.only, tally.lost, host);
        doc.backend = chosen.name;
        doc.backend_reason = chosen.reason.as_deref();
        doc.thread_limit = chosen.source.thread_limit();
        doc
    }

    /// The document of `rows` over `seconds` of `pid` (if one), `lost` calls uncounted,
    /// counted by perf with nothing more to say.
    fn of(rows: &'a [Row], seconds: f64, pid: Option<u32>, lost: u64, host: &'a Host) -> Self {
        Document {
            interval_seconds: seconds,
            pid,
            clocksource: host.clocksource.as_deref(),
            // An empty sum of floats is -0.0: + 0.0 makes it 0.
            total_per_second: rows.iter().map(|r| r.per_second).sum::<f64>() + 0.0,
            total_wasted_cpu: rows.iter().filter_map(|r| r.wasted_cpu).sum::<f64>() + 0.0,
            backend: "perf",
            backend_reason: None,
            lost_samples: lost,
            thread_limit: None,
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

/// The lines the text fills when printed once: a 24-line terminal's.
pub const SCREEN_LINES: usize = 24;

/// The distinct (reason, fix) pairs of `rows`, in order.
fn fixes(rows: &[Row]) -> Vec<(&str, &str)> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !seen.contains(&(r.reason, r.fix.as_str())) {
            seen.push((r.reason, &r.fix));
        }
    }
    seen
}

/// The totals line, the table and each distinct fix once, in at most `lines` lines
/// (at least 3 rows are shown): [`SCREEN_LINES`] when printed once, the terminal's height
/// in the live view.
pub fn text(doc: &Document, lines: usize) -> String {
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
    if let Some(limit) = doc.thread_limit {
        out += &format!("Note: {limit}.\n");
    }
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
    if let (Some(pid), Some(true)) = (doc.pid, doc.pid_exited) {
        out += &format!("Process {pid} exited during the interval.\n");
    }
    if let Some(first) = doc.rows.iter().find_map(|r| r.unknown.first()) {
        out += &format!("Some facts could not be read ({first}): --json lists them per row.\n");
    }
    if doc.rows.is_empty() {
        out += "No process entered the kernel for the time.\n";
        return out;
    }
    // Lines besides the rows: those above, the table's two header lines, the "more"
    // line, a blank one, the fixes' legend and the fixes.
    let above = out.lines().count() + 2 + 1 + 2;
    let mut max_rows = lines.saturating_sub(above).max(3);
    let mut shown = fixes(&doc.rows[..max_rows.min(doc.rows.len())]);
    while max_rows > 3 && above + max_rows + shown.len() > lines {
        max_rows -= 1;
        shown = fixes(&doc.rows[..max_rows.min(doc.rows.len())]);
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
        let mut comm = r.comm.clone();
        if r.traced.is_some() {
            comm += " (traced)";
        }
        if r.exited {
            comm += " (exited)";
        }
        t.add_row(vec![
            r.pid.to_string(),
            comm,
            r.syscall.to_string(),
            r.clock.clone().unwrap_or_else(|| "-".into()),
            r.calls.to_string(),
            rate(r.per_second),
            if r.vdso_path {
                cpu(r.wasted_cpu)
            } else {
                "no vDSO path".into()
            },
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
    out += "\nFixes (each reason's evidence: vdsotime top --help; every row: --json):\n";
    for (reason, fix) in shown {
        out += &format!("  {reason}: {fix}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pid: u32, reason: &'static str) -> Row {
        Row {
            pid,
            comm: "x".into(),
            exe: None,
            syscall: "clock_gettime",
            clock: Some("CLOCK_MONOTONIC".into()),
            calls: 10,
            per_second: 10.0,
            reason,
            fix: format!("the fix for {reason}"),
            wasted_cpu: Some(0.0),
            syscall_ns: None,
            vdso_path: true,
            exited: false,
            traced: None,
            libc: None,
            unknown: Vec::new(),
        }
    }

    /// Printed once, the text fits a 24-line terminal however many rows and reasons.
    #[test]
    fn the_text_fits_a_24_line_terminal() {
        let reasons = [
            "cpu_time_clock",
            "direct_syscall",
            "static_binary",
            "clocksource",
            "x",
        ];
        let rows: Vec<Row> = (0..100).map(|i| row(i, reasons[i as usize % 5])).collect();
        let host = Host::default();
        let mut doc = Document::of(&rows, 1.0, Some(1), 3, &host);
        doc.thread_limit = Some(crate::top::perf::THREAD_LIMIT);
        let text = text(&doc, SCREEN_LINES);
        assert!(text.lines().count() <= SCREEN_LINES, "{text}");
        assert!(text.contains("more rows"), "{text}");
        let mut hidden = rows.clone();
        hidden[0].unknown = vec!["executable: not permitted: needs CAP_SYS_PTRACE".into()];
        let doc = Document::of(&hidden, 1.0, None, 0, &host);
        let text = text_of(&doc);
        assert!(
            text.contains("could not be read (executable: not permitted"),
            "{text}"
        );
        assert!(text.lines().count() <= SCREEN_LINES, "{text}");
        let doc = Document::of(&[], 1.0, None, 0, &host);
        assert!(
            text_of(&doc).starts_with("Time system calls over 1.0 s: 0.0 calls/s, wasting 0.00%")
        );
    }

    fn text_of(doc: &Document) -> String {
        text(doc, SCREEN_LINES)
    }
}
