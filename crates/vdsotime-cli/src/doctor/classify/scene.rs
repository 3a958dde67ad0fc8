//! The scene every judge looks at: the profile, the path of each call, and whether the
//! clocksource keeps the counter clocks out of the vDSO's reach.

use crate::doctor::call_paths::{self, PathEntry, PathKind};
use crate::doctor::classify::clocksources::{self, Readable};
use crate::doctor::profile::Profile;
use crate::doctor::seccomp::Method;
use crate::output;

/// What every judge looks at: the profile and the path of each call.
#[derive(Debug)]
pub struct Scene<'a> {
    /// What was measured and read.
    pub p: &'a Profile,
    /// How each call is answered.
    pub paths: Vec<PathEntry>,
    /// Set when the counter clocks enter the kernel because of the clocksource, with
    /// how that is known (the probe, timing, or the name alone).
    pub slow_clocksource: Option<Method>,
}

impl<'a> Scene<'a> {
    /// Builds the scene of `p`.
    pub fn new(p: &'a Profile) -> Scene<'a> {
        let paths = call_paths::derive(p);
        let mut s = Scene {
            p,
            paths,
            slow_clocksource: None,
        };
        s.slow_clocksource = s.judge_clocksource();
        s
    }

    /// The row of `function` with `clock` (short name).
    pub fn path(&self, function: &str, clock: Option<&str>) -> Option<&PathEntry> {
        self.paths
            .iter()
            .find(|e| e.function == function && e.clock.as_deref() == clock)
    }

    /// clock_gettime(MONOTONIC): the witness of what the clocksource allows.
    pub fn reference(&self) -> Option<&PathEntry> {
        self.path("clock_gettime", Some("MONOTONIC"))
    }

    /// A measured ns figure, or `-`.
    pub fn ns(&self, v: Option<f64>) -> String {
        v.map_or_else(|| "-".into(), output::ns)
    }

    fn judge_clocksource(&self) -> Option<Method> {
        let cs = self.p.facts.clocksource.as_deref()?;
        let by_name = clocksources::readable(cs);
        let witness = self.reference().filter(|_| self.p.has_vdso);
        match witness.map(|r| (r.path, r.method)) {
            Some((PathKind::VdsoFallback, Method::Seccomp)) => Some(Method::Seccomp),
            Some((PathKind::VdsoFallback, Method::Timing)) => {
                (by_name != Readable::Yes).then_some(Method::Timing)
            }
            Some((PathKind::Vdso, _)) => None,
            _ => (by_name == Readable::No).then_some(Method::Lookup),
        }
    }
}
