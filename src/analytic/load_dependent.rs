//! Load-dependent exponential servers: an open station whose rate depends on how many jobs it
//! holds, and exact load-dependent MVA for closed single-class networks.

use serde::{Deserialize, Serialize};

use super::check;
use super::closed::{ClosedLevel, ClosedSolution};
use super::cost::{TRANSCENDENTAL, within_budget};
use super::error::{AnalyticError, Result};

/// Steady-state means of an open load-dependent station.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoadDependentMetrics {
    /// Throughput, the arrival rate `lambda`.
    pub throughput: f64,
    /// `P(N >= 1)`, the probability that the station is busy.
    pub utilisation: f64,
    /// Mean number at the station `L`.
    pub mean_number: f64,
    /// Mean response `L / lambda` (Little); `E[S]/r(1)` when `lambda = 0`.
    pub mean_response: f64,
}

/// Checks rate multipliers: at least one, each finite and `> 0`.
fn check_rates(what: &str, rates: &[f64]) -> Result<()> {
    if rates.is_empty() {
        return Err(AnalyticError::NotApplicable(format!(
            "{what}: a load-dependent server needs at least one rate multiplier"
        )));
    }
    for (i, &r) in rates.iter().enumerate() {
        check::positive(&format!("{what}[{i}]"), r)?;
    }
    Ok(())
}

/// The multiplier with `n >= 1` jobs present: `rates[n - 1]`, the last entry for larger `n`.
fn multiplier(rates: &[f64], n: usize) -> f64 {
    rates[(n - 1).min(rates.len() - 1)]
}

/// Open exponential station with Poisson arrivals at rate `lambda` whose service rate with `n`
/// jobs present is `mu r(n)`, `mu = 1 / mean_service`, `r(n) = rates[n - 1]` and the last entry
/// for every larger `n` (`[1, 2, ..., c]` is M/M/c, `[1]` is M/M/1).
///
/// Birth-death chain: `p_n = p_0 prod_{i=1..n} lambda / (mu r(i))`; past the last entry the
/// terms are geometric of ratio `rho = lambda / (mu r_last)`, summed in closed form
/// (Kleinrock, *Queueing Systems* vol. 1, 3.1; Gross and Harris, 4th ed., 2.3). The finite
/// part is formed in logarithms. Exact.
///
/// Errors: `InvalidParameter` for `lambda < 0`, `mean_service <= 0` or a multiplier that is
/// not finite and `> 0`; `NotApplicable` for no multiplier; `Unstable` if
/// `lambda >= mu r_last`.
pub fn load_dependent_station(
    lambda: f64,
    mean_service: f64,
    rates: &[f64],
) -> Result<LoadDependentMetrics> {
    let lambda = check::non_negative("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    check_rates("rates", rates)?;
    within_budget(rates.len() as f64 * (2.0 * TRANSCENDENTAL + 4.0), || {
        format!("an open load-dependent station with {} rates", rates.len())
    })?;
    let last = rates[rates.len() - 1];
    let rho = check::stable("load-dependent station", lambda * s / last)?;
    if lambda == 0.0 {
        return Ok(LoadDependentMetrics {
            throughput: 0.0,
            utilisation: 0.0,
            mean_number: 0.0,
            mean_response: s / rates[0],
        });
    }
    // ln t_n for n = 0..m, m = rates.len(); beyond m the ratio is rho
    let m = rates.len();
    let mut log_terms = Vec::with_capacity(m + 1);
    let mut acc = 0.0;
    log_terms.push(acc);
    for n in 1..=m {
        acc += (lambda * s / multiplier(rates, n)).ln();
        log_terms.push(acc);
    }
    let max = log_terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = log_terms.iter().map(|t| (t - max).exp()).collect();
    // finite part n = 0..m-1, then t_m rho^(n-m) for n >= m
    let finite: f64 = w[..m].iter().sum();
    let finite_first: f64 = w[..m].iter().enumerate().map(|(n, x)| n as f64 * x).sum();
    let tail = w[m] / (1.0 - rho);
    let tail_first = w[m] * (m as f64 / (1.0 - rho) + rho / ((1.0 - rho) * (1.0 - rho)));
    let total = finite + tail;
    let mean_number = (finite_first + tail_first) / total;
    Ok(LoadDependentMetrics {
        throughput: lambda,
        utilisation: 1.0 - w[0] / total,
        mean_number,
        mean_response: mean_number / lambda,
    })
}

/// One center of a closed network for [`mva_load_dependent`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LdCenter {
    /// Infinite server (think time): residence `D`.
    Delay {
        /// Service demand `D = V E[S]`.
        demand: f64,
    },
    /// One exponential FCFS (or PS) server: residence `D (1 + Q(n-1))`.
    Queue {
        /// Service demand.
        demand: f64,
    },
    /// Exponential server whose rate with `j` jobs is `r(j)` times the rate with one job:
    /// `rates[j - 1]`, the last entry for larger `j` (`[1, 2, ..., c]` is `c` servers).
    LoadDependent {
        /// Service demand with one job present.
        demand: f64,
        /// Rate multipliers `r(1), r(2), ...`.
        rates: Vec<f64>,
    },
}

impl LdCenter {
    fn demand(&self) -> f64 {
        match self {
            Self::Delay { demand }
            | Self::Queue { demand }
            | Self::LoadDependent { demand, .. } => *demand,
        }
    }
}

/// Lower limit of a marginal probability before the recursion is judged to have lost its
/// precision.
const NEGATIVE_PROBABILITY: f64 = -1e-9;

/// Exact MVA for a closed single-class product-form network with load-dependent centers,
/// for every population `1..=N`.
///
/// Reiser and Lavenberg's load-dependent recursion (JACM 27(2), 1980; Lazowska et al.,
/// *Quantitative System Performance*, 8.4): at a load-dependent center
/// `R_k(n) = D_k sum_{j=1..n} j / r_k(j) p_k(j-1 | n-1)`, and after `X(n) = n / sum_k R_k(n)`,
/// `p_k(j | n) = X(n) D_k / r_k(j) p_k(j-1 | n-1)` for `j >= 1` and
/// `p_k(0 | n) = 1 - sum_{j>=1} p_k(j | n)`; delays and queues as in [`mva`](super::mva).
/// Utilisation of a load-dependent center is reported as `1 - p_k(0 | n)`, the probability
/// that it is busy; that of a queue is `X D`.
///
/// The subtraction in `p_k(0 | n)` loses precision for large populations (a known instability
/// of this recursion): when a marginal probability falls below `-1e-9` the result is refused
/// (tiny negative values are clamped to 0). [`mva`](super::mva) with `MultiServer` centers
/// (the log-space convolution algorithm) is the stable alternative for multi-server centers.
///
/// Errors: `InvalidParameter` for `population == 0`, negative or non-finite demands, a zero
/// total demand, or a multiplier not finite and `> 0`; `NotApplicable` for no center, a
/// center with no multiplier, or the instability above; `TooCostly` when
/// `(load-dependent centers) N^2 + K N` is over the budget.
pub fn mva_load_dependent(centers: &[LdCenter], population: u32) -> Result<ClosedSolution> {
    check::at_least("population", population, 1)?;
    if centers.is_empty() {
        return Err(AnalyticError::NotApplicable(
            "a closed network needs at least one center".into(),
        ));
    }
    let mut total = 0.0;
    let mut load_dependent = 0.0;
    for (k, c) in centers.iter().enumerate() {
        total += check::non_negative(&format!("demand[{k}]"), c.demand())?;
        if let LdCenter::LoadDependent { rates, .. } = c {
            check_rates(&format!("rates of center {k}"), rates)?;
            load_dependent += 1.0;
        }
    }
    check::positive("total demand", total)?;
    let n_max = population as usize;
    let nf = f64::from(population);
    within_budget(
        4.0 * load_dependent * nf * nf + nf * (10.0 * centers.len() as f64 + 150.0),
        || format!("load-dependent MVA over populations 1..{population}"),
    )?;
    let mut queue = vec![0.0; centers.len()];
    // marginals p_k(j | n - 1), j = 0..n-1, for the load-dependent centers (empty otherwise)
    let mut marginals: Vec<Vec<f64>> = centers
        .iter()
        .map(|c| match c {
            LdCenter::LoadDependent { .. } => vec![1.0],
            _ => Vec::new(),
        })
        .collect();
    let mut levels = Vec::with_capacity(n_max);
    for n in 1..=n_max {
        let residence: Vec<f64> = centers
            .iter()
            .zip(&queue)
            .zip(&marginals)
            .map(|((c, q), p)| match c {
                LdCenter::Delay { demand } => *demand,
                LdCenter::Queue { demand } => demand * (1.0 + q),
                LdCenter::LoadDependent { demand, rates } => {
                    demand
                        * (1..=n)
                            .map(|j| j as f64 / multiplier(rates, j) * p[j - 1])
                            .sum::<f64>()
                }
            })
            .collect();
        let response_time: f64 = residence.iter().sum();
        let throughput = n as f64 / response_time;
        queue = residence.iter().map(|r| throughput * r).collect();
        let mut utilisation = Vec::with_capacity(centers.len());
        for (k, c) in centers.iter().enumerate() {
            utilisation.push(match c {
                LdCenter::Delay { .. } => None,
                LdCenter::Queue { demand } => Some(throughput * demand),
                LdCenter::LoadDependent { demand, rates } => {
                    let previous = &marginals[k];
                    let mut next = vec![0.0; n + 1];
                    for j in 1..=n {
                        next[j] = throughput * demand / multiplier(rates, j) * previous[j - 1];
                    }
                    let p0 = 1.0 - next[1..].iter().sum::<f64>();
                    if p0 < NEGATIVE_PROBABILITY {
                        return Err(AnalyticError::NotApplicable(format!(
                            "load-dependent MVA lost its precision at population {n}: \
                             p(0) of center {k} came out as {p0:e}; use mva with MultiServer \
                             centers (log-space convolution) instead"
                        )));
                    }
                    next[0] = p0.max(0.0);
                    marginals[k] = next;
                    Some(1.0 - marginals[k][0])
                }
            });
        }
        levels.push(ClosedLevel {
            population: n as u32,
            throughput,
            response_time,
            residence,
            queue_length: queue.clone(),
            utilisation,
        });
    }
    Ok(ClosedSolution::new(levels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{Center, CenterKind, mm1, mmc, mva};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn open_station_reduces_to_mm1_and_mmc() {
        let m = load_dependent_station(0.6, 1.0, &[1.0]).unwrap();
        let single = mm1(0.6, 1.0).unwrap();
        assert!(close(m.mean_number, single.mean_number, 1e-12));
        assert!(close(m.mean_response, single.mean_response, 1e-12));
        assert!(close(m.utilisation, 0.6, 1e-12));
        for c in [2u32, 4, 16] {
            let rates: Vec<f64> = (1..=c).map(f64::from).collect();
            let lambda = 0.8 * f64::from(c) / 1.5;
            let m = load_dependent_station(lambda, 1.5, &rates).unwrap();
            let e = mmc(lambda, 1.5, c).unwrap();
            assert!(close(m.mean_number, e.mean_number, 1e-12), "c = {c}");
            assert!(close(m.mean_response, e.mean_response, 1e-12));
        }
        // a server that speeds up with its queue holds fewer jobs than one that does not
        let fast = load_dependent_station(0.6, 1.0, &[1.0, 1.5, 2.0]).unwrap();
        assert!(fast.mean_number < single.mean_number);
        assert!(matches!(
            load_dependent_station(2.0, 1.0, &[1.0, 2.0]),
            Err(AnalyticError::Unstable { .. })
        ));
        assert!(load_dependent_station(0.5, 1.0, &[]).is_err());
        assert!(load_dependent_station(0.5, 1.0, &[1.0, 0.0]).is_err());
    }

    #[test]
    fn closed_network_matches_mva_multiserver_and_plain_mva() {
        let plain = [
            Center {
                kind: CenterKind::Delay,
                demand: 2.0,
            },
            Center {
                kind: CenterKind::Queue,
                demand: 1.0,
            },
            Center {
                kind: CenterKind::MultiServer(4),
                demand: 3.0,
            },
        ];
        let ld = [
            LdCenter::Delay { demand: 2.0 },
            LdCenter::Queue { demand: 1.0 },
            LdCenter::LoadDependent {
                demand: 3.0,
                rates: vec![1.0, 2.0, 3.0, 4.0],
            },
        ];
        let a = mva(&plain, 30).unwrap();
        let b = mva_load_dependent(&ld, 30).unwrap();
        for (x, y) in a.levels().iter().zip(b.levels()) {
            assert!(
                close(y.throughput, x.throughput, 1e-9),
                "n = {}",
                x.population
            );
            for k in 0..3 {
                assert!(close(y.residence[k], x.residence[k], 1e-9));
                assert!(close(y.queue_length[k], x.queue_length[k], 1e-9));
            }
        }
        // r = [1] is a plain queue
        let single = [
            LdCenter::Delay { demand: 2.0 },
            LdCenter::LoadDependent {
                demand: 1.0,
                rates: vec![1.0],
            },
        ];
        let queue = [
            Center {
                kind: CenterKind::Delay,
                demand: 2.0,
            },
            Center {
                kind: CenterKind::Queue,
                demand: 1.0,
            },
        ];
        let a = mva(&queue, 20).unwrap();
        let b = mva_load_dependent(&single, 20).unwrap();
        for (x, y) in a.levels().iter().zip(b.levels()) {
            assert!(close(y.throughput, x.throughput, 1e-12));
            assert!(close(y.queue_length[1], x.queue_length[1], 1e-12));
            assert!(close(
                y.utilisation[1].unwrap(),
                x.utilisation[1].unwrap(),
                1e-9
            ));
        }
        let total: f64 = b.full().queue_length.iter().sum();
        assert!(close(total, 20.0, 1e-12));
    }

    #[test]
    fn refusals() {
        assert!(mva_load_dependent(&[], 3).is_err());
        assert!(mva_load_dependent(&[LdCenter::Queue { demand: 1.0 }], 0).is_err());
        assert!(
            mva_load_dependent(
                &[LdCenter::LoadDependent {
                    demand: 1.0,
                    rates: vec![]
                }],
                3
            )
            .is_err()
        );
        assert!(mva_load_dependent(&[LdCenter::Delay { demand: 0.0 }], 3).is_err());
    }
}
