//! `[training]` checked into a [`Training`]: its sizes, layers, bucket and allreduce, every
//! problem reported at once under `training.<field>`.

use std::path::Path;

use toml::Spanned;

use super::raw::RawTraining;
use super::{DEFAULT_BUCKET, Layer, Training};
use crate::dist::DistSpec;
use crate::problem::Problem;
use crate::program::MAX_RANKS;
use crate::program::collective::{Algorithm, Collective};

/// Checks `[training]`, every problem at once under `training.<field>`.
pub fn check(raw: &Spanned<RawTraining>, base: &Path) -> Result<Training, Vec<Problem>> {
    let at = raw.span().start;
    let r = raw.get_ref();
    let mut found = Vec::new();
    let mut add =
        |path: &str, message: String| found.push(Problem::new(Some(at), path.to_owned(), message));
    let most_gpus = MAX_RANKS / 2;
    if !(2..=most_gpus).contains(&r.gpus) {
        add(
            "training.gpus",
            format!(
                "must be a whole number from 2 to {most_gpus} (two ranks each), got {}",
                r.gpus
            ),
        );
    }
    let per_node = r.gpus_per_node.unwrap_or(1);
    if per_node < 1 || (r.gpus >= 1 && r.gpus % per_node != 0) {
        add(
            "training.gpus_per_node",
            format!(
                "must be a whole number >= 1 that divides the {} GPUs (whole nodes), got {per_node}",
                r.gpus
            ),
        );
    }
    let steps = r.steps.unwrap_or(1);
    if !(1..=1 << 20).contains(&steps) {
        add(
            "training.steps",
            format!("must be a whole number from 1 to 1048576, got {steps}"),
        );
    }
    let bucket = r.bucket.unwrap_or(DEFAULT_BUCKET as i64);
    if bucket < 1 {
        add(
            "training.bucket",
            format!("must be a whole number of bytes >= 1, got {bucket}"),
        );
    }
    let algorithm = match r.algorithm.as_deref() {
        None => Some(Algorithm::Ring),
        Some(name) => {
            let names: Vec<&str> = Collective::Allreduce
                .algorithms()
                .iter()
                .map(|a| a.name())
                .collect();
            match Algorithm::ALL.iter().find(|a| a.name() == name) {
                Some(&a) if names.contains(&a.name()) => Some(a),
                _ => {
                    add(
                        "training.algorithm",
                        format!(
                            "unknown allreduce algorithm {name:?} (it has: {})",
                            names.join(", ")
                        ),
                    );
                    None
                }
            }
        }
    };
    let segments = match (r.segments, algorithm) {
        (None, _) => None,
        (Some(s), Some(a)) if !Collective::Allreduce.segmented(a) => {
            add(
                "training.segments",
                format!("applies to the ring and the double_binary_tree, not {a} (got {s})"),
            );
            None
        }
        (Some(s), _) if !(1..=1 << 20).contains(&s) => {
            add(
                "training.segments",
                format!("must be a whole number from 1 to 1048576, got {s}"),
            );
            None
        }
        (Some(s), _) => Some(s as u32),
    };
    let combine_per_byte = r.combine_per_byte.unwrap_or(0.0);
    if !(combine_per_byte.is_finite() && combine_per_byte >= 0.0) {
        add(
            "training.combine_per_byte",
            format!("must be a finite time >= 0, got {combine_per_byte}"),
        );
    }
    if r.layer.is_empty() {
        add(
            "training.layer",
            "is missing: give the model's layers as [[training.layer]] tables (forward, backward, gradients)".to_owned(),
        );
    }
    let mut dist = |spec: &Spanned<DistSpec>, path: String| {
        crate::models::model_dist(spec, &path, "the step's closed form", base, &mut found)
    };
    let mut layers = Vec::new();
    let mut layer_problems = Vec::new();
    for (i, l) in r.layer.iter().enumerate() {
        let (lat, l) = (l.span().start, l.get_ref());
        let path = format!("training.layer[{i}]");
        let forward = dist(&l.forward, format!("{path}.forward"));
        let backward = dist(&l.backward, format!("{path}.backward"));
        if l.gradients < 1 {
            layer_problems.push(Problem::new(
                Some(lat),
                format!("{path}.gradients"),
                format!("must be a whole number of bytes >= 1, got {}", l.gradients),
            ));
        }
        let count = l.count.unwrap_or(1);
        if !(1..=1 << 20).contains(&count) {
            layer_problems.push(Problem::new(
                Some(lat),
                format!("{path}.count"),
                format!("must be a whole number from 1 to 1048576, got {count}"),
            ));
        }
        if let (Some(forward), Some(backward)) = (forward, backward) {
            layers.push(Layer {
                forward,
                backward,
                forward_spec: l.forward.get_ref().clone(),
                backward_spec: l.backward.get_ref().clone(),
                gradients: l.gradients.max(0) as u64,
                count: count.clamp(1, 1 << 20) as u32,
            });
        }
    }
    found.extend(layer_problems);
    let gradients: u64 = layers
        .iter()
        .map(|l| l.gradients * u64::from(l.count))
        .sum();
    // the default bucket holds a model smaller than it whole (DDP's one bucket); a bucket
    // written larger than the model is a mistake
    let bucket = match r.bucket {
        None => bucket.min(gradients.max(1) as i64),
        Some(_) => bucket,
    };
    if r.bucket.is_some()
        && !layers.is_empty()
        && layers.len() == r.layer.len()
        && bucket > 0
        && bucket as u64 > gradients
    {
        found.push(Problem::new(
            Some(at),
            "training.bucket".to_owned(),
            format!(
                "a bucket of {bucket} bytes is larger than the model's {gradients} bytes of gradients: every gradient would wait for the whole backward pass in one bucket; give a bucket of at most {gradients} bytes"
            ),
        ));
    }
    // every GPU runs each layer's two passes and each bucket's allreduce a step
    let layer_ops: f64 = layers.iter().map(|l| 2.0 * f64::from(l.count)).sum();
    let what = format!(
        "{steps} steps of {} layers on {} GPUs",
        layers.len(),
        r.gpus
    );
    if let Some(why) = crate::program::budget::operations_beyond_limit(
        &what,
        steps.max(1) as f64 * r.gpus.max(1) as f64 * layer_ops,
        "use fewer steps, layers or GPUs",
    ) {
        found.push(Problem::new(Some(at), "training.steps".to_owned(), why));
    }
    let Some(algorithm) = algorithm else {
        return Err(found);
    };
    if !found.is_empty() {
        return Err(found);
    }
    Ok(Training {
        gpus: r.gpus as u32,
        gpus_per_node: per_node as u32,
        steps: steps as u32,
        layers,
        bucket: bucket as u64,
        overlap: r.overlap.unwrap_or(true),
        algorithm,
        segments,
        combine_per_byte,
    })
}
