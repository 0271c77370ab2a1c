//! Response-time percentiles from an HDR histogram.

#[cfg(test)]
use hdrhistogram::Histogram;

use crate::time::Clock;

/// The percentiles parsim reports, as quantiles.
pub const PERCENTILES: [(&str, f64); 4] =
    [("p50", 0.50), ("p90", 0.90), ("p95", 0.95), ("p99", 0.99)];

/// Significant decimal digits kept by the histogram. With 2, hdrhistogram splits every power of
/// two into 128 sub-buckets, each between 1/256 and 1/128 of its values wide; reporting a
/// sub-bucket's midpoint (see [`Percentiles::quantile`]) keeps a percentile within 0.4 % of the
/// recorded value, well inside the ~1 % confidence intervals of p50..p99. 3 digits (0.05 %) would
/// need 8 times the counters: the ones a run touches then no longer fit in the L1 cache, and the
/// counter update, one per visit and one per end-to-end observation, missed it about every time.
#[cfg_attr(not(test), allow(dead_code))] // the tests build the reference hdrhistogram with it
const SIGNIFICANT_DIGITS: u8 = 2;

/// log2 of the sub-buckets per bucket hdrhistogram uses for [`SIGNIFICANT_DIGITS`]: 2 digits
/// need single-unit resolution up to 2·10^2, rounded up to a power of two, 256 = 2^8.
const SUB_BUCKET_BITS: u32 = 8;

/// Half the sub-buckets: every bucket past the first uses only its upper half.
const HALF_BITS: u32 = SUB_BUCKET_BITS - 1;

/// Relative half-width of a histogram sub-bucket, the resolution of a reported percentile: the
/// reported midpoint is within this fraction of the recorded value (see `SIGNIFICANT_DIGITS`).
pub const RESOLUTION: f64 = 1.0 / 256.0;

/// Histogram units per typical value of the metric (`2^14`): values down to 1% of the metric's
/// scale are still recorded to two significant digits.
const UNITS_PER_SCALE_BITS: i32 = 14;

/// A histogram of non-negative times, recorded as clock ticks.
///
/// hdrhistogram records only integers (HdrHistogram_rust #91); parsim's times are integers
/// already (clock ticks, see [`crate::time`]), so a time is recorded as its ticks shifted right
/// by a per-histogram amount: the histogram's unit is `2^shift` ticks, about `2^-14` of the
/// metric's own typical value (its scale), so the truncation is far below the histogram's own
/// resolution (see `SIGNIFICANT_DIGITS`) and the counts a metric touches stay few. Its range
/// is the clock's whole range: no time the clock can hold is beyond it. The histogram grows as
/// needed.
///
/// Recording, once per visit and per end-to-end observation in the event loop, does not go
/// through `hdrhistogram`: its `record` also tracks the minimum and maximum and checks for
/// resizing and overflow in several steps (about 70 instructions). The counts are kept here
/// instead, at exactly the positions hdrhistogram's `Histogram::new(2)` with auto-resize would
/// use (a test checks this), and [`Percentiles::quantile`] reads the quantile from them as
/// hdrhistogram's `value_at_quantile` would (another test checks that); the result is the same
/// as if hdrhistogram had recorded every value.
///
/// Each count is kept as its low byte, in a `u8` array at hdrhistogram's indices, and its
/// higher part (the count divided by 256) in a second array touched only when a low byte wraps
/// round (once every 256 values at one index): a quarter of the memory of `u32` counts, so the
/// part of the counts a run touches stays in the cache (each value updates one
/// random-looking counter, in the event loop; a network of 1,000 stations has 1,000 of them,
/// which as `u32` counts left the L2 cache and cost a miss per visit). The counts are exact,
/// `high · 256 + low`.
///
/// The counts cover only the window of indices between the least and the greatest value
/// recorded, in whole hdrhistogram buckets (128 indices, a doubling of the value): a time that
/// lies within a few doublings of its metric's typical value, as a station's response or a link's
/// delay does, keeps a few hundred bytes of counts where counting from index 0 kept about 2,000
/// (the indices below a value of `2^14` units, its scale, were never used), still exact. The
/// window grows upwards as hdrhistogram's auto-resize would, and downwards (moving the counts)
/// the rare times a value falls below it.
///
/// No count can exceed the number of values recorded, so once a histogram
/// holds `u32::MAX` values (more than 4·10^9, beyond any run parsim makes) further values are
/// counted as [`Percentiles::clamped`] instead; the engine reports a run with clamped values as
/// failed.
#[derive(Clone, Debug)]
pub struct Percentiles {
    /// The low byte of each count, at hdrhistogram's indices from `first` on; grown (rarely)
    /// when a value falls outside the window.
    low: Vec<u8>,
    /// Each count divided by 256, at the same indices; as long as `low` from the first time a
    /// low byte wraps round (empty before).
    high: Vec<u32>,
    /// hdrhistogram's index of `low[0]` (a multiple of 128; `usize::MAX` before the first
    /// value, so that every index falls outside the empty window).
    first: usize,
    /// Values counted in `low` and `high`.
    total: u32,
    /// The histogram's unit is `2^shift` clock ticks.
    shift: u32,
    /// The histogram's unit in the scenario's time unit.
    unit: f64,
    clamped: u64,
}

impl Percentiles {
    /// An empty histogram for times on `clock` (64-bit ticks, see [`Percentiles::record`])
    /// whose typical value is `scale` time units (a non-positive or non-finite scale means one
    /// tick).
    pub fn new(clock: &Clock, scale: f64) -> Percentiles {
        Percentiles::with_limit(clock, scale, 63)
    }

    /// An empty histogram for times in 128-bit ticks (see [`Percentiles::record_wide`]).
    pub fn wide(clock: &Clock, scale: f64) -> Percentiles {
        Percentiles::with_limit(clock, scale, 127)
    }

    fn with_limit(clock: &Clock, scale: f64, most: i32) -> Percentiles {
        let units = if scale.is_finite() && scale > 0.0 {
            (scale / clock.tick()).log2().floor() as i32 - UNITS_PER_SCALE_BITS
        } else {
            0
        };
        let shift = units.clamp(0, most) as u32;
        Percentiles {
            low: Vec::new(),
            high: Vec::new(),
            first: usize::MAX,
            total: 0,
            shift,
            unit: clock.tick() * 2f64.powi(shift as i32),
            clamped: 0,
        }
    }

    /// Records one time of `ticks` clock ticks.
    #[inline]
    pub fn record(&mut self, ticks: u64) {
        self.count(ticks >> self.shift);
    }

    /// Records one time of `ticks` 128-bit clock ticks (rank programs).
    #[inline]
    pub fn record_wide(&mut self, ticks: u128) {
        self.count(u64::try_from(ticks >> self.shift).unwrap_or(u64::MAX));
    }

    /// Counts a value already in the histogram's unit.
    #[inline(always)]
    fn count(&mut self, units: u64) {
        if self.total < u32::MAX {
            let i = index_for(units);
            let at = i.wrapping_sub(self.first);
            match self.low.get_mut(at) {
                Some(c) => {
                    *c = c.wrapping_add(1);
                    if *c == 0 {
                        self.carry(at);
                    }
                }
                None => self.grow(i),
            }
            self.total += 1;
        } else {
            self.clamped += 1;
        }
    }

    /// Extends the window to whole buckets down to or up to the one holding index `i` (outside
    /// it), and counts one value there.
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let bucket_start = (i >> HALF_BITS) << HALF_BITS;
        if self.low.is_empty() {
            self.first = bucket_start;
        } else if i < self.first {
            let below = self.first - bucket_start;
            self.low.splice(0..0, std::iter::repeat_n(0, below));
            if !self.high.is_empty() {
                self.high.splice(0..0, std::iter::repeat_n(0, below));
            }
            self.first = bucket_start;
        }
        let len = (bucket_start + (1 << HALF_BITS) - self.first).max(self.low.len());
        self.low.resize(len, 0);
        if !self.high.is_empty() {
            self.high.resize(len, 0);
        }
        self.low[i - self.first] = 1;
    }

    /// The low byte of the count at window position `at` wrapped round to 0: 256 more in its
    /// high part.
    #[cold]
    #[inline(never)]
    fn carry(&mut self, at: usize) {
        self.high.resize(self.low.len(), 0);
        self.high[at] += 1;
    }

    /// The count at window position `at` (index `first + at`).
    fn count_at(&self, at: usize) -> u64 {
        (u64::from(self.high.get(at).copied().unwrap_or(0)) << 8) | u64::from(self.low[at])
    }

    /// Empties the histogram (end of the warm-up).
    pub fn clear(&mut self) {
        self.low.fill(0);
        self.high.fill(0);
        self.total = 0;
        self.clamped = 0;
    }

    /// The value at quantile `q` in `[0, 1]` (NaN when empty): the midpoint of the histogram
    /// sub-bucket that holds it, so within 0.4 % (half a sub-bucket) of the recorded value.
    pub fn quantile(&self, q: f64) -> f64 {
        let [value] = self.quantiles([q]);
        value
    }

    /// The [`PERCENTILES`] parsim reports, labelled.
    pub fn reported(&self) -> [(&'static str, f64); 4] {
        let values = self.quantiles(PERCENTILES.map(|(_, q)| q));
        std::array::from_fn(|i| (PERCENTILES[i].0, values[i]))
    }

    /// [`Percentiles::quantile`] at each of `qs`.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [f64; N] {
        if self.total == 0 {
            return [f64::NAN; N];
        }
        qs.map(|q| self.midpoint_at(q) as f64 * self.unit)
    }

    /// What `hdrhistogram` gives for `median_equivalent(value_at_quantile(q))` on these counts, straight from the counts: the first index
    /// where the running count reaches `ceil(q · total)` (at least 1, `q` capped at 1), then the
    /// midpoint of its sub-bucket. Building the histogram for it cost about 8,000 instructions
    /// (an allocation, a resize, a `record_n` per non-empty count), which a rank program paid for
    /// every link at the end of every execution.
    fn midpoint_at(&self, q: f64) -> u64 {
        let q = if q > 1.0 { 1.0 } else { q };
        let target = ((q * f64::from(self.total)).ceil() as u64).max(1);
        let mut running = 0_u64;
        let mut index = self.first + self.low.len() - 1;
        for at in 0..self.low.len() {
            running += self.count_at(at);
            if running >= target {
                index = self.first + at;
                break;
            }
        }
        // the sub-bucket's width is 2^bucket (bucket 0 spans indices 0..256)
        let bucket = ((index >> HALF_BITS) as u32).saturating_sub(1);
        value_for(index) + ((1_u64 << bucket) >> 1)
    }

    /// The counts as an hdrhistogram: each count recorded at its sub-bucket's lowest value (the
    /// reference [`Percentiles::midpoint_at`] is tested against).
    #[cfg(test)]
    fn histogram(&self) -> Histogram<u64> {
        let mut hist = Histogram::new(SIGNIFICANT_DIGITS).expect("2 significant digits is valid");
        hist.auto(true);
        for at in 0..self.low.len() {
            let c = self.count_at(at);
            if c > 0 {
                hist.record_n(value_for(self.first + at), c)
                    .expect("values below 2^63 fit an auto-resizing histogram");
            }
        }
        hist
    }

    /// Values that could not be recorded (beyond `u32::MAX` values in one histogram).
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

    /// A histogram whose unit is exactly `unit` time units (a power of two), on a clock with
    /// ticks of `unit`.
    fn with_unit(unit: f64) -> (Clock, Percentiles) {
        let clock = Clock::for_scale(unit * 2f64.powi(Clock::RESOLUTION_BITS));
        assert_eq!(clock.tick(), unit);
        (clock, Percentiles::new(&clock, 0.0))
    }

    #[test]
    fn quantiles_of_a_uniform_grid() {
        let (clock, mut p) = with_unit(2f64.powi(-20));
        for i in 1..=10_000 {
            p.record(clock.ticks(f64::from(i) / 10_000.0));
        }
        for q in [0.5, 0.9, 0.95, 0.99] {
            let rel = p.quantile(q) / q - 1.0;
            assert!(rel.abs() <= 1.0 / 256.0, "q {q}: relative error {rel}");
        }
        assert_eq!(p.clamped(), 0);
    }

    #[test]
    fn counts_sit_where_hdrhistogram_puts_them() {
        let mut next = crate::rng::xorshift(0x9e37_79b9_7f4a_7c15_u64);
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
        let (_, mut p) = with_unit(1.0);
        let mut direct = Histogram::<u64>::new(SIGNIFICANT_DIGITS).unwrap();
        direct.auto(true);
        for &v in &values {
            p.record(v);
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
    fn quantiles_from_the_counts_are_hdrhistograms() {
        let mut next = crate::rng::xorshift(0x2545_f491_4f6c_dd1d_u64);
        let qs = [
            -0.5, 0.0, 1e-9, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0, 1.5,
        ];
        for round in 0..300 {
            let (_, mut p) = with_unit(1.0);
            let n = 1 + next() % if round % 3 == 0 { 5 } else { 3000 };
            let spread = next() % 60;
            for _ in 0..n {
                let v = (next() >> 11) >> (53 - spread.min(52));
                p.record(v);
            }
            let hist = p.histogram();
            for q in qs {
                assert_eq!(
                    p.midpoint_at(q),
                    hist.median_equivalent(hist.value_at_quantile(q)),
                    "round {round}, {n} values, q {q}"
                );
            }
        }
    }

    #[test]
    fn counts_past_a_byte_carry_exactly() {
        // a few indices counted far beyond 256 times (the low bytes wrap round many times),
        // others once, some after the high parts exist and after the counts grew
        let (_, mut p) = with_unit(1.0);
        let mut direct = Histogram::<u64>::new(SIGNIFICANT_DIGITS).unwrap();
        direct.auto(true);
        for round in 0..2 {
            for i in 0..100_000_u64 {
                let v = match i % 7 {
                    0..=3 => 5,
                    4 | 5 => 300 + i % 3,
                    _ => i << (i % 40),
                };
                p.record(v);
                direct.record(v).unwrap();
            }
            let mine = p.histogram();
            assert_eq!(mine.len(), direct.len(), "round {round}");
            for v in [5, 300, 301, 302, 1 << 30] {
                assert_eq!(mine.count_at(v), direct.count_at(v), "value {v}");
            }
            for q in [0.1, 0.5, 0.6, 0.9, 0.99, 1.0] {
                let hist_q = direct.median_equivalent(direct.value_at_quantile(q));
                assert_eq!(p.midpoint_at(q), hist_q, "round {round}, q {q}");
            }
            if round == 0 {
                p.clear();
                direct.reset();
                assert!(p.quantile(0.5).is_nan());
            }
        }
    }

    #[test]
    fn the_window_holds_only_the_doublings_recorded_and_grows_both_ways() {
        // a link's delays: from its transmission time (2^14 units, the scale) to 6 times that,
        // recorded from the top down, then once far below and once far above
        let (_, mut p) = with_unit(1.0);
        let mut direct = Histogram::<u64>::new(SIGNIFICANT_DIGITS).unwrap();
        direct.auto(true);
        for v in (1 << 14..6 << 14).rev().step_by(37) {
            p.record(v);
            direct.record(v).unwrap();
        }
        // [2^14, 2^17): three doublings, three buckets of 128 one-byte counts from the index of
        // 2^14 (bucket 7, at indices 8 x 128 on: bucket b past 0 uses its upper half)
        assert_eq!((p.first, p.low.len()), (8 << HALF_BITS, 3 << HALF_BITS));
        let check = |p: &Percentiles, direct: &Histogram<u64>| {
            for q in [0.0, 0.01, 0.5, 0.9, 0.99, 1.0] {
                let hist_q = direct.median_equivalent(direct.value_at_quantile(q));
                assert_eq!(p.midpoint_at(q), hist_q, "q {q}");
            }
        };
        check(&p, &direct);
        for v in [3, 1 << 40, 200] {
            p.record(v);
            direct.record(v).unwrap();
            check(&p, &direct);
        }
        assert_eq!(p.first, 0);
        assert_eq!(p.histogram().len(), direct.len());
    }

    #[test]
    fn midpoints_stay_within_half_a_sub_bucket() {
        // ticks fine enough for their rounding not to matter
        let (clock, mut p) = with_unit(2f64.powi(-20));
        let mut worst: f64 = 0.0;
        for i in 0..2000 {
            let t = 0.5 * 1.0037_f64.powi(i);
            p.clear();
            p.record(clock.ticks(t));
            worst = worst.max((p.quantile(0.5) / t - 1.0).abs());
        }
        assert!(worst <= RESOLUTION + 1e-5, "worst relative error {worst}");
        assert!(worst > 1.0 / 1024.0, "2 significant digits: {worst}");
    }
}

#[cfg(test)]
mod scale_tests {
    use super::*;

    #[test]
    fn the_unit_follows_the_metric_and_the_range_is_the_whole_clock() {
        // a clock set by a station of mean 1e-6 (its horizon is about 4000 time units); a class
        // metric of scale 0.77
        let clock = Clock::for_scale(1e-6);
        let mut p = Percentiles::new(&clock, 0.77);
        assert!(p.unit <= 0.77 * 2f64.powi(-14) && p.unit > 0.77 * 2f64.powi(-16));
        for t in [0.1, 0.77, 2.0, 5.1] {
            p.record(clock.ticks(t));
        }
        p.record(clock.ticks(1e3)); // 2^61 ticks: still inside the range
        assert_eq!(p.clamped(), 0);
        let median = p.quantile(0.5);
        assert!((median / 2.0 - 1.0).abs() <= RESOLUTION, "{median}");
        assert!((p.quantile(1.0) / 1e3 - 1.0).abs() <= RESOLUTION);
    }
}
