//! GI/M/c: renewal arrivals given by the Laplace-Stieltjes transform of the inter-arrival
//! law, `c` exponential servers, FCFS.

use serde::Serialize;

use super::ph::invalid;
use crate::analytic::check;
use crate::analytic::error::{AnalyticError, Result};
use crate::analytic::single::StationMetrics;

/// The most servers [`gim1`] takes: its boundary sums alternate in sign with binomial weights
/// up to `C(c, c/2)`, which lose about `log10 C(c, c/2)` digits (5 at `c = 20`).
pub const GIM_MAX_SERVERS: u32 = 20;

/// The exact GI/M/c solution of [`gim1`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GiMcResult {
    /// Means (utilisation per server `lambda E[S] / c`; wait, response, numbers by Little).
    pub metrics: StationMetrics,
    /// The root `sigma` in `(0, 1)` of `sigma = A*(c mu (1 - sigma))`: an arrival finds
    /// `n >= c - 1` jobs with probability proportional to `sigma^n`.
    pub sigma: f64,
    /// Probability that an arrival waits, `P(W > 0)`.
    pub p_wait: f64,
    /// The rate `c mu (1 - sigma)` of the exponential wait of those who wait.
    pub wait_rate: f64,
    /// The number of servers.
    pub servers: u32,
}

impl GiMcResult {
    /// The `q`-quantile of the FCFS wait: 0 with probability `1 - p_wait`, else exponential
    /// of rate `wait_rate` (Gross and Harris, *Fundamentals of Queueing Theory*, 3rd ed.,
    /// 1998, 6.2; Kleinrock vol. 1, 6.4 for `c = 1`).
    ///
    /// Errors: `InvalidParameter` unless `0 < q < 1`.
    pub fn wait_quantile(&self, q: f64) -> Result<f64> {
        let q = level(q)?;
        if q <= 1.0 - self.p_wait {
            Ok(0.0)
        } else {
            Ok((self.p_wait / (1.0 - q)).ln() / self.wait_rate)
        }
    }

    /// The `q`-quantile of the response time when `c = 1`: exponential of rate
    /// `mu (1 - sigma)` (Kleinrock vol. 1, eq. 6.30).
    ///
    /// Errors: `InvalidParameter` unless `0 < q < 1`; `NotApplicable` for `c > 1` (the
    /// response is then the wait plus an independent exponential service, not exponential).
    pub fn response_quantile(&self, q: f64) -> Result<f64> {
        let q = level(q)?;
        if self.servers != 1 {
            return Err(AnalyticError::NotApplicable(
                "the GI/M/c response law is exponential only for c = 1".to_owned(),
            ));
        }
        Ok(-(1.0 - q).ln() / self.wait_rate)
    }
}

fn level(q: f64) -> Result<f64> {
    if q > 0.0 && q < 1.0 {
        Ok(q)
    } else {
        Err(invalid("quantile level (must be in (0, 1))", q))
    }
}

/// GI/M/c FCFS, exact: renewal arrivals at rate `lambda` whose inter-arrival law has the
/// Laplace-Stieltjes transform `laplace(s) = A*(s) = E[e^{-sX}]` (`s >= 0`), `servers`
/// exponential servers of mean `mean_service`.
///
/// `sigma` is the root in `(0, 1)` of `sigma = A*(c mu (1 - sigma))`, found by bisection
/// to `1e-15`. An arrival finds `n >= c - 1` jobs with probability `q_n = q_{c-1}
/// sigma^{n-c+1}`; the first `c - 1` are the embedded chain's balance equations for states
/// `1 .. c - 1`, solved downwards from `q_{c-1}` (Takacs, *Introduction to the Theory of
/// Queues*, 1962; Gross and Harris, *Fundamentals of Queueing Theory*, 3rd ed., 1998, 6.2).
/// The transitions from states `n >= c` are summed over the geometric tail in closed form
/// (a drain of rate `c mu (1 - sigma)` then `c` independent services), so only values of
/// `A*` at `j mu` and its divided differences are needed. Then `P(W > 0) = sum_{n >= c} q_n`,
/// `Wq = P(W > 0) / (c mu (1 - sigma))`, `R = Wq + E[S]`, `L = lambda R` (Little). For
/// `c = 1`: `Wq = sigma / (mu (1 - sigma))` (Kleinrock, *Queueing Systems* vol. 1, 6.4).
///
/// `lambda` must be the rate of the law `laplace` describes (it is not checked against it).
/// The balance equation of state 0, left out of the solve, is checked: its relative residual
/// must be below `1e-8`.
///
/// Errors: `InvalidParameter` for `lambda`, `mean_service` not finite and positive, `servers`
/// 0 or above [`GIM_MAX_SERVERS`], `laplace` returning a value outside `[0, 1]`; `Unstable`
/// for `lambda E[S] / c >= 1`; `NotApplicable` when no root is found below 1 (a transform
/// inconsistent with `lambda`) or the boundary solve lost its precision.
pub fn gim1(
    laplace: &dyn Fn(f64) -> f64,
    lambda: f64,
    mean_service: f64,
    servers: u32,
) -> Result<GiMcResult> {
    let lambda = check::positive("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    let c = check::at_least("servers", servers, 1)?;
    if c > GIM_MAX_SERVERS {
        return Err(invalid("servers (at most GIM_MAX_SERVERS)", f64::from(c)));
    }
    let cf = f64::from(c);
    let rho = check::stable("GI/M/c station", lambda * s / cf)?;
    let mu = 1.0 / s;
    let a = |x: f64| -> Result<f64> {
        let v = laplace(x);
        if v.is_finite() && (-1e-12..=1.0 + 1e-12).contains(&v) {
            Ok(v.clamp(0.0, 1.0))
        } else {
            Err(invalid(&format!("laplace({x})"), v))
        }
    };
    let sigma = root(&a, cf * mu)?;
    let wait_rate = cf * mu * (1.0 - sigma);
    // arrival-epoch probabilities with q_{c-1} = 1: q_n = sigma^{n-c+1} for n >= c - 1
    let tail = sigma / (1.0 - sigma);
    let head = if c == 1 {
        1.0
    } else {
        boundary_mass(&a, c, mu, sigma)?
    };
    let p_wait = tail / (head + tail);
    let wait = p_wait / wait_rate;
    Ok(GiMcResult {
        metrics: StationMetrics::from_wait(lambda, s, wait, Some(rho)),
        sigma,
        p_wait,
        wait_rate,
        servers: c,
    })
}

/// The root in `[0, 1)` of `x = A*(rate (1 - x))`, by bisection.
fn root(a: &dyn Fn(f64) -> Result<f64>, rate: f64) -> Result<f64> {
    let f = |x: f64| -> Result<f64> { Ok(a(rate * (1.0 - x))? - x) };
    if f(0.0)? <= 0.0 {
        return Ok(0.0);
    }
    let mut hi = None;
    let mut delta = 0.5;
    for _ in 0..60 {
        if f(1.0 - delta)? < 0.0 {
            hi = Some(1.0 - delta);
            break;
        }
        delta /= 2.0;
    }
    let Some(mut hi) = hi else {
        return Err(AnalyticError::NotApplicable(
            "GI/M/c: no root of sigma = A*(c mu (1 - sigma)) below 1 (is lambda the rate of the transform?)"
                .to_owned(),
        ));
    };
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if hi - lo <= 1e-15 || mid <= lo || mid >= hi {
            break;
        }
        if f(mid)? > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

/// Binomial coefficient as `f64`.
fn binomial(n: u32, k: u32) -> f64 {
    (0..k).fold(1.0, |b, i| b * f64::from(n - i) / f64::from(i + 1))
}

/// `sum_{j < c} q_j` for `q_{c-1} = 1`, from the balance equations of states `1 .. c - 1`
/// solved downwards; the equation of state 0 is checked.
fn boundary_mass(a: &dyn Fn(f64) -> Result<f64>, c: u32, mu: f64, sigma: f64) -> Result<f64> {
    let cf = f64::from(c);
    let av: Vec<f64> = (0..=c)
        .map(|r| a(f64::from(r) * mu))
        .collect::<Result<_>>()?;
    // p(i, j): from i + 1 <= c jobs all in service to j during an inter-arrival time
    let p = |i: u32, j: u32| -> f64 {
        let n = i + 1;
        if j > n {
            return 0.0;
        }
        let sum: f64 = (0..=n - j)
            .map(|l| {
                let sign = if l % 2 == 0 { 1.0 } else { -1.0 };
                sign * binomial(n - j, l) * av[(j + l) as usize]
            })
            .sum();
        binomial(n, j) * sum
    };
    // the divided difference (A*(r mu) - A*(s*)) / (s*/mu - r), s* = c mu (1 - sigma), where
    // A*(s*) = sigma; near s* = r mu by interpolating it from six points around r
    let divided = |r: u32| -> Result<f64> {
        if r == 0 {
            return Ok(1.0 / cf);
        }
        let rf = f64::from(r);
        let e = cf * (1.0 - sigma) - rf;
        const H: f64 = 4e-3;
        if e.abs() >= H {
            return Ok((av[r as usize] - sigma) / e);
        }
        let nodes = [-3.0 * H, -2.0 * H, -H, H, 2.0 * H, 3.0 * H];
        let mut values = [0.0; 6];
        for (v, &x) in values.iter_mut().zip(&nodes) {
            *v = (av[r as usize] - a((rf + x) * mu)?) / x;
        }
        Ok(nodes
            .iter()
            .enumerate()
            .map(|(k, &xk)| {
                let w: f64 = nodes
                    .iter()
                    .enumerate()
                    .filter(|&(m, _)| m != k)
                    .map(|(_, &xm)| (e - xm) / (xk - xm))
                    .product();
                w * values[k]
            })
            .sum())
    };
    let dd: Vec<f64> = (0..=c).map(divided).collect::<Result<_>>()?;
    // S_j = sum_{n >= c} q_n p(n, j) with q_c = sigma
    let tail_to = |j: u32| -> f64 {
        let sum: f64 = (0..=c - j)
            .map(|l| {
                let sign = if l % 2 == 0 { 1.0 } else { -1.0 };
                sign * binomial(c - j, l) * dd[(j + l) as usize]
            })
            .sum();
        sigma * cf * binomial(c, j) * sum
    };
    let mut q = vec![0.0; c as usize];
    q[(c - 1) as usize] = 1.0;
    for j in (0..c - 1).rev() {
        let inflow: f64 = (j + 1..c).map(|i| q[i as usize] * p(i, j + 1)).sum();
        q[j as usize] = (q[(j + 1) as usize] - inflow - tail_to(j + 1)) / av[(j + 1) as usize];
    }
    let balance0: f64 = (0..c).map(|i| q[i as usize] * p(i, 0)).sum::<f64>() + tail_to(0);
    let mass: f64 = q.iter().sum();
    let residual = (balance0 - q[0]).abs() / mass;
    if residual.is_nan() || residual >= 1e-8 || q.iter().any(|&v| v < -1e-9 * mass) {
        return Err(AnalyticError::NotApplicable(format!(
            "GI/M/c boundary solve lost its precision (residual {residual:e}); use map_mc with a renewal MAP"
        )));
    }
    Ok(mass)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::single::{mm1, mmc};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn poisson_arrivals_give_mm1_and_mmc() {
        for (lambda, s, c) in [
            (0.8, 1.0, 1),
            (1.5, 1.0, 2),
            (3.0, 1.0, 4),
            (2.0, 0.5, 2),
            (4.5, 1.3, 7),
        ] {
            let poisson = move |x: f64| lambda / (lambda + x);
            let g = gim1(&poisson, lambda, s, c).unwrap();
            let m = mmc(lambda, s, c).unwrap();
            assert!(
                close(g.metrics.mean_wait, m.mean_wait, 1e-12),
                "{c}: {} {}",
                g.metrics.mean_wait,
                m.mean_wait
            );
            assert!(close(g.metrics.mean_number, m.mean_number, 1e-12));
            assert!(close(g.sigma, lambda * s / f64::from(c), 1e-13));
        }
        let g = gim1(&|x| 0.8 / (0.8 + x), 0.8, 1.0, 1).unwrap();
        assert!(close(
            g.metrics.mean_response,
            mm1(0.8, 1.0).unwrap().mean_response,
            1e-13
        ));
        // M/M/1 response is exponential of rate mu - lambda = 0.2
        assert!(close(
            g.response_quantile(0.9).unwrap(),
            10.0_f64.ln() / 0.2,
            1e-12
        ));
        // the wait: 0 w.p. 0.2, else exponential of rate 0.2
        assert_eq!(g.wait_quantile(0.1).unwrap(), 0.0);
        assert!(close(
            g.wait_quantile(0.9).unwrap(),
            8.0_f64.ln() / 0.2,
            1e-12
        ));
    }

    #[test]
    fn h2_m_1_anchor_10_819() {
        // Balanced-means H2 inter-arrivals of SCV 4 and mean 1/0.8 = 1.25:
        // p1 = (1 + sqrt(3/5))/2 = 0.887298..., rates 2 p_i / 1.25 = 1.419677..., 0.180322...;
        // mean service 1, rho = 0.8. The root of sigma = A*(1 - sigma) is 0.9075716625930288
        // (scipy brentq), so R = 1/(mu (1 - sigma)) = 10.819192771983987 and
        // Wq = sigma R = 9.819192771983987: the "10.819" is the mean response time.
        let p1 = (1.0 + (3.0_f64 / 5.0).sqrt()) / 2.0;
        let (r1, r2) = (2.0 * p1 / 1.25, 2.0 * (1.0 - p1) / 1.25);
        let h2 = move |x: f64| p1 * r1 / (r1 + x) + (1.0 - p1) * r2 / (r2 + x);
        let g = gim1(&h2, 0.8, 1.0, 1).unwrap();
        assert!((g.sigma - 0.907_571_662_593_028_8).abs() < 1e-13);
        assert!((g.metrics.mean_response - 10.819_192_771_983_987).abs() < 1e-10);
        assert!((g.metrics.mean_wait - 9.819_192_771_983_987).abs() < 1e-10);
    }

    #[test]
    fn deterministic_and_erlang_arrivals() {
        // D/M/1, rho = 0.5: sigma = exp(-2 (1 - sigma)) = 0.2031878699799799 (scipy brentq;
        // Gross and Harris's table gives 0.203); Wq = sigma / (mu (1 - sigma)).
        let g = gim1(&|x: f64| (-x / 0.5).exp(), 0.5, 1.0, 1).unwrap();
        assert!((g.sigma - 0.203_187_869_979_979_9).abs() < 1e-13);
        assert!(close(
            g.metrics.mean_wait,
            0.203_187_869_979_979_9 / (1.0 - 0.203_187_869_979_979_9),
            1e-12
        ));
        // E2/M/1, lambda = 1 (two phases of rate 2), mu = 2: sigma = (1/(2 - sigma))^2, i.e.
        // (sigma - 1)(sigma^2 - 3 sigma + 1) = 0, so sigma = (3 - sqrt 5)/2 = 0.381966...
        let e2 = |x: f64| (2.0 / (2.0 + x)).powi(2);
        let g = gim1(&e2, 1.0, 0.5, 1).unwrap();
        assert!(close(g.sigma, (3.0 - 5.0_f64.sqrt()) / 2.0, 1e-13));
    }

    #[test]
    fn refusals() {
        let poisson = |x: f64| 1.0 / (1.0 + x);
        assert!(matches!(
            gim1(&poisson, 1.0, 1.0, 1),
            Err(AnalyticError::Unstable { .. })
        ));
        assert!(gim1(&poisson, 1.0, 1.0, 0).is_err());
        assert!(gim1(&poisson, 1.0, 0.1, GIM_MAX_SERVERS + 1).is_err());
        assert!(gim1(&poisson, f64::NAN, 1.0, 1).is_err());
        assert!(gim1(&poisson, 1.0, -1.0, 1).is_err());
        assert!(gim1(&|_| f64::NAN, 0.5, 1.0, 1).is_err());
        assert!(gim1(&|_| 2.0, 0.5, 1.0, 1).is_err());
        // a transform of rate 10 passed with lambda 0.5: sigma = 10/(11 - sigma) has the
        // roots 1 and 10, none below 1
        let fast = |x: f64| 10.0 / (10.0 + x);
        assert!(matches!(
            gim1(&fast, 0.5, 1.0, 1),
            Err(AnalyticError::NotApplicable(_))
        ));
        let half = |x: f64| 0.5 / (0.5 + x);
        let g = gim1(&half, 0.5, 1.0, 1).unwrap();
        assert!(g.wait_quantile(1.0).is_err());
        assert!(g.wait_quantile(0.0).is_err());
        let g2 = gim1(&half, 0.5, 1.0, 2).unwrap();
        assert!(g2.response_quantile(0.5).is_err());
    }
}
