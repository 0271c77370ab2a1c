//! Asymptotic and balanced job bounds for single-class closed networks.

use serde::{Deserialize, Serialize};

use super::check;
use super::error::{AnalyticError, Result};

/// A closed interval `[lower, upper]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower end.
    pub lower: f64,
    /// Upper end.
    pub upper: f64,
}

impl Interval {
    /// True if `lower <= value <= upper`, allowing a relative slack `rel` for rounding.
    pub fn contains(&self, value: f64, rel: f64) -> bool {
        value >= self.lower * (1.0 - rel) && value <= self.upper * (1.0 + rel)
    }
}

/// Bounds on throughput and response time at one population.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerformanceBounds {
    /// Bounds on the system throughput `X(N)`.
    pub throughput: Interval,
    /// Bounds on the response time `R(N) = N / X(N) - Z` (think time excluded).
    pub response_time: Interval,
}

impl PerformanceBounds {
    fn new(throughput: (f64, f64), response_time: (f64, f64)) -> Self {
        Self {
            throughput: Interval {
                lower: throughput.0,
                upper: throughput.1,
            },
            response_time: Interval {
                lower: response_time.0,
                upper: response_time.1,
            },
        }
    }
}

/// Totals of the queueing demands: `D = sum D_k`, `D_max`, `D_avg = D / K` over the `K`
/// centers with positive demand.
struct Demands {
    total: f64,
    max: f64,
    avg: f64,
    n: f64,
    z: f64,
}

impl Demands {
    fn new(demands: &[f64], think_time: f64, population: u32) -> Result<Self> {
        let n = f64::from(check::at_least("population", population, 1)?);
        let z = check::non_negative("think_time", think_time)?;
        let mut total = 0.0;
        let mut max = 0.0_f64;
        let mut busy = 0u32;
        for (k, &d) in demands.iter().enumerate() {
            let d = check::non_negative(&format!("demand[{k}]"), d)?;
            total += d;
            max = max.max(d);
            busy += u32::from(d > 0.0);
        }
        if busy == 0 {
            return Err(AnalyticError::NotApplicable(
                "bounds need at least one queueing center with positive demand".into(),
            ));
        }
        Ok(Self {
            total,
            max,
            avg: total / f64::from(busy),
            n,
            z,
        })
    }
}

/// Asymptotic bounds (ABA) for a single-class closed network with queueing demands `D_k`,
/// total think (delay) time `Z` and population `N` (Lazowska et al., *Quantitative System
/// Performance*, 1984, 5.2; Denning and Buzen 1978):
///
/// `N / (N D + Z) <= X(N) <= min(1/D_max, N / (D + Z))`,
/// `max(D, N D_max - Z) <= R(N) <= N D`.
///
/// Valid for any closed network whose queueing centers are load independent (no product-form
/// assumption needed). Errors: `InvalidParameter` for `N = 0`, negative or non-finite numbers;
/// `NotApplicable` if every demand is zero.
pub fn asymptotic_bounds(
    demands: &[f64],
    think_time: f64,
    population: u32,
) -> Result<PerformanceBounds> {
    let t = Demands::new(demands, think_time, population)?;
    let (d, n, z) = (t.total, t.n, t.z);
    Ok(PerformanceBounds::new(
        (n / (n * d + z), (1.0 / t.max).min(n / (d + z))),
        (d.max(n * t.max - z), n * d),
    ))
}

/// Balanced job bounds with think time (Zahorjan, Sevcik, Eager and Galler, "Balanced job
/// bound analysis of queueing networks", CACM 25(2), 1982; Lazowska et al., *QSP*, 5.3 and
/// Table 5.2), for product-form networks of load-independent queues:
///
/// `N / (D + Z + (N-1) D_max / (1 + Z/(N D))) <= X(N)
///    <= min(1/D_max, N / (D + Z + (N-1) D_avg / (1 + Z/D)))`,
/// `max(N D_max - Z, D + (N-1) D_avg / (1 + Z/D)) <= R(N) <= D + (N-1) D_max / (1 + Z/(N D))`,
///
/// with `D_avg = D / K` over the `K` centers of positive demand (zero-demand centers carry no
/// load and are left out, which only tightens the bound). With `Z = 0` this is the classic
/// `N/(D + (N-1) D_max) <= X <= N/(D + (N-1) D_avg)`. The BJB interval lies inside the ABA one.
/// Errors: as [`asymptotic_bounds`].
pub fn balanced_job_bounds(
    demands: &[f64],
    think_time: f64,
    population: u32,
) -> Result<PerformanceBounds> {
    let t = Demands::new(demands, think_time, population)?;
    let (d, n, z) = (t.total, t.n, t.z);
    let r_upper = d + (n - 1.0) * t.max / (1.0 + z / (n * d));
    let r_balanced = d + (n - 1.0) * t.avg / (1.0 + z / d);
    Ok(PerformanceBounds::new(
        (n / (r_upper + z), (1.0 / t.max).min(n / (r_balanced + z))),
        ((n * t.max - z).max(r_balanced), r_upper),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::closed::Center;
    use crate::analytic::mva::mva;
    use crate::analytic::mva::tests::close;
    use crate::analytic::network::CenterKind;

    #[test]
    fn hand_values() {
        // D = (1, 0.5), Z = 2, N = 3: D = 1.5, D_max = 1, D_avg = 0.75.
        let a = asymptotic_bounds(&[1.0, 0.5], 2.0, 3).unwrap();
        assert!(close(a.throughput.lower, 3.0 / 6.5, 1e-14));
        assert!(close(a.throughput.upper, 3.0 / 3.5, 1e-14));
        assert!(close(a.response_time.lower, 1.5, 1e-14));
        assert!(close(a.response_time.upper, 4.5, 1e-14));
        let b = balanced_job_bounds(&[1.0, 0.5], 2.0, 3).unwrap();
        // X_low = 3 / (3.5 + 2 / (1 + 2/4.5)), X_up = 3 / (3.5 + 1.5 / (1 + 2/1.5)).
        assert!(close(
            b.throughput.lower,
            3.0 / (3.5 + 2.0 / (1.0 + 2.0 / 4.5)),
            1e-14
        ));
        assert!(close(
            b.throughput.upper,
            3.0 / (3.5 + 1.5 / (1.0 + 2.0 / 1.5)),
            1e-14
        ));
        assert!(close(b.throughput.lower, 0.614_173_228_3, 1e-9));
        assert!(close(b.throughput.upper, 0.724_137_931_0, 1e-9));
    }

    #[test]
    fn zero_think_time_is_classic_bjb() {
        let b = balanced_job_bounds(&[2.0, 1.0, 1.0], 0.0, 5).unwrap();
        assert!(close(b.throughput.lower, 5.0 / (4.0 + 4.0 * 2.0), 1e-14));
        // N/(D + (N-1) D_avg) = 5/9.33 exceeds 1/D_max = 0.5, which then binds.
        assert_eq!(b.throughput.upper, 0.5);
        let b2 = balanced_job_bounds(&[2.0, 1.0, 1.0], 0.0, 2).unwrap();
        assert!(close(b2.throughput.upper, 2.0 / (4.0 + 4.0 / 3.0), 1e-14));
        assert!(close(b2.response_time.lower, 4.0 + 4.0 / 3.0, 1e-14));
        assert!(close(b2.response_time.upper, 6.0, 1e-14));
    }

    #[test]
    fn bjb_inside_aba_and_exact_mva_inside_bjb() {
        let cases: [(&[f64], f64); 4] = [
            (&[1.0, 0.5], 2.0),
            (&[0.2, 0.3, 0.25, 0.05], 5.0),
            (&[1.0, 1.0, 1.0], 0.0),
            (&[3.0, 0.1], 0.5),
        ];
        for (demands, z) in cases {
            let mut net: Vec<Center> = demands
                .iter()
                .map(|&d| Center {
                    kind: CenterKind::Queue,
                    demand: d,
                })
                .collect();
            net.push(Center {
                kind: CenterKind::Delay,
                demand: z,
            });
            let exact = mva(&net, 60).unwrap();
            for level in exact.levels() {
                let n = level.population;
                let a = asymptotic_bounds(demands, z, n).unwrap();
                let b = balanced_job_bounds(demands, z, n).unwrap();
                assert!(a.throughput.contains(b.throughput.lower, 1e-12));
                assert!(a.throughput.contains(b.throughput.upper, 1e-12));
                assert!(a.response_time.contains(b.response_time.lower, 1e-12));
                assert!(a.response_time.contains(b.response_time.upper, 1e-12));
                assert!(b.throughput.contains(level.throughput, 1e-12), "X n={n}");
                let r = level.response_time - z;
                assert!(b.response_time.contains(r, 1e-12), "R n={n}");
            }
        }
    }

    #[test]
    fn tight_at_population_one() {
        let b = balanced_job_bounds(&[1.0, 0.5], 2.0, 1).unwrap();
        assert!(close(b.throughput.lower, b.throughput.upper, 1e-14));
        assert!(close(b.response_time.upper, 1.5, 1e-14));
    }

    #[test]
    fn bad_inputs() {
        assert!(asymptotic_bounds(&[], 1.0, 1).is_err());
        assert!(asymptotic_bounds(&[0.0], 1.0, 1).is_err());
        assert!(balanced_job_bounds(&[1.0], -1.0, 1).is_err());
        assert!(balanced_job_bounds(&[1.0], 1.0, 0).is_err());
        assert!(balanced_job_bounds(&[f64::NAN], 1.0, 2).is_err());
    }
}
