//! `cargo bench -p vdsotime-cli --bench top_overhead` (as root): what `vdsotime top` costs
//! the process it watches, and its own CPU while it watches.
//!
//! The watched process is this one, calling `syscall(SYS_clock_gettime, CLOCK_MONOTONIC)`
//! in trials of `CALLS` calls. Each round runs one untraced trial and one traced trial (a
//! `vdsotime top --once --pid <this>` running, its perf events open), in rotated order.
//! `top` watches for 15 s, so a traced trial (started once its events are open) ends
//! inside its window while a call costs under ~10 µs. Reported: each path's fastest trial in ns per call, the median ratio traced/untraced,
//! the added ns per call and what it makes for a process making 1 M such calls per second,
//! the calls `top` counted against those made, and `top`'s CPU (user + system) per second
//! of watching. Nothing is asserted: a figure on a shared machine is a measurement, not a
//! pass mark.
//!
//! A third trial in each round enables the same tracepoint through tracefs with a filter
//! no call passes: what the tracepoint itself costs every system call before anything is
//! recorded, the floor under any counter built on it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Calls per trial.
const CALLS: u64 = 1_000_000;
/// Rounds.
const ROUNDS: usize = 5;

fn clock_syscall() {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid out-pointer.
    unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts) };
    std::hint::black_box(ts.tv_nsec);
}

/// ns per call of one trial.
fn trial() -> f64 {
    let start = Instant::now();
    for _ in 0..CALLS {
        clock_syscall();
    }
    start.elapsed().as_secs_f64() * 1e9 / CALLS as f64
}

/// perf event descriptors `pid` holds.
fn perf_fds(pid: u32) -> usize {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|t| t.to_string_lossy().contains("perf_event"))
        .count()
}

/// CPU seconds (user + system) `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(") ").map_or("", |(_, r)| r);
    let f: Vec<f64> = rest.split(' ').filter_map(|x| x.parse().ok()).collect();
    // After the state: fields 4.. of stat; utime and stime are stat's 14th and 15th.
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    match (f.get(10), f.get(11)) {
        (Some(u), Some(s)) => (u + s) / hz,
        _ => f64::NAN,
    }
}

/// The tracepoint's tracefs directory, if tracefs is mounted.
fn sys_enter_dir() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(|d| Path::new(d).join("events/raw_syscalls/sys_enter"))
        .find(|d| d.join("enable").exists())
}

/// ns per call with `raw_syscalls:sys_enter` enabled through tracefs and a filter that no
/// call passes; the tracepoint is disabled and its filter cleared afterwards.
fn tracepoint_only_trial(dir: &Path) -> Option<f64> {
    std::fs::write(dir.join("filter"), "id == -1").ok()?;
    std::fs::write(dir.join("enable"), "1").ok()?;
    let ns = trial();
    let off = std::fs::write(dir.join("enable"), "0");
    let cleared = std::fs::write(dir.join("filter"), "0");
    (off.is_ok() && cleared.is_ok()).then_some(ns)
}

struct Traced {
    ns: f64,
    counted: u64,
    lost: u64,
    top_cpu_per_s: f64,
}

fn traced_trial(cpus: usize) -> Option<Traced> {
    let me = std::process::id().to_string();
    let child: Child = Command::new(env!("CARGO_BIN_EXE_vdsotime"))
        // The perf backend, whose events the trial waits for; the BPF backend is not
        // measured here yet.
        .args(["top", "--once", "--duration", "15", "--json"])
        .args(["--backend", "perf", "--pid", &me])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .ok()?;
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while perf_fds(pid) < cpus {
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let (cpu0, t0) = (cpu_seconds(pid), Instant::now());
    let ns = trial();
    let top_cpu_per_s = (cpu_seconds(pid) - cpu0) / t0.elapsed().as_secs_f64();
    let out = child.wait_with_output().ok()?;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let counted = doc["rows"]
        .as_array()?
        .iter()
        .filter(|r| r["syscall"] == "clock_gettime")
        .filter_map(|r| r["calls"].as_u64())
        .sum();
    let lost = doc["lost_samples"].as_u64()?;
    Some(Traced {
        ns,
        counted,
        lost,
        top_cpu_per_s,
    })
}

fn main() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "SKIP top_overhead: not root: vdsotime top needs root or CAP_PERFMON (needs perf)"
        );
        return;
    }
    // `cargo bench` passes --bench; `cargo test --benches` would pass nothing to run.
    if !std::env::args().any(|a| a == "--bench") {
        println!("top_overhead: run with cargo bench (one traced round takes seconds)");
        return;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = sys_enter_dir();
    if dir.is_none() {
        eprintln!("tracefs is not mounted: the tracepoint-only trial is left out");
    }
    let (mut plain, mut traced, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // 0: untraced, 1: traced by top, 2: the tracepoint alone; rotated each round.
        for k in 0..3 {
            match (round + k) % 3 {
                0 => plain.push(trial()),
                1 => match traced_trial(cpus) {
                    Some(t) => traced.push(t),
                    None => eprintln!("round {round}: vdsotime top did not start tracing"),
                },
                _ => {
                    if let Some(ns) = dir.as_deref().and_then(tracepoint_only_trial) {
                        floor.push(ns);
                    }
                }
            }
        }
    }
    if traced.is_empty() {
        eprintln!("no traced trial ran");
        std::process::exit(1);
    }
    let fastest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let traced_ns: Vec<f64> = traced.iter().map(|t| t.ns).collect();
    let median = |v: &[f64]| {
        let mut ratios: Vec<f64> = v.iter().zip(&plain).map(|(t, p)| t / p).collect();
        ratios.sort_by(f64::total_cmp);
        ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (p, t) = (fastest(&plain), fastest(&traced_ns));
    let added = t - p;
    println!("syscall(SYS_clock_gettime), {CALLS} calls per trial, {ROUNDS} rounds, rotated order");
    println!("  untraced: {p:.1} ns/call (fastest trial)");
    println!(
        "  traced:   {t:.1} ns/call (fastest trial); median ratio traced/untraced {:.3}",
        median(&traced_ns)
    );
    println!(
        "  added by tracing: {added:.1} ns/call = {:.1}% of the CPU of a process making 1 M of these calls/s",
        added * 1e6 / 1e9 * 100.0
    );
    if !floor.is_empty() {
        let f = fastest(&floor);
        println!(
            "  the tracepoint alone (a filter no call passes, nothing recorded): {f:.1} ns/call (fastest trial); median ratio to untraced {:.3}; added {:.1} ns/call = {:.1}% at 1 M calls/s",
            median(&floor),
            f - p,
            (f - p) * 1e6 / 1e9 * 100.0
        );
    }
    for (i, tr) in traced.iter().enumerate() {
        println!(
            "  traced trial {i}: top counted {} of {CALLS} calls ({} samples lost); top's own CPU {:.1}% of one CPU while watching",
            tr.counted,
            tr.lost,
            tr.top_cpu_per_s * 100.0
        );
    }
}
