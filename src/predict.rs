//! Analytic predictions for a [`Network`]: which closed forms apply, their values under the
//! simulator's metric names, and, for those that do not apply, why.
//!
//! This is the bridge between the network IR and the formula library in [`crate::analytic`].

use serde::Serialize;

use crate::analytic::{
    self, Center, CenterKind, GeneralCenter, MulticlassModel, QnaStation, SchweitzerOptions,
    allen_cunneen, expected_max_exponential, expected_max_numeric, expected_max_uniform,
    fork_join_2_server, kingman, mg1, mm1, mmc, mminf, mva, mva_multiclass, mva_residual,
    nelson_tantawi, qna, schweitzer,
};
use crate::dist::Dist;
use crate::metrics::class_metric;
use crate::model::{
    ClassId, ClassKind, Discipline, Network, Routing, StationId, StationKind, Target, visits,
};

mod laws;

pub use laws::{Bottleneck, StationDemand};

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
    /// Visits and demands per class and service station (any distribution).
    pub demands: Vec<StationDemand>,
    /// Each class's bottleneck station (any distribution).
    pub bottlenecks: Vec<Bottleneck>,
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
        crate::scenario::Workload::Network(net) => analyze(net),
        crate::scenario::Workload::Program(prog) => crate::program::predict::analyze(prog),
    }
}

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

/// `method` as labelled in a prediction: exact when `exact` and nothing breaks its
/// assumptions, otherwise an approximation whose label names the assumption that breaks.
fn labelled(method: &str, exact: bool, problem: Option<&str>) -> (String, bool) {
    match problem {
        None => (method.to_owned(), exact),
        Some(p) => (format!("{method}; {p}"), false),
    }
}

/// A number for a method label: at most three decimals, no trailing zeros.
fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// Service stations (delay or queue) with their index.
fn service_stations(net: &Network) -> impl Iterator<Item = (usize, &crate::model::Station)> {
    net.stations
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind.service().is_some())
}

/// The first non-exponential service distribution of FCFS station `s`, with the reason it
/// breaks product form.
fn non_exponential_fcfs(net: &Network, s: usize) -> Option<(&Dist, String)> {
    let st = &net.stations[s];
    let StationKind::Queue {
        discipline: Discipline::Fcfs,
        service,
        ..
    } = &st.kind
    else {
        return None;
    };
    let d = service.iter().flatten().find(|d| !d.is_exponential())?;
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
    let StationKind::Queue {
        discipline: Discipline::Fcfs,
        service,
        ..
    } = &st.kind
    else {
        return None;
    };
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

/// The first source whose arrivals are not Poisson, as the reason it breaks the open-network
/// formulas.
fn arrival_problem(net: &Network) -> Option<String> {
    net.stations.iter().find_map(|st| match &st.kind {
        StationKind::Source { interarrival, .. } if !interarrival.is_exponential() => {
            Some(format!(
                "source {:?} is not Poisson (inter-arrival SCV {})",
                st.name,
                short(interarrival.scv())
            ))
        }
        _ => None,
    })
}

fn open_network(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    let arrivals = arrival_problem(net);
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    if served.len() == 1 && net.classes.len() == 1 {
        single_station(net, served[0], v[0][served[0]], arrivals.as_deref(), a);
        return;
    }
    let problem = arrivals.or_else(|| served.iter().find_map(|&s| product_form_problem(net, s)));
    if net.classes.len() == 1 && problem.is_some() {
        whitt_qna(net, &served, a);
    }
    let kinds: Vec<CenterKind> = net.stations.iter().map(center_kind).collect();
    let classes: Vec<analytic::OpenClass> = (0..net.classes.len())
        .map(|c| {
            let rate = laws::open_arrival_rate(net, c);
            analytic::OpenClass {
                arrival_rate: rate,
                visits: v[c].iter().map(|x| x / rate).collect(),
                service: net.stations.iter().map(|s| mean_service(s, c)).collect(),
            }
        })
        .collect();
    match analytic::jackson(&kinds, &classes) {
        Ok(sol) => {
            let (m, exact) = labelled("Jackson network", true, problem.as_deref());
            for (c, _) in net.classes.iter().enumerate() {
                a.add(class_metric(net, c), sol.response_time[c], &m, exact);
            }
            for &s in &served {
                let name = &net.stations[s].name;
                a.add(
                    format!("station.{name}.number"),
                    sol.mean_number[s],
                    &m,
                    exact,
                );
            }
        }
        Err(e) => a.refuse("Jackson network", e.to_string()),
    }
}

/// Whitt's QNA for a one-class open network of FCFS and delay stations (`served`), offered
/// beside the Jackson value when the network is not product form.
fn whitt_qna(net: &Network, served: &[usize], a: &mut Analysis) {
    const METHOD: &str = "QNA (Whitt 1983)";
    let position = |id: StationId| served.iter().position(|&s| s == id.index());
    let targets = |s: usize| {
        let rule = net.routing.rule(ClassId(0), StationId(s as u32));
        Routing::branch_probabilities(rule, &net.groups)
    };
    let mut stations: Vec<QnaStation> = Vec::with_capacity(served.len());
    for &s in served {
        let st = &net.stations[s];
        let servers = match &st.kind {
            StationKind::Queue {
                discipline: Discipline::Fcfs,
                servers,
                ..
            } => Some(*servers),
            StationKind::Delay { .. } => None,
            _ => {
                a.refuse(
                    METHOD,
                    format!("station {:?} is not FCFS or a delay", st.name),
                );
                return;
            }
        };
        stations.push(QnaStation {
            servers,
            mean_service: mean_service(st, 0),
            service_scv: service_scv(st, 0),
            external_rate: 0.0,
            external_scv: 0.0,
        });
    }
    // External flows: each source's stream split by its routing (splitting: p c^2 + 1 - p),
    // merged per station by rate-weighted SCVs.
    for (src, st) in net.stations.iter().enumerate() {
        let StationKind::Source { interarrival, .. } = &st.kind else {
            continue;
        };
        let (rate, c2) = (1.0 / interarrival.mean(), interarrival.scv());
        for (target, p) in targets(src) {
            if let Target::Station(to, _) = target
                && let Some(j) = position(to)
            {
                stations[j].external_rate += rate * p;
                stations[j].external_scv += rate * p * (p * c2 + 1.0 - p);
            }
        }
    }
    for st in &mut stations {
        if st.external_rate > 0.0 {
            st.external_scv /= st.external_rate;
        }
    }
    let mut routing = vec![vec![0.0; served.len()]; served.len()];
    for (i, &s) in served.iter().enumerate() {
        for (target, p) in targets(s) {
            match target {
                Target::Station(_, class) if class.index() != 0 => {
                    a.refuse(
                        METHOD,
                        format!("class switch at {:?}", net.stations[s].name),
                    );
                    return;
                }
                Target::Station(to, _) => {
                    if let Some(j) = position(to) {
                        routing[i][j] += p;
                    }
                }
                Target::Exit => {}
            }
        }
    }
    match qna(&stations, &routing) {
        Ok(sol) => {
            a.add(class_metric(net, 0), sol.response_time, METHOD, false);
            for (k, &s) in served.iter().enumerate() {
                let name = &net.stations[s].name;
                let m = &sol.stations[k];
                a.add(
                    format!("station.{name}.response"),
                    m.mean_response,
                    METHOD,
                    false,
                );
                a.add(
                    format!("station.{name}.number"),
                    m.mean_number,
                    METHOD,
                    false,
                );
            }
        }
        Err(e) => a.refuse(METHOD, e.to_string()),
    }
}

/// One open station fed by one class at rate `lambda`; `arrivals` says why the arrivals are not
/// Poisson, if they are not.
fn single_station(net: &Network, s: usize, lambda: f64, arrivals: Option<&str>, a: &mut Analysis) {
    let st = &net.stations[s];
    let Some(d) = st.kind.service().and_then(|t| t[0].as_ref()) else {
        return;
    };
    let (mean, scv) = (d.mean(), d.scv());
    let service_problem = non_exponential_fcfs(net, s).map(|(_, reason)| reason);
    let result = match &st.kind {
        // G/G/inf: every job is served at once whatever the arrivals.
        StationKind::Delay { .. } => Some(("M/G/inf".to_owned(), true, mminf(lambda, mean))),
        StationKind::Queue {
            discipline: Discipline::Ps,
            ..
        } => {
            // M/G/1-PS is insensitive: the M/M/1 means hold for any service distribution.
            let (m, exact) = labelled("M/G/1-PS", true, arrivals);
            Some((m, exact, mm1(lambda, mean)))
        }
        StationKind::Queue { servers: 1, .. } => {
            let method = if d.is_exponential() {
                "M/M/1"
            } else if scv == 0.0 {
                "M/D/1 (Pollaczek-Khinchine)"
            } else {
                "M/G/1 (Pollaczek-Khinchine)"
            };
            let (m, exact) = labelled(method, true, arrivals);
            Some((m, exact, mg1(lambda, mean, scv)))
        }
        StationKind::Queue { servers, .. } => {
            let (m, exact) = labelled(
                "M/M/c (Erlang C)",
                true,
                arrivals.or(service_problem.as_deref()),
            );
            Some((m, exact, mmc(lambda, mean, *servers)))
        }
        _ => None,
    };
    if let Some((method, exact, r)) = result {
        match r {
            Ok(m) => station_predictions(net, s, &m, &method, exact, a),
            Err(e) => a.refuse(&method, e.to_string()),
        }
    }
    // Renewal arrivals, or several servers with general service: the GI/G/c approximations.
    if let StationKind::Queue {
        discipline: Discipline::Fcfs,
        servers,
        ..
    } = &st.kind
        && (arrivals.is_some() || (*servers > 1 && !d.is_exponential()))
    {
        let ca2 = arrival_scv(net);
        let (method, r) = if *servers == 1 {
            (
                "Kingman GI/G/1 approximation (Kingman 1961)",
                kingman(lambda, ca2, mean, scv),
            )
        } else {
            (
                "Allen-Cunneen GI/G/c approximation (Allen 1990)",
                allen_cunneen(lambda, ca2, mean, scv, *servers),
            )
        };
        match r {
            Ok(m) => station_predictions(net, s, &m, method, false, a),
            Err(e) => a.refuse(method, e.to_string()),
        }
    }
}

/// The class response, station response and number of the only station `s` of a one-class
/// open network.
fn station_predictions(
    net: &Network,
    s: usize,
    m: &analytic::StationMetrics,
    method: &str,
    exact: bool,
    a: &mut Analysis,
) {
    let name = &net.stations[s].name;
    a.add(class_metric(net, 0), m.mean_response, method, exact);
    a.add(
        format!("station.{name}.response"),
        m.mean_response,
        method,
        exact,
    );
    a.add(
        format!("station.{name}.number"),
        m.mean_number,
        method,
        exact,
    );
}

/// The SCV of the merged external arrival stream, `sum_i (lambda_i / lambda) c_i^2` over the
/// sources (exact for one source; the superposition rule of Whitt's QNA otherwise).
fn arrival_scv(net: &Network) -> f64 {
    let sources: Vec<(f64, f64)> = net
        .stations
        .iter()
        .filter_map(|st| match &st.kind {
            StationKind::Source { interarrival, .. } => {
                Some((1.0 / interarrival.mean(), interarrival.scv()))
            }
            _ => None,
        })
        .collect();
    let total: f64 = sources.iter().map(|(rate, _)| rate).sum();
    sources.iter().map(|(rate, c2)| rate / total * c2).sum()
}

/// The SCV of class `class`'s service time at `st` (1 where it has none).
fn service_scv(st: &crate::model::Station, class: usize) -> f64 {
    st.kind
        .service()
        .and_then(|t| t[class].as_ref())
        .map_or(1.0, Dist::scv)
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
    let problem = served.iter().find_map(|&s| product_form_problem(net, s));
    let problem = problem.as_deref();
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
        format!("class.{}.throughput", net.classes[0].name),
        level.throughput,
        method,
        exact,
    );
    for (k, &s) in served.iter().enumerate() {
        let name = &net.stations[s].name;
        a.add(
            format!("station.{name}.response"),
            level.residence[k] / v[0][s],
            method,
            exact,
        );
        a.add(
            format!("station.{name}.number"),
            level.queue_length[k],
            method,
            exact,
        );
        if let Some(u) = level.utilisation[k] {
            a.add(format!("station.{name}.utilisation"), u, method, exact);
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
/// branches are distinct, identical single-server FCFS queues. Its assumptions (exponential
/// branches, product-form stations elsewhere) are named in the label where they fail.
fn closed_fork_join(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
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
                .map(|c| laws::open_arrival_rate(net, c))
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
