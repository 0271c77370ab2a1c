//! Lowering a sequential [`Program`] to a [`Dag`]: each rank's operations, loops unrolled and
//! `when`s decided, collectives expanded into their steps, every operation waiting for the one
//! before it. What `parsim goal` writes and what a program with LogGP endpoints runs.
//!
//! | operation | becomes | the next operation |
//! |---|---|---|
//! | `compute` | `calc` of its time (drawn from the rank's stream when random) | `requires` it |
//! | `send` | `send` | `requires` it |
//! | `isend` | `send` | `irequires` it (starts once the send has started) |
//! | `recv` | `recv` (its size that of the message it matches) | `requires` it |
//! | `sendrecv` | `send` and `recv`, both after the previous operation | `requires` both |
//! | a collective | its steps ([`crate::program::collective`]): per step a `send`, a `recv` or both, then a `calc` of the combine if it has one | `requires` the last step |
//! | `repeat`, `phase`, `when` | their operations, unrolled | |
//! | `irecv` | `recv` | `irequires` it (starts once it is posted) |
//! | `wait` | `calc 0` after the previous operation and the labelled ones (`for`) | `requires` it |
//!
//! An operation with `requires` or `irequires` waits for those labelled operations (the rank's
//! latest execution of each: an operation in a loop is waited for in its latest trip) instead of
//! the operation before it: `requires` waits for them to finish (for a collective, its last
//! step), `irequires` for them to start (its first step).
//!
//! Tags: a user tag `t` (below `2^31`) stays `t`; a collective's messages get
//! `2^31 + 2^24 (communicator mod 128) + (its count mod 2^24)` (each rank counts the collectives
//! it starts per communicator), so they never match user messages or another collective's.
//! Refused: the ideal barrier (it has no messages: use `algorithm = "dissemination"`) and disk
//! I/O, which a dependency graph of messages cannot express.
//!
//! Times are in the program's time unit read as seconds (ticks of [`TICKS_PER_SECOND`]); a
//! random time or size is drawn from the rank's stream of the execution, in program order, as
//! the program executor draws them.

use super::dag::{Dag, DagBuilder, MAX_OPS, TICKS_PER_SECOND};
use crate::dist::{Dist, Law};
use crate::program::collective::{Algorithm, Collective, Step};
use crate::program::control::{COLLECTIVE_TAG, Control};
use crate::program::marks::{Dependency, Mark, Marks};
use crate::program::{CollectiveOp, Instr, MAX_INSTANT_OPS, Program, Size, Work};
use crate::rng::{StreamRng, stream};

/// Why a program cannot be lowered: the operation's path and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct LowerError {
    /// The operation's path in the scenario (`program.op[2]`), or empty.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// True when no time or size of the program is random (every lowering is the same).
pub fn deterministic(prog: &Program) -> bool {
    let fixed = |d: &Dist| matches!(d.law(), Law::Deterministic { .. });
    prog.code.iter().all(|i| match i {
        Instr::Compute(Work::Time(d)) => fixed(d),
        Instr::Compute(Work::Region { cost, .. }) => fixed(cost),
        Instr::Send { bytes, .. } | Instr::SendRecv { bytes, .. } | Instr::Io { bytes, .. } => {
            !matches!(bytes, Size::Random(_))
        }
        Instr::Collective(op) => op.combine.as_ref().is_none_or(fixed),
        _ => true,
    })
}

/// What one operation of a lowered graph takes in memory, about: its record, its share of the
/// edges and counters, and the executor's state.
pub const BYTES_PER_OPERATION: f64 = 32.0;

/// The most operations a lowering builds: [`MAX_OPS`], and what fits half the memory the
/// process may take ([`crate::memory::limit`]; half, since a growing array holds its old and
/// new copies at once) at [`BYTES_PER_OPERATION`] each.
pub fn most_operations() -> u64 {
    let memory =
        crate::memory::limit().map_or(u64::MAX, |m| (m as f64 / 2.0 / BYTES_PER_OPERATION) as u64);
    MAX_OPS.min(memory)
}

/// Something of a program that a dependency graph cannot hold ([`unfit`]): the instruction and
/// the field of its operation, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfit {
    /// The instruction (index into [`Program::code`]); `None` for the program as a whole.
    pub instr: Option<usize>,
    /// The field of its operation (`times`, `tag`), or empty for the operation itself.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

impl Unfit {
    /// As a [`LowerError`], with the operation's path in `prog`.
    fn error(self, prog: &Program) -> LowerError {
        let path = self.instr.map_or_else(String::new, |i| match self.field {
            "" => prog.paths[i].clone(),
            field => format!("{}.{field}", prog.paths[i]),
        });
        LowerError {
            path,
            message: self.message,
        }
    }
}

/// Everything of `prog` that a dependency graph cannot hold, found before any rank is lowered:
/// more operations, loops unrolled, than fit ([`most_operations`], estimated by
/// [`crate::program::budget::graph_operations`]), an ideal barrier, disk I/O, a message to a
/// no operation receives, a constant user tag of
/// `2^31` or more (the tags above are the collectives').
pub fn unfit(prog: &Program) -> Vec<Unfit> {
    let mut found = Vec::new();
    let (operations, outermost) = crate::program::budget::graph_operations(prog);
    let most = most_operations();
    if operations > most as f64 {
        found.push(Unfit {
            instr: outermost,
            field: if outermost.is_some() { "times" } else { "" },
            message: format!(
                "a program run as a dependency graph (with [loggp], labels, or written by parsim goal) has its loops unrolled and its collectives expanded: this one would make about {operations:.3e} operations ({} at {BYTES_PER_OPERATION} bytes each), beyond the {most} that fit (at most 2^30, and half the memory this process may take); reduce the iterations or the ranks, or leave out [loggp] to run it as a rank program, which keeps loops as loops",
                crate::memory::show(operations * BYTES_PER_OPERATION)
            ),
        });
    }
    for (pc, i) in prog.code.iter().enumerate() {
        let (field, message) = match i {
            Instr::Collective(op)
                if op.kind == Collective::Barrier && op.algorithm == Algorithm::Ideal =>
            {
                (
                    "algorithm",
                    "the ideal barrier has no messages and no dependency graph can express it; use algorithm = \"dissemination\" or \"binomial\"".to_owned(),
                )
            }
            Instr::Io { .. } => (
                "",
                "disk I/O cannot be expressed in a dependency graph of messages".to_owned(),
            ),
            Instr::Traffic { .. } => (
                "to",
                "a message no operation receives (to = \"random\", received = false) has no receive to match it in a dependency graph of messages: run the program as ranks (no [loggp], labels or GOAL file)".to_owned(),
            ),
            Instr::Send { tag, .. } | Instr::Recv { tag, .. } | Instr::SendRecv { tag, .. } => {
                match tag.as_constant().filter(|&t| t >= 1 << 31) {
                    Some(t) => (
                        "tag",
                        format!("{t} is beyond 2^31 - 1, the largest user tag a dependency graph keeps (the tags above are its collectives')"),
                    ),
                    None => continue,
                }
            }
            _ => continue,
        };
        found.push(Unfit {
            instr: Some(pc),
            field,
            message,
        });
    }
    found
}

/// The program as a dependency graph, for execution `replication` of `seed` (the streams of
/// its random times and sizes).
pub fn lower(prog: &Program, seed: u64, replication: u64) -> Result<Dag, LowerError> {
    build(prog, seed, replication, None)
}

/// Where each operation of [`lower`]'s graph comes from: how a fault of the graph names the
/// operations the user wrote.
#[derive(Debug)]
pub struct Origins {
    /// By the operation's global index: its instruction of [`Program::code`] and which pass
    /// of its rank through that instruction made it (0 for the first).
    of: Vec<(u32, u32)>,
    /// By instruction: whether some rank passed through it more than once (in a loop).
    repeated: Vec<bool>,
}

impl Origins {
    /// Operation `op`'s place in the program as the user wrote it: its path
    /// ([`Program::paths`]), with the pass of its rank when its instruction is in a loop
    /// (`program.op[0].body[1], pass 3`).
    pub fn name(&self, prog: &Program, op: u32) -> Option<String> {
        let &(pc, pass) = self.of.get(op as usize)?;
        let path = prog.paths.get(pc as usize)?;
        Some(if self.repeated[pc as usize] {
            format!("{path}, pass {}", u64::from(pass) + 1)
        } else {
            path.clone()
        })
    }

    /// Notes the operations made since the last note (up to `len`) as pass `pass` of
    /// instruction `pc`.
    fn note(&mut self, len: usize, pc: u32, pass: u32) {
        self.of.resize(self.of.len().max(len), (pc, pass));
        if pass > 0 {
            self.repeated[pc as usize] = true;
        }
    }
}

/// Where every operation of [`lower`]'s graph comes from. Lowers again, so only for what went
/// wrong.
pub fn origins(prog: &Program, seed: u64, replication: u64) -> Result<Origins, LowerError> {
    let mut origins = Origins {
        of: Vec::new(),
        repeated: vec![false; prog.code.len()],
    };
    build(prog, seed, replication, Some(&mut origins))?;
    Ok(origins)
}

/// [`lower`], noting each operation's origin in `origins` if given.
fn build(
    prog: &Program,
    seed: u64,
    replication: u64,
    mut origins: Option<&mut Origins>,
) -> Result<Dag, LowerError> {
    if let Some(e) = unfit(prog).into_iter().next() {
        return Err(e.error(prog));
    }
    let plain = |message: String| LowerError {
        path: String::new(),
        message,
    };
    let mut b = DagBuilder::new(prog.ranks).map_err(|e| plain(e.0))?;
    // loops whose counts read loop counters were counted once: bounded as they unroll
    b.limit(most_operations());
    let mut ctl = Control::new(prog);
    let labels = prog.marks.as_ref().map_or(0, |m| m.labels.len());
    let mut rank = Rank {
        prev: Vec::new(),
        next: Vec::new(),
        entry: Vec::new(),
        first: false,
        latest: vec![None; labels],
    };
    for r in 0..prog.ranks {
        b.begin_rank().map_err(|e| plain(e.0))?;
        let mut rng = stream(seed, replication, u64::from(r));
        rank.prev.clear();
        rank.latest.iter_mut().for_each(|l| *l = None);
        lower_rank(
            prog,
            &mut ctl,
            &mut b,
            &mut rank,
            &mut rng,
            r,
            origins.as_deref_mut(),
        )?;
        b.end_rank().map_err(|e| plain(e.0))?;
    }
    let mut dag = b.finish().map_err(|e| plain(e.0))?;
    dag.fill_receive_sizes();
    Ok(dag)
}

/// What the next operation of a rank waits for.
struct Rank {
    prev: Vec<(u32, Dependency)>,
    next: Vec<(u32, Dependency)>,
    /// The current instruction's first operations (those that wait for what came before).
    entry: Vec<u32>,
    first: bool,
    /// Per label: the first and the last operations of its latest execution.
    latest: Vec<Option<(Vec<u32>, Vec<u32>)>>,
}

impl Rank {
    /// Adds the dependencies of local operation `op` on the previous ones.
    fn chain(&mut self, b: &mut DagBuilder, op: u32) -> Result<(), String> {
        for &(p, kind) in &self.prev {
            b.depend(op, p, kind).map_err(|e| e.0)?;
        }
        if self.first {
            self.entry.push(op);
        }
        Ok(())
    }

    /// The operations just added are what the next one waits for.
    fn advance(&mut self) {
        std::mem::swap(&mut self.prev, &mut self.next);
        self.next.clear();
        self.first = false;
    }

    /// The operations label `l` stands for: its first ones (`irequires`) or last ones.
    fn resolve(&self, marks: &Marks, l: u32, kind: Dependency) -> Result<Vec<u32>, String> {
        match &self.latest[l as usize] {
            Some((entry, exit)) => Ok(match kind {
                Dependency::Irequires => entry.clone(),
                Dependency::Requires => exit.clone(),
            }),
            None => Err(format!(
                "it waits for the operation labelled {:?}, which has not run on this rank yet (an operation can wait only for one that comes before it in the rank's order: two that wait for each other are a cycle)",
                marks.labels[l as usize]
            )),
        }
    }
}

fn ticks(t: f64) -> Result<u64, String> {
    let v = t * TICKS_PER_SECOND;
    if !(0.0..1.8e19).contains(&v) {
        return Err(format!("a time of {t} is not one a schedule can hold"));
    }
    Ok(v.round() as u64)
}

fn user_tag(t: u64) -> Result<u32, String> {
    u32::try_from(t)
        .ok()
        .filter(|&t| t < 1 << 31)
        .ok_or_else(|| format!("tag {t} is beyond 2^31 - 1, the largest a schedule keeps"))
}

fn collective_tag(tag: u64) -> u32 {
    let comm = ((tag & !COLLECTIVE_TAG) >> 32) as u32;
    let seq = tag as u32;
    (1 << 31) | ((comm & 0x7F) << 24) | (seq & 0x00FF_FFFF)
}

fn bytes(v: f64) -> u64 {
    v.max(0.0).round() as u64
}

fn lower_rank(
    prog: &Program,
    ctl: &mut Control<'_>,
    b: &mut DagBuilder,
    rank: &mut Rank,
    rng: &mut StreamRng,
    r: u32,
    mut origins: Option<&mut Origins>,
) -> Result<(), LowerError> {
    let mut pc: u32 = 0;
    // with origins: this rank's passes through each instruction so far
    let mut passes = vec![
        0u32;
        if origins.is_some() {
            prog.code.len()
        } else {
            0
        }
    ];
    let mut budget = MAX_INSTANT_OPS;
    let fail = |pc: u32, message: String| LowerError {
        path: prog.paths.get(pc as usize).cloned().unwrap_or_default(),
        message: format!("rank {r}: {message}"),
    };
    let fault = |pc: u32, e: crate::program::ProgramFault| fail(pc, e.to_string());
    let no_mark = Mark::default();
    while let Some(instr) = prog.code.get(pc as usize) {
        let mark = prog.marks.as_ref().map_or(&no_mark, |m| &m.of[pc as usize]);
        if let (Some(after), Some(marks)) = (&mark.after, &prog.marks)
            && !matches!(
                instr,
                Instr::Loop { .. } | Instr::Next { .. } | Instr::When { .. }
            )
        {
            rank.prev.clear();
            for &(l, kind) in after {
                let ops = rank.resolve(marks, l, kind).map_err(|m| fail(pc, m))?;
                rank.prev.extend(ops.into_iter().map(|op| (op, kind)));
            }
        }
        rank.entry.clear();
        rank.first = true;
        budget -= 1;
        if budget == 0 {
            return Err(fail(
                pc,
                format!("more than {MAX_INSTANT_OPS} steps without an operation"),
            ));
        }
        match instr {
            Instr::Compute(work) => {
                let t = match work {
                    Work::Time(d) => d.draw(rng),
                    Work::Region {
                        iterations,
                        cost,
                        split,
                    } => {
                        let n = ctl
                            .iterations(r, pc, iterations, *split)
                            .map_err(|e| fault(pc, e))?;
                        cost.draw_sum(n, rng)
                    }
                };
                let t = ticks(t).map_err(|m| fail(pc, m))?;
                let op = b.calc(t, 0).map_err(|e| fail(pc, e.0))?;
                rank.chain(b, op).map_err(|m| fail(pc, m))?;
                if let (false, Some(marks)) = (mark.wait.is_empty(), &prog.marks) {
                    for &l in &mark.wait {
                        for w in rank
                            .resolve(marks, l, Dependency::Requires)
                            .map_err(|m| fail(pc, m))?
                        {
                            if !rank
                                .prev
                                .iter()
                                .any(|&(p, k)| p == w && k == Dependency::Requires)
                            {
                                b.depend(op, w, Dependency::Requires)
                                    .map_err(|e| fail(pc, e.0))?;
                            }
                        }
                    }
                }
                rank.next.push((op, Dependency::Requires));
                rank.advance();
                budget = MAX_INSTANT_OPS;
            }
            Instr::Send {
                to,
                bytes: size,
                tag,
                blocking,
            } => {
                let to = ctl.peer(r, pc, to).map_err(|e| fault(pc, e))?;
                let size = size_of(ctl, rng, r, pc, size).map_err(|e| fault(pc, e))?;
                let tag = ctl.user_tag(r, pc, tag).map_err(|e| fault(pc, e))?;
                let tag = user_tag(tag).map_err(|m| fail(pc, m))?;
                let op = b.send(to, size, tag, 0, 0).map_err(|e| fail(pc, e.0))?;
                rank.chain(b, op).map_err(|m| fail(pc, m))?;
                let kind = if *blocking {
                    Dependency::Requires
                } else {
                    Dependency::Irequires
                };
                rank.next.push((op, kind));
                rank.advance();
                budget = MAX_INSTANT_OPS;
            }
            Instr::Recv { from, tag } => {
                let from = ctl.peer(r, pc, from).map_err(|e| fault(pc, e))?;
                let tag = ctl.user_tag(r, pc, tag).map_err(|e| fault(pc, e))?;
                let tag = user_tag(tag).map_err(|m| fail(pc, m))?;
                let op = b.recv(from, 0, tag, 0, 0).map_err(|e| fail(pc, e.0))?;
                rank.chain(b, op).map_err(|m| fail(pc, m))?;
                let kind = if mark.nonblocking {
                    Dependency::Irequires
                } else {
                    Dependency::Requires
                };
                rank.next.push((op, kind));
                rank.advance();
                budget = MAX_INSTANT_OPS;
            }
            Instr::SendRecv {
                to,
                from,
                bytes: size,
                tag,
            } => {
                let to = ctl.peer(r, pc, to).map_err(|e| fault(pc, e))?;
                let from = ctl.peer(r, pc, from).map_err(|e| fault(pc, e))?;
                let size = size_of(ctl, rng, r, pc, size).map_err(|e| fault(pc, e))?;
                let tag = ctl.user_tag(r, pc, tag).map_err(|e| fault(pc, e))?;
                let tag = user_tag(tag).map_err(|m| fail(pc, m))?;
                exchange(b, rank, Some((to, size)), Some(from), tag).map_err(|m| fail(pc, m))?;
                rank.advance();
                budget = MAX_INSTANT_OPS;
            }
            Instr::Collective(op) => {
                collective(prog, ctl, b, rank, rng, r, pc, op)?;
                budget = MAX_INSTANT_OPS;
            }
            Instr::Io { .. } | Instr::Traffic { .. } => {
                return Err(fail(
                    pc,
                    "disk I/O and messages no operation receives cannot be expressed in a dependency graph"
                        .to_owned(),
                ));
            }
            Instr::Loop { times, depth, end } => {
                pc = ctl
                    .enter_loop(r, pc, times, *depth, *end)
                    .map_err(|e| fault(pc, e))?;
                continue;
            }
            Instr::Next { start, depth } => {
                pc = ctl.next_trip(r, pc, *start, *depth);
                continue;
            }
            Instr::When { cond, skip } => {
                pc = ctl.when(r, pc, cond, *skip).map_err(|e| fault(pc, e))?;
                continue;
            }
            Instr::PhaseStart(_) | Instr::PhaseEnd(_) => {}
        }
        if let Some(l) = mark.label {
            let exit = rank.prev.iter().map(|&(op, _)| op).collect();
            rank.latest[l as usize] = Some((rank.entry.clone(), exit));
        }
        if let Some(o) = origins.as_deref_mut() {
            let pass = &mut passes[pc as usize];
            o.note(b.len(), pc, *pass);
            *pass = pass.saturating_add(1);
        }
        pc += 1;
    }
    Ok(())
}

fn size_of(
    ctl: &Control<'_>,
    rng: &mut StreamRng,
    r: u32,
    pc: u32,
    s: &Size,
) -> Result<u64, crate::program::ProgramFault> {
    Ok(match s {
        Size::Bytes(e) => bytes(ctl.bytes(r, pc, e)?),
        Size::Random(d) => bytes(d.draw(rng).round()),
    })
}

/// A send and/or a receive, both after the previous operations; they are what the next one
/// waits for (pushed on `rank.next`).
fn exchange(
    b: &mut DagBuilder,
    rank: &mut Rank,
    send: Option<(u32, u64)>,
    recv: Option<u32>,
    tag: u32,
) -> Result<(), String> {
    if let Some((to, size)) = send {
        let op = b.send(to, size, tag, 0, 0).map_err(|e| e.0)?;
        rank.chain(b, op)?;
        rank.next.push((op, Dependency::Requires));
    }
    if let Some(from) = recv {
        let op = b.recv(from, 0, tag, 0, 0).map_err(|e| e.0)?;
        rank.chain(b, op)?;
        rank.next.push((op, Dependency::Requires));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn collective(
    prog: &Program,
    ctl: &mut Control<'_>,
    b: &mut DagBuilder,
    rank: &mut Rank,
    rng: &mut StreamRng,
    r: u32,
    pc: u32,
    op: &CollectiveOp,
) -> Result<(), LowerError> {
    let fail = |message: String| LowerError {
        path: prog.paths.get(pc as usize).cloned().unwrap_or_default(),
        message: format!("rank {r}: {message}"),
    };
    let (shape, tag) = ctl
        .start_collective(r, pc, op)
        .map_err(|e| fail(e.to_string()))?;
    let tag = collective_tag(tag);
    let (_, _, members) = ctl.group_of(r, op);
    let global = |i: u32| members.map_or(i, |m| m[i as usize]);
    let combines = op.combine.is_some() || op.combine_per_byte > 0.0;
    let mut k = 0;
    while let Some(step) = op.kind.step(op.algorithm, &shape, k) {
        let Step {
            send,
            recv,
            combine,
        } = step;
        let send = send.map(|(to, size)| (global(to), bytes(size)));
        exchange(b, rank, send, recv.map(global), tag).map_err(fail)?;
        rank.advance();
        if let Some(m) = combine.filter(|_| combines) {
            let mut t = op.combine_per_byte * m;
            if let Some(d) = &op.combine {
                t += d.draw(rng);
            }
            let c = b.calc(ticks(t).map_err(fail)?, 0).map_err(|e| fail(e.0))?;
            rank.chain(b, c).map_err(fail)?;
            rank.next.push((c, Dependency::Requires));
            rank.advance();
        }
        k += 1;
    }
    Ok(())
}
