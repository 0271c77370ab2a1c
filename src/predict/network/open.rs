//! Open networks: one station (M/M/1, M/G/1, M/M/c, M/G/inf, M/G/1-PS, Kingman, Allen-Cunneen),
//! Jackson networks and Whitt's QNA.

use super::{
    Analysis, center_kind, labelled, mean_service, non_exponential_fcfs, product_form_problem,
    service_scv, service_stations, short,
};
use crate::analytic::{
    self, CenterKind, QnaStation, allen_cunneen, kingman, mg1, mm1, mmc, mminf, qna,
};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::{class_metric, station_class_subject, visiting};
use crate::network::{ClassId, Discipline, Network, Routing, StationId, StationKind, Target};

/// The first source whose arrivals are not Poisson, as the reason it breaks the open-network
/// formulas.
pub(super) fn arrival_problem(net: &Network) -> Option<String> {
    correlated_arrivals(net).or_else(|| {
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
    })
}

/// The first source whose arrivals are a Markovian arrival process, as the reason formulas
/// for renewal arrivals (Kingman, Allen-Cunneen, QNA, GI/M/c) are approximations there: its
/// inter-arrival times are correlated.
pub(super) fn correlated_arrivals(net: &Network) -> Option<String> {
    net.stations.iter().find_map(|st| match &st.kind {
        StationKind::Source { interarrival, .. } => {
            if let Some(m) = interarrival.arrival_process() {
                return Some(format!(
                    "source {:?} is a Markovian arrival process (inter-arrival SCV {}, lag-1 correlation {}), taken as renewal",
                    st.name,
                    short(interarrival.scv()),
                    short(m.lag_correlation(1))
                ));
            }
            let trace = interarrival.replayed_trace()?;
            let (rho, band) = (trace.lag_correlation(1), independence_band(trace.len()));
            (rho.abs() > band).then(|| {
                format!(
                    "source {:?} replays a trace whose successive inter-arrival times are correlated (lag-1 correlation {}, outside the +-{} that {} independent samples stay within 99% of the time), taken as renewal",
                    st.name,
                    short(rho),
                    short(band),
                    trace.len()
                )
            })
        }
        _ => None,
    })
}

/// The half-width within which the lag-1 autocorrelation of `n` independent samples falls 99%
/// of the time (its standard error is `1/sqrt(n)`; 2.576 is the normal law's 99.5% point).
fn independence_band(n: usize) -> f64 {
    2.576 / (n as f64).sqrt()
}

pub(super) fn open_network(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    let arrivals = arrival_problem(net);
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    if served.len() == 1 && net.classes.len() == 1 {
        let s = served[0];
        let visits = v[0][s] / crate::network::estimates::arrival_rate(net, 0);
        // Jobs fed back merge with the source's: Jackson keeps M/M/c and PS exact, but a
        // non-exponential FCFS server sees a merged stream that is not Poisson.
        let feedback = (visits > 1.0 + 1e-9)
            .then(|| non_exponential_fcfs(net, s))
            .flatten()
            .map(|_| {
                format!(
                    "station {:?} feeds jobs back to itself ({} visits per job): its arrivals are not Poisson",
                    net.stations[s].name,
                    short(visits)
                )
            });
        single_station(net, s, v[0][s], arrivals.or(feedback).as_deref(), a);
        // every arrival visits the station once: its arrival stream is the source's
        if (visits - 1.0).abs() < 1e-12 {
            super::matrix_analytic::single_station(net, s, v[0][s], a);
        }
        return;
    }
    let problem = arrivals.or_else(|| served.iter().find_map(|&s| product_form_problem(net, s)));
    if net.classes.len() == 1 && problem.is_some() {
        whitt_qna(net, &served, a);
    }
    let kinds: Vec<CenterKind> = net.stations.iter().map(center_kind).collect();
    let classes: Vec<analytic::OpenClass> = (0..net.classes.len())
        .map(|c| {
            let rate = crate::network::estimates::arrival_rate(net, c);
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
                    Subject::Station(name).metric(Figure::Number),
                    sol.mean_number[s],
                    &m,
                    exact,
                );
                if sol.arrival_rate[s] > 0.0 {
                    // Little's law over all classes: R = L / lambda.
                    a.add(
                        Subject::Station(name).metric(Figure::Response),
                        sol.mean_number[s] / sol.arrival_rate[s],
                        &m,
                        exact,
                    );
                }
                let visiting = visiting(net, s);
                for &c in visiting.iter().filter(|_| visiting.len() > 1) {
                    let per_job = classes[c].visits[s];
                    if per_job > 0.0 {
                        let subject = station_class_subject(net, s, c);
                        let residence = sol.residence[c][s];
                        a.add(
                            subject.metric(Figure::Response),
                            residence / per_job,
                            &m,
                            exact,
                        );
                        a.add(
                            subject.metric(Figure::Number),
                            sol.throughput[c] * residence,
                            &m,
                            exact,
                        );
                    }
                }
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
    // a Markovian source enters with its SCV: its correlation is not seen, and the label says so
    let (method, _) = labelled(METHOD, false, correlated_arrivals(net).as_deref());
    match qna(&stations, &routing) {
        Ok(sol) => {
            a.add(class_metric(net, 0), sol.response_time, &method, false);
            for (k, &s) in served.iter().enumerate() {
                let name = &net.stations[s].name;
                let m = &sol.stations[k];
                a.add(
                    Subject::Station(name).metric(Figure::Response),
                    m.mean_response,
                    &method,
                    false,
                );
                a.add(
                    Subject::Station(name).metric(Figure::Number),
                    m.mean_number,
                    &method,
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
        let (method, _) = labelled(method, false, correlated_arrivals(net).as_deref());
        match r {
            Ok(m) => station_predictions(net, s, &m, &method, false, a),
            Err(e) => a.refuse(&method, e.to_string()),
        }
    }
}

/// The class response (visits per job times the response per visit), station response and
/// number of the only station `s` of a one-class open network.
fn station_predictions(
    net: &Network,
    s: usize,
    m: &analytic::StationMetrics,
    method: &str,
    exact: bool,
    a: &mut Analysis,
) {
    let name = &net.stations[s].name;
    let visits = m.throughput / crate::network::estimates::arrival_rate(net, 0);
    a.add(
        class_metric(net, 0),
        visits * m.mean_response,
        method,
        exact,
    );
    a.add(
        Subject::Station(name).metric(Figure::Response),
        m.mean_response,
        method,
        exact,
    );
    a.add(
        Subject::Station(name).metric(Figure::Number),
        m.mean_number,
        method,
        exact,
    );
}

/// The SCV of the merged external arrival stream, `sum_i (lambda_i / lambda) c_i^2` over the
/// sources (exact for one source; the superposition rule of Whitt's QNA otherwise).
pub(super) fn arrival_scv(net: &Network) -> f64 {
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
