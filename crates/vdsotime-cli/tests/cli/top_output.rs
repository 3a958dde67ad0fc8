//! What `vdsotime top` writes when it is cut short or asked for nothing.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::skip::skip;
use crate::top::{finish, online_cpus, perf_events_of, ready, traceable, Running};
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
        let (out, err) = finish(&mut top);
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

/// CPU seconds `pid` has used (user and system), from /proc/PID/stat.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("its stat");
    let fields: Vec<&str> = stat.rsplit_once(") ").expect("stat").1.split(' ').collect();
    // utime and stime are fields 14 and 15, the 12th and 13th after the comm.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no memory effects.
    ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// The live view on a terminal whose standard input has ended (here /dev/null) waits
/// between reads as it does for keys, rather than polling an input that is always
/// "readable".
#[test]
fn the_live_view_does_not_spin_when_its_input_ends() {
    const TEST: &str = "top_output::the_live_view_does_not_spin_when_its_input_ends";
    let _alone = crate::top_watch::one_key_flood_at_a_time();
    if !traceable(TEST) {
        return;
    }
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: two out-pointers; no name, termios or window size asked for.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    use std::os::fd::FromRawFd;
    // SAFETY: both descriptors are new and owned here alone.
    let (mut screen, terminal) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    };
    let mut top = Running(
        Command::new(env!("CARGO_BIN_EXE_vdsotime"))
            // BPF: what top spends then does not grow with the other tests' calls.
            .args(["top", "--backend", "tracepoint"])
            .stdin(Stdio::null())
            .stdout(terminal)
            .stderr(Stdio::null())
            .spawn()
            .expect("start top"),
    );
    // What top draws is read and dropped, so its writes never wait.
    std::thread::spawn(move || {
        let mut sink = [0u8; 4096];
        while screen.read(&mut sink).is_ok_and(|n| n > 0) {}
    });
    let waited = Instant::now();
    while !ready(top.pid(), "tracepoint") {
        if top.0.try_wait().expect("top's status").is_some() {
            return skip(TEST, "bpf", "top --backend tracepoint could not count here");
        }
        assert!(waited.elapsed() < Duration::from_secs(60), "no BPF counter");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_seconds(top.pid());
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_seconds(top.pid()) - before;
    assert!(
        used < 0.5,
        "top used {used:.2} CPU seconds in 2 s of watching"
    );
}

/// `--format prometheus --output FILE` replaces FILE whole (no temporary file left), and
/// where it cannot write, FILE keeps what it had.
#[test]
fn prometheus_output_replaces_the_file_whole() {
    const TEST: &str = "top_output::prometheus_output_replaces_the_file_whole";
    if !traceable(TEST) {
        return;
    }
    let dir = crate::scratch("top-output");
    let file = dir.join("vdsotime_top.prom");
    std::fs::write(&file, "old\n").unwrap();
    let path = file.display().to_string();
    let args = [
        "top",
        "--once",
        "--duration",
        "0.3",
        "--format",
        "prometheus",
    ];
    let (c, out, err) = parts(&run(&[&args[..], &["--output", &path]].concat()));
    assert_eq!(c, 0, "{err}");
    assert!(out.is_empty(), "{out}");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains("\nvdsotime_top_interval_seconds "),
        "{written}"
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "only the file: {names:?}");
    // A directory where the temporary file would go, in its place: nothing is written.
    let blocked = dir.join("blocked.prom");
    std::fs::write(&blocked, "old\n").unwrap();
    let tmp_name = ".blocked.prom.";
    let (c, _, _) = parts(&run(&[
        &args[..],
        &["--output", &format!("{}/missing-dir/x.prom", dir.display())],
    ]
    .concat()));
    assert_eq!(c, 1, "an unwritable place is an error");
    assert_eq!(std::fs::read_to_string(&blocked).unwrap(), "old\n");
    assert!(!std::fs::read_dir(&dir).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(tmp_name)));
}
