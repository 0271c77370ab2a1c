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

#[cfg(test)]
mod tests {
    use super::*;

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
