//! The named metrics of a program run (see [`super::network`] for the queueing networks'):
//!
//! - `program.makespan`: when the last rank finished;
//! - `phase.<name>.mean`, `phase.<name>.max`: time inside a named phase, mean and most over the
//!   ranks;
//! - `ranks.<category>.mean`, `ranks.<category>.max` for `compute`, `communication`, `waiting`
//!   and `io` (see [`Category`]);
//! - `messages.count`, `messages.delay` (mean, injection to delivery), `messages.p99`, when the
//!   program has more than one rank and sends messages;
//! - `links.utilisation.mean`, `links.utilisation.max` (over the links used),
//!   `links.delay.mean` (arrival at a link to the end of the transmission, over every crossing),
//!   when its ranks are on more than one node.
//!
//! A replication in which these metrics have no value (every message suppressed by `when`, say)
//! stops the run with an error naming them, rather than reporting them empty.
//! - with `report_each` (default for `P <= 16`): `rank.<r>.<category>` and `rank.<r>.finish`,
//!   and for every link used `link.<name>.utilisation`, `.messages`, `.delay`, `.p99`.

use crate::engine::program::ProgramRun;
use crate::program::{Category, Program};

/// The patterns of the per-link metrics a run reports, one set per link a message crosses
/// (`link.<name>.utilisation`, ...; the names depend on the links the run uses): none when the
/// program reports no rank and link individually or crosses no link.
pub fn per_link(prog: &Program) -> Vec<String> {
    if !(prog.report_each && prog.crosses_links()) {
        return Vec::new();
    }
    ["utilisation", "messages", "delay", "p99"]
        .map(|m| format!("link.<name>.{m}"))
        .to_vec()
}

/// The metric names known before running: all of them but the per-link ones, which depend on
/// the links the run uses ([`per_link`]).
pub fn names(prog: &Program) -> Vec<String> {
    let mut out = vec!["program.makespan".to_owned()];
    for ph in &prog.phases {
        out.push(format!("phase.{ph}.mean"));
        out.push(format!("phase.{ph}.max"));
    }
    for c in Category::ALL.map(Category::name) {
        out.push(format!("ranks.{c}.mean"));
        out.push(format!("ranks.{c}.max"));
    }
    if prog.has_messages() {
        for m in ["messages.count", "messages.delay", "messages.p99"] {
            out.push(m.to_owned());
        }
    }
    if prog.crosses_links() {
        for m in [
            "links.utilisation.mean",
            "links.utilisation.max",
            "links.delay.mean",
        ] {
            out.push(m.to_owned());
        }
    }
    if prog.report_each {
        for r in 0..prog.ranks {
            for c in Category::ALL.map(Category::name) {
                out.push(format!("rank.{r}.{c}"));
            }
            out.push(format!("rank.{r}.finish"));
        }
    }
    out
}

/// The metrics of one run, in a fixed order: [`names`], then the links in link order.
pub fn measure(prog: &Program, run: &ProgramRun) -> Vec<(String, f64)> {
    let mut out = vec![("program.makespan".to_owned(), run.makespan)];
    let p = f64::from(prog.ranks);
    for (ph, name) in prog.phases.iter().enumerate() {
        let times = &run.phases[ph];
        out.push((format!("phase.{name}.mean"), times.iter().sum::<f64>() / p));
        out.push((
            format!("phase.{name}.max"),
            times.iter().fold(0.0, |a, &b| f64::max(a, b)),
        ));
    }
    for (k, c) in Category::ALL.map(Category::name).iter().enumerate() {
        let spent = run.spent.iter().map(|s| s[k]);
        out.push((format!("ranks.{c}.mean"), spent.clone().sum::<f64>() / p));
        out.push((format!("ranks.{c}.max"), spent.fold(0.0, f64::max)));
    }
    // (a program's messages do not depend on chance, so every replication has the same count)
    if prog.has_messages() && run.messages == 0 {
        out.push(("messages.count".to_owned(), 0.0));
    } else if prog.has_messages() {
        out.push(("messages.count".to_owned(), run.messages as f64));
        out.push(("messages.delay".to_owned(), run.message_delay));
        out.push(("messages.p99".to_owned(), run.message_p99));
    }
    if prog.crosses_links() && !run.links.is_empty() {
        let used = run.links.len() as f64;
        let crossings: u64 = run.links.iter().map(|l| l.messages).sum();
        out.push((
            "links.utilisation.mean".to_owned(),
            run.links.iter().map(|l| l.utilisation).sum::<f64>() / used,
        ));
        out.push((
            "links.utilisation.max".to_owned(),
            run.links.iter().map(|l| l.utilisation).fold(0.0, f64::max),
        ));
        out.push((
            "links.delay.mean".to_owned(),
            run.links
                .iter()
                .map(|l| l.delay * l.messages as f64)
                .sum::<f64>()
                / crossings as f64,
        ));
    }
    if prog.report_each {
        for r in 0..prog.ranks as usize {
            for (k, c) in Category::ALL.map(Category::name).iter().enumerate() {
                out.push((format!("rank.{r}.{c}"), run.spent[r][k]));
            }
            out.push((format!("rank.{r}.finish"), run.finish[r]));
        }
        for l in &run.links {
            out.push((format!("link.{}.utilisation", l.name), l.utilisation));
            out.push((format!("link.{}.messages", l.name), l.messages as f64));
            out.push((format!("link.{}.delay", l.name), l.delay));
            out.push((format!("link.{}.p99", l.name), l.p99));
        }
    }
    out
}
