//! Schweitzer-Bard approximate MVA for multiclass (and single-class) closed networks.

use serde::{Deserialize, Serialize};

use super::check;
use super::cost::{WORK_BUDGET, allowance, scaled};
use super::error::{AnalyticError, Result};
use super::multiclass::{MulticlassModel, MulticlassSolution};

/// Stopping rule of the Schweitzer-Bard fixed-point iteration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SchweitzerOptions {
    /// Stop when `max_{r,k} |Q_rk(new) - Q_rk(old)| / N_r` falls below this (default `1e-10`).
    pub tolerance: f64,
    /// Give up with `NotConverged` after this many sweeps (default 100 000).
    pub max_iterations: u32,
}

impl Default for SchweitzerOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-10,
            max_iterations: 100_000,
        }
    }
}

/// Schweitzer-Bard approximate MVA (Schweitzer 1979; Bard 1979; Lazowska et al., *QSP* 7.4).
///
/// Replaces the exact arrival-instant queue `Q_k(N - e_r)` by
/// `Q_k(N) - Q_rk(N) / N_r` (one class-`r` job removed, in proportion), giving the fixed point
/// `R_rk = D_rk (1 + Q_k - Q_rk / N_r)` at queues, `R_rk = D_rk` at delays,
/// `X_r = N_r / sum_k R_rk`, `Q_rk = X_r R_rk`, iterated from `Q_rk = N_r D_rk / sum_k D_rk`.
/// An approximation: typically within a few percent of exact MVA, exact when every
/// `N_r = 1` and there is one class (the arrival then finds its own class absent). Cost per
/// sweep `O(R K)`, independent of the population.
///
/// Errors: `InvalidParameter` for a non-positive tolerance or `max_iterations == 0`;
/// `NotConverged` if the cap is reached; `TooCostly` if the sweeps up to the cap would cost
/// more than [`WORK_BUDGET`] and those it allows (about `WORK_BUDGET / (4 R K)`) did not
/// converge: the work of a sweep is known, the number of sweeps is not.
pub fn schweitzer(
    model: &MulticlassModel,
    options: SchweitzerOptions,
) -> Result<MulticlassSolution> {
    check::positive("tolerance", options.tolerance)?;
    check::at_least("max_iterations", options.max_iterations, 1)?;
    let pops: Vec<f64> = model.populations().iter().map(|&n| f64::from(n)).collect();
    let mut queue: Vec<Vec<f64>> = model
        .demands()
        .iter()
        .zip(&pops)
        .map(|(row, n)| {
            let total: f64 = row.iter().sum();
            row.iter().map(|d| n * d / total).collect()
        })
        .collect();
    // a sweep's work: the totals, the residences (a vector per class) and the update; the
    // sweeps a budget allows, where fewer than the cap
    let (classes, centers) = (pops.len(), model.kinds().len());
    let per_sweep = (4 * classes * centers + 30 * classes + 30) as f64;
    let affordable = (scaled(WORK_BUDGET) / per_sweep)
        .floor()
        .min(f64::from(u32::MAX)) as u32;
    let sweeps = options.max_iterations.min(affordable.max(1));
    let mut change = f64::INFINITY;
    for _ in 0..sweeps {
        let totals: Vec<f64> = (0..model.kinds().len())
            .map(|k| queue.iter().map(|row| row[k]).sum())
            .collect();
        let residence = model.residence(|r, k| totals[k] - queue[r][k] / pops[r]);
        change = 0.0;
        for ((q_row, r_row), n) in queue.iter_mut().zip(&residence).zip(&pops) {
            let x = n / r_row.iter().sum::<f64>();
            for (q, r) in q_row.iter_mut().zip(r_row) {
                let new = x * r;
                change = f64::max(change, (new - *q).abs() / n);
                *q = new;
            }
        }
        if change < options.tolerance {
            return Ok(MulticlassSolution::from_residence(model, residence));
        }
    }
    if sweeps < options.max_iterations {
        return Err(AnalyticError::TooCostly {
            what: format!(
                "Schweitzer-Bard MVA had not converged after {sweeps} sweeps of {classes} classes at {centers} centers (last change {change:e}), and {} sweeps may follow",
                options.max_iterations - sweeps
            ),
            work: per_sweep * f64::from(options.max_iterations),
            budget: scaled(WORK_BUDGET),
            allow: allowance(per_sweep * f64::from(options.max_iterations), WORK_BUDGET),
        });
    }
    Err(AnalyticError::NotConverged {
        method: "Schweitzer-Bard MVA".into(),
        iterations: options.max_iterations,
        residual: change,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::mva;
    use crate::analytic::mva::tests::{close, hand_network};
    use crate::analytic::mva_multiclass::mva_multiclass;
    use crate::analytic::network::CenterKind;

    #[test]
    fn exact_at_population_one() {
        let net = hand_network();
        let m = MulticlassModel::single_class(&net, 1).unwrap();
        let s = schweitzer(&m, SchweitzerOptions::default()).unwrap();
        assert!(close(s.throughput[0], 2.0 / 7.0, 1e-9));
    }

    #[test]
    fn close_to_exact_single_class() {
        let net = hand_network();
        for n in [2, 3, 5, 10, 50] {
            let m = MulticlassModel::single_class(&net, n).unwrap();
            let approx = schweitzer(&m, SchweitzerOptions::default()).unwrap();
            let exact = mva(&net, n).unwrap();
            let x = exact.full().throughput;
            // Largest error is at the knee (n = 5 here: -5.4%, checked independently).
            assert!(close(approx.throughput[0], x, 0.06), "n={n}");
            assert!(approx.throughput[0] <= x, "pessimistic here, n={n}");
            // Little's law holds in the approximation too.
            let total: f64 = approx.queue_length[0].iter().sum();
            assert!(close(total, f64::from(n), 1e-9));
        }
    }

    #[test]
    fn close_to_exact_multiclass() {
        let m = MulticlassModel::new(
            vec![CenterKind::Queue, CenterKind::Queue, CenterKind::Delay],
            vec![vec![1.0, 0.2, 3.0], vec![0.3, 1.5, 1.0]],
            vec![5, 4],
        )
        .unwrap();
        let approx = schweitzer(&m, SchweitzerOptions::default()).unwrap();
        let exact = mva_multiclass(&m).unwrap();
        // Exact X = (0.71974, 0.54834), Schweitzer (0.68006, 0.51290), both checked with an
        // independent script: -5.5% and -6.5%, typical of Bard-Schweitzer near the knee.
        for r in 0..2 {
            let (a, e) = (approx.throughput[r], exact.throughput[r]);
            assert!(close(a, e, 0.07), "class {r}: {a} vs exact {e}");
            assert!(close(approx.response_time[r], exact.response_time[r], 0.07));
        }
        assert!(close(approx.throughput[0], 0.680_057_406_8, 1e-8));
    }

    #[test]
    fn non_convergence_and_bad_options_are_errors() {
        let m = MulticlassModel::single_class(&hand_network(), 20).unwrap();
        let tight = SchweitzerOptions {
            tolerance: 1e-15,
            max_iterations: 2,
        };
        assert!(matches!(
            schweitzer(&m, tight),
            Err(AnalyticError::NotConverged { iterations: 2, .. })
        ));
        let zero = SchweitzerOptions {
            tolerance: 0.0,
            max_iterations: 10,
        };
        assert!(schweitzer(&m, zero).is_err());
    }
}
