//! Finite-capacity stations with Poisson arrivals: M/M/c/K, M/G/c/c (Erlang B) and M/G/1/K.
//!
//! `K` is the most jobs the station holds (in queue and in service); an arrival that finds `K`
//! jobs is lost. Waits and responses are those of the accepted jobs (Little's law on the
//! accepted rate `lambda (1 - P_K)`).

use serde::Serialize;
use statrs::function::gamma::ln_gamma;

use super::check;
use super::cost::{TRANSCENDENTAL, within_budget};
use super::error::{AnalyticError, Result};
use super::quadrature;
use super::single::erlang_b;

/// Steady-state means of a finite-capacity (loss) station.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FiniteMetrics {
    /// Probability that an arrival is lost, `P_K` (Poisson arrivals see time averages).
    pub loss_probability: f64,
    /// Throughput of accepted jobs, `lambda (1 - P_K)`.
    pub throughput: f64,
    /// Utilisation per server, `throughput E[S] / c`.
    pub utilisation: f64,
    /// Mean number at the station, `L = sum n p_n`.
    pub mean_number: f64,
    /// Mean response of an accepted job, `L / throughput` (Little).
    pub mean_response: f64,
    /// Mean wait of an accepted job before service, `mean_response - E[S]`.
    pub mean_wait: f64,
}

impl FiniteMetrics {
    fn new(lambda: f64, mean_service: f64, servers: f64, loss: f64, mean_number: f64) -> Self {
        let throughput = lambda * (1.0 - loss);
        // with no arrivals the station is empty and an arrival would be served at once
        let mean_response = if throughput > 0.0 {
            mean_number / throughput
        } else {
            mean_service
        };
        Self {
            loss_probability: loss,
            throughput,
            utilisation: throughput * mean_service / servers,
            mean_number,
            mean_response,
            mean_wait: (mean_response - mean_service).max(0.0),
        }
    }
}

/// M/M/c/K: Poisson arrivals at rate `lambda`, `servers` exponential servers of mean
/// `mean_service`, room for `capacity` jobs in all.
///
/// Birth-death chain: `p_n ∝ a^n / n!` for `n <= c`, `p_n ∝ a^c / c! (a/c)^(n-c)` for
/// `c <= n <= K`, `a = lambda E[S]` (Gross and Harris, *Fundamentals of Queueing Theory*, 4th
/// ed., 2.6); loss `P_K`. The terms are formed and normalised as logarithms, so nothing
/// overflows for `K` up to `10^6` and `c` up to `10^4` or more. Exact; any `a >= 0` (no
/// stability condition).
///
/// Errors: `InvalidParameter` for `lambda < 0`, `mean_service <= 0`, `servers == 0` or
/// `capacity < servers`; `TooCostly` when the `K + 1` terms are over the budget (about
/// `K > 1.5e6`).
pub fn mmck(lambda: f64, mean_service: f64, servers: u32, capacity: u32) -> Result<FiniteMetrics> {
    let lambda = check::non_negative("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    let c = check::at_least("servers", servers, 1)?;
    let k = check::at_least("capacity (at least the servers)", capacity, c)?;
    let states = f64::from(k) + 1.0;
    within_budget(states * (TRANSCENDENTAL + 4.0), || {
        format!("the M/M/c/K distribution over {states} states")
    })?;
    let a = lambda * s;
    if a == 0.0 {
        return Ok(FiniteMetrics::new(0.0, s, f64::from(c), 0.0, 0.0));
    }
    let ln_a = a.ln();
    let ln_tail = ln_a - f64::from(c).ln();
    let mut log_terms = Vec::with_capacity(k as usize + 1);
    let mut acc = 0.0;
    log_terms.push(acc);
    for n in 1..=k {
        acc += if n <= c {
            ln_a - f64::from(n).ln()
        } else {
            ln_tail
        };
        log_terms.push(acc);
    }
    let max = log_terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut total = 0.0;
    let mut first_moment = 0.0;
    for (n, t) in log_terms.iter().enumerate() {
        let w = (t - max).exp();
        total += w;
        first_moment += n as f64 * w;
    }
    let loss = (log_terms[k as usize] - max).exp() / total;
    Ok(FiniteMetrics::new(
        lambda,
        s,
        f64::from(c),
        loss,
        first_moment / total,
    ))
}

/// M/G/c/c (Erlang's loss system): `servers` servers, no waiting room, any service law.
///
/// Loss `B(c, a)` ([`erlang_b`]), `a = lambda E[S]`; the accepted jobs are served at once, so
/// `R = E[S]`, `L = a (1 - B)`. Exact for any service law with that mean (insensitivity:
/// Sevast'yanov 1957; Gross and Harris 2.5).
///
/// Errors: `InvalidParameter` for `lambda < 0`, `mean_service <= 0` or `servers == 0`.
pub fn mgcc(lambda: f64, mean_service: f64, servers: u32) -> Result<FiniteMetrics> {
    let lambda = check::non_negative("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    let loss = erlang_b(servers, lambda * s)?;
    Ok(FiniteMetrics::new(
        lambda,
        s,
        f64::from(servers),
        loss,
        lambda * s * (1.0 - loss),
    ))
}

/// M/G/1/K by the Markov chain embedded at departures.
///
/// `arrivals[j] = a_j`, the probability of `j` Poisson arrivals during one service time
/// (`int e^(-lambda t) (lambda t)^j / j! dB(t)`; see the `arrivals_*` helpers), for
/// `j = 0..K-2` at least (longer slices are read that far only). The departure-epoch law
/// `pi_d` of the number left behind (`0..K-1`) solves the truncated chain; it is computed by
/// the level-crossing form of its balance equations,
/// `a_0 pi_d(i+1) = pi_d(0) A(i+1) + sum_{j=1..i} pi_d(j) A(i-j+2)` with
/// `A(m) = 1 - sum_{j<m} a_j`, a sum of non-negative terms. Then the time-average law is
/// `p_n = pi_d(n) / (pi_d(0) + rho)` for `n < K` and `p_K = 1 - 1/(pi_d(0) + rho)`,
/// `rho = lambda E[S]`; the loss is `p_K` (Gross and Harris, *Fundamentals of Queueing
/// Theory*, 4th ed., 5.1.9; Takagi, *Queueing Analysis* vol. 2, 1993). Exact for the law whose
/// `a_j` are given. `K = 1` gives Erlang B with one server, `rho / (1 + rho)`, for any law.
///
/// Errors: `InvalidParameter` for `lambda < 0`, `mean_service <= 0`, `capacity == 0`, or an
/// `a_j` outside `[0, 1]`; `DimensionMismatch` if fewer than `K - 1` values are given;
/// `NotApplicable` if `a_0 = 0` or the `a_j` sum above 1; `TooCostly` for `K^2 / 2` over the
/// budget (`K` above about 6000).
pub fn mg1k(
    lambda: f64,
    mean_service: f64,
    capacity: u32,
    arrivals: &[f64],
) -> Result<FiniteMetrics> {
    let lambda = check::non_negative("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    let k = check::at_least("capacity", capacity, 1)? as usize;
    if arrivals.len() < k - 1 {
        return Err(AnalyticError::DimensionMismatch {
            what: "arrivals (a_0..a_{K-2})".into(),
            expected: k - 1,
            got: arrivals.len(),
        });
    }
    let a = &arrivals[..k - 1];
    for (j, &x) in a.iter().enumerate() {
        if !(0.0..=1.0).contains(&x) {
            return Err(AnalyticError::InvalidParameter {
                what: format!("arrivals[{j}]"),
                value: x,
            });
        }
    }
    within_budget((k * k) as f64 / 2.0 + 4.0 * k as f64, || {
        format!("the M/G/1/K departure chain with K = {k}")
    })?;
    // tail[m] = A(m) = 1 - sum_{j<m} a_j, m = 0..K-1
    let mut tail = Vec::with_capacity(k);
    let mut partial: f64 = 0.0;
    for m in 0..k {
        tail.push((1.0 - partial).max(0.0));
        if m < a.len() {
            partial += a[m];
        }
    }
    if partial > 1.0 + 1e-12 {
        return Err(AnalyticError::NotApplicable(format!(
            "the arrival probabilities a_j sum to {partial} > 1"
        )));
    }
    let mut pi = vec![1.0; k];
    if k > 1 {
        let a0 = a[0];
        if a0 <= 0.0 {
            return Err(AnalyticError::NotApplicable(
                "a_0 = 0: every service sees an arrival, the departure chain has no return to \
                 lower states"
                    .into(),
            ));
        }
        for i in 0..k - 1 {
            let up: f64 = tail[i + 1] + (1..=i).map(|j| pi[j] * tail[i - j + 2]).sum::<f64>();
            pi[i + 1] = up / a0;
        }
    }
    let total: f64 = pi.iter().sum();
    let rho = lambda * s;
    let pi0 = pi[0] / total;
    let scale = 1.0 / (pi0 + rho);
    let loss = (1.0 - scale).max(0.0);
    let mean_number = pi
        .iter()
        .enumerate()
        .map(|(n, p)| n as f64 * p / total * scale)
        .sum::<f64>()
        + k as f64 * loss;
    Ok(FiniteMetrics::new(lambda, s, 1.0, loss, mean_number))
}

/// Checks the common inputs of the `arrivals_*` helpers; returns `lambda`.
fn arrival_inputs(lambda: f64, count: usize) -> Result<f64> {
    within_budget(count as f64 * (TRANSCENDENTAL + 4.0), || {
        format!("{count} arrival probabilities")
    })?;
    check::non_negative("lambda", lambda)
}

/// `a_j = int e^(-lambda t) (lambda t)^j / j! dB(t)` for `j = 0..count` when the service is
/// exponential of mean `mean_service`: `a_j = (mu / (lambda + mu)) (lambda / (lambda + mu))^j`
/// (Gross and Harris 5.1). For [`mg1k`], which then gives M/M/1/K.
///
/// Errors: `InvalidParameter` for `lambda < 0` or `mean_service <= 0`.
pub fn arrivals_exponential(lambda: f64, mean_service: f64, count: usize) -> Result<Vec<f64>> {
    arrivals_hyperexponential(lambda, &[1.0], &[mean_service], count)
}

/// `a_j` for a hyperexponential service (a mixture: mean `means[i]` with probability
/// `probs[i]`): `a_j = sum_i p_i (mu_i / (lambda + mu_i)) (lambda / (lambda + mu_i))^j`.
///
/// Errors: `InvalidParameter` for a negative `lambda`, probabilities outside `[0, 1]` or not
/// summing to 1 (within `1e-9`), non-positive means; `DimensionMismatch` if the slices differ.
pub fn arrivals_hyperexponential(
    lambda: f64,
    probs: &[f64],
    means: &[f64],
    count: usize,
) -> Result<Vec<f64>> {
    let lambda = arrival_inputs(lambda, count * means.len())?;
    check::same_len("means", probs.len(), means.len())?;
    let mut sum = 0.0;
    for (i, (&p, &m)) in probs.iter().zip(means).enumerate() {
        sum += check::non_negative(&format!("probs[{i}]"), p)?;
        check::positive(&format!("means[{i}]"), m)?;
    }
    if (sum - 1.0).abs() > 1e-9 {
        return Err(AnalyticError::InvalidParameter {
            what: "sum of the mixture probabilities".into(),
            value: sum,
        });
    }
    let mut out = vec![0.0; count];
    for (&p, &m) in probs.iter().zip(means) {
        let mu = 1.0 / m;
        let ratio = lambda / (lambda + mu);
        let mut term = p * mu / (lambda + mu);
        for x in &mut out {
            *x += term;
            term *= ratio;
        }
    }
    Ok(out)
}

/// `a_j` for a gamma service of mean `mean_service` and shape `k` (rate `beta = k / E[S]`):
/// the negative binomial `a_j = Gamma(j + k) / (j! Gamma(k)) (beta / (beta + lambda))^k
/// (lambda / (lambda + beta))^j`, formed in logarithms. `k = 1` is exponential; an integer `k`
/// is Erlang-`k` (scv `1/k`).
///
/// Errors: `InvalidParameter` for `lambda < 0`, `mean_service <= 0` or `shape <= 0`.
pub fn arrivals_gamma(
    lambda: f64,
    mean_service: f64,
    shape: f64,
    count: usize,
) -> Result<Vec<f64>> {
    let lambda = arrival_inputs(lambda, count)?;
    let mean = check::positive("mean_service", mean_service)?;
    let k = check::positive("shape", shape)?;
    let beta = k / mean;
    if lambda == 0.0 {
        return Ok((0..count).map(|j| if j == 0 { 1.0 } else { 0.0 }).collect());
    }
    let ln_q = (beta / (beta + lambda)).ln();
    let ln_r = (lambda / (lambda + beta)).ln();
    let ln_gamma_k = ln_gamma(k);
    Ok((0..count)
        .map(|j| {
            let j = j as f64;
            (ln_gamma(j + k) - ln_gamma(j + 1.0) - ln_gamma_k + k * ln_q + j * ln_r).exp()
        })
        .collect())
}

/// `a_j` for a deterministic service `d`: the Poisson probabilities
/// `e^(-lambda d) (lambda d)^j / j!`, formed in logarithms (M/D/1/K).
///
/// Errors: `InvalidParameter` for `lambda < 0` or `service <= 0`.
pub fn arrivals_deterministic(lambda: f64, service: f64, count: usize) -> Result<Vec<f64>> {
    let lambda = arrival_inputs(lambda, count)?;
    let d = check::positive("service", service)?;
    Ok((0..count).map(|j| poisson(j, lambda * d)).collect())
}

/// `P(N = j)` for `N` Poisson of mean `m >= 0`, in logarithms.
fn poisson(j: usize, m: f64) -> f64 {
    if m == 0.0 {
        return if j == 0 { 1.0 } else { 0.0 };
    }
    let j = j as f64;
    (j * m.ln() - m - ln_gamma(j + 1.0)).exp()
}

/// Relative accuracy of the quadrature helpers.
const ARRIVALS_REL_TOL: f64 = 1e-10;

/// Subintervals the quadrature helpers may use per probability.
const ARRIVALS_MAX_SEGMENTS: u32 = 200;

/// `a_j` for a service uniform on `[lower, upper]`, by adaptive Gauss-Kronrod quadrature of
/// `int e^(-lambda t) (lambda t)^j / j! dt / (upper - lower)` (relative `1e-10`).
///
/// Errors: `InvalidParameter` for `lambda < 0`, `lower < 0` or `upper <= lower`;
/// `NotConverged` if a quadrature fails.
pub fn arrivals_uniform(lambda: f64, lower: f64, upper: f64, count: usize) -> Result<Vec<f64>> {
    let lambda = arrival_inputs(lambda, count * 200)?;
    let lo = check::non_negative("lower", lower)?;
    let width = check::positive("upper - lower", upper - lo)?;
    (0..count)
        .map(|j| {
            let mut f = |t: f64| Ok(poisson(j, lambda * t) / width);
            quadrature::integrate_to(
                &mut f,
                lo,
                upper,
                ARRIVALS_REL_TOL,
                1e-300,
                ARRIVALS_MAX_SEGMENTS,
            )
        })
        .collect()
}

/// `a_j` for a lognormal service of mean `mean_service` and squared coefficient of
/// variation `scv`: `t = exp(m + s z)`, `s^2 = ln(1 + scv)`, `m = ln E[S] - s^2/2`, and
/// `a_j = int phi(z) e^(-lambda t) (lambda t)^j / j! dz` over `z` in `[-12, 12]` (the normal
/// mass outside is below `1e-32`), by adaptive Gauss-Kronrod quadrature (relative `1e-10`).
///
/// Errors: `InvalidParameter` for `lambda < 0`, `mean_service <= 0` or `scv <= 0`;
/// `NotConverged` if a quadrature fails.
pub fn arrivals_lognormal(
    lambda: f64,
    mean_service: f64,
    scv: f64,
    count: usize,
) -> Result<Vec<f64>> {
    let lambda = arrival_inputs(lambda, count * 200)?;
    let mean = check::positive("mean_service", mean_service)?;
    let scv = check::positive("scv", scv)?;
    let s2 = scv.ln_1p();
    let (m, s) = (mean.ln() - s2 / 2.0, s2.sqrt());
    let density = |z: f64| (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    (0..count)
        .map(|j| {
            let mut f = |z: f64| Ok(density(z) * poisson(j, lambda * (m + s * z).exp()));
            quadrature::integrate_to(
                &mut f,
                -12.0,
                12.0,
                ARRIVALS_REL_TOL,
                1e-300,
                ARRIVALS_MAX_SEGMENTS,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mmc;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    /// M/M/1/K closed form: `P_n = (1 - rho) rho^n / (1 - rho^(K+1))`.
    fn mm1k_closed(rho: f64, k: i32) -> (f64, f64) {
        let norm = (1.0 - rho) / (1.0 - rho.powi(k + 1));
        let loss = norm * rho.powi(k);
        let l: f64 = (0..=k).map(|n| f64::from(n) * norm * rho.powi(n)).sum();
        (loss, l)
    }

    #[test]
    fn mmck_reduces_to_mm1k_erlang_b_and_mmc() {
        for rho in [0.3, 0.9, 1.7] {
            let m = mmck(rho, 1.0, 1, 7).unwrap();
            let (loss, l) = mm1k_closed(rho, 7);
            assert!(close(m.loss_probability, loss, 1e-12));
            assert!(close(m.mean_number, l, 1e-12));
            assert!(close(m.mean_response, l / (rho * (1.0 - loss)), 1e-12));
            assert!(close(m.utilisation, rho * (1.0 - loss), 1e-12));
        }
        // K = c is the loss system
        let m = mmck(2.0, 1.5, 4, 4).unwrap();
        let b = erlang_b(4, 3.0).unwrap();
        assert!(close(m.loss_probability, b, 1e-12));
        assert!(m.mean_wait.abs() < 1e-12);
        assert!(close(m.mean_response, 1.5, 1e-12));
        let g = mgcc(2.0, 1.5, 4).unwrap();
        assert!(close(g.loss_probability, b, 1e-14));
        assert!(close(g.mean_number, 3.0 * (1.0 - b), 1e-14));
        // a large room is the infinite M/M/c
        let big = mmck(3.0, 1.0, 4, 2000).unwrap();
        let inf = mmc(3.0, 1.0, 4).unwrap();
        assert!(close(big.mean_number, inf.mean_number, 1e-9));
        assert!(big.loss_probability < 1e-200);
    }

    #[test]
    fn mmck_large_k_and_c_stay_finite() {
        let m = mmck(10_050.0, 1.0, 10_000, 1_000_000).unwrap();
        assert!(m.loss_probability > 0.0 && m.loss_probability < 1.0);
        // overloaded: throughput is about c mu and the room nearly full
        assert!(close(m.throughput, 10_000.0, 1e-9));
        assert!(m.mean_number > 990_000.0 && m.mean_number <= 1_000_000.0);
        let m = mmck(9_000.0, 1.0, 10_000, 1_000_000).unwrap();
        assert!(m.loss_probability.is_finite() && m.mean_wait.is_finite());
        assert!(m.mean_number.is_finite() && m.mean_number > 8_999.0);
        assert!(matches!(
            mmck(1.0, 1.0, 4, 3),
            Err(AnalyticError::InvalidParameter { .. })
        ));
        assert!(mmck(f64::NAN, 1.0, 1, 3).is_err());
    }

    #[test]
    fn mg1k_with_exponential_service_is_mm1k() {
        for (rho, k) in [(0.5, 1), (0.5, 2), (0.8, 10), (1.0, 6), (2.5, 12)] {
            let a = arrivals_exponential(rho, 1.0, k as usize).unwrap();
            let g = mg1k(rho, 1.0, k, &a).unwrap();
            let m = mmck(rho, 1.0, 1, k).unwrap();
            assert!(
                close(g.loss_probability, m.loss_probability, 1e-12),
                "{rho} {k}"
            );
            assert!(close(g.mean_number, m.mean_number, 1e-12));
            assert!(close(g.mean_response, m.mean_response, 1e-12));
        }
    }

    #[test]
    fn mg1k_with_one_place_is_erlang_b_for_any_law() {
        let a = arrivals_deterministic(0.7, 2.0, 0).unwrap();
        let g = mg1k(0.7, 2.0, 1, &a).unwrap();
        assert!(close(g.loss_probability, 1.4 / 2.4, 1e-14));
        let b = mgcc(0.7, 2.0, 1).unwrap();
        assert!(close(g.loss_probability, b.loss_probability, 1e-14));
        assert!(close(g.mean_number, b.mean_number, 1e-14));
    }

    #[test]
    fn md1k_by_hand_and_against_erlang_k() {
        // K = 2: pi_d = (a0, 1 - a0), so P_2 = 1 - 1/(a0 + rho), a0 = e^-rho
        let rho: f64 = 0.9;
        let a = arrivals_deterministic(rho, 1.0, 2).unwrap();
        let g = mg1k(rho, 1.0, 2, &a).unwrap();
        let loss = 1.0 - 1.0 / ((-rho).exp() + rho);
        assert!(close(g.loss_probability, loss, 1e-14));
        // p_1 = (1 - a0)/(a0 + rho), L = p_1 + 2 p_2
        let p1 = (1.0 - (-rho).exp()) / ((-rho).exp() + rho);
        assert!(close(g.mean_number, p1 + 2.0 * loss, 1e-14));
        // K = 3 by hand: a0 pi1 = A(1) pi0, a0 pi2 = A(2) pi0 + A(2) pi1 (pi0 = 1 unnormalised)
        let a0 = a[0];
        let a1 = a[1];
        let (t1, t2) = (1.0 - a0, 1.0 - a0 - a1);
        let pi1 = t1 / a0;
        let pi2 = (t2 + pi1 * t2) / a0;
        let pi0 = 1.0 / (1.0 + pi1 + pi2);
        let a3 = arrivals_deterministic(rho, 1.0, 3).unwrap();
        let g3 = mg1k(rho, 1.0, 3, &a3).unwrap();
        assert!(close(g3.loss_probability, 1.0 - 1.0 / (pi0 + rho), 1e-13));
        // less variable service loses fewer jobs: D < Erlang-4 < exponential < H2
        let k = 8;
        let loss_of = |a: Vec<f64>| mg1k(rho, 1.0, k, &a).unwrap().loss_probability;
        let d = loss_of(arrivals_deterministic(rho, 1.0, k as usize).unwrap());
        let e4 = loss_of(arrivals_gamma(rho, 1.0, 4.0, k as usize).unwrap());
        let m = loss_of(arrivals_exponential(rho, 1.0, k as usize).unwrap());
        let h2 = loss_of(arrivals_hyperexponential(rho, &[0.5, 0.5], &[0.2, 1.8], 8).unwrap());
        assert!(d < e4 && e4 < m && m < h2, "{d} {e4} {m} {h2}");
        // a very large Erlang shape tends to the deterministic law
        let big = loss_of(arrivals_gamma(rho, 1.0, 1e6, k as usize).unwrap());
        assert!(close(big, d, 1e-5));
    }

    #[test]
    fn arrival_helpers_agree_and_have_the_right_mean() {
        let lambda = 0.8;
        // gamma with shape 1 is exponential
        let g = arrivals_gamma(lambda, 1.5, 1.0, 30).unwrap();
        let e = arrivals_exponential(lambda, 1.5, 30).unwrap();
        for (x, y) in g.iter().zip(&e) {
            assert!(close(*x, *y, 1e-12));
        }
        // sum_j a_j = 1 and sum_j j a_j = lambda E[S]
        let check_law = |a: &[f64], mean: f64| {
            let total: f64 = a.iter().sum();
            let first: f64 = a.iter().enumerate().map(|(j, x)| j as f64 * x).sum();
            assert!((total - 1.0).abs() < 1e-9, "{total}");
            assert!((first - lambda * mean).abs() < 1e-8, "{first}");
        };
        check_law(&arrivals_uniform(lambda, 0.5, 2.5, 80).unwrap(), 1.5);
        check_law(&arrivals_lognormal(lambda, 1.5, 0.5, 120).unwrap(), 1.5);
        check_law(&arrivals_deterministic(lambda, 1.5, 60).unwrap(), 1.5);
        check_law(
            &arrivals_hyperexponential(lambda, &[0.3, 0.7], &[3.0, 6.0 / 7.0], 200).unwrap(),
            1.5,
        );
        // a narrow uniform is nearly deterministic
        let u = arrivals_uniform(lambda, 1.4999, 1.5001, 10).unwrap();
        let d = arrivals_deterministic(lambda, 1.5, 10).unwrap();
        for (x, y) in u.iter().zip(&d) {
            assert!((x - y).abs() < 1e-8);
        }
    }

    #[test]
    fn mg1k_refusals() {
        assert!(matches!(
            mg1k(0.5, 1.0, 4, &[0.5, 0.3]),
            Err(AnalyticError::DimensionMismatch { .. })
        ));
        assert!(mg1k(0.5, 1.0, 3, &[0.5, 1.5]).is_err());
        assert!(matches!(
            mg1k(0.5, 1.0, 3, &[0.0, 0.5]),
            Err(AnalyticError::NotApplicable(_))
        ));
        assert!(matches!(
            mg1k(0.5, 1.0, 3, &[0.8, 0.5]),
            Err(AnalyticError::NotApplicable(_))
        ));
        assert!(mg1k(0.5, 1.0, 0, &[]).is_err());
        assert!(arrivals_hyperexponential(1.0, &[0.5, 0.4], &[1.0, 2.0], 5).is_err());
        assert!(arrivals_uniform(1.0, 2.0, 1.0, 5).is_err());
        assert!(arrivals_lognormal(1.0, 1.0, 0.0, 5).is_err());
    }
}
