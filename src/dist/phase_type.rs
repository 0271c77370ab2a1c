//! Phase-type laws given by an initial vector and a sub-generator: the time until a finite
//! continuous-time Markov chain, started in phase `i` with probability `alpha[i]`, leaves its
//! transient phases (Neuts, *Matrix-Geometric Solutions in Stochastic Models*, 1981, ch. 2).

use rand::RngExt;
use rand_distr::Exp1;

use super::spec::DistError;
use crate::analytic::mam::Ph;
use crate::rng::StreamRng;

/// The most phases a phase-type law may have: its CDF costs `O(n^3)` per value.
pub const MAX_PHASES: usize = 64;

/// A checked phase-type law `PH(alpha, T)`: `alpha` sums to 1 (no mass at zero), `T` has a
/// negative diagonal, non-negative off-diagonal entries, row sums `<= 0`, and is non-singular
/// (every phase the chain can reach leads out).
#[derive(Clone, Debug)]
pub struct PhaseLaw {
    /// Cumulative start probabilities, for sampling.
    start: Vec<f64>,
    /// Mean holding time of each phase, `-1 / T[i][i]`.
    hold: Vec<f64>,
    /// Per phase, the cumulative probabilities of moving to phase `0, 1, ...` when it ends; the
    /// rest, up to 1, is absorption.
    moves: Vec<Vec<f64>>,
    /// The law itself (`alpha` and `T`), as the analytic side takes it: moments, transform.
    ph: Ph,
}

impl PhaseLaw {
    /// Checks `alpha` and `generator` (see [`PhaseLaw`]); each problem names its field
    /// (`alpha` or `generator`).
    pub fn new(alpha: &[f64], generator: &[Vec<f64>]) -> Result<PhaseLaw, DistError> {
        let n = alpha.len();
        let bad = |field: &str, message: String| DistError {
            field: field.to_owned(),
            message,
        };
        if n == 0 || n > MAX_PHASES {
            return Err(bad(
                "alpha",
                format!("needs from 1 to {MAX_PHASES} phases, got {n}"),
            ));
        }
        if let Some(p) = alpha.iter().find(|p| !(p.is_finite() && **p >= 0.0)) {
            return Err(bad(
                "alpha",
                format!("holds probabilities: finite and >= 0, got {p}"),
            ));
        }
        let total: f64 = alpha.iter().sum();
        if (total - 1.0).abs() > 1e-9 {
            return Err(bad(
                "alpha",
                format!("must sum to 1 (a phase-type time here has no mass at 0), sums to {total}"),
            ));
        }
        if generator.len() != n || generator.iter().any(|row| row.len() != n) {
            return Err(bad(
                "generator",
                format!(
                    "must be a {n} x {n} matrix (as many phases as alpha has), got {} rows of lengths {:?}",
                    generator.len(),
                    generator.iter().map(Vec::len).collect::<Vec<_>>()
                ),
            ));
        }
        for (i, row) in generator.iter().enumerate() {
            let diagonal = row[i];
            if !(diagonal.is_finite() && diagonal < 0.0) {
                return Err(bad(
                    "generator",
                    format!(
                        "row {}: the diagonal entry is minus the phase's total rate and must be < 0, got {diagonal}",
                        i + 1
                    ),
                ));
            }
            if let Some((j, v)) = row
                .iter()
                .enumerate()
                .find(|&(j, v)| j != i && !(v.is_finite() && *v >= 0.0))
            {
                return Err(bad(
                    "generator",
                    format!(
                        "row {}, column {}: a rate between phases must be finite and >= 0, got {v}",
                        i + 1,
                        j + 1
                    ),
                ));
            }
            let sum: f64 = row.iter().sum();
            if sum > 1e-9 * diagonal.abs() {
                return Err(bad(
                    "generator",
                    format!(
                        "row {}: sums to {sum}; a sub-generator's rows sum to 0 or less (minus the rate of leaving)",
                        i + 1
                    ),
                ));
            }
        }
        let ph = Ph::new(alpha.to_vec(), generator.to_vec()).map_err(|e| {
            bad(
                "generator",
                format!("is singular: some phase the chain can reach never leads out (every phase needs a way, direct or through others, to end): {e}"),
            )
        })?;
        Ok(PhaseLaw {
            start: cumulative_to_one(alpha),
            hold: (0..n).map(|i| -1.0 / generator[i][i]).collect(),
            moves: (0..n)
                .map(|i| {
                    let rate = -generator[i][i];
                    let p: Vec<f64> = (0..n)
                        .map(|j| if j == i { 0.0 } else { generator[i][j] / rate })
                        .collect();
                    cumulative(&p)
                })
                .collect(),
            ph,
        })
    }

    /// Draws a time: the phases' exponential holding times until absorption.
    pub fn draw(&self, rng: &mut StreamRng) -> f64 {
        let mut phase = pick(&self.start, rng.random::<f64>()).unwrap_or(self.start.len() - 1);
        let mut t = 0.0;
        loop {
            t += self.hold[phase] * rng.sample::<f64, _>(Exp1);
            match pick(&self.moves[phase], rng.random::<f64>()) {
                Some(next) => phase = next,
                None => return t,
            }
        }
    }

    /// The law as the analytic side takes it.
    pub fn ph(&self) -> &Ph {
        &self.ph
    }

    /// `E[X^k] = k! alpha (-T)^(-k) 1` for `k >= 1`.
    pub fn raw_moment(&self, k: u32) -> f64 {
        self.ph.moment(k).unwrap_or(f64::INFINITY)
    }

    /// The squared coefficient of variation, `E[X^2] / E[X]^2 - 1`.
    pub fn scv(&self) -> f64 {
        let m = self.raw_moment(1);
        (self.raw_moment(2) / (m * m) - 1.0).max(0.0)
    }

    /// `P(X <= x) = 1 - alpha exp(T x) 1`.
    pub fn cdf(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        let row = self.after(x);
        (1.0 - row.iter().sum::<f64>()).clamp(0.0, 1.0)
    }

    /// The density `alpha exp(T x) t`, `t = -T 1` the exit rates.
    pub fn density(&self, x: f64) -> f64 {
        if x < 0.0 {
            return 0.0;
        }
        let row = if x == 0.0 {
            self.ph.alpha().to_vec()
        } else {
            self.after(x)
        };
        row.iter()
            .zip(self.ph.exit_rates())
            .map(|(p, e)| p * e)
            .sum()
    }

    /// The phase distribution at time `x` of the chain not yet absorbed, `alpha exp(T x)`, by
    /// scaling and squaring: `exp(T x / 2^m)` by its Taylor series with the scaled norm at most
    /// 1/2, then squared `m` times (every entry of `exp(T x)` is non-negative, so the squarings
    /// lose nothing to cancellation).
    fn after(&self, x: f64) -> Vec<f64> {
        let (alpha, generator) = (self.ph.alpha(), self.ph.t());
        let n = alpha.len();
        let norm = generator
            .iter()
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max)
            * x;
        let squarings = if norm > 0.5 {
            (norm / 0.5).log2().ceil().min(1100.0) as i32
        } else {
            0
        };
        let scale = x / 2f64.powi(squarings);
        let a: Vec<f64> = generator.iter().flatten().map(|v| v * scale).collect();
        // Taylor: sum_k A^k / k!, to where the terms vanish at norm <= 1/2 (18 terms: 2^-18/18!)
        let mut sum = identity(n);
        let mut term = identity(n);
        for k in 1..=18 {
            term = multiply(&term, &a, n);
            let inv = 1.0 / f64::from(k);
            term.iter_mut().for_each(|v| *v *= inv);
            sum.iter_mut().zip(&term).for_each(|(s, t)| *s += t);
        }
        for _ in 0..squarings {
            sum = multiply(&sum, &sum, n);
            sum.iter_mut().for_each(|v| *v = v.max(0.0));
        }
        (0..n)
            .map(|j| (0..n).map(|i| alpha[i] * sum[i * n + j]).sum::<f64>())
            .map(|v| v.max(0.0))
            .collect()
    }
}

/// The cumulative sums of probabilities that sum to 1 up to rounding, ending exactly at 1 from
/// the last positive one on (so that no draw falls past the end).
pub(super) fn cumulative_to_one(p: &[f64]) -> Vec<f64> {
    let mut c = cumulative(p);
    if let Some(last) = p.iter().rposition(|&v| v > 0.0) {
        c[last..].iter_mut().for_each(|v| *v = 1.0);
    }
    c
}

fn cumulative(p: &[f64]) -> Vec<f64> {
    p.iter()
        .scan(0.0, |acc, v| {
            *acc += v;
            Some(*acc)
        })
        .collect()
}

/// The first index whose cumulative probability exceeds `u`, skipping zero-width entries;
/// `None` past the last (the mass left over).
pub(super) fn pick(cumulative: &[f64], u: f64) -> Option<usize> {
    let i = cumulative.partition_point(|&c| c <= u);
    (i < cumulative.len()).then_some(i)
}

fn identity(n: usize) -> Vec<f64> {
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        m[i * n + i] = 1.0;
    }
    m
}

fn multiply(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = a[i * n + k];
            if aik != 0.0 {
                for j in 0..n {
                    c[i * n + j] += aik * b[k * n + j];
                }
            }
        }
    }
    c
}
