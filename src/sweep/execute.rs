//! Running a sweep's points: every point checked first (the same in every shard), then the
//! points side by side on one pool of threads, in point order.

use rayon::prelude::*;

use super::output::SweepReport;
use super::{Point, PointResult, Sweep, evaluate, predict_only};
use crate::replicate::{RunError, Step, StopFlag};
use crate::scenario::ScenarioError;
use crate::shard::Shard;

/// Why a sweep could not run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// Some points' scenarios have problems (other than instability, which is marked): the
    /// first few are listed.
    #[error("{count} of {total} points invalid\n{}", shown.join("\n"))]
    Invalid {
        /// How many points are invalid.
        count: usize,
        /// How many points the sweep has.
        total: usize,
        /// The first few, each named with its assignments and its problems.
        shown: Vec<String>,
    },
    /// A point's scenario could not be built when it ran.
    #[error("{point}: {error}")]
    Scenario {
        /// The point, as [`Sweep::describe`] names it.
        point: String,
        /// What was wrong.
        error: ScenarioError,
    },
    /// A point's simulation failed (or was stopped).
    #[error("{point}: {error}")]
    Run {
        /// The point, as [`Sweep::describe`] names it.
        point: String,
        /// What stopped it.
        error: RunError,
    },
}

/// What checking every point found.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The scenario's title (at the first point that has one).
    pub name: String,
    /// Replications the points of the shard (or of the whole sweep) start with.
    pub replications: u64,
    /// The hash of every point's scenario hash, in order: what the files the points read hold
    /// (a trace, a profile, a GOAL schedule), for the shards' fingerprint.
    pub inputs: String,
}

/// Checks the scenario of every point (the same in every shard, so that every shard fails
/// alike), counting the replications of `shard`'s points (every point's without one) and
/// reporting the problems of the first few bad points; an unstable point is no problem (it is
/// marked, not run).
pub fn check_points(
    sweep: &Sweep,
    points: &[Point],
    shard: Option<Shard>,
) -> Result<Checked, SweepError> {
    const SHOWN: usize = 5;
    let mut checked = Checked {
        name: String::new(),
        replications: 0,
        inputs: String::new(),
    };
    let mut hashes = String::new();
    let mut shown = Vec::new();
    let mut count = 0;
    for p in points {
        let sc = sweep.scenario(p);
        hashes.push_str(sc.as_ref().map_or("-", |sc| &sc.text_hash));
        match sc {
            Ok(sc) => {
                if checked.name.is_empty() {
                    checked.name = sc.name;
                }
                if shard.is_none_or(|s| s.owns(p.index)) {
                    checked.replications += u64::from(sc.run.replications);
                }
            }
            Err(e) if e.unstable().is_some() => {}
            Err(e) => {
                count += 1;
                if shown.len() < SHOWN {
                    shown.push(format!("{}: {e}", sweep.describe(p)));
                }
            }
        }
    }
    if count == 0 {
        checked.inputs = crate::hash::text_hash(&hashes);
        if checked.name.is_empty() {
            // every point unstable: the file's stem, as a scenario without a name has
            checked.name = sweep
                .path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        }
        return Ok(checked);
    }
    if count > SHOWN {
        shown.push(format!("... and {} more bad points", count - SHOWN));
    }
    Err(SweepError::Invalid {
        count,
        total: points.len(),
        shown,
    })
}

/// How the points of a sweep run.
pub struct Execution<'a> {
    /// Only the analytic side: nothing simulated (`--analytic-only`).
    pub analytic_only: bool,
    /// The threads the points and their replications share.
    pub pool: &'a rayon::ThreadPool,
    /// Told of every pilot and replication of every point.
    pub progress: &'a (dyn Fn(Step) + Sync),
    /// Raised to stop the sweep: no replication starts after it.
    pub stop: &'a StopFlag,
}

impl std::fmt::Debug for Execution<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution")
            .field("analytic_only", &self.analytic_only)
            .field("threads", &self.pool.current_num_threads())
            .field("stop", &self.stop)
            .finish_non_exhaustive()
    }
}

/// Runs `points` of `sweep` side by side on `how.pool`: their results in the order given, or
/// the first failure in that order. A point whose scenario is unstable is marked, not run. Each
/// scenario is parsed again rather than kept from [`check_points`], so that memory does not
/// grow with the points.
pub fn run_points(
    sweep: &Sweep,
    points: &[&Point],
    how: &Execution,
) -> Result<Vec<PointResult>, SweepError> {
    let results: Vec<Result<PointResult, SweepError>> = how.pool.install(|| {
        points
            .par_iter()
            .map(|point| run_point(sweep, point, how))
            .collect()
    });
    results.into_iter().collect()
}

/// One point of [`run_points`].
fn run_point(sweep: &Sweep, point: &Point, how: &Execution) -> Result<PointResult, SweepError> {
    let values = point.values.iter().map(ToString::to_string).collect();
    let sc = match sweep.scenario(point) {
        Ok(sc) => sc,
        Err(error) => {
            // an unstable point is marked and the sweep goes on (the check found no other
            // problem); any other problem was reported by the check
            let why = error.unstable().ok_or_else(|| SweepError::Scenario {
                point: sweep.describe(point),
                error,
            })?;
            return Ok(PointResult {
                index: point.index,
                values,
                seed: 0,
                events: 0,
                rows: Vec::new(),
                unstable: Some(why),
                precision: None,
            });
        }
    };
    let mut opt = sweep.options(point, &sc, how.pool.current_num_threads());
    opt.stop = how.stop.clone();
    let (rows, events, precision) = if how.analytic_only {
        (predict_only(&sc), 0, None)
    } else {
        evaluate(how.pool, &sc, &opt, how.progress).map_err(|error| SweepError::Run {
            point: sweep.describe(point),
            error,
        })?
    };
    Ok(PointResult {
        index: point.index,
        values,
        seed: opt.seed,
        events,
        rows,
        unstable: None,
        precision,
    })
}

impl Sweep {
    /// The report of `results`, the points of this sweep (or of one shard) as [`run_points`]
    /// gave them, under the title `checked` found.
    pub fn report(&self, checked: &Checked, results: Vec<PointResult>) -> SweepReport {
        SweepReport {
            scenario: checked.name.clone(),
            file: self.path.display().to_string(),
            keys: self.keys(),
            fixed: self.fixed.iter().map(ToString::to_string).collect(),
            layout: self.layout,
            points: results,
        }
    }
}
