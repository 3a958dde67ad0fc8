//! How each call is answered, per function and clock: from the seccomp proof where it
//! ran, else from timing, with the measured costs beside it. Pure, like the classifier.

use serde::{Deserialize, Serialize};

use crate::doctor::profile::{Cost, Profile};
use crate::doctor::seccomp::{Method, Outcome, ProbeCall};

/// A vDSO call costing more than this share of the syscall is taken for a fallback
/// when there is no proof: a served call costs 5–15% of the syscall on every machine
/// in the project's seeds, a fallback 100% or more.
pub const FALLBACK_RATIO: f64 = 0.5;

/// How one call is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathKind {
    /// By the vDSO, in user space.
    Vdso,
    /// The vDSO entered the kernel (its own fallback to the system call).
    VdsoFallback,
    /// No vDSO, or no vDSO entry for this call: the system call.
    NoVdso,
    /// The system call, although the vDSO has an entry.
    Syscall,
    /// From the rseq area glibc registered (getcpu), in user space.
    Rseq,
}

impl PathKind {
    /// The name in JSON and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            PathKind::Vdso => "vdso",
            PathKind::VdsoFallback => "vdso-fallback",
            PathKind::NoVdso => "no-vdso",
            PathKind::Syscall => "syscall",
            PathKind::Rseq => "rseq",
        }
    }

    /// Every kind, for enum-style metrics.
    pub const ALL: [PathKind; 5] = [
        PathKind::Vdso,
        PathKind::VdsoFallback,
        PathKind::NoVdso,
        PathKind::Syscall,
        PathKind::Rseq,
    ];
}

/// One row of `doctor --json`'s `paths`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathEntry {
    /// `clock_gettime`, `gettimeofday`, ...
    pub function: String,
    /// `MONOTONIC`, ... for the functions that take a clock.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clock: Option<String>,
    /// How the call is answered.
    pub path: PathKind,
    /// How that was established.
    pub method: Method,
    /// vdsotime's route: `symbol@version`, `rseq area (glibc)` or `syscall`.
    pub route: String,
    /// ns per call through vdsotime, where timed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub vdso_ns: Option<f64>,
    /// ns per call of the forced system call, where timed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub syscall_ns: Option<f64>,
    /// ns per call through the C library, where timed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub libc_ns: Option<f64>,
}

impl PathEntry {
    /// `clock_gettime(MONOTONIC)` or `time()`.
    pub fn label(&self) -> String {
        match &self.clock {
            Some(c) => format!("{}({c})", self.function),
            None => format!("{}()", self.function),
        }
    }

    /// Whether this row reads an auxiliary clock (`clock_gettime(AUX0)`, ...).
    pub fn is_aux(&self) -> bool {
        self.function == "clock_gettime"
            && self.clock.as_deref().is_some_and(|c| c.starts_with("AUX"))
    }
}

/// `MONOTONIC` for `CLOCK_MONOTONIC`.
pub fn short_clock(c: &str) -> String {
    c.trim_start_matches("CLOCK_").to_string()
}

fn is_rseq(route: &str) -> bool {
    route.starts_with("rseq")
}

/// The path of one row, from the proof if there is one, else from its cost.
fn judge(
    p: &Profile,
    route: &str,
    probed: Option<&ProbeCall>,
    cost: Option<&Cost>,
) -> (PathKind, Method) {
    if route == "syscall" {
        let entry = p.has_vdso && probed.is_some_and(|c| c.outcome != Outcome::NoEntry);
        return if entry {
            (PathKind::Syscall, Method::Lookup)
        } else {
            (PathKind::NoVdso, Method::Lookup)
        };
    }
    let served = if is_rseq(route) {
        PathKind::Rseq
    } else {
        PathKind::Vdso
    };
    match probed.map(|c| c.outcome) {
        Some(Outcome::NoSyscall) => (served, Method::Seccomp),
        Some(Outcome::Syscall) => (PathKind::VdsoFallback, Method::Seccomp),
        Some(Outcome::NoEntry) => (PathKind::NoVdso, Method::Lookup),
        _ => match cost {
            Some(c) if c.vdsotime_ns / c.syscall_ns > FALLBACK_RATIO => {
                (PathKind::VdsoFallback, Method::Timing)
            }
            _ => (served, Method::Timing),
        },
    }
}

/// One row from what is known of it.
fn entry(
    p: &Profile,
    function: &str,
    clock: &Option<String>,
    route: &str,
    probed: Option<&ProbeCall>,
    cost: Option<&Cost>,
) -> PathEntry {
    let (path, method) = judge(p, route, probed, cost);
    PathEntry {
        function: function.to_string(),
        clock: clock.as_deref().map(short_clock),
        path,
        method,
        route: route.to_string(),
        vdso_ns: cost.map(|c| c.vdsotime_ns),
        syscall_ns: cost.map(|c| c.syscall_ns),
        libc_ns: cost.and_then(|c| c.libc_ns),
    }
}

/// Every row: the timed ones in their order, then those only probed.
pub fn derive(p: &Profile) -> Vec<PathEntry> {
    let calls: &[ProbeCall] = p.probe.as_ref().map_or(&[], |r| &r.calls);
    let mut out: Vec<PathEntry> = p
        .costs
        .iter()
        .map(|c| {
            let probed = calls
                .iter()
                .find(|k| k.function == c.function && k.clock == c.clock);
            entry(p, &c.function, &c.clock, &c.route, probed, Some(c))
        })
        .collect();
    for k in calls {
        if !p
            .costs
            .iter()
            .any(|c| c.function == k.function && c.clock == k.clock)
        {
            out.push(entry(p, &k.function, &k.clock, &k.route, Some(k), None));
        }
    }
    out
}
