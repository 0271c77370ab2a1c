//! Markovian arrival processes `MAP(D0, D1)`: checks, rate, inter-arrival moments and
//! autocorrelations.

use super::MAX_PHASES;
use super::dense::{Dense, stationary};
use super::ph::{Ph, dot, invalid};
use crate::analytic::check;
use crate::analytic::error::{AnalyticError, Result};

/// A Markovian arrival process `MAP(D0, D1)` (Neuts, "A versatile Markovian point process",
/// J. Appl. Prob. 16, 1979; Lucantoni, "New results on the single server queue with a batch
/// Markovian arrival process", Stochastic Models 7, 1991): a Markov chain on phases with
/// generator `D0 + D1`, an arrival at each transition counted by `D1`.
///
/// Inter-arrival statistics follow the conventions of Casale's KPC-Toolbox and of Bolch et
/// al., *Queueing Networks and Markov Chains*, 2nd ed., 2006, 6.8: with `P = (-D0)^{-1} D1`
/// and `pi` its stationary vector (the phase just after an arrival),
/// `E[X^k] = k! pi (-D0)^{-k} 1`, and the lag-`k` autocorrelation
/// `rho_k = (pi (-D0)^{-1} P^k (-D0)^{-1} 1 - E[X]^2) / (E[X^2] - E[X]^2)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Map {
    d0: Vec<Vec<f64>>,
    d1: Vec<Vec<f64>>,
    /// `(-D0)^{-1}`.
    minus_d0_inv: Dense,
    /// Stationary vector of `D0 + D1`.
    theta: Vec<f64>,
    /// `theta D1 1`.
    lambda: f64,
}

impl Map {
    /// Checks and wraps `D0` and `D1`.
    ///
    /// Errors (`InvalidParameter`, each naming the problem): no phases or more than
    /// [`MAX_PHASES`]; matrices not square of one size; a non-finite entry; a negative
    /// off-diagonal entry of `D0` or a negative entry of `D1`; a row of `D0 + D1` not summing
    /// to 0 within `1e-9` of the row's largest rate; `D0` singular (a phase never followed by
    /// an arrival). `NotApplicable` when `D0 + D1` has no unique stationary vector (more than
    /// one closed class of phases) or no arrivals at all.
    pub fn new(d0: Vec<Vec<f64>>, d1: Vec<Vec<f64>>) -> Result<Self> {
        let n = d0.len();
        if n == 0 || n > MAX_PHASES {
            return Err(invalid("MAP phases (1 to MAX_PHASES)", n as f64));
        }
        for (name, m) in [("MAP D0", &d0), ("MAP D1", &d1)] {
            if m.len() != n || m.iter().any(|r| r.len() != n) {
                return Err(invalid(
                    &format!("{name}: not square of the size of D0"),
                    m.len() as f64,
                ));
            }
        }
        for i in 0..n {
            let mut sum = 0.0;
            let mut largest = 0.0_f64;
            for j in 0..n {
                let a = check::finite("MAP D0 entry", d0[i][j])?;
                let b = check::finite("MAP D1 entry", d1[i][j])?;
                if i != j && a < 0.0 {
                    return Err(invalid(
                        "MAP D0 off-diagonal entry (must be non-negative)",
                        a,
                    ));
                }
                if b < 0.0 {
                    return Err(invalid("MAP D1 entry (must be non-negative)", b));
                }
                sum += a + b;
                largest = largest.max(a.abs()).max(b);
            }
            if sum.abs() > 1e-9 * largest {
                return Err(invalid("MAP row sum of D0 + D1 (must be 0)", sum));
            }
        }
        let minus_d0_inv = Dense::from_rows(&d0)
            .scale(-1.0)
            .inverse("MAP D0")
            .map_err(|_| {
                invalid(
                    "MAP D0 (singular: a phase never followed by an arrival)",
                    0.0,
                )
            })?;
        let q = Dense::from_rows(&d0).add(&Dense::from_rows(&d1));
        let theta = stationary(&q, "the MAP's phase process D0 + D1")?;
        let lambda = dot(&Dense::from_rows(&d1).left_mul(&theta), &vec![1.0; n]);
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(AnalyticError::NotApplicable(format!(
                "the MAP's arrival rate is {lambda}"
            )));
        }
        Ok(Self {
            d0,
            d1,
            minus_d0_inv,
            theta,
            lambda,
        })
    }

    /// Poisson arrivals at `rate`: `D0 = (-rate)`, `D1 = (rate)`.
    ///
    /// Errors: `InvalidParameter` unless `rate` is finite and positive.
    pub fn poisson(rate: f64) -> Result<Self> {
        let rate = check::positive("rate", rate)?;
        Self::new(vec![vec![-rate]], vec![vec![rate]])
    }

    /// The two-phase Markov-modulated Poisson process: arrivals at `rates[i]` in phase `i`, the
    /// phase moving 1 -> 2 at `switching[0]` and 2 -> 1 at `switching[1]`:
    /// `D1 = diag(rates)`, `D0 = Q - D1` with `Q` the switching generator (Fischer and
    /// Meier-Hellstern, "The Markov-modulated Poisson process (MMPP) cookbook", Performance
    /// Evaluation 18, 1993).
    ///
    /// Errors: `InvalidParameter` for a negative or non-finite rate, switching rates that are
    /// not positive, or both rates zero (via [`Map::new`]).
    pub fn mmpp2(rates: [f64; 2], switching: [f64; 2]) -> Result<Self> {
        let [l1, l2] = rates;
        let l1 = check::non_negative("MMPP rate", l1)?;
        let l2 = check::non_negative("MMPP rate", l2)?;
        let r1 = check::positive("MMPP switching rate", switching[0])?;
        let r2 = check::positive("MMPP switching rate", switching[1])?;
        Self::new(
            vec![vec![-(r1 + l1), r1], vec![r2, -(r2 + l2)]],
            vec![vec![l1, 0.0], vec![0.0, l2]],
        )
    }

    /// The renewal process of phase-type inter-arrival times `PH(alpha, T)`: `D0 = T`,
    /// `D1 = t alpha` with `t = -T 1` (Neuts 1979).
    ///
    /// Errors: as [`Map::new`] (never for a valid [`Ph`]).
    pub fn renewal(ph: &Ph) -> Result<Self> {
        let t = ph.exit_rates();
        let d1 = t
            .iter()
            .map(|&ti| ph.alpha().iter().map(|&a| ti * a).collect())
            .collect();
        Self::new(ph.t().to_vec(), d1)
    }

    /// `D0`, row by row.
    pub fn d0(&self) -> &[Vec<f64>] {
        &self.d0
    }

    /// `D1`, row by row.
    pub fn d1(&self) -> &[Vec<f64>] {
        &self.d1
    }

    /// Number of phases.
    pub fn phases(&self) -> usize {
        self.d0.len()
    }

    /// The stationary vector `theta` of `D0 + D1` (the phase at a random time).
    pub fn stationary_phases(&self) -> &[f64] {
        &self.theta
    }

    /// The arrival rate `lambda = theta D1 1`.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The phase just after an arrival, in steady state: `pi = theta D1 / lambda`, the
    /// stationary vector of `P = (-D0)^{-1} D1`.
    pub fn embedded_phases(&self) -> Vec<f64> {
        Dense::from_rows(&self.d1)
            .left_mul(&self.theta)
            .into_iter()
            .map(|v| v / self.lambda)
            .collect()
    }

    /// `E[X^k] = k! pi (-D0)^{-k} 1` of the stationary inter-arrival time `X`.
    ///
    /// Errors: `InvalidParameter` for `k = 0`; `NotApplicable` when it overflows.
    pub fn moment(&self, k: u32) -> Result<f64> {
        let k = check::at_least("moment order", k, 1)?;
        let mut v = vec![1.0; self.phases()];
        let mut factorial = 1.0;
        for i in 1..=k {
            v = self.minus_d0_inv.right_mul(&v);
            factorial *= f64::from(i);
        }
        let m = factorial * dot(&self.embedded_phases(), &v);
        if m.is_finite() {
            Ok(m)
        } else {
            Err(AnalyticError::NotApplicable(format!(
                "MAP moment {k} overflows"
            )))
        }
    }

    /// The mean inter-arrival time, `1 / lambda`.
    pub fn mean_interarrival(&self) -> f64 {
        1.0 / self.lambda
    }

    /// The squared coefficient of variation of the inter-arrival time,
    /// `E[X^2] lambda^2 - 1`.
    ///
    /// Errors: as [`Map::moment`].
    pub fn scv(&self) -> Result<f64> {
        Ok((self.moment(2)? * self.lambda * self.lambda - 1.0).max(0.0))
    }

    /// The lag-`k` autocorrelation of successive inter-arrival times,
    /// `(pi (-D0)^{-1} P^k (-D0)^{-1} 1 - E[X]^2) / Var[X]` (KPC-Toolbox `map_acf`); 0 for a
    /// renewal process, and 0 when the variance is 0.
    ///
    /// Errors: `InvalidParameter` for `k = 0` (lag 0 is 1 by definition); as [`Map::moment`].
    pub fn autocorrelation(&self, k: u32) -> Result<f64> {
        check::at_least("lag", k, 1)?;
        let mean = self.mean_interarrival();
        let var = self.moment(2)? - mean * mean;
        if var <= 0.0 {
            return Ok(0.0);
        }
        let p = self.minus_d0_inv.mul(&Dense::from_rows(&self.d1));
        // column vector P^k (-D0)^{-1} 1
        let mut v = self.minus_d0_inv.right_mul(&vec![1.0; self.phases()]);
        for _ in 0..k {
            v = p.right_mul(&v);
        }
        let row = self
            .minus_d0_inv
            .transpose()
            .right_mul(&self.embedded_phases());
        Ok((dot(&row, &v) - mean * mean) / var)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn mmpp2_rate_scv_and_lag_correlations_against_closed_forms() {
        let (l1, l2, r1, r2) = (3.0, 0.5, 0.2, 0.7);
        let m = Map::mmpp2([l1, l2], [r1, r2]).unwrap();
        // rate (l1 r2 + l2 r1)/(r1 + r2) (Fischer and Meier-Hellstern 1993)
        assert!(close(m.lambda(), (l1 * r2 + l2 * r1) / (r1 + r2), 1e-14));
        // c^2 = 1 + 2 r1 r2 (l1 - l2)^2 / ((r1 + r2)^2 (l1 l2 + l1 r2 + l2 r1)) (the cookbook)
        let det = l1 * l2 + l1 * r2 + l2 * r1;
        let scv = 1.0 + 2.0 * r1 * r2 * (l1 - l2).powi(2) / ((r1 + r2).powi(2) * det);
        assert!(close(m.scv().unwrap(), scv, 1e-12));
        // P = (-D0)^{-1} D1 is 2x2 stochastic: its second eigenvalue trace(P) - 1 = l1 l2 / det
        // is the geometric decay of the autocorrelations, rho_{k+1} = rho_k l1 l2 / det
        let decay = l1 * l2 / det;
        let r = |k| m.autocorrelation(k).unwrap();
        assert!(r(1) > 0.0);
        assert!(close(r(2), r(1) * decay, 1e-10));
        assert!(close(r(5), r(1) * decay.powi(4), 1e-10));
        // lag 1 from the 2x2 matrices written out by hand
        let rho1 = lag1_mmpp2(l1, l2, r1, r2);
        assert!(close(r(1), rho1, 1e-10));
    }

    /// The lag-1 correlation of an MMPP(2) written out from the 2x2 matrices by hand:
    /// `(-D0)^{-1} = [[r2 + l2, r1], [r2, r1 + l1]] / det`, `pi = (l1 r2, l2 r1)/(l1 r2 + l2 r1)`.
    fn lag1_mmpp2(l1: f64, l2: f64, r1: f64, r2: f64) -> f64 {
        let det = l1 * l2 + l1 * r2 + l2 * r1;
        let n = [[(r2 + l2) / det, r1 / det], [r2 / det, (r1 + l1) / det]];
        let p = [[n[0][0] * l1, n[0][1] * l2], [n[1][0] * l1, n[1][1] * l2]];
        let s = l1 * r2 + l2 * r1;
        let pi = [l1 * r2 / s, l2 * r1 / s];
        let h = [n[0][0] + n[0][1], n[1][0] + n[1][1]]; // (-D0)^{-1} 1
        let h2 = [
            n[0][0] * h[0] + n[0][1] * h[1],
            n[1][0] * h[0] + n[1][1] * h[1],
        ];
        let mean = pi[0] * h[0] + pi[1] * h[1];
        let second = 2.0 * (pi[0] * h2[0] + pi[1] * h2[1]);
        let ph = [
            p[0][0] * h[0] + p[0][1] * h[1],
            p[1][0] * h[0] + p[1][1] * h[1],
        ];
        let row = [
            pi[0] * n[0][0] + pi[1] * n[1][0],
            pi[0] * n[0][1] + pi[1] * n[1][1],
        ];
        (row[0] * ph[0] + row[1] * ph[1] - mean * mean) / (second - mean * mean)
    }

    #[test]
    fn renewal_and_poisson() {
        let ph = Ph::h2_balanced(2.0, 4.0).unwrap();
        let m = Map::renewal(&ph).unwrap();
        assert!(close(m.lambda(), 0.5, 1e-14));
        assert!(close(m.scv().unwrap(), 4.0, 1e-12));
        assert!(m.autocorrelation(1).unwrap().abs() < 1e-12);
        let p = Map::poisson(2.0).unwrap();
        assert!(close(p.scv().unwrap(), 1.0, 1e-14));
        assert_eq!(p.autocorrelation(3).unwrap(), 0.0);
        assert!(close(p.moment(3).unwrap(), 6.0 / 8.0, 1e-14));
    }

    #[test]
    fn refusals_name_the_problem() {
        let bad = |d0: Vec<Vec<f64>>, d1: Vec<Vec<f64>>| Map::new(d0, d1).unwrap_err().to_string();
        assert!(bad(vec![vec![-1.0]], vec![vec![2.0]]).contains("row sum"));
        assert!(bad(vec![vec![-1.0]], vec![vec![1.0, 0.0]]).contains("not square"));
        assert!(
            bad(
                vec![vec![-2.0, -1.0], vec![0.0, -1.0]],
                vec![vec![3.0, 0.0], vec![1.0, 0.0]]
            )
            .contains("D0 off-diagonal")
        );
        assert!(bad(vec![vec![1.0]], vec![vec![-1.0]]).contains("D1 entry"));
        // phase 2 never sees an arrival and never leaves: D0 singular
        assert!(
            bad(
                vec![vec![-2.0, 1.0], vec![0.0, 0.0]],
                vec![vec![1.0, 0.0], vec![0.0, 0.0]]
            )
            .contains("singular")
        );
        assert!(bad(vec![vec![f64::INFINITY]], vec![vec![1.0]]).contains("D0 entry"));
        assert!(bad(vec![], vec![]).contains("phases"));
        let big = vec![vec![0.0; MAX_PHASES + 1]; MAX_PHASES + 1];
        assert!(bad(big.clone(), big).contains("phases"));
        assert!(Map::mmpp2([1.0, 1.0], [0.0, 1.0]).is_err());
        assert!(Map::mmpp2([-1.0, 1.0], [1.0, 1.0]).is_err());
        assert!(Map::poisson(1.0).unwrap().autocorrelation(0).is_err());
    }
}
