//! The closed form of a built training step (see the module documentation of [`super`]): the
//! step's time with the buckets' allreduces overlapping the backward pass and without, and the
//! makespan of the steps.

use std::cell::RefCell;
use std::collections::HashMap;

use super::Training;
use crate::analytic::expected_max_iid_normal;
use crate::predict::Prediction;
use crate::predict::program::ring_shares;
use crate::program::Program;
use crate::program::collective::{Algorithm, Collective, Cost, GroupShape};
use crate::topology::Shape;

/// The step's time as the module's recursion gives it, with the allreduces overlapping the
/// backward pass (`overlap`) or after it; each allreduce its idle-network time
/// `allreduce(bytes)`; `startup` is `t_s`, `hop` a signal's hop inside a node; a time that
/// every GPU reaches (a bucket ready, the backward pass done) is the expected maximum over the
/// GPUs of its sum of passes, `slowest(mean, variance)` (the mean itself for fixed times).
pub fn step_time(
    t: &Training,
    overlap: bool,
    startup: f64,
    hop: f64,
    allreduce: &dyn Fn(u64) -> f64,
    slowest: &dyn Fn(f64, f64) -> f64,
) -> f64 {
    let moments = |d: &crate::dist::Dist, n: u32| {
        let m = d.mean();
        (m * f64::from(n), d.scv() * m * m * f64::from(n))
    };
    let add = |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, a.1 + b.1);
    let forward = t
        .layers
        .iter()
        .map(|l| moments(&l.forward, l.count))
        .fold((0.0, 0.0), add);
    let buckets = t.buckets();
    // the sums of the passes up to the end of each bucket's backward pass
    let mut made = forward;
    let ends: Vec<(f64, f64)> = buckets
        .iter()
        .map(|b| {
            made = b
                .runs
                .iter()
                .map(|&(l, n)| moments(&t.layers[l].backward, n))
                .fold(made, add);
            made
        })
        .collect();
    let whole = slowest(made.0, made.1);
    let mut done = 0.0_f64;
    for (i, (b, end)) in buckets.iter().zip(&ends).enumerate() {
        let signals = (i + 1) as f64 * startup + hop;
        let ready = if overlap {
            slowest(end.0, end.1) + signals
        } else {
            whole + signals
        };
        done = ready.max(done) + allreduce(b.bytes);
    }
    (whole + buckets.len() as f64 * startup).max(done + startup + hop)
}

/// The prediction of `program.makespan`: the steps one after the other, each its closed form;
/// labelled exact where every time is fixed and the allreduces run on an idle network of a link
/// between every two nodes, one GPU a node.
pub fn predictions(prog: &Program, t: &Training) -> Vec<Prediction> {
    let net = &prog.interconnect;
    let topology = &net.topology;
    let node = topology.node_hop(0, 0);
    let hop = node.map_or(0.0, |_| net.node_latency);
    let mut cost = Cost {
        startup: net.startup + net.latency,
        per_byte: 1.0 / net.bandwidth,
        combine: 0.0,
        combine_per_byte: t.combine_per_byte,
        node_startup: net.startup + hop,
        node_per_byte: node.map_or(0.0, |h| 1.0 / (net.bandwidth * topology.capacity(h.link))),
    };
    let nodes = t.gpus / t.gpus_per_node;
    if t.algorithm == Algorithm::Hierarchical {
        // each ring step sends a message from every GPU at once: the node's on its link, and
        // across, each link's share of the nodes' messages to the next
        cost.node_per_byte *= f64::from(t.gpus_per_node);
        if nodes > 1 {
            cost.per_byte = ring_shares(topology, nodes, t.gpus_per_node).busiest / net.bandwidth;
        }
    }
    // each distinct bucket size once (the recursion walks every GPU's steps), for both forms
    let known = RefCell::new(HashMap::new());
    let allreduce = |bytes: u64| {
        *known.borrow_mut().entry(bytes).or_insert_with(|| {
            let shape = GroupShape::of_group(
                t.gpus,
                bytes as f64,
                t.segments.unwrap_or(1),
                t.gpus_per_node,
            );
            Collective::Allreduce.idle_time(t.algorithm, &shape, &cost)
        })
    };
    let gpus = u64::from(t.gpus);
    let slowest = |mean: f64, variance: f64| {
        expected_max_iid_normal(gpus, mean, variance.sqrt()).map_or(mean, |m| m.mean)
    };
    let with = step_time(t, true, net.startup, hop, &allreduce, &slowest);
    let without = step_time(t, false, net.startup, hop, &allreduce, &slowest);
    let (this, other, how, other_how) = if t.overlap {
        (with, without, "overlapping the backward pass", "after it")
    } else {
        (without, with, "after the backward pass", "overlapping it")
    };
    let mut breaks = Vec::new();
    if t.layers
        .iter()
        .any(|l| l.forward.scv() > 0.0 || l.backward.scv() > 0.0)
    {
        breaks.push(
            "compute times are random (a bucket is ready, and the backward pass done, at the expected maximum over the GPUs of normal sums of their passes, bucket by bucket)"
                .to_owned(),
        );
    }
    if t.gpus_per_node > 1 {
        breaks.push(format!(
            "{} GPUs share each node (the allreduce's messages between them, and their signals, share its link)",
            t.gpus_per_node
        ));
    }
    if topology.shape() != &Shape::Full {
        breaks.push(
            "the allreduce's time is its idle-network time, each message one link of its own (a full topology's), where this topology's routes may share and lengthen them"
                .to_owned(),
        );
    }
    let exact = breaks.is_empty();
    let mut method = format!(
        "training step closed form, the {} buckets' allreduces {how} (ready at the end of their layers' backward passes, each after the one before, its idle-network time); a step {this:.6e}, {other:.6e} with the allreduces {other_how}",
        t.buckets().len()
    );
    if !exact {
        method = format!("{method}; approximation: {}", breaks.join("; "));
    }
    vec![Prediction {
        metric: "program.makespan".to_owned(),
        value: this * f64::from(t.steps),
        method,
        exact,
        measured: None,
        recommended: false,
    }]
}
