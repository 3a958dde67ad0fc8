//! The visible-skip helper (`tests/support/skip.rs`) does what the tests rely on: a skip
//! prints `SKIP <test>: <reason>` on the process's real standard error (which `cargo test`
//! shows even for a passing test) and passes; `VDSOTIME_REQUIRE` naming the requirement
//! turns it into a failure; a misspelt requirement is an error. Each case runs this binary
//! again, so the environment variable is the child's own.

mod support;

use std::process::{Command, Output};

const CHILD_ENV: &str = "VDSOTIME_SKIP_HELPER_CHILD";

/// Runs `child` below in a fresh process with `VDSOTIME_REQUIRE=require`, output captured
/// the way the harness captures a test's.
fn run_child(require: &str) -> Output {
    support::process::output(
        Command::new(std::env::current_exe().expect("current_exe"))
            .args(["--exact", "child", "--test-threads=1"])
            .env(CHILD_ENV, "1")
            .env(support::skip::REQUIRE_ENV, require),
        support::child::LIMIT,
    )
}

#[test]
fn child() {
    if std::env::var_os(CHILD_ENV).is_some() {
        support::skip::skip("skip_helper child", "timens", "a demonstration");
    }
}

#[test]
fn a_skip_is_printed_past_the_harness_and_passes() {
    for require in ["", "seccomp,strace", " vdso , valgrind "] {
        let out = run_child(require);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{require:?}: {out:?}");
        // Without --nocapture: only a write past the harness's capture gets here.
        assert!(
            stderr.contains("SKIP skip_helper child: a demonstration (needs timens)\n"),
            "{require:?}: {stderr}"
        );
    }
}

#[test]
fn a_required_skip_fails() {
    for require in ["timens", "seccomp,timens", "strace, timens ,valgrind"] {
        let out = run_child(require);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{require:?} passed");
        assert!(
            text.contains(
                "timens is required by VDSOTIME_REQUIRE but unavailable: a demonstration"
            ),
            "{require:?}: {text}"
        );
    }
}

#[test]
fn an_unknown_requirement_is_an_error() {
    let out = run_child("timns");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(text.contains("unknown requirement \"timns\""), "{text}");
}
