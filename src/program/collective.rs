//! Collective operations as program fragments: each algorithm is, for every rank, a sequence of
//! steps (send to a peer, receive from a peer, or both at once, then maybe combine), computed on
//! the fly from the rank's index in its group, so a collective of 4,096 ranks costs no memory.
//! Because the steps are ordinary messages they run on any topology, with its contention.
//!
//! Each algorithm also carries its contention-free closed form ([`Collective::closed_form`]),
//! in the Hockney style: a message of `m` bytes costs `c(m) = a + b m` (`a` the startup plus
//! the per-hop latency, `b` the time per byte), and combining `m` bytes costs `g(m)`. Under
//! parsim's semantics (a `send` blocks until its message is delivered; a receiver's mailbox
//! buffers early messages) the formulas below are the exact execution times of the algorithms
//! on an idle network of one hop between any two ranks with deterministic costs, where the
//! table says so (tests check each against the simulation):
//!
//! | collective | algorithm | time | exact for |
//! |---|---|---|---|
//! | bcast | linear | `(P-1) c(m)` | all `P` |
//! | bcast | binomial | `ceil(lg P) c(m)` | all `P` |
//! | bcast | binary | `c(m)` times the most left-and-right moves (1 and 2) on a path of the heap-ordered binary tree | all `P` |
//! | bcast | chain, `s` segments | `(P - 2 + s) c(m/s)` | `P >= 2` |
//! | reduce | linear | `c(m) + (P-1) g(m)` | all `P` |
//! | reduce | binomial | `lg P (c(m) + g(m))` | `P` a power of two |
//! | reduce | binary | from the leaves up, `t = T(right) + c(m) + g(m)`, then `T(v) = max(t, T(left) + c(m)) + g(m)` (a missing child skipped, a leaf 0), the root's `T` | all `P` |
//! | reduce | chain, `s` segments | `(P - 2 + s) (c(m/s) + g(m/s))`; for `P = 2`, `max(s c + g, c + s g)` of a segment | all `P` |
//! | allreduce | recursive doubling | `lg P (c(m) + g(m))`, plus `2 c(m) + g(m)` when `P` is not a power of two | all `P` |
//! | allreduce | ring, `s` chunks a block | `(P-1) s (2 c(m/(P s)) + g(m/(P s)))` | all `P` |
//! | allreduce | double binary tree, `s` chunks | [`Collective::idle_time`] over its steps (below) | all `P` |
//! | allreduce | hierarchical, `L` ranks a node, `N` nodes | `(L-1) (2 c'(m/L) + g(m/L)) + (N-1) (2 c(m/(L N)) + g(m/(L N)))`, `c'` the cost inside a node | all `P` (see below) |
//! | allreduce | reduce + bcast (binomial) | `lg P (2 c(m) + g(m))` | `P` a power of two |
//! | scatter, gather | linear | `(P-1) c(m)` (scatter), `c(m)` (gather) | all `P` |
//! | scatter, gather | binomial | `ceil(lg P) a + (P-1) b m` | `P` a power of two |
//! | allgather | ring | `(P-1) c(m)` | all `P` |
//! | allgather | bruck | `ceil(lg P) a + (P-1) b m` | all `P` |
//! | allgather | recursive doubling | `lg P a + (P-1) b m` | `P` a power of two (refused otherwise) |
//! | alltoall | pairwise | `(P-1) c(m)` | all `P` |
//! | barrier | dissemination | `ceil(lg P) c(0)` | all `P` |
//! | barrier | binomial (gather then bcast of nothing) | `2 ceil(lg P) c(0)` | `P` a power of two |
//! | barrier | ideal | `0` | all `P` |
//!
//! Where a formula is not exact (the binomial reduce of a `P` that is not a power of two,
//! whose tree is unbalanced), it is reported as the round model's approximation.
//!
//! The collectives of GPU training (NCCL's) are the allreduce's last three rows. The ring cuts
//! each of its `P` blocks into `s` chunks (NCCL's chunk size), each step one chunk to the right
//! neighbour while one comes from the left: every link busy every step, the bandwidth-optimal
//! `2 (P-1)/P m` bytes a rank. The double binary tree (NCCL 2.4) reduces then broadcasts half of
//! the data along each of two binary trees, the second the mirror image of the first (rank `r`
//! at `P-1-r`), so that a rank inner in one tree is a leaf of the other; each half goes in `s`
//! chunks, a rank taking chunk `j` of the first tree then of the second, all chunks up, then all
//! down. Its time on an idle network is the exact recursion over its steps that
//! [`Collective::idle_time`] runs (the binary reduce's recursion, for two interleaved trees).
//! The hierarchical allreduce reduce-scatters by a ring inside each node of `L` ranks
//! (consecutive ranks, [`GroupShape::per_node`]), allreduces each rank's block by a ring over the
//! `N` nodes with the ranks of the same place in the other nodes, then allgathers by the ring
//! inside the node; its `c'` and `c` are the costs [`Cost`] gives for messages inside a node and
//! between nodes (where the `L` messages a node sends at once share a link, the caller gives the
//! time per byte each of them gets).

use std::collections::{HashMap, VecDeque};
use std::fmt;

/// The collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// One root's `m` bytes to every rank.
    Bcast,
    /// Every rank's `m` bytes combined at the root.
    Reduce,
    /// Every rank's `m` bytes combined, the result at every rank.
    Allreduce,
    /// The root's block of `m` bytes for each rank, to that rank.
    Scatter,
    /// Each rank's block of `m` bytes, to the root.
    Gather,
    /// Each rank's block of `m` bytes, to every rank.
    Allgather,
    /// A block of `m` bytes from every rank to every rank.
    Alltoall,
    /// Every rank waits for all.
    Barrier,
}

/// The algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// The root talks to each rank in turn.
    Linear,
    /// A binomial tree (`ceil(lg P)` rounds).
    Binomial,
    /// A binary tree in heap order.
    Binary,
    /// A pipelined chain of segments.
    Chain,
    /// Partners `rank XOR 2^k`.
    RecursiveDoubling,
    /// A ring of `P - 1` (or `2(P - 1)`) neighbour exchanges.
    Ring,
    /// Bruck's allgather: partners `rank -+ 2^k`, any `P`.
    Bruck,
    /// A reduce to rank 0 then a bcast (both binomial).
    ReduceBcast,
    /// Exchange with `rank + k` and `rank - k` for `k = 1..P-1`.
    Pairwise,
    /// Dissemination: `ceil(lg P)` rounds of 0-byte messages to `rank + 2^k`.
    Dissemination,
    /// Two mirrored binary trees, each reducing then broadcasting half of the data in chunks.
    DoubleBinaryTree,
    /// A ring inside each node, a ring across the nodes, the ring inside each node again.
    Hierarchical,
    /// No messages: every rank leaves when the last one arrives.
    Ideal,
}

/// One step of one rank: a send, a receive, or both at once; then, after the receive, maybe a
/// combine of some bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// Send `bytes` to this peer (index in the group).
    pub send: Option<(u32, f64)>,
    /// Receive from this peer (index in the group).
    pub recv: Option<u32>,
    /// Bytes combined once the receive is complete (reductions).
    pub combine: Option<f64>,
}

impl Step {
    fn send(peer: u32, bytes: f64) -> Step {
        Step {
            send: Some((peer, bytes)),
            recv: None,
            combine: None,
        }
    }

    fn recv(peer: u32) -> Step {
        Step {
            send: None,
            recv: Some(peer),
            combine: None,
        }
    }

    fn exchange(to: u32, bytes: f64, from: u32) -> Step {
        Step {
            send: Some((to, bytes)),
            recv: Some(from),
            combine: None,
        }
    }

    fn combining(mut self, bytes: f64) -> Step {
        self.combine = Some(bytes);
        self
    }
}

/// The parameters a collective's steps depend on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupShape {
    /// Ranks in the group.
    pub n: u32,
    /// This rank's index in the group.
    pub me: u32,
    /// The root's index (rooted collectives).
    pub root: u32,
    /// Bytes (see [`super::CollectiveOp::bytes`]).
    pub bytes: f64,
    /// Segments of a chain, chunks of a ring's block or of a double binary tree's half.
    pub segments: u32,
    /// Ranks a node: the hierarchical allreduce's nodes are blocks of this many consecutive
    /// ranks.
    pub per_node: u32,
}

impl GroupShape {
    /// A group of `n` ranks seen from its first (the root), for its closed forms.
    pub fn of_group(n: u32, bytes: f64, segments: u32, per_node: u32) -> GroupShape {
        GroupShape {
            n,
            me: 0,
            root: 0,
            bytes,
            segments,
            per_node,
        }
    }

    /// The shape a rank holds outside any collective: a group of itself alone.
    pub const ALONE: GroupShape = GroupShape {
        n: 1,
        me: 0,
        root: 0,
        bytes: 0.0,
        segments: 1,
        per_node: 1,
    };
}

fn is_pow2(n: u32) -> bool {
    n.is_power_of_two()
}

fn ceil_lg(n: u32) -> u32 {
    n.next_power_of_two().trailing_zeros()
}

/// Highest set bit of `v > 0`.
fn msb(v: u32) -> u32 {
    31 - v.leading_zeros()
}

/// The binomial tree of MPICH and Open MPI: the parent of `v > 0` is `v` with its lowest set
/// bit cleared, its children are `v + 2^j` for `2^j` below that bit (the root, 0, has every
/// `j`), so a subtree is a block of consecutive ranks and half of the messages go to a
/// neighbour. The parent of `v > 0`:
fn binomial_parent(v: u32) -> u32 {
    v & (v - 1)
}

/// Number of children of `v` in the binomial tree over `n`: the `j` below `v`'s lowest set
/// bit (any `j` for the root) with `v + 2^j < n`, i.e. `j <= floor(lg(n - v - 1))`; the
/// children are `v + 2^j` for `j` from 0 to this count minus one.
fn binomial_children(v: u32, n: u32) -> u32 {
    if n <= v + 1 {
        return 0;
    }
    let fit = msb(n - v - 1) + 1;
    if v == 0 {
        fit
    } else {
        fit.min(v.trailing_zeros())
    }
}

/// Ranks in the binomial subtree of `v` (over `n` ranks): the block from `v` to the next
/// multiple of `v`'s lowest set bit, cut at `n`.
fn binomial_subtree(v: u32, n: u32) -> u32 {
    if v == 0 {
        return n;
    }
    let block = 1_u64 << v.trailing_zeros();
    block.min(u64::from(n - v)) as u32
}

impl Collective {
    /// Every collective.
    pub const ALL: [Collective; 8] = [
        Collective::Bcast,
        Collective::Reduce,
        Collective::Allreduce,
        Collective::Scatter,
        Collective::Gather,
        Collective::Allgather,
        Collective::Alltoall,
        Collective::Barrier,
    ];

    /// The algorithms this collective offers, the first being the default.
    pub fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            Collective::Bcast => &[Binomial, Linear, Binary, Chain],
            Collective::Reduce => &[Binomial, Linear, Binary, Chain],
            Collective::Allreduce => &[
                RecursiveDoubling,
                Ring,
                ReduceBcast,
                DoubleBinaryTree,
                Hierarchical,
            ],
            Collective::Scatter | Collective::Gather => &[Binomial, Linear],
            Collective::Allgather => &[Ring, Bruck, RecursiveDoubling],
            Collective::Alltoall => &[Pairwise],
            Collective::Barrier => &[Ideal, Dissemination, Binomial],
        }
    }

    /// Whether this collective has a root.
    pub fn rooted(self) -> bool {
        matches!(
            self,
            Collective::Bcast | Collective::Reduce | Collective::Scatter | Collective::Gather
        )
    }

    /// Whether the algorithm cuts its messages into `segments` (a chain's segments, a ring's or
    /// a double binary tree's chunks).
    pub fn segmented(self, algorithm: Algorithm) -> bool {
        matches!(
            (self, algorithm),
            (_, Algorithm::Chain)
                | (
                    Collective::Allreduce,
                    Algorithm::Ring | Algorithm::DoubleBinaryTree
                )
        )
    }

    /// Why the algorithm cannot run on `n` ranks of `per_node` a node, if it cannot.
    pub fn refuses(self, algorithm: Algorithm, n: u32, per_node: u32) -> Option<String> {
        if !self.algorithms().contains(&algorithm) {
            let names: Vec<String> = self.algorithms().iter().map(|a| a.to_string()).collect();
            return Some(format!(
                "{self} has no {algorithm} algorithm (it has: {})",
                names.join(", ")
            ));
        }
        if algorithm == Algorithm::Hierarchical && !n.is_multiple_of(per_node) {
            return Some(format!(
                "the hierarchical allreduce needs whole nodes: {n} ranks are not a multiple of {per_node} ranks a node"
            ));
        }
        if algorithm == Algorithm::RecursiveDoubling && self == Collective::Allgather && !is_pow2(n)
        {
            return Some(format!(
                "recursive doubling allgather needs a power-of-two group, got {n} (use bruck or ring)"
            ));
        }
        None
    }

    /// Step `k` of a rank (see [`GroupShape`]), or `None` when it is done. The ideal barrier has no
    /// steps (the engine synchronises it directly).
    pub fn step(self, algorithm: Algorithm, s: &GroupShape, k: u32) -> Option<Step> {
        let GroupShape {
            n,
            me,
            root,
            bytes,
            segments,
            per_node,
        } = *s;
        if n <= 1 {
            return None;
        }
        // rooted collectives work on ranks relative to the root (no division: every index is
        // below n)
        let v = if me >= root { me - root } else { me + n - root };
        let abs = |rel: u32| {
            let a = rel + root;
            if a >= n { a - n } else { a }
        };
        use Algorithm::*;
        match (self, algorithm) {
            (Collective::Bcast, Linear) => {
                if v == 0 {
                    (k < n - 1).then(|| Step::send(abs(k + 1), bytes))
                } else {
                    (k == 0).then(|| Step::recv(abs(0)))
                }
            }
            (Collective::Bcast, Binomial) => {
                binomial_down(v, n, k, |_| bytes).map(|st| map_peers(st, abs))
            }
            (Collective::Reduce, Binomial) => {
                binomial_up(v, n, k, bytes).map(|st| map_peers(st, abs))
            }
            (Collective::Bcast, Binary) => binary_down(v, n, k, bytes).map(|st| map_peers(st, abs)),
            (Collective::Reduce, Binary) => binary_up(v, n, k, bytes).map(|st| map_peers(st, abs)),
            (Collective::Bcast, Chain) => {
                chain(v, n, k, bytes, segments, false).map(|st| map_peers(st, abs))
            }
            (Collective::Reduce, Chain) => {
                // the chain runs towards the root: relative rank n-1 starts, 0 finishes
                chain(n - 1 - v, n, k, bytes, segments, true)
                    .map(|st| map_peers(st, |r| abs(n - 1 - r)))
            }
            (Collective::Reduce, Linear) => {
                if v == 0 {
                    (k < n - 1).then(|| Step::recv(abs(k + 1)).combining(bytes))
                } else {
                    (k == 0).then(|| Step::send(abs(0), bytes))
                }
            }
            (Collective::Allreduce, RecursiveDoubling) => recursive_doubling(me, n, k, bytes),
            (Collective::Allreduce, Ring) => ring_allreduce(me, n, k, bytes, segments.max(1)),
            (Collective::Allreduce, DoubleBinaryTree) => {
                double_binary_tree(me, n, k, bytes, segments.max(1))
            }
            (Collective::Allreduce, Hierarchical) => hierarchical(me, n, k, bytes, per_node.max(1)),
            (Collective::Allreduce, ReduceBcast) => {
                let up = binomial_children(me, n) + u32::from(me != 0);
                if k < up {
                    binomial_up(me, n, k, bytes)
                } else {
                    binomial_down(me, n, k - up, |_| bytes)
                }
            }
            (Collective::Scatter, Linear) => {
                if v == 0 {
                    (k < n - 1).then(|| Step::send(abs(k + 1), bytes))
                } else {
                    (k == 0).then(|| Step::recv(abs(0)))
                }
            }
            (Collective::Gather, Linear) => {
                if v == 0 {
                    (k < n - 1).then(|| Step::recv(abs(k + 1)))
                } else {
                    (k == 0).then(|| Step::send(abs(0), bytes))
                }
            }
            (Collective::Scatter, Binomial) => binomial_down(v, n, k, |child| {
                bytes * f64::from(binomial_subtree(child, n))
            })
            .map(|st| map_peers(st, abs)),
            (Collective::Gather, Binomial) => {
                // receive each child's subtree, smallest first, then send the own subtree up
                let children = binomial_children(v, n);
                if k < children {
                    Some(Step::recv(abs(v + (1 << k))))
                } else if k == children && v != 0 {
                    Some(Step::send(
                        abs(binomial_parent(v)),
                        bytes * f64::from(binomial_subtree(v, n)),
                    ))
                } else {
                    None
                }
            }
            (Collective::Allgather, Ring) => {
                (k < n - 1).then(|| Step::exchange((me + 1) % n, bytes, (me + n - 1) % n))
            }
            (Collective::Allgather, Bruck) => {
                let dist = 1_u64 << k;
                (dist < u64::from(n)).then(|| {
                    let d = dist as u32;
                    let blocks = d.min(n - d);
                    Step::exchange((me + n - d) % n, bytes * f64::from(blocks), (me + d) % n)
                })
            }
            (Collective::Allgather, RecursiveDoubling) => {
                let d = 1_u64 << k;
                (d < u64::from(n)).then(|| {
                    let peer = me ^ d as u32;
                    Step::exchange(peer, bytes * d as f64, peer)
                })
            }
            (Collective::Alltoall, Pairwise) => {
                (k < n - 1).then(|| Step::exchange((me + k + 1) % n, bytes, (me + n - k - 1) % n))
            }
            (Collective::Barrier, Dissemination) => {
                let d = 1_u64 << k;
                (d < u64::from(n)).then(|| {
                    let d = d as u32;
                    Step::exchange((me + d) % n, 0.0, (me + n - d) % n)
                })
            }
            (Collective::Barrier, Binomial) => {
                let up = binomial_children(me, n) + u32::from(me != 0);
                if k < up {
                    binomial_up(me, n, k, 0.0).map(|mut st| {
                        st.combine = None;
                        st
                    })
                } else {
                    binomial_down(me, n, k - up, |_| 0.0)
                }
            }
            _ => None,
        }
    }

    /// The contention-free closed form (see the module docs) with message cost `c(m)`,
    /// startup `a`, time per byte `b` and combine cost `g(m)`; and whether it is exact for this
    /// group size (else the round model's approximation).
    pub fn closed_form(self, algorithm: Algorithm, shape: &GroupShape, cost: &Cost) -> (f64, bool) {
        let GroupShape {
            n,
            bytes,
            segments,
            per_node,
            ..
        } = *shape;
        if n <= 1 {
            return (0.0, true);
        }
        let (c, g) = (|m: f64| cost.message(m), |m: f64| cost.combine(m));
        let p = f64::from(n);
        let lg = f64::from(ceil_lg(n));
        let m = bytes;
        let s = f64::from(segments.max(1));
        use Algorithm::*;
        match (self, algorithm) {
            (Collective::Bcast, Linear) | (Collective::Scatter, Linear) => ((p - 1.0) * c(m), true),
            (Collective::Bcast, Binomial) => (lg * c(m), true),
            (Collective::Bcast, Binary) => (f64::from(binary_weight(n)) * c(m), true),
            (Collective::Bcast, Chain) => ((p - 2.0 + s) * c(m / s), true),
            (Collective::Reduce, Linear) => (c(m) + (p - 1.0) * g(m), true),
            (Collective::Reduce, Binomial) => (lg * (c(m) + g(m)), is_pow2(n)),
            (Collective::Reduce, Binary) => (binary_reduce(n, c(m), g(m)), true),
            (Collective::Reduce, Chain) => {
                let (c, g) = (c(m / s), g(m / s));
                if n == 2 {
                    // the one receiver combines while the next segment travels
                    ((s * c + g).max(c + s * g), true)
                } else {
                    ((p - 2.0 + s) * (c + g), true)
                }
            }
            (Collective::Allreduce, RecursiveDoubling) => {
                let p2 = 1_u32 << msb(n);
                let core = f64::from(msb(p2)) * (c(m) + g(m));
                if p2 == n {
                    (core, true)
                } else {
                    (core + 2.0 * c(m) + g(m), true)
                }
            }
            (Collective::Allreduce, Ring) => {
                let chunk = m / (p * s);
                ((p - 1.0) * s * (2.0 * c(chunk) + g(chunk)), true)
            }
            (Collective::Allreduce, DoubleBinaryTree) => {
                (self.idle_time(algorithm, shape, cost), true)
            }
            (Collective::Allreduce, Hierarchical) => {
                let l = f64::from(per_node.max(1));
                let nodes = p / l;
                let (inside, across) = (m / l, m / (l * nodes));
                let node = |x: f64| cost.node_message(x);
                (
                    (l - 1.0) * (2.0 * node(inside) + g(inside))
                        + (nodes - 1.0) * (2.0 * c(across) + g(across)),
                    true,
                )
            }
            (Collective::Allreduce, ReduceBcast) => (lg * (2.0 * c(m) + g(m)), is_pow2(n)),
            (Collective::Gather, Linear) => (c(m), true),
            (Collective::Scatter | Collective::Gather, Binomial) => (
                lg * cost.startup + (p - 1.0) * cost.per_byte * m,
                is_pow2(n),
            ),
            (Collective::Allgather, Ring) | (Collective::Alltoall, Pairwise) => {
                ((p - 1.0) * c(m), true)
            }
            (Collective::Allgather, Bruck) | (Collective::Allgather, RecursiveDoubling) => {
                (lg * cost.startup + (p - 1.0) * cost.per_byte * m, true)
            }
            (Collective::Barrier, Dissemination) => (lg * c(0.0), true),
            (Collective::Barrier, Binomial) => (2.0 * lg * c(0.0), is_pow2(n)),
            (Collective::Barrier, Ideal) => (0.0, true),
            _ => (f64::NAN, false),
        }
    }

    /// The time the collective takes on an idle network where every message has a link of its
    /// own, costs `c(m)` ([`Cost::node_message`] between ranks of one node) and combines cost
    /// `g(m)`: the exact recursion over every rank's steps under the executor's semantics (a
    /// step starts when the previous one ends; its send is delivered `c(m)` later; it ends when
    /// its send is delivered and the message it receives has arrived, plus its combine), the
    /// last rank's end. `NaN` if the steps wait for each other for ever.
    pub fn idle_time(self, algorithm: Algorithm, shape: &GroupShape, cost: &Cost) -> f64 {
        let n = shape.n as usize;
        if n <= 1 {
            return 0.0;
        }
        let per_node = shape.per_node.max(1);
        let mut clock = vec![0.0_f64; n];
        let mut next = vec![0_u32; n];
        let mut posted = vec![false; n];
        let mut queued = vec![true; n];
        let mut finished = 0;
        // arrival times of the messages from one rank to another, in the order sent
        let mut arrivals: HashMap<(u32, u32), VecDeque<f64>> = HashMap::new();
        let mut ready: VecDeque<u32> = (0..shape.n).collect();
        while let Some(r) = ready.pop_front() {
            let ri = r as usize;
            queued[ri] = false;
            let me = GroupShape { me: r, ..*shape };
            loop {
                let Some(st) = self.step(algorithm, &me, next[ri]) else {
                    finished += 1;
                    break;
                };
                let start = clock[ri];
                let mut end = start;
                if let Some((to, bytes)) = st.send {
                    let c = if to / per_node == r / per_node {
                        cost.node_message(bytes)
                    } else {
                        cost.message(bytes)
                    };
                    end = start + c;
                    if !posted[ri] {
                        posted[ri] = true;
                        arrivals.entry((r, to)).or_default().push_back(end);
                        if !queued[to as usize] {
                            queued[to as usize] = true;
                            ready.push_back(to);
                        }
                    }
                }
                if let Some(from) = st.recv {
                    match arrivals.get_mut(&(from, r)).and_then(VecDeque::pop_front) {
                        Some(t) => end = end.max(t),
                        None => break,
                    }
                }
                if let Some(bytes) = st.combine {
                    end += cost.combine(bytes);
                }
                clock[ri] = end;
                next[ri] += 1;
                posted[ri] = false;
            }
        }
        if finished < n {
            return f64::NAN;
        }
        clock.into_iter().fold(0.0, f64::max)
    }

    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Bcast => "bcast",
            Collective::Reduce => "reduce",
            Collective::Allreduce => "allreduce",
            Collective::Scatter => "scatter",
            Collective::Gather => "gather",
            Collective::Allgather => "allgather",
            Collective::Alltoall => "alltoall",
            Collective::Barrier => "barrier",
        }
    }
}

/// The costs of the closed forms: a message of `m` bytes `startup + per_byte m` (between ranks
/// of one node `node_startup + node_per_byte m`), a combine of `m` bytes
/// `combine + combine_per_byte m`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// `a`: startup plus the latency of one hop.
    pub startup: f64,
    /// `b`: time per byte.
    pub per_byte: f64,
    /// Time per combine step.
    pub combine: f64,
    /// Time per byte combined.
    pub combine_per_byte: f64,
    /// `a'`: startup plus the latency of a message inside a node.
    pub node_startup: f64,
    /// `b'`: time per byte of a message inside a node.
    pub node_per_byte: f64,
}

impl Cost {
    /// `c(m) = a + b m`.
    pub fn message(&self, m: f64) -> f64 {
        self.startup + self.per_byte * m
    }

    /// `c'(m) = a' + b' m`, a message inside a node.
    pub fn node_message(&self, m: f64) -> f64 {
        self.node_startup + self.node_per_byte * m
    }

    /// `g(m)`, zero for an empty combine.
    pub fn combine(&self, m: f64) -> f64 {
        self.combine + self.combine_per_byte * m
    }
}

/// The binomial tree downwards (bcast, scatter): receive from the parent, then send to each
/// child `v + 2^j` in decreasing `j` (largest subtree first), `bytes(child)` each.
fn binomial_down(v: u32, n: u32, k: u32, bytes: impl Fn(u32) -> f64) -> Option<Step> {
    let k = if v == 0 {
        k
    } else if k == 0 {
        return Some(Step::recv(binomial_parent(v)));
    } else {
        k - 1
    };
    let children = binomial_children(v, n);
    (k < children).then(|| {
        let child = v + (1 << (children - 1 - k));
        Step::send(child, bytes(child))
    })
}

/// The binomial tree upwards (reduce): receive from each child `v + 2^j` in increasing `j`
/// (smallest subtree first), combining each, then send to the parent.
fn binomial_up(v: u32, n: u32, k: u32, bytes: f64) -> Option<Step> {
    let children = binomial_children(v, n);
    if k < children {
        Some(Step::recv(v + (1 << k)).combining(bytes))
    } else if k == children && v != 0 {
        Some(Step::send(binomial_parent(v), bytes))
    } else {
        None
    }
}

/// The heap-ordered binary tree downwards: from the parent `(v-1)/2`, to `2v+1` then `2v+2`.
fn binary_down(v: u32, n: u32, k: u32, bytes: f64) -> Option<Step> {
    let mut steps = [None; 3];
    let mut i = 0;
    if v > 0 {
        steps[i] = Some(Step::recv((v - 1) / 2));
        i += 1;
    }
    for child in [2 * v + 1, 2 * v + 2] {
        if child < n {
            steps[i] = Some(Step::send(child, bytes));
            i += 1;
        }
    }
    steps.get(k as usize).copied().flatten()
}

/// The heap-ordered binary tree upwards: from `2v+2` then `2v+1`, combining, then to the
/// parent.
fn binary_up(v: u32, n: u32, k: u32, bytes: f64) -> Option<Step> {
    let mut steps = [None; 3];
    let mut i = 0;
    for child in [2 * v + 2, 2 * v + 1] {
        if child < n {
            steps[i] = Some(Step::recv(child).combining(bytes));
            i += 1;
        }
    }
    if v > 0 {
        steps[i] = Some(Step::send((v - 1) / 2, bytes));
    }
    steps.get(k as usize).copied().flatten()
}

/// The binary tree reduce of `n` ranks with messages of cost `c` and combines of `g`, by its
/// recursion over the tree (as [`binary_up`] runs it): a rank takes its right child's block,
/// combines it, then its left child's, combines it, then sends to its parent; a block from a
/// child arrives `c` after the child is done. The root is done after its last combine.
fn binary_reduce(n: u32, c: f64, g: f64) -> f64 {
    let mut done = vec![0.0_f64; n as usize];
    for v in (0..n as usize).rev() {
        let mut t = 0.0_f64;
        for child in [2 * v + 2, 2 * v + 1] {
            if child < n as usize {
                t = t.max(done[child] + c) + g;
            }
        }
        done[v] = t;
    }
    done[0]
}

/// The most edges on a root-to-leaf path of the binary tree counting a left child as 1 and a
/// right child as 2 (its parent sends to the left one first): the binary bcast's rounds.
fn binary_weight(n: u32) -> u32 {
    (1..n)
        .map(|mut v| {
            let mut w = 0;
            while v > 0 {
                w += if v % 2 == 1 { 1 } else { 2 };
                v = (v - 1) / 2;
            }
            w
        })
        .max()
        .unwrap_or(0)
}

/// A pipelined chain `0 -> 1 -> ... -> n-1` of `segments` segments: the head sends each
/// segment, the middle receives segment `i` while forwarding segment `i - 1`, the tail
/// receives. With `combining`, each received segment is combined (a reduce towards the head's
/// far end).
fn chain(v: u32, n: u32, k: u32, bytes: f64, segments: u32, combining: bool) -> Option<Step> {
    let s = segments.max(1);
    let seg = bytes / f64::from(s);
    let combine = |st: Step| if combining { st.combining(seg) } else { st };
    if v == 0 {
        (k < s).then(|| Step::send(1, seg))
    } else if v == n - 1 {
        (k < s).then(|| combine(Step::recv(v - 1)))
    } else if k == 0 {
        Some(combine(Step::recv(v - 1)))
    } else if k < s {
        Some(combine(Step::exchange(v + 1, seg, v - 1)))
    } else if k == s {
        Some(Step::send(v + 1, seg))
    } else {
        None
    }
}

/// Recursive-doubling allreduce for any `n`: with `p2` the largest power of two `<= n` and
/// `r = n - p2`, the first `2r` ranks pair up (even to odd, which combines), the `p2` ranks left
/// exchange with `new ^ 2^k`, and the odd ranks hand the result back.
fn recursive_doubling(me: u32, n: u32, k: u32, bytes: f64) -> Option<Step> {
    let p2 = 1 << msb(n);
    let r = n - p2;
    let rounds = msb(p2);
    if me < 2 * r && me.is_multiple_of(2) {
        // folded in: send to the odd partner, receive the result at the end
        return match k {
            0 => Some(Step::send(me + 1, bytes)),
            1 => Some(Step::recv(me + 1)),
            _ => None,
        };
    }
    let (new, pre) = if me < 2 * r { (me / 2, 1) } else { (me - r, 0) };
    let old = |x: u32| if x < r { 2 * x + 1 } else { x + r };
    if pre == 1 && k == 0 {
        return Some(Step::recv(me - 1).combining(bytes));
    }
    let k = k - pre;
    if k < rounds {
        let peer = old(new ^ (1 << k));
        return Some(Step::exchange(peer, bytes, peer).combining(bytes));
    }
    (pre == 1 && k == rounds).then(|| Step::send(me - 1, bytes))
}

/// The ring allreduce in `s` chunks a block: `(P-1) s` steps passing a chunk to the right
/// neighbour while one comes from the left, combining it (reduce-scatter), then `(P-1) s`
/// without combining (allgather).
fn ring_allreduce(me: u32, n: u32, k: u32, bytes: f64, s: u32) -> Option<Step> {
    let chunk = bytes / (f64::from(n) * f64::from(s));
    let half = (n - 1) * s;
    (k < 2 * half).then(|| {
        let st = Step::exchange((me + 1) % n, chunk, (me + n - 1) % n);
        if k < half { st.combining(chunk) } else { st }
    })
}

/// Steps of tree node `v` of the heap-ordered binary tree over `n` going one way (up: its
/// children's blocks then its parent; down: its parent's then its children).
fn binary_steps(v: u32, n: u32) -> u32 {
    u32::from(v > 0) + u32::from(2 * v + 1 < n) + u32::from(2 * v + 2 < n)
}

/// The double binary tree allreduce: tree A the heap-ordered binary tree, tree B its mirror
/// (rank `r` at node `n - 1 - r`), each carrying half of the bytes in `s` chunks; for each chunk
/// a rank takes its steps up tree A then up tree B, and once every chunk is up, the same down.
fn double_binary_tree(me: u32, n: u32, k: u32, bytes: f64, s: u32) -> Option<Step> {
    let chunk = bytes / (2.0 * f64::from(s));
    let mirror = |v: u32| n - 1 - v;
    let (a, b) = (binary_steps(me, n), binary_steps(mirror(me), n));
    let per_chunk = a + b;
    let (down, k) = if k < s * per_chunk {
        (false, k)
    } else {
        (true, k - s * per_chunk)
    };
    if k >= s * per_chunk {
        return None;
    }
    let r = k % per_chunk;
    let walk = |v: u32, j: u32| {
        if down {
            binary_down(v, n, j, chunk)
        } else {
            binary_up(v, n, j, chunk)
        }
    };
    if r < a {
        walk(me, r)
    } else {
        walk(mirror(me), r - a).map(|st| map_peers(st, mirror))
    }
}

/// The hierarchical allreduce of nodes of `per_node` consecutive ranks: the ring's
/// reduce-scatter inside the node (blocks of `m / L`), a ring allreduce of the rank's block with
/// the ranks of the same place in the other nodes, the ring's allgather inside the node.
fn hierarchical(me: u32, n: u32, k: u32, bytes: f64, per_node: u32) -> Option<Step> {
    let l = per_node;
    let nodes = n / l;
    let (node, local) = (me / l, me % l);
    let inside = bytes / f64::from(l);
    let across = inside / f64::from(nodes);
    let in_node = || {
        Step::exchange(
            node * l + (local + 1) % l,
            inside,
            node * l + (local + l - 1) % l,
        )
    };
    let (first, ring) = (l - 1, 2 * (nodes - 1));
    if k < first {
        Some(in_node().combining(inside))
    } else if k < first + ring {
        let st = Step::exchange(
            (node + 1) % nodes * l + local,
            across,
            (node + nodes - 1) % nodes * l + local,
        );
        Some(if k - first < nodes - 1 {
            st.combining(across)
        } else {
            st
        })
    } else {
        (k < 2 * first + ring).then(in_node)
    }
}

fn map_peers(mut st: Step, f: impl Fn(u32) -> u32) -> Step {
    st.send = st.send.map(|(p, b)| (f(p), b));
    st.recv = st.recv.map(&f);
    st
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Algorithm {
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Linear => "linear",
            Algorithm::Binomial => "binomial",
            Algorithm::Binary => "binary",
            Algorithm::Chain => "chain",
            Algorithm::RecursiveDoubling => "recursive_doubling",
            Algorithm::Ring => "ring",
            Algorithm::Bruck => "bruck",
            Algorithm::ReduceBcast => "reduce_bcast",
            Algorithm::Pairwise => "pairwise",
            Algorithm::Dissemination => "dissemination",
            Algorithm::DoubleBinaryTree => "double_binary_tree",
            Algorithm::Hierarchical => "hierarchical",
            Algorithm::Ideal => "ideal",
        }
    }

    /// Every algorithm, for parsing names.
    pub const ALL: [Algorithm; 13] = [
        Algorithm::Linear,
        Algorithm::Binomial,
        Algorithm::Binary,
        Algorithm::Chain,
        Algorithm::RecursiveDoubling,
        Algorithm::Ring,
        Algorithm::Bruck,
        Algorithm::ReduceBcast,
        Algorithm::Pairwise,
        Algorithm::Dissemination,
        Algorithm::DoubleBinaryTree,
        Algorithm::Hierarchical,
        Algorithm::Ideal,
    ];
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(n: u32, me: u32, root: u32, per_node: u32) -> GroupShape {
        GroupShape {
            n,
            me,
            root,
            bytes: 8.0,
            segments: 4,
            per_node,
        }
    }

    fn steps(c: Collective, a: Algorithm, n: u32, me: u32, root: u32) -> Vec<Step> {
        steps_on(c, a, &shape(n, me, root, 1))
    }

    fn steps_on(c: Collective, a: Algorithm, shape: &GroupShape) -> Vec<Step> {
        (0..).map_while(|k| c.step(a, shape, k)).collect()
    }

    /// Every send has a matching receive and vice versa (by count per ordered pair).
    fn balanced(c: Collective, a: Algorithm, n: u32, root: u32, per_node: u32) {
        let mut sent = std::collections::HashMap::new();
        for me in 0..n {
            for st in steps_on(c, a, &shape(n, me, root, per_node)) {
                if let Some((to, _)) = st.send {
                    assert!(to < n && to != me, "{c} {a} n={n}: {me} sends to {to}");
                    *sent.entry((me, to)).or_insert(0_i64) += 1;
                }
                if let Some(from) = st.recv {
                    assert!(
                        from < n && from != me,
                        "{c} {a} n={n}: {me} receives from {from}"
                    );
                    *sent.entry((from, me)).or_insert(0_i64) -= 1;
                }
            }
        }
        assert!(
            sent.values().all(|&v| v == 0),
            "{c} {a} n={n} root={root}: unmatched {sent:?}"
        );
    }

    #[test]
    fn every_algorithm_matches_its_sends_and_receives() {
        for c in Collective::ALL {
            for &a in c.algorithms() {
                for n in 1..=33 {
                    for per_node in [1, 2, 3, 4] {
                        if c.refuses(a, n, per_node).is_some() {
                            continue;
                        }
                        for root in [0, n / 2, n - 1] {
                            balanced(c, a, n, root, per_node);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn binomial_trees_have_ceil_lg_rounds_and_full_subtrees() {
        assert_eq!(binomial_subtree(0, 8), 8);
        assert_eq!(binomial_subtree(4, 8), 4, "4 to 7");
        assert_eq!(binomial_subtree(2, 8), 2);
        assert_eq!(binomial_subtree(1, 8), 1);
        assert_eq!(binomial_subtree(6, 8), 2, "6 and 7");
        assert_eq!(binomial_subtree(6, 7), 1);
        assert_eq!(binomial_children(0, 5), 3, "1, 2 and 4");
        assert_eq!(binomial_children(4, 8), 2, "5 and 6");
        assert_eq!(binomial_children(4, 6), 1, "5");
        assert_eq!(binomial_parent(6), 4);
        assert_eq!(binomial_parent(7), 6);
        // MPICH's tree: in a reduce, every odd rank first sends to its left neighbour
        for v in (1..16).step_by(2) {
            let first = steps(Collective::Reduce, Algorithm::Binomial, 16, v, 0)[0];
            assert_eq!(first.send.map(|(to, _)| to), Some(v - 1), "rank {v}");
        }
        assert_eq!(
            steps(Collective::Bcast, Algorithm::Binomial, 8, 0, 0).len(),
            3
        );
        let sizes: Vec<f64> = steps(Collective::Scatter, Algorithm::Binomial, 8, 0, 0)
            .iter()
            .map(|s| s.send.unwrap().1)
            .collect();
        assert_eq!(sizes, [32.0, 16.0, 8.0], "largest subtree first");
    }

    #[test]
    fn recursive_doubling_refuses_what_it_cannot_do() {
        assert!(
            Collective::Allgather
                .refuses(Algorithm::RecursiveDoubling, 6, 1)
                .is_some()
        );
        assert!(
            Collective::Allgather
                .refuses(Algorithm::RecursiveDoubling, 8, 1)
                .is_none()
        );
        assert!(Collective::Bcast.refuses(Algorithm::Ring, 8, 1).is_some());
        assert!(
            Collective::Allreduce
                .refuses(Algorithm::Hierarchical, 10, 4)
                .is_some(),
            "10 ranks are not whole nodes of 4"
        );
    }

    /// Costs whose terms all differ, so that a formula that miscounts one of them shows.
    const COST: Cost = Cost {
        startup: 3.0,
        per_byte: 0.25,
        combine: 0.5,
        combine_per_byte: 0.125,
        node_startup: 1.0,
        node_per_byte: 0.0625,
    };

    #[test]
    fn every_exact_closed_form_is_the_recursion_over_the_steps() {
        for c in Collective::ALL {
            for &a in c.algorithms() {
                if a == Algorithm::Ideal {
                    continue;
                }
                for n in 1..=40 {
                    for per_node in [1, 2, 4] {
                        if c.refuses(a, n, per_node).is_some()
                            || (per_node > 1 && a != Algorithm::Hierarchical)
                        {
                            continue;
                        }
                        for segments in [1, 3] {
                            let shape = GroupShape::of_group(n, 96.0, segments, per_node);
                            let (form, exact) = c.closed_form(a, &shape, &COST);
                            if !exact {
                                continue;
                            }
                            let run = c.idle_time(a, &shape, &COST);
                            assert!(
                                (form - run).abs() <= 1e-9 * run.max(1.0),
                                "{c} {a}, {n} ranks of {per_node} a node, {segments} segments: formula {form}, steps {run}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_double_binary_tree_puts_each_rank_inside_at_most_one_tree() {
        for n in 2..=64_u32 {
            for me in 0..n {
                let inner = |v: u32| 2 * v + 1 < n;
                assert!(
                    !(inner(me) && inner(n - 1 - me)),
                    "{n} ranks: rank {me} is inner in both trees"
                );
            }
        }
        // each tree carries half of the bytes, in chunks
        let st = steps_on(
            Collective::Allreduce,
            Algorithm::DoubleBinaryTree,
            &shape(8, 7, 0, 1),
        );
        assert!(
            st.iter().all(|s| s.send.is_none_or(|(_, b)| b == 1.0)),
            "8 bytes / 2 trees / 4 chunks"
        );
    }

    #[test]
    fn the_hierarchical_allreduce_keeps_its_rings_inside_nodes_then_across() {
        // 8 ranks, 4 a node: rank 5 is node 1's second rank
        let st = steps_on(
            Collective::Allreduce,
            Algorithm::Hierarchical,
            &shape(8, 5, 0, 4),
        );
        let peers: Vec<(u32, u32)> = st
            .iter()
            .map(|s| (s.send.unwrap().0, s.recv.unwrap()))
            .collect();
        assert_eq!(
            peers,
            [
                (6, 4),
                (6, 4),
                (6, 4),
                (1, 1),
                (1, 1),
                (6, 4),
                (6, 4),
                (6, 4)
            ],
            "3 steps in the node, 2 with rank 1 (node 0's second), 3 in the node"
        );
        let bytes: Vec<f64> = st.iter().map(|s| s.send.unwrap().1).collect();
        assert_eq!(bytes, [2.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    }
}
