//! Closed multiclass networks with priority stations: Sevcik's shadow servers, an
//! approximation whose error the simulation shows.

use super::blocking::percentiles;
use super::{Analysis, closed_inputs, mean_service, product_form_problem, service_stations};
use crate::analytic::shadow_server;
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::{class_metric, station_class_subject, visiting};
use crate::network::{ClassKind, Network, Preemption, StationKind};

/// The label of the shadow servers' predictions.
const METHOD: &str = "Sevcik's shadow servers (a server per priority level, slowed by the more urgent levels' load), an approximation";

/// The label of the percentiles built on the shadow servers' means.
const PERCENTILE_METHOD: &str = "gamma laws with the shadow servers' means (exponential per visit; a cycle's SCV from independent visits), an approximation";

/// True when `net` is closed, has several classes, and some station orders them by priority.
pub(super) fn applies(net: &Network) -> bool {
    net.classes.len() > 1
        && net.classes.iter().all(|c| c.kind != ClassKind::Open)
        && net.stations.iter().any(|s| s.features.priority.is_some())
}

/// Sevcik's shadow servers for a closed multiclass network whose priority stations are
/// one-server FCFS queues with exponential service and no other feature, every other station
/// product form (`v` the visits per cycle).
pub(super) fn closed_priorities(
    net: &Network,
    v: &[Vec<f64>],
    a: &mut Analysis,
) -> Result<(), String> {
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    let classes = net.classes.len();
    let mut levels = Vec::new();
    let mut non_preemptive = None;
    for &s in &served {
        let st = &net.stations[s];
        let f = &st.features;
        if f.capacity.is_some() || f.patience.is_some() || f.rate_by_jobs.is_some() {
            return Err(format!(
                "the shadow servers take priorities and nothing else; station {:?} has more",
                st.name
            ));
        }
        match f.priority {
            None => {
                if let Some(problem) = product_form_problem(net, s) {
                    return Err(format!(
                        "the other stations must be product form: {problem}"
                    ));
                }
                levels.push(None);
            }
            Some(p) => {
                let one_exponential_server =
                    matches!(st.kind, StationKind::Queue { servers: 1, .. })
                        && (0..classes).all(|c| {
                            st.kind
                                .service()
                                .and_then(|t| t[c].as_ref())
                                .is_none_or(|d| d.is_exponential())
                        });
                if !one_exponential_server {
                    return Err(format!(
                        "the shadow servers take one-server priority stations with exponential service; station {:?} is not one",
                        st.name
                    ));
                }
                if p == Preemption::NonPreemptive {
                    non_preemptive = Some(st.name.as_str());
                }
                let mut ordered: Vec<i32> = net.classes.iter().map(|c| c.priority).collect();
                ordered.sort_unstable();
                ordered.dedup();
                levels.push(Some(
                    net.classes
                        .iter()
                        .map(|c| ordered.binary_search(&c.priority).unwrap_or(0) as u32)
                        .collect(),
                ));
            }
        }
    }
    let (kinds, demands, populations) = closed_inputs(net, v, &served);
    let method = match non_preemptive {
        None => METHOD.to_owned(),
        Some(name) => format!(
            "{METHOD}; station {name:?} is non-preemptive, served here as preemptive-resume"
        ),
    };
    let sol = shadow_server(&kinds, &demands, &populations, &levels)
        .map_err(|e| format!("shadow servers: {e}"))?;
    let add = |a: &mut Analysis, metric: String, value: f64| a.add(metric, value, &method, false);
    for (c, class) in net.classes.iter().enumerate() {
        let name = Subject::Class(&class.name);
        let cycle = sol.response_time[c];
        add(a, class_metric(net, c), cycle);
        add(a, name.metric(Figure::Throughput), sol.throughput[c]);
        if let ClassKind::Closed { reference, .. } = class.kind
            && let Some(k) = served.iter().position(|&s| s == reference.index())
        {
            add(
                a,
                name.metric(Figure::Response),
                cycle - sol.residence[c][k],
            );
        }
        let second: f64 = sol.residence[c].iter().map(|r| r * r).sum();
        percentiles(a, name, cycle, second / (cycle * cycle), PERCENTILE_METHOD);
    }
    for (k, &s) in served.iter().enumerate() {
        let st = &net.stations[s];
        let station = Subject::Station(&st.name);
        let visitors = visiting(net, s);
        let delay = matches!(st.kind, StationKind::Delay { .. });
        let (mut jobs, mut flow, mut waiting) = (0.0, 0.0, 0.0);
        for &c in &visitors {
            let visits = v[c][s];
            if visits <= 0.0 {
                continue;
            }
            let subject = station_class_subject(net, s, c);
            let through = sol.throughput[c] * visits;
            let response = sol.residence[c][k] / visits;
            let service = mean_service(st, c);
            // to the first start of service: at a preemptive station a service stretched by
            // the more urgent levels lasts S / (1 - U_more urgent)
            let stretch = match &levels[k] {
                Some(l) if non_preemptive.is_none_or(|n| n != st.name) => {
                    let urgent: f64 = (0..net.classes.len())
                        .filter(|&o| l[o] < l[c])
                        .map(|o| sol.throughput[o] * demands[o][k])
                        .sum();
                    1.0 / (1.0 - urgent)
                }
                _ => 1.0,
            };
            let wait = (response - service * stretch).max(0.0);
            jobs += sol.queue_length[c][k];
            flow += through;
            waiting += through * wait;
            if visitors.len() > 1 {
                add(a, subject.metric(Figure::Response), response);
                add(a, subject.metric(Figure::Throughput), through);
                add(a, subject.metric(Figure::Number), sol.queue_length[c][k]);
                if !delay {
                    add(a, subject.metric(Figure::Wait), wait);
                }
            }
            add(a, subject.metric(Figure::Visits), visits);
            add(a, subject.metric(Figure::Residence), sol.residence[c][k]);
        }
        if flow > 0.0 {
            add(a, station.metric(Figure::Response), jobs / flow);
            add(a, station.metric(Figure::Throughput), flow);
            add(a, station.metric(Figure::Number), jobs);
            if !delay {
                add(a, station.metric(Figure::Wait), waiting / flow);
            }
            percentiles(a, station, jobs / flow, 1.0, PERCENTILE_METHOD);
        }
        if let Some(u) = sol.utilisation[k] {
            add(a, station.metric(Figure::Utilisation), u);
        }
    }
    Ok(())
}
