//! Waiting for a command that runs in a session of its own, within a time limit.
//!
//! Up to its limit a run is left alone. Past it, the session is looked at in windows of a
//! few seconds: a run that does nothing for [`Limits::idle`] in a row (no CPU used, no
//! process started or ended) is hung and stopped; a run that keeps doing something is only
//! slow (a busy machine, a slow emulator) and may go on to [`Limits::hard`]. One quiet window
//! is not a hang: a test may wait seconds for a child it means to time out.

use std::io;
use std::process::{Child, ExitStatus};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::session;

/// How long a run may take, and what counts as a hang.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Until this, the run is not looked at.
    pub limit: Duration,
    /// A run that still does something is stopped here.
    pub hard: Duration,
    /// A run past its limit that does nothing for this long is hung.
    pub idle: Duration,
    /// Each look at the session lasts this long.
    pub window: Duration,
}

/// How many times its limit a run that still computes may take: on a loaded machine the
/// emulated tests can pass the limit without hanging.
pub const SLOW_GRACE: u32 = 3;

impl Limits {
    /// `limit`, then up to [`SLOW_GRACE`] times it while the run computes; hung after 30 s
    /// without doing anything (seen in windows of 2 s).
    pub fn new(limit: Duration) -> Self {
        Limits {
            limit,
            hard: limit.saturating_mul(SLOW_GRACE),
            idle: Duration::from_secs(30),
            window: Duration::from_secs(2),
        }
    }
}

/// How a run ended.
#[derive(Debug)]
pub enum Waited {
    Exited(ExitStatus),
    /// Stopped with every process of its session; the verdict says `idle: hung` or
    /// `still computing`.
    TimedOut {
        verdict: String,
        after: Duration,
    },
}

/// Waits for `child`, the leader of a session of its own (see [`session::start_new`]),
/// within `limits`. `note` gets the lines for the run's log: when it passes its limit, and
/// before a timeout kills the session, every process still running with its threads.
pub fn wait(child: &mut Child, limits: &Limits, note: &mut dyn FnMut(&str)) -> io::Result<Waited> {
    let sid = child.id();
    let start = Instant::now();
    let mut noted = false;
    // When the run last started doing nothing, if it has done nothing since.
    let mut idle_since: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Waited::Exited(status));
        }
        if start.elapsed() <= limits.limit {
            sleep(Duration::from_millis(200));
            continue;
        }
        if !std::mem::replace(&mut noted, true) {
            note(&format!(
                "=== xtask: past its {} s limit: stopped as hung once it does nothing (no CPU \
                 used, no process started or ended) for {} s, else at {} s",
                limits.limit.as_secs(),
                limits.idle.as_secs(),
                limits.hard.as_secs()
            ));
        }
        let window_start = Instant::now();
        let seen = session::activity_in(sid, limits.window);
        if seen.idle() {
            idle_since.get_or_insert(window_start);
        } else {
            idle_since = None;
        }
        let idle_for = idle_since.map(|since| since.elapsed());
        let verdict = match idle_for {
            Some(idle) if idle >= limits.idle || start.elapsed() >= limits.hard => format!(
                "idle: hung: no CPU used and no process started or ended for {} s",
                idle.as_secs()
            ),
            None if start.elapsed() >= limits.hard => format!(
                "still computing at {} s, {SLOW_GRACE} times the limit: {:.1} s of CPU in {} s",
                limits.hard.as_secs(),
                seen.cpu,
                limits.window.as_secs()
            ),
            _ => continue,
        };
        let after = start.elapsed();
        note(&format!(
            "=== xtask: timed out after {} s ({verdict}); the processes still running, killed:\n{}",
            after.as_secs(),
            session::describe(sid).join("\n")
        ));
        session::kill_all(sid);
        child.wait()?;
        return Ok(Waited::TimedOut { verdict, after });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::tests::start_sh as start;

    fn limits(limit_ms: u64, hard_s: u64, idle_s: u64) -> Limits {
        Limits {
            limit: Duration::from_millis(limit_ms),
            hard: Duration::from_secs(hard_s),
            idle: Duration::from_secs(idle_s),
            window: Duration::from_millis(500),
        }
    }

    #[test]
    fn a_run_that_pauses_past_its_limit_is_not_hung() {
        // Test binaries that compute, end, and leave the session quiet for longer than a
        // window (a test waiting on a child it means to time out): each pause holds whole
        // quiet windows, where one quiet window used to stop the run as hung.
        let mut child =
            start("for i in 1 2 3; do timeout 0.5 sh -c 'while :; do :; done'; sleep 1.5; done");
        let mut notes = Vec::new();
        let waited = wait(&mut child, &limits(200, 60, 4), &mut |n| {
            notes.push(n.to_string())
        })
        .expect("wait");
        assert!(
            matches!(waited, Waited::Exited(s) if s.success()),
            "{waited:?} {notes:?}"
        );
        assert!(notes[0].contains("past its 0 s limit"), "{notes:?}");
    }

    #[test]
    fn a_run_that_does_nothing_is_stopped_as_hung_with_its_processes_listed() {
        let mut child = start("sleep 600 & sleep 600");
        let sid = child.id();
        let mut notes = Vec::new();
        let waited = wait(&mut child, &limits(200, 60, 2), &mut |n| {
            notes.push(n.to_string())
        })
        .expect("wait");
        let Waited::TimedOut { verdict, after } = waited else {
            panic!("{waited:?}");
        };
        assert!(verdict.starts_with("idle: hung"), "{verdict}");
        assert!(after >= Duration::from_secs(2), "{after:?}");
        assert!(after < Duration::from_secs(20), "{after:?}");
        let report = notes.last().expect("a timeout report");
        assert!(
            report.contains("sleep 600") && report.contains("tid "),
            "{report}"
        );
        assert!(
            session::describe(sid).is_empty(),
            "left running after the timeout"
        );
    }

    #[test]
    fn a_run_that_keeps_computing_is_stopped_at_its_hard_limit() {
        let mut child = start("while :; do :; done");
        let waited = wait(&mut child, &limits(200, 2, 2), &mut |_| {}).expect("wait");
        let Waited::TimedOut { verdict, after } = waited else {
            panic!("{waited:?}");
        };
        assert!(verdict.starts_with("still computing at 2 s"), "{verdict}");
        assert!(after >= Duration::from_secs(2), "{after:?}");
        assert!(after < Duration::from_secs(20), "{after:?}");
    }
}
