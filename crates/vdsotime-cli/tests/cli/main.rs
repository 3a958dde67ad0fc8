//! Runs the built `vdsotime` binary against this machine's kernel and checks its
//! exit statuses and documents. Small --calls/--trials/--trial-us keep it fast;
//! nothing here asserts a timing.

mod bench;
mod bench_getrandom;
mod check;
mod doctor;
mod dump;
mod expfmt;
mod fleet;
mod fleet_e2e;
mod fleet_faults;
mod fleet_hostile;
mod fleet_rules;
mod help_examples;
mod info;
mod manual;
mod modules;
mod output_file;
mod prometheus;
mod summary;
mod timens;
mod top;
mod top_backends;
mod top_hostile;
mod top_i386;
mod top_namespace;
mod top_output;
mod top_privilege;
mod top_reasons;
mod top_seccomp;
mod top_watch;
mod version;

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
        &["top"],
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
fn usage_errors_exit_64_everywhere() {
    for args in [
        &["frobnicate"][..],
        &["doctor", "--duraton", "1"],
        &["doctor", "--duration", "0"],
        &["doctor", "--duration", "abc"],
        &["doctor", "--format", "xml"],
        &["doctor", "--json", "--format", "prometheus"],
        &["bench", "--trial-us", "-5"],
        &["check", "--duration", "nan"],
        &["info", "--frob"],
        &["dump", "--nope"],
        &["bench-getrandom", "--trial-us", "0"],
        &["--nope"],
    ] {
        let (c, out, err) = parts(&run(args));
        assert_eq!(c, 64, "{args:?} exited {c}: {err}");
        assert!(out.is_empty(), "{args:?} wrote to stdout: {out}");
        assert!(err.contains("error:"), "{args:?}: {err}");
    }
}

/// The subcommands `vdsotime --help` lists (without `help`).
fn subcommands() -> Vec<String> {
    let (c, out, _) = parts(&run(&["--help"]));
    assert_eq!(c, 0);
    let listed = out
        .split_once("Commands:\n")
        .expect("a Commands: section")
        .1;
    listed
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// What the README, docs/tool.md and `--help` say about `--json` is what the commands do:
/// every command but `completions` and `man` takes it, and those two refuse it.
#[test]
fn every_command_but_completions_and_man_takes_json() {
    const CLAIM: &str = "Every command but `completions` and `man`";
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for doc in ["README.md", "docs/tool.md"] {
        let text = std::fs::read_to_string(root.join(doc)).expect(doc);
        assert!(
            text.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(CLAIM),
            "{doc} does not say {CLAIM:?}"
        );
    }
    let (_, top, _) = parts(&run(&["--help"]));
    assert!(
        top.contains("Every command but completions and man takes --json"),
        "{top}"
    );
    let commands = subcommands();
    assert!(commands.len() >= 8, "{commands:?}");
    for command in &commands {
        let (c, help, _) = parts(&run(&[command, "--help"]));
        assert_eq!(c, 0, "{command} --help");
        let without_json = matches!(command.as_str(), "completions" | "man");
        assert_eq!(
            help.contains("--json"),
            !without_json,
            "{command}: --json in its help:\n{help}"
        );
        if without_json {
            let args: &[&str] = match command.as_str() {
                "completions" => &["completions", "bash", "--json"],
                _ => &["man", "--json"],
            };
            let (c, out, err) = parts(&run(args));
            assert_eq!(c, 64, "{args:?} refuses --json: {err}");
            assert!(out.is_empty(), "{args:?}: {out}");
        }
    }
}

#[test]
fn help_documents_the_exit_codes() {
    for args in [&["--help"][..], &["doctor", "--help"]] {
        let (c, out, _) = parts(&run(args));
        assert_eq!(c, 0);
        assert!(out.contains("Exit status:"), "{args:?}: {out}");
        assert!(out.contains("64 usage error"), "{args:?}: {out}");
        assert!(
            out.contains("2 degraded") || out.contains("2 doctor: degraded"),
            "{out}"
        );
    }
}

/// Checks a side-by-side first-call document (`first_call_paths` of `bench`, `first_call`
/// of `bench-getrandom`): every path in `paths` ran once per round, in that order, with
/// its figures in order, and those in `no_allocation` allocated nothing.
pub fn check_first_calls(
    f: &serde_json::Value,
    rounds: u64,
    reference: &str,
    paths: &[&str],
    no_allocation: &[&str],
) {
    assert_eq!(f["rounds"].as_u64(), Some(rounds), "{f}");
    assert_eq!(f["reference"], reference, "{f}");
    let entries = f["paths"].as_array().unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, paths, "{f}");
    for p in entries {
        assert_eq!(
            p["runs"].as_u64(),
            Some(rounds),
            "every path ran each round: {p}"
        );
        assert!(!p["call"].as_str().unwrap().is_empty(), "{p}");
        let min = p["min_ns"].as_f64().unwrap();
        let median = p["median_ns"].as_f64().unwrap();
        assert!(min.is_finite() && min >= 0.0 && min <= median, "{p}");
        let ratio = ["ratio_q1", "ratio_to_reference", "ratio_q3"].map(|k| p[k].as_f64().unwrap());
        assert!(ratio[0] <= ratio[1] && ratio[1] <= ratio[2], "{p}");
        if p["path"] == reference {
            assert_eq!(ratio, [1.0; 3], "the reference against itself: {p}");
        }
        assert!(p["median_page_faults"].as_f64().unwrap() >= 0.0, "{p}");
        let allocations = p["allocations"].as_u64().unwrap();
        if no_allocation.contains(&p["path"].as_str().unwrap()) {
            assert_eq!(allocations, 0, "{p}");
        }
    }
}
