//! The doctor's input: measurements plus machine facts, as plain data. Collected
//! live, or loaded from JSON so a test can feed a simulated machine.

use serde::{Deserialize, Serialize};
use vdsotime::Function;

use crate::doctor::seccomp::{self, ProbeReport};
use crate::facts::{self, SystemFacts};
use crate::measure::paths::{self, Impl};
use crate::measure::Plan;
use crate::names;
use crate::report::BenchReport;

/// What one function cost through each path.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Cost {
    /// `clock_gettime`, `gettimeofday`, `time`, `getcpu`.
    pub function: String,
    /// Clock name, if the function takes one.
    pub clock: Option<String>,
    /// Clock id, if the function takes one.
    pub clock_id: Option<i32>,
    /// The library's route: `symbol@version` or `syscall`.
    pub route: String,
    /// ns per call through vdsotime.
    pub vdsotime_ns: f64,
    /// ns per call through the C library, if measured.
    pub libc_ns: Option<f64>,
    /// ns per call through the forced syscall.
    pub syscall_ns: f64,
}

/// Everything the classifier looks at.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Profile {
    /// Machine facts.
    pub facts: SystemFacts,
    /// The process has a vDSO.
    pub has_vdso: bool,
    /// The library's table for this build's architecture.
    pub arch: String,
    /// Symbols that table expects but the vDSO does not export.
    pub missing_symbols: Vec<String>,
    /// Per-function costs.
    pub costs: Vec<Cost>,
    /// What the seccomp probe saw; absent from profiles saved before it existed.
    #[serde(default)]
    pub probe: Option<ProbeReport>,
}

/// Symbols of `arch::NATIVE` absent from this process's vDSO (all of them if none).
pub fn missing_symbols() -> Vec<String> {
    let t = vdsotime::arch::NATIVE;
    let expected = [
        t.clock_gettime,
        t.clock_gettime64,
        t.clock_getres,
        t.gettimeofday,
        t.time,
        t.getcpu,
    ];
    let v = vdsotime::vdso();
    expected
        .into_iter()
        .flatten()
        .filter(|name| v.is_none_or(|v| v.lookup(name, Some(t.version)).is_none()))
        .map(|name| format!("{name}@{}", t.version))
        .collect()
}

/// Turns bench cells into per-function costs.
pub fn costs_from(report: &BenchReport, rows: &[Function]) -> Vec<Cost> {
    rows.iter()
        .filter_map(|&f| {
            let v = report.get(f, Impl::Vdsotime)?;
            let s = report.get(f, Impl::Syscall)?;
            Some(Cost {
                function: names::function_name(f).to_string(),
                clock: names::function_clock(f).map(names::clock_full),
                clock_id: names::function_clock(f).map(|c| c.as_raw()),
                route: v
                    .route
                    .clone()
                    .unwrap_or_else(|| vdsotime::path(f).to_string()),
                vdsotime_ns: v.sample.ns,
                libc_ns: report.get(f, Impl::Libc).map(|m| m.sample.ns),
                syscall_ns: s.sample.ns,
            })
        })
        .collect()
}

/// Builds the profile from a measurement already taken and a probe.
pub fn from_report(report: &BenchReport, facts: SystemFacts, probe: ProbeReport) -> Profile {
    Profile {
        facts,
        has_vdso: vdsotime::vdso().is_some(),
        arch: vdsotime::arch::NATIVE.name.to_string(),
        missing_symbols: missing_symbols(),
        costs: costs_from(report, &paths::doctor_rows()),
        probe: Some(probe),
    }
}

/// Probes, measures and reads everything. The probe forks, so it runs first, while
/// this process has one thread.
pub fn collect(plan: &Plan) -> (Profile, BenchReport) {
    let probe = seccomp::collect();
    let report = crate::bench::collect(
        &paths::doctor_rows(),
        &[Impl::Vdsotime, Impl::Libc, Impl::Syscall],
        plan,
        1,
        false,
    );
    (from_report(&report, facts::collect(), probe), report)
}
