//! Exact stationary analysis of small continuous-time Markov chains, for any model the caller
//! describes by its initial state and the transitions out of each state.
//!
//! 1. [`StateSpace::explore`] enumerates the states reachable from [`MarkovModel::initial`]
//!    breadth first. Each state is stored once (a vector, with a hash table of indices into
//!    it); the transitions are a compressed sparse row matrix of the generator's off-diagonal
//!    rates, duplicates summed, self-loops dropped. The enumeration refuses with
//!    [`AnalyticError::TooCostly`](super::AnalyticError::TooCostly) as soon as it passes
//!    [`DEFAULT_STATE_LIMIT`] states times the budget factor in force
//!    ([`cost::with_budget`](super::cost::with_budget)).
//! 2. [`StateSpace::stationary`] (or [`stationary`] for both steps) solves `pi Q = 0`,
//!    `sum pi = 1` by a sparse LU factorisation (`faer`, COLAMD ordering) of `Q^T` with one
//!    equation replaced by `pi_0 = 1` (a row of ones for the normalisation would fill the
//!    factors: its solution is normalised after), checks the residual `||pi Q||_1` relative to the
//!    largest exit rate (refined up to [`REFINEMENT_STEPS`] times, refused above
//!    [`RESIDUAL_TOLERANCE`]) and returns a [`Stationary`] distribution.
//!
//! **Reducible chains.** The long-run behaviour is that of the closed classes (strongly
//! connected sets of states with no way out) reachable from the initial state. When there is
//! exactly one, the stationary distribution is unique whatever the initial state: it is solved
//! on that class, and every other (transient) state has probability 0
//! ([`Stationary::transient_states`] counts them). An absorbing state is a closed class of one
//! state. When there are several, the long-run distribution depends on which class the chain
//! falls into: that is refused with
//! [`AnalyticError::NotApplicable`](super::AnalyticError::NotApplicable), naming the number of
//! closed classes and a state of two of them.
//!
//! **Metrics.** [`Stationary::expect`] takes `E[f(state)]` (mean queue lengths, utilisations,
//! the probability of a full buffer); [`Stationary::flow`] sums `pi(s) q(s, t)` over the
//! transitions whose `(s, t)` a predicate accepts (throughputs, departure rates). Events that
//! do not change the state (an arrival lost at a full buffer) have no transition: their rate is
//! `expect(|s| if full(s) { lambda } else { 0.0 })`; so is the rate of one kind of event among
//! several that lead to the same state (abandonment beside service).

mod result;
mod solve;
mod space;

#[cfg(test)]
mod tests;

pub use result::Stationary;
pub use solve::{REFINEMENT_STEPS, RESIDUAL_TOLERANCE};
pub use space::{DEFAULT_STATE_LIMIT, StateSpace};

use std::fmt::Debug;
use std::hash::Hash;

use super::error::Result;

/// A continuous-time Markov chain described by its initial state and, for each state, the
/// transitions out of it with their rates.
pub trait MarkovModel {
    /// A state of the chain; `Debug` names states in refusals.
    type State: Clone + Eq + Hash + Debug;

    /// The state the chain starts in; the states analysed are those reachable from it.
    fn initial(&self) -> Self::State;

    /// Appends to `out` (empty on entry) each transition out of `state` as `(target, rate)`.
    /// Rates must be finite and non-negative; a rate of 0 is no transition, a transition to
    /// `state` itself is ignored, and transitions to the same target add up.
    fn transitions(&self, state: &Self::State, out: &mut Vec<(Self::State, f64)>);
}

/// The stationary distribution of `model`: [`StateSpace::explore`] then
/// [`StateSpace::stationary`].
pub fn stationary<M: MarkovModel>(model: &M) -> Result<Stationary<M::State>> {
    StateSpace::explore(model)?.stationary()
}
