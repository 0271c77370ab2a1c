//! Analytic predictions for a queueing [`Network`]: which closed forms apply, their values
//! under the simulator's metric names, and, for those that do not apply, why.
//!
//! This is the bridge between the network IR and the formula library in [`crate::analytic`]:
//! what holds for any distribution in `laws`, open networks in `open`, closed ones in `closed`,
//! fork-join networks in `forkjoin` (open) and `closed_forkjoin`. Where an exact method's assumptions fail, it is still
//! computed and labelled with the assumption that breaks.

use super::{Analysis, Bottleneck, Bound, StationDemand, labelled, short};
use crate::analytic::CenterKind;
use crate::dist::Dist;
use crate::network::{ClassKind, Discipline, Network, StationKind, visits};

mod blocking;
mod closed;
mod closed_forkjoin;
mod derived;
mod featured;
mod forkjoin;
mod laws;
mod loss_network;
mod markov;
mod matrix_analytic;
mod mixed;
mod open;
mod open_priority;
mod percentiles;
mod shadow;

/// Analyses `net` with every method that might apply.
///
/// What holds for any distribution comes first: visits, demands and bottlenecks
/// ([`Analysis::demands`], [`Analysis::bottlenecks`]), flow balance and the utilisation law of
/// open networks, asymptotic bounds with the forced-flow law for closed ones. An exact method
/// whose assumptions fail is still computed, as an approximation whose method label says which
/// assumption breaks (`exact MVA; FCFS station "disk" has SCV 0, not exponential`); a method is
/// refused only when it cannot be computed at all.
pub fn analyze(net: &Network) -> Analysis {
    let mut a = Analysis::default();
    let v = match visits(net) {
        Ok(v) => v,
        Err(e) => {
            a.refuse("traffic equations", e.to_string());
            return a;
        }
    };
    if let Some(reason) = featured::problem(net) {
        featured::analyze(net, &v, &reason, &mut a);
        markov::analyze(net, &v, &mut a);
        return a;
    }
    laws::demands(net, &v, &mut a);
    let has_fork = net
        .stations
        .iter()
        .any(|s| matches!(s.kind, StationKind::Fork { .. }));
    let open = net.classes.iter().all(|c| c.kind == ClassKind::Open);
    let closed = net.classes.iter().all(|c| c.kind != ClassKind::Open);
    if open {
        laws::open_utilisation(net, &v, &mut a);
    }
    if has_fork && closed && net.classes.len() == 1 {
        closed_forkjoin::closed_fork_join(net, &v, &mut a);
    } else if has_fork {
        forkjoin::fork_join(net, &mut a);
    } else if open {
        open::open_network(net, &v, &mut a);
    } else if closed {
        closed::closed_network(net, &v, &mut a);
    } else {
        mixed::mixed_network(net, &v, &mut a);
    }
    derived::add(net, &v, &mut a);
    percentiles::add(net, &v, &mut a);
    markov::analyze_markovian(net, &v, &mut a);
    a
}

/// Service stations (delay or queue) with their index.
fn service_stations(net: &Network) -> impl Iterator<Item = (usize, &crate::network::Station)> {
    net.stations
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind.service().is_some())
}

/// A closed network's inputs to the MVA solvers at its `served` stations: the centres' kinds,
/// each class's demands (visits per cycle `v` times mean service) and populations (0 for an
/// open class).
fn closed_inputs(
    net: &Network,
    v: &[Vec<f64>],
    served: &[usize],
) -> (Vec<CenterKind>, Vec<Vec<f64>>, Vec<u32>) {
    let kinds = served
        .iter()
        .map(|&s| center_kind(&net.stations[s]))
        .collect();
    let demands = (0..net.classes.len())
        .map(|c| {
            served
                .iter()
                .map(|&s| v[c][s] * mean_service(&net.stations[s], c))
                .collect()
        })
        .collect();
    let populations = net
        .classes
        .iter()
        .map(|c| match c.kind {
            ClassKind::Closed { population, .. } => population,
            ClassKind::Open => 0,
        })
        .collect();
    (kinds, demands, populations)
}

/// The per-class service distributions of `st` if it is an FCFS queue.
fn fcfs_services(st: &crate::network::Station) -> Option<&[Option<Dist>]> {
    match &st.kind {
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            service,
            ..
        } => Some(service),
        _ => None,
    }
}

/// The first non-exponential service distribution of FCFS station `s`, with the reason it
/// breaks product form.
fn non_exponential_fcfs(net: &Network, s: usize) -> Option<(&Dist, String)> {
    let st = &net.stations[s];
    let d = fcfs_services(st)?
        .iter()
        .flatten()
        .find(|d| !d.is_exponential())?;
    Some((
        d,
        format!(
            "FCFS station {:?} has SCV {}, not exponential",
            st.name,
            short(d.scv())
        ),
    ))
}

/// The reason a station breaks product form, if it does: an FCFS station with non-exponential
/// service, or one whose classes have different mean service times (the BCMP conditions).
fn product_form_problem(net: &Network, s: usize) -> Option<String> {
    if let Some((_, reason)) = non_exponential_fcfs(net, s) {
        return Some(reason);
    }
    let st = &net.stations[s];
    let service = fcfs_services(st)?;
    let visiting: Vec<(&str, f64)> = service
        .iter()
        .zip(&net.classes)
        .filter_map(|(d, c)| d.as_ref().map(|d| (c.name.as_str(), d.mean())))
        .collect();
    let (first, m0) = visiting.first()?;
    visiting.iter().find(|(_, m)| (m / m0 - 1.0).abs() > 1e-9).map(|(other, m)| {
        format!(
            "FCFS station {:?} serves class {first:?} with mean {} and class {other:?} with mean {}, not one mean for all classes",
            st.name,
            short(*m0),
            short(*m)
        )
    })
}

/// The SCV of class `class`'s service time at `st` (1 where it has none).
fn service_scv(st: &crate::network::Station, class: usize) -> f64 {
    st.kind
        .service()
        .and_then(|t| t[class].as_ref())
        .map_or(1.0, Dist::scv)
}

fn center_kind(st: &crate::network::Station) -> CenterKind {
    match &st.kind {
        StationKind::Queue {
            discipline: Discipline::Ps,
            ..
        } => CenterKind::ProcessorSharing,
        StationKind::Queue { servers: 1, .. } => CenterKind::Queue,
        StationKind::Queue { servers, .. } => CenterKind::MultiServer(*servers),
        _ => CenterKind::Delay,
    }
}

fn mean_service(st: &crate::network::Station, class: usize) -> f64 {
    st.kind
        .service()
        .and_then(|t| t[class].as_ref())
        .map_or(0.0, Dist::mean)
}
