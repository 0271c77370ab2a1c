//! Predictions that follow from the others by definition: waiting time in queue
//! (`Wq = R - S` at an FCFS queue whose classes share one mean service time `S`), visits and
//! residence per job or cycle (`V`, `V R`), and a closed class's response time without its
//! reference station (`N / X - Z`, the cycle less the time at the reference), and the sum of
//! station responses along a `[[path]]`.
//!
//! Each takes the method and exactness of the prediction it is computed from, so whatever
//! solved the network (MVA, Jackson, an approximation) predicts these too.

use super::{Analysis, mean_service};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::{class_metric, completes, station_class_subject, visiting};
use crate::network::{ClassKind, Discipline, Network, StationKind};

/// Adds the derived predictions to `a`, after every method has run; `v` are the traffic
/// equations' solution (flows of open classes, visits per cycle of closed ones).
pub(super) fn add(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    flows(net, v, a);
    for s in 0..net.stations.len() {
        little_all(net, s, a);
    }
    for (s, st) in net.stations.iter().enumerate() {
        let classes = visiting(net, s);
        for &c in classes.iter().filter(|&&c| completes(net, c)) {
            let Some(v) = a
                .demands
                .iter()
                .find(|d| d.station == st.name && d.class == net.classes[c].name)
                .map(|d| d.visits)
            else {
                continue;
            };
            let subject = station_class_subject(net, s, c);
            // Exact for any distribution. (The simulated ratio, visits over completions in the
            // measured window, also counts the cut cycles at the window's ends, a bias of the
            // order of the population over the observations that its interval does not cover:
            // `crate::validate` reports it beside the simulation rather than judging it.)
            a.add(
                subject.metric(Figure::Visits),
                v,
                "traffic equations (exact for any distribution)",
                true,
            );
            little(a, subject, v, &net.classes[c].name);
            for r in all(a, &subject.metric(Figure::Response)) {
                a.add(subject.metric(Figure::Residence), v * r.0, &r.1, r.2);
            }
        }
        wait(net, s, &classes, a);
    }
    for (c, class) in net.classes.iter().enumerate() {
        let ClassKind::Closed { reference, .. } = class.kind else {
            continue;
        };
        let at_reference =
            station_class_subject(net, reference.0 as usize, c).metric(Figure::Response);
        let cycle = class_metric(net, c);
        for x in all(a, &cycle) {
            let same = all(a, &at_reference).into_iter().find(|z| z.1 == x.1);
            if let Some(z) = same.or_else(|| all(a, &at_reference).into_iter().next()) {
                let (method, exact) = joint(&x, &z);
                let name = Subject::Class(&class.name).metric(Figure::Response);
                a.add(name, x.0 - z.0, &method, exact);
            }
        }
    }
    for path in &net.paths {
        paths(net, path, a);
    }
}

/// `path.<p>.response`: the sum of its stations' response predictions, by each method that
/// predicts every one of them; when none does, the sum of each station's first prediction,
/// labelled with the methods summed.
fn paths(net: &Network, path: &crate::network::Path, a: &mut Analysis) {
    let per_station: Vec<Vec<(f64, String, bool)>> = path
        .stations
        .iter()
        .map(|s| {
            all(
                a,
                &Subject::Station(&net.station(*s).name).metric(Figure::Response),
            )
        })
        .collect();
    if per_station.iter().any(Vec::is_empty) {
        return;
    }
    let metric = Subject::Path(&path.name).metric(Figure::Response);
    let mut common = 0;
    for (_, method, _) in &per_station[0] {
        let parts: Option<Vec<&(f64, String, bool)>> = per_station
            .iter()
            .map(|preds| preds.iter().find(|p| &p.1 == method))
            .collect();
        if let Some(parts) = parts {
            let total = parts.iter().map(|p| p.0).sum();
            a.add(metric.clone(), total, method, parts.iter().all(|p| p.2));
            common += 1;
        }
    }
    if common == 0 {
        let firsts: Vec<&(f64, String, bool)> = per_station.iter().map(|p| &p[0]).collect();
        let mut labels: Vec<&str> = Vec::new();
        for p in &firsts {
            if !labels.contains(&p.1.as_str()) {
                labels.push(&p.1);
            }
        }
        let total = firsts.iter().map(|p| p.0).sum();
        let exact = firsts.iter().all(|p| p.2);
        a.add(
            metric,
            total,
            &format!("sum of {}", labels.join(" + ")),
            exact,
        );
    }
}

/// Throughputs by flow balance and the forced-flow law: an open class's throughput is its
/// arrival rate (exact for any distribution); for each method that predicts a class's
/// throughput `X`, each station it visits passes `V X` of it (per class where several classes
/// visit, summed over them for the station, forks included).
fn flows(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    const BALANCE: &str = "flow balance X = lambda (any distribution)";
    for (c, class) in net.classes.iter().enumerate() {
        if class.kind == ClassKind::Open && completes(net, c) {
            let rate = crate::network::estimates::arrival_rate(net, c);
            a.add(
                Subject::Class(&class.name).metric(Figure::Throughput),
                rate,
                BALANCE,
                true,
            );
        }
    }
    for (s, st) in net.stations.iter().enumerate() {
        if matches!(
            st.kind,
            StationKind::Source { .. } | StationKind::Sink | StationKind::Join { .. }
        ) {
            continue;
        }
        if let StationKind::Delay { .. } = st.kind {
            delay_response(net, s, a);
        }
        let classes: Vec<usize> = (0..net.classes.len()).filter(|&c| v[c][s] > 0.0).collect();
        let Some(&first) = classes.first() else {
            continue;
        };
        // visits per job (open: flow over arrival rate) or per cycle (closed)
        let per_job = |c: usize| match net.classes[c].kind {
            ClassKind::Open => v[c][s] / crate::network::estimates::arrival_rate(net, c),
            ClassKind::Closed { .. } => v[c][s],
        };
        let throughput = |c: usize, a: &Analysis| {
            all(
                a,
                &Subject::Class(&net.classes[c].name).metric(Figure::Throughput),
            )
        };
        for x in throughput(first, a) {
            let mut total = 0.0;
            let mut exact = true;
            let mut per_class = Vec::new();
            for &c in &classes {
                let Some(xc) = throughput(c, a).into_iter().find(|y| y.1 == x.1) else {
                    total = f64::NAN;
                    break;
                };
                total += per_job(c) * xc.0;
                exact &= xc.2;
                per_class.push((c, per_job(c) * xc.0));
            }
            let station = Subject::Station(&st.name).metric(Figure::Throughput);
            if !all(a, &station).iter().any(|y| y.1 == x.1) {
                a.add(station, total, &x.1, exact);
            }
            if classes.len() > 1 && total.is_finite() {
                for (c, flow) in per_class {
                    let name = Subject::StationClass(&st.name, &net.classes[c].name)
                        .metric(Figure::Throughput);
                    a.add(name, flow, &x.1, exact);
                }
            }
        }
    }
}

/// At a delay (infinite servers) a visit lasts its service time, whatever the distribution and
/// the load: `R = S` per class, and for the station when its classes share one mean. Added
/// where no method gave an exact value.
fn delay_response(net: &Network, s: usize, a: &mut Analysis) {
    const METHOD: &str = "delay: R = S (any distribution)";
    let st = &net.stations[s];
    let classes = visiting(net, s);
    let means: Vec<f64> = classes.iter().map(|&c| mean_service(st, c)).collect();
    let mut put = |metric: String, value: f64| {
        if !all(a, &metric).iter().any(|p| p.2) {
            a.add(metric, value, METHOD, true);
        }
    };
    if let Some(&m) = means.first()
        && means.iter().all(|x| (x / m - 1.0).abs() < 1e-9)
    {
        put(Subject::Station(&st.name).metric(Figure::Response), m);
    }
    if classes.len() > 1 {
        for (&c, &m) in classes.iter().zip(&means) {
            put(station_class_subject(net, s, c).metric(Figure::Response), m);
        }
    }
}

/// Little's law `N = X R` at station `s` (and at each class there where several visit): for
/// each method that predicts the response but not the number, the number, and the other way
/// round, with a throughput by the same method or one exact for any distribution.
fn little_all(net: &Network, s: usize, a: &mut Analysis) {
    let st = &net.stations[s];
    if matches!(
        st.kind,
        StationKind::Source { .. } | StationKind::Sink | StationKind::Join { .. }
    ) {
        return;
    }
    let mut subjects = vec![Subject::Station(&st.name)];
    let classes = visiting(net, s);
    if classes.len() > 1 {
        subjects.extend(classes.iter().map(|&c| station_class_subject(net, s, c)));
    }
    for subject in subjects {
        let xs = all(a, &subject.metric(Figure::Throughput));
        let matching = |m: &str| {
            xs.iter()
                .find(|x| x.1 == m)
                .or_else(|| xs.iter().find(|x| x.2))
                .cloned()
        };
        let (number, response) = (
            subject.metric(Figure::Number),
            subject.metric(Figure::Response),
        );
        let (ns, rs) = (all(a, &number), all(a, &response));
        for r in &rs {
            if let Some(x) = matching(&r.1).filter(|_| !ns.iter().any(|q| q.1 == r.1)) {
                a.add(number.clone(), x.0 * r.0, &r.1, x.2 && r.2);
            }
        }
        for q in &ns {
            if let Some(x) = matching(&q.1).filter(|x| x.0 > 0.0 && !rs.iter().any(|r| r.1 == q.1))
            {
                a.add(response.clone(), q.0 / x.0, &q.1, x.2 && q.2);
            }
        }
    }
}

/// `<subject>.response` by Little's law, `R = Q / (V X)`, for each method that predicts the
/// station's number `Q` and the class's throughput `X` but not the response (the multiclass
/// solvers at stations one class visits). `v` is the class's visits to the station.
fn little(a: &mut Analysis, subject: Subject<'_>, v: f64, class: &str) {
    let response = subject.metric(Figure::Response);
    let throughput = all(a, &Subject::Class(class).metric(Figure::Throughput));
    for q in all(a, &subject.metric(Figure::Number)) {
        let known = all(a, &response).iter().any(|r| r.1 == q.1);
        if let Some(x) = throughput.iter().find(|x| x.1 == q.1)
            && !known
            && v > 0.0
        {
            a.add(response.clone(), q.0 / (v * x.0), &q.1, q.2 && x.2);
        }
    }
}

/// `station.<s>.wait` at an FCFS queue: its response less the mean service time, when every
/// visiting class has the same mean (otherwise `S` depends on the mix of classes); and with
/// several classes `station.<s>.<c>.wait`, each class's response less its own mean.
fn wait(net: &Network, s: usize, classes: &[usize], a: &mut Analysis) {
    let st = &net.stations[s];
    let StationKind::Queue {
        discipline: Discipline::Fcfs,
        ..
    } = st.kind
    else {
        return;
    };
    if classes.len() > 1 {
        for &c in classes {
            let subject = Subject::StationClass(&st.name, &net.classes[c].name);
            for r in all(a, &subject.metric(Figure::Response)) {
                a.add(
                    subject.metric(Figure::Wait),
                    r.0 - mean_service(st, c),
                    &r.1,
                    r.2,
                );
            }
        }
    }
    let means: Vec<f64> = classes.iter().map(|&c| mean_service(st, c)).collect();
    let Some(&service) = means.first() else {
        return;
    };
    if means.iter().any(|m| (m / service - 1.0).abs() > 1e-9) {
        mixed_wait(net, s, classes, a);
        return;
    }
    for r in all(a, &Subject::Station(&st.name).metric(Figure::Response)) {
        a.add(
            Subject::Station(&st.name).metric(Figure::Wait),
            r.0 - service,
            &r.1,
            r.2,
        );
    }
}

/// `station.<s>.wait` at an FCFS queue whose classes have different mean service times: the
/// simulator averages the wait over every visit, whatever its class, so the station's wait is
/// the throughput-weighted mean of the classes' waits, `sum_c X_c Wq_c / sum_c X_c`, for each
/// method that predicts every class's wait and throughput there (labelled as those are).
fn mixed_wait(net: &Network, s: usize, classes: &[usize], a: &mut Analysis) {
    let st = &net.stations[s];
    let per_class = |c: usize, figure: Figure| {
        all(
            a,
            &Subject::StationClass(&st.name, &net.classes[c].name).metric(figure),
        )
    };
    let Some(&first) = classes.first() else {
        return;
    };
    let found: Vec<(Vec<_>, Vec<_>)> = classes
        .iter()
        .map(|&c| (per_class(c, Figure::Wait), per_class(c, Figure::Throughput)))
        .collect();
    for w in per_class(first, Figure::Wait) {
        let mut weighted = 0.0;
        let mut flow = 0.0;
        let mut exact = true;
        for (waits, flows) in &found {
            let same = |p: &&(f64, String, bool)| p.1 == w.1;
            let (Some(wc), Some(xc)) = (waits.iter().find(same), flows.iter().find(same)) else {
                flow = f64::NAN;
                break;
            };
            weighted += xc.0 * wc.0;
            flow += xc.0;
            exact &= wc.2 && xc.2;
        }
        if flow > 0.0 {
            a.add(
                Subject::Station(&st.name).metric(Figure::Wait),
                weighted / flow,
                &w.1,
                exact,
            );
        }
    }
}

/// Every prediction of `metric`: value, method, exactness.
fn all(a: &Analysis, metric: &str) -> Vec<(f64, String, bool)> {
    a.predictions
        .iter()
        .filter(|p| p.metric == metric)
        .map(|p| (p.value, p.method.clone(), p.exact))
        .collect()
}

/// The label and exactness of a value computed from two predictions.
fn joint(x: &(f64, String, bool), y: &(f64, String, bool)) -> (String, bool) {
    let method = if x.1 == y.1 {
        x.1.clone()
    } else {
        format!("{}; {}", x.1, y.1)
    };
    (method, x.2 && y.2)
}
