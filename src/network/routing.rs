//! Per-class routing: where a job goes after a station.

use super::{ClassId, StationId};

/// Where a job is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// To a station, possibly switching class on the way.
    Station(StationId, ClassId),
    /// Out of the network (open classes only).
    Exit,
}

/// The routing decision for one (class, station) pair.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// The class never leaves this station (it does not visit it).
    Unset,
    /// Always the same target.
    Fixed(Target),
    /// A random choice: `cumulative[i]` is the probability of targets `0..=i`; the last is 1.
    Random {
        /// Cumulative probabilities.
        cumulative: Vec<f64>,
        /// The targets, in the same order.
        targets: Vec<Target>,
    },
    /// Join the shortest queue among the stations of `group` (ties go to the first listed).
    ShortestQueue {
        /// Index into [`super::Network::groups`].
        group: u32,
        /// The class the job has at the chosen station.
        class: ClassId,
    },
    /// Cycle through the stations of `group` in order.
    RoundRobin {
        /// Index into [`super::Network::groups`].
        group: u32,
        /// The class the job has at the chosen station.
        class: ClassId,
    },
}

/// The routing table: one [`Rule`] per (class, station).
#[derive(Clone, Debug)]
pub struct Routing {
    stations: usize,
    rules: Vec<Rule>,
}

impl Routing {
    /// A table where no class goes anywhere yet.
    pub fn new(classes: usize, stations: usize) -> Routing {
        Routing {
            stations,
            rules: vec![Rule::Unset; classes * stations],
        }
    }

    /// The rule of `class` at `station`.
    #[inline]
    pub fn rule(&self, class: ClassId, station: StationId) -> &Rule {
        &self.rules[class.index() * self.stations + station.index()]
    }

    /// Sets the rule of `class` at `station`.
    pub fn set(&mut self, class: ClassId, station: StationId, rule: Rule) {
        self.rules[class.index() * self.stations + station.index()] = rule;
    }

    /// The probability of each target of a rule, with `group` resolving state-dependent rules to
    /// an equal split among the group's stations (their long-run share when the group is
    /// homogeneous; used for traffic equations and stability checks).
    pub fn branch_probabilities(rule: &Rule, groups: &[Vec<StationId>]) -> Vec<(Target, f64)> {
        match rule {
            Rule::Unset => Vec::new(),
            Rule::Fixed(t) => vec![(*t, 1.0)],
            Rule::Random {
                cumulative,
                targets,
            } => {
                let mut prev = 0.0;
                targets
                    .iter()
                    .zip(cumulative)
                    .map(|(t, &c)| {
                        let p = c - prev;
                        prev = c;
                        (*t, p)
                    })
                    .collect()
            }
            Rule::ShortestQueue { group, class } | Rule::RoundRobin { group, class } => {
                let members = &groups[*group as usize];
                let p = 1.0 / members.len() as f64;
                members
                    .iter()
                    .map(|s| (Target::Station(*s, *class), p))
                    .collect()
            }
        }
    }
}

/// Picks the target of a random rule for a uniform draw `u` in `[0, 1)`.
#[inline]
pub(crate) fn pick(cumulative: &[f64], targets: &[Target], u: f64) -> Target {
    let i = cumulative
        .partition_point(|&c| c <= u)
        .min(targets.len() - 1);
    targets[i]
}

/// Random rules with at least this many targets get a [`PickGuide`] in the event loop (below it
/// a binary search takes a few steps anyway).
pub(crate) const GUIDE_FROM: usize = 16;

/// A guide to the cumulative table of a random rule (the guide table of Chen and Asau, 1974):
/// cell `k` of `n` (as many cells as targets) starts at the first target a draw of `k / n` can
/// pick, so a draw `u` searches only the targets between the starts of its cell and of the
/// next, one or two when the probabilities are alike, instead of the whole table (ten
/// dependent loads for 1,000 targets). The result is exactly [`pick`]'s: it is checked against
/// its neighbours in the table, and a draw that a rounding put in the wrong cell is searched
/// for in the whole table.
#[derive(Clone, Debug)]
pub(crate) struct PickGuide {
    /// `starts[k]`: the targets whose cumulative probability is at most `k / n`, for `k` from
    /// 0 to `n`.
    starts: Box<[u32]>,
}

impl PickGuide {
    /// The guide of a cumulative table, or `None` when a binary search is as cheap (fewer than
    /// [`GUIDE_FROM`] targets) or the table is not sorted (it always is: a check).
    pub(crate) fn new(cumulative: &[f64]) -> Option<PickGuide> {
        let n = cumulative.len();
        if n < GUIDE_FROM || cumulative.windows(2).any(|w| w[0] > w[1]) {
            return None;
        }
        let starts = (0..=n)
            .map(|k| {
                let x = k as f64 / n as f64;
                cumulative.partition_point(|&c| c <= x) as u32
            })
            .collect();
        Some(PickGuide { starts })
    }

    /// [`pick`] of `cumulative`, the table this guide was made from, `targets` and `u`.
    #[inline]
    pub(crate) fn pick(&self, cumulative: &[f64], targets: &[Target], u: f64) -> Target {
        let n = cumulative.len();
        let cell = ((u * n as f64) as usize).min(n - 1);
        let (lo, hi) = (self.starts[cell] as usize, self.starts[cell + 1] as usize);
        let mut i = lo + cumulative[lo..hi].partition_point(|&c| c <= u);
        // the number of entries at most `u`, as `pick` counts them: its neighbours say so
        if !((i == 0 || cumulative[i - 1] <= u) && (i == n || cumulative[i] > u)) {
            i = cumulative.partition_point(|&c| c <= u);
        }
        targets[i.min(targets.len() - 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guided_pick_is_picks() {
        let mut next = crate::rng::xorshift(0x2545_f491_4f6c_dd1d_u64);
        for round in 0..400 {
            let n = GUIDE_FROM + (next() % 1200) as usize;
            // alike, very unequal, and zero probabilities (repeated cumulative values)
            let weights: Vec<f64> = (0..n)
                .map(|i| match round % 3 {
                    0 => 1.0,
                    1 => ((next() >> 11) as f64).powi(3),
                    _ => (i % 4 == 0) as u8 as f64,
                })
                .collect();
            // as the scenario check builds it: running sums over the total, the last set to 1
            let mut acc = 0.0;
            let mut cumulative: Vec<f64> = weights
                .iter()
                .map(|w| {
                    acc += w;
                    acc
                })
                .collect();
            for c in &mut cumulative {
                *c /= acc;
            }
            *cumulative.last_mut().unwrap() = 1.0;
            let targets: Vec<Target> = (0..n as u32).map(st).collect();
            let guide = PickGuide::new(&cumulative).expect("sorted and long enough");
            let mut draws: Vec<f64> = (0..500)
                .map(|_| (next() >> 11) as f64 / 2f64.powi(53))
                .collect();
            // draws on the table's values and on the cells' bounds, and just below them
            for k in (0..n).step_by(7) {
                for v in [cumulative[k], k as f64 / n as f64] {
                    draws.extend(
                        [v, v.next_down(), v.next_up()]
                            .into_iter()
                            .filter(|d| (0.0..1.0).contains(d)),
                    );
                }
            }
            for u in draws {
                assert_eq!(
                    guide.pick(&cumulative, &targets, u),
                    pick(&cumulative, &targets, u),
                    "round {round}, {n} targets, u {u}"
                );
            }
        }
        assert!(PickGuide::new(&[0.5, 1.0]).is_none());
        let mut unsorted: Vec<f64> = (1..=GUIDE_FROM)
            .map(|i| i as f64 / GUIDE_FROM as f64)
            .collect();
        unsorted.swap(3, 4);
        assert!(PickGuide::new(&unsorted).is_none());
    }

    fn st(i: u32) -> Target {
        Target::Station(StationId(i), ClassId(0))
    }

    #[test]
    fn pick_follows_cumulative_table() {
        let cumulative = [0.25, 0.75, 1.0];
        let targets = [st(0), st(1), Target::Exit];
        assert_eq!(pick(&cumulative, &targets, 0.0), st(0));
        assert_eq!(pick(&cumulative, &targets, 0.2499), st(0));
        assert_eq!(pick(&cumulative, &targets, 0.25), st(1));
        assert_eq!(pick(&cumulative, &targets, 0.7), st(1));
        assert_eq!(pick(&cumulative, &targets, 0.9999), Target::Exit);
    }

    #[test]
    fn pick_never_runs_off_the_end_when_rounding_leaves_the_last_below_one() {
        let cumulative = [0.3, 0.999_999_999_9];
        let targets = [st(0), st(1)];
        assert_eq!(pick(&cumulative, &targets, 0.999_999_999_95), st(1));
    }

    #[test]
    fn branch_probabilities_undo_the_cumulative_table() {
        let rule = Rule::Random {
            cumulative: vec![0.2, 0.5, 1.0],
            targets: vec![st(0), st(1), Target::Exit],
        };
        let p: Vec<f64> = Routing::branch_probabilities(&rule, &[])
            .iter()
            .map(|x| x.1)
            .collect();
        assert!(
            (p[0] - 0.2).abs() < 1e-12 && (p[1] - 0.3).abs() < 1e-12 && (p[2] - 0.5).abs() < 1e-12
        );
        let groups = vec![vec![StationId(3), StationId(4)]];
        let jsq = Rule::ShortestQueue {
            group: 0,
            class: ClassId(0),
        };
        assert_eq!(Routing::branch_probabilities(&jsq, &groups).len(), 2);
    }
}
