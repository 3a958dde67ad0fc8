//! `cargo bench -p vdsotime-cli --bench top_overhead` (as root; `bench/top_peers.sh`
//! installs the peers, then runs it): what watching with `vdsotime top`, and with its
//! peers, costs the processes watched, and the tools' own CPU (docs/top.md, "Overhead").
//!
//! Two workloads, each a process of its own (this program again, `process::serve`): the
//! watched loop, back-to-back `syscall(SYS_clock_gettime, CLOCK_MONOTONIC)`, and other
//! system calls (`getppid`), which `top` does not count: what every other process on the
//! host pays while a watcher runs. Watchers (`watchers.rs`): none (the A/A row: an
//! unwatched trial against the unwatched reference, the noise), the syscall tracepoint
//! alone, an empty BPF program on `sys_enter` (the floor of any program there), `top --once` (the whole host) with each backend, and the peers.
//!
//! Interleaved: each round runs the unwatched reference and every watcher once, in an order
//! rotated each round; a watcher is started, waited for until it watches, given a trial of
//! each workload and stopped. Reported per cell: the fastest trial (ns per call) and the
//! median over rounds of its ratio to the round's unwatched trial of the same workload;
//! what each tool counted of the loop's calls against those made, and (after the rounds)
//! each tool's CPU, user + system, per second of watching the loop running flat out.
//! Nothing is asserted on a figure.
//!
//! Tunable by environment: TOP_OVERHEAD_CALLS (calls per trial), TOP_OVERHEAD_ROUNDS,
//! TOP_OVERHEAD_CPU_SECONDS (0: no CPU phase), TOP_OVERHEAD_SETTLE_MS (the wait after a
//! tool looks attached), TOP_OVERHEAD_WATCHERS (comma-separated keys: none, floor,
//! empty-program, top-BACKEND, bpftrace, perf-stat, perf-trace, strace), TOP_OVERHEAD_PERF (the perf binary),
//! TOP_OVERHEAD_VDSOTIME (the `vdsotime` binary, where the bench runs apart from its build:
//! inside a kernel machine, `cargo xtask kernels --scenario top-overhead`).

mod empty_program;
mod process;
mod report;
mod watchers;

use std::time::{Duration, Instant};

use process::{cpu_seconds, Worker, Workload};
use report::{index, Cell, Row};
use watchers::{Active, Context, Watcher};

/// The settings, from the environment.
#[derive(Debug)]
struct Config {
    calls: u64,
    rounds: usize,
    cpu_seconds: f64,
    settle: Duration,
    watchers: Option<Vec<String>>,
    perf: String,
    vdsotime: String,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

impl Config {
    fn from_env() -> Config {
        Config {
            calls: env_or("TOP_OVERHEAD_CALLS", 500_000u64).max(1),
            rounds: env_or("TOP_OVERHEAD_ROUNDS", 7usize).max(1),
            cpu_seconds: env_or("TOP_OVERHEAD_CPU_SECONDS", 5.0f64).max(0.0),
            settle: Duration::from_millis(env_or("TOP_OVERHEAD_SETTLE_MS", 300u64)),
            watchers: std::env::var("TOP_OVERHEAD_WATCHERS")
                .ok()
                .map(|v| v.split(',').map(|k| k.trim().to_string()).collect()),
            perf: std::env::var("TOP_OVERHEAD_PERF").unwrap_or_else(|_| "perf".into()),
            vdsotime: std::env::var("TOP_OVERHEAD_VDSOTIME")
                .unwrap_or_else(|_| env!("CARGO_BIN_EXE_vdsotime").into()),
        }
    }
}

/// The line of `file` starting with `key`, past its colon.
fn field(file: &str, key: &str) -> String {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_once(':'))
        .map_or_else(|| "unknown".into(), |(_, v)| v.trim().to_string())
}

/// The 1-minute load average.
fn load_average() -> f64 {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .next()
        .and_then(|l| l.parse().ok())
        .unwrap_or(f64::NAN)
}

fn fail(message: String) -> ! {
    eprintln!("top_overhead: {message}");
    std::process::exit(1);
}

/// One round: the reference and every watcher still running, from slot `round` on.
fn round(
    round: usize,
    config: &Config,
    ctx: &Context,
    workers: &mut [Worker; 2],
    reference: &mut [Cell; 2],
    rows: &mut [Row],
) -> Result<(), String> {
    let slots = rows.len() + 1;
    // ns per call of each slot's trial of each workload; slot 0 is the reference.
    let mut ns = vec![[None::<f64>; 2]; slots];
    for k in 0..slots {
        let slot = (round + k) % slots;
        let order = if (round + k).is_multiple_of(2) {
            Workload::ALL
        } else {
            [Workload::ALL[1], Workload::ALL[0]]
        };
        if slot == 0 {
            for w in order {
                ns[0][index(w)] = Some(workers[index(w)].trial(config.calls)?);
            }
            continue;
        }
        let row = &mut rows[slot - 1];
        if row.skip.is_some() {
            continue;
        }
        let active = match row.watcher.start(ctx) {
            Ok(active) => active,
            Err(why) => {
                eprintln!("round {round}: {}: {why}", row.watcher.name());
                row.skip = Some(why);
                continue;
            }
        };
        let (mut made, mut failed) = (0, Ok(()));
        for w in order {
            let calls = row.watcher.calls(w == Workload::Clock, config.calls);
            row.cells[index(w)].calls = calls;
            match workers[index(w)].trial(calls) {
                Ok(t) => ns[slot][index(w)] = Some(t),
                Err(e) => failed = Err(e),
            }
            if w == Workload::Clock {
                made = calls;
            }
        }
        // Stopped before any failure is passed on: no tool or tracepoint is left on.
        let counted = row.watcher.stop(active, ctx.watched);
        failed?;
        row.count(counted, made);
    }
    for w in Workload::ALL {
        let i = index(w);
        let Some(base) = ns[0][i] else { continue };
        reference[i].ns.push(base);
        reference[i].calls = config.calls;
        for (row, trial) in rows.iter_mut().zip(&ns[1..]) {
            if let Some(t) = trial[i] {
                row.cells[i].ns.push(t);
                row.cells[i].ratios.push(t / base);
            }
        }
    }
    Ok(())
}

/// Each tool's CPU per second of watching while the watched loop runs flat out.
fn cpu_phase(config: &Config, ctx: &Context, loop_worker: &mut Worker, rows: &mut [Row]) {
    for row in rows.iter_mut() {
        if row.skip.is_some() || !row.watcher.is_tool() {
            continue;
        }
        let active = match row.watcher.start(ctx) {
            Ok(active) => active,
            Err(why) => {
                eprintln!("CPU phase: {}: {why}", row.watcher.name());
                continue;
            }
        };
        let pid = match &active {
            Active::Tool(tool) => tool.child.id(),
            _ => 0,
        };
        let (cpu0, t0) = (cpu_seconds(pid), Instant::now());
        let seconds = config.cpu_seconds;
        let calls = loop_worker.flat_out(seconds);
        let (cpu1, elapsed) = (cpu_seconds(pid), t0.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu0, cpu1) {
            row.cpu = Some((b - a) / elapsed);
        }
        let counted = row.watcher.stop(active, ctx.watched);
        match calls {
            Ok(made) => row.count(counted, made),
            Err(e) => fail(e),
        }
    }
}

fn main() {
    if let Some(workload) = process::role() {
        process::serve(workload);
        return;
    }
    // `cargo bench` passes --bench; `cargo test --benches` runs it without.
    if !std::env::args().any(|a| a == "--bench") {
        println!("top_overhead: run with cargo bench (it takes minutes)");
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("SKIP top_overhead: not root: vdsotime top and its peers need root");
        return;
    }
    let config = Config::from_env();
    let spawn = |w| Worker::spawn(w).unwrap_or_else(|e| fail(e));
    let mut workers = [spawn(Workload::ALL[0]), spawn(Workload::ALL[1])];
    let ctx = Context {
        watched: workers[index(Workload::Clock)].pid(),
        perf: config.perf.clone(),
        vdsotime: config.vdsotime.clone(),
        settle: config.settle,
    };
    let mut rows: Vec<Row> = Watcher::all()
        .into_iter()
        .filter(|w| {
            config
                .watchers
                .as_ref()
                .is_none_or(|keys| keys.contains(&w.key()))
        })
        .map(Row::new)
        .collect();
    // Sampled before the run and after each round and the CPU measurements.
    let mut loads = vec![load_average()];
    let started = Instant::now();
    let mut reference: [Cell; 2] = Default::default();
    for r in 0..config.rounds {
        if let Err(e) = round(r, &config, &ctx, &mut workers, &mut reference, &mut rows) {
            fail(e);
        }
        loads.push(load_average());
        eprintln!(
            "round {}/{} done, {:.0} s",
            r + 1,
            config.rounds,
            started.elapsed().as_secs_f64()
        );
    }
    if config.cpu_seconds > 0.0 {
        let loop_worker = &mut workers[index(Workload::Clock)];
        cpu_phase(&config, &ctx, loop_worker, &mut rows);
        loads.push(load_average());
    }
    let low = loads.iter().copied().fold(f64::INFINITY, f64::min);
    let high = loads.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    println!(
        "CPU: {} ({} online); kernel {}; 1-minute load average {low:.1} to {high:.1}; {:.0} s",
        field("/proc/cpuinfo", "model name"),
        process::online_cpus(),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "{} rounds, each watcher in rotated order; tool CPU over {} s of the loop flat out\n",
        config.rounds, config.cpu_seconds
    );
    for w in Workload::ALL {
        println!("{}", report::table(w, &reference[index(w)], &rows));
    }
    for row in &rows {
        if let Some(why) = &row.skip {
            println!("SKIP {}: {why}", row.watcher.key());
        }
    }
}
