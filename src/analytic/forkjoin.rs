//! Fork-join: expected maximum of i.i.d. times, and open fork-join queues.

use super::check;
use super::error::Result;
use super::harmonic::harmonic;
use super::quadrature;

/// Relative accuracy of [`expected_max_numeric`].
pub const EXPECTED_MAX_REL_TOL: f64 = 1e-9;

/// Subinterval cap of [`expected_max_numeric`]'s adaptive quadrature.
const MAX_SEGMENTS: u32 = 20_000;

/// Expected maximum of `c` i.i.d. exponential times of mean `mean`: `H_c * mean`
/// (the synchronisation cost `h(c) = H_c` of Cremonesi and Gennaro, eqs. 4-6; e.g. David and
/// Nagaraja, *Order Statistics*, 2003, 4.6).
///
/// Errors: `InvalidParameter` if `c == 0` or `mean` is negative or not finite.
pub fn expected_max_exponential(c: u32, mean: f64) -> Result<f64> {
    check::at_least("c", c, 1)?;
    Ok(harmonic(c) * check::non_negative("mean", mean)?)
}

/// Expected maximum of `c` i.i.d. uniform times on `[min, max]`:
/// `min + (max - min) c / (c + 1)`; on `[0, 2m]` this is `2 m c / (c + 1)`, Cremonesi and
/// Gennaro's `h(c) = 2c/(c+1)`.
///
/// Errors: `InvalidParameter` if `c == 0`, a bound is not finite, or `max < min`.
pub fn expected_max_uniform(c: u32, min: f64, max: f64) -> Result<f64> {
    check::at_least("c", c, 1)?;
    let lo = check::finite("min", min)?;
    let width = check::non_negative("max - min", check::finite("max", max)? - lo)?;
    let c = f64::from(c);
    Ok(lo + width * c / (c + 1.0))
}

/// Expected maximum of `c` i.i.d. random variables with CDF `cdf` supported on
/// `[lower, upper]` (`upper` may be `f64::INFINITY`):
/// `E[max] = lower + int_lower^upper (1 - F(t)^c) dt`.
///
/// The integral is computed by adaptive Gauss-Kronrod 7-15 to a relative accuracy
/// [`EXPECTED_MAX_REL_TOL`] (`1e-9`, on the error estimate `|K15 - G7|`, which is
/// conservative for smooth integrands). An infinite upper end is mapped to `[0, 1)` by
/// `t = lower + u / (1 - u)`, `dt = du / (1 - u)^2`; the Kronrod nodes never touch `u = 1`.
/// The CDF must be 0 below `lower`.
///
/// Errors: `InvalidParameter` if `c == 0`, `lower` is not finite, `upper < lower`, or the CDF
/// returns a value outside `[0, 1]` (or NaN) at some `t`; `NotConverged` if the integral does
/// not settle (for example an infinite mean, such as a Pareto tail with index `<= 1`).
pub fn expected_max_numeric(
    c: u32,
    cdf: &dyn Fn(f64) -> f64,
    lower: f64,
    upper: f64,
) -> Result<f64> {
    expected_max_fallible(c, &|t| Ok(cdf(t)), lower, upper)
}

/// [`expected_max_numeric`] for a CDF that may itself fail (one computed by an integral): its
/// first error ends the integration and is returned.
pub(crate) fn expected_max_fallible(
    c: u32,
    cdf: &dyn Fn(f64) -> Result<f64>,
    lower: f64,
    upper: f64,
) -> Result<f64> {
    let c = check::at_least("c", c, 1)?;
    let lower = check::finite("lower", lower)?;
    if upper.is_nan() || upper < lower {
        return Err(super::AnalyticError::InvalidParameter {
            what: "upper".into(),
            value: upper,
        });
    }
    let tail = |t: f64| -> Result<f64> {
        let f = cdf(t)?;
        if !(0.0..=1.0).contains(&f) {
            return Err(super::AnalyticError::InvalidParameter {
                what: format!("cdf({t})"),
                value: f,
            });
        }
        Ok(1.0 - f.powf(f64::from(c)))
    };
    let integral = if upper.is_finite() {
        let mut g = |t: f64| tail(t);
        quadrature::integrate(&mut g, lower, upper, EXPECTED_MAX_REL_TOL, MAX_SEGMENTS)?
    } else {
        let mut g = |u: f64| {
            let w = 1.0 - u;
            Ok(tail(lower + u / w)? / (w * w))
        };
        quadrature::integrate(&mut g, 0.0, 1.0, EXPECTED_MAX_REL_TOL, MAX_SEGMENTS)?
    };
    Ok(lower + integral)
}

/// Exact mean response time of the open two-server fork-join queue with Poisson arrivals at
/// rate `lambda` and exponential servers of rate `mu` (Flatto and Hahn, SIAM J. Appl. Math.
/// 1984; Nelson and Tantawi, IEEE Trans. Computers 37(6), 1988):
/// `R_2 = (12 - rho)/8 * 1/(mu - lambda)`, `rho = lambda/mu`.
///
/// Errors: `InvalidParameter` for `lambda < 0` or `mu <= 0`; `Unstable` if `rho >= 1`.
pub fn fork_join_2_server(lambda: f64, mu: f64) -> Result<f64> {
    let lambda = check::non_negative("lambda", lambda)?;
    let mu = check::positive("mu", mu)?;
    let rho = check::stable("fork-join queue", lambda / mu)?;
    Ok((12.0 - rho) / 8.0 / (mu - lambda))
}

/// Nelson-Tantawi approximation of the mean response time of an open homogeneous fork-join
/// queue with `k >= 2` exponential servers of rate `mu` and Poisson arrivals at `lambda`
/// (Nelson and Tantawi, "Approximate analysis of fork/join synchronization in parallel queues",
/// IEEE Trans. Computers 37(6), 1988; fitted for `2 <= k <= 32`):
/// `R_k = [H_k/H_2 + (4/11)(1 - H_k/H_2) rho] * R_2`, with `R_2` from
/// [`fork_join_2_server`]. Exact at `k = 2`; at `rho -> 0` it gives `H_k / mu`.
///
/// Errors: `NotApplicable` for `k < 2` (one server is an M/M/1 queue); otherwise as
/// [`fork_join_2_server`].
pub fn nelson_tantawi(k: u32, lambda: f64, mu: f64) -> Result<f64> {
    if k < 2 {
        return Err(super::AnalyticError::NotApplicable(format!(
            "Nelson-Tantawi needs k >= 2 servers (got {k}); k = 1 is an M/M/1 queue"
        )));
    }
    let r2 = fork_join_2_server(lambda, mu)?;
    let ratio = harmonic(k) / harmonic(2);
    Ok((ratio + 4.0 / 11.0 * (1.0 - ratio) * (lambda / mu)) * r2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::AnalyticError;
    use crate::analytic::mva::tests::close;

    fn exp_cdf(mean: f64) -> impl Fn(f64) -> f64 {
        move |t: f64| if t <= 0.0 { 0.0 } else { -(-t / mean).exp_m1() }
    }

    #[test]
    fn closed_forms() {
        assert!(close(
            expected_max_exponential(4, 2.0).unwrap(),
            2.0 * 25.0 / 12.0,
            1e-15
        ));
        assert!(close(
            expected_max_uniform(3, 0.0, 2.0).unwrap(),
            1.5,
            1e-15
        ));
        assert!(close(
            expected_max_uniform(1, 1.0, 3.0).unwrap(),
            2.0,
            1e-15
        ));
        assert!(expected_max_uniform(2, 3.0, 1.0).is_err());
        assert!(expected_max_exponential(0, 1.0).is_err());
    }

    #[test]
    fn numeric_matches_exponential_and_uniform_closed_forms() {
        for c in [1, 2, 7] {
            let numeric = expected_max_numeric(c, &exp_cdf(1.5), 0.0, f64::INFINITY).unwrap();
            let exact = expected_max_exponential(c, 1.5).unwrap();
            assert!(
                close(numeric, exact, 1e-9),
                "exp c={c}: {numeric} vs {exact}"
            );
            let unif = |t: f64| ((t - 1.0) / 4.0).clamp(0.0, 1.0);
            let numeric = expected_max_numeric(c, &unif, 1.0, 5.0).unwrap();
            let exact = expected_max_uniform(c, 1.0, 5.0).unwrap();
            assert!(close(numeric, exact, 1e-9), "unif c={c}");
        }
    }

    #[test]
    fn numeric_64_exponentials_is_h64() {
        let numeric = expected_max_numeric(64, &exp_cdf(1.0), 0.0, f64::INFINITY).unwrap();
        assert!(
            close(numeric, harmonic(64), 1e-9),
            "{numeric} vs {}",
            harmonic(64)
        );
    }

    #[test]
    fn numeric_erlang_and_deterministic() {
        // Two Erlang-2 (rate 1): E[max] = 2*2 - E[min], P(min > t) = (1+t)^2 e^{-2t},
        // E[min] = 1/2 + 2/4 + 2/8 = 1.25, so E[max] = 2.75.
        let erlang2 = |t: f64| {
            if t <= 0.0 {
                0.0
            } else {
                1.0 - (1.0 + t) * (-t).exp()
            }
        };
        let v = expected_max_numeric(2, &erlang2, 0.0, f64::INFINITY).unwrap();
        assert!(close(v, 2.75, 1e-9));
        // Deterministic 3.0: the maximum is 3 whatever c, on a finite or infinite range.
        let det = |t: f64| if t < 3.0 { 0.0 } else { 1.0 };
        assert!(close(
            expected_max_numeric(5, &det, 0.0, 10.0).unwrap(),
            3.0,
            1e-9
        ));
        assert!(close(
            expected_max_numeric(5, &det, 0.0, f64::INFINITY).unwrap(),
            3.0,
            1e-9
        ));
        assert_eq!(expected_max_numeric(5, &det, 3.0, 3.0).unwrap(), 3.0);
    }

    #[test]
    fn numeric_errors() {
        let bad = |_t: f64| f64::NAN;
        assert!(matches!(
            expected_max_numeric(2, &bad, 0.0, 1.0),
            Err(AnalyticError::InvalidParameter { .. })
        ));
        // Pareto with index 1 on [1, inf): infinite mean.
        let pareto = |t: f64| if t < 1.0 { 0.0 } else { 1.0 - 1.0 / t };
        assert!(matches!(
            expected_max_numeric(2, &pareto, 1.0, f64::INFINITY),
            Err(AnalyticError::NotConverged { .. })
        ));
        assert!(expected_max_numeric(2, &exp_cdf(1.0), 1.0, 0.5).is_err());
        assert!(expected_max_numeric(2, &exp_cdf(1.0), f64::NEG_INFINITY, 0.5).is_err());
    }

    #[test]
    fn two_server_fork_join_and_nelson_tantawi() {
        // lambda 0.5, mu 1: R_2 = 11.5/8 / 0.5 = 2.875.
        assert!(close(fork_join_2_server(0.5, 1.0).unwrap(), 2.875, 1e-15));
        assert!(close(nelson_tantawi(2, 0.5, 1.0).unwrap(), 2.875, 1e-15));
        // k = 4: ratio = (25/12)/(3/2) = 25/18; [25/18 + (4/11)(-7/18)(0.5)] * 2.875.
        let expected = (25.0 / 18.0 - 4.0 / 11.0 * 7.0 / 18.0 * 0.5) * 2.875;
        assert!(close(nelson_tantawi(4, 0.5, 1.0).unwrap(), expected, 1e-14));
        // Light load: H_k / mu.
        assert!(close(
            nelson_tantawi(8, 1e-12, 2.0).unwrap(),
            harmonic(8) / 2.0,
            1e-9
        ));
        assert!(matches!(
            nelson_tantawi(1, 0.5, 1.0),
            Err(AnalyticError::NotApplicable(_))
        ));
        assert!(matches!(
            fork_join_2_server(1.0, 1.0),
            Err(AnalyticError::Unstable { .. })
        ));
    }
}
