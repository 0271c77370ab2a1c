//! High-level models, one folder each: the parameters a paper or report states its model in,
//! checked; the builder that writes the model as parsim's own scenario tables (a queueing
//! network, or a rank program on an interconnect), so that it runs in the same engines as a
//! hand-written scenario; the model's own equations and analysis; and the metrics it derives
//! from a run.
//!
//! - [`spmd`]: Cremonesi and Gennaro's SPMD programs on MIMD machines (`[spmd]`);
//! - [`pipeline`]: Kuntraruk's pipelined binary reduction tree (`[pipeline]`);
//! - [`profile`]: machine profiles (In et al.), message costs fitted to measurements.
//!
//! A model knows nothing of the scenario file: the input layer checks a section into a model's
//! parameters and asks the model for what it builds.

pub mod pipeline;
pub mod profile;
pub mod spmd;
pub mod tables;

/// The high-level model a scenario was built from, if any: the engines never see it, the
/// analysis and the derived metrics do.
#[derive(Clone, Debug)]
pub enum Model {
    /// An `[spmd]` section.
    Spmd(Box<spmd::Spmd>),
    /// A `[pipeline]` section.
    Pipeline(Box<pipeline::Pipeline>),
}

impl Model {
    /// The SPMD model, if this is one.
    pub fn spmd(&self) -> Option<&spmd::Spmd> {
        match self {
            Model::Spmd(m) => Some(m),
            Model::Pipeline(_) => None,
        }
    }

    /// The pipeline, if this is one.
    pub fn pipeline(&self) -> Option<&pipeline::Pipeline> {
        match self {
            Model::Pipeline(p) => Some(p),
            Model::Spmd(_) => None,
        }
    }
}
