//! What an execution of a [`Schedule`] reports (`crate::engine::schedule`):
//!
//! | metric | what |
//! |---|---|
//! | `program.makespan` | when the last CPU became free |
//! | `ranks.finish.mean` | mean over ranks of when each one's last CPU became free |
//! | `ranks.compute.mean`, `ranks.compute.max` | time in `calc`s per rank |
//! | `messages.count` | messages received |
//! | `messages.delay` | mean time from the start of a send to the start of its processing at the receiver (`o + L` on an idle machine, more when the receiver is busy or links queue) |
//! | `links.utilisation.mean`, `.max`, `links.delay.mean` | with links: busy fraction of the makespan of each link used, mean time from a header's arrival at a link to the end of its transmission |
//! | `rank.<r>.finish`, `rank.<r>.compute` | per rank, when the schedule reports each rank |

use crate::engine::schedule::DagRun;
use crate::metrics::name::{Figure, LINK_SUMMARIES, Subject};
use crate::schedule::dag::TICKS_PER_SECOND;
use crate::schedule::{Form, Schedule};

/// Whether the schedule sends messages.
fn has_messages(s: &Schedule) -> bool {
    match &s.form {
        Form::Dag(d) => d.sends() > 0,
        Form::Program(p) => p.has_messages(),
    }
}

/// The metric names a schedule's execution reports, in report order.
pub fn names(s: &Schedule) -> Vec<String> {
    let mut out = vec![
        Subject::Program.metric(Figure::Makespan),
        Subject::Ranks(Figure::Finish).metric(Figure::Mean),
        Subject::Ranks(Figure::Compute).metric(Figure::Mean),
        Subject::Ranks(Figure::Compute).metric(Figure::Max),
    ];
    if has_messages(s) {
        out.push(Subject::Messages.metric(Figure::Count));
        out.push(Subject::Messages.metric(Figure::Delay));
        if s.machine.links.is_some() {
            out.extend(LINK_SUMMARIES.map(|(f, summary)| Subject::Links(f).metric(summary)));
        }
    }
    if s.report_each {
        for r in 0..s.ranks() as usize {
            out.push(Subject::Rank(r).metric(Figure::Finish));
            out.push(Subject::Rank(r).metric(Figure::Compute));
        }
    }
    out
}

/// The values of [`names`] for one execution.
pub fn measure(s: &Schedule, run: &DagRun) -> Vec<(String, f64)> {
    let secs = |t: u64| t as f64 / TICKS_PER_SECOND;
    let p = run.finish.len().max(1) as f64;
    let mut out = vec![
        (Subject::Program.metric(Figure::Makespan), run.makespan),
        (
            Subject::Ranks(Figure::Finish).metric(Figure::Mean),
            run.finish.iter().map(|&t| secs(t)).sum::<f64>() / p,
        ),
        (
            Subject::Ranks(Figure::Compute).metric(Figure::Mean),
            run.compute.iter().map(|&t| secs(t)).sum::<f64>() / p,
        ),
        (
            Subject::Ranks(Figure::Compute).metric(Figure::Max),
            secs(run.compute.iter().copied().max().unwrap_or(0)),
        ),
    ];
    if has_messages(s) {
        out.push((Subject::Messages.metric(Figure::Count), run.messages as f64));
        out.push((Subject::Messages.metric(Figure::Delay), run.message_delay));
        if s.machine.links.is_some() {
            let used = run.links.len().max(1) as f64;
            let crossings: u64 = run.links.iter().map(|l| l.2).sum();
            let [mean_use, max_use, mean_delay] =
                LINK_SUMMARIES.map(|(f, summary)| Subject::Links(f).metric(summary));
            out.push((mean_use, run.links.iter().map(|l| l.1).sum::<f64>() / used));
            out.push((max_use, run.links.iter().map(|l| l.1).fold(0.0, f64::max)));
            out.push((
                mean_delay,
                if crossings > 0 {
                    run.links.iter().map(|l| l.3 * l.2 as f64).sum::<f64>() / crossings as f64
                } else {
                    0.0
                },
            ));
        }
    }
    if s.report_each {
        for (r, (&f, &c)) in run.finish.iter().zip(&run.compute).enumerate() {
            out.push((Subject::Rank(r).metric(Figure::Finish), secs(f)));
            out.push((Subject::Rank(r).metric(Figure::Compute), secs(c)));
        }
    }
    out
}
