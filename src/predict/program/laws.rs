//! Laws of sums and maxima of independent durations, for the stochastic evaluation
//! ([`super::stochastic`]): the law of what a rank adds between two synchronisations (a
//! [`Sum`] of independent [`Piece`]s and earlier maxima, plus a constant) and the law of the
//! latest of several such sums ([`Maximum`], the product of their distribution functions).
//!
//! A sum's distribution function is exact in closed form for one piece, for gammas of one
//! scale (exponential, Erlang, gamma and a region's total, summed by adding shapes) and for
//! constants; two parts are convolved numerically, `F_{A+B}(t) = int_0^1 F_A(t - Q_B(u)) du`
//! over the quantile of a piece `B`, by adaptive Gauss-Kronrod. Anything larger (three
//! heterogeneous parts, or two maxima) is refused: the evaluation is then not exact.

use std::rc::Rc;

use statrs::distribution::{ContinuousCDF, Gamma as GammaLaw};

use super::graph::Random;
use crate::analytic::cost::{allowance, budget_text, raise, scaled};
use crate::analytic::{self, Law as MaxLaw, MaxMoments};
use crate::dist::{Dist, Law};

/// Relative accuracy of a convolution's integral, with an absolute floor (a probability).
const CONVOLUTION_REL_TOL: f64 = 1e-10;
const CONVOLUTION_ABS_TOL: f64 = 1e-13;
/// Subintervals of a convolution's integral.
const CONVOLUTION_SEGMENTS: u32 = 400;

/// Most work, in distribution-function evaluations of pieces per evaluation, a law may cost.
const MAX_COST: f64 = 20_000.0;

/// Most distribution-function evaluations of pieces (a quantile counted by its cost) one
/// expected maximum may spend, its integrals and their convolutions together, before it is
/// refused as too costly: about 0.08 s on one core (the estimate of
/// [`Sum::cost`] per evaluation cannot say how many evaluations the adaptive integrals take).
const MAX_WORK: f64 = 5e5;

thread_local! {
    /// The work spent by the expected maximum being computed on this thread.
    static SPENT: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// Charges `work` to the expected maximum being computed: false once it is over [`MAX_WORK`]
/// (times the budget factor in force).
fn charge(work: f64) -> bool {
    SPENT.with(|s| {
        let spent = s.get() + work;
        s.set(spent);
        spent <= scaled(MAX_WORK)
    })
}

/// One random summand.
#[derive(Clone, Copy, Debug)]
pub enum Piece<'p> {
    /// A gamma law (exponential: shape 1).
    Gamma {
        /// Shape.
        shape: f64,
        /// Scale.
        scale: f64,
    },
    /// A uniform law.
    Uniform {
        /// Lower end.
        min: f64,
        /// Upper end.
        max: f64,
    },
    /// `b X`, `X` of a distribution with no closed form here.
    Scaled {
        /// The law of `X`.
        dist: &'p Dist,
        /// The factor, positive.
        b: f64,
    },
}

impl Piece<'_> {
    /// `P(X <= x)`.
    pub fn cdf(&self, x: f64) -> f64 {
        match *self {
            Piece::Gamma { .. } if x <= 0.0 => 0.0,
            Piece::Gamma { shape: 1.0, scale } => -(-x / scale).exp_m1(),
            Piece::Gamma { shape, scale } => {
                GammaLaw::new(shape, 1.0 / scale).map_or(f64::NAN, |g| g.cdf(x))
            }
            Piece::Uniform { min, max } => ((x - min) / (max - min)).clamp(0.0, 1.0),
            Piece::Scaled { dist, b } => dist.cdf(x / b),
        }
    }

    /// `P(X > x)`, without cancellation in the upper tail where there is a closed form.
    pub fn survival(&self, x: f64) -> f64 {
        match *self {
            Piece::Gamma { .. } if x <= 0.0 => 1.0,
            Piece::Gamma { shape: 1.0, scale } => (-x / scale).exp(),
            Piece::Gamma { shape, scale } => {
                GammaLaw::new(shape, 1.0 / scale).map_or(f64::NAN, |g| g.sf(x))
            }
            _ => 1.0 - self.cdf(x),
        }
    }

    /// The quantile at `u` in `(0, 1)` (`NaN` when it cannot be computed).
    pub fn quantile(&self, u: f64) -> f64 {
        match *self {
            Piece::Gamma { shape: 1.0, scale } => -scale * (-u).ln_1p(),
            Piece::Gamma { shape, scale } => {
                GammaLaw::new(shape, 1.0 / scale).map_or(f64::NAN, |g| g.inverse_cdf(u))
            }
            Piece::Uniform { min, max } => min + u * (max - min),
            Piece::Scaled { dist, b } => dist.quantile(u).map_or(f64::NAN, |q| b * q),
        }
    }

    /// Distribution-function evaluations one [`Piece::quantile`] costs: 1 for a closed form,
    /// about a dozen for a gamma's (Newton steps on its CDF in `statrs`), about fifty for a
    /// hyperexponential's (doubling, then bisection to `1e-12`).
    fn quantile_cost(&self) -> f64 {
        let numerical = |d: &Dist| match d.law() {
            Law::HyperExp { .. } => 50.0,
            Law::Erlang { .. } | Law::Gamma(..) | Law::LogNormal(..) => 12.0,
            _ => 1.0,
        };
        match *self {
            Piece::Gamma { shape: 1.0, .. } | Piece::Uniform { .. } => 1.0,
            Piece::Gamma { .. } => 12.0,
            Piece::Scaled { dist, .. } => numerical(dist),
        }
    }

    /// The smallest value.
    pub fn lower(&self) -> f64 {
        match *self {
            Piece::Gamma { .. } => 0.0,
            Piece::Uniform { min, .. } => min,
            Piece::Scaled { dist, b } => b * dist.lower_bound(),
        }
    }

    /// The largest value (infinite when unbounded).
    pub fn upper(&self) -> f64 {
        match *self {
            Piece::Uniform { max, .. } => max,
            _ => f64::INFINITY,
        }
    }
}

/// A graph's random duration as a constant plus a piece (no piece: the law is a constant).
pub fn piece<'p>(law: &Random<'p>) -> (f64, Option<Piece<'p>>) {
    match *law {
        Random::Draw(d) => of_dist(d, 1.0),
        Random::Region { n, cost } => {
            let nf = n as f64;
            let (m, scv) = (cost.mean(), cost.scv());
            if scv <= 0.0 || m <= 0.0 {
                (nf * m, None)
            } else {
                // the engine's draw: a gamma of mean n m and SCV scv / n
                let shape = nf / scv;
                (
                    0.0,
                    Some(Piece::Gamma {
                        shape,
                        scale: nf * m / shape,
                    }),
                )
            }
        }
        Random::Affine { a, b, dist } => {
            let (c, p) = of_dist(dist, b);
            (a + c, p)
        }
    }
}

/// `b X`, `X` of law `d`, as a constant plus a piece.
fn of_dist(d: &Dist, b: f64) -> (f64, Option<Piece<'_>>) {
    if b <= 0.0 {
        return (0.0, None);
    }
    match *d.law() {
        Law::Deterministic { value } => (b * value, None),
        Law::Exponential { mean } => (
            0.0,
            Some(Piece::Gamma {
                shape: 1.0,
                scale: b * mean,
            }),
        ),
        Law::Erlang { k, mean } => (
            0.0,
            Some(Piece::Gamma {
                shape: f64::from(k),
                scale: b * mean / f64::from(k),
            }),
        ),
        Law::Gamma(_, p) => (
            0.0,
            Some(Piece::Gamma {
                shape: p.shape,
                scale: b * p.scale,
            }),
        ),
        Law::Uniform { min, max } if max > min => (
            0.0,
            Some(Piece::Uniform {
                min: b * min,
                max: b * max,
            }),
        ),
        Law::Uniform { min, .. } => (b * min, None),
        _ => (0.0, Some(Piece::Scaled { dist: d, b })),
    }
}

/// The law of a sum of independent parts plus a constant.
#[derive(Clone, Debug, Default)]
pub struct Sum<'p> {
    /// The constant.
    pub shift: f64,
    /// The pieces.
    pub pieces: Vec<Piece<'p>>,
    /// Maxima taken earlier.
    pub maxima: Vec<Rc<Maximum<'p>>>,
}

impl<'p> Sum<'p> {
    /// Adds a piece, merging gammas of one scale.
    pub fn add(&mut self, p: Piece<'p>) {
        if let Piece::Gamma { shape, scale } = p {
            for q in &mut self.pieces {
                if let Piece::Gamma { shape: s, scale: c } = q
                    && (*c - scale).abs() <= 1e-12 * scale
                {
                    *s += shape;
                    return;
                }
            }
        }
        self.pieces.push(p);
    }

    /// A key equal for equal laws: the shift in multiples of `quantum`, the pieces'
    /// parameters, the maxima's addresses.
    pub fn key(&self, quantum: f64) -> Vec<u64> {
        let mut k = vec![(self.shift / quantum).round() as i64 as u64];
        for p in &self.pieces {
            match *p {
                Piece::Gamma { shape, scale } => k.extend([1, shape.to_bits(), scale.to_bits()]),
                Piece::Uniform { min, max } => k.extend([2, min.to_bits(), max.to_bits()]),
                Piece::Scaled { dist, b } => {
                    k.extend([3, std::ptr::from_ref(dist) as usize as u64, b.to_bits()]);
                }
            }
        }
        for m in &self.maxima {
            k.extend([4, Rc::as_ptr(m) as usize as u64]);
        }
        k
    }

    /// The smallest value.
    pub fn lower(&self) -> f64 {
        self.shift
            + self.pieces.iter().map(Piece::lower).sum::<f64>()
            + self.maxima.iter().map(|m| m.lower).sum::<f64>()
    }

    /// The largest value.
    pub fn upper(&self) -> f64 {
        self.shift
            + self.pieces.iter().map(Piece::upper).sum::<f64>()
            + self.maxima.iter().map(|m| m.upper).sum::<f64>()
    }

    /// Distribution-function evaluations of pieces one evaluation costs, or why the law has
    /// no exact form here: a convolution integrates over about 60 quantiles of one part, each
    /// with a distribution-function evaluation of the other.
    pub fn cost(&self) -> Result<f64, String> {
        let cost = match (&self.pieces[..], &self.maxima[..]) {
            ([] | [_], []) => 1.0,
            ([], [m]) => m.cost,
            ([p, q], []) => 60.0 * (1.0 + p.quantile_cost().min(q.quantile_cost())),
            ([p], [m]) => 60.0 * (p.quantile_cost() + m.cost),
            (p, m) => {
                let (p, m) = (p.len(), m.len());
                return Err(format!(
                    "a rank's time between synchronisations is a sum of {} random parts (its law is computed exactly for two)",
                    p + m
                ));
            }
        };
        if cost > MAX_COST {
            return Err("a sum of maxima whose law is too costly to convolve".to_owned());
        }
        Ok(cost)
    }

    /// `P(S <= t)` (`NaN` when a numerical integral fails).
    pub fn cdf(&self, t: f64) -> f64 {
        let x = t - self.shift;
        match (&self.pieces[..], &self.maxima[..]) {
            ([], []) => f64::from(u8::from(x >= 0.0)),
            ([p], []) => p.cdf(x),
            ([], [m]) => m.cdf(x),
            // (integrated over the quantiles of the part whose quantile is cheaper)
            ([p, q], []) if p.quantile_cost() <= q.quantile_cost() => {
                convolve(p, &|y| q.cdf(y), q.lower(), x)
            }
            ([q, p], []) => convolve(p, &|y| q.cdf(y), q.lower(), x),
            ([p], [m]) => convolve(p, &|y| m.cdf(y), m.lower, x),
            _ => f64::NAN,
        }
    }

    /// `P(S > t)`.
    pub fn survival(&self, t: f64) -> f64 {
        match (&self.pieces[..], &self.maxima[..]) {
            ([p], []) => p.survival(t - self.shift),
            _ => 1.0 - self.cdf(t),
        }
    }

    /// True when the survival function has its own form (better in the far tail).
    fn has_survival(&self) -> bool {
        self.pieces.len() == 1 && self.maxima.is_empty()
    }
}

/// `P(Q + Y <= x) = int_0^1 F_Y(x - Q(u)) du`, `Q` the quantile of `p`, `F_Y` of a law with
/// smallest value `lower` (so only `u < F_p(x - lower)` contributes).
fn convolve(p: &Piece<'_>, f: &dyn Fn(f64) -> f64, lower: f64, x: f64) -> f64 {
    let top = p.cdf(x - lower);
    // (a NaN counts as nothing)
    if top.is_nan() || top <= 0.0 {
        return 0.0;
    }
    let work = 1.0 + p.quantile_cost();
    let mut integrand = |u: f64| -> analytic::Result<f64> {
        if !charge(work) {
            return Err(analytic::AnalyticError::NotConverged {
                method: "convolution (over its work budget)".to_owned(),
                iterations: 0,
                residual: f64::NAN,
            });
        }
        let q = p.quantile(u);
        let v = f(x - q);
        if v.is_nan() || q.is_nan() {
            Err(analytic::AnalyticError::NotConverged {
                method: "convolution".to_owned(),
                iterations: 0,
                residual: f64::NAN,
            })
        } else {
            Ok(v)
        }
    };
    crate::analytic::quadrature_to(
        &mut integrand,
        0.0,
        top,
        CONVOLUTION_REL_TOL,
        CONVOLUTION_ABS_TOL,
        CONVOLUTION_SEGMENTS,
    )
    .map_or(f64::NAN, |v| v.clamp(0.0, 1.0))
}

/// The law of the latest of independent sums, each with a multiplicity; its moments are
/// computed when first asked for.
#[derive(Debug)]
pub struct Maximum<'p> {
    /// The sums and how many independent copies of each.
    pub terms: Vec<(Sum<'p>, u64)>,
    /// Smallest value.
    pub lower: f64,
    /// Largest value.
    pub upper: f64,
    /// Distribution-function evaluations of pieces one evaluation costs.
    cost: f64,
    moments: std::cell::OnceCell<Result<MaxMoments, String>>,
}

impl<'p> Maximum<'p> {
    /// The maximum of `terms` (each sum with its multiplicity): a term that is itself a
    /// maximum plus a constant is replaced by that maximum's terms, and equal sums (shifts
    /// compared in multiples of `quantum`) are counted once with their multiplicities. `Err`
    /// says why its law is not computed.
    pub fn new(terms: Vec<(Sum<'p>, u64)>, quantum: f64) -> Result<Maximum<'p>, String> {
        let mut flat: Vec<(Sum<'p>, u64)> = Vec::with_capacity(terms.len());
        for (s, m) in terms {
            if let ([], [inner]) = (&s.pieces[..], &s.maxima[..]) {
                for (t, k) in &inner.terms {
                    let mut t = t.clone();
                    t.shift += s.shift;
                    flat.push((t, m * k));
                }
            } else {
                flat.push((s, m));
            }
        }
        let mut index: rustc_hash::FxHashMap<Vec<u64>, usize> = Default::default();
        let mut grouped: Vec<(Sum<'p>, u64)> = Vec::with_capacity(flat.len());
        for (s, m) in flat {
            let key = s.key(quantum);
            match index.get(&key) {
                Some(&i) => grouped[i].1 += m,
                None => {
                    index.insert(key, grouped.len());
                    grouped.push((s, m));
                }
            }
        }
        let cost = total_cost(&grouped)?;
        let lower = grouped
            .iter()
            .map(|(s, _)| s.lower())
            .fold(f64::NEG_INFINITY, f64::max);
        let upper = grouped
            .iter()
            .map(|(s, _)| s.upper())
            .fold(f64::NEG_INFINITY, f64::max);
        Ok(Maximum {
            terms: grouped,
            lower,
            upper,
            cost,
            moments: std::cell::OnceCell::new(),
        })
    }

    /// Its mean and variance, exact ([`analytic::max_moments`]).
    pub fn moments(&self) -> Result<MaxMoments, String> {
        self.moments
            .get_or_init(|| max_moments(&self.terms))
            .clone()
    }

    /// `P(M <= x)`: the product of the sums' distribution functions.
    pub fn cdf(&self, x: f64) -> f64 {
        if x < self.lower {
            return 0.0;
        }
        let mut ln = 0.0;
        for (s, m) in &self.terms {
            let f = s.cdf(x);
            if f.is_nan() {
                return f64::NAN;
            }
            if f <= 0.0 {
                return 0.0;
            }
            ln += *m as f64 * f.ln();
        }
        ln.exp()
    }
}

/// Distribution-function evaluations of pieces one evaluation of the maximum of `terms` costs,
/// or why it is too costly.
pub fn total_cost(terms: &[(Sum<'_>, u64)]) -> Result<f64, String> {
    let mut cost = 0.0;
    for (s, _) in terms {
        cost += s.cost()?;
    }
    if cost > scaled(MAX_COST) {
        return Err(format!(
            "a maximum of {} different laws is too costly: an estimated {cost:.1e} distribution-function evaluations per value, over the budget of {}; {}",
            terms.len(),
            budget_text(scaled(MAX_COST)),
            allowance(cost, MAX_COST)
        ));
    }
    Ok(cost)
}

/// The moments of the maximum of independent sums with multiplicities (refused when one
/// evaluation of its distribution function would cost more than `MAX_COST`, or when the
/// whole computation spends more than `MAX_WORK`).
pub fn max_moments(terms: &[(Sum<'_>, u64)]) -> Result<MaxMoments, String> {
    total_cost(terms)?;
    let outer = SPENT.with(|s| s.replace(0.0));
    let moments = max_moments_within_budget(terms);
    let spent = SPENT.with(|s| s.replace(outer + s.get()));
    if spent > scaled(MAX_WORK) {
        return Err(format!(
            "the expected maximum (of {} different laws) is too costly: more than {} distribution-function evaluations (the budget); {}",
            terms.len(),
            budget_text(scaled(MAX_WORK)),
            raise()
        ));
    }
    moments
}

/// [`max_moments`], charging its work.
fn max_moments_within_budget(terms: &[(Sum<'_>, u64)]) -> Result<MaxMoments, String> {
    if let [(s, _)] = terms
        && s.pieces.is_empty()
        && s.maxima.is_empty()
    {
        return Ok(MaxMoments {
            mean: s.shift,
            second_moment: s.shift * s.shift,
            variance: 0.0,
        });
    }
    let cdfs: Vec<Box<dyn Fn(f64) -> f64 + '_>> = terms
        .iter()
        .map(|(s, _)| -> Box<dyn Fn(f64) -> f64 + '_> {
            // (a NaN, once over budget, fails the integral at once)
            if s.has_survival() {
                Box::new(move |t| if charge(1.0) { s.survival(t) } else { f64::NAN })
            } else {
                Box::new(move |t| if charge(1.0) { s.cdf(t) } else { f64::NAN })
            }
        })
        .collect();
    let laws: Vec<(MaxLaw<'_>, u64)> = terms
        .iter()
        .zip(&cdfs)
        .map(|((s, m), f)| {
            let law = if s.pieces.is_empty() && s.maxima.is_empty() {
                MaxLaw::Constant(s.shift)
            } else if s.has_survival() {
                MaxLaw::Survival {
                    survival: f.as_ref(),
                    lower: s.lower(),
                    upper: s.upper(),
                }
            } else {
                MaxLaw::Cdf {
                    cdf: f.as_ref(),
                    lower: s.lower(),
                    upper: s.upper(),
                }
            };
            (law, *m)
        })
        .collect();
    analytic::max_moments(&laws).map_err(|e| format!("the expected maximum failed: {e}"))
}
