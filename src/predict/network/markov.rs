//! The exact Markov chain of a small network whose service and patience times are exponential
//! and whose sources are Poisson, phase-type renewal or Markovian arrival processes (MAP,
//! MMPP): its states are the jobs at each station (by class in service, in order of arrival by
//! priority level where they wait, in order of blocking where they are blocked), the phase of
//! each source of several phases and the round-robin pointers; its events are the engine's
//! (arrivals, phase changes, services, abandonments, with losses and blocking) at their rates.
//! [`crate::analytic::ctmc`] enumerates the states reachable from the initial one and solves
//! the balance equations; the means follow from the stationary distribution, the throughputs,
//! losses and abandonments from the rates of the events that count them, and the times per
//! visit and end to end from Little's law.
//!
//! An open class that reaches a station without a capacity makes the chain infinite: it is
//! truncated, the arrivals of an open class stopping while `K` of its jobs are present (all
//! open jobs together when routes switch classes; a source's phase still moves), `K` first set
//! from the stations' loads and doubled until the probability of the truncation levels is
//! below [`BOUNDARY_MASS`]. The chain has at most [`STATE_LIMIT`] states times the analysis
//! budget factor.

mod chain;
#[cfg(test)]
mod tests;

use chain::{Chain, Mark};

use super::{Analysis, Bound, short};
use crate::analytic::cost;
use crate::analytic::ctmc::{StateSpace, Stationary};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::{class_metric, completes, station_class_subject, turns_away};
use crate::network::{ClassKind, Network, Routing, StationKind, Target, WhenFull};
use crate::stats::PERCENTILES;

/// The label of every prediction of this module starts with it.
const METHOD: &str = "exact Markov chain";

/// The most states of a chain at budget factor 1, about half a second to solve. The sparse
/// factors of a chain of four dimensions fill in: a closed two-class priority network took
/// 0.5 s at 7,381 states and 10 s at 25,425 (`benches/ctmc.rs`, `network_chain`), three open
/// priority classes 86 s and 7 GB at 293,066.
pub(super) const STATE_LIMIT: usize = 10_000;

/// The largest stationary probability of the truncation level a truncated chain may have.
pub(super) const BOUNDARY_MASS: f64 = 1e-12;

/// The solved chain of a network, its long-run means and event rates.
#[derive(Debug)]
struct Measures {
    /// States solved.
    states: usize,
    /// The truncation levels, named, and the stationary probability of each group's level,
    /// for a truncated chain.
    truncated: Option<(String, Vec<f64>)>,
    /// `[s][c]`: mean class-`c` jobs present at station `s`.
    number: Vec<Vec<f64>>,
    /// `[s][c]`: mean class-`c` jobs waiting at `s` whose service has not started.
    fresh: Vec<Vec<f64>>,
    /// `[s]`: mean busy servers (queues).
    busy: Vec<f64>,
    /// `[s][c]`: rates of departures, losses and abandonments.
    depart: Vec<Vec<f64>>,
    lost: Vec<Vec<f64>>,
    abandon: Vec<Vec<f64>>,
    /// `[c]`: rate of completed observations.
    complete: Vec<f64>,
    /// `[c]`: rate of arrivals from the class's sources.
    arrive: Vec<f64>,
}

/// Analyses a network with features: the exact chain, or the refusal saying why not; nothing
/// when other methods predict every mean it reports exactly already.
pub(super) fn analyze(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    let covered = crate::metrics::network::names(net)
        .iter()
        .filter(|m| !is_percentile(m))
        .all(|m| a.predictions.iter().any(|p| p.exact && p.metric == *m));
    if covered {
        return;
    }
    let limit = cost::scaled(STATE_LIMIT as f64) as usize;
    match solve(net, v, limit) {
        Ok(m) => add_predictions(net, &m, a),
        Err(reason) => a.refuse(METHOD, reason),
    }
}

/// Whether `metric` names a percentile (`...p50`).
fn is_percentile(metric: &str) -> bool {
    metric
        .rsplit_once(".p")
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Analyses a plain network by the exact chain when its service times are exponential, its
/// sources Poisson, phase-type renewal or Markovian arrival processes, and it has no fork (it
/// says nothing of a network it cannot model: other methods cover those).
pub(super) fn analyze_markovian(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    let fork = net
        .stations
        .iter()
        .any(|s| matches!(s.kind, StationKind::Fork { .. }));
    if !fork && chain::not_markovian(net).is_none() {
        analyze(net, v, a);
    }
}

/// Builds, enumerates and solves the chain of `net` with at most `limit` states.
fn solve(net: &Network, v: &[Vec<f64>], limit: usize) -> Result<Measures, String> {
    let mut chain = Chain::new(net)?;
    if !chain.unbounded() {
        return measure(&chain, limit);
    }
    let mut levels = first_levels(net, v, &chain)?;
    let mut previous: Option<(String, f64)> = None;
    loop {
        chain.open_limit = Some(levels.clone());
        let m = measure(&chain, limit).map_err(|e| match &previous {
            Some((at, mass)) => format!(
                "truncated at {at} the chain's boundary has probability {mass:.1e}, above {BOUNDARY_MASS:e}, and truncated at {}: {e}",
                truncation(net, &chain, &levels)
            ),
            None => e,
        })?;
        let Some((_, masses)) = &m.truncated else {
            return Ok(m);
        };
        let mass: f64 = masses.iter().sum();
        if mass < BOUNDARY_MASS {
            return Ok(m);
        }
        previous = Some((truncation(net, &chain, &levels), mass));
        for (level, &g) in levels.iter_mut().zip(masses) {
            if g >= BOUNDARY_MASS / masses.len() as f64 {
                *level = level.saturating_mul(2);
            }
        }
    }
}

/// The first truncation level of each group of `chain`: for each station without a capacity
/// that the group's jobs visit, the number of them whose probability is below
/// [`BOUNDARY_MASS`] in a geometric law of the ratio they see there (the load of their level
/// and above at a priority station, their thinned share of a geometric total elsewhere; a
/// Poisson law of their mean at a delay), the largest of these plus their mean numbers at the
/// other stations. Refuses a station whose open load is 1 or more.
fn first_levels(net: &Network, v: &[Vec<f64>], chain: &Chain<'_>) -> Result<Vec<u32>, String> {
    let open: Vec<usize> = (0..net.classes.len())
        .filter(|&c| net.classes[c].kind == ClassKind::Open)
        .collect();
    // per group: (largest level, sum of means)
    let mut per: Vec<Vec<(f64, f64)>> = vec![Vec::new(); chain.groups()];
    for (s, st) in net.stations.iter().enumerate() {
        let Some(table) = st.kind.service() else {
            continue;
        };
        if st.features.capacity.is_some() {
            continue;
        }
        let load = |c: usize| table[c].as_ref().map_or(0.0, |d| v[c][s] * d.mean());
        let offered: f64 = open.iter().map(|&c| load(c)).sum();
        if offered <= 0.0 {
            continue;
        }
        let speed = st
            .features
            .rate_by_jobs
            .as_ref()
            .and_then(|r| r.last().copied())
            .unwrap_or(1.0);
        let servers = match st.kind {
            StationKind::Delay { .. } => None,
            _ => Some(chain.fcfs_servers(s).unwrap_or(1)),
        };
        let rho = servers.map_or(0.0, |c| offered / (f64::from(c) * speed));
        if rho >= 1.0 && st.features.patience.is_none() {
            return Err(format!(
                "station {:?} has an open load of {} per server: no steady state",
                st.name,
                short(rho)
            ));
        }
        for (g, levels) in per.iter_mut().enumerate() {
            let members: Vec<usize> = open
                .iter()
                .copied()
                .filter(|&c| chain.group(c) == g && load(c) > 0.0)
                .collect();
            if members.is_empty() {
                continue;
            }
            let mine: f64 = members.iter().map(|&c| load(c)).sum();
            // a delay keeps a Poisson number; so, nearly, does a queue whose waiting jobs
            // leave at the patience's rate (its mean at most the servers' and the mean
            // patience's jobs)
            let poisson = match (servers, &st.features.patience) {
                (None, _) => Some(mine),
                (Some(c), Some(d)) => Some(f64::from(c) + open_rate(v, s, &members) * d.mean()),
                _ => None,
            };
            if let Some(mean) = poisson {
                levels.push((mean + 10.0 * mean.sqrt() + 30.0, mean));
                continue;
            }
            let servers = servers.expect("a queue");
            let c = f64::from(servers) * speed;
            let ratio = if st.features.priority.is_some() {
                let top = members
                    .iter()
                    .map(|&k| net.classes[k].priority)
                    .max()
                    .expect("members");
                open.iter()
                    .filter(|&&k| net.classes[k].priority <= top)
                    .map(|&k| load(k))
                    .sum::<f64>()
                    / c
            } else {
                let p = mine / offered;
                rho * p / (1.0 - rho + rho * p)
            };
            let ratio = ratio.clamp(1e-3, 0.999);
            levels.push((
                BOUNDARY_MASS.ln() / ratio.ln() + f64::from(servers),
                ratio / (1.0 - ratio),
            ));
        }
    }
    Ok(per
        .iter()
        .map(|levels| {
            let top = levels.iter().map(|l| l.0).fold(0.0, f64::max);
            let means: f64 = levels.iter().map(|l| l.1).sum();
            let rest = means - levels.iter().find(|l| l.0 == top).map_or(0.0, |l| l.1);
            (top + rest).ceil().clamp(8.0, f64::from(u16::MAX)) as u32
        })
        .collect())
}

/// The arrival rate of the open classes `members` at station `s`.
fn open_rate(v: &[Vec<f64>], s: usize, members: &[usize]) -> f64 {
    members.iter().map(|&c| v[c][s]).sum()
}

/// The truncation levels, named: `120 open jobs`, or `17 open c0 jobs and 30 open c1 jobs`.
fn truncation(net: &Network, chain: &Chain<'_>, levels: &[u32]) -> String {
    let open: Vec<usize> = (0..net.classes.len())
        .filter(|&c| net.classes[c].kind == ClassKind::Open)
        .collect();
    if chain.pooled || open.len() == 1 {
        return format!("{} open jobs", levels[chain.group(open[0])]);
    }
    let each: Vec<String> = open
        .iter()
        .map(|&c| format!("{} open {} jobs", levels[c], net.classes[c].name))
        .collect();
    each.join(" and ")
}

/// Enumerates `chain`, refusing past `limit` states and at a blocking deadlock.
fn explore(chain: &Chain<'_>, limit: usize) -> Result<StateSpace<chain::State>, String> {
    let space = StateSpace::explore_with_limit(chain, limit).map_err(|e| match e {
        crate::analytic::AnalyticError::TooCostly { what, .. } => format!(
            "{what}, over the limit of {limit} states ({STATE_LIMIT} times the budget factor); {}",
            cost::raise()
        ),
        other => other.to_string(),
    })?;
    if let Some(deadlock) = chain.deadlock() {
        return Err(deadlock);
    }
    Ok(space)
}

/// Solves `chain` and takes its means and event rates.
fn measure(chain: &Chain<'_>, limit: usize) -> Result<Measures, String> {
    let space = explore(chain, limit)?;
    let states = space.len();
    let pi: Stationary<chain::State> = space.stationary().map_err(|e| e.to_string())?;
    let (ns, nc) = (chain.stations(), chain.classes());
    let grid = || vec![vec![0.0; nc]; ns];
    let mut m = Measures {
        states,
        truncated: chain
            .open_limit
            .as_ref()
            .map(|l| (truncation(chain.net(), chain, l), vec![0.0; l.len()])),
        number: grid(),
        fresh: grid(),
        busy: vec![0.0; ns],
        depart: grid(),
        lost: grid(),
        abandon: grid(),
        complete: vec![0.0; nc],
        arrive: vec![0.0; nc],
    };
    for (state, p) in pi.iter() {
        if p == 0.0 {
            continue;
        }
        let w = chain.decode(state);
        for s in 0..ns {
            if !chain.serves(s) {
                continue;
            }
            for c in 0..nc {
                let (n, fresh) = chain.present_class(&w, s, c);
                m.number[s][c] += p * f64::from(n);
                m.fresh[s][c] += p * f64::from(fresh);
            }
            m.busy[s] += p * chain.busy(&w, s);
        }
        if let (Some(limit), Some((_, mass))) = (&chain.open_limit, &mut m.truncated) {
            for (g, n) in chain.open_jobs(&w).into_iter().enumerate() {
                if n >= limit[g] {
                    mass[g] += p;
                }
            }
        }
        chain.events(&w, &mut |_, rate, marks| {
            for &mark in marks {
                let x = p * rate;
                match mark {
                    Mark::Depart(s, c) => m.depart[s][c] += x,
                    Mark::Lost(s, c) => m.lost[s][c] += x,
                    Mark::Abandon(s, c) => m.abandon[s][c] += x,
                    Mark::Complete(c) => m.complete[c] += x,
                    Mark::Arrive(c, k) => m.arrive[c] += x * f64::from(k),
                }
            }
        });
    }
    Ok(m)
}

/// Whether a job of class `c` can leave the network unserved after spending time in it (so
/// that its time there is not in any observation): a station with a patience that it visits,
/// or one that loses it when full that it reaches from a station other than a source.
fn leaves_early(net: &Network, c: usize) -> bool {
    let visits = |s: usize| {
        net.stations[s]
            .kind
            .service()
            .is_some_and(|t| t[c].is_some())
    };
    let loses = |s: usize| {
        net.stations[s]
            .features
            .capacity
            .is_some_and(|k| k.when_full == WhenFull::Lose)
    };
    (0..net.stations.len()).any(|s| {
        (visits(s) && net.stations[s].features.patience.is_some())
            || (visits(s)
                && loses(s)
                && (0..net.stations.len()).any(|from| {
                    !matches!(net.stations[from].kind, StationKind::Source { .. })
                        && (0..net.classes.len()).any(|k| {
                            let rule = net.routing.rule(
                                crate::network::ClassId(k as u32),
                                crate::network::StationId(from as u32),
                            );
                            Routing::branch_probabilities(rule, &net.groups)
                                .iter()
                                .any(|(t, _)| matches!(t, Target::Station(to, kc) if to.index() == s && kc.index() == c))
                        })
                }))
    })
}

/// The method label of a solved chain: its states, and its truncation (no comma: labels go
/// into CSV columns).
fn label(m: &Measures) -> String {
    let mut out = format!("{METHOD} ({} states", m.states);
    if let Some((levels, masses)) = &m.truncated {
        let mass: f64 = masses.iter().sum();
        out.push_str(&format!(
            "; truncated at {levels}; boundary mass {mass:.0e}"
        ));
    }
    out.push(')');
    out
}

/// Adds the predictions of the solved chain `m` of `net` under the simulator's names, for the
/// metrics no other method predicted exactly, and Markov-inequality bounds on the percentiles
/// nothing else predicted or bounded.
fn add_predictions(net: &Network, m: &Measures, a: &mut Analysis) {
    let method = label(m);
    // where another method is exact already, its value stands alone
    let add = |a: &mut Analysis, metric: String, value: f64| {
        if !a.predictions.iter().any(|p| p.exact && p.metric == metric) {
            a.add(metric, value, &method, true);
        }
    };
    let switching = chain::switches_class(net);
    let mut means: Vec<(Subject<'_>, f64)> = Vec::new();
    for (c, class) in net.classes.iter().enumerate() {
        if !completes(net, c) {
            continue;
        }
        let x = m.complete[c];
        let subject = Subject::Class(&class.name);
        add(a, subject.metric(Figure::Throughput), x);
        if switching {
            continue;
        }
        let present: f64 = m.number.iter().map(|n| n[c]).sum();
        if leaves_early(net, c) {
            // the jobs that complete spend at most all the time jobs spend: E[T 1{done}] <=
            // E[T], so E[T | done] <= N / X over the completions
            let metric = class_metric(net, c);
            let known = a.predictions.iter().any(|p| p.exact && p.metric == metric);
            if class.kind == ClassKind::Open && !known {
                a.bounds.push(Bound {
                    metric,
                    lower: 0.0,
                    upper: present / x,
                    method: format!(
                        "{method}: jobs lost after spending time in the network, E[T | completed] <= N / X"
                    ),
                });
                means.push((subject, present / x));
            }
            continue;
        }
        match class.kind {
            ClassKind::Open => {
                add(a, class_metric(net, c), present / x);
                means.push((subject, present / x));
            }
            ClassKind::Closed {
                population,
                reference,
            } => {
                add(a, class_metric(net, c), f64::from(population) / x);
                let outside = (f64::from(population) - m.number[reference.index()][c]) / x;
                add(a, subject.metric(Figure::Response), outside);
                means.push((subject, f64::from(population) / x));
            }
        }
    }
    let (loses, abandons) = turns_away(net);
    for (c, class) in net.classes.iter().enumerate() {
        if class.kind != ClassKind::Open {
            continue;
        }
        let subject = Subject::Class(&class.name);
        if loses {
            let lost: f64 = m.lost.iter().map(|l| l[c]).sum();
            add(a, subject.metric(Figure::Loss), lost / m.arrive[c]);
        }
        if abandons {
            let gone: f64 = m.abandon.iter().map(|l| l[c]).sum();
            add(a, subject.metric(Figure::Abandon), gone / m.arrive[c]);
        }
    }
    let mut responses = vec![None; net.stations.len()];
    for (s, st) in net.stations.iter().enumerate() {
        let Some(table) = st.kind.service() else {
            continue;
        };
        let visiting: Vec<usize> = (0..net.classes.len())
            .filter(|&c| table[c].is_some())
            .collect();
        let subject = Subject::Station(&st.name);
        let sum = |g: &[Vec<f64>]| g[s].iter().sum::<f64>();
        let (x, n) = (sum(&m.depart), sum(&m.number));
        let arrivals = x + sum(&m.lost) + sum(&m.abandon);
        let timed = st.features.patience.is_none();
        let fcfs = matches!(
            st.kind,
            StationKind::Queue {
                discipline: crate::network::Discipline::Fcfs,
                ..
            }
        );
        add(a, subject.metric(Figure::Throughput), x);
        add(a, subject.metric(Figure::Number), n);
        if timed {
            add(a, subject.metric(Figure::Response), n / x);
            responses[s] = Some(n / x);
            means.push((subject, n / x));
            if fcfs {
                add(a, subject.metric(Figure::Wait), sum(&m.fresh) / x);
            }
        }
        if let StationKind::Queue { servers, .. } = st.kind {
            add(
                a,
                subject.metric(Figure::Utilisation),
                m.busy[s] / f64::from(servers),
            );
        }
        if st.features.loses() {
            add(a, subject.metric(Figure::Loss), sum(&m.lost) / arrivals);
        }
        if st.features.patience.is_some() {
            add(
                a,
                subject.metric(Figure::Abandon),
                sum(&m.abandon) / arrivals,
            );
        }
        for &c in &visiting {
            let xc = m.depart[s][c];
            let response = m.number[s][c] / xc;
            if completes(net, c) {
                let per = station_class_subject(net, s, c);
                let visits = xc / m.complete[c];
                add(a, per.metric(Figure::Visits), visits);
                if timed {
                    add(a, per.metric(Figure::Residence), visits * response);
                }
            }
            if visiting.len() > 1 {
                let per = Subject::StationClass(&st.name, &net.classes[c].name);
                add(a, per.metric(Figure::Throughput), xc);
                add(a, per.metric(Figure::Number), m.number[s][c]);
                if timed {
                    add(a, per.metric(Figure::Response), response);
                    if fcfs {
                        add(a, per.metric(Figure::Wait), m.fresh[s][c] / xc);
                    }
                }
            }
        }
    }
    for path in &net.paths {
        let total: Option<f64> = path.stations.iter().map(|s| responses[s.index()]).sum();
        if let Some(total) = total {
            add(a, Subject::Path(&path.name).metric(Figure::Response), total);
        }
    }
    percentile_bounds(a, &means, &method);
}

/// Bounds on the percentiles of each time of `means` (subject, exact mean or a bound above it) that no method
/// predicted or bounded yet: at least 0, and, by Markov's inequality `P(T > t) <= E[T] / t`,
/// the `p`-quantile at most `E[T] / (1 - p)`.
fn percentile_bounds(a: &mut Analysis, means: &[(Subject<'_>, f64)], method: &str) {
    for &(subject, mean) in means {
        for (figure, (_, p)) in Figure::PERCENTILES.into_iter().zip(PERCENTILES) {
            let metric = subject.metric(figure);
            let known = a.predictions.iter().any(|x| x.metric == metric)
                || a.bounds.iter().any(|b| b.metric == metric);
            let upper = mean / (1.0 - p);
            if !known && upper.is_finite() {
                a.bounds.push(Bound {
                    metric,
                    lower: 0.0,
                    upper,
                    method: format!("{method}: Markov's inequality, p-quantile <= E[T] / (1 - p)"),
                });
            }
        }
    }
}
