//! Sweeps: one scenario run at many points, each point a set of field overrides
//! ([`crate::scenario::assign`]), simulated and compared with every analytic prediction.
//!
//! Each point is the scenario file with its assignments applied to the parsed document, so it
//! is checked exactly as a file is. Points run side by side on one pool of threads, their
//! replications in parallel as `parsim run`'s do (a core never waits for a small point's last
//! replication while others remain), under the seed [`keyed_seed`] derives from the master seed
//! and the point's assignments: a point gives the same numbers alone (`parsim run --set`), in
//! any sweep that contains it, in any shard, and on any number of threads.

pub mod execute;
mod memo;
pub mod output;
pub mod plot;
pub mod shard;
pub(crate) mod values;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::replicate::{self, Options, RunError};
use crate::report::PrecisionReport;
use crate::scenario::assign::{self, Assignment, Value, keyed_seed};
use crate::scenario::{self, Scenario, ScenarioError};
use crate::validate::{Verdict, compare_all};

/// One `--vary KEY=VALUES`: a field and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The field's path.
    pub key: String,
    /// Its values, in order.
    pub values: Vec<Value>,
}

impl Axis {
    /// Reads `KEY=VALUES` (`values` describes VALUES).
    pub fn parse(text: &str) -> Result<Axis, String> {
        let (key, values) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}`: expected KEY=VALUES"))?;
        let key = assign::check_key(key)?;
        let values = values::parse(values).map_err(|e| format!("{key}: {e}"))?;
        Ok(Axis { key, values })
    }
}

/// How several axes make points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// Every combination; the first axis varies slowest.
    Grid,
    /// The i-th value of every axis together (the axes must be equally long).
    Zip,
}

/// What a sweep runs: a scenario file, fixed assignments (`--set`) and the axes.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The scenario file.
    pub path: PathBuf,
    /// Its text, read once.
    pub text: String,
    /// Assignments every point shares.
    pub fixed: Vec<Assignment>,
    /// The varied fields.
    pub axes: Vec<Axis>,
    /// Grid or zip.
    pub layout: Layout,
    /// Master seed overriding each point's `run.seed`.
    pub seed: Option<u64>,
}

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Its place in the sweep, from 0.
    pub index: usize,
    /// One value per axis.
    pub values: Vec<Value>,
}

impl Sweep {
    /// Reads the scenario file (`-`: standard input) and makes the sweep of it
    /// ([`Sweep::with_text`]); a GOAL file, which has no fields, is refused.
    pub fn new(
        path: &Path,
        fixed: Vec<Assignment>,
        axes: Vec<Axis>,
        layout: Layout,
        seed: Option<u64>,
    ) -> Result<Sweep, String> {
        if scenario::check::schedule::flags::is_goal_file(path) {
            return Err(format!(
                "{}: a sweep varies the fields of a scenario file, and a GOAL file has none: write a scenario that runs it ([program] goal = \"{}\" with a [loggp] section) and vary its fields (e.g. --vary loggp.L=1e-6,2e-6,4e-6)",
                path.display(),
                path.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            ));
        }
        let text = scenario::read_text(path).map_err(|e| e.to_string())?;
        Sweep::with_text(scenario::source_name(path), text, fixed, axes, layout, seed)
    }

    /// The sweep of the scenario `text` (named `path` in messages, which anchors the files it
    /// names): checks that no key is both fixed and varied, or varied twice, and that the grid
    /// is not too large.
    pub fn with_text(
        path: &Path,
        text: String,
        fixed: Vec<Assignment>,
        axes: Vec<Axis>,
        layout: Layout,
        seed: Option<u64>,
    ) -> Result<Sweep, String> {
        if axes.is_empty() {
            return Err("a sweep needs at least one --vary".to_owned());
        }
        let mut keys: Vec<&str> = fixed.iter().map(|a| a.key.as_str()).collect();
        for axis in &axes {
            if keys.contains(&axis.key.as_str()) {
                return Err(format!("{} is set or varied twice", axis.key));
            }
            keys.push(&axis.key);
        }
        assign::check_distinct(&fixed)?;
        if layout == Layout::Zip
            && let Some(odd) = axes.iter().find(|a| a.values.len() != axes[0].values.len())
        {
            return Err(format!(
                "--zip pairs values, but {} has {} and {} has {}",
                axes[0].key,
                axes[0].values.len(),
                odd.key,
                odd.values.len()
            ));
        }
        let points = axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
            .filter(|&n| layout == Layout::Zip || n <= values::MOST);
        if points.is_none() {
            return Err(format!(
                "the grid has more than {} points; sweep fewer values or use --zip",
                values::MOST
            ));
        }
        Ok(Sweep {
            path: path.to_owned(),
            text,
            fixed,
            axes,
            layout,
            seed,
        })
    }

    /// The varied keys, in axis order.
    pub fn keys(&self) -> Vec<String> {
        self.axes.iter().map(|a| a.key.clone()).collect()
    }

    /// Every point, in order.
    pub fn points(&self) -> Vec<Point> {
        let lens: Vec<usize> = self.axes.iter().map(|a| a.values.len()).collect();
        let count = match self.layout {
            Layout::Zip => lens[0],
            Layout::Grid => lens.iter().product(),
        };
        (0..count)
            .map(|index| {
                let mut rest = index;
                let mut picks = vec![0; lens.len()];
                for (k, &len) in lens.iter().enumerate().rev() {
                    picks[k] = match self.layout {
                        Layout::Zip => index,
                        Layout::Grid => rest % len,
                    };
                    rest /= len;
                }
                Point {
                    index,
                    values: self
                        .axes
                        .iter()
                        .zip(picks)
                        .map(|(a, i)| a.values[i].clone())
                        .collect(),
                }
            })
            .collect()
    }

    /// Every assignment of a point: the fixed ones, then one per axis.
    pub fn assignments(&self, point: &Point) -> Vec<Assignment> {
        let varied = self
            .axes
            .iter()
            .zip(&point.values)
            .map(|(a, v)| Assignment {
                key: a.key.clone(),
                value: v.clone(),
            });
        self.fixed.iter().cloned().chain(varied).collect()
    }

    /// The scenario at a point, checked as a file is.
    pub fn scenario(&self, point: &Point) -> Result<Scenario, ScenarioError> {
        scenario::parse_with(&self.text, &self.path, &self.assignments(point))
    }

    /// The simulation settings of a point: the scenario's, under the point's seed.
    pub fn options(&self, point: &Point, sc: &Scenario, threads: usize) -> Options {
        let mut opt = Options::from_scenario(sc);
        opt.seed = keyed_seed(self.seed.unwrap_or(opt.seed), &self.assignments(point));
        opt.threads = threads;
        opt
    }

    /// A point named for messages: `point 3 (class.jobs.population=4, run.length=100)`.
    pub fn describe(&self, point: &Point) -> String {
        let parts: Vec<String> = self
            .assignments(point)
            .iter()
            .map(ToString::to_string)
            .collect();
        format!("point {} ({})", point.index, parts.join(", "))
    }
}

/// One row of a sweep's output: one metric of one point, compared with one analytic method (or
/// with none, when no method predicts the metric).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The metric.
    pub metric: String,
    /// The analytic method, if one predicts the metric.
    pub method: Option<String>,
    /// Whether the method is exact.
    pub exact: Option<bool>,
    /// Its value (none for bounds).
    #[serde(with = "output::optional_number")]
    pub analytic: Option<f64>,
    /// For bounds: the lower one.
    #[serde(with = "output::optional_number")]
    pub lower_bound: Option<f64>,
    /// For bounds: the upper one.
    #[serde(with = "output::optional_number")]
    pub upper_bound: Option<f64>,
    /// Simulated mean over the replications (NaN when nothing was simulated:
    /// `--analytic-only`).
    #[serde(with = "output::number")]
    pub simulated: f64,
    /// Half-width of its 95% interval (NaN when nothing was simulated).
    #[serde(with = "output::number")]
    pub half_width_95: f64,
    /// Replications (0 when nothing was simulated).
    pub replications: u64,
    /// `(analytic - simulated) / simulated` (NaN or infinite where the simulated mean is 0).
    #[serde(with = "output::optional_number")]
    pub relative_error: Option<f64>,
    /// The verdict by [`crate::validate`]'s rules (on the 99% interval).
    pub verdict: Option<Verdict>,
}

/// Everything one point measured and predicted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// Its place in the sweep.
    pub index: usize,
    /// One value per axis, as the output shows them.
    pub values: Vec<String>,
    /// The seed its streams came from (0 for an unstable point, which is not run).
    pub seed: u64,
    /// Events simulated over its replications.
    pub events: u64,
    /// One row per metric and method.
    pub rows: Vec<Row>,
    /// Why the point was not run, when its scenario is unstable (an open class loads a station
    /// to utilisation 1 or more: no steady state to simulate or predict); it then has no rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unstable: Option<String>,
    /// The precision target (`run.precision`) the point's replications were added for, and
    /// whether it was met; none without a target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<PrecisionReport>,
}

/// What [`evaluate`] measured at one point: its rows, the events simulated, and its precision
/// target with whether it was met (none without one).
pub type Evaluated = (Vec<Row>, u64, Option<PrecisionReport>);

/// Simulates `sc` under `opt` on the threads of `pool` and compares every metric with every
/// prediction; `progress` is told of the pilot and of each replication ([`replicate::Step`]).
pub fn evaluate(
    pool: &rayon::ThreadPool,
    sc: &Scenario,
    opt: &Options,
    progress: &(dyn Fn(replicate::Step) + Sync),
) -> Result<Evaluated, RunError> {
    let ex = replicate::run_on(pool, sc, opt, progress)?;
    let precision = opt.precision.map(|target| PrecisionReport {
        metrics: opt.metrics.clone(),
        target,
        met: ex.precision_met.unwrap_or(false),
    });
    // points whose analytic inputs are equal share one analysis
    let analysis = memo::analysis(sc);
    let compared = compare_all(
        sc,
        &ex,
        &analysis.predictions,
        &analysis.bounds,
        sc.validate.precision,
    )?;
    let mut rows = Vec::new();
    for (i, metric) in ex.metrics.iter().enumerate() {
        let ci = ex.interval(i, crate::report::LEVEL);
        let plain = Row {
            metric: metric.clone(),
            method: None,
            exact: None,
            analytic: None,
            lower_bound: None,
            upper_bound: None,
            simulated: ci.mean,
            half_width_95: ci.half_width,
            replications: ci.replications,
            relative_error: None,
            verdict: None,
        };
        let mut matched = compared.iter().filter(|c| &c.metric == metric).peekable();
        if matched.peek().is_none() {
            rows.push(plain);
            continue;
        }
        for c in matched {
            rows.push(Row {
                method: Some(c.method.clone()),
                exact: Some(c.exact),
                analytic: c.bounds.is_none().then_some(c.analytic),
                lower_bound: c.bounds.map(|[lower, _]| lower),
                upper_bound: c.bounds.map(|[_, upper]| upper),
                relative_error: Some(c.relative_error),
                verdict: Some(c.verdict),
                ..plain.clone()
            });
        }
    }
    Ok((rows, ex.events, precision))
}

/// Every prediction and bound of `sc`, as rows without a simulation (`--analytic-only`): the
/// simulated columns NaN, no replications, no error and no verdict.
pub fn predict_only(sc: &Scenario) -> Vec<Row> {
    let analysis = memo::analysis(sc);
    let row = |metric: &str| Row {
        metric: metric.to_owned(),
        method: None,
        exact: None,
        analytic: None,
        lower_bound: None,
        upper_bound: None,
        simulated: f64::NAN,
        half_width_95: f64::NAN,
        replications: 0,
        relative_error: None,
        verdict: None,
    };
    let mut rows: Vec<Row> = analysis
        .predictions
        .iter()
        .map(|p| Row {
            method: Some(p.method.clone()),
            exact: Some(p.exact),
            analytic: Some(p.value),
            ..row(&p.metric)
        })
        .collect();
    rows.extend(analysis.bounds.iter().map(|b| Row {
        method: Some(b.method.clone()),
        exact: Some(false),
        lower_bound: Some(b.lower),
        upper_bound: Some(b.upper),
        ..row(&b.metric)
    }));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(axes: &[&str], layout: Layout) -> Sweep {
        Sweep {
            path: PathBuf::from("s.toml"),
            text: String::new(),
            fixed: Vec::new(),
            axes: axes.iter().map(|a| Axis::parse(a).unwrap()).collect(),
            layout,
            seed: None,
        }
    }

    fn shown(s: &Sweep) -> Vec<String> {
        s.points()
            .iter()
            .map(|p| {
                p.values
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn grids_vary_the_last_axis_fastest_and_zips_pair() {
        let grid = sweep(&["a=1,2", "b=x,y,z"], Layout::Grid);
        assert_eq!(shown(&grid), ["1 x", "1 y", "1 z", "2 x", "2 y", "2 z"]);
        let zip = sweep(&["a=1..3", "b=x,y,z"], Layout::Zip);
        assert_eq!(shown(&zip), ["1 x", "2 y", "3 z"]);
    }
}
