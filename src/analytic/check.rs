//! Input checks shared by every solver, so that each rule is written once.

use super::error::{AnalyticError, Result};

fn invalid(what: &str, value: f64) -> AnalyticError {
    AnalyticError::InvalidParameter {
        what: what.to_owned(),
        value,
    }
}

/// `value` must be finite and `> 0`.
pub(crate) fn positive(what: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(invalid(what, value))
    }
}

/// `value` must be finite and `>= 0` (`-0.0` is accepted and returned as `0.0`).
pub(crate) fn non_negative(what: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value.abs())
    } else {
        Err(invalid(what, value))
    }
}

/// `value` must be finite (any sign).
pub(crate) fn finite(what: &str, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(invalid(what, value))
    }
}

/// An integer count that must be at least `min`.
pub(crate) fn at_least(what: &str, value: u32, min: u32) -> Result<u32> {
    if value >= min {
        Ok(value)
    } else {
        Err(invalid(what, f64::from(value)))
    }
}

/// `got` must equal `expected`.
pub(crate) fn same_len(what: &str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(AnalyticError::DimensionMismatch {
            what: what.to_owned(),
            expected,
            got,
        })
    }
}

/// Utilisation per server `rho` must be `< 1`.
pub(crate) fn stable(what: &str, rho: f64) -> Result<f64> {
    if rho < 1.0 {
        Ok(rho)
    } else {
        Err(AnalyticError::Unstable {
            what: what.to_owned(),
            rho,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_nan_inf_and_signs() {
        assert!(positive("x", f64::NAN).is_err());
        assert!(positive("x", 0.0).is_err());
        assert!(positive("x", f64::INFINITY).is_err());
        assert_eq!(positive("x", 2.0), Ok(2.0));
        assert!(non_negative("x", -1e-300).is_err());
        assert_eq!(non_negative("x", -0.0).map(f64::is_sign_positive), Ok(true));
        assert!(finite("x", f64::NEG_INFINITY).is_err());
        assert!(at_least("c", 0, 1).is_err());
        assert!(same_len("v", 2, 3).is_err());
        assert!(stable("s", 1.0).is_err());
        assert_eq!(stable("s", 0.5), Ok(0.5));
    }
}
