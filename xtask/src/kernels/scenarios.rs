//! The boots of one kernel: the default command line, and on x86_64 the command lines that
//! take the vDSO's clocksource away (the situations `vdsotime doctor` must explain).
//!
//! Only the default boot runs the core's test suite and the tool's other runs; every boot
//! runs the independent reading of the machine's state (`vm-truth`), `vdsotime doctor
//! --json` and `vdsotime check`, and where the kernel gives the vDSO no clocksource to read
//! or no vDSO at all, the doctor's verdict is judged against that reading.

/// One boot of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scenario {
    /// Name in the report and the logs.
    pub name: &'static str,
    /// Added to the kernel command line.
    pub append: &'static str,
    /// Runs the core's test suite, `info`, `bench` and `dump` (the default boot).
    pub suite: bool,
    /// Runs and judges `vdsotime doctor` (and, with `timens`, once more inside a time
    /// namespace, reported as a scenario of its own).
    pub doctor: bool,
    pub timens: bool,
    /// Runs `vdsotime top` while time-reading processes run, judged by [`super::top`].
    pub top: bool,
    /// Runs the `top_overhead` benchmark ([`super::top::overhead`]) and nothing else of
    /// the tool's: booted only when named (`--scenario top-overhead`), as it measures
    /// rather than tests.
    pub overhead: bool,
}

/// The default boot of a machine whose doctor is not judged.
pub const DEFAULT: Scenario = Scenario {
    name: "default",
    append: "",
    suite: true,
    doctor: false,
    timens: false,
    top: false,
    overhead: false,
};

pub const DEFAULT_ONLY: &[Scenario] = &[DEFAULT];

/// The time-namespace scenario: the default boot's doctor run under `unshare --time`.
pub const TIMENS: &str = "timens";

/// x86_64's boots: the default (test suite, doctor, doctor in a time namespace), then one
/// boot per way of losing the vDSO's fast path.
pub const X86_64: &[Scenario] = &[
    Scenario {
        doctor: true,
        timens: true,
        ..DEFAULT
    },
    // The clocksource no vDSO reads: `vdsotime top` must list every time-reading process.
    Scenario {
        top: true,
        ..light("hpet", "clocksource=hpet")
    },
    light("acpi_pm", "clocksource=acpi_pm"),
    // The watchdog path: the TSC is declared unstable and another clocksource chosen.
    light("tsc-unstable", "tsc=unstable"),
    light("vdso-off", "vdso=0"),
    // What watching with `vdsotime top` costs, fentry's backend included (opt-in).
    Scenario {
        name: "top-overhead",
        append: "",
        suite: false,
        doctor: false,
        timens: false,
        top: false,
        overhead: true,
    },
];

/// A boot that runs only the reading, the doctor and `check`.
const fn light(name: &'static str, append: &'static str) -> Scenario {
    Scenario {
        name,
        append,
        suite: false,
        doctor: true,
        timens: false,
        top: false,
        overhead: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_boot_comes_first_and_alone_runs_the_suite() {
        for list in [DEFAULT_ONLY, X86_64] {
            assert!(list[0].suite && list[0].append.is_empty());
            // The boots after the default change its command line, or run the benchmark.
            assert!(list[1..]
                .iter()
                .all(|s| !s.suite && (s.overhead || !s.append.is_empty())));
            for (i, s) in list.iter().enumerate() {
                assert!(list[..i].iter().all(|o| o.name != s.name), "{}", s.name);
                assert_ne!(s.name, TIMENS);
            }
        }
    }
}
