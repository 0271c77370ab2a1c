//! Expected maximum, and second moment of the maximum, of independent random times that need
//! not be identically distributed: the time at which the last of several parallel activities
//! ends (a barrier, a collective's round, a join).
//!
//! For independent `X_i` with CDFs `F_i` the maximum `M` has the CDF `G(t) = prod_i F_i(t)`, and
//! for any pivot `c`
//!
//! ```text
//! E[M]           = c + int_c^inf (1 - G(t)) dt - int_-inf^c G(t) dt
//! E[(M - c)^2]   = int_c^inf 2 (t - c) (1 - G(t)) dt + int_-inf^c 2 (c - t) G(t) dt
//! ```
//!
//! (integration by parts of `E[h(M)]`; e.g. David and Nagaraja, *Order Statistics*, Wiley
//! 2003, 3.1). When `M` is bounded below (every law has a finite lower end, or one law is a
//! constant) the pivot is that bound `L = max_i lower_i` and the left integrals vanish:
//! `E[M] = L + int_L^inf (1 - G)`, `E[M^2] = L^2 + int_L^inf 2 t (1 - G)`. The variance is taken
//! as `E[(M - c)^2] - (E[M] - c)^2`, about the pivot, which keeps it accurate when it is small
//! beside `E[M]^2`.
//!
//! Laws that repeat are given once with their multiplicity `m_i`: `G = exp(sum_i m_i ln F_i)`,
//! so a barrier of a million ranks drawn from three laws costs three CDF evaluations per
//! quadrature node. A law given by its survival function `P(X > t)` keeps `ln F = ln(1 - S)`
//! accurate in the far upper tail, where the maximum of many copies lives. A constant (a
//! deterministic phase) is a point mass, not a step CDF: the maximum is at least the largest
//! constant, which becomes the pivot, so no integrand has a jump.

use serde::Serialize;

use super::error::{AnalyticError, Result};
use super::forkjoin::EXPECTED_MAX_REL_TOL;
use super::quadrature;

/// Subinterval cap of each adaptive quadrature.
const MAX_SEGMENTS: u32 = 20_000;

/// Consecutive shells that do not shrink (a tail no lighter than `1/t` over a factor `2^40`
/// of time, `10^12`) before an integral is declared infinite.
const GROWING_SHELLS: u32 = 40;

/// Halvings or doublings of a step before a scale of the maximum is given up on.
const MAX_SCALE_STEPS: u32 = 2_200;

/// A random time for [`expected_max`]: a constant, or a law given by its distribution function
/// or by its survival function on a support `[lower, upper]` (`lower` may be `-inf`, `upper`
/// may be `+inf`). Outside its support a law's CDF is taken as 0 below `lower` and 1 from
/// `upper` on, whatever the closure says there.
#[derive(Clone, Copy)]
pub enum Law<'a> {
    /// Always this value (a deterministic time).
    Constant(f64),
    /// `P(X <= t)`.
    Cdf {
        /// The distribution function.
        cdf: &'a dyn Fn(f64) -> f64,
        /// Smallest value (`-inf` allowed).
        lower: f64,
        /// Largest value (`+inf` allowed).
        upper: f64,
    },
    /// `P(X > t)`: better than [`Law::Cdf`] when the multiplicity is large or the tail is long,
    /// since `1 - F` is not computed as a difference.
    Survival {
        /// The survival function `1 - F`.
        survival: &'a dyn Fn(f64) -> f64,
        /// Smallest value (`-inf` allowed).
        lower: f64,
        /// Largest value (`+inf` allowed).
        upper: f64,
    },
}

impl std::fmt::Debug for Law<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Law::Constant(c) => f.debug_tuple("Constant").field(c).finish(),
            Law::Cdf { lower, upper, .. } => f
                .debug_struct("Cdf")
                .field("lower", lower)
                .field("upper", upper)
                .finish_non_exhaustive(),
            Law::Survival { lower, upper, .. } => f
                .debug_struct("Survival")
                .field("lower", lower)
                .field("upper", upper)
                .finish_non_exhaustive(),
        }
    }
}

/// The first two moments of a maximum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MaxMoments {
    /// `E[M]`.
    pub mean: f64,
    /// `E[M^2]`.
    pub second_moment: f64,
    /// `Var M = E[M^2] - E[M]^2`, computed about a pivot inside the support (never negative).
    pub variance: f64,
}

impl MaxMoments {
    /// The standard deviation of the maximum.
    pub fn std_dev(&self) -> f64 {
        self.variance.sqrt()
    }
}

/// One law with a finite multiplicity, its support already checked.
struct Term<'a> {
    law: Law<'a>,
    lower: f64,
    upper: f64,
    multiplicity: f64,
}

/// `ln G(t) = sum_i m_i ln F_i(t)` over the non-constant laws.
fn log_cdf(terms: &[Term<'_>], t: f64) -> Result<f64> {
    let mut sum = 0.0;
    for term in terms {
        if t < term.lower {
            return Ok(f64::NEG_INFINITY);
        }
        if t >= term.upper {
            continue;
        }
        let ln_f = match term.law {
            Law::Cdf { cdf, .. } => ln_unit("cdf", t, cdf(t))?.ln(),
            Law::Survival { survival, .. } => (-ln_unit("survival", t, survival(t))?).ln_1p(),
            Law::Constant(_) => 0.0,
        };
        sum += term.multiplicity * ln_f;
        if sum == f64::NEG_INFINITY {
            return Ok(sum);
        }
    }
    Ok(sum)
}

/// A value that must lie in `[0, 1]`.
fn ln_unit(what: &str, t: f64, value: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(AnalyticError::InvalidParameter {
            what: format!("{what}({t})"),
            value,
        })
    }
}

fn invalid(what: &str, value: f64) -> AnalyticError {
    AnalyticError::InvalidParameter {
        what: what.to_owned(),
        value,
    }
}

/// `E[M]`, `E[M^2]` and `Var M` of the maximum `M` of independent random times: each entry
/// `(law, m)` stands for `m` independent copies of `law` (entries with `m = 0` are ignored), so
/// `K = sum m_i` may be in the millions at the cost of one evaluation per distinct law and
/// quadrature node.
///
/// The integrals of the module documentation are computed by adaptive Gauss-Kronrod 7-15 to a
/// relative accuracy [`EXPECTED_MAX_REL_TOL`] (`1e-9`) each. An infinite end is cut into
/// shells `[s 2^j, s 2^(j+1)]` from the pivot `c`, `s` the distance to a quartile of `M` (so
/// nothing depends on the time unit), integrated until the shells left are bounded, from the
/// geometric decay of the last two, below `1e-9` of the sum: an exponential tail ends after a
/// few shells, a power tail `P(M > t) ~ t^-a` after about `30 / (a - 1)` (first moment) or
/// `30 / (a - 2)` (second). A tail too long for a moment (shells that stop shrinking for 40
/// doublings) is `NotConverged`: a law with
/// `E[X^2] = inf` makes this function fail while [`expected_max`] still gives the finite
/// mean. When no law is bounded below the pivot is
/// a median of `M`, found by doubling and bisection.
///
/// Errors: `InvalidParameter` for no law with a positive multiplicity, a non-finite constant, a
/// NaN or `+inf` lower end, an upper end below the lower end, or a CDF or survival function
/// outside `[0, 1]` (or NaN) at some `t`; `NotConverged` if an integral does not settle (an
/// infinite mean or second moment) or no quartile of `M` is found (the functions are not
/// distributions).
///
/// ```
/// use parsim::analytic::{Law, max_moments};
///
/// // A barrier of 1000 ranks with mean-1 exponential work: E[M] = H_1000, Var M = sum 1/i^2.
/// let exp = |t: f64| (-t).exp();
/// let law = Law::Survival { survival: &exp, lower: 0.0, upper: f64::INFINITY };
/// let m = max_moments(&[(law, 1000)]).unwrap();
/// assert!((m.mean - 7.485_470_860_550_345).abs() < 1e-8);
/// assert!((m.variance - 1.643_934_566_681_560).abs() < 1e-7);
/// ```
pub fn max_moments(laws: &[(Law<'_>, u64)]) -> Result<MaxMoments> {
    moments(laws, true)
}

/// `E[M]` alone, as [`max_moments`] computes it but without the second-moment integrals: half
/// the work, and a value whenever `E[M]` is finite (a tail with `E[X^2] = inf` included).
///
/// Errors: as [`max_moments`].
///
/// ```
/// use parsim::analytic::{Law, expected_max};
///
/// // Eight ranks of mean-1 exponential work and one deterministic rank of 2.5.
/// let exp = |t: f64| (-t).exp();
/// let law = Law::Survival { survival: &exp, lower: 0.0, upper: f64::INFINITY };
/// let m = expected_max(&[(law, 8), (Law::Constant(2.5), 1)]).unwrap();
/// // 2.5 + sum_j C(8, j) (-1)^(j+1) e^(-2.5 j) / j; without the constant it would be H_8 = 2.718
/// assert!((m - 3.071_918_813_220_097).abs() < 1e-8);
/// ```
pub fn expected_max(laws: &[(Law<'_>, u64)]) -> Result<f64> {
    moments(laws, false).map(|m| m.mean)
}

/// The moments; the second-moment integrals only when `second` (else `variance` is 0).
fn moments(laws: &[(Law<'_>, u64)], second: bool) -> Result<MaxMoments> {
    let mut constant: Option<f64> = None;
    let mut terms = Vec::with_capacity(laws.len());
    for (index, &(law, multiplicity)) in laws.iter().enumerate() {
        if multiplicity == 0 {
            continue;
        }
        let (lower, upper) = match law {
            Law::Constant(c) => {
                if !c.is_finite() {
                    return Err(invalid(&format!("constant[{index}]"), c));
                }
                constant = Some(constant.map_or(c, |k| k.max(c)));
                continue;
            }
            Law::Cdf { lower, upper, .. } | Law::Survival { lower, upper, .. } => (lower, upper),
        };
        if lower.is_nan() || lower == f64::INFINITY {
            return Err(invalid(&format!("lower[{index}]"), lower));
        }
        if upper.is_nan() || upper < lower {
            return Err(invalid(&format!("upper[{index}]"), upper));
        }
        terms.push(Term {
            law,
            lower,
            upper,
            multiplicity: multiplicity as f64,
        });
    }
    let lowest = terms
        .iter()
        .map(|t| t.lower)
        .chain(constant)
        .fold(f64::NEG_INFINITY, f64::max);
    let highest = terms
        .iter()
        .map(|t| t.upper)
        .chain(constant)
        .fold(f64::NEG_INFINITY, f64::max);
    if terms.is_empty() {
        let Some(c) = constant else {
            return Err(invalid("number of laws with a positive multiplicity", 0.0));
        };
        return Ok(MaxMoments {
            mean: c,
            second_moment: c * c,
            variance: 0.0,
        });
    }
    let g = |t: f64| log_cdf(&terms, t);
    let pivot = if lowest.is_finite() {
        lowest
    } else {
        median(&g, highest)?
    };
    let (right_1, right_2) = if highest > pivot {
        let survival = |t: f64| -> Result<f64> { Ok(-g(t)?.exp_m1()) };
        side(&survival, pivot, highest, 1.0, second)?
    } else {
        (0.0, 0.0)
    };
    let (left_1, left_2) = if lowest.is_finite() {
        (0.0, 0.0)
    } else {
        let cdf = |t: f64| -> Result<f64> { Ok(g(t)?.exp()) };
        side(&cdf, pivot, f64::NEG_INFINITY, -1.0, second)?
    };
    let shift = right_1 - left_1;
    let mean = pivot + shift;
    let variance = if second {
        (right_2 + left_2 - shift * shift).max(0.0)
    } else {
        0.0
    };
    Ok(MaxMoments {
        mean,
        second_moment: variance + mean * mean,
        variance,
    })
}

/// `(int w(t) dt, int 2 |t - c| w(t) dt)` from the pivot `c` to `end` on the side `dir`
/// (`+1` right with `w = 1 - G`, `-1` left with `w = G`); the second only if `second_moment`.
fn side(
    w: &dyn Fn(f64) -> Result<f64>,
    c: f64,
    end: f64,
    dir: f64,
    second_moment: bool,
) -> Result<(f64, f64)> {
    let mut first = |x: f64| w(c + dir * x);
    let mut second = |x: f64| Ok(2.0 * x * w(c + dir * x)?);
    if end.is_finite() {
        let width = (end - c).abs();
        let one =
            quadrature::integrate(&mut first, 0.0, width, EXPECTED_MAX_REL_TOL, MAX_SEGMENTS)?;
        let two = if second_moment {
            quadrature::integrate(&mut second, 0.0, width, EXPECTED_MAX_REL_TOL, MAX_SEGMENTS)?
        } else {
            0.0
        };
        return Ok((one, two));
    }
    // the distance from the pivot at which the weight has fallen to a quarter of its value
    // there: a quartile of M beyond the pivot
    let at_pivot = w(c)?;
    if at_pivot == 0.0 {
        return Ok((0.0, 0.0));
    }
    let beyond = |x: f64| -> Result<bool> { Ok(w(c + dir * x)? <= 0.25 * at_pivot) };
    let s = scale(&beyond, c)?;
    let one = shells(&mut first, s)?;
    let two = if second_moment {
        shells(&mut second, s)?
    } else {
        0.0
    };
    Ok((one, two))
}

/// `int_0^inf f(x) dx` for a non-negative `f`: `[0, s]`, then the shells `[s 2^j, s 2^(j+1)]`,
/// each to [`EXPECTED_MAX_REL_TOL`], until the rest is bounded by `EXPECTED_MAX_REL_TOL` times
/// the sum. The bound takes the shells' contributions as falling geometrically at the ratio of
/// the last two (a power tail `x^-a` gives the ratio `2^(1-a)`, an exponential tail a falling
/// one); a ratio that stays at or above 1 for 40 shells in a row, or shells that leave the
/// `f64` range, are an infinite integral (`NotConverged`).
fn shells(f: &mut dyn FnMut(f64) -> Result<f64>, s: f64) -> Result<f64> {
    shells_to(f, s, EXPECTED_MAX_REL_TOL, 0.0)
}

/// [`shells`] to the relative accuracy `rel_tol`, or the absolute `abs_tol` where that is
/// looser (for an integrand known only to some absolute accuracy).
pub(crate) fn shells_to(
    f: &mut dyn FnMut(f64) -> Result<f64>,
    s: f64,
    rel_tol: f64,
    abs_tol: f64,
) -> Result<f64> {
    let mut total = quadrature::integrate_to(f, 0.0, s, rel_tol, abs_tol, MAX_SEGMENTS)?;
    let mut previous = total;
    let mut a = s;
    let mut shell = 0u32;
    let mut growing = 0u32;
    loop {
        let b = 2.0 * a;
        if !b.is_finite() || growing >= GROWING_SHELLS {
            return Err(AnalyticError::NotConverged {
                method: "integrating the tail of the maximum (an infinite moment?)".into(),
                iterations: shell,
                residual: previous,
            });
        }
        // each shell to 1e-9 of itself or 1/16 of 1e-9 of the sum so far, whichever is looser:
        // far shells are small and their integrands rounding noise
        let floor = (rel_tol * total).max(abs_tol) / 16.0;
        let piece = quadrature::integrate_to(f, a, b, rel_tol, floor, MAX_SEGMENTS)?;
        total += piece;
        if piece == 0.0 && previous == 0.0 {
            return Ok(total);
        }
        if previous > 0.0 {
            let ratio = piece / previous;
            if ratio < 1.0 && piece * ratio / (1.0 - ratio) <= (rel_tol * total).max(abs_tol) {
                return Ok(total);
            }
            growing = if ratio >= 1.0 { growing + 1 } else { 0 };
        }
        previous = piece;
        a = b;
        shell += 1;
    }
}

/// The smallest power-of-two multiple of a starting step (`|c|`, or 1 at 0) for which
/// `beyond` holds, to within a factor 2.
fn scale(beyond: &dyn Fn(f64) -> Result<bool>, c: f64) -> Result<f64> {
    let mut s = if c == 0.0 { 1.0 } else { c.abs() };
    let gave_up = |steps: u32, s: f64| AnalyticError::NotConverged {
        method: "locating a quartile of the maximum".into(),
        iterations: steps,
        residual: s,
    };
    if beyond(s)? {
        for step in 0..MAX_SCALE_STEPS {
            let half = 0.5 * s;
            if half == 0.0 || !beyond(half)? {
                return Ok(s);
            }
            s = half;
            if step + 1 == MAX_SCALE_STEPS {
                return Err(gave_up(step, s));
            }
        }
        Ok(s)
    } else {
        for step in 0..MAX_SCALE_STEPS {
            s *= 2.0;
            if !s.is_finite() {
                return Err(gave_up(step, s));
            }
            if beyond(s)? {
                return Ok(s);
            }
        }
        Err(gave_up(MAX_SCALE_STEPS, s))
    }
}

/// A median of `M` when no law is bounded below: doubling out from 0 (or from `highest` when
/// that is below 0), then bisection.
fn median(log_g: &dyn Fn(f64) -> Result<f64>, highest: f64) -> Result<f64> {
    let half = 0.5_f64.ln();
    let gave_up = |steps: u32, at: f64| AnalyticError::NotConverged {
        method: "locating the median of the maximum".into(),
        iterations: steps,
        residual: at,
    };
    let start = if highest < 0.0 { highest } else { 0.0 };
    let (mut lo, mut hi);
    if log_g(start)? >= half {
        hi = start;
        let mut step = if start == 0.0 { 1.0 } else { start.abs() };
        lo = hi - step;
        let mut n = 0;
        while log_g(lo)? >= half {
            hi = lo;
            step *= 2.0;
            lo = start - step;
            n += 1;
            if n > MAX_SCALE_STEPS || !lo.is_finite() {
                return Err(gave_up(n, lo));
            }
        }
    } else {
        lo = start;
        let mut step = 1.0;
        hi = lo + step;
        let mut n = 0;
        while log_g(hi)? < half {
            lo = hi;
            step *= 2.0;
            hi = start + step;
            n += 1;
            if n > MAX_SCALE_STEPS || !hi.is_finite() {
                return Err(gave_up(n, hi));
            }
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if log_g(mid)? >= half {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::harmonic;
    use crate::analytic::mva::tests::close;

    const INF: f64 = f64::INFINITY;

    fn exp_survival(rate: f64) -> impl Fn(f64) -> f64 {
        move |t: f64| if t <= 0.0 { 1.0 } else { (-rate * t).exp() }
    }

    fn exp_cdf(rate: f64) -> impl Fn(f64) -> f64 {
        move |t: f64| if t <= 0.0 { 0.0 } else { -(-rate * t).exp_m1() }
    }

    /// `sum over non-empty subsets S of (-1)^(|S|+1) f(sum_{i in S} rate_i)`.
    fn inclusion_exclusion(rates: &[f64], f: impl Fn(f64) -> f64) -> f64 {
        (1..1u32 << rates.len())
            .map(|mask| {
                let sum: f64 = (0..rates.len())
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| rates[i])
                    .sum();
                let sign = if mask.count_ones() % 2 == 1 {
                    1.0
                } else {
                    -1.0
                };
                sign * f(sum)
            })
            .sum()
    }

    #[test]
    fn iid_exponentials_give_the_harmonic_numbers() {
        // E[M] = H_K / rate; E[M^2] = (sum 1/i^2 + H_K^2) / rate^2.
        for k in [1u32, 2, 5, 64, 1000] {
            let s = exp_survival(2.0);
            let law = Law::Survival {
                survival: &s,
                lower: 0.0,
                upper: INF,
            };
            let m = max_moments(&[(law, u64::from(k))]).unwrap();
            let h = harmonic(k);
            let h2: f64 = (1..=k).rev().map(|i| 1.0 / f64::from(i * i)).sum();
            assert!(close(m.mean, h / 2.0, 1e-9), "k {k}: {}", m.mean);
            assert!(close(m.variance, h2 / 4.0, 1e-8), "k {k}: {}", m.variance);
            assert!(close(m.second_moment, (h2 + h * h) / 4.0, 1e-9));
        }
    }

    #[test]
    fn a_million_identical_ranks_cost_one_law() {
        // H_{10^6} = 14.392726722865723631...; Var = pi^2/6 - sum_{i > 10^6} 1/i^2.
        let s = exp_survival(1.0);
        let calls = std::cell::Cell::new(0u64);
        let counted = |t: f64| {
            calls.set(calls.get() + 1);
            s(t)
        };
        let counted_law = Law::Survival {
            survival: &counted,
            lower: 0.0,
            upper: INF,
        };
        let m = max_moments(&[(counted_law, 1_000_000)]).unwrap();
        assert!(close(m.mean, 14.392_726_722_865_724, 1e-9), "{}", m.mean);
        let var = std::f64::consts::PI.powi(2) / 6.0 - 1e-6 + 0.5e-12;
        assert!(close(m.variance, var, 1e-8), "{}", m.variance);
        assert!(calls.get() < 100_000, "{} evaluations", calls.get());
        // The CDF form loses 1 - F to cancellation only where it no longer matters.
        let c = exp_cdf(1.0);
        let by_cdf = Law::Cdf {
            cdf: &c,
            lower: 0.0,
            upper: INF,
        };
        let m2 = max_moments(&[(by_cdf, 1_000_000)]).unwrap();
        assert!(close(m2.mean, m.mean, 1e-7), "{} vs {}", m2.mean, m.mean);
    }

    #[test]
    fn iid_uniforms_by_the_beta_law() {
        // max of K uniforms on [a, b] is a + (b - a) Beta(K, 1).
        let (a, b) = (3.0, 7.0);
        let u = |t: f64| ((t - a) / (b - a)).clamp(0.0, 1.0);
        for k in [1u64, 4, 100] {
            let law = Law::Cdf {
                cdf: &u,
                lower: a,
                upper: b,
            };
            let m = max_moments(&[(law, k)]).unwrap();
            let kf = k as f64;
            let beta_mean = kf / (kf + 1.0);
            let beta_var = kf / ((kf + 1.0).powi(2) * (kf + 2.0));
            assert!(close(m.mean, a + (b - a) * beta_mean, 1e-9), "k {k}");
            assert!(close(m.variance, (b - a).powi(2) * beta_var, 1e-8), "k {k}");
        }
    }

    #[test]
    fn non_identical_exponentials_by_inclusion_exclusion() {
        // E[M] = sum_S (-1)^(|S|+1) / r_S, E[M^2] = sum_S (-1)^(|S|+1) 2 / r_S^2.
        for rates in [vec![1.0, 3.0], vec![0.5, 2.0, 7.0]] {
            let survivals: Vec<_> = rates.iter().map(|&r| exp_survival(r)).collect();
            let laws: Vec<_> = survivals
                .iter()
                .map(|s| {
                    (
                        Law::Survival {
                            survival: s,
                            lower: 0.0,
                            upper: INF,
                        },
                        1,
                    )
                })
                .collect();
            let m = max_moments(&laws).unwrap();
            let mean = inclusion_exclusion(&rates, |r| 1.0 / r);
            let second = inclusion_exclusion(&rates, |r| 2.0 / (r * r));
            assert!(close(m.mean, mean, 1e-9), "{rates:?}: {}", m.mean);
            assert!(close(m.second_moment, second, 1e-9), "{rates:?}");
        }
        // Multiplicities are copies: (rate 1) x 2 and (rate 3) x 1.
        let one = exp_survival(1.0);
        let three = exp_survival(3.0);
        let m = max_moments(&[
            (
                Law::Survival {
                    survival: &one,
                    lower: 0.0,
                    upper: INF,
                },
                2,
            ),
            (
                Law::Survival {
                    survival: &three,
                    lower: 0.0,
                    upper: INF,
                },
                1,
            ),
        ])
        .unwrap();
        let mean = inclusion_exclusion(&[1.0, 1.0, 3.0], |r| 1.0 / r);
        assert!(close(m.mean, mean, 1e-9));
    }

    #[test]
    fn constants_are_exact_point_masses() {
        // max(3, X_1..X_5), X exponential(1): 3 + sum_j C(5,j) (-1)^(j+1) e^(-3j)/j.
        let c = exp_cdf(1.0);
        let law = Law::Cdf {
            cdf: &c,
            lower: 0.0,
            upper: INF,
        };
        let m = max_moments(&[(law, 5), (Law::Constant(3.0), 1), (Law::Constant(1.0), 7)]).unwrap();
        let binom = [5.0, 10.0, 10.0, 5.0, 1.0];
        let tail: f64 = (1..=5)
            .map(|j| {
                let sign = if j % 2 == 1 { 1.0 } else { -1.0 };
                sign * binom[j - 1] * (-3.0 * j as f64).exp() / j as f64
            })
            .sum();
        assert!(close(m.mean, 3.0 + tail, 1e-9), "{}", m.mean);
        // Only constants: the largest, no variance; a constant above every upper end wins.
        let only = max_moments(&[(Law::Constant(2.0), 3), (Law::Constant(-1.0), 1)]).unwrap();
        assert_eq!((only.mean, only.variance), (2.0, 0.0));
        let u = |t: f64| t.clamp(0.0, 1.0);
        let below = Law::Cdf {
            cdf: &u,
            lower: 0.0,
            upper: 1.0,
        };
        let top = max_moments(&[(below, 9), (Law::Constant(1.5), 1)]).unwrap();
        assert_eq!((top.mean, top.variance), (1.5, 0.0));
    }

    #[test]
    fn laws_unbounded_below_use_a_median_pivot() {
        // Two i.i.d. normals N(mu, s^2): E[max] = mu + s / sqrt(pi), Var = s^2 (1 - 1/pi).
        let (mu, s) = (-40.0, 3.0);
        let phi = |t: f64| 0.5 * statrs::function::erf::erfc(-(t - mu) / (s * 2f64.sqrt()));
        let law = Law::Cdf {
            cdf: &phi,
            lower: f64::NEG_INFINITY,
            upper: INF,
        };
        let m = max_moments(&[(law, 2)]).unwrap();
        let pi = std::f64::consts::PI;
        assert!(close(m.mean, mu + s / pi.sqrt(), 1e-9), "{}", m.mean);
        assert!(
            close(m.variance, s * s * (1.0 - 1.0 / pi), 1e-8),
            "{}",
            m.variance
        );
        // One law of them, and its mean is mu.
        let one = max_moments(&[(law, 1)]).unwrap();
        assert!(close(one.mean, mu, 1e-10) && close(one.variance, s * s, 1e-8));
    }

    #[test]
    fn a_long_tail_has_a_mean_and_no_second_moment() {
        // Pareto index 1.5 on [1, inf): E[X] = 3, E[X^2] infinite; max of 2: E = 2*3 - E[min],
        // min is Pareto index 3 with mean 1.5.
        let sf = |t: f64| if t < 1.0 { 1.0 } else { t.powf(-1.5) };
        let law = Law::Survival {
            survival: &sf,
            lower: 1.0,
            upper: INF,
        };
        assert!(matches!(
            max_moments(&[(law, 2)]),
            Err(AnalyticError::NotConverged { .. })
        ));
        // ... but the mean alone is there: 2 * 3 - E[min], the min Pareto of index 3.
        let mean = expected_max(&[(law, 2)]).unwrap();
        assert!(close(mean, 4.5, 1e-8), "{mean}");
        // index 2.5: E[X] = 5/3, E[min of 2] = 5/4, E[X^2] = 5, E[min^2] = 5/3.
        let sf = |t: f64| if t < 1.0 { 1.0 } else { t.powf(-2.5) };
        let law = Law::Survival {
            survival: &sf,
            lower: 1.0,
            upper: INF,
        };
        let m = max_moments(&[(law, 2)]).unwrap();
        assert!(close(m.mean, 2.0 * 5.0 / 3.0 - 1.25, 1e-8), "{}", m.mean);
        assert!(
            close(m.second_moment, 10.0 - 5.0 / 3.0, 1e-6),
            "{}",
            m.second_moment
        );
    }

    #[test]
    fn refuses_what_is_not_a_law() {
        let nan = |_t: f64| f64::NAN;
        let bad = Law::Cdf {
            cdf: &nan,
            lower: 0.0,
            upper: 1.0,
        };
        assert!(matches!(
            max_moments(&[(bad, 1)]),
            Err(AnalyticError::InvalidParameter { .. })
        ));
        let c = exp_cdf(1.0);
        let reversed = Law::Cdf {
            cdf: &c,
            lower: 1.0,
            upper: 0.5,
        };
        assert!(max_moments(&[(reversed, 1)]).is_err());
        assert!(max_moments(&[(Law::Constant(f64::NAN), 1)]).is_err());
        assert!(max_moments(&[]).is_err());
        assert!(max_moments(&[(Law::Constant(1.0), 0)]).is_err());
        // never reaches 1: no quartile
        let half = |_t: f64| 0.5;
        let defective = Law::Cdf {
            cdf: &half,
            lower: 0.0,
            upper: INF,
        };
        assert!(max_moments(&[(defective, 1)]).is_err());
    }
}
