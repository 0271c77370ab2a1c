//! `[[route]]` elements: one routing rule per (class, station), its targets resolved.

use std::collections::HashMap;

use super::{Checker, EXIT, lookup};
use crate::network::{ClassId, ClassKind, Network, Rule, StationId, StationKind, Target};
use crate::scenario::raw::Element;
use crate::scenario::raw::{RawBranch, RawPolicy, RawRoute, RawStation};

/// Builds the routing rules; returns every (class, from) pair a route was written for, valid or
/// not, so later checks do not report a missing route where a broken one was already reported.
pub(super) fn routes(
    ck: &mut Checker,
    raw: &[Element<RawRoute>],
    stations_raw: &[Element<RawStation>],
    net: &mut Network,
    stations: &HashMap<String, u32>,
    classes: &HashMap<String, u32>,
) -> HashMap<(ClassId, StationId), usize> {
    let mut seen = HashMap::new();
    for (i, r) in raw.iter().enumerate() {
        let Some(route) = &r.value else { continue };
        let at = r.at();
        let path = |f: &str| format!("route[{i}].{f}");
        let class = lookup(
            ck,
            classes,
            &route.class,
            at,
            &path("class"),
            "class",
            ClassId,
        );
        let from = lookup(
            ck,
            stations,
            &route.from,
            at,
            &path("from"),
            "station",
            StationId,
        );
        let (Some(class), Some(from)) = (class, from) else {
            continue;
        };
        if let Some(prev) = seen.insert((class, from), i) {
            ck.add(
                Some(at),
                path("from"),
                format!(
                    "route[{prev}] already routes class {:?} from {:?}",
                    route.class, route.from
                ),
            );
        }
        let broken = |s: StationId| stations_raw[s.index()].broken;
        match &net.station(from).kind {
            _ if broken(from) => {}
            StationKind::Fork { .. } => ck.add(
                Some(at),
                path("from"),
                "a fork sends its tasks to its branches; route the job from its join",
            ),
            StationKind::Sink => ck.add(Some(at), path("from"), "nothing leaves a sink"),
            _ => {}
        }
        let target = |ck: &mut Checker,
                      name: &str,
                      to_class: &Option<String>,
                      field: &str|
         -> Option<Target> {
            let tc = match to_class {
                Some(n) => lookup(
                    ck,
                    classes,
                    n,
                    at,
                    &path(&format!("{field}_class")),
                    "class",
                    ClassId,
                )?,
                None => class,
            };
            check_switch(ck, net, at, &path(&format!("{field}_class")), class, tc);
            if name == EXIT {
                if matches!(net.classes[tc.index()].kind, ClassKind::Closed { .. }) {
                    ck.add(
                        Some(at),
                        path(field),
                        format!(
                            "class {:?} is closed: its jobs cannot exit",
                            net.classes[tc.index()].name
                        ),
                    );
                }
                return Some(Target::Exit);
            }
            let to = lookup(ck, stations, name, at, &path(field), "station", StationId)?;
            if !broken(to) && matches!(net.station(to).kind, StationKind::Source { .. }) {
                ck.add(
                    Some(at),
                    path(field),
                    format!("{name:?} is a source: nothing can be routed into it"),
                );
            }
            Some(Target::Station(to, tc))
        };
        let rule = match (&route.to, &route.branches, route.policy, &route.among) {
            (Some(to), None, None, None) => target(ck, to, &route.to_class, "to").map(Rule::Fixed),
            (None, Some(branches), None, None) if route.to_class.is_none() => random_rule(
                ck,
                branches,
                matches!(net.classes[class.index()].kind, ClassKind::Closed { .. }),
                &path,
                &mut |ck, b: &RawBranch, k| {
                    target(ck, &b.to, &b.to_class, &format!("branches[{k}].to"))
                },
                at,
            ),
            (None, None, Some(policy), Some(among)) if !among.is_empty() => {
                let tc = match &route.to_class {
                    Some(n) => lookup(ck, classes, n, at, &path("to_class"), "class", ClassId),
                    None => Some(class),
                };
                if let Some(tc) = tc {
                    check_switch(ck, net, at, &path("to_class"), class, tc);
                }
                let members: Vec<StationId> = among
                    .iter()
                    .enumerate()
                    .filter_map(|(k, n)| {
                        let t = target(ck, n, &None, &format!("among[{k}]"));
                        match t {
                            Some(Target::Station(s, _)) => Some(s),
                            Some(Target::Exit) => {
                                ck.add(
                                    Some(at),
                                    path(&format!("among[{k}]")),
                                    "`exit` cannot be one of a policy's stations",
                                );
                                None
                            }
                            None => None,
                        }
                    })
                    .collect();
                tc.filter(|_| members.len() == among.len()).map(|tc| {
                    let group = net
                        .groups
                        .iter()
                        .position(|g| *g == members)
                        .unwrap_or_else(|| {
                            net.groups.push(members);
                            net.groups.len() - 1
                        }) as u32;
                    match policy {
                        RawPolicy::Jsq => Rule::ShortestQueue { group, class: tc },
                        RawPolicy::RoundRobin => Rule::RoundRobin { group, class: tc },
                    }
                })
            }
            _ => {
                ck.add(Some(at), path("to"), "give exactly one of `to` (with optional `to_class`), `branches`, or `policy` with a non-empty `among`");
                None
            }
        };
        if let Some(rule) = rule {
            net.routing.set(class, from, rule);
        }
    }
    seen
}

/// A route may switch a job between classes of the same kind only: a closed class's population
/// is fixed, so its jobs must stay in closed classes, and an open job may not join it.
fn check_switch(
    ck: &mut Checker,
    net: &Network,
    at: usize,
    path: &str,
    from: ClassId,
    to: ClassId,
) {
    let closed = |c: ClassId| matches!(net.classes[c.index()].kind, ClassKind::Closed { .. });
    let kind = |c: ClassId| if closed(c) { "closed" } else { "open" };
    if closed(from) != closed(to) {
        ck.add(
            Some(at),
            path,
            format!(
                "switches {} class {:?} into {} class {:?}: a closed class's jobs must stay in closed classes and an open class's in open ones (the closed population is fixed)",
                kind(from),
                net.classes[from.index()].name,
                kind(to),
                net.classes[to.index()].name
            ),
        );
    }
}

type BranchTarget<'a> = dyn FnMut(&mut Checker, &RawBranch, usize) -> Option<Target> + 'a;

/// The rule of `branches` (of a closed class when `closed`). Probabilities that are each valid
/// but do not sum to 1 are a problem, reported with the fix that fits the class; the rule is
/// still made, scaled to sum to 1, so that the checks of the whole network see the stations the
/// branches reach (and do not call them unvisited).
fn random_rule(
    ck: &mut Checker,
    branches: &[RawBranch],
    closed: bool,
    path: &dyn Fn(&str) -> String,
    target: &mut BranchTarget<'_>,
    at: usize,
) -> Option<Rule> {
    let mut cumulative = Vec::new();
    let mut targets = Vec::new();
    let mut sum = 0.0;
    let mut ok = !branches.is_empty();
    for (k, b) in branches.iter().enumerate() {
        if !(b.p.is_finite() && (0.0..=1.0).contains(&b.p)) {
            ck.add(
                Some(at),
                path(&format!("branches[{k}].p")),
                format!("a probability must lie in [0, 1], got {}", b.p),
            );
            ok = false;
        }
        match target(ck, b, k) {
            Some(t) => targets.push(t),
            None => ok = false,
        }
        sum += b.p;
        cumulative.push(sum);
    }
    if (sum - 1.0).abs() > 1e-9 {
        let fix = if closed && sum < 1.0 {
            "a closed class's jobs never leave, so its branches share all of the probability: raise some p (or add a branch to a station) to make up the rest"
                .to_owned()
        } else if sum < 1.0 {
            format!(
                "add the missing {0} to a branch, or give it a branch of its own, e.g. {{ to = \"exit\", p = {0} }}",
                ((1.0 - sum) * 1e12).round() / 1e12
            )
        } else {
            "lower some p".to_owned()
        };
        ck.add(
            Some(at),
            path("branches"),
            format!("probabilities must sum to 1, they sum to {sum}: {fix}"),
        );
        if ok && sum > 0.0 && sum.is_finite() {
            for c in &mut cumulative {
                *c /= sum;
            }
        } else {
            ok = false;
        }
    }
    if let Some(last) = cumulative.last_mut() {
        *last = 1.0;
    }
    ok.then_some(Rule::Random {
        cumulative,
        targets,
    })
}
