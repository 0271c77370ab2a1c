//! Rank programs: the second of the three workload forms, a parallel program of `P` ranks that
//! runs to completion on processors, links and disks.
//!
//! A program is one list of operations that every rank runs (with the rank id, `P` and loop
//! counters usable in [`expr`] expressions, and `when` conditions for rank-specific work):
//! `compute` (a distribution, or a loop region `iterations x cost` split over the ranks or
//! replicated), `send` / `isend` / `recv` / `sendrecv` (messages matched in FIFO order per
//! (source, destination, tag)), `barrier`, `io` to a disk, the collectives of [`collective`],
//! `repeat` loops and named `phase`s. Loops stay loops: a rank's state is a program counter and
//! a stack of loop counters, so memory grows with the ranks and the messages in flight, never
//! with the operations executed.
//!
//! Ranks are mapped onto nodes (`ranks_per_node`, default 1); each node has a processor with
//! `cores` servers (FCFS) that computes hold; messages cross the links of a [`Topology`] (each
//! link a FCFS queue or a fair-shared processor-sharing server of `bandwidth` bytes per time
//! unit, plus a per-hop latency, with store-and-forward or cut-through timing); a message between
//! two ranks of one node crosses the node's own link where the topology gives nodes links
//! (`node_bandwidth`), else no link at all; I/O queues at disks. Contention is queueing at those stations and nothing else. The program executor (`crate::engine::program`) runs a program;
//! one replication is one execution.
//!
//! **Semantics of the primitives.** `send` blocks the sender until the message is delivered
//! into the receiver's mailbox (the receiver need not have posted its `recv`: messages are
//! buffered), which is the single-port model of the Hockney and LogP cost formulas; `isend`
//! returns after the startup time `t_s` and lets the message travel on; `recv` blocks until a
//! matching message is in the mailbox; `sendrecv` does both at once and ends when both are done.
//! The startup `t_s` is paid by the sender once per message.

pub mod budget;
pub mod collective;
pub(crate) mod control;
pub mod expr;
mod fault;
pub mod marks;
pub mod repetition;

pub use fault::{MAX_INSTANT_OPS, ProgramFault};

use crate::dist::Dist;
use crate::time::Clock;
use crate::topology::Topology;
use collective::{Algorithm, Collective};
use expr::Expr;

/// The destination of a message sent to a uniformly drawn other rank (`to = "random"`).
pub const RANDOM: &str = "random";

/// Where a message of network traffic ([`Instr::Traffic`]) goes.
#[derive(Clone, Debug)]
pub enum Destination {
    /// The rank an expression gives.
    Rank(Expr),
    /// A rank drawn uniformly from the other ranks, from the sender's stream.
    Random,
}

/// Most ranks a program may have: ranks, nodes and the counts made from them stay well within
/// `u32`. Below it, what a run may have is what fits the memory ([`run_memory`]).
pub const MAX_RANKS: i64 = 1 << 30;

/// What a rank program's run holds for each rank, about, besides its links: its state, its
/// random stream, its node's processor, its mailbox, the message it has in flight and the
/// events pending for it, and its figures at the end. With [`BYTES_PER_LINK`] and
/// [`BYTES_PER_RUN`] this is from 1% to 8% above the peak memory measured for a
/// recursive-doubling allreduce on 3-D tori of FCFS links from 131,072 to 2,097,152 ranks, up
/// to 48% above on smaller and 2-D tori, and about 1.5 times the peak where a random compute
/// before the allreduce spreads the ranks' arrivals (`benches/RESULTS.md`, 2026-11-30).
pub const BYTES_PER_RANK: f64 = 920.0;

/// What a link whose state is made up front ([`Interconnect::link_states_up_front`]) holds in a
/// rank program's run: its queue's end and its statistics, one cache line (a run that reports
/// per-link figures holds each used link's figures and percentiles besides). The engine
/// asserts at compile time that its link state has this size.
pub const BYTES_PER_LINK: f64 = 64.0;

/// What a rank program's run holds whatever its size, about: the process's code, its
/// allocator's arenas, the scenario.
pub const BYTES_PER_RUN: f64 = 16.0 * 1024.0 * 1024.0;

/// What a run of `ranks` ranks on `net` holds in memory, about ([`BYTES_PER_RUN`],
/// [`BYTES_PER_RANK`] a rank, [`BYTES_PER_LINK`] a link whose state is made up front), in
/// bytes: refused above what the process may take ([`crate::memory::limit`]). It counts a
/// message in flight a rank, as a collective sends; a program that sends more at once (many
/// nonblocking sends before their waits) needs more.
pub fn run_memory(ranks: u32, net: &Interconnect) -> f64 {
    let links = if net.link_states_up_front() {
        net.topology.link_count() as f64
    } else {
        0.0
    };
    BYTES_PER_RUN + f64::from(ranks) * BYTES_PER_RANK + links * BYTES_PER_LINK
}

/// A checked program, ready to run.
#[derive(Clone, Debug)]
pub struct Program {
    /// Number of ranks `P`.
    pub ranks: u32,
    /// Ranks per node (node of rank `r` is `r / ranks_per_node`).
    pub ranks_per_node: u32,
    /// Processor servers per node.
    pub cores: u32,
    /// The operations, flattened (loops and phases as markers).
    pub code: Vec<Instr>,
    /// For each instruction, the path of its operation in the scenario (for messages).
    pub paths: Vec<String>,
    /// Deepest loop nesting.
    pub loop_depth: u16,
    /// The typical message size (the mean of the constant sizes), the scale of link delays.
    pub typical_bytes: f64,
    /// Names of the phases, by index.
    pub phases: Vec<String>,
    /// Rank groups of group operations, by index.
    pub groups: Vec<Groups>,
    /// The interconnect.
    pub interconnect: Interconnect,
    /// Disks.
    pub disks: Vec<Disk>,
    /// The clock's resolution, from the smallest time of the program.
    pub clock: Clock,
    /// Report each rank's figures (and each link's) individually, not only their summaries.
    pub report_each: bool,
    /// Labels and dependencies of the operations (`label`, `requires`, `irequires`, `irecv`,
    /// `wait`), when the program has any: it then runs as a dependency graph
    /// (`crate::schedule::lower`), not in the sequential executor.
    pub marks: Option<Box<marks::Marks>>,
}

/// One instruction.
#[derive(Clone, Debug)]
pub enum Instr {
    /// Hold the rank's processor for a time.
    Compute(Work),
    /// Send a message; `blocking`: until it is delivered, else only for the startup time.
    Send {
        /// Destination rank.
        to: Expr,
        /// Message size in bytes.
        bytes: Size,
        /// Tag.
        tag: Expr,
        /// `send` (true) or `isend` (false).
        blocking: bool,
    },
    /// Send a message that no operation receives (`received = false`, or `to = "random"`):
    /// network traffic, counted on delivery (`messages.offered`, `messages.accepted`).
    Traffic {
        /// Destination.
        to: Destination,
        /// Message size in bytes.
        bytes: Size,
        /// `send` (true) or `isend` (false).
        blocking: bool,
    },
    /// Wait for a message from `from` with `tag`.
    Recv {
        /// Source rank.
        from: Expr,
        /// Tag.
        tag: Expr,
    },
    /// Send to `to` and receive from `from` at once.
    SendRecv {
        /// Destination rank.
        to: Expr,
        /// Source rank.
        from: Expr,
        /// Size of the message sent.
        bytes: Size,
        /// Tag of both.
        tag: Expr,
    },
    /// A collective over all ranks or over a group.
    Collective(CollectiveOp),
    /// Read or write at a disk.
    Io {
        /// Index into [`Program::disks`].
        disk: u32,
        /// Which of the disk's units (`index % count`).
        unit: Expr,
        /// Bytes moved.
        bytes: Size,
    },
    /// Start of a loop of `times` iterations whose counter sits at `depth`; `end` is the
    /// instruction after the loop.
    Loop {
        /// Iterations (evaluated on entry).
        times: Expr,
        /// Depth of its counter.
        depth: u16,
        /// Instruction after the matching [`Instr::Next`].
        end: u32,
    },
    /// End of a loop body: back to `start` (the first body instruction) while iterations remain.
    Next {
        /// First instruction of the body.
        start: u32,
        /// Depth of the loop's counter.
        depth: u16,
    },
    /// Skip to `skip` unless `cond` is true for this rank.
    When {
        /// The condition.
        cond: Expr,
        /// Instruction to jump to when false.
        skip: u32,
    },
    /// A phase starts for this rank.
    PhaseStart(u16),
    /// A phase ends for this rank.
    PhaseEnd(u16),
}

/// The expressions an instruction holds, as a vector of references (shared or mutable, as
/// `instr` is): written once for [`Instr::expressions`] and [`Instr::expressions_mut`].
macro_rules! expressions_of {
    ($instr:expr) => {
        match $instr {
            Instr::Compute(Work::Time(_)) => Vec::new(),
            Instr::Compute(Work::Region { iterations, .. }) => vec![iterations],
            Instr::Send { to, bytes, tag, .. } => {
                let mut v = vec![to, tag];
                if let Size::Bytes(b) = bytes {
                    v.push(b);
                }
                v
            }
            Instr::Traffic { to, bytes, .. } => {
                let mut v = Vec::new();
                if let Destination::Rank(e) = to {
                    v.push(e);
                }
                if let Size::Bytes(b) = bytes {
                    v.push(b);
                }
                v
            }
            Instr::Recv { from, tag } => vec![from, tag],
            Instr::SendRecv {
                to,
                from,
                bytes,
                tag,
            } => {
                let mut v = vec![to, from, tag];
                if let Size::Bytes(b) = bytes {
                    v.push(b);
                }
                v
            }
            Instr::Collective(CollectiveOp { root, bytes, .. }) => vec![root, bytes],
            Instr::Io { unit, bytes, .. } => {
                let mut v = vec![unit];
                if let Size::Bytes(b) = bytes {
                    v.push(b);
                }
                v
            }
            Instr::Loop { times, .. } => vec![times],
            Instr::When { cond, .. } => vec![cond],
            Instr::Next { .. } | Instr::PhaseStart(_) | Instr::PhaseEnd(_) => Vec::new(),
        }
    };
}

impl Instr {
    /// The expressions the instruction evaluates (its destinations, sources, tags, sizes,
    /// counts, roots, units and conditions).
    pub fn expressions(&self) -> Vec<&Expr> {
        expressions_of!(self)
    }

    /// [`Instr::expressions`], to change them.
    pub fn expressions_mut(&mut self) -> Vec<&mut Expr> {
        expressions_of!(self)
    }
}

/// What a rank's time is counted as: every moment of a rank's run is in exactly one category,
/// and `ranks.<category>.*` and `rank.<r>.<category>` report the time in each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// Computes (and the combines of reductions): the rank holds its processor.
    Compute = 0,
    /// Sends, exchanges and collectives: the rank's messages are under way.
    Communication = 1,
    /// Receives and barriers: blocked on other ranks.
    Waiting = 2,
    /// Disk requests.
    Io = 3,
}

impl Category {
    /// Every category, in index order.
    pub const ALL: [Category; 4] = [
        Category::Compute,
        Category::Communication,
        Category::Waiting,
        Category::Io,
    ];

    /// The category's name in metric names (`ranks.<name>.mean`).
    pub fn name(self) -> &'static str {
        match self {
            Category::Compute => "compute",
            Category::Communication => "communication",
            Category::Waiting => "waiting",
            Category::Io => "io",
        }
    }
}

/// The time a `compute` takes.
#[derive(Clone, Debug)]
pub enum Work {
    /// A draw from a distribution.
    Time(Dist),
    /// A loop region: `iterations` iterations of `cost` each, `ceil(iterations / P)` per rank
    /// when `split`, all of them when replicated; the sum of the per-iteration costs is drawn
    /// as one gamma variate with their total mean and variance (exact for deterministic,
    /// exponential, Erlang and gamma costs).
    Region {
        /// Total iterations.
        iterations: Expr,
        /// Cost of one iteration.
        cost: Dist,
        /// Split over the ranks (In et al.'s `E ceil(I/P)`) rather than replicated.
        split: bool,
    },
}

/// A message size: an expression, or a distribution drawn per message.
#[derive(Clone, Debug)]
pub enum Size {
    /// Bytes from an expression.
    Bytes(Expr),
    /// Bytes drawn from a distribution.
    Random(Dist),
}

/// A collective operation as written.
#[derive(Clone, Debug)]
pub struct CollectiveOp {
    /// Which collective.
    pub kind: Collective,
    /// Which algorithm.
    pub algorithm: Algorithm,
    /// Root rank (index within the group) for rooted collectives.
    pub root: Expr,
    /// Bytes: of the whole vector (bcast, reduce, allreduce), or of each rank's block (scatter,
    /// gather, allgather, alltoall).
    pub bytes: Expr,
    /// Segments of a pipelined algorithm.
    pub segments: u32,
    /// Time to combine one received block (reduce, allreduce), if any.
    pub combine: Option<Dist>,
    /// Time per byte combined (reduce, allreduce).
    pub combine_per_byte: f64,
    /// Index into [`Program::groups`], or all ranks.
    pub group: Option<u32>,
}

/// The ranks split into groups by an expression of `rank` and `P`.
#[derive(Clone, Debug, PartialEq)]
pub struct Groups {
    /// For each rank, its group.
    pub group_of: Vec<u32>,
    /// For each rank, its index within its group.
    pub index_in: Vec<u32>,
    /// For each group, its ranks in increasing order.
    pub members: Vec<Vec<u32>>,
    /// The members each group has on each of its nodes, when every group's members fill their
    /// nodes in blocks of that many consecutive members, the same in every group (the
    /// hierarchical allreduce's nodes); `None` otherwise.
    pub per_node: Option<u32>,
}

impl Groups {
    /// [`Groups::per_node`] of `members` on nodes of `ranks_per_node` ranks.
    pub fn node_blocks(members: &[Vec<u32>], ranks_per_node: u32) -> Option<u32> {
        let mut common = None;
        for m in members {
            let node = |r: &u32| r / ranks_per_node;
            let first = node(m.first()?);
            let k = m.iter().take_while(|r| node(r) == first).count();
            let mut last = None;
            for block in m.chunks(k) {
                let at = node(&block[0]);
                if block.len() != k || block.iter().any(|r| node(r) != at) || last == Some(at) {
                    return None;
                }
                last = Some(at);
            }
            match common {
                None => common = Some(k as u32),
                Some(c) if c != k as u32 => return None,
                _ => {}
            }
        }
        common
    }
}

/// How links time a message crossing several hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switching {
    /// Each hop receives the whole message before forwarding it:
    /// `t_s + (m t_w + t_h) l` on an idle network.
    StoreAndForward,
    /// The message streams through the hops behind its header: `t_s + l t_h + m t_w` on an
    /// idle network.
    CutThrough,
}

/// How a link is shared between the messages that cross it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// One message at a time, first come first served (packets queue).
    Fcfs,
    /// All messages at once, each at an equal share of the bandwidth (processor sharing).
    Fair,
}

/// The interconnect of a program.
#[derive(Clone, Debug)]
pub struct Interconnect {
    /// The topology.
    pub topology: Topology,
    /// Bytes per time unit of a link (`1 / t_w`).
    pub bandwidth: f64,
    /// Per-hop latency `t_h`.
    pub latency: f64,
    /// A dragonfly's global links' latency (else `latency`).
    pub global_latency: f64,
    /// The latency of a node's own link (see [`Topology::with_node_links`]; else `latency`).
    pub node_latency: f64,
    /// Per-message startup `t_s`, paid by the sender.
    pub startup: f64,
    /// Timing over several hops.
    pub switching: Switching,
    /// Link sharing.
    pub sharing: Sharing,
}

impl Interconnect {
    /// The latency of a hop over `link`: a dragonfly's global links and the nodes' own links
    /// have their own.
    pub fn hop_latency(&self, link: u64) -> f64 {
        if self.topology.is_node_link(link) {
            self.node_latency
        } else if self.topology.is_global(link) {
            self.global_latency
        } else {
            self.latency
        }
    }

    /// Whether a run makes every link's state at its start (FCFS links, a few a node), rather
    /// than each on its first use (fair links, whose state is larger, or links many a node).
    pub fn link_states_up_front(&self) -> bool {
        self.sharing == Sharing::Fcfs
            && self.topology.link_count() <= 8 * u64::from(self.topology.nodes()) + 64
    }

    /// Whether every hop has the same latency.
    pub fn one_latency(&self) -> bool {
        self.global_latency == self.latency
            && (!self.topology.has_node_links() || self.node_latency == self.latency)
    }
}

/// The bytes of the network traffic (messages no operation receives) over the window from the
/// start to the finish of the first rank that sent any (while every such rank still injects):
/// what the network was offered and what it delivered in that window (the offered load and
/// accepted throughput of network studies).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    /// Bytes injected.
    pub injected: f64,
    /// Bytes delivered.
    pub delivered: f64,
    /// When the window ends, in time units.
    pub until: f64,
}

impl Traffic {
    /// The bytes injected and delivered per node and time unit over the window, over a link's
    /// bandwidth: `[offered, accepted]` (`NaN` or infinite for a window of no time).
    pub fn shares(&self, prog: &Program) -> [f64; 2] {
        let capacity = f64::from(prog.nodes()) * prog.interconnect.bandwidth * self.until;
        [self.injected / capacity, self.delivered / capacity]
    }
}

/// A disk: `count` identical units, each a FCFS server taking `startup + bytes / bandwidth`.
#[derive(Clone, Debug)]
pub struct Disk {
    /// Its name.
    pub name: String,
    /// Units.
    pub count: u32,
    /// Time per request.
    pub startup: f64,
    /// Bytes per time unit.
    pub bandwidth: f64,
}

impl Program {
    /// The typical delay of a message from its injection to its delivery, the scale of the
    /// histogram of those delays (the run's and the evaluation's alike, so that a prediction
    /// called exact counts as the run does): the startup and a hop's latency, or, where both
    /// are 0, the transmission of a typical message (8-byte messages on a bus with neither
    /// would otherwise all fall in the first bin, a p99 of 0); 1 where neither is positive.
    pub fn message_scale(&self) -> f64 {
        let net = &self.interconnect;
        [
            net.startup + net.latency,
            self.typical_bytes / net.bandwidth,
        ]
        .into_iter()
        .find(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(1.0)
    }

    /// The ranks a node holds of the group a collective runs in (the hierarchical allreduce's
    /// nodes): the program's `ranks_per_node` for the whole program, a group's blocks
    /// ([`Groups::per_node`]) for a group, 1 where its members do not fill nodes evenly.
    pub fn collective_per_node(&self, op: &CollectiveOp) -> u32 {
        match op.group {
            None => self.ranks_per_node,
            Some(g) => self.groups[g as usize].per_node.unwrap_or(1),
        }
    }

    /// The node rank `r` runs on.
    #[inline]
    pub fn node_of(&self, rank: u32) -> u32 {
        rank / self.ranks_per_node
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        self.ranks.div_ceil(self.ranks_per_node)
    }

    /// True when the program sends messages (so its message metrics exist): more than one
    /// rank, and a send, an exchange or a collective other than the ideal barrier.
    pub fn has_messages(&self) -> bool {
        self.ranks > 1
            && self.code.iter().any(|i| match i {
                Instr::Send { .. } | Instr::Traffic { .. } | Instr::SendRecv { .. } => true,
                Instr::Collective(c) => {
                    !(c.kind == Collective::Barrier && c.algorithm == Algorithm::Ideal)
                }
                _ => false,
            })
    }

    /// True when the program sends network traffic (messages no operation receives:
    /// `received = false`, `to = "random"`), which its `messages.offered` and
    /// `messages.accepted` measure.
    pub fn has_traffic(&self) -> bool {
        self.ranks > 1 && self.code.iter().any(|i| matches!(i, Instr::Traffic { .. }))
    }

    /// Whether the program's messages can cross links: they can unless every rank is on one
    /// node that has no link of its own.
    pub fn crosses_links(&self) -> bool {
        self.has_messages()
            && (self.ranks > self.ranks_per_node || self.interconnect.topology.has_node_links())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Shape;

    fn interconnect(shape: Shape, nodes: u32, sharing: Sharing) -> Interconnect {
        Interconnect {
            topology: Topology::new(shape, nodes).expect("a valid topology"),
            bandwidth: 1e9,
            latency: 1e-6,
            global_latency: 1e-6,
            node_latency: 1e-6,
            startup: 2e-6,
            switching: Switching::CutThrough,
            sharing,
        }
    }

    #[test]
    fn a_runs_memory_counts_the_links_whose_state_it_keeps_from_the_start() {
        let torus = Shape::Grid {
            dims: vec![16, 16, 8],
            wrap: true,
        };
        let fcfs = interconnect(torus.clone(), 2048, Sharing::Fcfs);
        assert!(fcfs.link_states_up_front());
        let by_hand = BYTES_PER_RUN + 2048.0 * (BYTES_PER_RANK + 6.0 * BYTES_PER_LINK);
        assert_eq!(run_memory(2048, &fcfs), by_hand);
        // fair links and the full topology's n^2 links are made on first use
        let fair = interconnect(torus, 2048, Sharing::Fair);
        let full = interconnect(Shape::Full, 2048, Sharing::Fcfs);
        for net in [fair, full] {
            assert!(!net.link_states_up_front());
            assert_eq!(
                run_memory(2048, &net),
                BYTES_PER_RUN + 2048.0 * BYTES_PER_RANK
            );
        }
    }
}
