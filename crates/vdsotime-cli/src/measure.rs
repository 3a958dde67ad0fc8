//! The timing harness: the fastest of N trials of M calls, as the seed benchmarks
//! (kernel vclock_gettime series, bionic, Go) report it. The fastest trial is the one
//! least disturbed by interrupts and neighbours, which is what a per-call cost means.

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How long and how often to measure one cell.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Number of trials; the fastest counts.
    pub trials: u32,
    /// Calls per trial; `None` calibrates from `budget`.
    pub calls: Option<u64>,
    /// Time to spend on one cell, all trials together, when `calls` is `None`.
    pub budget: Duration,
}

impl Plan {
    /// Fewest calls per trial: below this the clock read around the loop dominates.
    const MIN_CALLS: u64 = 200;
    /// Most calls per trial, so a slow path cannot make one cell run for minutes.
    const MAX_CALLS: u64 = 50_000_000;

    /// Calls per trial for a function that costs `ns_per_call`.
    fn calls_for(&self, ns_per_call: f64) -> u64 {
        if let Some(c) = self.calls {
            return c.max(1);
        }
        let per_trial = self.budget.as_secs_f64() * 1e9 / f64::from(self.trials.max(1));
        let calls = per_trial / ns_per_call.max(0.1);
        // Truncation is intended: a call count.
        (calls as u64).clamp(Self::MIN_CALLS, Self::MAX_CALLS)
    }
}

/// One measured cell.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// Nanoseconds per call in the fastest trial (per thread when threads > 1).
    pub ns: f64,
    /// Median trial, to show how noisy the machine was.
    pub median_ns: f64,
    /// Trials run.
    pub trials: u32,
    /// Calls per trial (per thread).
    pub calls: u64,
    /// Threads calling at once.
    pub threads: usize,
    /// Calls per second of all threads together, in the fastest trial.
    pub calls_per_sec: f64,
}

/// Runs `f` for `calls` iterations and returns nanoseconds per call.
#[inline(never)]
fn run_loop<F: Fn()>(f: &F, calls: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    let elapsed = start.elapsed();
    elapsed.as_secs_f64() * 1e9 / calls as f64
}

/// Estimates the cost of one call with a short warm-up (also faults in pages and
/// resolves lazily bound symbols before timing starts).
fn calibrate<F: Fn()>(f: &F) -> f64 {
    let mut calls = 64u64;
    loop {
        let start = Instant::now();
        for _ in 0..calls {
            f();
        }
        let t = start.elapsed();
        if t >= Duration::from_micros(500) || calls >= 1 << 20 {
            return t.as_secs_f64() * 1e9 / calls as f64;
        }
        calls *= 4;
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Measures `f` on the calling thread.
pub fn measure<F: Fn()>(plan: &Plan, f: F) -> Sample {
    let calls = plan.calls_for(calibrate(&f));
    let trials = plan.trials.max(1);
    let mut per_call: Vec<f64> = (0..trials).map(|_| run_loop(&f, calls)).collect();
    let ns = per_call.iter().copied().fold(f64::INFINITY, f64::min);
    Sample {
        ns,
        median_ns: median(&mut per_call),
        trials,
        calls,
        threads: 1,
        calls_per_sec: 1e9 / ns,
    }
}

/// Measures `f` on `threads` threads that start each trial together, so they
/// contend for whatever the call shares (the vDSO data page, the kernel's locks).
pub fn measure_threads<F: Fn() + Send + Sync + Copy + 'static>(
    plan: &Plan,
    threads: usize,
    f: F,
) -> Sample {
    if threads <= 1 {
        return measure(plan, f);
    }
    let calls = plan.calls_for(calibrate(&f));
    let trials = plan.trials.max(1);
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                (0..trials)
                    .map(|_| {
                        barrier.wait();
                        let start = Instant::now();
                        for _ in 0..calls {
                            f();
                        }
                        start.elapsed()
                    })
                    .collect::<Vec<Duration>>()
            })
        })
        .collect();
    let per_thread: Vec<Vec<Duration>> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or_default())
        .collect();
    // Per-thread cost: each thread's fastest trial, averaged over threads.
    let fastest = |v: &Vec<Duration>| v.iter().copied().min().unwrap_or_default();
    let ns = per_thread
        .iter()
        .map(|v| fastest(v).as_secs_f64() * 1e9 / calls as f64)
        .sum::<f64>()
        / threads as f64;
    // Throughput: all calls of a trial over that trial's slowest thread.
    let mut trial_walls: Vec<f64> = (0..trials as usize)
        .map(|t| {
            per_thread
                .iter()
                .filter_map(|v| v.get(t))
                .max()
                .copied()
                .unwrap_or_default()
                .as_secs_f64()
        })
        .collect();
    let best_wall = trial_walls.iter().copied().fold(f64::INFINITY, f64::min);
    let median_wall = median(&mut trial_walls);
    Sample {
        ns,
        median_ns: median_wall * 1e9 / calls as f64,
        trials,
        calls,
        threads,
        calls_per_sec: (threads as f64 * calls as f64) / best_wall,
    }
}

/// A measurement closure with its call inlined into the timing loop; boxing happens
/// around the whole measurement, so no indirect call is added per iteration.
pub struct Probe {
    run: Box<RunFn>,
}

/// A whole measurement: plan and thread count in, sample out.
type RunFn = dyn Fn(&Plan, usize) -> Sample + Send + Sync;

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Probe")
    }
}

impl Probe {
    /// Wraps a call to measure.
    pub fn new<F: Fn() + Send + Sync + Copy + 'static>(f: F) -> Probe {
        Probe {
            run: Box::new(move |plan, threads| measure_threads(plan, threads, f)),
        }
    }

    /// Measures with `threads` threads at once.
    pub fn run(&self, plan: &Plan, threads: usize) -> Sample {
        (self.run)(plan, threads)
    }
}

/// The cost of the empty timing loop itself (one `black_box` per iteration), which
/// every figure includes: reported so readers can subtract it.
pub fn loop_overhead(plan: &Plan) -> Sample {
    measure(plan, || {
        black_box(());
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_follow_budget_and_bounds() {
        let plan = Plan {
            trials: 5,
            calls: None,
            budget: Duration::from_millis(100),
        };
        // 100 ms over 5 trials at 20 ns per call: 1M calls.
        assert_eq!(plan.calls_for(20.0), 1_000_000);
        assert_eq!(plan.calls_for(1e9), Plan::MIN_CALLS);
        let fixed = Plan {
            calls: Some(1234),
            ..plan
        };
        assert_eq!(fixed.calls_for(20.0), 1234);
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn threads_report_every_trial() {
        let plan = Plan {
            trials: 3,
            calls: Some(1000),
            budget: Duration::ZERO,
        };
        let s = measure_threads(&plan, 2, || {
            black_box(std::time::Instant::now());
        });
        assert_eq!((s.threads, s.trials, s.calls), (2, 3, 1000));
        assert!(s.ns.is_finite() && s.ns > 0.0);
        assert!(s.calls_per_sec.is_finite() && s.calls_per_sec > 0.0);
    }
}
