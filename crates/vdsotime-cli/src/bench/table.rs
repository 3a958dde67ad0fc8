//! The text output of `bench` and the summary: the method line, the ns table, the
//! ratio table and the peers table. Markdown, so a run pastes into the README as is.

use vdsotime::Function;

use crate::measure::paths::Impl;
use crate::output;
use crate::report::{BenchReport, Measurement};

/// Prints the machine line and the method line.
pub fn print_header(r: &BenchReport) {
    let h = &r.header;
    println!(
        "{} | kernel {} ({}) | clocksource {}{}",
        h.cpu_model.as_deref().unwrap_or("unknown CPU"),
        h.kernel,
        h.machine,
        h.clocksource.as_deref().unwrap_or("unknown"),
        h.hypervisor
            .as_deref()
            .map(|v| format!(" | VM: {v}"))
            .unwrap_or_default()
    );
    let trial = match h.trial_us {
        Some(us) => format!("trials of ~{us:.0} µs each"),
        None => {
            let calls = r.measurements.iter().map(|m| m.sample.calls).max();
            format!("trials of {} calls", calls.unwrap_or(0))
        }
    };
    println!(
        "interleaved: {} rounds, each one trial of every path of a row in rotated order, {trial}{}; every ns figure includes {} ns per call for the timing loop itself (the loop timed with no call in it)",
        h.trials,
        if h.threads > 1 { format!(", {} threads at once", h.threads) } else { String::new() },
        output::ns(h.loop_overhead_ns)
    );
}

/// The paths of `impls` that have at least one cell.
fn columns(r: &BenchReport, impls: &[Impl]) -> Vec<Impl> {
    let has = |imp: Impl| r.measurements.iter().any(|m| m.path == imp.name());
    impls.iter().copied().filter(|&i| has(i)).collect()
}

/// A cell's median ratio with its interquartile range, or `-`.
fn spread(m: Option<&Measurement>) -> String {
    let s = m.map(|m| (m.sample.ratio_to_raw, m.sample.ratio_q1, m.sample.ratio_q3));
    match s {
        Some((Some(med), Some(q1), Some(q3))) => output::ratio_spread(med, q1, q3),
        _ => "-".into(),
    }
}

/// Prints the ns table: fastest trial per path, the speed-up over the syscall, the
/// median ratio of vdsotime to the raw symbol and the path vdsotime takes.
pub fn print_ns(r: &BenchReport, rows: &[Function], impls: &[Impl]) {
    let threads = r.header.threads;
    let cols = columns(r, impls);
    let mut header: Vec<&str> = vec!["function"];
    header.extend(cols.iter().map(|i| i.name()));
    let speedup = cols.contains(&Impl::Vdsotime) && cols.contains(&Impl::Syscall);
    let overhead = cols.contains(&Impl::Vdsotime) && cols.contains(&Impl::VdsoRaw);
    if speedup {
        header.push("speed-up");
    }
    if overhead {
        header.push("vdsotime/raw");
    }
    if threads > 1 {
        header.push("vdsotime Mcalls/s");
    }
    header.push("vdsotime path");
    let mut t = output::table(&header);
    for &f in rows {
        let ns_of = |imp| r.get(f, imp).map(|m| m.sample.ns);
        let mut row = vec![crate::names::function_label(f)];
        for &imp in &cols {
            row.push(ns_of(imp).map_or_else(|| "-".into(), output::ns));
        }
        let v = r.get(f, Impl::Vdsotime);
        if speedup {
            row.push(match (ns_of(Impl::Vdsotime), ns_of(Impl::Syscall)) {
                (Some(v), Some(s)) => output::ratio(s / v),
                _ => "-".into(),
            });
        }
        if overhead {
            row.push(
                v.and_then(|m| m.sample.ratio_to_raw)
                    .map_or_else(|| "-".into(), output::ratio_plain),
            );
        }
        if threads > 1 {
            let tp = v.map(|m| m.sample.calls_per_sec / 1e6);
            row.push(tp.map_or_else(|| "-".into(), |x| format!("{x:.1}")));
        }
        row.push(v.and_then(|m| m.route.clone()).unwrap_or_default());
        t.add_row(row);
    }
    output::align_numbers(&mut t);
    println!("{t}");
}

/// Prints the ratio table: per path, the median over rounds of its trial divided by
/// vdso-raw's trial of the same round, with the interquartile range.
pub fn print_ratios(r: &BenchReport, rows: &[Function], impls: &[Impl]) {
    let cols: Vec<Impl> = columns(r, impls)
        .into_iter()
        .filter(|&i| i != Impl::VdsoRaw)
        .collect();
    let names: Vec<String> = cols.iter().map(|i| format!("{}/raw", i.name())).collect();
    let mut header: Vec<&str> = vec!["function"];
    header.extend(names.iter().map(String::as_str));
    let mut t = output::table(&header);
    for &f in rows {
        let mut row = vec![crate::names::function_label(f)];
        row.extend(cols.iter().map(|&imp| spread(r.get(f, imp))));
        t.add_row(row);
    }
    output::align_numbers(&mut t);
    println!(
        "ratio to vdso-raw (the vDSO symbol through a bare pointer), median [q1-q3] over {} rounds:",
        r.header.trials
    );
    println!("{t}");
}

/// The library functions' names; every other measurement is a peer.
const LIBRARY: [&str; 5] = [
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "getcpu",
];

/// Prints the peers table, each peer against the raw vDSO reading of its clock.
pub fn print_peers(r: &BenchReport) {
    let peers: Vec<&Measurement> = r
        .measurements
        .iter()
        .filter(|m| !LIBRARY.contains(&m.function.as_str()))
        .collect();
    if peers.is_empty() {
        return;
    }
    let mut t = output::table(&[
        "peer",
        "clock",
        "ns/call",
        "ratio to raw clock_gettime of the clock",
        "reads via",
    ]);
    for m in peers {
        t.add_row(vec![
            m.function.clone(),
            m.clock
                .clone()
                .unwrap_or_else(|| "TSC (vs MONOTONIC)".into()),
            output::ns(m.sample.ns),
            spread(Some(m)),
            m.route.clone().unwrap_or_default(),
        ]);
    }
    output::align_numbers(&mut t);
    println!();
    println!("{t}");
}

/// Prints what the ns table's columns mean: under that table, wherever it is shown.
pub fn print_ns_legend() {
    println!(
        "ns: per call, each path's fastest trial. speed-up: syscall ns / vdsotime ns. vdsotime/raw: vdsotime's trial over vdso-raw's (the vDSO symbol called through a bare pointer) in the same round, median over rounds; 1.000 = no cost over the bare symbol. vdsotime path: where the library sends the call (symbol@version, the rseq area, or syscall). getcpu(): libc and rustix time sched_getcpu() (CPU only), the other paths getcpu (CPU and node). vdsotime/raw below 1.000: vdsotime did less than the bare symbol, as for getcpu(), which it reads from glibc's rseq area without calling the vDSO (vdsotime path: rseq area); or, on the rows of a few ns (time(), the coarse clocks), one CPU cycle is a tenth of the call, and where each timing loop lies in memory moves a ratio by that much (the same instructions at two addresses measured up to 14% apart: docs/performance.md, How it is measured)."
    );
}

/// Prints how to read the ratio table and the rows' clock ids.
pub fn print_legend() {
    println!(
        "x/raw: x's trial over vdso-raw's in the same round, median [q1-q3] over rounds.\n\
         id 12 is the first invalid clock id; AUX0 is CLOCK_AUX0 (id 16, the first auxiliary clock, Linux 6.17+): EINVAL from a kernel without auxiliary clocks, ENODEV while that clock is disabled, served like the other clocks once enabled."
    );
}
