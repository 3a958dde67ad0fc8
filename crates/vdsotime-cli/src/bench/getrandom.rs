//! `vdsotime bench-getrandom`: ns per call of getrandom at 4, 16, 64, 256 and 4096 bytes,
//! through vdsotime (the per-thread vDSO state), an explicit `State` (the vDSO call with
//! no per-thread lookup: the floor), libc's `getrandom` (glibc before 2.41: the system
//! call), the system call itself and the `getrandom` crate (its default backend: libc).
//! Interleaved rounds, as `vdsotime bench`: each path's figure is its fastest trial, and
//! its ratio to the `vdso-state` floor is the median over rounds. Also where the system
//! call overtakes the vDSO on this machine, and the first call of short-lived processes
//! and threads ([`fresh`], and the first-call probe).

mod fresh;

use std::time::Duration;

use serde::Serialize;

use crate::bench::first_call;
use crate::facts;
use crate::first_calls::{FirstCalls, FirstPath};
use crate::measure::getrandom::{probe, Path, SIZES};
use crate::measure::interleave::{self, Lane};
use crate::measure::{Plan, Probe, Sample, DEFAULT_TRIAL_US};
use crate::output::{self, Exit};

/// Options of `bench-getrandom`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  vdsotime bench-getrandom
  vdsotime bench-getrandom --trials 401 --bytes 16
  vdsotime bench-getrandom --json
  vdsotime bench-getrandom --bytes 64 --bytes 128 --bytes 256   # narrow down the crossover")]
pub struct Args {
    /// Write the rows as JSON (function "getrandom", bytes, path, ns, ratios) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Rounds: every path runs one trial per round; each path's fastest is reported.
    #[arg(long, default_value_t = 101, value_parser = crate::arg_values::trials)]
    pub trials: u32,
    /// Calls per trial for every path (default: sized per path to --trial-us).
    #[arg(long)]
    pub calls: Option<u64>,
    /// Microseconds one trial should take when --calls is not given (at most 10 s).
    #[arg(long, default_value_t = DEFAULT_TRIAL_US, value_parser = crate::arg_values::trial_us)]
    pub trial_us: f64,
    /// Request sizes in bytes (repeat the option; default 4 16 64 256 4096, at most 4096).
    #[arg(long = "bytes", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub bytes: Vec<u64>,
    /// Rounds of fresh processes timing the first getrandom through vdsotime, glibc and
    /// the system call, one process per path per round (0: skip).
    #[arg(long, default_value_t = 20)]
    pub first_call_runs: usize,
    /// Rounds of short-lived threads and processes: a fresh thread's first draw, and fork +
    /// one draw in the child + exit + wait, through vdsotime, libc and the system call
    /// (0: skip).
    #[arg(long, default_value_t = 51)]
    pub fresh_rounds: usize,
}

/// One measured cell, as written to JSON.
#[derive(Debug, Serialize)]
pub struct Row {
    /// Always `getrandom`.
    pub function: &'static str,
    /// Bytes asked for per call.
    pub bytes: usize,
    /// The column.
    pub path: &'static str,
    /// For `vdsotime`: the symbol it resolved, or `syscall`.
    pub route: Option<String>,
    /// The timing (flattened).
    #[serde(flatten)]
    pub sample: Sample,
}

/// The `bench-getrandom --json` document.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Kernel release.
    pub kernel: String,
    /// CPU model.
    pub cpu_model: Option<String>,
    /// The vDSO state size, if the vDSO serves getrandom.
    pub state_size: Option<usize>,
    /// Every cell.
    pub rows: Vec<Row>,
    /// Where the system call overtakes vdsotime; null where vdsotime's getrandom is the
    /// system call itself.
    pub crossover: Option<Crossover>,
    /// The first getrandom in a fresh process, through each path, if measured.
    pub first_call: Option<FirstCalls>,
    /// The first getrandom in a fresh thread, through each path, if measured.
    pub fresh_thread: Option<fresh::Fresh>,
    /// fork + one draw in the child + exit + wait, through each path, if measured.
    pub fork_draw_exit_wait: Option<fresh::Fresh>,
}

/// Where the system call overtakes the vDSO on this machine: per byte, the vDSO's
/// ChaCha20 (one 64-byte block at a time, without a stack) can be slower than the
/// kernel's generator. Compared as the table does, by the fastest trials.
#[derive(Debug, Serialize)]
pub struct Crossover {
    /// The smallest size measured at which the system call was faster than vdsotime;
    /// null when vdsotime was faster at every size measured.
    pub syscall_faster_from_bytes: Option<usize>,
    /// The largest size measured below that one (or overall) at which vdsotime was
    /// faster; null when it was faster at none.
    pub vdso_faster_up_to_bytes: Option<usize>,
    /// The largest size measured.
    pub largest_bytes: usize,
}

impl Crossover {
    /// Finds the crossover in `rows`; `None` when vdsotime's route is the system call.
    fn find(rows: &[Row], route: &str) -> Option<Crossover> {
        if route == "syscall" {
            return None;
        }
        let ns = |bytes: usize, path: Path| {
            rows.iter()
                .find(|r| r.bytes == bytes && r.path == path.name())
                .map(|r| r.sample.ns)
        };
        let mut sizes: Vec<usize> = rows.iter().map(|r| r.bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let syscall_faster = |&b: &usize| match (ns(b, Path::Syscall), ns(b, Path::Vdsotime)) {
            (Some(s), Some(v)) => s < v,
            _ => false,
        };
        let from = sizes.iter().position(syscall_faster);
        let below = from.map_or(sizes.len(), |i| i);
        Some(Crossover {
            syscall_faster_from_bytes: from.map(|i| sizes[i]),
            vdso_faster_up_to_bytes: below.checked_sub(1).map(|i| sizes[i]),
            largest_bytes: sizes.last().copied().unwrap_or(0),
        })
    }

    /// The sentence printed under the table.
    fn describe(c: Option<&Crossover>) -> String {
        let Some(c) = c else {
            return "crossover: none, vdsotime's getrandom is the system call here (no vDSO getrandom)".into();
        };
        match (c.vdso_faster_up_to_bytes, c.syscall_faster_from_bytes) {
            (_, None) => format!(
                "crossover: none up to {} B, the vDSO is faster at every size measured",
                c.largest_bytes
            ),
            (Some(below), Some(from)) => format!(
                "crossover: the vDSO is faster up to {below} B, the system call from {from} B (of the sizes measured; more --bytes between them narrow it down)"
            ),
            (None, Some(from)) => format!(
                "crossover: the system call is faster at every size measured, from {from} B"
            ),
        }
    }
}

/// Measures every size through every path, in interleaved rounds per size, each
/// path's ratio taken against the `vdso-state` floor.
pub fn collect(sizes: &[usize], plan: &Plan) -> Report {
    let pb = output::progress(sizes.len() as u64, "bench-getrandom");
    let route = vdsotime::path(vdsotime::Function::Getrandom).to_string();
    let floor = Path::ALL.iter().position(|&p| p == Path::VdsoState);
    let mut rows = Vec::new();
    for &bytes in sizes {
        pb.set_message(format!("{bytes} bytes"));
        let probes: Vec<Probe> = Path::ALL.iter().map(|&p| probe(p, bytes)).collect();
        let lanes: Vec<Lane<'_>> = probes
            .iter()
            .map(|probe| Lane {
                probe,
                reference: floor,
            })
            .collect();
        let samples = interleave::measure(&lanes, plan, 1);
        for (path, sample) in Path::ALL.into_iter().zip(samples) {
            rows.push(Row {
                function: "getrandom",
                bytes,
                path: path.name(),
                route: (path == Path::Vdsotime).then(|| route.clone()),
                sample,
            });
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let facts = facts::collect();
    Report {
        kernel: facts.kernel_release,
        cpu_model: facts.cpu_model,
        state_size: vdsotime::random::params().map(|p| p.state_size),
        crossover: Crossover::find(&rows, &route),
        rows,
        first_call: None,
        fresh_thread: None,
        fork_draw_exit_wait: None,
    }
}

/// The Markdown table: one row per size, one column per path, the speed-up of vdsotime
/// over the system call, and vdsotime's cost over the `vdso-state` floor (the median
/// of the per-round ratios).
pub fn print_table(r: &Report, sizes: &[usize]) {
    let mut header: Vec<&str> = vec!["bytes"];
    header.extend(Path::ALL.map(Path::name));
    header.extend(["syscall/vdsotime", "vdsotime/vdso-state"]);
    let mut t = output::table(&header);
    for &bytes in sizes {
        let sample = |p: Path| {
            r.rows
                .iter()
                .find(|row| row.bytes == bytes && row.path == p.name())
                .map(|row| row.sample)
        };
        let ns = |p: Path| sample(p).map(|s| s.ns);
        let mut line = vec![bytes.to_string()];
        line.extend(Path::ALL.map(|p| ns(p).map_or("-".into(), output::ns)));
        line.push(match (ns(Path::Syscall), ns(Path::Vdsotime)) {
            (Some(s), Some(v)) if v > 0.0 => format!("{:.2}x", s / v),
            _ => "-".into(),
        });
        line.push(
            sample(Path::Vdsotime)
                .and_then(|s| s.ratio_to_raw)
                .map_or("-".into(), |x| format!("{x:.2}x")),
        );
        t.add_row(line);
    }
    output::align_numbers(&mut t);
    println!("{t}");
}

/// Runs `vdsotime bench-getrandom`.
pub fn run(a: &Args, json: bool) -> Exit {
    let plan = Plan {
        trials: a.trials,
        calls: a.calls,
        trial_time: Duration::from_secs_f64(a.trial_us * 1e-6),
    };
    let sizes: Vec<usize> = if a.bytes.is_empty() {
        SIZES.to_vec()
    } else {
        a.bytes.iter().map(|&b| b as usize).collect()
    };
    // Before anything in this process draws through vdsotime: each child starts as a
    // fresh process does, without a state or a page of states.
    let forked = (a.fresh_rounds > 0)
        .then(|| fresh::fork_draw_exit_wait(a.fresh_rounds))
        .transpose()?;
    let mut report = collect(&sizes, &plan);
    report.fork_draw_exit_wait = forked;
    // After: the pool has states to lend, as in a process that has drawn before.
    report.fresh_thread = (a.fresh_rounds > 0)
        .then(|| fresh::first_in_a_thread(a.fresh_rounds))
        .transpose()?;
    if a.first_call_runs > 0 {
        report.first_call = Some(first_call::measure(
            &FirstPath::GETRANDOM,
            FirstPath::GetrandomSyscall,
            a.first_call_runs,
        )?);
    }
    if json {
        output::print_json(&report)?;
    } else {
        println!(
            "getrandom, ns per call (fastest of {} interleaved rounds); vdsotime path: {}; kernel {}",
            plan.trials,
            vdsotime::path(vdsotime::Function::Getrandom),
            report.kernel
        );
        print_table(&report, &sizes);
        println!("{}", Crossover::describe(report.crossover.as_ref()));
        if let Some(f) = &report.first_call {
            println!();
            f.print("first getrandom of 16 bytes in a fresh process");
        }
        for f in [&report.fresh_thread, &report.fork_draw_exit_wait]
            .into_iter()
            .flatten()
        {
            println!();
            f.print();
        }
    }
    Ok(0)
}
