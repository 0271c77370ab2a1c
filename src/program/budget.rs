//! The one place where a program's counts and durations are bounded before it runs.
//!
//! **Durations.** The program executor keeps time in ticks of `2^-31` of the program's smallest
//! time, and its calendar holds `2^84` ticks: every single duration must fit that clock
//! `2^16` times over, so no time may exceed [`MAX_TIME_RATIO`] (`2^37`) times the smallest.
//! The rule applies to every duration a program can produce: a compute's time, a message's
//! transmission (bytes / bandwidth), a disk request, and a region's `iterations x cost` (a
//! region of `10^13` iterations of 1 beside a message of `10^-9` would pass `2^84` ticks in one
//! step). Before a run, [`check`] applies it to every duration whose size is known from the
//! rank alone (constants and expressions of `rank`, `P` and `node`); during a run,
//! [`span_fits`] applies it to the others (sizes that read loop counters), and the run stops
//! with the operation's path.
//!
//! **Counts.** A loop's `times` multiplies the work of its body; [`check`] multiplies the
//! counts that are known before the run (the largest over the ranks) and refuses a program
//! that would execute more than [`MAX_OPERATIONS`] rank operations in a replication, naming
//! the loop. Counts that read loop counters are bounded during the run: an execution that
//! schedules more than [`MAX_EVENTS`] events stops with a diagnosis
//! ([`crate::program::ProgramFault::Budget`]).

use super::collective::{Algorithm, Collective};
use super::expr::{Env, Expr};
use super::{Instr, Program, Size, Work};

/// How far apart a program's times may be: its clock has `2^-31` of the smallest time per
/// tick, its calendar holds `2^84` ticks, and the largest time should fit `2^16` times over
/// (`2^(84 - 31 - 16)`).
pub const MAX_TIME_RATIO: f64 = (1u64 << 37) as f64;

/// Most rank operations (computes, messages, collective steps, disk requests, each on each
/// rank, loops unrolled) a program may execute in one replication, counted before it runs:
/// `2^32`, minutes to hours of simulation.
pub const MAX_OPERATIONS: f64 = 4_294_967_296.0;

/// The refusal of a model whose `what` (its counts, in words) make `operations` rank
/// operations per replication, when that is beyond [`MAX_OPERATIONS`], ending with `fix`: the
/// models bound their own counts at their own fields, before their programs are built.
pub fn operations_beyond_limit(what: &str, operations: f64, fix: &str) -> Option<String> {
    (operations > MAX_OPERATIONS).then(|| {
        format!(
            "{what} make about {operations:.3e} rank operations per replication, beyond the \
             limit of {MAX_OPERATIONS:.3e} (2^32) parsim runs: the run would not end in \
             reasonable time; {fix}"
        )
    })
}

/// Most events one execution may schedule before it is stopped (`2^34`): the bound on the
/// work whose size is only known while the program runs.
pub const MAX_EVENTS: u64 = 1 << 34;

/// The operations a lowering to a dependency graph (`crate::schedule::lower`) makes, about (collectives
/// by their steps, two operations each), loops unrolled, counted before it is built, and the
/// instruction of the outermost loop that multiplies them (the count to reduce), if any. Loops
/// whose counts read loop counters count once (the lowering bounds them as it goes).
pub fn graph_operations(prog: &Program) -> (f64, Option<usize>) {
    let mut loops: Vec<(usize, f64)> = Vec::new();
    let mut operations = 0.0_f64;
    let mut outermost = None;
    for (i, instr) in prog.code.iter().enumerate() {
        let weight = match instr {
            Instr::Loop { times, .. } => {
                let n = largest(prog, times).map_or(1.0, |n| n.max(0) as f64);
                loops.push((i, n));
                continue;
            }
            Instr::Next { .. } => {
                loops.pop();
                continue;
            }
            Instr::Compute(_)
            | Instr::Send { .. }
            | Instr::Traffic { .. }
            | Instr::Recv { .. }
            | Instr::Io { .. } => 1.0,
            Instr::SendRecv { .. } => 2.0,
            Instr::Collective(c) => {
                2.0 * collective_steps(prog, c.kind, c.algorithm, c.segments) + 1.0
            }
            Instr::When { .. } | Instr::PhaseStart(_) | Instr::PhaseEnd(_) => 0.0,
        };
        let multiplicity: f64 = loops.iter().map(|(_, n)| n).product();
        if multiplicity > 1.0 && outermost.is_none() {
            outermost = loops.iter().find(|(_, n)| *n > 1.0).map(|(l, _)| *l);
        }
        operations += multiplicity * f64::from(prog.ranks) * weight;
    }
    (operations, outermost)
}

/// A count or a duration beyond its bound, at an instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Excess {
    /// The instruction (index into [`Program::code`]).
    pub instr: usize,
    /// The field of its operation (`times`, `iterations`, `bytes`).
    pub field: &'static str,
    /// What is too large, by how much, and the limit.
    pub message: String,
}

/// The largest value `e` takes over the ranks, when it does not read a loop counter (`None`
/// when it does, or when it cannot be evaluated: the run reports that).
fn largest(prog: &Program, e: &Expr) -> Option<i64> {
    if let Some(v) = e.as_constant() {
        return Some(v);
    }
    if e.uses_loops() {
        return None;
    }
    let mut most = i64::MIN;
    for r in 0..prog.ranks {
        let v = match e.quick(r) {
            Some(v) => v,
            None => e
                .eval(&Env {
                    rank: i64::from(r),
                    ranks: i64::from(prog.ranks),
                    node: i64::from(r / prog.ranks_per_node),
                    loops: &[],
                })
                .ok()?,
        };
        most = most.max(v);
    }
    Some(most)
}

/// Whether a duration of `span` time units fits the program's clock ([`MAX_TIME_RATIO`] times
/// the smallest time the clock was made for).
pub fn span_fits(prog: &Program, span: f64) -> bool {
    span <= largest_span(prog)
}

/// The longest single duration the program's clock takes: `2^68` ticks.
pub fn largest_span(prog: &Program) -> f64 {
    prog.clock.tick() * 2f64.powi(68)
}

/// Steps each rank takes in a collective (its messages and combines, roughly): the
/// collectives whose work grows with `P` per rank take `P`, the others `log2 P + 1`; a
/// pipelined chain takes as many more as it has segments; the allreduce's ring `P` a chunk of
/// its blocks, its double binary tree at most 8 a chunk (4 up, 4 down, over both trees), its
/// hierarchical form `2 (L + N)` with `L` ranks on each of `N` nodes.
fn collective_steps(prog: &Program, kind: Collective, algorithm: Algorithm, segments: u32) -> f64 {
    let p = f64::from(prog.ranks);
    let s = f64::from(segments.max(1));
    match (kind, algorithm) {
        (Collective::Allreduce, Algorithm::Ring) => return p * s,
        (Collective::Allreduce, Algorithm::DoubleBinaryTree) => return 8.0 * s,
        (Collective::Allreduce, Algorithm::Hierarchical) => {
            let l = f64::from(prog.ranks_per_node);
            return 2.0 * (l + p / l);
        }
        _ => {}
    }
    let linear = matches!(kind, Collective::Alltoall | Collective::Allgather)
        || matches!(
            algorithm,
            Algorithm::Linear | Algorithm::Ring | Algorithm::Pairwise | Algorithm::Chain
        );
    let steps = if linear { p } else { p.log2().ceil() + 1.0 };
    steps + s - 1.0
}

/// Every count and duration of `prog` beyond its bound that is known before the run.
pub fn check(prog: &Program) -> Vec<Excess> {
    let mut found = Vec::new();
    let ranks = f64::from(prog.ranks);
    // the enclosing loops: (instruction, iterations known before the run, or 1 when not)
    let mut loops: Vec<(usize, f64)> = Vec::new();
    let mut operations = 0.0_f64;
    let mut counted = false;
    let limit = largest_span(prog);
    let smallest = prog.clock.tick() * 2f64.powi(31);
    let duration = |found: &mut Vec<Excess>,
                    i: usize,
                    field: &'static str,
                    what: String,
                    d: f64| {
        if d > limit {
            found.push(Excess {
                instr: i,
                field,
                message: format!(
                    "{what} = {d:.3e} time units, {:.3e} times the program's smallest time \
                     ({smallest:.3e}): beyond the {MAX_TIME_RATIO:.3e} (2^37) the clock can hold \
                     (it resolves 2^-31 of the smallest time in 2^84 ticks, and must hold the \
                     largest 2^16 times over); reduce it, or bring the program's times closer together",
                    d / smallest
                ),
            });
        }
    };
    for (i, instr) in prog.code.iter().enumerate() {
        let multiplicity: f64 = loops.iter().map(|(_, n)| n).product();
        let mut steps = 0.0;
        match instr {
            Instr::Loop { times, .. } => {
                let n = largest(prog, times).map_or(1.0, |n| n.max(0) as f64);
                loops.push((i, n));
            }
            Instr::Next { .. } => {
                loops.pop();
            }
            Instr::Compute(work) => {
                steps = 1.0;
                if let Work::Region {
                    iterations,
                    cost,
                    split,
                } = work
                    && let Some(n) = largest(prog, iterations).filter(|&n| n > 0)
                {
                    let n = if *split {
                        (n as u64).div_ceil(u64::from(prog.ranks))
                    } else {
                        n as u64
                    };
                    duration(
                        &mut found,
                        i,
                        "iterations",
                        format!("iterations x cost = {n} x {:e}", cost.mean()),
                        n as f64 * cost.mean(),
                    );
                }
            }
            Instr::Send { bytes, .. }
            | Instr::Traffic { bytes, .. }
            | Instr::SendRecv { bytes, .. } => {
                steps = 1.0;
                let net = &prog.interconnect;
                if let Size::Bytes(b) = bytes
                    && b.as_constant().is_none()
                    && let Some(v) = largest(prog, b)
                {
                    duration(
                        &mut found,
                        i,
                        "bytes",
                        format!(
                            "the transmission of {v} bytes at {:e} bytes per time unit",
                            net.bandwidth
                        ),
                        v as f64 / net.bandwidth,
                    );
                }
            }
            Instr::Recv { .. } => steps = 1.0,
            Instr::Io { disk, bytes, .. } => {
                steps = 1.0;
                if let Size::Bytes(b) = bytes
                    && b.as_constant().is_none()
                    && let Some(v) = largest(prog, b)
                {
                    let d = &prog.disks[*disk as usize];
                    duration(
                        &mut found,
                        i,
                        "bytes",
                        format!(
                            "a disk request of {v} bytes at {:e} bytes per time unit",
                            d.bandwidth
                        ),
                        d.startup + v as f64 / d.bandwidth,
                    );
                }
            }
            Instr::Collective(c) => {
                steps = collective_steps(prog, c.kind, c.algorithm, c.segments);
                if c.bytes.as_constant().is_none()
                    && let Some(v) = largest(prog, &c.bytes)
                {
                    // a vector collective sends the vector; a block one up to P blocks at once
                    let blocks = match c.kind {
                        Collective::Bcast
                        | Collective::Reduce
                        | Collective::Allreduce
                        | Collective::Barrier => 1.0,
                        _ => ranks,
                    };
                    duration(
                        &mut found,
                        i,
                        "bytes",
                        format!(
                            "the transmission of {v} bytes at {:e} bytes per time unit",
                            prog.interconnect.bandwidth
                        ),
                        v as f64 * blocks / prog.interconnect.bandwidth,
                    );
                }
            }
            Instr::When { .. } | Instr::PhaseStart(_) | Instr::PhaseEnd(_) => {}
        }
        operations += multiplicity * ranks * steps;
        if operations > MAX_OPERATIONS && !counted {
            counted = true;
            // named at the outermost loop that multiplies (the count to reduce), else here
            let (at, field) = loops
                .iter()
                .find(|(_, n)| *n > 1.0)
                .map_or((i, "kind"), |(l, _)| (*l, "times"));
            let counts: Vec<String> = loops
                .iter()
                .filter(|(_, n)| *n > 1.0)
                .map(|(_, n)| format!("{n:.0}"))
                .collect();
            found.push(Excess {
                instr: at,
                field,
                message: format!(
                    "the program would execute at least {operations:.3e} rank operations in one \
                     replication ({} ranks{}), beyond the limit of {MAX_OPERATIONS:.3e} (2^32) \
                     parsim runs: the run would not end in reasonable time; reduce the \
                     iterations or the ranks",
                    prog.ranks,
                    if counts.is_empty() {
                        String::new()
                    } else {
                        format!(" x loops of {} iterations", counts.join(" x "))
                    }
                ),
            });
        }
    }
    found
}
