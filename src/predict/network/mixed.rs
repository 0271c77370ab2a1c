//! Mixed networks, open and closed classes together: exact mixed MVA where the network has
//! product form, labelled with the assumption that breaks where it does not.

use super::{
    Analysis, center_kind, labelled, mean_service, product_form_problem, service_stations,
};
use crate::analytic::{CenterKind, MixedClass, mva_mixed};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::{class_metric, station_class_subject, visiting};
use crate::network::{ClassKind, Network};

/// The label of mixed MVA's predictions.
const METHOD: &str = "exact mixed MVA (open classes stretch the closed ones' demands)";

/// Analyses a network of open and closed classes by exact mixed MVA (`v` from the traffic
/// equations: flows of open classes, visits per cycle of closed ones).
pub(super) fn mixed_network(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    let problem = served.iter().find_map(|&s| product_form_problem(net, s));
    let (method, exact) = labelled(METHOD, true, problem.as_deref());
    let kinds: Vec<CenterKind> = served
        .iter()
        .map(|&s| center_kind(&net.stations[s]))
        .collect();
    // per job for an open class (its flow over its arrival rate), per cycle for a closed one
    let per_job: Vec<Vec<f64>> = net
        .classes
        .iter()
        .enumerate()
        .map(|(c, class)| {
            let scale = match class.kind {
                ClassKind::Open => crate::network::estimates::arrival_rate(net, c),
                ClassKind::Closed { .. } => 1.0,
            };
            served.iter().map(|&s| v[c][s] / scale).collect()
        })
        .collect();
    let demands: Vec<Vec<f64>> = (0..net.classes.len())
        .map(|c| {
            served
                .iter()
                .enumerate()
                .map(|(k, &s)| per_job[c][k] * mean_service(&net.stations[s], c))
                .collect()
        })
        .collect();
    let classes: Vec<MixedClass> = net
        .classes
        .iter()
        .enumerate()
        .map(|(c, class)| match class.kind {
            ClassKind::Open => MixedClass::Open {
                rate: crate::network::estimates::arrival_rate(net, c),
            },
            ClassKind::Closed { population, .. } => MixedClass::Closed { population },
        })
        .collect();
    let sol = match mva_mixed(&kinds, &demands, &classes) {
        Ok(sol) => sol,
        Err(e) => return a.refuse(&method, e.to_string()),
    };
    // an open class's throughput is its arrival rate: given under this method too, so that
    // the flows through the stations derive from one method
    for (c, class) in net.classes.iter().enumerate() {
        a.add(class_metric(net, c), sol.response_time[c], &method, exact);
        a.add(
            Subject::Class(&class.name).metric(Figure::Throughput),
            sol.throughput[c],
            &method,
            exact,
        );
    }
    for (k, &s) in served.iter().enumerate() {
        let name = &net.stations[s].name;
        let jobs: f64 = sol.queue_length.iter().map(|q| q[k]).sum();
        let arrivals: f64 = (0..net.classes.len())
            .map(|c| sol.throughput[c] * per_job[c][k])
            .sum();
        a.add(
            Subject::Station(name).metric(Figure::Number),
            jobs,
            &method,
            exact,
        );
        if arrivals > 0.0 {
            a.add(
                Subject::Station(name).metric(Figure::Response),
                jobs / arrivals,
                &method,
                exact,
            );
        }
        if let Some(u) = sol.utilisation[k] {
            a.add(
                Subject::Station(name).metric(Figure::Utilisation),
                u,
                &method,
                exact,
            );
        }
        let visitors = visiting(net, s);
        for &c in visitors.iter().filter(|_| visitors.len() > 1) {
            if per_job[c][k] > 0.0 {
                let subject = station_class_subject(net, s, c);
                a.add(
                    subject.metric(Figure::Response),
                    sol.residence[c][k] / per_job[c][k],
                    &method,
                    exact,
                );
                a.add(
                    subject.metric(Figure::Number),
                    sol.queue_length[c][k],
                    &method,
                    exact,
                );
            }
        }
    }
}
