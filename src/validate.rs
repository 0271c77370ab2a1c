//! Simulation against analysis, with verdicts that account for sampling error.
//!
//! An **exact** prediction *agrees* when it lies in the simulation's 99% confidence interval and
//! that interval's relative half-width meets the case's precision target, *disagrees* when it
//! lies outside, and is *imprecise* when it lies inside an interval wider than the target (the
//! replication budget ran out first). An **approximation** gets its signed relative error
//! `(analytic - simulated) / simulated` with an interval, and a verdict only against a
//! tolerance the case declares.

use serde::Serialize;

use crate::predict::{Bound, Prediction, analyze};
use crate::replicate::{self, Experiment, Options, RunError};
use crate::scenario::Scenario;

/// Confidence level of validation intervals.
pub const LEVEL: f64 = 0.99;

/// The verdict on one comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Exact value inside a precise enough interval.
    Agree,
    /// Exact value outside the interval, or approximation outside its declared tolerance.
    Disagree,
    /// Exact value inside an interval wider than the precision target.
    Imprecise,
    /// Approximation within its declared tolerance.
    WithinTolerance,
    /// Approximation with no declared tolerance: the error is reported, not judged.
    Reported,
    /// The simulated interval reaches into the analytic bounds.
    WithinBounds,
}

impl Verdict {
    /// The word printed in tables.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Disagree => "DISAGREE",
            Verdict::Imprecise => "imprecise",
            Verdict::WithinTolerance => "within tolerance",
            Verdict::Reported => "reported",
            Verdict::WithinBounds => "within bounds",
        }
    }
}

/// One row of a validation report.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Case (scenario) name.
    pub case: String,
    /// Metric compared.
    pub metric: String,
    /// Analytic method.
    pub method: String,
    /// Exact or approximation.
    pub exact: bool,
    /// Analytic value.
    pub analytic: f64,
    /// Simulated mean.
    pub simulated: f64,
    /// Half-width of its 99% interval.
    pub half_width: f64,
    /// For a bound: `[lower, upper]` (then `analytic` is their midpoint).
    pub bounds: Option<[f64; 2]>,
    /// `(analytic - simulated) / simulated`.
    pub relative_error: f64,
    /// Half-width of the relative error's interval (first order).
    pub relative_error_half_width: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Replications used.
    pub replications: u64,
}

/// How hard to try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effort {
    /// Short fixed runs (CI): a fifth of the declared length, 10 replications, precision target
    /// relaxed fivefold.
    Quick,
    /// The declared run length with the sequential rule on the case's first metric until the
    /// precision target is met or the replication budget is spent.
    Full,
}

/// Simulates and analyses one case and compares every selected prediction.
pub fn validate(
    sc: &Scenario,
    effort: Effort,
    threads: usize,
    seed: Option<u64>,
) -> Result<Vec<Comparison>, RunError> {
    let analysis = analyze(&sc.network);
    let wanted = |p: &Prediction| {
        sc.validate
            .metrics
            .as_ref()
            .is_none_or(|m| m.contains(&p.metric))
    };
    let predictions: Vec<&Prediction> = analysis.predictions.iter().filter(|p| wanted(p)).collect();
    let bounds: Vec<&Bound> = analysis
        .bounds
        .iter()
        .filter(|b| {
            sc.validate
                .metrics
                .as_ref()
                .is_none_or(|m| m.contains(&b.metric))
        })
        .collect();
    if predictions.is_empty() && bounds.is_empty() {
        return Ok(Vec::new());
    }
    let mut opt = Options::from_scenario(sc);
    opt.threads = threads;
    opt.seed = seed.unwrap_or(opt.seed);
    opt.level = LEVEL;
    opt.metric = predictions
        .first()
        .map_or_else(|| bounds[0].metric.clone(), |p| p.metric.clone());
    let mut target = sc.validate.precision;
    match effort {
        Effort::Quick => {
            opt.length = (opt.length / 5).max(2000);
            opt.replications = 10;
            opt.precision = None;
            target *= 5.0;
        }
        Effort::Full => {
            opt.precision = Some(target);
            opt.max_replications = opt.max_replications.max(opt.replications);
        }
    }
    let ex = replicate::run(sc, &opt, &|_| {})?;
    let mut rows = predictions
        .iter()
        .map(|p| compare(sc, &ex, p, target))
        .collect::<Result<Vec<_>, _>>()?;
    for b in bounds {
        rows.push(compare_bound(sc, &ex, b)?);
    }
    Ok(rows)
}

/// A bound is violated only when the whole simulated interval lies outside it.
fn compare_bound(sc: &Scenario, ex: &Experiment, b: &Bound) -> Result<Comparison, RunError> {
    let i = ex
        .index_of(&b.metric)
        .ok_or_else(|| RunError::UnknownMetric(b.metric.clone()))?;
    let ci = ex.interval(i, LEVEL);
    let outside = ci.mean + ci.half_width < b.lower || ci.mean - ci.half_width > b.upper;
    let mid = 0.5 * (b.lower + b.upper);
    Ok(Comparison {
        case: sc.name.clone(),
        metric: b.metric.clone(),
        method: b.method.clone(),
        exact: false,
        analytic: mid,
        bounds: Some([b.lower, b.upper]),
        simulated: ci.mean,
        half_width: ci.half_width,
        relative_error: (mid - ci.mean) / ci.mean,
        relative_error_half_width: (mid / ci.mean).abs() * ci.relative_half_width(),
        verdict: if outside {
            Verdict::Disagree
        } else {
            Verdict::WithinBounds
        },
        replications: ci.replications,
    })
}

fn compare(
    sc: &Scenario,
    ex: &Experiment,
    p: &Prediction,
    target: f64,
) -> Result<Comparison, RunError> {
    let i = ex
        .index_of(&p.metric)
        .ok_or_else(|| RunError::UnknownMetric(p.metric.clone()))?;
    let ci = ex.interval(i, LEVEL);
    let rel = (p.value - ci.mean) / ci.mean;
    let rel_hw = (p.value / ci.mean).abs() * ci.relative_half_width();
    let verdict = if p.exact {
        if !ci.contains(p.value) {
            Verdict::Disagree
        } else if ci.relative_half_width() <= target {
            Verdict::Agree
        } else {
            Verdict::Imprecise
        }
    } else {
        match sc.validate.tolerance {
            Some(tol) if rel.abs() <= tol => Verdict::WithinTolerance,
            Some(_) => Verdict::Disagree,
            None => Verdict::Reported,
        }
    };
    Ok(Comparison {
        case: sc.name.clone(),
        metric: p.metric.clone(),
        method: p.method.clone(),
        exact: p.exact,
        analytic: p.value,
        bounds: None,
        simulated: ci.mean,
        half_width: ci.half_width,
        relative_error: rel,
        relative_error_half_width: rel_hw,
        verdict,
        replications: ci.replications,
    })
}
