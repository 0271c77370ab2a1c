//! Kuntraruk's parallel pipeline (`[pipeline]`): a builder that writes the rank program of a
//! pipelined binary reduction tree, and the report's analytic model of it (eq. 6 with its
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
//! [`predictions`] gives it with `T_comm` the idle-network message time (exact where its
//! assumptions hold), from M/M/1 and from M/D/1 at the report's arrival rate `λ = P / T_comp`
//! (the report's "M/G/1" formula is Pollaczek-Khinchine with deterministic service), with and
//! without the drain terms, and from the general Pollaczek-Khinchine mean at the rate the built
//! program offers its shared link; each labelled exact or with the assumptions that break.

use serde::Deserialize;
use toml::Spanned;

use super::compile::{Found, Sources};
use super::raw::{ExprText, OpKind, RawOp, RawProgram, RawTopology, SizeSpec, TopologyKind};
use super::{Program, Switching};
use crate::analytic::mg1;
use crate::dist::{Dist, DistSpec};
use crate::predict::{Prediction, Refusal};
use crate::topology::Shape;

/// Most ranks in one group.
const MAX_GROUP: i64 = 1 << 16;

/// `[pipeline]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPipeline {
    /// Ranks per group `P` (a power of two, at least 2).
    pub ranks: i64,
    /// Input items per group `N` (`N >= P`, `N - P` a multiple of `P/2`).
    pub items: i64,
    /// Groups of `P` ranks sharing the network (default 1).
    pub groups: Option<i64>,
    /// Time of one application task `T_comp`.
    pub task: Spanned<DistSpec>,
    /// Time of one merge `T_merge` (default: the task's distribution, as the report sets it).
    pub merge: Option<Spanned<DistSpec>>,
    /// Length of a result message, in bytes.
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
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPublished {
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
    /// Makespans a source printed, with where.
    pub published: Vec<RawPublished>,
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

/// Checks `[pipeline]` (and the `[topology]`, if any) and builds its program.
pub fn build(
    raw: &Spanned<RawPipeline>,
    topology: Option<&Spanned<RawTopology>>,
    base: &std::path::Path,
) -> Result<Program, Found> {
    let at = raw.span().start;
    let r = raw.get_ref();
    let mut found = Found::new();
    let mut add = |path: &str, message: String| found.push((Some(at), path.to_owned(), message));
    let ranks_ok = (2..=MAX_GROUP).contains(&r.ranks) && (r.ranks as u64).is_power_of_two();
    if !ranks_ok {
        add(
            "pipeline.ranks",
            format!(
                "must be a power of two from 2 to {MAX_GROUP} (the leaves of a binary tree), got {}",
                r.ranks
            ),
        );
    }
    if ranks_ok && (r.items < r.ranks || (r.items - r.ranks) % (r.ranks / 2) != 0) {
        add(
            "pipeline.items",
            format!(
                "must be at least P = {p} with N - P a multiple of P/2 = {h} (whole steps of P/2 items), got {}",
                r.items,
                p = r.ranks,
                h = r.ranks / 2
            ),
        );
    }
    if let Some(b) = r.bandwidth
        && !(b.is_finite() && b > 0.0)
    {
        add(
            "pipeline.bandwidth",
            format!("must be a finite number > 0 (bytes per time unit), got {b}"),
        );
    }
    if let Some(t) = r.latency
        && !(t.is_finite() && t >= 0.0)
    {
        add(
            "pipeline.latency",
            format!("must be a finite time >= 0, got {t}"),
        );
    }
    for (i, pb) in r.published.iter().enumerate() {
        if !(pb.makespan.is_finite() && pb.makespan > 0.0) {
            add(
                &format!("pipeline.published[{i}].makespan"),
                format!("must be a finite time > 0, got {}", pb.makespan),
            );
        }
    }
    let groups = r.groups.unwrap_or(1);
    let too_many = groups
        .checked_mul(r.ranks)
        .is_none_or(|n| n > super::compile::MAX_RANKS);
    if groups < 1 || (ranks_ok && too_many) {
        add(
            "pipeline.groups",
            format!(
                "must be a whole number >= 1 with groups x ranks <= {}, got {groups}",
                super::compile::MAX_RANKS
            ),
        );
    }
    let mut dist = |spec: &Spanned<DistSpec>, path: &str| match spec.get_ref().build(base) {
        Ok(d) if d.is_replay() => {
            found.push((
                Some(spec.span().start),
                path.to_owned(),
                "a trace has no fixed mean for eq. 6: use a distribution".to_owned(),
            ));
            None
        }
        Ok(d) => Some(d),
        Err(e) => {
            found.push((
                Some(spec.span().start),
                format!("{path}.{}", e.field),
                e.message,
            ));
            None
        }
    };
    let task = dist(&r.task, "pipeline.task");
    let merge = match &r.merge {
        Some(m) => dist(m, "pipeline.merge"),
        None => task.clone(),
    };
    let message = dist(&r.message, "pipeline.message");
    let generated;
    let topology = match (topology, r.bandwidth) {
        (Some(t), None) => {
            if r.latency.is_some() {
                found.push((
                    Some(at),
                    "pipeline.latency".to_owned(),
                    "the [topology] has its own latency: leave this out".to_owned(),
                ));
            }
            t
        }
        (Some(_), Some(_)) => {
            found.push((
                Some(at),
                "pipeline.bandwidth".to_owned(),
                "the [topology] has its own bandwidth: leave this out".to_owned(),
            ));
            return Err(found);
        }
        (None, bandwidth) => {
            let Some(bandwidth) = bandwidth else {
                found.push((
                    Some(at),
                    "pipeline.bandwidth".to_owned(),
                    "is missing: the bytes per time unit of the shared link (or give a [topology])"
                        .to_owned(),
                ));
                return Err(found);
            };
            generated = Spanned::new(
                raw.span(),
                RawTopology {
                    kind: TopologyKind::Bus,
                    dims: None,
                    arity: None,
                    bandwidth,
                    latency: r.latency,
                    startup: None,
                    switching: None,
                    sharing: None,
                },
            );
            &generated
        }
    };
    let (Some(task), Some(merge), Some(message)) = (task, merge, message) else {
        return Err(found);
    };
    if !found.is_empty() {
        return Err(found);
    }
    let pipeline = Pipeline {
        ranks: r.ranks as u32,
        items: r.items as u64,
        groups: groups as u32,
        task,
        merge,
        message,
        published: r.published.clone(),
    };
    let program = Spanned::new(raw.span(), program(r, &pipeline));
    let sources = Sources {
        program: &program,
        topology: Some(topology),
        topology_written: true,
        machine: None,
        disks: Vec::new(),
        base,
    };
    let mut prog = super::compile(&sources)?;
    prog.pipeline = Some(Box::new(pipeline));
    Ok(prog)
}

/// The rank program of a pipeline (see the module documentation).
fn program(r: &RawPipeline, p: &Pipeline) -> RawProgram {
    let g = p.ranks;
    let half = g / 2;
    let local = format!("rank % {g}");
    let parent = format!("rank - {local} + {local} / 2");
    let steps = (p.steps() + 1).to_string();
    let task = || op(OpKind::Compute).taking(r.task.clone());
    let merge = || op(OpKind::Compute).taking(r.merge.clone().unwrap_or_else(|| r.task.clone()));
    let send = || {
        let mut o = op(OpKind::Send).sending_to(&parent);
        o.bytes = Some(SizeSpec::Dist(r.message.get_ref().clone()));
        o
    };
    let recv = |from: String| op(OpKind::Recv).receiving_from(&from);
    let ops = vec![
        // step 0: the mergers' own items (folded into their first merge)
        task().when(&format!("{local} < {half}")),
        // leaves
        op(OpKind::Repeat)
            .when(&format!("{local} >= {half}"))
            .repeating(&steps, vec![task(), send()]),
        // inner nodes of the heap-ordered tree: children 2h and 2h + 1
        op(OpKind::Repeat)
            .when(&format!("{local} >= 1 && {local} < {half}"))
            .repeating(
                &steps,
                vec![
                    recv(format!("rank + {local}")),
                    recv(format!("rank + {local} + 1")),
                    merge(),
                    send(),
                ],
            ),
        // the accumulator: the tree's output into the running result
        op(OpKind::Repeat)
            .when(&format!("{local} == 0"))
            .repeating(&steps, vec![recv("rank + 1".to_owned()), merge()]),
    ];
    RawProgram {
        ranks: i64::from(g * p.groups),
        ranks_per_node: None,
        cores: None,
        report_each: Some(false),
        ops: ops.into_iter().map(|o| Spanned::new(0..0, o)).collect(),
    }
}

/// An operation with no fields but its kind.
fn op(kind: OpKind) -> RawOp {
    RawOp {
        kind,
        when: None,
        time: None,
        iterations: None,
        cost: None,
        split: None,
        to: None,
        from: None,
        bytes: None,
        tag: None,
        root: None,
        algorithm: None,
        segments: None,
        combine: None,
        combine_per_byte: None,
        group: None,
        disk: None,
        unit: None,
        times: None,
        var: None,
        name: None,
        body: None,
    }
}

/// Setters for the generated operations.
trait Generated {
    /// Only on the ranks where `cond` holds.
    fn when(self, cond: &str) -> Self;
    /// A compute of this time.
    fn taking(self, time: Spanned<DistSpec>) -> Self;
    /// A send to this rank.
    fn sending_to(self, rank: &str) -> Self;
    /// A receive from this rank.
    fn receiving_from(self, rank: &str) -> Self;
    /// A loop of `times` iterations of `body`.
    fn repeating(self, times: &str, body: Vec<RawOp>) -> Self;
}

impl Generated for RawOp {
    fn when(mut self, cond: &str) -> Self {
        self.when = Some(ExprText(cond.to_owned()));
        self
    }
    fn taking(mut self, time: Spanned<DistSpec>) -> Self {
        self.time = Some(time);
        self
    }
    fn sending_to(mut self, rank: &str) -> Self {
        self.to = Some(ExprText(rank.to_owned()));
        self
    }
    fn receiving_from(mut self, rank: &str) -> Self {
        self.from = Some(ExprText(rank.to_owned()));
        self
    }
    fn repeating(mut self, times: &str, body: Vec<RawOp>) -> Self {
        self.times = Some(ExprText(times.to_owned()));
        self.body = Some(body.into_iter().map(|o| Spanned::new(0..0, o)).collect());
        self
    }
}

/// The analytic model of a built pipeline: eq. 6 with each `T_comm`, the message delay by M/M/1
/// and Pollaczek-Khinchine, and the published figures; predictions of `program.makespan` and
/// `messages.delay`.
pub fn predictions(prog: &Program, p: &Pipeline) -> (Vec<Prediction>, Vec<Refusal>) {
    let net = &prog.network;
    let mut out = Vec::new();
    let mut refused = Vec::new();
    let transmit = p.message.mean() / net.bandwidth;
    // one hop on the shared link; on another topology the route between a child and its parent
    let hops = (0..prog.ranks)
        .filter(|r| r % p.ranks != 0)
        .map(|r| {
            let local = r % p.ranks;
            let parent = r - local + local / 2;
            net.topology.route(r, parent).len()
        })
        .max()
        .unwrap_or(1) as f64;
    let tau = net.startup
        + match net.switching {
            Switching::StoreAndForward => hops * (net.latency + transmit) - transmit,
            Switching::CutThrough => hops * net.latency,
        };
    let idle = transmit + tau;
    let lg = p.depth();
    let n = p.steps();
    let mut put = |metric: &str, value: f64, method: String, breaks: Vec<String>| {
        let exact = breaks.is_empty();
        let method = if exact {
            method
        } else {
            format!("{method}; approximation: {}", breaks.join("; "))
        };
        out.push(Prediction {
            metric: metric.to_owned(),
            value,
            method,
            exact,
        });
    };
    let eq6 = format!(
        "eq. 6, n = (N-P)/(P/2) = {n} steps, lg P = {lg}: (n+1) T_comp + n T_comm + lg P (T_merge + T_comm)"
    );
    let no_drain =
        format!("eq. 6 without drain (as the report's tables), n = {n}: (n+1) T_comp + n T_comm");
    // 1. contention-free
    let mut breaks = Vec::new();
    for (what, d) in [
        ("task times", &p.task),
        ("merge times", &p.merge),
        ("message lengths", &p.message),
    ] {
        if d.scv() > 0.0 {
            breaks.push(format!(
                "{what} are random (eq. 6 uses their mean; each merge waits for its slower child)"
            ));
        }
    }
    if p.merge.mean() > p.task.mean() {
        breaks.push("T_merge > T_comp: the merges, not the tasks, set the pace".to_owned());
    }
    // a link per pair of ranks: each link carries one sender's messages, one at a time
    let contention: Vec<String> = (net.topology.shape() != &Shape::Full)
        .then(|| {
            format!(
                "messages queue on the shared links of a {} (up to {} leaves send at once)",
                net.topology.shape(),
                p.ranks / 2 * p.groups
            )
        })
        .into_iter()
        .collect();
    breaks.extend(contention.iter().cloned());
    put(
        "program.makespan",
        p.eq6(idle, true),
        format!("{eq6}; T_comm = idle-network message time {idle:.6e}"),
        breaks,
    );
    put(
        "messages.delay",
        idle,
        "idle-network message time E[L]/C + τ".to_owned(),
        contention,
    );
    // 2. the report's T_comm: one channel, λ = P / T_comp
    let lambda = f64::from(p.ranks) / p.task.mean();
    let report = "one channel, λ = P / T_comp (the report's rate, one group)";
    for (name, scv, assumes) in [
        (
            "M/M/1 (L/C)/(1-ρ)",
            1.0,
            "Poisson messages with exponential lengths",
        ),
        (
            "M/D/1 L/C + ρ (L/C) / (2(1-ρ)), the report's \"M/G/1\"",
            0.0,
            "Poisson messages of one fixed length",
        ),
    ] {
        match mg1(lambda, transmit, scv) {
            Ok(m) => {
                let t = m.mean_response + tau;
                let rho = lambda * transmit;
                let why = vec![format!(
                    "T_comm assumes {assumes} on {report}; the program's messages come in steps"
                )];
                let detail = format!(
                    "T_comm {name} = {t:.6e} with L/C = {transmit:.6e}, λ = {lambda:.6}, ρ = {rho:.6}"
                );
                put(
                    "program.makespan",
                    p.eq6(t, true),
                    format!("{eq6}; {detail}"),
                    why.clone(),
                );
                put(
                    "program.makespan",
                    p.eq6(t, false),
                    format!("{no_drain}; {detail}"),
                    why,
                );
            }
            Err(e) => refused.push(Refusal {
                method: format!("eq. 6 with {name}"),
                reason: e.to_string(),
            }),
        }
    }
    // 3. Pollaczek-Khinchine at the rate the program offers its shared link
    if net.topology.shape() == &Shape::Bus {
        let per_step = f64::from(p.groups * (p.ranks - 1));
        let scv = p.message.scv();
        let pace = p.task.mean().max(p.merge.mean());
        let mut t = idle;
        let mut solved = None;
        for _ in 0..200 {
            match mg1(per_step / (pace + t), transmit, scv) {
                Ok(m) => {
                    let next = m.mean_response + tau;
                    let done = (next - t).abs() <= 1e-12 * next;
                    t = next;
                    if done {
                        solved = Some(t);
                        break;
                    }
                }
                Err(e) => {
                    refused.push(Refusal {
                        method: "Pollaczek-Khinchine T_comm".to_owned(),
                        reason: e.to_string(),
                    });
                    break;
                }
            }
        }
        if let Some(t) = solved {
            let lambda = per_step / (pace + t);
            let detail = format!(
                "T_comm Pollaczek-Khinchine E[S](1 + ρ(1+cs²)/(2(1-ρ))) = {t:.6e} with E[S] = {transmit:.6e}, cs² = {scv}, λ = G(P-1)/(max(T_comp, T_merge) + T_comm) = {lambda:.6}, ρ = {:.6}",
                lambda * transmit
            );
            let why = vec![
                "T_comm assumes Poisson messages; the program's come in steps from blocked senders"
                    .to_owned(),
            ];
            put(
                "program.makespan",
                p.eq6(t, true),
                format!("{eq6}; {detail}"),
                why.clone(),
            );
            put(
                "messages.delay",
                t,
                format!(
                    "Pollaczek-Khinchine mean delay on the shared link, λ = {lambda:.6}, cs² = {scv}"
                ),
                why,
            );
        }
    } else {
        refused.push(Refusal {
            method: "Pollaczek-Khinchine T_comm at the program's rate".to_owned(),
            reason: format!(
                "it models one shared channel; a {} has many links",
                net.topology.shape()
            ),
        });
    }
    for pb in &p.published {
        put(
            "program.makespan",
            pb.makespan,
            format!("{} (as printed)", pb.source),
            vec!["a printed figure, not computed here".to_owned()],
        );
    }
    (out, refused)
}
