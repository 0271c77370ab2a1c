//! Simulation against analysis, with verdicts that account for sampling error.
//!
//! An **exact** prediction *agrees* when it lies in the simulation's 99% confidence interval and
//! that interval's relative half-width meets the case's precision target, *disagrees* when it
//! lies outside, and is *imprecise* when it lies inside an interval wider than the target (the
//! replication budget ran out first). An **approximation** gets its signed relative error
//! `(analytic - simulated) / simulated` with an interval, and a verdict only against a
//! tolerance the case declares (`tolerance`, or `tolerances` per method), judged with the
//! interval: *within tolerance* when the whole interval of the error lies within it, *outside
//! tolerance* when the whole interval lies beyond it, *undecided* when the interval straddles
//! it. A bound's error is measured from the simulated mean to the side it lies beyond (zero
//! between the bounds). An exact visits ratio (the traffic equations') is *reported*, not
//! judged: its simulated value counts the visits and cycles of one window, whose two ends cut
//! the cycles in progress, a bias of order `population / length` that its narrow interval does
//! not cover ([`window_ratio`]). A case where no method predicts any compared metric is a finding, *no prediction*,
//! unless it declares `expect_prediction = false`.
//!
//! A failed test of an exact statement is confirmed on a second, independent experiment before
//! it stands (see [`validate`]): with a hundred comparisons at 99%, about one fails by chance in
//! every suite run, and a validation that cries wolf that often is not read.

pub mod markdown;
pub mod measured;
pub mod plot;
pub mod record;
pub mod shard;
pub mod table;

use serde::{Deserialize, Serialize};

use crate::metrics::unknown_metric;
use crate::predict::{Bound, Prediction};
use crate::provenance::Provenance;
use crate::replicate::{self, Experiment, Options, RunError, StopFlag};
use crate::rng::derive_seed;
use crate::scenario::Scenario;
use crate::study::analyze_scenario;

/// Confidence level of validation intervals.
pub const LEVEL: f64 = 0.99;

/// The relative error the clock allows any simulated time (DESIGN section 3: below 1e-9): an
/// exact value this close to the mean of a deterministic run (whose interval has width zero)
/// lies inside it.
pub const CLOCK_RELATIVE_ERROR: f64 = 1e-9;

/// The verdict on one comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Exact value inside a precise enough interval.
    Agree,
    /// Exact value outside the interval, or a bound the whole interval misses.
    Disagree,
    /// Exact value inside an interval wider than the precision target.
    Imprecise,
    /// Approximation whose whole error interval lies within its declared tolerance.
    WithinTolerance,
    /// Approximation whose whole error interval lies beyond its declared tolerance.
    OutsideTolerance,
    /// Approximation whose error interval straddles its declared tolerance: more replications
    /// would decide.
    Undecided,
    /// No analytic method predicts any metric the case compares: nothing was checked.
    NoPrediction,
    /// No prediction, as the case declares (`expect_prediction = false`).
    NoPredictionExpected,
    /// Approximation with no declared tolerance, or an exact visits ratio ([`window_ratio`]):
    /// the error is reported, not judged.
    Reported,
    /// The simulated mean lies between the analytic bounds.
    WithinBounds,
    /// The simulated mean lies beyond a bound, by less than its interval's half-width: the
    /// bound holds within sampling error, and more replications would tell. Not a failure (a
    /// correct bound met exactly, as `N D_max` is by a deterministic bottleneck, gives it half
    /// the time), but not said to be within the bounds either.
    AtBound,
    /// A method that does not apply to the case, its reason in the row's method: nothing
    /// compared (listed so that a refusal, for cost or for an assumption, is seen).
    NotApplicable,
}

impl Verdict {
    /// True for the verdicts that make `parsim validate` exit 1: a confirmed disagreement of an
    /// exact value or a bound, an approximation outside its declared tolerance, or a case with
    /// no prediction it did not declare.
    pub fn fails(self) -> bool {
        matches!(
            self,
            Verdict::Disagree | Verdict::OutsideTolerance | Verdict::NoPrediction
        )
    }

    /// The verdict on an approximation with relative error `error +- half_width` against a
    /// declared `tolerance` (`None`: reported, not judged).
    pub fn of_approximation(error: f64, half_width: f64, tolerance: Option<f64>) -> Verdict {
        match tolerance {
            None => Verdict::Reported,
            Some(t) if error.abs() + half_width <= t => Verdict::WithinTolerance,
            Some(t) if error.abs() - half_width > t => Verdict::OutsideTolerance,
            Some(_) => Verdict::Undecided,
        }
    }

    /// Every verdict.
    pub const ALL: [Verdict; 12] = [
        Verdict::Agree,
        Verdict::Disagree,
        Verdict::Imprecise,
        Verdict::WithinBounds,
        Verdict::AtBound,
        Verdict::WithinTolerance,
        Verdict::OutsideTolerance,
        Verdict::Undecided,
        Verdict::Reported,
        Verdict::NoPrediction,
        Verdict::NoPredictionExpected,
        Verdict::NotApplicable,
    ];

    /// The verdict's word, the same in every output (table, Markdown, CSV, JSON).
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Disagree => "disagree",
            Verdict::Imprecise => "imprecise",
            Verdict::WithinTolerance => "within_tolerance",
            Verdict::OutsideTolerance => "outside_tolerance",
            Verdict::Undecided => "undecided",
            Verdict::NoPrediction => "no_prediction",
            Verdict::NoPredictionExpected => "no_prediction_expected",
            Verdict::Reported => "reported",
            Verdict::WithinBounds => "within_bounds",
            Verdict::AtBound => "at_bound",
            Verdict::NotApplicable => "not_applicable",
        }
    }
}

/// One row of a validation report. JSON and CSV write it as a flat [`record::ComparisonRecord`].
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "record::ComparisonRecord", from = "record::ComparisonRecord")]
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
    pub half_width_99: f64,
    /// For a bound: `[lower, upper]` (then `analytic` is their midpoint, which JSON and CSV do
    /// not write).
    pub bounds: Option<[f64; 2]>,
    /// `(analytic - simulated) / simulated`; for a bound, from the side the simulated mean lies
    /// beyond (zero when it lies between the bounds).
    pub relative_error: f64,
    /// Half-width of the relative error's 99% interval (first order).
    pub relative_error_half_width_99: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Replications used.
    pub replications: u64,
    /// When the first experiment disagreed and the case was run again on independent streams
    /// (see [`validate`]): the first experiment. The fields above then describe the second.
    pub first_run: Option<FirstRun>,
    /// The experiment the verdict was judged on (none for a case with nothing to compare, and
    /// for a sweep's rows, which carry their own).
    pub run: Option<RunIdentity>,
}

/// What identifies the experiment behind a comparison, as `parsim run` writes it: the scenario
/// file, parsim's version, the scenario's hash, the run id, the date, and the settings that
/// change its numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct RunIdentity {
    /// The scenario file.
    pub file: String,
    /// The parsim version that ran it.
    pub parsim_version: String,
    /// The hash of the scenario's text ([`crate::hash::text_hash`]).
    pub scenario_hash: String,
    /// The thread-independent run id ([`Provenance::run_id`]).
    pub run_id: String,
    /// The UTC date of the run.
    pub date: String,
    /// The experiment's master seed (the case's seed, or its confirmation seed).
    pub seed: u64,
    /// Observations measured per replication.
    pub length: u64,
    /// Observations discarded as warm-up in every replication.
    pub warmup: u64,
}

/// One experiment of a validation, with the identity its comparisons carry.
#[derive(Clone, Debug)]
pub struct ValidationRun {
    /// Its identity.
    pub identity: RunIdentity,
    /// Every replication's value of every metric.
    pub experiment: Experiment,
}

/// A validated case: its comparisons and the experiments they were judged on (one, or two when
/// a disagreement was confirmed on a second).
#[derive(Clone, Debug)]
pub struct CaseValidation {
    /// The rows of the report.
    pub rows: Vec<Comparison>,
    /// The experiments, in the order they ran.
    pub runs: Vec<ValidationRun>,
    /// What the experiments warn about (see [`replicate::warnings`]).
    pub warnings: Vec<String>,
}

/// How hard to try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effort {
    /// Short fixed runs (CI): a fifth of the declared length, 10 replications, precision target
    /// relaxed fivefold.
    Quick,
    /// The declared run length with the sequential rule on every exact prediction's metric until
    /// all meet the precision target or the replication budget is spent.
    Full,
}

/// How the cases of a validation are simulated: the effort, and what the command line
/// overrides of each case's `[run]`.
#[derive(Clone, Debug)]
pub struct ValidateOptions {
    /// How hard to try.
    pub effort: Effort,
    /// Worker threads (0: one per core); results do not depend on it.
    pub threads: usize,
    /// Master seed in place of each case's (`--seed`); the streams are still keyed by the
    /// case's name.
    pub seed: Option<u64>,
    /// Replications in place of the effort's (`--replications`): the fixed count of
    /// [`Effort::Quick`], the first batch of [`Effort::Full`]'s sequential rule.
    pub replications: Option<u32>,
    /// Observations per replication in place of the effort's (`--length`; a rank program has
    /// none and ignores it).
    pub length: Option<u64>,
    /// Raised to stop the validation before its next replication.
    pub stop: StopFlag,
}

impl ValidateOptions {
    /// `effort` on one thread per core, with each case's own seed, replications and length.
    pub fn new(effort: Effort) -> ValidateOptions {
        ValidateOptions {
            effort,
            threads: 0,
            seed: None,
            replications: None,
            length: None,
            stop: StopFlag::default(),
        }
    }
}

/// The replications (under [`Effort::Full`], the first batch of the sequential rule) and the
/// observations per replication a case is simulated with: [`Effort::Quick`] runs 10
/// replications of a fifth of the declared length (at least 2,000), [`Effort::Full`] the
/// declared ones; `--replications` and `--length` replace either.
pub fn planned_runs(sc: &Scenario, options: &ValidateOptions) -> (u32, u64) {
    let (mut replications, mut length) = match options.effort {
        Effort::Quick => (10, (sc.run.length / 5).max(2000)),
        Effort::Full => (sc.run.replications, sc.run.length),
    };
    if let Some(r) = options.replications {
        replications = r;
    }
    if let Some(l) = options.length
        && !sc.runs_to_completion()
    {
        length = l;
    }
    (replications, length)
}

/// The first experiment of a comparison that was run again (see [`validate`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FirstRun {
    /// Simulated mean of the first experiment.
    pub simulated: f64,
    /// Half-width of its 99% interval.
    pub half_width_99: f64,
    /// Replications it used.
    pub replications: u64,
    /// Its run id (see [`RunIdentity`]).
    pub run_id: Option<String>,
}

impl Comparison {
    /// True for a verdict that is a statistical test of an exact statement and failed: an exact
    /// value outside the interval, or a bound the whole interval misses. Such a failure happens
    /// by chance in 1% of comparisons of a correct formula, so it is confirmed on a second,
    /// independent experiment. (An approximation's tolerance verdict is not a test and is not
    /// rerun.)
    pub fn needs_confirmation(&self) -> bool {
        self.verdict == Verdict::Disagree && (self.exact || self.bounds.is_some())
    }
}

/// The seed of the experiment that confirms a case's disagreements: independent of the first.
pub fn confirmation_seed(case_seed: u64) -> u64 {
    derive_seed(case_seed, "confirmation")
}

/// Simulates and analyses one case and compares every selected prediction.
///
/// The case's random streams are keyed by its seed (`seed`, or the case's own) *and its name*,
/// so no two cases of a suite share draws and their verdicts are independent.
///
/// **Confirmation.** Each exact comparison is a test at 99%: a correct formula still falls outside
/// the interval in 1% of experiments, so a suite of 100 exact comparisons shows about one such
/// disagreement per run by chance alone. When a comparison [needs
/// confirmation](Comparison::needs_confirmation), the whole case is simulated again on
/// independent streams ([`confirmation_seed`]) with the same settings, and that comparison's
/// verdict is the second experiment's, judged by the same rule; the first interval is kept in
/// [`Comparison::first_run`]. A correct formula then disagrees with probability about 0.01 x
/// 0.01, while a real error larger than the interval is seen twice and stands.
pub fn validate(sc: &Scenario, options: &ValidateOptions) -> Result<CaseValidation, RunError> {
    Plan::new(sc, options).judge(sc)
}

/// What one case compares and how it is simulated.
struct Plan {
    predictions: Vec<Prediction>,
    bounds: Vec<Bound>,
    /// Why methods do not apply (`method: reason`), for a case with nothing to compare.
    refusals: Vec<String>,
    opt: Options,
    /// Relative half-width an exact comparison needs to agree.
    target: f64,
}

impl Plan {
    fn new(sc: &Scenario, options: &ValidateOptions) -> Plan {
        let analysis = analyze_scenario(sc);
        let wanted = |metric: &String| {
            sc.validate
                .metrics
                .as_ref()
                .is_none_or(|m| m.contains(metric))
        };
        let predictions: Vec<Prediction> = analysis
            .predictions
            .into_iter()
            .filter(|p| wanted(&p.metric))
            .collect();
        let bounds: Vec<Bound> = analysis
            .bounds
            .into_iter()
            .filter(|b| wanted(&b.metric))
            .collect();
        let refusals = analysis
            .refusals
            .iter()
            .map(|r| format!("{}: {}", r.method, r.reason))
            .collect();
        let mut opt = Options::from_scenario(sc);
        opt.threads = options.threads;
        opt.stop = options.stop.clone();
        opt.seed = derive_seed(options.seed.unwrap_or(opt.seed), &sc.name);
        opt.level = LEVEL;
        // The precision rule runs until every exact prediction's metric meets the target; with
        // none, the first metric compared sets the run length.
        let mut precise: Vec<String> = predictions
            .iter()
            .filter(|p| p.exact && !window_ratio(&p.metric))
            .map(|p| p.metric.clone())
            .collect();
        if precise.is_empty()
            && let Some(m) = predictions
                .first()
                .map(|p| &p.metric)
                .or(bounds.first().map(|b| &b.metric))
        {
            precise.push(m.clone());
        }
        if !precise.is_empty() {
            opt.metrics = precise;
        }
        let mut target = sc.validate.precision;
        match options.effort {
            Effort::Quick => {
                opt.precision = None;
                target *= 5.0;
            }
            Effort::Full => opt.precision = Some(target),
        }
        (opt.replications, opt.length) = planned_runs(sc, options);
        opt.max_replications = opt.max_replications.max(opt.replications);
        Plan {
            predictions,
            bounds,
            refusals,
            opt,
            target,
        }
    }

    /// Every comparison of the case, with disagreements confirmed as [`validate`] describes;
    /// with nothing to compare, one row that says so.
    fn judge(&self, sc: &Scenario) -> Result<CaseValidation, RunError> {
        if self.predictions.is_empty() && self.bounds.is_empty() {
            return Ok(CaseValidation {
                rows: vec![self.no_prediction(sc)],
                runs: Vec::new(),
                warnings: Vec::new(),
            });
        }
        let (mut first, first_run) = self.compare(sc, self.opt.seed)?;
        if !first.iter().any(Comparison::needs_confirmation) {
            first.extend(self.refusal_rows(sc));
            return Ok(CaseValidation {
                rows: first,
                runs: vec![first_run],
                warnings: replicate::warnings(sc, &self.opt),
            });
        }
        let (second, second_run) = self.compare(sc, confirmation_seed(self.opt.seed))?;
        let mut rows: Vec<Comparison> = first
            .into_iter()
            .zip(second)
            .map(|(f, s)| {
                if f.needs_confirmation() {
                    Comparison {
                        first_run: Some(FirstRun {
                            simulated: f.simulated,
                            half_width_99: f.half_width_99,
                            replications: f.replications,
                            run_id: f.run.map(|r| r.run_id),
                        }),
                        ..s
                    }
                } else {
                    f
                }
            })
            .collect();
        rows.extend(self.refusal_rows(sc));
        Ok(CaseValidation {
            rows,
            runs: vec![first_run, second_run],
            warnings: replicate::warnings(sc, &self.opt),
        })
    }

    /// One row per method that does not apply to the case, with its reason (after the
    /// comparisons of a case that has some: a case with none says them in its one row).
    fn refusal_rows(&self, sc: &Scenario) -> Vec<Comparison> {
        self.refusals
            .iter()
            .map(|why| Comparison {
                metric: "-".to_owned(),
                method: why.clone(),
                verdict: Verdict::NotApplicable,
                ..self.no_prediction(sc)
            })
            .collect()
    }

    /// The row of a case with nothing to compare: which metrics it asked for and why no method
    /// gave them.
    fn no_prediction(&self, sc: &Scenario) -> Comparison {
        let metric = sc
            .validate
            .metrics
            .as_ref()
            .map_or_else(|| "(every metric)".to_owned(), |m| m.join(" "));
        let method = if self.refusals.is_empty() {
            "no analytic method predicts these metrics".to_owned()
        } else {
            self.refusals.join("; ")
        };
        Comparison {
            case: sc.name.clone(),
            metric,
            method,
            exact: false,
            analytic: f64::NAN,
            simulated: f64::NAN,
            half_width_99: f64::NAN,
            bounds: None,
            relative_error: f64::NAN,
            relative_error_half_width_99: f64::NAN,
            verdict: if sc.validate.expects_no_prediction {
                Verdict::NoPredictionExpected
            } else {
                Verdict::NoPrediction
            },
            replications: 0,
            first_run: None,
            run: None,
        }
    }

    /// Simulates the case under `seed` and compares every prediction and bound, in order; each
    /// row carries the experiment's identity.
    fn compare(
        &self,
        sc: &Scenario,
        seed: u64,
    ) -> Result<(Vec<Comparison>, ValidationRun), RunError> {
        let opt = Options {
            seed,
            ..self.opt.clone()
        };
        let experiment = replicate::run(sc, &opt, &|_| {})?;
        let provenance = Provenance::new(&sc.text_hash, &opt);
        let identity = RunIdentity {
            file: sc.path.display().to_string(),
            parsim_version: provenance.parsim_version.to_owned(),
            scenario_hash: provenance.scenario_hash,
            run_id: provenance.run_id,
            date: provenance.date,
            seed,
            length: opt.length,
            warmup: experiment.warmup.observations,
        };
        let mut rows = compare_all(
            sc,
            &experiment,
            &self.predictions,
            &self.bounds,
            self.target,
        )?;
        for r in &mut rows {
            r.run = Some(identity.clone());
        }
        Ok((
            rows,
            ValidationRun {
                identity,
                experiment,
            },
        ))
    }
}

/// Compares every prediction, then every bound, with an experiment's 99% intervals, by the rules
/// of this module; `target` is the relative half-width an exact comparison needs to agree.
pub fn compare_all(
    sc: &Scenario,
    ex: &Experiment,
    predictions: &[Prediction],
    bounds: &[Bound],
    target: f64,
) -> Result<Vec<Comparison>, RunError> {
    let mut rows = predictions
        .iter()
        .map(|p| compare(sc, ex, p, target))
        .collect::<Result<Vec<_>, _>>()?;
    for b in bounds {
        rows.push(compare_bound(sc, ex, b)?);
    }
    Ok(rows)
}

/// A bound is violated only when the whole simulated interval lies outside it.
fn compare_bound(sc: &Scenario, ex: &Experiment, b: &Bound) -> Result<Comparison, RunError> {
    let i = ex
        .index_of(&b.metric)
        .ok_or_else(|| RunError::UnknownMetric(unknown_metric(&b.metric, &ex.metrics)))?;
    let ci = ex.interval(i, LEVEL);
    let outside = ci.mean + ci.half_width < b.lower || ci.mean - ci.half_width > b.upper;
    let beyond = ci.mean < b.lower || ci.mean > b.upper;
    let mid = 0.5 * (b.lower + b.upper);
    // the error is measured to the side the mean lies beyond: zero between the bounds
    let side = if ci.mean < b.lower {
        b.lower
    } else if ci.mean > b.upper {
        b.upper
    } else {
        ci.mean
    };
    Ok(Comparison {
        case: sc.name.clone(),
        metric: b.metric.clone(),
        method: b.method.clone(),
        exact: false,
        analytic: mid,
        bounds: Some([b.lower, b.upper]),
        simulated: ci.mean,
        half_width_99: ci.half_width,
        relative_error: (side - ci.mean) / ci.mean,
        relative_error_half_width_99: (side / ci.mean).abs() * ci.relative_half_width(),
        verdict: if outside {
            Verdict::Disagree
        } else if beyond {
            Verdict::AtBound
        } else {
            Verdict::WithinBounds
        },
        replications: ci.replications,
        first_run: None,
        run: None,
    })
}

/// True for a visits ratio (`station.<s>.visits`, `station.<s>.<c>.visits`). The traffic
/// equations give it exactly, for any distribution, but the simulation measures it as the
/// visits over the cycles (or jobs) completed in one window, whose two ends cut the cycles in
/// progress: a bias of order `population / length`, which the interval (nearly zero: the
/// counts barely vary) does not cover and more replications only expose. An exact value of one
/// is therefore reported beside the simulation, not judged.
pub fn window_ratio(metric: &str) -> bool {
    metric.rsplit('.').next() == Some("visits")
}

/// True for a busy fraction that sat exactly at 0 or 1 in every replication: no window saw an
/// idle (or a busy) period, so its zero-width interval measures no sampling error, and a
/// prediction a hair inside the bound (exact MVA's `1 - 4e-5` at a saturated bus) can be
/// neither confirmed nor refuted by it. Such a comparison is imprecise, not a disagreement.
fn pinned_at_bound(metric: &str, ci: &crate::stats::ConfidenceInterval) -> bool {
    metric.ends_with(".utilisation") && ci.half_width == 0.0 && (ci.mean == 0.0 || ci.mean == 1.0)
}

fn compare(
    sc: &Scenario,
    ex: &Experiment,
    p: &Prediction,
    target: f64,
) -> Result<Comparison, RunError> {
    let i = ex
        .index_of(&p.metric)
        .ok_or_else(|| RunError::UnknownMetric(unknown_metric(&p.metric, &ex.metrics)))?;
    let ci = ex.interval(i, LEVEL);
    let rel = (p.value - ci.mean) / ci.mean;
    let rel_hw = (p.value / ci.mean).abs() * ci.relative_half_width();
    let inside =
        (p.value - ci.mean).abs() <= ci.half_width.max(CLOCK_RELATIVE_ERROR * ci.mean.abs());
    let verdict = if p.exact && window_ratio(&p.metric) {
        Verdict::Reported
    } else if p.exact {
        if !inside && pinned_at_bound(&p.metric, &ci) {
            Verdict::Imprecise
        } else if !inside {
            Verdict::Disagree
        } else if ci.half_width == 0.0 || ci.relative_half_width() <= target {
            // (a deterministic zero, an idle rank's io time say, has no relative half-width)
            Verdict::Agree
        } else {
            Verdict::Imprecise
        }
    } else {
        Verdict::of_approximation(rel, rel_hw, sc.validate.tolerance_for(&p.method))
    };
    Ok(Comparison {
        case: sc.name.clone(),
        metric: p.metric.clone(),
        method: p.method.clone(),
        exact: p.exact,
        analytic: p.value,
        bounds: None,
        simulated: ci.mean,
        half_width_99: ci.half_width,
        relative_error: rel,
        relative_error_half_width_99: rel_hw,
        verdict,
        replications: ci.replications,
        first_run: None,
        run: None,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::scenario::parse;

    /// `--quick` on one thread.
    fn quick_on_one_thread() -> ValidateOptions {
        ValidateOptions {
            threads: 1,
            ..ValidateOptions::new(Effort::Quick)
        }
    }

    /// The suite's M/M/1 case at rho 0.5 (true mean response 2).
    const MM1: &str = include_str!("../validation/mm1_rho50.toml");

    /// The M/M/1 case, judged against `value` claimed as the exact mean response time.
    fn judge_response(value: f64) -> Comparison {
        let sc = parse(MM1, Path::new("mm1.toml")).expect("valid scenario");
        let mut plan = Plan::new(&sc, &quick_on_one_thread());
        plan.predictions = vec![Prediction {
            metric: "class.jobs.response".into(),
            value,
            method: "claimed".into(),
            exact: true,
            measured: None,
            recommended: false,
        }];
        plan.bounds.clear();
        let case = plan.judge(&sc).expect("runs");
        assert_eq!(case.rows.len(), 1);
        case.rows.into_iter().next().expect("one row")
    }

    #[test]
    fn the_true_value_agrees_without_a_rerun() {
        let row = judge_response(2.0); // 1 / (mu - lambda)
        assert_eq!(row.verdict, Verdict::Agree);
        assert_eq!(row.first_run, None);
    }

    #[test]
    fn a_wrong_value_is_rerun_and_the_disagreement_confirmed() {
        // 10% above the truth, several half-widths of a 5% interval away.
        let row = judge_response(2.2);
        assert_eq!(row.verdict, Verdict::Disagree);
        let first = row.first_run.expect("the disagreement was rerun");
        // The rerun drew from other streams: its interval is not the first one.
        assert_ne!(first.simulated, row.simulated);
    }

    #[test]
    fn only_failed_tests_of_exact_statements_are_rerun() {
        let mut row = judge_response(2.0);
        assert!(!row.needs_confirmation());
        row.verdict = Verdict::Disagree;
        assert!(row.needs_confirmation());
        row.exact = false; // an approximation outside its declared tolerance
        assert!(!row.needs_confirmation());
        row.bounds = Some([1.0, 1.5]);
        assert!(row.needs_confirmation());
    }

    #[test]
    fn approximations_are_judged_with_their_interval() {
        use Verdict::*;
        let t = Some(0.05);
        assert_eq!(Verdict::of_approximation(0.03, 0.01, t), WithinTolerance);
        assert_eq!(Verdict::of_approximation(-0.03, 0.01, t), WithinTolerance);
        assert_eq!(Verdict::of_approximation(0.08, 0.01, t), OutsideTolerance);
        assert_eq!(Verdict::of_approximation(-0.08, 0.02, t), OutsideTolerance);
        assert_eq!(Verdict::of_approximation(0.045, 0.01, t), Undecided);
        assert_eq!(Verdict::of_approximation(0.055, 0.01, t), Undecided);
        assert_eq!(Verdict::of_approximation(0.5, 0.01, None), Reported);
        for v in [OutsideTolerance, Disagree, NoPrediction] {
            assert!(v.fails());
        }
        for v in [
            Agree,
            Imprecise,
            WithinTolerance,
            Undecided,
            Reported,
            WithinBounds,
            AtBound,
            NoPredictionExpected,
        ] {
            assert!(!v.fails());
        }
    }

    #[test]
    fn a_case_with_nothing_to_compare_is_a_finding_unless_declared() {
        let sc = parse(MM1, Path::new("mm1.toml")).expect("valid scenario");
        let mut plan = Plan::new(&sc, &quick_on_one_thread());
        plan.predictions.clear();
        plan.bounds.clear();
        let case = plan.judge(&sc).expect("nothing runs");
        assert!(case.runs.is_empty(), "nothing was simulated");
        let rows = case.rows;
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].verdict, Verdict::NoPrediction);
        assert_eq!(rows[0].replications, 0);
        let declared = parse(
            &MM1.replace("[validate]", "[validate]\nexpect_prediction = false"),
            Path::new("mm1.toml"),
        )
        .expect("valid scenario");
        let rows = plan.judge(&declared).expect("nothing runs").rows;
        assert_eq!(rows[0].verdict, Verdict::NoPredictionExpected);
    }

    #[test]
    fn a_bounds_error_is_the_distance_to_the_side_the_mean_lies_beyond() {
        let sc = parse(MM1, Path::new("mm1.toml")).expect("valid scenario");
        let ex = Experiment {
            metrics: vec!["class.jobs.response".into()],
            replications: vec![vec![2.0], vec![2.2], vec![1.8], vec![2.0]],
            warmup: replicate::WarmupReport {
                observations: 0,
                method: "fixed",
                at_limit: false,
            },
            events: 0,
            precision_met: None,
        };
        let bound = |lower, upper| Bound {
            metric: "class.jobs.response".into(),
            method: "claimed bounds".into(),
            lower,
            upper,
        };
        let within = compare_bound(&sc, &ex, &bound(1.0, 3.0)).expect("compared");
        assert_eq!(within.verdict, Verdict::WithinBounds);
        assert_eq!(within.relative_error, 0.0);
        let below = compare_bound(&sc, &ex, &bound(0.5, 1.0)).expect("compared");
        assert_eq!(below.verdict, Verdict::Disagree);
        assert!((below.relative_error - (1.0 - 2.0) / 2.0).abs() < 1e-12);
        // an interval (2 +- 0.48) wholly below a proven lower bound: outside the bounds
        let above = compare_bound(&sc, &ex, &bound(2.5, 9.0)).expect("compared");
        assert_eq!(above.verdict, Verdict::Disagree);
        assert!((above.relative_error - 0.25).abs() < 1e-12);
        // a mean below the lower bound whose interval reaches it: at the bound within
        // sampling error, not within the bounds, and no failure
        let reaching = compare_bound(&sc, &ex, &bound(2.1, 9.0)).expect("compared");
        assert_eq!(reaching.verdict, Verdict::AtBound);
        assert!(!reaching.verdict.fails());
        let reaching_down = compare_bound(&sc, &ex, &bound(0.5, 1.9)).expect("compared");
        assert_eq!(reaching_down.verdict, Verdict::AtBound);
        assert!((reaching.relative_error - 0.05).abs() < 1e-12);
    }

    #[test]
    fn verdict_words_are_the_json_words() {
        for v in Verdict::ALL {
            assert_eq!(serde_json::to_value(v).expect("serialises"), v.label());
        }
    }

    #[test]
    fn the_longest_matching_method_tolerance_applies() {
        let sc = parse(
            &MM1.replace(
                "[validate]",
                "[validate]\ntolerance = 0.2\ntolerances = { \"exact MVA\" = 0.1, \"exact MVA; FCFS\" = 0.3 }",
            ),
            Path::new("mm1.toml"),
        )
        .expect("valid scenario");
        let v = &sc.validate;
        assert_eq!(v.tolerance_for("exact MVA; FCFS station \"d\""), Some(0.3));
        assert_eq!(v.tolerance_for("exact MVA"), Some(0.1));
        assert_eq!(v.tolerance_for("Kingman"), Some(0.2));
    }

    #[test]
    fn cases_with_the_same_seed_draw_from_different_streams() {
        let a = parse(MM1, Path::new("a.toml")).expect("valid scenario");
        let b = parse(
            &MM1.replace("M/M/1 rho 0.5", "another name"),
            Path::new("b.toml"),
        )
        .expect("valid scenario");
        let seed = |sc: &Scenario| {
            Plan::new(
                sc,
                &ValidateOptions {
                    seed: Some(7),
                    ..quick_on_one_thread()
                },
            )
            .opt
            .seed
        };
        assert_eq!(a.run.seed, b.run.seed);
        assert_ne!(seed(&a), seed(&b));
        assert_ne!(confirmation_seed(seed(&a)), seed(&a));
    }
}
