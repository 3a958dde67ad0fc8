//! Counting checks: how many readings each check saw and how many failed, with
//! the first failure kept as an example an operator can read.

use std::collections::BTreeMap;

use serde::Serialize;

/// One check's counts.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Count {
    /// Readings checked.
    pub checked: u64,
    /// Readings that failed.
    pub failures: u64,
    /// The first failure, described.
    pub example: Option<String>,
}

/// Counts per (check, subject), in a stable order.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    map: BTreeMap<(&'static str, String), Count>,
}

impl Tally {
    /// Records one reading; `failure` describes it if it failed. The description is
    /// built lazily so the passing path stays cheap.
    pub fn record(
        &mut self,
        check: &'static str,
        subject: &str,
        failure: Option<impl FnOnce() -> String>,
    ) {
        let c = match self.map.get_mut(&(check, subject.to_string())) {
            Some(c) => c,
            None => self.map.entry((check, subject.to_string())).or_default(),
        };
        c.checked += 1;
        if let Some(describe) = failure {
            c.failures += 1;
            if c.example.is_none() {
                c.example = Some(describe());
            }
        }
    }

    /// Records a pass/fail with a ready-made description.
    pub fn expect(
        &mut self,
        check: &'static str,
        subject: &str,
        ok: bool,
        describe: impl FnOnce() -> String,
    ) {
        self.record(check, subject, (!ok).then_some(describe));
    }

    /// Adds another tally's counts.
    pub fn merge(&mut self, other: Tally) {
        for (k, v) in other.map {
            let c = self.map.entry(k).or_default();
            c.checked += v.checked;
            c.failures += v.failures;
            if c.example.is_none() {
                c.example = v.example;
            }
        }
    }

    /// Every check, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str, &Count)> {
        self.map.iter().map(|((k, s), c)| (*k, s.as_str(), c))
    }

    /// Whether every reading passed.
    pub fn passed(&self) -> bool {
        self.map.values().all(|c| c.failures == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_merges() {
        let mut a = Tally::default();
        a.expect("bracket", "REALTIME", true, || "x".into());
        a.expect("bracket", "REALTIME", false, || "first".into());
        let mut b = Tally::default();
        b.expect("bracket", "REALTIME", false, || "second".into());
        b.expect("getcpu", "cpu 0", true, || "y".into());
        a.merge(b);
        let rows: Vec<_> = a.iter().collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].2.checked, 3);
        assert_eq!(rows[0].2.failures, 2);
        assert_eq!(rows[0].2.example.as_deref(), Some("first"));
        assert!(!a.passed());
    }
}
