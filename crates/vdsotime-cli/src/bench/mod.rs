//! `vdsotime bench`: nanoseconds per call of every function through every path, and
//! each path's ratio to the raw vDSO symbol, measured in interleaved rounds (see
//! `measure::interleave`): every round runs one trial of every path of a row, in rotated order.

use std::path::PathBuf;
use std::time::Duration;

use vdsotime::{ClockId, Function};

use crate::facts;
use crate::first_calls::FirstPath;
use crate::measure::interleave::{self, Lane};
use crate::measure::paths::{self, Impl};
use crate::measure::peers;
use crate::measure::{self, Plan, Probe, DEFAULT_TRIALS, DEFAULT_TRIAL_US};
use crate::names;
use crate::output::{self, Exit};
use crate::report::{BenchReport, Header, Measurement};

pub mod first_call;
pub mod getrandom;
pub mod svg;
pub mod table;

/// Options of `bench`.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "Method: each row (a function and clock) is measured in rounds. A round runs one
trial of every path of the row (vdsotime, vdso-raw, libc, rustix, std, syscall),
in an order rotated by one path each round, so that a drifting machine slows every
path of a round alike. A trial is about --trial-us of back-to-back calls (sized per
path from a warm-up), or exactly --calls calls. Reported per path: ns per call in
its fastest trial (the timing loop's own cost included), and the median over rounds
of its trial divided by vdso-raw's trial in the same round, with the interquartile range
[q1-q3]. vdso-raw is the resolved vDSO symbol called through a bare function
pointer: the floor. Clock ids go through black_box, so no path sees a constant.

The first call: each round runs one fresh process per path (vdsotime, init, vdsotime
after init, rustix, glibc, std) in rotated order; each times its one call between two
raw clock_gettime system calls, less their own gap. Reported per path: the fastest and
median ns, the median over rounds of its ratio to rustix's in the same round, heap
allocations and page faults during the call (JSON: first_call_paths).

Examples:
  vdsotime bench                       # both tables: ns, and ratio to vdso-raw
  vdsotime bench --trials 301 --trial-us 50
  vdsotime bench --peers --svg bench.svg
  vdsotime bench --threads 2 --trials 51   # per-thread cost and total throughput
  vdsotime bench --json > bench.json   # ns, ratio_to_raw, ratio_q1, ratio_q3 per cell"
)]
pub struct BenchArgs {
    /// Write the measurements as JSON (per cell: ns, ratio_to_raw, ratio_q1, ratio_q3) instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Rounds: every path runs one trial per round; each path's fastest is reported.
    #[arg(long, default_value_t = DEFAULT_TRIALS, value_parser = crate::arg_values::trials)]
    pub trials: u32,
    /// Calls per trial for every path (default: sized per path to --trial-us).
    #[arg(long)]
    pub calls: Option<u64>,
    /// Microseconds one trial should take when --calls is not given (at most 10 s).
    #[arg(long, default_value_t = DEFAULT_TRIAL_US, value_parser = crate::arg_values::trial_us)]
    pub trial_us: f64,
    /// Threads calling at once; reports per-thread cost and total throughput.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Also time quanta, minstant, coarsetime, rustix's infallible call and vdsotime's Instant.
    #[arg(long)]
    pub peers: bool,
    /// Write a bar chart (log scale) of every measurement to FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Rounds of fresh processes timing the first clock reading through vdsotime,
    /// vdsotime::init() and the reading after it, rustix, glibc and std, one process per
    /// path per round (0: skip).
    #[arg(long, default_value_t = 20)]
    pub first_call_runs: usize,
}

impl BenchArgs {
    /// The measuring plan these options describe.
    pub fn plan(&self) -> Plan {
        Plan {
            trials: self.trials,
            calls: self.calls,
            trial_time: Duration::from_secs_f64(self.trial_us * 1e-6),
        }
    }
}

/// Measures one row: every path of `f` in `impls`, interleaved, each against vdso-raw.
fn measure_row(f: Function, impls: &[Impl], plan: &Plan, threads: usize) -> Vec<Measurement> {
    let paths: Vec<(Impl, Probe)> = impls
        .iter()
        .filter_map(|&imp| paths::probe(f, imp).map(|p| (imp, p)))
        .collect();
    let raw = paths.iter().position(|(imp, _)| *imp == Impl::VdsoRaw);
    let lanes: Vec<Lane<'_>> = paths
        .iter()
        .map(|(_, probe)| Lane {
            probe,
            reference: raw,
        })
        .collect();
    let samples = interleave::measure(&lanes, plan, threads);
    paths
        .iter()
        .zip(samples)
        .map(|((imp, _), s)| {
            let mut m = Measurement::new(
                names::function_name(f),
                names::function_clock(f),
                imp.name(),
                s,
            );
            if *imp == Impl::Vdsotime {
                m.route = Some(vdsotime::path(f).to_string());
            }
            m
        })
        .collect()
}

/// Measures the peers in one interleaved group with the raw vDSO readings of the
/// clocks they read, each peer against its clock's.
fn measure_peers(plan: &Plan, threads: usize) -> Vec<Measurement> {
    let list = peers::all();
    let mut refs: Vec<(ClockId, Probe)> = Vec::new();
    for p in &list {
        let c = p.reference_clock();
        if !refs.iter().any(|(r, _)| *r == c) {
            if let Some(probe) = paths::probe(Function::ClockGettime(c), Impl::VdsoRaw) {
                refs.push((c, probe));
            }
        }
    }
    let reference = |c: ClockId| {
        refs.iter()
            .position(|(r, _)| *r == c)
            .map(|i| list.len() + i)
    };
    let lanes: Vec<Lane<'_>> = list
        .iter()
        .map(|p| Lane {
            probe: &p.probe,
            reference: reference(p.reference_clock()),
        })
        .chain(refs.iter().map(|(c, probe)| Lane {
            probe,
            reference: reference(*c),
        }))
        .collect();
    let samples = interleave::measure(&lanes, plan, threads);
    list.iter()
        .zip(samples)
        .map(|(p, s)| {
            let mut m = Measurement::new(p.function, p.clock, p.path, s);
            m.route = Some(p.source.to_string());
            m
        })
        .collect()
}

/// Measures `rows` through `impls` (plus peers if asked), one interleaved group per row.
pub fn collect(
    rows: &[Function],
    impls: &[Impl],
    plan: &Plan,
    threads: usize,
    peers: bool,
) -> BenchReport {
    let facts = facts::collect();
    let pb = output::progress(rows.len() as u64 + 1 + u64::from(peers), "bench");
    let empty = measure::loop_overhead();
    let overhead = interleave::measure(
        &[Lane {
            probe: &empty,
            reference: None,
        }],
        plan,
        1,
    );
    pb.inc(1);
    let mut measurements = Vec::new();
    for &f in rows {
        pb.set_message(names::function_label(f));
        measurements.extend(measure_row(f, impls, plan, threads));
        pb.inc(1);
    }
    if peers {
        pb.set_message("peers");
        measurements.extend(measure_peers(plan, threads));
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
            loop_overhead_ns: overhead.first().map_or(f64::NAN, |s| s.ns),
            trials: plan.trials,
            trial_us: plan
                .calls
                .is_none()
                .then_some(plan.trial_time.as_secs_f64() * 1e6),
            threads,
        },
        measurements,
        first_call: None,
        first_call_paths: None,
    }
}

/// Runs `vdsotime bench`.
pub fn run(args: &BenchArgs, json: bool) -> Exit {
    let plan = args.plan();
    let rows = paths::full_rows();
    let mut report = collect(&rows, &Impl::ALL, &plan, args.threads.max(1), args.peers);
    if args.first_call_runs > 0 {
        let paths =
            first_call::measure(&FirstPath::CLOCK, FirstPath::Rustix, args.first_call_runs)?;
        report.first_call = paths.vdsotime();
        report.first_call_paths = Some(paths);
    }
    if let Some(path) = &args.svg {
        svg::write_file(path, &report)?;
    }
    if json {
        output::print_json(&report)?;
    } else {
        table::print_header(&report);
        table::print_ns(&report, &rows, &Impl::ALL);
        table::print_ns_legend();
        println!();
        table::print_ratios(&report, &rows, &Impl::ALL);
        table::print_peers(&report);
        table::print_legend();
        if let Some(f) = &report.first_call_paths {
            println!();
            f.print("first clock_gettime(MONOTONIC) in a fresh process");
            println!("{}", first_call::CLOCK_NOTE);
        }
        if let Some(path) = &args.svg {
            println!("chart written to {}", path.display());
        }
    }
    Ok(0)
}
