//! `cargo xtask cross --repeat N` and `cargo xtask kernels --repeat N`: every target's (or
//! boot's) result and time in each of N runs, and a tally per target, to find flaky tests,
//! races and hangs.

use std::time::Duration;

/// One target's result in one run.
#[derive(Debug)]
struct Result {
    failure: Option<String>,
    elapsed: Duration,
}

/// Every result so far, per target label, in the order the targets first ran.
#[derive(Debug)]
pub struct Tally {
    /// The xtask command, first word of every line of the report.
    command: &'static str,
    targets: Vec<(String, Vec<Result>)>,
    runs: Vec<Duration>,
}

impl Tally {
    /// An empty tally for `cargo xtask COMMAND --repeat`.
    pub fn new(command: &'static str) -> Tally {
        Tally {
            command,
            targets: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Records `label`'s result in the current run.
    pub fn add(&mut self, label: &str, failure: Option<&str>, elapsed: Duration) {
        let result = Result {
            failure: failure.map(str::to_string),
            elapsed,
        };
        match self.targets.iter_mut().find(|(l, _)| l == label) {
            Some((_, results)) => results.push(result),
            None => self.targets.push((label.to_string(), vec![result])),
        }
    }

    /// Records that a whole run (every target once) took `elapsed`.
    pub fn end_run(&mut self, elapsed: Duration) {
        self.runs.push(elapsed);
    }

    /// The summary: each run's time, then per target its PASS count, its timeouts (idle:
    /// a hang; still computing: only slow), other failures (with the run they happened in)
    /// and its fastest, median and slowest time.
    pub fn report(&self) -> Vec<String> {
        let secs = |d: &Duration| d.as_secs().to_string();
        let mut lines = vec![format!(
            "{} repeat: {} runs, {} s in all; each run: {} s",
            self.command,
            self.runs.len(),
            self.runs.iter().map(Duration::as_secs).sum::<u64>(),
            self.runs.iter().map(secs).collect::<Vec<_>>().join(" ")
        )];
        for (label, results) in &self.targets {
            let mut times: Vec<Duration> = results.iter().map(|r| r.elapsed).collect();
            times.sort();
            let passed = results.iter().filter(|r| r.failure.is_none()).count();
            let timed_out = |idle: bool| {
                let failures = results.iter().filter_map(|r| r.failure.as_deref());
                failures
                    .filter(|f| f.starts_with("timed out") && f.contains("idle") == idle)
                    .count()
            };
            let (hung, slow) = (timed_out(true), timed_out(false));
            lines.push(format!(
                "{} repeat {label}: {passed}/{} PASS, {hung} timed out idle (hung), {slow} \
                 timed out still computing (slow), {} other failures; \
                 {} s fastest, {} s median, {} s slowest; each run: {} s",
                self.command,
                results.len(),
                results.len() - passed - hung - slow,
                times.first().map_or(0, Duration::as_secs),
                times.get(times.len() / 2).map_or(0, Duration::as_secs),
                times.last().map_or(0, Duration::as_secs),
                results
                    .iter()
                    .map(|r| secs(&r.elapsed))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
            for (run, result) in results.iter().enumerate() {
                if let Some(why) = &result.failure {
                    lines.push(format!("  run {}: FAIL: {why}", run + 1));
                }
            }
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_passes_timeouts_and_failures_per_target() {
        let mut t = Tally::new("cross");
        let s = Duration::from_secs;
        let slow = "timed out after 300 s (still computing: 1.9 s of CPU in 2 s)";
        t.add("a", None, s(60));
        t.add("b", Some("timed out after 300 s (idle: hung)"), s(300));
        t.add("c", Some(slow), s(300));
        t.end_run(s(660));
        t.add("a", Some("1 tests failed: x"), s(58));
        t.add("b", None, s(61));
        t.add("c", None, s(70));
        t.end_run(s(189));
        let report = t.report();
        let expected = [
            "cross repeat: 2 runs, 849 s in all; each run: 660 189 s",
            "cross repeat a: 1/2 PASS, 0 timed out idle (hung), 0 timed out still computing \
             (slow), 1 other failures; 58 s fastest, 60 s median, 60 s slowest; each run: 60 58 s",
            "  run 2: FAIL: 1 tests failed: x",
            "cross repeat b: 1/2 PASS, 1 timed out idle (hung), 0 timed out still computing \
             (slow), 0 other failures; 61 s fastest, 300 s median, 300 s slowest; each run: 300 61 s",
            "  run 1: FAIL: timed out after 300 s (idle: hung)",
            "cross repeat c: 1/2 PASS, 0 timed out idle (hung), 1 timed out still computing \
             (slow), 0 other failures; 70 s fastest, 300 s median, 300 s slowest; each run: 300 70 s",
        ];
        assert_eq!(report[..6], expected);
        assert_eq!(report[6], format!("  run 1: FAIL: {slow}"));
    }
}
