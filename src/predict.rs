//! Analytic predictions for a [`Network`]: which closed forms apply, their values under the
//! simulator's metric names, and, for those that do not apply, why.
//!
//! This is the bridge between the network IR and the formula library in [`crate::analytic`].

use serde::Serialize;

use crate::analytic::{
    self, Center, CenterKind, MulticlassModel, SchweitzerOptions, expected_max_exponential,
    expected_max_numeric, expected_max_uniform, fork_join_2_server, mg1, mm1, mmc, mminf, mva,
    mva_multiclass, nelson_tantawi, schweitzer,
};
use crate::dist::Dist;
use crate::metrics::class_metric;
use crate::model::{ClassKind, Discipline, Network, StationKind, visits};

/// One analytic value for one metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// The metric, named as the simulator names it.
    pub metric: String,
    /// The predicted value.
    pub value: f64,
    /// The method, e.g. `"M/M/1"`, `"exact MVA"`.
    pub method: String,
    /// True for an exact result (under the model's assumptions), false for an approximation.
    pub exact: bool,
}

/// A method that does not apply, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refusal {
    /// The method.
    pub method: String,
    /// Why it does not apply.
    pub reason: String,
}

/// Bounds a metric must lie within.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bound {
    /// The metric, named as the simulator names it.
    pub metric: String,
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
    /// The method, e.g. `"asymptotic bounds"`.
    pub method: String,
}

/// Every applicable prediction and every refusal for a network.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Analysis {
    /// Predictions, in the order the methods were tried.
    pub predictions: Vec<Prediction>,
    /// Bounds on metrics (closed single-class networks).
    pub bounds: Vec<Bound>,
    /// Methods that do not apply.
    pub refusals: Vec<Refusal>,
    /// Terms of a model that are not simulated metrics (`[spmd]`: `T1`, `h(c)`, `z`, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<Prediction>,
}

impl Analysis {
    fn add(&mut self, metric: String, value: f64, method: &str, exact: bool) {
        if value.is_finite() {
            self.predictions.push(Prediction {
                metric,
                value,
                method: method.to_owned(),
                exact,
            });
        }
    }

    fn refuse(&mut self, method: &str, reason: impl Into<String>) {
        self.refusals.push(Refusal {
            method: method.to_owned(),
            reason: reason.into(),
        });
    }
}

/// Analyses a scenario: its network with every method that might apply
/// ([`analyze`]), or its program with the program methods ([`crate::program::predict`]).
pub fn analyze_scenario(sc: &crate::scenario::Scenario) -> Analysis {
    match &sc.workload {
        crate::scenario::Workload::Network(net) => {
            let mut a = analyze(net);
            if let Some(spmd) = &sc.spmd {
                crate::spmd::analysis::analyze(spmd, &sc.default_metric(), &mut a);
            }
            a
        }
        crate::scenario::Workload::Program(prog) => crate::program::predict::analyze(prog),
    }
}

/// Analyses `net` with every method that might apply.
pub fn analyze(net: &Network) -> Analysis {
    let mut a = Analysis::default();
    let v = match visits(net) {
        Ok(v) => v,
        Err(e) => {
            a.refuse("traffic equations", e.to_string());
            return a;
        }
    };
    let has_fork = net
        .stations
        .iter()
        .any(|s| matches!(s.kind, StationKind::Fork { .. }));
    let open = net.classes.iter().all(|c| c.kind == ClassKind::Open);
    let closed = net.classes.iter().all(|c| c.kind != ClassKind::Open);
    if has_fork && closed && net.classes.len() == 1 {
        closed_fork_join(net, &v, &mut a);
    } else if has_fork {
        fork_join(net, &mut a);
    } else if open {
        open_network(net, &v, &mut a);
    } else if closed {
        closed_network(net, &v, &mut a);
    } else {
        a.refuse(
            "MVA / Jackson",
            "mixed open and closed classes: no mixed-network solver is wired yet",
        );
    }
    a
}

/// Service stations (delay or queue) with their index.
fn service_stations(net: &Network) -> impl Iterator<Item = (usize, &crate::model::Station)> {
    net.stations
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind.service().is_some())
}

/// The reason a station breaks product form, if it does.
fn product_form_problem(net: &Network, s: usize) -> Option<String> {
    let st = &net.stations[s];
    let StationKind::Queue {
        discipline: Discipline::Fcfs,
        service,
        ..
    } = &st.kind
    else {
        return None;
    };
    let dists: Vec<&Dist> = service.iter().flatten().collect();
    if let Some(d) = dists.iter().find(|d| !d.is_exponential()) {
        return Some(format!(
            "FCFS station {:?} has non-exponential service (SCV {:.3}): not product form",
            st.name,
            d.scv()
        ));
    }
    // the BCMP condition: one mean for every class that visits an FCFS station
    let visiting: Vec<(&str, f64)> = service
        .iter()
        .zip(&net.classes)
        .filter_map(|(d, c)| d.as_ref().map(|d| (c.name.as_str(), d.mean())))
        .collect();
    let (first, m0) = visiting.first()?;
    visiting.iter().find(|(_, m)| (m / m0 - 1.0).abs() > 1e-9).map(|(other, m)| {
        format!(
            "FCFS station {:?} serves class {first:?} with mean {m0} and class {other:?} with mean {m}: not product form",
            st.name
        )
    })
}

fn open_network(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    for st in &net.stations {
        if let StationKind::Source { interarrival, .. } = &st.kind
            && !interarrival.is_exponential()
        {
            a.refuse(
                "M/M/1, M/G/1, Jackson",
                format!(
                    "source {:?} is not Poisson (SCV {:.3})",
                    st.name,
                    interarrival.scv()
                ),
            );
            return;
        }
    }
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    if served.len() == 1 && net.classes.len() == 1 {
        single_station(net, served[0], v[0][served[0]], a);
        return;
    }
    if let Some(reason) = served.iter().find_map(|&s| product_form_problem(net, s)) {
        a.refuse("Jackson network", reason);
        return;
    }
    let kinds: Vec<CenterKind> = net.stations.iter().map(center_kind).collect();
    let classes: Vec<analytic::OpenClass> = (0..net.classes.len())
        .map(|c| {
            let rate: f64 = net
                .stations
                .iter()
                .filter_map(|s| match &s.kind {
                    StationKind::Source {
                        class,
                        interarrival,
                    } if class.index() == c => Some(1.0 / interarrival.mean()),
                    _ => None,
                })
                .sum();
            analytic::OpenClass {
                arrival_rate: rate,
                visits: v[c].iter().map(|x| x / rate).collect(),
                service: net.stations.iter().map(|s| mean_service(s, c)).collect(),
            }
        })
        .collect();
    match analytic::jackson(&kinds, &classes) {
        Ok(sol) => {
            let m = "Jackson network";
            for (c, _) in net.classes.iter().enumerate() {
                a.add(class_metric(net, c), sol.response_time[c], m, true);
            }
            for &s in &served {
                let name = &net.stations[s].name;
                if let Some(u) = sol.utilisation[s] {
                    a.add(format!("station.{name}.utilisation"), u, m, true);
                }
                a.add(
                    format!("station.{name}.number"),
                    sol.mean_number[s],
                    m,
                    true,
                );
            }
        }
        Err(e) => a.refuse("Jackson network", e.to_string()),
    }
}

fn single_station(net: &Network, s: usize, lambda: f64, a: &mut Analysis) {
    let st = &net.stations[s];
    let Some(d) = st.kind.service().and_then(|t| t[0].as_ref()) else {
        return;
    };
    let (mean, scv) = (d.mean(), d.scv());
    let result = match &st.kind {
        StationKind::Delay { .. } => Some(("M/G/inf", mminf(lambda, mean))),
        StationKind::Queue {
            discipline: Discipline::Ps,
            ..
        } => {
            // M/G/1-PS is insensitive: the M/M/1 means hold for any service distribution.
            Some(("M/G/1-PS", mm1(lambda, mean)))
        }
        StationKind::Queue { servers: 1, .. } if d.is_exponential() => {
            Some(("M/M/1", mm1(lambda, mean)))
        }
        StationKind::Queue { servers: 1, .. } => {
            let label = if scv == 0.0 {
                "M/D/1 (Pollaczek-Khinchine)"
            } else {
                "M/G/1 (Pollaczek-Khinchine)"
            };
            Some((label, mg1(lambda, mean, scv)))
        }
        StationKind::Queue { servers, .. } if d.is_exponential() => {
            Some(("M/M/c (Erlang C)", mmc(lambda, mean, *servers)))
        }
        StationKind::Queue { servers, .. } => {
            a.refuse("M/M/c", format!("{servers} servers with non-exponential service (SCV {scv:.3}): M/G/c has no closed form"));
            None
        }
        _ => None,
    };
    let Some((method, r)) = result else { return };
    match r {
        Ok(m) => {
            let name = &st.name;
            a.add(class_metric(net, 0), m.mean_response, method, true);
            a.add(
                format!("station.{name}.response"),
                m.mean_response,
                method,
                true,
            );
            a.add(
                format!("station.{name}.number"),
                m.mean_number,
                method,
                true,
            );
            if let Some(u) = m.utilisation {
                a.add(format!("station.{name}.utilisation"), u, method, true);
            }
        }
        Err(e) => a.refuse(method, e.to_string()),
    }
}

fn center_kind(st: &crate::model::Station) -> CenterKind {
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

fn mean_service(st: &crate::model::Station, class: usize) -> f64 {
    st.kind
        .service()
        .and_then(|t| t[class].as_ref())
        .map_or(0.0, Dist::mean)
}

fn closed_network(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    if let Some(reason) = served.iter().find_map(|&s| product_form_problem(net, s)) {
        a.refuse("exact MVA", reason.clone());
        a.refuse("Schweitzer-Bard approximate MVA", reason);
        return;
    }
    let kinds: Vec<CenterKind> = served
        .iter()
        .map(|&s| center_kind(&net.stations[s]))
        .collect();
    let demands: Vec<Vec<f64>> = (0..net.classes.len())
        .map(|c| {
            served
                .iter()
                .map(|&s| v[c][s] * mean_service(&net.stations[s], c))
                .collect()
        })
        .collect();
    let pops: Vec<u32> = net
        .classes
        .iter()
        .map(|c| match c.kind {
            ClassKind::Closed { population, .. } => population,
            ClassKind::Open => 0,
        })
        .collect();
    let single = net.classes.len() == 1;
    if single {
        closed_bounds(net, &served, &kinds, &demands[0], pops[0], a);
    }
    if single {
        let centers: Vec<Center> = kinds
            .iter()
            .zip(&demands[0])
            .map(|(&kind, &demand)| Center { kind, demand })
            .collect();
        match mva(&centers, pops[0]) {
            Ok(sol) => {
                if let Some(level) = sol.at(pops[0]) {
                    let m = "exact MVA";
                    a.add(class_metric(net, 0), level.response_time, m, true);
                    a.add(
                        format!("class.{}.throughput", net.classes[0].name),
                        level.throughput,
                        m,
                        true,
                    );
                    for (k, &s) in served.iter().enumerate() {
                        let name = &net.stations[s].name;
                        a.add(
                            format!("station.{name}.response"),
                            level.residence[k] / v[0][s],
                            m,
                            true,
                        );
                        a.add(
                            format!("station.{name}.number"),
                            level.queue_length[k],
                            m,
                            true,
                        );
                        if let Some(u) = level.utilisation[k] {
                            a.add(format!("station.{name}.utilisation"), u, m, true);
                        }
                    }
                }
            }
            Err(e) => a.refuse("exact MVA", e.to_string()),
        }
    }
    let model = match MulticlassModel::new(kinds, demands, pops) {
        Ok(m) => m,
        Err(e) => {
            a.refuse(
                if single {
                    "Schweitzer-Bard approximate MVA"
                } else {
                    "exact multiclass MVA"
                },
                e.to_string(),
            );
            return;
        }
    };
    if !single {
        match mva_multiclass(&model) {
            Ok(sol) => {
                multiclass_predictions(net, v, &served, &sol, "exact multiclass MVA", true, a)
            }
            Err(e) => a.refuse("exact multiclass MVA", e.to_string()),
        }
    }
    match schweitzer(&model, SchweitzerOptions::default()) {
        Ok(sol) => multiclass_predictions(
            net,
            v,
            &served,
            &sol,
            "Schweitzer-Bard approximate MVA",
            false,
            a,
        ),
        Err(e) => a.refuse("Schweitzer-Bard approximate MVA", e.to_string()),
    }
}

/// Asymptotic bounds (any load-independent network) and balanced job bounds (product form) on
/// the throughput and cycle time of a single-class closed network of delays and single-server
/// queues.
fn closed_bounds(
    net: &Network,
    served: &[usize],
    kinds: &[CenterKind],
    demands: &[f64],
    population: u32,
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
    let think: f64 = served
        .iter()
        .zip(kinds)
        .zip(demands)
        .filter(|((_, k), _)| **k == CenterKind::Delay)
        .map(|(_, d)| d)
        .sum();
    let queues: Vec<f64> = kinds
        .iter()
        .zip(demands)
        .filter(|(k, _)| **k != CenterKind::Delay)
        .map(|(_, d)| *d)
        .collect();
    let class = &net.classes[0].name;
    for (method, result) in [
        (
            "asymptotic bounds",
            analytic::asymptotic_bounds(&queues, think, population),
        ),
        (
            "balanced job bounds",
            analytic::balanced_job_bounds(&queues, think, population),
        ),
    ] {
        match result {
            Ok(b) => {
                a.bounds.push(Bound {
                    metric: format!("class.{class}.throughput"),
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
            format!("class.{}.throughput", class.name),
            sol.throughput[c],
            method,
            exact,
        );
        for (k, &s) in served.iter().enumerate() {
            let visitors = (0..net.classes.len()).filter(|&o| v[o][s] > 0.0).count();
            if v[c][s] > 0.0 && visitors > 1 {
                let name = &net.stations[s].name;
                a.add(
                    format!("station.{name}.{}.response", class.name),
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
            a.add(format!("station.{name}.utilisation"), u, method, exact);
        }
        if let Some(q) = sol.total_queue_length(k) {
            a.add(format!("station.{name}.number"), q, method, exact);
        }
    }
}

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
/// branches are distinct, identical single-server FCFS exponential queues; the other service
/// stations must be product form.
fn closed_fork_join(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    const METHOD: &str = "Varki mean-value approximation (closed fork-join)";
    let forks = forks_of(net);
    let [(f, branches)] = forks[..] else {
        a.refuse(METHOD, "only one fork is supported");
        return;
    };
    let distinct: std::collections::BTreeSet<_> = branches.iter().collect();
    let exp_fcfs = |s: usize| match &net.stations[s].kind {
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            servers: 1,
            service,
        } => service[0]
            .as_ref()
            .filter(|d| d.is_exponential())
            .map(Dist::mean),
        _ => None,
    };
    let means: Vec<Option<f64>> = branches.iter().map(|b| exp_fcfs(b.index())).collect();
    let Some(Some(s0)) = means.first().copied() else {
        a.refuse(
            METHOD,
            "the branches must be single-server FCFS exponential queues",
        );
        return;
    };
    if distinct.len() != branches.len()
        || means
            .iter()
            .any(|m| m.is_none_or(|m| (m - s0).abs() > 1e-12 * s0))
    {
        a.refuse(
            METHOD,
            "the branches must be distinct, identical single-server FCFS exponential queues",
        );
        return;
    }
    let others: Vec<usize> = service_stations(net)
        .map(|(s, _)| s)
        .filter(|s| !branches.iter().any(|b| b.index() == *s))
        .collect();
    if let Some(reason) = others.iter().find_map(|&s| product_form_problem(net, s)) {
        a.refuse(METHOD, reason);
        return;
    }
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
                a.add(class_metric(net, 0), level.response_time, METHOD, false);
                a.add(
                    format!("class.{}.throughput", net.classes[0].name),
                    level.throughput,
                    METHOD,
                    false,
                );
                let name = &net.stations[f].name;
                a.add(
                    format!("station.{name}.response"),
                    level.residence[others.len()] / v[0][f],
                    METHOD,
                    false,
                );
            }
        }
        Err(e) => a.refuse(METHOD, e.to_string()),
    }
}

/// Open fork-join networks of the shape source -> fork -> identical branches -> join -> exit.
fn fork_join(net: &Network, a: &mut Analysis) {
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
        } if d.is_exponential() => {
            let lambda = net.stations.iter().find_map(|s| match &s.kind {
                StationKind::Source { interarrival, .. } if interarrival.is_exponential() => {
                    Some(1.0 / interarrival.mean())
                }
                _ => None,
            });
            let Some(lambda) = lambda else {
                a.refuse("fork-join queue", "arrivals are not Poisson");
                return;
            };
            let mu = 1.0 / d.mean();
            if c == 2 {
                match fork_join_2_server(lambda, mu) {
                    Ok(x) => put(
                        x,
                        "2-server fork-join (Flatto-Hahn, Nelson-Tantawi)",
                        true,
                        a,
                    ),
                    Err(e) => a.refuse("2-server fork-join", e.to_string()),
                }
            } else {
                match nelson_tantawi(c, lambda, mu) {
                    Ok(x) => put(x, "Nelson-Tantawi approximation", false, a),
                    Err(e) => a.refuse("Nelson-Tantawi", e.to_string()),
                }
            }
        }
        _ => a.refuse(
            "fork-join queue",
            "branches are not single FCFS exponential servers or delays",
        ),
    }
}
