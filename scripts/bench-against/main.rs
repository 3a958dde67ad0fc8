//! One process, two builds of vdsotime: this tree's ("after") and a git revision's
//! ("before"), timed in interleaved rounds beside the raw vDSO symbol and the bare
//! syscall, for the rows a change to the call path can move. Built and run by
//! `scripts/bench-against.sh REV`; see there.

use std::hint::black_box;
use std::time::Instant;

/// Nanoseconds per call of `f` over `calls` calls.
#[inline(never)]
fn run(f: &dyn Fn(), calls: u32) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    start.elapsed().as_secs_f64() * 1e9 / f64::from(calls)
}

/// The `p`-quantile of `v` (nearest rank).
fn quantile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Every round runs each path once, starting one further along each time; prints each
/// path's fastest trial and the median [IQR] over rounds of its ratio to the first path.
fn row(name: &str, paths: &[(&str, &dyn Fn())], rounds: usize, calls: u32) {
    let n = paths.len();
    let mut best = vec![f64::INFINITY; n];
    let mut ratios = vec![Vec::with_capacity(rounds); n];
    for (_, f) in paths {
        run(*f, calls / 10 + 1); // warm-up: first calls, page faults
    }
    for r in 0..rounds {
        let mut t = vec![0.0; n];
        for k in 0..n {
            let i = (r + k) % n;
            t[i] = run(paths[i].1, calls);
        }
        for i in 0..n {
            best[i] = best[i].min(t[i]);
            ratios[i].push(t[i] / t[0]);
        }
    }
    print!("| {name} |");
    for i in 0..n {
        let r = &mut ratios[i];
        let (q1, m, q3) = (quantile(r, 0.25), quantile(r, 0.5), quantile(r, 0.75));
        print!(" {:.2} ns, {m:.3} [{q1:.3}–{q3:.3}] |", best[i]);
    }
    println!();
}

fn main() {
    let arg = |i: usize, default| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let (rounds, calls) = (arg(1, 31) as usize, arg(2, 20_000) as u32);
    let raw = vdsotime::raw::clock_gettime().expect("a vDSO clock_gettime callable as is");
    println!("| clock_gettime | vdso-raw | after (this tree) | before | syscall |");
    println!("|---|---|---|---|---|");
    let rows = [
        (1, "MONOTONIC"),
        (6, "MONOTONIC_COARSE"),
        (2, "PROCESS_CPUTIME_ID"),
        (3, "THREAD_CPUTIME_ID"),
        (8, "REALTIME_ALARM"),
        (12, "invalid id 12"),
        (-1, "invalid id -1"),
        (16, "aux id 16"),
    ];
    for (id, name) in rows {
        let raw = || {
            let mut ts = vdsotime::Timespec::default();
            // SAFETY: `ts` is writable; the symbol has clock_gettime's C signature.
            black_box(unsafe { raw(black_box(id), &mut ts) });
            // One field at a time: a 16-byte load over the vDSO's two 8-byte stores cannot
            // be store-forwarded and would slow this column alone.
            black_box(ts.tv_sec);
            black_box(ts.tv_nsec);
        };
        let after = || {
            let _ = black_box(vdsotime::clock_gettime(vdsotime::ClockId::from_raw(black_box(id))));
        };
        let before = || {
            let _ = black_box(before::clock_gettime(before::ClockId::from_raw(black_box(id))));
        };
        let syscall = || {
            let id = vdsotime::ClockId::from_raw(black_box(id));
            let _ = black_box(vdsotime::syscall::clock_gettime(id));
        };
        let paths: [(&str, &dyn Fn()); 4] =
            [("raw", &raw), ("after", &after), ("before", &before), ("syscall", &syscall)];
        row(&format!("{name} ({id})"), &paths, rounds, calls);
    }
}
