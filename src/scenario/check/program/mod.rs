//! The check of a rank program: a `[program]` compiled (`compile`) into a
//! [`crate::program::Program`], and the scenario it makes when it runs as one.

pub(crate) mod compile;

use super::{Built, Checker};
use crate::models::Model;
use crate::problem::Problem;
use crate::program::Program;
use crate::scenario::raw::RawScenario;
use crate::scenario::{RunConfig, ValidateConfig, Workload};

/// A program run by the program executor: its metric names checked, the scenario built.
pub(super) fn finish(
    ck: Checker,
    raw: &RawScenario,
    run: RunConfig,
    validate: ValidateConfig,
    program: Program,
    model: Option<Model>,
) -> Result<Built, Vec<Problem>> {
    let workload = Workload::Program(Box::new(program));
    super::finish(ck, raw, run, validate, workload, model)
}
