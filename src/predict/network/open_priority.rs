//! Open networks of several stations with priority levels, by decomposition: each station is
//! solved alone, its arrivals of each class taken as Poisson streams at the rates of the
//! traffic equations: an FCFS station by Cobham's formulas (one server, any service law; a
//! station without priorities as one level, the Pollaczek-Khinchine mean of several classes) or
//! M/M/c (non-preemptive, equal exponential services), a PS station by `E[S_c] / (1 - rho)`, a
//! delay by its service time; a class's response end to end is the sum over its visits.
//!
//! A station fed straight from Poisson sources only is the queue its formula solves: its
//! figures are exact. The others, and the classes' responses end to end when some station is
//! fed by another, are labelled approximations: a priority queue's departures are not Poisson
//! and a job's times at successive stations are correlated (Bolch, Greiner, de Meer, Trivedi, *Queueing Networks and Markov Chains*, 2nd ed.,
//! section 10.1, decomposition of non-product-form networks).

use super::blocking::percentiles;
use super::featured::{ClassAtStation, add_station, service, solve_fcfs};
use super::{Analysis, service_stations, short};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::class_metric;
use crate::network::estimates::arrival_rate;
use crate::network::{
    ClassId, ClassKind, Discipline, Network, Routing, StationId, StationKind, Target,
};

/// The label of the percentiles built on the decomposition's means.
const PERCENTILE_METHOD: &str = "gamma laws with the Poisson decomposition's means (exponential per visit; a class's SCV from independent visits, their counts taken as fixed), an approximation";

/// The method's name.
pub(super) const METHOD: &str =
    "Poisson decomposition (each station alone: Cobham's priority formulas, M/M/c, PS, delay)";

/// Whether the decomposition is the method for `net`: every class open, some station with
/// priority levels, several service stations, and no feature but priorities (no fork).
pub(super) fn applies(net: &Network) -> bool {
    let open = net.classes.iter().all(|c| c.kind == ClassKind::Open);
    let only_priorities = net.stations.iter().all(|st| {
        let f = &st.features;
        f.capacity.is_none()
            && f.patience.is_none()
            && f.rate_by_jobs.is_none()
            && f.batch.is_none()
    });
    let prioritised = net.stations.iter().any(|st| st.features.priority.is_some());
    let forks = net
        .stations
        .iter()
        .any(|st| matches!(st.kind, StationKind::Fork { .. } | StationKind::Join { .. }));
    open && only_priorities && prioritised && !forks && service_stations(net).count() > 1
}

/// Adds the decomposition's predictions of `net` (`v` from the traffic equations: class `c`'s
/// visits to station `s` per unit time), or says why a station cannot be solved alone.
pub(super) fn open_priorities(
    net: &Network,
    v: &[Vec<f64>],
    a: &mut Analysis,
) -> Result<(), String> {
    let (sources, fed) = breaks(net);
    let rates: Vec<f64> = (0..net.classes.len())
        .map(|c| arrival_rate(net, c))
        .collect();
    let visits = |c: usize, s: usize| {
        if rates[c] > 0.0 {
            v[c][s] / rates[c]
        } else {
            0.0
        }
    };
    // per class: the mean end to end, and the variance of independent exponential visits
    let mut response = vec![0.0; net.classes.len()];
    let mut variance = vec![0.0; net.classes.len()];
    for (s, st) in service_stations(net) {
        let visiting: Vec<usize> = (0..net.classes.len())
            .filter(|&c| service(st, c).is_some() && v[c][s] > 0.0)
            .collect();
        if visiting.is_empty() {
            continue;
        }
        let (per_class, utilisation) = match &st.kind {
            StationKind::Delay { .. } => {
                let per: Vec<ClassAtStation> = visiting
                    .iter()
                    .map(|&c| {
                        let mean = service(st, c).expect("visiting").mean();
                        (c, v[c][s], visits(c, s), mean, 0.0)
                    })
                    .collect();
                (per, 0.0)
            }
            StationKind::Queue {
                discipline: Discipline::Ps,
                servers,
                ..
            } => {
                let rho: f64 = visiting
                    .iter()
                    .map(|&c| v[c][s] * service(st, c).expect("visiting").mean())
                    .sum::<f64>()
                    / f64::from(*servers);
                if *servers != 1 || rho >= 1.0 {
                    return Err(format!(
                        "PS station {:?} has {servers} servers at load {}: the decomposition takes one server below saturation",
                        st.name,
                        short(rho)
                    ));
                }
                let per = visiting
                    .iter()
                    .map(|&c| {
                        let mean = service(st, c).expect("visiting").mean();
                        let r = mean / (1.0 - rho);
                        (c, v[c][s], visits(c, s), r, r - mean)
                    })
                    .collect();
                (per, rho)
            }
            _ => {
                let solved = solve_fcfs(net, s, &visiting, st.features.priority, &|c| v[c][s])?;
                (solved.per_class(&|c| visits(c, s)), solved.m.utilisation)
            }
        };
        for &(c, _, n, r, _) in &per_class {
            response[c] += n * r;
            variance[c] += n * r * r;
        }
        let (jobs, flow) = per_class
            .iter()
            .fold((0.0, 0.0), |(j, f), &(_, x, _, r, _)| (j + x * r, f + x));
        let station = Subject::Station(&st.name);
        percentiles(a, station, jobs / flow, 1.0, PERCENTILE_METHOD);
        let (method, exact) =
            crate::predict::approximation(METHOD, &breaks_of(net, &sources, &fed, &[s]));
        add_station(net, s, &per_class, utilisation, &method, exact, a);
    }
    let all: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    let (method, exact) =
        crate::predict::approximation(METHOD, &breaks_of(net, &sources, &fed, &all));
    for (c, class) in net.classes.iter().enumerate() {
        if rates[c] > 0.0 {
            a.add(class_metric(net, c), response[c], &method, exact);
            let subject = Subject::Class(&class.name);
            a.add(subject.metric(Figure::Throughput), rates[c], &method, exact);
            let scv = variance[c] / (response[c] * response[c]);
            percentiles(a, subject, response[c], scv, PERCENTILE_METHOD);
        }
    }
    Ok(())
}

/// What makes the decomposition an approximation for `net`: the sources that are not
/// Poisson, and the service stations that receive jobs another station sends on.
fn breaks(net: &Network) -> (Vec<String>, Vec<usize>) {
    let mut sources = Vec::new();
    for st in &net.stations {
        if let StationKind::Source { interarrival, .. } = &st.kind
            && !interarrival.is_exponential()
        {
            sources.push(format!(
                "source {:?} is not Poisson (inter-arrival SCV {})",
                st.name,
                short(interarrival.scv())
            ));
        }
    }
    let sends_to = |from: usize, to: usize| {
        (0..net.classes.len()).any(|c| {
            let rule = net.routing.rule(ClassId(c as u32), StationId(from as u32));
            Routing::branch_probabilities(rule, &net.groups)
                .into_iter()
                .any(|(t, p)| p > 0.0 && matches!(t, Target::Station(x, _) if x.index() == to))
        })
    };
    let fed = service_stations(net)
        .map(|(to, _)| to)
        .filter(|&to| service_stations(net).any(|(from, _)| sends_to(from, to)))
        .collect();
    (sources, fed)
}

/// The breaks of `stations`' figures: the non-Poisson `sources`, and those of `stations` that
/// other stations feed.
fn breaks_of(net: &Network, sources: &[String], fed: &[usize], stations: &[usize]) -> Vec<String> {
    let names: Vec<String> = stations
        .iter()
        .filter(|s| fed.contains(s))
        .map(|&s| format!("{:?}", net.stations[s].name))
        .collect();
    let mut out = sources.to_vec();
    if !names.is_empty() {
        out.push(format!(
            "the jobs other stations send to {} taken as Poisson arrivals",
            names.join(", ")
        ));
    }
    out
}
