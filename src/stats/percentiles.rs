//! Response-time percentiles from an HDR histogram.

use hdrhistogram::Histogram;

/// The percentiles parsim reports, as quantiles.
pub const PERCENTILES: [(&str, f64); 4] =
    [("p50", 0.50), ("p90", 0.90), ("p95", 0.95), ("p99", 0.99)];

/// Significant decimal digits kept by the histogram. With 2, hdrhistogram splits every power of
/// two into 128 sub-buckets, each between 1/256 and 1/128 of its values wide; reporting a
/// sub-bucket's midpoint (see [`Percentiles::quantile`]) keeps a percentile within 0.4 % of the
/// recorded value, well inside the ~1 % confidence intervals of p50..p99. 3 digits (0.05 %) would
/// need 8 times the counters: the ones a run touches then no longer fit in the L1 cache, and the
/// counter update, one per visit and one per end-to-end observation, missed it about every time.
const SIGNIFICANT_DIGITS: u8 = 2;

/// Tick counts at or above this (2^63) are counted as clamped; below it they fit an `i64`.
const MAX_TICKS: f64 = (1_u64 << 63) as f64;

/// A histogram of non-negative times recorded in integer ticks of an explicit `unit`.
///
/// hdrhistogram records only integers (HdrHistogram_rust #91), so a time `t` is stored as
/// `round(t / unit)` ticks; parsim picks `unit` as one ten-thousandth of the expected mean, so
/// the rounding is far below the histogram's own resolution (see [`SIGNIFICANT_DIGITS`]). The histogram grows as needed;
/// a value beyond its largest trackable value is counted in [`Percentiles::clamped`] rather than
/// silently dropped.
///
/// Counts are `u32`: half the memory of `u64`, so the part of the counts array a run touches
/// stays in the L1 cache more often (each value updates one random-looking counter, in the
/// event loop). No counter can exceed the number of values recorded, so once a histogram holds
/// `u32::MAX` values (more than 4·10^9, far beyond any run parsim makes) further values are
/// counted as clamped instead of saturating a counter.
#[derive(Clone, Debug)]
pub struct Percentiles {
    hist: Histogram<u32>,
    unit: f64,
    per_unit: f64,
    clamped: u64,
}

impl Percentiles {
    /// An empty histogram with ticks of `unit` (a positive, finite time).
    pub fn new(unit: f64) -> Percentiles {
        let unit = if unit.is_finite() && unit > 0.0 {
            unit
        } else {
            1e-6
        };
        let mut hist = Histogram::new(SIGNIFICANT_DIGITS).expect("2 significant digits is valid");
        hist.auto(true);
        Percentiles {
            hist,
            unit,
            per_unit: 1.0 / unit,
            clamped: 0,
        }
    }

    /// Records one time.
    #[inline]
    pub fn record(&mut self, t: f64) {
        let ticks = t * self.per_unit + 0.5;
        // converting through `i64` is one instruction; `u64` needs a range fix-up
        if ticks < MAX_TICKS
            && self.hist.len() < u64::from(u32::MAX)
            && self.hist.record(ticks as i64 as u64).is_ok()
        {
            return;
        }
        self.clamped += 1;
    }

    /// Empties the histogram (end of the warm-up).
    pub fn clear(&mut self) {
        self.hist.reset();
        self.clamped = 0;
    }

    /// The value at quantile `q` in `[0, 1]` (NaN when empty): the midpoint of the histogram
    /// sub-bucket that holds it, so within 0.4 % (half a sub-bucket) of the recorded value.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.hist.is_empty() {
            return f64::NAN;
        }
        let ticks = self.hist.value_at_quantile(q);
        self.hist.median_equivalent(ticks) as f64 * self.unit
    }

    /// Values that could not be recorded because they exceeded the trackable range.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_a_uniform_grid() {
        let mut p = Percentiles::new(1e-4);
        for i in 1..=10_000 {
            p.record(f64::from(i) / 10_000.0);
        }
        for q in [0.5, 0.9, 0.95, 0.99] {
            let rel = p.quantile(q) / q - 1.0;
            assert!(rel.abs() <= 1.0 / 256.0, "q {q}: relative error {rel}");
        }
        assert_eq!(p.clamped(), 0);
    }

    #[test]
    fn midpoints_stay_within_half_a_sub_bucket() {
        let mut p = Percentiles::new(1e-6); // ticks fine enough for their rounding not to matter
        let mut worst: f64 = 0.0;
        for i in 0..2000 {
            let t = 0.5 * 1.0037_f64.powi(i);
            p.clear();
            p.record(t);
            worst = worst.max((p.quantile(0.5) / t - 1.0).abs());
        }
        assert!(worst <= 1.0 / 256.0 + 1e-5, "worst relative error {worst}");
        assert!(worst > 1.0 / 1024.0, "2 significant digits: {worst}");
    }
}
