//! Analytic predictions for a program: the contention-free closed forms of its operations.
//!
//! A phase whose body is one collective gets the collective's closed form
//! ([`crate::program::collective::Collective::closed_form`]); a phase whose body is point-to-point messages (`send`, `recv`,
//! `sendrecv`, each maybe under a `when`) gets the longest of its messages' costs by the lecture
//! notes' formulas ([`MessageCost`]: store-and-forward or cut-through over the route's length),
//! and where messages share links, the lecture's congestion rule beside it.
//! Both predict `phase.<name>.max`, and `program.makespan` when the phase is the whole program.
//!
//! A prediction is **exact** when nothing the formula leaves out can happen: one rank per node,
//! deterministic sizes and combine times, and no two messages on one link (for a collective:
//! every message crossed one link of unit capacity and no two that overlapped in time shared a
//! link, on the evaluation's timeline, [`evaluation::PhaseRoutes`]; for messages: the routes
//! checked link by link).
//! Otherwise it is reported as an approximation, with the assumption that breaks.

pub mod channels;
pub(crate) mod delays;
pub mod evaluation;
pub mod fluid;
pub(crate) mod graph;
pub(crate) mod laws;
mod mean_value;
pub mod periodic;
pub(crate) mod queueing;
pub(crate) mod rounds;
pub mod sampled;
pub mod stochastic;

use std::collections::HashMap;

use crate::analytic::MessageCost;
use crate::metrics::name::{Figure, Subject};
use crate::predict::{Analysis, Prediction, Refusal};
use crate::program::collective::{Algorithm, Collective, Cost, GroupShape};
use crate::program::expr::Env;
use crate::program::{CollectiveOp, Instr, Program, Sharing, Size, Switching};
use crate::topology::{Shape, Topology};
use evaluation::{Evaluation, PhaseRoutes};

/// Every prediction for a program.
pub fn analyze(prog: &Program) -> Analysis {
    let mut a = Analysis::default();
    let (evaluation, graph) = match evaluation::evaluate_with_graph(prog) {
        Ok((ev, g)) => (Ok(ev), Some(g)),
        Err(e) => (Err(e), None),
    };
    let whole = whole_program_phase(prog);
    for (id, name) in prog.phases.iter().enumerate() {
        let Some((first, body)) = phase_body(prog, id as u16) else {
            continue;
        };
        let forms = match body {
            [Instr::Collective(op)] => {
                let routes = match &evaluation {
                    Ok(ev) => Ok(&ev.phase_routes[id]),
                    Err(why) => Err(why.as_str()),
                };
                vec![collective(prog, op, routes)]
            }
            _ if body.iter().all(is_message_or_guard) => {
                messages(prog, first, body).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let staggered = evaluation
            .as_ref()
            .ok()
            .and_then(|ev| staggered_entry(ev, id));
        for f in forms {
            match f {
                Ok((value, method, mut broken)) => {
                    if let Some(why) = &staggered {
                        broken = Some(match broken {
                            Some(b) => format!("{b}; {why}"),
                            None => why.clone(),
                        });
                    }
                    let (method, exact) = match broken {
                        None => (method, true),
                        Some(why) => (format!("{method}; approximation: {why}"), false),
                    };
                    let mut put = |metric: String| {
                        a.predictions.push(Prediction {
                            metric,
                            value,
                            method: method.clone(),
                            exact,
                            measured: None,
                            recommended: false,
                        })
                    };
                    put(Subject::Phase(name).metric(Figure::Max));
                    if whole == Some(id as u16) {
                        put(Subject::Program.metric(Figure::Makespan));
                    }
                }
                Err(why) => a.refusals.push(Refusal {
                    method: format!("phase {name}"),
                    reason: why,
                }),
            }
        }
    }
    if evaluation::walked_routes(prog).is_some() || prog.has_traffic() {
        channels::predictions(prog, &mut a);
    }
    mean_value::predictions(prog, &evaluation, &mut a);
    if let (Ok(ev), Some(g)) = (&evaluation, &graph) {
        // the stochastic methods and the queueing ones share nothing but the evaluation: run
        // side by side (each with the budget in force here), kept in this order
        let factor = crate::analytic::cost::factor();
        let in_budget = |f: &(dyn Fn(&mut Analysis) + Sync)| {
            crate::analytic::cost::with_budget(factor, || {
                let mut part = Analysis::default();
                f(&mut part);
                part
            })
        };
        let (stochastic, queued) = rayon::join(
            || in_budget(&|part| stochastic::predictions(prog, ev, g, part)),
            || {
                in_budget(&|part| {
                    queueing::predictions(prog, ev, part);
                    rounds::predictions(prog, ev, part);
                })
            },
        );
        a.append(stochastic);
        a.append(queued);
    }
    a
}

/// Why phase `id`'s closed form, which starts every rank together, does not hold from the
/// ranks' entries: they enter at different times in the evaluation, or at times that depend on
/// chance or on contention before the phase. `None` when they enter together at a fixed time.
fn staggered_entry(ev: &Evaluation, id: usize) -> Option<String> {
    let starts: Vec<(usize, f64)> = ev.phase_starts[id]
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, t)| t.is_finite())
        .collect();
    let (first, last) = starts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, t)| {
            (lo.min(t), hi.max(t))
        });
    let fixed = starts
        .iter()
        .all(|&(r, t)| t <= ev.tainted[r] && t <= ev.sharing.from);
    if !fixed {
        Some("the ranks enter the phase at times that depend on chance or contention before it (the closed form starts them together)".to_owned())
    } else if last - first > 1e-12 * last.abs() {
        Some(format!(
            "the ranks enter the phase at different times, from {first:.6e} to {last:.6e} (the closed form starts them together)"
        ))
    } else {
        None
    }
}

/// The phase that is the whole program, if the program is one phase.
fn whole_program_phase(prog: &Program) -> Option<u16> {
    match (prog.code.first(), prog.code.last()) {
        (Some(Instr::PhaseStart(a)), Some(Instr::PhaseEnd(b))) if a == b => {
            let inner = &prog.code[1..prog.code.len() - 1];
            (!inner
                .iter()
                .any(|i| matches!(i, Instr::PhaseStart(x) if x == a)))
            .then_some(*a)
        }
        _ => None,
    }
}

/// The instructions of the first occurrence of phase `id` with the index of the first of them,
/// when it is not inside a loop and contains no loop or phase.
fn phase_body(prog: &Program, id: u16) -> Option<(usize, &[Instr])> {
    let start = prog
        .code
        .iter()
        .position(|i| matches!(i, Instr::PhaseStart(x) if *x == id))?;
    let end = start
        + prog.code[start..]
            .iter()
            .position(|i| matches!(i, Instr::PhaseEnd(x) if *x == id))?;
    let in_loop = prog.code[..start]
        .iter()
        .enumerate()
        .any(|(k, i)| matches!(i, Instr::Loop { end: e, .. } if *e as usize > start && k < start));
    let body = &prog.code[start + 1..end];
    let nested = body.iter().any(|i| {
        matches!(
            i,
            Instr::Loop { .. } | Instr::Next { .. } | Instr::PhaseStart(_) | Instr::PhaseEnd(_)
        )
    });
    (!in_loop && !nested).then_some((start + 1, body))
}

fn is_message_or_guard(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Send { .. } | Instr::Recv { .. } | Instr::SendRecv { .. } | Instr::When { .. }
    )
}

/// A closed form of a phase: its value, the method, and the assumption that breaks (`None`: exact), or why it does not apply.
type ClosedForm = Result<(f64, String, Option<String>), String>;

fn env(prog: &Program, rank: u32) -> Env<'static> {
    Env {
        rank: i64::from(rank),
        ranks: i64::from(prog.ranks),
        node: i64::from(prog.node_of(rank)),
        loops: &[],
    }
}

/// What makes a program's costs differ from the formulas', whatever the operation.
fn common_breaks(prog: &Program) -> Vec<String> {
    let mut why = Vec::new();
    if prog.ranks_per_node > 1 {
        let inside = if prog.interconnect.topology.has_node_links() {
            "cross the node's own link, not the network's"
        } else {
            "are local, their startup alone"
        };
        why.push(format!(
            "{} ranks share each node (messages between them {inside})",
            prog.ranks_per_node
        ));
    }
    why
}

/// A collective's closed form, labelled exact when its messages' actual `routes` (from the
/// evaluation, or why there is none) are those of the formula: one link of unit capacity per
/// message, and no link crossed by two messages at once.
fn collective(prog: &Program, op: &CollectiveOp, routes: Result<&PhaseRoutes, &str>) -> ClosedForm {
    let net = &prog.interconnect;
    let (n, bytes) = group_and_bytes(prog, op)?;
    let combine = op.combine.as_ref().map_or(0.0, |d| d.mean());
    // a message inside a node crosses the node's own link, or none (its startup alone)
    let (node_latency, node_capacity) = match net.topology.node_hop(0, 0) {
        Some(hop) => (net.node_latency, net.topology.capacity(hop.link)),
        None => (0.0, f64::INFINITY),
    };
    let cost = Cost {
        startup: net.startup + net.latency,
        per_byte: 1.0 / net.bandwidth,
        combine,
        combine_per_byte: op.combine_per_byte,
        node_startup: net.startup + node_latency,
        node_per_byte: 1.0 / (net.bandwidth * node_capacity),
    };
    if net.topology.shape() == &Shape::Bus
        && (op.kind, op.algorithm) == (Collective::Gather, Algorithm::Linear)
        && op.group.is_none()
    {
        return Ok(bus_gather(prog, n, bytes, &cost));
    }
    let shape = GroupShape::of_group(n, bytes, op.segments, prog.collective_per_node(op));
    let hierarchical = op.algorithm == Algorithm::Hierarchical;
    let (cost, mut why) = match (hierarchical, op.group) {
        (true, None) => hierarchical_costs(prog, cost),
        (true, Some(_)) => {
            let mut why = common_breaks(prog);
            why.push(
                "it runs in groups, whose messages' shares of the links the formula does not work out (each message an idle link of its own)"
                    .to_owned(),
            );
            (cost, why)
        }
        (false, _) => (cost, common_breaks(prog)),
    };
    let (value, exact) = op.kind.closed_form(op.algorithm, &shape, &cost);
    if !value.is_finite() {
        return Err(format!("no closed form for {} {}", op.kind, op.algorithm));
    }
    if !exact {
        why.push(format!(
            "the round model is exact for a power-of-two group, not {n} ranks"
        ));
    }
    if !hierarchical || op.group.is_some() {
        why.extend(route_breaks(routes));
    }
    if op.combine.as_ref().is_some_and(|d| d.scv() > 0.0) {
        why.push("combine times are random (the formula uses their mean)".to_owned());
    }
    let method = if hierarchical && op.group.is_none() {
        format!(
            "{} {} closed form ((L-1)(2 c'(m/L) + g(m/L)) + (N-1)(2 c(m/(L N)) + g(m/(L N))), the messages a step sends at once sharing their links)",
            op.kind, op.algorithm
        )
    } else {
        format!(
            "{} {} closed form (contention-free, a + b m per message)",
            op.kind, op.algorithm
        )
    };
    Ok((value, method, (!why.is_empty()).then(|| why.join("; "))))
}

/// How the links share the messages of a ring across nodes in which each of `nodes` nodes
/// sends `per_node` messages at once to the next (the hierarchical allreduce's middle rings).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RingShares {
    /// The most messages a link carries over its capacity.
    pub busiest: f64,
    /// The fewest a used link carries over its capacity.
    pub least: f64,
    /// The most messages a link carries.
    pub most: f64,
    /// The most links between two neighbouring nodes.
    pub longest: usize,
}

/// [`RingShares`] of `nodes` nodes of `topology` sending `per_node` messages each to the next.
pub fn ring_shares(topology: &Topology, nodes: u32, per_node: u32) -> RingShares {
    let mut carried: HashMap<u64, f64> = HashMap::new();
    let mut longest = 0;
    for node in 0..nodes {
        let route = topology.route(node, (node + 1) % nodes);
        longest = longest.max(route.len());
        for hop in route {
            *carried.entry(hop.link).or_default() += f64::from(per_node);
        }
    }
    let per_capacity = carried
        .iter()
        .map(|(&link, &k)| k / topology.capacity(link));
    RingShares {
        busiest: per_capacity.clone().fold(0.0, f64::max),
        least: per_capacity.fold(f64::INFINITY, f64::min),
        most: carried.values().copied().fold(0.0, f64::max),
        longest,
    }
}

/// The costs of the hierarchical allreduce's messages, each step of whose rings sends one
/// message from every rank at once: inside a node, the node's `L` messages share its own link
/// (or cross none, costing their startup); across, each link carries the messages of the nodes
/// whose routes to their next node cross it, so a message gets the bandwidth over the most
/// messages a link carries (over its capacity). With what makes that not the execution: routes
/// of more than one link, links carrying unequal shares, FCFS links (which serve the messages
/// that share them one after another, where the formula has them side by side, as fair links
/// do), routes that vary, ranks that share cores for their combines.
fn hierarchical_costs(prog: &Program, mut cost: Cost) -> (Cost, Vec<String>) {
    let combines = cost.combine > 0.0 || cost.combine_per_byte > 0.0;
    let net = &prog.interconnect;
    let topology = &net.topology;
    let per_node = prog.ranks_per_node;
    let mut why = Vec::new();
    let mut most_shared = 1.0_f64;
    if let Some(hop) = topology.node_hop(0, 0) {
        let share = f64::from(per_node);
        cost.node_startup = net.startup + net.node_latency;
        cost.node_per_byte = share / (net.bandwidth * topology.capacity(hop.link));
        most_shared = share;
    }
    let nodes = prog.ranks / per_node;
    if nodes > 1 {
        let shares = ring_shares(topology, nodes, per_node);
        cost.per_byte = shares.busiest / net.bandwidth;
        most_shared = most_shared.max(shares.most);
        if shares.longest > 1 {
            why.push(format!(
                "messages between neighbouring nodes cross up to {} links (the formula counts one)",
                shares.longest
            ));
        }
        if shares.least < shares.busiest {
            why.push(format!(
                "the links carry unequal shares of the messages (from {} to {} per unit of capacity; the formula gives every message the busiest link's share)",
                shares.least, shares.busiest
            ));
        }
    }
    if prog.cores < per_node && combines {
        why.push(format!(
            "the {per_node} ranks of a node share its {} cores for their combines (the formula gives each its own)",
            prog.cores
        ));
    }
    if net.sharing == Sharing::Fcfs && most_shared > 1.0 {
        why.push(format!(
            "FCFS links serve the up to {most_shared} messages a step sends over one link one after another (the formula has them share it side by side, as fair links do)"
        ));
    }
    if let Some(note) = evaluation::walked_routes(prog) {
        why.push(note.to_owned());
    }
    (cost, why)
}

/// A collective's group size (every group the same, or refused) and its bytes (as rank 0
/// evaluates them).
pub(crate) fn group_and_bytes(prog: &Program, op: &CollectiveOp) -> Result<(u32, f64), String> {
    let bytes = op.bytes.eval(&env(prog, 0)).map_err(|err| err.0)? as f64;
    let n = match op.group {
        None => prog.ranks,
        Some(g) => {
            let sizes: Vec<usize> = prog.groups[g as usize]
                .members
                .iter()
                .map(Vec::len)
                .collect();
            if sizes.iter().any(|&s| s != sizes[0]) {
                return Err("the groups have different sizes".to_owned());
            }
            sizes[0] as u32
        }
    };
    Ok((n, bytes))
}

/// A linear gather of `n` ranks on a bus: the `n - 1` messages start together and all cross the
/// one link, which carries them one after the other (FCFS) or shares itself among them (fair);
/// either way the last is delivered after all their transmissions, `t_s + t_h + (n - 1) m t_w`.
fn bus_gather(prog: &Program, n: u32, bytes: f64, cost: &Cost) -> (f64, String, Option<String>) {
    let value = cost.startup + f64::from(n.saturating_sub(1)) * bytes * cost.per_byte;
    let why = common_breaks(prog);
    (
        value,
        "gather linear on a bus: t_s + t_h + (P-1) m t_w (the P-1 messages share the one link, \
         served one after the other or side by side, the last delivered after all of them)"
            .to_owned(),
        (!why.is_empty()).then(|| why.join("; ")),
    )
}

/// What in a phase's routes breaks a closed form of one idle link of unit capacity per message
/// (empty: nothing).
fn route_breaks(routes: Result<&PhaseRoutes, &str>) -> Vec<String> {
    let r = match routes {
        Ok(r) => r,
        Err(why) => return vec![format!("the routes were not evaluated ({why})")],
    };
    let mut why = Vec::new();
    if r.shared > 0 {
        let others = match r.shared - r.shared_names.len() {
            0 => String::new(),
            n => format!(" and {n} other links"),
        };
        why.push(format!(
            "messages that overlap in time share link {}{others} on their routes (the closed form gives each message an idle link)",
            r.shared_names.join(", ")
        ));
    }
    if r.most_hops > 1 {
        why.push(format!(
            "messages cross up to {} links (the closed form counts one)",
            r.most_hops
        ));
    }
    if r.uneven {
        why.push(
            "messages cross links of capacity other than 1 (the closed form has the bandwidth)"
                .to_owned(),
        );
    }
    why
}

/// Point-to-point messages: each message's cost by its route's length, the longest of them;
/// and, where messages share links, the lecture's congestion rule beside it (`t_w` scaled by
/// the number of messages on the busiest link of the route). `first` is the index of the
/// body's first instruction in the program (`when` skips are absolute).
fn messages(prog: &Program, first: usize, body: &[Instr]) -> Option<Vec<ClosedForm>> {
    if let Some(why) = evaluation::routes_vary(prog) {
        return Some(vec![Err(why)]);
    }
    let net = &prog.interconnect;
    let mut sent: Vec<(f64, Vec<u64>, f64)> = Vec::new();
    let mut random = false;
    for r in 0..prog.ranks {
        let e = env(prog, r);
        let mut skip_to = None;
        let mut operations = 0;
        for (k, i) in body.iter().enumerate() {
            if skip_to.is_some_and(|s| k < s) {
                continue;
            }
            let (to, bytes) = match i {
                Instr::When { cond, skip } => {
                    if cond.eval(&e).ok()? == 0 {
                        skip_to = Some(*skip as usize - first);
                    }
                    continue;
                }
                Instr::Recv { .. } => {
                    operations += 1;
                    continue;
                }
                Instr::Send { to, bytes, .. } | Instr::SendRecv { to, bytes, .. } => (to, bytes),
                Instr::Traffic { .. } => {
                    return Some(vec![Err(
                        "its messages are network traffic (to random ranks, or not received): the formula is for rounds of received messages"
                            .to_owned(),
                    )]);
                }
                _ => continue,
            };
            operations += 1;
            if operations > 1 {
                // (a second operation starts when the first ends: the phase is several rounds)
                return Some(vec![Err(format!(
                    "rank {r} runs more than one send, receive or exchange in the phase, one after the other: the formula is for one round, every rank sending at most one message at the start"
                ))]);
            }
            let to = u32::try_from(to.eval(&e).ok()?).ok()?;
            let bytes = match bytes {
                Size::Bytes(b) => b.eval(&e).ok()? as f64,
                Size::Random(d) => {
                    random = true;
                    d.mean()
                }
            };
            let (src, dst) = (prog.node_of(r), prog.node_of(to.min(prog.ranks - 1)));
            let route: Vec<u64> = net
                .topology
                .route(src, dst)
                .iter()
                .map(|h| h.link)
                .collect();
            // the formula's `l t_h`, and what global links of their own latency add to it
            let extra: f64 = route
                .iter()
                .map(|&l| net.hop_latency(l) - net.latency)
                .sum();
            sent.push((bytes, route, extra));
        }
    }
    if sent.is_empty() {
        return None;
    }
    let mut load: HashMap<u64, u32> = HashMap::new();
    for (_, route, _) in &sent {
        for l in route {
            *load.entry(*l).or_default() += 1;
        }
    }
    let cost = |scale: f64, bytes: f64, l: usize| {
        let c = MessageCost {
            startup: net.startup,
            per_hop: net.latency,
            per_byte: scale / net.bandwidth,
        };
        match net.switching {
            Switching::StoreAndForward => c.store_and_forward(bytes, l as u32),
            Switching::CutThrough => c.cut_through(bytes, l as u32),
        }
    };
    let longest = |congested: bool| -> Result<f64, String> {
        sent.iter()
            .try_fold(0.0_f64, |most, (bytes, route, extra)| {
                let k = if congested {
                    route.iter().map(|l| load[l]).max().unwrap_or(1)
                } else {
                    1
                };
                cost(f64::from(k), *bytes, route.len())
                    .map(|c| most.max(c + extra))
                    .map_err(|e| e.to_string())
            })
    };
    let mut why = common_breaks(prog);
    let busiest = load
        .iter()
        .filter(|(_, n)| **n > 1)
        .max_by_key(|(l, n)| (**n, std::cmp::Reverse(**l)));
    if let Some((link, n)) = busiest {
        why.push(format!(
            "{n} messages share link {} (the formula assumes an idle network)",
            net.topology.link_name(*link)
        ));
    }
    if random {
        why.push("message sizes are random (the formula uses their mean)".to_owned());
    }
    let name = match net.switching {
        Switching::StoreAndForward => "store-and-forward t_s + (m t_w + t_h) l",
        Switching::CutThrough => "cut-through t_s + l t_h + m t_w",
    };
    let mut out = vec![longest(false).map(|v| {
        (
            v,
            format!("{name}, longest message"),
            (!why.is_empty()).then(|| why.join("; ")),
        )
    })];
    if busiest.is_some() {
        let mut why = common_breaks(prog);
        // on a bus every message crosses the one link, and messages of one size that start
        // together end, the last of them, after all their transmissions whether the bus
        // serves them one after the other (FCFS) or shares itself among them (fair): the rule
        let bus = net.topology.shape() == &Shape::Bus;
        let one_size = sent.iter().all(|(b, _, _)| *b == sent[0].0);
        if random {
            why.push("message sizes are random (the formula uses their mean)".to_owned());
        }
        if !(bus && one_size) {
            why.push("the lecture's rule for shared links (t_w times the messages sharing the busiest link of the route) assumes they start together and share it to the end".to_owned());
        }
        out.push(longest(true).map(|v| {
            (
                v,
                format!("{name} with t_w scaled by the messages sharing a link (lecture)"),
                (!why.is_empty()).then(|| why.join("; ")),
            )
        }));
    }
    Some(out)
}
