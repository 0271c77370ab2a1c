//! Sevcik's shadow-server approximation for priority stations in closed multiclass networks.

use super::error::{AnalyticError, Result};
use super::multiclass::{MulticlassModel, MulticlassSolution};
use super::mva_multiclass::mva_multiclass;
use super::network::CenterKind;

/// Largest number of fixed-point passes of [`shadow_server`].
const MAX_PASSES: u32 = 10_000;

/// The fixed point stops when no utilisation moves by more than this between passes.
const TOLERANCE: f64 = 1e-12;

/// Sevcik's shadow-server approximation (K. C. Sevcik, "Priority scheduling disciplines in
/// queueing network models of computer systems", IFIP Congress 1977) for a closed multiclass
/// network whose one-server `Queue` centers may serve their classes by priority levels,
/// preemptive-resume.
///
/// `levels[k]`, for a priority center `k`, gives each class's level there (smaller is served
/// first; `None` for an ordinary center). Each priority center is split into one *shadow*
/// center per level, which serves only that level's classes, with their demands stretched to
/// `D_rk / (1 - U_(<l),k)`, where `U_(<l),k = sum over the classes of more urgent levels of
/// X_s D_sk` is the share of the real server the more urgent levels take; the network of
/// shadows is solved by exact multiclass MVA and the utilisations are iterated to a fixed
/// point. An approximation: exact for the most urgent level of a preemptive-resume center fed
/// by nothing else; it ignores the correlation between the levels' queues, and, at a
/// non-preemptive center, the wait for a less urgent service in progress.
///
/// Returns the solution on the original centers: a class's residence at a priority center is
/// its residence at its level's shadow; the utilisation of a priority center is the real one,
/// `sum_r X_r D_rk`.
///
/// Errors: `NotApplicable` when a priority center is not a one-server queue, or when the more
/// urgent levels take the whole server (`U >= 1`); `NotConverged` after 10,000 passes;
/// otherwise as [`mva_multiclass`].
pub fn shadow_server(
    kinds: &[CenterKind],
    demands: &[Vec<f64>],
    populations: &[u32],
    levels: &[Option<Vec<u32>>],
) -> Result<MulticlassSolution> {
    let m = kinds.len();
    let classes = populations.len();
    for (k, l) in levels.iter().enumerate() {
        if l.is_some() && !matches!(kinds[k], CenterKind::Queue) {
            return Err(AnalyticError::NotApplicable(format!(
                "center {k} has priority levels but is not a one-server queue"
            )));
        }
    }
    // the expanded centers: (original center, level or none)
    let mut expanded: Vec<(usize, Option<u32>)> = Vec::new();
    for k in 0..m {
        match &levels[k] {
            None => expanded.push((k, None)),
            Some(l) => {
                let mut distinct: Vec<u32> = (0..classes)
                    .filter(|&r| demands[r][k] > 0.0)
                    .map(|r| l[r])
                    .collect();
                distinct.sort_unstable();
                distinct.dedup();
                expanded.extend(distinct.into_iter().map(|level| (k, Some(level))));
            }
        }
    }
    let kinds_x: Vec<CenterKind> = expanded.iter().map(|&(k, _)| kinds[k]).collect();
    let mut throughput = vec![0.0; classes];
    for _ in 0..MAX_PASSES {
        let stretched: Vec<Vec<f64>> = (0..classes)
            .map(|r| {
                expanded
                    .iter()
                    .map(|&(k, level)| match (level, &levels[k]) {
                        (Some(level), Some(l)) if l[r] == level => {
                            let urgent: f64 = (0..classes)
                                .filter(|&s| l[s] < level)
                                .map(|s| throughput[s] * demands[s][k])
                                .sum();
                            demands[r][k] / (1.0 - urgent)
                        }
                        (Some(_), _) => 0.0,
                        (None, _) => demands[r][k],
                    })
                    .collect()
            })
            .collect();
        if stretched
            .iter()
            .flatten()
            .any(|d| !d.is_finite() || *d < 0.0)
        {
            return Err(AnalyticError::NotApplicable(
                "the more urgent levels take the whole server at a priority center".into(),
            ));
        }
        let model = MulticlassModel::new(kinds_x.clone(), stretched, populations.to_vec())?;
        let sol = mva_multiclass(&model)?;
        let moved = sol
            .throughput
            .iter()
            .zip(&throughput)
            .enumerate()
            .flat_map(|(r, (new, old))| (0..m).map(move |k| (new - old).abs() * demands[r][k]))
            .fold(0.0, f64::max);
        throughput.clone_from(&sol.throughput);
        if moved < TOLERANCE {
            return Ok(fold(kinds, demands, &expanded, sol));
        }
    }
    Err(AnalyticError::NotConverged {
        method: "the shadow-server fixed point".into(),
        iterations: MAX_PASSES,
        residual: f64::NAN,
    })
}

/// The solution on the expanded centers brought back to the original ones.
fn fold(
    kinds: &[CenterKind],
    demands: &[Vec<f64>],
    expanded: &[(usize, Option<u32>)],
    sol: MulticlassSolution,
) -> MulticlassSolution {
    let m = kinds.len();
    let classes = sol.throughput.len();
    let mut residence = vec![vec![0.0; m]; classes];
    let mut queue_length = vec![vec![0.0; m]; classes];
    for (x, &(k, _)) in expanded.iter().enumerate() {
        for r in 0..classes {
            residence[r][k] += sol.residence[r][x];
            queue_length[r][k] += sol.queue_length[r][x];
        }
    }
    let utilisation = (0..m)
        .map(|k| {
            kinds[k].servers().map(|_| {
                (0..classes)
                    .map(|r| sol.throughput[r] * demands[r][k])
                    .sum()
            })
        })
        .collect();
    MulticlassSolution {
        throughput: sol.throughput,
        response_time: sol.response_time,
        residence,
        queue_length,
        utilisation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{Center, mva};

    #[test]
    fn one_level_is_exact_multiclass_mva() {
        let kinds = [CenterKind::Delay, CenterKind::Queue];
        let demands = vec![vec![2.0, 0.5], vec![3.0, 0.5]];
        let model = MulticlassModel::new(kinds.to_vec(), demands.clone(), vec![3, 2]).unwrap();
        let exact = mva_multiclass(&model).unwrap();
        let shadow = shadow_server(&kinds, &demands, &[3, 2], &[None, Some(vec![0, 0])]).unwrap();
        for r in 0..2 {
            assert!((shadow.throughput[r] / exact.throughput[r] - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn the_urgent_class_of_a_preemptive_server_does_not_see_the_other() {
        // class 0 at level 0 preempts class 1 at the one queue: class 0 behaves as if alone
        let kinds = [CenterKind::Delay, CenterKind::Queue];
        let demands = vec![vec![2.0, 0.5], vec![1.0, 0.8]];
        let shadow = shadow_server(&kinds, &demands, &[4, 3], &[None, Some(vec![0, 1])]).unwrap();
        let alone = mva(
            &[
                Center {
                    kind: CenterKind::Delay,
                    demand: 2.0,
                },
                Center {
                    kind: CenterKind::Queue,
                    demand: 0.5,
                },
            ],
            4,
        )
        .unwrap();
        assert!((shadow.throughput[0] / alone.full().throughput - 1.0).abs() < 1e-12);
        // the background class gets the server's rest: slower than without priorities
        let model = MulticlassModel::new(kinds.to_vec(), demands.clone(), vec![4, 3]).unwrap();
        let fcfs = mva_multiclass(&model).unwrap();
        assert!(shadow.throughput[1] < fcfs.throughput[1]);
        let u = shadow.utilisation[1].unwrap();
        assert!(u < 1.0 && u > 0.0, "{u}");
    }
}
