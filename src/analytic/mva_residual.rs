//! Approximate MVA for single-class closed networks with non-exponential FCFS servers: the
//! residual-service correction.

use super::check;
use super::closed::{self, Center, ClosedSolution};
use super::error::{AnalyticError, Result};
use super::mva::{MvaStation, Residence, affordable_recursion};
use super::network::CenterKind;

/// A center of a single-class closed network with the squared coefficient of variation of its
/// service time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneralCenter {
    /// Kind and demand.
    pub center: Center,
    /// Squared coefficient of variation of the service time per visit (`1` exponential, `0`
    /// deterministic). Only FCFS single-server centers ([`CenterKind::Queue`]) use it: delays
    /// and processor sharing are insensitive to it.
    pub scv: f64,
}

/// MVA with the residual-service correction for FCFS single-server centers whose service is not
/// exponential (Reiser, "A queueing network analysis of computer communication networks with
/// window flow control", IEEE Trans. Communications 27(8), 1979; the arrival-theorem reasoning of
/// Lazowska et al., *Quantitative System Performance*, 1984, ch. 6, with the M/G/1 residual).
///
/// An arriving job finds `Q_k(n-1)` jobs (arrival theorem, taken as if it held), one of them in
/// service with probability `U_k(n-1) = X(n-1) D_k`. Those waiting need a full service each; the
/// one in service needs its residual, `E[S^2] / (2 E[S]) = S (1 + scv) / 2` on average, instead
/// of a full `S`. Hence
///
/// `R_k(n) = D_k (1 + Q_k(n-1)) + D_k U_k(n-1) (scv_k - 1) / 2`
///
/// at an FCFS single-server center, `D_k (1 + Q_k(n-1))` at a PS center and `D_k` at a delay,
/// with `X(n) = n / sum_k R_k(n)` and `Q_k(n) = X(n) R_k(n)`. With every `scv = 1` this is exact
/// MVA; it is exact at `n = 1` whatever the SCVs; otherwise an approximation (the arrival
/// theorem does not hold outside product form). It is not a bound: beyond saturation with
/// `scv < 1` it can put the throughput above `1 / D_max` (the hand example in the tests reaches
/// `9/8` against a bound of 1 at `N = 3`), so its error is for validation to measure.
///
/// Errors: as [`super::mva`], plus `InvalidParameter` for a negative or non-finite `scv` and
/// `NotApplicable` for a multi-server center (`MultiServer(c)`, `c >= 2`).
pub fn mva_residual(centers: &[GeneralCenter], population: u32) -> Result<ClosedSolution> {
    let plain: Vec<Center> = centers.iter().map(|c| c.center).collect();
    closed::validate(&plain, population)?;
    let stations = centers
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let scv = check::non_negative(&format!("scv[{k}]"), c.scv)?;
            let mut station = MvaStation::load_independent(&c.center).ok_or_else(|| {
                AnalyticError::NotApplicable(format!(
                    "center {k} is multi-server; the residual-service correction covers delays \
                     and single-server centers"
                ))
            })?;
            if c.center.kind == CenterKind::Queue
                && let Residence::Queueing { per_busy, .. } = &mut station.residence
            {
                *per_busy = c.center.demand * (scv - 1.0) / 2.0;
            }
            Ok(station)
        })
        .collect::<Result<Vec<MvaStation>>>()?;
    affordable_recursion(
        &stations,
        population,
        "the MVA recursion with the residual-service correction",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::mva;
    use crate::analytic::mva::tests::{close, hand_network};

    fn general(kind: CenterKind, demand: f64, scv: f64) -> GeneralCenter {
        GeneralCenter {
            center: Center { kind, demand },
            scv,
        }
    }

    #[test]
    fn exponential_service_is_exact_mva() {
        let net: Vec<GeneralCenter> = hand_network()
            .into_iter()
            .map(|center| GeneralCenter { center, scv: 1.0 })
            .collect();
        assert_eq!(
            mva_residual(&net, 6).unwrap(),
            mva(&hand_network(), 6).unwrap()
        );
    }

    #[test]
    fn deterministic_server_by_hand() {
        // Deterministic queue D = 1 and a delay Z = 1.
        // n=1: R = (1, 1), X = 1/2, Q_q = 1/2, U = 1/2.
        // n=2: R_q = 1 (1 + 1/2) + 1 (1/2) (0 - 1)/2 = 5/4, X = 2 / (9/4) = 8/9.
        // n=3: Q_q(2) = 8/9 * 5/4 = 10/9, U(2) = 8/9:
        //      R_q = 1 + 10/9 - 4/9 = 5/3, X = 3 / (8/3) = 9/8.
        let net = [
            general(CenterKind::Queue, 1.0, 0.0),
            general(CenterKind::Delay, 1.0, 0.0),
        ];
        let s = mva_residual(&net, 3).unwrap();
        assert!(close(s.at(1).unwrap().throughput, 0.5, 1e-12));
        assert!(close(s.at(2).unwrap().residence[0], 1.25, 1e-12));
        assert!(close(s.at(2).unwrap().throughput, 8.0 / 9.0, 1e-12));
        assert!(close(s.full().residence[0], 5.0 / 3.0, 1e-12));
        assert!(close(s.full().throughput, 9.0 / 8.0, 1e-12));
        // past N* = 2 the approximation exceeds the bound 1 / D_max = 1: a known weakness
        assert!(s.full().throughput > 1.0);
        // less variable service, less queueing than the exponential server
        let exp = mva(&[net[0].center, net[1].center], 3).unwrap();
        assert!(s.full().throughput > exp.full().throughput);
    }

    #[test]
    fn scv_matters_only_at_fcfs_servers() {
        let ps = [
            general(CenterKind::ProcessorSharing, 1.0, 9.0),
            general(CenterKind::Delay, 1.0, 9.0),
        ];
        let exp = [
            Center {
                kind: CenterKind::ProcessorSharing,
                demand: 1.0,
            },
            Center {
                kind: CenterKind::Delay,
                demand: 1.0,
            },
        ];
        assert_eq!(mva_residual(&ps, 4).unwrap(), mva(&exp, 4).unwrap());
    }

    #[test]
    fn bad_inputs_are_errors() {
        let q = |scv| [general(CenterKind::Queue, 1.0, scv)];
        assert!(mva_residual(&q(-1.0), 2).is_err());
        assert!(mva_residual(&q(f64::NAN), 2).is_err());
        assert!(mva_residual(&q(1.0), 0).is_err());
        let multi = [general(CenterKind::MultiServer(2), 1.0, 0.5)];
        assert!(matches!(
            mva_residual(&multi, 2),
            Err(AnalyticError::NotApplicable(_))
        ));
    }
}
