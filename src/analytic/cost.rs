//! What an analytic method may spend. A method whose work grows with its inputs (a population,
//! a lattice, the spread of a chain's rates) estimates that work before it starts and refuses,
//! with the estimate, when it is over [`WORK_BUDGET`]: an analysis is cheap or refuses fast,
//! and never costs more than simulating the system would.
//!
//! **Raising the budget.** A scenario's `[analyze] budget = k` (or `--budget k` on the
//! commands that analyse) multiplies every method's budget by `k` for the analysis of that
//! scenario: [`with_budget`] sets the factor for the calls it wraps, on the thread that runs
//! them, and every budget check reads it through [`scaled`]. A refusal for cost says the factor
//! that would let the method run ([`allowance`]).

use std::cell::Cell;

use super::error::{AnalyticError, Result};

/// The largest budget factor a scenario may ask for: a factor of 10^4 lets a method spend a
/// minute or so where it was allowed a few milliseconds.
pub const MAX_BUDGET_FACTOR: f64 = 1e4;

thread_local! {
    /// The factor of every budget for the analysis running on this thread.
    static FACTOR: Cell<f64> = const { Cell::new(1.0) };
}

/// Runs `f` with every budget multiplied by `factor` (on this thread; the previous factor is
/// restored after, also if `f` panics).
pub fn with_budget<T>(factor: f64, f: impl FnOnce() -> T) -> T {
    struct Restore(f64);
    impl Drop for Restore {
        fn drop(&mut self) {
            FACTOR.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(FACTOR.with(|c| c.replace(factor)));
    f()
}

/// `factor` if it is a budget factor parsim accepts, in (0, [`MAX_BUDGET_FACTOR`]]; else what
/// it must be (for `[analyze] budget` and `--budget` alike).
pub fn check_factor(factor: f64) -> std::result::Result<f64, String> {
    if factor > 0.0 && factor <= MAX_BUDGET_FACTOR {
        Ok(factor)
    } else {
        Err(format!(
            "must be a factor of the analysis budget in (0, {MAX_BUDGET_FACTOR:.0e}], e.g. 10; got {factor}"
        ))
    }
}

/// The budget factor in force on this thread (1 outside [`with_budget`]).
pub fn factor() -> f64 {
    FACTOR.with(Cell::get)
}

/// `base`, a method's budget at factor 1, times the factor in force.
pub fn scaled(base: f64) -> f64 {
    base * factor()
}

/// How to let a method run whose estimated `work` is over `base` (its budget at factor 1):
/// the factor it needs, rounded up to one significant digit, or that no allowed factor is
/// enough.
pub fn allowance(work: f64, base: f64) -> String {
    let needed = work / base;
    if needed.is_nan() || needed > MAX_BUDGET_FACTOR {
        return format!(
            "beyond the largest budget ([analyze] budget = {MAX_BUDGET_FACTOR:.0e} allows {:.0e})",
            base * MAX_BUDGET_FACTOR
        );
    }
    let magnitude = 10_f64.powf(needed.log10().floor());
    let factor = ((needed / magnitude).ceil() * magnitude).max(1.0);
    format!("allow it with [analyze] budget = {factor} or --budget {factor}")
}

/// A budget as the refusals print it: in as few significant digits as give it exactly (`2e7`,
/// `1.6e9`), at most four.
pub fn budget_text(budget: f64) -> String {
    (0..3)
        .map(|digits| format!("{budget:.digits$e}"))
        .find(|text| {
            text.parse::<f64>()
                .is_ok_and(|v| (v - budget).abs() <= 1e-9 * budget.abs())
        })
        .unwrap_or_else(|| format!("{budget:.3e}"))
}

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
    let budget = scaled(WORK_BUDGET);
    if work <= budget {
        Ok(())
    } else {
        Err(AnalyticError::TooCostly {
            what: what(),
            work,
            budget,
            allow: allowance(work, WORK_BUDGET),
        })
    }
}

/// How to let a method run that stopped at its budget, its whole work unknown until it runs:
/// a larger factor than the one in force.
pub fn raise() -> String {
    let next = (factor() * 10.0).min(MAX_BUDGET_FACTOR);
    format!(
        "the work it needs is not known before it runs: try [analyze] budget = {next} or --budget {next}"
    )
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
            "too costly: 3000 steps of 1e6 moves: an estimated 3.0e9 operations, over the budget of 2e7; allow it with [analyze] budget = 200 or --budget 200"
        );
        assert!(within_budget(f64::NAN, || "unbounded".to_owned()).is_err());
    }

    #[test]
    fn a_budget_is_printed_in_as_few_digits_as_give_it_exactly() {
        assert_eq!(budget_text(2e7), "2e7");
        // a budget factor of 80 on 2e7: "2e9" would read as more than an estimate of 1.8e9
        assert_eq!(budget_text(1.6e9), "1.6e9");
        assert_eq!(budget_text(1.25e6), "1.25e6");
        assert_eq!(budget_text(1.0 / 3.0), "3.333e-1");
    }

    #[test]
    fn a_raised_budget_lets_the_work_run_and_is_restored_after() {
        assert!(within_budget(3e9, String::new).is_err());
        assert!(with_budget(200.0, || within_budget(3e9, String::new)).is_ok());
        assert!(with_budget(100.0, || within_budget(3e9, String::new)).is_err());
        assert_eq!(factor(), 1.0);
        assert!(allowance(1e30, WORK_BUDGET).starts_with("beyond the largest budget"));
        assert!(allowance(2.1e7, WORK_BUDGET).ends_with("budget = 2 or --budget 2"));
    }
}
