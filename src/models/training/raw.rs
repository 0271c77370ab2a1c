//! `[training]` as written: plain serde structs, checked for nothing but shape.

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use crate::dist::DistSpec;

/// `[training]` as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTraining {
    /// Data-parallel replicas, a GPU each.
    pub gpus: i64,
    /// GPUs on each node (default 1); the topology's nodes hold this many.
    pub gpus_per_node: Option<i64>,
    /// Training steps run one after the other (default 1).
    pub steps: Option<i64>,
    /// Bytes of gradients that close a bucket (default 26,214,400, PyTorch DDP's 25 MiB, or the
    /// whole model when it is smaller): the layers' gradients, last layer first, fill a bucket
    /// until it holds at least this many.
    pub bucket: Option<i64>,
    /// Whether a bucket's allreduce starts as soon as its gradients are ready, overlapping the
    /// rest of the backward pass (default true), or after the whole backward pass.
    pub overlap: Option<bool>,
    /// The allreduce's algorithm (default `ring`).
    pub algorithm: Option<String>,
    /// Chunks of the ring's blocks or the double binary tree's halves.
    pub segments: Option<i64>,
    /// Time per byte of combining gradients (default 0).
    pub combine_per_byte: Option<f64>,
    /// The layers, first to last (`[[training.layer]]`).
    #[serde(default)]
    #[schemars(with = "Vec<RawLayer>")]
    pub layer: Vec<Spanned<RawLayer>>,
}

/// `[[training.layer]]`: a layer, or `count` equal layers one after the other.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLayer {
    /// Time of its forward pass.
    #[schemars(with = "DistSpec")]
    pub forward: Spanned<DistSpec>,
    /// Time of its backward pass.
    #[schemars(with = "DistSpec")]
    pub backward: Spanned<DistSpec>,
    /// Bytes of its gradients.
    pub gradients: i64,
    /// Equal layers one after the other (default 1).
    pub count: Option<i64>,
}
