//! Every example in every `--help` runs as printed: each line under `Examples:` that
//! starts with `vdsotime` is run by bash (with `pipefail`) in a scratch directory, with
//! this build's `vdsotime` first on the PATH, and must succeed (the doctor's may also say
//! "degraded", exit 2, on a machine that is). The examples only write into the current
//! directory, so nothing outside the scratch directory changes. A line shown in several
//! helps runs once, and two run at a time.

use std::path::Path;
use std::process::Command;

use crate::skip::skip;
use crate::{parts, run};

/// The subcommands whose help is read, "" being the top level.
const HELPS: [&str; 10] = [
    "",
    "info",
    "bench",
    "bench-getrandom",
    "check",
    "doctor",
    "dump",
    "completions",
    "man",
    "top",
];

/// The example command lines of one `--help`.
fn examples(sub: &str) -> Vec<String> {
    let args: Vec<&str> = [sub, "--help"]
        .into_iter()
        .filter(|a| !a.is_empty())
        .collect();
    let (code, out, _) = parts(&run(&args));
    assert_eq!(code, 0, "vdsotime {sub} --help");
    let section = out
        .split_once("Examples:\n")
        .unwrap_or_else(|| panic!("vdsotime {sub} --help has no Examples:\n{out}"))
        .1;
    section
        .lines()
        .take_while(|l| l.starts_with("  ") || l.is_empty())
        .map(str::trim)
        .filter(|l| l.starts_with("vdsotime"))
        .map(String::from)
        .collect()
}

/// Runs one example line in a scratch directory; its exit code and output.
fn run_line(line: &str, n: usize, path: &str) -> (i32, String) {
    let dir =
        std::env::temp_dir().join(format!("vdsotime-help-example-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let out = crate::process::output(
        Command::new("bash")
            .args(["-o", "pipefail", "-c", line])
            .current_dir(&dir)
            .env("PATH", path)
            .env("MANPAGER", "cat")
            .env_remove("VDSOTIME_FAULT"),
        crate::LIMIT,
    );
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Whether this process is root (`vdsotime top` traces only as root or with CAP_PERFMON).
fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn every_help_example_runs_as_printed() {
    const TEST: &str = "every_help_example_runs_as_printed";
    let missing: Vec<&str> = ["jq", "readelf", "objdump", "man"]
        .into_iter()
        .filter(|tool| {
            !crate::process::run(
                Command::new("sh").args(["-c", &format!("command -v {tool}")]),
                crate::LIMIT,
            )
            .is_ok_and(|o| o.status.success())
        })
        .collect();
    let bin = Path::new(env!("CARGO_BIN_EXE_vdsotime"))
        .parent()
        .expect("the binary's directory");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut lines: Vec<(String, &str)> = Vec::new();
    for sub in HELPS {
        for line in examples(sub) {
            if let Some(tool) = missing
                .iter()
                .find(|t| line.contains(&format!("| {t}")) || line.contains(&format!("&& {t}")))
            {
                skip(TEST, "help-tools", format!("`{line}` needs {tool}"));
            } else if line.starts_with("vdsotime top") && !root() {
                skip(TEST, "perf", format!("`{line}` needs root"));
            } else if !lines.iter().any(|(l, _)| *l == line) {
                lines.push((line, sub));
            }
        }
    }
    assert!(lines.len() >= 20, "only {} examples found", lines.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((line, sub)) = lines.get(n) else {
                    break;
                };
                let (code, out) = run_line(line, n, &path);
                let degraded_ok = line.starts_with("vdsotime doctor") && code == 2;
                if code != 0 && !degraded_ok {
                    failures.lock().expect("lock").push(format!(
                        "`{line}` (from vdsotime {sub} --help) exited {code}:\n{out}"
                    ));
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
