//! The check of a rank program: a `[program]` compiled (`compile`) into a
//! [`crate::program::Program`], and the scenario it makes when it runs as one.

pub(crate) mod compile;

use super::{Built, Checker, config};
use crate::models::Model;
use crate::problem::Problem;
use crate::program::Program;
use crate::scenario::raw::RawScenario;
use crate::scenario::{RunConfig, ValidateConfig, Workload};

/// A program run by the program executor: its metric names checked, the scenario built.
pub(super) fn finish(
    mut ck: Checker,
    raw: &RawScenario,
    run: RunConfig,
    validate: ValidateConfig,
    program: Program,
    model: Option<Model>,
) -> Result<Built, Vec<Problem>> {
    let workload = Workload::Program(Box::new(program));
    config::check_metric_names(&mut ck, raw, &run, &validate, &workload);
    if !ck.found.is_empty() {
        return Err(ck.found);
    }
    Ok(Built {
        workload,
        run,
        validate,
        name: raw.name.clone(),
        description: raw.description.clone(),
        model,
    })
}
