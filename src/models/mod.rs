//! High-level models, one folder each: the parameters a paper or report states its model in,
//! checked; the builder that writes the model as parsim's own scenario tables (a queueing
//! network, or a rank program on an interconnect), so that it runs in the same engines as a
//! hand-written scenario; the model's own equations and analysis; and the metrics it derives
//! from a run.
//!
//! - [`spmd`]: Cremonesi and Gennaro's SPMD programs on MIMD machines (`[spmd]`);
//! - [`pipeline`]: Kuntraruk's pipelined binary reduction tree (`[pipeline]`);
//! - [`training`]: a data-parallel training step, its buckets' allreduces overlapping the
//!   backward pass or not (`[training]`);
//! - [`profile`]: machine profiles (In et al.), message costs fitted to measurements.
//!
//! A model knows nothing of the scenario file: the input layer checks a section into a model's
//! parameters and asks the model for what it builds.

pub mod pipeline;
pub mod profile;
pub mod spmd;
pub mod tables;
pub mod training;

use std::path::Path;

use toml::Spanned;

use crate::dist::{Dist, DistSpec};
use crate::metrics::catalogue::Entry;
use crate::predict::Analysis;
use crate::problem::Problem;
use crate::program::Program;

/// A model's distribution at `path`, built; a problem added to `found` when it cannot be, or
/// when it is a trace (which has no fixed mean for the model's `formula`).
pub(crate) fn model_dist(
    spec: &Spanned<DistSpec>,
    path: &str,
    formula: &str,
    base: &Path,
    found: &mut Vec<Problem>,
) -> Option<Dist> {
    let at = Some(spec.span().start);
    match spec.get_ref().build(base) {
        Ok(d) if d.is_replay() => {
            found.push(Problem::new(
                at,
                path.to_owned(),
                format!("a trace has no fixed mean for {formula}: use a distribution"),
            ));
            None
        }
        Ok(d) => Some(d),
        Err(e) => {
            found.push(Problem::new(at, format!("{path}.{}", e.field), e.message));
            None
        }
    }
}

/// The high-level model a scenario was built from, if any: the engines never see it, the
/// analysis and the derived metrics do. The rest of the crate calls a model through these
/// methods only; a new model adds a variant, its folder, and an arm to each.
#[derive(Clone, Debug)]
pub enum Model {
    /// An `[spmd]` section.
    Spmd(Box<spmd::Spmd>),
    /// A `[pipeline]` section.
    Pipeline(Box<pipeline::Pipeline>),
    /// A `[training]` section.
    Training(Box<training::Training>),
}

impl Model {
    /// The scenario section the model is written in (`spmd`, `pipeline`, `training`).
    pub fn section(&self) -> &'static str {
        match self {
            Model::Spmd(_) => "spmd",
            Model::Pipeline(_) => "pipeline",
            Model::Training(_) => "training",
        }
    }

    /// The SPMD model, if this is one.
    pub fn spmd(&self) -> Option<&spmd::Spmd> {
        match self {
            Model::Spmd(m) => Some(m),
            Model::Pipeline(_) | Model::Training(_) => None,
        }
    }

    /// The pipeline, if this is one.
    pub fn pipeline(&self) -> Option<&pipeline::Pipeline> {
        match self {
            Model::Pipeline(p) => Some(p),
            Model::Spmd(_) | Model::Training(_) => None,
        }
    }

    /// The tables of the system the model writes into its scenario in place of the file's own
    /// (what `run --show-network` prints); `None` for a model that builds its program directly.
    pub fn tables(&self) -> Option<tables::Tables> {
        match self {
            Model::Spmd(m) => Some(m.tables()),
            Model::Pipeline(_) | Model::Training(_) => None,
        }
    }

    /// The names of the metrics the model derives from a run's own ([`Model::derived_metrics`]).
    pub fn derived_names(&self) -> Vec<String> {
        match self {
            Model::Spmd(m) => m.derived_names(),
            Model::Pipeline(_) | Model::Training(_) => Vec::new(),
        }
    }

    /// The metrics the model derives from one replication's `values`; `default` names the
    /// scenario's default metric (the cycle or makespan they are derived from).
    pub fn derived_metrics(&self, values: &[(String, f64)], default: &str) -> Vec<(String, f64)> {
        match self {
            Model::Spmd(m) => m.derived_metrics(values, default),
            Model::Pipeline(_) | Model::Training(_) => Vec::new(),
        }
    }

    /// What the metrics the model adds mean, for the metric catalogue.
    pub fn catalogue(&self) -> &'static [Entry] {
        match self {
            Model::Spmd(_) => spmd::CATALOGUE,
            Model::Pipeline(_) | Model::Training(_) => &[],
        }
    }

    /// Adds the model's own methods to the analysis `a` of the system it built: `program` is
    /// that system when it is a rank program (`None` for a queueing network), `default` the
    /// scenario's default metric.
    pub fn analyze(&self, program: Option<&Program>, default: &str, a: &mut Analysis) {
        match (self, program) {
            (Model::Spmd(m), None) => spmd::analysis::analyze(m, default, a),
            (Model::Spmd(m), Some(_)) => spmd::analysis::analyze_program(m, a),
            (Model::Pipeline(p), Some(prog)) => {
                let (predictions, refusals) = pipeline::analysis::predictions(prog, p);
                a.predictions.extend(predictions);
                a.refusals.extend(refusals);
            }
            (Model::Training(t), Some(prog)) => {
                a.predictions
                    .extend(training::analysis::predictions(prog, t));
            }
            // a pipeline and a training step always build a program
            (Model::Pipeline(_) | Model::Training(_), None) => {}
        }
    }
}
