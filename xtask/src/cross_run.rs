//! Running the jobs `cargo xtask cross` prepared: each once per run, one or more at a time
//! (`--jobs`), with a line per job, the log's tail on a failure and a summary per run.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::qemu::Emulator;
use crate::repeat::Tally;
use crate::runner;
use crate::targets::Target;

/// One `cargo test` run to make: the core on a target, or the C crates on a C target.
#[derive(Debug)]
pub struct Job {
    pub packages: &'static [&'static str],
    pub target: Target,
    pub emulator: Option<Emulator>,
    pub flags: Vec<String>,
    pub env: Vec<(String, String)>,
    pub passes: Vec<Vec<String>>,
    /// Built with [`runner::RELEASE`] (the core's tests).
    pub release: bool,
}

/// What every job of a run shares.
#[derive(Debug)]
pub struct Context<'a> {
    pub root: &'a Path,
    pub logs: &'a Path,
    pub dump_dir: Option<&'a Path>,
    pub timeout: Duration,
    /// Jobs run at once.
    pub parallel: usize,
    /// This run's number, and whether there are several (then failed logs are kept).
    pub round: u32,
    pub repeated: bool,
}

/// What the jobs of a run added up to.
#[derive(Debug, Default)]
struct Sums {
    pass: usize,
    fail: usize,
    unavailable: usize,
    counts: runner::Counts,
}

/// Runs every job once, printing a line per job and a summary; returns how many failed
/// and how many were unavailable.
pub fn run_all(
    jobs: &[(String, Result<Job, String>)],
    cx: &Context,
    tally: &Mutex<Tally>,
) -> (usize, usize) {
    let sums = Mutex::new(Sums::default());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..cx.parallel.max(1) {
            s.spawn(|| {
                while let Some((label, job)) = jobs.get(next.fetch_add(1, Ordering::SeqCst)) {
                    run_one(label, job, cx, tally, &sums);
                }
            });
        }
    });
    let sums = sums.into_inner().unwrap_or_else(|e| e.into_inner());
    println!(
        "cross summary: {} runs: {} PASS, {} FAIL, {} UNAVAILABLE (logs in {})",
        jobs.len(),
        sums.pass,
        sums.fail,
        sums.unavailable,
        cx.logs.display()
    );
    let c = sums.counts;
    println!(
        "cross: {} passed, {} failed, {} skipped",
        c.passed, c.failed, c.ignored
    );
    (sums.fail, sums.unavailable)
}

/// `m` locked, whether or not a thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs one job and prints its result (a failure's lines in one piece, so parallel jobs
/// do not interleave them).
fn run_one(
    label: &str,
    job: &Result<Job, String>,
    cx: &Context,
    tally: &Mutex<Tally>,
    sums: &Mutex<Sums>,
) {
    let job = match job {
        Ok(job) => job,
        Err(why) => {
            lock(sums).unavailable += 1;
            println!("cross {label}: UNAVAILABLE: {why}");
            return;
        }
    };
    let how = job.emulator.as_ref().map_or("native".to_string(), |e| {
        format!("{} {}", e.command, e.version)
    });
    println!("cross {label}: running ({how})...");
    let log = cx.logs.join(format!("{}.log", label.replace(' ', "-")));
    let outcome = runner::run(&runner::Run {
        root: cx.root,
        packages: job.packages,
        target: job.target,
        emulator: job.emulator.as_ref(),
        flags: job.flags.clone(),
        dump_dir: cx.dump_dir,
        env: job.env.clone(),
        passes: job.passes.clone(),
        release: job.release,
        log: log.clone(),
        timeout: cx.timeout,
    });
    lock(tally).add(label, outcome.failure.as_deref(), outcome.elapsed);
    let c = outcome.counts;
    let stats = format!(
        "{how}; {} passed, {} failed, {} ignored; {} s",
        c.passed,
        c.failed,
        c.ignored,
        outcome.elapsed.as_secs()
    );
    let mut sums = lock(sums);
    sums.counts.passed += c.passed;
    sums.counts.failed += c.failed;
    sums.counts.ignored += c.ignored;
    let Some(why) = outcome.failure else {
        sums.pass += 1;
        println!("cross {label}: PASS ({stats})");
        return;
    };
    sums.fail += 1;
    drop(sums);
    let mut text = format!(
        "cross {label}: FAIL: {why} ({stats})\n---- last lines of {} ----\n",
        log.display()
    );
    for line in runner::tail(&log, 60) {
        let _ = writeln!(text, "  | {line}");
    }
    if cx.repeated {
        let _ = writeln!(text, "{}", keep_failed_log(&log, cx, label));
    }
    print!("{text}");
}

/// Keeps the log of a failed run out of the way of the next run (and of the SKIP lines
/// `.ci/run` collects from `<logs>/*.log`); says where.
fn keep_failed_log(log: &Path, cx: &Context, label: &str) -> String {
    let dir = cx.logs.join("failed");
    let kept: PathBuf = dir.join(format!("run{}-{}.log", cx.round, label.replace(' ', "-")));
    match fs::create_dir_all(&dir).and_then(|()| fs::copy(log, &kept)) {
        Ok(_) => format!(
            "cross {label}: log of run {} kept as {}",
            cx.round,
            kept.display()
        ),
        Err(e) => format!(
            "cross {label}: cannot keep the log of run {}: {e}",
            cx.round
        ),
    }
}
