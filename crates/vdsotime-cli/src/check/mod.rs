//! `vdsotime check`: proves, against the kernel, that every library reading is
//! what the syscall would have said. Zero tolerance; exit status 1 on any failure.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::facts;
use crate::output::{self, Exit};
use fault::Lib;
use sandwich::Latest;
use tally::{Count, Tally};

pub mod fault;
pub mod sandwich;
pub mod tally;

/// Options of `check`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Checks, for every clock (and gettimeofday, time):
  - a library reading lies between two syscall readings (zero tolerance; time()
    between the seconds of two CLOCK_REALTIME_COARSE syscalls, as the time
    syscall can trail the vDSO by a second);
  - tv_nsec and tv_usec are normalized;
  - monotonic clocks never go backwards, within a thread or across threads;
  - clock_getres equals the syscall's;
  - getcpu reports the CPU the thread is pinned to;
  - invalid ids give the kernel's EINVAL.

Exit status: 0 all passed, 1 any failure, 64 usage error.

The first line is the result; any failure follows, then its row of the table
(every row with --verbose).

Examples:
  vdsotime check
  vdsotime check --verbose                # also every check that passed
  vdsotime check --duration 2 --threads 8
  vdsotime check --json")]
pub struct CheckArgs {
    /// Write the counts and every failure as JSON instead of a report.
    #[arg(long)]
    pub json: bool,
    /// Seconds to interleave readings for (all threads at once; at most a day).
    #[arg(long, default_value_t = 2.0, value_parser = crate::arg_values::check_seconds)]
    pub duration: f64,
    /// Threads; thread i is pinned to the i-th usable CPU, round robin
    /// (default: one per usable CPU, at least 2).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Also list every check that passed (by default only the result and any failure).
    #[arg(long)]
    pub verbose: bool,
    /// Inject faults into the library readings (testing `check` itself);
    /// same syntax as the VDSOTIME_FAULT variable.
    #[arg(long, hide = true)]
    pub fault: Option<String>,
}

/// One line of the `check --json` document.
#[derive(Debug, Serialize)]
pub struct CheckLine<'a> {
    /// What was checked.
    pub check: &'static str,
    /// Of which function.
    pub subject: &'a str,
    /// Readings.
    pub checked: u64,
    /// Failed readings.
    pub failures: u64,
    /// Passed.
    pub passed: bool,
    /// The first failure.
    pub example: Option<&'a str>,
}

/// The `check --json` document.
#[derive(Debug, Serialize)]
pub struct CheckReport<'a> {
    /// Every check passed.
    pub passed: bool,
    /// Seconds spent interleaving.
    pub duration: f64,
    /// Worker threads.
    pub threads: usize,
    /// CPUs the workers were pinned to.
    pub cpus: Vec<usize>,
    /// Faults injected (empty in a real run).
    pub faults: String,
    /// Every check.
    pub checks: Vec<CheckLine<'a>>,
}

fn lines(t: &Tally) -> Vec<CheckLine<'_>> {
    t.iter()
        .map(
            |(check, subject, c): (&'static str, &str, &Count)| CheckLine {
                check,
                subject,
                checked: c.checked,
                failures: c.failures,
                passed: c.failures == 0,
                example: c.example.as_deref(),
            },
        )
        .collect()
}

/// Runs `vdsotime check`.
pub fn run(args: &CheckArgs, json: bool) -> Exit {
    let spec = match &args.fault {
        Some(f) => f.clone(),
        None => std::env::var(fault::ENV).unwrap_or_default(),
    };
    let lib = Lib::new(fault::parse(&spec)?);
    if lib.faulty() && !json {
        eprintln!("vdsotime check: injecting faults {spec:?}: failures are expected");
    }
    let cpus = facts::allowed_cpus();
    let threads = args.threads.unwrap_or(cpus.len().max(2)).max(1);
    let mut tally = sandwich::static_checks(&lib);
    let deadline = Instant::now() + Duration::from_secs_f64(args.duration);
    let latest = Arc::new(Latest::default());
    let pb = output::progress(args.duration.ceil() as u64, "check");
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (lib, latest, cpu) = (lib.clone(), Arc::clone(&latest), cpus[i % cpus.len()]);
            std::thread::spawn(move || sandwich::worker(&lib, cpu, deadline, &latest))
        })
        .collect();
    while Instant::now() < deadline {
        std::thread::sleep(
            Duration::from_millis(100).min(deadline.saturating_duration_since(Instant::now())),
        );
        pb.set_position(
            args.duration.ceil() as u64
                - deadline.saturating_duration_since(Instant::now()).as_secs(),
        );
    }
    for h in handles {
        match h.join() {
            Ok(t) => tally.merge(t),
            Err(_) => tally.expect("worker finished", "check thread", false, || {
                "a worker thread panicked".into()
            }),
        }
    }
    pb.finish_and_clear();
    let passed = tally.passed();
    if json {
        output::print_json(&CheckReport {
            passed,
            duration: args.duration,
            threads,
            cpus: cpus.clone(),
            faults: spec,
            checks: lines(&tally),
        })?;
    } else {
        print_text(&tally, args, threads, &cpus);
    }
    Ok(if passed { 0 } else { 1 })
}

/// The text report: the result first, then each failure with its first bad reading, then
/// the table of failed checks (of every check with `--verbose`) and what its columns mean.
fn print_text(tally: &Tally, args: &CheckArgs, threads: usize, cpus: &[usize]) {
    let all = lines(tally);
    let total: u64 = all.iter().map(|l| l.checked).sum();
    let failed: u64 = all.iter().map(|l| l.failures).sum();
    let failing = all.iter().filter(|l| !l.passed).count();
    println!(
        "{}: {} checks, {} readings on {} thread(s) over CPUs {:?} for {} s; {} failed ({} readings)",
        if failing == 0 { "PASS" } else { "FAIL" },
        all.len(),
        total,
        threads,
        cpus,
        args.duration,
        failing,
        failed
    );
    for l in all.iter().filter(|l| !l.passed) {
        println!(
            "FAIL {} {}: {}",
            l.subject,
            l.check,
            l.example.unwrap_or("")
        );
    }
    let shown: Vec<&CheckLine> = all.iter().filter(|l| args.verbose || !l.passed).collect();
    if shown.is_empty() {
        println!("(vdsotime check --verbose lists every check)");
        return;
    }
    let mut t = output::table(&["result", "subject", "check", "readings", "failures"]);
    for l in shown {
        t.add_row(vec![
            if l.passed { "PASS" } else { "FAIL" }.to_string(),
            l.subject.to_string(),
            l.check.to_string(),
            l.checked.to_string(),
            l.failures.to_string(),
        ]);
    }
    println!();
    println!("{t}");
    println!("readings: library readings this check compared with the kernel; failures: those that disagreed.");
}
