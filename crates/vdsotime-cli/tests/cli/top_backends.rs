//! `vdsotime top`'s backends on this kernel: the BPF counters (`fentry`, `tracepoint`) and
//! perf's ring buffers (`perf`) each count every call of a short-lived process exactly;
//! `auto` takes fentry where the kernel allows it and otherwise says why not; where BPF is
//! denied `auto` falls back to perf and says why.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::skip::skip;
use crate::top::{
    build_loop, finish, make_calls, ready, rows_of, start, traceable, wait_until_ready, Running,
};
use crate::{parts, scratch};

/// The calls the loop makes: a rate of a million a second for 2 ms.
const CALLS: u64 = 2000;

/// The loop program `exe`, waiting for a byte on its standard input to make exactly
/// [`CALLS`] direct clock_gettime calls.
fn waiting_loop(exe: &Path) -> Running {
    let rate = (CALLS * 500).to_string();
    Running(
        Command::new(exe)
            .args(["syscall", &rate, "0.002", "wait"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the loop"),
    )
}

/// `top` (`make_top` given the loop's pid: a `--once --json` run) started; once it holds
/// its `backend`, the loop program `exe` makes exactly [`CALLS`] direct clock_gettime
/// calls and exits, well before `top`'s interval ends. Returns `top`'s document and the
/// loop's pid.
pub fn count_a_short_life(
    make_top: impl FnOnce(u32) -> Command,
    backend: &str,
    exe: &Path,
) -> (Value, u32) {
    count_a_life(make_top, backend, exe, false)
}

/// [`count_a_short_life`]; with `top_stopped`, `top` is stopped (SIGSTOP) over the loop's
/// whole life and resumed once the loop is reaped, so that it reads none of the calls
/// while the loop exists.
fn count_a_life(
    make_top: impl FnOnce(u32) -> Command,
    backend: &str,
    exe: &Path,
    top_stopped: bool,
) -> (Value, u32) {
    let mut looping = waiting_loop(exe);
    let pid = looping.pid();
    let mut top = Running(
        make_top(pid)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start top"),
    );
    wait_until_ready(&mut top, backend);
    if backend == "perf" {
        // perf's events are switched on just after the last buffer is mapped, in a loop
        // of ioctls no file shows: this wait is that loop's, many times over.
        std::thread::sleep(Duration::from_millis(200));
    }
    let signal = |sig| {
        // SAFETY: kill has no memory preconditions; `top` is this test's child, not yet
        // reaped, so its pid names it.
        let sent = unsafe { libc::kill(top.pid() as libc::pid_t, sig) };
        assert_eq!(sent, 0, "kill({}, {sig})", top.pid());
    };
    if top_stopped {
        signal(libc::SIGSTOP);
    }
    drop(make_calls(&mut looping, "the loop"));
    let status = looping.0.wait().expect("the loop's exit");
    assert!(status.success(), "the loop exited {status}");
    if top_stopped {
        let gone = !Path::new(&format!("/proc/{pid}")).exists();
        assert!(gone, "the loop is reaped");
        signal(libc::SIGCONT);
    }
    let (out, err) = finish(&mut top);
    let status = top.0.wait().expect("top's exit");
    assert!(status.success(), "top exited {status}: {err}");
    let doc = serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out}"));
    (doc, pid)
}

/// The one row of the loop in `doc`, with exactly [`CALLS`] calls, and nothing lost.
pub fn assert_counted_exactly(doc: &Value, pid: u32, backend: &str) {
    assert_eq!(doc["backend"], backend, "{doc:#}");
    let rows = rows_of(doc, pid);
    assert_eq!(rows.len(), 1, "one row for the loop (pid {pid}): {doc:#}");
    let r = &rows[0];
    let lost = &doc["lost_samples"];
    assert_eq!(r["calls"], CALLS, "{backend}, {lost} lost: {r}");
    assert_eq!(r["syscall"], "clock_gettime", "{r}");
    assert_eq!(r["clock"], "CLOCK_MONOTONIC", "{r}");
    assert_eq!(r["comm"], "top_loop", "{r}");
    assert_eq!(r["exited"], true, "{r}");
    assert_eq!(lost, 0, "{doc:#}");
}

/// `top --backend B`, for each backend: a process that makes exactly 2000 direct system
/// calls and exits inside the interval is listed with exactly 2000.
#[test]
fn each_backend_counts_every_call_of_a_process_that_exits_in_the_interval() {
    const TEST: &str =
        "top_backends::each_backend_counts_every_call_of_a_process_that_exits_in_the_interval";
    let dir = scratch("top-backends");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    let fentry = fentry_opens(TEST);
    for backend in ["fentry", "tracepoint", "perf"] {
        if backend == "fentry" && !fentry {
            continue;
        }
        // perf beside the BPF counter, both on sys_enter: the counter must leave
        // every call to perf's events (a classic tracepoint's program could stop them).
        let beside = (backend == "perf").then(bpf_counter_running);
        let make_top = |pid: u32| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
            cmd.args(["top", "--once", "--duration", "3", "--json"])
                .args(["--backend", backend]);
            // perf without --pid copies every time call of the host: another test's
            // flood could fill its buffers. The BPF counter has no buffer to fill.
            if backend == "perf" {
                cmd.args(["--pid", &pid.to_string()]);
            }
            cmd
        };
        let (doc, pid) = count_a_short_life(make_top, backend, &exe);
        assert_counted_exactly(&doc, pid, backend);
        let reason = format!("--backend {backend}");
        assert_eq!(doc["backend_reason"], reason, "{doc:#}");
        eprintln!("{TEST}: {backend}: {CALLS} of {CALLS} calls counted");
        drop(beside);
    }
}

/// `top --pid P` reads P when it starts: a process that makes its calls, exits and is
/// reaped before `top` has read any of them keeps its name and is judged by its program,
/// not listed as gone unread. `top` is stopped (SIGSTOP) over the loop's whole life, so
/// perf's rings are read only after the process is gone.
#[test]
fn a_watched_pid_gone_before_its_calls_are_read_keeps_its_name() {
    const TEST: &str = "top_backends::a_watched_pid_gone_before_its_calls_are_read_keeps_its_name";
    let dir = scratch("top-pid-gone");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    let make_top = |pid: u32| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
        cmd.args(["top", "--once", "--duration", "3", "--json"])
            .args(["--backend", "perf", "--pid", &pid.to_string()]);
        cmd
    };
    let (doc, pid) = count_a_life(make_top, "perf", &exe, true);
    assert_counted_exactly(&doc, pid, "perf");
    let row = &rows_of(&doc, pid)[0];
    assert!(
        row["exe"]
            .as_str()
            .is_some_and(|e| e.ends_with("/top_loop")),
        "{row}"
    );
    // Judged by its program: the clocksource where the vDSO cannot read it, else this.
    let reason = row["reason"].as_str().unwrap_or_default();
    assert!(["direct_syscall", "clocksource"].contains(&reason), "{row}");
}

/// Why `top --backend fentry` does not open here (the kernel refused, or has no BTF):
/// its error, or `None` where it opens.
pub fn fentry_refused() -> Option<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
    cmd.args([
        "top",
        "--once",
        "--duration",
        "0.1",
        "--json",
        "--backend",
        "fentry",
    ]);
    let (c, out, err) = parts(&crate::process::output(&mut cmd, crate::LIMIT));
    assert!(!err.contains("panicked"), "{err}");
    if c == 0 {
        let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(doc["backend"], "fentry", "{doc:#}");
        return None;
    }
    Some(format!(
        "top --backend fentry exits {c} here: {}",
        err.trim()
    ))
}

/// Whether fentry counts here; if not, a SKIP of `test`'s fentry part.
pub fn fentry_opens(test: &str) -> bool {
    match fentry_refused() {
        None => true,
        Some(why) => {
            skip(test, "fentry", why);
            false
        }
    }
}

/// `auto` counts with fentry where the kernel lets `--backend fentry` open, with no
/// reason (nothing better exists); elsewhere with the tracepoint, giving `--backend
/// fentry`'s own error as the reason.
#[test]
fn auto_takes_fentry_where_it_opens_and_says_why_not_otherwise() {
    const TEST: &str = "top_backends::auto_takes_fentry_where_it_opens_and_says_why_not_otherwise";
    if !traceable(TEST) {
        return;
    }
    let refused = fentry_refused();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
    cmd.args(["top", "--once", "--duration", "0.1", "--json"]);
    let (c, out, err) = parts(&crate::process::output(&mut cmd, crate::LIMIT));
    assert_eq!(c, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    match refused {
        None => {
            assert_eq!(doc["backend"], "fentry", "{doc:#}");
            assert_eq!(doc["backend_reason"], Value::Null, "{doc:#}");
        }
        Some(why) => {
            let reason = doc["backend_reason"].as_str().unwrap_or_default();
            let first = why.lines().next().unwrap_or_default();
            let kernel_said = [
                "cannot trace system calls: ",
                "not permitted to trace system calls: ",
            ]
            .iter()
            .find_map(|p| first.split_once(p).map(|(_, rest)| rest))
            .unwrap_or(first)
            // The error names the backend asked for; auto's reason names what it left.
            .trim_start_matches("--backend fentry: ")
            .trim_end_matches('.');
            assert_ne!(doc["backend"], "fentry", "{doc:#}");
            assert!(
                reason.starts_with(&format!("fentry unavailable: {kernel_said}")),
                "the reason is --backend fentry's error ({why:?}): {reason:?}"
            );
            eprintln!(
                "{TEST}: auto counts with {} because {reason}",
                doc["backend"]
            );
        }
    }
}

/// A kernel built without syscall tracepoints (a tracefs with events but no
/// `raw_syscalls`, as `CONFIG_FTRACE_SYSCALLS=n` gives it): the BPF counters, which attach
/// without tracefs, still count every call exactly, `auto` among them; only perf's ring
/// buffers, which need the tracepoint, are refused, naming what is missing.
#[test]
fn without_syscall_tracepoints_the_bpf_counters_still_count() {
    const TEST: &str = "top_backends::without_syscall_tracepoints_the_bpf_counters_still_count";
    let dir = scratch("top-no-syscall-tracepoints");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    let tracefs = dir.join("tracefs");
    std::fs::create_dir_all(tracefs.join("events/sched")).unwrap();
    let with_tracefs = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vdsotime"));
        cmd.args(["top", "--once"]).args(args);
        cmd.env("VDSOTIME_TRACEFS", &tracefs);
        cmd
    };
    let best = if fentry_opens(TEST) {
        "fentry"
    } else {
        "tracepoint"
    };
    for (asked, counts) in [("auto", best), ("tracepoint", "tracepoint")] {
        let make_top = |_pid: u32| with_tracefs(&["--duration", "3", "--json", "--backend", asked]);
        let (doc, pid) = count_a_short_life(make_top, counts, &exe);
        assert_counted_exactly(&doc, pid, counts);
        eprintln!("{TEST}: --backend {asked}: {CALLS} of {CALLS} calls counted by {counts}");
    }
    let mut cmd = with_tracefs(&["--duration", "0.5", "--backend", "perf"]);
    let (c, out, err) = parts(&crate::process::output(&mut cmd, crate::LIMIT));
    assert_eq!(c, 1, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("CONFIG_FTRACE_SYSCALLS=n"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A `top --backend tracepoint` left running, once its program is attached.
fn bpf_counter_running() -> Running {
    let top = start(Command::new(env!("CARGO_BIN_EXE_vdsotime")).args([
        "top",
        "--once",
        "--duration",
        "60",
        "--backend",
        "tracepoint",
    ]));
    let waited = Instant::now();
    while !ready(top.pid(), "tracepoint") {
        assert!(
            waited.elapsed() < Duration::from_secs(120),
            "the BPF counter never attached"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    top
}

/// `top` with `args`, without CAP_BPF and CAP_SYS_ADMIN (root otherwise), as setpriv
/// runs it; `None` after a SKIP.
fn without_bpf(test: &str, args: &[&str]) -> Option<Command> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip(test, "bpf", "not root: the backends need root here");
        return None;
    }
    let caps = "-bpf,-sys_admin";
    let probe = Command::new("setpriv")
        .args(["--inh-caps", caps, "--bounding-set", caps, "true"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        skip(
            test,
            "bpf",
            format!("setpriv cannot drop CAP_BPF: {probe:?}"),
        );
        return None;
    }
    let mut cmd = Command::new("setpriv");
    cmd.args(["--inh-caps", caps, "--bounding-set", caps])
        .arg(env!("CARGO_BIN_EXE_vdsotime"))
        .args(args);
    Some(cmd)
}

/// Denied BPF, `auto` counts with perf, saying why; `--backend tracepoint` is refused
/// with exit 77 and the capability it lacks.
#[test]
fn denied_bpf_falls_back_to_perf_with_the_reason() {
    const TEST: &str = "top_backends::denied_bpf_falls_back_to_perf_with_the_reason";
    let dir = scratch("top-no-bpf");
    if !traceable(TEST) {
        return;
    }
    let Some(exe) = build_loop(TEST, &dir) else {
        return;
    };
    if without_bpf(TEST, &[]).is_none() {
        return;
    }
    let make_top = |pid: u32| {
        let pid = pid.to_string();
        let args = ["top", "--once", "--duration", "3", "--json", "--pid", &pid];
        without_bpf(TEST, &args).expect("setpriv ran above")
    };
    let (doc, pid) = count_a_short_life(make_top, "perf", &exe);
    assert_counted_exactly(&doc, pid, "perf");
    let reason = doc["backend_reason"].as_str().unwrap_or_default();
    for needle in [
        "BPF tracepoint unavailable",
        "Operation not permitted",
        "CAP_BPF",
    ] {
        assert!(reason.contains(needle), "{needle:?} in {reason:?}");
    }
    let forced = [
        "top",
        "--once",
        "--duration",
        "0.5",
        "--backend",
        "tracepoint",
    ];
    let mut cmd = without_bpf(TEST, &forced).expect("setpriv ran above");
    let (c, out, err) = parts(&crate::process::output(&mut cmd, crate::LIMIT));
    assert_eq!(c, 77, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        err.contains("CAP_BPF") && !err.contains("panicked"),
        "{err}"
    );
}

/// Calls with this many distinct clock ids: more (process, call, clock) keys than the
/// BPF counter's map holds (4096).
const CLOCK_IDS: u64 = 5000;

/// A Python process that, once a byte arrives on its standard input, calls
/// clock_gettime directly with [`CLOCK_IDS`] distinct (invalid) clock ids, says so with
/// a byte, and exits when its standard input closes.
const MANY_CLOCKS: &str = "
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(16)
sys.stdin.buffer.read(1)
for clock in range(100000, 100000 + int(sys.argv[1])):
    libc.syscall(int(sys.argv[2]), clock, buf)
os.write(1, b'd')
sys.stdin.buffer.read()
";

/// The BPF counter's full map: every call it could not count is counted as such, so the
/// rows and `lost_samples` add up to every call made.
#[test]
fn a_full_bpf_map_counts_what_it_could_not_count() {
    const TEST: &str = "top_backends::a_full_bpf_map_counts_what_it_could_not_count";
    let _alone = crate::top_watch::one_key_flood_at_a_time();
    if !traceable(TEST) {
        return;
    }
    if cfg!(not(target_arch = "x86_64")) {
        skip(TEST, "bpf", "the test's clock_gettime number is x86_64's");
        return;
    }
    let spawned = Command::new("python3")
        .args(["-c", MANY_CLOCKS, &CLOCK_IDS.to_string(), "228"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut python = match spawned {
        Ok(child) => Running(child),
        Err(e) => return skip(TEST, "bpf", format!("no python3: {e}")),
    };
    let pid = python.pid();
    let mut top = Running(
        Command::new(env!("CARGO_BIN_EXE_vdsotime"))
            .args(["top", "--once", "--duration", "4", "--json"])
            .args(["--backend", "tracepoint", "--pid", &pid.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start top"),
    );
    wait_until_ready(&mut top, "tracepoint");
    let stdin = make_calls(&mut python, "python");
    let (out, err) = finish(&mut top);
    assert!(top.0.wait().expect("top's exit").success(), "{err}");
    drop(stdin);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out}"));
    let rows = rows_of(&doc, pid);
    let counted: u64 = rows
        .iter()
        .filter(|r| r["syscall"] == "clock_gettime" && r["clock"] != "CLOCK_MONOTONIC")
        .map(|r| r["calls"].as_u64().unwrap_or(0))
        .sum();
    let lost = doc["lost_samples"].as_u64().expect("lost_samples");
    assert!(lost > 0, "the map never filled: {counted} counted");
    assert_eq!(counted + lost, CLOCK_IDS, "{counted} counted, {lost} not");
    eprintln!("{TEST}: {counted} counted and {lost} not counted, of {CLOCK_IDS}");
}
