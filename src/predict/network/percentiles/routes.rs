//! A class's end-to-end percentiles (`class.<c>.p..`: an open class's response, a closed
//! class's cycle) from the sojourn laws along its route.
//!
//! The route is a Markov chain over the stations; with a phase-type law at every station the
//! whole walk is phase-type ([`PhaseType::routed`]) if each visit's sojourn is taken as an
//! independent draw. That is exact for a tandem of FCFS exponential single servers in an open
//! network (Reich 1957, Burke 1968: the sojourns of one job are independent), for a closed
//! class of one job (each sojourn is a service time), and for delays in series; with feedback,
//! branching or a fixed population the sojourns of one job are dependent, which the labels say.

use super::forks::{Stage, Trust, emit_stage};
use super::stations::preferred_prediction;
use super::{Estimate, Sojourn, emit};
use crate::analytic::{PhaseType, route_moments};
use crate::dist::Law;
use crate::metrics::name::Subject;
use crate::network::{
    ClassId, ClassKind, Discipline, Network, Routing, StationId, StationKind, Target,
};
use crate::predict::Analysis;

const ROUTE: &str = "independent per-visit sojourns along the class's route (phase-type)";

/// Adds each class's percentiles where its route's laws allow.
pub(super) fn classes(
    net: &Network,
    v: &[Vec<f64>],
    per_class: &[Vec<Option<Estimate>>],
    forks: &[Option<Stage>],
    a: &mut Analysis,
) {
    let has_fork = forks.iter().any(Option::is_some)
        || net
            .stations
            .iter()
            .any(|st| matches!(st.kind, StationKind::Fork { .. }));
    for (c, class) in net.classes.iter().enumerate() {
        if !crate::metrics::network::completes(net, c) {
            continue;
        }
        let subject = Subject::Class(&class.name);
        let laws = &per_class[c];
        let result = if has_fork {
            chain_of_stages(net, laws, forks, a)
                .or_else(|chain| {
                    walk_of_stages(net, laws, forks, a).map_err(|walk| format!("{chain}; {walk}"))
                })
                .map(|stage| emit_stage(a, subject, &stage))
        } else {
            markov_route(net, v, c, laws, a).map(|est| emit(a, subject, &est))
        };
        if let Err(reason) = result {
            a.refuse(ROUTE, format!("{subject}: {reason}"));
        }
    }
}

/// Where a job of class `c` goes after station `s`, with probabilities; an error for a class
/// switch.
fn targets(net: &Network, c: usize, s: usize) -> Result<Vec<(Target, f64)>, String> {
    let rule = net.routing.rule(ClassId(c as u32), StationId(s as u32));
    let out = Routing::branch_probabilities(rule, &net.groups);
    if out
        .iter()
        .any(|(t, _)| matches!(t, Target::Station(_, tc) if tc.index() != c))
    {
        return Err(format!("class switch after {:?}", net.stations[s].name));
    }
    Ok(out)
}

/// The class's law by its Markov route through service stations (no forks).
fn markov_route(
    net: &Network,
    v: &[Vec<f64>],
    c: usize,
    laws: &[Option<Estimate>],
    a: &Analysis,
) -> Result<Estimate, String> {
    let visited: Vec<usize> = (0..net.stations.len())
        .filter(|&s| v[c][s] > 0.0 && net.stations[s].kind.service().is_some())
        .collect();
    let block = |s: usize| visited.iter().position(|&x| x == s);
    let mut entry = vec![0.0; visited.len()];
    let mut route = vec![vec![0.0; visited.len()]; visited.len()];
    // where jobs enter, and which arrival ends the observation
    let (starts, ends_at): (Vec<(usize, f64)>, Option<usize>) = match net.classes[c].kind {
        ClassKind::Open => {
            let mut starts = Vec::new();
            let sources: Vec<(usize, f64)> = net
                .stations
                .iter()
                .enumerate()
                .filter_map(|(s, st)| match &st.kind {
                    StationKind::Source {
                        class,
                        interarrival,
                    } if class.index() == c => Some((s, 1.0 / interarrival.mean())),
                    _ => None,
                })
                .collect();
            let total: f64 = sources.iter().map(|(_, r)| r).sum();
            for (src, rate) in sources {
                for (t, p) in targets(net, c, src)? {
                    if let Target::Station(to, _) = t {
                        starts.push((to.index(), p * rate / total));
                    }
                }
            }
            (starts, None)
        }
        ClassKind::Closed { reference, .. } => {
            (vec![(reference.index(), 1.0)], Some(reference.index()))
        }
    };
    for (s, p) in starts {
        let b = block(s).ok_or_else(|| {
            format!(
                "jobs enter at {:?}, not a service station",
                net.stations[s].name
            )
        })?;
        entry[b] += p;
    }
    for (i, &s) in visited.iter().enumerate() {
        for (t, p) in targets(net, c, s)? {
            let Target::Station(to, _) = t else { continue };
            if Some(to.index()) == ends_at {
                continue;
            }
            match (block(to.index()), &net.station(to).kind) {
                (Some(j), _) => route[i][j] += p,
                (None, StationKind::Sink) => {}
                (None, _) => {
                    return Err(format!(
                        "{:?} is not a service station",
                        net.station(to).name
                    ));
                }
            }
        }
    }
    let ests: Vec<&Estimate> = visited
        .iter()
        .map(|&s| {
            laws[s]
                .as_ref()
                .ok_or_else(|| format!("no sojourn law for {:?}", net.stations[s].name))
        })
        .collect::<Result<_, _>>()?;
    let chain = is_chain(&entry, &route);
    // one visit to one station: the class's law is the station's
    if visited.len() == 1 && chain {
        return Ok(Estimate {
            law: ests[0].law.clone(),
            method: ests[0].method.clone(),
            exact: ests[0].exact,
        });
    }
    let problem = route_problem(net, c, &visited, &ests, chain);
    let Some(blocks) = ests
        .iter()
        .map(|e| as_phase(&e.law))
        .collect::<Option<Vec<PhaseType>>>()
    else {
        return gamma_route(net, c, &entry, &route, &ests, problem.as_deref(), a);
    };
    let law = PhaseType::routed(&blocks, &entry, &route).map_err(|e| e.to_string())?;
    Ok(Estimate {
        law: Sojourn::Phase(law),
        method: match &problem {
            None => format!("{ROUTE}; tandem of M/M/1 queues (Reich, Burke)"),
            Some(p) => format!("{ROUTE}; approximation: {p}"),
        },
        exact: problem.is_none(),
    })
}

/// A gamma law fitted to the class's mean (its predicted response or cycle) and to the
/// variance of the walk along its route with independent sojourns of the per-visit laws
/// (random visit counts included, [`route_moments`]), for routes whose laws are not all
/// phase-type.
fn gamma_route(
    net: &Network,
    c: usize,
    entry: &[f64],
    route: &[Vec<f64>],
    ests: &[&Estimate],
    problem: Option<&str>,
    a: &Analysis,
) -> Result<Estimate, String> {
    let visit: Vec<(f64, f64)> = ests
        .iter()
        .map(|e| e.law.moments())
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let (walk_mean, walk_second) =
        route_moments(entry, route, &visit).map_err(|e| e.to_string())?;
    let variance = (walk_second - walk_mean * walk_mean).max(0.0);
    let metric = crate::metrics::network::class_metric(net, c);
    let (mean, source) =
        preferred_prediction(a, &metric).unwrap_or((walk_mean, "the per-visit laws".to_owned()));
    let law = Sojourn::gamma_fit(mean, mean * mean + variance).map_err(|e| e.to_string())?;
    let broken = problem.map_or(String::new(), |p| format!("; {p}"));
    Ok(Estimate {
        law,
        method: format!(
            "gamma fit to the route's two moments (mean of {source}, variance of independent per-visit sojourns); approximation: the total is not gamma{broken}"
        ),
        exact: false,
    })
}

/// True when the route is a chain: one entry station, each station followed by at most one
/// other with probability 1, none revisited.
fn is_chain(entry: &[f64], route: &[Vec<f64>]) -> bool {
    let Some(mut at) = entry.iter().position(|&p| p == 1.0) else {
        return false;
    };
    let mut seen = vec![false; entry.len()];
    loop {
        if seen[at] {
            return false;
        }
        seen[at] = true;
        let out: f64 = route[at].iter().sum();
        if out == 0.0 {
            return seen.iter().all(|&x| x);
        }
        match route[at].iter().position(|&p| p == 1.0) {
            Some(next) => at = next,
            None => return false,
        }
    }
}

/// Why summing independent sojourns along the route is not exact, if it is.
fn route_problem(
    net: &Network,
    c: usize,
    visited: &[usize],
    ests: &[&Estimate],
    chain: bool,
) -> Option<String> {
    if let ClassKind::Closed { population, .. } = net.classes[c].kind {
        if population > 1 {
            return Some(
                "in a closed network the sojourns of one cycle are dependent (fixed population)"
                    .to_owned(),
            );
        }
        // one job: every sojourn is a service time
        return ests
            .iter()
            .zip(visited)
            .find(|(e, _)| !e.exact)
            .map(|(_, &s)| format!("the law at {:?} is an approximation", net.stations[s].name));
    }
    if let Some((_, &s)) = ests.iter().zip(visited).find(|(e, _)| !e.exact) {
        return Some(format!(
            "the law at {:?} is an approximation",
            net.stations[s].name
        ));
    }
    if !chain {
        return Some(
            "the route branches or revisits stations: the sojourns of one job are dependent"
                .to_owned(),
        );
    }
    if net.classes.len() > 1 {
        return Some("other classes share the stations".to_owned());
    }
    visited.iter().find_map(|&s| {
        let single_fcfs = matches!(
            net.stations[s].kind,
            StationKind::Queue {
                discipline: Discipline::Fcfs,
                servers: 1,
                ..
            }
        );
        (!single_fcfs).then(|| {
            format!(
                "{:?} is not a single FCFS server: independence of successive sojourns is proved for those only",
                net.stations[s].name
            )
        })
    })
}

/// `law` as a phase-type law, where it is one: exponential, Erlang and hyperexponential
/// distributions, and the maximum of independent identical exponentials (hypoexponential of
/// rates `k r, (k - 1) r, ..., r`, Renyi).
fn as_phase(law: &Sojourn) -> Option<PhaseType> {
    match law {
        Sojourn::Phase(p) => Some(p.clone()),
        Sojourn::Dist(d) => match d.law() {
            Law::Exponential { mean } => PhaseType::exponential(1.0 / mean).ok(),
            Law::Erlang { k, mean } => {
                let rate = f64::from(*k) / mean;
                PhaseType::hypoexponential(&vec![rate; *k as usize]).ok()
            }
            Law::HyperExp { p1, mean1, mean2 } => PhaseType::new(
                vec![*p1, 1.0 - p1],
                vec![1.0 / mean1, 1.0 / mean2],
                vec![Vec::new(), Vec::new()],
            )
            .ok(),
            _ => None,
        },
        Sojourn::Max(parts) => {
            let rate = match parts.first()? {
                Sojourn::Dist(d) if d.is_exponential() => 1.0 / d.mean(),
                Sojourn::Phase(p) => p.exponential_rate()?,
                _ => return None,
            };
            let same = parts.iter().all(|p| match p {
                Sojourn::Dist(d) if d.is_exponential() => {
                    (1.0 / d.mean() / rate - 1.0).abs() < 1e-12
                }
                Sojourn::Phase(p) => p
                    .exponential_rate()
                    .is_some_and(|r| (r / rate - 1.0).abs() < 1e-12),
                _ => false,
            });
            let k = parts.len();
            let rates: Vec<f64> = (1..=k).rev().map(|i| i as f64 * rate).collect();
            same.then(|| PhaseType::hypoexponential(&rates).ok())
                .flatten()
        }
        _ => None,
    }
}

/// A single-class fork-join network as a chain: forks (to their joins) and service stations,
/// each met once with probability 1, from an open class's source to the exit or around a
/// closed class's cycle from its reference station. Its law is the sum of the parts taken as
/// independent: exact when every part is a delay or a fork of delays in an open network (each
/// time is then a service draw of its own), an approximation otherwise; a gamma fit to the
/// parts' two moments (around the predicted mean) where a part is not phase-type.
fn chain_of_stages(
    net: &Network,
    laws: &[Option<Estimate>],
    forks: &[Option<Stage>],
    a: &Analysis,
) -> Result<Stage, String> {
    if net.classes.len() != 1 {
        return Err("only a single-class fork-join network is supported".to_owned());
    }
    let sole = |s: usize| -> Result<Target, String> {
        match targets(net, 0, s)?[..] {
            [(t, 1.0)] => Ok(t),
            _ => Err(format!(
                "{:?} does not route to one place",
                net.stations[s].name
            )),
        }
    };
    let (mut next, reference) = match net.classes[0].kind {
        ClassKind::Open => {
            let sources: Vec<usize> = (0..net.stations.len())
                .filter(|&s| matches!(net.stations[s].kind, StationKind::Source { .. }))
                .collect();
            let [source] = sources[..] else {
                return Err("one source is needed".to_owned());
            };
            (sole(source)?, None)
        }
        ClassKind::Closed { reference, .. } => (
            Target::Station(reference, ClassId(0)),
            Some(reference.index()),
        ),
    };
    let mut parts: Vec<Stage> = Vec::new();
    while let Target::Station(at, _) = next {
        let s = at.index();
        let st = &net.stations[s];
        if !parts.is_empty() && Some(s) == reference {
            break;
        }
        if parts.len() > net.stations.len() {
            return Err("the route loops".to_owned());
        }
        match &st.kind {
            StationKind::Fork { .. } => {
                let stage = forks[s]
                    .clone()
                    .ok_or_else(|| format!("no law for fork {:?}", st.name))?;
                parts.push(stage);
                let join = net
                    .join_of(s)
                    .ok_or_else(|| format!("fork {:?} has no join", st.name))?;
                next = sole(join)?;
            }
            StationKind::Delay { .. } | StationKind::Queue { .. } => {
                let est = laws[s]
                    .as_ref()
                    .ok_or_else(|| format!("no sojourn law for {:?}", st.name))?;
                parts.push(Stage {
                    law: est.law.clone(),
                    method: est.method.clone(),
                    trust: if est.exact {
                        Trust::Exact
                    } else {
                        Trust::Approximate
                    },
                    delays_only: matches!(st.kind, StationKind::Delay { .. }),
                });
                next = sole(s)?;
            }
            StationKind::Sink => break,
            _ => return Err(format!("{:?} is not on a fork-join chain", st.name)),
        }
    }
    if let [one] = &parts[..] {
        return Ok(one.clone());
    }
    let exact = reference.is_none()
        && parts
            .iter()
            .all(|p| p.delays_only && matches!(p.trust, Trust::Exact));
    let Some(blocks) = parts
        .iter()
        .map(|p| as_phase(&p.law))
        .collect::<Option<Vec<PhaseType>>>()
    else {
        return gamma_stages(net, &parts, a);
    };
    let law = PhaseType::sum(&blocks).map_err(|e| e.to_string())?;
    let mut methods: Vec<&str> = Vec::new();
    for p in &parts {
        if !methods.contains(&p.method.as_str()) {
            methods.push(&p.method);
        }
    }
    let method = format!(
        "sum of {} independent stages in series ({}){}",
        parts.len(),
        methods.join(" + "),
        if exact { "" } else { STAGES_DEPENDENT }
    );
    Ok(Stage {
        law: Sojourn::Phase(law),
        method,
        trust: if exact {
            Trust::Exact
        } else {
            Trust::Approximate
        },
        delays_only: false,
    })
}

/// Why summing the stages of a fork-join chain as independent is an approximation.
const STAGES_DEPENDENT: &str = "; approximation: after a queueing stage (or in a closed network) the stages of one job are dependent and fed by a join, not a Poisson stream";

/// A gamma law fitted to the class's predicted mean (or the stages' summed means) and to the
/// summed variances of the chain's stages taken as independent.
fn gamma_stages(net: &Network, parts: &[Stage], a: &Analysis) -> Result<Stage, String> {
    let (mut mean, mut variance) = (0.0, 0.0);
    for p in parts {
        let (m1, m2) = p.law.moments().map_err(|e| e.to_string())?;
        mean += m1;
        variance += (m2 - m1 * m1).max(0.0);
    }
    let (mean, source) = preferred_prediction(a, &crate::metrics::network::class_metric(net, 0))
        .unwrap_or((mean, "the stages' laws".to_owned()));
    let law = Sojourn::gamma_fit(mean, mean * mean + variance).map_err(|e| e.to_string())?;
    Ok(Stage {
        law,
        method: format!(
            "gamma fit to {} stages' two moments (mean of {source}, variance of the stages taken independent); approximation: the total is not gamma{STAGES_DEPENDENT}",
            parts.len()
        ),
        trust: Trust::Approximate,
        delays_only: false,
    })
}

/// A single-class fork-join network whose route branches at random: a Markov walk over its
/// forks (each left from its join) and service stations, from the source or from a closed
/// class's reference station until it exits or returns there, with a gamma law fitted to the
/// class's predicted mean and to the variance of the walk with independent stage times
/// ([`route_moments`]).
fn walk_of_stages(
    net: &Network,
    laws: &[Option<Estimate>],
    forks: &[Option<Stage>],
    a: &Analysis,
) -> Result<Stage, String> {
    let ClassKind::Closed { reference, .. } = net.classes[0].kind else {
        return Err("a random walk of stages is followed for a closed class only".to_owned());
    };
    let start = reference.index();
    // the nodes the walk reaches, in order, with their moves
    let mut nodes = vec![start];
    let mut moves: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut at = 0;
    while at < nodes.len() {
        let s = nodes[at];
        let leave = match &net.stations[s].kind {
            StationKind::Fork { .. } => net
                .join_of(s)
                .ok_or_else(|| format!("fork {:?} has no join", net.stations[s].name))?,
            StationKind::Delay { .. } | StationKind::Queue { .. } => s,
            _ => return Err(format!("{:?} is not a stage", net.stations[s].name)),
        };
        let mut out = Vec::new();
        for (t, p) in targets(net, 0, leave)? {
            let Target::Station(to, _) = t else { continue };
            if to.index() == start || p == 0.0 {
                continue;
            }
            let j = match nodes.iter().position(|&n| n == to.index()) {
                Some(j) => j,
                None => {
                    nodes.push(to.index());
                    nodes.len() - 1
                }
            };
            out.push((j, p));
        }
        moves.push(out);
        at += 1;
    }
    let n = nodes.len();
    let mut route = vec![vec![0.0; n]; n];
    for (i, out) in moves.iter().enumerate() {
        for &(j, p) in out {
            route[i][j] += p;
        }
    }
    let mut entry = vec![0.0; n];
    entry[0] = 1.0;
    let visit: Vec<(f64, f64)> = nodes
        .iter()
        .map(|&s| {
            let law = match &net.stations[s].kind {
                StationKind::Fork { .. } => forks[s].as_ref().map(|f| &f.law),
                _ => laws[s].as_ref().map(|e| &e.law),
            };
            law.ok_or_else(|| format!("no law for {:?}", net.stations[s].name))?
                .moments()
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    let (walk_mean, walk_second) =
        route_moments(&entry, &route, &visit).map_err(|e| e.to_string())?;
    let variance = (walk_second - walk_mean * walk_mean).max(0.0);
    let (mean, source) = preferred_prediction(a, &crate::metrics::network::class_metric(net, 0))
        .unwrap_or((walk_mean, "the stages' laws".to_owned()));
    let law = Sojourn::gamma_fit(mean, mean * mean + variance).map_err(|e| e.to_string())?;
    Ok(Stage {
        law,
        method: format!(
            "gamma fit to the two moments of a random walk over {n} stages (mean of {source}, variance of independent stage times, random visit counts included); approximation: the total is not gamma{STAGES_DEPENDENT}"
        ),
        trust: Trust::Approximate,
        delays_only: false,
    })
}
