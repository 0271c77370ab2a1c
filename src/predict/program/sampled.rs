//! The sampled critical path of a program: the expected makespan of its activity graph
//! (`super::graph`) estimated by drawing every random duration from its own law and taking
//! the graph's longest path, sample after sample, until the mean's 95% confidence interval is
//! within [`TARGET`] of it (PERT's Monte Carlo, Van Slyke 1963).
//!
//! Unlike Clark's maxima ([`super::stochastic::clark`]), which read two moments of each law and
//! take every partial maximum as normal, a sample reads the whole law (its upper tail sets the
//! maxima of many ranks) and keeps every correlation of shared ancestors, so over the graph the
//! only error is the sampling's, which the interval states. What it shares with every method
//! over the graph is what the graph leaves out: contention (two messages on a link, two
//! requests at a disk unit), which the prediction's label names where it can happen. Set
//! beside the simulation, the difference is the contention's share of the makespan.
//!
//! Each sample draws from its own stream ([`crate::rng::stream`] of a fixed seed and the
//! sample's index), and the samples are summed in their order, so the estimate is the same on
//! any number of threads.

use rayon::prelude::*;

use super::graph::{Duration, Graph};
use crate::analytic::cost::{allowance, budget_text, scaled};
use crate::stats::ConfidenceInterval;

/// The method, before its label.
pub const METHOD: &str = "sampled critical path (the activity graph's longest path, each random duration drawn from its law)";

/// The relative half-width of the makespan's 95% interval at which sampling stops.
pub const TARGET: f64 = 5e-3;

/// The fewest samples an estimate rests on.
pub const MIN_SAMPLES: usize = 32;

/// The most samples taken (the interval is then whatever they give).
pub const MAX_SAMPLES: usize = 16_384;

/// Samples drawn between two checks of the interval.
const BATCH: usize = 32;

/// Node and edge visits the sampling may make before it stops, at budget factor 1 (about 0.2
/// s on one core of this project's 2-core Xeon).
pub const SAMPLED_WORK: f64 = 1e8;

/// The master seed of the samples' streams.
const SEED: u64 = 0x5A3D_17C0_9E11_2B47;

/// What the sampling found.
#[derive(Clone, Debug)]
pub struct Sampled {
    /// The makespan's mean over the samples, with its 95% interval.
    pub makespan: ConfidenceInterval,
    /// Per rank: its mean finish time over the samples.
    pub finish: Vec<f64>,
}

impl Sampled {
    /// What the prediction's label adds: the samples and the interval of their mean.
    pub fn label(&self) -> String {
        let within = if self.makespan.relative_half_width() <= TARGET {
            String::new()
        } else {
            format!(
                ", wider than the {:.2}% sampling stops at: the budget's {} visits were spent",
                100.0 * TARGET,
                budget_text(scaled(SAMPLED_WORK))
            )
        };
        format!(
            "{} samples; the sampling's 95% interval is +-{:.3e} (+-{:.2}%){within}",
            self.makespan.replications,
            self.makespan.half_width,
            100.0 * self.makespan.relative_half_width(),
        )
    }
}

/// The expected makespan of `g` (and each rank's expected finish) by sampling (see the module
/// documentation), or why not: the graph's nodes and edges times [`MIN_SAMPLES`] over the
/// budget.
pub fn sampled(g: &Graph<'_>) -> Result<Sampled, String> {
    let per_sample = (g.len() + g.edges()) as f64;
    let budget = scaled(SAMPLED_WORK);
    let affordable = (budget / per_sample).floor().min(MAX_SAMPLES as f64) as usize;
    if affordable < MIN_SAMPLES {
        let work = per_sample * MIN_SAMPLES as f64;
        return Err(format!(
            "too costly: {MIN_SAMPLES} samples of the activity graph's {} nodes and {} edges are {work:.1e} visits, more than the budget of {}; {}",
            g.len(),
            g.edges(),
            budget_text(budget),
            allowance(work, SAMPLED_WORK)
        ));
    }
    let finals = g.finals();
    let mut makespans: Vec<f64> = Vec::new();
    let mut finish = vec![0.0; finals.len()];
    loop {
        let start = makespans.len();
        let batch: Vec<Vec<f64>> = (start..start + BATCH)
            .into_par_iter()
            .map_init(
                || vec![0.0; g.len()],
                |times, i| sample(g, &finals, times, i as u64),
            )
            .collect();
        for ends in batch {
            makespans.push(ends.iter().copied().fold(0.0, f64::max));
            finish.iter_mut().zip(&ends).for_each(|(f, e)| *f += e);
        }
        let ci = ConfidenceInterval::from_values(&makespans, 0.95);
        let n = makespans.len();
        let settled = n >= MIN_SAMPLES && ci.relative_half_width() <= TARGET;
        // a zero-width interval (nothing random reaches the end) is settled too
        if settled || ci.half_width == 0.0 || n + BATCH > affordable {
            finish.iter_mut().for_each(|f| *f /= n as f64);
            return Ok(Sampled {
                makespan: ci,
                finish,
            });
        }
    }
}

/// One sample: every random duration of `g` drawn from stream `index`, each node's finish
/// time in `times`; returns each rank's finish.
fn sample(g: &Graph<'_>, finals: &[u32], times: &mut [f64], index: u64) -> Vec<f64> {
    let mut rng = crate::rng::stream(SEED, index, 0);
    times[0] = 0.0;
    for v in 1..g.len() {
        let start = g
            .preds(v as u32)
            .iter()
            .fold(0.0_f64, |m, &p| m.max(times[p as usize]));
        let d = match g.duration[v] {
            Duration::Fixed(c) => c,
            Duration::Random(i) => g.laws[i as usize].draw(&mut rng),
        };
        times[v] = start + d;
    }
    finals.iter().map(|&f| times[f as usize]).collect()
}
