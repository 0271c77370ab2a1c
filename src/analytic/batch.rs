//! M^X/G/1: Poisson arrivals of batches, one FCFS server.

use serde::{Deserialize, Serialize};

use super::check;
use super::error::{AnalyticError, Result};
use super::single::StationMetrics;

/// The first two moments of a batch size `X` (a positive integer).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchSize {
    /// `E[X] >= 1`.
    pub mean: f64,
    /// `E[X^2]`, at least `E[X]` and `E[X]^2`.
    pub second_moment: f64,
}

impl BatchSize {
    /// Every batch holds exactly `size` jobs: `E[X] = size`, `E[X^2] = size^2`.
    ///
    /// Errors: `InvalidParameter` for `size == 0`.
    pub fn fixed(size: u32) -> Result<Self> {
        let m = f64::from(check::at_least("batch size", size, 1)?);
        Ok(Self {
            mean: m,
            second_moment: m * m,
        })
    }

    /// Geometric on `{1, 2, ...}` with mean `mean`: `P(X = k) = (1 - p)^(k-1) p`, `p = 1/mean`,
    /// `E[X^2] = (2 - p) / p^2`.
    ///
    /// Errors: `InvalidParameter` for `mean < 1` or not finite.
    pub fn geometric(mean: f64) -> Result<Self> {
        let m = check::finite("batch mean", mean)?;
        if m < 1.0 {
            return Err(AnalyticError::InvalidParameter {
                what: "batch mean (at least 1)".into(),
                value: m,
            });
        }
        let p = 1.0 / m;
        Ok(Self {
            mean: m,
            second_moment: (2.0 - p) / (p * p),
        })
    }
}

/// M^X/G/1: batches arrive as a Poisson process of rate `batch_rate`, each of `X` jobs; one
/// FCFS server serves the jobs one by one (in random order within a batch), service time of
/// mean `mean_service` and squared coefficient of variation `scv`.
///
/// With `rho = lambda_b E[X] E[S]`, the mean wait of a job is
/// `Wq = lambda_b E[X] E[S^2] / (2 (1 - rho)) + E[S] (E[X^2] - E[X]) / (2 E[X] (1 - rho))`:
/// the M/G/1 wait of the batch's work plus the wait behind the jobs of its own batch served
/// first (Gross and Harris, *Fundamentals of Queueing Theory*, 4th ed., 5.1.8; Chaudhry and
/// Templeton, *A First Course in Bulk Queues*, 1983). `R = Wq + E[S]`, throughput
/// `lambda_b E[X]` jobs per time unit, `L = throughput R`. Exact. `X = 1` is [`mg1`](super::mg1).
///
/// Errors: `InvalidParameter` for a negative `batch_rate`, `mean_service <= 0`, `scv < 0`,
/// `E[X] < 1`, or `E[X^2]` below `E[X]` or `E[X]^2`; `Unstable` if `rho >= 1`.
pub fn mxg1(
    batch_rate: f64,
    batch: BatchSize,
    mean_service: f64,
    scv: f64,
) -> Result<StationMetrics> {
    let lambda_b = check::non_negative("batch_rate", batch_rate)?;
    let s = check::positive("mean_service", mean_service)?;
    let scv = check::non_negative("scv", scv)?;
    let m = check::finite("batch mean", batch.mean)?;
    let m2 = check::finite("batch second moment", batch.second_moment)?;
    if m < 1.0 {
        return Err(AnalyticError::InvalidParameter {
            what: "batch mean (at least 1)".into(),
            value: m,
        });
    }
    if m2 < m || m2 < m * m * (1.0 - 1e-12) {
        return Err(AnalyticError::InvalidParameter {
            what: "batch second moment (at least E[X] and E[X]^2)".into(),
            value: m2,
        });
    }
    let lambda = lambda_b * m;
    let rho = check::stable("M^X/G/1 station", lambda * s)?;
    let second = (1.0 + scv) * s * s;
    let wait = (lambda * second + s * (m2 - m) / m) / (2.0 * (1.0 - rho));
    Ok(StationMetrics::from_wait(lambda, s, wait, Some(rho)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mg1;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    /// Mean number in an M^X/M/1 queue with batch law `pmf` (index = size), from the
    /// level-crossing balance `mu p_{n+1} = lambda_b sum_{i<=n} p_i P(X > n - i)`, truncated at
    /// `levels`.
    fn chain_mean_number(lambda_b: f64, mu: f64, pmf: &[f64], levels: usize) -> f64 {
        let tail = |k: usize| -> f64 { pmf.iter().skip(k + 1).sum() };
        let tails: Vec<f64> = (0..levels).map(tail).collect();
        let mut p = vec![1.0];
        for n in 0..levels - 1 {
            let up: f64 = (0..=n).map(|i| p[i] * tails[n - i]).sum();
            p.push(lambda_b * up / mu);
        }
        let total: f64 = p.iter().sum();
        p.iter().enumerate().map(|(n, x)| n as f64 * x).sum::<f64>() / total
    }

    #[test]
    fn single_jobs_are_mg1() {
        for scv in [0.0, 1.0, 3.0] {
            let b = mxg1(0.7, BatchSize::fixed(1).unwrap(), 1.0, scv).unwrap();
            let g = mg1(0.7, 1.0, scv).unwrap();
            assert!(close(b.mean_wait, g.mean_wait, 1e-12));
            assert!(close(b.mean_number, g.mean_number, 1e-12));
        }
        let b = mxg1(0.7, BatchSize::geometric(1.0).unwrap(), 1.0, 1.0).unwrap();
        assert!(close(
            b.mean_wait,
            mg1(0.7, 1.0, 1.0).unwrap().mean_wait,
            1e-12
        ));
    }

    #[test]
    fn geometric_and_fixed_batches_with_exponential_service_match_the_chain() {
        let (lambda_b, mu) = (0.25, 1.0);
        // geometric, mean 3: rho = 0.75
        let mean: f64 = 3.0;
        let p = 1.0 / mean;
        let mut pmf = vec![0.0];
        pmf.extend((1..400).map(|k| (1.0 - p).powi(k - 1) * p));
        let l = chain_mean_number(lambda_b, mu, &pmf, 600);
        let m = mxg1(lambda_b, BatchSize::geometric(mean).unwrap(), 1.0 / mu, 1.0).unwrap();
        assert!(close(m.mean_number, l, 1e-9), "{} {l}", m.mean_number);
        // the closed form for geometric batches: L = rho / ((1 - rho) p) = E[X] rho / (1 - rho)
        assert!(close(m.mean_number, mean * 0.75 / 0.25, 1e-12));
        // fixed size 3
        let pmf = vec![0.0, 0.0, 0.0, 1.0];
        let l = chain_mean_number(lambda_b, mu, &pmf, 600);
        let m = mxg1(lambda_b, BatchSize::fixed(3).unwrap(), 1.0 / mu, 1.0).unwrap();
        assert!(close(m.mean_number, l, 1e-9), "{} {l}", m.mean_number);
    }

    #[test]
    fn batch_moments_and_refusals() {
        let g = BatchSize::geometric(2.0).unwrap();
        // p = 1/2: E[X^2] = (2 - 1/2) / (1/4) = 6
        assert!(close(g.second_moment, 6.0, 1e-15));
        assert_eq!(BatchSize::fixed(4).unwrap().second_moment, 16.0);
        assert!(BatchSize::geometric(0.5).is_err());
        assert!(BatchSize::fixed(0).is_err());
        let bad = BatchSize {
            mean: 2.0,
            second_moment: 3.0,
        };
        assert!(mxg1(0.1, bad, 1.0, 1.0).is_err());
        assert!(matches!(
            mxg1(0.5, BatchSize::fixed(2).unwrap(), 1.0, 1.0),
            Err(AnalyticError::Unstable { .. })
        ));
        // bigger batches at the same job rate wait longer
        let small = mxg1(0.3, BatchSize::fixed(2).unwrap(), 1.0, 1.0).unwrap();
        let large = mxg1(0.15, BatchSize::fixed(4).unwrap(), 1.0, 1.0).unwrap();
        assert!(large.mean_wait > small.mean_wait);
        assert_eq!(small.throughput, large.throughput);
    }
}
