//! Raw moments `E[X^n]` of every distribution (the M/G/1 response-time moments need the
//! second and third).

use statrs::function::gamma::{gamma as gamma_fn, ln_gamma};

use super::Dist;
use super::Law;

impl Dist {
    /// `E[X^n]` for `n >= 1`; infinite when the moment does not exist (a Pareto with shape
    /// `<= n`).
    pub fn raw_moment(&self, n: u32) -> f64 {
        let nf = f64::from(n);
        // E[X^n] of a gamma law: scale^n Gamma(shape + n) / Gamma(shape)
        let gamma_moment = |shape: f64, scale: f64| {
            scale.powf(nf) * (ln_gamma(shape + nf) - ln_gamma(shape)).exp()
        };
        let factorial = gamma_fn(nf + 1.0);
        match &self.law {
            Law::Exponential { mean } => factorial * mean.powf(nf),
            Law::Deterministic { value } => value.powf(nf),
            Law::Uniform { min, max } if max > min => {
                (max.powf(nf + 1.0) - min.powf(nf + 1.0)) / ((nf + 1.0) * (max - min))
            }
            Law::Uniform { min, .. } => min.powf(nf),
            Law::Erlang { k, mean } => {
                let k = f64::from(*k);
                gamma_moment(k, mean / k)
            }
            Law::Gamma(_, p) => gamma_moment(p.shape, p.scale),
            Law::HyperExp { p1, mean1, mean2 } => {
                factorial * (p1 * mean1.powf(nf) + (1.0 - p1) * mean2.powf(nf))
            }
            Law::LogNormal(_, p) => (nf * p.mu + 0.5 * nf * nf * p.sigma * p.sigma).exp(),
            Law::Weibull(_, p) => p.scale.powf(nf) * gamma_fn(1.0 + nf / p.shape),
            Law::Pareto(_, p) if p.shape > nf => p.shape * p.scale.powf(nf) / (p.shape - nf),
            Law::Pareto(..) => f64::INFINITY,
            Law::Empirical(e) => e.raw_moment(n),
            Law::PhaseType(ph) => ph.raw_moment(n),
            Law::Markovian(m) => m.marginal().raw_moment(n),
        }
    }
}
