//! Inputs and outputs of the multiclass closed-network solvers.

use serde::Serialize;

use super::check;
use super::closed::Center;
use super::error::{AnalyticError, Result};
use super::network::CenterKind;

/// A checked multiclass closed network: center kinds, demands per (class, center) and one
/// population per class. Built only through [`MulticlassModel::new`], so the solvers never see
/// invalid numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MulticlassModel {
    kinds: Vec<CenterKind>,
    demands: Vec<Vec<f64>>,
    populations: Vec<u32>,
}

impl MulticlassModel {
    /// Checks and builds the model. `demands[r][k]` is class `r`'s demand (visits times mean
    /// service time) at center `k`; `populations[r] >= 1`.
    ///
    /// Centers may be `Delay`, `Queue`, `ProcessorSharing` or `MultiServer(1)`. Whether FCFS
    /// centers serve all classes with the same mean cannot be seen from demands: check it with
    /// [`check_class_independent_service`](super::check_class_independent_service).
    ///
    /// Errors: `NotApplicable` for no centers, no classes, or a `MultiServer(c >= 2)` center;
    /// `DimensionMismatch` for ragged arrays; `InvalidParameter` for a zero population, a
    /// negative or non-finite demand, or a class with zero total demand.
    pub fn new(
        kinds: Vec<CenterKind>,
        demands: Vec<Vec<f64>>,
        populations: Vec<u32>,
    ) -> Result<Self> {
        if kinds.is_empty() || populations.is_empty() {
            return Err(AnalyticError::NotApplicable(
                "a multiclass network needs at least one center and one class".into(),
            ));
        }
        for (k, kind) in kinds.iter().enumerate() {
            let servers = kind.validate(k)?.servers().unwrap_or(1);
            if servers > 1 {
                return Err(AnalyticError::NotApplicable(format!(
                    "center {k} has {servers} servers; the multiclass solvers handle delay \
                     and single-server centers only"
                )));
            }
        }
        check::same_len("demands (classes)", populations.len(), demands.len())?;
        for (r, row) in demands.iter().enumerate() {
            check::at_least(&format!("population[{r}]"), populations[r], 1)?;
            check::same_len(&format!("demands[{r}]"), kinds.len(), row.len())?;
            let mut total = 0.0;
            for (k, &d) in row.iter().enumerate() {
                total += check::non_negative(&format!("demands[{r}][{k}]"), d)?;
            }
            check::positive(&format!("total demand of class {r}"), total)?;
        }
        Ok(Self {
            kinds,
            demands,
            populations,
        })
    }

    /// A one-class model from single-class centers.
    ///
    /// Errors: as [`MulticlassModel::new`].
    pub fn single_class(centers: &[Center], population: u32) -> Result<Self> {
        Self::new(
            centers.iter().map(|c| c.kind).collect(),
            vec![centers.iter().map(|c| c.demand).collect()],
            vec![population],
        )
    }

    /// Center kinds.
    pub fn kinds(&self) -> &[CenterKind] {
        &self.kinds
    }

    /// Demands, `[class][center]`.
    pub fn demands(&self) -> &[Vec<f64>] {
        &self.demands
    }

    /// Populations per class.
    pub fn populations(&self) -> &[u32] {
        &self.populations
    }

    /// Writes class `r`'s residence times into `out`: `R_rk = D_rk` at delays and
    /// `D_rk (1 + A_k)` at queues, where `arrival_queue(k)` is the mean number a class-`r`
    /// arrival finds at center `k`.
    pub(crate) fn fill_residence(
        &self,
        r: usize,
        arrival_queue: impl Fn(usize) -> f64,
        out: &mut [f64],
    ) {
        for (k, (o, (&d, kind))) in out
            .iter_mut()
            .zip(self.demands[r].iter().zip(&self.kinds))
            .enumerate()
        {
            *o = match kind {
                CenterKind::Delay => d,
                _ => d * (1.0 + arrival_queue(k)),
            };
        }
    }

    /// Residence times of every class, `[class][center]`, as [`Self::fill_residence`].
    pub(crate) fn residence(&self, arrival_queue: impl Fn(usize, usize) -> f64) -> Vec<Vec<f64>> {
        (0..self.populations.len())
            .map(|r| {
                let mut row = vec![0.0; self.kinds.len()];
                self.fill_residence(r, |k| arrival_queue(r, k), &mut row);
                row
            })
            .collect()
    }
}

/// Solution of a multiclass closed network at its full population.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MulticlassSolution {
    /// Throughput per class, `X_r = N_r / sum_k R_rk`.
    pub throughput: Vec<f64>,
    /// Cycle time per class, `sum_k R_rk` (delay centers included).
    pub response_time: Vec<f64>,
    /// Residence time per cycle, `[class][center]`.
    pub residence: Vec<Vec<f64>>,
    /// Mean number of class-`r` jobs at each center, `[class][center]`, `X_r R_rk`.
    pub queue_length: Vec<Vec<f64>>,
    /// Utilisation per center, `sum_r X_r D_rk`; `None` for delay centers.
    pub utilisation: Vec<Option<f64>>,
}

impl MulticlassSolution {
    /// Completes a solution from the residence times at the full population (Little's law).
    pub(crate) fn from_residence(model: &MulticlassModel, residence: Vec<Vec<f64>>) -> Self {
        let response_time: Vec<f64> = residence.iter().map(|row| row.iter().sum()).collect();
        let throughput: Vec<f64> = model
            .populations
            .iter()
            .zip(&response_time)
            .map(|(&n, r)| f64::from(n) / r)
            .collect();
        let queue_length = residence
            .iter()
            .zip(&throughput)
            .map(|(row, x)| row.iter().map(|r| x * r).collect())
            .collect();
        let utilisation = model
            .kinds
            .iter()
            .enumerate()
            .map(|(k, kind)| {
                kind.servers().map(|_| {
                    throughput
                        .iter()
                        .zip(&model.demands)
                        .map(|(x, row)| x * row[k])
                        .sum()
                })
            })
            .collect();
        Self {
            throughput,
            response_time,
            residence,
            queue_length,
            utilisation,
        }
    }

    /// Mean number of jobs of all classes at center `k` (`None` if `k` is out of range).
    pub fn total_queue_length(&self, k: usize) -> Option<f64> {
        self.queue_length.iter().map(|row| row.get(k)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_checks() {
        let q = CenterKind::Queue;
        assert!(MulticlassModel::new(vec![q], vec![vec![1.0]], vec![1]).is_ok());
        assert!(MulticlassModel::new(vec![q], vec![vec![1.0]], vec![0]).is_err());
        assert!(MulticlassModel::new(vec![q], vec![vec![1.0, 2.0]], vec![1]).is_err());
        assert!(MulticlassModel::new(vec![q], vec![vec![0.0]], vec![1]).is_err());
        assert!(MulticlassModel::new(vec![q], vec![vec![1.0]], vec![1, 1]).is_err());
        assert!(MulticlassModel::new(vec![], vec![], vec![]).is_err());
        let ms = MulticlassModel::new(vec![CenterKind::MultiServer(2)], vec![vec![1.0]], vec![1]);
        assert!(matches!(ms, Err(AnalyticError::NotApplicable(_))));
    }

    #[test]
    fn totals_and_out_of_range() {
        let m = MulticlassModel::new(
            vec![CenterKind::Queue, CenterKind::Delay],
            vec![vec![1.0, 1.0], vec![2.0, 1.0]],
            vec![1, 1],
        )
        .unwrap();
        let s = MulticlassSolution::from_residence(&m, m.residence(|_, _| 0.0));
        assert_eq!(s.throughput, vec![0.5, 1.0 / 3.0]);
        assert_eq!(s.total_queue_length(0), Some(0.5 + 2.0 / 3.0));
        assert_eq!(s.total_queue_length(2), None);
        assert_eq!(s.utilisation[1], None);
    }
}
