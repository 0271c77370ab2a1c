//! Predictions that follow from the others by definition: waiting time in queue
//! (`Wq = R - S` at an FCFS queue whose classes share one mean service time `S`), visits and
//! residence per job or cycle (`V`, `V R`), and a closed class's response time without its
//! reference station (`N / X - Z`, the cycle less the time at the reference).
//!
//! Each takes the method and exactness of the prediction it is computed from, so whatever
//! solved the network (MVA, Jackson, an approximation) predicts these too.

use super::{Analysis, mean_service};
use crate::metrics::{class_metric, completes, station_class_prefix, visiting};
use crate::model::{ClassKind, Discipline, Network, StationKind};

/// Adds the derived predictions to `a`, after every method has run.
pub(super) fn add(net: &Network, a: &mut Analysis) {
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
            let prefix = station_class_prefix(net, s, c);
            // Exact in the long run, but the simulated ratio (visits over completions in the
            // measured window) also counts the cut cycles at the window's ends, a bias of the
            // order of the population over the observations that its interval does not
            // cover: reported beside the simulation, not judged as an exact value.
            a.add(
                format!("{prefix}.visits"),
                v,
                "traffic equations (any distribution; the simulated ratio includes the cycles cut by the window)",
                false,
            );
            little(a, &prefix, v, &net.classes[c].name);
            for r in all(a, &format!("{prefix}.response")) {
                a.add(format!("{prefix}.residence"), v * r.0, &r.1, r.2);
            }
        }
        wait(net, s, &classes, a);
    }
    for (c, class) in net.classes.iter().enumerate() {
        let ClassKind::Closed { reference, .. } = class.kind else {
            continue;
        };
        let at_reference = format!(
            "{}.response",
            station_class_prefix(net, reference.0 as usize, c)
        );
        let cycle = class_metric(net, c);
        for x in all(a, &cycle) {
            let same = all(a, &at_reference).into_iter().find(|z| z.1 == x.1);
            if let Some(z) = same.or_else(|| all(a, &at_reference).into_iter().next()) {
                let (method, exact) = joint(&x, &z);
                let name = format!("class.{}.response", class.name);
                a.add(name, x.0 - z.0, &method, exact);
            }
        }
    }
}

/// `<prefix>.response` by Little's law, `R = Q / (V X)`, for each method that predicts the
/// station's number `Q` and the class's throughput `X` but not the response (the multiclass
/// solvers at stations one class visits). `v` is the class's visits to the station.
fn little(a: &mut Analysis, prefix: &str, v: f64, class: &str) {
    let response = format!("{prefix}.response");
    let throughput = all(a, &format!("class.{class}.throughput"));
    for q in all(a, &format!("{prefix}.number")) {
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
/// visiting class has the same mean (otherwise `S` depends on the mix of classes).
fn wait(net: &Network, s: usize, classes: &[usize], a: &mut Analysis) {
    let st = &net.stations[s];
    let StationKind::Queue {
        discipline: Discipline::Fcfs,
        ..
    } = st.kind
    else {
        return;
    };
    let means: Vec<f64> = classes.iter().map(|&c| mean_service(st, c)).collect();
    let Some(&service) = means.first() else {
        return;
    };
    if means.iter().any(|m| (m / service - 1.0).abs() > 1e-9) {
        return;
    }
    for r in all(a, &format!("station.{}.response", st.name)) {
        a.add(
            format!("station.{}.wait", st.name),
            r.0 - service,
            &r.1,
            r.2,
        );
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
