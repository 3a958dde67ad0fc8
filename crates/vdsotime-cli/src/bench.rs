//! `vdsotime bench`: the seed-style table of nanoseconds per call, every function
//! through every path, fastest of N trials of M calls.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use vdsotime::Function;

use crate::facts;
use crate::first_call::{self, FirstCall};
use crate::measure::{self, Plan, Sample};
use crate::names;
use crate::output::{self, Exit};
use crate::peers;
use crate::svg;
use crate::targets::{self, Impl};

/// Options of `bench`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  vdsotime bench                      full table, fastest of 7 trials
  vdsotime bench --trials 20 --calls 1000000
  vdsotime bench --peers --svg bench.svg
  vdsotime bench --threads 4          per-thread cost and total throughput
  vdsotime bench --json > bench.json")]
pub struct BenchArgs {
    /// Trials per cell; the fastest one is reported.
    #[arg(long, default_value_t = 7)]
    pub trials: u32,
    /// Calls per trial (default: chosen so each cell takes --duration).
    #[arg(long)]
    pub calls: Option<u64>,
    /// Seconds spent on each cell, all trials together, when --calls is not given.
    #[arg(long, default_value_t = 0.2)]
    pub duration: f64,
    /// Threads calling at once; reports per-thread cost and total throughput.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Also time std, rustix, quanta, minstant, coarsetime and vdsotime's Instant.
    #[arg(long)]
    pub peers: bool,
    /// Write a bar chart (log scale) of every measurement to FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Fresh processes spawned to time the library's first call (0: skip).
    #[arg(long, default_value_t = 20)]
    pub first_call_runs: usize,
}

impl BenchArgs {
    /// The measuring plan these options describe.
    pub fn plan(&self) -> Result<Plan, String> {
        if !(self.duration.is_finite() && self.duration > 0.0) {
            return Err("--duration must be a positive number of seconds".into());
        }
        Ok(Plan {
            trials: self.trials.max(1),
            calls: self.calls,
            budget: Duration::from_secs_f64(self.duration),
        })
    }
}

/// One measured cell, as written to JSON.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Measurement {
    /// `clock_gettime`, `time`, ... or a peer's function.
    pub function: String,
    /// `CLOCK_MONOTONIC`, `clock id 12`, or null.
    pub clock: Option<String>,
    /// The raw clock id, or null.
    pub clock_id: Option<i32>,
    /// `vdsotime`, `vdso-raw`, `libc`, `syscall`, or a peer's crate.
    pub path: String,
    /// For `vdsotime`: the route the library resolved (`symbol@version` or `syscall`).
    pub route: Option<String>,
    /// The timing: `ns`, `median_ns`, `trials`, `calls`, `threads`, `calls_per_sec`
    /// (flattened into the same JSON object).
    #[serde(flatten)]
    pub sample: Sample,
}

impl Measurement {
    fn new(function: &str, clock: Option<vdsotime::ClockId>, path: &str, s: Sample) -> Self {
        Measurement {
            function: function.to_string(),
            clock: clock.map(names::clock_full),
            clock_id: clock.map(|c| c.as_raw()),
            path: path.to_string(),
            route: None,
            sample: s,
        }
    }

    /// Whether this cell measured `f`.
    pub fn is(&self, f: Function) -> bool {
        self.function == names::function_name(f)
            && self.clock_id == names::function_clock(f).map(|c| c.as_raw())
    }
}

/// Where and how the numbers were taken.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header {
    /// CPU model.
    pub cpu_model: Option<String>,
    /// Kernel release.
    pub kernel: String,
    /// uname machine.
    pub machine: String,
    /// current clocksource.
    pub clocksource: Option<String>,
    /// Hypervisor, if any.
    pub hypervisor: Option<String>,
    /// ns per iteration of the empty timing loop, included in every figure.
    pub loop_overhead_ns: f64,
    /// Trials per cell.
    pub trials: u32,
    /// Threads per cell.
    pub threads: usize,
}

/// The `bench --json` document.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchReport {
    /// Machine and method.
    pub header: Header,
    /// Every cell.
    pub measurements: Vec<Measurement>,
    /// The first call in a fresh process, if measured.
    #[serde(default)]
    pub first_call: Option<FirstCall>,
}

impl BenchReport {
    /// The cell for `f` through `imp`, if measured.
    pub fn get(&self, f: Function, imp: Impl) -> Option<&Measurement> {
        self.measurements
            .iter()
            .find(|m| m.path == imp.name() && m.is(f))
    }
}

/// Measures `rows` through `impls` (plus peers if asked).
pub fn collect(
    rows: &[Function],
    impls: &[Impl],
    plan: &Plan,
    threads: usize,
    peers: bool,
) -> BenchReport {
    let facts = facts::collect();
    let peer_list = if peers { peers::all() } else { Vec::new() };
    let cells = rows.len() * impls.len() + peer_list.len() + 1;
    let pb = output::progress(cells as u64, "bench");
    let overhead = measure::loop_overhead(plan);
    pb.inc(1);
    let mut measurements = Vec::new();
    for &f in rows {
        pb.set_message(names::function_label(f));
        for &imp in impls {
            if let Some(p) = targets::probe(f, imp) {
                let mut m = Measurement::new(
                    names::function_name(f),
                    names::function_clock(f),
                    imp.name(),
                    p.run(plan, threads),
                );
                if imp == Impl::Vdsotime {
                    m.route = Some(vdsotime::path(f).to_string());
                }
                measurements.push(m);
            }
            pb.inc(1);
        }
    }
    for peer in &peer_list {
        pb.set_message(peer.function);
        let mut m = Measurement::new(
            peer.function,
            peer.clock,
            peer.path,
            peer.probe.run(plan, threads),
        );
        m.route = Some(peer.source.to_string());
        measurements.push(m);
        pb.inc(1);
    }
    pb.finish_and_clear();
    BenchReport {
        header: Header {
            cpu_model: facts.cpu_model,
            kernel: facts.kernel_release,
            machine: facts.machine,
            clocksource: facts.clocksource,
            hypervisor: facts.hypervisor,
            loop_overhead_ns: overhead.ns,
            trials: plan.trials,
            threads,
        },
        measurements,
        first_call: None,
    }
}

/// Prints the method line and the main table (one row per function).
pub fn print_table(r: &BenchReport, rows: &[Function], impls: &[Impl]) {
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
    let calls = r
        .measurements
        .iter()
        .map(|m| m.sample.calls)
        .max()
        .unwrap_or(0);
    println!(
        "ns per call{}, fastest of {} trials of up to {} calls; empty loop {} ns/iteration (included)",
        if h.threads > 1 { format!(" per thread, {} threads at once", h.threads) } else { String::new() },
        h.trials,
        calls,
        output::ns(h.loop_overhead_ns)
    );
    let has = |imp: Impl| r.measurements.iter().any(|m| m.path == imp.name());
    let cols: Vec<Impl> = impls.iter().copied().filter(|&i| has(i)).collect();
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
    if h.threads > 1 {
        header.push("vdsotime Mcalls/s");
    }
    header.push("vdsotime path");
    let mut t = output::table(&header);
    for &f in rows {
        let ns_of = |imp| r.get(f, imp).map(|m| m.sample.ns);
        let mut row = vec![names::function_label(f)];
        for &imp in &cols {
            row.push(ns_of(imp).map_or_else(|| "-".into(), output::ns));
        }
        let v = ns_of(Impl::Vdsotime);
        if speedup {
            row.push(match (v, ns_of(Impl::Syscall)) {
                (Some(v), Some(s)) => output::ratio(s / v),
                _ => "-".into(),
            });
        }
        if overhead {
            row.push(match (v, ns_of(Impl::VdsoRaw)) {
                (Some(v), Some(raw)) => output::ratio(v / raw),
                _ => "-".into(),
            });
        }
        if h.threads > 1 {
            let tp = r
                .get(f, Impl::Vdsotime)
                .map(|m| m.sample.calls_per_sec / 1e6);
            row.push(tp.map_or_else(|| "-".into(), |x| format!("{x:.1}")));
        }
        row.push(
            r.get(f, Impl::Vdsotime)
                .and_then(|m| m.route.clone())
                .unwrap_or_default(),
        );
        t.add_row(row);
    }
    output::align_numbers(&mut t);
    println!("{t}");
}

/// Prints the peers table, compared with vdsotime on the same clock.
fn print_peers(r: &BenchReport) {
    let library = [
        "clock_gettime",
        "clock_getres",
        "gettimeofday",
        "time",
        "getcpu",
    ];
    let peers: Vec<&Measurement> = r
        .measurements
        .iter()
        .filter(|m| !library.contains(&m.function.as_str()))
        .collect();
    if peers.is_empty() {
        return;
    }
    let mut t = output::table(&[
        "peer",
        "clock",
        "ns/call",
        "vs vdsotime clock_gettime",
        "reads via",
    ]);
    for m in peers {
        let same = r.measurements.iter().find(|x| {
            x.path == "vdsotime"
                && x.function == "clock_gettime"
                && x.clock_id.is_some()
                && x.clock_id == m.clock_id
        });
        t.add_row(vec![
            m.function.clone(),
            m.clock.clone().unwrap_or_else(|| "TSC".into()),
            output::ns(m.sample.ns),
            same.map_or_else(|| "-".into(), |s| output::ratio(m.sample.ns / s.sample.ns)),
            m.route.clone().unwrap_or_default(),
        ]);
    }
    output::align_numbers(&mut t);
    println!("{t}");
}

/// Runs `vdsotime bench`.
pub fn run(args: &BenchArgs, json: bool) -> Exit {
    let plan = args.plan()?;
    let rows = targets::full_rows();
    let mut report = collect(&rows, &Impl::ALL, &plan, args.threads.max(1), args.peers);
    if args.first_call_runs > 0 {
        report.first_call = Some(first_call::measure(args.first_call_runs)?);
    }
    if let Some(path) = &args.svg {
        svg::write_file(path, &report)?;
    }
    if json {
        output::print_json(&report)?;
    } else {
        print_table(&report, &rows, &Impl::ALL);
        print_peers(&report);
        if let Some(f) = &report.first_call {
            println!(
                "first call in a fresh process (find auxv, size and parse the image, bind every entry): fastest {} ns, median {} ns of {} processes; {} heap allocations",
                output::ns(f.min_ns),
                output::ns(f.median_ns),
                f.runs,
                f.allocations
            );
        }
        println!(
            "speed-up = syscall / vdsotime; vdsotime/raw = vdsotime / the vDSO symbol called directly (1.00x = no wrapper cost)."
        );
        if let Some(path) = &args.svg {
            println!("chart written to {}", path.display());
        }
    }
    Ok(0)
}
