//! Open fork-join queue of `K` identical FCFS single-server branches with any service law and
//! Poisson arrivals: a light-traffic interpolation of the mean response time.
//!
//! With `rho = lambda m` (`m` the mean service time, `c^2` its SCV) the interpolated quantity is
//! `f(rho) = (1 - rho) E[T](rho)`, which is finite on `[0, 1]` (Reiman and Simon, "An
//! interpolation approximation for queueing systems with Poisson input", Operations Research
//! 36(3), 1988):
//!
//! ```text
//! f(rho) = T0 + (T1 - T0) rho + (h - T1) rho^2
//! T0 = E[max_i S_i]                                    (light-traffic limit)
//! T1 = dE[T]/d rho at 0 = (1/m) int_0^inf (E[max_i (S'_i + (S_i - t)^+)] - T0) dt
//! h  = lim (1 - rho) E[T] = min(T1, H_K m (1 + c^2) / 2)
//! ```
//!
//! `T0` and `T1` are exact: in light traffic a job meets at most one earlier job, which arrived
//! `t` ago at rate `lambda dt` and still holds branch `i` for `(S_i - t)^+` (first-order light
//! traffic for Poisson input, Reiman and Simon 1988). `T1` is computed from the service CDF and
//! quantile function as a triple integral (the law of `S' + (S - t)^+` is
//! `F(t) F(y) + int_{F(t)}^{F(y + t - lower)} F(y + t - Q(u)) du`).
//!
//! The heavy-traffic limit `h` is not known in general (the branches' waits tend to a reflected
//! Brownian motion whose correlation `1/(1 + c^2)` comes from the shared arrivals). It is taken
//! equal to the light-traffic slope `T1`, as Varma and Makowski do for exponential branches
//! ("Interpolation approximations for symmetric fork-join queues", Performance Evaluation 20,
//! 1994: there the slope is their `A_K m` and agrees with the exact heavy-traffic limit at
//! `K = 2`, Flatto and Hahn 1984). Then `f` is linear: `E[T] = [T0 + (T1 - T0) rho] / (1 - rho)`.
//! `T1 = h` is also exact for `K = 1` (Pollaczek-Khinchine) and for deterministic service (the
//! branches move in lockstep: M/D/1). The limit is capped by `H_K m (1 + c^2)/2`, the limit for
//! independent branches with exponential waits, which bounds it because the waits are
//! associated (Esary, Proschan and Walkup 1967; Nelson and Tantawi 1988): the cap binds for
//! highly variable service (hyperexponential, SCV 4: `T1` would put the limit 35% above it),
//! whose light-traffic slope is driven by rare long jobs that matter less under load.
//!
//! Exact: `K = 1` (any law), deterministic service (any `K`), exponential `K = 2` at every
//! load; the light-traffic value and slope for any law. Elsewhere an approximation. Against
//! simulation (95% half-widths below 0.4%; the table is in the notes of the `maxima` branch):
//! at `rho <= 0.7` within 4.5% for uniform, Erlang-4 and exponential service up to `K = 32`,
//! for hyperexponential (SCV 4 and 10) up to `K = 8` and lognormal (SCV 2) at `K = 4`; +6% for
//! hyperexponential at `K = 16`. It breaks at high load with low-variability service, where the
//! heavy-traffic limit `T1` is too low: uniform `K = 4` is 8% low at `rho = 0.8` and 11% low at
//! `rho = 0.9`, Erlang-4 `K = 8` 7% low at 0.9 (exponential `K = 16`: 6% low at 0.9).
//! Renewal (non-Poisson) arrivals are outside it: the light-traffic terms assume Poisson input.

use serde::Serialize;

use super::check;
use super::error::{AnalyticError, Result};
use super::harmonic::harmonic;
use super::maxima::{Law, expected_max, shells_to};
use super::quadrature;

/// Relative accuracy of the outer (`t`) integral of the light-traffic slope, with an absolute
/// floor in units of the squared mean service time.
const OUTER_REL_TOL: f64 = 1e-6;
const OUTER_ABS_TOL: f64 = 1e-9;
/// Relative accuracy of the middle (`y`) integral, with an absolute floor in units of the mean
/// service time (its integrand is a difference of probabilities known to `1e-14`).
const MIDDLE_REL_TOL: f64 = 1e-7;
const MIDDLE_ABS_TOL: f64 = 1e-10;
/// Relative accuracy of the inner (`u`) integral, with an absolute floor (it is a probability).
const INNER_REL_TOL: f64 = 1e-9;
const INNER_ABS_TOL: f64 = 1e-12;
/// Subinterval cap of each integral.
const SEGMENTS: u32 = 4_000;

/// The service law of the branches. The light-traffic slope needs expectations over the law
/// (`E[F(c - S); S > t]`), taken either over its quantile function (any law, atoms included) or
/// over its density (no atoms; much cheaper when the quantile has no closed form).
#[derive(Clone, Copy)]
pub enum ServiceLaw<'a> {
    /// Deterministic service of this length (`> 0`).
    Constant(f64),
    /// A law by its CDF and quantile function on `[lower, upper]`, `0 <= lower`, with its mean
    /// and SCV (which the caller knows exactly; they are not recomputed).
    ByQuantile {
        /// `P(S <= t)`.
        cdf: &'a dyn Fn(f64) -> f64,
        /// The left-continuous inverse of `cdf` on `(0, 1)`.
        quantile: &'a dyn Fn(f64) -> f64,
        /// Smallest service time (`>= 0`).
        lower: f64,
        /// Largest service time (`+inf` allowed).
        upper: f64,
        /// `E[S] > 0`.
        mean: f64,
        /// `Var S / E[S]^2 >= 0`.
        scv: f64,
    },
    /// An absolutely continuous law by its CDF and density on `[lower, upper]`, `0 <= lower`,
    /// with its mean and SCV.
    ByDensity {
        /// `P(S <= t)`.
        cdf: &'a dyn Fn(f64) -> f64,
        /// The density `dF/dt`.
        density: &'a dyn Fn(f64) -> f64,
        /// Smallest service time (`>= 0`).
        lower: f64,
        /// Largest service time (`+inf` allowed).
        upper: f64,
        /// `E[S] > 0`.
        mean: f64,
        /// `Var S / E[S]^2 >= 0`.
        scv: f64,
    },
}

impl std::fmt::Debug for ServiceLaw<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServiceLaw::Constant(d) => f.debug_tuple("Constant").field(d).finish(),
            ServiceLaw::ByQuantile {
                lower,
                upper,
                mean,
                scv,
                ..
            }
            | ServiceLaw::ByDensity {
                lower,
                upper,
                mean,
                scv,
                ..
            } => f
                .debug_struct(if matches!(self, ServiceLaw::ByQuantile { .. }) {
                    "ByQuantile"
                } else {
                    "ByDensity"
                })
                .field("lower", lower)
                .field("upper", upper)
                .field("mean", mean)
                .field("scv", scv)
                .finish_non_exhaustive(),
        }
    }
}

/// The interpolated mean response time and its ingredients.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ForkJoinInterpolation {
    /// `E[T]` at the given load.
    pub mean_response: f64,
    /// `T0 = E[max_i S_i]`, the response time in light traffic.
    pub light_value: f64,
    /// `T1 = dE[T]/d rho` at `rho = 0`.
    pub light_slope: f64,
    /// `h = lim_{rho -> 1} (1 - rho) E[T]` as used: `T1`, or the cap below it.
    pub heavy_limit: f64,
    /// True when `T1` exceeded `H_K m (1 + c^2) / 2` and the cap was used.
    pub capped: bool,
}

/// Mean response time of an open fork-join queue: Poisson arrivals at rate `lambda`, each job
/// forked into `k` tasks served by `k` identical FCFS single servers with service `service`,
/// and joined when the last ends; by the light-traffic interpolation of the module
/// documentation, `E[T] = [T0 + (T1 - T0) rho + (h - T1) rho^2] / (1 - rho)`.
///
/// Accuracy of the numbers themselves: `T0` to `1e-9`, `T1` to about `1e-6` (relative; a
/// triple integral). Cost: about `10^6` evaluations of the CDF and of the quantile or density
/// for an unbounded law, far fewer for a bounded one; give the density when the quantile has
/// no closed form.
///
/// Errors: `InvalidParameter` for `k == 0` or above `i32::MAX`, a negative or non-finite
/// `lambda`, a non-positive or non-finite mean or constant, a negative or non-finite SCV, a
/// negative or non-finite `lower`, `upper < lower`, or a CDF, quantile or density that returns a
/// value outside its range; `Unstable` for `rho >= 1`; `NotConverged` if an integral does not settle.
///
/// ```
/// use parsim::analytic::{ServiceLaw, fork_join_interpolation};
///
/// // Deterministic branches move in lockstep: the M/D/1 response, whatever K.
/// let r = fork_join_interpolation(8, 0.7, &ServiceLaw::Constant(1.0)).unwrap();
/// assert!((r.mean_response - (1.0 + 0.7 / (2.0 * 0.3))).abs() < 1e-12);
/// ```
pub fn fork_join_interpolation(
    k: u32,
    lambda: f64,
    service: &ServiceLaw<'_>,
) -> Result<ForkJoinInterpolation> {
    let k = check::at_least("k", k, 1)?;
    if i32::try_from(k).is_err() {
        return Err(invalid("k", f64::from(k)));
    }
    let lambda = check::non_negative("lambda", lambda)?;
    let (mean, scv) = match *service {
        ServiceLaw::Constant(d) => (check::positive("service time", d)?, 0.0),
        ServiceLaw::ByQuantile { mean, scv, .. } | ServiceLaw::ByDensity { mean, scv, .. } => (
            check::positive("mean service time", mean)?,
            check::non_negative("scv", scv)?,
        ),
    };
    let rho = check::stable("fork-join queue", lambda * mean)?;
    let (light_value, light_slope) = match *service {
        ServiceLaw::Constant(d) => (d, 0.5 * d),
        ServiceLaw::ByQuantile {
            cdf,
            quantile,
            lower,
            upper,
            ..
        } => General::new(cdf, Expectation::Quantile(quantile), lower, upper, mean)?.light(k)?,
        ServiceLaw::ByDensity {
            cdf,
            density,
            lower,
            upper,
            ..
        } => General::new(cdf, Expectation::Density(density), lower, upper, mean)?.light(k)?,
    };
    let cap = harmonic(k) * mean * (1.0 + scv) / 2.0;
    let capped = k > 1 && light_slope > cap;
    let heavy_limit = if capped { cap } else { light_slope };
    let f =
        light_value + (light_slope - light_value) * rho + (heavy_limit - light_slope) * rho * rho;
    Ok(ForkJoinInterpolation {
        mean_response: f / (1.0 - rho),
        light_value,
        light_slope,
        heavy_limit,
        capped,
    })
}

fn invalid(what: &str, value: f64) -> AnalyticError {
    AnalyticError::InvalidParameter {
        what: what.to_owned(),
        value,
    }
}

/// How expectations over the service law are taken.
#[derive(Clone, Copy)]
enum Expectation<'a> {
    Quantile(&'a dyn Fn(f64) -> f64),
    Density(&'a dyn Fn(f64) -> f64),
}

/// A checked general service law.
struct General<'a> {
    cdf: &'a dyn Fn(f64) -> f64,
    expectation: Expectation<'a>,
    lower: f64,
    upper: f64,
    mean: f64,
}

impl<'a> General<'a> {
    fn new(
        cdf: &'a dyn Fn(f64) -> f64,
        expectation: Expectation<'a>,
        lower: f64,
        upper: f64,
        mean: f64,
    ) -> Result<General<'a>> {
        let lower = check::non_negative("lower", lower)?;
        if upper.is_nan() || upper < lower {
            return Err(invalid("upper", upper));
        }
        Ok(General {
            cdf,
            expectation,
            lower,
            upper,
            mean,
        })
    }

    /// `(T0, T1)`: `E[max_i S_i]` and `dE[T]/d rho` at 0.
    fn light(&self, k: u32) -> Result<(f64, f64)> {
        let t0 = expected_max(&[(
            Law::Cdf {
                cdf: &|t| self.cdf(t).unwrap_or(f64::NAN),
                lower: self.lower,
                upper: self.upper,
            },
            u64::from(k),
        )])?;
        Ok((t0, self.light_derivative(k)? / self.mean))
    }

    /// `F(x)`, 0 below `lower` and 1 from `upper` on.
    fn cdf(&self, x: f64) -> Result<f64> {
        if x < self.lower {
            return Ok(0.0);
        }
        if x >= self.upper {
            return Ok(1.0);
        }
        let f = (self.cdf)(x);
        if (0.0..=1.0).contains(&f) {
            Ok(f)
        } else {
            Err(invalid(&format!("cdf({x})"), f))
        }
    }

    /// `P(S' + (S - t)^+ <= y) = F(t) F(y) + E[F(y + t - S); t < S <= y + t - lower]`, the
    /// expectation over `u = F(S)` (`S = Q(u)`) or over the density.
    fn delayed_cdf(&self, t: f64, y: f64) -> Result<f64> {
        let plain = self.cdf(t)? * self.cdf(y)?;
        let c = y + t;
        let rest = match self.expectation {
            Expectation::Quantile(quantile) => {
                let (from, to) = (self.cdf(t)?, self.cdf(c - self.lower)?);
                if to <= from {
                    return Ok(plain);
                }
                let mut g = |u: f64| {
                    let q = quantile(u);
                    if q.is_nan() {
                        return Err(invalid(&format!("quantile({u})"), q));
                    }
                    self.cdf(c - q.clamp(self.lower, self.upper))
                };
                quadrature::integrate_to(&mut g, from, to, INNER_REL_TOL, INNER_ABS_TOL, SEGMENTS)?
            }
            Expectation::Density(density) => {
                let (from, to) = (t.max(self.lower), (c - self.lower).min(self.upper));
                if to <= from {
                    return Ok(plain);
                }
                let mut g = |s: f64| {
                    let f = density(s);
                    if !(f >= 0.0 && f.is_finite()) {
                        return Err(invalid(&format!("density({s})"), f));
                    }
                    Ok(self.cdf(c - s)? * f)
                };
                quadrature::integrate_to(&mut g, from, to, INNER_REL_TOL, INNER_ABS_TOL, SEGMENTS)?
            }
        };
        Ok((plain + rest).min(1.0))
    }

    /// `dE[T]/d lambda` at 0: `int_0^inf int_lower^inf [F(y)^K - P(S' + (S - t)^+ <= y)^K] dy dt`.
    fn light_derivative(&self, k: u32) -> Result<f64> {
        let k = k as i32;
        let middle_abs = MIDDLE_ABS_TOL * self.mean;
        let outer_abs = OUTER_ABS_TOL * self.mean * self.mean;
        let extra = |t: f64| -> Result<f64> {
            if t >= self.upper {
                return Ok(0.0);
            }
            let mut gap = |x: f64| -> Result<f64> {
                let y = self.lower + x;
                Ok((self.cdf(y)?.powi(k) - self.delayed_cdf(t, y)?.powi(k)).max(0.0))
            };
            if self.upper.is_finite() {
                let width = self.upper - self.lower + (self.upper - t).max(0.0);
                quadrature::integrate_to(&mut gap, 0.0, width, MIDDLE_REL_TOL, middle_abs, SEGMENTS)
            } else {
                shells_to(&mut gap, self.mean, MIDDLE_REL_TOL, middle_abs)
            }
        };
        let mut outer = |t: f64| extra(t);
        if self.upper.is_finite() {
            quadrature::integrate_to(
                &mut outer,
                0.0,
                self.upper,
                OUTER_REL_TOL,
                outer_abs,
                SEGMENTS,
            )
        } else {
            shells_to(&mut outer, self.mean, OUTER_REL_TOL, outer_abs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::tests::close;
    use crate::analytic::{fork_join_2_server, mg1};

    fn exponential(mean: f64) -> (impl Fn(f64) -> f64, impl Fn(f64) -> f64) {
        (
            move |t: f64| if t <= 0.0 { 0.0 } else { -(-t / mean).exp_m1() },
            move |u: f64| -mean * (-u).ln_1p(),
        )
    }

    fn general<'a>(
        cdf: &'a dyn Fn(f64) -> f64,
        quantile: &'a dyn Fn(f64) -> f64,
        lower: f64,
        upper: f64,
        mean: f64,
        scv: f64,
    ) -> ServiceLaw<'a> {
        ServiceLaw::ByQuantile {
            cdf,
            quantile,
            lower,
            upper,
            mean,
            scv,
        }
    }

    /// Varma and Makowski's `A_K = sum_i C(K,i) (-1)^(i-1) sum_m C(i,m) (m-1)! / i^(m+1)`.
    fn varma_makowski_a(k: u32) -> f64 {
        let binom =
            |n: u32, r: u32| (0..r).fold(1.0, |acc, j| acc * f64::from(n - j) / f64::from(j + 1));
        (1..=k)
            .map(|i| {
                let inner: f64 = (1..=i)
                    .map(|m| {
                        let fact: f64 = (1..m).map(f64::from).product();
                        binom(i, m) * fact / f64::from(i).powi(m as i32 + 1)
                    })
                    .sum();
                let sign = if i % 2 == 1 { 1.0 } else { -1.0 };
                sign * binom(k, i) * inner
            })
            .sum()
    }

    #[test]
    fn one_branch_is_pollaczek_khinchine() {
        // uniform on [0.5, 1.5]: mean 1, scv 1/12; Erlang-2 of mean 2: scv 1/2
        let cdf = |t: f64| (t - 0.5).clamp(0.0, 1.0);
        let q = |u: f64| 0.5 + u;
        let law = general(&cdf, &q, 0.5, 1.5, 1.0, 1.0 / 12.0);
        for lambda in [0.2, 0.6, 0.9] {
            let r = fork_join_interpolation(1, lambda, &law).unwrap();
            let pk = mg1(lambda, 1.0, 1.0 / 12.0).unwrap().mean_response;
            assert!(close(r.mean_response, pk, 1e-7), "{lambda}: {r:?} vs {pk}");
        }
        let erl = |t: f64| {
            if t <= 0.0 {
                0.0
            } else {
                1.0 - (1.0 + t) * (-t).exp()
            }
        };
        let pdf = |t: f64| if t <= 0.0 { 0.0 } else { t * (-t).exp() };
        let law = ServiceLaw::ByDensity {
            cdf: &erl,
            density: &pdf,
            lower: 0.0,
            upper: f64::INFINITY,
            mean: 2.0,
            scv: 0.5,
        };
        let r = fork_join_interpolation(1, 0.3, &law).unwrap();
        let pk = mg1(0.3, 2.0, 0.5).unwrap().mean_response;
        assert!(close(r.mean_response, pk, 1e-6), "{r:?} vs {pk}");
    }

    #[test]
    fn exponential_branches_are_flatto_hahn_at_two_and_varma_makowski_beyond() {
        let (cdf, q) = exponential(0.5);
        let pdf = |t: f64| 2.0 * (-2.0 * t).exp();
        let by_quantile = general(&cdf, &q, 0.0, f64::INFINITY, 0.5, 1.0);
        let by_density = ServiceLaw::ByDensity {
            cdf: &cdf,
            density: &pdf,
            lower: 0.0,
            upper: f64::INFINITY,
            mean: 0.5,
            scv: 1.0,
        };
        for law in [by_quantile, by_density] {
            for lambda in [0.2, 1.8] {
                let r = fork_join_interpolation(2, lambda, &law).unwrap();
                let exact = fork_join_2_server(lambda, 2.0).unwrap();
                assert!(
                    close(r.mean_response, exact, 1e-6),
                    "{lambda}: {r:?} vs {exact}"
                );
                assert!(!r.capped);
            }
            for k in [3, 8] {
                let r = fork_join_interpolation(k, 1.0, &law).unwrap();
                let a = varma_makowski_a(k);
                assert!(
                    close(r.light_slope, 0.5 * a, 1e-6),
                    "k {k}: {r:?} vs A_K {a}"
                );
                // [H_K + (A_K - H_K) rho] / (mu - lambda), rho = 0.5
                let vm = (harmonic(k) + (a - harmonic(k)) * 0.5) / (2.0 - 1.0);
                assert!(close(r.mean_response, vm, 1e-6), "k {k}");
            }
        }
    }

    #[test]
    fn deterministic_branches_move_in_lockstep() {
        let md1 = |lambda: f64| 1.0 + lambda / (2.0 * (1.0 - lambda));
        let r = fork_join_interpolation(16, 0.7, &ServiceLaw::Constant(1.0)).unwrap();
        assert!(close(r.mean_response, md1(0.7), 1e-14));
        // the same law as a step CDF through the general path: atoms are exact there too
        let step = |t: f64| f64::from(u8::from(t >= 1.0));
        let one = |_u: f64| 1.0;
        let law = general(&step, &one, 1.0, 1.0, 1.0, 0.0);
        let g = fork_join_interpolation(16, 0.7, &law).unwrap();
        assert!(close(g.light_slope, 0.5, 1e-7), "{g:?}");
        assert!(close(g.mean_response, md1(0.7), 1e-7), "{g:?}");
    }

    #[test]
    fn uniform_branches_light_traffic_and_a_value_computed_apart() {
        // uniform on [0, 2]: T0 = 2 K / (K + 1); the slope 0.882698358 (K = 4) came from a
        // separate density-based quadrature in the notes of this work
        let cdf = |t: f64| (t / 2.0).clamp(0.0, 1.0);
        let q = |u: f64| 2.0 * u;
        let law = general(&cdf, &q, 0.0, 2.0, 1.0, 1.0 / 3.0);
        let r = fork_join_interpolation(4, 0.5, &law).unwrap();
        assert!(close(r.light_value, 1.6, 1e-9));
        assert!(close(r.light_slope, 0.882_698_358, 1e-6), "{r:?}");
        assert!(!r.capped);
        assert!(close(
            r.mean_response,
            (1.6 + (r.light_slope - 1.6) * 0.5) / 0.5,
            1e-12
        ));
        let tiny = fork_join_interpolation(4, 1e-9, &law).unwrap();
        assert!(close(tiny.mean_response, 1.6, 1e-8));
    }

    #[test]
    fn long_tailed_service_is_capped_by_independent_waits() {
        // balanced-means H2, mean 1, scv 4: p = (1 + sqrt(3/5))/2, rates 2p and 2(1 - p)
        let p = 0.5 * (1.0 + (3.0f64 / 5.0).sqrt());
        let (r1, r2) = (2.0 * p, 2.0 * (1.0 - p));
        let cdf = move |t: f64| {
            if t <= 0.0 {
                0.0
            } else {
                1.0 - p * (-r1 * t).exp() - (1.0 - p) * (-r2 * t).exp()
            }
        };
        let pdf = move |t: f64| p * r1 * (-r1 * t).exp() + (1.0 - p) * r2 * (-r2 * t).exp();
        let law = ServiceLaw::ByDensity {
            cdf: &cdf,
            density: &pdf,
            lower: 0.0,
            upper: f64::INFINITY,
            mean: 1.0,
            scv: 4.0,
        };
        let r = fork_join_interpolation(4, 0.5, &law).unwrap();
        assert!(r.capped, "{r:?}");
        assert!(close(r.heavy_limit, harmonic(4) * 2.5, 1e-12));
        // light slope 7.098036 by the separate density-based quadrature of the notes
        assert!(close(r.light_slope, 7.098_036, 1e-6), "{r:?}");
    }

    #[test]
    fn refuses_bad_input() {
        let (cdf, q) = exponential(1.0);
        let law = general(&cdf, &q, 0.0, f64::INFINITY, 1.0, 1.0);
        assert!(matches!(
            fork_join_interpolation(2, 1.0, &law),
            Err(AnalyticError::Unstable { .. })
        ));
        assert!(fork_join_interpolation(0, 0.5, &law).is_err());
        assert!(fork_join_interpolation(2, -0.5, &law).is_err());
        assert!(fork_join_interpolation(2, 0.5, &ServiceLaw::Constant(0.0)).is_err());
        let bad = general(&cdf, &q, -1.0, f64::INFINITY, 1.0, 1.0);
        assert!(fork_join_interpolation(2, 0.5, &bad).is_err());
        let nan = |_u: f64| f64::NAN;
        let bad = general(&cdf, &nan, 0.0, f64::INFINITY, 1.0, 1.0);
        assert!(fork_join_interpolation(2, 0.5, &bad).is_err());
    }
}
