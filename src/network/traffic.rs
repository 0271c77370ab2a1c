//! Traffic equations: how often each class visits each station.
//!
//! For an open class the result is the arrival rate of the class at each station (jobs per unit
//! time). For a closed class it is the visit ratio: visits per visit to the class's reference
//! station. Forks multiply the flow (each branch receives one task per fork arrival) and joins
//! divide it again (one parent leaves per `c` task arrivals). State-dependent rules count as an
//! equal split among their stations.

use super::{ClassId, ClassKind, Network, Routing, StationId, StationKind, Target};

/// Why the traffic equations have no answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TrafficError {
    /// The linear system is singular: some jobs of the class never leave (open class) or the
    /// routing does not bring them back to the reference station (closed class).
    #[error(
        "class {class}: the routing has no steady state (jobs trapped in a cycle with no way out, or never returning to the reference station)"
    )]
    Singular {
        /// The class's name.
        class: String,
    },
}

/// Visit rates (open classes) or visit ratios (closed classes), indexed `[class][station]`.
///
/// Each class is solved on its own, starting from its source (open) or its reference station
/// (closed); a class switch carries the flow over to the other class's row of the result.
pub fn visits(net: &Network) -> Result<Vec<Vec<f64>>, TrafficError> {
    let (nc, ns) = (net.classes.len(), net.stations.len());
    let mut total = vec![vec![0.0; ns]; nc];
    for (c, class) in net.classes.iter().enumerate() {
        let mut rhs = vec![0.0; nc * ns];
        let mut pinned = None;
        match class.kind {
            ClassKind::Open => {
                for (s, st) in net.stations.iter().enumerate() {
                    if let StationKind::Source {
                        class: sc,
                        interarrival,
                    } = &st.kind
                        && sc.index() == c
                    {
                        // jobs per unit of time: batches per unit of time times their mean
                        rhs[c * ns + s] =
                            st.features.batch.map_or(1.0, |b| b.mean()) / interarrival.mean();
                    }
                }
            }
            ClassKind::Closed { reference, .. } => {
                let r = c * ns + reference.index();
                rhs[r] = 1.0;
                pinned = Some(r);
            }
        }
        let x = solve_flow(net, &rhs, pinned).ok_or_else(|| TrafficError::Singular {
            class: class.name.clone(),
        })?;
        for (k, v) in x.iter().enumerate() {
            total[k / ns][k % ns] += v;
        }
    }
    Ok(total)
}

/// Solves `x = rhs + M^T x` over the (class, station) nodes reachable from where `rhs` is
/// non-zero, with `pinned` (if any) fixed to its right-hand side. `M` holds the flow multipliers
/// of routing, forks and joins; nodes not reached get 0.
fn solve_flow(net: &Network, rhs: &[f64], pinned: Option<usize>) -> Option<Vec<f64>> {
    let ns = net.stations.len();
    let n = rhs.len();
    let edges: Vec<Vec<(usize, f64)>> = (0..n)
        .map(|from| flow_out(net, ClassId((from / ns) as u32), from % ns))
        .collect();
    // the reachable nodes, numbered in discovery order
    let mut index = vec![usize::MAX; n];
    let mut order: Vec<usize> = (0..n).filter(|&i| rhs[i] != 0.0).collect();
    for (k, &i) in order.iter().enumerate() {
        index[i] = k;
    }
    let mut head = 0;
    while head < order.len() {
        let from = order[head];
        head += 1;
        for &(to, _) in &edges[from] {
            if index[to] == usize::MAX {
                index[to] = order.len();
                order.push(to);
            }
        }
    }
    let m = order.len();
    let mut a = vec![0.0; m * m];
    for k in 0..m {
        a[k * m + k] = 1.0;
    }
    for &from in &order {
        for &(to, mult) in &edges[from] {
            if Some(to) != pinned {
                a[index[to] * m + index[from]] -= mult;
            }
        }
    }
    let b: Vec<f64> = order.iter().map(|&i| rhs[i]).collect();
    let y = crate::linalg::solve(a, b)?;
    let mut x = vec![0.0; n];
    for (k, &i) in order.iter().enumerate() {
        x[i] = y[k];
    }
    Some(x)
}

/// The flow out of node (`class`, `station`): `(node, multiplier)` pairs.
fn flow_out(net: &Network, class: ClassId, station: usize) -> Vec<(usize, f64)> {
    let ns = net.stations.len();
    let node = |c: ClassId, s: usize| c.index() * ns + s;
    match &net.stations[station].kind {
        StationKind::Fork { branches } => branches
            .iter()
            .map(|b| (node(class, b.index()), 1.0))
            .collect(),
        StationKind::Sink => Vec::new(),
        kind => {
            let scale = match kind {
                StationKind::Join { fork } => match net.stations.get(fork.index()).map(|f| &f.kind)
                {
                    Some(StationKind::Fork { branches }) => 1.0 / branches.len() as f64,
                    _ => 1.0,
                },
                _ => 1.0,
            };
            let rule = net.routing.rule(class, StationId(station as u32));
            Routing::branch_probabilities(rule, &net.groups)
                .into_iter()
                .filter_map(|(t, p)| match t {
                    Target::Station(to, tc) => Some((node(tc, to.index()), p * scale)),
                    Target::Exit => None,
                })
                .collect()
        }
    }
}
