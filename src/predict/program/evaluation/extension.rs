//! The mean-value walk of a long loop from its first iterations. A program whose outermost loop
//! repeats the same operations ([`Program::outer_loop`]) is, walked at mean values, a max-plus
//! system: each iteration's clocks are the latest of the previous ones plus fixed durations.
//! Once every rank's clock grows by the same increment over an iteration, and again over the
//! next ones, the walk is periodic: each later iteration adds the same times, counts and
//! delays as the last. So a walk of more than [`LONG_WALK`] operations is taken over the loop's
//! first iterations, cut to `from` and `to` iterations for the pairs of [`plan`]: (1, 2); (2, 3),
//! for a first iteration unlike the rest (the ranks enter it apart, or as the program's start
//! leaves them); then (k, 2k) for k = 2, 4, ... while `2k` is at most half the count. When every
//! rank's increment is the same over iterations `from` to `to` (to [`PERIODIC`] of its clock),
//! every sum and count of the longer walk is extended by what its last `to - from` iterations
//! added, once per `to - from` left out. Otherwise the whole loop is walked.
//!
//! The extension is the walk of every iteration, up to the rounding of the sums; the timelines
//! checked for sharing are the first `to` iterations', the same in each later period, so the
//! cuts count their activities without recording them, and keep their resource uses only when
//! they are some pair's `to`. A walk like one already extended (the M/G/1 waits' fixed point
//! walks the program once per makespan it tries, each time with slightly other waits) may start
//! at the pair that ended that walk, its two cuts walked side by side, where a walk unlike the
//! hint simply goes on with the pairs after it. Walks whose
//! iterations differ by draws (messages to random ranks, routes not minimal) and those whose
//! crossings are served one by one ([`LinkService::Served`], [`LinkService::InOrder`]) are walked whole, and so is a walk
//! asked for its activity graph when the whole graph fits ([`graph::limit`]).

use rustc_hash::FxHashMap;

use super::super::delays::grown;
use super::{Evaluation, Keep, LinkAcc, LinkService, Trips, Walker, graph, walked_routes};
use crate::program::Program;
use crate::program::repetition::OuterLoop;

/// Walks of more operations than this, by the first iteration's count, are extended from the
/// loop's first iterations; shorter ones, a few tenths of a second at most, are walked whole
/// (`analyze` gives the programs of `scenarios/` and `validation/` what it gave them before the
/// extension).
pub const LONG_WALK: u64 = 1_000_000;

/// How closely every rank's increments over iterations `k` to `2k` must agree, relative to its
/// clock, for the walk to be taken as periodic (the rounding of sums of durations is about
/// 1e-16 of the clock an operation).
pub const PERIODIC: f64 = 1e-9;

/// The evaluation of `prog` extended over its outermost loop from its first iterations (see the
/// module documentation), with the activities the whole walk would have recorded when `keep`
/// asks for the graph; `None` when the whole loop is to be walked (the walk does not settle,
/// or a cut of the program fails: the whole walk then says why, if it fails too). The cuts'
/// activities are counted, never recorded (an extended walk has no graph), and their resource
/// uses kept, where `keep` asks for them, only in the cuts that may be the walk extended.
/// Given `like`, the cut a like walk was extended from, the plan starts at the pair that ends
/// there, its two cuts walked side by side.
pub(super) fn walk(
    prog: &Program,
    service: &LinkService,
    keep: Keep,
    like: Option<i64>,
) -> Option<(Evaluation, usize)> {
    let record = keep.graph();
    let l = prog.outer_loop()?;
    if matches!(service, LinkService::Served(_) | LinkService::InOrder)
        || prog.has_traffic()
        || walked_routes(prog).is_some()
        || l.times < 4
    {
        return None;
    }
    // the loop cut to each number of iterations a pair compares, walked once each when first
    // compared (a cut that fails, a deadlock the whole program would not reach, leaves the
    // whole walk)
    let mut pairs = plan(l.times);
    let hinted = like.and_then(|cut| pairs.iter().position(|&(_, to)| to == cut));
    pairs.drain(..hinted.unwrap_or(0));
    let mut sizes: Vec<i64> = pairs.iter().flat_map(|&(from, to)| [from, to]).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let cuts: Vec<Program> = sizes.iter().map(|&n| prog.cut(l, n)).collect();
    let at = |n: i64| sizes.binary_search(&n).expect("a size of the plan");
    // (the uses of a cut that is no pair's longer walk are never checked)
    let walk_size = |i: usize| {
        let uses = keep.uses() && pairs.iter().any(|&(_, to)| to == sizes[i]);
        walk_cut(&cuts[i], l, service, record, uses)
    };
    let mut walks: Vec<Option<Walker<'_>>> = Vec::new();
    if hinted.is_some() {
        let (from, to) = rayon::join(|| walk_size(0), || walk_size(1));
        walks.extend([Some(from.ok()?), Some(to.ok()?)]);
    } else {
        walks.push(Some(walk_size(0).ok()?));
    }
    // a short walk, or ranks that skip the loop (a guard around it): no period to find
    let first = walks[0].as_ref()?;
    let skipped = first
        .trips
        .as_ref()
        .is_some_and(|t| t.clocks.iter().any(|c| c.len() != sizes[0] as usize + 1));
    if first.ops.saturating_mul(l.times as u64) <= LONG_WALK || skipped {
        return None;
    }
    for &(from, to) in &pairs {
        let (i, j) = (at(from), at(to));
        while walks.len() <= j {
            walks.push(Some(walk_size(walks.len()).ok()?));
        }
        // (the walks no later pair compares are dropped)
        walks.iter_mut().take(i).for_each(|w| *w = None);
        let (Some(short), Some(long)) = (&walks[i], &walks[j]) else {
            return None;
        };
        let k = to - from;
        let left = (l.times - to) as u64;
        let period = long.activities.saturating_sub(short.activities) as u64;
        let activities = long.activities as u64 + period * left / k as u64;
        if record && activities <= graph::limit() as u64 {
            return None;
        }
        if periodic(long.trips.as_ref(), from as usize, to as usize) {
            let mut long = walks[j].take()?;
            if !extend(&mut long, walks[i].as_ref()?, left, k as u64) {
                return None;
            }
            long.prog = prog;
            let (mut ev, _) = long.finish();
            ev.extended = Some((to, l.times));
            return Some((ev, activities as usize));
        }
    }
    None
}

/// The pairs of cuts `(from, to)` compared, in order, for a loop of `times` iterations: the
/// walk over `to` iterations taken as periodic from iteration `from` with period `to - from`.
/// The first iteration alone (1, 2); from the second, after an iteration of transient (2, 3);
/// then periods of 2, 4, ... iterations (k, 2k): at most half the loop is walked.
fn plan(times: i64) -> Vec<(i64, i64)> {
    let doubling = std::iter::successors(Some(2), |k| Some(k * 2)).map(|k| (k, 2 * k));
    [(1, 2), (2, 3)]
        .into_iter()
        .chain(doubling)
        .take_while(|&(_, to)| 2 * to <= times)
        .collect()
}

/// Walks `cut` (a program cut over loop `l`) with `service`, keeping each rank's clocks at the
/// loop's trips, counting its activities when `count`, and keeping its resource uses for the
/// sharing check when `uses`.
fn walk_cut<'p>(
    cut: &'p Program,
    l: OuterLoop,
    service: &LinkService,
    count: bool,
    uses: bool,
) -> Result<Walker<'p>, String> {
    // (no graph: its activities counted, no node recorded)
    let mut w = Walker::serving(cut, service.clone(), false);
    w.record = count;
    w.keep_uses = uses;
    w.trips = Some(Trips {
        outer: l,
        clocks: vec![Vec::new(); cut.ranks as usize],
    });
    w.run()?;
    Ok(w)
}

/// True when every rank ran the loop's first `to` iterations and its clock grew by the same
/// increment, every rank's the same, over each of iterations `from` to `to`.
fn periodic(trips: Option<&Trips>, from: usize, to: usize) -> bool {
    let Some(t) = trips else { return false };
    let Some(lambda) = t.clocks[0].get(to).zip(t.clocks[0].get(to - 1)) else {
        return false;
    };
    let lambda = lambda.0 - lambda.1;
    t.clocks.iter().all(|c| {
        c.len() == to + 1
            && (from..=to).all(|j| {
                let step = c[j] - c[j - 1];
                (step - lambda).abs() <= PERIODIC * c[to].abs().max(f64::MIN_POSITIVE)
            })
    })
}

/// Extends `long`'s sums and counts by `left / k` times what they grew since `short` (the same
/// walk `k` iterations shorter, so every link it crossed `long` crossed too): false when a count
/// does not grow alike each period.
fn extend(long: &mut Walker<'_>, short: &Walker<'_>, left: u64, k: u64) -> bool {
    let factor = left as f64 / k as f64;
    let line = |long: f64, short: f64| long + factor * (long - short);
    let count = |long: u64, short: u64| grown(long, short, left, k);
    for (l, s) in long.ranks.iter_mut().zip(&short.ranks) {
        l.clock = line(l.clock, s.clock);
        for (a, b) in l.spent.iter_mut().zip(s.spent) {
            *a = line(*a, b);
        }
    }
    long.phases.combine_spent(&short.phases, line);
    for (a, &b) in long.phase_end.iter_mut().zip(&short.phase_end) {
        *a = line(*a, b);
    }
    let Some(messages) = count(long.messages, short.messages) else {
        return false;
    };
    long.messages = messages;
    long.delay_sum = line(long.delay_sum, short.delay_sum);
    if long.delays.extend(&short.delays, left, k).is_none() {
        return false;
    }
    let before: FxHashMap<u64, &LinkAcc> = short.links.iter().map(|s| (s.id, s)).collect();
    for link in &mut long.links {
        let before = before.get(&link.id);
        let Some(messages) = count(link.messages, before.map_or(0, |s| s.messages)) else {
            return false;
        };
        link.messages = messages;
        link.busy = line(link.busy, before.map_or(0.0, |s| s.busy));
        link.busy_squared = line(link.busy_squared, before.map_or(0.0, |s| s.busy_squared));
        if let Some(d) = &mut link.delays {
            let none = Default::default();
            let was = before.and_then(|s| s.delays.as_deref()).unwrap_or(&none);
            if d.extend(was, left, k).is_none() {
                return false;
            }
        }
    }
    true
}
