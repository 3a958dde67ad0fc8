//! `vdsotime top` against real processes on this kernel: every call of a loop counted, the
//! documents, the privilege error as a real unprivileged process, bad input. Shared
//! helpers for `top_reasons.rs`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::skip::skip;
use crate::{parts, run, run_env, scratch};

/// A child process killed when dropped, so a failing test leaves nothing running.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

/// Starts `cmd` with its output discarded.
pub fn start(cmd: &mut Command) -> Running {
    Running(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the program"),
    )
}

/// Whether `top` may trace here; prints the SKIP line (or fails where required) if not.
pub fn traceable(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip(
            test,
            "perf",
            "not root: perf_event_open on the syscall tracepoints needs root or CAP_PERFMON",
        );
        return false;
    }
    let (c, _, err) = parts(&run(&["top", "--once", "--duration", "0.1", "--json"]));
    if c != 0 {
        skip(
            test,
            "perf",
            format!("`vdsotime top` cannot trace here (exit {c}): {err}"),
        );
        return false;
    }
    true
}

/// The loop program (tests/cli/top_loop.c) built into `dir`, or `None` after a SKIP.
pub fn build_loop(test: &str, dir: &Path) -> Option<PathBuf> {
    build_c(test, dir, "top_loop")
}

/// The test program tests/cli/`name`.c built into `dir`, or `None` after a SKIP.
pub fn build_c(test: &str, dir: &Path, name: &str) -> Option<PathBuf> {
    build_c_with(test, dir, name, &[])
}

/// [`build_c`] with extra compiler flags (`-static`).
pub fn build_c_with(test: &str, dir: &Path, name: &str, flags: &[&str]) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/cli/{name}.c"));
    let exe = dir.join(name);
    match Command::new("cc")
        .arg("-O2")
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
    {
        Ok(o) if o.status.success() => Some(exe),
        Ok(o) => {
            skip(
                test,
                "native-cc",
                format!("cc failed: {}", String::from_utf8_lossy(&o.stderr)),
            );
            None
        }
        Err(e) => {
            skip(test, "native-cc", format!("no cc: {e}"));
            None
        }
    }
}

/// `top --once --json` for `seconds`, with `extra` arguments; exit 0 expected.
pub fn top_json(seconds: &str, extra: &[&str]) -> Value {
    let mut args = vec!["top", "--once", "--duration", seconds, "--json"];
    args.extend_from_slice(extra);
    let (c, out, err) = parts(&run(&args));
    assert_eq!(c, 0, "top {args:?} exited {c}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out}"))
}

/// The rows of `doc` for `pid`.
pub fn rows_of(doc: &Value, pid: u32) -> Vec<Value> {
    doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["pid"].as_u64() == Some(u64::from(pid)))
        .cloned()
        .collect()
}

/// Starts the loop program in `mode` at `rate` calls/s and watches it for `seconds` with
/// `top --pid`: the loop (kept running until dropped), the document and the loop's rows;
/// `None` after a SKIP.
pub fn watch_loop(
    test: &str,
    mode: &str,
    rate: &str,
    seconds: &str,
) -> Option<(Running, Value, Vec<Value>)> {
    let dir = scratch(&format!("top-{mode}-{rate}"));
    if !traceable(test) {
        return None;
    }
    let exe = build_loop(test, &dir)?;
    // A neighbour making direct system calls as fast as it can: another process's flood
    // must not crowd the watched one's samples out of the buffers.
    let _flood = start(Command::new(&exe).args(["syscall", "100000000", "60"]));
    let child = start(Command::new(&exe).args([mode, rate, "60"]));
    std::thread::sleep(Duration::from_millis(200));
    let doc = top_json(seconds, &["--pid", &child.pid().to_string()]);
    let rows = rows_of(&doc, child.pid());
    Some((child, doc, rows))
}

pub use crate::top_watch::{
    finish, make_calls, online_cpus, perf_events_of, perf_rings_of, ready, wait_until_ready,
};

/// Every direct system call of a process, counted once: the loop makes exactly 2000
/// while `top --pid` traces it, next to a neighbour flooding the host with its own, and
/// `top` must count all 2000, lose none and name the call, the clock and the program.
/// The calls start only once `top` holds its events, so nothing here depends on timing.
#[test]
fn every_direct_syscall_of_the_watched_loop_is_counted() {
    const TEST: &str = "top::every_direct_syscall_of_the_watched_loop_is_counted";
    const CALLS: u64 = 2000;
    let dir = scratch("top-exact");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    // A neighbour making direct system calls as fast as it can: another process's flood
    // must not crowd the watched one's samples out of the buffers.
    let _flood = start(Command::new(&exe).args(["syscall", "100000000", "60"]));
    // 2000 calls paced a microsecond apart, once a byte arrives on standard input.
    let mut looping = Running(
        Command::new(&exe)
            .args(["syscall", "1000000", "0.002", "wait"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the loop"),
    );
    let pid = looping.pid();
    let mut top = Running(
        Command::new(env!("CARGO_BIN_EXE_vdsotime"))
            .args([
                "top",
                "--once",
                "--duration",
                "3",
                "--json",
                "--backend",
                "perf",
            ])
            .arg("--pid")
            .arg(pid.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start top"),
    );
    let cpus = online_cpus();
    let waited = std::time::Instant::now();
    while perf_events_of(top.pid()) < cpus || perf_rings_of(top.pid()) < cpus {
        let exited = top.0.try_wait().expect("top's status");
        assert!(
            exited.is_none() && waited.elapsed() < Duration::from_secs(120),
            "top never opened and mapped its {cpus} events (exit {exited:?})"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The events are switched on just after the last buffer is mapped: a margin for that.
    std::thread::sleep(Duration::from_millis(500));
    use std::io::{Read, Write};
    let mut stdin = looping.0.stdin.take().expect("the loop's stdin");
    stdin.write_all(b"g").expect("start the loop's calls");
    let mut done = [0u8; 1];
    let read = looping
        .0
        .stdout
        .as_mut()
        .expect("the loop's stdout")
        .read_exact(&mut done);
    assert!(
        read.is_ok(),
        "the loop ended before its last call: {read:?}"
    );
    let (out, err) = finish(&mut top);
    let status = top.0.wait().expect("top's exit");
    drop(stdin);
    assert!(status.success(), "top exited {status}: {err}");
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out}"));
    let rows = rows_of(&doc, pid);
    assert_eq!(rows.len(), 1, "one row for the loop: {doc:#}");
    let r = &rows[0];
    assert_eq!(r["calls"], CALLS, "{r}");
    assert_eq!(doc["lost_samples"], 0, "{doc:#}");
    assert_eq!(r["syscall"], "clock_gettime", "{r}");
    assert_eq!(r["clock"], "CLOCK_MONOTONIC", "{r}");
    assert_eq!(r["comm"], "top_loop", "{r}");
    assert!(
        r["exe"].as_str().is_some_and(|e| e.ends_with("/top_loop")),
        "{r}"
    );
    // The doctor's clocksource verdict decides: a vDSO-capable one leaves only this.
    let expected = if doc_clocksource_slow(&doc) {
        "clocksource"
    } else {
        "direct_syscall"
    };
    assert_eq!(r["reason"], expected, "{r}");
    for key in ["fix", "per_second", "wasted_cpu"] {
        assert!(!r[key].is_null(), "{key} in {r}");
    }
    assert_eq!(doc["pid"].as_u64(), Some(u64::from(pid)));
    assert_eq!(doc["pid_exited"], false, "{doc}");
}

/// Whether the clocksource reason was given to any row (the host's clocksource cannot
/// be read by the vDSO).
fn doc_clocksource_slow(doc: &Value) -> bool {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["reason"] == "clocksource")
}

#[test]
fn a_pid_that_exits_during_the_interval_is_said_so() {
    const TEST: &str = "top::a_pid_that_exits_during_the_interval_is_said_so";
    let dir = scratch("top-exits");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    // Lives 8 s; top measures for a few seconds first, then watches 10 s.
    let child = start(Command::new(&exe).args(["syscall", "500", "8"]));
    let pid = child.pid().to_string();
    let (c, out, err) = parts(&run(&["top", "--once", "--duration", "10", "--pid", &pid]));
    assert_eq!(c, 0, "{err}");
    assert!(
        out.contains(&format!("Process {pid} exited during the interval.")),
        "{out}"
    );
}

#[test]
fn a_pid_that_does_not_exist_is_a_clear_error() {
    // Pids stop below 2^22; this one cannot exist.
    let (c, out, err) = parts(&run(&["top", "--once", "--pid", "99999999"]));
    assert_eq!(c, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("--pid 99999999: no such process"), "{err}");
}

/// perf's ring buffers need the syscall tracepoint; without it (the BPF counters do
/// not: `top_backends.rs`) the error names the kernel option, at once, for any user.
#[test]
fn a_kernel_without_syscall_tracepoints_is_named() {
    // A tracefs with events but no raw_syscalls, as a CONFIG_FTRACE_SYSCALLS=n kernel has.
    let dir = scratch("top-no-tracepoints");
    std::fs::create_dir_all(dir.join("events/sched")).unwrap();
    let tracefs = dir.display().to_string();
    let (c, _, err) = parts(&run_env(
        &["top", "--once", "--backend", "perf"],
        &[("VDSOTIME_TRACEFS", &tracefs)],
    ));
    assert_eq!(c, 1, "{err}");
    assert!(err.contains("CONFIG_FTRACE_SYSCALLS=n"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn prometheus_output_is_bounded_and_promtool_clean() {
    const TEST: &str = "top::prometheus_output_is_bounded_and_promtool_clean";
    if !traceable(TEST) {
        return;
    }
    let (c, out, err) = parts(&run(&[
        "top",
        "--once",
        "--duration",
        "1",
        "--format",
        "prometheus",
        "--top",
        "2",
    ]));
    assert_eq!(c, 0, "{err}");
    let per_comm = out
        .lines()
        .filter(|l| l.starts_with("vdsotime_top_calls_per_second{"))
        .count();
    assert!(per_comm <= 2, "at most --top 2 process names:\n{out}");
    assert!(
        out.contains("\nvdsotime_top_all_calls_per_second "),
        "{out}"
    );
    let doc = docs_top();
    for family in out.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
        let name = family.split(' ').next().unwrap();
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/top.md lacks {name}"
        );
    }
    let mut promtool = match Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(p) => p,
        Err(e) => return skip(TEST, "prometheus", format!("no promtool: {e}")),
    };
    use std::io::Write;
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(out.as_bytes())
        .unwrap();
    let o = promtool.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.status.success() && said.trim().is_empty(),
        "promtool: {said}\n{out}"
    );
}

/// docs/top.md.
fn docs_top() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/top.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every reason code `top --help` lists is in docs/top.md's table, and no other.
#[test]
fn the_docs_list_the_reason_codes_of_the_help() {
    let (_, help, _) = parts(&run(&["top", "--help"]));
    let section = help
        .split_once("Reasons, checked in this order")
        .expect("reasons")
        .1;
    let codes: Vec<&str> = section
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A code at the second column; its evidence may go on under it, indented more.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(codes.len(), 10, "{help}");
    let doc = docs_top();
    let table = doc.split_once("## Reasons").expect("a Reasons section").1;
    let table = table.split_once("\n## ").map_or(table, |(t, _)| t);
    let documented: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` | ").map(|(c, _)| c))
        .filter(|c| c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_'))
        .collect();
    assert_eq!(
        documented, codes,
        "docs/top.md's reason table, in the help's order"
    );
}

#[test]
fn bad_options_are_usage_errors() {
    for args in [
        &["top", "--duration", "0"][..],
        &["top", "--duration", "abc"],
        &["top", "--format", "xml"],
        &["top", "--json", "--format", "table"],
        &["top", "--pid", "-3"],
    ] {
        let (c, out, err) = parts(&run(args));
        assert_eq!(c, 64, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
    }
}
