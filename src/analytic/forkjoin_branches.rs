//! Open fork-join queues whose branches are GI/G/1 FCFS queues with any service distribution:
//! the maximum of independent branch response times, and the same scaled by Nelson and
//! Tantawi's correlation factor.
//!
//! Each branch sees every job of the fork, so its marginal response time is that of a GI/G/1
//! queue. Its law is approximated from two numbers besides the service law: the probability
//! `rho` that a job waits (exact for Poisson arrivals) and the mean wait `Wq` (Pollaczek-Khinchine
//! for Poisson arrivals, Kingman otherwise), the wait being 0 with probability `1 - rho` and
//! exponential with mean `Wq / rho` otherwise (exact for M/M/1; the classical two-moment
//! approximation of the GI/G/1 wait, e.g. Tijms, *A First Course in Stochastic Models*, Wiley,
//! 2003, 2.5). The response is that wait plus an independent service time.
//!
//! The branches of one job are positively correlated (they share the arrival instants); treating
//! them as independent overestimates the maximum: for exponential branches, whose marginals are
//! then exact, it is Nelson and Tantawi's upper bound (the response times are associated random
//! variables, Esary, Proschan and Walkup 1967).

use super::check;
use super::error::Result;
use super::forkjoin::{expected_max_fallible, nelson_tantawi};
use super::harmonic::harmonic;
use super::quadrature;

/// Relative accuracy of the inner integral of [`branch_response_cdf`].
const INNER_REL_TOL: f64 = 1e-12;

/// Subinterval cap of the inner integral.
const INNER_SEGMENTS: u32 = 2_000;

/// Beyond this many mean conditional waits the exponential tail is below `e^-60`.
const TAIL_MEANS: f64 = 60.0;

/// One FCFS single-server branch of a fork-join queue, as the independent-branch maximum sees
/// it.
#[derive(Clone, Copy)]
pub struct QueueBranch<'a> {
    /// The service time's CDF, `P(S <= t)`, 0 below `service_lower`.
    pub service_cdf: &'a dyn Fn(f64) -> f64,
    /// The smallest service time.
    pub service_lower: f64,
    /// Utilisation `rho = lambda E[S]`, taken as the probability that a job waits.
    pub utilisation: f64,
    /// Mean wait in queue `Wq`.
    pub mean_wait: f64,
}

impl std::fmt::Debug for QueueBranch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueBranch")
            .field("service_lower", &self.service_lower)
            .field("utilisation", &self.utilisation)
            .field("mean_wait", &self.mean_wait)
            .finish_non_exhaustive()
    }
}

/// `P(R <= t)` for the response `R = W + S` of `branch`, with `W` 0 with probability `1 - rho`
/// and exponential of mean `w = Wq / rho` otherwise:
/// `(1 - rho) F_S(t) + rho int_0^(t - lower) F_S(t - u) e^(-u/w) / w du`.
///
/// Errors: `InvalidParameter` for a utilisation outside `[0, 1)`, a negative or non-finite
/// wait, or a non-finite lower end; `NotConverged` if the inner integral does not settle.
pub fn branch_response_cdf(branch: &QueueBranch<'_>, t: f64) -> Result<f64> {
    let rho = check::non_negative("utilisation", branch.utilisation)?;
    let rho = check::stable("branch", rho)?;
    let wq = check::non_negative("mean_wait", branch.mean_wait)?;
    let lower = check::finite("service_lower", branch.service_lower)?;
    let service = (branch.service_cdf)(t);
    if rho == 0.0 || wq == 0.0 {
        return Ok(service);
    }
    if t <= lower {
        // no waited job is done yet: W + S > S >= lower when W > 0
        return Ok((1.0 - rho) * service);
    }
    let w = wq / rho;
    let end = (t - lower).min(TAIL_MEANS * w);
    let mut f = |u: f64| Ok((branch.service_cdf)(t - u) * (-u / w).exp() / w);
    let waited = quadrature::integrate(&mut f, 0.0, end, INNER_REL_TOL, INNER_SEGMENTS)?;
    Ok(((1.0 - rho) * service + rho * waited).clamp(0.0, 1.0))
}

/// Mean response time of an open fork-join queue with `k` identical branches like `branch`,
/// approximated by the expected maximum of `k` independent branch response times
/// ([`branch_response_cdf`]): `lower + int (1 - F_R(t)^k) dt`.
///
/// For exponential branches (M/M/1 marginals, `F_R(t) = 1 - e^{-(mu - lambda) t}`) this is
/// `H_k / (mu - lambda)`, Nelson and Tantawi's upper bound (IEEE Trans. Computers 37(6), 1988);
/// with `k = 1` it is the branch's mean response `E[S] + Wq`.
///
/// Errors: as [`branch_response_cdf`]; `InvalidParameter` for `k == 0`.
pub fn fork_join_independent_max(k: u32, branch: &QueueBranch<'_>) -> Result<f64> {
    expected_max_fallible(
        k,
        &|t| branch_response_cdf(branch, t),
        branch.service_lower,
        f64::INFINITY,
    )
}

/// Nelson and Tantawi's correction for the correlation of the branches: the ratio of their
/// approximation ([`nelson_tantawi`]) to the independent-branch maximum `H_k / (mu - lambda)`
/// for exponential branches at utilisation `rho`, `[H_k/H_2 + (4/11)(1 - H_k/H_2) rho]
/// (12 - rho) / (8 H_k)`. It is 1 at `rho = 0` and `(12 - rho)/12` at `k = 2` (exact there,
/// Flatto and Hahn); 1 for `k = 1`.
///
/// Applied to non-exponential branches it assumes their correlation shrinks the maximum by the
/// same factor as for exponential ones at the same utilisation.
///
/// Errors: `InvalidParameter` for `k == 0`; `Unstable` for `rho >= 1`.
pub fn nelson_tantawi_correlation_factor(k: u32, rho: f64) -> Result<f64> {
    check::at_least("k", k, 1)?;
    let rho = check::stable("fork-join queue", check::non_negative("rho", rho)?)?;
    if k == 1 {
        return Ok(1.0);
    }
    Ok(nelson_tantawi(k, rho, 1.0)? * (1.0 - rho) / harmonic(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::tests::close;
    use crate::analytic::{AnalyticError, fork_join_2_server, mg1};

    fn exp_cdf(mean: f64) -> impl Fn(f64) -> f64 {
        move |t: f64| if t <= 0.0 { 0.0 } else { -(-t / mean).exp_m1() }
    }

    /// An M/G/1 branch at arrival rate `lambda` (Pollaczek-Khinchine wait).
    fn mg1_branch<'a>(
        cdf: &'a dyn Fn(f64) -> f64,
        lower: f64,
        lambda: f64,
        mean: f64,
        scv: f64,
    ) -> QueueBranch<'a> {
        QueueBranch {
            service_cdf: cdf,
            service_lower: lower,
            utilisation: lambda * mean,
            mean_wait: mg1(lambda, mean, scv).unwrap().mean_wait,
        }
    }

    #[test]
    fn at_the_smallest_service_time_only_the_jobs_that_did_not_wait_are_done() {
        // M/D/1 at rho 0.5, service 1: P(R <= 1) = P(W = 0) = 0.5, not P(S <= 1) = 1
        let det = |t: f64| if t >= 1.0 { 1.0 } else { 0.0 };
        let b = mg1_branch(&det, 1.0, 0.5, 1.0, 0.0);
        assert!(close(branch_response_cdf(&b, 1.0).unwrap(), 0.5, 1e-12));
        assert_eq!(branch_response_cdf(&b, 0.5).unwrap(), 0.0);
    }

    #[test]
    fn exponential_branches_have_exponential_responses_and_the_h_k_bound() {
        // M/M/1 with lambda 0.6, mu 1: R ~ exponential with rate 0.4.
        let cdf = exp_cdf(1.0);
        let b = mg1_branch(&cdf, 0.0, 0.6, 1.0, 1.0);
        for t in [0.1, 1.0, 2.5, 10.0, 40.0] {
            let f = branch_response_cdf(&b, t).unwrap();
            assert!(close(f, -(-0.4 * t).exp_m1(), 1e-10), "t {t}: {f}");
        }
        for k in [1, 2, 4, 16] {
            let v = fork_join_independent_max(k, &b).unwrap();
            assert!(close(v, harmonic(k) / 0.4, 1e-8), "k {k}: {v}");
        }
    }

    #[test]
    fn deterministic_branches_by_hand() {
        // M/D/1 with d = 1, rho = 0.5: Wq = 0.5, so w = Wq/rho = 1 and
        // E[max of k] = d + w sum_j C(k,j) (-1)^(j+1) rho^j / j.
        let cdf = |t: f64| f64::from(u8::from(t >= 1.0));
        let b = mg1_branch(&cdf, 1.0, 0.5, 1.0, 0.0);
        assert!(close(b.mean_wait, 0.5, 1e-15));
        let two = 1.0 + (2.0 * 0.5 - 0.25 / 2.0);
        assert!(close(fork_join_independent_max(2, &b).unwrap(), two, 1e-8));
        let four = 1.0 + (4.0 * 0.5 - 6.0 * 0.25 / 2.0 + 4.0 * 0.125 / 3.0 - 0.0625 / 4.0);
        assert!(close(fork_join_independent_max(4, &b).unwrap(), four, 1e-8));
        // One branch: its mean response, d + Wq.
        assert!(close(fork_join_independent_max(1, &b).unwrap(), 1.5, 1e-8));
    }

    #[test]
    fn uniform_branch_has_the_pollaczek_khinchine_mean() {
        // k = 1 gives E[S] + Wq whatever the service law (the mixture keeps the mean).
        let cdf = |t: f64| (t / 2.0).clamp(0.0, 1.0);
        let b = mg1_branch(&cdf, 0.0, 0.7, 1.0, 1.0 / 3.0);
        let r = mg1(0.7, 1.0, 1.0 / 3.0).unwrap().mean_response;
        assert!(close(fork_join_independent_max(1, &b).unwrap(), r, 1e-8));
        // More branches wait longer, but less than k times as long.
        let m4 = fork_join_independent_max(4, &b).unwrap();
        assert!(m4 > r && m4 < 4.0 * r);
    }

    #[test]
    fn correlation_factor_is_flatto_hahn_at_two() {
        for rho in [0.0, 0.3, 0.9] {
            let f = nelson_tantawi_correlation_factor(2, rho).unwrap();
            assert!(close(f, (12.0 - rho) / 12.0, 1e-14));
            // Independent-max times the factor is the exact 2-server result for M/M/1 branches.
            let exact = fork_join_2_server(rho, 1.0).unwrap();
            assert!(close(f * 1.5 / (1.0 - rho), exact, 1e-14));
        }
        assert_eq!(nelson_tantawi_correlation_factor(1, 0.5).unwrap(), 1.0);
        assert!(close(
            nelson_tantawi_correlation_factor(8, 0.0).unwrap(),
            1.0,
            1e-14
        ));
        assert!(matches!(
            nelson_tantawi_correlation_factor(4, 1.0),
            Err(AnalyticError::Unstable { .. })
        ));
    }

    #[test]
    fn errors() {
        let cdf = exp_cdf(1.0);
        let mut b = mg1_branch(&cdf, 0.0, 0.5, 1.0, 1.0);
        b.utilisation = 1.2;
        assert!(branch_response_cdf(&b, 1.0).is_err());
        b.utilisation = 0.5;
        b.mean_wait = f64::NAN;
        assert!(fork_join_independent_max(2, &b).is_err());
        b.mean_wait = 1.0;
        assert!(fork_join_independent_max(0, &b).is_err());
    }
}
