//! The activity graph of a program's contention-free execution, recorded by the mean-value
//! evaluation ([`super::evaluation`]) as it walks the ranks: one node per moment a rank's clock
//! moves (a compute, a combine, a disk request, a message's injection and delivery, the end of
//! a receive or a collective step, an ideal barrier's release), each finishing a duration after
//! the latest of its predecessors:
//!
//! ```text
//! T_v = max_{u in pred(v)} T_u + D_v
//! ```
//!
//! with `D_v` a constant (a message's contention-free cost, a deterministic compute) or an
//! independent draw ([`Random`]: a compute or combine time, a region's total, a message or
//! disk request of random size). Which message a receive takes never depends on timing (FIFO
//! per source and tag), so the graph is the execution's structure whatever the durations: with
//! every duration at its mean its longest path is the evaluation's makespan, and with the
//! durations random the makespan is the random longest path the stochastic evaluation
//! ([`super::stochastic`]) takes the expectation of. What the graph leaves out is contention:
//! two messages on one link, two requests at one disk unit, more ranks than cores, which the
//! evaluation's own sharing check reports and the stochastic evaluation adds as queueing.

use rustc_hash::FxHashMap;

use crate::dist::Dist;

/// Nodes recorded before the graph is given up (about 50 bytes each), at budget factor 1
/// ([`crate::analytic::cost`]).
pub const MAX_NODES: usize = 250_000;

/// The most nodes recorded at any budget factor (about 2 GB).
pub const MOST_NODES: usize = 40_000_000;

/// Nodes recorded before the graph is given up, with the budget factor in force.
pub fn limit() -> usize {
    (crate::analytic::cost::scaled(MAX_NODES as f64) as usize).min(MOST_NODES)
}

/// Why a graph of `activities` nodes was not recorded, and how to allow it.
pub fn too_large(activities: usize) -> String {
    over_limit(activities, "")
}

/// Why a graph of at least `activities` nodes (estimated before it is walked) is not
/// recorded, and how to allow it.
pub fn too_large_at_least(activities: usize) -> String {
    over_limit(activities, "at least ")
}

/// [`too_large`]'s text, the count said `qualified` ("at least ").
fn over_limit(activities: usize, qualified: &str) -> String {
    let how = if activities > MOST_NODES {
        format!("more than parsim records at any budget ({MOST_NODES}, about 2 GB)")
    } else {
        crate::analytic::cost::allowance(activities as f64, MAX_NODES as f64)
    };
    format!(
        "the execution has {qualified}{activities} activities, more than the {} the budget lets it record (about 50 bytes each); {how}",
        limit()
    )
}

/// No node (a rank's clock before its first node is the root, node 0).
pub const NONE: u32 = u32::MAX;

/// A random duration of the graph, drawn independently at every node that has it.
#[derive(Clone, Copy, Debug)]
pub enum Random<'p> {
    /// One draw of a distribution (a compute, a combine).
    Draw(&'p Dist),
    /// A region of `n` iterations of `cost`: the engine draws the total at once, a gamma of
    /// mean `n E[cost]` and SCV `scv(cost) / n`.
    Region {
        /// Iterations.
        n: u64,
        /// One iteration's cost.
        cost: &'p Dist,
    },
    /// `a + b X`, `X` a draw of `dist` (a message or disk request of random size, a combine
    /// plus a time per byte).
    Affine {
        /// The fixed part.
        a: f64,
        /// The factor of the draw.
        b: f64,
        /// The law of the draw.
        dist: &'p Dist,
    },
}

impl Random<'_> {
    /// The mean.
    pub fn mean(&self) -> f64 {
        match self {
            Random::Draw(d) => d.mean(),
            Random::Region { n, cost } => *n as f64 * cost.mean(),
            Random::Affine { a, b, dist } => a + b * dist.mean(),
        }
    }

    /// The variance (infinite for a law without a second moment).
    pub fn variance(&self) -> f64 {
        let var = |d: &Dist| d.scv() * d.mean() * d.mean();
        match self {
            Random::Draw(d) => var(d),
            // the engine's gamma: mean n m, SCV scv / n, so variance n scv m^2
            Random::Region { n, cost } => *n as f64 * var(cost),
            Random::Affine { b, dist, .. } => b * b * var(dist),
        }
    }

    /// One draw, as the simulator draws it (a region's total at once: [`Dist::draw_sum`]).
    pub fn draw(&self, rng: &mut crate::rng::StreamRng) -> f64 {
        match self {
            Random::Draw(d) => d.draw(rng),
            Random::Region { n, cost } => cost.draw_sum(*n, rng),
            Random::Affine { a, b, dist } => a + b * dist.draw(rng),
        }
    }

    /// A key equal for equal laws (the same distribution object and parameters).
    fn key(&self) -> (u8, usize, u64, u64) {
        match self {
            Random::Draw(d) => (0, std::ptr::from_ref(*d) as usize, 0, 0),
            Random::Region { n, cost } => (1, std::ptr::from_ref(*cost) as usize, *n, 0),
            Random::Affine { a, b, dist } => (
                2,
                std::ptr::from_ref(*dist) as usize,
                a.to_bits(),
                b.to_bits(),
            ),
        }
    }
}

/// A node's duration after its predecessors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Duration {
    /// A constant.
    Fixed(f64),
    /// An independent draw of the law [`Graph::laws`]`[i]`.
    Random(u32),
}

/// A message's crossing of the network, for the queueing the graph leaves out.
#[derive(Clone, Debug)]
pub struct Message {
    /// The node of its delivery.
    pub node: u32,
    /// Its bytes (the mean of a random size).
    pub bytes: f64,
    /// Its links, in route order (indices into [`Graph::links`]).
    pub hops: std::ops::Range<u32>,
}

/// The activity graph (see the module documentation). Nodes are numbered in the order the
/// evaluation created them, which is a topological order: a node's predecessors come first.
#[derive(Clone, Debug)]
pub struct Graph<'p> {
    starts: Vec<u32>,
    preds: Vec<u32>,
    /// Per node: its duration.
    pub duration: Vec<Duration>,
    /// Per node: the rank whose clock it is, or [`NONE`] (the root, an ideal barrier's
    /// release).
    pub owner: Vec<u32>,
    /// Per node: its finish time in the mean-value evaluation.
    pub time: Vec<f64>,
    /// The distinct random laws.
    pub laws: Vec<Random<'p>>,
    /// Per rank: the nodes its clock passed through, in order, each with the category
    /// ([`crate::program::Category`] index) of the time since the previous one.
    pub chains: Vec<Vec<(u32, u8)>>,
    /// Outermost phase entries and exits: (rank, phase, node, true for an entry).
    pub phase_marks: Vec<(u32, u16, u32, bool)>,
    /// Ends of the outermost loops' iterations: (the loop's [`crate::program::Instr::Next`]
    /// instruction, rank, the rank's node when it ended the iteration).
    pub trips: Vec<(u32, u32, u32)>,
    /// Every message that crossed a link.
    pub messages: Vec<Message>,
    /// The links of the messages' routes: topology link ids.
    pub links: Vec<u64>,
    law_index: FxHashMap<(u8, usize, u64, u64), u32>,
}

impl<'p> Graph<'p> {
    /// A graph of `ranks` ranks with its root (node 0, time 0), every rank's clock at it.
    pub fn new(ranks: u32) -> Graph<'p> {
        let mut g = Graph {
            starts: vec![0],
            preds: Vec::new(),
            duration: Vec::new(),
            owner: Vec::new(),
            time: Vec::new(),
            laws: Vec::new(),
            chains: vec![vec![(0, 0)]; ranks as usize],
            phase_marks: Vec::new(),
            trips: Vec::new(),
            messages: Vec::new(),
            links: Vec::new(),
            law_index: FxHashMap::default(),
        };
        g.add(&[], Duration::Fixed(0.0), NONE, 0.0);
        g
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.duration.len()
    }

    /// True without nodes (never: the root is node 0).
    pub fn is_empty(&self) -> bool {
        self.duration.is_empty()
    }

    /// Number of edges (predecessor links).
    pub fn edges(&self) -> usize {
        self.preds.len()
    }

    /// Node `v`'s predecessors.
    pub fn preds(&self, v: u32) -> &[u32] {
        &self.preds[self.starts[v as usize] as usize..self.starts[v as usize + 1] as usize]
    }

    /// Adds a node after `preds` (repeats and [`NONE`] dropped) lasting `duration`, owned by
    /// `owner`, finishing at `time` in the mean-value evaluation; returns its id.
    pub fn add(&mut self, preds: &[u32], duration: Duration, owner: u32, time: f64) -> u32 {
        let id = self.duration.len() as u32;
        let first = self.preds.len();
        for &p in preds {
            if p != NONE && !self.preds[first..].contains(&p) {
                self.preds.push(p);
            }
        }
        self.starts.push(self.preds.len() as u32);
        self.duration.push(duration);
        self.owner.push(owner);
        self.time.push(time);
        id
    }

    /// The duration of a draw of `law`: its index among the graph's laws.
    pub fn random(&mut self, law: Random<'p>) -> Duration {
        let key = law.key();
        let n = self.laws.len() as u32;
        let i = *self.law_index.entry(key).or_insert(n);
        if i == n {
            self.laws.push(law);
        }
        Duration::Random(i)
    }

    /// The mean of a node's duration.
    pub fn mean(&self, v: u32) -> f64 {
        match self.duration[v as usize] {
            Duration::Fixed(c) => c,
            Duration::Random(i) => self.laws[i as usize].mean(),
        }
    }

    /// The variance of a node's duration.
    pub fn variance(&self, v: u32) -> f64 {
        match self.duration[v as usize] {
            Duration::Fixed(_) => 0.0,
            Duration::Random(i) => self.laws[i as usize].variance(),
        }
    }

    /// Per node: how many nodes have it as a predecessor.
    pub fn successors(&self) -> Vec<u32> {
        let mut n = vec![0_u32; self.len()];
        for &p in &self.preds {
            n[p as usize] += 1;
        }
        n
    }

    /// Each rank's last node.
    pub fn finals(&self) -> Vec<u32> {
        self.chains
            .iter()
            .map(|c| c.last().map_or(0, |&(v, _)| v))
            .collect()
    }
}
