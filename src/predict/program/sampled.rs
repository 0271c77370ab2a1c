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
//! Where the whole graph is over the budget, a long outermost loop is sampled over its first
//! iterations and each sample extended ([`extended`]).
//!
//! Each sample draws from its own stream ([`crate::rng::stream`] of a fixed seed and the
//! sample's index), and the samples are summed in their order, so the estimate is the same on
//! any number of threads.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::evaluation;
use super::graph::{Duration, Graph};
use crate::analytic::cost::{allowance, budget_text, scaled, with_budget};
use crate::program::Program;
use crate::program::repetition::OuterLoop;
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

/// Node and edge visits the sampling may make before it stops, at budget factor 1 (the two
/// samplings of `benches/scale/halo_allreduce_64x64.toml`'s cut graph, about 1e8 visits each,
/// take about 0.25 s of CPU together on this project's 2-core Xeon: `perf`, 2026-12-01).
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
    let run = sample_until(g, &[], |ends, _| ends.iter().copied().fold(0.0, f64::max))?;
    Ok(Sampled {
        makespan: run.value,
        finish: run.finish,
    })
}

/// What [`sample_until`] found.
struct Run {
    /// The mean of the samples' values, with its 95% interval.
    value: ConfidenceInterval,
    /// Per rank: its mean finish time.
    finish: Vec<f64>,
    /// Per sample: the latest time of each set of marked nodes.
    maxima: Vec<Vec<f64>>,
    /// In every sample, every set's nodes a constant apart: each node's time after the set's
    /// latest is the same as the first set's in the graph's mean-value times (see [`sample`]).
    aligned: bool,
}

/// Samples `g` until the mean of `value(ranks' finishes, maxima of the marked sets)` over the
/// samples has its 95% interval within [`TARGET`] of it (at least [`MIN_SAMPLES`], at most
/// what the budget affords), or why not: [`MIN_SAMPLES`] over the budget.
fn sample_until(
    g: &Graph<'_>,
    marks: &[Vec<u32>],
    value: impl Fn(&[f64], &[f64]) -> f64,
) -> Result<Run, String> {
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
    let alignment = Alignment::of(g, marks);
    let mut values: Vec<f64> = Vec::new();
    let mut maxima: Vec<Vec<f64>> = Vec::new();
    let mut finish = vec![0.0; finals.len()];
    let mut aligned = true;
    loop {
        let start = values.len();
        let batch: Vec<Draw> = (start..start + BATCH)
            .into_par_iter()
            .map_init(
                || vec![0.0; g.len()],
                |times, i| sample(g, &finals, marks, &alignment, times, i as u64),
            )
            .collect();
        for d in batch {
            values.push(value(&d.ends, &d.latest));
            finish.iter_mut().zip(&d.ends).for_each(|(f, e)| *f += e);
            maxima.push(d.latest);
            aligned &= d.aligned;
        }
        let ci = ConfidenceInterval::from_values(&values, 0.95);
        let n = values.len();
        let settled = n >= MIN_SAMPLES && ci.relative_half_width() <= TARGET;
        // a zero-width interval (nothing random reaches the end) is settled too
        if settled || ci.half_width == 0.0 || n + BATCH > affordable {
            finish.iter_mut().for_each(|f| *f /= n as f64);
            return Ok(Run {
                value: ci,
                finish,
                maxima,
                aligned,
            });
        }
    }
}

/// The constant gaps [`sample`] checks the marked sets' nodes against: each node of the first
/// set behind that set's latest in the graph's mean-value times, to the rounding of sums.
struct Alignment {
    /// Per node of the first set: its time behind the set's latest.
    behind: Vec<f64>,
    /// The rounding allowed.
    tolerance: f64,
}

impl Alignment {
    fn of(g: &Graph<'_>, marks: &[Vec<u32>]) -> Alignment {
        let horizon = g.time.iter().copied().fold(0.0, f64::max);
        let behind = marks.first().map_or_else(Vec::new, |set| {
            let latest = set.iter().fold(0.0_f64, |m, &v| m.max(g.time[v as usize]));
            set.iter().map(|&v| latest - g.time[v as usize]).collect()
        });
        Alignment {
            behind,
            tolerance: 1e-9 * horizon,
        }
    }

    /// Whether `times` of `set`'s nodes, whose latest is `latest`, have the first set's gaps.
    fn holds(&self, set: &[u32], latest: f64, times: &[f64]) -> bool {
        set.iter()
            .zip(&self.behind)
            .all(|(&v, b)| (latest - times[v as usize] - b).abs() <= self.tolerance)
    }
}

/// What one sample found.
struct Draw {
    /// Each rank's finish.
    ends: Vec<f64>,
    /// The latest time of each marked set.
    latest: Vec<f64>,
    /// Every marked set's nodes with the gaps of the [`Alignment`].
    aligned: bool,
}

/// One sample: every random duration of `g` drawn from stream `index`, each node's finish
/// time in `times`.
fn sample(
    g: &Graph<'_>,
    finals: &[u32],
    marks: &[Vec<u32>],
    alignment: &Alignment,
    times: &mut [f64],
    index: u64,
) -> Draw {
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
    let latest: Vec<f64> = marks
        .iter()
        .map(|set| set.iter().fold(0.0_f64, |m, &v| m.max(times[v as usize])))
        .collect();
    let aligned = marks
        .iter()
        .zip(&latest)
        .all(|(set, &l)| alignment.holds(set, l, times));
    Draw {
        ends: finals.iter().map(|&f| times[f as usize]).collect(),
        latest,
        aligned,
    }
}

/// The fewest iterations of a loop the extension samples: two increments to compare (the
/// first from the program's start).
pub const FIRST: i64 = 2;

/// How closely, where the ranks do not end each iteration aligned, the last two increments
/// per iteration must be shown to agree (their mean difference plus its 95% interval, relative
/// to the last) for the extension to take the last for every iteration left out.
pub const SETTLED: f64 = 1e-2;

/// The sampled makespan of `prog` extended over loop `l` from its first iterations: the
/// program cut to the loop's first `k` iterations (2, then 4, 8, ... below the loop's count;
/// with a mean wait before each crossing of the links in `waits`, when given) is sampled, and
/// each sample's makespan extended by its own last increment per iteration (of the latest
/// rank's time at the iteration's end) for each iteration left out, when either
///
/// - in every sample the ranks end every iteration a constant apart, the same constants each
///   time (a collective whose last round every rank waits for): every iteration after the
///   first then starts from the same state up to a shift, so their increments are independent
///   draws of one law, and the extension is exact in expectation (if no message sent in one
///   iteration is received in a later one, which the graph does not record); or
/// - the last two increments' mean difference, with its 95% interval, is within [`SETTLED`]
///   of the last (an approximation, said in the label).
///
/// The cut's graph may have as many activities as the sampling's budget can visit
/// [`MIN_SAMPLES`] times. Returns the estimate and what the label adds, or why not.
pub fn extended(
    prog: &Program,
    l: OuterLoop,
    waits: Option<&FxHashMap<u64, f64>>,
) -> Result<(Sampled, String), String> {
    let factor = crate::analytic::cost::factor();
    // the graph limit, raised to what MIN_SAMPLES samples can visit (about 3 visits a node)
    let nodes = scaled(SAMPLED_WORK) / (3 * MIN_SAMPLES) as f64;
    let raised = factor * (nodes / super::graph::limit() as f64).max(1.0);
    let mut k = FIRST;
    let mut shown = f64::NAN;
    while k < l.times {
        let cut = prog.cut(l, k);
        let graph = with_budget(raised, || evaluation::activity_graph(&cut, waits))?;
        let g = graph.map_err(|why| format!("its first {k} iterations: {why}"))?;
        let marks = super::periodic::iteration_ends(&g, l, k)?;
        let left = (l.times - k) as f64;
        let n = k as usize;
        let increment = |m: &[f64], j: usize| m[j] - if j == 0 { 0.0 } else { m[j - 1] };
        let run = sample_until(&g, &marks, |ends, m| {
            ends.iter().copied().fold(0.0, f64::max) + left * increment(m, n - 1)
        })
        .map_err(|why| format!("its first {k} iterations: {why}"))?;
        let increments =
            |j: usize| -> Vec<f64> { run.maxima.iter().map(|m| increment(m, j)).collect() };
        let lasts = increments(n - 1);
        let last = ConfidenceInterval::from_values(&lasts, 0.95);
        let how = if run.aligned {
            format!(
                "the ranks end each of them a constant apart in every sample, so every later iteration is an independent draw of the last one's increment per iteration, {:.6e} on average",
                last.mean
            )
        } else {
            let change: Vec<f64> = lasts
                .iter()
                .zip(increments(n - 2))
                .map(|(a, b)| a - b)
                .collect();
            let change = ConfidenceInterval::from_values(&change, 0.95);
            shown = (change.mean.abs() + change.half_width) / last.mean.abs();
            // NaN (no increment to compare) is not settled
            if shown.is_nan() || shown > SETTLED {
                // twice the iterations, about twice the activities: refused before the walk
                let next = 2 * g.len();
                let allowed = with_budget(raised, super::graph::limit);
                if next > allowed && 2 * k < l.times {
                    return Err(format!(
                        "the ranks do not end each iteration aligned, and the sampled increment per iteration was not shown settled to {SETTLED:.0e} over the first {k} iterations ({shown:.1e}); the first {} would have about {next} activities, more than the {allowed} the sampling's budget lets it record; {}",
                        2 * k,
                        allowance(next as f64, allowed as f64 / factor)
                    ));
                }
                k *= 2;
                continue;
            }
            format!(
                "each sample's increment per iteration, {:.6e} on average, within {shown:.1e} of the one before (with the sampling's interval), taken as settled",
                last.mean
            )
        };
        let label = format!(
            "extended from the outermost loop's first {k} of {} iterations ({how}; taken for the {} left out)",
            l.times,
            l.times - k
        );
        return Ok((
            Sampled {
                makespan: run.value,
                finish: Vec::new(),
            },
            label,
        ));
    }
    Err(format!(
        "the ranks do not end each iteration aligned, and the sampled increment per iteration was not shown settled to {SETTLED:.0e} below the loop's count of {} iterations (the last: {shown:.1e})",
        l.times
    ))
}

/// The sampled makespan of a program, over its activity graph `graph` (durations as they
/// are) or, where that is over a budget, over the first iterations of its outermost loop
/// extended ([`extended`], with the waits `waits`); with what the label adds, or why neither
/// applies.
pub(super) fn sampled_makespan(
    prog: &Program,
    graph: Result<&Graph<'_>, &str>,
    waits: Option<&FxHashMap<u64, f64>>,
) -> Result<(Sampled, Vec<String>), String> {
    let why = match graph.map_err(str::to_owned).and_then(sampled) {
        Ok(s) => {
            let label = s.label();
            return Ok((s, vec![label]));
        }
        Err(why) => why,
    };
    let Some(l) = prog
        .outer_loop()
        .filter(|l| l.times > FIRST && super::stochastic::for_cost(&why))
    else {
        return Err(why);
    };
    match extended(prog, l, waits) {
        Ok((s, extension)) => {
            let label = s.label();
            Ok((s, vec![label, extension]))
        }
        Err(not) => Err(format!(
            "{why}; from the outermost loop's first iterations: {not}"
        )),
    }
}
