//! Sojourn laws at the queues that several classes share with different service laws (where
//! [`super::stations`] has none): one law per class from its predicted mean sojourn, and the
//! station's law per visit, over the visits of all classes, as their mixture weighted by the
//! classes' predicted throughputs at the station.

use super::{Estimate, Sojourn};
use crate::analytic::{PhaseType, erlang_c};
use crate::dist::Dist;
use crate::metrics::network::{station_class_subject, visiting};
use crate::network::{Discipline, Network, StationKind};
use crate::predict::Analysis;
use crate::predict::network::service_stations;

use super::stations::preferred_prediction;
use crate::metrics::name::{Figure, Subject};

/// The sojourn law of each class at each station (`[class][station]`): the class's own law at
/// a shared queue that had none, set here together with the station's mixture in `laws`, and
/// the station's law elsewhere.
pub(super) fn laws(
    net: &Network,
    laws: &mut [Option<Estimate>],
    a: &mut Analysis,
) -> Vec<Vec<Option<Estimate>>> {
    let mut per_class = vec![laws.to_vec(); net.classes.len()];
    if net.classes.len() < 2 {
        return per_class;
    }
    for (s, st) in service_stations(net) {
        if laws[s].is_some() || !matches!(st.kind, StationKind::Queue { .. }) {
            continue;
        }
        match shared_queue(net, s, a) {
            Ok((station, classes)) => {
                laws[s] = Some(station);
                for (c, est) in classes {
                    per_class[c][s] = Some(est);
                }
            }
            Err(reason) => a.refuse(
                "class-mixture sojourn percentiles",
                format!("{:?}: {reason}", st.name),
            ),
        }
    }
    per_class
}

/// The station's mixture law and each visiting class's law at queue `s`, from the mean
/// sojourns, throughputs and utilisation of one method (the one preferred for the station's
/// mean response).
fn shared_queue(
    net: &Network,
    s: usize,
    a: &Analysis,
) -> Result<(Estimate, Vec<(usize, Estimate)>), String> {
    let st = &net.stations[s];
    let StationKind::Queue {
        discipline,
        servers,
        service,
    } = &st.kind
    else {
        return Err("not a queue".to_owned());
    };
    let (_, source) = preferred_prediction(a, &Subject::Station(&st.name).metric(Figure::Response))
        .ok_or("no mean response predicted")?;
    let value = |metric: String| {
        a.predictions
            .iter()
            .find(|p| p.metric == metric && p.method == source)
            .map(|p| p.value)
            .ok_or(format!("{source} predicts no {metric}"))
    };
    let utilisation = value(Subject::Station(&st.name).metric(Figure::Utilisation))?;
    // P(wait): U for one server, Erlang C at the offered load c U for several
    let waits = if *servers == 1 {
        utilisation
    } else {
        erlang_c(*servers, f64::from(*servers) * utilisation).map_err(|e| e.to_string())?
    };
    let (label, fcfs) = match discipline {
        Discipline::Fcfs => (
            format!(
                "per class: the mean wait of {source}, 0 w.p. 1 - P(wait) (P(wait) = U for one server, Erlang C at load c U for several) else exponential, plus the class's service; the station's law is the classes' mixture weighted by their throughputs; approximation: an arriving job does not see the time-average state (a closed or non-Poisson network) and the wait given that it is positive is not exponential"
            ),
            true,
        ),
        Discipline::Ps => (
            format!(
                "per class: exponential with the mean of {source}; the station's law is the classes' mixture weighted by their throughputs; approximation: the sojourn at a PS server is not exponential"
            ),
            false,
        ),
    };
    let mut classes = Vec::new();
    let mut parts = Vec::new();
    for c in visiting(net, s) {
        let subject = station_class_subject(net, s, c);
        let mean = value(subject.metric(Figure::Response))?;
        let throughput = value(subject.metric(Figure::Throughput))?;
        let d: &Dist = service.get(c).and_then(Option::as_ref).ok_or(format!(
            "no service law for class {:?}",
            net.classes[c].name
        ))?;
        let law = if fcfs {
            Sojourn::Waited {
                service: d.clone(),
                waits,
                mean_wait: (mean - d.mean()).max(0.0),
            }
        } else {
            Sojourn::Phase(PhaseType::exponential(1.0 / mean).map_err(|e| e.to_string())?)
        };
        parts.push((throughput, law.clone()));
        classes.push((
            c,
            Estimate {
                law,
                method: label.clone(),
                exact: false,
            },
        ));
    }
    let total: f64 = parts.iter().map(|(x, _)| x).sum();
    if total.is_nan() || total <= 0.0 {
        return Err(format!("{source} predicts no throughput"));
    }
    let law = match &parts[..] {
        [(_, one)] => one.clone(),
        _ => Sojourn::Mixture(parts.into_iter().map(|(x, l)| (x / total, l)).collect()),
    };
    Ok((
        Estimate {
            law,
            method: label,
            exact: false,
        },
        classes,
    ))
}
