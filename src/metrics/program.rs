//! The named metrics of a program run (see [`super::network`] for the queueing networks'):
//!
//! - `program.makespan`: when the last rank finished;
//! - `phase.<name>.mean`, `phase.<name>.max`: time inside a named phase, mean and most over the
//!   ranks;
//! - `ranks.<category>.mean`, `ranks.<category>.max` for `compute`, `communication`, `waiting`
//!   and `io` (see [`Category`]);
//! - `messages.count`, `messages.delay` (mean, injection to delivery), `messages.p99`, when the
//!   program has more than one rank and sends messages;
//! - `messages.offered`, `messages.accepted`, when it sends messages to random ranks
//!   (`to = "random"`): the bytes injected, and those delivered, per node and time unit from the
//!   start to the last such injection, over a link's bandwidth (the offered load and the
//!   accepted throughput of network studies; [`crate::program::Traffic::shares`]);
//! - `links.utilisation.mean`, `links.utilisation.max` (over the links used),
//!   `links.delay.mean` (arrival at a link to the end of the transmission, over every crossing),
//!   when its ranks are on more than one node.
//!
//! A replication in which these metrics have no value (every message suppressed by `when`, say)
//! stops the run with an error naming them, rather than reporting them empty.
//! - with `report_each` (default for `P <= 16`): `rank.<r>.<category>` and `rank.<r>.finish`,
//!   and for every link used `link.<name>.utilisation`, `.messages`, `.delay`, `.p99`.

use crate::engine::program::ProgramRun;
use crate::metrics::name::{Figure, LINK_SUMMARIES, Subject};
use crate::program::{Category, Program};

/// The patterns of the per-link metrics a run reports, one set per link a message crosses
/// (`link.<name>.utilisation`, ...; the names depend on the links the run uses): none when the
/// program reports no rank and link individually or crosses no link.
pub fn per_link(prog: &Program) -> Vec<String> {
    if !(prog.report_each && prog.crosses_links()) {
        return Vec::new();
    }
    [
        Figure::Utilisation,
        Figure::Messages,
        Figure::Delay,
        Figure::P99,
    ]
    .map(|f| Subject::Link("<name>").metric(f))
    .to_vec()
}

/// The metric names known before running: all of them but the per-link ones, which depend on
/// the links the run uses ([`per_link`]).
pub fn names(prog: &Program) -> Vec<String> {
    let mut out = vec![Subject::Program.metric(Figure::Makespan)];
    for ph in &prog.phases {
        out.push(Subject::Phase(ph).metric(Figure::Mean));
        out.push(Subject::Phase(ph).metric(Figure::Max));
    }
    for c in Category::ALL.map(Figure::from) {
        out.push(Subject::Ranks(c).metric(Figure::Mean));
        out.push(Subject::Ranks(c).metric(Figure::Max));
    }
    if prog.has_messages() {
        for f in [Figure::Count, Figure::Delay, Figure::P99] {
            out.push(Subject::Messages.metric(f));
        }
    }
    if prog.has_traffic() {
        for f in [Figure::Offered, Figure::Accepted] {
            out.push(Subject::Messages.metric(f));
        }
    }
    if prog.crosses_links() {
        out.extend(LINK_SUMMARIES.map(|(f, summary)| Subject::Links(f).metric(summary)));
    }
    if prog.report_each {
        for r in 0..prog.ranks as usize {
            for c in Category::ALL.map(Figure::from) {
                out.push(Subject::Rank(r).metric(c));
            }
            out.push(Subject::Rank(r).metric(Figure::Finish));
        }
    }
    out
}

/// The metrics of one run, in a fixed order: [`names`], then the links in link order.
pub fn measure(prog: &Program, run: &ProgramRun) -> Vec<(String, f64)> {
    let mut out = vec![(Subject::Program.metric(Figure::Makespan), run.makespan)];
    let p = f64::from(prog.ranks);
    for (ph, name) in prog.phases.iter().enumerate() {
        let times = &run.phases[ph];
        out.push((
            Subject::Phase(name).metric(Figure::Mean),
            times.iter().sum::<f64>() / p,
        ));
        out.push((
            Subject::Phase(name).metric(Figure::Max),
            times.iter().fold(0.0, |a, &b| f64::max(a, b)),
        ));
    }
    for (k, c) in Category::ALL.map(Figure::from).into_iter().enumerate() {
        let spent = run.spent.iter().map(|s| s[k]);
        out.push((
            Subject::Ranks(c).metric(Figure::Mean),
            spent.clone().sum::<f64>() / p,
        ));
        out.push((
            Subject::Ranks(c).metric(Figure::Max),
            spent.fold(0.0, f64::max),
        ));
    }
    // (a program's messages do not depend on chance, so every replication has the same count)
    let messages = |f| Subject::Messages.metric(f);
    if prog.has_messages() && run.messages == 0 {
        out.push((messages(Figure::Count), 0.0));
    } else if prog.has_messages() {
        out.push((messages(Figure::Count), run.messages as f64));
        out.push((messages(Figure::Delay), run.message_delay));
        out.push((messages(Figure::P99), run.message_p99));
    }
    if prog.has_traffic() {
        let [offered, accepted] = run.traffic.shares(prog);
        out.push((messages(Figure::Offered), offered));
        out.push((messages(Figure::Accepted), accepted));
    }
    let links = &run.link_summary;
    if prog.crosses_links() && links.used > 0 {
        let [mean_use, max_use, mean_delay] =
            LINK_SUMMARIES.map(|(f, summary)| Subject::Links(f).metric(summary));
        out.push((mean_use, links.mean_utilisation()));
        out.push((max_use, links.utilisation_max));
        out.push((mean_delay, links.mean_delay()));
    }
    if prog.report_each {
        for r in 0..prog.ranks as usize {
            for (k, c) in Category::ALL.map(Figure::from).into_iter().enumerate() {
                out.push((Subject::Rank(r).metric(c), run.spent[r][k]));
            }
            out.push((Subject::Rank(r).metric(Figure::Finish), run.finish[r]));
        }
        for l in &run.links {
            out.push((
                Subject::Link(&l.name).metric(Figure::Utilisation),
                l.utilisation,
            ));
            out.push((
                Subject::Link(&l.name).metric(Figure::Messages),
                l.messages as f64,
            ));
            out.push((Subject::Link(&l.name).metric(Figure::Delay), l.delay));
            out.push((Subject::Link(&l.name).metric(Figure::P99), l.p99));
        }
    }
    out
}
