//! Rounds of messages on shared links, in the prediction: the mean-value evaluation with every
//! link serving the messages that cross it as the simulator's links serve them.
//!
//! The evaluation ([`super::evaluation`]) knows when each message's header reaches each link on
//! its own timeline. A link is served here as the machine serves it:
//!
//! - FCFS: one message after another in the order they reach it (Lindley's recursion), so of
//!   `k` equal messages released together the `j`-th waits `j - 1` transmissions, the order
//!   statistics of a batch arriving at once;
//! - fair sharing: processor sharing, so `k` equal messages released together all finish
//!   together after `k` transmissions, `L + k m / B` for the round on a bus.
//!
//! FCFS links are served in one walk taken in time order
//! ([`super::evaluation::evaluate_fcfs_in_order`]): each crossing waits for those that reached
//! its link before it as it comes, which holds wherever the walk's order of time is the
//! links' (a route's first hop: a bus, or the one link of each message). Elsewhere (fair
//! sharing, whose crossings' times depend on later arrivals, or a later hop reached out of the
//! walk's order), the time each crossing spends beyond its own transmission (an FCFS wait
//! before the link, a fair crossing's longer transmission) is put back into the evaluation,
//! which moves the later messages, and the two are iterated until the timeline gives back the
//! service it was computed with. That walk's order of the crossings does not depend on the
//! durations, so a crossing is the same from one iteration to the next; each iteration settles
//! at least the next crossing in time, and rounds that stay aligned settle at once (a fair
//! round of `k` equal messages takes `k` transmissions wherever it falls), so aligned rounds
//! through a `repeat` take three walks, where FCFS rounds served in turn, which the service
//! shifts apart, would take about one walk a round.
//!
//! At the fixed point the evaluation is the execution of the program on links that serve as
//! the simulator's do: **exact** when every duration is deterministic, on fair-shared links (or
//! FCFS links where no two messages reach a link at the same instant: the simulator serves such
//! ties in the order of its events, the evaluation in rank order), and no disk unit or
//! processor is shared. Where durations are random the service is that of the mean timeline (a
//! labelled approximation: random compute shifts the rounds apart, so FCFS messages wait less
//! and ranks wait more), and the expected maxima at synchronisations ([`super::stochastic`])
//! are composed over the same timeline's activity graph, with each crossing's service a fixed
//! part of its message's delay.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::evaluation::{Crossing, Evaluation, FcfsLine, evaluate_fcfs_in_order, evaluate_served};
use super::stochastic;
use crate::analytic::cost::{allowance, budget_text, scaled};
use crate::metrics::name::{Figure, Subject};
use crate::predict::{Analysis, approximation};
use crate::program::{Category, Program, Sharing};

/// The method, before its label.
pub const METHOD: &str = "mean-value critical path with shared links serving each round of messages (FCFS in turn, fair side by side)";

/// The expected maxima at synchronisations over the same timeline.
pub const MAXIMA_METHOD: &str =
    "expected maxima at synchronisations with shared links serving each round of messages";

/// The stochastic critical path over the same timeline (where the expected maxima are too
/// dear).
pub const STOCHASTIC_METHOD: &str =
    "stochastic critical path (Clark's maxima) with shared links serving each round of messages";

/// Crossings walked, summed over the walks, before the method gives up at budget factor 1
/// (about 0.2 s of walking on one core; the crossings of one walk are kept, 40 bytes each).
/// Iterated, the walks settle one round of messages after another where the service shifts
/// the rounds apart, so a long program can need as many walks as it has rounds.
const WORK: u64 = 2_000_000;

/// Walks of aligned rounds on fair-shared links: the contention-free one, the one with their
/// service, and the one that confirms it (FCFS links whose crossings come in order take one).
const FEWEST_WALKS: u64 = 3;

/// Adds the predictions of `prog` with its links serving their messages, when messages meet on
/// a link of the contention-free evaluation `ev` (otherwise that evaluation is already this
/// one).
pub fn predictions(prog: &Program, ev: &Evaluation, a: &mut Analysis) {
    if ev.sharing.links == 0 && !ev.sharing.unchecked {
        return;
    }
    let per_walk: u64 = ev.links.iter().map(|l| l.messages).sum();
    let (served, ties) = match settle(prog, per_walk) {
        Ok(x) => x,
        Err(why) => return a.refuse(METHOD, why),
    };
    let (ev, graph) = served;
    let mut breaks = ev.sharing.describe_beyond_links(prog);
    if let Some(tie) = ties {
        breaks.push(format!(
            "{} messages reach link {} at the same instant, {:.6e} (the first such tie): served here in rank order, by the simulator in the order of its events",
            tie.count, tie.link, tie.at
        ));
    }
    if !ev.random.is_empty() {
        breaks.push(format!(
            "{}: the links serve the rounds of the mean timeline, which random durations shift apart (and E[max] >= max E, Jensen)",
            ev.random.join(", ")
        ));
    }
    let (method, exact) = approximation(METHOD, &breaks);
    times(prog, &ev, a, &method, exact);
    if ev.random.is_empty() {
        return;
    }
    let g = match graph {
        Ok(g) => g,
        Err(why) => return a.refuse(MAXIMA_METHOD, why),
    };
    let mut breaks = ev.sharing.describe_beyond_links(prog);
    breaks.push(
        "each message's service at the links is that of the mean timeline, a fixed part of its delay (random durations shift the rounds apart)"
            .to_owned(),
    );
    breaks.extend(super::evaluation::walked_samples(prog, &ev));
    let makespan = Subject::Program.metric(Figure::Makespan);
    match stochastic::exact(&g) {
        Ok(x) => {
            let (method, _) = approximation(MAXIMA_METHOD, &breaks);
            a.add(makespan, x.makespan.mean, &method, false);
        }
        Err(why) => {
            a.refuse(MAXIMA_METHOD, why);
            match stochastic::clark(&g, &[]) {
                Ok(x) => {
                    breaks.push(stochastic::CLARK_NOTE.to_owned());
                    let (method, _) = approximation(STOCHASTIC_METHOD, &breaks);
                    a.add(makespan, x.makespan.mean, &method, false);
                }
                Err(why) => a.refuse(STOCHASTIC_METHOD, why),
            }
        }
    }
}

/// The times of the served evaluation `ev`: the makespan, each phase's mean and longest time,
/// the ranks' time in each category, and the messages' mean delay.
fn times(prog: &Program, ev: &Evaluation, a: &mut Analysis, method: &str, exact: bool) {
    let p = f64::from(prog.ranks);
    let mean_max = |v: &mut dyn Iterator<Item = f64>| {
        v.fold((0.0, 0.0_f64), |(sum, most), x| (sum + x, most.max(x)))
    };
    a.add(
        Subject::Program.metric(Figure::Makespan),
        ev.makespan,
        method,
        exact,
    );
    for (ph, name) in prog.phases.iter().enumerate() {
        let (sum, most) = mean_max(&mut ev.phases[ph].iter().copied());
        a.add(
            Subject::Phase(name).metric(Figure::Mean),
            sum / p,
            method,
            exact,
        );
        a.add(
            Subject::Phase(name).metric(Figure::Max),
            most,
            method,
            exact,
        );
    }
    for (k, c) in Category::ALL.map(Figure::from).into_iter().enumerate() {
        let (sum, most) = mean_max(&mut ev.spent.iter().map(|s| s[k]));
        a.add(
            Subject::Ranks(c).metric(Figure::Mean),
            sum / p,
            method,
            exact,
        );
        a.add(Subject::Ranks(c).metric(Figure::Max), most, method, exact);
    }
    if ev.messages > 0 {
        a.add(
            Subject::Messages.metric(Figure::Delay),
            ev.message_delay,
            method,
            exact,
        );
    }
}

/// Messages that reached an FCFS link at one instant, where one of them must wait.
#[derive(Clone, Debug, PartialEq)]
struct Tie {
    link: String,
    count: usize,
    at: f64,
}

/// The evaluation (with its activity graph) whose links serve the crossings it times, and the
/// first FCFS tie on it, if any; `per_walk` crossings a walk. FCFS links are served in one walk
/// in time order where their crossings come in order, and walk and service iterated otherwise
/// (see the module documentation).
#[allow(clippy::type_complexity)]
fn settle(
    prog: &Program,
    per_walk: u64,
) -> Result<
    (
        (Evaluation, Result<super::graph::Graph<'_>, String>),
        Option<Tie>,
    ),
    String,
> {
    let fcfs = prog.interconnect.sharing == Sharing::Fcfs;
    let walks = if fcfs { 1 } else { FEWEST_WALKS };
    estimate(per_walk, walks, "")?;
    if fcfs {
        if let Some(served) = evaluate_fcfs_in_order(prog)? {
            let tie = served.tie.map(|(link, count, at)| Tie {
                link: prog.interconnect.topology.link_name(link),
                count,
                at,
            });
            return Ok(((served.evaluation, served.graph), tie));
        }
        estimate(
            per_walk,
            FEWEST_WALKS,
            " (a later link of a route is reached out of the walk's order of time, so walk and service are iterated)",
        )?;
    }
    let mut extra: Vec<f64> = Vec::new();
    let mut work = 0_u64;
    loop {
        let (ev, _) = evaluate_served(prog, extra.clone(), false)?;
        work += ev.crossings.len() as u64;
        let (next, tie) = serve(prog, &ev.crossings);
        if next == extra {
            // once more with the activity graph and the resources' uses
            let served = evaluate_served(prog, next, true)?;
            return Ok((served, tie));
        }
        if (work + ev.crossings.len() as u64) as f64 > scaled(WORK as f64) {
            return Err(format!(
                "too costly: the timeline and the links' service had not settled after {work} crossings walked (the budget is {}); {}",
                budget_text(scaled(WORK as f64)),
                crate::analytic::cost::raise()
            ));
        }
        extra = next;
    }
}

/// Refuses `walks` walks of `per_walk` crossings beyond the budget, saying why so many
/// (`why`, after the count of walks).
fn estimate(per_walk: u64, walks: u64, why: &str) -> Result<(), String> {
    let work = (per_walk * walks) as f64;
    if work <= scaled(WORK as f64) {
        return Ok(());
    }
    Err(format!(
        "too costly: {per_walk} link crossings a walk, and at least {walks} walk{}{why}: an estimated {work:.1e} crossings walked, over the budget of {}; {}",
        if walks == 1 { "" } else { "s" },
        budget_text(scaled(WORK as f64)),
        allowance(work, WORK as f64)
    ))
}

/// Each crossing's time beyond its transmission when every link serves the `crossings` as they
/// come (see the module documentation), by crossing; and the first FCFS tie.
fn serve(prog: &Program, crossings: &[Crossing]) -> (Vec<f64>, Option<Tie>) {
    let mut by_link: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for (k, c) in crossings.iter().enumerate() {
        by_link.entry(c.link).or_default().push(k as u32);
    }
    let mut extra = vec![0.0; crossings.len()];
    let mut first_tie: Option<Tie> = None;
    let mut links: Vec<_> = by_link.into_iter().collect();
    links.sort_unstable_by_key(|(l, _)| *l);
    for (link, mut ks) in links {
        // in the order they reach the link; at one instant, by sender, then as walked
        ks.sort_by(|&a, &b| {
            let (x, y) = (&crossings[a as usize], &crossings[b as usize]);
            x.enter
                .total_cmp(&y.enter)
                .then(x.sender.cmp(&y.sender))
                .then(a.cmp(&b))
        });
        let tie = match prog.interconnect.sharing {
            Sharing::Fcfs => fcfs(crossings, &ks, &mut extra),
            Sharing::Fair => {
                shared(crossings, &ks, &mut extra);
                None
            }
        };
        if let Some((count, at)) = tie
            && first_tie.as_ref().is_none_or(|t| at < t.at)
        {
            first_tie = Some(Tie {
                link: prog.interconnect.topology.link_name(link),
                count,
                at,
            });
        }
    }
    (extra, first_tie)
}

/// One FCFS link's crossings `ks`, in order of arrival (by time, then sender): each waits
/// until the previous one is transmitted, in whole ticks as the simulator transmits it
/// ([`FcfsLine`]). Returns the first instant at which several arrive together and one of them
/// must wait (how many, when).
fn fcfs(crossings: &[Crossing], ks: &[u32], extra: &mut [f64]) -> Option<(usize, f64)> {
    let mut line = FcfsLine::default();
    for &k in ks {
        let c = &crossings[k as usize];
        extra[k as usize] = line
            .arrive(c.enter, c.sender, c.work)
            .expect("the crossings come sorted by time, then sender");
    }
    line.tie()
}

/// One fair-shared link's crossings `ks`, in order of arrival: processor sharing by virtual
/// time (it advances at `1 / n` with `n` crossings present; a crossing arriving at virtual time
/// `v` with transmission `w`, in whole ticks as the simulator serves it, leaves when it reaches
/// `v + w`).
fn shared(crossings: &[Crossing], ks: &[u32], extra: &mut [f64]) {
    // (virtual times are not negative, so their bits order as the numbers do)
    let mut present: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let (mut virtual_time, mut now) = (0.0_f64, f64::NEG_INFINITY);
    let mut leave = |present: &mut BinaryHeap<Reverse<(u64, u32)>>,
                     virtual_time: &mut f64,
                     now: &mut f64,
                     until: f64| {
        while let Some(&Reverse((tag, k))) = present.peek() {
            let tag = f64::from_bits(tag);
            let at = *now + (tag - *virtual_time) * present.len() as f64;
            if at > until {
                break;
            }
            present.pop();
            let c = &crossings[k as usize];
            extra[k as usize] = (at - c.enter - c.alone).max(0.0);
            (*virtual_time, *now) = (tag, at);
        }
    };
    for &k in ks {
        let c = &crossings[k as usize];
        leave(&mut present, &mut virtual_time, &mut now, c.enter);
        if !present.is_empty() {
            virtual_time += (c.enter - now) / present.len() as f64;
        }
        now = c.enter;
        present.push(Reverse(((virtual_time + c.work).to_bits(), k)));
    }
    leave(&mut present, &mut virtual_time, &mut now, f64::INFINITY);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(enters: &[f64], work: f64) -> Vec<Crossing> {
        enters
            .iter()
            .enumerate()
            .map(|(r, &enter)| Crossing {
                link: 0,
                sender: r as u32,
                enter,
                alone: work,
                work,
            })
            .collect()
    }

    fn all(c: &[Crossing]) -> Vec<u32> {
        (0..c.len() as u32).collect()
    }

    #[test]
    fn a_fair_round_of_equal_messages_ends_together_after_all_their_transmissions() {
        let c = batch(&[1.0; 4], 0.5);
        let mut extra = vec![0.0; 4];
        shared(&c, &all(&c), &mut extra);
        // each leaves at 1 + 4 x 0.5: 1.5 beyond its own 0.5
        assert_eq!(extra, vec![1.5; 4]);
    }

    #[test]
    fn a_fair_link_shares_itself_with_a_later_arrival() {
        // 2 of work at 0, 1 of work at 1: the first alone until 1 (1 left), then both at
        // half rate until 3, when both are done
        let c = vec![
            Crossing {
                link: 0,
                sender: 0,
                enter: 0.0,
                alone: 2.0,
                work: 2.0,
            },
            Crossing {
                link: 0,
                sender: 1,
                enter: 1.0,
                alone: 1.0,
                work: 1.0,
            },
        ];
        let mut extra = vec![0.0; 2];
        shared(&c, &all(&c), &mut extra);
        assert_eq!(extra, vec![1.0, 1.0]);
    }

    #[test]
    fn an_fcfs_round_waits_one_transmission_more_for_each_message_ahead() {
        let c = batch(&[2.0, 2.0, 2.0, 9.0], 1.0);
        let mut extra = vec![0.0; 4];
        let tie = fcfs(&c, &all(&c), &mut extra);
        assert_eq!(extra, vec![0.0, 1.0, 2.0, 0.0]);
        assert_eq!(tie, Some((3, 2.0)));
        // apart, nobody waits and nothing ties
        let c = batch(&[0.0, 1.0, 2.0], 1.0);
        let tie = fcfs(&c, &all(&c), &mut extra);
        assert_eq!((&extra[..3], tie), (&[0.0; 3][..], None));
    }
}
