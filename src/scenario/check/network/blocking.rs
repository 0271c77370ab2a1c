//! Stations that block when full (`when_full = "block"`): what they need from the rest of the
//! network. A job blocked after service waits in the server of the station it finished at, so
//! a source, which has no server, cannot feed a blocking station; and a closed population that
//! fills every station of its cycle can never move.

use super::Checker;
use crate::network::{
    ClassKind, Network, Routing, StationId, StationKind, Target, WhenFull, visits,
};
use crate::scenario::raw::RawScenario;

/// The capacity of station `s` if it blocks when full.
fn blocking_capacity(net: &Network, s: usize) -> Option<u32> {
    net.stations[s]
        .features
        .capacity
        .filter(|c| c.when_full == WhenFull::Block)
        .map(|c| c.jobs)
}

/// Checks the blocking stations of `net`: none fed straight from a source, and no closed
/// population (alone, or all of them together) that reaches the total capacity of the stations
/// it visits when each of them has one.
pub(super) fn check_blocking(ck: &mut Checker, raw: &RawScenario, net: &Network) {
    if !(0..net.stations.len()).any(|s| blocking_capacity(net, s).is_some()) {
        return;
    }
    for (s, st) in net.stations.iter().enumerate() {
        let StationKind::Source { class, .. } = st.kind else {
            continue;
        };
        let rule = net.routing.rule(class, StationId(s as u32));
        for (target, _) in Routing::branch_probabilities(rule, &net.groups) {
            let Target::Station(to, _) = target else {
                continue;
            };
            if blocking_capacity(net, to.index()).is_some() {
                let i = to.index();
                ck.add(
                    Some(raw.stations[i].field_at("when_full")),
                    format!("station[{i}].when_full"),
                    format!(
                        "class {:?} arrives here straight from source {:?}, which has no server to hold a job that finds the station full: use when_full = \"lose\" here, or let the jobs pass a station before this one",
                        net.classes[class.index()].name,
                        st.name
                    ),
                );
            }
        }
    }
    let Ok(v) = visits(net) else {
        return;
    };
    let mut all = Vec::new();
    for (c, class) in net.classes.iter().enumerate() {
        let ClassKind::Closed { population, .. } = class.kind else {
            continue;
        };
        let stations = visited(net, &v, c);
        all.push((c, population, stations.clone()));
        population_fits(ck, raw, net, &[(c, population)], &stations);
    }
    if all.len() > 1 {
        let mut union: Vec<usize> = all.iter().flat_map(|(_, _, s)| s.clone()).collect();
        union.sort_unstable();
        union.dedup();
        let classes: Vec<(usize, u32)> = all.iter().map(|(c, n, _)| (*c, *n)).collect();
        population_fits(ck, raw, net, &classes, &union);
    }
}

/// The service stations class `c` visits (`v` from the traffic equations).
fn visited(net: &Network, v: &[Vec<f64>], c: usize) -> Vec<usize> {
    (0..net.stations.len())
        .filter(|&s| v[c][s] > 0.0 && net.stations[s].kind.service().is_some())
        .collect()
}

/// Reports the closed `classes` (index, population) when together they fill `stations`, each
/// of which blocks when full.
fn population_fits(
    ck: &mut Checker,
    raw: &RawScenario,
    net: &Network,
    classes: &[(usize, u32)],
    stations: &[usize],
) {
    let Some(capacities) = stations
        .iter()
        .map(|&s| blocking_capacity(net, s).map(u64::from))
        .collect::<Option<Vec<u64>>>()
    else {
        return;
    };
    let total: u64 = capacities.iter().sum();
    let jobs: u64 = classes.iter().map(|(_, n)| u64::from(*n)).sum();
    if jobs < total {
        return;
    }
    let listed: Vec<String> = stations
        .iter()
        .zip(&capacities)
        .map(|(&s, k)| format!("{:?} {k}", net.stations[s].name))
        .collect();
    let (c, _) = classes[0];
    let who = if classes.len() == 1 {
        format!("class {:?} has {jobs} jobs", net.classes[c].name)
    } else {
        let names: Vec<&str> = classes
            .iter()
            .map(|(c, _)| net.classes[*c].name.as_str())
            .collect();
        format!(
            "the closed classes {} have {jobs} jobs together",
            names.join(", ")
        )
    };
    ck.add(
        Some(raw.classes[c].field_at("population")),
        format!("class[{c}].population"),
        format!(
            "{who}, and the stations they visit hold at most {total} (capacities {}): every station would stay full, and the first job to finish would block for ever (deadlock); give a population below {total}, or raise a capacity",
            listed.join(", ")
        ),
    );
}
