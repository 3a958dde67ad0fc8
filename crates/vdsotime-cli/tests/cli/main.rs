//! Runs the built `vdsotime` binary against this machine's kernel and checks its
//! exit statuses and documents. Small --calls/--trials/--trial-us keep it fast;
//! nothing here asserts a timing.

mod bench;
mod bench_getrandom;
mod check;
mod doctor;
mod dump;
mod info;
mod summary;
mod timens;

/// The core's visible-skip helper (`SKIP <test>: <reason>`, or a failure where
/// `VDSOTIME_REQUIRE` names the requirement).
#[path = "../../../vdsotime/tests/support/skip.rs"]
mod skip;

/// The core's runner of test processes: a time limit that kills the whole process group.
#[path = "../../../vdsotime/tests/support/process.rs"]
mod process;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

/// The limit for one run of a program: far above what any takes.
pub const LIMIT: Duration = Duration::from_secs(120);

/// Runs vdsotime with `args` and extra environment variables.
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
    c.args(args).env_remove("VDSOTIME_FAULT");
    for (k, v) in env {
        c.env(k, v);
    }
    process::output(&mut c, LIMIT)
}

/// Runs vdsotime with `args`.
pub fn run(args: &[&str]) -> Output {
    run_env(args, &[])
}

/// Exit code, stdout, stderr as text.
pub fn parts(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs with `--json`, expects `code`, and parses stdout.
pub fn json(args: &[&str], code: i32) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (c, out, err) = parts(&run(&a));
    assert_eq!(
        c, code,
        "vdsotime {a:?} exited {c}\nstdout:\n{out}\nstderr:\n{err}"
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("vdsotime {a:?}: bad JSON ({e}):\n{out}"))
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vdsotime-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// A positive, finite JSON number.
pub fn positive(v: &serde_json::Value, what: &str) -> f64 {
    let x = v
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {v}"));
    assert!(
        x.is_finite() && x > 0.0,
        "{what} = {x} is not positive and finite"
    );
    x
}

/// The vDSO's clock_gettime symbol on this architecture.
pub fn clock_gettime_symbol() -> &'static str {
    if cfg!(any(
        target_arch = "aarch64",
        target_arch = "powerpc64",
        target_arch = "s390x"
    )) {
        "__kernel_clock_gettime"
    } else {
        "__vdso_clock_gettime"
    }
}

#[test]
fn every_subcommand_has_help_with_examples() {
    for sub in [
        &[][..],
        &["info"],
        &["bench"],
        &["check"],
        &["doctor"],
        &["dump"],
    ] {
        let mut a = sub.to_vec();
        a.push("--help");
        let (c, out, _) = parts(&run(&a));
        assert_eq!(c, 0, "{a:?}");
        assert!(
            out.contains("Examples:"),
            "{a:?} help has no examples:\n{out}"
        );
        assert!(out.contains("--json"), "{a:?} help lacks --json");
    }
}

#[test]
fn unknown_subcommand_is_an_error() {
    let (c, _, err) = parts(&run(&["frobnicate"]));
    assert_eq!(c, 2, "{err}");
}
