//! What an analytic method may spend. A method whose work grows with its inputs (a population,
//! a lattice, the spread of a chain's rates) estimates that work before it starts and refuses,
//! with the estimate, when it is over [`WORK_BUDGET`]: an analysis is cheap or refuses fast,
//! and never costs more than simulating the system would.

use super::error::{AnalyticError, Result};

/// The most work one method may do on one system, in operations of its innermost loop (a
/// multiply-add, a step of a recursion, a table look-up: each a nanosecond or two; an
/// exponential or a logarithm counts as [`TRANSCENDENTAL`]). About 15 ms.
pub const WORK_BUDGET: f64 = 2e7;

/// The operations an `exp` or `ln` counts for in a work estimate.
pub const TRANSCENDENTAL: f64 = 8.0;

/// `Ok` when `work` is within [`WORK_BUDGET`]; otherwise a [`AnalyticError::TooCostly`] saying
/// `what` the work would be.
pub(crate) fn within_budget(work: f64, what: impl FnOnce() -> String) -> Result<()> {
    // NaN work (an estimate of something unbounded) is over any budget
    if work <= WORK_BUDGET {
        Ok(())
    } else {
        Err(AnalyticError::TooCostly {
            what: what(),
            work,
            budget: WORK_BUDGET,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_over_the_budget_is_refused_with_the_estimate() {
        assert!(within_budget(WORK_BUDGET, || unreachable!()).is_ok());
        let e = within_budget(3e9, || "3000 steps of 1e6 moves".to_owned()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "too costly: 3000 steps of 1e6 moves: an estimated 3.0e9 operations, over the budget of 2e7"
        );
        assert!(within_budget(f64::NAN, || "unbounded".to_owned()).is_err());
    }
}
