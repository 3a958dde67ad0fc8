//! The timing harness: one trial is M calls of one path, timed as a whole; a cell's
//! figure is its fastest trial, as the seed benchmarks (kernel vclock_gettime series,
//! bionic, Go) report it. The fastest trial is the one least disturbed by interrupts
//! and neighbours, which is what a per-call cost means. How trials of different
//! paths are interleaved is [`interleave`]'s business; [`paths`] says how each function is
//! called through each path.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub mod crates;
pub mod getrandom;
pub mod interleave;
pub mod paths;
pub mod peers;
#[cfg(target_pointer_width = "32")]
pub mod raw32;

/// Rounds of the default run, `bench` and the summary alike.
pub const DEFAULT_TRIALS: u32 = 201;
/// Length of one trial in the default run, µs.
pub const DEFAULT_TRIAL_US: f64 = 100.0;

/// The default run's plan: `DEFAULT_TRIALS` rounds of `DEFAULT_TRIAL_US` trials.
pub fn default_plan() -> Plan {
    Plan {
        trials: DEFAULT_TRIALS,
        calls: None,
        trial_time: Duration::from_secs_f64(DEFAULT_TRIAL_US * 1e-6),
    }
}

/// Consumes one result field, the same way on every path. On 32-bit targets as its two
/// 32-bit halves: a 64-bit field copied as a whole is moved with one 8-byte SSE load, which
/// cannot be store-forwarded from the two 4-byte stores a 32-bit vDSO writes it with and
/// would charge a store-forwarding stall to whichever path the compiler emitted it for.
#[inline(always)]
pub fn field(x: i64) {
    if cfg!(target_pointer_width = "32") {
        black_box(x as u32);
        black_box((x >> 32) as u32);
    } else {
        black_box(x);
    }
}

/// How long and how often to measure.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Rounds: every path of a row runs one trial per round.
    pub trials: u32,
    /// Calls per trial for every path; `None` sizes each path's trial to `trial_time`.
    pub calls: Option<u64>,
    /// How long one trial should take when `calls` is `None`.
    pub trial_time: Duration,
}

impl Plan {
    /// Fewest calls per trial: below this the clock read around the loop dominates.
    const MIN_CALLS: u64 = 100;
    /// Most calls per trial, so a slow path cannot make one trial run for minutes.
    const MAX_CALLS: u64 = 50_000_000;

    /// Calls per trial for a path that costs `ns_per_call`.
    pub fn calls_for(&self, ns_per_call: f64) -> u64 {
        if let Some(c) = self.calls {
            return c.max(1);
        }
        let calls = self.trial_time.as_secs_f64() * 1e9 / ns_per_call.max(0.1);
        // Truncation is intended: a call count.
        (calls as u64).clamp(Self::MIN_CALLS, Self::MAX_CALLS)
    }
}

/// One measured cell, as written to JSON.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// Nanoseconds per call in the fastest trial (per thread when threads > 1).
    pub ns: f64,
    /// Median trial, to show how noisy the machine was.
    pub median_ns: f64,
    /// Trials run (one per round).
    pub trials: u32,
    /// Calls per trial (per thread).
    pub calls: u64,
    /// Threads calling at once.
    pub threads: usize,
    /// Calls per second of all threads together, in the fastest trial.
    pub calls_per_sec: f64,
    /// Median over rounds of this path's trial divided by its reference's trial in the
    /// same round (the raw vDSO symbol); null without a reference.
    pub ratio_to_raw: Option<f64>,
    /// First quartile of those per-round ratios.
    pub ratio_q1: Option<f64>,
    /// Third quartile of those per-round ratios.
    pub ratio_q3: Option<f64>,
}

/// One timed trial.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trial {
    /// Nanoseconds per call (per thread: the threads' average).
    pub ns: f64,
    /// Seconds from the common start to the slowest thread's end.
    pub wall: f64,
}

/// Runs `f` for `calls` iterations and returns the elapsed time.
#[inline(never)]
fn run_loop<F: Fn()>(f: &F, calls: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    start.elapsed()
}

/// One trial of `calls` calls on `threads` threads that start together, so they
/// contend for whatever the call shares (the vDSO data page, the kernel's locks).
fn run_trial<F: Fn() + Sync>(f: &F, calls: u64, threads: usize) -> Trial {
    let per_call = |d: Duration| d.as_secs_f64() * 1e9 / calls.max(1) as f64;
    if threads <= 1 {
        let d = run_loop(f, calls);
        return Trial {
            ns: per_call(d),
            wall: d.as_secs_f64(),
        };
    }
    let barrier = Barrier::new(threads);
    let times: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    run_loop(f, calls)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let total: f64 = times.iter().map(|&d| per_call(d)).sum();
    Trial {
        ns: total / threads as f64,
        wall: times
            .iter()
            .max()
            .copied()
            .unwrap_or_default()
            .as_secs_f64(),
    }
}

/// Estimates the cost of one call with a short warm-up (also faults in pages and
/// resolves lazily bound symbols before timing starts).
fn calibrate<F: Fn()>(f: &F) -> f64 {
    let mut calls = 64u64;
    loop {
        let t = run_loop(f, calls);
        if t >= Duration::from_micros(200) || calls >= 1 << 20 {
            return t.as_secs_f64() * 1e9 / calls as f64;
        }
        calls *= 4;
    }
}

/// A path to time, with its call inlined into the timing loop; boxing happens around
/// the whole trial, so no indirect call is added per iteration.
pub struct Probe {
    trial: Box<TrialFn>,
    calibrate: Box<dyn Fn() -> f64 + Send + Sync>,
}

/// One trial: calls and thread count in, timing out.
type TrialFn = dyn Fn(u64, usize) -> Trial + Send + Sync;

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Probe")
    }
}

impl Probe {
    /// Wraps a call to time.
    pub fn new<F: Fn() + Send + Sync + Copy + 'static>(f: F) -> Probe {
        Probe {
            trial: Box::new(move |calls, threads| run_trial(&f, calls, threads)),
            calibrate: Box::new(move || calibrate(&f)),
        }
    }

    /// Warms the path up and estimates its ns per call.
    pub fn calibrate(&self) -> f64 {
        (self.calibrate)()
    }

    /// One trial of `calls` calls per thread.
    pub fn trial(&self, calls: u64, threads: usize) -> Trial {
        (self.trial)(calls, threads)
    }
}

/// The empty timing loop (one `black_box` per iteration), whose cost every figure
/// includes: reported so readers can subtract it.
pub fn loop_overhead() -> Probe {
    Probe::new(|| {
        black_box(());
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_follow_trial_time_and_bounds() {
        let plan = Plan {
            trials: 5,
            calls: None,
            trial_time: Duration::from_micros(200),
        };
        // 200 µs at 20 ns per call: 10,000 calls; at 2 ns: 100,000.
        assert_eq!(plan.calls_for(20.0), 10_000);
        assert_eq!(plan.calls_for(2.0), 100_000);
        assert_eq!(plan.calls_for(1e9), Plan::MIN_CALLS);
        let fixed = Plan {
            calls: Some(1234),
            ..plan
        };
        assert_eq!(fixed.calls_for(20.0), 1234);
    }

    #[test]
    fn threads_report_per_thread_cost_and_wall_time() {
        let p = Probe::new(|| {
            black_box(std::time::Instant::now());
        });
        let t = p.trial(1000, 2);
        assert!(t.ns.is_finite() && t.ns > 0.0);
        // The slowest thread's 1000 calls took at least the average thread's.
        assert!(t.wall * 1e9 >= t.ns * 1000.0 * 0.999_999, "{t:?}");
    }
}
