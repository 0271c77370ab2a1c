//! Messages that queue at shared links, in the prediction: a labelled mean-value approximation
//! in the manner of Kuntraruk's `T_comm` (a queue per link, fed by the program's own traffic).
//!
//! The contention-free evaluation ([`super::evaluation`]) gives every link its traffic: `n`
//! crossings of transmission times `s` over the run's makespan `T`. A link that more than one
//! rank sends across is taken as an M/G/1 queue with arrival rate `λ = n / T`, utilisation
//! `U = Σ s / T` and the crossings' own moments:
//!
//! - FCFS: each crossing first waits the Pollaczek-Khinchine mean `W = λ E[s²] / (2 (1 - U))`;
//! - fair sharing: a crossing is stretched as in M/G/1-PS, by `E[s] U / (1 - U)` on average.
//!
//! The program is evaluated again with these waits before each crossing, which lengthens it and
//! so lowers the utilisations: the makespan the waits give falls from without bound (a makespan
//! just above the busiest link's transmissions, `U` near 1) to the contention-free one (a very
//! long makespan), so exactly one makespan gives itself back. It is found from the
//! contention-free makespan `T0` in one step where the waits' share of the makespan falls as
//! their total `W` over all crossings does (`f(t) = T0 + (f(T0) - T0) W(t) / W(T0)`, exact when
//! the critical path keeps its crossings and every link's wait scales alike: one shared bus, a
//! symmetric torus), then by regula falsi where that step is not the fixed point. A link that
//! more messages cross than a critical path holds (a reduce's tree on a bus) keeps the makespan
//! above its transmissions, as the simulator's bus does.
//!
//! What it leaves out, and why it is an approximation: messages of a program do not arrive as
//! a Poisson stream but in rounds (all the ranks of a bulk-synchronous step at once, where
//! the last of `k` waits `k - 1` transmissions, and the mean `(k - 1) / 2`), and a rank that
//! waits sends less; the mean waits are added to the mean-value critical path (the makespan)
//! and to the stochastic critical path's durations where compute is random.

use rustc_hash::FxHashMap;

use super::evaluation::{Evaluation, LinkLoad, evaluate_with_waits, evaluate_with_waits_from};
use super::stochastic;
use crate::metrics::name::{Figure, Subject};
use crate::predict::Analysis;
use crate::program::{Program, Sharing};

/// The method, before its label.
pub const METHOD: &str = "mean-value critical path with M/G/1 waits at shared links";

/// The expected maxima at synchronisations with the same waits.
pub const MAXIMA_METHOD: &str =
    "expected maxima at synchronisations with M/G/1 waits at shared links";

/// The stochastic critical path with the same waits (where the expected maxima are too dear).
pub const STOCHASTIC_METHOD: &str =
    "stochastic critical path (Clark's maxima) with M/G/1 waits at shared links";

/// The sampled critical path ([`super::sampled`]) with the same waits.
pub const SAMPLED_METHOD: &str = "sampled critical path with M/G/1 waits at shared links";

/// Evaluations of the root search before it is given up (it takes 2 to 7 over `scenarios/` and
/// `validation/`).
const ITERATIONS: usize = 60;

/// A makespan `t` is the fixed point when the makespan its waits give is within this much of
/// `t`, relative.
const SETTLED: f64 = 1e-7;

/// Adds the queueing approximation's predictions of `prog` to `a`, when some link of the
/// contention-free evaluation `ev` is crossed by more than one rank.
pub fn predictions(prog: &Program, ev: &Evaluation, a: &mut Analysis) {
    if !ev.links.iter().any(|l| l.shared) || !ev.makespan.is_finite() || ev.makespan <= 0.0 {
        return;
    }
    match settle(prog, ev) {
        Ok((with_waits, graph, busiest, waits)) => {
            let mut label = vec![format!(
                "a link's crossings are taken as a Poisson stream into an M/G/1 queue at the traffic's utilisation (the busiest, {}, at {:.1}%), where a program's messages come in rounds",
                busiest.0,
                100.0 * busiest.1
            )];
            label.extend(super::evaluation::walked_samples(prog, ev));
            let (method, _) = crate::predict::approximation(METHOD, &label);
            a.add(
                Subject::Program.metric(Figure::Makespan),
                with_waits.makespan,
                &method,
                false,
            );
            // a message's delay: its contention-free delay plus the mean waits at its links
            // (Kleinrock's independence approximation, for messages that come as a stream)
            if with_waits.messages > 0 {
                a.add(
                    Subject::Messages.metric(Figure::Delay),
                    with_waits.message_delay,
                    &method,
                    false,
                );
            }
            // the stochastic methods again, unless nothing is random or the waits hardly
            // move the path (their own predictions without waits then stand for these)
            if with_waits.random.is_empty() || with_waits.makespan <= ev.makespan * (1.0 + 1e-3) {
                return;
            }
            let graph = graph.as_ref().map_err(String::as_str);
            // a makespan by `method`, labelled with the waits' approximation and `notes`
            let put = |a: &mut Analysis, value: f64, method: &str, notes: Vec<String>| {
                let mut all = label.to_vec();
                all.extend(notes);
                let (method, _) = crate::predict::approximation(method, &all);
                a.add(
                    Subject::Program.metric(Figure::Makespan),
                    value,
                    &method,
                    false,
                );
            };
            match graph.map_err(str::to_owned).and_then(stochastic::exact) {
                Ok(x) => put(a, x.makespan.mean, MAXIMA_METHOD, Vec::new()),
                // Clark's maxima (from the first iterations of a long loop, with the same
                // waits, where the whole graph is over their budget)
                Err(_) => {
                    match stochastic::clark_makespan(prog, graph, ev.activities, Some(&waits)) {
                        Ok(c) => put(a, c.makespan, STOCHASTIC_METHOD, c.notes),
                        Err(why) => a.refuse(STOCHASTIC_METHOD, why),
                    }
                }
            }
            match super::sampled::sampled_makespan(prog, graph, Some(&waits)) {
                Ok((s, notes)) => put(a, s.makespan.mean, SAMPLED_METHOD, notes),
                Err(why) => a.refuse(SAMPLED_METHOD, why),
            }
        }
        Err(why) => a.refuse(METHOD, why),
    }
}

/// The evaluation with the links' waits at their fixed point, its activity graph, and the
/// busiest shared link (name, utilisation).
#[allow(clippy::type_complexity)]
fn settle<'p>(
    prog: &'p Program,
    ev: &Evaluation,
) -> Result<
    (
        Evaluation,
        Result<super::graph::Graph<'p>, String>,
        (String, f64),
        FxHashMap<u64, f64>,
    ),
    String,
> {
    let shared: Vec<_> = ev.links.iter().filter(|l| l.shared).collect();
    let fair = prog.interconnect.sharing == Sharing::Fair;
    // a link's mean wait per crossing at makespan `t`, below its saturation (busy / t < 1)
    let wait = |l: &LinkLoad, t: f64| {
        let (u, n) = (l.busy / t, l.messages as f64);
        if fair {
            (l.busy / n) * u / (1.0 - u)
        } else {
            (n / t) * (l.busy_squared / n) / (2.0 * (1.0 - u))
        }
    };
    // the mean wait per crossing of each shared link at makespan `t`, or the link that cannot
    // carry its traffic in `t`
    let waits_at = |t: f64| -> Result<FxHashMap<u64, f64>, (String, f64)> {
        let mut w = FxHashMap::default();
        for l in &shared {
            let u = l.busy / t;
            if u >= 1.0 {
                return Err((l.name.clone(), u));
            }
            w.insert(l.id, wait(l, t));
        }
        Ok(w)
    };
    // the waits of all crossings together at makespan t
    let total_wait =
        |t: f64| -> f64 { shared.iter().map(|l| l.messages as f64 * wait(l, t)).sum() };
    let busiest = |t: f64| {
        shared.iter().map(|l| (l.name.clone(), l.busy / t)).fold(
            (String::new(), 0.0_f64),
            |m, x| if x.1 > m.1 { x } else { m },
        )
    };
    // the makespan the waits give falls as the makespan they are computed at grows: from
    // without bound just above the busiest link's transmissions (its utilisation near 1) to
    // the contention-free makespan far beyond; the fixed point lies between, found by
    // bisection
    let floor = shared.iter().map(|l| l.busy).fold(0.0_f64, f64::max);
    let waits_of = |t: f64| {
        waits_at(t)
            .map_err(|(name, u)| format!("link {name} would be busy {:.1}% of the time", 100.0 * u))
    };
    let at = |t: f64, record: bool| evaluate_with_waits(prog, waits_of(t)?, record);
    // g(t) = (the makespan the waits at t give) - t falls through zero once: regula falsi
    // with the Illinois rule on a bracket [lo, hi], g(lo) > 0 > g(hi); the evaluation at the
    // last t is kept
    let mut last = None;
    // (each step after the first walks as the one before was extended, when it was)
    let mut like = None;
    let mut g = |t: f64| -> Result<f64, String> {
        let at_t = match like {
            Some(cut) => evaluate_with_waits_from(prog, waits_of(t)?, cut)?,
            None => at(t, false)?.0,
        };
        like = at_t.extended.map(|(cut, _)| cut);
        let gt = at_t.makespan - t;
        last = Some(at_t);
        Ok(gt)
    };
    // the evaluation at the point found (walked again for its activity graph, when the
    // contention-free one had room for it: the waits' has as many activities)
    let record = ev.activities <= super::graph::limit();
    let found = |t: f64, last: Option<Evaluation>| {
        let (next, graph) = match (record, last) {
            (false, Some(last)) => (last, Err(super::graph::too_large(ev.activities))),
            _ => at(t, true)?,
        };
        let b = busiest(next.makespan);
        Ok((next, graph, b, waits_of(t)?))
    };
    // the contention-free makespan, when the links can carry the traffic in it, brackets the
    // point with what the waits at it give: g(T0) >= 0 (waits only add), and the makespan they
    // give at any later t is at most f(T0), so g(f(T0)) <= 0; otherwise start just above the
    // busiest link's transmissions
    let mut lo = ev.makespan.max(floor * (1.0 + 1e-6));
    let mut g_lo = g(lo)?;
    if g_lo <= SETTLED * lo {
        return found(lo, last.take());
    }
    // a first step where the waits' share of the makespan falls as their total does: the
    // makespan f(t) = T0 + (f(lo) - T0) W(t) / W(lo), with T0 the contention-free makespan
    // (no waits) and W the waits of all crossings together, meets t between lo and f(lo)
    // (exactly where the same crossings stay on the critical path and every link's wait
    // scales alike, as on a symmetric machine)
    let (t0, excess, w_lo) = (ev.makespan, lo + g_lo - ev.makespan, total_wait(lo));
    let modelled = |t: f64| t0 + excess * total_wait(t) / w_lo - t;
    let (mut a, mut b) = (lo, lo + g_lo);
    while b - a > 1e-13 * b {
        let m = 0.5 * (a + b);
        if m <= a || m >= b {
            break;
        }
        if modelled(m) > 0.0 { a = m } else { b = m }
    }
    let step = 0.5 * (a + b);
    let g_step = g(step)?;
    if g_step.abs() <= SETTLED * step {
        return found(step, last.take());
    }
    let (mut hi, mut g_hi) = (step, g_step);
    if g_step > 0.0 {
        (lo, g_lo) = (step, g_step);
        hi = lo + g_lo;
        g_hi = g(hi)?;
    }
    while g_hi > 0.0 {
        (lo, g_lo) = (hi, g_hi);
        hi *= 2.0;
        g_hi = g(hi)?;
    }
    let mut t = hi;
    let mut side = 0;
    for _ in 0..ITERATIONS {
        t = if g_lo.is_finite() {
            (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        } else {
            0.5 * (lo + hi)
        };
        let gt = g(t)?;
        if gt.abs() <= SETTLED * t || hi - lo <= 1e-9 * hi {
            return found(t, last.take());
        }
        if gt > 0.0 {
            (lo, g_lo) = (t, gt);
            if side == 1 {
                g_hi *= 0.5;
            }
            side = 1;
        } else {
            (hi, g_hi) = (t, gt);
            if side == -1 {
                g_lo *= 0.5;
            }
            side = -1;
        }
    }
    let (name, u) = busiest(t);
    Err(format!(
        "the waits and the makespan did not settle in {ITERATIONS} rounds (link {name} at {:.1}% of the last makespan tried)",
        100.0 * u
    ))
}
