//! One open FCFS station fed straight from one source, where the arrivals are not Poisson but
//! the exact solution exists: GI/M/c (renewal arrivals with a known Laplace transform,
//! exponential service) by the root of `sigma = A*(c mu (1 - sigma))`, MAP/PH/1 (a Markovian
//! arrival process or phase-type renewal arrivals, phase-type service) and MAP/M/c by their
//! quasi-birth-death chains. Means and response percentiles, labelled exact.

use super::{Analysis, short};
use crate::analytic::mam::{Map, Ph, gim1, map_mc, map_ph1, map_ph1_wait};
use crate::analytic::{PhaseType, Result, StationMetrics};
use crate::dist::{Dist, Law};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::class_metric;
use crate::network::{Discipline, Network, StationKind};
use crate::stats::PERCENTILES;

/// The law as phase type, for the families that are (exponential, Erlang up to 64 phases,
/// H2, `ph`); `None` for the others.
pub(super) fn phase_type(d: &Dist) -> Option<Ph> {
    match d.law() {
        Law::Exponential { mean } => Ph::exponential(1.0 / mean).ok(),
        Law::Erlang { k, mean } if *k <= 64 => Ph::erlang(*k as usize, f64::from(*k) / mean).ok(),
        Law::HyperExp { p1, mean1, mean2 } => Ph::new(
            vec![*p1, 1.0 - p1],
            vec![vec![-1.0 / mean1, 0.0], vec![0.0, -1.0 / mean2]],
        )
        .ok(),
        Law::PhaseType(ph) => Some(ph.ph().clone()),
        _ => None,
    }
}

/// Adds the exact solution of station `s`, the only one of a one-class open network, fed by
/// its one source at rate `lambda`, when one of the solvers of this module applies and the
/// Poisson formulas do not already give it.
pub(super) fn single_station(net: &Network, s: usize, lambda: f64, a: &mut Analysis) {
    let st = &net.stations[s];
    let StationKind::Queue {
        discipline: Discipline::Fcfs,
        servers,
        service,
    } = &st.kind
    else {
        return;
    };
    let Some(service) = service.first().and_then(Option::as_ref) else {
        return;
    };
    let mut sources = net.stations.iter().filter_map(|x| match &x.kind {
        StationKind::Source { interarrival, .. } => Some(interarrival),
        _ => None,
    });
    let (Some(arrivals), None) = (sources.next(), sources.next()) else {
        return;
    };
    if arrivals.is_exponential() || arrivals.is_replay() {
        return;
    }
    let servers = *servers;
    let mu = 1.0 / service.mean();
    let exp_service = service.is_exponential();
    if let Some(m) = arrivals.arrival_process() {
        let map = m.map();
        if servers == 1 {
            if let Some(ph) = phase_type(service) {
                let method = format!(
                    "MAP/PH/1 (matrix-analytic: jobs and phases as a quasi-birth-death chain; lag-1 correlation {})",
                    short(m.lag_correlation(1))
                );
                add(
                    net,
                    s,
                    lambda,
                    &method,
                    map_ph1(map, &ph).map(|r| r.metrics),
                    a,
                );
                percentiles(net, s, &method, map_ph1_response(map, &ph), a);
            }
        } else if exp_service {
            let method =
                "MAP/M/c (matrix-analytic: jobs and arrival phase as a quasi-birth-death chain)";
            add(
                net,
                s,
                lambda,
                method,
                map_mc(map, service.mean(), servers).map(|r| r.metrics),
                a,
            );
        }
        return;
    }
    if exp_service {
        let Some(_) = arrivals.laplace(1.0) else {
            return;
        };
        let transform = |x: f64| arrivals.laplace(x).unwrap_or(f64::NAN);
        let method = format!(
            "GI/M/{} (the root of sigma = A*(c mu (1 - sigma)))",
            if servers == 1 {
                "1".to_owned()
            } else {
                "c".to_owned()
            }
        );
        match gim1(&transform, lambda, service.mean(), servers) {
            Ok(r) => {
                add(net, s, lambda, &method, Ok(r.metrics), a);
                let law = PhaseType::exponential(r.wait_rate)
                    .and_then(|wait| response_law(r.p_wait, wait, PhaseType::exponential(mu)?));
                percentiles(net, s, &method, law, a);
            }
            Err(e) => a.refuse(&method, e.to_string()),
        }
    } else if let (1, Some(arrival_ph), Some(service_ph)) =
        (servers, phase_type(arrivals), phase_type(service))
    {
        let method =
            "PH/PH/1 (matrix-analytic: the renewal arrivals as a MAP, a quasi-birth-death chain)";
        match Map::renewal(&arrival_ph) {
            Ok(map) => {
                add(
                    net,
                    s,
                    lambda,
                    method,
                    map_ph1(&map, &service_ph).map(|r| r.metrics),
                    a,
                );
                percentiles(net, s, method, map_ph1_response(&map, &service_ph), a);
            }
            Err(e) => a.refuse(method, e.to_string()),
        }
    }
}

/// The MAP/PH/1 FCFS response law: the exact wait, then the service.
fn map_ph1_response(map: &Map, service: &Ph) -> Result<PhaseType> {
    let wait = map_ph1_wait(map, service)?;
    response_law(wait.p_wait, wait.conditional, service.to_phase_type())
}

/// The response of a FCFS job: with probability `p_wait` the wait `wait` and then `service`,
/// otherwise the service alone.
fn response_law(p_wait: f64, wait: PhaseType, service: PhaseType) -> Result<PhaseType> {
    PhaseType::routed(
        &[wait, service],
        &[p_wait, 1.0 - p_wait],
        &[vec![0.0, 1.0], vec![0.0, 0.0]],
    )
}

/// The means of station `s` and of the class (one visit each).
fn add(
    net: &Network,
    s: usize,
    lambda: f64,
    method: &str,
    metrics: Result<StationMetrics>,
    a: &mut Analysis,
) {
    let m = match metrics {
        Ok(m) => m,
        Err(e) => return a.refuse(method, e.to_string()),
    };
    let station = Subject::Station(&net.stations[s].name);
    a.add(class_metric(net, 0), m.mean_response, method, true);
    for (figure, value) in [
        (Figure::Response, m.mean_response),
        (Figure::Wait, m.mean_wait),
        (Figure::Number, m.mean_number),
        (Figure::Throughput, lambda),
    ] {
        a.add(station.metric(figure), value, method, true);
    }
}

/// The response percentiles of station `s` and of the class from the exact response law.
fn percentiles(net: &Network, s: usize, method: &str, law: Result<PhaseType>, a: &mut Analysis) {
    let law = match law {
        Ok(law) => law,
        Err(e) => return a.refuse(&format!("{method}: percentiles"), e.to_string()),
    };
    let levels: Vec<f64> = PERCENTILES.iter().map(|(_, p)| *p).collect();
    if let Err(e) = law.quantile_work(&levels).check() {
        return a.refuse(&format!("{method}: percentiles"), e.to_string());
    }
    let station = Subject::Station(&net.stations[s].name);
    let class = net.classes[0].name.as_str();
    for (figure, (_, p)) in Figure::PERCENTILES.into_iter().zip(PERCENTILES) {
        match law.quantile(p) {
            Ok(x) => {
                a.add(station.metric(figure), x, method, true);
                a.add(Subject::Class(class).metric(figure), x, method, true);
            }
            Err(e) => return a.refuse(&format!("{method}: percentiles"), e.to_string()),
        }
    }
}
