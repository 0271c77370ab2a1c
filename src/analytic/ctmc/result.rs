//! A solved stationary distribution and the expectations taken over it.

use super::StateSpace;

/// The stationary distribution of a chain over its reachable states, with the state space it
/// was solved on.
#[derive(Debug, Clone)]
pub struct Stationary<S> {
    space: StateSpace<S>,
    pi: Vec<f64>,
    residual: f64,
    transient: usize,
}

impl<S> Stationary<S> {
    pub(super) fn new(space: StateSpace<S>, pi: Vec<f64>, residual: f64, transient: usize) -> Self {
        Stationary {
            space,
            pi,
            residual,
            transient,
        }
    }

    /// The state space: the states by index, their transitions.
    pub fn space(&self) -> &StateSpace<S> {
        &self.space
    }

    /// The reachable states, by index (as [`probabilities`](Self::probabilities)).
    pub fn states(&self) -> &[S] {
        self.space.states()
    }

    /// The stationary probability of each state, by index; non-negative, summing to 1.
    pub fn probabilities(&self) -> &[f64] {
        &self.pi
    }

    /// Each state with its probability.
    pub fn iter(&self) -> impl Iterator<Item = (&S, f64)> + '_ {
        self.space.states().iter().zip(self.pi.iter().copied())
    }

    /// `E[f(state)]`, e.g. a mean queue length, a utilisation, or the probability of an event
    /// (`1.0` where it holds, `0.0` elsewhere).
    pub fn expect(&self, mut f: impl FnMut(&S) -> f64) -> f64 {
        self.iter()
            .filter(|&(_, p)| p > 0.0)
            .map(|(s, p)| p * f(s))
            .sum()
    }

    /// `sum pi(s) q(s, t)` over the transitions `s -> t` for which `matches(s, t)`: the rate
    /// of those transitions in the long run (a throughput when they are the departures from a
    /// station). Transitions from different events to the same target are one transition
    /// here; take such an event's rate with [`expect`](Self::expect).
    pub fn flow(&self, mut matches: impl FnMut(&S, &S) -> bool) -> f64 {
        let states = self.space.states();
        let mut total = 0.0;
        for (i, &p) in self.pi.iter().enumerate() {
            if p == 0.0 {
                continue;
            }
            for (j, rate) in self.space.transitions(i) {
                if matches(&states[i], &states[j]) {
                    total += p * rate;
                }
            }
        }
        total
    }

    /// The solution's residual `||pi Q||_1` over the largest exit rate (at most
    /// [`RESIDUAL_TOLERANCE`](super::RESIDUAL_TOLERANCE)).
    pub fn residual(&self) -> f64 {
        self.residual
    }

    /// How many reachable states are transient (outside the closed class; probability 0).
    pub fn transient_states(&self) -> usize {
        self.transient
    }
}

impl<S: Clone + Eq + std::hash::Hash + std::fmt::Debug> Stationary<S> {
    /// The stationary probability of `state` (0 if it is not reachable).
    pub fn probability(&self, state: &S) -> f64 {
        self.space.index_of(state).map_or(0.0, |i| self.pi[i])
    }
}
