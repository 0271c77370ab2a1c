//! Predictions of every metric of a program from its contention-free mean-value evaluation
//! ([`super::evaluation`]), each labelled exact or with the assumptions that break.
//!
//! - **Counts** (`messages.count`, `link.<name>.messages`) are exact always: which messages a
//!   program sends does not depend on chance or on timing.
//! - **Times** (`program.makespan`, `phase.*`, `ranks.*`, `rank.<r>.*`) and utilisations (busy
//!   time over the makespan) are exact when every duration and size executed is deterministic
//!   and nothing met at a link, a disk unit or a processor on the evaluation's own timeline.
//!   With random durations the evaluation is a mean-value critical path, below the mean for a
//!   maximum (`E[max] >= max E`, Jensen); when, moreover, no resource can ever be shared (each
//!   link carries the blocking messages of one sender, each disk unit serves one rank, no node
//!   has more ranks than cores) and sizes are deterministic, each finish time is a max-plus,
//!   monotone and convex function of the durations, so the evaluation's makespan and finish
//!   times are lower bounds on their means, reported as such. A time a rank settled before its
//!   times depended on chance (its own draws, or a message or barrier that did) and before
//!   anything met is exact all the same (a first phase before a random loop, say). A rank's
//!   communication (its own messages' startups and deliveries; waiting for a partner is
//!   apart) takes the delays' label: exact whenever every delay is.
//! - **Delays** (`messages.delay`, `links.delay.mean`, `link.<name>.delay`) are transmission
//!   times, exact in expectation when no message can meet another on a link and every size is
//!   deterministic (a random size is rounded to whole bytes as it is drawn, and the mean of the
//!   rounding is not the law's mean: with random sizes the delays are approximations, close for
//!   sizes of many bytes); their p99 is exact under the same conditions, and the quantile of
//!   the mixture of `a + b X` over the messages' routes when sizes are random (an
//!   approximation: no queueing, no rounding to bytes).

use super::evaluation::{self, Evaluation};
use crate::metrics::name::{Figure, Subject};
use crate::predict::{Analysis, Prediction, Refusal};
use crate::program::{Category, Program};

/// The method's name, before any label.
const METHOD: &str = "contention-free mean-value critical path";

/// How a p99 is computed.
const P99_NOTE: &str =
    " (the evaluation's delays, counted as the simulator's histogram counts them)";

/// Adds the evaluation's predictions to `a` (or its refusal, when it could not be computed).
pub fn predictions(prog: &Program, ev: &Result<Evaluation, String>, a: &mut Analysis) {
    match ev {
        Ok(ev) => add(prog, ev, a),
        Err(why) => a.refusals.push(Refusal {
            method: METHOD.to_owned(),
            reason: why.clone(),
        }),
    }
}

/// The labels of one kind of metric: the assumptions that break (empty: exact).
struct Labels {
    times: Vec<String>,
    /// Before this time nothing has met at a resource: a time a rank settled by then, before
    /// its times depended on chance, is exact whatever `times` says.
    unshared_until: f64,
    delays: Vec<String>,
    percentiles: Vec<String>,
    lower_bound: bool,
}

fn labels(prog: &Program, ev: &Evaluation) -> Labels {
    let shared = ev.sharing.describe(prog);
    let random_sizes = ev.random.iter().any(|w| w.starts_with("message sizes"));
    let mut times = shared.clone();
    if !ev.random.is_empty() {
        times.push(format!(
            "{}: the evaluation uses means, and E[max] >= max E (Jensen)",
            ev.random.join(", ")
        ));
    }
    let mut delays = shared;
    if !ev.random.is_empty() && !ev.unshareable {
        delays.push(
            "random durations may make messages meet on a link where the mean timeline has none"
                .to_owned(),
        );
    }
    delays.extend(evaluation::walked_samples(prog, ev));
    let mut percentiles = delays.clone();
    if random_sizes {
        // the run rounds each drawn size to whole bytes, and E[round X] is not E[X] (a size of
        // mean 1 byte, exponential: 0.96; of mean 1e-100: 0)
        delays.push(
            "message sizes are random and each is rounded to whole bytes: the mean delay uses the size's mean, not that of its rounding"
                .to_owned(),
        );
        percentiles.push(
            "message sizes are random: the quantile of the contention-free delays a + b X over the messages' routes, X from the size's law (not rounded to bytes, no histogram)"
                .to_owned(),
        );
    }
    Labels {
        unshared_until: ev.sharing.from,
        lower_bound: !ev.random.is_empty() && !random_sizes && ev.unshareable && ev.sharing.none(),
        times,
        delays,
        percentiles,
    }
}

fn add(prog: &Program, ev: &Evaluation, a: &mut Analysis) {
    let l = labels(prog, ev);
    let bound_note = if l.lower_bound {
        "; a lower bound on the mean (no resource can be shared: a max-plus program, Jensen)"
    } else {
        ""
    };
    let put = |a: &mut Analysis, metric: String, value: f64, breaks: &[String], note: &str| {
        put_settled(a, metric, value, breaks, note, false);
    };
    // a time is settled (exact whatever breaks later) when every rank it depends on reached
    // it before anything shared or random: `ends[r]` is when rank r did
    let settled = |ends: &[f64]| {
        ends.iter()
            .zip(&ev.tainted)
            .all(|(&t, &chance)| t <= chance && t <= l.unshared_until)
    };
    let time = |a: &mut Analysis, metric: String, value: f64, settled: bool, note: &str| {
        put_settled(a, metric, value, &l.times, note, settled);
    };
    let all = settled(&ev.finish);
    let p = f64::from(prog.ranks);
    time(
        a,
        Subject::Program.metric(Figure::Makespan),
        ev.makespan,
        all,
        bound_note,
    );
    for (ph, name) in prog.phases.iter().enumerate() {
        let times = &ev.phases[ph];
        let mean = times.iter().sum::<f64>() / p;
        let most = times.iter().copied().fold(0.0, f64::max);
        let at = settled(&ev.phase_ends[ph]);
        time(a, Subject::Phase(name).metric(Figure::Mean), mean, at, "");
        time(a, Subject::Phase(name).metric(Figure::Max), most, at, "");
    }
    for (k, c) in Category::ALL.map(Figure::from).into_iter().enumerate() {
        let spent = ev.spent.iter().map(|s| s[k]);
        let mean = spent.clone().sum::<f64>() / p;
        let never = ev.entered.iter().all(|e| !e[k]);
        // a rank's communication is the sum of its own messages' startups and deliveries (the
        // waiting for a partner is apart): exact whenever every delay is
        let breaks = if k == Category::Communication as usize {
            &l.delays
        } else {
            &l.times
        };
        for (metric, value) in [
            (Subject::Ranks(c).metric(Figure::Mean), mean),
            (
                Subject::Ranks(c).metric(Figure::Max),
                spent.fold(0.0, f64::max),
            ),
        ] {
            put_settled(a, metric, value, breaks, untouched(never), all || never);
        }
    }
    if prog.has_messages() {
        put(
            a,
            Subject::Messages.metric(Figure::Count),
            ev.messages as f64,
            &[],
            " (a count)",
        );
        if ev.messages > 0 {
            put(
                a,
                Subject::Messages.metric(Figure::Delay),
                ev.message_delay,
                &l.delays,
                "",
            );
            put(
                a,
                Subject::Messages.metric(Figure::P99),
                ev.message_p99,
                &l.percentiles,
                P99_NOTE,
            );
        }
    }
    let crossings: u64 = ev.links.iter().map(|k| k.messages).sum();
    if prog.crosses_links() && crossings > 0 {
        let used = ev.links.len() as f64;
        let utilisation = |busy: f64| busy / ev.makespan;
        let mean = ev.links.iter().map(|k| utilisation(k.busy)).sum::<f64>() / used;
        let most = ev
            .links
            .iter()
            .map(|k| utilisation(k.busy))
            .fold(0.0, f64::max);
        time(
            a,
            Subject::Links(Figure::Utilisation).metric(Figure::Mean),
            mean,
            all,
            "",
        );
        time(
            a,
            Subject::Links(Figure::Utilisation).metric(Figure::Max),
            most,
            all,
            "",
        );
        let busy: f64 = ev.links.iter().map(|k| k.busy).sum();
        put(
            a,
            Subject::Links(Figure::Delay).metric(Figure::Mean),
            busy / crossings as f64,
            &l.delays,
            "",
        );
    }
    if prog.report_each {
        for (r, spent) in ev.spent.iter().enumerate() {
            let mine = ev.finish[r] <= ev.tainted[r] && ev.finish[r] <= l.unshared_until;
            for (k, c) in Category::ALL.map(Figure::from).into_iter().enumerate() {
                let never = !ev.entered[r][k];
                let metric = Subject::Rank(r).metric(c);
                let breaks = if k == Category::Communication as usize {
                    &l.delays
                } else {
                    &l.times
                };
                put_settled(a, metric, spent[k], breaks, untouched(never), mine || never);
            }
            time(
                a,
                Subject::Rank(r).metric(Figure::Finish),
                ev.finish[r],
                mine,
                bound_note,
            );
        }
        for k in &ev.links {
            let name = &k.name;
            let utilisation = k.busy / ev.makespan;
            time(
                a,
                Subject::Link(name).metric(Figure::Utilisation),
                utilisation,
                all,
                "",
            );
            put(
                a,
                Subject::Link(name).metric(Figure::Messages),
                k.messages as f64,
                &[],
                " (a count)",
            );
            put(
                a,
                Subject::Link(name).metric(Figure::Delay),
                k.busy / k.messages as f64,
                &l.delays,
                "",
            );
            if let Some(p99) = k.p99 {
                put(
                    a,
                    Subject::Link(name).metric(Figure::P99),
                    p99,
                    &l.percentiles,
                    P99_NOTE,
                );
            }
        }
    }
}

/// The note of a rank category no operation entered: zero whatever happens.
fn untouched(never: bool) -> &'static str {
    if never {
        " (no operation of this category: zero)"
    } else {
        ""
    }
}

/// Adds a prediction that is exact when nothing `breaks`, or when it was `settled` before
/// anything did.
fn put_settled(
    a: &mut Analysis,
    metric: String,
    value: f64,
    breaks: &[String],
    note: &str,
    settled: bool,
) {
    if !value.is_finite() {
        return;
    }
    let (method, exact) = if breaks.is_empty() {
        (format!("{METHOD}{note}"), true)
    } else if settled {
        let why = if note.is_empty() {
            " (settled before anything random or shared)"
        } else {
            ""
        };
        (format!("{METHOD}{note}{why}"), true)
    } else {
        (
            format!("{METHOD}{note}; approximation: {}", breaks.join("; ")),
            false,
        )
    };
    a.predictions.push(Prediction {
        metric,
        value,
        method,
        exact,
        measured: None,
        recommended: false,
    });
}
