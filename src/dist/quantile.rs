//! Quantiles (the inverse CDF) of every distribution.

use statrs::distribution::{ContinuousCDF, Gamma as GammaCdf, LogNormal as LogNormalCdf};

use super::Dist;
use super::Law;
use crate::analytic::{AnalyticError, invert_cdf};

impl Dist {
    /// The quantile at level `q` in `(0, 1)`: `inf { x : P(X <= x) >= q }`, the left-continuous
    /// inverse of [`Dist::cdf`] (for an empirical distribution, the `ceil(q n)`-th smallest
    /// sample), which is what a histogram percentile estimates.
    ///
    /// Closed forms where they exist (exponential, uniform, Weibull, Pareto), `statrs` for the
    /// gamma family (Erlang included) and the lognormal, bisection on the CDF for the
    /// hyperexponential and phase-type laws.
    ///
    /// Errors: `InvalidParameter` for `q` outside `(0, 1)`; `NotConverged` if the numerical
    /// inversion fails.
    pub fn quantile(&self, q: f64) -> Result<f64, AnalyticError> {
        if !(q > 0.0 && q < 1.0) {
            return Err(AnalyticError::InvalidParameter {
                what: "quantile level (must be in (0, 1))".to_owned(),
                value: q,
            });
        }
        let gamma =
            |shape: f64, scale: f64| GammaCdf::new(shape, 1.0 / scale).map(|g| g.inverse_cdf(q));
        let x = match &self.law {
            Law::Exponential { mean } => -mean * (-q).ln_1p(),
            Law::Deterministic { value } => *value,
            Law::Uniform { min, max } => min + q * (max - min),
            Law::Erlang { k, mean } => {
                let k = f64::from(*k);
                gamma(k, mean / k).unwrap_or(f64::NAN)
            }
            Law::Gamma(_, p) => gamma(p.shape, p.scale).unwrap_or(f64::NAN),
            Law::LogNormal(_, p) => LogNormalCdf::new(p.mu, p.sigma)
                .map(|d| d.inverse_cdf(q))
                .unwrap_or(f64::NAN),
            Law::Weibull(_, p) => p.scale * (-(-q).ln_1p()).powf(1.0 / p.shape),
            Law::Pareto(_, p) => p.scale * (1.0 - q).powf(-1.0 / p.shape),
            Law::HyperExp { .. } | Law::PhaseType(_) | Law::Markovian(_) => {
                return invert_cdf(&|t| Ok(self.cdf(t)), q, 0.0, self.mean());
            }
            Law::Empirical(e) => e.quantile(q),
        };
        if x.is_finite() && x >= 0.0 {
            Ok(x)
        } else {
            Err(AnalyticError::NotConverged {
                method: format!("the quantile at level {q}"),
                iterations: 0,
                residual: x,
            })
        }
    }
}
