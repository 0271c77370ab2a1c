//! Response-time percentiles (`station.<s>.p50|p90|p95|p99` per visit, `class.<c>.p..` end to
//! end): a sojourn law per station (`stations`), the law of a fork's maximum (`forks`) and of a
//! class's whole route (`routes`), each labelled exact or with the assumption that breaks.
//!
//! A law's quantiles are what the simulator's histogram percentiles estimate (the
//! left-continuous inverse of the CDF, see [`crate::stats::Percentiles`]).

use std::path::Path;

use crate::analytic::{
    AnalyticError, PhaseType, QuantileWork, QueueBranch, branch_response_cdf, invert_cdf,
};
use crate::dist::{Dist, DistSpec};
use crate::network::Network;
use crate::stats::PERCENTILES;

use super::Analysis;
use crate::metrics::name::{Figure, Subject};

mod forks;
mod multiclass;
mod routes;
mod stations;

/// Simpson intervals (even) for the moments of a law known by its CDF only.
const MOMENT_STEPS: usize = 400;

/// A sojourn-time law whose quantiles can be computed.
#[derive(Clone, Debug)]
enum Sojourn {
    /// Phase-type (M/M/c, Erlang mixtures, sums along a route).
    Phase(PhaseType),
    /// A distribution of the model's own kinds (a delay's service time, a gamma fit).
    Dist(Dist),
    /// The service time plus a wait that is 0 with probability `1 - waits` and otherwise
    /// exponential of mean `mean_wait / waits` (see [`branch_response_cdf`]).
    Waited {
        /// The service time.
        service: Dist,
        /// The probability of waiting.
        waits: f64,
        /// The mean wait, `Wq`.
        mean_wait: f64,
    },
    /// The maximum of independent draws of each law.
    Max(Vec<Sojourn>),
    /// Sojourn `i` with probability `weight_i` (the weights sum to 1).
    Mixture(Vec<(f64, Sojourn)>),
}

impl Sojourn {
    /// The gamma law with mean `mean` and second moment `second` (a point mass when the
    /// variance is 0).
    fn gamma_fit(mean: f64, second: f64) -> Result<Sojourn, AnalyticError> {
        let scv = second / (mean * mean) - 1.0;
        let spec = if scv.abs() < 1e-12 {
            DistSpec::det(mean)
        } else {
            DistSpec::Gamma {
                shape: None,
                scale: None,
                mean: Some(mean),
                scv: Some(scv),
            }
        };
        spec.build(Path::new("")).map(Sojourn::Dist).map_err(|e| {
            AnalyticError::NotApplicable(format!("no gamma law with mean {mean}, SCV {scv}: {e}"))
        })
    }

    /// `P(T <= t)`.
    fn cdf(&self, t: f64) -> Result<f64, AnalyticError> {
        match self {
            Sojourn::Phase(p) => p.cdf(t),
            Sojourn::Dist(d) => Ok(d.cdf(t)),
            Sojourn::Waited {
                service,
                waits,
                mean_wait,
            } => {
                let cdf = |x: f64| service.cdf(x);
                branch_response_cdf(
                    &QueueBranch {
                        service_cdf: &cdf,
                        service_lower: service.lower_bound(),
                        utilisation: *waits,
                        mean_wait: *mean_wait,
                    },
                    t,
                )
            }
            Sojourn::Max(parts) => parts.iter().map(|p| p.cdf(t)).product(),
            Sojourn::Mixture(parts) => parts.iter().map(|(w, p)| Ok(w * p.cdf(t)?)).sum(),
        }
    }

    /// A time scale to start the search for a quantile from.
    fn scale(&self) -> f64 {
        match self {
            Sojourn::Phase(_) => 1.0,
            Sojourn::Dist(d) => d.mean(),
            Sojourn::Waited {
                service, mean_wait, ..
            } => service.mean() + mean_wait,
            Sojourn::Max(parts) => parts.iter().map(Sojourn::scale).fold(0.0, f64::max),
            Sojourn::Mixture(parts) => parts.iter().map(|(_, p)| p.scale()).fold(0.0, f64::max),
        }
    }

    /// The smallest value the law takes.
    fn lower(&self) -> f64 {
        match self {
            Sojourn::Phase(_) => 0.0,
            Sojourn::Dist(d) | Sojourn::Waited { service: d, .. } => d.lower_bound(),
            Sojourn::Max(parts) => parts.iter().map(Sojourn::lower).fold(0.0, f64::max),
            Sojourn::Mixture(parts) => parts
                .iter()
                .map(|(_, p)| p.lower())
                .fold(f64::INFINITY, f64::min),
        }
    }

    /// The mean and second moment (not for a maximum).
    fn moments(&self) -> Result<(f64, f64), AnalyticError> {
        match self {
            Sojourn::Phase(p) => p.moments(),
            Sojourn::Dist(d) => Ok((d.raw_moment(1), d.raw_moment(2))),
            Sojourn::Waited {
                service,
                waits,
                mean_wait,
            } => {
                // the wait W: 0 w.p. 1 - p, else exponential of mean Wq / p, so
                // E[W^2] = p 2 (Wq / p)^2 = 2 Wq^2 / p; W is independent of the service
                let (s1, s2) = (service.raw_moment(1), service.raw_moment(2));
                let w2 = if *waits > 0.0 {
                    2.0 * mean_wait * mean_wait / waits
                } else {
                    0.0
                };
                Ok((s1 + mean_wait, s2 + 2.0 * s1 * mean_wait + w2))
            }
            Sojourn::Max(_) => self.numeric_moments(),
            Sojourn::Mixture(parts) => parts.iter().try_fold((0.0, 0.0), |(m, m2), (w, p)| {
                let (pm, pm2) = p.moments()?;
                Ok((m + w * pm, m2 + w * pm2))
            }),
        }
    }

    /// `E[T] = int P(T > t) dt` and `E[T^2] = 2 int t P(T > t) dt` by Simpson's rule on
    /// `MOMENT_STEPS` intervals from 0 to the `1 - 1e-9` quantile (the tail beyond is left out).
    fn numeric_moments(&self) -> Result<(f64, f64), AnalyticError> {
        let top = self.quantile(1.0 - 1e-9)?;
        let h = top / MOMENT_STEPS as f64;
        let (mut m1, mut m2) = (0.0, 0.0);
        for i in 0..=MOMENT_STEPS {
            let t = i as f64 * h;
            let weight = if i == 0 || i == MOMENT_STEPS {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            let survival = 1.0 - self.cdf(t)?;
            m1 += weight * survival;
            m2 += weight * 2.0 * t * survival;
        }
        Ok((m1 * h / 3.0, m2 * h / 3.0))
    }

    /// The estimated work of the reported quantiles of the law's phase-type parts (the only
    /// parts whose work grows with the system: uniformization; the rest are closed forms and
    /// quadratures of bounded length), each part's search taken as the law's; `None` without
    /// such parts.
    fn uniformization_work(&self) -> Option<QuantileWork> {
        let levels: Vec<f64> = PERCENTILES.iter().map(|(_, q)| *q).collect();
        match self {
            Sojourn::Phase(p) => Some(p.quantile_work(&levels)),
            Sojourn::Dist(_) | Sojourn::Waited { .. } => None,
            Sojourn::Max(parts) => total_work(parts.iter()),
            Sojourn::Mixture(parts) => total_work(parts.iter().map(|(_, p)| p)),
        }
    }

    /// `Ok` when [`Sojourn::uniformization_work`] is within the budget.
    fn affordable(&self) -> Result<(), AnalyticError> {
        self.uniformization_work().map_or(Ok(()), |w| w.check())
    }

    /// The quantile at level `q` in `(0, 1)`.
    fn quantile(&self, q: f64) -> Result<f64, AnalyticError> {
        match self {
            Sojourn::Phase(p) => p.quantile(q),
            Sojourn::Dist(d) => d.quantile(q),
            _ => invert_cdf(&|t| self.cdf(t), q, self.lower(), self.scale()),
        }
    }
}

/// A law with the method that gives it and whether it is exact.
#[derive(Clone, Debug)]
struct Estimate {
    law: Sojourn,
    method: String,
    exact: bool,
}

/// Adds every percentile prediction (and bound) the network's structure allows; `v` is
/// [`crate::network::visits`].
pub(super) fn add(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    let mut laws = stations::laws(net, v, a);
    let per_class = multiclass::laws(net, &mut laws, a);
    for (s, est) in laws.iter().enumerate() {
        if let Some(est) = est {
            emit(a, Subject::Station(&net.stations[s].name), est);
        }
    }
    let forks = forks::laws(net, &laws, a);
    routes::classes(net, v, &per_class, &forks, a);
}

/// The work of several laws' quantiles together: the works and values summed, the other
/// figures those of the dearest.
fn total_work<'a>(laws: impl Iterator<Item = &'a Sojourn>) -> Option<QuantileWork> {
    laws.filter_map(Sojourn::uniformization_work)
        .reduce(|total, w| {
            let dearest = if w.work > total.work { w } else { total };
            QuantileWork {
                work: total.work + w.work,
                values: total.values + w.values,
                ..dearest
            }
        })
}

/// The metrics of the reported percentiles of `subject`, as a refusal names them together.
fn percentile_range(subject: Subject<'_>) -> String {
    let [first, .., last] = Figure::PERCENTILES;
    format!("{}..{last}", subject.metric(first))
}

/// Predictions of the four reported percentiles of `subject` from `est` (or one refusal).
fn emit(a: &mut Analysis, subject: Subject<'_>, est: &Estimate) {
    if let Err(e) = est.law.affordable() {
        a.refuse(&est.method, format!("{}: {e}", percentile_range(subject)));
        return;
    }
    let mut values = Vec::with_capacity(Figure::PERCENTILES.len());
    for (figure, (_, q)) in Figure::PERCENTILES.into_iter().zip(PERCENTILES) {
        match est.law.quantile(q) {
            Ok(x) => values.push((subject.metric(figure), x)),
            Err(e) => {
                a.refuse(&est.method, format!("{}: {e}", subject.metric(figure)));
                return;
            }
        }
    }
    for (metric, x) in values {
        a.add(metric, x, &est.method, est.exact);
    }
}

/// The quantiles of `law` at the reported levels, or why not.
fn quantiles(law: &Sojourn) -> Result<Vec<f64>, AnalyticError> {
    PERCENTILES.iter().map(|(_, q)| law.quantile(*q)).collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::Sojourn;
    use crate::dist::{Dist, DistSpec};

    #[test]
    fn a_mixture_weighs_the_cdfs_and_the_moments() {
        let exp1 = DistSpec::exp(1.0).build(Path::new("")).unwrap();
        let det2 = DistSpec::det(2.0).build(Path::new("")).unwrap();
        let mix = Sojourn::Mixture(vec![
            (0.25, Sojourn::Dist(exp1)),
            (0.75, Sojourn::Dist(det2)),
        ]);
        // at t = 1 only the exponential part counts: 0.25 (1 - e^-1); at 2 all of the point mass
        let hand = 0.25 * (1.0 - (-1.0f64).exp());
        assert!((mix.cdf(1.0).unwrap() - hand).abs() < 1e-12);
        assert!((mix.cdf(2.0).unwrap() - (0.25 * (1.0 - (-2.0f64).exp()) + 0.75)).abs() < 1e-12);
        // mean 0.25 + 1.5 = 1.75; second moment 0.25 * 2 + 0.75 * 4 = 3.5
        let (m, m2) = mix.moments().unwrap();
        assert!(
            (m - 1.75).abs() < 1e-12 && (m2 - 3.5).abs() < 1e-12,
            "{m} {m2}"
        );
        // the waited law: service 1, wait 0 w.p. 1/2 else exponential of mean 2 (Wq = 1):
        // E = 2, E[T^2] = 1 + 2 * 1 * 1 + 2 * 1 / 0.5 = 7
        let waited = Sojourn::Waited {
            service: Dist::deterministic(1.0).unwrap(),
            waits: 0.5,
            mean_wait: 1.0,
        };
        let (m, m2) = waited.moments().unwrap();
        assert!(
            (m - 2.0).abs() < 1e-12 && (m2 - 7.0).abs() < 1e-12,
            "{m} {m2}"
        );
        // the gamma fit keeps both moments
        let (m, m2) = Sojourn::gamma_fit(2.0, 7.0).unwrap().moments().unwrap();
        assert!(
            (m - 2.0).abs() < 1e-9 && (m2 - 7.0).abs() < 1e-9,
            "{m} {m2}"
        );
    }
}
