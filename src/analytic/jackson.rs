//! Open product-form (Jackson / BCMP) multiclass networks.

use serde::{Deserialize, Serialize};

use super::check;
use super::error::{AnalyticError, Result};
use super::network::{CenterKind, check_class_independent_service};
use super::single;
use crate::linalg;

/// Largest amount by which a routing row may sum above 1 (rounding in the input).
const ROW_SUM_SLACK: f64 = 1e-9;

/// One open class: Poisson external arrivals, visit ratios and mean service times per station.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenClass {
    /// External arrival rate `lambda_r >= 0`.
    pub arrival_rate: f64,
    /// Mean visits per job to each station, `v_rk >= 0` (see [`solve_traffic`]).
    pub visits: Vec<f64>,
    /// Mean service time per visit at each station, `s_rk >= 0`.
    pub service: Vec<f64>,
}

/// Steady-state means of an open product-form network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JacksonSolution {
    /// Throughput per class (its external arrival rate).
    pub throughput: Vec<f64>,
    /// End-to-end response time per class, `sum_k R_rk`.
    pub response_time: Vec<f64>,
    /// Residence time per job, `[class][station]` (all visits added).
    pub residence: Vec<Vec<f64>>,
    /// Total arrival rate at each station, `sum_r lambda_r v_rk`.
    pub arrival_rate: Vec<f64>,
    /// Utilisation per server at each station; `None` for delays.
    pub utilisation: Vec<Option<f64>>,
    /// Mean number of jobs (all classes) at each station.
    pub mean_number: Vec<f64>,
}

/// Per-station result; class `r` resides `v_rk * (s_rk * stretch + extra)` there.
struct StationResult {
    stretch: f64,
    extra: f64,
    utilisation: Option<f64>,
    mean_number: f64,
}

/// Station `k` of `kind` with total arrival rate `lambda`, offered load `load` and (for FCFS
/// multi-server stations) the common mean service time `mean`.
fn station(k: usize, kind: CenterKind, lambda: f64, load: f64, mean: f64) -> Result<StationResult> {
    let what = format!("station {k}");
    Ok(match kind.servers() {
        None => StationResult {
            stretch: 1.0,
            extra: 0.0,
            utilisation: None,
            mean_number: load,
        },
        Some(1) => {
            let rho = check::stable(&what, load)?;
            StationResult {
                stretch: 1.0 / (1.0 - rho),
                extra: 0.0,
                utilisation: Some(rho),
                mean_number: rho / (1.0 - rho),
            }
        }
        Some(c) => {
            let rho = check::stable(&what, load / f64::from(c))?;
            let (extra, mean_number) = if load > 0.0 {
                let m = single::mmc(lambda, mean, c)?;
                (m.mean_wait, m.mean_number)
            } else {
                (0.0, 0.0)
            };
            StationResult {
                stretch: 1.0,
                extra,
                utilisation: Some(rho),
                mean_number,
            }
        }
    })
}

/// Solves an open multiclass product-form network station by station (Jackson, "Jobshop-like
/// queueing systems", Mgmt. Sci. 1963; Baskett, Chandy, Muntz and Palacios, JACM 1975;
/// Lazowska et al., *QSP* ch. 6.3 and 7.3).
///
/// With `lambda_k = sum_r lambda_r v_rk` and offered load `a_k = sum_r lambda_r v_rk s_rk`:
/// - `Delay`: `R_rk = v_rk s_rk`, `L_k = a_k`;
/// - `Queue` (FCFS, class-independent mean) and `ProcessorSharing`: `rho_k = a_k`,
///   `R_rk = v_rk s_rk / (1 - rho_k)`, `L_k = rho_k / (1 - rho_k)`;
/// - `MultiServer(c)` (FCFS, class-independent mean `s_k`): an M/M/c queue at the aggregate rate,
///   `R_rk = v_rk (s_k + Wq_k)` with `Wq_k` from Erlang C ([`mmc`](super::mmc)),
///   `L_k = lambda_k (s_k + Wq_k)`.
///
/// End-to-end response time `R_r = sum_k R_rk`.
///
/// Errors: `Unstable` naming the station if `rho_k >= 1`; `NotApplicable` if an FCFS station
/// serves visiting classes with different means (not product form) or there are no classes;
/// `DimensionMismatch` / `InvalidParameter` for malformed input.
pub fn jackson(kinds: &[CenterKind], classes: &[OpenClass]) -> Result<JacksonSolution> {
    if classes.is_empty() {
        return Err(AnalyticError::NotApplicable(
            "an open network needs a class".into(),
        ));
    }
    for (k, kind) in kinds.iter().enumerate() {
        kind.validate(k)?;
    }
    for (r, class) in classes.iter().enumerate() {
        check::non_negative(&format!("arrival_rate[{r}]"), class.arrival_rate)?;
        check::same_len(&format!("visits[{r}]"), kinds.len(), class.visits.len())?;
        check::same_len(&format!("service[{r}]"), kinds.len(), class.service.len())?;
        for (k, (&v, &s)) in class.visits.iter().zip(&class.service).enumerate() {
            check::non_negative(&format!("visits[{r}][{k}]"), v)?;
            check::non_negative(&format!("service[{r}][{k}]"), s)?;
        }
    }
    let service: Vec<Vec<f64>> = classes.iter().map(|c| c.service.clone()).collect();
    let visits: Vec<Vec<f64>> = classes.iter().map(|c| c.visits.clone()).collect();
    check_class_independent_service(kinds, &service, &visits)?;

    let mut stations = Vec::with_capacity(kinds.len());
    for (k, &kind) in kinds.iter().enumerate() {
        let mut lambda = 0.0;
        let mut load = 0.0;
        let mut mean = 0.0;
        for c in classes {
            lambda += c.arrival_rate * c.visits[k];
            load += c.arrival_rate * c.visits[k] * c.service[k];
            if c.visits[k] > 0.0 {
                mean = c.service[k];
            }
        }
        stations.push((lambda, station(k, kind, lambda, load, mean)?));
    }
    let residence: Vec<Vec<f64>> = classes
        .iter()
        .map(|c| {
            stations
                .iter()
                .enumerate()
                .map(|(k, (_, s))| c.visits[k] * (c.service[k] * s.stretch + s.extra))
                .collect()
        })
        .collect();
    Ok(JacksonSolution {
        throughput: classes.iter().map(|c| c.arrival_rate).collect(),
        response_time: residence.iter().map(|row| row.iter().sum()).collect(),
        residence,
        arrival_rate: stations.iter().map(|(l, _)| *l).collect(),
        utilisation: stations.iter().map(|(_, s)| s.utilisation).collect(),
        mean_number: stations.iter().map(|(_, s)| s.mean_number).collect(),
    })
}

/// Solves the traffic equations of an open network, `lambda_j = gamma_j + sum_i lambda_i P_ij`,
/// i.e. `(I - P^T) lambda = gamma`, by Gaussian elimination with partial pivoting.
///
/// `routing[i][j]` is the probability of going from station `i` to `j`; the remainder
/// `1 - sum_j P_ij` leaves the network. `external[j]` is the external arrival rate at `j`.
/// Returns the total arrival rate at each station; divide by `sum_j gamma_j` for visit ratios
/// per job.
///
/// Errors: `DimensionMismatch` if `routing` is not square of the size of `external`;
/// `InvalidParameter` for negative or non-finite entries or a row summing above 1;
/// `NotApplicable` if `I - P^T` is singular (some stations form a loop jobs never leave).
pub fn solve_traffic(routing: &[Vec<f64>], external: &[f64]) -> Result<Vec<f64>> {
    let n = external.len();
    check::same_len("routing (rows)", n, routing.len())?;
    let mut a = vec![0.0; n * n];
    for (i, row) in routing.iter().enumerate() {
        check::same_len(&format!("routing[{i}]"), n, row.len())?;
        let mut sum = 0.0;
        for (j, &p) in row.iter().enumerate() {
            sum += check::non_negative(&format!("routing[{i}][{j}]"), p)?;
            a[j * n + i] = -p;
        }
        if sum > 1.0 + ROW_SUM_SLACK {
            return Err(AnalyticError::InvalidParameter {
                what: format!("sum of routing[{i}]"),
                value: sum,
            });
        }
    }
    for (j, &g) in external.iter().enumerate() {
        check::non_negative(&format!("external[{j}]"), g)?;
        a[j * n + j] += 1.0;
    }
    let singular = || {
        AnalyticError::NotApplicable(
            "traffic equations are singular: some stations form a loop that jobs never leave"
                .into(),
        )
    };
    let x = linalg::solve(a, external.to_vec()).ok_or_else(singular)?;
    // A substochastic P with an exit from every loop gives lambda >= 0; clamp rounding noise.
    let scale = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if x.iter().any(|&v| !v.is_finite() || v < -1e-9 * scale) {
        return Err(singular());
    }
    Ok(x.into_iter().map(|v| v.max(0.0)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::tests::close;

    fn class(rate: f64, visits: &[f64], service: &[f64]) -> OpenClass {
        OpenClass {
            arrival_rate: rate,
            visits: visits.to_vec(),
            service: service.to_vec(),
        }
    }

    #[test]
    fn tandem_of_two_mm1() {
        // lambda 0.5; s = 1 (rho 0.5) then 0.8 (rho 0.4): R = 2 + 0.8/0.6 = 10/3.
        let kinds = [CenterKind::Queue, CenterKind::Queue];
        let s = jackson(&kinds, &[class(0.5, &[1.0, 1.0], &[1.0, 0.8])]).unwrap();
        assert!(close(s.response_time[0], 10.0 / 3.0, 1e-12));
        assert!(close(s.residence[0][0], 2.0, 1e-12));
        assert!(close(s.mean_number[1], 0.4 / 0.6, 1e-12));
        assert_eq!(s.utilisation[0], Some(0.5));
        assert!(close(
            s.response_time[0] * 0.5,
            s.mean_number.iter().sum(),
            1e-12
        ));
    }

    #[test]
    fn ps_with_class_dependent_means_and_fcfs_refusal() {
        // PS: rho = 0.2*1 + 0.1*3 = 0.5; R_r = s_r / 0.5.
        let classes = [class(0.2, &[1.0], &[1.0]), class(0.1, &[1.0], &[3.0])];
        let s = jackson(&[CenterKind::ProcessorSharing], &classes).unwrap();
        assert!(close(s.response_time[0], 2.0, 1e-12));
        assert!(close(s.response_time[1], 6.0, 1e-12));
        let err = jackson(&[CenterKind::Queue], &classes).unwrap_err();
        assert!(matches!(err, AnalyticError::NotApplicable(_)));
    }

    #[test]
    fn multiserver_station_is_mmc_and_delay_is_mminf() {
        let kinds = [CenterKind::MultiServer(4), CenterKind::Delay];
        let s = jackson(&kinds, &[class(3.0, &[1.0, 2.0], &[1.0, 0.25])]).unwrap();
        let m = single::mmc(3.0, 1.0, 4).unwrap();
        assert!(close(s.residence[0][0], m.mean_response, 1e-12));
        assert!(close(s.mean_number[0], m.mean_number, 1e-12));
        assert!(close(s.residence[0][1], 0.5, 1e-12));
        assert!(close(s.mean_number[1], 1.5, 1e-12));
        assert_eq!(s.utilisation[1], None);
    }

    #[test]
    fn unstable_station_is_named() {
        let kinds = [CenterKind::Queue, CenterKind::MultiServer(2)];
        let err = jackson(&kinds, &[class(1.0, &[1.0, 1.0], &[0.5, 2.5])]).unwrap_err();
        assert_eq!(
            err,
            AnalyticError::Unstable {
                what: "station 1".into(),
                rho: 1.25
            }
        );
    }

    #[test]
    fn bad_inputs() {
        let k = [CenterKind::Queue];
        assert!(jackson(&k, &[]).is_err());
        assert!(jackson(&k, &[class(-1.0, &[1.0], &[1.0])]).is_err());
        assert!(jackson(&k, &[class(0.1, &[1.0, 1.0], &[1.0])]).is_err());
        assert!(jackson(&k, &[class(0.1, &[1.0], &[f64::NAN])]).is_err());
    }

    #[test]
    fn traffic_with_feedback() {
        // 0 -> 1 always; 1 -> 0 w.p. 0.5, else out; gamma = (1, 0): lambda = (2, 2).
        let p = vec![vec![0.0, 1.0], vec![0.5, 0.0]];
        let x = solve_traffic(&p, &[1.0, 0.0]).unwrap();
        assert!(close(x[0], 2.0, 1e-12) && close(x[1], 2.0, 1e-12));
    }

    #[test]
    fn traffic_errors() {
        let closed_loop = vec![vec![0.0, 1.0], vec![1.0, 0.0]];
        assert!(matches!(
            solve_traffic(&closed_loop, &[1.0, 0.0]),
            Err(AnalyticError::NotApplicable(_))
        ));
        let over = vec![vec![0.6, 0.6], vec![0.0, 0.0]];
        assert!(solve_traffic(&over, &[1.0, 0.0]).is_err());
        assert!(solve_traffic(&[vec![0.0]], &[1.0, 0.0]).is_err());
    }
}
