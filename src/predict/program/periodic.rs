//! The stochastic critical path of a program with a long outermost loop, from its first
//! iterations. Each iteration of the loop is the same graph again, so the expected makespan
//! grows by an increment per iteration that settles once the ranks' times have spread as far
//! as one iteration lets them (a collective's last round, which every rank waits for, settles
//! it in one iteration; a neighbour exchange over as many as the ranks' graph is wide). The
//! program is cut to the loop's first `k` iterations (3, then 6, 12, ... while they stay under
//! the loop's count), Clark's maxima ([`super::stochastic::clark`]) are taken over the cut
//! program's activity graph with the expected maximum of the ranks' times at the end of each
//! iteration, and when the last two increments agree to [`SETTLED`], the cut program's
//! makespan is extended by the last increment for each iteration left out. The work then
//! grows with the ranks and the iterations it takes to settle, not with the loop's count.
//!
//! It applies to a program's one outermost loop when its count is a constant and nothing
//! inside it reads its counter (each iteration is then the same operations) and the program is
//! not a dependency graph; it is an approximation beyond Clark's own (the increment is taken
//! as settled), said in the prediction's label.

use rustc_hash::FxHashMap;

use super::evaluation;
use super::graph::Graph;
use super::stochastic::clark_marked;
use crate::program::Program;
use crate::program::repetition::OuterLoop;

/// How closely the last two increments per iteration must agree (relative to the last) for the
/// extension to take the last as the increment of every iteration left out.
pub const SETTLED: f64 = 1e-3;

/// The fewest iterations evaluated: two increments to compare.
pub const FIRST: i64 = 3;

/// What the extension found.
#[derive(Clone, Debug, PartialEq)]
pub struct Extension {
    /// The expected makespan, extended to every iteration.
    pub makespan: f64,
    /// The iterations evaluated.
    pub evaluated: i64,
    /// The loop's count.
    pub times: i64,
    /// The last increment of the expected maximum of the ranks' times per iteration.
    pub increment: f64,
    /// The last two increments' relative difference.
    pub drift: f64,
}

impl Extension {
    /// The approximation the extension adds to a prediction's label.
    pub fn label(&self) -> String {
        format!(
            "extended from the outermost loop's first {} of {} iterations (the expected makespan's increment per iteration, {:.6e}, settled to {:.1e}; taken for the {} left out)",
            self.evaluated,
            self.times,
            self.increment,
            self.drift,
            self.times - self.evaluated
        )
    }
}

/// The outermost loop the extension applies to, if any: the program's
/// [`Program::outer_loop`], with a count above [`FIRST`].
pub fn outer_loop(prog: &Program) -> Option<OuterLoop> {
    prog.outer_loop().filter(|l| l.times > FIRST)
}

/// The activities of the program cut to loop `l`'s first `k` iterations when they are over
/// `limit`, judged from `whole`, the whole program's (an estimate or a count): at least
/// `whole k / times`, as the loop's iterations have as many activities each and what comes
/// before and after it is in the cut too. `None` when that bound is within `limit`.
pub fn cut_over(whole: usize, l: OuterLoop, k: i64, limit: usize) -> Option<usize> {
    let least = (whole as u128 * k as u128 / l.times.max(1) as u128) as usize;
    (least > limit).then_some(least)
}

/// Per iteration of loop `l` in `g`, the graph of the program cut to the loop's first `k`
/// iterations: each rank's node when it ended the iteration; or why not (ranks that do not run
/// every iteration).
pub(super) fn iteration_ends(g: &Graph<'_>, l: OuterLoop, k: i64) -> Result<Vec<Vec<u32>>, String> {
    let mut ends: Vec<Vec<u32>> = vec![Vec::new(); g.chains.len()];
    for &(at, r, node) in &g.trips {
        if at as usize == l.next {
            ends[r as usize].push(node);
        }
    }
    if ends.iter().any(|e| e.len() as i64 != k) {
        return Err(
            "not every rank runs every iteration of the outermost loop (a guard around it)"
                .to_owned(),
        );
    }
    Ok((0..k as usize)
        .map(|j| ends.iter().map(|e| e[j]).collect())
        .collect())
}

/// Clark's expected makespan of `prog` extended over loop `l` from its first iterations (see
/// the module documentation), each cut program's graph that of its mean-value evaluation
/// (with a mean wait before each crossing of the links in `waits`, when given: see
/// [`super::evaluation::evaluate_with_waits`]), or why not: a cut program beyond a budget,
/// ranks that do not run every iteration, increments that do not settle before the loop's
/// count.
pub fn extend(
    prog: &Program,
    l: OuterLoop,
    waits: Option<&FxHashMap<u64, f64>>,
) -> Result<Extension, String> {
    let mut k = FIRST;
    let mut drift = f64::NAN;
    while k < l.times {
        let cut = prog.cut(l, k);
        let graph = evaluation::activity_graph(&cut, waits)?;
        let g = graph.map_err(|why| format!("its first {k} iterations: {why}"))?;
        let marks = iteration_ends(&g, l, k)?;
        let (x, maxima) = clark_marked(&g, &[], &marks)
            .map_err(|why| format!("its first {k} iterations: {why}"))?;
        let n = maxima.len();
        let (last, before) = (maxima[n - 1] - maxima[n - 2], maxima[n - 2] - maxima[n - 3]);
        drift = if last == before {
            0.0
        } else {
            ((last - before) / last).abs()
        };
        if drift <= SETTLED {
            return Ok(Extension {
                makespan: x.makespan.mean + (l.times - k) as f64 * last,
                evaluated: k,
                times: l.times,
                increment: last,
                drift,
            });
        }
        k *= 2;
    }
    Err(format!(
        "the expected makespan's increment per iteration had not settled to {SETTLED:.0e} at the loop's count of {} iterations (the last drift {drift:.1e})",
        l.times
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_is_over_the_limit_by_its_share_of_the_whole_programs_activities() {
        let l = OuterLoop {
            start: 0,
            next: 3,
            times: 100,
        };
        // 3 of 100 iterations of 46,694,400 activities: at least 1,400,832
        assert_eq!(cut_over(46_694_400, l, 3, 250_000), Some(1_400_832));
        assert_eq!(cut_over(46_694_400, l, 3, 1_400_832), None);
        assert_eq!(cut_over(0, l, 3, 0), None);
    }
}
