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
    let mut out: Vec<String> = [
        "program.makespan",
        "ranks.finish.mean",
        "ranks.compute.mean",
        "ranks.compute.max",
    ]
    .map(str::to_owned)
    .to_vec();
    if has_messages(s) {
        out.push("messages.count".to_owned());
        out.push("messages.delay".to_owned());
        if s.machine.links.is_some() {
            for m in [
                "links.utilisation.mean",
                "links.utilisation.max",
                "links.delay.mean",
            ] {
                out.push(m.to_owned());
            }
        }
    }
    if s.report_each {
        for r in 0..s.ranks() {
            out.push(format!("rank.{r}.finish"));
            out.push(format!("rank.{r}.compute"));
        }
    }
    out
}

/// The values of [`names`] for one execution.
pub fn measure(s: &Schedule, run: &DagRun) -> Vec<(String, f64)> {
    let secs = |t: u64| t as f64 / TICKS_PER_SECOND;
    let p = run.finish.len().max(1) as f64;
    let mut out = vec![
        ("program.makespan".to_owned(), run.makespan),
        (
            "ranks.finish.mean".to_owned(),
            run.finish.iter().map(|&t| secs(t)).sum::<f64>() / p,
        ),
        (
            "ranks.compute.mean".to_owned(),
            run.compute.iter().map(|&t| secs(t)).sum::<f64>() / p,
        ),
        (
            "ranks.compute.max".to_owned(),
            secs(run.compute.iter().copied().max().unwrap_or(0)),
        ),
    ];
    if has_messages(s) {
        out.push(("messages.count".to_owned(), run.messages as f64));
        out.push(("messages.delay".to_owned(), run.message_delay));
        if s.machine.links.is_some() {
            let used = run.links.len().max(1) as f64;
            let crossings: u64 = run.links.iter().map(|l| l.2).sum();
            out.push((
                "links.utilisation.mean".to_owned(),
                run.links.iter().map(|l| l.1).sum::<f64>() / used,
            ));
            out.push((
                "links.utilisation.max".to_owned(),
                run.links.iter().map(|l| l.1).fold(0.0, f64::max),
            ));
            out.push((
                "links.delay.mean".to_owned(),
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
            out.push((format!("rank.{r}.finish"), secs(f)));
            out.push((format!("rank.{r}.compute"), secs(c)));
        }
    }
    out
}
