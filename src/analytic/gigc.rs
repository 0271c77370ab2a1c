//! One station with renewal (not necessarily Poisson) arrivals and general service: the
//! Allen-Cunneen approximation for GI/G/c and Kingman's for GI/G/1.

use super::check;
use super::error::Result;
use super::single::{StationMetrics, mmc};

/// Allen-Cunneen approximation for a GI/G/c queue: renewal arrivals at rate `lambda` with
/// inter-arrival SCV `arrival_scv`, `servers` identical FCFS servers with mean `mean_service` and
/// service SCV `service_scv`.
///
/// `Wq ~ Wq(M/M/c) (c_a^2 + c_s^2) / 2`, where `Wq(M/M/c) = C(c, a) E[S] / (c - a)` is the
/// Erlang C wait of [`mmc`] (A. O. Allen, *Probability, Statistics, and Queueing Theory*, 2nd
/// ed., Academic Press, 1990; Bolch et al., *Queueing Networks and Markov Chains*, 2nd ed.,
/// Wiley, 2006, on GI/G/m). Exact for M/M/c (`c_a^2 = c_s^2 = 1`) and for M/G/1 (`c_a^2 = 1`, `c = 1`,
/// where it is Pollaczek-Khinchine); an approximation otherwise, best in heavy traffic.
///
/// Errors: as [`mmc`], plus `InvalidParameter` for a negative or non-finite SCV.
pub fn allen_cunneen(
    lambda: f64,
    arrival_scv: f64,
    mean_service: f64,
    service_scv: f64,
    servers: u32,
) -> Result<StationMetrics> {
    let ca2 = check::non_negative("arrival_scv", arrival_scv)?;
    let cs2 = check::non_negative("service_scv", service_scv)?;
    let markov = mmc(lambda, mean_service, servers)?;
    let wait = markov.mean_wait * (ca2 + cs2) / 2.0;
    Ok(StationMetrics::from_wait(
        lambda,
        mean_service,
        wait,
        markov.utilisation,
    ))
}

/// Kingman's approximation for a GI/G/1 queue (J. F. C. Kingman, "The single server queue in
/// heavy traffic", Proc. Cambridge Phil. Soc. 57, 1961; the "VUT" equation of Hopp and
/// Spearman, *Factory Physics*):
///
/// `Wq ~ (c_a^2 + c_s^2) / 2 * rho / (1 - rho) * E[S]`,
///
/// which is [`allen_cunneen`] with one server. Exact for M/G/1; asymptotically exact as
/// `rho -> 1`.
///
/// Errors: as [`allen_cunneen`].
pub fn kingman(
    lambda: f64,
    arrival_scv: f64,
    mean_service: f64,
    service_scv: f64,
) -> Result<StationMetrics> {
    allen_cunneen(lambda, arrival_scv, mean_service, service_scv, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::AnalyticError;
    use crate::analytic::mva::tests::close;
    use crate::analytic::single::mg1;

    #[test]
    fn poisson_arrivals_at_one_server_are_pollaczek_khinchine() {
        for (rho, scv) in [(0.5, 0.0), (0.8, 0.0), (0.3, 0.5), (0.9, 4.0)] {
            let ac = allen_cunneen(rho, 1.0, 1.0, scv, 1).unwrap();
            let pk = mg1(rho, 1.0, scv).unwrap();
            assert!(
                close(ac.mean_wait, pk.mean_wait, 1e-12),
                "rho {rho} scv {scv}"
            );
            assert!(close(ac.mean_number, pk.mean_number, 1e-12));
        }
        // M/D/1 at rho = 0.5: Wq = 0.5 (textbook).
        assert!(close(
            kingman(0.5, 1.0, 1.0, 0.0).unwrap().mean_wait,
            0.5,
            1e-12
        ));
    }

    #[test]
    fn exponential_everything_is_erlang_c() {
        let ac = allen_cunneen(3.0, 1.0, 1.0, 1.0, 4).unwrap();
        // M/M/4 with a = 3: Wq = C / (c - a) = 13.5 / 26.5 (see single.rs)
        assert!(close(ac.mean_wait, 13.5 / 26.5, 1e-12));
        assert_eq!(ac.utilisation, Some(0.75));
    }

    #[test]
    fn kingman_by_hand() {
        // lambda = 0.5, E[S] = 1.6 (rho = 0.8), c_a^2 = 0.5, c_s^2 = 2:
        // Wq = (0.5 + 2)/2 * 0.8/0.2 * 1.6 = 1.25 * 4 * 1.6 = 8, R = 9.6, L = 4.8.
        let k = kingman(0.5, 0.5, 1.6, 2.0).unwrap();
        assert!(close(k.mean_wait, 8.0, 1e-12));
        assert!(close(k.mean_response, 9.6, 1e-12));
        assert!(close(k.mean_number, 4.8, 1e-12));
        // D/D/1: no variability, no wait.
        assert_eq!(kingman(0.5, 0.0, 1.0, 0.0).unwrap().mean_wait, 0.0);
    }

    #[test]
    fn allen_cunneen_by_hand_for_two_servers() {
        // M/M/2 with a = 1.6 (rho = 0.8): C = 2 B / (2 - a (1 - B)), B = erlang_b(2, 1.6)
        // = (1.28 / 2.6) / (1 + ... ) -> computed: B(1) = 1.6/2.6, B(2) = 1.6 B1 / (2 + 1.6 B1).
        let b1 = 1.6 / 2.6;
        let b2 = 1.6 * b1 / (2.0 + 1.6 * b1);
        let c = 2.0 * b2 / (2.0 - 1.6 * (1.0 - b2));
        let wq_mmc = c * 1.0 / (2.0 - 1.6);
        // E2 arrivals (c_a^2 = 0.5) and deterministic service: factor (0.5 + 0)/2 = 0.25
        let ac = allen_cunneen(1.6, 0.5, 1.0, 0.0, 2).unwrap();
        assert!(close(ac.mean_wait, 0.25 * wq_mmc, 1e-12));
    }

    #[test]
    fn errors() {
        assert!(matches!(
            kingman(1.0, 1.0, 1.0, 1.0),
            Err(AnalyticError::Unstable { .. })
        ));
        assert!(kingman(0.5, -1.0, 1.0, 1.0).is_err());
        assert!(allen_cunneen(0.5, 1.0, 1.0, f64::INFINITY, 2).is_err());
        assert!(allen_cunneen(0.5, 1.0, 1.0, 1.0, 0).is_err());
    }
}
