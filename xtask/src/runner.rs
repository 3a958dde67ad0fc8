//! Running the core library's test suite for one target and reading its result.

use std::env;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::qemu::Emulator;
use crate::session;
use crate::targets::Target;
use crate::watch::{self, Waited};

/// What to run and where its output goes.
#[derive(Debug)]
pub struct Run<'a> {
    pub root: &'a Path,
    /// The packages to test (`-p` each).
    pub packages: &'a [&'a str],
    pub target: Target,
    pub emulator: Option<&'a Emulator>,
    /// Extra rustc and rustdoc flags for this target (static linking).
    pub flags: Vec<String>,
    pub dump_dir: Option<&'a Path>,
    /// More environment, set last (it may override the target's linker).
    pub env: Vec<(String, String)>,
    /// One `cargo test` invocation per entry: the arguments after `--target T`.
    pub passes: Vec<Vec<String>>,
    /// Built as the code that ships is ([`RELEASE`]).
    pub release: bool,
    pub log: PathBuf,
    pub timeout: Duration,
}

/// How the core's tests are built for `cross` and the kernel machines alike (so the two
/// share one build per target): as a release build, the code that ships (naked
/// trampolines, IFUNC resolvers and inline assembly at the optimisation the tool has),
/// which also spends no time on debug information.
pub const RELEASE: &str = "--release";

/// Test counts summed over every `test result:` line of the run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

/// The outcome of one target's run.
#[derive(Debug)]
pub struct Outcome {
    /// `None` on success, else why it failed.
    pub failure: Option<String>,
    pub counts: Counts,
    pub elapsed: Duration,
}

/// `extra` after the flags the caller already set (in `encoded` or `plain`), in
/// cargo's 0x1f-separated form, so paths and a caller's RUSTFLAGS both survive.
fn joined_flags(encoded: &str, plain: &str, extra: &[String]) -> String {
    let mut flags: Vec<String> = match env::var(encoded) {
        Ok(old) if !old.is_empty() => old.split('\x1f').map(str::to_string).collect(),
        _ => env::var(plain)
            .map(|old| old.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    };
    flags.extend_from_slice(extra);
    flags.join("\x1f")
}

/// Sets what building for `target` needs: its linker and extra flags (with `--target`
/// these reach only target artifacts, never build scripts), and with `optimize`, opt-level 1
/// for code that runs emulated in a debug build (the C library's tests; the core's are
/// [`RELEASE`] builds).
pub fn target_env(cmd: &mut Command, target: &Target, flags: &[String], optimize: bool) {
    if let Some(linker) = target.linker_command() {
        cmd.env(format!("CARGO_TARGET_{}_LINKER", target.env_key()), linker);
    }
    if optimize {
        // Unoptimized code under emulation is slow enough to dominate the run (the
        // parser-mutation tests took minutes): optimize a little, keeping debug
        // assertions and overflow checks, unless the caller chose a level.
        for var in [
            "CARGO_PROFILE_DEV_OPT_LEVEL",
            "CARGO_PROFILE_TEST_OPT_LEVEL",
        ] {
            if env::var_os(var).is_none() {
                cmd.env(var, "1");
            }
        }
    }
    if !flags.is_empty() {
        let rustflags = joined_flags("CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", flags);
        let docflags = joined_flags("CARGO_ENCODED_RUSTDOCFLAGS", "RUSTDOCFLAGS", flags);
        cmd.env("CARGO_ENCODED_RUSTFLAGS", rustflags)
            .env("CARGO_ENCODED_RUSTDOCFLAGS", docflags)
            .env_remove("RUSTFLAGS")
            .env_remove("RUSTDOCFLAGS");
    }
}

/// Builds `cargo test -p <package>... --target T <args>` with this target's linker and runner.
fn command(run: &Run, args: &[String]) -> Command {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(run.root)
        .arg("test")
        .args(run.packages.iter().flat_map(|p| ["-p", p]))
        .args(["--target", run.target.triple])
        .args(run.release.then_some(RELEASE))
        .args(args)
        .env("CARGO_TERM_COLOR", "never")
        .stdin(Stdio::null());
    target_env(&mut cmd, &run.target, &run.flags, run.emulator.is_some());
    if let Some(emulator) = run.emulator {
        cmd.env(
            format!("CARGO_TARGET_{}_RUNNER", run.target.env_key()),
            &emulator.command,
        );
        // Tests may scale down what an emulator cannot keep up with (signal storms).
        cmd.env(
            "VDSOTIME_EMULATOR",
            format!("{} {}", emulator.command, emulator.version),
        );
    }
    if let Some(dir) = run.dump_dir {
        cmd.env("VDSOTIME_DUMP_DIR", dir);
    }
    cmd.envs(run.env.iter().map(|(k, v)| (k, v)));
    // A new session, so a timeout can end cargo and every process under it together.
    session::start_new(&mut cmd);
    cmd
}

/// The limit for building a pass's tests, apart from `run.timeout` for running them: a
/// build from scratch beside another target's on a busy machine is slow, not hung.
const BUILD_LIMIT: Duration = Duration::from_secs(1800);

/// Runs every pass, their whole output in `run.log`: builds its tests (`--no-run`, ended
/// after [`BUILD_LIMIT`]), then runs them (ended after `run.timeout`).
pub fn run(run: &Run) -> Outcome {
    let start = Instant::now();
    let _ = File::create(&run.log);
    let mut failure = None;
    for args in &run.passes {
        let result = execute(run, &build_only(args), BUILD_LIMIT)
            .and_then(|()| execute(run, args, run.timeout));
        if let Err(why) = result {
            failure.get_or_insert(why);
        }
    }
    let summary = read_log(&run.log);
    let failure = match (failure, summary.counts.failed) {
        (Some(why), _) => Some(why),
        (None, 0) => None,
        (None, n) => Some(format!("{n} tests failed")),
    };
    let failure = failure.map(|why| match summary.detail {
        Some(detail) => format!("{why}: {detail}"),
        None => why,
    });
    Outcome {
        failure,
        counts: summary.counts,
        elapsed: start.elapsed(),
    }
}

/// `args` for building only: `--no-run`, without the arguments for the test binaries.
fn build_only(args: &[String]) -> Vec<String> {
    let mut build: Vec<String> = args.iter().take_while(|a| *a != "--").cloned().collect();
    build.push("--no-run".to_string());
    build
}

/// Spawns one cargo command and waits for it within `limit` (see [`watch`]); an error
/// says why it did not succeed.
fn execute(run: &Run, args: &[String], limit: Duration) -> Result<(), String> {
    let mut log = OpenOptions::new()
        .append(true)
        .open(&run.log)
        .map_err(|e| format!("{}: {e}", run.log.display()))?;
    let _ = writeln!(
        log,
        "=== cargo test -p {} --target {} {}",
        run.packages.join(" -p "),
        run.target.triple,
        args.join(" ")
    );
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let mut child = command(run, args)
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    let sid = child.id();
    let start = Instant::now();
    let mut note = |line: &str| {
        let _ = writeln!(log_again(run), "{line}");
    };
    let result = match watch::wait(&mut child, &watch::Limits::new(limit), &mut note) {
        Ok(Waited::Exited(status)) if status.success() => Ok(()),
        Ok(Waited::Exited(status)) => Err(format!(
            "cargo test {} exited with {status}",
            args.join(" ")
        )),
        Ok(Waited::TimedOut { verdict, after }) => {
            Err(format!("timed out after {} s ({verdict})", after.as_secs()))
        }
        Err(e) => Err(format!("waiting for cargo: {e}")),
    };
    let _ = writeln!(
        log_again(run),
        "=== xtask: that took {} s of its {} s limit",
        start.elapsed().as_secs(),
        limit.as_secs()
    );
    // What the tests left behind must not run on into the next target.
    let leftovers = session::kill_all(sid);
    if leftovers > 0 {
        let _ = writeln!(
            log_again(run),
            "=== xtask: killed {leftovers} processes left running after cargo test"
        );
    }
    result
}

/// The log of `run`, opened again for appending (errors go nowhere).
fn log_again(run: &Run) -> Box<dyn Write> {
    match OpenOptions::new().append(true).open(&run.log) {
        Ok(file) => Box::new(file),
        Err(_) => Box::new(std::io::sink()),
    }
}

/// What the log says: summed counts and the first error or failed test names.
#[derive(Debug, Default)]
struct Summary {
    counts: Counts,
    detail: Option<String>,
}

fn read_log(path: &Path) -> Summary {
    let mut summary = Summary::default();
    let Ok(file) = File::open(path) else {
        return summary;
    };
    let mut failed_tests: Vec<String> = Vec::new();
    let mut first_error = None;
    // Only the first result line after cargo names a test binary counts: tests that run
    // a child test process may print the child's result lines too.
    let mut expecting = false;
    for line in BufReader::new(file).lines().map_while(Result::ok) {
        let trimmed = line.trim_start();
        if trimmed.starts_with("Running ") || trimmed.starts_with("Doc-tests ") {
            expecting = true;
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            if std::mem::take(&mut expecting) {
                add_counts(&mut summary.counts, rest);
            }
        } else if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|l| l.strip_suffix(" stdout ----"))
        {
            if !failed_tests.iter().any(|t| t == name) {
                failed_tests.push(name.to_string());
            }
        } else if first_error.is_none() && line.starts_with("error") {
            first_error = Some(line);
        }
    }
    summary.detail = if failed_tests.is_empty() {
        first_error
    } else {
        Some(failed_tests.join(", "))
    };
    summary
}

/// Adds `ok. 3 passed; 1 failed; 2 ignored; ...` to the counts.
pub fn add_counts(counts: &mut Counts, text: &str) {
    for part in text.split(';') {
        let mut words = part.split_whitespace().rev();
        let (Some(kind), Some(number)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(n) = number.parse::<u64>() else {
            continue;
        };
        match kind {
            "passed" => counts.passed += n,
            "failed" => counts.failed += n,
            "ignored" => counts.ignored += n,
            _ => {}
        }
    }
}

/// The last `lines` lines of the log, to show beside a failure.
pub fn tail(path: &Path, lines: usize) -> Vec<String> {
    let Ok(file) = File::open(path) else {
        return Vec::new();
    };
    let all: Vec<String> = BufReader::new(file).lines().map_while(Result::ok).collect();
    all[all.len().saturating_sub(lines)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_over_result_lines() {
        let mut c = Counts::default();
        add_counts(
            &mut c,
            "ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s",
        );
        add_counts(
            &mut c,
            "FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out",
        );
        assert_eq!((c.passed, c.failed, c.ignored), (15, 2, 1));
    }

    #[test]
    fn the_build_step_keeps_cargos_arguments_only() {
        let args: Vec<String> = ["--no-fail-fast", "--", "--skip", "x"]
            .map(String::from)
            .to_vec();
        assert_eq!(build_only(&args), ["--no-fail-fast", "--no-run"]);
        assert_eq!(build_only(&[]), ["--no-run"]);
    }
}
