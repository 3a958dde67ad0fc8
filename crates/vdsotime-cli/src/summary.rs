//! The default run (`cargo run --release`): what the vDSO is, how fast it is, and
//! the doctor's verdict, in a few seconds.

use std::time::Instant;

use serde::Serialize;

use crate::bench::{self, BenchReport};
use crate::bench_table;
use crate::call_paths::{self, PathEntry};
use crate::classify::{self, Verdict};
use crate::doctor;
use crate::facts;
use crate::info::{self, Info};
use crate::output::{self, Exit};
use crate::profile::{self, Profile};
use crate::seccomp_probe;
use crate::targets::{self, Impl};

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
    let probe = seccomp_probe::collect();
    let info = info::collect();
    if !json {
        info::print_system(&info.system);
        info::print_vdso(&info, false);
        println!();
    }
    let rows = targets::short_rows();
    let impls = [Impl::Vdsotime, Impl::VdsoRaw, Impl::Libc, Impl::Syscall];
    let report = bench::collect(&rows, &impls, &bench::default_plan(), 1, false);
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
        bench_table::print_header(&report);
        bench_table::print_ns(&report, &rows, &impls);
        println!();
        doctor::print(&verdict);
        println!(
            "\n(took {:.1} s; more: vdsotime bench --peers, vdsotime check, vdsotime doctor, vdsotime --help)",
            start.elapsed().as_secs_f64()
        );
    }
    Ok(0)
}
