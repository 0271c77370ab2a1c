//! Fitting phase-type laws and MMPP(2) arrival processes to a measured sample of inter-arrival
//! (or service) times.
//!
//! - [`SampleStats`]: moments, autocorrelations and their geometric decay, in `O(n K)`.
//! - [`ph_from_two_moments`], [`ph_from_three_moments`]: a [`Ph`] matching two moments
//!   (Tijms' Erlang mixture, exponential, balanced H2) or three (H2, or the minimal acyclic PH
//!   of Bobbio, Horvath and Telek), falling back to two when three cannot be matched.
//! - [`ks_distance`]: the Kolmogorov-Smirnov distance between a sorted sample and a [`Ph`].
//! - [`fit_mmpp2`]: an MMPP(2) matching the mean, SCV, third moment and the autocorrelations
//!   (or their decay), in closed form, with a least-squares fallback.
//! - [`map2_from_moments`]: the MAP(2) matching three moments and the lag-1 autocorrelation
//!   (the canonical form of Bodrog, Heindl, Horvath and Telek).

use argmin::core::{CostFunction, Error as ArgminError, Executor};
use argmin::solver::neldermead::NelderMead;
use serde::Serialize;

use super::MAX_PHASES;
use super::dense::Dense;
use super::map::Map;
use super::ph::{Ph, invalid};
use crate::analytic::check;
use crate::analytic::error::{AnalyticError, Result};

// ---------------------------------------------------------------------------------------------
// Sample statistics
// ---------------------------------------------------------------------------------------------

/// Summary statistics of a sample of times `x_1, ..., x_n`, taken in the order given (the
/// autocorrelations are those of successive values).
///
/// Moments use the divisor `n` (they are the moments of the sample's empirical law, so they
/// always satisfy the moment inequalities of some distribution). Built by
/// [`SampleStats::new`] in `O(n K)` time for `K` lags (some 30 ms for `n = 10^6`, `K = 50`
/// in a release build).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleStats {
    /// Number of samples `n`.
    pub n: usize,
    /// The mean `m = sum x_i / n`.
    pub mean: f64,
    /// The raw second moment `sum x_i^2 / n`.
    pub moment2: f64,
    /// The raw third moment `sum x_i^3 / n`.
    pub moment3: f64,
    /// The squared coefficient of variation `v / m^2`, `v = sum (x_i - m)^2 / n`.
    pub scv: f64,
    /// The skewness `(sum (x_i - m)^3 / n) / v^{3/2}`; 0 when `v = 0`.
    pub skewness: f64,
    /// `autocorrelations[k - 1]` is the lag-`k` estimate
    /// `rho_k = sum_{i <= n-k} (x_i - m)(x_{i+k} - m) / sum_i (x_i - m)^2`, for `k = 1..=K`
    /// (all 0 when `v = 0`).
    pub autocorrelations: Vec<f64>,
    /// The 95% band of a white-noise sample, `1.96 / sqrt(n)`: estimates inside it are not
    /// told apart from 0.
    pub white_noise_band: f64,
    /// How many lags, from lag 1 on, are clearly significant: the longest run `1..=L` with
    /// `|rho_k| > 2 * white_noise_band` and the sign pattern of a geometric sequence (all
    /// of `rho_1`'s sign, or alternating when `rho_2` has the other sign). 0 when `rho_1`
    /// itself is not.
    pub significant_lags: usize,
    /// The geometric decay `gamma` of the autocorrelations (`rho_{k+1} = gamma rho_k`, exact
    /// for every two-phase MAP: `rho_k = rho_1 gamma^{k-1}`), estimated over the
    /// [`significant_lags`](Self::significant_lags) by a weighted least-squares line through
    /// `ln |rho_k|` against `k`, with weights `rho_k^2` (the delta method:
    /// `Var ln |rho_k| ~ Var rho_k / rho_k^2`, and `Var rho_k` about the same at every lag);
    /// `gamma = +- exp(slope)`, negative when the lags alternate. `None` with fewer than two
    /// significant lags.
    pub decay: Option<f64>,
}

impl SampleStats {
    /// Statistics of `samples` with autocorrelations at lags `1..=max_lag`.
    ///
    /// Errors: `InvalidParameter` for fewer than 2 samples, `max_lag >= n`, a negative or
    /// non-finite sample (naming its index), or a mean of 0 (every sample 0).
    pub fn new(samples: &[f64], max_lag: usize) -> Result<Self> {
        let n = samples.len();
        if n < 2 {
            return Err(invalid("sample size (at least 2)", n as f64));
        }
        if max_lag >= n {
            return Err(invalid(
                "autocorrelation lags (fewer than the samples)",
                max_lag as f64,
            ));
        }
        let mut sum = 0.0;
        for (i, &x) in samples.iter().enumerate() {
            if !(x.is_finite() && x >= 0.0) {
                return Err(invalid(&format!("sample {i} (finite, >= 0)"), x));
            }
            sum += x;
        }
        let nf = n as f64;
        let mean = sum / nf;
        if mean <= 0.0 {
            return Err(invalid("sample mean (every sample is 0)", mean));
        }
        let centred: Vec<f64> = samples.iter().map(|&x| x - mean).collect();
        let (mut s2, mut s3) = (0.0, 0.0);
        for &d in &centred {
            s2 += d * d;
            s3 += d * d * d;
        }
        let (var, third) = (s2 / nf, s3 / nf);
        let autocorrelations: Vec<f64> = (1..=max_lag)
            .map(|k| {
                if s2 > 0.0 {
                    lagged_products(&centred, k) / s2
                } else {
                    0.0
                }
            })
            .collect();
        let white_noise_band = 1.96 / nf.sqrt();
        let (significant_lags, decay) = decay_estimate(&autocorrelations, white_noise_band);
        Ok(Self {
            n,
            mean,
            moment2: var + mean * mean,
            moment3: third + 3.0 * mean * var + mean * mean * mean,
            scv: var / (mean * mean),
            skewness: if var > 0.0 {
                third / var.powf(1.5)
            } else {
                0.0
            },
            autocorrelations,
            white_noise_band,
            significant_lags,
            decay,
        })
    }
}

/// `sum_i d_i d_{i+k}`, in four running sums (so that the loop vectorises).
fn lagged_products(d: &[f64], k: usize) -> f64 {
    let (a, b) = (&d[..d.len() - k], &d[k..]);
    let mut acc = [0.0; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for j in 0..4 {
            acc[j] += x[j] * y[j];
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// The significant run of lags and the decay fitted over it (see [`SampleStats::decay`]).
fn decay_estimate(acf: &[f64], band: f64) -> (usize, Option<f64>) {
    let threshold = 2.0 * band;
    let Some(&first) = acf.first() else {
        return (0, None);
    };
    if first.abs() <= threshold {
        return (0, None);
    }
    let alternating = acf.get(1).is_some_and(|&r| r * first < 0.0);
    let mut lags = 1;
    for (i, &r) in acf.iter().enumerate().skip(1) {
        let flips = alternating && i % 2 == 1;
        let same_sign = (r * first > 0.0) != flips;
        if r.abs() <= threshold || !same_sign {
            break;
        }
        lags = i + 1;
    }
    if lags < 2 {
        return (lags, None);
    }
    let (mut sw, mut swx, mut swy, mut swxx, mut swxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (i, &r) in acf[..lags].iter().enumerate() {
        let (w, x, y) = (r * r, (i + 1) as f64, r.abs().ln());
        sw += w;
        swx += w * x;
        swy += w * y;
        swxx += w * x * x;
        swxy += w * x * y;
    }
    let slope = (sw * swxy - swx * swy) / (sw * swxx - swx * swx);
    let gamma = slope.exp();
    (lags, Some(if alternating { -gamma } else { gamma }))
}

// ---------------------------------------------------------------------------------------------
// Phase-type laws from moments
// ---------------------------------------------------------------------------------------------

/// The structure of a phase-type law fitted by [`ph_from_two_moments`] or
/// [`ph_from_three_moments`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PhForm {
    /// The exponential law (SCV 1): one phase.
    Exponential,
    /// Tijms' mixture of Erlang(`k - 1`) and Erlang(`k`) with a common rate, for
    /// `1/k <= SCV <= 1/(k - 1)`: `k` phases.
    ErlangMixture {
        /// Phases of the longer Erlang.
        k: usize,
    },
    /// The two-phase hyperexponential law with balanced means ([`Ph::h2_balanced`]), SCV > 1.
    BalancedH2,
    /// The two-phase hyperexponential law matching three moments.
    H2,
    /// The minimal acyclic phase-type law of Bobbio, Horvath and Telek (2005) matching three
    /// moments.
    Acyclic {
        /// Number of phases (the least any acyclic PH matching the moments has).
        phases: usize,
    },
}

/// A phase-type law fitted to moments, with what it matches.
#[derive(Debug, Clone, PartialEq)]
pub struct PhFit {
    /// The law.
    pub ph: Ph,
    /// Its structure.
    pub form: PhForm,
    /// How many moments it matches (2 or 3), to rounding: `E[X], E[X^2]` and, for 3,
    /// `E[X^3]`.
    pub moments_matched: u8,
    /// Why three moments were asked for and only two matched; `None` otherwise.
    pub fallback: Option<String>,
}

/// A phase-type law of mean `mean` and squared coefficient of variation `scv`, matching these
/// two moments exactly:
///
/// - `scv < 1`: Tijms' mixture (Tijms, *Stochastic Models: An Algorithmic Approach*, 1994,
///   and *A First Course in Stochastic Models*, 2003, 2.3.1): for `1/k <= scv <= 1/(k-1)`,
///   Erlang(`k - 1`) with probability `p` and Erlang(`k`) otherwise, a common rate `mu`,
///   `p = (k scv - sqrt(k (1 + scv) - k^2 scv)) / (1 + scv)`, `mu = (k - p) / mean`;
///   `k` phases in one chain, entered at the first phase or the second;
/// - `scv = 1` (within `1e-12`): the exponential law;
/// - `scv > 1`: the balanced-means H2 ([`Ph::h2_balanced`]).
///
/// Errors: `InvalidParameter` for a mean not finite and positive, a non-finite `scv`, or
/// `scv < 1 / MAX_PHASES` (an Erlang mixture would need more than [`MAX_PHASES`] phases;
/// `scv = 0`, a constant, is no phase-type law at all).
pub fn ph_from_two_moments(mean: f64, scv: f64) -> Result<PhFit> {
    let mean = check::positive("mean", mean)?;
    let scv = check::finite("scv", scv)?;
    let (ph, form) = two_moment_law(mean, scv)?;
    Ok(PhFit {
        ph,
        form,
        moments_matched: 2,
        fallback: None,
    })
}

/// The law of [`ph_from_two_moments`] and its form.
fn two_moment_law(mean: f64, scv: f64) -> Result<(Ph, PhForm)> {
    if (scv - 1.0).abs() <= 1e-12 {
        return Ok((Ph::exponential(1.0 / mean)?, PhForm::Exponential));
    }
    if scv > 1.0 {
        return Ok((Ph::h2_balanced(mean, scv)?, PhForm::BalancedH2));
    }
    if scv * (MAX_PHASES as f64) < 1.0 - 1e-12 {
        return Err(invalid(
            "scv (below 1/MAX_PHASES: an Erlang mixture would need more than 64 phases)",
            scv,
        ));
    }
    // the least k with k scv >= 1, an integer 1/scv within rounding taken as exact
    let k = ((1.0 / scv) - 1e-9).ceil().max(2.0) as usize;
    let kf = k as f64;
    let root = (kf * (1.0 + scv) - kf * kf * scv).max(0.0).sqrt();
    let p = ((kf * scv - root) / (1.0 + scv)).clamp(0.0, 1.0);
    let mu = (kf - p) / mean;
    let mut alpha = vec![0.0; k];
    alpha[0] = 1.0 - p;
    alpha[1] += p;
    Ok((
        Ph::new(alpha, chain(&vec![mu; k]))?,
        PhForm::ErlangMixture { k },
    ))
}

/// The sub-generator of phases in series, phase `i` left at `rates[i]` to phase `i + 1` (the
/// last to absorption).
fn chain(rates: &[f64]) -> Vec<Vec<f64>> {
    let n = rates.len();
    (0..n)
        .map(|i| {
            let mut row = vec![0.0; n];
            row[i] = -rates[i];
            if i + 1 < n {
                row[i + 1] = rates[i];
            }
            row
        })
        .collect()
}

/// A phase-type law matching the raw moments `m1 = E[X]`, `m2 = E[X^2]`, `m3 = E[X^3]`, when
/// one of at most [`MAX_PHASES`] phases can, else the law of [`ph_from_two_moments`] with the
/// reason in [`PhFit::fallback`]:
///
/// - The moments of an Erlang-`k` (SCV `1/k` and `m3 = (k+2)/k m1 m2`, within `1e-12`,
///   `k <= MAX_PHASES`): that law, the exponential for `k = 1` (order `k`'s region of
///   moments is this single point).
/// - SCV > 1 and `m3 > 3 m2^2 / (2 m1)` (the H2 region: Whitt, "Approximating a point process
///   by a renewal process, I", Oper. Res. 30, 1982; Telek and Heindl, "Moment bounds for
///   acyclic discrete and continuous phase-type distributions of second order", UKPEW 2002):
///   the H2 `p Exp(mu_1) + (1 - p) Exp(mu_2)`. Its transform
///   `(c s + delta) / (s^2 + tau s + delta)` expanded against the moments gives
///   `-m1 tau + (m2/2) delta = -1` and `(m2/2) tau - (m3/6) delta = m1`, so `mu_1, mu_2` are
///   the roots of `x^2 - tau x + delta` and `p = (m1 - 1/mu_2) / (1/mu_1 - 1/mu_2)`.
/// - Otherwise the minimal acyclic PH of Bobbio, Horvath and Telek, "Matching three moments
///   with minimal acyclic phase type distributions", Stochastic Models 21, 2005: the least
///   order `n` whose moment bounds (their Theorems on the normalised moments
///   `n2 = m2/m1^2 >= (n+1)/n` and `l(n) < n3 = m3/(m1 m2) < u(n)`) contain the moments,
///   then their closed form for `n2 > 2` or `n3 < 2 n2 - 1` (an Erlang(`n - 1`) entered with
///   probability `p`, followed by one exponential phase) and otherwise the real roots of their
///   quartic (one exponential phase entered with probability `p`, followed by an
///   Erlang(`n - 1`)). The formulas follow the paper as implemented in BuTools'
///   `APHFrom3Moments`.
///
/// The closed forms lose digits near the borders of their regions; a few Newton steps on the
/// three moment equations then bring the moments back to rounding, and a law whose moments
/// still miss by more than `1e-10` (relative) is not returned as a three-moment fit.
///
/// Three moments cannot be matched within [`MAX_PHASES`] phases when `m3` is too close to
/// the least third moment of any law with these `m1, m2` (`m2^2 / m1`, by Cauchy-Schwarz;
/// an acyclic PH of order `n` needs at least about `(n+1)/n` times it), or, for an SCV close
/// to `1/64`, outside the narrow range that 64 phases allow.
///
/// Errors: `InvalidParameter` for moments that are not finite and positive, `m2 < m1^2`, or
/// an SCV that [`ph_from_two_moments`] refuses.
pub fn ph_from_three_moments(m1: f64, m2: f64, m3: f64) -> Result<PhFit> {
    let m1 = check::positive("first moment", m1)?;
    let m2 = check::positive("second moment", m2)?;
    let m3 = check::positive("third moment", m3)?;
    let scv = m2 / (m1 * m1) - 1.0;
    if scv < 0.0 {
        return Err(invalid(
            "second moment (below the first moment squared)",
            m2,
        ));
    }
    let target = [m1, m2, m3];
    match three_moment_law(target, scv) {
        Ok((ph, form)) => Ok(PhFit {
            ph,
            form,
            moments_matched: 3,
            fallback: None,
        }),
        Err(reason) => {
            let (ph, form) = two_moment_law(m1, scv)?;
            Ok(PhFit {
                ph,
                form,
                moments_matched: 2,
                fallback: Some(format!(
                    "third moment {m3} not matched ({reason}); mean and SCV matched"
                )),
            })
        }
    }
}

/// A law matching `target` exactly, or why there is none here.
fn three_moment_law(target: [f64; 3], scv: f64) -> std::result::Result<(Ph, PhForm), String> {
    let [m1, m2, m3] = target;
    let built = |three: Three, form: PhForm| {
        let three = three.polish(target);
        let got = three.moments();
        let worst = (0..3)
            .map(|i| (got[i] / target[i] - 1.0).abs())
            .fold(0.0, f64::max);
        if worst > 1e-10 {
            return Err(format!(
                "the closed form misses the moments by {worst:.1e} (relative)"
            ));
        }
        three.ph().map(|ph| (ph, form)).map_err(|e| e.to_string())
    };
    // Erlang-k: n2 = (k+1)/k and n3 = m3/(m1 m2) = (k+2)/k, so k = 1/scv
    let k = (1.0 / scv).round();
    let n3 = m3 / (m1 * m2);
    if (1.0..=MAX_PHASES as f64).contains(&k)
        && (scv * k - 1.0).abs() <= 1e-12
        && (n3 * k / (k + 2.0) - 1.0).abs() <= 1e-12
    {
        let erlang = if k == 1.0 {
            Ph::exponential(1.0 / m1).map(|ph| (ph, PhForm::Exponential))
        } else {
            let k = k as usize;
            Ph::erlang(k, k as f64 / m1).map(|ph| (ph, PhForm::Acyclic { phases: k }))
        };
        return erlang.map_err(|e| e.to_string());
    }
    if m3 * m1 <= m2 * m2 {
        return Err(format!(
            "no law has m3 <= m2^2/m1 = {} (Cauchy-Schwarz)",
            m2 * m2 / m1
        ));
    }
    if scv > 1.0
        && m3 > 1.5 * m2 * m2 / m1
        && let Some(h2) = h2_from_three_moments(target)
        && let Ok(fit) = built(h2, PhForm::H2)
    {
        return Ok(fit);
    }
    let mut reason = format!("an acyclic PH matching it needs more than {MAX_PHASES} phases");
    for n in (2..=MAX_PHASES).filter(|&n| aph_order_admits(target, n)) {
        reason = format!("no valid acyclic PH of order {n} found");
        for three in aph_from_three_moments(target, n) {
            match built(three, PhForm::Acyclic { phases: n }) {
                Ok(fit) => return Ok(fit),
                Err(why) => reason = why,
            }
        }
    }
    Err(reason)
}

/// Whether the acyclic PH of order `n` can match `m1, m2, m3` (Bobbio, Horvath and Telek's
/// bounds), with a margin of `1e-9` (relative) inside the third-moment bounds: on a bound
/// itself a rate of the law goes to infinity.
fn aph_order_admits([m1, m2, m3]: [f64; 3], n: usize) -> bool {
    m2 >= aph_second_moment_lower_bound(m1, n)
        && aph_third_moment_lower_bound(m1, m2, n) * (1.0 + 1e-9) < m3
        && m3 < aph_third_moment_upper_bound(m1, m2, n) * (1.0 - 1e-9)
}

/// The H2 matching three moments, when it exists (see [`ph_from_three_moments`]).
fn h2_from_three_moments([m1, m2, m3]: [f64; 3]) -> Option<Three> {
    let (tau, delta) = order_two_denominator(m1, m2, m3)?;
    let disc = tau * tau - 4.0 * delta;
    if !(disc > 0.0 && delta > 0.0) {
        return None;
    }
    let fast = (tau + disc.sqrt()) / 2.0;
    let slow = delta / fast;
    let p = (m1 - 1.0 / slow) / (1.0 / fast - 1.0 / slow);
    let three = Three {
        shape: Shape::Mixture,
        p,
        a: fast,
        b: slow,
    };
    three.valid().then_some(three)
}

/// `tau` and `delta` of the denominator `s^2 + tau s + delta` of the transform of an order-2
/// matrix-exponential law with moments `m1, m2, m3`:
/// `-m1 tau + (m2/2) delta = -1`, `(m2/2) tau - (m3/6) delta = m1`.
fn order_two_denominator(m1: f64, m2: f64, m3: f64) -> Option<(f64, f64)> {
    let det = m1 * m3 / 6.0 - m2 * m2 / 4.0;
    if det <= 0.0 {
        return None;
    }
    let tau = (m3 / 6.0 - m1 * m2 / 2.0) / det;
    let delta = (m2 / 2.0 - m1 * m1) / det;
    (tau.is_finite() && delta.is_finite()).then_some((tau, delta))
}

/// The least second moment of an acyclic PH of order `n` and mean `m1`,
/// `(n+1)/n m1^2` (Bobbio, Horvath and Telek 2005).
fn aph_second_moment_lower_bound(m1: f64, n: usize) -> f64 {
    let n = n as f64;
    m1 * m1 * (n + 1.0) / n
}

/// The least third moment (an infimum) of an acyclic PH of order `n >= 2` with moments
/// `m1, m2` (Bobbio, Horvath and Telek 2005); infinite when `m2` is below its own bound.
fn aph_third_moment_lower_bound(m1: f64, m2: f64, n: usize) -> f64 {
    let n2 = m2 / (m1 * m1);
    let n = n as f64;
    if n2 < (n + 1.0) / n {
        return f64::INFINITY;
    }
    if n2 < (n + 4.0) / (n + 1.0) {
        let p = ((n + 1.0) * (n2 - 2.0)) / (3.0 * n2 * (n - 1.0))
            * (-2.0 * (n + 1.0).sqrt() / (4.0 * n + 4.0 - 3.0 * n * n2).sqrt() - 1.0);
        let root = (p * p + p * n * (n2 - 2.0) / (n - 1.0)).max(0.0).sqrt();
        let a = (n2 - 2.0) / (p * (1.0 - n2) + root);
        let l = ((3.0 + a) * (n - 1.0) + 2.0 * a) / ((n - 1.0) * (1.0 + a * p))
            - (2.0 * a * (n + 1.0)) / (2.0 * (n - 1.0) + a * p * (n * a + 2.0 * n - 2.0));
        l * m1 * m2
    } else {
        (n + 1.0) / n * n2 * m1 * m2
    }
}

/// The greatest third moment (a supremum) of an acyclic PH of order `n >= 2` with moments
/// `m1, m2` (Bobbio, Horvath and Telek 2005); infinite for `n2 > n/(n-1)`.
fn aph_third_moment_upper_bound(m1: f64, m2: f64, n: usize) -> f64 {
    let n2 = m2 / (m1 * m1);
    let n = n as f64;
    if n2 < (n + 1.0) / n {
        return f64::NEG_INFINITY;
    }
    if n2 <= n / (n - 1.0) {
        let root = (1.0 + n * (n2 - 2.0) / (n - 1.0)).max(0.0).sqrt();
        m1 * m2
            * (2.0 * (n - 2.0) * (n * n2 - n - 1.0) * root
                + (n + 2.0) * (3.0 * n * n2 - 2.0 * n - 2.0))
            / (n * n * n2)
    } else {
        f64::INFINITY
    }
}

/// The acyclic PHs of order `n` that Bobbio, Horvath and Telek (2005, Section 4) give for
/// three moments inside the bounds of order `n`, the structure their theorem picks first: for
/// `n2 > 2` or `n3 < 2 n2 - 1` an Erlang(`n - 1`) entered with probability `p` then one
/// exponential phase, otherwise one exponential phase entered with probability `p` then an
/// Erlang(`n - 1`). The other structure follows, for moments that rounding puts on the wrong
/// side of the border between the two (an Erlang law sits on it).
fn aph_from_three_moments([m1, m2, m3]: [f64; 3], n: usize) -> Vec<Three> {
    let n2 = m2 / (m1 * m1);
    let n3 = m3 / (m1 * m2);
    let nf = n as f64;
    let mut first = Vec::new();
    // Erlang(n-1) of rate mu with probability p, then an exponential of rate lambda
    let inner = 12.0 * n2 * n2 * (nf + 1.0)
        + 16.0 * n3 * (nf + 1.0)
        + n2 * (nf * (n3 - 15.0) * (n3 + 1.0) - 8.0 * (n3 + 3.0));
    let b = 2.0 * (4.0 - nf * (3.0 * n2 - 4.0))
        / (n2 * (4.0 + nf - nf * n3) + (nf * n2).sqrt() * inner.max(0.0).sqrt());
    let a = (b * n2 - 2.0) * (nf - 1.0) * b / ((b - 1.0) * nf);
    let p = (b - 1.0) / a;
    let lambda = (p * a + 1.0) / m1;
    let mu = (nf - 1.0) * lambda / a;
    first.push(Three {
        shape: Shape::Sum {
            always: 1,
            maybe: n - 1,
        },
        p,
        a: lambda,
        b: mu,
    });
    // an exponential of rate lambda with probability p, then Erlang(n-1) of rate mu, for a
    // real root f of their quartic
    let c4 = n2 * (3.0 * n2 - 2.0 * n3) * (nf - 1.0) * (nf - 1.0);
    let c3 = 2.0 * n2 * (n3 - 3.0) * (nf - 1.0) * (nf - 1.0);
    let c2 = 6.0 * (nf - 1.0) * (nf - n2);
    let c1 = 4.0 * nf * (2.0 - nf);
    let c0 = nf * (nf - 2.0);
    let mut second: Vec<Three> = real_roots(&[c0, c1, c2, c3, c4])
        .into_iter()
        .filter_map(|f| {
            let den = (nf - 1.0) * (n2 * f * f - 2.0 * f + 2.0) - nf;
            if den == 0.0 {
                return None;
            }
            let a = 2.0 * (f - 1.0) * (nf - 1.0) / den;
            let p = (f - 1.0) * a;
            let lambda = (a + p) / m1;
            let mu = (nf - 1.0) / (m1 - p / lambda);
            Some(Three {
                shape: Shape::Sum {
                    always: n - 1,
                    maybe: 1,
                },
                p,
                a: mu,
                b: lambda,
            })
        })
        .collect();
    if !(n2 > 2.0 || n3 < 2.0 * n2 - 1.0) {
        std::mem::swap(&mut first, &mut second);
    }
    first.extend(second);
    first.retain(Three::valid);
    first
}

/// The real roots of `sum_i c[i] x^i`, each found by bisection between consecutive real roots
/// of the derivative (found the same way), inside Cauchy's bound `1 + max |c_i / c_d|`.
fn real_roots(c: &[f64]) -> Vec<f64> {
    let mut c = c.to_vec();
    while c.len() > 1 && c.last() == Some(&0.0) {
        c.pop();
    }
    let d = c.len() - 1;
    match d {
        0 => return Vec::new(),
        1 => return vec![-c[0] / c[1]],
        _ => {}
    }
    let eval = |x: f64| c.iter().rev().fold(0.0, |acc, &ci| acc * x + ci);
    let derivative: Vec<f64> = (1..=d).map(|i| i as f64 * c[i]).collect();
    let bound = 1.0 + c[..d].iter().map(|v| (v / c[d]).abs()).fold(0.0, f64::max);
    let mut edges = vec![-bound];
    edges.extend(
        real_roots(&derivative)
            .into_iter()
            .filter(|x| x.abs() < bound),
    );
    edges.push(bound);
    let mut roots = Vec::new();
    for w in edges.windows(2) {
        let (mut lo, mut hi) = (w[0], w[1]);
        let (f_lo, f_hi) = (eval(lo), eval(hi));
        if f_lo == 0.0 {
            roots.push(lo);
            continue;
        }
        if f_hi == 0.0 || (f_lo < 0.0) == (f_hi < 0.0) {
            continue;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if (eval(mid) < 0.0) == (f_lo < 0.0) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        roots.push(0.5 * (lo + hi));
    }
    if eval(bound) == 0.0 {
        roots.push(bound);
    }
    roots
}

/// The three-parameter laws of the three-moment fits.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// `p Exp(a) + (1 - p) Exp(b)`.
    Mixture,
    /// Erlang(`always`) of rate `a`, plus, with probability `p`, an independent
    /// Erlang(`maybe`) of rate `b`.
    Sum { always: usize, maybe: usize },
}

/// A law of [`Shape`] with its probability and two rates.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Three {
    shape: Shape,
    p: f64,
    a: f64,
    b: f64,
}

impl Three {
    fn valid(&self) -> bool {
        (0.0..=1.0).contains(&self.p)
            && self.a.is_finite()
            && self.b.is_finite()
            && self.a > 0.0
            && self.b > 0.0
    }

    /// `E[X], E[X^2], E[X^3]`.
    fn moments(&self) -> [f64; 3] {
        let exp = |r: f64| [1.0 / r, 2.0 / (r * r), 6.0 / (r * r * r)];
        let erlang = |k: usize, r: f64| {
            let k = k as f64;
            [
                k / r,
                k * (k + 1.0) / (r * r),
                k * (k + 1.0) * (k + 2.0) / (r * r * r),
            ]
        };
        match self.shape {
            Shape::Mixture => {
                let (x, y) = (exp(self.a), exp(self.b));
                [0, 1, 2].map(|i| self.p * x[i] + (1.0 - self.p) * y[i])
            }
            Shape::Sum { always, maybe } => {
                let z = erlang(always, self.a);
                let y = erlang(maybe, self.b).map(|v| self.p * v);
                [
                    z[0] + y[0],
                    z[1] + 2.0 * z[0] * y[0] + y[1],
                    z[2] + 3.0 * z[1] * y[0] + 3.0 * z[0] * y[1] + y[2],
                ]
            }
        }
    }

    /// Newton steps on `moments / target - 1 = 0` in `(p, a, b)`, the Jacobian by central
    /// differences; a step is kept only when it stays valid and lowers the residual.
    fn polish(self, target: [f64; 3]) -> Self {
        let residual = |t: &Self| {
            let m = t.moments();
            [0, 1, 2].map(|i| m[i] / target[i] - 1.0)
        };
        let norm = |r: [f64; 3]| r.iter().map(|v| v * v).sum::<f64>();
        let mut best = self;
        let mut best_norm = norm(residual(&best));
        for _ in 0..8 {
            if best_norm < 1e-30 {
                break;
            }
            let x = [best.p, best.a, best.b];
            let at = |y: [f64; 3]| Self {
                shape: best.shape,
                p: y[0],
                a: y[1],
                b: y[2],
            };
            let mut jac = Dense::zeros(3, 3);
            for j in 0..3 {
                let h = 1e-7 * x[j].abs().max(1e-7);
                let (mut up, mut down) = (x, x);
                up[j] += h;
                down[j] -= h;
                let (ru, rd) = (residual(&at(up)), residual(&at(down)));
                for i in 0..3 {
                    jac.set(i, j, (ru[i] - rd[i]) / (2.0 * h));
                }
            }
            let Some(lu) = jac.lu() else {
                break;
            };
            let step = lu.solve(&residual(&best));
            let next = at([0, 1, 2].map(|i| x[i] - step[i]));
            let next_norm = norm(residual(&next));
            if !(next.valid() && next_norm < best_norm) {
                break;
            }
            best = next;
            best_norm = next_norm;
        }
        best
    }

    fn ph(&self) -> Result<Ph> {
        match self.shape {
            Shape::Mixture => Ph::new(
                vec![self.p, 1.0 - self.p],
                vec![vec![-self.a, 0.0], vec![0.0, -self.b]],
            ),
            Shape::Sum { always, maybe } => {
                let mut rates = vec![self.b; maybe];
                rates.extend(std::iter::repeat_n(self.a, always));
                let mut alpha = vec![0.0; maybe + always];
                alpha[0] = self.p;
                alpha[maybe] += 1.0 - self.p;
                Ph::new(alpha, chain(&rates))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Goodness of fit of the marginal law
// ---------------------------------------------------------------------------------------------

/// The points [`ks_distance`] evaluates a CDF at by default: a sample of at most this size is
/// compared at every point.
pub const KS_POINTS: usize = 2000;

/// The Kolmogorov-Smirnov distance `sup_x |F_n(x) - F(x)|` between a sample's empirical CDF
/// `F_n` and a phase-type law's CDF `F`, from [`ks_distance`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KsDistance {
    /// The largest gap seen at the evaluated points, both one-sided limits of `F_n` taken:
    /// the exact distance when every sample was a point, else a lower bound of it.
    pub distance: f64,
    /// An upper bound of the distance: between consecutive evaluated points `u < w` both CDFs
    /// are non-decreasing, so the gap there is at most
    /// `max(F_n(w-) - F(u), F(w) - F_n(u))`. Equal to `distance` when every sample was a
    /// point.
    pub upper_bound: f64,
    /// How many points `F` was evaluated at.
    pub points: usize,
}

/// The Kolmogorov-Smirnov distance between the sample `sorted` (non-decreasing) and `ph`.
///
/// `F` is evaluated ([`Ph::cdf`], by uniformization) at the sample values of ranks
/// `round(j (n-1) / (M-1))`, `j = 0..M` with `M = max_points.min(n)` (the smallest and the
/// largest sample always among them): every sample when `n <= max_points`, else about equally
/// spaced empirical quantiles, so a sample of `10^6` costs `max_points` CDF evaluations and a
/// binary search each. [`KsDistance::upper_bound`] says how far the true distance can be
/// from the one found; with `M` points it is within about `1/M` plus the largest rise of `F`
/// between neighbouring points. For reference, the distance exceeds `1.36 / sqrt(n)` with
/// probability 5% when the sample is drawn from `F` (Kolmogorov's limit law, ignoring that
/// `F` was fitted to the same sample).
///
/// Errors: `InvalidParameter` for an empty sample, `max_points < 2`, or a sample that is not
/// sorted or has a negative or non-finite value; as [`Ph::cdf`] (a law whose rates are too
/// far apart for the largest sample).
pub fn ks_distance(sorted: &[f64], ph: &Ph, max_points: usize) -> Result<KsDistance> {
    let n = sorted.len();
    if n == 0 {
        return Err(invalid("sample size (at least 1)", 0.0));
    }
    if max_points < 2 {
        return Err(invalid(
            "CDF evaluation points (at least 2)",
            max_points as f64,
        ));
    }
    for (i, &x) in sorted.iter().enumerate() {
        if !(x.is_finite() && x >= 0.0) {
            return Err(invalid(&format!("sample {i} (finite, >= 0)"), x));
        }
        if i > 0 && x < sorted[i - 1] {
            return Err(invalid(
                &format!("sample {i} (the sample must be sorted)"),
                x,
            ));
        }
    }
    let nf = n as f64;
    let m = max_points.min(n);
    let mut ranks: Vec<usize> = (0..m)
        .map(|j| {
            if m == 1 {
                0
            } else {
                ((j as f64) * (n - 1) as f64 / (m - 1) as f64).round() as usize
            }
        })
        .collect();
    ranks.dedup();
    let mut distance: f64 = 0.0;
    let mut upper: f64 = 0.0;
    // (F(u), F_n(u)) at the previous point u
    let mut previous: Option<(f64, f64)> = None;
    let mut points = 0;
    let mut last_value = f64::NAN;
    for &r in &ranks {
        let x = sorted[r];
        if x == last_value {
            continue;
        }
        last_value = x;
        let below = sorted.partition_point(|&v| v < x) as f64 / nf;
        let at = sorted.partition_point(|&v| v <= x) as f64 / nf;
        let f = ph.cdf(x)?;
        points += 1;
        let here = (at - f).max(f - below);
        distance = distance.max(here);
        upper = upper.max(here);
        if let Some((f_prev, at_prev)) = previous {
            upper = upper.max(below - f_prev).max(f - at_prev);
        }
        previous = Some((f, at));
    }
    Ok(KsDistance {
        distance,
        upper_bound: upper,
        points,
    })
}

// ---------------------------------------------------------------------------------------------
// MMPP(2)
// ---------------------------------------------------------------------------------------------

/// The stationary inter-arrival statistics of a Markovian arrival process, to set a fit beside
/// the sample it was fitted to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessStats {
    /// Mean inter-arrival time `E[X] = 1 / lambda`.
    pub mean: f64,
    /// Squared coefficient of variation `E[X^2] / E[X]^2 - 1`.
    pub scv: f64,
    /// Raw third moment `E[X^3]`.
    pub third_moment: f64,
    /// Skewness `(E[X^3] - 3 E[X] E[X^2] + 2 E[X]^3) / Var[X]^{3/2}` (0 when `Var[X] = 0`).
    pub skewness: f64,
    /// `autocorrelations[k - 1]`: the lag-`k` autocorrelation ([`Map::autocorrelation`]).
    pub autocorrelations: Vec<f64>,
    /// For a two-phase MAP, the decay `gamma` with `rho_{k+1} = gamma rho_k`: the second
    /// eigenvalue of `P = (-D0)^{-1} D1`, `trace(P) - 1` (for an MMPP(2),
    /// `l1 l2 / (l1 l2 + l1 r2 + l2 r1)`). `None` for other sizes.
    pub decay: Option<f64>,
}

impl ProcessStats {
    /// The statistics of `map` with autocorrelations at lags `1..=lags`.
    ///
    /// Errors: as [`Map::moment`] and [`Map::autocorrelation`].
    pub fn of_map(map: &Map, lags: usize) -> Result<Self> {
        let mean = map.mean_interarrival();
        let (m2, m3) = (map.moment(2)?, map.moment(3)?);
        let var = m2 - mean * mean;
        let autocorrelations = (1..=lags)
            .map(|k| {
                let k = u32::try_from(k).map_err(|_| invalid("lag", k as f64))?;
                map.autocorrelation(k)
            })
            .collect::<Result<Vec<_>>>()?;
        let decay = if map.phases() == 2 {
            let p = Dense::from_rows(map.d0())
                .scale(-1.0)
                .inverse("MAP D0")?
                .mul(&Dense::from_rows(map.d1()));
            Some(p.at(0, 0) + p.at(1, 1) - 1.0)
        } else {
            None
        };
        Ok(Self {
            mean,
            scv: (var / (mean * mean)).max(0.0),
            third_moment: m3,
            skewness: if var > 0.0 {
                (m3 - 3.0 * mean * m2 + 2.0 * mean.powi(3)) / var.powf(1.5)
            } else {
                0.0
            },
            autocorrelations,
            decay,
        })
    }
}

/// What an MMPP(2) fit matches of the correlation between successive inter-arrival times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Correlation {
    /// The decay `gamma = rho_{k+1} / rho_k` (for an MMPP(2), `0 <= gamma < 1`; 0 makes the
    /// process renewal).
    Decay(f64),
    /// The autocorrelations at lags `1..=K` (`K >= 1`), fitted by least squares.
    Lags(Vec<f64>),
}

/// The statistics an MMPP(2) is fitted to by [`fit_mmpp2`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mmpp2Targets {
    /// Mean inter-arrival time.
    pub mean: f64,
    /// Squared coefficient of variation of the inter-arrival time.
    pub scv: f64,
    /// Raw third moment of the inter-arrival time.
    pub third_moment: f64,
    /// The correlation to match.
    pub correlation: Correlation,
}

impl Mmpp2Targets {
    /// A sample's mean, SCV and third moment, and its
    /// [`significant_lags`](SampleStats::significant_lags) as [`Correlation::Lags`], or
    /// [`Correlation::Decay`]`(0.0)` (no correlation) when not even lag 1 is significant.
    ///
    /// Of the estimators tried on traces of `10^6` inter-arrival times of a known MMPP(2),
    /// these targets (three moments exactly, the decay chosen to fit the significant lags)
    /// recovered the four parameters best: better than the decay's own estimate
    /// ([`SampleStats::decay`]) in the closed form, and than matching the lag-1
    /// autocorrelation alone.
    pub fn from_sample(stats: &SampleStats) -> Self {
        let correlation = if stats.significant_lags == 0 {
            Correlation::Decay(0.0)
        } else {
            Correlation::Lags(stats.autocorrelations[..stats.significant_lags].to_vec())
        };
        Self {
            mean: stats.mean,
            scv: stats.scv,
            third_moment: stats.moment3,
            correlation,
        }
    }
}

/// How [`fit_mmpp2`] found its MMPP(2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Mmpp2Method {
    /// The closed form: three moments and the given decay matched exactly.
    ClosedForm,
    /// Three moments matched exactly by the closed form, its decay chosen by a
    /// one-dimensional search to fit the given autocorrelations in least squares.
    ClosedFormLags,
    /// The targets are out of the closed form's reach: weighted least squares by Nelder-Mead
    /// (the mean still matched exactly).
    LeastSquares,
}

/// An MMPP(2) fitted by [`fit_mmpp2`].
#[derive(Debug, Clone, PartialEq)]
pub struct Mmpp2Fit {
    /// Poisson rates: `rates[i]` in phase `i`, the busier phase first (`rates[0] >= rates[1]`).
    pub rates: [f64; 2],
    /// Switching rates: `switching[0]` from phase 1 to 2, `switching[1]` from 2 to 1 (the
    /// convention of [`Map::mmpp2`]).
    pub switching: [f64; 2],
    /// The process, `Map::mmpp2(rates, switching)`.
    pub map: Map,
    /// How it was found.
    pub method: Mmpp2Method,
    /// Its statistics, with as many autocorrelation lags as the targets had (at least one);
    /// [`ProcessStats::of_map`] gives more.
    pub fitted: ProcessStats,
    /// Why the closed form was not used, for [`Mmpp2Method::LeastSquares`]; `None` otherwise.
    pub note: Option<String>,
}

/// Fits an MMPP(2) to the statistics of inter-arrival times.
///
/// The inter-arrival time of an MMPP(2) (rates `l1, l2`, switching `r1, r2`) is `PH(pi, D0)`
/// of order two, whose transform has the denominator `s^2 + tau s + delta` with
/// `tau = l1 + l2 + r1 + r2` and `delta = l1 l2 + l1 r2 + l2 r1`; three moments give `tau`
/// and `delta` by two linear equations (see [`ph_from_three_moments`]). With the decay
/// `gamma = l1 l2 / delta` and the rate `1/m1 = (l1 r2 + l2 r1) / (r1 + r2)`:
///
/// `l1 l2 = gamma delta`, `l1 + l2 = tau - m1 delta (1 - gamma)`,
/// `r1 + r2 = m1 delta (1 - gamma)`, `l2 r1 + l1 r2 = delta (1 - gamma)`:
///
/// a quadratic for the rates, then two linear equations for the switching rates. These are
/// the targets of KPC-Toolbox's `mmpp2_fit3` (Casale, Zhang and Smirni, "KPC-Toolbox: simple
/// yet effective trace fitting using Markovian arrival processes", QEST 2008); the closed form
/// is derived here as above. It exists when `SCV > 1`, `m3 > 3 m2^2 / (2 m1)` and the
/// quadratic's roots and the switching rates come out non-negative.
///
/// - [`Correlation::Decay`]: the closed form at that decay ([`Mmpp2Method::ClosedForm`]).
/// - [`Correlation::Lags`]: the closed form along the decays `gamma` in `[0, 1)` where it
///   exists, the one minimising `sum_k (rho_k(gamma) - target_k)^2` chosen by a grid of 259
///   decays (finer towards 1) refined by golden-section search
///   ([`Mmpp2Method::ClosedFormLags`]). Every MAP(2) has `rho_k = (1 - 1/SCV)/2 gamma^k`
///   (Bodrog et al. 2008, see [`map2_from_moments`]), so with the moments fixed the lags
///   depend on the decay alone: a single lag is matched exactly when reachable. An
///   MMPP(2)'s autocorrelations are non-negative; negative targets get the least correlated
///   MMPP(2) with the three moments, as the fitted statistics show.
/// - Otherwise, or when no decay works, weighted least squares
///   ([`Mmpp2Method::LeastSquares`]): Nelder-Mead (`argmin`) over the logarithms of
///   `l2/l1, r1/l1, r2/l1` (each kept within `e^{+-12}`) from five starting points, each run
///   restarted from its best point, on the residuals `ln(E[X^2]/E[X]^2)` and
///   `ln(E[X^3]/E[X]^3)` against the targets', and
///   `(rho_k - target_k) / (max(|target_1|, 0.01) sqrt(K))` (or the decay's difference); the
///   rates are then scaled so that the mean is matched exactly (scaling every rate by `c`
///   divides the times by `c` and keeps the normalised moments and the correlations).
///
/// Errors: `InvalidParameter` for a mean, SCV or third moment not finite and positive, an
/// empty list of lags, or a non-finite correlation target; `NotConverged` when no starting
/// point of the least squares gives a valid MMPP(2).
pub fn fit_mmpp2(targets: &Mmpp2Targets) -> Result<Mmpp2Fit> {
    let m1 = check::positive("mean", targets.mean)?;
    let scv = check::positive("scv", targets.scv)?;
    let m3 = check::positive("third moment", targets.third_moment)?;
    match &targets.correlation {
        Correlation::Decay(g) => {
            check::finite("decay", *g)?;
        }
        Correlation::Lags(v) => {
            if v.is_empty() {
                return Err(invalid("autocorrelation lags (at least one)", 0.0));
            }
            for &r in v {
                check::finite("autocorrelation", r)?;
            }
        }
    }
    let m2 = (1.0 + scv) * m1 * m1;
    let lags = match &targets.correlation {
        Correlation::Decay(_) => 1,
        Correlation::Lags(v) => v.len(),
    };
    let closed = match &targets.correlation {
        Correlation::Decay(g) => closed_form(m1, m2, m3, *g)
            .map(|params| (params, Mmpp2Method::ClosedForm))
            .ok_or_else(|| {
                format!("no MMPP(2) has these three moments and decay {g} (closed form)")
            }),
        Correlation::Lags(v) => best_decay(m1, m2, m3, v)
            .map(|params| (params, Mmpp2Method::ClosedFormLags))
            .ok_or_else(|| {
                "no MMPP(2) has these three moments at any decay (closed form)".to_owned()
            }),
    };
    let (params, method, note) = match closed {
        Ok((params, method)) => (params, method, None),
        Err(reason) => {
            let params = least_squares(m1, m2, m3, &targets.correlation)?;
            (params, Mmpp2Method::LeastSquares, Some(reason))
        }
    };
    let ([l1, l2], [r1, r2]) = params;
    let (rates, switching) = if l1 >= l2 {
        ([l1, l2], [r1, r2])
    } else {
        ([l2, l1], [r2, r1])
    };
    let map = Map::mmpp2(rates, switching)?;
    let fitted = ProcessStats::of_map(&map, lags)?;
    Ok(Mmpp2Fit {
        rates,
        switching,
        map,
        method,
        fitted,
        note,
    })
}

/// Rates and switching rates of an MMPP(2).
type Mmpp2Params = ([f64; 2], [f64; 2]);

/// The MMPP(2) with moments `m1, m2, m3` and decay `gamma`, when one exists (see
/// [`fit_mmpp2`]).
fn closed_form(m1: f64, m2: f64, m3: f64, gamma: f64) -> Option<Mmpp2Params> {
    if !(0.0..1.0).contains(&gamma) || m2 <= 2.0 * m1 * m1 {
        return None;
    }
    let (tau, delta) = order_two_denominator(m1, m2, m3)?;
    let cross = delta * (1.0 - gamma); // l2 r1 + l1 r2
    let switching_sum = m1 * cross; // r1 + r2
    let rate_sum = tau - switching_sum; // l1 + l2
    let product = gamma * delta; // l1 l2
    let disc = rate_sum * rate_sum - 4.0 * product;
    if !(disc > 0.0 && rate_sum > 0.0) {
        return None;
    }
    let l1 = (rate_sum + disc.sqrt()) / 2.0;
    let l2 = product / l1;
    // r1 (l2 - l1) = cross - l1 (r1 + r2)
    let r1 = (cross - l1 * switching_sum) / (l2 - l1);
    let r2 = switching_sum - r1;
    let ok = [l1, l2, r1, r2].iter().all(|v| v.is_finite()) && l2 >= 0.0 && r1 > 0.0 && r2 > 0.0;
    ok.then_some(([l1, l2], [r1, r2]))
}

/// `sum_k (rho_k - target_k)^2` of the MMPP(2) `params` (`rho_k = rho_1 gamma^{k-1}`).
fn lag_misfit(params: Mmpp2Params, target: &[f64]) -> Option<f64> {
    let ([l1, l2], [r1, r2]) = params;
    let map = Map::mmpp2([l1, l2], [r1, r2]).ok()?;
    let rho1 = map.autocorrelation(1).ok()?;
    let gamma = l1 * l2 / (l1 * l2 + l1 * r2 + l2 * r1);
    let mut rho = rho1;
    let mut sum = 0.0;
    for &t in target {
        sum += (rho - t) * (rho - t);
        rho *= gamma;
    }
    sum.is_finite().then_some(sum)
}

/// The closed form at the decay that fits `target` best (see [`fit_mmpp2`]).
fn best_decay(m1: f64, m2: f64, m3: f64, target: &[f64]) -> Option<Mmpp2Params> {
    let cost = |g: f64| closed_form(m1, m2, m3, g).and_then(|params| lag_misfit(params, target));
    let mut grid: Vec<f64> = (0..200).map(|i| f64::from(i) / 200.0).collect();
    grid.extend((0..59).map(|j| 1.0 - 10f64.powf(-2.3 - 0.1 * f64::from(j))));
    let costs: Vec<Option<f64>> = grid.iter().map(|&g| cost(g)).collect();
    let best = (0..grid.len())
        .filter_map(|i| costs[i].map(|c| (i, c)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?
        .0;
    // the bracket around the best grid point, cut back to where the closed form exists
    let edge = |inside: f64, outside: f64| {
        let (mut a, mut b) = (inside, outside);
        for _ in 0..60 {
            let mid = 0.5 * (a + b);
            if cost(mid).is_some() {
                a = mid;
            } else {
                b = mid;
            }
        }
        a
    };
    let side = |j: Option<usize>| match j {
        None => grid[best],
        Some(j) if costs[j].is_some() => grid[j],
        Some(j) => edge(grid[best], grid[j]),
    };
    let mut lo = side(best.checked_sub(1));
    let mut hi = side(Some(best + 1).filter(|&j| j < grid.len()));
    // golden-section search
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let value = |g: f64| cost(g).unwrap_or(f64::INFINITY);
    let (mut c, mut d) = (hi - inv_phi * (hi - lo), lo + inv_phi * (hi - lo));
    let (mut fc, mut fd) = (value(c), value(d));
    for _ in 0..200 {
        if hi - lo <= 1e-15 * hi.abs().max(1e-300) {
            break;
        }
        if fc < fd {
            hi = d;
            (d, fd) = (c, fc);
            c = hi - inv_phi * (hi - lo);
            fc = value(c);
        } else {
            lo = c;
            (c, fc) = (d, fd);
            d = lo + inv_phi * (hi - lo);
            fd = value(d);
        }
    }
    let candidates = [grid[best], c, d, lo, hi];
    let g = candidates
        .into_iter()
        .min_by(|&a, &b| value(a).total_cmp(&value(b)))?;
    closed_form(m1, m2, m3, g)
}

/// The weighted least-squares problem of [`fit_mmpp2`]'s fallback, in the logarithms of
/// `l2/l1, r1/l1, r2/l1` (`l1 = 1`).
#[derive(Debug, Clone, Copy)]
struct Mmpp2LeastSquares<'a> {
    /// `ln(m2 / m1^2)`, `ln(m3 / m1^3)`.
    log_moments: [f64; 2],
    correlation: &'a Correlation,
}

/// The least-squares fallback keeps every rate within `e^12` (about `1.6e5`) times `l1` either
/// way, where the matrices stay well conditioned.
const LOG_RATIO: f64 = 12.0;

/// The value of the least-squares cost where the MMPP(2) is not valid: large but finite, so
/// that Nelder-Mead's ordering keeps working.
const INFEASIBLE: f64 = 1e100;

impl Mmpp2LeastSquares<'_> {
    fn params(theta: &[f64]) -> Mmpp2Params {
        let e = |v: f64| v.clamp(-LOG_RATIO, LOG_RATIO).exp();
        ([1.0, e(theta[0])], [e(theta[1]), e(theta[2])])
    }

    fn value(&self, theta: &[f64]) -> f64 {
        let params = Self::params(theta);
        self.misfit(params).unwrap_or(INFEASIBLE)
    }

    fn misfit(&self, params: Mmpp2Params) -> Option<f64> {
        let ([l1, l2], [r1, r2]) = params;
        let map = Map::mmpp2([l1, l2], [r1, r2]).ok()?;
        let m1 = map.mean_interarrival();
        let s2 = (map.moment(2).ok()? / (m1 * m1)).ln() - self.log_moments[0];
        let s3 = (map.moment(3).ok()? / m1.powi(3)).ln() - self.log_moments[1];
        let mut sum = s2 * s2 + s3 * s3;
        match self.correlation {
            Correlation::Decay(g) => {
                let gamma = l1 * l2 / (l1 * l2 + l1 * r2 + l2 * r1);
                sum += (gamma - g) * (gamma - g);
            }
            Correlation::Lags(v) => {
                let scale = v[0].abs().max(0.01) * (v.len() as f64).sqrt();
                sum += lag_misfit(params, v)? / (scale * scale);
            }
        }
        sum.is_finite().then_some(sum)
    }
}

impl CostFunction for Mmpp2LeastSquares<'_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, theta: &Vec<f64>) -> std::result::Result<f64, ArgminError> {
        Ok(self.value(theta))
    }
}

/// The least-squares fallback of [`fit_mmpp2`], the mean matched by scaling.
fn least_squares(m1: f64, m2: f64, m3: f64, correlation: &Correlation) -> Result<Mmpp2Params> {
    let problem = Mmpp2LeastSquares {
        log_moments: [(m2 / (m1 * m1)).ln(), (m3 / m1.powi(3)).ln()],
        correlation,
    };
    let starts = [
        [0.1, 0.05, 0.05],
        [0.5, 0.3, 0.3],
        [0.01, 0.01, 0.1],
        [0.2, 0.1, 0.01],
        [0.9, 1.0, 1.0],
    ];
    let mut best: Option<(Vec<f64>, f64)> = None;
    for start in starts {
        let mut x: Vec<f64> = start.iter().map(|v: &f64| v.ln()).collect();
        let mut fx = problem.value(&x);
        for _ in 0..3 {
            let mut vertices = vec![x.clone()];
            for j in 0..3 {
                let mut y = x.clone();
                y[j] += 0.7;
                vertices.push(y);
            }
            let solver = NelderMead::new(vertices)
                .with_sd_tolerance(1e-14)
                .map_err(|e| solver_error(&e.to_string()))?;
            let result = Executor::new(problem, solver)
                .configure(|state| state.max_iters(2000))
                .run()
                .map_err(|e| solver_error(&e.to_string()))?;
            let (Some(y), cost) = (result.state.best_param, result.state.best_cost) else {
                break;
            };
            let improved = cost < fx * (1.0 - 1e-9);
            if cost < fx {
                (x, fx) = (y, cost);
            }
            if !improved {
                break;
            }
        }
        if fx < INFEASIBLE && best.as_ref().is_none_or(|b| fx < b.1) {
            best = Some((x, fx));
        }
    }
    let (theta, residual) = best.ok_or_else(|| AnalyticError::NotConverged {
        method: "MMPP(2) least squares (no valid start)".to_owned(),
        iterations: 0,
        residual: f64::INFINITY,
    })?;
    let ([l1, l2], [r1, r2]) = Mmpp2LeastSquares::params(&theta);
    let map = Map::mmpp2([l1, l2], [r1, r2])?;
    let c = map.mean_interarrival() / m1;
    if !(c.is_finite() && c > 0.0) {
        return Err(AnalyticError::NotConverged {
            method: "MMPP(2) least squares (no finite mean)".to_owned(),
            iterations: 0,
            residual,
        });
    }
    Ok(([c * l1, c * l2], [c * r1, c * r2]))
}

fn solver_error(message: &str) -> AnalyticError {
    AnalyticError::NotApplicable(format!("MMPP(2) least squares: {message}"))
}

// ---------------------------------------------------------------------------------------------
// MAP(2)
// ---------------------------------------------------------------------------------------------

/// A MAP(2) fitted by [`map2_from_moments`].
#[derive(Debug, Clone, PartialEq)]
pub struct Map2Fit {
    /// The process, in the Markovian canonical form of Bodrog et al. (2008).
    pub map: Map,
    /// Its statistics, with the lag-1 autocorrelation (every lag follows:
    /// `rho_k = rho_1 gamma^{k-1}`, [`ProcessStats::decay`]).
    pub fitted: ProcessStats,
    /// The least and the greatest lag-1 autocorrelation a MAP(2) with these three moments
    /// has (Bodrog et al. 2008).
    pub lag1_bounds: (f64, f64),
}

/// The MAP(2) with marginal moments `m1, m2, m3` and lag-1 autocorrelation `rho1`, in the
/// Markovian canonical form of Bodrog, Heindl, Horvath and Telek, "A Markovian canonical form
/// of second-order matrix-exponential processes", EJOR 190, 2008 (as in BuTools'
/// `MAP2FromMoments`):
///
/// - the marginal is the canonical PH(2) `alpha = (p, 1 - p)`,
///   `T = [[-l1, l1], [0, -l2]]`, `l1 <= l2`, of Telek and Heindl (UKPEW 2002): with
///   `b = 3 m1 m2 - m3`, `c = 3 m2^2 - 2 m1 m3`, `e = m2 - 2 m1^2`, `a = sqrt(b^2 + 6 c e)`,
///   `l1, l2 = (b -+ a)/c`, `p = (-b - 6 m1 e + a)/(b + a)` for `c > 0`, and
///   `l1, l2 = (b +- a)/c`, `p = (b + 6 m1 e + a)/(a - b)` for `c < 0`;
/// - every MAP(2) has `rho_k = (1 - 1/SCV)/2 gamma^k`, so `rho1` gives the decay
///   `gamma = rho1 (m2 - m1^2) / (m2/2 - m1^2)`;
/// - `D0 = [[-l1, (1 - a) l1], [0, -l2]]` and, with `r = l1 / l2`: for `gamma > 0`,
///   `D1 = [[a l1, 0], [(1 - b) l2, b l2]]`, `a, b` from
///   `q = 1 + r gamma - p (1 - gamma)`: `a = (q - sqrt(q^2 - 4 r gamma)) / (2 r)`,
///   `b = (q + sqrt(q^2 - 4 r gamma)) / 2`; for `gamma < 0`,
///   `D1 = [[0, a l1], [b l2, (1 - b) l2]]`, `a = gamma / (r gamma - p (1 - gamma))`,
///   `b = p (1 - gamma) - r gamma`; for `gamma = 0` the renewal process.
///
/// A MAP(2) is determined by these four numbers (Bodrog et al. 2008), so given the exact
/// statistics of an MMPP(2) this gives the same process as [`fit_mmpp2`] in another
/// representation; a MAP(2) also reaches negative correlations and SCVs down to 1/2.
///
/// Errors: `InvalidParameter` for moments that are not finite and positive or a non-finite
/// `rho1`; `NotApplicable` when no PH(2) has the three moments (SCV below 1/2, or `m3`
/// outside Bobbio, Horvath and Telek's order-2 bounds), for a correlation with an exponential
/// marginal (SCV 1: every MAP(2) of it is renewal), or for `rho1` outside
/// [`Map2Fit::lag1_bounds`] (both named in the message).
pub fn map2_from_moments(m1: f64, m2: f64, m3: f64, rho1: f64) -> Result<Map2Fit> {
    let m1 = check::positive("first moment", m1)?;
    let m2 = check::positive("second moment", m2)?;
    let m3 = check::positive("third moment", m3)?;
    let rho1 = check::finite("lag-1 autocorrelation", rho1)?;
    let scv = m2 / (m1 * m1) - 1.0;
    let target = [m1, m2, m3];
    let not_applicable = |why: String| Err(AnalyticError::NotApplicable(why));
    if !(m2 >= aph_second_moment_lower_bound(m1, 2) * (1.0 - 1e-12)
        && m3 >= aph_third_moment_lower_bound(m1, m2, 2) * (1.0 - 1e-12)
        && m3 <= aph_third_moment_upper_bound(m1, m2, 2) * (1.0 + 1e-12))
    {
        return not_applicable(format!(
            "no PH(2) has the moments {m1}, {m2}, {m3} (a MAP(2) needs SCV >= 1/2 and the \
             third moment within the order-2 bounds of Bobbio, Horvath and Telek)"
        ));
    }
    let exponential = (scv - 1.0).abs() <= 1e-12;
    if exponential {
        if rho1.abs() > 1e-12 {
            return not_applicable(format!(
                "a MAP(2) with SCV 1 is renewal: lag-1 autocorrelation {rho1} cannot be had"
            ));
        }
        if (m3 / (6.0 * m1 * m1 * m1) - 1.0).abs() <= 1e-12 {
            let map = Map::poisson(1.0 / m1)?;
            let fitted = ProcessStats::of_map(&map, 1)?;
            return Ok(Map2Fit {
                map,
                fitted,
                lag1_bounds: (0.0, 0.0),
            });
        }
    }
    let (p, l1, l2) = canonical_ph2(target).ok_or_else(|| {
        AnalyticError::NotApplicable(format!(
            "the canonical PH(2) of the moments {m1}, {m2}, {m3} is degenerate"
        ))
    })?;
    let lag1_bounds = if exponential {
        (0.0, 0.0)
    } else {
        map2_lag1_bounds(target)
    };
    let outside = rho1 < lag1_bounds.0 - 1e-12 || rho1 > lag1_bounds.1 + 1e-12;
    if outside {
        return not_applicable(format!(
            "lag-1 autocorrelation {rho1} is outside [{}, {}], the range of a MAP(2) with \
             these moments",
            lag1_bounds.0, lag1_bounds.1
        ));
    }
    let gamma = if exponential {
        0.0
    } else {
        rho1 * (m2 - m1 * m1) / (m2 / 2.0 - m1 * m1)
    };
    let r = l1 / l2;
    let clamp = |v: f64| {
        if (-1e-12..=1.0 + 1e-12).contains(&v) {
            v.clamp(0.0, 1.0)
        } else {
            v
        }
    };
    let (d0, d1) = if gamma > 0.0 {
        let q = 1.0 + r * gamma - p * (1.0 - gamma);
        let root = (q * q - 4.0 * r * gamma).max(0.0).sqrt();
        let (a, b) = (clamp((q - root) / (2.0 * r)), clamp((q + root) / 2.0));
        (
            vec![vec![-l1, (1.0 - a) * l1], vec![0.0, -l2]],
            vec![vec![a * l1, 0.0], vec![(1.0 - b) * l2, b * l2]],
        )
    } else if gamma < 0.0 {
        let a = clamp(gamma / (r * gamma - p * (1.0 - gamma)));
        let b = clamp(p * (1.0 - gamma) - r * gamma);
        (
            vec![vec![-l1, (1.0 - a) * l1], vec![0.0, -l2]],
            vec![vec![0.0, a * l1], vec![b * l2, (1.0 - b) * l2]],
        )
    } else {
        (
            vec![vec![-l1, l1], vec![0.0, -l2]],
            vec![vec![0.0, 0.0], vec![p * l2, (1.0 - p) * l2]],
        )
    };
    let map = Map::new(d0, d1)?;
    let fitted = ProcessStats::of_map(&map, 1)?;
    Ok(Map2Fit {
        map,
        fitted,
        lag1_bounds,
    })
}

/// `(p, l1, l2)` of the canonical PH(2) with three moments (see [`map2_from_moments`]), the
/// moments brought back to rounding by [`Three::polish`].
fn canonical_ph2(target: [f64; 3]) -> Option<(f64, f64, f64)> {
    let [m1, m2, m3] = target;
    let b = 3.0 * m1 * m2 - m3;
    let c = 3.0 * m2 * m2 - 2.0 * m1 * m3;
    let e = m2 - 2.0 * m1 * m1;
    let a = (b * b + 6.0 * c * e).max(0.0).sqrt();
    let (l1, l2, p) = if c > 0.0 {
        ((b - a) / c, (b + a) / c, (-b - 6.0 * m1 * e + a) / (b + a))
    } else if c < 0.0 {
        ((b + a) / c, (b - a) / c, (b + 6.0 * m1 * e + a) / (a - b))
    } else {
        return None;
    };
    // an exponential phase of rate l1 entered with probability p, then one of rate l2
    let three = Three {
        shape: Shape::Sum {
            always: 1,
            maybe: 1,
        },
        p: p.clamp(0.0, 1.0),
        a: l2,
        b: l1,
    };
    if !three.valid() {
        return None;
    }
    let three = three.polish(target);
    let got = three.moments();
    let close = (0..3).all(|i| (got[i] / target[i] - 1.0).abs() <= 1e-10);
    close.then_some((three.p, three.b, three.a))
}

/// The lag-1 autocorrelation bounds of a MAP(2) with three moments (Bodrog et al. 2008, as in
/// BuTools' `MAP2CorrelationBounds`): with `h2 = m2/(2 m1^2) - 1`,
/// `h3 = m3/(6 m1^3) - m2^2/(4 m1^4)`, the decay-times-`h2` bounds
/// `g_u = h2` (`h2 >= 0`) or `-(h2 + sqrt(-h3))^2`, and `g_l = -h3 - h2^2` when `h2 <= 0` or
/// `h3/h2 + h2 < 1`, else `h2 (q - s)/(q + s)` with `q = h3 + h2^2 - h2`,
/// `s = sqrt(q^2 + 4 h2^3)`; divided by the SCV.
fn map2_lag1_bounds([m1, m2, m3]: [f64; 3]) -> (f64, f64) {
    let h2 = m2 / (2.0 * m1 * m1) - 1.0;
    let h3 = m3 / (6.0 * m1.powi(3)) - m2 * m2 / (4.0 * m1.powi(4));
    let scv = m2 / (m1 * m1) - 1.0;
    let upper = if h2 >= 0.0 {
        h2
    } else {
        -(h2 + (-h3).max(0.0).sqrt()).powi(2)
    };
    let lower = if h2 <= 0.0 || h3 / h2 + h2 < 1.0 {
        -h3 - h2 * h2
    } else {
        let q = h3 + h2 * h2 - h2;
        let s = (q * q + 4.0 * h2.powi(3)).sqrt();
        h2 * (q - s) / (q + s)
    };
    if h2 >= 0.0 {
        (lower / scv, upper / scv)
    } else {
        (upper / scv, lower / scv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{RngExt, SeedableRng};
    use rand_distr::Exp1;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// `n` successive inter-arrival times of the MMPP(2), simulated directly: in phase `i` the
    /// next event comes after an exponential time of rate `rates[i] + switching[i]` and is an
    /// arrival with probability `rates[i] / (rates[i] + switching[i])`, else a switch; the
    /// first phase drawn from the time-stationary law.
    fn simulate_mmpp2(rates: [f64; 2], switching: [f64; 2], n: usize, seed: u64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let first = switching[1] / (switching[0] + switching[1]);
        let mut phase = usize::from(rng.random::<f64>() >= first);
        let mut out = Vec::with_capacity(n);
        let mut t = 0.0;
        while out.len() < n {
            let total = rates[phase] + switching[phase];
            t += rng.sample::<f64, _>(Exp1) / total;
            if rng.random::<f64>() * total < rates[phase] {
                out.push(t);
                t = 0.0;
            } else {
                phase = 1 - phase;
            }
        }
        out
    }

    /// The real roots of a quartic with four, two and no real roots.
    #[test]
    fn real_roots_of_quartics() {
        // (x - 1)(x - 2)(x + 3)(x - 0.5) = x^4 - 0.5 x^3 - 7 x^2 + 9.5 x - 3
        let roots = real_roots(&[-3.0, 9.5, -7.0, -0.5, 1.0]);
        assert_eq!(roots.len(), 4);
        for (got, want) in roots.iter().zip([-3.0, 0.5, 1.0, 2.0]) {
            assert!((got - want).abs() < 1e-12, "{roots:?}");
        }
        // (x^2 + 1)(x - 4)(x + 0.25) = x^4 - 3.75 x^3 - 3.75 x - 1
        let c = [-1.0, -3.75, 0.0, -3.75, 1.0];
        let roots = real_roots(&c);
        assert_eq!(roots.len(), 2, "{roots:?}");
        assert!((roots[0] + 0.25).abs() < 1e-12 && (roots[1] - 4.0).abs() < 1e-12);
        assert!(real_roots(&[1.0, 0.0, 2.0, 0.0, 1.0]).is_empty()); // (x^2 + 1)^2
        assert_eq!(real_roots(&[2.0, -1.0, 0.0]), vec![2.0]); // degree drops to 1
    }

    #[test]
    fn sample_stats_of_a_short_sequence_by_hand() {
        let x = [1.0, 3.0, 2.0, 6.0];
        let s = SampleStats::new(&x, 2).unwrap();
        // mean 3, deviations -2, 0, -1, 3: v = 14/4, third central = (-8 - 1 + 27)/4
        assert_eq!(s.n, 4);
        assert!(rel(s.mean, 3.0) < 1e-15);
        assert!(rel(s.moment2, (1.0 + 9.0 + 4.0 + 36.0) / 4.0) < 1e-15);
        assert!(rel(s.moment3, (1.0 + 27.0 + 8.0 + 216.0) / 4.0) < 1e-15);
        assert!(rel(s.scv, 3.5 / 9.0) < 1e-15);
        assert!(rel(s.skewness, 4.5 / 3.5_f64.powf(1.5)) < 1e-14);
        // lag 1: (-2)(0) + (0)(-1) + (-1)(3) = -3; lag 2: (-2)(-1) + (0)(3) = 2; over 14
        assert!(rel(s.autocorrelations[0], -3.0 / 14.0) < 1e-15);
        assert!(rel(s.autocorrelations[1], 2.0 / 14.0) < 1e-15);
        assert!(rel(s.white_noise_band, 0.98) < 1e-15);
        // nothing is significant in four samples
        assert_eq!((s.significant_lags, s.decay), (0, None));
        // a constant sample: SCV 0, no correlation
        let c = SampleStats::new(&[2.0; 10], 3).unwrap();
        assert_eq!((c.scv, c.skewness, c.autocorrelations[2]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn sample_stats_refusals_name_the_problem() {
        let bad = |x: &[f64], k| SampleStats::new(x, k).unwrap_err().to_string();
        assert!(bad(&[1.0], 0).contains("sample size"));
        assert!(bad(&[1.0, 2.0], 2).contains("lags"));
        assert!(bad(&[1.0, -2.0, 3.0], 1).contains("sample 1"));
        assert!(bad(&[1.0, f64::NAN, 3.0], 1).contains("sample 1"));
        assert!(bad(&[0.0, 0.0, 0.0], 1).contains("mean"));
    }

    /// AR(1) sequences `y_i = phi y_{i-1} + e_i` (shifted to stay positive) have
    /// `rho_k = phi^k`: the decay estimate finds `phi`, of either sign.
    #[test]
    fn decay_of_ar1_sequences() {
        for (phi, seed) in [(0.6, 11), (0.9, 12), (-0.5, 13)] {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut y = 0.0;
            let x: Vec<f64> = (0..200_000)
                .map(|_| {
                    y = phi * y + rng.random::<f64>() - 0.5;
                    y + 10.0
                })
                .collect();
            let s = SampleStats::new(&x, 40).unwrap();
            let decay = s.decay.unwrap();
            assert!((decay - phi).abs() < 0.02, "phi {phi}: decay {decay}");
            assert!(s.significant_lags >= 5, "{}", s.significant_lags);
            assert!((s.autocorrelations[0] - phi).abs() < 0.01);
        }
    }

    fn assert_moments(ph: &Ph, target: &[f64], tol: f64, what: &str) {
        for (k, &m) in target.iter().enumerate() {
            let got = ph.moment(k as u32 + 1).unwrap();
            assert!(rel(got, m) < tol, "{what}: moment {} {got} vs {m}", k + 1);
        }
    }

    #[test]
    fn two_moment_fits_match_mean_and_scv() {
        for scv in [
            1.0 / 64.0,
            0.02,
            0.3,
            1.0 / 3.0,
            0.5,
            0.7,
            1.0,
            2.0,
            4.0,
            10.0,
        ] {
            let fit = ph_from_two_moments(2.5, scv).unwrap();
            let m2 = (1.0 + scv) * 2.5 * 2.5;
            assert_moments(&fit.ph, &[2.5, m2], 1e-9, &format!("scv {scv}"));
            assert_eq!((fit.moments_matched, &fit.fallback), (2, &None));
            let form = fit.form;
            match scv {
                s if s < 1.0 => {
                    let k = (1.0 / s - 1e-9).ceil() as usize;
                    assert_eq!(form, PhForm::ErlangMixture { k });
                    assert_eq!(fit.ph.phases(), k);
                }
                1.0 => assert_eq!(form, PhForm::Exponential),
                _ => assert_eq!(form, PhForm::BalancedH2),
            }
        }
        // SCV 1/3 is Erlang-3 exactly (no weight on the shorter Erlang)
        let e3 = ph_from_two_moments(1.0, 1.0 / 3.0).unwrap();
        assert_eq!(e3.ph.alpha(), &[1.0, 0.0, 0.0]);
        let err = ph_from_two_moments(1.0, 0.015).unwrap_err().to_string();
        assert!(err.contains("64 phases"), "{err}");
        assert!(ph_from_two_moments(0.0, 1.0).is_err());
        assert!(ph_from_two_moments(1.0, f64::NAN).is_err());
    }

    /// Three moments for SCV in {0.3, 0.5, 1, 2, 4, 10} and third moments `r m2^2 / m1`: the
    /// H2 when SCV > 1 and `r > 1.5`, the minimal acyclic PH otherwise (the H2 infeasible),
    /// two moments only when `r` is too close to the Cauchy-Schwarz bound 1.
    #[test]
    fn three_moment_fits_match_three_moments() {
        let mut three = 0;
        for scv in [0.3, 0.5, 1.0, 2.0, 4.0, 10.0] {
            let m1 = 0.8;
            let m2 = (1.0 + scv) * m1 * m1;
            for r in [1.001, 1.02, 1.1, 1.3, 1.45, 1.55, 2.0, 3.0, 10.0, 100.0] {
                let m3 = r * m2 * m2 / m1;
                let what = format!("scv {scv}, m3 = {r} m2^2/m1");
                let fit = ph_from_three_moments(m1, m2, m3).unwrap();
                assert!(fit.ph.phases() <= MAX_PHASES);
                if fit.moments_matched == 3 {
                    three += 1;
                    assert_moments(&fit.ph, &[m1, m2, m3], 1e-9, &what);
                    assert_eq!(fit.fallback, None);
                    let h2 = scv > 1.0 && r > 1.5;
                    assert_eq!(fit.form == PhForm::H2, h2, "{what}: {:?}", fit.form);
                    if let PhForm::Acyclic { phases } = fit.form {
                        assert_eq!(phases, fit.ph.phases());
                        // minimal: the order below cannot hold these moments
                        let n = phases - 1;
                        assert!(n < 2 || !aph_order_admits([m1, m2, m3], n), "{what}");
                    }
                } else {
                    assert_moments(&fit.ph, &[m1, m2], 1e-9, &what);
                    assert!(
                        fit.fallback.as_ref().unwrap().contains("64 phases"),
                        "{what}: {:?}",
                        fit.fallback
                    );
                    // only near the bound: (n+1)/n m2^2/m1 with n = 64
                    assert!(r < 1.0 + 1.0 / 64.0, "{what}: {:?}", fit.fallback);
                }
            }
        }
        assert_eq!(three, 6 * 9);
        // the exponential law, and the moments of an Erlang-3 and of an H2 given back
        let exp = ph_from_three_moments(2.0, 8.0, 48.0).unwrap();
        assert_eq!((exp.form, exp.moments_matched), (PhForm::Exponential, 3));
        let e3 = Ph::erlang(3, 2.0).unwrap();
        let m = [1, 2, 3].map(|k| e3.moment(k).unwrap());
        let fit = ph_from_three_moments(m[0], m[1], m[2]).unwrap();
        assert_eq!(
            (fit.form, fit.moments_matched),
            (PhForm::Acyclic { phases: 3 }, 3)
        );
        assert_moments(&fit.ph, &m, 1e-9, "Erlang-3");
        let h2 = Ph::new(vec![0.3, 0.7], vec![vec![-5.0, 0.0], vec![0.0, -0.5]]).unwrap();
        let m = [1, 2, 3].map(|k| h2.moment(k).unwrap());
        let fit = ph_from_three_moments(m[0], m[1], m[2]).unwrap();
        assert_eq!(fit.form, PhForm::H2);
        assert!(rel(fit.ph.alpha()[0], 0.3) < 1e-9 && rel(fit.ph.t()[1][1], -0.5) < 1e-9);
        // refusals
        assert!(ph_from_three_moments(1.0, 0.5, 1.0).is_err());
        assert!(ph_from_three_moments(1.0, 1.01, 1.1).is_err()); // SCV 0.01
        assert!(ph_from_three_moments(1.0, 2.0, f64::INFINITY).is_err());
        let cs = ph_from_three_moments(1.0, 3.0, 8.0).unwrap();
        assert!(cs.fallback.unwrap().contains("Cauchy-Schwarz"));
    }

    #[test]
    fn ks_distance_of_exact_quantiles_and_of_a_wrong_law() {
        let exp = Ph::exponential(1.0).unwrap();
        // the exponential's quantiles at (i - 1/2)/n: the distance is 1/(2n) exactly
        let sample = |n: usize| -> Vec<f64> {
            (1..=n)
                .map(|i| -(1.0 - (i as f64 - 0.5) / n as f64).ln())
                .collect()
        };
        let small = ks_distance(&sample(1000), &exp, KS_POINTS).unwrap();
        assert_eq!(small.points, 1000);
        assert!((small.distance - 0.0005).abs() < 1e-9, "{small:?}");
        assert!((small.upper_bound - small.distance).abs() < 1e-12);
        // 10^5 samples at 2000 points: the bound brackets 1/(2n)
        let big = ks_distance(&sample(100_000), &exp, KS_POINTS).unwrap();
        assert_eq!(big.points, KS_POINTS);
        assert!(big.distance <= 5e-6 + 1e-9 && big.upper_bound >= 5e-6);
        assert!(big.upper_bound < 1.5e-3, "{big:?}");
        // against Erlang-2 of the same mean: sup |e^{-x} - e^{-2x}(1 + 2x)| over x
        let e2 = Ph::erlang(2, 2.0).unwrap();
        let exact = (1..20_000)
            .map(|i| {
                let x = f64::from(i) * 5e-4;
                ((-x).exp() - (-2.0 * x).exp() * (1.0 + 2.0 * x)).abs()
            })
            .fold(0.0, f64::max);
        let wrong = ks_distance(&sample(100_000), &e2, KS_POINTS).unwrap();
        assert!(
            (wrong.distance - exact).abs() < 1e-3,
            "{wrong:?} vs {exact}"
        );
        assert!(wrong.upper_bound >= wrong.distance && wrong.upper_bound < exact + 2e-3);
        // ties: every sample equal, F_n jumps from 0 to 1 there
        let tied = ks_distance(&[1.0; 5], &exp, 3).unwrap();
        let f = 1.0 - (-1.0_f64).exp();
        assert_eq!(tied.points, 1);
        assert!((tied.distance - f.max(1.0 - f)).abs() < 1e-9);
        assert!(ks_distance(&[2.0, 1.0], &exp, 10).is_err());
        assert!(ks_distance(&[], &exp, 10).is_err());
        assert!(ks_distance(&[1.0, 2.0], &exp, 1).is_err());
    }

    /// The exact statistics of an MMPP(2), with `lags` autocorrelations.
    fn exact_targets(map: &Map, lags: usize) -> (ProcessStats, Mmpp2Targets) {
        let stats = ProcessStats::of_map(map, lags).unwrap();
        let targets = Mmpp2Targets {
            mean: stats.mean,
            scv: stats.scv,
            third_moment: stats.third_moment,
            correlation: Correlation::Lags(stats.autocorrelations.clone()),
        };
        (stats, targets)
    }

    /// The lag-1 autocorrelation of the closed form's MMPP(2) at decay `gamma` with the
    /// moments of `stats`, where it exists.
    fn closed_form_lag1(stats: &ProcessStats, gamma: f64) -> Option<f64> {
        let m2 = (1.0 + stats.scv) * stats.mean * stats.mean;
        let (rates, switching) = closed_form(stats.mean, m2, stats.third_moment, gamma)?;
        Map::mmpp2(rates, switching).ok()?.autocorrelation(1).ok()
    }

    const KNOWN: [([f64; 2], [f64; 2]); 4] = [
        ([1.5, 0.1], [0.05, 0.05]),
        ([3.0, 0.5], [0.2, 0.7]),
        ([10.0, 1.0], [1.0, 0.1]),
        ([2.0, 0.0], [0.3, 0.1]),
    ];

    #[test]
    fn process_stats_of_mmpp2s_against_closed_forms() {
        for (rates, switching) in KNOWN {
            let map = Map::mmpp2(rates, switching).unwrap();
            let s = ProcessStats::of_map(&map, 6).unwrap();
            let [l1, l2] = rates;
            let [r1, r2] = switching;
            let decay = l1 * l2 / (l1 * l2 + l1 * r2 + l2 * r1);
            assert!((s.decay.unwrap() - decay).abs() < 1e-14);
            for k in 1..6 {
                let next = s.autocorrelations[k - 1] * decay;
                assert!((s.autocorrelations[k] - next).abs() < 1e-12);
            }
            assert!(rel(s.mean, 1.0 / map.lambda()) < 1e-14);
            let m2 = map.moment(2).unwrap();
            let var = m2 - s.mean * s.mean;
            let third_central = s.third_moment - 3.0 * s.mean * m2 + 2.0 * s.mean.powi(3);
            assert!(rel(s.skewness, third_central / var.powf(1.5)) < 1e-12);
        }
        let renewal = Map::renewal(&Ph::erlang(3, 1.0).unwrap()).unwrap();
        assert_eq!(ProcessStats::of_map(&renewal, 1).unwrap().decay, None);
    }

    /// Given exact statistics, both closed-form paths give the MMPP(2) back.
    #[test]
    fn mmpp2_closed_form_recovers_known_processes_from_exact_statistics() {
        for (rates, switching) in KNOWN {
            let map = Map::mmpp2(rates, switching).unwrap();
            let (stats, lags) = exact_targets(&map, 10);
            let decay = Mmpp2Targets {
                correlation: Correlation::Decay(stats.decay.unwrap()),
                ..lags.clone()
            };
            for (targets, method, tol) in [
                (decay, Mmpp2Method::ClosedForm, 1e-9),
                (lags, Mmpp2Method::ClosedFormLags, 1e-6),
            ] {
                let fit = fit_mmpp2(&targets).unwrap();
                let what = format!("{rates:?} {switching:?} {method:?}");
                assert_eq!((fit.method, &fit.note), (method, &None), "{what}");
                for i in 0..2 {
                    assert!(
                        (fit.rates[i] - rates[i]).abs() <= tol * rates[0],
                        "{what} {fit:?}"
                    );
                    assert!(rel(fit.switching[i], switching[i]) < tol, "{what} {fit:?}");
                }
                let f = &fit.fitted;
                assert!(rel(f.mean, stats.mean) < 1e-12, "{what}");
                assert!(
                    rel(f.scv, stats.scv) < tol && rel(f.third_moment, stats.third_moment) < tol
                );
                for (a, b) in f.autocorrelations.iter().zip(&stats.autocorrelations) {
                    assert!((a - b).abs() < tol, "{what}: {a} vs {b}");
                }
                assert_eq!(fit.map, Map::mmpp2(fit.rates, fit.switching).unwrap());
            }
        }
    }

    /// The least-squares fallback on its own recovers a known MMPP(2) from exact statistics,
    /// and takes over when the targets are out of an MMPP(2)'s reach.
    #[test]
    fn mmpp2_least_squares_fallback() {
        for (rates, switching) in KNOWN.into_iter().take(3) {
            let map = Map::mmpp2(rates, switching).unwrap();
            let (stats, targets) = exact_targets(&map, 10);
            let m2 = (1.0 + stats.scv) * stats.mean * stats.mean;
            let ([l1, l2], [r1, r2]) =
                least_squares(stats.mean, m2, stats.third_moment, &targets.correlation).unwrap();
            let what = format!("{rates:?} {switching:?}: {l1} {l2} {r1} {r2}");
            assert!(
                rel(l1, rates[0]) < 1e-4 && rel(l2, rates[1]) < 1e-4,
                "{what}"
            );
            assert!(
                rel(r1, switching[0]) < 1e-4 && rel(r2, switching[1]) < 1e-4,
                "{what}"
            );
        }
        // SCV below 1: no MMPP(2) has it; the mean is still matched
        let smooth = Mmpp2Targets {
            mean: 2.0,
            scv: 0.5,
            third_moment: 20.0,
            correlation: Correlation::Lags(vec![0.1, 0.05]),
        };
        let fit = fit_mmpp2(&smooth).unwrap();
        assert_eq!(fit.method, Mmpp2Method::LeastSquares);
        assert!(fit.note.as_ref().unwrap().contains("closed form"));
        assert!(rel(fit.fitted.mean, 2.0) < 1e-12);
        assert!(fit.fitted.scv >= 1.0 && fit.fitted.scv < 1.5, "{fit:?}");
        // a decay no MMPP(2) has (negative): least squares, as close as it gets
        let map = Map::mmpp2([3.0, 0.5], [0.2, 0.7]).unwrap();
        let (stats, lags) = exact_targets(&map, 1);
        let negative = Mmpp2Targets {
            correlation: Correlation::Decay(-0.3),
            ..lags
        };
        let fit = fit_mmpp2(&negative).unwrap();
        assert_eq!(fit.method, Mmpp2Method::LeastSquares);
        assert!(rel(fit.fitted.mean, stats.mean) < 1e-12);
        assert!(fit.fitted.decay.unwrap() < 0.01);
        // a negative lag-1 target: the closed form keeps the moments, at the least correlation
        // it allows
        let negative = Mmpp2Targets {
            correlation: Correlation::Lags(vec![-0.1]),
            ..exact_targets(&map, 1).1
        };
        let fit = fit_mmpp2(&negative).unwrap();
        assert_eq!(fit.method, Mmpp2Method::ClosedFormLags);
        assert!(rel(fit.fitted.third_moment, stats.third_moment) < 1e-9);
        let least = (0..=1000)
            .filter_map(|i| closed_form_lag1(&stats, f64::from(i) / 1000.0))
            .fold(f64::INFINITY, f64::min);
        let rho = fit.fitted.autocorrelations[0];
        assert!(rho >= -1e-12 && rho <= least + 1e-9, "{rho} vs {least}");
        // refusals
        let bad = |t: Mmpp2Targets| fit_mmpp2(&t).unwrap_err().to_string();
        let base = Mmpp2Targets {
            mean: 1.0,
            scv: 2.0,
            third_moment: 20.0,
            correlation: Correlation::Decay(0.5),
        };
        assert!(
            bad(Mmpp2Targets {
                mean: -1.0,
                ..base.clone()
            })
            .contains("mean")
        );
        assert!(
            bad(Mmpp2Targets {
                third_moment: f64::NAN,
                ..base.clone()
            })
            .contains("third")
        );
        let empty = Correlation::Lags(Vec::new());
        assert!(
            bad(Mmpp2Targets {
                correlation: empty,
                ..base
            })
            .contains("lags")
        );
    }

    /// Recovery from a trace of `10^6` inter-arrival times of the MMPP(2) with rates
    /// `[1.5, 0.1]` and switching `[0.05, 0.05]`, seeds 1 to 5.
    ///
    /// Over seeds 1 to 20 the relative errors of the fit (targets from
    /// [`Mmpp2Targets::from_sample`]) had RMS and largest absolute values of about:
    /// `l1` 0.6% / 1.2%, `l2` 0.9% / 2.1%, `r1` 1.9% / 4.4% (seed 2), `r2` 0.7% / 1.8%. The
    /// switching rate out of the busy phase, `r1`, is the least well determined; the 5%
    /// tolerance is about 2.5 of its standard deviations.
    #[test]
    fn mmpp2_recovered_from_a_simulated_trace() {
        let (rates, switching) = ([1.5, 0.1], [0.05, 0.05]);
        let truth = [rates[0], rates[1], switching[0], switching[1]];
        for seed in 1..=5 {
            let x = simulate_mmpp2(rates, switching, 1_000_000, seed);
            let stats = SampleStats::new(&x, 50).unwrap();
            let decay = stats.decay.unwrap();
            assert!(
                (decay - 0.652_173_9).abs() < 0.02,
                "seed {seed}: decay {decay}"
            );
            assert!(stats.significant_lags >= 8, "seed {seed}");
            let fit = fit_mmpp2(&Mmpp2Targets::from_sample(&stats)).unwrap();
            assert_eq!(fit.method, Mmpp2Method::ClosedFormLags);
            let got = [
                fit.rates[0],
                fit.rates[1],
                fit.switching[0],
                fit.switching[1],
            ];
            for i in 0..4 {
                assert!(rel(got[i], truth[i]) < 0.05, "seed {seed}: {got:?}");
            }
            // the fit's own statistics: mean, SCV and third moment are the sample's
            assert!(rel(fit.fitted.mean, stats.mean) < 1e-12);
            assert!(rel(fit.fitted.scv, stats.scv) < 1e-9);
            assert!(rel(fit.fitted.third_moment, stats.moment3) < 1e-9);
        }
    }

    /// A renewal sample (exponential): no significant lag, the fit is renewal (decay 0).
    #[test]
    fn a_renewal_sample_gets_no_correlation() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let x: Vec<f64> = (0..100_000)
            .map(|_| 2.0 * rng.sample::<f64, _>(Exp1))
            .collect();
        let s = SampleStats::new(&x, 20).unwrap();
        assert_eq!((s.significant_lags, s.decay), (0, None));
        let t = Mmpp2Targets::from_sample(&s);
        assert_eq!(t.correlation, Correlation::Decay(0.0));
        let fit = ph_from_three_moments(s.mean, s.moment2, s.moment3).unwrap();
        let mut sorted = x.clone();
        sorted.sort_by(f64::total_cmp);
        let ks = ks_distance(&sorted, &fit.ph, KS_POINTS).unwrap();
        assert!(ks.upper_bound < 1.36 / (x.len() as f64).sqrt(), "{ks:?}");
    }

    /// The MAP(2) canonical form gives back the statistics of known MAP(2)s (an MMPP(2), a
    /// negatively correlated MAP, a renewal PH(2) with SCV below 1), every lag included.
    #[test]
    fn map2_reproduces_known_processes() {
        let alternating = Map::new(
            vec![vec![-2.0, 0.0], vec![0.0, -0.5]],
            vec![vec![0.0, 2.0], vec![0.5, 0.0]],
        )
        .unwrap();
        let coxian = Ph::new(vec![0.6, 0.4], vec![vec![-3.0, 2.0], vec![0.0, -1.5]]).unwrap();
        let correlated_coxian = Map::new(
            vec![vec![-3.0, 1.0], vec![0.0, -1.5]],
            vec![vec![1.5, 0.5], vec![0.3, 1.2]],
        )
        .unwrap();
        let maps = [
            Map::mmpp2([1.5, 0.1], [0.05, 0.05]).unwrap(),
            Map::mmpp2([3.0, 0.5], [0.2, 0.7]).unwrap(),
            alternating,
            Map::renewal(&coxian).unwrap(),
            correlated_coxian,
        ];
        for (i, map) in maps.iter().enumerate() {
            let s = ProcessStats::of_map(map, 5).unwrap();
            let m2 = (1.0 + s.scv) * s.mean * s.mean;
            let fit = map2_from_moments(s.mean, m2, s.third_moment, s.autocorrelations[0])
                .unwrap_or_else(|e| panic!("map {i}: {e}"));
            let f = ProcessStats::of_map(&fit.map, 5).unwrap();
            assert!(rel(f.mean, s.mean) < 1e-9, "map {i}");
            assert!(rel(f.scv, s.scv) < 1e-9 && rel(f.third_moment, s.third_moment) < 1e-9);
            for k in 0..5 {
                let (a, b) = (f.autocorrelations[k], s.autocorrelations[k]);
                assert!((a - b).abs() < 1e-9, "map {i} lag {}: {a} vs {b}", k + 1);
            }
            let (lo, hi) = fit.lag1_bounds;
            assert!(lo <= s.autocorrelations[0] + 1e-12 && s.autocorrelations[0] <= hi + 1e-12);
            assert_eq!(fit.fitted.autocorrelations.len(), 1);
        }
    }

    /// The lag-1 bounds are sharp: just inside them (a millionth of their width) the canonical
    /// form is a valid MAP(2), just outside it is refused, for SCVs below and above 1. (At
    /// the upper bound with SCV > 1 the decay goes to 1 and `1 - a` loses digits: a
    /// billionth inside, the lag-1 autocorrelation comes out `3e-8` off.)
    #[test]
    fn map2_lag1_bounds_are_where_the_canonical_form_stops() {
        for (scv, r) in [(0.6, 0.5), (0.8, 0.2), (2.0, 1.6), (4.0, 3.0), (10.0, 1.7)] {
            let m1 = 1.0;
            let m2 = (1.0 + scv) * m1 * m1;
            // r places m3 inside the order-2 bounds
            let (l, u) = (
                aph_third_moment_lower_bound(m1, m2, 2),
                aph_third_moment_upper_bound(m1, m2, 2),
            );
            let m3 = if u.is_finite() {
                l + r * (u - l) / 4.0
            } else {
                l * r.max(1.01)
            };
            let (lo, hi) = map2_lag1_bounds([m1, m2, m3]);
            assert!(lo < hi, "scv {scv}: {lo} {hi}");
            let width = hi - lo;
            for rho in [lo + 1e-6 * width, hi - 1e-6 * width, 0.5 * (lo + hi)] {
                let fit = map2_from_moments(m1, m2, m3, rho)
                    .unwrap_or_else(|e| panic!("scv {scv} rho {rho}: {e}"));
                let got = fit.fitted.autocorrelations[0];
                assert!(
                    (got - rho).abs() < 1e-9,
                    "scv {scv} m3 {m3} bounds {lo} {hi}: rho {rho} got {got} {:?}",
                    fit.map
                );
            }
            for rho in [lo - 1e-6 * width, hi + 1e-6 * width] {
                let err = map2_from_moments(m1, m2, m3, rho).unwrap_err().to_string();
                assert!(err.contains("outside"), "scv {scv} rho {rho}: {err}");
            }
        }
        let err = map2_from_moments(1.0, 1.4, 2.0, 0.0)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no PH(2)"), "{err}");
        let err = map2_from_moments(1.0, 2.0, 6.0, 0.1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("renewal"), "{err}");
        let poisson = map2_from_moments(1.0, 2.0, 6.0, 0.0).unwrap();
        assert_eq!(poisson.map.phases(), 1);
    }
}
