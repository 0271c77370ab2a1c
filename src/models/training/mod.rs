//! A data-parallel training step (`[training]`): every GPU runs the forward pass of the model's
//! layers, then the backward pass from the last layer to the first, and the gradients are
//! summed over the GPUs by allreduces, one a bucket, before the next step. Buckets are PyTorch
//! DDP's: the layers' gradients, last layer first (the order the backward pass makes them),
//! fill a bucket until it holds at least `bucket` bytes.
//!
//! ```toml
//! [training]
//! gpus = 32                     # data-parallel replicas
//! gpus_per_node = 8             # consecutive GPUs on one node of the [topology]
//! steps = 4                     # steps one after the other
//! bucket = 26214400             # DDP's 25 MiB
//! overlap = true                # a bucket's allreduce overlaps the rest of the backward pass
//! algorithm = "ring"            # the allreduce's
//! [[training.layer]]
//! forward = { dist = "lognormal", mean = 1e-3, scv = 0.01 }
//! backward = { dist = "lognormal", mean = 2e-3, scv = 0.01 }
//! gradients = 4194304
//! count = 24
//! ```
//!
//! **The program.** A GPU computes and communicates at once (its streams), where a rank does
//! one thing at a time; so each GPU is two ranks on its node: rank `2 g` runs the GPU's compute
//! (forward and backward passes), rank `2 g + 1` its communication (the allreduces, among the
//! odd ranks: `group = "rank % 2"`, each rank with a core of its own). When a bucket's gradients
//! are ready (with `overlap`: after the backward pass of its last layer; without: after the
//! whole backward pass) the compute rank tells the communication rank with an empty `isend`
//! (its startup the compute rank's only cost); the communication rank allreduces the buckets
//! in order, each once it is ready and the one before is done, then sends an empty message
//! back, which the compute rank waits for before the next step (the optimizer needs every
//! gradient).
//!
//! **The step's closed form** (`analysis.rs`): with `F` the forward pass, `B_b` the backward
//! passes of bucket `b`'s layers, `t_s` the startup, `d` a hop of the node's own link (0
//! without one) and `A_b` bucket `b`'s allreduce on an idle network
//! ([`crate::program::collective::Collective::idle_time`]), bucket `b` is ready at
//! `r_b = F + sum_{j <= b} (B_j + t_s) + d` with overlap and `F + B + b t_s + d` without; its
//! allreduce ends at `e_b = max(r_b, e_{b-1}) + A_b`; the step ends at
//! `max(F + B + k t_s, e_k + t_s + d)` for `k` buckets. Exact with fixed times and allreduces
//! that take their idle-network time (no two messages on a link at once).

pub(crate) mod analysis;
pub(crate) mod build;
pub(crate) mod check;
pub mod raw;

use crate::dist::{Dist, DistSpec};
use crate::program::collective::Algorithm;

/// PyTorch DDP's default bucket: 25 MiB.
pub const DEFAULT_BUCKET: u64 = 25 << 20;

/// A checked training step.
#[derive(Clone, Debug)]
pub struct Training {
    /// Data-parallel replicas, a GPU each.
    pub gpus: u32,
    /// GPUs a node.
    pub gpus_per_node: u32,
    /// Steps one after the other.
    pub steps: u32,
    /// The layers, first to last.
    pub layers: Vec<Layer>,
    /// Most bytes a bucket holds.
    pub bucket: u64,
    /// Whether the allreduces overlap the backward pass.
    pub overlap: bool,
    /// The allreduce's algorithm.
    pub algorithm: Algorithm,
    /// Its chunks, where it has them.
    pub segments: Option<u32>,
    /// Time per byte combined.
    pub combine_per_byte: f64,
}

/// A layer, or `count` equal layers.
#[derive(Clone, Debug)]
pub struct Layer {
    /// Its forward pass.
    pub forward: Dist,
    /// Its backward pass.
    pub backward: Dist,
    /// The forward pass as written.
    pub forward_spec: DistSpec,
    /// The backward pass as written.
    pub backward_spec: DistSpec,
    /// Bytes of its gradients.
    pub gradients: u64,
    /// Equal layers one after the other.
    pub count: u32,
}

/// The gradients of some layers, allreduced together.
#[derive(Clone, Debug, PartialEq)]
pub struct Bucket {
    /// Its bytes.
    pub bytes: u64,
    /// Its layers in the order the backward pass makes them: (layer index, how many of its
    /// `count`).
    pub runs: Vec<(usize, u32)>,
}

impl Training {
    /// Bytes of the model's gradients.
    pub fn gradients(&self) -> u64 {
        self.layers
            .iter()
            .map(|l| l.gradients * u64::from(l.count))
            .sum()
    }

    /// The buckets in the order the backward pass fills them.
    pub fn buckets(&self) -> Vec<Bucket> {
        let mut out = Vec::new();
        let mut open = Bucket {
            bytes: 0,
            runs: Vec::new(),
        };
        for (i, layer) in self.layers.iter().enumerate().rev() {
            for _ in 0..layer.count {
                open.bytes += layer.gradients;
                match open.runs.last_mut() {
                    Some((l, n)) if *l == i => *n += 1,
                    _ => open.runs.push((i, 1)),
                }
                if open.bytes >= self.bucket {
                    out.push(std::mem::replace(
                        &mut open,
                        Bucket {
                            bytes: 0,
                            runs: Vec::new(),
                        },
                    ));
                }
            }
        }
        if !open.runs.is_empty() {
            out.push(open);
        }
        out
    }

    /// Ranks of the built program: two a GPU.
    pub fn ranks(&self) -> u32 {
        2 * self.gpus
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(gradients: u64, count: u32) -> Layer {
        Layer {
            forward: Dist::deterministic(1.0).unwrap(),
            backward: Dist::deterministic(2.0).unwrap(),
            forward_spec: DistSpec::det(1.0),
            backward_spec: DistSpec::det(2.0),
            gradients,
            count,
        }
    }

    #[test]
    fn buckets_fill_from_the_last_layer_until_they_hold_the_cap() {
        let t = Training {
            gpus: 4,
            gpus_per_node: 1,
            steps: 1,
            layers: vec![layer(10, 1), layer(4, 3), layer(7, 1)],
            bucket: 9,
            overlap: true,
            algorithm: Algorithm::Ring,
            segments: None,
            combine_per_byte: 0.0,
        };
        assert_eq!(t.gradients(), 29);
        let b = t.buckets();
        // backward order: 7, 4, 4, 4, 10
        assert_eq!(
            b,
            [
                Bucket {
                    bytes: 11,
                    runs: vec![(2, 1), (1, 1)]
                },
                Bucket {
                    bytes: 18,
                    runs: vec![(1, 2), (0, 1)]
                },
            ]
        );
    }
}
