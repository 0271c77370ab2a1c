//! Phase-type laws given by an initial vector and a sub-generator, `PH(alpha, T)`.

use super::MAX_PHASES;
use super::dense::Dense;
use crate::analytic::check;
use crate::analytic::error::{AnalyticError, Result};
use crate::analytic::phase_type::PhaseType;

/// A continuous phase-type law `PH(alpha, T)`: the time to absorption of a Markov chain that
/// starts in phase `i` with probability `alpha[i]` and moves by the sub-generator `T`, leaving
/// to absorption at the rates `t = -T 1` (Neuts, *Matrix-Geometric Solutions in Stochastic
/// Models*, 1981, ch. 2; Latouche and Ramaswami, *Introduction to Matrix Analytic Methods in
/// Stochastic Modeling*, 1999, ch. 2).
///
/// Moments `E[X^k] = k! alpha (-T)^{-k} 1`, Laplace-Stieltjes transform
/// `E[e^{-sX}] = alpha (sI - T)^{-1} t`, CDF `1 - alpha exp(T x) 1` (by uniformization, through
/// [`PhaseType`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Ph {
    alpha: Vec<f64>,
    t: Vec<Vec<f64>>,
    /// `(-T)^{-1}`, used by every moment.
    minus_t_inv: Dense,
    /// The same law for CDFs and quantiles.
    law: PhaseType,
}

impl Ph {
    /// Checks and wraps `alpha` and `T`.
    ///
    /// Errors (`InvalidParameter`, each naming the problem): `alpha` empty, longer than
    /// [`MAX_PHASES`], or not the length of `T`; `T` not square; a non-finite entry; a
    /// negative `alpha[i]`; `alpha` not summing to 1 within `1e-9` (no mass at zero); a
    /// diagonal entry of `T` not negative; a negative off-diagonal entry; a row of `T` summing
    /// above 0 (beyond `1e-9` of its diagonal); `T` singular (a phase from which absorption
    /// cannot be reached).
    pub fn new(alpha: Vec<f64>, t: Vec<Vec<f64>>) -> Result<Self> {
        let n = alpha.len();
        if n == 0 || n > MAX_PHASES {
            return Err(invalid("PH phases (1 to MAX_PHASES)", n as f64));
        }
        if t.len() != n || t.iter().any(|r| r.len() != n) {
            return Err(invalid(
                "PH sub-generator T: not square of the size of alpha",
                t.len() as f64,
            ));
        }
        let mut total = 0.0;
        for &a in &alpha {
            total += check::non_negative("PH alpha entry", a)?;
        }
        if (total - 1.0).abs() > 1e-9 {
            return Err(invalid("PH alpha sum (must be 1: no mass at zero)", total));
        }
        for (i, row) in t.iter().enumerate() {
            let mut sum = 0.0;
            for (j, &v) in row.iter().enumerate() {
                check::finite("PH T entry", v)?;
                if i == j && v >= 0.0 {
                    return Err(invalid("PH T diagonal entry (must be negative)", v));
                }
                if i != j && v < 0.0 {
                    return Err(invalid("PH T off-diagonal entry (must be non-negative)", v));
                }
                sum += v;
            }
            if sum > 1e-9 * row[i].abs() {
                return Err(invalid("PH T row sum (must be <= 0)", sum));
            }
        }
        let dense = Dense::from_rows(&t);
        let minus_t_inv = dense
            .scale(-1.0)
            .lu()
            .map(|lu| lu.solve_right(&Dense::identity(n)))
            .ok_or_else(|| {
                invalid(
                    "PH T (singular: absorption unreachable from some phase)",
                    0.0,
                )
            })?;
        let rates: Vec<f64> = (0..n).map(|i| -t[i][i]).collect();
        let next = (0..n)
            .map(|i| {
                (0..n)
                    .filter(|&j| j != i && t[i][j] > 0.0)
                    .map(|j| (j, (t[i][j] / rates[i]).min(1.0)))
                    .collect()
            })
            .collect();
        let law = PhaseType::new(alpha.clone(), rates, next)?;
        Ok(Self {
            alpha,
            t,
            minus_t_inv,
            law,
        })
    }

    /// The exponential law of rate `rate`, `PH((1), (-rate))`.
    ///
    /// Errors: `InvalidParameter` unless `rate` is finite and positive.
    pub fn exponential(rate: f64) -> Result<Self> {
        let rate = check::positive("rate", rate)?;
        Self::new(vec![1.0], vec![vec![-rate]])
    }

    /// The Erlang law of `k` phases of rate `rate` each (mean `k / rate`, SCV `1 / k`).
    ///
    /// Errors: `InvalidParameter` for `k = 0`, `k >` [`MAX_PHASES`], or a rate not finite and
    /// positive.
    pub fn erlang(k: usize, rate: f64) -> Result<Self> {
        let rate = check::positive("rate", rate)?;
        if k == 0 || k > MAX_PHASES {
            return Err(invalid("Erlang phases (1 to MAX_PHASES)", k as f64));
        }
        let mut alpha = vec![0.0; k];
        alpha[0] = 1.0;
        let t = (0..k)
            .map(|i| {
                let mut row = vec![0.0; k];
                row[i] = -rate;
                if i + 1 < k {
                    row[i + 1] = rate;
                }
                row
            })
            .collect();
        Self::new(alpha, t)
    }

    /// The two-phase hyperexponential law of mean `mean` and SCV `scv >= 1` with balanced
    /// means (`p_1 / mu_1 = p_2 / mu_2`): `p_1 = (1 + sqrt((scv - 1)/(scv + 1)))/2`,
    /// `mu_i = 2 p_i / mean` (Whitt, "Approximating a point process by a renewal process, I",
    /// Oper. Res. 30, 1982; Allen, *Probability, Statistics, and Queueing Theory*, 1990).
    /// `scv = 1` is the exponential law.
    ///
    /// Errors: `InvalidParameter` for a mean not finite and positive or `scv < 1`.
    pub fn h2_balanced(mean: f64, scv: f64) -> Result<Self> {
        let mean = check::positive("mean", mean)?;
        let scv = check::finite("scv", scv)?;
        if scv < 1.0 {
            return Err(invalid("H2 scv (must be >= 1)", scv));
        }
        let p1 = (1.0 + ((scv - 1.0) / (scv + 1.0)).sqrt()) / 2.0;
        let p2 = 1.0 - p1;
        if p2 <= 0.0 {
            return Err(invalid("H2 scv (too large for two phases)", scv));
        }
        let (r1, r2) = (2.0 * p1 / mean, 2.0 * p2 / mean);
        Self::new(vec![p1, p2], vec![vec![-r1, 0.0], vec![0.0, -r2]])
    }

    /// The initial vector `alpha`.
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// The sub-generator `T`, row by row.
    pub fn t(&self) -> &[Vec<f64>] {
        &self.t
    }

    /// Number of phases.
    pub fn phases(&self) -> usize {
        self.alpha.len()
    }

    /// The exit rates `t = -T 1`.
    pub fn exit_rates(&self) -> Vec<f64> {
        self.t
            .iter()
            .map(|r| -r.iter().sum::<f64>())
            .map(|v| v.max(0.0))
            .collect()
    }

    pub(super) fn t_dense(&self) -> Dense {
        Dense::from_rows(&self.t)
    }

    /// `E[X^k] = k! alpha (-T)^{-k} 1` (Neuts 1981, Thm. 2.2.1).
    ///
    /// Errors: `InvalidParameter` for `k = 0`; `NotApplicable` when the moment overflows.
    pub fn moment(&self, k: u32) -> Result<f64> {
        let k = check::at_least("moment order", k, 1)?;
        let mut v = vec![1.0; self.phases()];
        let mut factorial = 1.0;
        for i in 1..=k {
            v = self.minus_t_inv.right_mul(&v);
            factorial *= f64::from(i);
        }
        let m = factorial * dot(&self.alpha, &v);
        if m.is_finite() {
            Ok(m)
        } else {
            Err(AnalyticError::NotApplicable(format!(
                "PH moment {k} overflows"
            )))
        }
    }

    /// The mean `alpha (-T)^{-1} 1`.
    pub fn mean(&self) -> f64 {
        dot(
            &self.alpha,
            &self.minus_t_inv.right_mul(&vec![1.0; self.phases()]),
        )
    }

    /// The squared coefficient of variation `E[X^2] / E[X]^2 - 1`.
    ///
    /// Errors: as [`Ph::moment`].
    pub fn scv(&self) -> Result<f64> {
        let m = self.mean();
        Ok((self.moment(2)? / (m * m) - 1.0).max(0.0))
    }

    /// The Laplace-Stieltjes transform `alpha (sI - T)^{-1} t` at `s >= 0` (Neuts 1981, 2.2).
    ///
    /// Errors: `InvalidParameter` for `s` negative or not finite.
    pub fn laplace(&self, s: f64) -> Result<f64> {
        let s = check::non_negative("s", s)?;
        let n = self.phases();
        let m = Dense::identity(n).scale(s).sub(&self.t_dense());
        // sI - T is non-singular for s >= 0 (T is)
        let lu = m.lu().ok_or_else(|| invalid("s (sI - T singular)", s))?;
        Ok(dot(&self.alpha, &lu.solve(&self.exit_rates())).clamp(0.0, 1.0))
    }

    /// The CDF `P(X <= x) = 1 - alpha exp(T x) 1`, by uniformization ([`PhaseType::cdf`]).
    ///
    /// Errors: as [`PhaseType::cdf`] (a negative or non-finite `x`, too costly a chain).
    pub fn cdf(&self, x: f64) -> Result<f64> {
        self.law.cdf(x)
    }

    /// The `q`-quantile, `0 < q < 1` ([`PhaseType::quantile`]).
    ///
    /// Errors: as [`PhaseType::quantile`].
    pub fn quantile(&self, q: f64) -> Result<f64> {
        self.law.quantile(q)
    }

    /// The same law as a [`PhaseType`].
    pub fn to_phase_type(&self) -> PhaseType {
        self.law.clone()
    }
}

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub(super) fn invalid(what: &str, value: f64) -> AnalyticError {
    AnalyticError::InvalidParameter {
        what: what.to_owned(),
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn erlang_and_h2_moments_transform_and_cdf() {
        // Erlang-3 of rate 6: mean 1/2, SCV 1/3, E[X^3] = k(k+1)(k+2)/rate^3 = 60/216
        let e = Ph::erlang(3, 6.0).unwrap();
        assert!(close(e.mean(), 0.5, 1e-14));
        assert!(close(e.scv().unwrap(), 1.0 / 3.0, 1e-13));
        assert!(close(e.moment(3).unwrap(), 60.0 / 216.0, 1e-13));
        assert!(close(
            e.laplace(2.0).unwrap(),
            (6.0_f64 / 8.0).powi(3),
            1e-14
        ));
        // Erlang-3 CDF 1 - e^{-rx}(1 + rx + (rx)^2/2) at rx = 3
        let cdf = 1.0 - (-3.0_f64).exp() * (1.0 + 3.0 + 4.5);
        assert!((e.cdf(0.5).unwrap() - cdf).abs() < 1e-12);
        let h = Ph::h2_balanced(2.0, 4.0).unwrap();
        assert!(close(h.mean(), 2.0, 1e-14));
        assert!(close(h.scv().unwrap(), 4.0, 1e-12));
        let x = Ph::exponential(0.5).unwrap();
        assert!(close(x.quantile(0.5).unwrap(), 2.0 * 2.0_f64.ln(), 1e-9));
    }

    #[test]
    fn refusals_name_the_problem() {
        let bad = |alpha: Vec<f64>, t: Vec<Vec<f64>>| Ph::new(alpha, t).unwrap_err().to_string();
        assert!(bad(vec![0.5, 0.4], vec![vec![-1.0, 0.0], vec![0.0, -1.0]]).contains("alpha sum"));
        assert!(
            bad(vec![-0.5, 1.5], vec![vec![-1.0, 0.0], vec![0.0, -1.0]]).contains("alpha entry")
        );
        assert!(bad(vec![1.0], vec![vec![1.0]]).contains("diagonal"));
        assert!(
            bad(vec![1.0, 0.0], vec![vec![-1.0, -0.5], vec![0.0, -1.0]]).contains("off-diagonal")
        );
        assert!(bad(vec![1.0, 0.0], vec![vec![-1.0, 2.0], vec![0.0, -1.0]]).contains("row sum"));
        // phases 1 and 2 swap forever: no way out
        assert!(bad(vec![1.0, 0.0], vec![vec![-1.0, 1.0], vec![1.0, -1.0]]).contains("singular"));
        assert!(bad(vec![1.0], vec![vec![-1.0, 0.0]]).contains("square"));
        assert!(bad(vec![1.0], vec![vec![f64::NAN]]).contains("T entry"));
        assert!(bad(vec![], vec![]).contains("phases"));
        assert!(Ph::erlang(super::MAX_PHASES + 1, 1.0).is_err());
        assert!(Ph::h2_balanced(1.0, 0.5).is_err());
        assert!(Ph::exponential(1.0).unwrap().laplace(-1.0).is_err());
    }
}
