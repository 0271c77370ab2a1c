//! Open single-class networks whose stations lose the jobs that find them full: each station
//! solved alone with Poisson arrivals at the flow that reaches it, thinned by the losses
//! upstream, to a fixed point. An approximation (the flows between stations are not Poisson,
//! and a loss downstream does not make them so).

use super::blocking::percentiles;
use super::featured::finite;
use super::{Analysis, service_stations};
use crate::analytic::{StationMetrics, mg1, mmc, mminf};
use crate::metrics::name::{Figure, Subject};
use crate::network::{
    ClassId, ClassKind, Discipline, Network, Routing, StationId, StationKind, Target,
};

/// The label of the decomposition's predictions.
pub(super) const METHOD: &str = "loss decomposition (each station alone, Poisson arrivals thinned by the losses upstream, to a fixed point), an approximation";

/// The label of the percentiles built on its means.
const PERCENTILE_METHOD: &str = "gamma laws with the loss decomposition's means (exponential per visit; a route's SCV from independent visits), an approximation";

/// Passes of the fixed point allowed.
const MAX_PASSES: u32 = 100_000;

/// True when `net` has one open class, several service stations, some that lose when full,
/// and no feature but capacities that lose.
pub(super) fn applies(net: &Network) -> bool {
    net.classes.len() == 1
        && net.classes[0].kind == ClassKind::Open
        && service_stations(net).count() > 1
        && net.stations.iter().any(|s| s.features.loses())
        && net.stations.iter().all(|s| {
            let f = &s.features;
            f.priority.is_none()
                && f.patience.is_none()
                && f.rate_by_jobs.is_none()
                && f.batch.is_none()
                && (f.capacity.is_none() || f.loses())
        })
}

/// The means of one station under the decomposition.
struct Solved {
    loss: f64,
    response: f64,
    wait: Option<f64>,
    number: f64,
    utilisation: Option<f64>,
}

/// Solves station `s` alone under Poisson arrivals at `lambda`.
fn solve(net: &Network, s: usize, lambda: f64) -> Result<Solved, String> {
    let st = &net.stations[s];
    let d = st
        .kind
        .service()
        .and_then(|t| t[0].as_ref())
        .ok_or_else(|| format!("station {:?} serves nobody", st.name))?;
    if let Some(k) = st.features.capacity {
        let (method, m) = finite(st, d, lambda, k.jobs)?;
        let m = m.map_err(|e| format!("{method} at station {:?}: {e}", st.name))?;
        return Ok(Solved {
            loss: m.loss_probability,
            response: m.mean_response,
            wait: Some(m.mean_wait),
            number: m.mean_number,
            utilisation: Some(m.utilisation),
        });
    }
    let m: StationMetrics = match &st.kind {
        StationKind::Delay { .. } => mminf(lambda, d.mean()),
        StationKind::Queue {
            discipline: Discipline::Ps,
            ..
        } => mg1(lambda, d.mean(), 1.0),
        StationKind::Queue { servers, .. } if d.is_exponential() => mmc(lambda, d.mean(), *servers),
        StationKind::Queue { servers: 1, .. } => mg1(lambda, d.mean(), d.scv()),
        _ => {
            return Err(format!(
                "station {:?} has several servers and a non-exponential service: no formula for it alone",
                st.name
            ));
        }
    }
    .map_err(|e| format!("station {:?}: {e}", st.name))?;
    Ok(Solved {
        loss: 0.0,
        response: m.mean_response,
        wait: Some(m.mean_wait),
        number: m.mean_number,
        utilisation: m.utilisation,
    })
}

/// The routing of the open class from station `from`: (target station or exit, probability).
fn branches(net: &Network, from: usize) -> Vec<(Option<usize>, f64)> {
    let rule = net.routing.rule(ClassId(0), StationId(from as u32));
    Routing::branch_probabilities(rule, &net.groups)
        .into_iter()
        .map(|(t, p)| match t {
            Target::Station(to, _)
                if matches!(net.stations[to.index()].kind, StationKind::Sink) =>
            {
                (None, p)
            }
            Target::Station(to, _) => (Some(to.index()), p),
            Target::Exit => (None, p),
        })
        .collect()
}

/// The loss decomposition of a one-class open network whose stations may lose (`v` the
/// flows of the traffic equations without losses). A completed job's response adds each
/// station's response times its visits per job without losses (the route of a job that is
/// not lost).
pub(super) fn open_loss(net: &Network, v: &[Vec<f64>], a: &mut Analysis) -> Result<(), String> {
    let n = net.stations.len();
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    let mut external = vec![0.0; n];
    let mut offered = 0.0;
    for (s, st) in net.stations.iter().enumerate() {
        if let StationKind::Source { interarrival, .. } = &st.kind {
            let rate = 1.0 / interarrival.mean();
            offered += rate;
            for (to, p) in branches(net, s) {
                if let Some(to) = to {
                    external[to] += rate * p;
                }
            }
        }
    }
    let mut lambda = external.clone();
    let mut solved: Vec<Option<Solved>> = (0..n).map(|_| None).collect();
    let mut passes = 0;
    loop {
        for &s in &served {
            solved[s] = Some(solve(net, s, lambda[s])?);
        }
        let mut next = external.clone();
        for &s in &served {
            let carried = lambda[s] * (1.0 - solved[s].as_ref().map_or(0.0, |m| m.loss));
            for (to, p) in branches(net, s) {
                if let Some(to) = to {
                    next[to] += carried * p;
                }
            }
        }
        let moved = next
            .iter()
            .zip(&lambda)
            .map(|(x, y)| (x - y).abs() / y.max(1e-300))
            .fold(0.0, f64::max);
        lambda = next;
        passes += 1;
        if moved < 1e-13 {
            break;
        }
        if passes >= MAX_PASSES {
            return Err(format!(
                "the flows did not settle in {MAX_PASSES} passes (last relative change {moved:e})"
            ));
        }
    }
    for &s in &served {
        solved[s] = Some(solve(net, s, lambda[s])?);
    }
    let carried = |s: usize| lambda[s] * (1.0 - solved[s].as_ref().map_or(0.0, |m| m.loss));
    let completed: f64 = served
        .iter()
        .map(|&s| {
            let exits: f64 = branches(net, s)
                .iter()
                .filter(|(to, _)| to.is_none())
                .map(|(_, p)| p)
                .sum();
            carried(s) * exits
        })
        .sum();
    if completed <= 0.0 {
        return Err("no job completes: every one is lost".to_owned());
    }
    let add = |a: &mut Analysis, metric: String, value: f64| a.add(metric, value, METHOD, false);
    let class = Subject::Class(&net.classes[0].name);
    let mut response = 0.0;
    let mut second = 0.0;
    for &s in &served {
        let m = solved[s].as_ref().expect("solved above");
        let st = &net.stations[s];
        let station = Subject::Station(&st.name);
        let visits = carried(s) / completed;
        let route = v[0][s] / offered;
        response += route * m.response;
        second += (route * m.response).powi(2);
        add(a, station.metric(Figure::Response), m.response);
        add(a, station.metric(Figure::Number), m.number);
        add(a, station.metric(Figure::Throughput), carried(s));
        add(a, station.metric(Figure::Visits), visits);
        add(a, station.metric(Figure::Residence), visits * m.response);
        if let StationKind::Queue { discipline, .. } = &st.kind {
            if let (Discipline::Fcfs, Some(w)) = (discipline, m.wait) {
                add(a, station.metric(Figure::Wait), w);
            }
            if let Some(u) = m.utilisation {
                add(a, station.metric(Figure::Utilisation), u);
            }
        }
        if st.features.loses() {
            add(a, station.metric(Figure::Loss), m.loss);
        }
        percentiles(a, station, m.response, 1.0, PERCENTILE_METHOD);
    }
    add(a, class.metric(Figure::Response), response);
    add(a, class.metric(Figure::Throughput), completed);
    add(a, class.metric(Figure::Loss), 1.0 - completed / offered);
    percentiles(
        a,
        class,
        response,
        second / (response * response),
        PERCENTILE_METHOD,
    );
    Ok(())
}
