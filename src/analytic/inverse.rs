//! The inverse of a distribution function by bracketing and bisection: the quantile of any law
//! whose CDF can be evaluated.

use super::check;
use super::error::{AnalyticError, Result};

/// Doublings of the bracket before a CDF that never reaches `q` is given up on.
const MAX_DOUBLINGS: u32 = 1_100;

/// Bisection steps; each halves the bracket, so 200 reach any `f64` resolution.
const MAX_BISECTIONS: u32 = 200;

/// Relative width of the final bracket.
const REL_TOL: f64 = 1e-12;

/// The quantile `inf { t >= lower : cdf(t) >= q }` of a law on `[lower, inf)`, for `q` in
/// `(0, 1)`: the left-continuous inverse, which is what an empirical percentile estimates.
///
/// `start` is a first guess of the scale (a mean will do); the bracket grows from it by
/// doubling and then shrinks by bisection to a relative width of `1e-12`.
///
/// Errors: `InvalidParameter` for `q` outside `(0, 1)` or a non-finite `lower` or `start`;
/// `NotConverged` when the CDF stays below `q` up to the largest `f64`, or returns NaN.
pub fn invert_cdf(cdf: &dyn Fn(f64) -> Result<f64>, q: f64, lower: f64, start: f64) -> Result<f64> {
    if !(q > 0.0 && q < 1.0) {
        return Err(AnalyticError::InvalidParameter {
            what: "quantile level (must be in (0, 1))".to_owned(),
            value: q,
        });
    }
    check::finite("lower", lower)?;
    check::finite("start", start)?;
    let gave_up = |iterations: u32, residual: f64| AnalyticError::NotConverged {
        method: format!("inverting a CDF at level {q}"),
        iterations,
        residual,
    };
    let at = |t: f64| -> Result<f64> {
        let f = cdf(t)?;
        if f.is_nan() {
            return Err(gave_up(0, f64::NAN));
        }
        Ok(f)
    };
    if at(lower)? >= q {
        return Ok(lower);
    }
    let mut width = if start > 0.0 { start } else { 1.0 };
    let mut lo = lower;
    let mut hi = lower + width;
    let mut doublings = 0;
    while at(hi)? < q {
        lo = hi;
        width *= 2.0;
        hi = lower + width;
        doublings += 1;
        if doublings > MAX_DOUBLINGS || !hi.is_finite() {
            // the CDF stays below q up to the largest f64
            return Err(gave_up(doublings, q - at(lo)?));
        }
    }
    for _ in 0..MAX_BISECTIONS {
        if hi - lo <= REL_TOL * hi.abs() {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if at(mid)? >= q {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverts_an_exponential_and_an_atom() {
        let exp = |t: f64| Ok(-(-t / 2.0).exp_m1());
        let q = invert_cdf(&exp, 0.9, 0.0, 0.001).unwrap();
        assert!((q / (2.0 * 10f64.ln()) - 1.0).abs() < 1e-11, "{q}");
        // a point mass at 3: every quantile is 3
        let atom = |t: f64| Ok(f64::from(u8::from(t >= 3.0)));
        for level in [0.01, 0.5, 0.99] {
            let q = invert_cdf(&atom, level, 0.0, 1.0).unwrap();
            assert!((q - 3.0).abs() < 1e-11, "{q}");
        }
        // an atom at the lower end
        assert_eq!(invert_cdf(&atom, 0.5, 3.0, 1.0), Ok(3.0));
    }

    #[test]
    fn refuses_what_it_cannot_invert() {
        let never = |_: f64| Ok(0.0);
        assert!(matches!(
            invert_cdf(&never, 0.5, 0.0, 1.0),
            Err(AnalyticError::NotConverged { .. })
        ));
        let nan = |_: f64| Ok(f64::NAN);
        assert!(invert_cdf(&nan, 0.5, 0.0, 1.0).is_err());
        let exp = |t: f64| Ok(-(-t).exp_m1());
        assert!(invert_cdf(&exp, 1.0, 0.0, 1.0).is_err());
        assert!(invert_cdf(&exp, 0.0, 0.0, 1.0).is_err());
        assert!(invert_cdf(&exp, f64::NAN, 0.0, 1.0).is_err());
    }
}
