//! A fork of `K` identical tasks that each traverse the same closed sub-network and meet again
//! at a join: the mean time from the fork to the join's release, by MVA of the tasks alone.

use serde::Serialize;

use super::closed::Center;
use super::error::Result;
use super::mva::mva;

/// The fork-to-join time of `K` tasks and each centre's residence per traversal, by two
/// readings of the tasks' MVA.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskFork {
    /// Full population: every task sees all `K` tasks throughout and the join costs nothing,
    /// `T(K)` (Cremonesi and Gennaro's eq. 16, reading (a), for any sub-network).
    pub full: f64,
    /// Draining: while `i` tasks are left each ends at rate `1 / T(i)`, so the last leaves
    /// after `sum_{i=1..K} T(i) / i` (eq. 16, reading (b), for any sub-network). Exact at
    /// `K = 1`, and for exponential traversal times without contention (`H_K T`).
    pub draining: f64,
    /// Residence per traversal at each centre at population `K` (reading (a)).
    pub residence_full: Vec<f64>,
    /// Residence per traversal at each centre averaged over the phases `i = K..1` of the
    /// draining reading: each phase makes one traversal's worth of visits in all, so a visit's
    /// mean is the plain average of the phases' (reading (b)).
    pub residence_draining: Vec<f64>,
}

/// Solves `tasks` tasks through `centers`, whose demands are per task and traversal (visits
/// per traversal times mean service), by exact MVA at populations `1..=tasks`: `T(i)` is the
/// MVA cycle time with `i` tasks. The readings are approximations outside the cases named on
/// [`TaskFork`]: MVA assumes product form, and the draining reading exponential traversal
/// times.
///
/// Errors: those of [`mva`] (no centre, a zero total demand, `tasks == 0`, bad demands).
pub fn task_fork(centers: &[Center], tasks: u32) -> Result<TaskFork> {
    let sol = mva(centers, tasks)?;
    let full = sol.full();
    let mut draining = 0.0;
    let mut residence_draining = vec![0.0; centers.len()];
    for level in sol.levels() {
        draining += level.response_time / f64::from(level.population);
        for (sum, r) in residence_draining.iter_mut().zip(&level.residence) {
            *sum += r / f64::from(tasks);
        }
    }
    Ok(TaskFork {
        full: full.response_time,
        draining,
        residence_full: full.residence.clone(),
        residence_draining,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::tests::{center, close};
    use crate::analytic::network::CenterKind;

    #[test]
    fn tasks_through_a_delay_alone_end_at_the_maximum_of_exponentials() {
        // no contention: T(i) = z, so the draining reading is H_K z, the mean maximum of K
        // exponential traversals; the full-population reading ignores the join (z)
        let t = task_fork(&[center(CenterKind::Delay, 2.0)], 4).unwrap();
        assert!(close(
            t.draining,
            2.0 * (1.0 + 0.5 + 1.0 / 3.0 + 0.25),
            1e-12
        ));
        assert!(close(t.full, 2.0, 1e-12));
        assert_eq!(t.residence_draining, vec![2.0]);
    }

    #[test]
    fn tasks_at_one_queue_leave_after_all_services() {
        // K tasks at one FCFS exponential queue: the last leaves after K services, T(i) = i s
        let t = task_fork(&[center(CenterKind::Queue, 0.5)], 3).unwrap();
        assert!(close(t.draining, 1.5, 1e-12));
        assert!(close(t.full, 1.5, 1e-12));
        // a visit's mean over the phases: (0.5 + 1.0 + 1.5) / 3
        assert!(close(t.residence_draining[0], 1.0, 1e-12));
        assert!(close(t.residence_full[0], 1.5, 1e-12));
    }

    #[test]
    fn one_task_is_one_traversal() {
        let net = [
            center(CenterKind::Delay, 1.0),
            center(CenterKind::Queue, 0.25),
        ];
        let t = task_fork(&net, 1).unwrap();
        assert!(close(t.full, 1.25, 1e-15) && close(t.draining, 1.25, 1e-15));
        assert!(task_fork(&net, 0).is_err());
    }
}
