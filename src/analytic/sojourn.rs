//! Sojourn-time (response-time) laws of single stations, for percentiles: M/M/1 and M/M/c
//! FCFS (exact, phase-type), a FCFS exponential server of a closed product-form network seen by
//! an arriving job (exact by the arrival theorem), and the M/G/1 FCFS response moments
//! (Takacs), to which a caller may fit a law (an approximation).

use super::check;
use super::cost::within_budget;
use super::error::Result;
use super::phase_type::PhaseType;
use super::single::erlang_c;

/// The M/M/c FCFS sojourn (`c = 1` is M/M/1): the wait is 0 with probability `1 - C(c, a)`
/// (Erlang C) and otherwise exponential of rate `c mu - lambda`; the service, exponential of
/// rate `mu`, follows (Kleinrock, *Queueing Systems* vol. 1, 3.5; Gross and Harris 2.3). For
/// `c = 1` the sum is exponential of rate `mu - lambda`.
///
/// Errors: `InvalidParameter` for a negative `lambda`, a non-positive `mean_service` or
/// `servers == 0`; `Unstable` for `lambda E[S] >= c`.
pub fn mmc_sojourn(lambda: f64, mean_service: f64, servers: u32) -> Result<PhaseType> {
    let lambda = check::non_negative("lambda", lambda)?;
    let mu = 1.0 / check::positive("mean_service", mean_service)?;
    check::at_least("servers", servers, 1)?;
    let c = f64::from(servers);
    let offered = lambda * mean_service;
    check::stable("M/M/c queue", offered / c)?;
    if servers == 1 {
        return PhaseType::exponential(mu - lambda);
    }
    let waits = erlang_c(servers, offered)?;
    // phase 0: the wait (rate c mu - lambda), then phase 1: the service
    PhaseType::new(
        vec![waits, 1.0 - waits],
        vec![c * mu - lambda, mu],
        vec![vec![(1, 1.0)], Vec::new()],
    )
}

/// The marginal queue-length law `P(n_k = j)`, `j = 0..=n`, at a load-independent single
/// server of demand `demand` in a closed single-class product-form network of population
/// `n = throughputs.len()`, from the throughputs `X(1..=n)` of exact MVA:
/// `P_n(j) = X(n) D P_{n-1}(j - 1)` for `j >= 1` and `P_n(0)` the rest (Reiser and
/// Lavenberg 1980; Lazowska et al., *Quantitative System Performance*, 20.2). With no
/// throughputs (population 0) the station is empty.
///
/// Errors: `InvalidParameter` for a negative or non-finite demand or throughput; `TooCostly`
/// when the `n^2` work (about `2 n^2` operations: `n` above about 3000) is over
/// [`WORK_BUDGET`](super::WORK_BUDGET).
pub fn closed_queue_length(throughputs: &[f64], demand: f64) -> Result<Vec<f64>> {
    let n = throughputs.len() as f64;
    within_budget(2.0 * n * n, || {
        format!(
            "the queue-length law at population {} ({} levels of a growing law)",
            throughputs.len(),
            throughputs.len()
        )
    })?;
    let demand = check::non_negative("demand", demand)?;
    let mut law = vec![1.0];
    for &x in throughputs {
        let x = check::non_negative("throughput", x)?;
        let mut next = Vec::with_capacity(law.len() + 1);
        next.push(0.0);
        next.extend(law.iter().map(|p| (x * demand * p).max(0.0)));
        let busy: f64 = next.iter().sum();
        next[0] = (1.0 - busy).max(0.0);
        let total = next[0] + busy;
        next.iter_mut().for_each(|p| *p /= total);
        law = next;
    }
    Ok(law)
}

/// The sojourn of a job arriving at a FCFS exponential single server (mean `mean_service`) that
/// holds `j` jobs with probability `ahead[j]`: `j + 1` exponential phases (the residual of the
/// job in service is exponential too). With `ahead` the law seen by an arriving job of a closed
/// product-form network (the time-average law with one job fewer: the arrival theorem of
/// Sevcik-Mitrani and Lavenberg-Reiser), this is the exact sojourn law.
///
/// Errors: as [`PhaseType::erlang_mixture`].
pub fn fcfs_exponential_sojourn(ahead: &[f64], mean_service: f64) -> Result<PhaseType> {
    let mu = 1.0 / check::positive("mean_service", mean_service)?;
    PhaseType::erlang_mixture(ahead, mu)
}

/// Mean and second moment `(E[T], E[T^2])` of the M/G/1 FCFS response `T = W + S` from the
/// service moments `E[S]`, `E[S^2]`, `E[S^3]`: `E[W] = lambda E[S^2] / (2(1 - rho))`,
/// `E[W^2] = 2 E[W]^2 + lambda E[S^3] / (3(1 - rho))` (Takacs 1962), `W` and `S` independent
/// under FCFS.
///
/// Errors: `InvalidParameter` for a negative `lambda`, a non-positive or non-finite moment
/// (a service law without a finite third moment has no finite `E[W^2]`); `Unstable` for
/// `rho >= 1`.
pub fn mg1_response_moments(lambda: f64, service_moments: [f64; 3]) -> Result<(f64, f64)> {
    let lambda = check::non_negative("lambda", lambda)?;
    let [s1, s2, s3] = service_moments;
    let s1 = check::positive("E[S]", s1)?;
    let s2 = check::positive("E[S^2] (the service law needs a finite second moment)", s2)?;
    let s3 = check::positive("E[S^3] (the service law needs a finite third moment)", s3)?;
    let rho = check::stable("M/G/1 queue", lambda * s1)?;
    let w1 = lambda * s2 / (2.0 * (1.0 - rho));
    let w2 = 2.0 * w1 * w1 + lambda * s3 / (3.0 * (1.0 - rho));
    Ok((w1 + s1, w2 + 2.0 * w1 * s1 + s2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mm1_p90_is_ln10_over_mu_minus_lambda() {
        let law = mmc_sojourn(0.8, 1.0, 1).unwrap();
        let p90 = law.quantile(0.9).unwrap();
        assert!((p90 / (10f64.ln() / 0.2) - 1.0).abs() < 1e-10, "{p90}");
    }

    #[test]
    fn mmc_worked_value() {
        // M/M/2, lambda 1, E[S] 1 (a = 1): C(2, 1) = 1/3; wait rate 2 - 1 = 1 = mu, so
        // P(T > t) = (2/3) e^-t + (1/3) P(Erlang-2(1) > t) = e^-t (1 + t/3).
        let law = mmc_sojourn(1.0, 1.0, 2).unwrap();
        for t in [0.5_f64, 2.0, 6.0] {
            let want = (-t).exp() * (1.0 + t / 3.0);
            assert!((law.survival(t).unwrap() - want).abs() < 1e-13, "t {t}");
        }
        // p90 solves e^-t (1 + t/3) = 0.1: t = 2.99488 (by hand, bisection)
        let p90 = law.quantile(0.9).unwrap();
        assert!(((-p90).exp() * (1.0 + p90 / 3.0) - 0.1).abs() < 1e-11);
        assert!((p90 - 2.994_88).abs() < 1e-5, "{p90}");
    }

    #[test]
    fn closed_queue_length_of_one_queue_holds_everybody() {
        // one queue alone: X(n) = 1/D, every job is there
        let law = closed_queue_length(&[0.5, 0.5, 0.5], 2.0).unwrap();
        assert!(law[..3].iter().all(|p| p.abs() < 1e-12));
        assert!((law[3] - 1.0).abs() < 1e-12);
        // two equal queues, N = 1: each holds the job half the time
        let law = closed_queue_length(&[0.5], 1.0).unwrap();
        assert!((law[0] - 0.5).abs() < 1e-12 && (law[1] - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_queue_length_law_too_long_for_the_budget_is_refused() {
        let x = vec![0.5; 20_000];
        assert!(matches!(
            closed_queue_length(&x, 1.0),
            Err(crate::analytic::AnalyticError::TooCostly { .. })
        ));
        assert_eq!(closed_queue_length(&x[..2000], 1.0).unwrap().len(), 2001);
    }

    #[test]
    fn mg1_moments_reduce_to_mm1() {
        // M/M/1: T exponential of rate mu - lambda: E[T] = 5, E[T^2] = 50
        let (m, s) = mg1_response_moments(0.8, [1.0, 2.0, 6.0]).unwrap();
        assert!(
            (m - 5.0).abs() < 1e-12 && (s - 50.0).abs() < 1e-10,
            "{m} {s}"
        );
        assert!(mg1_response_moments(0.8, [1.0, 2.0, f64::INFINITY]).is_err());
        assert!(mg1_response_moments(1.0, [1.0, 2.0, 6.0]).is_err());
    }
}
