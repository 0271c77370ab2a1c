//! M/M/c+G: a many-server queue whose waiting jobs abandon after a patience of any law.

use super::check;
use super::error::{AnalyticError, Result};
use super::impatience::ErlangAMetrics;
use super::quadrature::integrate_to;

/// Relative accuracy of the integrals over the offered wait.
const TOLERANCE: f64 = 1e-10;

/// Relative accuracy of `H(x)` inside them (finer, so that its error does not stall theirs).
const INNER_TOLERANCE: f64 = 1e-13;

/// A patience law, as the formula needs it: its mean, its CDF and its quantiles.
pub struct PatienceLaw<'a> {
    /// The mean patience.
    pub mean: f64,
    /// `P(patience <= x)`.
    pub cdf: &'a dyn Fn(f64) -> f64,
    /// The `q`-quantile, for `q` in `(0, 1)`.
    pub quantile: &'a dyn Fn(f64) -> Result<f64>,
}

impl std::fmt::Debug for PatienceLaw<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatienceLaw")
            .field("mean", &self.mean)
            .finish_non_exhaustive()
    }
}

/// Subintervals allowed to each adaptive integral.
const SEGMENTS: u32 = 4000;

/// How far below its peak the exponent `lambda H(x) - c mu x` must fall before the integrals
/// stop: `e^-60` of the peak.
const DROP: f64 = 60.0;

/// M/M/c+G: Poisson arrivals at rate `lambda`, `servers` exponential servers of mean
/// `mean_service`, FCFS, and every waiting job abandons when its `patience`, of any law, runs
/// out before its service starts. Exact (Baccelli and Hebuterne, 1981; the form of Zeltyn and
/// Mandelbaum, "Call centers with impatient customers: many-server asymptotics of the M/M/n+G
/// queue", Queueing Systems 51, 2005).
///
/// With `Gbar` the patience's survival, `H(x) = int_0^x Gbar` (the mean of `min(patience, x)`)
/// and `e(x) = exp(lambda H(x) - c mu x)`: with every server busy the offered wait (what a
/// job would wait if patient) has density `lambda pi_(c-1) e(x)`, where `pi_(c-1)` is the
/// probability of `c - 1` jobs and `pi_j = pi_(c-1) (c-1)!/j! (mu/lambda)^(c-1-j)` below.
/// Normalising gives `pi_(c-1) = 1 / (E + lambda J)` with `E = sum_(j<c) pi_j / pi_(c-1)` and
/// `J = int e`; then `P(wait) = lambda J pi_(c-1)`, `P(abandon) = (1 + (lambda - c mu) J)
/// pi_(c-1)`, the mean wait of all arrivals `lambda pi_(c-1) int H e` (a job offered `x` waits
/// `min(patience, x)`), and of the served ones `lambda pi_(c-1) int x Gbar e / (1 - P(abandon))`.
/// The integrals are adaptive Gauss-Kronrod to `1e-10` relative, `H` itself by a nested one.
///
/// Errors: `InvalidParameter` for `lambda <= 0`, `mean_service <= 0`, `servers == 0`, a
/// patience of mean 0; `NotApplicable` when the sums overflow; `NotConverged` when an integral
/// does not settle.
pub fn mmc_general_patience(
    lambda: f64,
    mean_service: f64,
    servers: u32,
    patience: &PatienceLaw<'_>,
) -> Result<ErlangAMetrics> {
    let lambda = check::positive("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    let c = check::at_least("servers", servers, 1)?;
    check::positive("mean patience", patience.mean)?;
    let mu = 1.0 / s;
    let c_mu = f64::from(c) * mu;
    let survival = |x: f64| 1.0 - (patience.cdf)(x);
    let h = |x: f64| -> Result<f64> {
        if x <= 0.0 {
            return Ok(0.0);
        }
        integrate_to(
            &mut |u| Ok(survival(u)),
            0.0,
            x,
            INNER_TOLERANCE,
            1e-300,
            SEGMENTS,
        )
    };
    let exponent = |x: f64| -> Result<f64> { Ok(lambda * h(x)? - c_mu * x) };
    // the exponent peaks where lambda Gbar(x) = c mu (at 0 when lambda <= c mu), then falls
    let peak_at = if lambda <= c_mu {
        0.0
    } else {
        (patience.quantile)(1.0 - c_mu / lambda)?
    };
    let peak = exponent(peak_at)?;
    let mut end = peak_at + 1.0 / c_mu;
    while exponent(end)? > peak - DROP {
        end = peak_at + 2.0 * (end - peak_at);
    }
    let weight = |x: f64| -> Result<f64> { Ok((exponent(x)? - peak).exp()) };
    let integral = |f: &mut dyn FnMut(f64) -> Result<f64>| -> Result<f64> {
        let first = if peak_at > 0.0 {
            integrate_to(f, 0.0, peak_at, TOLERANCE, 0.0, SEGMENTS)?
        } else {
            0.0
        };
        Ok(first + integrate_to(f, peak_at, end, TOLERANCE, 0.0, SEGMENTS)?)
    };
    // every integral carries exp(-peak)
    let j = integral(&mut |x| weight(x))?;
    let j_h = integral(&mut |x| Ok(h(x)? * weight(x)?))?;
    let j_served = integral(&mut |x| Ok(x * survival(x) * weight(x)?))?;
    // ln E, E = sum_(j<c) (c-1)!/j! (mu/lambda)^(c-1-j), in logarithms
    let mut log_terms = vec![0.0];
    let mut acc = 0.0;
    for k in (1..c).rev() {
        acc += (f64::from(k) * mu / lambda).ln();
        log_terms.push(acc);
    }
    let top = log_terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log_e = top + log_terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln();
    // pi_(c-1) exp(peak) = 1 / (E exp(-peak) + lambda J)
    let denominator = (log_e - peak).exp() + lambda * j;
    if !denominator.is_finite() || denominator <= 0.0 {
        return Err(AnalyticError::NotApplicable(format!(
            "the M/M/c+G sums overflow (lambda {lambda}, c {c}, mu {mu})"
        )));
    }
    let scale = 1.0 / denominator; // pi_(c-1) exp(peak)
    let wait_probability = lambda * j * scale;
    // 1 + (lambda - c mu) J, with the 1 carrying exp(-peak)
    let abandon_probability = ((-peak).exp() + (lambda - c_mu) * j) * scale;
    let mean_wait = lambda * j_h * scale;
    let served = 1.0 - abandon_probability;
    let mean_wait_served = lambda * j_served * scale / served;
    let throughput = lambda * served;
    let mean_queue = lambda * mean_wait;
    let mean_number = mean_queue + throughput * s;
    Ok(ErlangAMetrics {
        abandon_probability,
        wait_probability,
        mean_wait,
        mean_wait_served,
        mean_response_served: mean_wait_served + s,
        mean_number,
        mean_queue,
        throughput,
        utilisation: throughput * s / f64::from(c),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::erlang_a;

    fn close(a: f64, b: f64, what: &str) {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1e-3),
            "{what}: {a} against {b}"
        );
    }

    #[test]
    fn exponential_patience_is_erlang_a() {
        for (lambda, s, c, theta_mean) in [
            (0.8, 1.0, 1, 2.0),
            (4.5, 1.0, 4, 3.0),
            (12.0, 0.5, 5, 0.7),
            (2.0, 1.0, 3, 10.0),
        ] {
            let exact = erlang_a(lambda, s, c, theta_mean).unwrap();
            let cdf = |x: f64| -(-x / theta_mean).exp_m1();
            let quantile = |q: f64| Ok(-theta_mean * (-q).ln_1p());
            let law = PatienceLaw {
                mean: theta_mean,
                cdf: &cdf,
                quantile: &quantile,
            };
            let general = mmc_general_patience(lambda, s, c, &law).unwrap();
            close(
                general.abandon_probability,
                exact.abandon_probability,
                "abandon",
            );
            close(
                general.wait_probability,
                exact.wait_probability,
                "wait prob",
            );
            close(general.mean_wait, exact.mean_wait, "mean wait");
            close(
                general.mean_wait_served,
                exact.mean_wait_served,
                "served wait",
            );
            close(general.mean_number, exact.mean_number, "number");
        }
    }

    #[test]
    fn a_fixed_patience_on_one_server_has_its_closed_form() {
        // M/M/1+D: with a fixed patience d, H(x) = min(x, d), so e(x) = exp((lambda - mu) x)
        // for x < d and exp(lambda d - mu x) after: J in closed form, E = 1, and
        // P(abandon) = (1 + (lambda - mu) J) / (1 + lambda J)
        let (lambda, mu, d) = (1.5_f64, 1.0_f64, 2.0_f64);
        let j = ((lambda - mu) * d).exp_m1() / (lambda - mu) + (lambda * d - mu * d).exp() / mu;
        let expected = (1.0 + (lambda - mu) * j) / (1.0 + lambda * j);
        let cdf = |x: f64| if x < d { 0.0 } else { 1.0 };
        let quantile = |_: f64| Ok(d);
        let law = PatienceLaw {
            mean: d,
            cdf: &cdf,
            quantile: &quantile,
        };
        let got = mmc_general_patience(lambda, 1.0 / mu, 1, &law).unwrap();
        close(got.abandon_probability, expected, "abandon");
        // flow balance: the served throughput never exceeds the server
        assert!(got.utilisation < 1.0);
    }
}
