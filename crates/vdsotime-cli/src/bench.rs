//! `vdsotime bench`: nanoseconds per call of every function through every path, and
//! each path's ratio to the raw vDSO symbol, measured in interleaved rounds (see
//! `interleave`): every round runs one trial of every path of a row, in rotated order.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use vdsotime::{ClockId, Function};

use crate::bench_table;
use crate::facts;
use crate::first_call::{self, FirstCall};
use crate::interleave::{self, Lane};
use crate::measure::{self, Plan, Probe, Sample};
use crate::names;
use crate::output::{self, Exit};
use crate::peers;
use crate::svg;
use crate::targets::{self, Impl};

/// Rounds of the default run, `bench` and the summary alike.
pub const DEFAULT_TRIALS: u32 = 201;
/// Length of one trial in the default run, µs.
pub const DEFAULT_TRIAL_US: f64 = 100.0;

/// Options of `bench`.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "Method: each row (a function and clock) is measured in rounds. A round runs one
trial of every path of the row (vdsotime, vdso-raw, libc, rustix, std, syscall),
in an order rotated by one path each round, so that a drifting machine slows every
path of a round alike. A trial is about --trial-us of back-to-back calls (sized per
path from a warm-up), or exactly --calls calls. Reported per path: ns per call in
its fastest trial (the empty loop included), and the median over rounds of its
trial divided by vdso-raw's trial in the same round, with the interquartile range
[q1-q3]. vdso-raw is the resolved vDSO symbol called through a bare function
pointer: the floor. Clock ids go through black_box, so no path sees a constant.

Examples:
  vdsotime bench                      both tables: ns and ratio to vdso-raw
  vdsotime bench --trials 301 --trial-us 50
  vdsotime bench --peers --svg bench.svg
  vdsotime bench --threads 2          per-thread cost and total throughput
  vdsotime bench --json > bench.json  ns, ratio_to_raw, ratio_q1, ratio_q3 per cell"
)]
pub struct BenchArgs {
    /// Rounds: every path runs one trial per round; each path's fastest is reported.
    #[arg(long, default_value_t = DEFAULT_TRIALS)]
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
    /// Fresh processes spawned to time the library's first call (0: skip).
    #[arg(long, default_value_t = 20)]
    pub first_call_runs: usize,
}

/// The default run's plan: `DEFAULT_TRIALS` rounds of `DEFAULT_TRIAL_US` trials.
pub fn default_plan() -> Plan {
    Plan {
        trials: DEFAULT_TRIALS,
        calls: None,
        trial_time: Duration::from_secs_f64(DEFAULT_TRIAL_US * 1e-6),
    }
}

impl BenchArgs {
    /// The measuring plan these options describe.
    pub fn plan(&self) -> Plan {
        Plan {
            trials: self.trials.max(1),
            calls: self.calls,
            trial_time: Duration::from_secs_f64(self.trial_us * 1e-6),
        }
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
    /// The timing: `ns`, `median_ns`, `trials`, `calls`, `threads`, `calls_per_sec`,
    /// `ratio_to_raw`, `ratio_q1`, `ratio_q3` (flattened into the same JSON object).
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
    /// Rounds, i.e. trials per cell.
    pub trials: u32,
    /// Target length of one trial, µs (null when --calls fixed the count).
    pub trial_us: Option<f64>,
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

/// Measures one row: every path of `f` in `impls`, interleaved, each against vdso-raw.
fn measure_row(f: Function, impls: &[Impl], plan: &Plan, threads: usize) -> Vec<Measurement> {
    let paths: Vec<(Impl, Probe)> = impls
        .iter()
        .filter_map(|&imp| targets::probe(f, imp).map(|p| (imp, p)))
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
            if let Some(probe) = targets::probe(Function::ClockGettime(c), Impl::VdsoRaw) {
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
    }
}

/// Runs `vdsotime bench`.
pub fn run(args: &BenchArgs, json: bool) -> Exit {
    let plan = args.plan();
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
        bench_table::print_header(&report);
        bench_table::print_ns(&report, &rows, &Impl::ALL);
        println!();
        bench_table::print_ratios(&report, &rows, &Impl::ALL);
        bench_table::print_peers(&report);
        if let Some(f) = &report.first_call {
            println!(
                "first call in a fresh process (find auxv, size and parse the image, bind every entry): fastest {} ns, median {} ns of {} processes; {} heap allocations",
                output::ns(f.min_ns),
                output::ns(f.median_ns),
                f.runs,
                f.allocations
            );
        }
        bench_table::print_legend();
        if let Some(path) = &args.svg {
            println!("chart written to {}", path.display());
        }
    }
    Ok(0)
}
