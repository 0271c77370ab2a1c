//! The MSER-5 warm-up rule (White 1997; Franklin & White 2008).
//!
//! Observations are averaged in batches of 5 and the truncation point `d` (in batches) is the
//! one that minimises `MSER(d) = sum_{i>d} (Y_i - mean_d)^2 / (k - d)^2` over `d <= k/2`, where
//! `Y_i` are the batch means and `mean_d` the mean of the batches after `d`. To keep memory
//! bounded, at most [`MAX_BATCHES`] batch means are kept: when the store is full, neighbours are
//! averaged in pairs and the batch size doubles (5, 10, 20, ...), which only coarsens the
//! truncation point.

/// Most batch means kept.
pub const MAX_BATCHES: usize = 4096;

/// A bounded series of batch means and the MSER truncation rule over it.
#[derive(Clone, Debug)]
pub struct Mser {
    batches: Vec<f64>,
    batch_size: u64,
    partial_sum: f64,
    partial_count: u64,
}

impl Default for Mser {
    fn default() -> Self {
        Mser {
            batches: Vec::with_capacity(MAX_BATCHES),
            batch_size: 5,
            partial_sum: 0.0,
            partial_count: 0,
        }
    }
}

/// The truncation point found by MSER.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Truncation {
    /// Observations to discard.
    pub observations: u64,
    /// Observations seen in all.
    pub total: u64,
    /// True when the minimum lay at the `k/2` limit: the run was probably too short to reach a
    /// steady state, and the cut is a lower bound.
    pub at_limit: bool,
}

impl Mser {
    /// An empty series.
    pub fn new() -> Mser {
        Mser::default()
    }

    /// Adds one observation.
    #[inline]
    pub fn add(&mut self, x: f64) {
        self.partial_sum += x;
        self.partial_count += 1;
        if self.partial_count == self.batch_size {
            self.batches.push(self.partial_sum / self.batch_size as f64);
            self.partial_sum = 0.0;
            self.partial_count = 0;
            if self.batches.len() == MAX_BATCHES {
                self.coarsen();
            }
        }
    }

    fn coarsen(&mut self) {
        let half = self.batches.len() / 2;
        for i in 0..half {
            self.batches[i] = 0.5 * (self.batches[2 * i] + self.batches[2 * i + 1]);
        }
        self.batches.truncate(half);
        self.batch_size *= 2;
    }

    /// The MSER truncation point over the completed batches (`None` below 10 batches).
    pub fn truncation(&self) -> Option<Truncation> {
        let k = self.batches.len();
        if k < 10 {
            return None;
        }
        // suffix sums of Y and Y^2 give each MSER(d) in O(1)
        let (mut s1, mut s2) = (0.0, 0.0);
        let mut best = (f64::INFINITY, 0);
        let mut suffix = vec![(0.0, 0.0); k + 1];
        for i in (0..k).rev() {
            s1 += self.batches[i];
            s2 += self.batches[i] * self.batches[i];
            suffix[i] = (s1, s2);
        }
        for (d, &(s1, s2)) in suffix.iter().enumerate().take(k / 2 + 1) {
            let m = (k - d) as f64;
            let sse = (s2 - s1 * s1 / m).max(0.0);
            let stat = sse / (m * m);
            if stat < best.0 {
                best = (stat, d);
            }
        }
        let total = k as u64 * self.batch_size + self.partial_count;
        Some(Truncation {
            observations: best.1 as u64 * self.batch_size,
            total,
            at_limit: best.1 == k / 2,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_an_initial_transient_and_nothing_from_a_stationary_series() {
        let mut m = Mser::new();
        let noise = |i: u64| ((i * 2654435761) % 1000) as f64 / 1000.0 - 0.5;
        for i in 0..10_000 {
            let transient = if i < 1000 {
                10.0 * (1.0 - i as f64 / 1000.0)
            } else {
                0.0
            };
            m.add(5.0 + transient + noise(i));
        }
        let t = m.truncation().unwrap();
        assert!(t.observations >= 700 && t.observations <= 1500, "{t:?}");
        assert!(!t.at_limit);

        let mut s = Mser::new();
        (0..10_000).for_each(|i| s.add(5.0 + noise(i)));
        assert!(s.truncation().unwrap().observations < 1000);
    }

    #[test]
    fn memory_stays_bounded_by_coarsening() {
        let mut m = Mser::new();
        (0..1_000_000).for_each(|i| m.add(f64::from(i % 7)));
        assert!(m.batches.len() <= MAX_BATCHES);
        assert_eq!(m.truncation().unwrap().total, 1_000_000);
    }
}
