//! Closed networks: exact and approximate MVA (labelled where product form fails), the
//! residual-service correction, and bounds.

use super::{
    Analysis, Bound, closed_inputs, labelled, laws, product_form_problem, service_scv,
    service_stations,
};
use crate::analytic::{
    self, Center, CenterKind, GeneralCenter, MulticlassModel, SchweitzerOptions, mva,
    mva_multiclass, mva_residual, schweitzer,
};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::class_metric;
use crate::network::Network;

pub(super) fn closed_network(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    let problem = served.iter().find_map(|&s| product_form_problem(net, s));
    let problem = problem.as_deref();
    let (kinds, demands, pops) = closed_inputs(net, v, &served);
    let single = net.classes.len() == 1;
    if single {
        closed_bounds(net, v, &kinds, &demands[0], pops[0], problem, a);
        let centers: Vec<Center> = kinds
            .iter()
            .zip(&demands[0])
            .map(|(&kind, &demand)| Center { kind, demand })
            .collect();
        let (m, exact) = labelled("exact MVA", true, problem);
        match mva(&centers, pops[0]) {
            Ok(sol) => single_class_predictions(net, v, &served, sol.full(), &m, exact, a),
            Err(e) => a.refuse(&m, e.to_string()),
        }
        if problem.is_some() {
            residual_mva(net, v, &served, &centers, pops[0], a);
        }
    }
    let (schweitzer_method, _) = labelled("Schweitzer-Bard approximate MVA", false, problem);
    let (multiclass_method, multiclass_exact) = labelled("exact multiclass MVA", true, problem);
    let model = match MulticlassModel::new(kinds, demands, pops) {
        Ok(m) => m,
        Err(e) => {
            a.refuse(
                if single {
                    &schweitzer_method
                } else {
                    &multiclass_method
                },
                e.to_string(),
            );
            return;
        }
    };
    if !single {
        match mva_multiclass(&model) {
            Ok(sol) => multiclass_predictions(
                net,
                v,
                &served,
                &sol,
                &multiclass_method,
                multiclass_exact,
                a,
            ),
            Err(e) => a.refuse(&multiclass_method, e.to_string()),
        }
    }
    match schweitzer(&model, SchweitzerOptions::default()) {
        Ok(sol) => multiclass_predictions(net, v, &served, &sol, &schweitzer_method, false, a),
        Err(e) => a.refuse(&schweitzer_method, e.to_string()),
    }
}

/// MVA with the residual-service correction, for a single-class closed network whose FCFS
/// servers are not all exponential.
fn residual_mva(
    net: &Network,
    v: &[Vec<f64>],
    served: &[usize],
    centers: &[Center],
    population: u32,
    a: &mut Analysis,
) {
    const METHOD: &str = "MVA with residual-service correction (Reiser 1979)";
    let general: Vec<GeneralCenter> = served
        .iter()
        .zip(centers)
        .map(|(&s, &center)| GeneralCenter {
            center,
            scv: service_scv(&net.stations[s], 0),
        })
        .collect();
    match mva_residual(&general, population) {
        Ok(sol) => single_class_predictions(net, v, served, sol.full(), METHOD, false, a),
        Err(e) => a.refuse(METHOD, e.to_string()),
    }
}

/// The predictions of a single-class closed solution at the full population: cycle time,
/// throughput, and response, number and utilisation at each of the `served` stations (in the
/// solver's center order).
fn single_class_predictions(
    net: &Network,
    v: &[Vec<f64>],
    served: &[usize],
    level: &analytic::ClosedLevel,
    method: &str,
    exact: bool,
    a: &mut Analysis,
) {
    a.add(class_metric(net, 0), level.response_time, method, exact);
    a.add(
        Subject::Class(&net.classes[0].name).metric(Figure::Throughput),
        level.throughput,
        method,
        exact,
    );
    for (k, &s) in served.iter().enumerate() {
        let name = &net.stations[s].name;
        a.add(
            Subject::Station(name).metric(Figure::Response),
            level.residence[k] / v[0][s],
            method,
            exact,
        );
        a.add(
            Subject::Station(name).metric(Figure::Number),
            level.queue_length[k],
            method,
            exact,
        );
        if let Some(u) = level.utilisation[k] {
            a.add(
                Subject::Station(name).metric(Figure::Utilisation),
                u,
                method,
                exact,
            );
        }
    }
}

/// Asymptotic bounds (any load-independent network, any distribution) and balanced job bounds
/// (product form only: refused with `problem` otherwise) on the throughput and cycle time of a
/// single-class closed network of delays and single-server queues, and through the forced-flow
/// law on every station's throughput and utilisation.
fn closed_bounds(
    net: &Network,
    v: &[Vec<f64>],
    kinds: &[CenterKind],
    demands: &[f64],
    population: u32,
    problem: Option<&str>,
    a: &mut Analysis,
) {
    if kinds
        .iter()
        .any(|k| matches!(k, CenterKind::MultiServer(_)))
    {
        a.refuse(
            "asymptotic and balanced job bounds",
            "multi-server stations are load dependent",
        );
        return;
    }
    let think: f64 = kinds
        .iter()
        .zip(demands)
        .filter(|(k, _)| **k == CenterKind::Delay)
        .map(|(_, d)| d)
        .sum();
    let queues: Vec<f64> = kinds
        .iter()
        .zip(demands)
        .filter(|(k, _)| **k != CenterKind::Delay)
        .map(|(_, d)| *d)
        .collect();
    let class = &net.classes[0].name;
    let mut methods = vec![(
        "asymptotic bounds",
        analytic::asymptotic_bounds(&queues, think, population),
    )];
    match problem {
        None => methods.push((
            "balanced job bounds",
            analytic::balanced_job_bounds(&queues, think, population),
        )),
        Some(p) => a.refuse(
            "balanced job bounds",
            format!("they assume product form: {p}"),
        ),
    }
    for (method, result) in methods {
        match result {
            Ok(b) => {
                a.bounds.push(Bound {
                    metric: Subject::Class(class).metric(Figure::Throughput),
                    lower: b.throughput.lower,
                    upper: b.throughput.upper,
                    method: method.to_owned(),
                });
                // the solvers bound the response time without think time; the cycle adds it
                a.bounds.push(Bound {
                    metric: class_metric(net, 0),
                    lower: b.response_time.lower + think,
                    upper: b.response_time.upper + think,
                    method: method.to_owned(),
                });
                laws::forced_flow_bounds(net, v, b.throughput.lower, b.throughput.upper, method, a);
            }
            Err(e) => a.refuse(method, e.to_string()),
        }
    }
}

fn multiclass_predictions(
    net: &Network,
    v: &[Vec<f64>],
    served: &[usize],
    sol: &analytic::MulticlassSolution,
    method: &str,
    exact: bool,
    a: &mut Analysis,
) {
    for (c, class) in net.classes.iter().enumerate() {
        a.add(class_metric(net, c), sol.response_time[c], method, exact);
        a.add(
            Subject::Class(&class.name).metric(Figure::Throughput),
            sol.throughput[c],
            method,
            exact,
        );
        for (k, &s) in served.iter().enumerate() {
            let visitors = (0..net.classes.len()).filter(|&o| v[o][s] > 0.0).count();
            if v[c][s] > 0.0 && visitors > 1 {
                let name = &net.stations[s].name;
                a.add(
                    Subject::StationClass(name, &class.name).metric(Figure::Response),
                    sol.residence[c][k] / v[c][s],
                    method,
                    exact,
                );
            }
        }
    }
    for (k, &s) in served.iter().enumerate() {
        let name = &net.stations[s].name;
        if let Some(u) = sol.utilisation[k] {
            a.add(
                Subject::Station(name).metric(Figure::Utilisation),
                u,
                method,
                exact,
            );
        }
        if let Some(q) = sol.total_queue_length(k) {
            a.add(
                Subject::Station(name).metric(Figure::Number),
                q,
                method,
                exact,
            );
        }
    }
}
