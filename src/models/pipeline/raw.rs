//! `[pipeline]` as written: plain serde structs, checked for nothing but shape.

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use crate::dist::DistSpec;

/// `[pipeline]` as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPipeline {
    /// Ranks per group `P` (a power of two, at least 2).
    pub ranks: i64,
    /// Input items per group `N` (`N >= P`, `N - P` a multiple of `P/2`).
    pub items: i64,
    /// Groups of `P` ranks sharing the network (default 1).
    pub groups: Option<i64>,
    /// Time of one application task `T_comp`.
    #[schemars(with = "DistSpec")]
    pub task: Spanned<DistSpec>,
    /// Time of one merge `T_merge` (default: the task's distribution, as the report sets it).
    #[schemars(with = "Option<DistSpec>")]
    pub merge: Option<Spanned<DistSpec>>,
    /// Length of a result message, in bytes.
    #[schemars(with = "DistSpec")]
    pub message: Spanned<DistSpec>,
    /// Bytes per time unit of the shared link (without a `[topology]`; `C / 8` for `C` in bit/s).
    pub bandwidth: Option<f64>,
    /// Propagation delay `τ` of the shared link (default 0, as in the report).
    pub latency: Option<f64>,
    /// Makespans a source printed for this configuration, shown beside the simulation
    /// (`[[pipeline.published]]`).
    #[serde(default)]
    pub published: Vec<RawPublished>,
}

/// `[[pipeline.published]]`: one makespan a source printed.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPublished {
    /// Where it is printed and what it is, e.g. "Kuntraruk (2005), Table 1, M/M/1 prediction".
    pub source: String,
    /// The printed makespan.
    pub makespan: f64,
}
