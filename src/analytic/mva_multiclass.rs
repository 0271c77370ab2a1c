//! Exact multiclass MVA over the population lattice.

use super::cost::within_budget;
use super::error::{AnalyticError, Result};
use super::multiclass::{MulticlassModel, MulticlassSolution};

/// Largest population lattice (number of population vectors) the exact algorithm accepts.
pub const MAX_LATTICE_POINTS: usize = 10_000_000;

/// Exact multiclass MVA (Reiser and Lavenberg, JACM 27(2), 1980; Lazowska et al., *QSP* 7.2).
///
/// Over every population vector `n <= N` in the lattice, for each class `r` with `n_r >= 1`:
/// `R_rk(n) = D_rk` at a delay, `R_rk(n) = D_rk (1 + Q_k(n - e_r))` at a queue (FCFS with a
/// class-independent mean, or PS), `X_r(n) = n_r / sum_k R_rk(n)`,
/// `Q_k(n) = sum_r X_r(n) R_rk(n)`. Exact for product-form networks.
///
/// Only the total queue per center is kept, in a ring buffer one lattice "slab" long (the class
/// with the largest population is iterated slowest), so memory is `K prod_{r != last} (N_r + 1)`
/// and time `O(R K prod_r (N_r + 1))`.
///
/// Errors: `NotApplicable` if the lattice has more than [`MAX_LATTICE_POINTS`] points (use
/// [`schweitzer`](super::schweitzer)); `TooCostly` when the work, about `4 R K` operations per
/// lattice point, is over [`WORK_BUDGET`](super::WORK_BUDGET).
pub fn mva_multiclass(model: &MulticlassModel) -> Result<MulticlassSolution> {
    let pops = model.populations();
    let k_count = model.kinds().len();
    // Classes in iteration order, the largest population last (slowest digit).
    let mut order: Vec<usize> = (0..pops.len()).collect();
    order.sort_by_key(|&r| pops[r]);
    let dims: Vec<usize> = order.iter().map(|&r| pops[r] as usize + 1).collect();
    let points = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&p| p <= MAX_LATTICE_POINTS)
        .ok_or_else(|| {
            AnalyticError::NotApplicable(format!(
                "population lattice too large (more than {MAX_LATTICE_POINTS} points); \
                 use Schweitzer-Bard"
            ))
        })?;
    within_budget(4.0 * (pops.len() * k_count) as f64 * points as f64, || {
        format!(
            "exact multiclass MVA over a lattice of {points} population vectors, {} classes at {k_count} centers (Schweitzer-Bard approximates it)",
            pops.len()
        )
    })?;
    let strides: Vec<usize> = dims
        .iter()
        .scan(1usize, |acc, &d| {
            let s = *acc;
            *acc *= d;
            Some(s)
        })
        .collect();
    let ring_len = strides[strides.len() - 1];
    let mut ring = vec![0.0; ring_len * k_count];
    let mut digits = vec![0usize; dims.len()];
    let mut residence = vec![vec![0.0; k_count]; pops.len()];
    let mut row = vec![0.0; k_count];
    let mut queue = vec![0.0; k_count];
    for idx in 1..points {
        // Advance the mixed-radix counter to the population vector of `idx`.
        for (digit, &dim) in digits.iter_mut().zip(&dims) {
            *digit += 1;
            if *digit < dim {
                break;
            }
            *digit = 0;
        }
        queue.fill(0.0);
        for (i, &r) in order.iter().enumerate() {
            if digits[i] == 0 {
                continue;
            }
            let prev = ((idx - strides[i]) % ring_len) * k_count;
            model.fill_residence(r, |k| ring[prev + k], &mut row);
            let x = digits[i] as f64 / row.iter().sum::<f64>();
            for (q, rk) in queue.iter_mut().zip(&row) {
                *q += x * rk;
            }
            if idx == points - 1 {
                residence[r].copy_from_slice(&row);
            }
        }
        let slot = (idx % ring_len) * k_count;
        ring[slot..slot + k_count].copy_from_slice(&queue);
    }
    Ok(MulticlassSolution::from_residence(model, residence))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::mva;
    use crate::analytic::mva::tests::{close, hand_network};
    use crate::analytic::network::CenterKind;

    #[test]
    fn a_lattice_too_dear_for_the_budget_is_refused_before_it_starts() {
        // three classes of 150 jobs: 151^3 = 3.4e6 lattice points (under the lattice cap), at
        // 4 R K operations each
        let kinds = vec![CenterKind::Queue, CenterKind::Queue, CenterKind::Delay];
        let demands = vec![vec![1.0, 0.5, 2.0]; 3];
        let m = MulticlassModel::new(kinds.clone(), demands.clone(), vec![150; 3]).unwrap();
        match mva_multiclass(&m) {
            Err(AnalyticError::TooCostly { what, work, .. }) => {
                assert!(what.contains("3442951 population vectors"), "{what}");
                assert!(work > 1e8, "{work}");
            }
            other => panic!("not refused as too costly: {other:?}"),
        }
        let small = MulticlassModel::new(kinds, demands, vec![20; 3]).unwrap();
        assert!(mva_multiclass(&small).is_ok());
    }

    #[test]
    fn one_class_equals_single_class_mva() {
        let net = hand_network();
        for n in [1, 2, 3, 17] {
            let m = MulticlassModel::single_class(&net, n).unwrap();
            let multi = mva_multiclass(&m).unwrap();
            let single = mva(&net, n).unwrap();
            let s = single.full();
            assert!(close(multi.throughput[0], s.throughput, 1e-12));
            assert!(close(multi.response_time[0], s.response_time, 1e-12));
            for k in 0..net.len() {
                assert!(close(multi.residence[0][k], s.residence[k], 1e-12));
                assert!(close(multi.queue_length[0][k], s.queue_length[k], 1e-12));
            }
        }
    }

    #[test]
    fn two_classes_by_hand_and_product_form() {
        // Queue demands A=1, B=2; delay demands 1, 1; one job per class.
        // Product form: states (none, A, B, AB at queue) weigh 1, 1, 2, 2!*1*2 = 4; G = 8;
        // X_A = P(A at delay) = 3/8, X_B = 2/8; MVA: R_A,q = 1 + 2/3, R_B,q = 2 (1 + 1/2).
        let m = MulticlassModel::new(
            vec![CenterKind::Queue, CenterKind::Delay],
            vec![vec![1.0, 1.0], vec![2.0, 1.0]],
            vec![1, 1],
        )
        .unwrap();
        let s = mva_multiclass(&m).unwrap();
        assert!(close(s.throughput[0], 3.0 / 8.0, 1e-12));
        assert!(close(s.throughput[1], 0.25, 1e-12));
        assert!(close(s.residence[0][0], 5.0 / 3.0, 1e-12));
        assert!(close(s.residence[1][0], 3.0, 1e-12));
        assert!(close(s.utilisation[0].unwrap(), 7.0 / 8.0, 1e-12));
        assert!(close(s.total_queue_length(0).unwrap(), 11.0 / 8.0, 1e-12));
    }

    #[test]
    fn class_order_does_not_matter() {
        let kinds = vec![CenterKind::Queue, CenterKind::Queue, CenterKind::Delay];
        let d = vec![
            vec![1.0, 0.2, 3.0],
            vec![0.3, 1.5, 1.0],
            vec![0.5, 0.5, 0.5],
        ];
        let a =
            mva_multiclass(&MulticlassModel::new(kinds.clone(), d.clone(), vec![4, 2, 3]).unwrap())
                .unwrap();
        let perm = vec![d[2].clone(), d[0].clone(), d[1].clone()];
        let b = mva_multiclass(&MulticlassModel::new(kinds, perm, vec![3, 4, 2]).unwrap()).unwrap();
        for (ra, rb) in [(0, 1), (1, 2), (2, 0)] {
            assert!(close(a.throughput[ra], b.throughput[rb], 1e-12));
        }
        let total: f64 = (0..3).map(|k| a.total_queue_length(k).unwrap()).sum();
        assert!(close(total, 9.0, 1e-12));
    }

    #[test]
    fn huge_lattice_is_refused() {
        let m = MulticlassModel::new(
            vec![CenterKind::Queue],
            vec![vec![1.0]; 3],
            vec![1000, 1000, 1000],
        )
        .unwrap();
        let err = mva_multiclass(&m).unwrap_err();
        assert!(matches!(err, AnalyticError::NotApplicable(ref s) if s.contains("Schweitzer")));
    }
}
