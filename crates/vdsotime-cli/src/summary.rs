//! The default run (`cargo run --release`): the doctor's verdict, how fast each call is,
//! and what the vDSO is, in a few seconds, in that order: an operator reads the first lines.

use std::time::Instant;

use serde::Serialize;

use crate::bench;
use crate::bench::table;
use crate::doctor;
use crate::doctor::call_paths::{self, PathEntry};
use crate::doctor::classify::{self, Verdict};
use crate::doctor::profile::{self, Profile};
use crate::doctor::seccomp;
use crate::facts;
use crate::inspect::info::{self, Info};
use crate::measure;
use crate::measure::paths::{self, Impl};
use crate::output::{self, Exit};
use crate::report::BenchReport;

/// The `vdsotime --json` document.
#[derive(Debug, Serialize)]
struct Summary<'a> {
    info: &'a Info,
    bench: &'a BenchReport,
    profile: &'a Profile,
    verdict: &'a Verdict,
    paths: &'a [PathEntry],
    seconds: f64,
}

/// Runs the summary. Exits 0 whatever the verdict: it is a report, not a gate
/// (`vdsotime doctor` is the gate).
pub fn run(json: bool) -> Exit {
    let start = Instant::now();
    // The probe forks: first, while this process has one thread.
    let probe = seccomp::collect();
    let info = info::collect();
    let rows = paths::doctor_rows();
    let impls = [Impl::Vdsotime, Impl::VdsoRaw, Impl::Libc, Impl::Syscall];
    let report = bench::collect(&rows, &impls, &measure::default_plan(), 1, false);
    let profile = profile::from_report(&report, facts::collect(), probe);
    let verdict = classify::classify(&profile);
    if json {
        output::print_json(&Summary {
            info: &info,
            bench: &report,
            profile: &profile,
            verdict: &verdict,
            paths: &call_paths::derive(&profile),
            seconds: start.elapsed().as_secs_f64(),
        })?;
    } else {
        // The verdict and anything wrong first; the measurements and the machine after.
        doctor::print(&verdict);
        println!();
        table::print_header(&report);
        table::print_ns(&report, &rows, &impls);
        table::print_ns_legend();
        println!();
        info::print_system(&info.system);
        info::print_vdso(&info, false);
        println!(
            "\n(took {:.1} s; more: vdsotime bench --peers, vdsotime check, vdsotime doctor, vdsotime --help)",
            start.elapsed().as_secs_f64()
        );
    }
    Ok(0)
}
