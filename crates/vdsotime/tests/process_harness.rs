//! The harness that runs test processes (`tests/support/process.rs`) keeps its promise:
//! a child that hangs is killed with its whole process group at its limit and reported
//! with the phase it announced, even when a process it started outside its group still
//! holds its output open; a child that exits is not waited for past its exit, and what
//! it left in its group is killed. Each case runs this binary again as the child.

mod support;

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::process;

const MODE_ENV: &str = "VDSOTIME_HARNESS_CHILD";
const HANG_TEST: &str = "a_hanging_child_is_killed_with_its_group_and_reported";
const EXIT_TEST: &str = "a_child_that_exits_has_its_leftovers_killed";
/// How long the sleeping grandchildren live if nothing kills them: bounded, so that a
/// failure of this test leaves nothing behind for long.
const GRANDCHILD_LIFE: Duration = Duration::from_secs(120);

/// This binary again, running test `name` with `MODE_ENV=mode`.
fn this_test(name: &str, mode: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("current_exe"));
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(MODE_ENV, mode);
    cmd
}

/// In child mode: starts a grandchild that sleeps, sharing this process's output; in a
/// process group of its own if `escape`. Returns its pid.
fn grandchild(name: &str, escape: bool) -> u32 {
    let mut cmd = this_test(name, "sleep");
    if escape {
        cmd.process_group(0);
    }
    cmd.spawn().expect("start a grandchild").id()
}

/// Whether process `pid` exists and has not died (a zombie has).
fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
    state.is_some_and(|s| !s.starts_with('Z') && !s.starts_with('X'))
}

/// Waits up to 10 s for `pid` to die.
fn dies(pid: u32) -> bool {
    let start = Instant::now();
    while alive(pid) {
        if start.elapsed() > Duration::from_secs(10) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// The numbers after `prefix` on the first stdout line that has it (after the test
/// harness's `test <name> ... `).
fn pids(stdout: &str, prefix: &str) -> Vec<u32> {
    let line = stdout.lines().find_map(|l| Some(l.split_once(prefix)?.1));
    let line = line.unwrap_or_else(|| panic!("no {prefix:?} line in:\n{stdout}"));
    line.split_whitespace()
        .map(|p| p.parse().expect("pid"))
        .collect()
}

/// Runs the child modes of both tests; true if this process is such a child.
fn child_mode(name: &str) -> bool {
    match std::env::var(MODE_ENV).as_deref() {
        Ok("sleep") => std::thread::sleep(GRANDCHILD_LIFE),
        Ok("hang") => {
            let (inside, outside) = (grandchild(name, false), grandchild(name, true));
            println!("GRANDCHILDREN {inside} {outside}");
            process::phase("hanging on purpose");
            std::thread::sleep(GRANDCHILD_LIFE);
        }
        Ok("leave") => println!("GRANDCHILD {}", grandchild(name, false)),
        _ => return false,
    }
    true
}

#[test]
fn a_hanging_child_is_killed_with_its_group_and_reported() {
    if child_mode(HANG_TEST) {
        return;
    }
    let limit = Duration::from_secs(5);
    let start = Instant::now();
    // On a thread, so that a harness that blocked would fail this test instead of hanging it.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(process::run(&mut this_test(HANG_TEST, "hang"), limit)));
    let result = rx
        .recv_timeout(limit + Duration::from_secs(30))
        .expect("the harness did not return within 30 s of the limit");
    let elapsed = start.elapsed();
    let hung = match result {
        Err(process::Error::Hung(hung)) => hung,
        other => panic!("the hanging child was not reported as hung: {other:?}"),
    };
    let stdout = String::from_utf8_lossy(&hung.output.stdout);
    let [inside, outside] = pids(&stdout, "GRANDCHILDREN ")[..] else {
        panic!("two grandchildren expected:\n{stdout}")
    };
    // Before any assertion can fail: the grandchild outside the group is this test's to end.
    let outside_was_alive = alive(outside);
    // SAFETY: kill takes no pointers; `outside` is the grandchild started above, still
    // alive a moment ago (it sleeps for minutes).
    unsafe { libc::kill(outside as libc::pid_t, libc::SIGKILL) };

    assert!(
        elapsed >= limit && elapsed < limit + Duration::from_secs(10),
        "reported after {elapsed:?} for a limit of {limit:?}"
    );
    assert_eq!(hung.phase(), Some("hanging on purpose"), "{hung}");
    assert_eq!(hung.output.status.signal(), Some(libc::SIGKILL), "{hung}");
    let report = hung.to_string();
    assert!(
        report.contains("hung in phase \"hanging on purpose\"") && report.contains("GRANDCHILDREN"),
        "{report}"
    );
    let listed = |pid: u32| {
        hung.processes
            .iter()
            .any(|l| l.starts_with(&format!("process {pid}:")))
    };
    assert!(listed(inside) && !listed(outside), "{report}");
    assert!(
        dies(inside),
        "the grandchild in the group survived the kill"
    );
    // It held the output open all along: the harness did not wait for it.
    assert!(
        outside_was_alive,
        "the grandchild outside the group was not running"
    );
    assert!(
        dies(outside),
        "the grandchild outside the group survived its kill"
    );
    println!("killed and reported after {elapsed:?} (limit {limit:?})");
}

#[test]
fn a_child_that_exits_has_its_leftovers_killed() {
    if child_mode(EXIT_TEST) {
        return;
    }
    let start = Instant::now();
    let out = process::output(&mut this_test(EXIT_TEST, "leave"), Duration::from_secs(60));
    let elapsed = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let [left] = pids(&stdout, "GRANDCHILD ")[..] else {
        panic!("one grandchild expected:\n{stdout}")
    };
    assert!(out.status.success(), "{out:?}");
    assert!(dies(left), "the grandchild left in the group survived");
    // The grandchild sleeps for minutes and held the output open: not waited for.
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
}
