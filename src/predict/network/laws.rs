//! Operational laws: what holds for any service and inter-arrival distribution.
//!
//! Visit ratios and demands (`D = V S`), the bottleneck and `N*`, the utilisation law
//! (`U = X S / c`) and flow balance of open networks, and the forced-flow law (`X_k = V_k X`,
//! `U_k = X D_k / c_k`) that turns throughput bounds of a closed network into bounds on every
//! station (Denning and Buzen, "The operational analysis of queueing network models",
//! Computing Surveys 10(3), 1978; Lazowska et al., *Quantitative System Performance*, ch. 3).
//! Little's law `L = X R` holds at every station too; the predictions of `number` use it.

use super::{Analysis, Bottleneck, Bound, StationDemand, mean_service, service_stations};
use crate::metrics::name::{Figure, Subject};
use crate::network::estimates::arrival_rate;
use crate::network::{ClassKind, Network, StationKind};

/// Servers of a queue, `None` for a delay or a non-service station.
fn servers(kind: &StationKind) -> Option<u32> {
    match kind {
        StationKind::Queue { servers, .. } => Some(*servers),
        _ => None,
    }
}

/// Visits and demands of every class at every service station it visits, and each class's
/// bottleneck. `v` is [`crate::network::visits`]: arrival rates for open classes, visit ratios
/// for closed ones.
pub(super) fn demands(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    for (c, class) in net.classes.iter().enumerate() {
        let per_job = match class.kind {
            ClassKind::Open => arrival_rate(net, c),
            ClassKind::Closed { .. } => 1.0,
        };
        if per_job <= 0.0 {
            continue;
        }
        let rows: Vec<StationDemand> = service_stations(net)
            .filter(|(s, _)| v[c][*s] > 0.0)
            .map(|(s, st)| {
                let visits = v[c][s] / per_job;
                StationDemand {
                    station: st.name.clone(),
                    class: class.name.clone(),
                    visits,
                    demand: visits * mean_service(st, c),
                    servers: servers(&st.kind),
                }
            })
            .collect();
        let queues = || rows.iter().filter_map(|r| Some((r, r.servers?)));
        let top = queues().max_by(|(x, cx), (y, cy)| {
            (x.demand / f64::from(*cx)).total_cmp(&(y.demand / f64::from(*cy)))
        });
        if let Some((row, c_max)) = top
            && row.demand > 0.0
        {
            let d_max = row.demand / f64::from(c_max);
            let single_servers = queues().all(|(_, c)| c == 1);
            let total: f64 = rows.iter().map(|r| r.demand).sum();
            a.bottlenecks.push(Bottleneck {
                class: class.name.clone(),
                station: row.station.clone(),
                demand_per_server: d_max,
                saturation_population: (single_servers && class.kind != ClassKind::Open)
                    .then_some(total / d_max),
            });
        }
        a.demands.extend(rows);
    }
}

/// Open network: every service station's throughput is its arrival rate (flow balance) and
/// every queue's utilisation is `lambda S / c` (utilisation law), for any distributions, as long
/// as every queue is stable (otherwise nothing is added: the queues grow without bound).
pub(super) fn open_utilisation(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    const METHOD: &str = "utilisation law U = X S / c (any distribution)";
    let load = |s: usize| -> f64 {
        (0..net.classes.len())
            .map(|c| v[c][s] * mean_service(&net.stations[s], c))
            .sum()
    };
    let stable = service_stations(net)
        .all(|(s, st)| servers(&st.kind).is_none_or(|c| load(s) < f64::from(c)));
    if !stable {
        return;
    }
    for (s, st) in service_stations(net) {
        let name = &st.name;
        let rate: f64 = (0..net.classes.len()).map(|c| v[c][s]).sum();
        a.add(
            Subject::Station(name).metric(Figure::Throughput),
            rate,
            "flow balance X = lambda (any distribution)",
            true,
        );
        if let Some(c) = servers(&st.kind) {
            a.add(
                Subject::Station(name).metric(Figure::Utilisation),
                load(s) / f64::from(c),
                METHOD,
                true,
            );
        }
    }
}

/// Closed single-class network: the forced-flow law applied to bounds `[x_lower, x_upper]` on
/// the class throughput bounds every station's throughput (`V_k X`) and every single-server
/// queue's utilisation (`X D_k`, at most 1).
pub(super) fn forced_flow_bounds(
    net: &Network,
    v: &[Vec<f64>],
    x_lower: f64,
    x_upper: f64,
    method: &str,
    a: &mut Analysis,
) {
    let method = format!("{method} with forced flow (X_k = V_k X, U_k = X D_k)");
    for (s, st) in service_stations(net) {
        let name = &st.name;
        a.bounds.push(Bound {
            metric: Subject::Station(name).metric(Figure::Throughput),
            lower: x_lower * v[0][s],
            upper: x_upper * v[0][s],
            method: method.clone(),
        });
        if servers(&st.kind) == Some(1) {
            let d = v[0][s] * mean_service(st, 0);
            a.bounds.push(Bound {
                metric: Subject::Station(name).metric(Figure::Utilisation),
                lower: (x_lower * d).min(1.0),
                upper: (x_upper * d).min(1.0),
                method: method.clone(),
            });
        }
    }
}
