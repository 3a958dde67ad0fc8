//! The first clock reading of a fresh, minimal process: vdsotime against rustix and glibc,
//! in a program that loads nothing else (no crate whose constructor reads the clock first,
//! as `vdsotime bench`'s probe has), so each path also pays the page faults of the vDSO's
//! first use.
//!
//! `first-call ROUNDS` runs ROUNDS rounds; each starts this program afresh once per path,
//! in an order rotated by one path a round, and prints each path's median. `first-call
//! PATH` is one such process: it times PATH's first `CLOCK_MONOTONIC` reading between two
//! raw system calls (their own gap, measured first, subtracted) and prints the ns.
//!
//! ```sh
//! cargo build --release -p vdsotime-examples --bin first-call
//! target/release/first-call 101
//! ```

use std::hint::black_box;
use std::process::{Command, ExitCode};

/// The paths compared, in the order of the first round; ratios are taken against the
/// second, rustix.
const PATHS: [&str; 3] = ["vdsotime", "rustix", "glibc"];

/// `CLOCK_MONOTONIC` by the raw system call, in ns.
fn raw_now() -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer.
    unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// Makes `path`'s first reading; false for an unknown path or a failed call.
#[inline(never)]
fn first(path: &str) -> bool {
    match path {
        "vdsotime" => black_box(vdsotime::clock_gettime(black_box(
            vdsotime::ClockId::MONOTONIC,
        )))
        .is_ok(),
        "rustix" => {
            black_box(rustix::time::clock_gettime(black_box(
                rustix::time::ClockId::Monotonic,
            )));
            true
        }
        "glibc" => {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is writable.
            unsafe { libc::clock_gettime(black_box(libc::CLOCK_MONOTONIC), &mut ts) == 0 }
        }
        _ => false,
    }
}

/// One fresh process: the ns of `path`'s first reading.
fn probe(path: &str) -> ExitCode {
    let mut gap = i128::MAX;
    for _ in 0..5 {
        let a = raw_now();
        gap = gap.min(raw_now() - a);
    }
    let t0 = raw_now();
    let ok = first(path);
    let t1 = raw_now();
    if !ok {
        eprintln!("first-call: unknown path or failed call: {path} (paths: {PATHS:?})");
        return ExitCode::FAILURE;
    }
    println!("{}", (t1 - t0 - gap).max(0));
    ExitCode::SUCCESS
}

/// The middle value (the mean of the two middle ones for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (v[(n - 1) / 2] + v[n / 2]) / 2.0
}

/// `rounds` rounds of fresh processes, one per path in rotated order; prints the medians.
fn drive(rounds: usize) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut ns = vec![Vec::with_capacity(rounds); PATHS.len()];
    for round in 0..rounds {
        for k in 0..PATHS.len() {
            let i = (round + k) % PATHS.len();
            let out = Command::new(&exe)
                .arg(PATHS[i])
                .output()
                .map_err(|e| format!("{}: {e}", exe.display()))?;
            let text = String::from_utf8_lossy(&out.stdout);
            let value = text.trim().parse::<f64>();
            match (out.status.success(), value) {
                (true, Ok(v)) => ns[i].push(v),
                _ => return Err(format!("{} {}: {text}", exe.display(), PATHS[i])),
            }
        }
    }
    println!(
        "first CLOCK_MONOTONIC reading of a fresh process, {rounds} rounds (rotated order): fastest, median, median over rounds of the ratio to rustix's in the same round"
    );
    for (path, samples) in PATHS.iter().zip(&ns) {
        let ratios = samples
            .iter()
            .zip(&ns[1])
            .map(|(x, r)| x / r.max(1.0))
            .collect();
        let fastest = samples.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "{:<9} {:5.1} µs {:5.1} µs {:6.3}",
            format!("{path}:"),
            fastest / 1000.0,
            median(samples.clone()) / 1000.0,
            median(ratios)
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let arg = std::env::args().nth(1).unwrap_or_default();
    match arg.parse::<usize>() {
        Ok(rounds) if rounds > 0 => match drive(rounds) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("first-call: {e}");
                ExitCode::FAILURE
            }
        },
        _ => probe(&arg),
    }
}
