//! MAP/PH/1 and PH/PH/1 FCFS as quasi-birth-death processes.

use serde::Serialize;

use super::dense::Dense;
use super::map::Map;
use super::ph::Ph;
use super::qbd::{Qbd, QbdLevel, QbdSolution, qbd};
use crate::analytic::check;
use crate::analytic::error::Result;
use crate::analytic::single::StationMetrics;

/// The exact means of a queue with MAP arrivals ([`map_ph1`], [`phph1`], [`map_mc`](super::map_mc)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MapQueueResult {
    /// Utilisation per server `lambda E[S] / c`, mean number `L` from the stationary
    /// distribution, mean response `R = L / lambda` and wait `Wq = R - E[S]` by Little,
    /// `Lq = lambda Wq`.
    pub metrics: StationMetrics,
    /// Probability that the station is empty (time average).
    pub p_empty: f64,
    /// Probability that an arrival finds every server busy,
    /// `sum_{n >= c} pi_n D1 1 / lambda` (arrival-epoch average; the arrival stream is not
    /// Poisson, so this differs from the time average).
    pub p_wait: f64,
    /// Iterations of the logarithmic reduction.
    pub iterations: u32,
}

impl MapQueueResult {
    /// From a solved QBD whose level is the number of jobs and whose repeating levels start
    /// at `servers` (phases: the MAP phase outermost, `inner` phases inside it).
    pub(super) fn from_levels(
        solution: &QbdSolution,
        map: &Map,
        inner: usize,
        mean_service: f64,
        servers: u32,
    ) -> Self {
        let lambda = map.lambda();
        let number = solution.mean_level();
        let response = number / lambda;
        let arrivals = Dense::from_rows(map.d1()).row_sums();
        let tail = solution.tail_phases();
        let tail_arrivals: f64 = tail
            .chunks(inner)
            .zip(&arrivals)
            .map(|(p, a)| p.iter().sum::<f64>() * a)
            .sum();
        let metrics = StationMetrics {
            utilisation: Some(lambda * mean_service / f64::from(servers)),
            throughput: lambda,
            mean_response: response,
            mean_wait: (response - mean_service).max(0.0),
            mean_number: number,
            mean_queue: (lambda * (response - mean_service)).max(0.0),
        };
        Self {
            metrics,
            p_empty: solution.level_probability(0),
            p_wait: (tail_arrivals / lambda).clamp(0.0, 1.0),
            iterations: solution.iterations(),
        }
    }
}

/// MAP/PH/1 FCFS, exact: arrivals by `map`, service times `service`, one server.
///
/// The number of jobs and the phases (arrival phase, service phase) form a QBD (Neuts 1981,
/// 3.2; Latouche and Ramaswami 1999, 3.5): level 0 has the MAP's phases (`D0` local,
/// `D1 (x) beta` up), levels `n >= 1` have `m_a m_s` phases with `A0 = D1 (x) I`,
/// `A1 = D0 (+) S = D0 (x) I + I (x) S`, `A2 = I (x) s beta`, level 1 to 0 by `I (x) s`;
/// solved by [`qbd`]. `L = sum n pi_n 1`, `R = L / lambda`, `Wq = R - E[S]` (Little),
/// utilisation `lambda E[S]` (`= 1 - P(empty)`).
///
/// The FCFS waiting-time law is [`map_ph1_wait`](super::map_ph1_wait).
///
/// Errors: `Unstable` for `lambda E[S] >= 1`; as [`qbd`] (`TooCostly` when
/// `(m_a m_s)^3` is large: some 45 phases per level at the default budget).
pub fn map_ph1(map: &Map, service: &Ph) -> Result<MapQueueResult> {
    let lambda = map.lambda();
    let mean_service = service.mean();
    check::stable("MAP/PH/1 station", lambda * mean_service)?;
    let solution = qbd(&model(map, service))?;
    Ok(MapQueueResult::from_levels(
        &solution,
        map,
        service.phases(),
        mean_service,
        1,
    ))
}

/// The QBD of MAP/PH/1: level 0 the MAP's phases, levels `n >= 1` (MAP phase, service phase).
pub(super) fn model(map: &Map, service: &Ph) -> Qbd {
    let (ma, ms) = (map.phases(), service.phases());
    let d0 = Dense::from_rows(map.d0());
    let d1 = Dense::from_rows(map.d1());
    let s = service.t_dense();
    let exit = Dense {
        rows: ms,
        cols: 1,
        data: service.exit_rates(),
    };
    let beta = Dense {
        rows: 1,
        cols: ms,
        data: service.alpha().to_vec(),
    };
    let ia = Dense::identity(ma);
    let is = Dense::identity(ms);
    Qbd {
        boundary: vec![QbdLevel {
            local: d0.to_rows(),
            up: d1.kron(&beta).to_rows(),
            down: Vec::new(),
        }],
        entry_down: ia.kron(&exit).to_rows(),
        a0: d1.kron(&is).to_rows(),
        a1: d0.kron(&is).add(&ia.kron(&s)).to_rows(),
        a2: ia.kron(&exit.mul(&beta)).to_rows(),
    }
}

/// PH/PH/1 FCFS, exact: renewal arrivals with phase-type inter-arrival times `arrivals`,
/// phase-type service `service`; [`map_ph1`] with [`Map::renewal`].
///
/// Errors: as [`map_ph1`].
pub fn phph1(arrivals: &Ph, service: &Ph) -> Result<MapQueueResult> {
    map_ph1(&Map::renewal(arrivals)?, service)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::error::AnalyticError;
    use crate::analytic::single::{mg1, mm1};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn poisson_exponential_is_mm1() {
        let r = map_ph1(&Map::poisson(0.8).unwrap(), &Ph::exponential(1.0).unwrap()).unwrap();
        let m = mm1(0.8, 1.0).unwrap();
        assert!(close(r.metrics.mean_number, m.mean_number, 1e-12));
        assert!(close(r.metrics.mean_response, m.mean_response, 1e-12));
        assert!(close(r.metrics.mean_wait, m.mean_wait, 1e-12));
        assert!(close(r.p_empty, 0.2, 1e-12));
        assert!(close(r.p_wait, 0.8, 1e-12));
    }

    #[test]
    fn poisson_erlang_is_pollaczek_khinchine() {
        for (k, lambda) in [(2, 0.5), (4, 0.9), (10, 0.7)] {
            // Erlang-k of mean 1: SCV 1/k
            let service = Ph::erlang(k, k as f64).unwrap();
            let r = map_ph1(&Map::poisson(lambda).unwrap(), &service).unwrap();
            let pk = mg1(lambda, 1.0, 1.0 / k as f64).unwrap();
            assert!(close(r.metrics.mean_wait, pk.mean_wait, 1e-10), "{k}");
            assert!(close(r.metrics.mean_number, pk.mean_number, 1e-10));
            assert!(close(r.p_empty, 1.0 - lambda, 1e-10));
        }
    }

    #[test]
    fn unstable_is_refused() {
        let e = map_ph1(&Map::poisson(1.0).unwrap(), &Ph::erlang(2, 2.0).unwrap()).unwrap_err();
        assert!(matches!(e, AnalyticError::Unstable { .. }));
        let mmpp = Map::mmpp2([3.0, 0.1], [0.5, 0.5]).unwrap(); // rate 1.55
        assert!(map_ph1(&mmpp, &Ph::exponential(1.5).unwrap()).is_err());
    }
}
