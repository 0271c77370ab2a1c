//! The sojourn law of one visit at each service station.
//!
//! - A delay's sojourn is its service time, exact whatever the arrivals.
//! - Open networks: an FCFS exponential queue whose arrivals are Poisson, or any station of a
//!   Jackson network (arrivals see time averages), has the exact M/M/c sojourn law. With
//!   Poisson arrivals, a non-exponential single server gets a gamma law fitted to Takacs'
//!   moments, several servers the Allen-Cunneen wait; otherwise the wait is taken as 0 w.p.
//!   `1 - P(wait)`, else exponential around the mean wait of the network's mean-value method
//!   (QNA, Kingman), plus the service.
//! - Closed single-class product-form networks: an FCFS exponential server's sojourn is an
//!   Erlang mixture over the queue length an arriving job sees, the time-average law with one
//!   job fewer (arrival theorem), from exact MVA. Beyond product form, an exponential server
//!   keeps that law from the exact MVA of the network with the same means (labelled), and a
//!   non-exponential single FCFS server gets the waited law around the mean of MVA with the
//!   residual-service correction.

use super::{Estimate, Sojourn};
use crate::analytic::{
    Center, PhaseType, allen_cunneen, closed_queue_length, erlang_c, fcfs_exponential_sojourn, mg1,
    mg1_response_moments, mmc_sojourn, mva,
};
use crate::dist::Dist;
use crate::dist::Law;
use crate::metrics::name::{Figure, Subject};
use crate::network::{
    ClassId, ClassKind, Discipline, Network, Routing, Rule, StationId, StationKind, Target,
};
use crate::predict::network::open::arrival_problem;
use crate::predict::network::{center_kind, mean_service, product_form_problem, service_stations};
use crate::predict::{Analysis, labelled, short};

const DELAY: &str = "delay: the sojourn is the service time (any distribution, any arrivals)";
const M_M_1: &str = "M/M/1 FCFS sojourn: exponential of rate mu - lambda";
const M_M_C: &str = "M/M/c FCFS sojourn: wait 0 w.p. 1 - C(c, a), else exponential of rate c mu - lambda; plus the service";
const M_G_1: &str = "gamma fit to the first two moments (Takacs); approximation: the response of M/G/1 is not gamma";
const M_G_1_WAITED: &str = "Pollaczek-Khinchine mean wait, 0 w.p. 1 - rho, else exponential, plus the service; approximation: the M/G/1 wait given that it is positive is not exponential";
const ARRIVAL_THEOREM: &str =
    "arrival theorem: Erlang(j + 1) mixture over the queue length at population N - 1 (exact MVA)";

/// The sojourn law of a visit at every station (`None` where none is known; a refusal says
/// why for the queues).
pub(super) fn laws(net: &Network, v: &[Vec<f64>], a: &mut Analysis) -> Vec<Option<Estimate>> {
    let mut out: Vec<Option<Estimate>> = vec![None; net.stations.len()];
    for (s, _) in service_stations(net) {
        if let (StationKind::Delay { .. }, Some(d)) =
            (&net.stations[s].kind, common_service(net, s))
        {
            out[s] = Some(Estimate {
                law: Sojourn::Dist(d.clone()),
                method: DELAY.to_owned(),
                exact: true,
            });
        }
    }
    let open = net.classes.iter().all(|c| c.kind == ClassKind::Open);
    if open {
        let not_poisson = arrivals_not_poisson(net);
        for (s, st) in service_stations(net) {
            if matches!(st.kind, StationKind::Queue { .. }) {
                let lambda: f64 = v.iter().map(|per_class| per_class[s]).sum();
                out[s] = open_queue(net, s, lambda, not_poisson[s].as_deref(), a);
            }
        }
    } else if let [class] = &net.classes[..] {
        closed_queues(net, v, class.kind, &mut out, a);
    }
    out
}

/// The one service law of every class visiting `s`, if they share one (same family, mean and
/// SCV, which fix every two-parameter family; a trace only for a station with one class).
pub(super) fn common_service(net: &Network, s: usize) -> Option<&Dist> {
    let table = net.stations[s].kind.service()?;
    let mut laws = table.iter().flatten();
    let first = laws.next()?;
    let same = |d: &&Dist| {
        std::mem::discriminant(d.law()) == std::mem::discriminant(first.law())
            && !matches!(d.law(), Law::Empirical(_))
            && (d.mean() / first.mean() - 1.0).abs() < 1e-12
            && (d.scv() - first.scv()).abs() < 1e-12
    };
    laws.all(|d| same(&d)).then_some(first)
}

/// The sojourn law of open queue `s` at total arrival rate `lambda`; `not_poisson` says why its
/// arrivals are not Poisson, if they are not.
fn open_queue(
    net: &Network,
    s: usize,
    lambda: f64,
    not_poisson: Option<&str>,
    a: &mut Analysis,
) -> Option<Estimate> {
    let st = &net.stations[s];
    let StationKind::Queue {
        discipline,
        servers,
        ..
    } = &st.kind
    else {
        return None;
    };
    let Some(d) = common_service(net, s) else {
        a.refuse(
            "sojourn percentiles",
            format!("the classes at {:?} have different service laws", st.name),
        );
        return None;
    };
    let result = match (discipline, not_poisson) {
        (Discipline::Ps, _) => {
            // M/G/1-PS mean, insensitive to the service law; the law itself is not exponential.
            let mean = predicted_response(net, s, a).unwrap_or(d.mean() / (1.0 - lambda * d.mean()));
            let why = not_poisson.map_or(String::new(), |r| format!("; {r}"));
            PhaseType::exponential(1.0 / mean).map(|p| Estimate {
                law: Sojourn::Phase(p),
                method: format!(
                    "exponential with the PS mean response; approximation: the sojourn at a PS server is not exponential{why}"
                ),
                exact: false,
            })
        }
        (Discipline::Fcfs, None) if d.is_exponential() => {
            mmc_sojourn(lambda, d.mean(), *servers).map(|p| Estimate {
                law: Sojourn::Phase(p),
                method: if *servers == 1 { M_M_1 } else { M_M_C }.to_owned(),
                exact: true,
            })
        }
        (Discipline::Fcfs, None) if *servers == 1 => {
            // the same mean wait with the wait's atom at 0 (probability 1 - rho, exact) and an
            // exponential conditional wait, beside the gamma fit
            let pk = mg1(lambda, d.mean(), d.scv()).and_then(|m| waited(d, lambda, 1, m.mean_wait));
            match pk {
                Ok(law) => super::emit(
                    a,
                    Subject::Station(&st.name),
                    &Estimate {
                        law,
                        method: M_G_1_WAITED.to_owned(),
                        exact: false,
                    },
                ),
                Err(e) => a.refuse(M_G_1_WAITED, format!("{:?}: {e}", st.name)),
            }
            let moments = [d.raw_moment(1), d.raw_moment(2), d.raw_moment(3)];
            mg1_response_moments(lambda, moments)
                .and_then(|(m, second)| Sojourn::gamma_fit(m, second))
                .map(|law| Estimate {
                    law,
                    method: M_G_1.to_owned(),
                    exact: false,
                })
        }
        (Discipline::Fcfs, None) => allen_cunneen(lambda, 1.0, d.mean(), d.scv(), *servers)
            .and_then(|m| waited(d, lambda, *servers, m.mean_wait))
            .map(|law| Estimate {
                law,
                method: format!(
                    "Allen-Cunneen M/G/c mean wait, 0 w.p. 1 - C(c, a) else exponential, plus the service; approximation: the M/G/c wait is not of that form (service SCV {})",
                    short(d.scv())
                ),
                exact: false,
            }),
        (Discipline::Fcfs, Some(reason)) => {
            let Some((mean, source)) = predicted_mean(net, s, a) else {
                a.refuse(
                    "sojourn percentiles",
                    format!("no mean response predicted for {:?}", st.name),
                );
                return None;
            };
            // a mean method whose label already gives the reason is named without it
            let source = source
                .strip_suffix(&format!("; {reason}"))
                .unwrap_or(&source);
            waited(d, lambda, *servers, (mean - d.mean()).max(0.0)).map(|law| Estimate {
                law,
                method: format!(
                    "mean wait of {source}, 0 w.p. P(wait) of M/M/c, else exponential, plus the service; approximation: {reason}"
                ),
                exact: false,
            })
        }
    };
    match result {
        Ok(est) => Some(est),
        Err(e) => {
            a.refuse("sojourn percentiles", format!("{:?}: {e}", st.name));
            None
        }
    }
}

/// Service `d` plus a wait 0 with probability `1 - P(wait)` (`rho` for one server, Erlang C
/// for several), else exponential, of mean `mean_wait`.
fn waited(
    d: &Dist,
    lambda: f64,
    servers: u32,
    mean_wait: f64,
) -> Result<Sojourn, crate::analytic::AnalyticError> {
    let offered = lambda * d.mean();
    let waits = if servers == 1 {
        offered
    } else {
        erlang_c(servers, offered)?
    };
    Ok(Sojourn::Waited {
        service: d.clone(),
        waits,
        mean_wait,
    })
}

/// Methods whose mean response of a station with non-Poisson arrivals (or in a closed network
/// that is not product form) the waited law builds on, in order of preference.
const MEAN_METHODS: [&str; 4] = [
    "QNA",
    "Kingman",
    "Allen-Cunneen",
    "MVA with residual-service correction",
];

/// A single FCFS server of a closed network that is not product form (`problem`): its
/// service plus a wait 0 with probability `1 - U`, else exponential, with the mean response and
/// the utilisation of the network's mean-value method.
fn closed_waited(net: &Network, s: usize, problem: &str, a: &mut Analysis) -> Option<Estimate> {
    let st = &net.stations[s];
    let StationKind::Queue {
        discipline: Discipline::Fcfs,
        servers: 1,
        ..
    } = st.kind
    else {
        return None;
    };
    let d = common_service(net, s)?;
    let (mean, source) = predicted_mean(net, s, a)?;
    let utilisation = Subject::Station(&st.name).metric(Figure::Utilisation);
    let u = a
        .predictions
        .iter()
        .find(|p| p.metric == utilisation && p.method == source)?
        .value;
    match waited(d, u / d.mean(), 1, (mean - d.mean()).max(0.0)) {
        Ok(law) => Some(Estimate {
            law,
            method: format!(
                "mean wait of {source}, 0 w.p. 1 - U, else exponential, plus the service; approximation: {problem}"
            ),
            exact: false,
        }),
        Err(e) => {
            a.refuse("sojourn percentiles", format!("{:?}: {e}", st.name));
            None
        }
    }
}

/// The mean response predicted for station `s` (see [`preferred_prediction`]).
fn predicted_mean(net: &Network, s: usize, a: &Analysis) -> Option<(f64, String)> {
    preferred_prediction(
        a,
        &Subject::Station(&net.stations[s].name).metric(Figure::Response),
    )
}

/// The prediction of `metric` by a method for renewal arrivals (QNA, Kingman, Allen-Cunneen)
/// or MVA with the residual-service correction, or else by any method, with that method.
pub(super) fn preferred_prediction(a: &Analysis, metric: &str) -> Option<(f64, String)> {
    let candidates = || a.predictions.iter().filter(|p| p.metric == metric);
    MEAN_METHODS
        .iter()
        .find_map(|m| candidates().find(|p| p.method.starts_with(m)))
        .or_else(|| candidates().next())
        .map(|p| (p.value, p.method.clone()))
}

/// The mean response predicted for station `s`, if any.
fn predicted_response(net: &Network, s: usize, a: &Analysis) -> Option<f64> {
    predicted_mean(net, s, a).map(|(m, _)| m)
}

/// The sojourn laws of the queues of a closed single-class network: exact by the arrival
/// theorem at FCFS exponential single servers when the network is product form.
fn closed_queues(
    net: &Network,
    v: &[Vec<f64>],
    kind: ClassKind,
    out: &mut [Option<Estimate>],
    a: &mut Analysis,
) {
    let ClassKind::Closed { population, .. } = kind else {
        return;
    };
    if let Some(fork) = net
        .stations
        .iter()
        .find(|st| matches!(st.kind, StationKind::Fork { .. }))
    {
        let problem = format!(
            "fork {:?} makes a closed fork-join, not product form",
            fork.name
        );
        a.refuse(ARRIVAL_THEOREM, format!("not product form: {problem}"));
        for (s, _) in service_stations(net) {
            if out[s].is_none() {
                out[s] = closed_waited(net, s, &problem, a);
            }
        }
        return;
    }
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    let problem = served.iter().find_map(|&s| product_form_problem(net, s));
    let centers: Vec<Center> = served
        .iter()
        .map(|&s| Center {
            kind: center_kind(&net.stations[s]),
            demand: v[0][s] * mean_service(&net.stations[s], 0),
        })
        .collect();
    let sol = match mva(&centers, population) {
        Ok(sol) => sol,
        Err(e) => {
            a.refuse(ARRIVAL_THEOREM, e.to_string());
            return;
        }
    };
    let before: Vec<f64> = sol
        .levels()
        .iter()
        .take(population as usize - 1)
        .map(|l| l.throughput)
        .collect();
    // beyond product form, the exact MVA of the network with the same means
    let (theorem, exact) = labelled(ARRIVAL_THEOREM, true, problem.as_deref());
    for (k, &s) in served.iter().enumerate() {
        let st = &net.stations[s];
        let s_mean = mean_service(st, 0);
        let exponential = common_service(net, s).is_some_and(Dist::is_exponential);
        let est = match &st.kind {
            StationKind::Queue {
                discipline: Discipline::Fcfs,
                servers: 1,
                ..
            } if exponential => closed_queue_length(&before, centers[k].demand)
                .and_then(|ahead| fcfs_exponential_sojourn(&ahead, s_mean))
                .map(|p| Estimate {
                    law: Sojourn::Phase(p),
                    method: theorem.clone(),
                    exact,
                }),
            StationKind::Queue {
                discipline: Discipline::Fcfs,
                servers: 1,
                ..
            } => {
                let problem = problem.as_deref().unwrap_or("not exponential");
                out[s] = closed_waited(net, s, problem, a);
                continue;
            }
            StationKind::Queue {
                discipline: Discipline::Ps,
                ..
            } if v[0][s] > 0.0 => {
                let mean = sol.full().residence[k] / v[0][s];
                let why = problem
                    .as_deref()
                    .map_or(String::new(), |p| format!("; {p}"));
                PhaseType::exponential(1.0 / mean).map(|p| Estimate {
                    law: Sojourn::Phase(p),
                    method: format!("exponential with the MVA mean; approximation: the sojourn at a PS server is not exponential{why}"),
                    exact: false,
                })
            }
            StationKind::Queue { .. } => {
                a.refuse(
                    ARRIVAL_THEOREM,
                    format!("{:?} has several servers", st.name),
                );
                continue;
            }
            _ => continue,
        };
        match est {
            Ok(e) => out[s] = Some(e),
            Err(e) => a.refuse(ARRIVAL_THEOREM, format!("{:?}: {e}", st.name)),
        }
    }
}

/// Why the arrivals at each station of an open network are not Poisson (`None` where they
/// are). In a Jackson network every station's arrivals see time averages, which is all the
/// sojourn laws need, so none is reported; otherwise a station's arrivals are Poisson when its
/// only inputs are Poisson sources and the outputs of stations with Poisson input that keep a
/// stream Poisson (delays, FCFS exponential queues by Burke's theorem, forks to distinct
/// branches, joins of delay branches), split at random, without feedback, and without merging two streams inside a
/// fork-join.
fn arrivals_not_poisson(net: &Network) -> Vec<Option<String>> {
    let n = net.stations.len();
    let has_fork = net
        .stations
        .iter()
        .any(|st| matches!(st.kind, StationKind::Fork { .. }));
    let state_dependent = state_dependent_routing(net);
    let jackson = !has_fork
        && state_dependent.is_none()
        && arrival_problem(net).is_none()
        && service_stations(net).all(|(s, _)| product_form_problem(net, s).is_none());
    if jackson {
        return vec![None; n];
    }
    let preds = predecessors(net);
    let mut memo: Vec<Option<bool>> = vec![None; n];
    let mut visiting = vec![false; n];
    (0..n)
        .map(|s| {
            if let Some(r) = &state_dependent {
                return Some(r.clone());
            }
            let poisson = poisson_in(net, &preds, has_fork, s, &mut memo, &mut visiting);
            (!poisson).then(|| {
                arrival_problem(net).unwrap_or_else(|| {
                    format!(
                        "the arrivals at {:?} are not Poisson (they pass a non-exponential queue, a join of queues, or feedback, or come in batches from a fork's copies)",
                        net.stations[s].name
                    )
                })
            })
        })
        .collect()
}

/// The first routing rule that is not a random split (shortest queue, round robin), as a
/// reason.
fn state_dependent_routing(net: &Network) -> Option<String> {
    (0..net.classes.len()).find_map(|c| {
        (0..net.stations.len()).find_map(|s| {
            match net.routing.rule(ClassId(c as u32), StationId(s as u32)) {
                Rule::ShortestQueue { .. } | Rule::RoundRobin { .. } => Some(format!(
                    "{:?} routes by shortest queue or round robin, not at random",
                    net.stations[s].name
                )),
                _ => None,
            }
        })
    })
}

/// The stations each station receives jobs from (any class; a fork's branches from the fork).
fn predecessors(net: &Network) -> Vec<Vec<usize>> {
    let mut preds = vec![Vec::new(); net.stations.len()];
    for (t, st) in net.stations.iter().enumerate() {
        if let StationKind::Fork { branches } = &st.kind {
            for b in branches {
                preds[b.index()].push(t);
            }
        }
        for c in 0..net.classes.len() {
            let rule = net.routing.rule(ClassId(c as u32), StationId(t as u32));
            for (target, p) in Routing::branch_probabilities(rule, &net.groups) {
                if let Target::Station(to, _) = target
                    && p > 0.0
                {
                    preds[to.index()].push(t);
                }
            }
        }
    }
    for p in &mut preds {
        p.sort_unstable();
        p.dedup();
    }
    preds
}

/// True when the arrivals at `s` are Poisson (see [`arrivals_not_poisson`]); a station met
/// again while its inputs are being examined is on a cycle (feedback): not Poisson.
fn poisson_in(
    net: &Network,
    preds: &[Vec<usize>],
    has_fork: bool,
    s: usize,
    memo: &mut [Option<bool>],
    visiting: &mut [bool],
) -> bool {
    if let Some(known) = memo[s] {
        return known;
    }
    if visiting[s] {
        return false;
    }
    visiting[s] = true;
    let merged_in_fork_join = has_fork && preds[s].len() > 1;
    let result = !preds[s].is_empty()
        && !merged_in_fork_join
        && preds[s]
            .iter()
            .all(|&t| poisson_out(net, preds, has_fork, t, memo, visiting));
    visiting[s] = false;
    memo[s] = Some(result);
    result
}

/// True when the stream leaving `t` is Poisson.
fn poisson_out(
    net: &Network,
    preds: &[Vec<usize>],
    has_fork: bool,
    t: usize,
    memo: &mut [Option<bool>],
    visiting: &mut [bool],
) -> bool {
    let mut input = |s| poisson_in(net, preds, has_fork, s, memo, visiting);
    match &net.stations[t].kind {
        StationKind::Source { interarrival, .. } => interarrival.is_exponential(),
        StationKind::Delay { .. } => input(t),
        // (a fork's copies reach one station together: a batch, not a Poisson stream)
        StationKind::Fork { branches } => {
            branches
                .iter()
                .enumerate()
                .all(|(k, b)| !branches[..k].contains(b))
                && input(t)
        }
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            service,
            ..
        } => service.iter().flatten().all(Dist::is_exponential) && input(t),
        StationKind::Queue { .. } | StationKind::Sink => false,
        StationKind::Join { fork } => {
            let StationKind::Fork { branches } = &net.station(*fork).kind else {
                return false;
            };
            branches
                .iter()
                .all(|b| matches!(net.station(*b).kind, StationKind::Delay { .. }))
                && input(fork.index())
        }
    }
}
