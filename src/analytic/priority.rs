//! One station, several Poisson classes at priority levels: M/G/1 non-preemptive and
//! preemptive-resume priority, M/M/c non-preemptive priority.
//!
//! Level 1 is served first. Classes may share a level: within a level service is FCFS and
//! the level behaves as one aggregate class, so every class of a level has the level's wait.

use serde::{Deserialize, Serialize};

use super::check;
use super::error::{AnalyticError, Result};
use super::single::{StationMetrics, erlang_c};

/// One Poisson class of a priority station.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PriorityClass {
    /// Arrival rate `lambda_k` (`>= 0`).
    pub lambda: f64,
    /// Mean service time `E[S_k]` (`> 0`).
    pub mean_service: f64,
    /// Squared coefficient of variation of the service time (`>= 0`; 1 for exponential), so
    /// that `E[S_k^2] = (1 + scv) E[S_k]^2`.
    pub scv: f64,
    /// Priority level: 1 (or any smallest number) is served first; the classes must be given
    /// sorted by level, non-decreasing.
    pub level: u32,
}

/// Per-class and station-wide means of a priority station.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriorityMetrics {
    /// One entry per class, in the order given: its utilisation per server
    /// `lambda_k E[S_k] / c`, throughput `lambda_k`, mean wait, mean response
    /// `wait + E[S_k]`, mean number `lambda_k R_k` and mean number waiting (Little).
    pub classes: Vec<StationMetrics>,
    /// Total throughput `sum lambda_k`.
    pub throughput: f64,
    /// Utilisation per server `sum lambda_k E[S_k] / c`.
    pub utilisation: f64,
    /// Mean number at the station, `sum_k lambda_k R_k`.
    pub mean_number: f64,
}

/// Validated classes: `(lambda, mean, second moment, level)` and per-class load.
struct Levels {
    /// Per class: the cumulative load per server of the levels strictly above its own
    /// (`sigma_{l-1}`) and up to its own (`sigma_l`).
    sigma: Vec<(f64, f64)>,
    /// Per class: `sum over classes at levels <= its level of lambda_i E[S_i^2] / 2`.
    residual: Vec<f64>,
    /// Total utilisation per server.
    rho: f64,
}

fn validate(classes: &[PriorityClass], servers: f64) -> Result<Levels> {
    if classes.is_empty() {
        return Err(AnalyticError::NotApplicable(
            "a priority station needs at least one class".into(),
        ));
    }
    let mut previous_level = 0;
    for (k, c) in classes.iter().enumerate() {
        check::non_negative(&format!("lambda[{k}]"), c.lambda)?;
        check::positive(&format!("mean_service[{k}]"), c.mean_service)?;
        check::non_negative(&format!("scv[{k}]"), c.scv)?;
        if c.level < previous_level {
            return Err(AnalyticError::InvalidParameter {
                what: format!("level[{k}] (classes must be sorted by level)"),
                value: f64::from(c.level),
            });
        }
        previous_level = c.level;
    }
    // per level: its load per server and its residual-work term
    let mut sigma = Vec::with_capacity(classes.len());
    let mut residual = Vec::with_capacity(classes.len());
    let mut above = 0.0;
    let mut residual_above = 0.0;
    let mut start = 0;
    while start < classes.len() {
        let level = classes[start].level;
        let end = start + classes[start..].partition_point(|c| c.level == level);
        let load: f64 = classes[start..end]
            .iter()
            .map(|c| c.lambda * c.mean_service / servers)
            .sum();
        let res: f64 = classes[start..end]
            .iter()
            .map(|c| c.lambda * (1.0 + c.scv) * c.mean_service * c.mean_service / 2.0)
            .sum();
        for _ in start..end {
            sigma.push((above, above + load));
            residual.push(residual_above + res);
        }
        above += load;
        residual_above += res;
        start = end;
    }
    let rho = check::stable("priority station", above)?;
    Ok(Levels {
        sigma,
        residual,
        rho,
    })
}

fn assemble(classes: &[PriorityClass], waits: &[f64], servers: f64, rho: f64) -> PriorityMetrics {
    let per_class: Vec<StationMetrics> = classes
        .iter()
        .zip(waits)
        .map(|(c, &w)| {
            StationMetrics::from_wait(
                c.lambda,
                c.mean_service,
                w,
                Some(c.lambda * c.mean_service / servers),
            )
        })
        .collect();
    PriorityMetrics {
        throughput: classes.iter().map(|c| c.lambda).sum(),
        utilisation: rho,
        mean_number: per_class.iter().map(|m| m.mean_number).sum(),
        classes: per_class,
    }
}

/// M/G/1 with non-preemptive (head-of-the-line) priority levels: Cobham's formula.
///
/// `W_k = W0 / ((1 - sigma_{l-1}) (1 - sigma_l))` for a class at level `l`, with
/// `W0 = sum_i lambda_i E[S_i^2] / 2` over all classes (the mean residual work in service)
/// and `sigma_l` the load of levels `1..=l`; `R_k = W_k + E[S_k]` (A. Cobham, "Priority
/// assignment in waiting line problems", Operations Research 2, 1954; Kleinrock, *Queueing
/// Systems* vol. 2, eq. 3.30). Exact for Poisson classes and any service laws.
///
/// Errors: `InvalidParameter` for a negative or non-finite rate, a non-positive mean, a
/// negative scv, or classes not sorted by level; `NotApplicable` for no class; `Unstable`
/// when the total load `sum lambda_k E[S_k] >= 1`.
pub fn mg1_priority_nonpreemptive(classes: &[PriorityClass]) -> Result<PriorityMetrics> {
    let levels = validate(classes, 1.0)?;
    let w0 = levels.residual.last().copied().unwrap_or(0.0);
    let waits: Vec<f64> = levels
        .sigma
        .iter()
        .map(|&(above, upto)| w0 / ((1.0 - above) * (1.0 - upto)))
        .collect();
    Ok(assemble(classes, &waits, 1.0, levels.rho))
}

/// M/G/1 with preemptive-resume priority levels (FCFS and no preemption within a level).
///
/// `R_k = E[S_k] / (1 - sigma_{l-1}) + (sum_{i at levels <= l} lambda_i E[S_i^2] / 2) /
/// ((1 - sigma_{l-1}) (1 - sigma_l))` (Kleinrock, *Queueing Systems* vol. 2, eq. 3.65;
/// Harchol-Balter, *Performance Modeling and Design of Computer Systems*, ch. 32). Exact. The
/// reported wait is `R_k - E[S_k]`: the time in system not spent in the class's own service,
/// interruptions included.
///
/// The levels above a saturated level would still have a steady state, but this function
/// refuses the whole station when the total load is `>= 1`.
///
/// Errors: as [`mg1_priority_nonpreemptive`].
pub fn mg1_priority_preemptive(classes: &[PriorityClass]) -> Result<PriorityMetrics> {
    let levels = validate(classes, 1.0)?;
    let waits: Vec<f64> = classes
        .iter()
        .zip(levels.sigma.iter().zip(&levels.residual))
        .map(|(c, (&(above, upto), &res))| {
            let response = c.mean_service / (1.0 - above) + res / ((1.0 - above) * (1.0 - upto));
            response - c.mean_service
        })
        .collect();
    Ok(assemble(classes, &waits, 1.0, levels.rho))
}

/// Relative tolerance for "the same mean" and "exponential" in [`mmc_priority_nonpreemptive`].
const SAME_SERVICE_TOLERANCE: f64 = 1e-12;

/// M/M/c with non-preemptive priority levels, every class with the same exponential service.
///
/// `W_k = C(c, a) / (c mu (1 - sigma_{l-1}) (1 - sigma_l))`, with `C` the Erlang C
/// probability ([`erlang_c`]) at the total offered load `a = sum lambda_i / mu` and `sigma`
/// the load per server (`sum lambda_i / (c mu)`) of levels `1..=l`; `R_k = W_k + 1/mu`
/// (Cobham 1954; Gross and Harris, *Fundamentals of Queueing Theory*, 4th ed., 3.4.1). Exact.
/// At `c = 1` it is [`mg1_priority_nonpreemptive`] with exponential services.
///
/// Errors: as [`mg1_priority_nonpreemptive`], plus `InvalidParameter` for `servers == 0` and
/// `NotApplicable` when the classes' mean services differ or a scv is not 1 (each within a
/// relative `1e-12`): the formula needs one exponential service law for all.
pub fn mmc_priority_nonpreemptive(
    classes: &[PriorityClass],
    servers: u32,
) -> Result<PriorityMetrics> {
    let c = f64::from(check::at_least("servers", servers, 1)?);
    let levels = validate(classes, c)?;
    let mean = classes[0].mean_service;
    for (k, class) in classes.iter().enumerate() {
        if (class.mean_service - mean).abs() > SAME_SERVICE_TOLERANCE * mean.max(class.mean_service)
            || (class.scv - 1.0).abs() > SAME_SERVICE_TOLERANCE
        {
            return Err(AnalyticError::NotApplicable(format!(
                "M/M/c priority needs the same exponential service for every class; class {k} \
                 has mean {} and scv {} (class 0: mean {mean})",
                class.mean_service, class.scv
            )));
        }
    }
    let p_wait = erlang_c(servers, levels.rho * c)?;
    let waits: Vec<f64> = levels
        .sigma
        .iter()
        .map(|&(above, upto)| p_wait * mean / (c * (1.0 - above) * (1.0 - upto)))
        .collect();
    Ok(assemble(classes, &waits, c, levels.rho))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::{mg1, mmc};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    fn class(lambda: f64, mean_service: f64, scv: f64, level: u32) -> PriorityClass {
        PriorityClass {
            lambda,
            mean_service,
            scv,
            level,
        }
    }

    #[test]
    fn two_class_mm1_nonpreemptive_textbook_values() {
        // lambda1 = lambda2 = 0.4, mu = 1: W0 = 0.8, W1 = 0.8/0.6, W2 = 0.8/(0.6 * 0.2)
        let m = mg1_priority_nonpreemptive(&[class(0.4, 1.0, 1.0, 1), class(0.4, 1.0, 1.0, 2)])
            .unwrap();
        assert!(close(m.classes[0].mean_wait, 0.8 / 0.6, 1e-12));
        assert!(close(m.classes[1].mean_wait, 0.8 / (0.6 * 0.2), 1e-12));
        assert!((m.classes[1].mean_wait - 6.6667).abs() < 1e-4);
        assert!(close(m.classes[0].mean_response, 0.8 / 0.6 + 1.0, 1e-12));
        assert!(close(m.utilisation, 0.8, 1e-12));
        assert!(close(m.throughput, 0.8, 1e-12));
        let little = 0.4 * (0.8 / 0.6 + 1.0) + 0.4 * (0.8 / 0.12 + 1.0);
        assert!(close(m.mean_number, little, 1e-12));
    }

    #[test]
    fn nonpreemptive_conservation_law() {
        // sum rho_k W_k = rho W_FCFS (Kleinrock's conservation law), any service laws
        let classes = [
            class(0.1, 2.0, 0.0, 1),
            class(0.2, 0.5, 3.0, 2),
            class(0.15, 1.5, 1.0, 2),
            class(0.05, 3.0, 0.5, 4),
        ];
        let m = mg1_priority_nonpreemptive(&classes).unwrap();
        let rho: f64 = classes.iter().map(|c| c.lambda * c.mean_service).sum();
        let w0: f64 = classes
            .iter()
            .map(|c| c.lambda * (1.0 + c.scv) * c.mean_service.powi(2) / 2.0)
            .sum();
        let weighted: f64 = classes
            .iter()
            .zip(&m.classes)
            .map(|(c, r)| c.lambda * c.mean_service * r.mean_wait)
            .sum();
        assert!(close(weighted, rho * w0 / (1.0 - rho), 1e-12));
        // classes sharing level 2 share its wait
        assert_eq!(m.classes[1].mean_wait, m.classes[2].mean_wait);
        assert!(m.classes[0].mean_wait < m.classes[1].mean_wait);
        assert!(m.classes[1].mean_wait < m.classes[3].mean_wait);
    }

    #[test]
    fn one_class_or_one_level_is_fcfs() {
        for scv in [0.0, 1.0, 2.5] {
            let fcfs = mg1(0.6, 1.2, scv).unwrap();
            let np = mg1_priority_nonpreemptive(&[class(0.6, 1.2, scv, 7)]).unwrap();
            let pr = mg1_priority_preemptive(&[class(0.6, 1.2, scv, 7)]).unwrap();
            for m in [&np, &pr] {
                assert!(close(m.classes[0].mean_wait, fcfs.mean_wait, 1e-12));
                assert!(close(m.classes[0].mean_response, fcfs.mean_response, 1e-12));
                assert!(close(m.mean_number, fcfs.mean_number, 1e-12));
            }
        }
        let mmc4 = mmc(3.0, 1.0, 4).unwrap();
        let p = mmc_priority_nonpreemptive(&[class(3.0, 1.0, 1.0, 1)], 4).unwrap();
        assert!(close(p.classes[0].mean_wait, mmc4.mean_wait, 1e-12));
        // two classes at one level: both have the FCFS M/M/c wait
        let p = mmc_priority_nonpreemptive(&[class(1.0, 1.0, 1.0, 1), class(2.0, 1.0, 1.0, 1)], 4)
            .unwrap();
        assert!(close(p.classes[1].mean_wait, mmc4.mean_wait, 1e-12));
        assert!(close(p.utilisation, 0.75, 1e-12));
    }

    #[test]
    fn preemptive_high_class_sees_an_mg1_alone() {
        let classes = [class(0.3, 1.0, 0.5, 1), class(0.4, 1.5, 2.0, 2)];
        let pr = mg1_priority_preemptive(&classes).unwrap();
        let alone = mg1(0.3, 1.0, 0.5).unwrap();
        assert!(close(
            pr.classes[0].mean_response,
            alone.mean_response,
            1e-12
        ));
        // low class by hand: sigma1 = 0.3, sigma2 = 0.9,
        // R2 = 1.5/0.7 + (0.3*1.5*1/2 + 0.4*3*2.25/2)/(0.7*0.1)
        let r2 = 1.5 / 0.7 + (0.3 * 1.5 / 2.0 + 0.4 * 3.0 * 2.25 / 2.0) / (0.7 * 0.1);
        assert!(close(pr.classes[1].mean_response, r2, 1e-12));
        // preemption helps the high class and hurts the low one relative to non-preemptive
        let np = mg1_priority_nonpreemptive(&classes).unwrap();
        assert!(pr.classes[0].mean_response < np.classes[0].mean_response);
        assert!(pr.classes[1].mean_response > np.classes[1].mean_response);
    }

    #[test]
    fn mmc_with_one_server_is_the_mg1_formula() {
        let classes = [
            class(0.2, 0.8, 1.0, 1),
            class(0.3, 0.8, 1.0, 2),
            class(0.4, 0.8, 1.0, 3),
        ];
        let a = mmc_priority_nonpreemptive(&classes, 1).unwrap();
        let b = mg1_priority_nonpreemptive(&classes).unwrap();
        for (x, y) in a.classes.iter().zip(&b.classes) {
            assert!(close(x.mean_wait, y.mean_wait, 1e-12));
            assert!(close(x.mean_number, y.mean_number, 1e-12));
        }
        // c = 3 by hand: lambda = 2.7, mu = 1, rho = 0.9, sigma_1 = 0.3, sigma_2 = 0.9
        let classes = [class(0.9, 1.0, 1.0, 1), class(1.8, 1.0, 1.0, 2)];
        let m = mmc_priority_nonpreemptive(&classes, 3).unwrap();
        let pc = erlang_c(3, 2.7).unwrap();
        assert!(close(m.classes[0].mean_wait, pc / (3.0 * 0.7), 1e-12));
        assert!(close(m.classes[1].mean_wait, pc / (3.0 * 0.7 * 0.1), 1e-12));
    }

    #[test]
    fn refusals() {
        let ok = class(0.2, 1.0, 1.0, 1);
        assert!(matches!(
            mg1_priority_nonpreemptive(&[ok, class(0.8, 1.0, 1.0, 2)]),
            Err(AnalyticError::Unstable { .. })
        ));
        assert!(matches!(
            mg1_priority_preemptive(&[class(0.2, 1.0, 1.0, 2), ok]),
            Err(AnalyticError::InvalidParameter { .. })
        ));
        assert!(mg1_priority_nonpreemptive(&[]).is_err());
        assert!(mg1_priority_nonpreemptive(&[class(f64::NAN, 1.0, 1.0, 1)]).is_err());
        assert!(mg1_priority_nonpreemptive(&[class(0.1, 0.0, 1.0, 1)]).is_err());
        assert!(mg1_priority_nonpreemptive(&[class(0.1, 1.0, -1.0, 1)]).is_err());
        assert!(matches!(
            mmc_priority_nonpreemptive(&[ok, class(0.2, 1.1, 1.0, 2)], 2),
            Err(AnalyticError::NotApplicable(_))
        ));
        assert!(matches!(
            mmc_priority_nonpreemptive(&[ok, class(0.2, 1.0, 0.0, 2)], 2),
            Err(AnalyticError::NotApplicable(_))
        ));
        assert!(mmc_priority_nonpreemptive(&[ok], 0).is_err());
    }
}
