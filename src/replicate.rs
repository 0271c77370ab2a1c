//! Independent replications in parallel, with warm-up and the sequential precision rule.
//!
//! Replication `r` draws from streams seeded by `(seed, r, stream)` only, runs on whichever
//! rayon thread picks it up, and its results are collected in index order and reduced serially,
//! so an experiment gives bit-identical numbers on 1 thread or 16.

use rayon::prelude::*;
use serde::Serialize;

use crate::engine::{RunLength, Simulation};
use crate::metrics::{class_metric, measure};
use crate::scenario::{Scenario, Warmup};
use crate::stats::ConfidenceInterval;

/// Settings of one experiment (the scenario's `[run]` after command-line overrides).
#[derive(Clone, Debug)]
pub struct Options {
    /// Master seed.
    pub seed: u64,
    /// Replications to start with.
    pub replications: u32,
    /// Observations per replication after the warm-up.
    pub length: u64,
    /// Warm-up rule.
    pub warmup: Warmup,
    /// Target relative half-width of the intervals of `metrics` at `level`.
    pub precision: Option<f64>,
    /// Confidence level the precision target refers to (0.95 for `run`, 0.99 for `validate`).
    pub level: f64,
    /// The metrics the target applies to: replications are added until every one meets it.
    pub metrics: Vec<String>,
    /// Most replications the precision rule may use.
    pub max_replications: u32,
    /// Worker threads (0: one per core).
    pub threads: usize,
}

impl Options {
    /// The scenario's own settings.
    pub fn from_scenario(sc: &Scenario) -> Options {
        let r = &sc.run;
        Options {
            seed: r.seed,
            replications: r.replications,
            length: r.length,
            warmup: r.warmup,
            precision: r.precision,
            level: 0.95,
            metrics: vec![
                r.metric
                    .clone()
                    .unwrap_or_else(|| class_metric(&sc.network, 0)),
            ],
            max_replications: r.max_replications,
            threads: 0,
        }
    }
}

/// How the warm-up was settled.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WarmupReport {
    /// Observations discarded at the start of every replication.
    pub observations: u64,
    /// `"mser5"` (found on a pilot replication) or `"fixed"`.
    pub method: &'static str,
    /// True when MSER's minimum sat at its n/2 limit: the pilot was too short to see a steady
    /// state; lengthen the run.
    pub at_limit: bool,
}

/// Why an experiment could not run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The precision metric is not one the scenario reports.
    #[error("unknown metric {0:?} (the names are listed by `parsim run --json`)")]
    UnknownMetric(String),
    /// The thread pool could not be built.
    #[error("cannot start worker threads: {0}")]
    Threads(String),
}

/// The outcome of an experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// Metric names, in report order.
    pub metrics: Vec<String>,
    /// One row per replication, values aligned with `metrics`.
    pub replications: Vec<Vec<f64>>,
    /// The warm-up used.
    pub warmup: WarmupReport,
    /// Events processed over all replications (pilot excluded).
    pub events: u64,
    /// True when a precision target was set and met.
    pub precision_met: Option<bool>,
}

impl Experiment {
    /// The confidence interval of metric `i` at `level` across replications.
    pub fn interval(&self, i: usize, level: f64) -> ConfidenceInterval {
        let values: Vec<f64> = self.replications.iter().map(|r| r[i]).collect();
        ConfidenceInterval::from_values(&values, level)
    }

    /// The index of a metric by name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m == name)
    }
}

struct Replication {
    values: Vec<(String, f64)>,
    events: u64,
}

fn replicate(sc: &Scenario, opt: &Options, warmup: u64, r: u64) -> Replication {
    let mut sim = Simulation::new(&sc.network, opt.seed, r);
    let summary = sim.run(RunLength {
        warmup,
        length: opt.length,
    });
    Replication {
        values: measure(&sc.network, sim.recorder(), &summary),
        events: summary.events,
    }
}

/// Settles the warm-up: fixed, or MSER-5 over a pilot replication (its own stream, index
/// `u64::MAX`, so it shares no draws with the measured replications).
pub fn settle_warmup(sc: &Scenario, opt: &Options) -> WarmupReport {
    match opt.warmup {
        Warmup::Fixed(n) => WarmupReport {
            observations: n,
            method: "fixed",
            at_limit: false,
        },
        Warmup::Mser5 => {
            let mut sim = Simulation::new(&sc.network, opt.seed, u64::MAX);
            sim.record_series();
            sim.run(RunLength {
                warmup: 0,
                length: opt.length,
            });
            let t = sim.series().and_then(|s| s.truncation());
            WarmupReport {
                observations: t.map_or(0, |t| t.observations),
                method: "mser5",
                at_limit: t.is_some_and(|t| t.at_limit),
            }
        }
    }
}

/// Runs the experiment: warm-up, the first batch of replications, then more batches of the
/// same size while the precision target is unmet and the budget allows. `progress` is told
/// each replication as it finishes.
pub fn run(
    sc: &Scenario,
    opt: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Experiment, RunError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opt.threads)
        .build()
        .map_err(|e| RunError::Threads(e.to_string()))?;
    let warmup = settle_warmup(sc, opt);
    let batch = u64::from(opt.replications);
    let mut rows: Vec<Replication> = Vec::new();
    let mut metric_indices: Option<Vec<usize>> = None;
    let mut precision_met = None;
    loop {
        let start = rows.len() as u64;
        let end = (start + batch).min(u64::from(opt.max_replications.max(opt.replications)));
        let fresh: Vec<Replication> = pool.install(|| {
            (start..end)
                .into_par_iter()
                .map(|r| {
                    let rep = replicate(sc, opt, warmup.observations, r);
                    progress(r);
                    rep
                })
                .collect()
        });
        rows.extend(fresh);
        let Some(target) = opt.precision else { break };
        let indices = match &metric_indices {
            Some(found) => found,
            None => metric_indices.insert(
                opt.metrics
                    .iter()
                    .map(|m| {
                        rows[0]
                            .values
                            .iter()
                            .position(|(n, _)| n == m)
                            .ok_or_else(|| RunError::UnknownMetric(m.clone()))
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        let met = indices.iter().all(|&i| {
            let values: Vec<f64> = rows.iter().map(|r| r.values[i].1).collect();
            ConfidenceInterval::from_values(&values, opt.level).relative_half_width() <= target
        });
        precision_met = Some(met);
        if met || end >= u64::from(opt.max_replications) {
            break;
        }
    }
    Ok(Experiment {
        metrics: rows[0].values.iter().map(|(n, _)| n.clone()).collect(),
        events: rows.iter().map(|r| r.events).sum(),
        replications: rows
            .into_iter()
            .map(|r| r.values.into_iter().map(|(_, v)| v).collect())
            .collect(),
        warmup,
        precision_met,
    })
}
