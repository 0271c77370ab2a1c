//! Exact MVA for mixed networks: open and closed classes together in a product-form network.

use serde::Serialize;

use super::error::{AnalyticError, Result};
use super::multiclass::{MulticlassModel, MulticlassSolution};
use super::mva_multiclass::mva_multiclass;
use super::network::CenterKind;

/// A class of a mixed network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MixedClass {
    /// Jobs arrive from outside at this rate (jobs per time unit) and leave.
    Open {
        /// The arrival rate.
        rate: f64,
    },
    /// This many jobs circulate for ever.
    Closed {
        /// The population, at least 1.
        population: u32,
    },
}

/// Solution of [`mva_mixed`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixedSolution {
    /// Throughput per class: the arrival rate of an open class, `X_r` of a closed one.
    pub throughput: Vec<f64>,
    /// Per class, the sum of its residence times: an open class's response, a closed class's
    /// cycle time.
    pub response_time: Vec<f64>,
    /// Residence time per job (open) or per cycle (closed), `[class][center]`.
    pub residence: Vec<Vec<f64>>,
    /// Mean number of the class's jobs at each center, `[class][center]`.
    pub queue_length: Vec<Vec<f64>>,
    /// Utilisation per center, all classes together; `None` for delay centers.
    pub utilisation: Vec<Option<f64>>,
}

/// Exact MVA for a mixed product-form network (Lazowska, Zahorjan, Graham and Sevcik,
/// *Quantitative System Performance*, 1984, section 7.4.3).
///
/// `demands[r][k]` is class `r`'s demand at center `k` (visits per job or per cycle times the
/// mean service time). The open classes take `U^o_k = sum_open lambda_r D_rk` of each queueing
/// center; the closed classes are solved by exact multiclass MVA with their demands stretched
/// to `D_rk / (1 - U^o_k)`; an open class then resides `D_rk (1 + Q^c_k) / (1 - U^o_k)` at a
/// queueing center (`Q^c_k` the closed jobs there) and `D_rk` at a delay. Exact for
/// product-form networks: one-server FCFS centers with one exponential mean for every class,
/// PS centers, delays.
///
/// Errors: `NotApplicable` for multi-server centers, no open or no closed class, an open load
/// of at least 1 at some center (it is unstable); otherwise as [`mva_multiclass`].
pub fn mva_mixed(
    kinds: &[CenterKind],
    demands: &[Vec<f64>],
    classes: &[MixedClass],
) -> Result<MixedSolution> {
    if let Some(c) = kinds.iter().find_map(|k| match k {
        CenterKind::MultiServer(c) if *c > 1 => Some(*c),
        _ => None,
    }) {
        return Err(AnalyticError::NotApplicable(format!(
            "a center of {c} servers is load dependent: mixed MVA takes one-server centers and delays"
        )));
    }
    let open: Vec<(usize, f64)> = classes
        .iter()
        .enumerate()
        .filter_map(|(r, c)| match c {
            MixedClass::Open { rate } => Some((r, *rate)),
            MixedClass::Closed { .. } => None,
        })
        .collect();
    let closed: Vec<(usize, u32)> = classes
        .iter()
        .enumerate()
        .filter_map(|(r, c)| match c {
            MixedClass::Closed { population } => Some((r, *population)),
            MixedClass::Open { .. } => None,
        })
        .collect();
    if open.is_empty() || closed.is_empty() {
        return Err(AnalyticError::NotApplicable(
            "a mixed network has open and closed classes; use open or closed MVA".into(),
        ));
    }
    for &(r, rate) in &open {
        super::check::positive(&format!("rate of class {r}"), rate)?;
    }
    let queueing = |k: usize| kinds[k] != CenterKind::Delay;
    let open_load: Vec<f64> = (0..kinds.len())
        .map(|k| {
            if queueing(k) {
                open.iter().map(|&(r, rate)| rate * demands[r][k]).sum()
            } else {
                0.0
            }
        })
        .collect();
    if let Some((k, u)) = open_load.iter().enumerate().find(|(_, u)| **u >= 1.0) {
        return Err(AnalyticError::NotApplicable(format!(
            "the open classes load center {k} to {u}: it is unstable"
        )));
    }
    let stretched: Vec<Vec<f64>> = closed
        .iter()
        .map(|&(r, _)| {
            (0..kinds.len())
                .map(|k| demands[r][k] / (1.0 - open_load[k]))
                .collect()
        })
        .collect();
    let model = MulticlassModel::new(
        kinds.to_vec(),
        stretched,
        closed.iter().map(|&(_, n)| n).collect(),
    )?;
    let sol: MulticlassSolution = mva_multiclass(&model)?;
    let m = kinds.len();
    let closed_jobs: Vec<f64> = (0..m)
        .map(|k| sol.queue_length.iter().map(|q| q[k]).sum())
        .collect();
    let mut throughput = vec![0.0; classes.len()];
    let mut response_time = vec![0.0; classes.len()];
    let mut residence = vec![vec![0.0; m]; classes.len()];
    let mut queue_length = vec![vec![0.0; m]; classes.len()];
    for (i, &(r, _)) in closed.iter().enumerate() {
        throughput[r] = sol.throughput[i];
        response_time[r] = sol.response_time[i];
        residence[r].clone_from(&sol.residence[i]);
        queue_length[r].clone_from(&sol.queue_length[i]);
    }
    for &(r, rate) in &open {
        throughput[r] = rate;
        for k in 0..m {
            residence[r][k] = if queueing(k) {
                demands[r][k] * (1.0 + closed_jobs[k]) / (1.0 - open_load[k])
            } else {
                demands[r][k]
            };
            queue_length[r][k] = rate * residence[r][k];
        }
        response_time[r] = residence[r].iter().sum();
    }
    let utilisation = (0..m)
        .map(|k| {
            queueing(k).then(|| {
                (0..classes.len())
                    .map(|r| throughput[r] * demands[r][k])
                    .sum()
            })
        })
        .collect();
    Ok(MixedSolution {
        throughput,
        response_time,
        residence,
        queue_length,
        utilisation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{Center, mva};

    #[test]
    fn with_a_negligible_open_class_it_is_closed_mva() {
        let kinds = [CenterKind::Delay, CenterKind::Queue, CenterKind::Queue];
        let closed = [2.0, 0.4, 0.25];
        let centers: Vec<Center> = kinds
            .iter()
            .zip(closed)
            .map(|(&kind, demand)| Center { kind, demand })
            .collect();
        let exact = mva(&centers, 6).unwrap();
        let full = exact.full();
        let sol = mva_mixed(
            &kinds,
            &[closed.to_vec(), vec![0.0, 1e-12, 1e-12]],
            &[
                MixedClass::Closed { population: 6 },
                MixedClass::Open { rate: 1e-9 },
            ],
        )
        .unwrap();
        assert!((sol.throughput[0] / full.throughput - 1.0).abs() < 1e-9);
        for k in 0..3 {
            assert!((sol.residence[0][k] / full.residence[k] - 1.0).abs() < 1e-9);
        }
    }

    #[test]
    fn one_ps_server_shared_by_an_open_and_a_closed_class() {
        // a closed class of one job alternating between a delay (Z) and the server with an
        // open Poisson stream: with one closed job, Q^c = 0 as it arrives, so it resides
        // D / (1 - U_o) (M/M/1 PS seen by one customer); the open class resides
        // D_o (1 + Q^c) / (1 - U_o) with Q^c = X R the closed job's time fraction there
        let (z, d, dopen, lambda) = (3.0, 1.0, 0.5, 0.8);
        let u = lambda * dopen;
        let sol = mva_mixed(
            &[CenterKind::Delay, CenterKind::ProcessorSharing],
            &[vec![z, d], vec![0.0, dopen]],
            &[
                MixedClass::Closed { population: 1 },
                MixedClass::Open { rate: lambda },
            ],
        )
        .unwrap();
        let r = d / (1.0 - u);
        let x = 1.0 / (z + r);
        assert!((sol.residence[0][1] - r).abs() < 1e-12);
        assert!((sol.throughput[0] - x).abs() < 1e-12);
        let q = x * r;
        assert!((sol.residence[1][1] - dopen * (1.0 + q) / (1.0 - u)).abs() < 1e-12);
        assert!((sol.utilisation[1].unwrap() - (u + x * d)).abs() < 1e-12);
        assert_eq!(sol.utilisation[0], None);
    }

    #[test]
    fn an_open_load_of_one_is_refused() {
        let e = mva_mixed(
            &[CenterKind::Queue],
            &[vec![1.0], vec![1.0]],
            &[
                MixedClass::Closed { population: 2 },
                MixedClass::Open { rate: 1.0 },
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("unstable"), "{e}");
    }
}
