//! Re-running this test binary as a child process, one test in it, so that test sees
//! the library fresh (first call, caller-given vDSO) or runs under a wrapper (strace).

#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs test `name` of this binary alone in a child with `env` set, optionally under a
/// wrapper command, and returns its output.
pub fn rerun(name: &str, env: (&str, &str), wrapper: &[&str]) -> Output {
    let exe = std::env::current_exe().expect("current_exe");
    let mut cmd = match wrapper.split_first() {
        Some((prog, rest)) => {
            let mut c = Command::new(prog);
            c.args(rest).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    let out = cmd
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .output()
        .expect("spawn the child test process");
    super::skip::relay(&String::from_utf8_lossy(&out.stderr));
    out
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
