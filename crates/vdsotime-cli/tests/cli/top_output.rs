//! What `vdsotime top` writes when it is cut short or asked for nothing.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::top::{online_cpus, perf_events_of, traceable, Running};
use crate::{parts, run};

/// SIGTERM (as `timeout` sends) or SIGINT during `--once` ends the watch early, with the
/// report of what was counted so far, and exit status 0.
#[test]
fn an_interrupted_watch_prints_what_it_counted() {
    const TEST: &str = "top_output::an_interrupted_watch_prints_what_it_counted";
    if !traceable(TEST) {
        return;
    }
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let mut top = Running(
            Command::new(env!("CARGO_BIN_EXE_vdsotime"))
                .args([
                    "top",
                    "--once",
                    "--duration",
                    "60",
                    "--json",
                    "--backend",
                    "perf",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start top"),
        );
        let waited = Instant::now();
        while perf_events_of(top.pid()) < online_cpus() {
            assert!(
                waited.elapsed() < Duration::from_secs(60),
                "top never opened its events"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(300));
        let pid = libc::pid_t::try_from(top.pid()).expect("a pid");
        // SAFETY: a signal to our own child, still unreaped.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let (mut out, mut err) = (String::new(), String::new());
        let _ = top
            .0
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out);
        let _ = top
            .0
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut err);
        let status = top.0.wait().expect("top's exit");
        assert!(status.success(), "signal {signal}: top {status}: {err}");
        let doc: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out:?}"));
        let seconds = doc["interval_seconds"].as_f64().expect("interval_seconds");
        assert!(seconds > 0.0 && seconds < 30.0, "{doc}");
    }
}

/// `--duration 0` is a usage error that says why, not that 0 is outside 0 to 3600.
#[test]
fn a_zero_duration_is_explained() {
    let (c, out, err) = parts(&run(&["top", "--once", "--duration", "0"]));
    assert_eq!(c, 64, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("0 seconds watches nothing"), "{err}");
    assert!(!err.contains("not between 0 and 3600"), "{err}");
}
