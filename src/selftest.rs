//! Tests of the statistics themselves: do nominal 95% intervals cover the truth 95% of the time?
//!
//! Each experiment is a complete, independent `parsim run` (its own seed, MSER-5 warm-up on its
//! own pilot, `replications` x `length`) on a model whose answer is known exactly; the coverage
//! is the fraction of experiments whose 95% interval of the class metric contains that answer.
//! A coverage clearly below 95% means biased estimates (warm-up too short) or underestimated
//! variance; clearly above means overestimated variance.

use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::metrics::network::class_metric;
use crate::predict::network::analyze;
use crate::replicate::{self, Options, RunError};
use crate::scenario::{self, Warmup};

/// A model with a known answer, as scenario text.
#[derive(Clone, Copy, Debug)]
pub struct KnownModel {
    /// Short name.
    pub name: &'static str,
    /// Scenario TOML.
    pub scenario: &'static str,
}

/// The built-in models: the bundled M/M/1 at rho 0.8 and M/H2/1 at rho 0.5 with SCV 4
/// (Pollaczek-Khinchine), and the bundled closed delay + two queues network at N = 4 (exact MVA;
/// its own file, since the bundled one has N = 16).
pub const MODELS: [KnownModel; 3] = [
    KnownModel {
        name: "M/M/1 rho 0.8",
        scenario: include_str!("../scenarios/mm1.toml"),
    },
    KnownModel {
        name: "closed delay+2 queues N=4",
        scenario: include_str!("selftest/closed.toml"),
    },
    KnownModel {
        name: "M/H2/1 rho 0.5 SCV 4",
        scenario: include_str!("../scenarios/mh21.toml"),
    },
];

/// How big each experiment is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoveragePlan {
    /// Independent experiments per model.
    pub experiments: u32,
    /// Replications per experiment.
    pub replications: u32,
    /// Observations per replication.
    pub length: u64,
    /// Seed of the first experiment; experiment `k` uses `seed + k`.
    pub seed: u64,
}

/// The coverage of one model.
#[derive(Clone, Debug, Serialize)]
pub struct Coverage {
    /// The model.
    pub model: String,
    /// The metric checked.
    pub metric: String,
    /// Its exact value.
    pub truth: f64,
    /// Experiments run.
    pub experiments: u32,
    /// Experiments whose 95% interval contained the truth.
    pub covered: u32,
    /// `covered / experiments`.
    pub fraction: f64,
    /// A 95% Wilson interval for the true coverage, from the binomial count.
    pub fraction_interval: (f64, f64),
    /// Mean of the experiments' point estimates, relative to the truth, minus 1 (bias).
    pub relative_bias: f64,
}

/// Runs the coverage experiment on `model`, experiments in parallel on `threads` threads.
pub fn coverage(
    model: &KnownModel,
    plan: CoveragePlan,
    threads: usize,
) -> Result<Coverage, RunError> {
    let sc =
        scenario::parse(model.scenario, Path::new(model.name)).expect("built-in models are valid");
    let net = sc
        .network()
        .expect("the self-test models are queueing networks");
    let metric = class_metric(net, 0);
    let truth = analyze(net)
        .predictions
        .iter()
        .find(|p| p.exact && p.metric == metric)
        .map(|p| p.value)
        .expect("built-in models have an exact answer");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RunError::Threads(e.to_string()))?;
    let estimates: Vec<(bool, f64)> = pool.install(|| {
        (0..plan.experiments)
            .into_par_iter()
            .map(|k| {
                let mut opt = Options::from_scenario(&sc);
                opt.seed = plan.seed + u64::from(k);
                opt.replications = plan.replications;
                opt.length = plan.length;
                opt.warmup = Warmup::Mser5;
                opt.precision = None;
                opt.threads = 1;
                let ex = replicate::run(&sc, &opt, &|_| {})?;
                let ci = ex.interval(0, 0.95);
                Ok((ci.contains(truth), ci.mean))
            })
            .collect::<Result<Vec<_>, RunError>>()
    })?;
    let covered = estimates.iter().filter(|e| e.0).count() as u32;
    let n = f64::from(plan.experiments);
    let fraction = f64::from(covered) / n;
    let mean_estimate = estimates.iter().map(|e| e.1).sum::<f64>() / n;
    Ok(Coverage {
        model: model.name.to_owned(),
        metric,
        truth,
        experiments: plan.experiments,
        covered,
        fraction,
        fraction_interval: wilson(fraction, n),
        relative_bias: mean_estimate / truth - 1.0,
    })
}

/// The range of coverages that `experiments` experiments are expected to show when the nominal
/// 95% intervals are right: the central 99.9% of a binomial count of `experiments` trials of
/// probability 0.95, as fractions. It narrows as experiments are added (92.6% to 97.1%
/// for 1000, 87% to 100% for 100), so a short check is not failed by its own sampling error and a
/// long one still finds a small miss.
pub fn expected_band(experiments: u32) -> (f64, f64) {
    const NOMINAL: f64 = 0.95;
    const TAIL: f64 = 0.0005;
    let n = u64::from(experiments);
    let mut cdf = 0.0;
    let (mut lo, mut hi) = (None, None);
    for k in 0..=n {
        let ln = statrs::function::factorial::ln_binomial(n, k)
            + k as f64 * NOMINAL.ln()
            + (n - k) as f64 * (1.0 - NOMINAL).ln();
        cdf += ln.exp();
        if lo.is_none() && cdf >= TAIL {
            lo = Some(k);
        }
        if hi.is_none() && cdf >= 1.0 - TAIL {
            hi = Some(k);
        }
    }
    let at = |k: Option<u64>| k.unwrap_or(n) as f64 / n.max(1) as f64;
    (at(lo), at(hi))
}

/// The Wilson score interval at 95% for a proportion `p` of `n` trials.
fn wilson(p: f64, n: f64) -> (f64, f64) {
    let z = Normal::standard().inverse_cdf(0.975);
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_band_follows_the_number_of_experiments() {
        let (lo, hi) = expected_band(1000);
        assert!(
            (0.925..0.93).contains(&lo) && (0.97..0.975).contains(&hi),
            "({lo}, {hi})"
        );
        // 100 experiments: a coverage of 91% (its own interval contains 95%) is no failure
        let (lo, hi) = expected_band(100);
        assert!(lo <= 0.89 && hi >= 0.99, "({lo}, {hi})");
        assert!(hi <= 1.0);
        let (lo, hi) = expected_band(100_000);
        assert!(lo > 0.947 && hi < 0.953, "({lo}, {hi})");
    }

    #[test]
    fn wilson_interval_brackets_the_proportion() {
        let (lo, hi) = wilson(0.95, 200.0);
        assert!(
            lo < 0.95 && hi > 0.95 && lo > 0.90 && hi < 0.98,
            "({lo}, {hi})"
        );
    }
}
