//! `top --format prometheus`: the calls per second of the top N process names and a
//! total, so the number of series stays bounded however many processes there are.

use std::collections::BTreeMap;

use crate::doctor::prometheus::Writer;
use crate::top::render::Document;

/// The metrics of `doc`, with at most `top` process names (the rest only in the total).
pub fn render(doc: &Document, top: usize) -> String {
    let mut by_comm: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for r in doc.rows {
        let e = by_comm.entry(r.comm.as_str()).or_default();
        e.0 += r.per_second;
        e.1 += r.wasted_cpu.unwrap_or(0.0);
    }
    let mut ranked: Vec<(&str, (f64, f64))> = by_comm.into_iter().collect();
    ranked.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then(a.0.cmp(b.0)));
    ranked.truncate(top);
    let mut w = Writer { out: String::new() };
    w.family(
        "vdsotime_top_calls_per_second",
        "Time system calls per second over the interval, for the process names that made the most.",
    );
    for (comm, (rate, _)) in &ranked {
        w.sample("vdsotime_top_calls_per_second", &[("comm", comm)], *rate);
    }
    w.family(
        "vdsotime_top_wasted_cpu_ratio",
        "CPU seconds per second those calls cost over the vDSO, for the same process names.",
    );
    for (comm, (_, waste)) in &ranked {
        w.sample("vdsotime_top_wasted_cpu_ratio", &[("comm", comm)], *waste);
    }
    w.family(
        "vdsotime_top_all_calls_per_second",
        "Time system calls per second over the interval, of every process.",
    );
    w.sample(
        "vdsotime_top_all_calls_per_second",
        &[],
        doc.total_per_second,
    );
    w.family(
        "vdsotime_top_all_wasted_cpu_ratio",
        "CPU seconds per second every process's time system calls cost over the vDSO.",
    );
    w.sample(
        "vdsotime_top_all_wasted_cpu_ratio",
        &[],
        doc.total_wasted_cpu,
    );
    w.family(
        "vdsotime_top_lost_samples",
        "Calls not counted during the interval: perf's buffers or the BPF map were full.",
    );
    w.sample("vdsotime_top_lost_samples", &[], doc.lost_samples as f64);
    w.family(
        "vdsotime_top_backend_info",
        "How the calls were counted (backend: fentry, tracepoint or perf), and why not a better way.",
    );
    w.sample(
        "vdsotime_top_backend_info",
        &[
            ("backend", doc.backend),
            ("reason", doc.backend_reason.unwrap_or("")),
        ],
        1.0,
    );
    w.family("vdsotime_top_interval_seconds", "Seconds watched.");
    w.sample("vdsotime_top_interval_seconds", &[], doc.interval_seconds);
    w.out
}
