//! Output helpers shared by the subcommands: tables, numbers, JSON, progress.

use std::io::{IsTerminal, Write};

use comfy_table::{presets, CellAlignment, Table};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// What a subcommand returns: the process exit code, or a message for stderr (exit 1).
pub type Exit = Result<i32, String>;

/// A Markdown-style table: readable in a terminal and pastable into a README.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::ASCII_MARKDOWN);
    t.set_header(header.iter().copied());
    t
}

/// Right-aligns every column but the first (numbers).
pub fn align_numbers(t: &mut Table) {
    let n = t.column_count();
    for i in 1..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// Nanoseconds with precision that suits their size: 2.41, 23.1, 231.
pub fn ns(v: f64) -> String {
    if !v.is_finite() {
        "-".to_string()
    } else if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A ratio such as a speed-up: 9.8x.
pub fn ratio(v: f64) -> String {
    if v.is_finite() {
        if v < 10.0 {
            format!("{v:.2}x")
        } else {
            format!("{v:.1}x")
        }
    } else {
        "-".to_string()
    }
}

/// A ratio to a reference, precise enough to tell 1.004 from 1.012: three decimals
/// below 10, one above.
pub fn ratio_plain(v: f64) -> String {
    if !v.is_finite() {
        "-".to_string()
    } else if v < 10.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.1}")
    }
}

/// A median ratio with its interquartile range: `1.004 [0.998-1.011]`.
pub fn ratio_spread(median: f64, q1: f64, q3: f64) -> String {
    format!(
        "{} [{}-{}]",
        ratio_plain(median),
        ratio_plain(q1),
        ratio_plain(q3)
    )
}

/// Writes a value as pretty JSON on stdout.
pub fn print_json<T: Serialize>(v: &T) -> Result<(), String> {
    let s = serde_json::to_string_pretty(v).map_err(|e| format!("JSON: {e}"))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{s}").map_err(|e| format!("stdout: {e}"))
}

/// Set by a command that says in its own words what it measures (`top`): no bar then.
pub static NO_PROGRESS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A progress bar on stderr, hidden unless stderr is a terminal (so logs and
/// pipes stay clean) or [`NO_PROGRESS`] is set.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() || NO_PROGRESS.load(std::sync::atomic::Ordering::Relaxed) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    let style = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    pb.set_style(style);
    pb.set_prefix(what.to_string());
    pb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(ns(2.414), "2.41");
        assert_eq!(ns(23.14), "23.1");
        assert_eq!(ns(231.4), "231");
        assert_eq!(ns(f64::NAN), "-");
        assert_eq!(ratio(9.81), "9.81x");
        assert_eq!(ratio(98.1), "98.1x");
        assert_eq!(ratio_spread(1.0041, 0.998, 1.0114), "1.004 [0.998-1.011]");
        assert_eq!(ratio_spread(45.31, 44.0, 47.0), "45.3 [44.0-47.0]");
    }
}
