//! Empirical distributions: samples read from a trace file.

use std::sync::Arc;

use rand::RngExt;

use crate::rng::StreamRng;

/// How an empirical distribution draws from its samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmpiricalMode {
    /// Each draw picks one of the samples uniformly at random (bootstrap).
    Random,
    /// Draws replay the samples in file order, wrapping around at the end.
    Replay,
}

/// Samples from a trace, shared between replications without copying.
#[derive(Clone, Debug)]
pub struct Empirical {
    samples: Arc<[f64]>,
    sorted: Arc<[f64]>,
    mode: EmpiricalMode,
    next: usize,
}

impl Empirical {
    /// Wraps a non-empty list of finite, non-negative samples (checked by the caller).
    pub fn new(samples: Vec<f64>, mode: EmpiricalMode) -> Empirical {
        let mut sorted = samples.clone();
        sorted.sort_by(f64::total_cmp);
        Empirical {
            samples: samples.into(),
            sorted: sorted.into(),
            mode,
            next: 0,
        }
    }

    /// Draws one value.
    #[inline]
    pub fn sample(&mut self, rng: &mut StreamRng) -> f64 {
        match self.mode {
            EmpiricalMode::Random => self.draw(rng),
            EmpiricalMode::Replay => {
                let v = self.samples[self.next];
                self.next = (self.next + 1) % self.samples.len();
                v
            }
        }
    }

    /// Moves the replay cursor to sample `offset` (modulo the sample count): where a
    /// replication's stretch of the trace starts.
    pub fn replay_from(&mut self, offset: u64) {
        self.next = (offset % self.samples.len() as u64) as usize;
    }

    /// The number of samples.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Always false: a trace has at least one sample.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The samples' lag-`k` autocorrelation in file order,
    /// `sum (x_i - m)(x_(i+k) - m) / sum (x_i - m)^2` (0 when the samples are all equal or
    /// fewer than `k + 2`).
    pub fn lag_correlation(&self, k: usize) -> f64 {
        let x = &self.samples;
        if x.len() < k + 2 {
            return 0.0;
        }
        let m = self.mean();
        let var: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
        if var == 0.0 || !var.is_finite() {
            return 0.0;
        }
        x.iter()
            .zip(&x[k..])
            .map(|(a, b)| (a - m) * (b - m))
            .sum::<f64>()
            / var
    }

    /// Draws one of the samples uniformly at random, whatever the mode.
    #[inline]
    pub fn draw(&self, rng: &mut StreamRng) -> f64 {
        self.samples[rng.random_range(0..self.samples.len())]
    }

    /// How it draws.
    pub fn mode(&self) -> EmpiricalMode {
        self.mode
    }

    /// The sample mean.
    pub fn mean(&self) -> f64 {
        mean_of(&self.samples)
    }

    /// The sample SCV (population variance over the squared mean), computed on the samples
    /// divided by their mean so that samples near `f64::MAX` do not overflow.
    pub fn scv(&self) -> f64 {
        let m = self.mean();
        if m == 0.0 {
            return 0.0;
        }
        if m < 1e150 {
            let var = self.samples.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
                / self.samples.len() as f64;
            return var / (m * m);
        }
        self.samples
            .iter()
            .map(|x| (x / m - 1.0) * (x / m - 1.0))
            .sum::<f64>()
            / self.samples.len() as f64
    }

    /// The empirical CDF: the fraction of samples `<= x`.
    pub fn cdf(&self, x: f64) -> f64 {
        self.sorted.partition_point(|&v| v <= x) as f64 / self.sorted.len() as f64
    }

    /// The sample's `E[X^n]`.
    pub fn raw_moment(&self, n: u32) -> f64 {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        self.samples.iter().map(|x| x.powi(n)).sum::<f64>() / self.samples.len() as f64
    }

    /// The samples' mean of `exp(-s x)`: the Laplace-Stieltjes transform of the law that draws
    /// them at random.
    pub fn laplace(&self, s: f64) -> f64 {
        self.samples.iter().map(|x| (-s * x).exp()).sum::<f64>() / self.samples.len() as f64
    }

    /// The `ceil(q n)`-th smallest sample (at least the first), for `q` in `(0, 1)`.
    pub fn quantile(&self, q: f64) -> f64 {
        let rank = (q * self.sorted.len() as f64).ceil() as usize;
        self.sorted[rank.clamp(1, self.sorted.len()) - 1]
    }

    /// The smallest sample.
    pub fn min(&self) -> f64 {
        self.sorted[0]
    }

    /// The largest sample.
    pub fn max(&self) -> f64 {
        self.sorted[self.sorted.len() - 1]
    }
}

/// The mean of finite numbers `>= 0` without overflow: the sum of samples near `f64::MAX` is
/// infinite (and a mean of infinity would scale every sample of a trace to 0), so the samples
/// are divided by the largest first. Equal to the plain sum over the count, to rounding.
pub fn mean_of(samples: &[f64]) -> f64 {
    let largest = samples.iter().copied().fold(0.0, f64::max);
    if largest == 0.0 || samples.is_empty() {
        return 0.0;
    }
    if largest < 1e300 {
        // the sum cannot overflow: the plain sum, the same numbers as always
        return samples.iter().sum::<f64>() / samples.len() as f64;
    }
    samples.iter().map(|x| x / largest).sum::<f64>() / samples.len() as f64 * largest
}
