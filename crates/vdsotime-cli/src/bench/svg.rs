//! `bench --svg`: a horizontal bar chart, log scale, one group per function/clock and
//! one colour per path. Hand-written SVG: no font or bitmap libraries needed.

use std::fmt::Write as _;
use std::path::Path;

use crate::output;
use crate::report::{BenchReport, Measurement};

const LABEL_W: f64 = 290.0;
const PLOT_W: f64 = 560.0;
const VALUE_W: f64 = 70.0;
const BAR_H: f64 = 11.0;
const BAR_GAP: f64 = 2.0;
const GROUP_GAP: f64 = 9.0;
const TOP: f64 = 78.0;

/// The colour of a path: the four library paths first, then peers.
fn colour(path: &str) -> &'static str {
    match path {
        "vdsotime" => "#1b9e77",
        "vdso-raw" => "#7570b3",
        "libc" => "#d95f02",
        "syscall" => "#e7298a",
        "std" => "#66a61e",
        "rustix" => "#e6ab02",
        "quanta" => "#a6761d",
        "minstant" => "#1f78b4",
        "coarsetime" => "#b15928",
        _ => "#666666",
    }
}

/// Escapes text for XML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

fn group_label(m: &Measurement) -> String {
    match &m.clock {
        Some(c) if !m.function.contains("::") && !m.function.contains(' ') => {
            format!("{}({})", m.function, c.trim_start_matches("CLOCK_"))
        }
        _ => m.function.clone(),
    }
}

/// Groups measurements by function/clock, keeping first-seen order.
fn groups(r: &BenchReport) -> Vec<(String, Vec<&Measurement>)> {
    let mut out: Vec<(String, Vec<&Measurement>)> = Vec::new();
    for m in &r.measurements {
        let key = group_label(m);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(m),
            None => out.push((key, vec![m])),
        }
    }
    out
}

/// Renders the chart.
pub fn render(r: &BenchReport) -> String {
    let good: Vec<f64> = r
        .measurements
        .iter()
        .map(|m| m.sample.ns)
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo_exp = good
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .log10()
        .floor()
        .min(0.0);
    let hi_exp = good
        .iter()
        .copied()
        .fold(1.0, f64::max)
        .log10()
        .ceil()
        .max(lo_exp + 1.0);
    let x_of = |ns: f64| {
        let v = ns.max(10f64.powf(lo_exp)).log10();
        (v - lo_exp) / (hi_exp - lo_exp) * PLOT_W
    };
    let gs = groups(r);
    let bars: usize = gs.iter().map(|(_, v)| v.len()).sum();
    let height = TOP + bars as f64 * (BAR_H + BAR_GAP) + gs.len() as f64 * GROUP_GAP + 40.0;
    let width = LABEL_W + PLOT_W + VALUE_W + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let h = &r.header;
    let title = format!(
        "ns per call, log scale (fastest of {} interleaved trials{}) - {} - kernel {} - clocksource {}",
        h.trials,
        if h.threads > 1 {
            format!(", {} threads", h.threads)
        } else {
            String::new()
        },
        h.cpu_model.as_deref().unwrap_or("unknown CPU"),
        h.kernel,
        h.clocksource.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(
        s,
        r#"<text x="10" y="18" font-size="13" font-weight="bold">{}</text>"#,
        escape(&title)
    );
    // Legend: every path that appears, in order of first appearance.
    let mut paths: Vec<&str> = Vec::new();
    for m in &r.measurements {
        if !paths.contains(&m.path.as_str()) {
            paths.push(&m.path);
        }
    }
    let mut lx = 10.0;
    for p in &paths {
        let _ = writeln!(
            s,
            r#"<rect class="legend" x="{lx:.0}" y="30" width="12" height="12" fill="{}"/><text x="{:.0}" y="40">{}</text>"#,
            colour(p),
            lx + 16.0,
            escape(p)
        );
        lx += 24.0 + 7.0 * p.len() as f64;
    }
    // Decade grid lines.
    let plot_bottom = height - 30.0;
    let mut e = lo_exp;
    while e <= hi_exp + 1e-9 {
        let x = LABEL_W + x_of(10f64.powf(e));
        let label = match e as i32 {
            n if n < 3 => format!("{} ns", 10f64.powf(e)),
            n if n < 6 => format!("{} µs", 10f64.powf(e - 3.0)),
            _ => format!("{} ms", 10f64.powf(e - 6.0)),
        };
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{:.0}" x2="{x:.1}" y2="{plot_bottom:.0}" stroke="#ccc"/><text x="{x:.1}" y="{:.0}" text-anchor="middle" fill="#555">{}</text>"##,
            TOP - 12.0,
            plot_bottom + 14.0,
            escape(&label)
        );
        e += 1.0;
    }
    let mut y = TOP;
    for (label, ms) in &gs {
        let block = ms.len() as f64 * (BAR_H + BAR_GAP);
        let _ = writeln!(
            s,
            r#"<text x="{:.0}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL_W - 8.0,
            y + block / 2.0 + 3.0,
            escape(label)
        );
        for m in ms {
            let w = x_of(m.sample.ns).max(1.0);
            let _ = writeln!(
                s,
                r#"<rect class="bar" x="{LABEL_W:.0}" y="{y:.1}" width="{w:.1}" height="{BAR_H:.0}" fill="{}" data-function="{}" data-clock="{}" data-path="{}" data-ns="{}"><title>{} via {}: {} ns</title></rect>"#,
                colour(&m.path),
                escape(&m.function),
                escape(m.clock.as_deref().unwrap_or("")),
                escape(&m.path),
                m.sample.ns,
                escape(label),
                escape(&m.path),
                output::ns(m.sample.ns)
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="9">{} {}</text>"#,
                LABEL_W + w + 4.0,
                y + BAR_H - 2.0,
                output::ns(m.sample.ns),
                escape(&m.path)
            );
            y += BAR_H + BAR_GAP;
        }
        y += GROUP_GAP;
    }
    s.push_str("</svg>\n");
    s
}

/// Writes the chart to `path`.
pub fn write_file(path: &Path, r: &BenchReport) -> Result<(), String> {
    std::fs::write(path, render(r)).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(escape(r#"a<b>&"c'"#), "a&lt;b&gt;&amp;&quot;c&apos;");
    }
}
