//! Service-time and inter-arrival distributions.
//!
//! A [`Dist`] holds a closed enum of families ([`Law`]), so sampling in the event loop is a
//! `match`, not a virtual call. Its fields are private: a `Dist` is only made through
//! [`DistSpec::build`](spec::DistSpec::build) or the constructors that call it
//! ([`Dist::exponential`], [`Dist::deterministic`]), which check the parameters and the moments
//! (as `rand_distr`'s constructors do); an accepted distribution never yields NaN, a negative or
//! an infinite sample. [`Dist::law`] lets the analytic side read the family and its parameters.
//! Each distribution knows its mean and squared coefficient of variation (SCV), which the
//! analytic side uses (Pollaczek-Khinchine, fork-join maxima), and its CDF, which the
//! Kolmogorov-Smirnov tests and the numeric fork-join maximum use.

mod arrivals;
mod empirical;
mod moments;
mod phase_type;
mod quantile;
mod spec;
pub(crate) use spec::or_a_scalar;

pub use arrivals::{ArrivalSpec, MAX_BATCH_SIZE, MapLaw};
pub use empirical::{Empirical, EmpiricalMode};
pub use phase_type::{MAX_PHASES, PhaseLaw};
pub use spec::{DistError, DistSpec, TIME_BOUNDS};

use rand::RngExt;
use rand_distr::{Distribution, Exp1, Gamma, LogNormal, Pareto, Weibull};
use statrs::distribution::{ContinuousCDF, Gamma as GammaCdf, Weibull as WeibullCdf};
use statrs::function::gamma::{gamma as gamma_fn, ln_gamma};

use crate::rng::StreamRng;

/// A validated distribution of non-negative times: a [`Law`] whose parameters and moments
/// have been checked.
#[derive(Clone, Debug)]
pub struct Dist {
    law: Law,
}

/// A family of distributions with its parameters, as a [`Dist`] holds it: read it with
/// [`Dist::law`]; make a `Dist` with [`DistSpec::build`] or [`Dist::exponential`] and
/// [`Dist::deterministic`].
#[derive(Clone, Debug)]
pub enum Law {
    /// Exponential with the given mean.
    Exponential {
        /// Mean `1/rate`.
        mean: f64,
    },
    /// Always the same value.
    Deterministic {
        /// The value.
        value: f64,
    },
    /// Uniform on `[min, max]`.
    Uniform {
        /// Lower end.
        min: f64,
        /// Upper end.
        max: f64,
    },
    /// Erlang: sum of `k` exponentials, total mean `mean`.
    Erlang {
        /// Number of phases.
        k: u32,
        /// Mean of the sum.
        mean: f64,
    },
    /// Two-phase hyperexponential with balanced means.
    HyperExp {
        /// Probability of the first phase.
        p1: f64,
        /// Mean of the first phase.
        mean1: f64,
        /// Mean of the second phase.
        mean2: f64,
    },
    /// Lognormal with log-space parameters `mu`, `sigma`.
    LogNormal(LogNormal<f64>, LogParams),
    /// Gamma with shape and scale.
    Gamma(Gamma<f64>, ShapeScale),
    /// Weibull with shape and scale.
    Weibull(Weibull<f64>, ShapeScale),
    /// Pareto (type I) with shape `alpha > 1` and scale (minimum) `x_m`.
    Pareto(Pareto<f64>, ShapeScale),
    /// Samples read from a file, drawn at random or replayed in order.
    Empirical(Empirical),
    /// Phase type: the time to absorption of a Markov chain with an initial vector and a
    /// sub-generator.
    PhaseType(Box<PhaseLaw>),
    /// The times between the arrivals of a Markovian arrival process: successive draws are
    /// correlated (the process keeps its phase); one time alone is phase type
    /// ([`MapLaw::marginal`]). Only sources have it (`arrivals = { process = ... }`).
    Markovian(Box<MapLaw>),
}

/// The log-space parameters of a lognormal.
#[derive(Clone, Copy, Debug)]
pub struct LogParams {
    /// Mean of the log.
    pub mu: f64,
    /// Standard deviation of the log.
    pub sigma: f64,
}

/// Shape and scale of a two-parameter family.
#[derive(Clone, Copy, Debug)]
pub struct ShapeScale {
    /// Shape parameter.
    pub shape: f64,
    /// Scale parameter.
    pub scale: f64,
}

impl Dist {
    /// The exponential of mean 1.
    pub const EXP1: Dist = Dist {
        law: Law::Exponential { mean: 1.0 },
    };

    /// The exponential of mean `mean`, checked as `{ dist = "exp", mean = ... }` is.
    pub fn exponential(mean: f64) -> Result<Dist, DistError> {
        DistSpec::exp(mean).build(std::path::Path::new("."))
    }

    /// The constant `value`, checked as `{ dist = "det", value = ... }` is.
    pub fn deterministic(value: f64) -> Result<Dist, DistError> {
        DistSpec::det(value).build(std::path::Path::new("."))
    }

    /// The family and its parameters.
    pub fn law(&self) -> &Law {
        &self.law
    }

    /// Draws one value. The exponential, the common case, is inlined; the other families go
    /// through `Dist::sample_other`.
    #[inline(always)]
    pub fn sample(&mut self, rng: &mut StreamRng) -> f64 {
        match &self.law {
            Law::Exponential { mean } => *mean * Distribution::<f64>::sample(&Exp1, rng),
            _ => self.sample_other(rng),
        }
    }

    #[inline(never)]
    fn sample_other(&mut self, rng: &mut StreamRng) -> f64 {
        match &mut self.law {
            Law::Empirical(e) => e.sample(rng),
            Law::Markovian(m) => m.sample(rng),
            _ => self.draw(rng),
        }
    }

    /// Draws one value without changing the distribution: as [`Dist::sample`], except that a
    /// trace in replay mode is drawn at random (replay needs a cursor; rank programs, whose
    /// distributions are shared by all ranks, refuse replay for that reason) and a Markovian
    /// arrival process draws from its marginal law, forgetting its phase.
    pub fn draw(&self, rng: &mut StreamRng) -> f64 {
        match &self.law {
            Law::Exponential { mean } => *mean * rng.sample::<f64, _>(Exp1),
            Law::Deterministic { value } => *value,
            Law::Uniform { min, max } => *min + (*max - *min) * rng.random::<f64>(),
            Law::Erlang { k, mean } => {
                let phase = *mean / f64::from(*k);
                (0..*k).map(|_| phase * rng.sample::<f64, _>(Exp1)).sum()
            }
            Law::HyperExp { p1, mean1, mean2 } => {
                let mean = if rng.random::<f64>() < *p1 {
                    *mean1
                } else {
                    *mean2
                };
                mean * rng.sample::<f64, _>(Exp1)
            }
            Law::LogNormal(d, _) => d.sample(rng),
            Law::Gamma(d, _) => d.sample(rng),
            Law::Weibull(d, _) => d.sample(rng),
            Law::Pareto(d, _) => d.sample(rng),
            Law::Empirical(e) => e.draw(rng),
            Law::PhaseType(ph) => ph.draw(rng),
            Law::Markovian(m) => m.marginal().draw(rng),
        }
    }

    /// True for a trace replayed in order (see [`Dist::draw`]).
    pub fn is_replay(&self) -> bool {
        self.replayed_trace().is_some()
    }

    /// The trace a replay-mode law reads in order (see [`Dist::is_replay`]); `None` otherwise.
    pub fn replayed_trace(&self) -> Option<&Empirical> {
        match &self.law {
            Law::Empirical(e) if e.mode() == EmpiricalMode::Replay => Some(e),
            _ => None,
        }
    }

    /// Moves a replayed trace's cursor to sample `offset` (modulo its length); nothing for
    /// other laws.
    pub fn replay_from(&mut self, offset: u64) {
        if let Law::Empirical(e) = &mut self.law
            && e.mode() == EmpiricalMode::Replay
        {
            e.replay_from(offset);
        }
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        match &self.law {
            Law::Exponential { mean } | Law::Erlang { mean, .. } => *mean,
            Law::Deterministic { value } => *value,
            Law::Uniform { min, max } => 0.5 * (min + max),
            Law::HyperExp { p1, mean1, mean2 } => p1 * mean1 + (1.0 - p1) * mean2,
            Law::LogNormal(_, p) => (p.mu + 0.5 * p.sigma * p.sigma).exp(),
            Law::Gamma(_, p) => p.shape * p.scale,
            Law::Weibull(_, p) => p.scale * gamma_fn(1.0 + 1.0 / p.shape),
            Law::Pareto(_, p) => p.shape * p.scale / (p.shape - 1.0),
            Law::Empirical(e) => e.mean(),
            Law::PhaseType(ph) => ph.raw_moment(1),
            Law::Markovian(m) => 1.0 / m.rate(),
        }
    }

    /// The squared coefficient of variation, `Var / mean^2` (infinite for a Pareto with
    /// shape `<= 2`).
    pub fn scv(&self) -> f64 {
        match &self.law {
            Law::Exponential { .. } => 1.0,
            Law::Deterministic { .. } => 0.0,
            Law::Uniform { min, max } => {
                let m = 0.5 * (min + max);
                if m == 0.0 {
                    0.0
                } else {
                    (max - min).powi(2) / 12.0 / (m * m)
                }
            }
            Law::Erlang { k, .. } => 1.0 / f64::from(*k),
            Law::HyperExp { p1, mean1, mean2 } => {
                let second = 2.0 * (p1 * mean1 * mean1 + (1.0 - p1) * mean2 * mean2);
                let m = self.mean();
                second / (m * m) - 1.0
            }
            Law::LogNormal(_, p) => (p.sigma * p.sigma).exp_m1(),
            Law::Gamma(_, p) => 1.0 / p.shape,
            Law::Weibull(_, p) => {
                let g1 = gamma_fn(1.0 + 1.0 / p.shape);
                gamma_fn(1.0 + 2.0 / p.shape) / (g1 * g1) - 1.0
            }
            Law::Pareto(_, p) if p.shape > 2.0 => 1.0 / (p.shape * (p.shape - 2.0)),
            Law::Pareto(..) => f64::INFINITY,
            Law::Empirical(e) => e.scv(),
            Law::PhaseType(ph) => ph.scv(),
            Law::Markovian(m) => m.marginal().scv(),
        }
    }

    /// The sum of `n` independent draws (a loop region of `n` iterations of this cost), in one
    /// draw: exact where the family is closed under sums (deterministic; the gamma variate with
    /// the sum's mean and variance is the exact sum for exponential, Erlang and gamma),
    /// otherwise that gamma variate as an approximation of the sum's law.
    pub fn draw_sum(&self, n: u64, rng: &mut StreamRng) -> f64 {
        if n == 0 {
            return 0.0;
        }
        let nf = n as f64;
        let mean = self.mean() * nf;
        match &self.law {
            Law::Deterministic { value } => value * nf,
            _ => {
                let scv = self.scv() / nf;
                if scv <= 0.0 || mean <= 0.0 {
                    return mean;
                }
                let shape = 1.0 / scv;
                match Gamma::new(shape, mean / shape) {
                    Ok(g) => g.sample(rng),
                    Err(_) => mean,
                }
            }
        }
    }

    /// `P(X <= x)`.
    pub fn cdf(&self, x: f64) -> f64 {
        if x < 0.0 {
            return 0.0;
        }
        match &self.law {
            Law::Exponential { mean } => -(-x / mean).exp_m1(),
            Law::Deterministic { value } => f64::from(u8::from(x >= *value)),
            Law::Uniform { min, max } if max > min => ((x - min) / (max - min)).clamp(0.0, 1.0),
            Law::Uniform { min, .. } => f64::from(u8::from(x >= *min)),
            Law::Erlang { k, mean } => gamma_cdf(f64::from(*k), mean / f64::from(*k), x),
            Law::HyperExp { p1, mean1, mean2 } => {
                p1 * -(-x / mean1).exp_m1() + (1.0 - p1) * -(-x / mean2).exp_m1()
            }
            Law::LogNormal(..) if x == 0.0 => 0.0,
            Law::LogNormal(_, p) => {
                let z = (x.ln() - p.mu) / (p.sigma * std::f64::consts::SQRT_2);
                0.5 * statrs::function::erf::erfc(-z)
            }
            Law::Gamma(_, p) => gamma_cdf(p.shape, p.scale, x),
            Law::Weibull(_, p) => WeibullCdf::new(p.shape, p.scale).map_or(f64::NAN, |d| d.cdf(x)),
            Law::Pareto(_, p) if x < p.scale => 0.0,
            Law::Pareto(_, p) => 1.0 - (p.scale / x).powf(p.shape),
            Law::Empirical(e) => e.cdf(x),
            Law::PhaseType(ph) => ph.cdf(x),
            Law::Markovian(m) => m.marginal().cdf(x),
        }
    }

    /// The density `dF/dx` at `x`, for the laws that have one (every family but `det` and
    /// `empirical`, which have atoms); `None` for those.
    pub fn density(&self, x: f64) -> Option<f64> {
        if x < 0.0 {
            return self.has_density().then_some(0.0);
        }
        Some(match &self.law {
            Law::Deterministic { .. } | Law::Empirical(_) => return None,
            Law::Uniform { min, max } if max <= min => return None,
            Law::Exponential { mean } => (-x / mean).exp() / mean,
            Law::Uniform { min, max } if x < *min || x > *max => 0.0,
            Law::Uniform { min, max } => 1.0 / (max - min),
            Law::Erlang { k, mean } => gamma_density(f64::from(*k), mean / f64::from(*k), x),
            Law::HyperExp { p1, mean1, mean2 } => {
                p1 * (-x / mean1).exp() / mean1 + (1.0 - p1) * (-x / mean2).exp() / mean2
            }
            Law::LogNormal(..) if x == 0.0 => 0.0,
            Law::LogNormal(_, p) => {
                let z = (x.ln() - p.mu) / p.sigma;
                (-0.5 * z * z).exp() / (x * p.sigma * (2.0 * std::f64::consts::PI).sqrt())
            }
            Law::Gamma(_, p) => gamma_density(p.shape, p.scale, x),
            Law::Weibull(_, p) => {
                let r = x / p.scale;
                p.shape / p.scale * r.powf(p.shape - 1.0) * (-r.powf(p.shape)).exp()
            }
            Law::Pareto(_, p) if x < p.scale => 0.0,
            Law::Pareto(_, p) => p.shape * p.scale.powf(p.shape) / x.powf(p.shape + 1.0),
            Law::PhaseType(ph) => ph.density(x),
            Law::Markovian(m) => m.marginal().density(x),
        })
    }

    /// Whether the law has a density (no atom): every family but `det`, `empirical` and a
    /// uniform law of width zero.
    pub fn has_density(&self) -> bool {
        match &self.law {
            Law::Deterministic { .. } | Law::Empirical(_) => false,
            Law::Uniform { min, max } => max > min,
            _ => true,
        }
    }

    /// The largest value the distribution can take (`+inf` for unbounded laws).
    pub fn upper_bound(&self) -> f64 {
        match &self.law {
            Law::Deterministic { value } => *value,
            Law::Uniform { max, .. } => *max,
            Law::Empirical(e) => e.max(),
            _ => f64::INFINITY,
        }
    }

    /// The smallest value the distribution can take.
    pub fn lower_bound(&self) -> f64 {
        match &self.law {
            Law::Deterministic { value } => *value,
            Law::Uniform { min, .. } => *min,
            Law::Pareto(_, p) => p.scale,
            Law::Empirical(e) => e.min(),
            _ => 0.0,
        }
    }

    /// The Laplace-Stieltjes transform `E[exp(-s X)]` at `s >= 0`, where it has a closed form
    /// (exponential, deterministic, uniform, Erlang, H2, gamma, phase type, and an empirical
    /// law's samples exactly); `None` for the lognormal, Weibull and Pareto laws and for a
    /// Markovian process's correlated draws.
    pub fn laplace(&self, s: f64) -> Option<f64> {
        let value = match &self.law {
            Law::Exponential { mean } => 1.0 / (1.0 + mean * s),
            Law::Deterministic { value } => (-s * value).exp(),
            Law::Uniform { min, max } if max > min && s > 0.0 => {
                ((-s * min).exp() - (-s * max).exp()) / (s * (max - min))
            }
            Law::Uniform { min, max } => (-s * 0.5 * (min + max)).exp(),
            Law::Erlang { k, mean } => {
                let k = f64::from(*k);
                (1.0 + mean * s / k).powf(-k)
            }
            Law::HyperExp { p1, mean1, mean2 } => {
                p1 / (1.0 + mean1 * s) + (1.0 - p1) / (1.0 + mean2 * s)
            }
            Law::Gamma(_, p) => (1.0 + p.scale * s).powf(-p.shape),
            Law::PhaseType(ph) => ph.ph().laplace(s).ok()?,
            Law::Empirical(e) => e.laplace(s),
            Law::LogNormal(..) | Law::Weibull(..) | Law::Pareto(..) | Law::Markovian(_) => {
                return None;
            }
        };
        value.is_finite().then_some(value)
    }

    /// The Markovian arrival process these are the inter-arrival times of, if any (its draws are
    /// correlated: formulas for renewal arrivals do not hold).
    pub fn arrival_process(&self) -> Option<&MapLaw> {
        match &self.law {
            Law::Markovian(m) => Some(m),
            _ => None,
        }
    }

    /// True for the exponential distribution, the one product-form results assume.
    pub fn is_exponential(&self) -> bool {
        matches!(self.law, Law::Exponential { .. })
    }
}

fn gamma_density(shape: f64, scale: f64, x: f64) -> f64 {
    if x == 0.0 {
        return if shape < 1.0 {
            f64::INFINITY
        } else if shape == 1.0 {
            1.0 / scale
        } else {
            0.0
        };
    }
    ((shape - 1.0) * x.ln() - x / scale - ln_gamma(shape) - shape * scale.ln()).exp()
}

fn gamma_cdf(shape: f64, scale: f64, x: f64) -> f64 {
    GammaCdf::new(shape, 1.0 / scale).map_or(f64::NAN, |d| d.cdf(x))
}

#[cfg(test)]
mod tests;
