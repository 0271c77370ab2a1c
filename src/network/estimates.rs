//! What the traffic equations say about a run before it starts: each class's demand per
//! observation (the scale of its end-to-end times), the events per observation (to tell a
//! stalled run from a slow one), and the rate of observations (to tell whether a run of a given
//! length fits the clock).
//!
//! Per observation means per arrival of an open class and per cycle of a closed one.

use super::{ClassKind, Network, StationKind, visits};

/// Per class, visits per observation to every station (`[class][station]`); `None` when the
/// traffic equations have no answer.
fn visits_per_observation(net: &Network) -> Option<Vec<Vec<f64>>> {
    let v = visits(net).ok()?;
    Some(
        v.into_iter()
            .enumerate()
            .map(|(c, row)| {
                let per = match net.classes[c].kind {
                    ClassKind::Open => arrival_rate(net, c),
                    ClassKind::Closed { .. } => 1.0,
                };
                row.into_iter()
                    .map(|x| if per > 0.0 { x / per } else { 0.0 })
                    .collect()
            })
            .collect(),
    )
}

/// The arrival rate of open class `c` (sum over its sources).
pub fn arrival_rate(net: &Network, c: usize) -> f64 {
    net.stations
        .iter()
        .filter_map(|s| match &s.kind {
            StationKind::Source {
                class,
                interarrival,
            } if class.index() == c => {
                Some(s.features.batch.map_or(1.0, |b| b.mean()) / interarrival.mean())
            }
            _ => None,
        })
        .sum()
}

/// Each class's demand per observation: visits times mean service, summed over the stations.
/// `None` where the traffic equations have no answer or the demand is not positive.
pub fn demand_per_observation(net: &Network) -> Vec<Option<f64>> {
    let v = visits_per_observation(net);
    (0..net.classes.len())
        .map(|c| {
            let v = v.as_ref()?;
            let demand: f64 = net
                .stations
                .iter()
                .enumerate()
                .filter_map(|(s, st)| Some(v[c][s] * st.kind.service()?[c].as_ref()?.mean()))
                .sum();
            (demand.is_finite() && demand > 0.0).then_some(demand)
        })
        .collect()
}

/// Events per observation: one per visit to a serving station (its departure) plus one for an
/// open arrival; the largest over the classes (1000 when the traffic equations have no answer).
pub fn events_per_observation(net: &Network) -> f64 {
    let Some(v) = visits_per_observation(net) else {
        return 1000.0;
    };
    v.iter()
        .map(|row| {
            1.0 + net
                .stations
                .iter()
                .zip(row)
                .filter(|(s, _)| s.kind.service().is_some())
                .map(|(_, x)| x)
                .sum::<f64>()
        })
        .filter(|e| e.is_finite())
        .fold(1.0, f64::max)
}

/// The most events one replication may be expected to take (`2^36`, about an hour at the
/// queueing engine's speed): a longer one is refused before it starts ([`too_many_events`]).
pub const MAX_REPLICATION_EVENTS: f64 = 68_719_476_736.0;

/// Why a replication of `observations` observations of `net` would take too long, if it
/// would: even the class whose observations cost the fewest events (one per visit to a
/// serving station, one per open arrival) would make it take more than
/// [`MAX_REPLICATION_EVENTS`] (a routing that keeps jobs circulating: a return with
/// probability 0.999999999999 is 10^12 visits per job).
pub fn too_many_events(net: &Network, observations: u64) -> Option<String> {
    let v = visits_per_observation(net)?;
    let (class, least) = v
        .iter()
        .enumerate()
        .map(|(c, row)| {
            let visits: f64 = net
                .stations
                .iter()
                .zip(row)
                .filter(|(s, _)| s.kind.service().is_some())
                .map(|(_, x)| x)
                .sum();
            (c, 1.0 + visits)
        })
        .filter(|(_, e)| e.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let events = least * observations as f64;
    (events > MAX_REPLICATION_EVENTS).then(|| {
        format!(
            "a replication of {observations} observations would take about {events:.3e} events ({least:.3e} per observation: the routing brings each job of class {:?} to a serving station {:.3e} times per {}), beyond the {MAX_REPLICATION_EVENTS:.3e} (2^36, about an hour) a replication may take: lower the routing probability that keeps jobs circulating, or run.length",
            net.classes[class].name,
            least - 1.0,
            match net.classes[class].kind {
                ClassKind::Open => "job",
                ClassKind::Closed { .. } => "cycle",
            }
        )
    })
}

/// About how many observations the run makes per time unit: the open classes' arrival rates,
/// plus for each closed class the throughput `N / (N D + Z)` it would have if each of its jobs
/// found all the others ahead of it at every queue (`D` its demand at queues, `Z` at delays), a
/// pessimistic estimate. `None` when nothing can be said (no class makes observations).
pub fn observation_rate(net: &Network) -> Option<f64> {
    let rate: f64 = class_observation_rates(net)?.iter().sum();
    (rate.is_finite() && rate > 0.0).then_some(rate)
}

/// Each class's share of [`observation_rate`], per time unit (the same estimates).
fn class_observation_rates(net: &Network) -> Option<Vec<f64>> {
    let v = visits_per_observation(net)?;
    Some(
        net.classes
            .iter()
            .enumerate()
            .map(|(c, class)| match class.kind {
                ClassKind::Open => arrival_rate(net, c),
                ClassKind::Closed { population, .. } => {
                    let (mut queues, mut delays) = (0.0, 0.0);
                    for (s, st) in net.stations.iter().enumerate() {
                        let Some(Some(d)) = st.kind.service().map(|t| &t[c]) else {
                            continue;
                        };
                        let demand = v[c][s] * d.mean();
                        match st.kind {
                            StationKind::Delay { .. } => delays += demand,
                            _ => queues += demand,
                        }
                    }
                    let n = f64::from(population);
                    let cycle = n * queues + delays;
                    if cycle > 0.0 { n / cycle } else { 0.0 }
                }
            })
            .collect(),
    )
}

/// How many values each station's laws draw per observation, estimated as
/// [`observation_rate`] is: `source[s]` for station `s`'s inter-arrival law (one per arrival
/// or batch), `service[s][c]` for its service law of class `c` (one per visit), `arrivals[s]`
/// for all the visits it receives (a bound on its patience draws). `None` when the traffic
/// equations have no answer.
pub fn draws_per_observation(net: &Network) -> Option<Draws> {
    let v = visits_per_observation(net)?;
    let rates = class_observation_rates(net)?;
    let total: f64 = rates.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return None;
    }
    let share: Vec<f64> = rates.iter().map(|r| r / total).collect();
    let service: Vec<Vec<f64>> = (0..net.stations.len())
        .map(|s| (0..net.classes.len()).map(|c| v[c][s] * share[c]).collect())
        .collect();
    Some(Draws {
        source: net
            .stations
            .iter()
            .map(|st| match &st.kind {
                StationKind::Source { interarrival, .. } => 1.0 / interarrival.mean() / total,
                _ => 0.0,
            })
            .collect(),
        arrivals: service.iter().map(|row| row.iter().sum()).collect(),
        service,
    })
}

/// Draws per observation of each station's laws (see [`draws_per_observation`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Draws {
    /// Per station, its inter-arrival draws (0 for a station that is not a source).
    pub source: Vec<f64>,
    /// Per station and class, its service draws.
    pub service: Vec<Vec<f64>>,
    /// Per station, the visits it receives.
    pub arrivals: Vec<f64>,
}
