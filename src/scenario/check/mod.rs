//! The check stage: a raw scenario to its checked workload, [`RunConfig`] and
//! [`ValidateConfig`], collecting every problem.
//!
//! This file only dispatches: `[run]` and `[validate]` (`config`), a model section that writes
//! the tables of its system (`spmd`, `pipeline`, spliced by `tables`), then the workload's own
//! check, one folder per form: `network` (classes, stations, routes), `program` (a `[program]`
//! or `[pipeline]` compiled to a rank program) and [`schedule`] (a GOAL schedule or a program
//! lowered to a dependency graph on LogGP endpoints).

mod config;
mod model;
mod network;
pub(crate) mod program;
mod ranks;
pub mod schedule;
pub(crate) mod tables;

use std::path::Path;

use super::raw::RawScenario;
use super::{AnalyzeConfig, RunConfig, ValidateConfig, Workload};
use crate::models::Model;
use crate::problem::Problem;

/// What a successful check yields.
pub(super) struct Built {
    pub workload: Workload,
    pub run: RunConfig,
    pub validate: ValidateConfig,
    pub analyze: AnalyzeConfig,
    pub name: Option<String>,
    pub description: Option<String>,
    pub model: Option<Model>,
}

/// Collects problems.
#[derive(Default)]
pub(super) struct Checker {
    found: Vec<Problem>,
    /// A name is duplicated or a reference unresolved: the network's structure is not what the
    /// file meant, so the checks of the routing graph would only add noise.
    broken_structure: bool,
}

impl Checker {
    fn add(&mut self, at: Option<usize>, path: impl Into<String>, message: impl Into<String>) {
        self.found
            .push(Problem::new(at, path.into(), message.into()));
    }

    fn whole(&mut self, v: Option<i64>, default: i64, min: i64, at: usize, path: &str) -> u64 {
        let v = v.unwrap_or(default);
        if v < min {
            self.add(
                Some(at),
                path,
                format!("must be a whole number >= {min}, got {v}"),
            );
        }
        v.max(min) as u64
    }
}

/// Checks a raw scenario: the configuration, the model section if any, then the workload.
pub(super) fn build(raw: RawScenario, base: &Path) -> Result<Built, Vec<Problem>> {
    let mut ck = Checker::default();
    let run = config::run_config(&mut ck, raw.run.as_ref());
    let validate = config::validate_config(&mut ck, raw.validate.as_ref());
    let analyze = config::analyze_config(&mut ck, raw.analyze.as_ref());
    let built = build_workload(ck, raw, base, run, validate)?;
    Ok(Built { analyze, ..built })
}

/// [`build`] after `[run]`, `[validate]` and `[analyze]`: the model section, then the workload.
fn build_workload(
    mut ck: Checker,
    mut raw: RawScenario,
    base: &Path,
    run: RunConfig,
    validate: ValidateConfig,
) -> Result<Built, Vec<Problem>> {
    let spmd = if raw.has("spmd") {
        match model::spmd(&mut ck, &mut raw, base) {
            Some(s) => Some(s),
            None => return Err(ck.found),
        }
    } else {
        None
    };
    if raw.has("program") || raw.has("pipeline") || raw.has("training") {
        if raw.has("path") {
            ck.add(
                Some(0),
                "path",
                "[[path]] sums stations of a queueing network; a [program] has none",
            );
        }
        return ranks::build(ck, raw, base, run, validate, spmd);
    }
    network::build(ck, raw, base, run, validate, spmd)
}

/// A checked workload made a scenario: its metric names (in `[run]` and `[validate]`) checked
/// against what it reports, then the rest of the scenario around it.
fn finish(
    mut ck: Checker,
    raw: &RawScenario,
    run: RunConfig,
    validate: ValidateConfig,
    workload: Workload,
    model: Option<Model>,
) -> Result<Built, Vec<Problem>> {
    config::check_metric_names(&mut ck, raw, &run, &validate, &workload);
    if !ck.found.is_empty() {
        return Err(ck.found);
    }
    Ok(Built {
        workload,
        run,
        validate,
        analyze: AnalyzeConfig::default(),
        name: raw.name.clone(),
        description: raw.description.clone(),
        model,
    })
}
