//! Erlang-A: M/M/c+M, a many-server queue whose waiting jobs abandon after an exponential
//! patience.

use serde::Serialize;

use super::check;
use super::cost::{self, TRANSCENDENTAL};
use super::error::{AnalyticError, Result};

/// Steady-state means of an Erlang-A (M/M/c+M) station.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ErlangAMetrics {
    /// Probability that an arrival abandons before its service starts,
    /// `theta E[queue] / lambda`.
    pub abandon_probability: f64,
    /// Probability that an arrival waits at all (finds every server busy).
    pub wait_probability: f64,
    /// Mean wait in queue of all arrivals (abandoning ones until they leave), `E[queue] /
    /// lambda`.
    pub mean_wait: f64,
    /// Mean wait in queue of the arrivals that are served.
    pub mean_wait_served: f64,
    /// Mean response of the served arrivals, `mean_wait_served + E[S]`.
    pub mean_response_served: f64,
    /// Mean number at the station (waiting and in service).
    pub mean_number: f64,
    /// Mean number waiting.
    pub mean_queue: f64,
    /// Throughput of served jobs, `lambda (1 - abandon_probability)`.
    pub throughput: f64,
    /// Utilisation per server, `throughput E[S] / c`.
    pub utilisation: f64,
}

/// Relative size of the neglected tail of the state probabilities.
const TAIL_TOLERANCE: f64 = 1e-16;

/// M/M/c+M (Erlang-A): Poisson arrivals at rate `lambda`, `servers` exponential servers of
/// mean `mean_service`, FCFS, and every waiting job abandons when its exponential patience of
/// mean `mean_patience` (rate `theta`) runs out before its service starts.
///
/// Birth-death chain with birth rate `lambda` and death rate `min(n, c) mu + max(n - c, 0)
/// theta` in state `n`, summed in logarithms until the neglected tail is below `1e-16` of the
/// total (it is always stable). `P(abandon) = theta E[queue] / lambda`; an arrival that finds
/// `n >= c` jobs is at place `j = n - c + 1`, leaves each place at rate `c mu + j' theta` and is
/// served with probability `c mu / (c mu + j theta)` after a wait of mean
/// `sum_{i=1..j} 1/(c mu + i theta)` given that it is served (Garnett, Mandelbaum and Reiman,
/// "Designing a call center with impatient customers", M&SOM 4(3), 2002; Mandelbaum and
/// Zeltyn, "Service engineering in action: the Palm/Erlang-A queue", 2007). Exact.
///
/// Errors: `InvalidParameter` for `lambda < 0`, `mean_service <= 0`, `mean_patience <= 0`,
/// `servers == 0`; `TooCostly` when the chain needs more states than the budget allows (a
/// patience so long against an overload that the queue holds millions of jobs).
pub fn erlang_a(
    lambda: f64,
    mean_service: f64,
    servers: u32,
    mean_patience: f64,
) -> Result<ErlangAMetrics> {
    let lambda = check::non_negative("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    let c = check::at_least("servers", servers, 1)?;
    let theta = 1.0 / check::positive("mean_patience", mean_patience)?;
    let mu = 1.0 / s;
    let cf = f64::from(c);
    if lambda == 0.0 {
        return Ok(ErlangAMetrics {
            abandon_probability: 0.0,
            wait_probability: 0.0,
            mean_wait: 0.0,
            mean_wait_served: 0.0,
            mean_response_served: s,
            mean_number: 0.0,
            mean_queue: 0.0,
            throughput: 0.0,
            utilisation: 0.0,
        });
    }
    let max_states = cost::scaled(cost::WORK_BUDGET) / (2.0 * TRANSCENDENTAL + 10.0);
    let ln_lambda = lambda.ln();
    // log weights ln t_n of the states 0, 1, ...
    let mut log_terms = vec![0.0];
    let mut acc = 0.0;
    let mut max = 0.0_f64;
    let mut n: u32 = 0;
    loop {
        n += 1;
        let death = f64::from(n.min(c)) * mu + f64::from(n.saturating_sub(c)) * theta;
        let ratio = lambda / death;
        acc += ln_lambda - death.ln();
        log_terms.push(acc);
        max = max.max(acc);
        // beyond c the ratios decrease, so once one is below 1 the tail after n is below
        // t_n r / (1 - r)
        if n >= c && ratio < 1.0 {
            let tail = (acc - max).exp() * ratio / (1.0 - ratio);
            if tail < TAIL_TOLERANCE {
                break;
            }
        }
        if log_terms.len() as f64 > max_states {
            return Err(AnalyticError::TooCostly {
                what: format!(
                    "the Erlang-A chain (lambda {lambda}, c {c}, mu {mu}, theta {theta}) needs \
                     more than {max_states:.0} states"
                ),
                work: f64::NAN,
                budget: cost::scaled(cost::WORK_BUDGET),
                allow: cost::raise(),
            });
        }
    }
    let weights: Vec<f64> = log_terms.iter().map(|t| (t - max).exp()).collect();
    let total: f64 = weights.iter().sum();
    let c_mu = cf * mu;
    let mut mean_number = 0.0;
    let mut mean_queue = 0.0;
    let mut wait_probability = 0.0;
    let mut served_waiting = 0.0; // P(wait and be served)
    let mut served_wait_time = 0.0; // E[W 1{served}]
    let mut harmonic = 0.0; // sum_{i=1..j} 1 / (c mu + i theta)
    for (n, w) in weights.iter().enumerate() {
        let p = w / total;
        mean_number += n as f64 * p;
        if n >= c as usize {
            let j = (n - c as usize + 1) as f64;
            mean_queue += (j - 1.0) * p;
            wait_probability += p;
            harmonic += 1.0 / (c_mu + j * theta);
            let p_served = c_mu / (c_mu + j * theta);
            served_waiting += p * p_served;
            served_wait_time += p * p_served * harmonic;
        }
    }
    let abandon_probability = theta * mean_queue / lambda;
    let served = (1.0 - wait_probability) + served_waiting;
    let mean_wait_served = served_wait_time / served;
    let throughput = lambda * (1.0 - abandon_probability);
    Ok(ErlangAMetrics {
        abandon_probability,
        wait_probability,
        mean_wait: mean_queue / lambda,
        mean_wait_served,
        mean_response_served: mean_wait_served + s,
        mean_number,
        mean_queue,
        throughput,
        utilisation: throughput * s / cf,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{erlang_c, mmc};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn patience_equal_to_service_is_an_infinite_server() {
        // theta = mu: every job leaves at rate mu whatever it does, so N is Poisson(a)
        let (lambda, s, c) = (7.0, 1.0, 5);
        let m = erlang_a(lambda, s, c, s).unwrap();
        let a: f64 = lambda * s;
        assert!(close(m.mean_number, a, 1e-12));
        // E[(N - c)^+] for N ~ Poisson(a)
        let mut p = (-a).exp();
        let mut queue = 0.0;
        let mut busy = 0.0;
        for n in 0..200 {
            if n > 0 {
                p *= a / f64::from(n);
            }
            queue += f64::from(n.max(c) - c) * p;
            busy += f64::from(n.min(c)) * p;
        }
        assert!(close(m.mean_queue, queue, 1e-12));
        assert!(close(m.utilisation, busy / f64::from(c), 1e-12));
    }

    #[test]
    fn very_patient_jobs_see_an_mmc() {
        let m = erlang_a(3.0, 1.0, 4, 1e9).unwrap();
        let fcfs = mmc(3.0, 1.0, 4).unwrap();
        assert!(close(m.mean_wait, fcfs.mean_wait, 1e-6));
        assert!(close(m.mean_wait_served, fcfs.mean_wait, 1e-6));
        assert!(close(m.wait_probability, erlang_c(4, 3.0).unwrap(), 1e-6));
        assert!(m.abandon_probability < 1e-8);
    }

    #[test]
    fn abandonment_by_little_equals_abandonment_by_places() {
        // 1 - P(served) computed place by place must equal theta E[queue] / lambda, and the
        // busy servers must be the served throughput times E[S]
        for (lambda, s, c, patience) in [
            (12.0, 1.0, 10, 2.0),
            (1.5, 1.0, 1, 0.5),
            (50.0, 0.5, 20, 3.0),
        ] {
            let m = erlang_a(lambda, s, c, patience).unwrap();
            let theta = 1.0 / patience;
            let c_mu = f64::from(c) / s;
            // recompute P(served) from the law of the places
            let mut weights = vec![1.0];
            for n in 1..5000u32 {
                let death = f64::from(n.min(c)) / s + f64::from(n.saturating_sub(c)) * theta;
                let last = weights[weights.len() - 1];
                weights.push(last * lambda / death);
            }
            let total: f64 = weights.iter().sum();
            let served: f64 = weights
                .iter()
                .enumerate()
                .map(|(n, w)| {
                    let j = n as f64 - f64::from(c) + 1.0;
                    w / total
                        * if j >= 1.0 {
                            c_mu / (c_mu + j * theta)
                        } else {
                            1.0
                        }
                })
                .sum();
            assert!(close(m.abandon_probability, 1.0 - served, 1e-10));
            assert!(close(m.mean_number - m.mean_queue, m.throughput * s, 1e-10));
            assert!(close(m.mean_response_served, m.mean_wait_served + s, 1e-15));
            assert!(m.mean_wait_served < m.mean_wait * 1.0 / (1.0 - m.abandon_probability));
        }
    }

    #[test]
    fn single_server_closed_form() {
        // c = 1, theta: p_n = p_0 (lambda/mu) prod_{i=1}^{n-1} lambda / (mu + i theta);
        // with lambda = mu = theta = 1, p_n = p_0 / (n!) ... e.g. t_n = 1/n!, so N ~ Poisson(1)
        let m = erlang_a(1.0, 1.0, 1, 1.0).unwrap();
        assert!(close(m.mean_number, 1.0, 1e-12));
        // P(wait) = P(N >= 1) = 1 - e^-1; P(abandon) = E[(N-1)^+] = E[N] - 1 + P(0) = e^-1
        assert!(close(m.wait_probability, 1.0 - (-1.0f64).exp(), 1e-12));
        assert!(close(m.abandon_probability, (-1.0f64).exp(), 1e-12));
        // served waits: place j served w.p. 1/(1+j), mean wait given served H'_j = sum 1/(1+i)
        let mut p = (-1.0f64).exp();
        let (mut served, mut served_wait, mut h) = (p, 0.0, 0.0);
        for n in 1..60 {
            p /= f64::from(n);
            let j = f64::from(n);
            h += 1.0 / (1.0 + j);
            served += p / (1.0 + j);
            served_wait += p / (1.0 + j) * h;
        }
        assert!(close(m.mean_wait_served, served_wait / served, 1e-12));
    }

    #[test]
    fn more_servers_or_patience_behave() {
        let a = erlang_a(10.0, 1.0, 10, 1.0).unwrap();
        let b = erlang_a(10.0, 1.0, 11, 1.0).unwrap();
        assert!(b.abandon_probability < a.abandon_probability);
        assert!(b.mean_wait < a.mean_wait);
        let patient = erlang_a(10.0, 1.0, 10, 5.0).unwrap();
        assert!(patient.abandon_probability < a.abandon_probability);
        assert!(patient.mean_wait > a.mean_wait);
        // overloaded yet stable
        let o = erlang_a(20.0, 1.0, 10, 1.0).unwrap();
        assert!(o.utilisation < 1.0 && o.abandon_probability > 0.4);
        assert!(erlang_a(1.0, 1.0, 0, 1.0).is_err());
        assert!(erlang_a(1.0, 1.0, 1, 0.0).is_err());
        assert!(erlang_a(f64::NAN, 1.0, 1, 1.0).is_err());
    }
}
