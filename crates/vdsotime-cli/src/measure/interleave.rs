//! Interleaved rounds: every path of a row runs one trial per round, in an order
//! rotated by one each round (round r starts at path r mod n), so a machine that
//! drifts (a VM's neighbours, frequency changes) slows every path of a round alike
//! and no path always runs first or last. Each path's figure is its fastest trial;
//! its ratio to a reference path (the raw vDSO symbol) is taken within each round and
//! summarized by the median and quartiles over rounds, which a slow round cannot move.

use crate::measure::{Plan, Probe, Sample, Trial};

/// The order in which round `round` runs `n` paths: `round mod n` first, then on.
pub fn rotation(n: usize, round: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |i| (round + i) % n)
}

/// One path of a group.
#[derive(Debug)]
pub struct Lane<'a> {
    /// What to time.
    pub probe: &'a Probe,
    /// Index (in the same group) of the path this one's ratio is taken against.
    pub reference: Option<usize>,
}

/// The `q`-quantile (0 ≤ q ≤ 1) of sorted values, interpolated linearly between
/// the two nearest ranks.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n => {
            let pos = q * (n - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        }
    }
}

/// Median, first and third quartile.
pub fn quartiles(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    (quantile(&v, 0.5), quantile(&v, 0.25), quantile(&v, 0.75))
}

/// Runs `plan.trials` rounds over `lanes`; `rounds[r][i]` is lane i's trial in round r.
fn run_rounds(lanes: &[Lane<'_>], calls: &[u64], plan: &Plan, threads: usize) -> Vec<Vec<Trial>> {
    let n = lanes.len();
    (0..plan.trials.max(1) as usize)
        .map(|r| {
            let mut round = vec![
                Trial {
                    ns: f64::NAN,
                    wall: f64::NAN
                };
                n
            ];
            for i in rotation(n, r) {
                round[i] = lanes[i].probe.trial(calls[i], threads);
            }
            round
        })
        .collect()
}

/// Measures every lane in interleaved rounds and returns one sample per lane.
pub fn measure(lanes: &[Lane<'_>], plan: &Plan, threads: usize) -> Vec<Sample> {
    let threads = threads.max(1);
    let calls: Vec<u64> = lanes
        .iter()
        .map(|l| plan.calls_for(l.probe.calibrate()))
        .collect();
    let rounds = run_rounds(lanes, &calls, plan, threads);
    summarize(lanes, &calls, &rounds, threads)
}

/// Turns the rounds' trials into one sample per lane.
fn summarize(
    lanes: &[Lane<'_>],
    calls: &[u64],
    rounds: &[Vec<Trial>],
    threads: usize,
) -> Vec<Sample> {
    lanes
        .iter()
        .enumerate()
        .map(|(i, lane)| {
            let ns: Vec<f64> = rounds.iter().map(|r| r[i].ns).collect();
            let fastest = ns.iter().copied().fold(f64::INFINITY, f64::min);
            let best_wall = rounds
                .iter()
                .map(|r| r[i].wall)
                .fold(f64::INFINITY, f64::min);
            let ratios = lane.reference.map(|j| {
                let per_round: Vec<f64> = rounds.iter().map(|r| r[i].ns / r[j].ns).collect();
                quartiles(&per_round)
            });
            Sample {
                ns: fastest,
                median_ns: quartiles(&ns).0,
                trials: rounds.len() as u32,
                calls: calls[i],
                threads,
                calls_per_sec: threads as f64 * calls[i] as f64 / best_wall,
                ratio_to_raw: ratios.map(|r| r.0),
                ratio_q1: ratios.map(|r| r.1),
                ratio_q3: ratios.map(|r| r.2),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;
    use std::time::Duration;

    #[test]
    fn rotation_starts_each_round_one_path_later() {
        let order = |r| rotation(4, r).collect::<Vec<_>>();
        assert_eq!(order(0), [0, 1, 2, 3]);
        assert_eq!(order(1), [1, 2, 3, 0]);
        assert_eq!(order(3), [3, 0, 1, 2]);
        assert_eq!(order(4), order(0));
        // Over n rounds every path runs exactly once in every position.
        for pos in 0..4 {
            let mut at: Vec<usize> = (0..4).map(|r| order(r)[pos]).collect();
            at.sort();
            assert_eq!(at, [0, 1, 2, 3]);
        }
        assert_eq!(rotation(1, 7).collect::<Vec<_>>(), [0]);
    }

    /// The rounds really run in that order: each lane's call logs its index.
    #[test]
    fn rounds_run_every_lane_once_in_rotated_order() {
        use std::sync::Mutex;
        static LOG: Mutex<Vec<usize>> = Mutex::new(Vec::new());
        let logger = |i: usize| {
            Probe::new(move || {
                if let Ok(mut log) = LOG.lock() {
                    log.push(i);
                }
            })
        };
        let probes: Vec<Probe> = (0..3).map(logger).collect();
        let lanes: Vec<Lane<'_>> = probes
            .iter()
            .map(|probe| Lane {
                probe,
                reference: Some(0),
            })
            .collect();
        let plan = Plan {
            trials: 4,
            calls: Some(1),
            trial_time: Duration::ZERO,
        };
        let rounds = run_rounds(&lanes, &[1, 1, 1], &plan, 1);
        assert_eq!(rounds.len(), 4);
        assert!(rounds.iter().flatten().all(|t| t.ns.is_finite()));
        let log = LOG.lock().unwrap().clone();
        assert_eq!(log, [0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2]);
    }

    #[test]
    fn quartiles_interpolate() {
        assert_eq!(quartiles(&[3.0, 1.0, 2.0]), (2.0, 1.5, 2.5));
        assert_eq!(quartiles(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.75, 3.25));
        assert_eq!(quartiles(&[5.0]), (5.0, 5.0, 5.0));
        assert!(quartiles(&[]).0.is_nan());
    }

    /// Ratios are taken round by round: a slow round moves both paths, not the ratio.
    #[test]
    fn ratios_pair_trials_of_the_same_round() {
        let t = |ns| Trial { ns, wall: ns };
        let probe = Probe::new(|| {});
        let lanes = [
            Lane {
                probe: &probe,
                reference: Some(1),
            },
            Lane {
                probe: &probe,
                reference: Some(1),
            },
            Lane {
                probe: &probe,
                reference: None,
            },
        ];
        // Round 2 runs everything 10x slower; path 0 is always 2x its reference.
        let rounds = vec![
            vec![t(4.0), t(2.0), t(1.0)],
            vec![t(6.0), t(3.0), t(1.0)],
            vec![t(40.0), t(20.0), t(1.0)],
        ];
        let s = summarize(&lanes, &[10, 10, 10], &rounds, 1);
        assert_eq!(s[0].ns, 4.0);
        assert_eq!(s[0].median_ns, 6.0);
        assert_eq!(
            (s[0].ratio_to_raw, s[0].ratio_q1, s[0].ratio_q3),
            (Some(2.0), Some(2.0), Some(2.0))
        );
        assert_eq!(s[1].ratio_to_raw, Some(1.0), "the reference against itself");
        assert_eq!((s[2].ratio_to_raw, s[2].ratio_q1), (None, None));
        assert_eq!(s[0].trials, 3);
    }

    #[test]
    fn every_lane_gets_every_round() {
        let a = Probe::new(|| {
            black_box(std::time::Instant::now());
        });
        let b = Probe::new(|| {
            black_box(());
        });
        let lanes = [
            Lane {
                probe: &a,
                reference: Some(0),
            },
            Lane {
                probe: &b,
                reference: Some(0),
            },
        ];
        let plan = Plan {
            trials: 3,
            calls: Some(500),
            trial_time: Duration::ZERO,
        };
        for s in measure(&lanes, &plan, 1) {
            assert_eq!((s.trials, s.calls, s.threads), (3, 500, 1));
            assert!(s.ns.is_finite() && s.ns > 0.0 && s.ns <= s.median_ns);
        }
    }
}
