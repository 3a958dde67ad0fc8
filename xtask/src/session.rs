//! A command in a session of its own, so that everything it starts can be found and ended.
//!
//! Test processes put the children they start in process groups of their own (so each
//! test can kill its child's whole group), which takes them out of the group `cargo test`
//! runs in; no process here leaves its session, so the session id (field 6 of
//! `/proc/<pid>/stat`) still finds every one of them, orphans included.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::thread::sleep;
use std::time::Duration;

/// Makes `cmd` start a new session (and process group) whose id is its pid.
pub fn start_new(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and calls only setsid,
    // which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The live processes of session `sid`: pid and the rest of `/proc/<pid>/stat` after the
/// command name (`state ppid pgrp session ...`).
fn members(sid: u32) -> Vec<(u32, String)> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let fields = stat.rsplit_once(')')?.1.trim_start().to_string();
        let mut words = fields.split_whitespace();
        let state = words.next()?;
        let session: u32 = words.nth(2)?.parse().ok()?;
        // A zombie is dead already; its parent reaps it.
        (session == sid && state != "Z").then_some((pid, fields))
    })
    .collect()
}

/// The CPU time of each live process of session `sid` so far, in clock ticks: its own user
/// and system time and that of the children it has reaped (fields 14 to 17 of
/// `/proc/<pid>/stat`). A test binary that ends leaves the live processes, and its time
/// moves into its parent's count (cargo's), so no session's total drops when one ends.
fn cpu_ticks(sid: u32) -> BTreeMap<u32, u64> {
    let ticks = |fields: &str| -> u64 {
        let words = fields.split_whitespace().skip(11).take(4);
        words.map(|w| w.parse::<u64>().unwrap_or(0)).sum()
    };
    members(sid)
        .iter()
        .map(|(pid, fields)| (*pid, ticks(fields)))
        .collect()
}

/// What session `sid` did in a window of time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Activity {
    /// CPU time its processes used, in seconds.
    pub cpu: f64,
    /// Processes that started or ended.
    pub started: usize,
    pub ended: usize,
}

impl Activity {
    /// A deadlock uses no CPU and starts or ends nothing; a test that is only slow (a busy
    /// machine, a slow emulator) uses about a core, and one waiting on its children sees
    /// them come and go.
    pub fn idle(&self) -> bool {
        self.cpu < 0.02 && self.started == 0 && self.ended == 0
    }
}

/// What session `sid` did in `window`: per process, the CPU time it used (all of it for a
/// process that started in the window), and how many processes started and ended. Sums
/// per process, not of the whole session, so that a process ending (taking its time out of
/// the live ones) never cancels what the others did.
pub fn activity_in(sid: u32, window: Duration) -> Activity {
    let before = cpu_ticks(sid);
    sleep(window);
    let after = cpu_ticks(sid);
    let used: u64 = after
        .iter()
        .map(|(pid, now)| now.saturating_sub(before.get(pid).copied().unwrap_or(0)))
        .sum();
    // SAFETY: sysconf takes no pointers.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1);
    Activity {
        cpu: used as f64 / hz as f64,
        started: after.keys().filter(|p| !before.contains_key(p)).count(),
        ended: before.keys().filter(|p| !after.contains_key(p)).count(),
    }
}

/// One line per thread of every live process of session `sid`: its command line, state
/// and the kernel function it waits in; what a timeout report shows.
pub fn describe(sid: u32) -> Vec<String> {
    let mut lines = Vec::new();
    for (pid, _) in members(sid) {
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        lines.push(format!("pid {pid}: {}", cmdline.trim_end()));
        let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.filter_map(Result::ok) {
            let dir = task.path();
            let stat = fs::read_to_string(dir.join("stat")).unwrap_or_default();
            let state = stat.rsplit_once(')').map_or("?", |(_, r)| r.trim_start());
            let wchan = fs::read_to_string(dir.join("wchan")).unwrap_or_default();
            lines.push(format!(
                "    tid {}: {} {}",
                task.file_name().to_string_lossy(),
                state.split_whitespace().next().unwrap_or("?"),
                wchan
            ));
        }
    }
    lines
}

/// Sends SIGKILL to every live process of session `sid` until none is left (or ten
/// rounds have passed); returns how many processes it killed.
pub fn kill_all(sid: u32) -> usize {
    let mut killed = std::collections::BTreeSet::new();
    for _ in 0..10 {
        let live = members(sid);
        if live.is_empty() {
            break;
        }
        for (pid, _) in live {
            let Ok(id) = libc::pid_t::try_from(pid) else {
                continue;
            };
            // SAFETY: kill takes no pointers; `pid` was just seen in this session.
            unsafe { libc::kill(id, libc::SIGKILL) };
            killed.insert(pid);
        }
        sleep(Duration::from_millis(50));
    }
    killed.len()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::process::Stdio;
    use std::time::Instant;

    /// `sh -c script` in a session of its own (the tests of `watch` use it too).
    pub(crate) fn start_sh(script: &str) -> std::process::Child {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]).stdin(Stdio::null());
        start_new(&mut cmd);
        cmd.spawn().expect("sh")
    }

    /// The process group in a `members` line.
    fn group(fields: &str) -> Option<u32> {
        fields.split_whitespace().nth(2)?.parse().ok()
    }

    #[test]
    fn kill_all_ends_the_processes_that_left_the_group() {
        // A shell and, in a process group of its own, a perl that sleeps (perl-base is
        // part of every Debian system).
        let mut child = start_sh("perl -e 'setpgrp(0, 0); sleep 600' & sleep 600");
        let sid = child.id();
        let start = Instant::now();
        while !members(sid).iter().any(|(_, f)| group(f) != Some(sid)) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no process left the group: {:?}",
                describe(sid)
            );
            sleep(Duration::from_millis(10));
        }
        let report = describe(sid).join("\n");
        assert!(
            report.contains("perl") && report.contains("tid "),
            "{report}"
        );
        assert!(kill_all(sid) >= 2, "{report}");
        let _ = child.wait();
        assert!(members(sid).is_empty(), "{:?}", describe(sid));
    }

    #[test]
    fn a_waiting_session_computes_nothing_and_a_busy_one_does() {
        let (mut idle, mut busy) = (start_sh("sleep 600"), start_sh("while :; do :; done"));
        sleep(Duration::from_millis(200));
        let window = Duration::from_secs(1);
        let (waiting, computing) = (
            activity_in(idle.id(), window),
            activity_in(busy.id(), window),
        );
        kill_all(idle.id());
        kill_all(busy.id());
        let _ = (idle.wait(), busy.wait());
        assert!(waiting.idle(), "{waiting:?}");
        assert_eq!(waiting.cpu, 0.0);
        assert!(!computing.idle() && computing.cpu > 0.0, "{computing:?}");
    }

    #[test]
    fn a_process_that_ends_in_the_window_is_not_idle() {
        // A busy child that has run for a second and ends half a second into the window,
        // then a shell that only sleeps: what a test binary that ends looks like. Summed
        // over the live processes, its second before the window outweighed the half
        // second in it, and the session seemed to have used no CPU at all: a run past its
        // limit was killed as hung.
        let mut child = start_sh("timeout 1.5 sh -c 'while :; do :; done'; sleep 600");
        sleep(Duration::from_secs(1));
        let seen = activity_in(child.id(), Duration::from_secs(2));
        kill_all(child.id());
        let _ = child.wait();
        assert!(!seen.idle() && seen.ended >= 1, "{seen:?}");
        // The time the busy child ran in the window (half a second on a quiet machine),
        // counted in its parent's time once reaped: the shell itself computes nothing.
        assert!(seen.cpu > 0.0, "{seen:?}");
    }
}
