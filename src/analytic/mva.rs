//! Exact mean value analysis of single-class closed product-form networks.

use super::closed::{self, Center, ClosedLevel, ClosedSolution};
use super::convolution;
use super::cost::within_budget;
use super::error::Result;
use super::network::CenterKind;

/// How the residence time of a station depends on the mean queue an arrival finds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Residence {
    /// Constant residence time (infinite server).
    Fixed(f64),
    /// `base + per_job * Q(n-1) + per_busy * U(n-1)`: a single exponential server has
    /// `base = per_job = D`, `per_busy = 0`; Varki's fork-join center has `base = H_K s`,
    /// `per_job = s`; the residual-service correction of a non-exponential FCFS server sets
    /// `per_busy = D (scv - 1) / 2` (see [`super::mva_residual`]).
    Queueing {
        /// Residence time of a job that finds the station empty.
        base: f64,
        /// Extra residence per job found there.
        per_job: f64,
        /// Extra residence per unit of the utilisation found there, `U(n-1) = X(n-1) D`.
        per_busy: f64,
    },
}

/// One station as the MVA recursion sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MvaStation {
    /// Residence law.
    pub residence: Residence,
    /// Utilisation per server is `X(n)` times this; `None` for delays.
    pub busy_demand: Option<f64>,
}

impl MvaStation {
    /// The station for a load-independent center (`Delay`, `Queue`, `ProcessorSharing`,
    /// `MultiServer(1)`); `None` for a multi-server center with `c >= 2`.
    pub(crate) fn load_independent(center: &Center) -> Option<Self> {
        let d = center.demand;
        match center.kind {
            CenterKind::Delay => Some(Self {
                residence: Residence::Fixed(d),
                busy_demand: None,
            }),
            CenterKind::Queue | CenterKind::ProcessorSharing | CenterKind::MultiServer(1) => {
                Some(Self {
                    residence: Residence::Queueing {
                        base: d,
                        per_job: d,
                        per_busy: 0.0,
                    },
                    busy_demand: Some(d),
                })
            }
            CenterKind::MultiServer(_) => None,
        }
    }
}

/// The work of [`recursion`] over `stations` up to `population`: per level, a few operations
/// per station and the level's vectors (about 150 operations of allocation).
pub(crate) fn recursion_work(stations: usize, population: u32) -> f64 {
    f64::from(population) * (10.0 * stations as f64 + 150.0)
}

/// [`recursion`] unless its work ([`recursion_work`]) is over the budget: then `TooCostly`,
/// naming `method`.
pub(crate) fn affordable_recursion(
    stations: &[MvaStation],
    population: u32,
    method: &str,
) -> Result<ClosedSolution> {
    within_budget(recursion_work(stations.len(), population), || {
        format!(
            "{method} over populations 1..{population} at {} centers",
            stations.len()
        )
    })?;
    Ok(recursion(stations, population))
}

/// The MVA population recursion over stations whose residence is given by [`Residence`].
///
/// The caller guarantees `population >= 1` and a positive total residence at `Q = 0`.
pub(crate) fn recursion(stations: &[MvaStation], population: u32) -> ClosedSolution {
    let mut queue = vec![0.0; stations.len()];
    let mut levels = Vec::with_capacity(population as usize);
    let mut previous_throughput = 0.0;
    for n in 1..=population {
        let residence: Vec<f64> = stations
            .iter()
            .zip(&queue)
            .map(|(s, q)| match s.residence {
                Residence::Fixed(d) => d,
                Residence::Queueing {
                    base,
                    per_job,
                    per_busy,
                } => {
                    let busy = s.busy_demand.map_or(0.0, |d| previous_throughput * d);
                    base + per_job * q + per_busy * busy
                }
            })
            .collect();
        let response_time: f64 = residence.iter().sum();
        let throughput = f64::from(n) / response_time;
        previous_throughput = throughput;
        queue = residence.iter().map(|r| throughput * r).collect();
        levels.push(ClosedLevel {
            population: n,
            throughput,
            response_time,
            utilisation: stations
                .iter()
                .map(|s| s.busy_demand.map(|d| throughput * d))
                .collect(),
            queue_length: queue.clone(),
            residence,
        });
    }
    ClosedSolution::new(levels)
}

/// Exact MVA for a single-class closed product-form network, for every population `1..=N`.
///
/// Load-independent centers use the Reiser-Lavenberg recursion (Reiser and Lavenberg,
/// "Mean-value analysis of closed multichain queuing networks", JACM 27(2), 1980; Lazowska et
/// al., *Quantitative System Performance*, ch. 6):
/// `R_k(n) = D_k` at a delay, `R_k(n) = D_k (1 + Q_k(n-1))` at a single-server queue,
/// `X(n) = n / sum_k R_k(n)`, `Q_k(n) = X(n) R_k(n)`, `U_k(n) = X(n) D_k`.
///
/// If any center is `MultiServer(c)` with `c >= 2`, the network is load dependent and the
/// whole network is solved instead by the exact convolution algorithm carried out in
/// logarithms (see the `convolution` module docs): marginal probabilities
/// `p_k(j | n) = f_k(j) G_{-k}(n - j) / G(n)` are sums of positive terms, so they never go
/// negative, unlike the textbook load-dependent MVA where `p_k(0 | n) = 1 - sum_{j>=1} ...`
/// cancels catastrophically for large `n`. Cost `O(K N^2)` there, `O(K N)` otherwise.
/// Results are the same quantities either way; `MultiServer(1)` is treated as a `Queue`.
///
/// Errors: `InvalidParameter` for `population == 0`, a negative or non-finite demand, a zero
/// total demand or `MultiServer(0)`; `NotApplicable` for an empty network; `TooCostly` when
/// the work, estimated before it starts, is over [`WORK_BUDGET`](super::WORK_BUDGET) (about
/// `N (10 K + 150)` operations for the recursion, `22 K N^2` for the convolution: `N` above
/// about 100 000 at a few centers, or 500 with a multi-server center).
pub fn mva(centers: &[Center], population: u32) -> Result<ClosedSolution> {
    closed::validate(centers, population)?;
    let stations: Option<Vec<MvaStation>> =
        centers.iter().map(MvaStation::load_independent).collect();
    match stations {
        Some(stations) => affordable_recursion(&stations, population, "the MVA recursion"),
        None => {
            within_budget(convolution::work(centers.len(), population), || {
                format!(
                    "the convolution algorithm (a center with several servers) over populations 1..{population} at {} centers",
                    centers.len()
                )
            })?;
            Ok(convolution::solve(centers, population))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    pub(crate) fn center(kind: CenterKind, demand: f64) -> Center {
        Center { kind, demand }
    }

    /// Queue 1.0, queue 0.5, delay 2.0: the network worked by hand below.
    pub(crate) fn hand_network() -> Vec<Center> {
        vec![
            center(CenterKind::Queue, 1.0),
            center(CenterKind::Queue, 0.5),
            center(CenterKind::Delay, 2.0),
        ]
    }

    #[test]
    fn hand_computed_three_populations() {
        // n=1: R = (1, 0.5, 2), X = 2/7, Q = (2/7, 1/7, 4/7).
        // n=2: R = (9/7, 4/7, 2), X = 14/27, Q = (2/3, 8/27, 28/27).
        // n=3: R = (5/3, 35/54, 2), X = 162/233.
        let s = mva(&hand_network(), 3).unwrap();
        let l1 = s.at(1).unwrap();
        assert!(close(l1.throughput, 2.0 / 7.0, 1e-12));
        assert!(close(l1.queue_length[1], 1.0 / 7.0, 1e-12));
        let l2 = s.at(2).unwrap();
        assert!(close(l2.throughput, 14.0 / 27.0, 1e-12));
        assert!(close(l2.residence[0], 9.0 / 7.0, 1e-12));
        assert!(close(l2.queue_length[0], 2.0 / 3.0, 1e-12));
        assert!(close(l2.queue_length[1], 8.0 / 27.0, 1e-12));
        let l3 = s.full();
        assert!(close(l3.throughput, 162.0 / 233.0, 1e-12));
        assert!(close(l3.residence[0], 5.0 / 3.0, 1e-12));
        assert!(close(l3.residence[1], 35.0 / 54.0, 1e-12));
        assert!(close(l3.response_time, 233.0 / 54.0, 1e-12));
        assert_eq!(l3.utilisation[2], None);
        assert!(close(l3.utilisation[0].unwrap(), 162.0 / 233.0, 1e-12));
        let total: f64 = l3.queue_length.iter().sum();
        assert!(close(total, 3.0, 1e-12));
    }

    #[test]
    fn processor_sharing_and_single_multiserver_equal_queue() {
        let base = mva(&hand_network(), 5).unwrap();
        for kind in [CenterKind::ProcessorSharing, CenterKind::MultiServer(1)] {
            let mut net = hand_network();
            net[0].kind = kind;
            let other = mva(&net, 5).unwrap();
            assert_eq!(base, other);
        }
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(mva(&hand_network(), 0).is_err());
        assert!(mva(&[center(CenterKind::Queue, f64::INFINITY)], 2).is_err());
        assert!(mva(&[center(CenterKind::Delay, 0.0)], 2).is_err());
        assert!(mva(&[center(CenterKind::MultiServer(0), 1.0)], 2).is_err());
    }

    #[test]
    fn a_population_too_large_for_the_budget_is_refused_before_it_starts() {
        use crate::analytic::AnalyticError;
        // 10^7 levels of the recursion (gigabytes of levels) and a multi-server center at
        // 5000 jobs (10^9 terms): refused at once, with the estimate
        let too_costly = |r: Result<ClosedSolution>| match r {
            Err(AnalyticError::TooCostly { what, work, .. }) => (what, work),
            other => panic!(
                "not refused as too costly: {:?}",
                other.map(|s| s.levels().len())
            ),
        };
        let (what, work) = too_costly(mva(&hand_network(), 10_000_000));
        assert!(what.contains("the MVA recursion over populations 1..10000000 at 3 centers"));
        assert!(work > 1e8);
        let mut net = hand_network();
        net[0].kind = CenterKind::MultiServer(4);
        let (what, _) = too_costly(mva(&net, 5000));
        assert!(what.starts_with("the convolution algorithm"), "{what}");
        // within the budget, solved as before
        assert_eq!(mva(&net, 300).unwrap().levels().len(), 300);
        assert_eq!(
            mva(&hand_network(), 100_000).unwrap().levels().len(),
            100_000
        );
    }
}
