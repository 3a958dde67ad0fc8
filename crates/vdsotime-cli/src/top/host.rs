//! What applies to every process on this host, taken before tracing starts: the
//! doctor's own proof and measurement (whether the vDSO reads the clocksource, what a
//! system call and a vDSO call cost here), the vDSO's getrandom, the enabled aux clocks.

use crate::doctor::profile::Cost;

/// Host-wide facts.
#[derive(Clone, Debug, Default)]
pub struct Host {
    /// The current clocksource's name.
    pub clocksource: Option<String>,
    /// The doctor proved (or timed) that the vDSO falls back to the system call for
    /// `clock_gettime(MONOTONIC)`: the clocksource cannot be read in user space.
    pub clocksource_slow: bool,
    /// The vDSO exports `__vdso_getrandom` (Linux 6.11+).
    pub vdso_getrandom: bool,
    /// The enabled auxiliary clock ids.
    pub aux_enabled: Vec<i32>,
    /// The doctor's costs on this host.
    pub costs: Vec<Cost>,
}

impl Host {
    /// Probes and measures as `vdsotime doctor` does, for `seconds` per path.
    pub fn collect(seconds: f64) -> Host {
        let doctor = crate::doctor::clocksource_facts(seconds);
        Host {
            clocksource: doctor.name,
            clocksource_slow: doctor.vdso_falls_back,
            vdso_getrandom: vdsotime::vdso()
                .is_some_and(|v| v.lookup("__vdso_getrandom", None).is_some()),
            aux_enabled: crate::aux_clocks::enabled()
                .into_iter()
                .map(|c| c.as_raw())
                .collect(),
            costs: doctor.costs,
        }
    }

    /// ns one call of `syscall` with clock `clock` (its name) wastes against the vDSO:
    /// its system call cost (`measured` for its own clock where given, else the
    /// doctor's) less the doctor's vDSO cost of that function and clock (or of the
    /// function, or of `clock_gettime(MONOTONIC)`, where that was not timed). `None`
    /// where nothing was measured.
    pub fn waste_ns(
        &self,
        syscall: &str,
        clock: Option<&str>,
        measured: Option<f64>,
    ) -> Option<f64> {
        let base = match syscall {
            "clock_gettime64" => "clock_gettime",
            "clock_getres_time64" => "clock_getres",
            s => s,
        };
        let find = |f: &str, clock: Option<&str>| {
            self.costs
                .iter()
                .find(|c| c.function == f && (clock.is_none() || c.clock.as_deref() == clock))
        };
        let c = clock
            .and_then(|name| find(base, Some(name)))
            .or_else(|| find(base, None))
            .or_else(|| find("clock_gettime", Some("CLOCK_MONOTONIC")))?;
        Some((measured.unwrap_or(c.syscall_ns) - c.vdsotime_ns).max(0.0))
    }
}
