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

/// log2 of the sub-buckets per bucket hdrhistogram uses for [`SIGNIFICANT_DIGITS`]: 2 digits
/// need single-unit resolution up to 2·10^2, rounded up to a power of two, 256 = 2^8.
const SUB_BUCKET_BITS: u32 = 8;

/// Half the sub-buckets: every bucket past the first uses only its upper half.
const HALF_BITS: u32 = SUB_BUCKET_BITS - 1;

/// A histogram of non-negative times recorded in integer ticks of an explicit `unit`.
///
/// hdrhistogram records only integers (HdrHistogram_rust #91), so a time `t` is stored as
/// `round(t / unit)` ticks; parsim picks `unit` as one ten-thousandth of the expected mean, so
/// the rounding is far below the histogram's own resolution (see [`SIGNIFICANT_DIGITS`]). The histogram grows as needed;
/// a value beyond its largest trackable value is counted in [`Percentiles::clamped`] rather than
/// silently dropped.
///
/// Recording, once per visit and per end-to-end observation in the event loop, does not go
/// through `hdrhistogram`: its `record` also tracks the minimum and maximum and checks for
/// resizing and overflow in several steps (about 70 instructions). The counts are kept here
/// instead, at exactly the positions hdrhistogram's `Histogram::new(2)` with auto-resize would
/// use (a test checks this), and [`Percentiles::quantile`] hands them to an hdrhistogram, which
/// computes the quantile; the result is the same as if hdrhistogram had recorded every value.
///
/// Counts are `u32`: half the memory of `u64`, so the part of the counts array a run touches
/// stays in the L1 cache more often (each value updates one random-looking counter, in the
/// event loop). No counter can exceed the number of values recorded, so once a histogram holds
/// `u32::MAX` values (more than 4·10^9, far beyond any run parsim makes) further values are
/// counted as clamped instead of saturating a counter.
#[derive(Clone, Debug)]
pub struct Percentiles {
    /// Counts at hdrhistogram's indices; grown (rarely) when a value needs a higher bucket.
    counts: Vec<u32>,
    /// Values counted in `counts`.
    total: u32,
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
        Percentiles {
            counts: vec![0; 2 << HALF_BITS],
            total: 0,
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
        if ticks < MAX_TICKS && self.total < u32::MAX {
            let i = index_for(ticks as i64 as u64);
            match self.counts.get_mut(i) {
                Some(c) => *c += 1,
                None => self.grow(i),
            }
            self.total += 1;
        } else {
            self.clamped += 1;
        }
    }

    /// Extends the counts to whole buckets up to the one holding index `i`, as hdrhistogram's
    /// auto-resize does, and counts one value there.
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let len = ((i >> HALF_BITS) + 1) << HALF_BITS;
        self.counts.resize(len, 0);
        self.counts[i] = 1;
    }

    /// Empties the histogram (end of the warm-up).
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.total = 0;
        self.clamped = 0;
    }

    /// The value at quantile `q` in `[0, 1]` (NaN when empty): the midpoint of the histogram
    /// sub-bucket that holds it, so within 0.4 % (half a sub-bucket) of the recorded value.
    pub fn quantile(&self, q: f64) -> f64 {
        let [value] = self.quantiles([q]);
        value
    }

    /// The [`PERCENTILES`] parsim reports, labelled, from one hdrhistogram.
    pub fn reported(&self) -> [(&'static str, f64); 4] {
        let values = self.quantiles(PERCENTILES.map(|(_, q)| q));
        std::array::from_fn(|i| (PERCENTILES[i].0, values[i]))
    }

    /// [`Percentiles::quantile`] at each of `qs`, from one hdrhistogram built once.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [f64; N] {
        if self.total == 0 {
            return [f64::NAN; N];
        }
        let hist = self.histogram();
        qs.map(|q| hist.median_equivalent(hist.value_at_quantile(q)) as f64 * self.unit)
    }

    /// The counts as an hdrhistogram: each count recorded at its sub-bucket's lowest value.
    fn histogram(&self) -> Histogram<u64> {
        let mut hist = Histogram::new(SIGNIFICANT_DIGITS).expect("2 significant digits is valid");
        hist.auto(true);
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                hist.record_n(value_for(i), u64::from(c))
                    .expect("values below 2^63 fit an auto-resizing histogram");
            }
        }
        hist
    }

    /// Values that could not be recorded because they exceeded the trackable range.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }
}

/// hdrhistogram's counts index of `value` (unit 1): bucket `b` holds `[2^(b+7), 2^(b+8))` in
/// sub-buckets `2^b` wide (bucket 0 also holds `[0, 128)`), at indices `b·128 + value >> b`.
#[inline(always)]
fn index_for(value: u64) -> usize {
    let bucket = (64 - SUB_BUCKET_BITS) - (value | ((1 << SUB_BUCKET_BITS) - 1)).leading_zeros();
    ((bucket << HALF_BITS) as usize) + (value >> bucket) as usize
}

/// The lowest value counted at index `i` (the inverse of [`index_for`]).
fn value_for(i: usize) -> u64 {
    let half = 1 << HALF_BITS;
    match (i >> HALF_BITS).checked_sub(1) {
        None => i as u64,
        Some(bucket) => (((i & (half - 1)) + half) as u64) << bucket,
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
    fn counts_sit_where_hdrhistogram_puts_them() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let v = next() >> 1 >> (next() % 63);
            let i = index_for(v);
            assert_eq!(index_for(value_for(i)), i, "value {v}");
            assert!(
                value_for(i) <= v && v - value_for(i) < 1 << (i >> HALF_BITS),
                "value {v}"
            );
        }
        // below 2^53, so that `record` sees the exact integer
        let mut values: Vec<u64> = (0..300).chain([255, 256, 257, (1 << 52) + 12345]).collect();
        values.extend((0..20_000).map(|_| next() >> 11 >> (next() % 53)));
        let mut p = Percentiles::new(1.0);
        let mut direct = Histogram::<u64>::new(SIGNIFICANT_DIGITS).unwrap();
        direct.auto(true);
        for &v in &values {
            p.record(v as f64);
            direct.record(v).unwrap();
        }
        let mine = p.histogram();
        assert_eq!(mine.len(), direct.len());
        for q in [0.0, 0.001, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0] {
            assert_eq!(
                mine.value_at_quantile(q),
                direct.value_at_quantile(q),
                "q {q}"
            );
        }
        for v in values.iter().step_by(97) {
            assert_eq!(mine.count_at(*v), direct.count_at(*v), "value {v}");
        }
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
