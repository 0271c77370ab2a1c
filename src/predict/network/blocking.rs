//! Closed networks whose stations block when full: Akyildiz's MVA with blocking (MVABLO), an
//! approximation whose error the simulation shows.

use std::path::Path;

use super::{Analysis, service_stations};
use crate::analytic::mva_blocking;
use crate::dist::DistSpec;
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::class_metric;
use crate::network::{ClassKind, Discipline, Network, Rule, StationKind, WhenFull};
use crate::stats::PERCENTILES;

/// The label of MVABLO's predictions.
pub(super) const METHOD: &str =
    "Akyildiz's MVA with blocking (MVABLO, blocking after service), an approximation";

/// The label of the percentiles built on MVABLO's means.
const PERCENTILE_METHOD: &str = "gamma laws with MVABLO's means (exponential per visit; a cycle's SCV from independent visits), an approximation";

/// True when some station of `net` blocks when full.
pub(super) fn blocks(net: &Network) -> bool {
    net.stations.iter().any(|s| {
        s.features
            .capacity
            .is_some_and(|c| c.when_full == WhenFull::Block)
    })
}

/// A closed single-class network of one-server FCFS stations with exponential service, some
/// of which block when full (the others unbounded): MVABLO's means for every station and the
/// class, with `v` the visits from the traffic equations.
pub(super) fn closed_blocking(
    net: &Network,
    v: &[Vec<f64>],
    a: &mut Analysis,
) -> Result<(), String> {
    let ClassKind::Closed { population, .. } = net.classes[0].kind else {
        return Err("MVABLO takes a closed class".to_owned());
    };
    let stations: Vec<usize> = service_stations(net)
        .filter(|&(s, _)| v[0][s] > 0.0)
        .map(|(s, _)| s)
        .collect();
    let mut service = Vec::new();
    let mut capacity = Vec::new();
    for &s in &stations {
        let st = &net.stations[s];
        let d = match &st.kind {
            StationKind::Queue {
                discipline: Discipline::Fcfs,
                servers: 1,
                service,
            } => service[0].as_ref(),
            _ => None,
        };
        let Some(d) = d.filter(|d| d.is_exponential()) else {
            return Err(format!(
                "MVABLO takes one-server FCFS stations with exponential service; station {:?} is not one",
                st.name
            ));
        };
        let f = &st.features;
        if f.priority.is_some() || f.patience.is_some() || f.rate_by_jobs.is_some() {
            return Err(format!(
                "MVABLO takes stations with a capacity and nothing else; station {:?} has more",
                st.name
            ));
        }
        service.push(d.mean());
        // an unbounded station holds the whole population
        capacity.push(f.capacity.map_or(population, |c| c.jobs.min(population)));
    }
    let routing: Vec<Vec<f64>> = stations
        .iter()
        .map(|&from| {
            let mut row = vec![0.0; stations.len()];
            let rule = net.routing.rule(
                crate::network::ClassId(0),
                crate::network::StationId(from as u32),
            );
            if matches!(rule, Rule::ShortestQueue { .. } | Rule::RoundRobin { .. }) {
                return Err(format!(
                    "MVABLO takes random routing; station {:?} routes by queue state",
                    net.stations[from].name
                ));
            }
            for (t, p) in crate::network::Routing::branch_probabilities(rule, &net.groups) {
                if let crate::network::Target::Station(to, _) = t
                    && let Some(k) = stations.iter().position(|&s| s == to.index())
                {
                    row[k] += p;
                }
            }
            Ok(row)
        })
        .collect::<Result<_, String>>()?;
    if let Some(cycle) = deadlock_cycle(&routing, &capacity, population) {
        let names: Vec<String> = cycle
            .iter()
            .map(|&k| format!("{:?} {}", net.stations[stations[k]].name, capacity[k]))
            .collect();
        return Err(format!(
            "the network can deadlock: the stations of the routing cycle {} hold {} jobs in all, and the population is {population}; once they are full, each server holds a job for the next and none moves (the simulation stops there)",
            names.join(", "),
            cycle.iter().map(|&k| capacity[k]).sum::<u32>()
        ));
    }
    let sol = mva_blocking(&service, &capacity, &routing, population)
        .map_err(|e| format!("MVABLO: {e}"))?;
    // MVABLO's visits are relative to its first station; the class's cycle is counted at the
    // reference station
    let ClassKind::Closed { reference, .. } = net.classes[0].kind else {
        unreachable!("checked above")
    };
    let scale = v[0][stations[0]];
    let cycles = sol.throughput * scale;
    let class = Subject::Class(&net.classes[0].name);
    let residences: Vec<f64> = stations
        .iter()
        .zip(&sol.stations)
        .map(|(&s, x)| v[0][s] * x.response_time)
        .collect();
    let cycle: f64 = residences.iter().sum();
    a.add(class_metric(net, 0), cycle, METHOD, false);
    a.add(class.metric(Figure::Throughput), cycles, METHOD, false);
    let second: f64 = residences.iter().map(|r| r * r).sum();
    percentiles(a, class, cycle, second / (cycle * cycle), PERCENTILE_METHOD);
    for (k, &s) in stations.iter().enumerate() {
        let x = &sol.stations[k];
        let name = &net.stations[s].name;
        let station = Subject::Station(name);
        if s == reference.index() {
            a.add(
                class.metric(Figure::Response),
                cycle - residences[k],
                METHOD,
                false,
            );
        }
        for (figure, value) in [
            (Figure::Response, x.response_time),
            (Figure::Throughput, x.throughput),
            (Figure::Number, x.queue_length),
            (Figure::Utilisation, x.utilisation),
            (Figure::Wait, x.response_time - service[k] - x.blocking_time),
            (Figure::Visits, v[0][s]),
            (Figure::Residence, residences[k]),
        ] {
            a.add(station.metric(figure), value, METHOD, false);
        }
        percentiles(a, station, x.response_time, 1.0, PERCENTILE_METHOD);
    }
    Ok(())
}

/// The percentiles of a time of mean `mean` and SCV `scv` under the gamma law of those two
/// moments, labelled an approximation by `method`.
pub(super) fn percentiles(
    a: &mut Analysis,
    subject: Subject<'_>,
    mean: f64,
    scv: f64,
    method: &str,
) {
    let spec = DistSpec::Gamma {
        shape: None,
        scale: None,
        mean: Some(mean),
        scv: Some(scv),
    };
    let Ok(law) = spec.build(Path::new("")) else {
        return;
    };
    for (figure, (_, p)) in Figure::PERCENTILES.into_iter().zip(PERCENTILES) {
        if let Ok(q) = law.quantile(p) {
            a.add(subject.metric(figure), q, method, false);
        }
    }
}

/// The routing cycle (station positions, in order) of least total capacity, if that total is
/// at most `population`: under blocking after service those stations can all fill, each server
/// holding a job for the next full one, and the network deadlocks. Floyd-Warshall on paths
/// weighted by the capacities of their stations (a station routing to itself never blocks).
fn deadlock_cycle(routing: &[Vec<f64>], capacity: &[u32], population: u32) -> Option<Vec<usize>> {
    let m = capacity.len();
    let k = |i: usize| u64::from(capacity[i]);
    // d[i][j]: least capacity of a path i -> j, both ends counted; next[i][j]: its second station
    let mut d = vec![vec![u64::MAX; m]; m];
    let mut next = vec![vec![usize::MAX; m]; m];
    for i in 0..m {
        for j in 0..m {
            if i != j && routing[i][j] > 0.0 {
                d[i][j] = k(i) + k(j);
                next[i][j] = j;
            }
        }
    }
    for via in 0..m {
        for i in 0..m {
            for j in 0..m {
                if i == j || d[i][via] == u64::MAX || d[via][j] == u64::MAX {
                    continue;
                }
                let through = d[i][via] + d[via][j] - k(via);
                if through < d[i][j] {
                    d[i][j] = through;
                    next[i][j] = next[i][via];
                }
            }
        }
    }
    let (start, end) = (0..m)
        .flat_map(|i| (0..m).map(move |j| (i, j)))
        .filter(|&(i, j)| i != j && routing[j][i] > 0.0 && d[i][j] != u64::MAX)
        .min_by_key(|&(i, j)| d[i][j])?;
    if d[start][end] > u64::from(population) {
        return None;
    }
    let mut cycle = vec![start];
    let mut at = start;
    while at != end {
        at = next[at][end];
        cycle.push(at);
    }
    Some(cycle)
}

#[cfg(test)]
mod tests {
    use super::deadlock_cycle;

    #[test]
    fn the_cycle_of_least_capacity_decides_deadlock() {
        // 0 -> 1 or 2, 1 -> 0, 2 -> 0: the cycles 0-1 (capacity 3) and 0-2 (capacity 5)
        let routing = vec![
            vec![0.0, 0.5, 0.5],
            vec![1.0, 0.0, 0.0],
            vec![1.0, 0.0, 0.0],
        ];
        let capacity = [1, 2, 4];
        assert_eq!(deadlock_cycle(&routing, &capacity, 2), None);
        let cycle = deadlock_cycle(&routing, &capacity, 3).expect("0-1 fills with 3 jobs");
        let mut sorted = cycle.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1]);
        // a cycle of three: 4 + 5 + 5 places take 14 jobs
        let ring = vec![
            vec![0.0, 1.0, 0.0],
            vec![0.0, 0.0, 1.0],
            vec![1.0, 0.0, 0.0],
        ];
        assert_eq!(deadlock_cycle(&ring, &[4, 5, 5], 13), None);
        assert_eq!(
            deadlock_cycle(&ring, &[4, 5, 5], 14).map(|c| c.len()),
            Some(3)
        );
    }
}
