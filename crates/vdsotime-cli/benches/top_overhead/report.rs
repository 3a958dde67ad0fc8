//! The results: a row per watcher, a markdown table per workload.

use crate::process::Workload;
use crate::watchers::{Counted, Watcher};

/// One (workload, watcher) cell's trials.
#[derive(Debug, Default)]
pub struct Cell {
    /// ns per call of each trial.
    pub ns: Vec<f64>,
    /// Each trial's ratio to the unwatched trial of its round.
    pub ratios: Vec<f64>,
    /// Calls per trial.
    pub calls: u64,
}

/// One watcher's row in both tables.
#[derive(Debug)]
pub struct Row {
    pub watcher: Watcher,
    /// By [`Workload::ALL`]'s order.
    pub cells: [Cell; 2],
    /// Why it did not run, if it did not.
    pub skip: Option<String>,
    /// What it counted of the watched loop's calls, summed over its runs.
    pub counted: Option<Counted>,
    /// Runs whose count could not be read.
    pub unread: usize,
    /// The calls the watched loop made while it watched.
    pub made: u64,
    /// Its own CPU while the watched loop ran flat out, in CPUs.
    pub cpu: Option<f64>,
}

impl Row {
    pub fn new(watcher: Watcher) -> Row {
        Row {
            watcher,
            cells: Default::default(),
            skip: None,
            counted: None,
            unread: 0,
            made: 0,
            cpu: None,
        }
    }

    /// Adds one run's count (`None`: unread) of `made` calls.
    pub fn count(&mut self, counted: Option<Counted>, made: u64) {
        self.made += made;
        match (counted, &mut self.counted) {
            (None, _) => self.unread += 1,
            (Some(c), None) => self.counted = Some(c),
            (Some(c), Some(sum)) => {
                sum.calls += c.calls;
                sum.lost += c.lost;
                if sum.backend != c.backend {
                    sum.backend = Some(format!(
                        "{} then {}",
                        sum.backend.as_deref().unwrap_or("?"),
                        c.backend.as_deref().unwrap_or("?")
                    ));
                }
            }
        }
    }

    fn notes(&self, workload: Workload, reference_calls: u64) -> String {
        let mut notes = Vec::new();
        let cell = &self.cells[index(workload)];
        if cell.calls != reference_calls && !cell.ns.is_empty() {
            notes.push(format!("{} calls per trial", cell.calls));
        }
        match (workload, &self.watcher) {
            (Workload::Clock, _) => {
                if let Some(c) = &self.counted {
                    if let (Watcher::Top("auto"), Some(b)) = (&self.watcher, &c.backend) {
                        notes.push(format!("chose {b}"));
                    }
                    notes.push(counts(c, self.made));
                }
                if self.unread > 0 && self.watcher.is_tool() {
                    notes.push(format!("{} runs' counts unreadable", self.unread));
                }
                if let Some(cpu) = self.cpu {
                    notes.push(format!("tool CPU {:.2}% of one CPU", cpu * 100.0));
                }
            }
            (Workload::Other, Watcher::Strace) => {
                notes.push("strace traces the idle watched loop, not this process".into());
            }
            (Workload::Other, _) => {}
        }
        if let Some(why) = &self.skip {
            notes.push(format!("SKIP in a later round: {why}"));
        }
        notes.join("; ")
    }
}

fn counts(c: &Counted, made: u64) -> String {
    let mut s = if c.host_wide {
        format!("counted {} host-wide while the loop made {made}", c.calls)
    } else if c.calls == made {
        format!("counted {} of {made}: exact", c.calls)
    } else {
        format!("counted {} of {made}", c.calls)
    };
    if c.lost > 0 {
        s.push_str(&format!(", {} reported lost", c.lost));
    }
    s
}

/// The position of `workload` in [`Workload::ALL`].
pub fn index(workload: Workload) -> usize {
    Workload::ALL
        .iter()
        .position(|w| *w == workload)
        .unwrap_or(0)
}

fn fastest(v: &[f64]) -> Option<f64> {
    v.iter().copied().min_by(f64::total_cmp)
}

fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The table of `workload`: `reference` holds the unwatched trials.
pub fn table(workload: Workload, reference: &Cell, rows: &[Row]) -> String {
    let mut t = format!("### {}\n\n", workload.title());
    t += &format!(
        "Unwatched: {} ns/call (fastest of {} trials of {} calls).\n\n",
        fastest(&reference.ns).map_or("-".into(), |f| format!("{f:.1}")),
        reference.ns.len(),
        reference.calls
    );
    t += "| watcher | fastest ns/call | median ratio | notes |\n|---|--:|--:|---|\n";
    for row in rows {
        let cell = &row.cells[index(workload)];
        let (ns, ratio, notes) = match &row.skip {
            Some(why) if cell.ns.is_empty() => ("-".into(), "-".into(), format!("SKIP: {why}")),
            _ => (
                fastest(&cell.ns).map_or("-".into(), |f| format!("{f:.1}")),
                median(&cell.ratios).map_or("-".into(), |m| format!("{m:.2}x")),
                row.notes(workload, reference.calls),
            ),
        };
        t += &format!("| {} | {ns} | {ratio} | {notes} |\n", row.watcher.name());
    }
    t
}
