//! Whitt's Queueing Network Analyzer (QNA) for open single-class networks of GI/G/m stations.

use serde::Serialize;

use super::check;
use super::error::{AnalyticError, Result};
use super::gigc::allen_cunneen;
use super::jackson::solve_traffic;
use super::single::{StationMetrics, mminf};

/// One station of an open single-class network, as QNA sees it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QnaStation {
    /// FCFS servers; `None` for a delay (infinite server).
    pub servers: Option<u32>,
    /// Mean service time per visit.
    pub mean_service: f64,
    /// Squared coefficient of variation of the service time.
    pub service_scv: f64,
    /// External arrival rate into this station.
    pub external_rate: f64,
    /// SCV of the external (renewal) arrivals into this station (ignored when the rate is 0).
    pub external_scv: f64,
}

/// What QNA predicts for an open network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QnaSolution {
    /// SCV of the arrival process at each station.
    pub arrival_scv: Vec<f64>,
    /// SCV of the departure process of each station.
    pub departure_scv: Vec<f64>,
    /// Means at each station (arrival rate, utilisation, wait, response, number).
    pub stations: Vec<StationMetrics>,
    /// End-to-end response time per job, `sum_j (lambda_j / lambda_0) R_j`.
    pub response_time: f64,
}

/// Largest number of sweeps of the fixed point on the arrival SCVs.
const MAX_SWEEPS: u32 = 100_000;

/// QNA (W. Whitt, "The Queueing Network Analyzer", Bell System Technical Journal 62(9), 1983),
/// in its basic form for one class:
///
/// - flow rates from the traffic equations `lambda_j = lambda_0j + sum_i lambda_i p_ij`;
/// - departures: `c_dj^2 = 1 + (1 - rho_j^2)(c_aj^2 - 1) + rho_j^2 (c_sj^2 - 1) / sqrt(m_j)`
///   (a delay passes its arrival SCV on);
/// - splitting with probability `p`: `p c^2 + 1 - p`; merging: the rate-weighted average of
///   the SCVs (stationary-interval superposition), so
///   `c_aj^2 = (lambda_0j c_0j^2 + sum_i lambda_i p_ij (p_ij c_di^2 + 1 - p_ij)) / lambda_j`,
///   a linear system solved by fixed-point iteration (a contraction for an open network);
/// - waits: GI/G/1 by Kingman's formula with the Kraemer and Langenbach-Belz factor
///   `g = exp(-2 (1 - rho)(1 - c_a^2)^2 / (3 rho (c_a^2 + c_s^2)))` when `c_a^2 < 1`
///   (Whitt's eqs. 45-46), GI/G/m by Allen-Cunneen ([`allen_cunneen`]).
///
/// With Poisson arrivals and exponential service everywhere every SCV is 1 and the result is
/// the Jackson network's, exactly; otherwise an approximation.
///
/// `routing[i][j]` is the probability of going from station `i` to `j`; the rest of row `i`
/// leaves the network.
///
/// Errors: as [`solve_traffic`]; `InvalidParameter` for negative or non-finite numbers, no
/// external arrivals or `servers == Some(0)`; `Unstable` for a station at `rho >= 1`;
/// `NotConverged` if the fixed point does not settle.
pub fn qna(stations: &[QnaStation], routing: &[Vec<f64>]) -> Result<QnaSolution> {
    let external: Vec<f64> = stations.iter().map(|s| s.external_rate).collect();
    let lambda = solve_traffic(routing, &external)?;
    let total = check::positive("total external arrival rate", external.iter().sum())?;
    let mut rho = Vec::with_capacity(stations.len());
    for (j, s) in stations.iter().enumerate() {
        check::non_negative(&format!("service_scv[{j}]"), s.service_scv)?;
        check::non_negative(&format!("external_scv[{j}]"), s.external_scv)?;
        let load = lambda[j] * check::non_negative(&format!("mean_service[{j}]"), s.mean_service)?;
        rho.push(match s.servers {
            None => 0.0,
            Some(m) => {
                let m = check::at_least(&format!("servers[{j}]"), m, 1)?;
                check::stable(&format!("station {j}"), load / f64::from(m))?
            }
        });
    }
    let departure = |j: usize, ca2: f64| match stations[j].servers {
        None => ca2,
        Some(m) => {
            let r2 = rho[j] * rho[j];
            1.0 + (1.0 - r2) * (ca2 - 1.0)
                + r2 * (stations[j].service_scv - 1.0) / f64::from(m).sqrt()
        }
    };
    let mut ca2 = vec![1.0; stations.len()];
    let mut converged = false;
    let mut change = f64::INFINITY;
    for _ in 0..MAX_SWEEPS {
        let cd2: Vec<f64> = (0..stations.len()).map(|i| departure(i, ca2[i])).collect();
        change = 0.0;
        for j in 0..stations.len() {
            if lambda[j] <= 0.0 {
                continue;
            }
            let s = &stations[j];
            let mut weighted = s.external_rate * s.external_scv;
            for (i, row) in routing.iter().enumerate() {
                let p = row[j];
                weighted += lambda[i] * p * (p * cd2[i] + 1.0 - p);
            }
            let new = weighted / lambda[j];
            change = f64::max(change, (new - ca2[j]).abs());
            ca2[j] = new;
        }
        if change < 1e-13 {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(AnalyticError::NotConverged {
            method: "QNA arrival SCVs".into(),
            iterations: MAX_SWEEPS,
            residual: change,
        });
    }
    let metrics: Vec<StationMetrics> = stations
        .iter()
        .enumerate()
        .map(|(j, s)| match s.servers {
            None => mminf(lambda[j], s.mean_service),
            Some(1) => Ok(gi_g_1(lambda[j], ca2[j], s.mean_service, s.service_scv)),
            Some(m) => allen_cunneen(lambda[j], ca2[j], s.mean_service, s.service_scv, m),
        })
        .collect::<Result<_>>()?;
    let response_time = metrics
        .iter()
        .zip(&lambda)
        .map(|(m, l)| l / total * m.mean_response)
        .sum();
    Ok(QnaSolution {
        departure_scv: (0..stations.len()).map(|i| departure(i, ca2[i])).collect(),
        arrival_scv: ca2,
        stations: metrics,
        response_time,
    })
}

/// QNA's GI/G/1 wait: Kingman's with the Kraemer and Langenbach-Belz factor for `c_a^2 < 1`.
/// The caller has checked stability.
fn gi_g_1(lambda: f64, ca2: f64, s: f64, cs2: f64) -> StationMetrics {
    let rho = lambda * s;
    let variability = ca2 + cs2;
    let g = if ca2 < 1.0 && rho > 0.0 && variability > 0.0 {
        (-2.0 * (1.0 - rho) * (1.0 - ca2).powi(2) / (3.0 * rho * variability)).exp()
    } else {
        1.0
    };
    let wait = s * rho / (1.0 - rho) * variability / 2.0 * g;
    StationMetrics::from_wait(lambda, s, wait, Some(rho))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::tests::close;
    use crate::analytic::network::CenterKind;
    use crate::analytic::{OpenClass, jackson, mg1};

    fn station(servers: Option<u32>, mean: f64, scv: f64, rate: f64, ext_scv: f64) -> QnaStation {
        QnaStation {
            servers,
            mean_service: mean,
            service_scv: scv,
            external_rate: rate,
            external_scv: ext_scv,
        }
    }

    #[test]
    fn poisson_and_exponential_everywhere_is_jackson() {
        // a -> b (p 0.7) or back to a (p 0.2), b -> exit; plus a delay fed by b.
        let st = [
            station(Some(1), 0.5, 1.0, 0.6, 1.0),
            station(Some(2), 1.0, 1.0, 0.3, 1.0),
            station(None, 3.0, 1.0, 0.0, 1.0),
        ];
        let routing = vec![
            vec![0.2, 0.7, 0.0],
            vec![0.0, 0.0, 0.4],
            vec![0.0, 0.0, 0.0],
        ];
        let q = qna(&st, &routing).unwrap();
        for c2 in q.arrival_scv.iter().chain(&q.departure_scv) {
            assert!(close(*c2, 1.0, 1e-12));
        }
        let lambda = solve_traffic(&routing, &[0.6, 0.3, 0.0]).unwrap();
        let class = OpenClass {
            arrival_rate: 0.9,
            visits: lambda.iter().map(|l| l / 0.9).collect(),
            service: vec![0.5, 1.0, 3.0],
        };
        let kinds = [
            CenterKind::Queue,
            CenterKind::MultiServer(2),
            CenterKind::Delay,
        ];
        let j = jackson(&kinds, &[class]).unwrap();
        assert!(close(q.response_time, j.response_time[0], 1e-10));
        for k in 0..3 {
            assert!(close(q.stations[k].mean_number, j.mean_number[k], 1e-10));
        }
    }

    #[test]
    fn one_poisson_station_is_pollaczek_khinchine() {
        let q = qna(&[station(Some(1), 1.0, 0.0, 0.6, 1.0)], &[vec![0.0]]).unwrap();
        let pk = mg1(0.6, 1.0, 0.0).unwrap();
        assert!(close(q.response_time, pk.mean_response, 1e-12));
    }

    #[test]
    fn tandem_by_hand() {
        // Poisson (rate 0.8) -> deterministic S = 0.75 (rho 0.6) -> exponential S = 1 (rho 0.8).
        // c_d1^2 = 1 + 0.64 (1 - 1) + 0.36 (0 - 1) = 0.64 = c_a2^2.
        // g = exp(-2 (0.2)(0.36)^2 / (3 (0.8)(1.64))); Wq2 = 1 * 4 * 1.64 / 2 * g.
        let st = [
            station(Some(1), 0.75, 0.0, 0.8, 1.0),
            station(Some(1), 1.0, 1.0, 0.0, 1.0),
        ];
        let q = qna(&st, &[vec![0.0, 1.0], vec![0.0, 0.0]]).unwrap();
        assert!(close(q.arrival_scv[1], 0.64, 1e-12));
        let g = (-2.0 * 0.2 * 0.36f64.powi(2) / (3.0 * 0.8 * 1.64)).exp();
        let wq2 = 4.0 * 1.64 / 2.0 * g;
        assert!(close(q.stations[1].mean_wait, wq2, 1e-12));
        let r1 = mg1(0.8, 0.75, 0.0).unwrap().mean_response;
        assert!(close(q.response_time, r1 + 1.0 + wq2, 1e-12));
    }

    #[test]
    fn feedback_of_smooth_flows_by_hand() {
        // D/D/1-like: deterministic arrivals and service, no variability, no wait.
        let q = qna(&[station(Some(1), 0.5, 0.0, 1.0, 0.0)], &[vec![0.0]]).unwrap();
        assert_eq!(q.stations[0].mean_wait, 0.0);
        // Feedback with p = 0.5 at an M/M/1-like server keeps SCV 1.
        let q = qna(&[station(Some(1), 0.2, 1.0, 1.0, 1.0)], &[vec![0.5]]).unwrap();
        assert!(close(q.arrival_scv[0], 1.0, 1e-12));
    }

    #[test]
    fn errors() {
        let st = [station(Some(1), 2.0, 1.0, 0.6, 1.0)];
        assert!(matches!(
            qna(&st, &[vec![0.0]]),
            Err(AnalyticError::Unstable { .. })
        ));
        let none = [station(Some(1), 0.5, 1.0, 0.0, 1.0)];
        assert!(qna(&none, &[vec![0.0]]).is_err());
        let bad = [station(Some(0), 0.5, 1.0, 0.5, 1.0)];
        assert!(qna(&bad, &[vec![0.0]]).is_err());
        let neg = [station(Some(1), 0.5, -1.0, 0.5, 1.0)];
        assert!(qna(&neg, &[vec![0.0]]).is_err());
    }
}
