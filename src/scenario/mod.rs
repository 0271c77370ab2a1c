//! Scenario files: TOML (or a GOAL file with its machine flags) in, a checked [`Scenario`] out:
//! its [`Workload`] in one of the three forms (a [`Network`], a [`Program`] or a [`Schedule`]),
//! at most one high-level [`Model`], and its [`RunConfig`] and [`ValidateConfig`].
//!
//! Loading has two stages, as ripgrep does with its flags: `document` reads the file's shape
//! into [`raw`] (serde, unknown fields rejected, one section and one array element at a time),
//! `check` gives it meaning and resolves names to ids. Both stages collect **every** problem
//! before giving up, each with the file, the line and the field path
//! (`station[2].service.mean`), in time linear in their number; an open class that would load
//! some station to utilisation 1 or more is refused there, before anything runs.

pub mod assign;
pub mod builder;
pub mod check;
pub(crate) mod document;
mod problem;
pub mod raw;
pub mod schema;
pub mod show;

use std::path::{Path, PathBuf};

pub use assign::Assignment;
pub use problem::ScenarioError;

use crate::problem::Problem;

use crate::metrics::catalogue::{self, Entry};
use crate::metrics::name::{Figure, Subject};
use crate::models::Model;
use crate::models::spmd::Spmd;
use crate::network::Network;
use crate::program::Program;
use crate::schedule::Schedule;

/// How the warm-up is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warmup {
    /// MSER-5 on a pilot replication; its truncation point applies to every replication.
    Mser5,
    /// A fixed number of observations.
    Fixed(u64),
}

/// The most replications an experiment may run (each keeps its values of every metric, about a
/// kilobyte: a million are a gigabyte).
pub const MAX_REPLICATIONS: u32 = 1_000_000;

/// How to run a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// Independent replications (at least 2, for a confidence interval).
    pub replications: u32,
    /// Observations measured per replication.
    pub length: u64,
    /// Warm-up rule.
    pub warmup: Warmup,
    /// Master seed.
    pub seed: u64,
    /// Target relative half-width of `metric`'s 95% interval, if any.
    pub precision: Option<f64>,
    /// The metric the precision target applies to (`None`: the first class's response).
    pub metric: Option<String>,
    /// Most replications the precision rule may use.
    pub max_replications: u32,
}

/// How `parsim validate` treats a scenario (its `[validate]` table).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValidateConfig {
    /// Metrics to compare (`None`: every predicted metric).
    pub metrics: Option<Vec<String>>,
    /// Target relative half-width of the 99% interval.
    pub precision: f64,
    /// Allowed |relative error| of approximations, if declared.
    pub tolerance: Option<f64>,
    /// Allowed |relative error| per approximation: (beginning of the method label, tolerance).
    pub tolerances: Vec<(String, f64)>,
    /// True when the case declares that no analytic method predicts anything for it
    /// (`expect_prediction = false`).
    pub expects_no_prediction: bool,
}

impl ValidateConfig {
    /// The tolerance declared for an approximation labelled `method`: that of the longest key
    /// of `tolerances` the label begins with, else `tolerance`.
    pub fn tolerance_for(&self, method: &str) -> Option<f64> {
        self.tolerances
            .iter()
            .filter(|(key, _)| method.starts_with(key.as_str()))
            .max_by_key(|(key, _)| key.len())
            .map(|(_, t)| *t)
            .or(self.tolerance)
    }
}

/// How `parsim analyze` (and every command that analyses) treats a scenario (its `[analyze]`
/// table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnalyzeConfig {
    /// The factor of every analytic method's work budget ([`crate::analytic::cost`]).
    pub budget: f64,
}

impl Default for AnalyzeConfig {
    fn default() -> AnalyzeConfig {
        AnalyzeConfig { budget: 1.0 }
    }
}

/// A loaded and checked scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file it came from.
    pub path: PathBuf,
    /// Its title (the file stem when the file has none).
    pub name: String,
    /// Its description.
    pub description: String,
    /// What runs: a queueing network or a rank program.
    pub workload: Workload,
    /// How to run it.
    pub run: RunConfig,
    /// How to validate it.
    pub validate: ValidateConfig,
    /// How far its analysis may go.
    pub analyze: AnalyzeConfig,
    /// The high-level model (`[spmd]`, `[pipeline]`) the workload was built from, if any.
    pub model: Option<Model>,
    /// [`crate::hash::scenario_hash`] of the text it was parsed from and of the files that text
    /// named (GOAL schedules, traces, profiles).
    pub text_hash: String,
}

/// The three workload forms over parsim's stations.
#[derive(Clone, Debug)]
pub enum Workload {
    /// Routed classes over a queueing network, observed in steady state after a warm-up.
    Network(Network),
    /// A rank program on processors, links and disks, run to completion.
    Program(Box<Program>),
    /// A rank program run as a dependency graph on LogGP endpoints and/or links (a GOAL file,
    /// a program with labels and dependencies, or any program with `[loggp]`), to completion.
    Schedule(Box<Schedule>),
}

impl Scenario {
    /// The queueing network, for a network scenario.
    pub fn network(&self) -> Option<&Network> {
        match &self.workload {
            Workload::Network(n) => Some(n),
            Workload::Program(_) | Workload::Schedule(_) => None,
        }
    }

    /// The program, for a program scenario run by the program executor.
    pub fn program(&self) -> Option<&Program> {
        match &self.workload {
            Workload::Program(p) => Some(p),
            Workload::Network(_) | Workload::Schedule(_) => None,
        }
    }

    /// The schedule, for a program run as a dependency graph.
    pub fn schedule(&self) -> Option<&Schedule> {
        match &self.workload {
            Workload::Schedule(s) => Some(s),
            Workload::Network(_) | Workload::Program(_) => None,
        }
    }

    /// True for a rank program (run to completion, no warm-up), in either executor.
    pub fn runs_to_completion(&self) -> bool {
        !matches!(self.workload, Workload::Network(_))
    }

    /// What the user should know before trusting a run's intervals: each service law of a
    /// queue or delay whose variance or third moment is infinite (a Pareto of shape at most 3).
    /// The mean wait of a queue depends on the second moment and its variance on the third, so
    /// with either infinite the replication means of waits, responses and queue lengths
    /// converge slowly and are heavy-tailed, and their Student-t intervals are unreliable.
    pub fn warnings(&self) -> Vec<String> {
        let Some(net) = self.network() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for st in &net.stations {
            let Some(table) = st.kind.service() else {
                continue;
            };
            for (c, dist) in table.iter().enumerate() {
                let Some(dist) = dist else { continue };
                let (infinite, so) = if !dist.raw_moment(2).is_finite() {
                    ("variance", "the mean wait at a queue is infinite")
                } else if !dist.raw_moment(3).is_finite() {
                    ("third moment", "the waiting time's variance is infinite")
                } else {
                    continue;
                };
                found.push(format!(
                    "{}: the service time of class {:?} at station {:?} has an infinite {infinite}: {so}, so the intervals of its waits, responses and queue lengths are unreliable (a Pareto needs a shape above 3 for a finite third moment)",
                    self.path.display(),
                    net.classes[c].name,
                    st.name
                ));
            }
        }
        found
    }

    /// The `[spmd]` model the workload was built from, if any.
    pub fn spmd(&self) -> Option<&Spmd> {
        self.model.as_ref().and_then(Model::spmd)
    }

    /// The names of the metrics a run reports (known before running; a program's per-link
    /// metrics depend on the run).
    pub fn metric_names(&self) -> Vec<String> {
        let mut names = match &self.workload {
            Workload::Network(n) => crate::metrics::network::names(n),
            Workload::Program(p) => crate::metrics::program::names(p),
            Workload::Schedule(s) => crate::metrics::schedule::names(s),
        };
        if let Some(model) = &self.model {
            names.extend(model.derived_names());
        }
        names
    }

    /// The patterns of the metrics a run reports once per link its messages cross
    /// (`link.<name>.utilisation`, ...), whose names only the run knows.
    pub fn per_link_metrics(&self) -> Vec<String> {
        match &self.workload {
            Workload::Program(p) => crate::metrics::program::per_link(p),
            Workload::Network(_) | Workload::Schedule(_) => Vec::new(),
        }
    }

    /// What the metric `name` means (its unit and a sentence), from the core catalogue and
    /// the model's own; `None` for a name no entry describes.
    pub fn describe_metric(&self, name: &str) -> Option<&'static Entry> {
        let model = self.model.as_ref().map_or(&[][..], Model::catalogue);
        catalogue::describe(name, &[model, catalogue::CORE])
    }

    /// The metric a precision target applies to by default: the first class's end-to-end
    /// time, or a program's makespan.
    pub fn default_metric(&self) -> String {
        match &self.workload {
            Workload::Network(net) => {
                let first =
                    (0..net.classes.len()).find(|&c| crate::metrics::network::completes(net, c));
                crate::metrics::network::class_metric(net, first.unwrap_or(0))
            }
            Workload::Program(_) | Workload::Schedule(_) => {
                Subject::Program.metric(Figure::Makespan)
            }
        }
    }
}

/// Reads, parses and checks a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    load_with(path, &[])
}

/// Reads a scenario file (`-`: standard input), sets the fields `assignments` name ([`assign`])
/// and checks the result as it checks a file.
pub fn load_with(path: &Path, assignments: &[Assignment]) -> Result<Scenario, ScenarioError> {
    parse_with(&read_text(path)?, source_name(path), assignments)
}

/// The text of a scenario file: a regular file of at most [`crate::files::Limit::Scenario`]
/// bytes ([`crate::files::read_text`]), or standard input for `-` ([`crate::files::read_stdin`]).
pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
    let read = if crate::files::is_stdin(path) {
        crate::files::read_stdin(crate::files::Limit::Scenario)
    } else {
        crate::files::read_text(path, crate::files::Limit::Scenario)
    };
    read.map_err(|e| ScenarioError {
        file: source_name(path).to_owned(),
        problems: vec![Problem::new(None, "", e.reason())],
        unreadable: true,
    })
}

/// The name a scenario read from `path` goes by in errors and reports: the path itself, or
/// `<stdin>` for `-` (files it names relative to itself are then relative to the working
/// directory).
pub fn source_name(path: &Path) -> &Path {
    if crate::files::is_stdin(path) {
        Path::new(crate::files::STDIN_NAME)
    } else {
        path
    }
}

/// Parses and checks scenario text; `path` names it in errors and anchors relative trace files.
pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    parse_with(text, path, &[])
}

/// Parses scenario text, sets the fields `assignments` name ([`assign`]), and checks the result
/// as [`parse`] does.
pub fn parse_with(
    text: &str,
    path: &Path,
    assignments: &[Assignment],
) -> Result<Scenario, ScenarioError> {
    parse_text(text, path, assignments, None)
}

/// [`parse_with`], reading the GOAL file `goal` in place of the `[program] goal` the text
/// names ([`check::schedule::flags`]).
fn parse_text(
    text: &str,
    path: &Path,
    assignments: &[Assignment],
    goal: Option<&Path>,
) -> Result<Scenario, ScenarioError> {
    let lines = LineIndex::new(text);
    // a problem of a value a --set gave is the --set's, not a line of the file
    let set_by = |p: &Problem| {
        assignments
            .iter()
            .find(|a| p.path == a.key || p.path.starts_with(&format!("{}.", a.key)))
    };
    let fail = |found: Vec<Problem>| ScenarioError {
        file: path.to_owned(),
        problems: found
            .into_iter()
            .map(|p| match set_by(&p) {
                Some(a) => Problem {
                    path: format!("--set {a}"),
                    line: None,
                    ..p
                },
                None => Problem {
                    line: p.at.map(|o| lines.line(o)).or(p.line),
                    ..p
                },
            })
            .collect(),
        unreadable: false,
    };
    let (raw, mut found) = document::read(text, assignments);
    let Some(mut raw) = raw else {
        return Err(fail(found));
    };
    raw.goal_path = goal.map(Path::to_owned);
    let base = path.parent().unwrap_or(Path::new("."));
    let (checked, files) = crate::files::recording(|| check::build(raw, base));
    match checked {
        Ok(built) if found.is_empty() => Ok(Scenario {
            path: path.to_owned(),
            name: built.name.unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            }),
            description: built.description.unwrap_or_default(),
            workload: built.workload,
            run: built.run,
            validate: built.validate,
            analyze: built.analyze,
            model: built.model,
            text_hash: crate::hash::scenario_hash(text, &files),
        }),
        Ok(_) => Err(fail(found)),
        Err(more) => {
            found.extend(more);
            found.sort_by_key(|p| p.at);
            Err(fail(found))
        }
    }
}

/// Checks a scenario given as its parts rather than as text (what
/// [`crate::scenario::builder::NetworkBuilder`] assembles) with exactly the checks a file gets, and names
/// it `name`. The problems carry no line; the field paths count elements in the order given.
pub fn from_raw(raw: raw::RawScenario, name: &str) -> Result<Scenario, Vec<Problem>> {
    let text_hash = crate::hash::text_hash(&format!("{raw:?}"));
    let built = check::build(raw, Path::new(".")).map_err(|found| {
        found
            .into_iter()
            .map(|p| Problem { at: None, ..p })
            .collect::<Vec<_>>()
    })?;
    Ok(Scenario {
        path: PathBuf::from(name),
        name: built.name.unwrap_or_else(|| name.to_owned()),
        description: built.description.unwrap_or_default(),
        workload: built.workload,
        run: built.run,
        validate: built.validate,
        analyze: built.analyze,
        model: built.model,
        text_hash,
    })
}

/// The start of every line of a text, to turn byte offsets into line numbers in `O(log n)`.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(
                text.bytes()
                    .enumerate()
                    .filter(|&(_, b)| b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        LineIndex { starts }
    }

    /// The 1-based line of a byte offset.
    fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

    #[test]
    fn lines_of_offsets() {
        let idx = LineIndex::new("ab\ncd\n\nx");
        let lines: Vec<usize> = (0..9).map(|o| idx.line(o)).collect();
        assert_eq!(lines, [1, 1, 1, 2, 2, 2, 3, 4, 4]);
    }
}
