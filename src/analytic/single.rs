//! Single stations with Poisson arrivals: M/M/1, M/M/c, M/G/1 and M/M/inf.

use serde::{Deserialize, Serialize};

use super::check;
use super::error::Result;

/// Steady-state means of one station.
///
/// All times are in the unit of `mean_service`; rates in its inverse.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StationMetrics {
    /// Utilisation per server, `rho = lambda E[S] / c`; `None` for an infinite-server station,
    /// which has no per-server utilisation (its mean number of busy servers is `mean_number`).
    pub utilisation: Option<f64>,
    /// Throughput, equal to the arrival rate `lambda` in steady state.
    pub throughput: f64,
    /// Mean response (sojourn) time `R = Wq + E[S]`.
    pub mean_response: f64,
    /// Mean waiting time in the queue before service, `Wq`.
    pub mean_wait: f64,
    /// Mean number in the station, `L = lambda R` (Little).
    pub mean_number: f64,
    /// Mean number waiting in the queue, `Lq = lambda Wq` (Little).
    pub mean_queue: f64,
}

impl StationMetrics {
    /// Builds the metrics from the arrival rate, mean service time and mean wait (Little's law
    /// gives the rest).
    pub(crate) fn from_wait(
        lambda: f64,
        mean_service: f64,
        mean_wait: f64,
        utilisation: Option<f64>,
    ) -> Self {
        let mean_response = mean_service + mean_wait;
        Self {
            utilisation,
            throughput: lambda,
            mean_response,
            mean_wait,
            mean_number: lambda * mean_response,
            mean_queue: lambda * mean_wait,
        }
    }
}

/// M/M/1: Poisson arrivals at rate `lambda`, one exponential server of mean `mean_service`.
///
/// `R = 1/(mu - lambda) = E[S]/(1 - rho)`, `Wq = rho E[S]/(1 - rho)`, `L = rho/(1 - rho)`
/// (Kleinrock, *Queueing Systems* vol. 1, 3.2). Computed as [`mg1`] with `scv = 1`.
///
/// Errors: `InvalidParameter` if `lambda < 0` or `mean_service <= 0` (or either is not finite);
/// `Unstable` if `rho = lambda E[S] >= 1`.
pub fn mm1(lambda: f64, mean_service: f64) -> Result<StationMetrics> {
    mg1(lambda, mean_service, 1.0)
}

/// M/G/1 (Pollaczek-Khinchine): Poisson arrivals at rate `lambda`, one FCFS server whose
/// service time has mean `mean_service` and squared coefficient of variation `scv`.
///
/// `Wq = rho E[S] (1 + scv) / (2 (1 - rho))`, `R = E[S] + Wq`
/// (Kleinrock vol. 1, eq. 5.105; equivalently `lambda E[S^2] / (2 (1 - rho))`).
/// `scv = 1` is M/M/1; `scv = 0` is M/D/1, the "M/G/1" formula of Kuntraruk's report.
///
/// Errors: `InvalidParameter` if `lambda < 0`, `mean_service <= 0` or `scv < 0` (or any is not
/// finite); `Unstable` if `rho >= 1`.
pub fn mg1(lambda: f64, mean_service: f64, scv: f64) -> Result<StationMetrics> {
    let lambda = check::non_negative("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    let scv = check::non_negative("scv", scv)?;
    let rho = check::stable("M/G/1 station", lambda * s)?;
    let wait = rho * s * (1.0 + scv) / (2.0 * (1.0 - rho));
    Ok(StationMetrics::from_wait(lambda, s, wait, Some(rho)))
}

/// Erlang's B formula: blocking probability of an M/M/c/c loss system with offered load
/// `a = lambda E[S]` (in Erlangs).
///
/// Computed by the recursion `B(0) = 1`, `B(k) = a B(k-1) / (k + a B(k-1))`, which stays in
/// `[0, 1]` and never forms `a^c / c!`, so it is stable for any `c` (Kleinrock vol. 1, 3.7).
///
/// Errors: `InvalidParameter` if `servers == 0` or `offered_load` is negative or not finite.
pub fn erlang_b(servers: u32, offered_load: f64) -> Result<f64> {
    let c = check::at_least("servers", servers, 1)?;
    let a = check::non_negative("offered_load", offered_load)?;
    Ok((1..=c).fold(1.0, |b, k| a * b / (f64::from(k) + a * b)))
}

/// Erlang's C formula: probability that an arrival must wait in an M/M/c queue with offered
/// load `a = lambda E[S] < c`.
///
/// `C = c B / (c - a (1 - B))` with `B` from [`erlang_b`] (Kleinrock vol. 1, eq. 3.40).
///
/// Errors: as [`erlang_b`], plus `Unstable` if `a / c >= 1`.
pub fn erlang_c(servers: u32, offered_load: f64) -> Result<f64> {
    let b = erlang_b(servers, offered_load)?;
    let c = f64::from(servers);
    check::stable("M/M/c station", offered_load / c)?;
    Ok(c * b / (c - offered_load * (1.0 - b)))
}

/// M/M/c: Poisson arrivals at rate `lambda`, `servers` identical exponential servers of mean
/// `mean_service`, one FCFS queue.
///
/// With `a = lambda E[S]` and `rho = a / c`: `Wq = C(c, a) E[S] / (c - a)` where `C` is
/// [`erlang_c`], `R = E[S] + Wq` (Kleinrock vol. 1, 3.5). Stable for `c` up to thousands.
///
/// Errors: `InvalidParameter` for `servers == 0`, `lambda < 0`, `mean_service <= 0`;
/// `Unstable` if `rho >= 1`.
pub fn mmc(lambda: f64, mean_service: f64, servers: u32) -> Result<StationMetrics> {
    let lambda = check::non_negative("lambda", lambda)?;
    let s = check::positive("mean_service", mean_service)?;
    let a = lambda * s;
    let c = f64::from(check::at_least("servers", servers, 1)?);
    let p_wait = erlang_c(servers, a)?;
    let wait = p_wait * s / (c - a);
    Ok(StationMetrics::from_wait(lambda, s, wait, Some(a / c)))
}

/// M/M/inf (in fact M/G/inf): every arrival is served at once.
///
/// `R = E[S]`, `Wq = 0`, `L = lambda E[S]` (Kleinrock vol. 1, 3.4). Holds for any service
/// distribution with that mean. `utilisation` is `None`.
///
/// Errors: `InvalidParameter` if `lambda < 0` or `mean_service < 0` (or not finite).
pub fn mminf(lambda: f64, mean_service: f64) -> Result<StationMetrics> {
    let lambda = check::non_negative("lambda", lambda)?;
    let s = check::non_negative("mean_service", mean_service)?;
    Ok(StationMetrics::from_wait(lambda, s, 0.0, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::AnalyticError;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn mm1_textbook_values() {
        let m = mm1(0.8, 1.0).unwrap();
        assert!(close(m.mean_response, 5.0, 1e-12));
        assert!(close(m.mean_wait, 4.0, 1e-12));
        assert!(close(m.mean_number, 4.0, 1e-12));
        assert!(close(m.mean_queue, 3.2, 1e-12));
        assert_eq!(m.utilisation, Some(0.8));
        assert_eq!(m.throughput, 0.8);
    }

    #[test]
    fn mm1_equals_mmc_with_one_server() {
        let a = mm1(0.3, 2.5).unwrap();
        let b = mmc(0.3, 2.5, 1).unwrap();
        assert!(close(a.mean_response, b.mean_response, 1e-12));
        assert!(close(a.mean_queue, b.mean_queue, 1e-12));
    }

    #[test]
    fn erlang_c_m_m_4_known_value() {
        // lambda = 3, E[S] = 1, c = 4: with t = (a^c / c!) c / (c - a) = (81/24) 4 = 13.5,
        // C = t / (1 + 3 + 9/2 + 27/6 + t) = 13.5 / 26.5 = 0.509433...
        let expected = 13.5 / 26.5;
        let pw = erlang_c(4, 3.0).unwrap();
        assert!(close(pw, expected, 1e-12));
        assert!((pw - 0.509_433_962_264_150_9).abs() < 1e-12);
        let m = mmc(3.0, 1.0, 4).unwrap();
        assert!(close(m.mean_wait, expected / (4.0 - 3.0), 1e-12));
        assert!(close(m.mean_response, 1.0 + expected, 1e-12));
        assert_eq!(m.utilisation, Some(0.75));
    }

    #[test]
    fn erlang_b_small_case_and_large_c_stays_finite() {
        // B(2, 1) = (1/2) / (1 + 1 + 1/2) = 0.2
        assert!(close(erlang_b(2, 1.0).unwrap(), 0.2, 1e-14));
        let m = mmc(990.0, 1.0, 1000).unwrap();
        assert!(m.mean_wait.is_finite() && m.mean_wait > 0.0);
        let pw = erlang_c(1000, 990.0).unwrap();
        assert!(pw > 0.0 && pw < 1.0);
    }

    #[test]
    fn mg1_pollaczek_khinchine() {
        // M/D/1, rho = 0.5, E[S] = 1: Wq = 0.5 * 1 / (2 * 0.5) = 0.5.
        let d = mg1(0.5, 1.0, 0.0).unwrap();
        assert!(close(d.mean_wait, 0.5, 1e-12));
        // scv = 1 is M/M/1.
        let e = mg1(0.5, 1.0, 1.0).unwrap();
        assert!(close(e.mean_response, 2.0, 1e-12));
        // Hyperexponential scv = 4: Wq = 0.5 * 5 / 1 = 2.5.
        let h = mg1(0.5, 1.0, 4.0).unwrap();
        assert!(close(h.mean_wait, 2.5, 1e-12));
    }

    #[test]
    fn mminf_is_pure_delay() {
        let m = mminf(2.0, 3.0).unwrap();
        assert_eq!(m.mean_response, 3.0);
        assert_eq!(m.mean_wait, 0.0);
        assert_eq!(m.mean_number, 6.0);
        assert_eq!(m.utilisation, None);
    }

    #[test]
    fn errors_instead_of_nan() {
        assert!(matches!(mm1(1.0, 1.0), Err(AnalyticError::Unstable { .. })));
        assert!(matches!(
            mmc(4.0, 1.0, 4),
            Err(AnalyticError::Unstable { .. })
        ));
        assert!(matches!(
            mg1(0.5, 0.0, 1.0),
            Err(AnalyticError::InvalidParameter { .. })
        ));
        assert!(mg1(f64::NAN, 1.0, 1.0).is_err());
        assert!(mg1(0.1, 1.0, -0.5).is_err());
        assert!(mmc(0.1, 1.0, 0).is_err());
        assert!(mminf(-1.0, 1.0).is_err());
        assert!(erlang_b(3, f64::INFINITY).is_err());
    }
}
