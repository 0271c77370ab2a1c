//! The LogGP(S) closed forms of the collective algorithms, for a program run on LogGP endpoints
//! without links (LogGOPSim's setting, [`crate::engine::schedule`]): what `analyze` predicts for a
//! scenario with `[loggp]`.
//!
//! Costs of a message of `m` bytes (in ticks, [`Endpoints`]): the sender's CPU `os(m) = o +
//! (m-1) O`, a NIC side `nic(m) = g + (m-1) G`, arrival `o + L` after the send starts, the
//! receiver's CPU `or(m) = o + (m-1) max(O, G)`; `hop(m) = o + L + or(m)` from the start of a
//! send to the end of its processing at an idle receiver; `c` a combine's time.
//!
//! | algorithms | form | exact |
//! |---|---|---|
//! | allgather ring, bruck, recursive doubling; alltoall pairwise; barrier dissemination; allreduce ring (in chunks too), hierarchical, recursive doubling (`P` a power of two) | lock-step rounds: a round of `m` bytes started at `t` is processed at `p = max(t + o + L, t + os(m), p' + nic(m'))` (`p'`, `m'` the previous round's), the next starts at `max(p + or(m) + c, t + nic(m))`, the makespan is the last `p + or(m) + c`: with equal rounds and a NIC that never binds, `rounds (max(o + L, os) + or + c)`, e.g. the dissemination barrier `ceil(lg P) (o + L + or(0))` | every `P` |
//! | bcast, scatter: linear, binomial, binary | down the tree: a rank sends to its children in order, each send starting when its CPU and NIC are free (`max(os, nic)` apart; a rendezvous send also waits for the child to match it, `o + L` after it starts), and a child is free `hop(m)` after its send started: the linear bcast `(P-2) max(os, nic) + hop`, the binomial bcast `lg P hop` for a power of two when `max(os, nic) <= hop` | every `P` |
//! | gather, reduce: linear, binomial, binary; allreduce reduce + bcast; barrier binomial | up the tree, then down: a rank processes its children's blocks on arrival whenever its CPU and receiving NIC are free (posted or not, earliest send first), combines each once its receive has matched it, and sends up when done: the linear gather `o + L + (P-2) max(or, nic) + or` | every `P`, unless two blocks (or a block and a combine) reach a rank's CPU at the same instant and their order matters: the executor then takes them in the order their events were scheduled, which depends on the whole run's history, and the form follows that history twelve events back (a tie left there is labelled; every one in the test equals the execution anyway) |
//! | bcast, reduce: chain; allreduce double binary tree, and recursive doubling of `P` not a power of two | rank by rank: each rank's steps run as the executor runs them, fed the blocks the others send it (and the matches of its rendezvous sends), until nothing changes; refused when that would cost more than [`WORK_BUDGET`] (recursive doubling beyond about 2,000 ranks) | every `P`, eager or rendezvous, with the same exception for simultaneous events |
//!
//! Each value is computed in whole ticks, as the executor counts, so an exact form equals the
//! simulated makespan to the tick. With links (`[topology]`), random sizes or random combine
//! times, the forms are labelled approximations: links add their latency and transmission and
//! queue, and the forms use the mean size and combine time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::analytic::WORK_BUDGET;
use crate::metrics::name::{Figure, Subject};
use crate::predict::{Analysis, Prediction, Refusal};
use crate::program::collective::{Algorithm, Collective, GroupShape, Step};
use crate::program::{CollectiveOp, Instr, Program};
use crate::schedule::dag::TICKS_PER_SECOND;
use crate::schedule::{Endpoints, Form, Schedule};

/// The method's name in an analysis.
const METHOD: &str = "LogGP closed form";

/// Every LogGP prediction for a schedule.
pub fn analyze(s: &Schedule) -> Analysis {
    let mut a = Analysis::default();
    let refuse = |a: &mut Analysis, reason: String| {
        a.refusals.push(Refusal {
            method: METHOD.to_owned(),
            reason,
        })
    };
    let prog = match &s.form {
        Form::Program(p) => p,
        Form::Dag(_) => {
            refuse(
                &mut a,
                "a GOAL schedule is a graph of operations, not one of parsim's collective algorithms: simulate it".to_owned(),
            );
            return a;
        }
    };
    if prog.marks.is_some() {
        refuse(
            &mut a,
            "the program has labels and dependencies (a graph of operations): simulate it"
                .to_owned(),
        );
        return a;
    }
    let Some(op) = sole_collective(prog) else {
        refuse(
            &mut a,
            "the closed forms are for a program that is one collective".to_owned(),
        );
        return a;
    };
    match form(prog, op, &s.machine.endpoints) {
        Ok(f) => {
            let mut why = f.broken;
            if s.machine.links.is_some() {
                why.push("links between the endpoints add their latency and transmission and may queue (the form has LogGP's wires)".to_owned());
            }
            if op.combine.as_ref().is_some_and(|d| d.scv() > 0.0) {
                why.push("combine times are random (the form uses their mean)".to_owned());
            }
            let method = format!("{} {} {METHOD} ({})", op.kind, op.algorithm, f.name);
            let (method, exact) = if why.is_empty() {
                (method, true)
            } else {
                (
                    format!("{method}; approximation: {}", why.join("; ")),
                    false,
                )
            };
            let seconds = |t: f64| t / TICKS_PER_SECOND;
            for (metric, value) in [
                (
                    Subject::Program.metric(Figure::Makespan),
                    seconds(f.makespan as f64),
                ),
                (
                    Subject::Ranks(Figure::Finish).metric(Figure::Mean),
                    seconds(f.mean_finish),
                ),
            ] {
                a.predictions.push(Prediction {
                    metric,
                    value,
                    method: method.clone(),
                    exact,
                    measured: None,
                    recommended: false,
                });
            }
        }
        Err(why) => refuse(&mut a, why),
    }
    a
}

/// The program's one collective, when it is nothing else (phases aside).
fn sole_collective(prog: &Program) -> Option<&CollectiveOp> {
    let mut ops = prog
        .code
        .iter()
        .filter(|i| !matches!(i, Instr::PhaseStart(_) | Instr::PhaseEnd(_)));
    match (ops.next(), ops.next()) {
        (Some(Instr::Collective(op)), None) => Some(op),
        _ => None,
    }
}

/// A collective's LogGP form.
#[derive(Clone, Debug, PartialEq)]
pub struct LogGpForm {
    /// The makespan, in ticks.
    pub makespan: u64,
    /// The mean over ranks of their finish times, in ticks.
    pub mean_finish: f64,
    /// The form's name.
    pub name: &'static str,
    /// What makes it an approximation (empty: exact).
    pub broken: Vec<String>,
}

/// The form of collective `op` of `prog` on `ep`.
fn form(prog: &Program, op: &CollectiveOp, ep: &Endpoints) -> Result<LogGpForm, String> {
    let (n, bytes) = crate::predict::program::group_and_bytes(prog, op)?;
    if let Some(why) = op
        .kind
        .refuses(op.algorithm, n, prog.collective_per_node(op))
    {
        return Err(why);
    }
    let combines = op.combine.is_some() || op.combine_per_byte > 0.0;
    let mean = op.combine.as_ref().map_or(0.0, |d| d.mean());
    let combine = move |m: f64| -> Option<u64> {
        combines.then(|| {
            let t = op.combine_per_byte * m + mean;
            (t * TICKS_PER_SECOND).round().max(0.0) as u64
        })
    };
    let shape = GroupShape::of_group(n, bytes, op.segments, prog.collective_per_node(op));
    let c = Collective::form_of(op.kind, op.algorithm, &shape, ep, &combine)?;
    Ok(c)
}

impl Collective {
    /// The LogGP form of `algorithm` on the group of `shape` (its size, bytes, segments and
    /// ranks a node; see the module's table), with `combine(m)` the ticks of combining `m`
    /// bytes (`None`: no combine operation).
    pub fn form_of(
        self,
        algorithm: Algorithm,
        shape: &GroupShape,
        ep: &Endpoints,
        combine: &dyn Fn(f64) -> Option<u64>,
    ) -> Result<LogGpForm, String> {
        use Algorithm::*;
        let n = shape.n;
        if n <= 1 {
            return Ok(LogGpForm {
                makespan: 0,
                mean_finish: 0.0,
                name: "one rank",
                broken: Vec::new(),
            });
        }
        let shape = *shape;
        let costs = Costs { ep };
        match (self, algorithm) {
            (Collective::Barrier, Ideal) => Err(
                "the ideal barrier has no messages and cannot run on LogGP endpoints".to_owned(),
            ),
            (Collective::Bcast | Collective::Reduce, Chain) => settle(
                self,
                algorithm,
                &shape,
                &costs,
                combine,
                "rank by rank along the chain",
            ),
            (Collective::Allreduce, DoubleBinaryTree) => settle(
                self,
                algorithm,
                &shape,
                &costs,
                combine,
                "rank by rank over the two trees' steps",
            ),
            (Collective::Allreduce, RecursiveDoubling) if !n.is_power_of_two() => settle(
                self,
                algorithm,
                &shape,
                &costs,
                combine,
                "rank by rank, folded ranks and rounds",
            ),
            (Collective::Allgather, _)
            | (Collective::Alltoall, _)
            | (Collective::Barrier, Dissemination)
            | (Collective::Allreduce, Ring | RecursiveDoubling | Hierarchical) => {
                Ok(lock_step(self, algorithm, &shape, &costs, combine))
            }
            _ => tree(self, algorithm, &shape, &costs, combine),
        }
    }
}

/// LogGP costs in ticks.
struct Costs<'a> {
    ep: &'a Endpoints,
}

impl Costs<'_> {
    /// From a send's start to its arrival: `o + L`.
    fn flight(&self) -> u64 {
        self.ep.o.saturating_add(self.ep.l)
    }

    fn rendezvous(&self, m: u64) -> bool {
        m > self.ep.s
    }
}

/// Bytes as the lowering rounds them.
fn whole(b: f64) -> u64 {
    b.max(0.0).round() as u64
}

/// Lock-step rounds: every rank runs the same steps, each an exchange of `m` bytes (or a send
/// and a receive at once), maybe followed by a combine.
fn lock_step(
    c: Collective,
    a: Algorithm,
    shape: &GroupShape,
    costs: &Costs<'_>,
    combine: &dyn Fn(f64) -> Option<u64>,
) -> LogGpForm {
    let ep = costs.ep;
    let (mut t, mut p_prev, mut nic_prev) = (0_u64, None::<u64>, 0_u64);
    let mut end = 0_u64;
    let mut k = 0;
    while let Some(step) = c.step(a, shape, k) {
        let m = step.send.map_or(0, |(_, b)| whole(b));
        let mut p = t
            .saturating_add(costs.flight())
            .max(t.saturating_add(ep.send_cpu(m)));
        if let Some(pp) = p_prev {
            p = p.max(pp.saturating_add(nic_prev));
        }
        let g = step.combine.and_then(combine).unwrap_or(0);
        end = p.saturating_add(ep.recv_cpu(m)).saturating_add(g);
        let next = end.max(t.saturating_add(ep.nic(m)));
        p_prev = Some(p);
        nic_prev = ep.nic(m);
        t = next;
        k += 1;
    }
    LogGpForm {
        makespan: end,
        mean_finish: end as f64,
        name: "lock-step rounds",
        broken: Vec::new(),
    }
}

/// Every rank's steps run as the executor runs them ([`run_rank`]), each fed the blocks the
/// others send it, until nothing changes: a rank is run again whenever a block it receives, or
/// the match of a rendezvous send it made, moves. Every message takes `o + L > 0` from its
/// send to its arrival, so a rank's run depends only on earlier sends and the runs settle on
/// the execution; for a chain the ranks settle in order along the line, for recursive doubling
/// in as many passes as it has rounds.
fn settle(
    c: Collective,
    a: Algorithm,
    shape: &GroupShape,
    costs: &Costs<'_>,
    combine: &dyn Fn(f64) -> Option<u64>,
    name: &'static str,
) -> Result<LogGpForm, String> {
    let n = shape.n as usize;
    // the work: every rank's steps, run again about once per round of messages that reach it
    // (a chain settles in a pass or two), some 32 operations a step
    let typical = (0..)
        .map_while(|k| {
            c.step(
                a,
                &GroupShape {
                    me: shape.n - 1,
                    ..*shape
                },
                k,
            )
        })
        .count() as f64;
    let passes = if a == Algorithm::Chain {
        2.0
    } else {
        f64::from(32 - shape.n.leading_zeros()) + 2.0
    };
    let work = n as f64 * typical * passes * 32.0;
    if work > WORK_BUDGET {
        return Err(format!(
            "the {c} {a} of {n} ranks would run each rank's {typical} steps about {passes} times, some {work:.1e} operations, over the budget of {WORK_BUDGET:.0e} for one analysis: simulate it"
        ));
    }
    let steps: Vec<Vec<LocalStep>> = (0..shape.n)
        .map(|me| {
            let s = GroupShape { me, ..*shape };
            (0..)
                .map_while(|k| c.step(a, &s, k))
                .map(|st| LocalStep::of(&st, combine))
                .collect()
        })
        .collect();
    // who sends to each rank (each peer once, in rank order)
    let mut senders: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (from, st) in steps.iter().enumerate() {
        for (to, _) in st.iter().filter_map(|s| s.send) {
            if senders[to as usize].last() != Some(&(from as u32)) {
                senders[to as usize].push(from as u32);
            }
        }
    }
    for s in &mut senders {
        s.sort_unstable();
        s.dedup();
    }
    let mut runs: Vec<Option<(Vec<Incoming>, RankRun)>> = (0..n).map(|_| None).collect();
    let mut queue: std::collections::VecDeque<u32> = (0..shape.n).collect();
    let mut queued = vec![true; n];
    let mut budget = 64_u64.saturating_mul(n as u64).saturating_add(1024);
    while let Some(r) = queue.pop_front() {
        let ru = r as usize;
        queued[ru] = false;
        budget = budget.checked_sub(1).ok_or_else(|| {
            format!("the {c} {a} of {n} ranks did not settle within its budget of runs")
        })?;
        let incoming: Vec<Incoming> = senders[ru]
            .iter()
            .flat_map(|&from| {
                runs[from as usize]
                    .iter()
                    .flat_map(|(_, run)| run.sent.iter())
                    .filter(move |s| s.to == r)
                    .map(move |&sent| Incoming { from, sent })
            })
            .collect();
        // the match of this rank's `k`-th send, at its receiver's latest run
        let matched_at = |k: usize| -> Option<u64> {
            let to = steps[ru].iter().filter_map(|s| s.send).nth(k)?.0;
            let ordinal = steps[ru]
                .iter()
                .filter_map(|s| s.send)
                .take(k)
                .filter(|&(t, _)| t == to)
                .count();
            let (theirs, run) = runs[to as usize].as_ref()?;
            let j = theirs
                .iter()
                .enumerate()
                .filter(|(_, b)| b.from == r)
                .nth(ordinal)?
                .0;
            run.matched[j]
        };
        let run = run_rank(&steps[ru], &incoming, costs, &matched_at);
        let (sent_moved, matched_moved) = match &runs[ru] {
            Some((old_in, old)) => (
                old.sent != run.sent,
                old.matched != run.matched || old_in.len() != incoming.len(),
            ),
            None => (true, true),
        };
        let mut wake = |q: u32, queue: &mut std::collections::VecDeque<u32>| {
            if !queued[q as usize] {
                queued[q as usize] = true;
                queue.push_back(q);
            }
        };
        if sent_moved {
            for s in &run.sent {
                wake(s.to, &mut queue);
            }
        }
        if matched_moved {
            for &from in &senders[ru] {
                wake(from, &mut queue);
            }
        }
        runs[ru] = Some((incoming, run));
    }
    let mut broken = Vec::new();
    let (mut makespan, mut total) = (0_u64, 0.0_f64);
    for (r, slot) in runs.iter().enumerate() {
        let Some((_, run)) = slot else { continue };
        if !run.complete {
            return Err(format!(
                "the {c} {a} of {n} ranks does not complete: relative rank {r} waits"
            ));
        }
        if run.contested && broken.is_empty() {
            broken.push(format!("two events reach relative rank {r}'s CPU at the same instant, and the executor's order of simultaneous events, which the form follows only twelve events back, decides which goes first"));
        }
        makespan = makespan.max(run.cpu);
        total += run.cpu as f64;
    }
    Ok(LogGpForm {
        makespan,
        mean_finish: total / n as f64,
        name,
        broken,
    })
}

/// A message a rank sent: to whom, when its send started, its bytes, and its send's [`Key`]
/// (its block's key goes on from it).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Sent {
    to: u32,
    at: u64,
    m: u64,
    key: Key,
}

/// A block that reaches a rank: from whom, when its send started, its bytes.
#[derive(Clone, Copy)]
struct Incoming {
    from: u32,
    sent: Sent,
}

/// One step of a rank, in the form [`run_rank`] takes: a send of `m` bytes, a receive from a
/// peer, or both, then maybe a combine of so many ticks.
#[derive(Clone, Copy, Default)]
struct LocalStep {
    send: Option<(u32, u64)>,
    recv: Option<u32>,
    combine: Option<u64>,
}

impl LocalStep {
    fn of(step: &Step, combine: &dyn Fn(f64) -> Option<u64>) -> LocalStep {
        LocalStep {
            send: step.send.map(|(to, b)| (to, whole(b))),
            recv: step.recv,
            combine: step.combine.and_then(combine),
        }
    }
}

/// What one rank did.
struct RankRun {
    /// Its sends, in order.
    sent: Vec<Sent>,
    /// When its CPU, its NIC's sending and receiving sides were last free.
    cpu: u64,
    nic_s: u64,
    nic_r: u64,
    /// When each incoming block was matched by a receive, if it was.
    matched: Vec<Option<u64>>,
    /// Whether every step finished.
    complete: bool,
    /// Whether two events were ready for its CPU at one instant with an order that matters
    /// and is not known here.
    contested: bool,
}

/// What happens at a rank.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum What {
    /// Incoming block `j` arrives (or waits for the CPU and NIC).
    Block(usize),
    /// Step `k`'s send starts (or waits for the CPU and NIC).
    Send(usize),
    /// Step `k`'s receive posts.
    Receive(usize),
    /// Step `k`'s combine starts (or waits for the CPU).
    Combine(usize),
    /// Step `k`'s rendezvous send is matched by its receiver.
    Matched(usize),
}

/// How many events back a [`Key`] follows the history: enough for every case of the closed
/// forms' test (at 8, two configurations of the binomial reduce, and of the allreduce built on
/// it, still tie where the order changes the time).
const LEVELS: usize = 12;

/// Where an event stands among those of its time, as far as this rank can tell: the time it
/// was scheduled at, the time the event that scheduled it was scheduled at, and so on
/// [`LEVELS`] events back. The executor takes the events of one instant in the order they were
/// scheduled (its stamps), and so the events scheduled at one instant in the order of the
/// events that scheduled them: two keys that differ order two events as the executor does;
/// equal keys leave the order to history further back.
type Key = [u64; LEVELS];

/// An event: its time, its stamp (its [`Key`], then an order known only among the blocks of
/// the ranks' first sends, by rank, and among this rank's own events, by when this rank
/// scheduled them) and what it is.
type Event = Reverse<(u64, (Key, u64), What)>;

/// A level of a [`Key`] this rank cannot know (a rendezvous send's match, made by its
/// receiver).
const UNKNOWN: u64 = u64::MAX;

/// The key of an event scheduled at `now` by the event whose key is `by`.
fn key_after(now: u64, by: Key) -> Key {
    let mut k = [now; LEVELS];
    k[1..].copy_from_slice(&by[..LEVELS - 1]);
    k
}

/// Whether the executor may take two events of one instant keyed `a` and `b` in either order:
/// their keys agree up to a level that one of them does not know, or throughout.
fn may_tie(a: Key, b: Key) -> bool {
    for (x, y) in a.into_iter().zip(b) {
        if x == UNKNOWN || y == UNKNOWN {
            return true;
        }
        if x != y {
            return false;
        }
    }
    true
}

/// One rank running `steps` from time 0 with the blocks `incoming` sent to it, as the executor
/// runs it: a step's send and receive are released together (the send first) when the step
/// before is done (its send started: eager; its receive matched; its combine started), each
/// scheduled when the CPU (and for a send the NIC's sending side) is free, as LogGOPSim does;
/// a block is processed on arrival when the CPU and the NIC's receiving side are free, whether
/// or not its receive is posted, and a receive matches the first processed block from its peer.
/// Events of one instant go in the order they were scheduled: by their [`Key`]s, then blocks
/// of the ranks' first sends in rank order; any other tie is reported as
/// `contested` when the order matters (a combine or a send that is not the last step waits, or the sizes differ). Sends are
/// taken as eager (the caller accounts for rendezvous).
fn run_rank(
    steps: &[LocalStep],
    incoming: &[Incoming],
    costs: &Costs<'_>,
    matched_at: &dyn Fn(usize) -> Option<u64>,
) -> RankRun {
    let ep = costs.ep;
    let mut events: BinaryHeap<Event> = BinaryHeap::with_capacity(incoming.len() + 4);
    for (j, b) in incoming.iter().enumerate() {
        events.push(Reverse((
            b.sent.at.saturating_add(costs.flight()),
            (key_after(b.sent.at, b.sent.key), u64::from(b.from)),
            What::Block(j),
        )));
    }
    let mut r = RankRun {
        sent: Vec::new(),
        cpu: 0,
        nic_s: 0,
        nic_r: 0,
        matched: vec![None; incoming.len()],
        complete: false,
        contested: false,
    };
    let mut scheduled = 0_u64;
    // whether an event's key holds a level this rank cannot know (then a tie is looked for
    // among all pending events, not only the next one)
    let mut unknown = false;
    // the event taken before this one
    let mut before: Option<Event> = None;
    // release step `k` at `now`, by the event keyed `by`: its send, then its receive
    let release = |events: &mut BinaryHeap<Event>,
                   r: &RankRun,
                   k: usize,
                   (now, by): (u64, Key),
                   n: &mut u64| {
        let Some(st) = steps.get(k) else { return };
        let key = key_after(now, by);
        if st.send.is_some() {
            *n += 1;
            events.push(Reverse((
                r.cpu.max(r.nic_s),
                (key, (1 << 62) + *n),
                What::Send(k),
            )));
        }
        if st.recv.is_some() {
            *n += 1;
            events.push(Reverse((r.cpu, (key, (1 << 62) + *n), What::Receive(k))));
        }
    };
    release(&mut events, &r, 0, (0, [0; LEVELS]), &mut scheduled);
    // (a send that ends the rank's steps waits for everything before it anyway)
    let last = steps.len().saturating_sub(1);
    let order_matters = steps
        .iter()
        .enumerate()
        .any(|(k, s)| (s.send.is_some() && k < last) || s.combine.is_some())
        || incoming.iter().any(|b| b.sent.m != incoming[0].sent.m);
    let mut pending: Vec<u8> = steps
        .iter()
        .map(|s| u8::from(s.send.is_some()) + u8::from(s.recv.is_some()))
        .collect();
    let mut unmatched: Vec<usize> = Vec::new();
    let mut waiting: Option<usize> = None;
    let mut steps_done = 0;
    while let Some(Reverse((t, stamp, what))) = events.pop() {
        let uses_cpu = |w: &What| !matches!(w, What::Receive(_) | What::Matched(_));
        let competing = |e: &Event| {
            let Reverse((u, (key, _), w)) = e;
            let both_initial = *key == [0; LEVELS]
                && stamp.0 == [0; LEVELS]
                && matches!((w, what), (What::Block(_), What::Block(_)));
            *u == t && uses_cpu(w) && may_tie(*key, stamp.0) && !both_initial
        };
        // events of one time and key lie next to each other in the heap's order, blocks before
        // this rank's own: the next one and the one before tell (blocks of the ranks' first
        // sends, which do not compete, may stand between the others, taken before them)
        let tied = if unknown {
            events.iter().any(competing)
        } else {
            events.peek().is_some_and(competing) || before.as_ref().is_some_and(competing)
        };
        before = Some(Reverse((t, stamp, what)));
        if order_matters && uses_cpu(&what) && tied {
            r.contested = true;
        }
        let mut finished = None;
        match what {
            What::Block(j) => {
                let free = r.cpu.max(r.nic_r);
                if free > t {
                    events.push(Reverse((free, stamp, what)));
                    continue;
                }
                let m = incoming[j].sent.m;
                r.cpu = t.saturating_add(ep.recv_cpu(m));
                r.nic_r = t.saturating_add(ep.nic(m));
                match waiting {
                    Some(k) if steps[k].recv == Some(incoming[j].from) => {
                        waiting = None;
                        r.matched[j] = Some(t);
                        finished = Some(k);
                    }
                    _ => unmatched.push(j),
                }
            }
            What::Receive(k) => {
                let from = steps[k].recv;
                match unmatched
                    .iter()
                    .position(|&j| Some(incoming[j].from) == from)
                {
                    Some(i) => {
                        r.matched[unmatched.remove(i)] = Some(t);
                        finished = Some(k);
                    }
                    None => waiting = Some(k),
                }
            }
            What::Send(k) => {
                let free = r.cpu.max(r.nic_s);
                if free > t {
                    events.push(Reverse((free, stamp, what)));
                    continue;
                }
                let (to, m) = steps[k].send.unwrap_or((0, 0));
                r.cpu = t.saturating_add(ep.send_cpu(m));
                r.nic_s = t.saturating_add(ep.nic(m));
                r.sent.push(Sent {
                    to,
                    at: t,
                    m,
                    key: stamp.0,
                });
                if !costs.rendezvous(m) {
                    finished = Some(k);
                } else if let Some(at) = matched_at(r.sent.len() - 1) {
                    scheduled += 1;
                    unknown = true;
                    events.push(Reverse((
                        at,
                        (key_after(at, [UNKNOWN; LEVELS]), (1 << 62) + scheduled),
                        What::Matched(k),
                    )));
                }
            }
            What::Matched(k) => {
                // the receiver's match holds the CPU and NIC until then
                r.cpu = r.cpu.max(t);
                r.nic_s = r.nic_s.max(t);
                finished = Some(k);
            }
            What::Combine(k) => {
                if r.cpu > t {
                    events.push(Reverse((r.cpu, stamp, what)));
                    continue;
                }
                r.cpu = t.saturating_add(steps[k].combine.unwrap_or(0));
                steps_done += 1;
                release(&mut events, &r, k + 1, (t, stamp.0), &mut scheduled);
            }
        }
        if let Some(k) = finished {
            pending[k] -= 1;
            if pending[k] == 0 {
                if steps[k].combine.is_some() {
                    scheduled += 1;
                    events.push(Reverse((
                        r.cpu,
                        (key_after(t, stamp.0), (1 << 62) + scheduled),
                        What::Combine(k),
                    )));
                } else {
                    steps_done += 1;
                    release(&mut events, &r, k + 1, (t, stamp.0), &mut scheduled);
                }
            }
        }
    }
    r.complete = steps_done == steps.len();
    r
}

/// What a rank of a tree does: its children's blocks (receive order), then a send up, then a
/// receive from its parent and sends down.
#[derive(Default)]
struct TreeRank {
    /// Upwards: children in the order received, with the combine's ticks if any.
    up: Vec<(u32, Option<u64>)>,
    /// Upwards: the parent and the bytes sent to it.
    to_parent: Option<(u32, u64)>,
    /// Downwards: the children in the order sent, with their bytes.
    down: Vec<(u32, u64)>,
}

/// A rank's steps read as a tree's, whose parents have lower ranks than their children: a
/// receive from a higher rank is a child's block, a send to a lower rank goes to the parent, a
/// receive from a lower rank comes from the parent, a send to a higher rank goes to a child.
fn tree_rank(
    c: Collective,
    a: Algorithm,
    shape: &GroupShape,
    combine: &dyn Fn(f64) -> Option<u64>,
) -> Result<TreeRank, String> {
    let me = shape.me;
    let mut r = TreeRank::default();
    let mut k = 0;
    while let Some(step) = c.step(a, shape, k) {
        match (step.send, step.recv) {
            (None, Some(from)) if from > me && r.to_parent.is_none() && r.down.is_empty() => {
                r.up.push((from, step.combine.and_then(combine)))
            }
            (None, Some(from)) if from < me && r.down.is_empty() => {}
            (Some((to, b)), None) if to < me && r.to_parent.is_none() && r.down.is_empty() => {
                r.to_parent = Some((to, whole(b)))
            }
            (Some((to, b)), None) if to > me => r.down.push((to, whole(b))),
            _ => {
                return Err(format!(
                    "{c} {a} is not a tree with parents below their children"
                ));
            }
        }
        k += 1;
    }
    Ok(r)
}

/// The recursion over a tree (children have higher ranks than their parents, root 0).
fn tree(
    c: Collective,
    a: Algorithm,
    shape: &GroupShape,
    costs: &Costs<'_>,
    combine: &dyn Fn(f64) -> Option<u64>,
) -> Result<LogGpForm, String> {
    let ep = costs.ep;
    let n = shape.n as usize;
    // per rank: when it started its send up, and its bytes; when its CPU, receiving and
    // sending NIC sides are free after its upward part; when its recv from the parent posts
    let mut sent_up = vec![
        Sent {
            to: 0,
            at: u64::MAX,
            m: 0,
            key: [0; LEVELS],
        };
        n
    ];
    let mut cpu = vec![0_u64; n];
    let mut nic_r = vec![0_u64; n];
    let mut nic_s = vec![0_u64; n];
    let mut posted = vec![0_u64; n];
    let mut ranks: Vec<TreeRank> = Vec::with_capacity(n);
    for me in 0..shape.n {
        let s = GroupShape { me, ..*shape };
        ranks.push(tree_rank(c, a, &s, combine)?);
    }
    // upwards, children first (they have the higher ranks)
    let mut matched = vec![0_u64; n];
    let mut contested = None;
    for v in (0..n).rev() {
        let r = &ranks[v];
        if r.up.is_empty() && r.to_parent.is_none() {
            continue;
        }
        let mut steps: Vec<LocalStep> =
            r.up.iter()
                .map(|&(child, g)| LocalStep {
                    recv: Some(child),
                    combine: g,
                    ..LocalStep::default()
                })
                .collect();
        if let Some(up) = r.to_parent {
            steps.push(LocalStep {
                send: Some(up),
                ..LocalStep::default()
            });
        }
        let blocks: Vec<Incoming> =
            r.up.iter()
                .map(|&(child, _)| Incoming {
                    from: child,
                    sent: sent_up[child as usize],
                })
                .collect();
        // (a rendezvous send up is matched below, once its parent has run)
        let run = run_rank(&steps, &blocks, costs, &|_| None);
        if run.contested && contested.is_none() {
            contested = Some(v);
        }
        for (b, &t) in blocks.iter().zip(&run.matched) {
            matched[b.from as usize] = t.unwrap_or(0);
        }
        cpu[v] = run.cpu;
        nic_r[v] = run.nic_r;
        nic_s[v] = run.nic_s;
        posted[v] = run.cpu;
        if let Some(up) = run.sent.first() {
            sent_up[v] = *up;
        }
    }
    // a rendezvous send up completes when its parent matches it
    for v in 1..n {
        if let Some((_, m)) = ranks[v].to_parent
            && costs.rendezvous(m)
        {
            cpu[v] = cpu[v].max(matched[v]);
            nic_s[v] = nic_s[v].max(matched[v]);
            posted[v] = matched[v];
        }
    }
    // downwards, parents first
    let mut from_parent = vec![None::<(u64, u64)>; n];
    for v in 0..n {
        let r = &ranks[v];
        if v != 0
            && let Some((t, m)) = from_parent[v]
        {
            let p = t.saturating_add(costs.flight()).max(cpu[v]).max(nic_r[v]);
            cpu[v] = p.saturating_add(ep.recv_cpu(m));
            nic_r[v] = p.saturating_add(ep.nic(m));
        }
        for &(child, m) in &r.down {
            let t = cpu[v].max(nic_s[v]);
            from_parent[child as usize] = Some((t, m));
            cpu[v] = t.saturating_add(ep.send_cpu(m));
            nic_s[v] = t.saturating_add(ep.nic(m));
            if costs.rendezvous(m) {
                // the child matches on arrival (its receive posted, its CPU free)
                let ch = child as usize;
                let p = t
                    .saturating_add(costs.flight())
                    .max(cpu[ch])
                    .max(nic_r[ch])
                    .max(posted[ch]);
                cpu[v] = cpu[v].max(p);
                nic_s[v] = nic_s[v].max(p);
            }
        }
    }
    let makespan = cpu.iter().copied().max().unwrap_or(0);
    let mean_finish = cpu.iter().map(|&t| t as f64).sum::<f64>() / n as f64;
    Ok(LogGpForm {
        makespan,
        mean_finish,
        name: "recursion over the tree",
        broken: contested
            .map(|v| format!("blocks reach rank {v} (relative to the root) at the same instant as another block or a combine, and the executor's order of simultaneous events, which the form follows only twelve events back, decides which goes first"))
            .into_iter()
            .collect(),
    })
}
