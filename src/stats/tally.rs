//! Running mean and variance.

/// Count, mean and variance of a stream of values, kept as sums of the values shifted by the
/// first one: `S1 = sum (x - K)`, `S2 = sum (x - K)^2`. Shifting by a value near the mean keeps
/// the variance accurate under a large offset (statrs #376), and unlike Welford's update there
/// is no division per value, which matters in the event loop. Two tallies merge exactly by
/// moving one to the other's shift.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    n: u64,
    shift: f64,
    sum: f64,
    sum_sq: f64,
}

impl Tally {
    /// An empty tally.
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Adds one value.
    #[inline]
    pub fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.shift = x;
        }
        self.n += 1;
        let y = x - self.shift;
        self.sum += y;
        self.sum_sq += y * y;
    }

    /// Combines another tally into this one, as if its values had been added here.
    pub fn merge(&mut self, other: &Tally) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *other;
            return;
        }
        // other's values were shifted by K2; relative to K1 they are y + (K2 - K1)
        let d = other.shift - self.shift;
        let nb = other.n as f64;
        self.sum += other.sum + nb * d;
        self.sum_sq += other.sum_sq + 2.0 * d * other.sum + nb * d * d;
        self.n += other.n;
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The mean (NaN when empty).
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.shift + self.sum / self.n as f64
        }
    }

    /// The unbiased sample variance (NaN below two values).
    pub fn variance(&self) -> f64 {
        if self.n < 2 {
            return f64::NAN;
        }
        let n = self.n as f64;
        let v = (self.sum_sq - self.sum * self.sum / n) / (n - 1.0);
        // rounding can make a zero variance slightly negative; a NaN (overflow) must stay NaN
        if v < 0.0 { 0.0 } else { v }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_equals_one_pass() {
        let values: Vec<f64> = (0..1000)
            .map(|i| 1e9 + ((i * 7919) % 1013) as f64 * 0.001)
            .collect();
        let mut whole = Tally::new();
        values.iter().for_each(|&v| whole.add(v));
        for split in [0, 1, 333, 999, 1000] {
            let (mut a, mut b) = (Tally::new(), Tally::new());
            values[..split].iter().for_each(|&v| a.add(v));
            values[split..].iter().for_each(|&v| b.add(v));
            a.merge(&b);
            assert_eq!(a.count(), whole.count());
            assert!((a.mean() - whole.mean()).abs() < 1e-9, "split {split}");
            assert!(
                (a.variance() / whole.variance() - 1.0).abs() < 1e-9,
                "split {split}"
            );
        }
    }

    #[test]
    fn stays_accurate_under_a_large_offset() {
        let mut t = Tally::new();
        for v in [1e12 + 4.0, 1e12 + 7.0, 1e12 + 13.0, 1e12 + 16.0] {
            t.add(v);
        }
        assert_eq!(t.variance(), 30.0);
        assert_eq!(t.mean(), 1e12 + 10.0);
    }
}
