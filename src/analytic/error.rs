//! The one error type of the analytic solvers.

use thiserror::Error;

/// Why an analytic formula gives no number for the inputs it was handed.
///
/// Every variant is final for those inputs: calling again with the same numbers gives the same
/// error. None of them is a bug in the caller's program; each says which assumption of the
/// formula the system breaks, so that a report can print "no analytic value: ..." instead of
/// a wrong number.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AnalyticError {
    /// A station (or the whole system) has utilisation `rho >= 1`, so no steady state exists.
    ///
    /// Happens for open stations and open networks. Fix: lower the arrival rate or the service
    /// demand, or add servers, until `rho < 1`.
    #[error("{what} is unstable: utilisation {rho} >= 1")]
    Unstable {
        /// Which station or system (for networks it names the station index).
        what: String,
        /// The offending utilisation per server.
        rho: f64,
    },
    /// A number is outside the formula's domain: NaN, infinite, negative, or zero where zero is
    /// not allowed.
    ///
    /// Fix: pass the parameter named in `what` inside its stated range.
    #[error("invalid {what}: {value}")]
    InvalidParameter {
        /// Which parameter, e.g. `"mean_service"` or `"demand[2]"`.
        what: String,
        /// The rejected value (converted to `f64` for integer parameters).
        value: f64,
    },
    /// Input arrays do not agree in length.
    ///
    /// Fix: give one entry per class, station or center as the message says.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// Which array.
        what: String,
        /// The length it should have.
        expected: usize,
        /// The length it has.
        got: usize,
    },
    /// The formula does not apply to this kind of system (not product form, too large for the
    /// exact algorithm, an unsupported station kind, a singular routing matrix, ...).
    ///
    /// Fix: use the method the message suggests, or compare against simulation only.
    #[error("not applicable: {0}")]
    NotApplicable(String),
    /// An iterative method stopped at its iteration cap before meeting its tolerance.
    ///
    /// Fix: raise the cap or loosen the tolerance; a network close to saturation converges
    /// slowly.
    #[error("{method} did not converge in {iterations} iterations (last change {residual:e})")]
    NotConverged {
        /// The method that gave up.
        method: String,
        /// Iterations (or subdivisions) spent.
        iterations: u32,
        /// The last change or error estimate, to compare with the tolerance.
        residual: f64,
    },
    /// The method would cost more than an analysis allows: its work, estimated before it
    /// starts, is over [`WORK_BUDGET`](super::WORK_BUDGET), so it is refused at once instead
    /// of being run.
    ///
    /// Fix: raise the budget (`allow` says by how much), compare against simulation only, or
    /// shrink the system (fewer jobs, rates closer together).
    #[error(
        "too costly: {what}: an estimated {work:.1e} operations, over the budget of {}; {allow}", super::cost::budget_text(*.budget)
    )]
    TooCostly {
        /// What the work would be, with the figures behind the estimate.
        what: String,
        /// The estimated work, in operations of the method's innermost loop.
        work: f64,
        /// The budget it exceeds (with the factor in force).
        budget: f64,
        /// How to let it run ([`super::cost::allowance`]).
        allow: String,
    },
}

/// Shorthand for results of this module.
pub type Result<T> = std::result::Result<T, AnalyticError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_cause() {
        let e = AnalyticError::Unstable {
            what: "station 2".into(),
            rho: 1.25,
        };
        assert_eq!(
            e.to_string(),
            "station 2 is unstable: utilisation 1.25 >= 1"
        );
        let e = AnalyticError::InvalidParameter {
            what: "mean_service".into(),
            value: -1.0,
        };
        assert_eq!(e.to_string(), "invalid mean_service: -1");
    }
}
