//! Re-running this test binary as a child process, one test in it, so that test sees
//! the library fresh (first call, caller-given vDSO) or runs under a wrapper (strace,
//! unshare), with the time limit and hang report of [`super::process`].

#![allow(dead_code)]

use std::process::{Command, Output};
use std::time::Duration;

/// The limit for a child test process: far above the few seconds any takes natively,
/// as emulators run them many times slower.
pub const LIMIT: Duration = Duration::from_secs(120);

/// The command that runs test `name` of this binary alone, its output uncaptured, under
/// `wrapper` (a program and its arguments, or nothing).
pub fn command(name: &str, wrapper: &[&str]) -> Command {
    let exe = std::env::current_exe().expect("current_exe");
    let mut cmd = match wrapper.split_first() {
        Some((prog, rest)) => {
            let mut c = Command::new(prog);
            c.args(rest).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"]);
    cmd
}

/// Runs a child test process made by [`command`], passing its SKIP lines on; panics
/// with the hang report if it outlives `limit`.
pub fn run(cmd: &mut Command, limit: Duration) -> Output {
    let out = super::process::output(cmd, limit);
    super::skip::relay(&String::from_utf8_lossy(&out.stderr));
    out
}

/// Runs test `name` of this binary alone in a child with `env` set, optionally under a
/// wrapper command, and returns its output.
pub fn rerun(name: &str, env: (&str, &str), wrapper: &[&str]) -> Output {
    run(command(name, wrapper).env(env.0, env.1), LIMIT)
}

/// Asserts the child succeeded and printed `marker`; shows its output otherwise.
pub fn assert_ran(out: &Output, marker: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(marker),
        "child did not print {marker:?}: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
