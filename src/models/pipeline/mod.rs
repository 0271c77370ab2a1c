//! Kuntraruk's parallel pipeline (`[pipeline]`): the rank program of a pipelined binary
//! reduction tree, and the report's analytic model of it (eq. 6 with its
//! communication delay `T_comm` from M/M/1 or Pollaczek-Khinchine).
//!
//! ```toml
//! [pipeline]
//! ranks = 16                                # P per group, a power of two
//! items = 512                               # N input items per group
//! groups = 8                                # groups of P ranks on one network (default 1)
//! task = { dist = "det", value = 0.15 }     # T_comp of one item
//! merge = { dist = "det", value = 0.15 }    # T_merge (default: the task's distribution)
//! message = { dist = "exp", mean = 23720 }  # result length in bytes
//! bandwidth = 1.6e8                         # bytes per time unit of the one shared link
//! ```
//!
//! **The program.** In each group of `P` ranks, local rank `i = rank % P`: ranks `P/2 .. P-1`
//! are the leaves of a binary tree in heap order (node `h` has children `2h`, `2h + 1`), ranks
//! `1 .. P/2 - 1` its inner nodes, and rank 0 the accumulator that merges the tree's output into
//! the running result, so that a result crosses `lg P` links and `lg P` merges. Every rank
//! first computes one item (the report's step 0: `P` items on `P` processors); then, for
//! `k = (N - P)/(P/2) + 1` steps, each leaf computes an item and sends its result to its parent
//! (a blocking `send`: the leaf is free again when the message is delivered), each inner node
//! receives from both children, merges and sends on, and the accumulator receives and merges.
//! The mergers' own first items are folded into their first merge, so the group processes
//! exactly `N` items. Without a `[topology]`, every message crosses one shared FCFS link (the
//! report's cluster network); with one, the groups' ranks are laid on it in order.
//!
//! **Eq. 6.** With deterministic times and no two messages ever on one link at once, the last
//! leaf's result is delivered at `k (T_comp + T_comm)` and then crosses `lg P - 1` more links
//! and `lg P` merges, so the makespan is exactly the report's eq. 6:
//! `(n + 1) T_comp + lg P T_merge + n T_comm + lg P T_comm` with `n = (N - P)/(P/2)`
//! (the last two terms and `lg P T_merge` are the drain, which the report's tables leave out).
//! `analysis::predictions` gives it with `T_comm` the idle-network message time (exact where its
//! assumptions hold), from M/M/1 and from M/D/1 at the report's arrival rate `λ = P / T_comp`
//! (the report's "M/G/1" formula is Pollaczek-Khinchine with deterministic service), with and
//! without the drain terms, and from the general Pollaczek-Khinchine mean at the rate the built
//! program offers its shared link; each labelled exact or with the assumptions that break.

pub(crate) mod analysis;
pub(crate) mod build;
pub(crate) mod check;
pub mod raw;

use crate::dist::{Dist, DistSpec};

/// Most ranks in one group.
pub const MAX_GROUP: i64 = 1 << 16;

/// One makespan a source printed for a configuration, shown beside the simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    /// Where it is printed and what it is, e.g. "Kuntraruk (2005), Table 1, M/M/1 prediction".
    pub source: String,
    /// The printed makespan.
    pub makespan: f64,
}

/// A checked pipeline: the parameters of eq. 6.
#[derive(Clone, Debug)]
pub struct Pipeline {
    /// Ranks per group `P`.
    pub ranks: u32,
    /// Items per group `N`.
    pub items: u64,
    /// Groups on the network.
    pub groups: u32,
    /// Task time.
    pub task: Dist,
    /// Merge time.
    pub merge: Dist,
    /// Message length in bytes.
    pub message: Dist,
    /// The task time as written.
    pub task_spec: DistSpec,
    /// The merge time as written (the task's when not given).
    pub merge_spec: DistSpec,
    /// The message length as written.
    pub message_spec: DistSpec,
    /// Makespans a source printed, with where.
    pub published: Vec<Published>,
}

impl Pipeline {
    /// `lg P`.
    pub fn depth(&self) -> u32 {
        self.ranks.trailing_zeros()
    }

    /// Steady-state steps after step 0, `n = (N - P) / (P/2)`.
    pub fn steps(&self) -> u64 {
        (self.items - u64::from(self.ranks)) / u64::from(self.ranks / 2)
    }

    /// Eq. 6 for a given `T_comm`: `(n + 1) T_comp + n T_comm`, plus the drain
    /// `lg P (T_merge + T_comm)` when `drain`.
    pub fn eq6(&self, t_comm: f64, drain: bool) -> f64 {
        let n = self.steps() as f64;
        let lg = f64::from(self.depth());
        let body = (n + 1.0) * self.task.mean() + n * t_comm;
        if drain {
            body + lg * (self.merge.mean() + t_comm)
        } else {
            body
        }
    }
}
