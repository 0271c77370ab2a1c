//! Confidence intervals across independent replications.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::Tally;

/// A mean with a Student-t confidence interval, from independent replication means.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ConfidenceInterval {
    /// The mean of the replication means.
    pub mean: f64,
    /// Half the interval's width (NaN with fewer than two replications).
    pub half_width: f64,
    /// The confidence level, e.g. 0.95.
    pub level: f64,
    /// How many replication means it rests on.
    pub replications: u64,
}

impl ConfidenceInterval {
    /// The interval `mean ± t_{n-1, (1+level)/2} s / sqrt(n)` over the values of `tally`.
    pub fn from_tally(tally: &Tally, level: f64) -> ConfidenceInterval {
        let n = tally.count();
        let half_width = if n >= 2 {
            let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
                .map(|d| d.inverse_cdf(0.5 + level / 2.0))
                .unwrap_or(f64::NAN);
            t * (tally.variance() / n as f64).sqrt()
        } else {
            f64::NAN
        };
        ConfidenceInterval {
            mean: tally.mean(),
            half_width,
            level,
            replications: n,
        }
    }

    /// The interval over a list of replication values.
    ///
    /// Values whose squares would overflow (beyond about `1e154`: times in a unit far below
    /// the run's) are divided by a power of two first, which is exact, and the interval
    /// multiplied back: the half-width stays finite wherever the values are.
    pub fn from_values(values: &[f64], level: f64) -> ConfidenceInterval {
        let largest = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let scale = if largest > 1e150 && largest.is_finite() {
            2f64.powi(largest.log2().floor() as i32)
        } else {
            1.0
        };
        let mut t = Tally::new();
        values.iter().for_each(|&v| t.add(v / scale));
        let mut ci = ConfidenceInterval::from_tally(&t, level);
        ci.mean *= scale;
        ci.half_width *= scale;
        ci
    }

    /// `half_width / |mean|`.
    pub fn relative_half_width(&self) -> f64 {
        self.half_width / self.mean.abs()
    }

    /// True when `value` lies in `[mean - half_width, mean + half_width]`.
    pub fn contains(&self, value: f64) -> bool {
        (value - self.mean).abs() <= self.half_width
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_hand_computed_interval() {
        // n = 5, mean 3, s^2 = 2.5, t_{4,0.975} = 2.776445
        let ci = ConfidenceInterval::from_values(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95);
        assert_eq!(ci.mean, 3.0);
        assert!((ci.half_width - 2.776445 * (2.5f64 / 5.0).sqrt()).abs() < 1e-5);
        assert!(ci.contains(4.9) && !ci.contains(5.0));
    }

    #[test]
    fn values_whose_squares_overflow_keep_a_finite_interval() {
        // (found by fuzzing: makespans of 1e303 gave a half-width of NaN)
        let small = ConfidenceInterval::from_values(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95);
        let values = [1e303, 2e303, 3e303, 4e303, 5e303];
        let big = ConfidenceInterval::from_values(&values, 0.95);
        assert!(big.half_width.is_finite());
        assert!((big.mean / 1e303 - small.mean).abs() < 1e-12);
        assert!((big.half_width / 1e303 / small.half_width - 1.0).abs() < 1e-12);
    }
}
