//! The reachable state space of a [`MarkovModel`] and its transition rates.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::MarkovModel;
use crate::analytic::cost;
use crate::analytic::error::{AnalyticError, Result};

/// The most states [`StateSpace::explore`] enumerates at budget factor 1; the factor in force
/// ([`cost::with_budget`]) multiplies it. A two-dimensional model of 10^6 states took 0.4 s to
/// enumerate and 20 to 30 s and 4 GB to solve (`benches/ctmc.rs`).
pub const DEFAULT_STATE_LIMIT: usize = 2_000_000;

/// The states reachable from a model's initial state, each stored once and numbered in the
/// breadth-first order of their discovery (the initial state is 0), and the rates between them
/// as a compressed sparse row matrix (targets sorted, no self-loops, no duplicates).
#[derive(Debug, Clone)]
pub struct StateSpace<S> {
    /// The states by index.
    states: Vec<S>,
    /// Indices into `states`, hashed by state.
    index: HashTable<u32>,
    /// Row `i`'s transitions are `targets[row_start[i]..row_start[i + 1]]`.
    pub(super) row_start: Vec<usize>,
    /// Target state of each transition.
    pub(super) targets: Vec<u32>,
    /// Rate of each transition.
    rates: Vec<f64>,
}

impl<S: Clone + Eq + std::hash::Hash + std::fmt::Debug> StateSpace<S> {
    /// Enumerates the states reachable from `model.initial()`, refusing with
    /// [`AnalyticError::TooCostly`] past [`DEFAULT_STATE_LIMIT`] times the budget factor in
    /// force, and with [`AnalyticError::InvalidParameter`] for a negative, infinite or NaN
    /// rate.
    pub fn explore<M: MarkovModel<State = S>>(model: &M) -> Result<Self> {
        let limit = cost::scaled(DEFAULT_STATE_LIMIT as f64);
        Self::enumerate(model, limit.min(u32::MAX as f64) as usize, cost::raise)
    }

    /// As [`explore`](Self::explore) with an explicit limit on the number of states (the
    /// budget factor is not applied).
    pub fn explore_with_limit<M: MarkovModel<State = S>>(model: &M, limit: usize) -> Result<Self> {
        Self::enumerate(model, limit.min(u32::MAX as usize), || {
            "allow it with a larger state limit".to_owned()
        })
    }

    fn enumerate<M: MarkovModel<State = S>>(
        model: &M,
        limit: usize,
        allow: impl FnOnce() -> String,
    ) -> Result<Self> {
        let hasher = FxBuildHasher;
        let mut space = StateSpace {
            states: vec![model.initial()],
            index: HashTable::new(),
            row_start: vec![0],
            targets: Vec::new(),
            rates: Vec::new(),
        };
        let states = &space.states;
        space
            .index
            .insert_unique(hasher.hash_one(&states[0]), 0, |&m| {
                hasher.hash_one(&states[m as usize])
            });
        let mut out = Vec::new();
        let mut row: Vec<(u32, f64)> = Vec::new();
        let mut i = 0;
        while i < space.states.len() {
            model.transitions(&space.states[i], &mut out);
            for (target, rate) in out.drain(..) {
                if !(rate.is_finite() && rate >= 0.0) {
                    return Err(AnalyticError::InvalidParameter {
                        what: format!(
                            "rate of a transition from {:?} to {target:?}",
                            space.states[i]
                        ),
                        value: rate,
                    });
                }
                if rate == 0.0 {
                    continue;
                }
                let hash = hasher.hash_one(&target);
                let states = &space.states;
                let j = match space.index.find(hash, |&k| states[k as usize] == target) {
                    Some(&k) => k,
                    None => {
                        let k = space.states.len();
                        if k >= limit {
                            return Err(AnalyticError::TooCostly {
                                what: format!(
                                    "more than {limit} states reachable from the initial state \
                                     (the enumeration stopped at {} states, {i} of them explored)",
                                    k + 1
                                ),
                                work: (k + 1) as f64,
                                budget: limit as f64,
                                allow: allow(),
                            });
                        }
                        space.states.push(target);
                        let states = &space.states;
                        space.index.insert_unique(hash, k as u32, |&m| {
                            hasher.hash_one(&states[m as usize])
                        });
                        k as u32
                    }
                };
                if j as usize != i {
                    row.push((j, rate));
                }
            }
            row.sort_unstable_by_key(|&(j, _)| j);
            let mut last = None;
            for &(j, rate) in &row {
                if last == Some(j) {
                    *space.rates.last_mut().expect("a previous entry") += rate;
                } else {
                    space.targets.push(j);
                    space.rates.push(rate);
                    last = Some(j);
                }
            }
            row.clear();
            space.row_start.push(space.targets.len());
            i += 1;
        }
        Ok(space)
    }

    /// The index of `state`, or `None` if it is not reachable.
    pub fn index_of(&self, state: &S) -> Option<usize> {
        let hash = FxBuildHasher.hash_one(state);
        self.index
            .find(hash, |&k| self.states[k as usize] == *state)
            .map(|&k| k as usize)
    }
}

impl<S> StateSpace<S> {
    /// The number of reachable states.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Always `false`: the initial state is reachable.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// The reachable states, by index.
    pub fn states(&self) -> &[S] {
        &self.states
    }

    /// The number of transitions (distinct pairs of different states with a positive rate).
    pub fn transition_count(&self) -> usize {
        self.targets.len()
    }

    /// The transitions out of state `i` as `(target index, rate)`, targets increasing.
    pub fn transitions(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let range = self.row_start[i]..self.row_start[i + 1];
        self.targets[range.clone()]
            .iter()
            .zip(&self.rates[range])
            .map(|(&j, &rate)| (j as usize, rate))
    }

    /// The total rate out of state `i` (minus the generator's diagonal entry).
    pub fn exit_rate(&self, i: usize) -> f64 {
        self.rates[self.row_start[i]..self.row_start[i + 1]]
            .iter()
            .sum()
    }
}
