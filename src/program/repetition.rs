//! A program's repetition: its one outermost loop, whose iterations are the same operations
//! each time, and the same program cut to that loop's first iterations. The predictions use
//! them to evaluate a long loop from its first iterations and extend what they find.

use super::expr::{Expr, Var};
use super::{Instr, Program};

/// A program's one outermost loop: its [`Instr::Loop`] and [`Instr::Next`] instructions and its
/// count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OuterLoop {
    /// Index of its [`Instr::Loop`] in [`Program::code`].
    pub start: usize,
    /// Index of its [`Instr::Next`].
    pub next: usize,
    /// Its count.
    pub times: i64,
}

impl Program {
    /// The program's outermost loop when its iterations repeat the same operations: the
    /// program's one loop at depth 0 (ranks that run different loops cannot be cut alike),
    /// with a constant count and a body that does not read its counter; none in a
    /// dependency-graph program.
    pub fn outer_loop(&self) -> Option<OuterLoop> {
        if self.marks.is_some() {
            return None;
        }
        let mut outer = self
            .code
            .iter()
            .enumerate()
            .filter_map(|(start, instr)| match instr {
                Instr::Loop {
                    times,
                    depth: 0,
                    end,
                } => Some((start, times, *end as usize - 1)),
                _ => None,
            });
        let (start, times, next) = outer.next()?;
        if outer.next().is_some() {
            return None;
        }
        let times = times.as_constant()?;
        let reads_counter = self.code[start + 1..next]
            .iter()
            .flat_map(Instr::expressions)
            .any(|e| e.uses(Var::Loop(0)));
        (!reads_counter).then_some(OuterLoop { start, next, times })
    }

    /// The program with loop `l` cut to its first `k` iterations.
    pub fn cut(&self, l: OuterLoop, k: i64) -> Program {
        let mut cut = self.clone();
        if let Instr::Loop { times, .. } = &mut cut.code[l.start] {
            *times = Expr::constant(k);
        }
        cut
    }
}
