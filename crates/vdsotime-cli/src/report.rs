//! The `bench --json` document: every measured cell, where and how it was measured, and
//! the first call. Written by `bench`, read by its renderers (`bench::table`,
//! `bench::svg`), the doctor's profile and the summary.

use serde::{Deserialize, Serialize};
use vdsotime::Function;

use crate::first_calls::{FirstCall, FirstCalls};
use crate::measure::paths::Impl;
use crate::measure::Sample;
use crate::names;

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
    pub fn new(function: &str, clock: Option<vdsotime::ClockId>, path: &str, s: Sample) -> Self {
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
    /// The first call side by side: vdsotime, rustix, glibc and std, in alternating fresh
    /// processes.
    #[serde(default)]
    pub first_call_paths: Option<FirstCalls>,
}

impl BenchReport {
    /// The cell for `f` through `imp`, if measured.
    pub fn get(&self, f: Function, imp: Impl) -> Option<&Measurement> {
        self.measurements
            .iter()
            .find(|m| m.path == imp.name() && m.is(f))
    }
}
