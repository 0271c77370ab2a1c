//! The FCFS waiting-time law of MAP/PH/1: a phase-type law on the work found by an arrival.

use super::dense::Dense;
use super::map::Map;
use super::map_ph1::model;
use super::ph::Ph;
use super::qbd::qbd;
use crate::analytic::check;
use crate::analytic::error::{AnalyticError, Result};
use crate::analytic::phase_type::PhaseType;

/// The most phases (jobs found times service phases) of [`map_ph1_wait`]'s law of the wait.
pub const WAIT_MAX_PHASES: usize = 200_000;

/// The FCFS wait in MAP/PH/1 ([`map_ph1_wait`]): 0 with probability `1 - p_wait`, else the
/// phase-type law `conditional`.
#[derive(Debug, Clone, PartialEq)]
pub struct FcfsWait {
    /// Probability that an arrival finds the server busy.
    pub p_wait: f64,
    /// The wait of an arrival that finds the server busy.
    pub conditional: PhaseType,
}

impl FcfsWait {
    /// `P(W <= x) = 1 - p_wait + p_wait F(x)`.
    ///
    /// Errors: as [`PhaseType::cdf`].
    pub fn cdf(&self, x: f64) -> Result<f64> {
        Ok(1.0 - self.p_wait + self.p_wait * self.conditional.cdf(x)?)
    }

    /// The `q`-quantile: 0 for `q <= 1 - p_wait`, else the conditional law's quantile at
    /// `(q - 1 + p_wait) / p_wait`.
    ///
    /// Errors: `InvalidParameter` unless `0 < q < 1`; as [`PhaseType::quantile`].
    pub fn quantile(&self, q: f64) -> Result<f64> {
        if !(q > 0.0 && q < 1.0) {
            return Err(AnalyticError::InvalidParameter {
                what: "quantile level (must be in (0, 1))".to_owned(),
                value: q,
            });
        }
        if q <= 1.0 - self.p_wait {
            return Ok(0.0);
        }
        let level = ((q - 1.0 + self.p_wait) / self.p_wait).min(1.0 - f64::EPSILON);
        self.conditional.quantile(level)
    }
}

/// The FCFS waiting time of MAP/PH/1, exact in law.
///
/// An arrival that finds `n >= 1` jobs, the one in service in phase `j`, waits the rest of
/// that service and `n - 1` whole services, whatever comes after it. The arrival-epoch law of
/// `(n, j)` is `y_n(j) = sum_i (pi_n)_{(i, j)} (D1 1)_i / lambda` with `pi_n = pi_1 R^{n-1}`
/// from [`qbd`] (Latouche and Ramaswami 1999, 3.5 and 6.4); the wait is the absorption time
/// of the chain on (jobs left, service phase) that starts in `y`: `S` within a job, `s beta`
/// from one job to the next, absorbed after the last. Levels are taken until the mass left
/// beyond them is below `1e-15` of `p_wait` (that mass is dropped); CDF and quantiles by
/// uniformization ([`PhaseType`]).
///
/// Errors: as [`map_ph1`](super::map_ph1); `TooCostly` when the law needs more than
/// [`WAIT_MAX_PHASES`] phases (close to saturation with a slow geometric decay).
pub fn map_ph1_wait(map: &Map, service: &Ph) -> Result<FcfsWait> {
    let lambda = map.lambda();
    check::stable("MAP/PH/1 station", lambda * service.mean())?;
    let solution = qbd(&model(map, service))?;
    let ms = service.phases();
    let arrivals: Vec<f64> = Dense::from_rows(map.d1())
        .row_sums()
        .into_iter()
        .map(|a| a / lambda)
        .collect();
    let seen = |level: &[f64]| -> Vec<f64> {
        let mut y = vec![0.0; ms];
        for (p, a) in level.chunks(ms).zip(&arrivals) {
            for (yj, pj) in y.iter_mut().zip(p) {
                *yj += pj * a;
            }
        }
        y
    };
    let p_wait: f64 = seen(&solution.tail_phases()).iter().sum();
    if p_wait <= 0.0 {
        return Err(AnalyticError::NotApplicable("no arrival waits".to_owned()));
    }
    let r = Dense::from_rows(&solution.r());
    let mut level = solution.level(1);
    let mut initial = Vec::new();
    let mut found = 0.0;
    while found < p_wait * (1.0 - 1e-15) {
        let y = seen(&level);
        let mass: f64 = y.iter().sum();
        found += mass;
        initial.extend(y);
        if mass <= 0.0 {
            break;
        }
        if initial.len() > WAIT_MAX_PHASES {
            return Err(AnalyticError::TooCostly {
                what: format!(
                    "the MAP/PH/1 wait: {} phases for the jobs found so far, over {WAIT_MAX_PHASES}",
                    initial.len()
                ),
                work: initial.len() as f64,
                budget: WAIT_MAX_PHASES as f64,
                allow: "a cap on phases, not raised by the budget factor: compare against simulation only"
                    .to_owned(),
            });
        }
        level = r.left_mul(&level);
    }
    let total: f64 = initial.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return Err(AnalyticError::NotApplicable("no arrival waits".to_owned()));
    }
    let initial: Vec<f64> = initial.into_iter().map(|v| v / total).collect();
    let levels = initial.len() / ms;
    let t = service.t();
    let exit = service.exit_rates();
    let beta = service.alpha();
    let rates: Vec<f64> = (0..ms).map(|j| -t[j][j]).collect();
    let next = (0..levels * ms)
        .map(|phase| {
            let (k, j) = (phase / ms, phase % ms);
            let mut moves: Vec<(usize, f64)> = (0..ms)
                .filter(|&l| l != j && t[j][l] > 0.0)
                .map(|l| (k * ms + l, t[j][l] / rates[j]))
                .collect();
            if k > 0 {
                moves.extend(
                    (0..ms)
                        .filter(|&l| beta[l] > 0.0)
                        .map(|l| ((k - 1) * ms + l, exit[j] * beta[l] / rates[j])),
                );
            }
            moves
        })
        .collect();
    let conditional = PhaseType::new(initial, rates.repeat(levels), next)?;
    Ok(FcfsWait {
        p_wait,
        conditional,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mam::{gim1, map_ph1};

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn renewal_arrivals_exponential_service_match_gim1_quantiles() {
        // M/M/1 at 0.8 and the H2/M/1 anchor (SCV 4, lambda 0.8, E[S] = 1)
        for arrivals in [
            Ph::exponential(0.8).unwrap(),
            Ph::h2_balanced(1.25, 4.0).unwrap(),
        ] {
            let map = Map::renewal(&arrivals).unwrap();
            let w = map_ph1_wait(&map, &Ph::exponential(1.0).unwrap()).unwrap();
            let g = gim1(&|x| arrivals.laplace(x).unwrap_or(f64::NAN), 0.8, 1.0, 1).unwrap();
            assert!(close(w.p_wait, g.p_wait, 1e-10));
            for q in [0.5, 0.9, 0.99] {
                let (a, b) = (w.quantile(q).unwrap(), g.wait_quantile(q).unwrap());
                assert!(close(a, b, 1e-8), "{q}: {a} {b}");
            }
            // the mean of the law is the mean wait
            let (mean, _) = w.conditional.moments().unwrap();
            let means = map_ph1(&map, &Ph::exponential(1.0).unwrap()).unwrap();
            assert!(close(w.p_wait * mean, means.metrics.mean_wait, 1e-9));
        }
    }

    #[test]
    fn mmpp2_erlang_wait_mean_and_refusals() {
        let map = Map::mmpp2([1.5, 0.3], [0.2, 0.4]).unwrap(); // rate 1.1
        let service = Ph::erlang(3, 3.0 / 0.6).unwrap(); // rho = 0.66
        let w = map_ph1_wait(&map, &service).unwrap();
        let means = map_ph1(&map, &service).unwrap();
        let (mean, _) = w.conditional.moments().unwrap();
        assert!(close(w.p_wait * mean, means.metrics.mean_wait, 1e-9));
        assert!(close(w.p_wait, means.p_wait, 1e-12));
        assert!(w.cdf(0.0).unwrap() > 0.0);
        assert!(w.quantile(1.0).is_err());
        assert_eq!(w.quantile(1e-6).unwrap(), 0.0);
        let slow = Ph::exponential(0.5).unwrap();
        assert!(map_ph1_wait(&map, &slow).is_err());
        // rho = 0.999: R = 0.999 per level, some 34,500 levels of 10 phases to a 1e-15 tail
        let heavy = map_ph1_wait(
            &Map::poisson(0.999).unwrap(),
            &Ph::erlang(10, 10.0).unwrap(),
        );
        assert!(matches!(heavy, Err(AnalyticError::TooCostly { .. })));
    }
}
