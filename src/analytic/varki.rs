//! Varki's mean-value technique for closed networks with fork-join subsystems.

use serde::{Deserialize, Serialize};

use super::check;
use super::closed::{Center, ClosedSolution};
use super::error::{AnalyticError, Result};
use super::harmonic::harmonic;
use super::mva::{self, MvaStation, Residence};

/// A fork-join subsystem: a job forks into `branches` tasks, one to each of `branches`
/// identical single-server FCFS exponential queues, and leaves when all its tasks are done.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ForkJoinCenter {
    /// Number of parallel servers `K >= 1`.
    pub branches: u32,
    /// Demand of one task server per cycle: visits to the subsystem times mean task service
    /// time `s`.
    pub demand: f64,
}

/// Varki's mean-value approximation for a closed single-class network with fork-join
/// subsystems of homogeneous exponential servers, for populations `1..=N`.
///
/// Reading implemented (E. Varki, "Mean value technique for closed fork-join networks",
/// SIGMETRICS 1999, and "Response time analysis of parallel computer and storage systems",
/// IEEE TPDS 12(11), 2001; restated as Eq. 67 / Theorem 4.1 in A. Thomasian, "Analysis of
/// fork/join and related queueing systems", ACM Computing Surveys 47(2), 2014): the
/// residence of a job at a `K`-way fork-join subsystem with per-task demand `s` is
///
/// `R_FJ(n) = s [H_K + Q_FJ(n - 1)]`,
///
/// where `Q_FJ(n-1)` is the mean number of *jobs* (not tasks) in the subsystem with one
/// customer less, supplied by the arrival theorem as in MVA. The other centers follow exact
/// MVA (`D(1 + Q(n-1))` at queues, `D` at delays), `X(n) = n / sum R(n)`, `Q = X R`.
/// Properties: at `n = 1` it is `H_K s` (the exact mean of the maximum of `K` exponentials);
/// at `K = 1` it is ordinary MVA; for a network made of the fork-join subsystem alone it is an
/// upper bound on the response time (a lower bound on throughput), exact for `K = 2`. With
/// other centers it is an approximation (Varki reports errors mostly below 5%).
///
/// Vectors in the result list the `centers` first, then the `fork_joins`; for a fork-join
/// subsystem `queue_length` counts jobs and `utilisation` is that of each task server,
/// `X(n) s`.
///
/// Errors: `InvalidParameter` for `population == 0`, `branches == 0`, negative or non-finite
/// demands, or a zero total demand; `NotApplicable` for `MultiServer(c >= 2)` centers (the
/// technique is stated for load-independent centers); `TooCostly` as [`super::mva`].
pub fn varki_closed_fork_join(
    fork_joins: &[ForkJoinCenter],
    centers: &[Center],
    population: u32,
) -> Result<ClosedSolution> {
    check::at_least("population", population, 1)?;
    let mut stations = Vec::with_capacity(centers.len() + fork_joins.len());
    let mut total = 0.0;
    for (k, center) in centers.iter().enumerate() {
        center.kind.validate(k)?;
        total += check::non_negative(&format!("demand[{k}]"), center.demand)?;
        stations.push(MvaStation::load_independent(center).ok_or_else(|| {
            AnalyticError::NotApplicable(format!(
                "center {k} is multi-server; Varki's technique covers delay and single-server \
                 centers"
            ))
        })?);
    }
    for (j, fj) in fork_joins.iter().enumerate() {
        let k = check::at_least(&format!("branches of fork-join {j}"), fj.branches, 1)?;
        let s = check::non_negative(&format!("demand of fork-join {j}"), fj.demand)?;
        let base = harmonic(k) * s;
        total += base;
        stations.push(MvaStation {
            residence: Residence::Queueing {
                base,
                per_job: s,
                per_busy: 0.0,
            },
            busy_demand: Some(s),
        });
    }
    check::positive("total demand", total)?;
    mva::affordable_recursion(&stations, population, "Varki's recursion")
}

/// The residence per cycle of a task at one server of a fork-join subsystem whose per-task
/// demand per cycle is `demand`, along the levels of a Varki solution `sol`: by the arrival
/// theorem at that server, as MVA treats a queue, `R_t(n) = D (1 + Q_t(n - 1))` with
/// `Q_t(n) = X(n) R_t(n)` the tasks there and `X(n)` Varki's throughput. At `n = 1` it is `D`
/// (a task finds its server empty); like `X(n)` it is an approximation beyond that. Returns
/// `R_t` at the full population.
pub fn varki_task_residence(sol: &ClosedSolution, demand: f64) -> f64 {
    let mut tasks = 0.0;
    let mut residence = demand;
    for level in sol.levels() {
        residence = demand * (1.0 + tasks);
        tasks = level.throughput * residence;
    }
    residence
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mva::mva;
    use crate::analytic::mva::tests::{center, close};
    use crate::analytic::network::CenterKind;
    use crate::linalg;

    /// Exact fork-join response time and throughput from the CTMC of `m` jobs circulating
    /// between a think delay of mean `z` (`z = 0`: the subsystem alone) and a `k`-way
    /// fork-join of exponential servers of mean `s`. State: tasks queued at each server;
    /// servers hold suffixes of the FCFS job order, so the jobs inside are `max_i n_i`.
    fn ctmc(k: u32, s: f64, z: f64, m: usize) -> (f64, f64) {
        let k = k as usize;
        let base = m + 1;
        let states = base.pow(k as u32);
        let decode = |mut idx: usize| -> Vec<usize> {
            (0..k)
                .map(|_| {
                    let d = idx % base;
                    idx /= base;
                    d
                })
                .collect()
        };
        let encode = |v: &[usize]| v.iter().rev().fold(0, |acc, &d| acc * base + d);
        let mut q = vec![0.0; states * states]; // generator, row = from
        let mut departures = vec![0.0; states];
        for idx in 0..states {
            let n = decode(idx);
            let inside = *n.iter().max().unwrap_or(&0);
            if z == 0.0 && inside != m {
                continue; // unreachable without a think stage
            }
            let mut add = |to: usize, rate: f64| {
                q[idx * states + to] += rate;
                q[idx * states + idx] -= rate;
            };
            for i in 0..k {
                if n[i] == 0 {
                    continue;
                }
                let mut next = n.clone();
                next[i] -= 1;
                let left = *next.iter().max().unwrap_or(&0) < inside;
                if left {
                    departures[idx] += 1.0 / s;
                    if z == 0.0 {
                        next.iter_mut().for_each(|d| *d += 1);
                    }
                }
                add(encode(&next), 1.0 / s);
            }
            if z > 0.0 && inside < m {
                let next: Vec<usize> = n.iter().map(|d| d + 1).collect();
                add(encode(&next), (m - inside) as f64 / z);
            }
        }
        // pi Q = 0 with sum pi = 1: transpose, replace the last equation by normalisation.
        let mut a = vec![0.0; states * states];
        for i in 0..states {
            for j in 0..states {
                a[j * states + i] = q[i * states + j];
            }
        }
        let mut b = vec![0.0; states];
        for j in 0..states {
            a[(states - 1) * states + j] = 1.0;
        }
        b[states - 1] = 1.0;
        // Unreachable states have all-zero columns; pin them to zero.
        for idx in 0..states {
            if (0..states).all(|j| a[j * states + idx] == 0.0 || j == states - 1) {
                for j in 0..states {
                    a[j * states + idx] = 0.0;
                }
                a[idx * states + idx] = 1.0;
                b[idx] = 0.0;
            }
        }
        let pi = linalg::solve(a, b).unwrap();
        let x: f64 = pi.iter().zip(&departures).map(|(p, d)| p * d).sum();
        let jobs: f64 = (0..states)
            .map(|idx| pi[idx] * *decode(idx).iter().max().unwrap_or(&0) as f64)
            .sum();
        (jobs / x, x)
    }

    fn fj(k: u32, s: f64) -> ForkJoinCenter {
        ForkJoinCenter {
            branches: k,
            demand: s,
        }
    }

    #[test]
    fn one_job_sees_the_expected_maximum() {
        let net = [
            center(CenterKind::Delay, 3.0),
            center(CenterKind::Queue, 0.5),
        ];
        let s = varki_closed_fork_join(&[fj(5, 2.0)], &net, 4).unwrap();
        let l1 = s.at(1).unwrap();
        assert_eq!(l1.residence[2], harmonic(5) * 2.0);
        assert!(close(
            l1.throughput,
            1.0 / (3.0 + 0.5 + harmonic(5) * 2.0),
            1e-15
        ));
    }

    #[test]
    fn a_task_finds_its_server_empty_at_n1_and_queues_by_the_arrival_theorem_after() {
        // think 2, 4 branches of mean 0.5: at N = 1 the job's residence is H_4 x 0.5 and a
        // task's is 0.5; at N = 2, Q_t(1) = X(1) 0.5 with X(1) = 1 / (2 + H_4 0.5)
        let net = [center(CenterKind::Delay, 2.0)];
        let s = varki_closed_fork_join(&[fj(4, 0.5)], &net, 2).unwrap();
        let l1 = s.at(1).unwrap();
        assert!(close(l1.residence[1], harmonic(4) * 0.5, 1e-15));
        assert!(close(l1.residence[1], 25.0 / 24.0, 1e-15));
        let one = varki_closed_fork_join(&[fj(4, 0.5)], &net, 1).unwrap();
        assert_eq!(varki_task_residence(&one, 0.5), 0.5);
        let x1 = 1.0 / (2.0 + 25.0 / 24.0);
        assert!(close(
            varki_task_residence(&s, 0.5),
            0.5 * (1.0 + x1 * 0.5),
            1e-15
        ));
        // a task ends no later than its job, on average
        assert!(varki_task_residence(&s, 0.5) < s.full().residence[1]);
    }

    #[test]
    fn one_branch_is_ordinary_mva() {
        let net = [
            center(CenterKind::Delay, 3.0),
            center(CenterKind::Queue, 0.5),
        ];
        let v = varki_closed_fork_join(&[fj(1, 2.0)], &net, 10).unwrap();
        let mut plain = net.to_vec();
        plain.push(center(CenterKind::Queue, 2.0));
        assert_eq!(v, mva(&plain, 10).unwrap());
    }

    #[test]
    fn ctmc_checks_itself_on_a_single_queue() {
        // k = 1 is a closed M/M/1 with think time: the CTMC must match MVA.
        let (r, x) = ctmc(1, 1.0, 2.0, 4);
        let m = mva(
            &[
                center(CenterKind::Delay, 2.0),
                center(CenterKind::Queue, 1.0),
            ],
            4,
        )
        .unwrap();
        assert!(close(x, m.full().throughput, 1e-10));
        assert!(close(r, m.full().residence[1], 1e-10));
    }

    #[test]
    fn exact_for_two_branches_alone_and_an_upper_bound_for_more() {
        for m in 1..=4u32 {
            let v = varki_closed_fork_join(&[fj(2, 1.0)], &[], m).unwrap();
            let (r, _) = ctmc(2, 1.0, 0.0, m as usize);
            assert!(close(v.full().response_time, r, 1e-9), "K=2, M={m}");
            assert!(close(
                v.full().response_time,
                1.5 + f64::from(m) - 1.0,
                1e-12
            ));
            for k in [3, 4] {
                let v = varki_closed_fork_join(&[fj(k, 1.0)], &[], m).unwrap();
                let (r, _) = ctmc(k, 1.0, 0.0, m as usize);
                assert!(v.full().response_time >= r * (1.0 - 1e-12), "K={k}, M={m}");
            }
        }
    }

    #[test]
    fn close_to_the_ctmc_with_think_time() {
        for (k, z, m) in [(2, 2.0, 3), (3, 1.0, 4), (4, 5.0, 3)] {
            let net = [center(CenterKind::Delay, z)];
            let v = varki_closed_fork_join(&[fj(k, 1.0)], &net, m).unwrap();
            let (r, x) = ctmc(k, 1.0, z, m as usize);
            let level = v.full();
            // Measured: +1.6%, +1.9%, +3.1% on R; pessimistic, as Varki describes.
            assert!(close(level.residence[1], r, 0.04), "K={k} Z={z} M={m}");
            assert!(level.residence[1] >= r, "K={k} Z={z} M={m}");
            assert!(close(level.throughput, x, 0.04), "K={k} Z={z} M={m}");
        }
    }

    #[test]
    fn bad_inputs() {
        assert!(varki_closed_fork_join(&[fj(0, 1.0)], &[], 2).is_err());
        assert!(varki_closed_fork_join(&[fj(2, 1.0)], &[], 0).is_err());
        assert!(varki_closed_fork_join(&[fj(2, 0.0)], &[], 2).is_err());
        assert!(varki_closed_fork_join(&[fj(2, f64::NAN)], &[], 2).is_err());
        let ms = [center(CenterKind::MultiServer(2), 1.0)];
        assert!(matches!(
            varki_closed_fork_join(&[fj(2, 1.0)], &ms, 2),
            Err(AnalyticError::NotApplicable(_))
        ));
    }
}
