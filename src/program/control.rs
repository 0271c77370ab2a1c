//! A rank's control flow and expression resolution, shared by the program executor (in the
//! executors' layer) and the contention-free evaluation (in the analysis layer).
//!
//! [`Control`] owns what both interpret the same way: each rank's loop counters (index and
//! trip count per nesting depth), the stepping of [`Instr::Loop`](super::Instr::Loop),
//! [`Instr::Next`](super::Instr::Next) and [`Instr::When`](super::Instr::When), the evaluation
//! of expressions against a rank (with the checks that make a peer a rank, a tag a user tag, a
//! size a byte count, a region's iterations a count, and the fault naming the operation's
//! path), the collectives' groups, counters (their messages' tags), root and size checks, and
//! the ideal barriers' arrivals. [`Phases`] owns the nesting of phases and the time spent in
//! them, in either interpreter's time.
//!
//! What stays in each interpreter is time: the executor's events, queues, random draws and
//! categories, the evaluation's mean-value clocks, means and sharing timelines, and what a rank
//! does while it waits (at a barrier, for a message). Neither keeps a second copy of the logic
//! here, so the evaluation checks the engine's *timing* independently while both follow the
//! same path through a rank's program. Nothing here allocates per operation but an expression's
//! slow path on a fault and a barrier's list of arrivals, handed over when the barrier releases.

use std::ops::{AddAssign, Sub};

use super::collective::GroupShape;
use super::expr::{Env, Expr};
use super::fault::ProgramFault;
use super::{CollectiveOp, Program};

/// Tags at or above this are the collectives' own (user tags are below `2^40`).
pub const COLLECTIVE_TAG: u64 = 1 << 63;

/// Per-rank control state of one run of a program: loop counters, collective counters and
/// the ranks waiting at ideal barriers.
#[derive(Debug)]
pub struct Control<'p> {
    prog: &'p Program,
    /// Loop nesting depth of the program: the per-rank stride of the loop counters.
    depth: usize,
    loop_index: Vec<i64>,
    loop_times: Vec<i64>,
    /// Each rank's node.
    node: Vec<u32>,
    /// Per rank, per communicator (0: all ranks, g + 1: group table g): collectives started.
    coll_seq: Vec<u32>,
    /// Per communicator, per group: ranks waiting at its ideal barrier.
    barriers: Vec<Vec<Vec<u32>>>,
}

impl<'p> Control<'p> {
    /// Every rank at the start of `prog`: no loop entered, no collective started.
    pub fn new(prog: &'p Program) -> Control<'p> {
        let p = prog.ranks as usize;
        let depth = usize::from(prog.loop_depth);
        Control {
            prog,
            depth,
            loop_index: vec![0; p * depth],
            loop_times: vec![0; p * depth],
            node: (0..prog.ranks).map(|r| prog.node_of(r)).collect(),
            coll_seq: vec![0; p * (1 + prog.groups.len())],
            barriers: std::iter::once(vec![Vec::new()])
                .chain(
                    prog.groups
                        .iter()
                        .map(|g| vec![Vec::new(); g.members.len()]),
                )
                .collect(),
        }
    }

    /// Rank `rank`'s node.
    #[inline]
    pub fn node(&self, rank: u32) -> u32 {
        self.node[rank as usize]
    }

    /// The fault of rank `rank` at instruction `pc`.
    #[cold]
    #[inline(never)]
    pub fn fault(&self, rank: u32, pc: u32, message: String) -> ProgramFault {
        ProgramFault::Eval {
            rank,
            path: self
                .prog
                .paths
                .get(pc as usize)
                .cloned()
                .unwrap_or_default(),
            message,
        }
    }

    fn env(&self, rank: u32) -> Env<'_> {
        let base = rank as usize * self.depth;
        Env {
            rank: i64::from(rank),
            ranks: i64::from(self.prog.ranks),
            node: i64::from(self.node[rank as usize]),
            loops: &self.loop_index[base..base + self.depth],
        }
    }

    /// The value of `e` for rank `rank` at instruction `pc`.
    #[inline(always)]
    pub fn eval(&self, rank: u32, pc: u32, e: &Expr) -> Result<i64, ProgramFault> {
        match e.quick(rank) {
            Some(v) => Ok(v),
            None => self.eval_slow(rank, pc, e),
        }
    }

    #[inline(never)]
    fn eval_slow(&self, rank: u32, pc: u32, e: &Expr) -> Result<i64, ProgramFault> {
        e.eval(&self.env(rank))
            .map_err(|err| self.fault(rank, pc, err.0))
    }

    /// The rank `e` names, checked to be one of the program's.
    #[inline(always)]
    pub fn peer(&self, rank: u32, pc: u32, e: &Expr) -> Result<u32, ProgramFault> {
        let v = self.eval(rank, pc, e)?;
        u32::try_from(v)
            .ok()
            .filter(|&p| p < self.prog.ranks)
            .ok_or_else(|| {
                self.fault(
                    rank,
                    pc,
                    format!("`{e}` gives rank {v}, outside 0..{}", self.prog.ranks),
                )
            })
    }

    /// The user tag `e` gives, checked to be below `2^40`.
    #[inline(always)]
    pub fn user_tag(&self, rank: u32, pc: u32, e: &Expr) -> Result<u64, ProgramFault> {
        let t = self.eval(rank, pc, e)?;
        u64::try_from(t)
            .ok()
            .filter(|&t| t < 1 << 40)
            .ok_or_else(|| self.fault(rank, pc, format!("tag `{e}` gives {t}, outside 0..2^40")))
    }

    /// The byte count `e` gives, checked not to be negative.
    #[inline(always)]
    pub fn bytes(&self, rank: u32, pc: u32, e: &Expr) -> Result<f64, ProgramFault> {
        let v = self.eval(rank, pc, e)?;
        if v < 0 {
            return Err(self.fault(rank, pc, format!("`{e}` gives {v} bytes")));
        }
        // the clock's rule for durations, on sizes known only now (they read a loop counter)
        let slowest = self
            .prog
            .disks
            .iter()
            .map(|d| d.bandwidth)
            .fold(self.prog.interconnect.bandwidth, f64::min);
        if !super::budget::span_fits(self.prog, v as f64 / slowest) {
            return Err(self.fault(
                rank,
                pc,
                format!(
                    "`{e}` gives {v} bytes, which take {:.3e} time units at {slowest:e} bytes per time unit: beyond the {:.3e} the program's clock holds (2^37 times its smallest time)",
                    v as f64 / slowest,
                    super::budget::largest_span(self.prog)
                ),
            ));
        }
        Ok(v as f64)
    }

    /// The iterations of a region this rank executes: `iterations`, checked not to be
    /// negative, divided among the ranks (rounded up) when `split`.
    pub fn iterations(
        &self,
        rank: u32,
        pc: u32,
        iterations: &Expr,
        split: bool,
    ) -> Result<u64, ProgramFault> {
        let i = self.eval(rank, pc, iterations)?;
        if i < 0 {
            return Err(self.fault(rank, pc, format!("`{iterations}` gives {i} iterations")));
        }
        let n = if split {
            (i as u64).div_ceil(u64::from(self.prog.ranks))
        } else {
            i as u64
        };
        // the clock's rule for durations, on counts known only now (they read a loop counter)
        if let Some(super::Instr::Compute(super::Work::Region { cost, .. })) =
            self.prog.code.get(pc as usize)
            && !super::budget::span_fits(self.prog, n as f64 * cost.mean())
        {
            return Err(self.fault(
                rank,
                pc,
                format!(
                    "`{iterations}` gives {i} iterations, {n} x {:e} = {:.3e} time units on this rank: beyond the {:.3e} the program's clock holds (2^37 times its smallest time)",
                    cost.mean(),
                    n as f64 * cost.mean(),
                    super::budget::largest_span(self.prog)
                ),
            ));
        }
        Ok(n)
    }

    /// [`Instr::Loop`](super::Instr::Loop) at `pc`: enters the loop at nesting `depth` for
    /// `times` trips, or skips it to `end` when that is not positive. Returns the next pc.
    pub fn enter_loop(
        &mut self,
        rank: u32,
        pc: u32,
        times: &Expr,
        depth: u16,
        end: u32,
    ) -> Result<u32, ProgramFault> {
        let n = self.eval(rank, pc, times)?;
        if n <= 0 {
            return Ok(end);
        }
        let k = rank as usize * self.depth + usize::from(depth);
        self.loop_index[k] = 0;
        self.loop_times[k] = n;
        Ok(pc + 1)
    }

    /// [`Instr::Next`](super::Instr::Next) at `pc`: counts a trip of the loop at nesting
    /// `depth`; returns its `start` while trips remain, else the pc after the loop.
    #[inline]
    pub fn next_trip(&mut self, rank: u32, pc: u32, start: u32, depth: u16) -> u32 {
        let k = rank as usize * self.depth + usize::from(depth);
        self.loop_index[k] += 1;
        if self.loop_index[k] < self.loop_times[k] {
            start
        } else {
            pc + 1
        }
    }

    /// [`Instr::When`](super::Instr::When) at `pc`: the next pc, or `skip` when `cond` is 0.
    pub fn when(&self, rank: u32, pc: u32, cond: &Expr, skip: u32) -> Result<u32, ProgramFault> {
        Ok(if self.eval(rank, pc, cond)? != 0 {
            pc + 1
        } else {
            skip
        })
    }

    /// The rank's group in `op`'s communicator: its size, the rank's index in it, and its
    /// member list (`None`: all ranks, in rank order).
    pub fn group_of(&self, rank: u32, op: &CollectiveOp) -> (u32, u32, Option<&'p [u32]>) {
        let prog = self.prog;
        match op.group {
            None => (prog.ranks, rank, None),
            Some(g) => {
                let t = &prog.groups[g as usize];
                let members = &t.members[t.group_of[rank as usize] as usize];
                (
                    members.len() as u32,
                    t.index_in[rank as usize],
                    Some(members.as_slice()),
                )
            }
        }
    }

    /// Counts a collective the rank starts on `op`'s communicator; returns the communicator
    /// and the count (which make its messages' tag).
    fn count_collective(&mut self, rank: u32, op: &CollectiveOp) -> (usize, u32) {
        let comm = op.group.map_or(0, |g| g as usize + 1);
        let slot = rank as usize * (1 + self.prog.groups.len()) + comm;
        self.coll_seq[slot] += 1;
        (comm, self.coll_seq[slot])
    }

    /// Starts the message-passing collective `op` at `pc`: counts it, checks its root and
    /// size, and returns the rank's shape of it and its messages' tag.
    pub fn start_collective(
        &mut self,
        rank: u32,
        pc: u32,
        op: &CollectiveOp,
    ) -> Result<(GroupShape, u64), ProgramFault> {
        let (comm, seq) = self.count_collective(rank, op);
        let (n, me, _) = self.group_of(rank, op);
        let root = self.eval(rank, pc, &op.root)?;
        if !(0..i64::from(n)).contains(&root) {
            return Err(self.fault(
                rank,
                pc,
                format!(
                    "root `{}` gives {root}, outside the group's 0..{n}",
                    op.root
                ),
            ));
        }
        let bytes = self.eval(rank, pc, &op.bytes)?;
        if bytes < 0 {
            return Err(self.fault(rank, pc, format!("`{}` gives {bytes} bytes", op.bytes)));
        }
        let shape = GroupShape {
            n,
            me,
            root: root as u32,
            bytes: bytes as f64,
            segments: op.segments,
            per_node: self.prog.collective_per_node(op),
        };
        let tag = COLLECTIVE_TAG | ((comm as u64) << 32) | u64::from(seq);
        Ok((shape, tag))
    }

    /// The rank arrives at the ideal barrier `op` (counted as a collective): `None` while
    /// members of its group are missing, else every member that arrived, the rank last.
    pub fn arrive_at_barrier(&mut self, rank: u32, op: &CollectiveOp) -> Option<Vec<u32>> {
        self.count_collective(rank, op);
        let (n, _, _) = self.group_of(rank, op);
        let (comm, grp) = match op.group {
            None => (0, 0),
            Some(g) => (
                g as usize + 1,
                self.prog.groups[g as usize].group_of[rank as usize] as usize,
            ),
        };
        let waiting = &mut self.barriers[comm][grp];
        waiting.push(rank);
        if waiting.len() < n as usize {
            return None;
        }
        Some(std::mem::take(waiting))
    }
}

/// Per rank, per phase: the time spent inside the phase, phases nesting (a phase re-entered
/// inside itself counts once, from its outermost start to its outermost end). `T` is the
/// interpreter's time: the executor's ticks, the evaluation's seconds.
#[derive(Debug)]
pub struct Phases<T> {
    /// Phases of the program: the per-rank stride.
    phases: usize,
    depth: Vec<u16>,
    enter: Vec<T>,
    spent: Vec<T>,
}

impl<T: Copy + Default + Sub<Output = T> + AddAssign> Phases<T> {
    /// No rank in any of `phases` phases yet.
    pub fn new(ranks: u32, phases: usize) -> Phases<T> {
        let n = ranks as usize * phases;
        Phases {
            phases,
            depth: vec![0; n],
            enter: vec![T::default(); n],
            spent: vec![T::default(); n],
        }
    }

    /// [`Instr::PhaseStart`](super::Instr::PhaseStart): the rank enters `phase` at `now`; true
    /// when it was not inside it (the outermost start).
    pub fn start(&mut self, rank: u32, phase: u16, now: T) -> bool {
        let k = rank as usize * self.phases + usize::from(phase);
        let outermost = self.depth[k] == 0;
        if outermost {
            self.enter[k] = now;
        }
        self.depth[k] += 1;
        outermost
    }

    /// [`Instr::PhaseEnd`](super::Instr::PhaseEnd): the rank leaves `phase` at `now`; true when
    /// it is now outside it (the outermost end), its time in it then counted.
    pub fn end(&mut self, rank: u32, phase: u16, now: T) -> bool {
        let k = rank as usize * self.phases + usize::from(phase);
        self.depth[k] -= 1;
        let outermost = self.depth[k] == 0;
        if outermost {
            self.spent[k] += now - self.enter[k];
        }
        outermost
    }

    /// True while the rank is inside `phase` (between an outermost start and its end).
    pub fn inside(&self, rank: u32, phase: usize) -> bool {
        self.depth[rank as usize * self.phases + phase] > 0
    }

    /// The rank's total time inside `phase`.
    pub fn spent(&self, rank: u32, phase: usize) -> T {
        self.spent[rank as usize * self.phases + phase]
    }

    /// Replaces each rank's time in each phase by `f` of it and of its time in `other` (the
    /// same program's phases, another walk).
    pub fn combine_spent(&mut self, other: &Phases<T>, f: impl Fn(T, T) -> T) {
        for (mine, &theirs) in self.spent.iter_mut().zip(&other.spent) {
            *mine = f(*mine, theirs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Phases;

    #[test]
    fn a_nested_phase_counts_once_from_its_outermost_start_to_its_outermost_end() {
        let mut p: Phases<u128> = Phases::new(2, 2);
        assert!(p.start(1, 0, 10));
        assert!(!p.start(1, 0, 15));
        assert!(!p.end(1, 0, 20));
        assert!(p.end(1, 0, 30));
        assert!(p.start(1, 0, 40));
        assert!(p.end(1, 0, 45));
        assert_eq!(p.spent(1, 0), 25);
        assert!(!p.inside(1, 0));
        assert!(p.start(0, 1, 50));
        assert!(p.inside(0, 1) && !p.inside(0, 0));
        assert_eq!(p.spent(0, 0), 0);
        assert_eq!(p.spent(1, 1), 0);
    }
}
