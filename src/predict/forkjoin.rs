//! Fork-join networks: Varki's approximation for closed ones, the expected maximum and the
//! fork-join queue formulas for open ones.

use super::open::arrival_problem;
use super::{
    Analysis, Dist, center_kind, labelled, mean_service, non_exponential_fcfs,
    product_form_problem, service_stations,
};
use crate::analytic::{
    self, Center, expected_max_exponential, expected_max_numeric, expected_max_uniform,
    fork_join_2_server, nelson_tantawi,
};
use crate::metrics::class_metric;
use crate::model::{ClassKind, Discipline, Network, StationKind};

/// The fork stations with their branch lists.
fn forks_of(net: &Network) -> Vec<(usize, &Vec<crate::model::StationId>)> {
    net.stations
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match &s.kind {
            StationKind::Fork { branches } => Some((i, branches)),
            _ => None,
        })
        .collect()
}

/// Varki's mean-value approximation for a closed single-class network with one fork whose
/// branches are distinct, identical single-server FCFS queues. Its assumptions (exponential
/// branches, product-form stations elsewhere) are named in the label where they fail.
pub(super) fn closed_fork_join(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    const METHOD: &str = "Varki mean-value approximation (closed fork-join)";
    let forks = forks_of(net);
    let [(f, branches)] = forks[..] else {
        a.refuse(METHOD, "only one fork is supported");
        return;
    };
    let distinct: std::collections::BTreeSet<_> = branches.iter().collect();
    let fcfs_mean = |s: usize| match &net.stations[s].kind {
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            servers: 1,
            service,
        } => service[0].as_ref().map(Dist::mean),
        _ => None,
    };
    let means: Vec<Option<f64>> = branches.iter().map(|b| fcfs_mean(b.index())).collect();
    let Some(Some(s0)) = means.first().copied() else {
        a.refuse(METHOD, "the branches must be single-server FCFS queues");
        return;
    };
    if distinct.len() != branches.len()
        || means
            .iter()
            .any(|m| m.is_none_or(|m| (m - s0).abs() > 1e-12 * s0))
    {
        a.refuse(
            METHOD,
            "the branches must be distinct single-server FCFS queues with one mean",
        );
        return;
    }
    let others: Vec<usize> = service_stations(net)
        .map(|(s, _)| s)
        .filter(|s| !branches.iter().any(|b| b.index() == *s))
        .collect();
    let problem = branches
        .iter()
        .find_map(|b| non_exponential_fcfs(net, b.index()).map(|(_, r)| r))
        .or_else(|| others.iter().find_map(|&s| product_form_problem(net, s)));
    let (method, _) = labelled(METHOD, false, problem.as_deref());
    let centers: Vec<Center> = others
        .iter()
        .map(|&s| Center {
            kind: center_kind(&net.stations[s]),
            demand: v[0][s] * mean_service(&net.stations[s], 0),
        })
        .collect();
    let fj = analytic::ForkJoinCenter {
        branches: branches.len() as u32,
        demand: v[0][f] * s0,
    };
    let ClassKind::Closed { population, .. } = net.classes[0].kind else {
        return;
    };
    match analytic::varki_closed_fork_join(&[fj], &centers, population) {
        Ok(sol) => {
            if let Some(level) = sol.at(population) {
                a.add(class_metric(net, 0), level.response_time, &method, false);
                a.add(
                    format!("class.{}.throughput", net.classes[0].name),
                    level.throughput,
                    &method,
                    false,
                );
                let name = &net.stations[f].name;
                a.add(
                    format!("station.{name}.response"),
                    level.residence[others.len()] / v[0][f],
                    &method,
                    false,
                );
            }
        }
        Err(e) => a.refuse(&method, e.to_string()),
    }
}

/// Open fork-join networks of the shape source -> fork -> identical branches -> join -> exit.
pub(super) fn fork_join(net: &Network, a: &mut Analysis) {
    let forks = forks_of(net);
    let served = service_stations(net).count();
    let shape_ok =
        forks.len() == 1 && net.classes.len() == 1 && net.classes[0].kind == ClassKind::Open;
    let (f, branches) = forks[0];
    let distinct: std::collections::BTreeSet<_> = branches.iter().collect();
    if !shape_ok || served != distinct.len() {
        a.refuse("fork-join formulas", "only an open, single-class network with one fork whose branches are its only service stations is solved");
        return;
    }
    let c = branches.len() as u32;
    let first = &net.stations[branches[0].index()];
    let d = first.kind.service().and_then(|t| t[0].clone());
    let Some(d) = d else { return };
    let same = branches.iter().all(|b| {
        let st = &net.stations[b.index()];
        std::mem::discriminant(&st.kind) == std::mem::discriminant(&first.kind)
            && st
                .kind
                .service()
                .and_then(|t| t[0].as_ref())
                .is_some_and(|x| {
                    (x.mean() - d.mean()).abs() < 1e-12 && (x.scv() - d.scv()).abs() < 1e-12
                })
    });
    if !same {
        a.refuse("fork-join formulas", "the branches are not identical");
        return;
    }
    let fork_name = &net.stations[f].name;
    let put = |value: f64, method: &str, exact: bool, a: &mut Analysis| {
        a.add(class_metric(net, 0), value, method, exact);
        a.add(
            format!("station.{fork_name}.response"),
            value,
            method,
            exact,
        );
    };
    match &first.kind {
        // Delay branches do not interact: the maximum holds whatever the arrivals.
        StationKind::Delay { .. } => {
            let r = match &d {
                Dist::Exponential { mean } => expected_max_exponential(c, *mean)
                    .map(|x| (x, "max of c exponentials (H_c mean)")),
                Dist::Uniform { min, max } => {
                    expected_max_uniform(c, *min, *max).map(|x| (x, "max of c uniforms"))
                }
                other => {
                    expected_max_numeric(c, &|t| other.cdf(t), other.lower_bound(), f64::INFINITY)
                        .map(|x| (x, "max of c i.i.d. (numeric integral of 1 - F^c)"))
                }
            };
            match r {
                Ok((x, m)) => put(x, m, true, a),
                Err(e) => a.refuse("expected maximum", e.to_string()),
            }
        }
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            servers: 1,
            ..
        } => {
            let lambda: f64 = (0..net.classes.len())
                .map(|c| crate::model::estimates::arrival_rate(net, c))
                .sum();
            let problem = arrival_problem(net).or_else(|| {
                non_exponential_fcfs(net, branches[0].index()).map(|(_, reason)| reason)
            });
            let mu = 1.0 / d.mean();
            let (method, exact, r) = if c == 2 {
                let (m, exact) = labelled(
                    "2-server fork-join (Flatto-Hahn, Nelson-Tantawi)",
                    true,
                    problem.as_deref(),
                );
                (m, exact, fork_join_2_server(lambda, mu))
            } else {
                let (m, exact) =
                    labelled("Nelson-Tantawi approximation", false, problem.as_deref());
                (m, exact, nelson_tantawi(c, lambda, mu))
            };
            match r {
                Ok(x) => put(x, &method, exact, a),
                Err(e) => a.refuse(&method, e.to_string()),
            }
        }
        _ => a.refuse(
            "fork-join queue",
            "branches are not single FCFS servers or delays",
        ),
    }
}
