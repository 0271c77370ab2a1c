//! Clark's moments of the maximum of jointly normal times (C. E. Clark, "The greatest of a
//! finite set of random variables", Operations Research 9(2), 1961, 145-162).
//!
//! For `(X, Y)` bivariate normal with means `mu_x, mu_y`, variances `s_x^2, s_y^2` and
//! correlation `rho`, put `a^2 = s_x^2 + s_y^2 - 2 rho s_x s_y` (the variance of `X - Y`) and
//! `alpha = (mu_x - mu_y) / a`. Then exactly (Clark's eqs. 2-5)
//!
//! ```text
//! E[max]   = mu_x Phi(alpha) + mu_y Phi(-alpha) + a phi(alpha)
//! E[max^2] = (mu_x^2 + s_x^2) Phi(alpha) + (mu_y^2 + s_y^2) Phi(-alpha) + (mu_x + mu_y) a phi(alpha)
//! ```
//!
//! and for a third normal `Z` jointly normal with them (Clark's eq. 6)
//! `Cov(Z, max) = Phi(alpha) Cov(Z, X) + Phi(-alpha) Cov(Z, Y)`, i.e.
//! `corr(Z, max) = [s_x rho_xz Phi(alpha) + s_y rho_yz Phi(-alpha)] / sd(max)`.
//! `Phi(alpha) = P(X > Y)` is the *tightness* of `X`. When `a = 0` the difference `X - Y` is a
//! constant and the maximum is `X` if `mu_x >= mu_y`, else `Y` (Clark's degenerate case).
//!
//! The maximum of two normals is not normal; [`clark_max_n`] nevertheless treats it as one to
//! take the maximum with the next variable (Clark's pairwise iteration), which is where the
//! method becomes an approximation.

use serde::Serialize;

use super::check;
use super::error::{AnalyticError, Result};
use super::maxima::{Law, MaxMoments, max_moments};

/// `1 / sqrt(2 pi)`.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// The standard normal density.
pub(crate) fn normal_pdf(x: f64) -> f64 {
    FRAC_1_SQRT_2PI * (-0.5 * x * x).exp()
}

/// The standard normal CDF, `erfc(-x / sqrt 2) / 2`, accurate in both tails.
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(-x / std::f64::consts::SQRT_2)
}

/// A normal law by its mean and variance (variance 0 is a constant).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Normal {
    /// Mean.
    pub mean: f64,
    /// Variance, `>= 0`.
    pub variance: f64,
}

impl Normal {
    /// A checked normal law.
    ///
    /// Errors: `InvalidParameter` for a non-finite mean or a negative or non-finite variance.
    pub fn new(mean: f64, variance: f64) -> Result<Normal> {
        Ok(Normal {
            mean: check::finite("mean", mean)?,
            variance: check::non_negative("variance", variance)?,
        })
    }

    /// The standard deviation.
    pub fn std_dev(&self) -> f64 {
        self.variance.sqrt()
    }

    fn checked(self, what: &str) -> Result<Normal> {
        check::finite(&format!("{what}.mean"), self.mean)?;
        check::non_negative(&format!("{what}.variance"), self.variance)?;
        Ok(self)
    }
}

/// The moments of `max(X, Y)` by Clark's formulas, with the tightness probabilities that carry
/// covariances through the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClarkMax {
    /// `E[max(X, Y)]` (exact).
    pub mean: f64,
    /// `Var max(X, Y)` (exact), computed about `mu_y` so that it keeps its digits when it is
    /// small beside the squared mean.
    pub variance: f64,
    /// `E[max(X, Y)^2]` (exact).
    pub second_moment: f64,
    /// `Phi(alpha) = P(X > Y)` (1 or 0 in the degenerate case `a = 0`).
    pub tightness_x: f64,
    /// `Phi(-alpha) = P(Y > X)`, computed on its own rather than as `1 - tightness_x`.
    pub tightness_y: f64,
}

impl ClarkMax {
    /// `Cov(Z, max(X, Y)) = Phi(alpha) Cov(Z, X) + Phi(-alpha) Cov(Z, Y)` for a `Z` jointly normal
    /// with `X` and `Y` (Clark's eq. 6; exact).
    pub fn covariance_with(&self, cov_zx: f64, cov_zy: f64) -> f64 {
        self.tightness_x * cov_zx + self.tightness_y * cov_zy
    }

    /// `corr(Z, max(X, Y)) = [s_x rho_xz Phi(alpha) + s_y rho_yz Phi(-alpha)] / sd(max)`, given
    /// the laws of `X` and `Y` this maximum was computed from and the correlations of `Z` with
    /// them. 0 when the maximum is a constant (it has no correlation with anything).
    ///
    /// Errors: `InvalidParameter` for a correlation outside `[-1, 1]` or NaN.
    pub fn correlation_with(&self, x: Normal, y: Normal, rho_xz: f64, rho_yz: f64) -> Result<f64> {
        let rho_xz = correlation("rho_xz", rho_xz)?;
        let rho_yz = correlation("rho_yz", rho_yz)?;
        if self.variance == 0.0 {
            return Ok(0.0);
        }
        let r =
            self.covariance_with(x.std_dev() * rho_xz, y.std_dev() * rho_yz) / self.variance.sqrt();
        Ok(r.clamp(-1.0, 1.0))
    }
}

/// A correlation must be in `[-1, 1]`.
fn correlation(what: &str, rho: f64) -> Result<f64> {
    if (-1.0..=1.0).contains(&rho) {
        Ok(rho)
    } else {
        Err(AnalyticError::InvalidParameter {
            what: what.to_owned(),
            value: rho,
        })
    }
}

/// Clark's exact first two moments of `max(X, Y)` for jointly normal `X`, `Y` with correlation
/// `rho` (see the module documentation), including the degenerate case `a = 0` (equal
/// variances with `rho = 1`, or two constants), where the maximum is the variable with the
/// larger mean.
///
/// Errors: `InvalidParameter` for a non-finite mean, a negative or non-finite variance, or
/// `rho` outside `[-1, 1]`.
///
/// ```
/// use parsim::analytic::{Normal, clark_max};
///
/// // Two independent standard normals: E[max] = 1/sqrt(pi), Var = 1 - 1/pi.
/// let z = Normal::new(0.0, 1.0).unwrap();
/// let m = clark_max(z, z, 0.0).unwrap();
/// assert!((m.mean - 0.564_189_583_547_756_3).abs() < 1e-15);
/// assert!((m.variance - (1.0 - std::f64::consts::FRAC_1_PI)).abs() < 1e-15);
/// ```
pub fn clark_max(x: Normal, y: Normal, rho: f64) -> Result<ClarkMax> {
    let x = x.checked("x")?;
    let y = y.checked("y")?;
    let rho = correlation("rho", rho)?;
    let (sx, sy) = (x.std_dev(), y.std_dev());
    let a2 = (sx - sy) * (sx - sy) + 2.0 * sx * sy * (1.0 - rho);
    let d = x.mean - y.mean;
    if a2 <= 0.0 {
        // X - Y is the constant d: the maximum is whichever has the larger mean
        let (winner, tx) = if d >= 0.0 { (x, 1.0) } else { (y, 0.0) };
        return Ok(ClarkMax {
            mean: winner.mean,
            variance: winner.variance,
            second_moment: winner.variance + winner.mean * winner.mean,
            tightness_x: tx,
            tightness_y: 1.0 - tx,
        });
    }
    let a = a2.sqrt();
    let alpha = d / a;
    let (px, py, dens) = (normal_cdf(alpha), normal_cdf(-alpha), normal_pdf(alpha));
    // about mu_y: max - mu_y = max(X - mu_y, Y - mu_y), means d and 0
    let m1 = d * px + a * dens;
    let m2 = (d * d + x.variance) * px + y.variance * py + d * a * dens;
    let variance = (m2 - m1 * m1).max(0.0);
    let mean = y.mean + m1;
    Ok(ClarkMax {
        mean,
        variance,
        second_moment: variance + mean * mean,
        tightness_x: px,
        tightness_y: py,
    })
}

/// The maximum of `n` jointly normal times with mean vector `means` and covariance matrix
/// `covariance` (row-major `n x n`), by Clark's pairwise iteration: `M_1 = X_1`,
/// `M_k = max(M_(k-1), X_k)` by [`clark_max`] with `M_(k-1)` taken as normal, and
/// `Cov(M_k, X_j) = Phi(alpha) Cov(M_(k-1), X_j) + Phi(-alpha) Cov(X_k, X_j)` carried to the
/// variables still to come. `O(n^2)` work, `O(n)` extra memory.
///
/// Exact for `n <= 2` and whenever each step's maximum is decided (tightness 0 or 1);
/// otherwise an approximation whose error grows with the number of comparable variables. For
/// `n` i.i.d. normals, against the exact [`expected_max_iid_normal`]: `E[max]` within `0.002 sd`
/// up to `n = 8`, `0.006 sd` low at `n = 16`, `0.015 sd` at 64 and `0.02 sd` at 256; the
/// variance low by 2% at `n = 3`, 11% at 8, 24% at 64, 28% at 256 (the partial maxima are
/// skewed, not normal). The result depends on the order of the variables.
///
/// Errors: `InvalidParameter` for no variable, a non-finite mean, a negative diagonal entry, an
/// asymmetric matrix (beyond `1e-9` relative), or a covariance whose correlation is outside
/// `[-1, 1]` (beyond `1e-9`); `DimensionMismatch` if `covariance` is not `n x n`.
pub fn clark_max_n(means: &[f64], covariance: &[f64]) -> Result<Normal> {
    let n = means.len();
    if n == 0 {
        return Err(AnalyticError::InvalidParameter {
            what: "number of variables".into(),
            value: 0.0,
        });
    }
    check::same_len("covariance (n x n)", n * n, covariance.len())?;
    for (i, &m) in means.iter().enumerate() {
        check::finite(&format!("means[{i}]"), m)?;
        check::non_negative(&format!("covariance[{i}][{i}]"), covariance[i * n + i])?;
    }
    for i in 0..n {
        for j in 0..i {
            let (cij, cji) = (covariance[i * n + j], covariance[j * n + i]);
            let bound = (covariance[i * n + i] * covariance[j * n + j]).sqrt();
            let tol = 1e-9 * bound.max(f64::MIN_POSITIVE);
            if !cij.is_finite() || (cij - cji).abs() > tol || cij.abs() > bound + tol {
                return Err(AnalyticError::InvalidParameter {
                    what: format!("covariance[{i}][{j}]"),
                    value: cij,
                });
            }
        }
    }
    let mut max = Normal {
        mean: means[0],
        variance: covariance[0],
    };
    // cov(M, X_j) for the variables still to come
    let mut cov: Vec<f64> = covariance[..n].to_vec();
    for k in 1..n {
        let xk = Normal {
            mean: means[k],
            variance: covariance[k * n + k],
        };
        let denominator = (max.variance * xk.variance).sqrt();
        let rho = if denominator > 0.0 {
            (cov[k] / denominator).clamp(-1.0, 1.0)
        } else {
            0.0
        };
        let step = clark_max(max, xk, rho)?;
        for j in k + 1..n {
            cov[j] = step.covariance_with(cov[j], covariance[k * n + j]);
        }
        max = Normal {
            mean: step.mean,
            variance: step.variance,
        };
    }
    Ok(max)
}

/// The exact first two moments of the maximum of `n` i.i.d. normal times `N(mean, sd^2)`:
/// `mean + sd E[Z_(n)]`, `sd^2 Var Z_(n)`, the standard normal order statistic's moments by
/// [`max_moments`] (adaptive quadrature to `1e-9`, one law of multiplicity `n`, so `n` may be
/// in the millions).
///
/// Errors: `InvalidParameter` for `n == 0`, a non-finite mean or a negative or non-finite
/// `sd`.
///
/// ```
/// use parsim::analytic::expected_max_iid_normal;
///
/// // E[max of 10 standard normals] = 1.538752 (David and Nagaraja, Table of normal scores).
/// let m = expected_max_iid_normal(10, 0.0, 1.0).unwrap();
/// assert!((m.mean - 1.538_752).abs() < 1e-6);
/// ```
pub fn expected_max_iid_normal(n: u64, mean: f64, sd: f64) -> Result<MaxMoments> {
    if n == 0 {
        return Err(AnalyticError::InvalidParameter {
            what: "n".into(),
            value: 0.0,
        });
    }
    let mean = check::finite("mean", mean)?;
    let sd = check::non_negative("sd", sd)?;
    if sd == 0.0 || n == 1 {
        return Ok(MaxMoments {
            mean,
            second_moment: mean * mean + sd * sd,
            variance: sd * sd,
        });
    }
    let survival = |t: f64| normal_cdf(-t);
    let law = Law::Survival {
        survival: &survival,
        lower: f64::NEG_INFINITY,
        upper: f64::INFINITY,
    };
    let z = max_moments(&[(law, n)])?;
    let m = mean + sd * z.mean;
    let variance = sd * sd * z.variance;
    Ok(MaxMoments {
        mean: m,
        second_moment: variance + m * m,
        variance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::tests::close;
    use crate::analytic::quadrature::{integrate, integrate_to};
    use rand_distr::{Distribution, StandardNormal};

    /// `E[g(X, Y)]` for a bivariate normal by nested quadrature over `+-12` standard deviations,
    /// the inner integral split where `g` has its kink (`y = x`): independent of Clark's
    /// formulas.
    fn bivariate(x: Normal, y: Normal, rho: f64, g: &dyn Fn(f64, f64) -> f64) -> f64 {
        let (sx, sy) = (x.std_dev(), y.std_dev());
        let s = sy * (1.0 - rho * rho).sqrt();
        let mut outer = |z: f64| {
            let xv = x.mean + sx * z;
            let m = y.mean + rho * sy * z;
            let mut inner = |w: f64| Ok(g(xv, m + s * w) * normal_pdf(w));
            let kink = ((xv - m) / s).clamp(-12.0, 12.0);
            let v = integrate_to(&mut inner, -12.0, kink, 1e-13, 1e-17, 5000)?
                + integrate_to(&mut inner, kink, 12.0, 1e-13, 1e-17, 5000)?;
            Ok(v * normal_pdf(z))
        };
        integrate(&mut outer, -12.0, 12.0, 1e-12, 5000).unwrap()
    }

    #[test]
    fn clark_is_the_exact_bivariate_maximum() {
        let cases = [
            (
                Normal::new(1.0, 4.0).unwrap(),
                Normal::new(0.5, 1.0).unwrap(),
                0.3,
            ),
            (
                Normal::new(-2.0, 0.25).unwrap(),
                Normal::new(-1.0, 9.0).unwrap(),
                -0.7,
            ),
            (
                Normal::new(10.0, 1.0).unwrap(),
                Normal::new(10.0, 1.0).unwrap(),
                0.95,
            ),
            (
                Normal::new(3.0, 2.0).unwrap(),
                Normal::new(0.0, 0.5).unwrap(),
                0.0,
            ),
        ];
        for (x, y, rho) in cases {
            let c = clark_max(x, y, rho).unwrap();
            let mean = bivariate(x, y, rho, &|a, b| a.max(b));
            let second = bivariate(x, y, rho, &|a, b| a.max(b).powi(2));
            assert!(
                close(c.mean, mean, 1e-10),
                "{x:?} {y:?} {rho}: {} vs {mean}",
                c.mean
            );
            assert!(
                close(c.second_moment, second, 1e-10),
                "{} vs {second}",
                c.second_moment
            );
            assert!(close(c.variance, second - mean * mean, 1e-8));
            // Clark's eq. 6 with Z = X: Cov(X, max) = Phi(alpha) Var X + Phi(-alpha) Cov(X, Y)
            let cov_xy = rho * x.std_dev() * y.std_dev();
            let cov = c.covariance_with(x.variance, cov_xy);
            let exact = bivariate(x, y, rho, &|a, b| a * a.max(b)) - x.mean * mean;
            assert!(close(cov, exact, 1e-8), "cov {cov} vs {exact}");
            let r = c.correlation_with(x, y, 1.0, rho).unwrap();
            assert!(close(r, exact / (x.std_dev() * c.variance.sqrt()), 1e-8));
        }
    }

    #[test]
    fn degenerate_pairs() {
        // equal variances, rho = 1: X - Y constant, the larger mean wins
        let x = Normal::new(2.0, 3.0).unwrap();
        let y = Normal::new(1.0, 3.0).unwrap();
        let m = clark_max(x, y, 1.0).unwrap();
        assert_eq!((m.mean, m.variance, m.tightness_x), (2.0, 3.0, 1.0));
        let m = clark_max(y, x, 1.0).unwrap();
        assert_eq!((m.mean, m.variance, m.tightness_y), (2.0, 3.0, 1.0));
        assert_eq!(m.correlation_with(y, x, 0.2, 0.6).unwrap(), 0.6);
        // two constants; a constant and a normal
        let m = clark_max(
            Normal::new(4.0, 0.0).unwrap(),
            Normal::new(5.0, 0.0).unwrap(),
            0.0,
        );
        assert_eq!(m.unwrap().mean, 5.0);
        let c = clark_max(
            Normal::new(0.0, 0.0).unwrap(),
            Normal::new(0.0, 1.0).unwrap(),
            0.0,
        )
        .unwrap();
        // E[max(0, Z)] = 1/sqrt(2 pi), E[max(0, Z)^2] = 1/2
        assert!(close(c.mean, FRAC_1_SQRT_2PI, 1e-15));
        assert!(close(c.second_moment, 0.5, 1e-15));
        // nearly degenerate stays continuous
        let near = clark_max(x, y, 1.0 - 1e-12).unwrap();
        assert!((near.mean - 2.0).abs() < 1e-9 && (near.variance - 3.0).abs() < 1e-8);
        assert!(clark_max(x, y, 1.5).is_err());
        assert!(
            clark_max(
                x,
                Normal {
                    mean: 0.0,
                    variance: -1.0
                },
                0.0
            )
            .is_err()
        );
        assert!(Normal::new(f64::NAN, 1.0).is_err());
        assert!(Normal::new(0.0, f64::INFINITY).is_err());
    }

    #[test]
    fn pairwise_iteration_agrees_where_it_is_exact() {
        // n = 2 is clark_max
        let c = clark_max_n(&[1.0, 0.5], &[4.0, 0.6, 0.6, 1.0]).unwrap();
        let d = clark_max(
            Normal::new(1.0, 4.0).unwrap(),
            Normal::new(0.5, 1.0).unwrap(),
            0.3,
        )
        .unwrap();
        assert!(close(c.mean, d.mean, 1e-15) && close(c.variance, d.variance, 1e-15));
        // comonotone equal-variance variables: the one with the largest mean
        let c = clark_max_n(&[1.0, 5.0, 3.0], &[2.0; 9]).unwrap();
        assert!(close(c.mean, 5.0, 1e-15) && close(c.variance, 2.0, 1e-15));
        // one variable
        let c = clark_max_n(&[7.0], &[0.5]).unwrap();
        assert_eq!((c.mean, c.variance), (7.0, 0.5));
        // errors
        assert!(clark_max_n(&[], &[]).is_err());
        assert!(clark_max_n(&[0.0, 0.0], &[1.0, 0.0, 0.0]).is_err());
        assert!(clark_max_n(&[0.0, 0.0], &[1.0, 2.0, 2.0, 1.0]).is_err());
        assert!(clark_max_n(&[0.0, 0.0], &[1.0, 0.5, 0.4, 1.0]).is_err());
    }

    #[test]
    fn exact_iid_normal_maxima() {
        // normal scores (expected order statistics): n = 2: 1/sqrt(pi); 3: 3/(2 sqrt(pi));
        // 5: 1.162964; 10: 1.538752; 100: 2.507594 (Harter 1961)
        let pi = std::f64::consts::PI;
        let cases = [
            (2, 1.0 / pi.sqrt(), 1e-10),
            (3, 1.5 / pi.sqrt(), 1e-10),
            (5, 1.162_964, 1e-6),
            (10, 1.538_752, 1e-6),
            (100, 2.507_594, 1e-6),
        ];
        for (n, e, tol) in cases {
            let m = expected_max_iid_normal(n, 0.0, 1.0).unwrap();
            assert!((m.mean - e).abs() < tol, "n {n}: {}", m.mean);
        }
        // Var of the max of 2: 1 - 1/pi; scaling by mean and sd
        let m = expected_max_iid_normal(2, 3.0, 2.0).unwrap();
        assert!(close(m.mean, 3.0 + 2.0 / pi.sqrt(), 1e-10));
        assert!(close(m.variance, 4.0 * (1.0 - 1.0 / pi), 1e-8));
        // a million ranks: 4.86289748619 by composite Simpson (200000 panels on [-12, 0] and
        // [0, 12]) of the same integrals, computed apart
        let big = expected_max_iid_normal(1_000_000, 0.0, 1.0).unwrap();
        assert!((big.mean - 4.862_897_486_19).abs() < 1e-8, "{}", big.mean);
        assert_eq!(expected_max_iid_normal(7, 1.0, 0.0).unwrap().mean, 1.0);
        assert!(expected_max_iid_normal(0, 0.0, 1.0).is_err());
    }

    #[test]
    fn clark_pairwise_on_iid_maxima_has_its_known_small_bias() {
        // Clark's iteration against the exact normal scores: the mean within the measured
        // bound (in units of sd), the variance too small, increasingly with n.
        for (n, mean_bound, var_low) in [
            (2usize, 1e-9, 1.0 - 1e-9),
            (3, 0.002, 0.97),
            (4, 0.002, 0.95),
            (8, 0.001, 0.89),
            (16, 0.006, 0.83),
            (64, 0.016, 0.75),
            (256, 0.021, 0.71),
        ] {
            let mut cov = vec![0.0; n * n];
            for i in 0..n {
                cov[i * n + i] = 1.0;
            }
            let clark = clark_max_n(&vec![0.0; n], &cov).unwrap();
            let exact = expected_max_iid_normal(n as u64, 0.0, 1.0).unwrap();
            let err = clark.mean - exact.mean;
            let ratio = clark.variance / exact.variance;
            assert!(
                err.abs() < mean_bound,
                "n {n}: clark {} exact {}",
                clark.mean,
                exact.mean
            );
            assert!(
                ratio > var_low && ratio < 1.0 + 1e-9,
                "n {n}: variance ratio {ratio}"
            );
        }
    }

    #[test]
    fn clark_n_against_monte_carlo() {
        // four correlated normals (a common factor plus private parts), fixed seed
        let means = [1.0, 1.3, 0.8, 1.1];
        let load = [0.9, 0.5, 1.2, 0.7];
        let private = [0.5, 1.0, 0.3, 0.8];
        let n = 4;
        let mut cov = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                cov[i * n + j] =
                    load[i] * load[j] + if i == j { private[i] * private[i] } else { 0.0 };
            }
        }
        let clark = clark_max_n(&means, &cov).unwrap();
        let mut rng = crate::rng::stream(7, 0, 0);
        let samples = 400_000;
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..samples {
            let common: f64 = StandardNormal.sample(&mut rng);
            let mut m = f64::NEG_INFINITY;
            for i in 0..n {
                let e: f64 = StandardNormal.sample(&mut rng);
                m = m.max(means[i] + load[i] * common + private[i] * e);
            }
            s1 += m;
            s2 += m * m;
        }
        let mc_mean = s1 / samples as f64;
        let mc_var = s2 / samples as f64 - mc_mean * mc_mean;
        // Monte Carlo standard error of the mean is 0.0015; Clark's own error is larger: it
        // gives 1.9019 against 1.8842 (0.018 sd high) and a variance 2% low
        assert!(
            (clark.mean - mc_mean).abs() < 0.02,
            "{} vs {mc_mean}",
            clark.mean
        );
        assert!(
            (clark.variance / mc_var - 1.0).abs() < 0.05,
            "{} vs {mc_var}",
            clark.variance
        );
    }
}
