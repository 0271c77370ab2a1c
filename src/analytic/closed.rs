//! Inputs and outputs of the single-class closed-network solvers.

use serde::{Deserialize, Serialize};

use super::check;
use super::error::{AnalyticError, Result};
use super::network::CenterKind;

/// One service center of a single-class closed network.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Center {
    /// Kind of center.
    pub kind: CenterKind,
    /// Service demand `D = V * E[S]`: visit ratio (visits per cycle of the reference station)
    /// times mean service time per visit. Throughputs come out in cycles per time unit.
    pub demand: f64,
}

/// Solution of a single-class closed network at one population `n`.
///
/// Vectors are indexed like the centers passed in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClosedLevel {
    /// Population `n`.
    pub population: u32,
    /// System throughput `X(n)` in cycles per time unit.
    pub throughput: f64,
    /// Cycle time `R(n) = sum_k R_k(n) = n / X(n)`, delay centers included (subtract the
    /// residence of a think-time delay to get the response time seen by terminals).
    pub response_time: f64,
    /// Residence time per cycle at each center, `R_k(n)` (all visits added).
    pub residence: Vec<f64>,
    /// Mean number of jobs at each center, `Q_k(n) = X(n) R_k(n)`.
    pub queue_length: Vec<f64>,
    /// Utilisation per server, `X(n) D_k / c_k`; `None` for delay centers.
    pub utilisation: Vec<Option<f64>>,
}

/// Solution of a single-class closed network for every population `1..=N`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClosedSolution {
    levels: Vec<ClosedLevel>,
}

impl ClosedSolution {
    /// Wraps the levels `1..=N` (never empty: solvers require `N >= 1`).
    pub(crate) fn new(levels: Vec<ClosedLevel>) -> Self {
        debug_assert!(!levels.is_empty());
        Self { levels }
    }

    /// All levels, population `1` first.
    pub fn levels(&self) -> &[ClosedLevel] {
        &self.levels
    }

    /// The level for population `n`, if `1 <= n <= N`.
    pub fn at(&self, n: u32) -> Option<&ClosedLevel> {
        let index = usize::try_from(n).ok()?.checked_sub(1)?;
        self.levels.get(index)
    }

    /// The level for the full population `N`.
    pub fn full(&self) -> &ClosedLevel {
        &self.levels[self.levels.len() - 1]
    }
}

/// Checks a single-class closed network: at least one center, valid kinds, demands finite and
/// `>= 0` with a positive total, population `>= 1`. Returns the total demand.
pub(crate) fn validate(centers: &[Center], population: u32) -> Result<f64> {
    check::at_least("population", population, 1)?;
    if centers.is_empty() {
        return Err(AnalyticError::NotApplicable(
            "a closed network needs at least one center".into(),
        ));
    }
    let mut total = 0.0;
    for (k, c) in centers.iter().enumerate() {
        c.kind.validate(k)?;
        total += check::non_negative(&format!("demand[{k}]"), c.demand)?;
    }
    check::positive("total demand", total)
}

/// Utilisation per server of a center of `kind` and demand `demand` at throughput `x`.
pub(crate) fn utilisation(kind: CenterKind, demand: f64, x: f64) -> Option<f64> {
    kind.servers().map(|c| x * demand / f64::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_rejects_bad_networks() {
        let q = |d| Center {
            kind: CenterKind::Queue,
            demand: d,
        };
        assert!(validate(&[q(1.0)], 0).is_err());
        assert!(validate(&[], 3).is_err());
        assert!(validate(&[q(0.0)], 3).is_err());
        assert!(validate(&[q(-1.0)], 3).is_err());
        assert!(validate(&[q(f64::NAN)], 3).is_err());
        assert_eq!(validate(&[q(1.0), q(0.5)], 3), Ok(1.5));
    }

    #[test]
    fn at_indexes_by_population() {
        let level = |n| ClosedLevel {
            population: n,
            throughput: 1.0,
            response_time: 1.0,
            residence: vec![],
            queue_length: vec![],
            utilisation: vec![],
        };
        let s = ClosedSolution::new(vec![level(1), level(2)]);
        assert_eq!(s.at(0), None);
        assert_eq!(s.at(2).map(|l| l.population), Some(2));
        assert_eq!(s.at(3), None);
        assert_eq!(s.full().population, 2);
    }
}
