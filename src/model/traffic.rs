//! Traffic equations: how often each class visits each station.
//!
//! For an open class the result is the arrival rate of the class at each station (jobs per unit
//! time). For a closed class it is the visit ratio: visits per visit to the class's reference
//! station. Forks multiply the flow (each branch receives one task per fork arrival) and joins
//! divide it again (one parent leaves per `c` task arrivals). State-dependent rules count as an
//! equal split among their stations.

use super::{ClassId, ClassKind, Network, Routing, StationKind, Target};

/// Why the traffic equations have no answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TrafficError {
    /// The linear system is singular: some jobs of the class never leave (open class) or the
    /// routing does not bring them back to the reference station (closed class).
    #[error("class {class}: the routing has no steady state (jobs trapped in a cycle with no way out, or never returning to the reference station)")]
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
                    if let StationKind::Source { class: sc, interarrival } = &st.kind
                        && sc.index() == c
                    {
                        rhs[c * ns + s] = 1.0 / interarrival.mean();
                    }
                }
            }
            ClassKind::Closed { reference, .. } => {
                let r = c * ns + reference.index();
                rhs[r] = 1.0;
                pinned = Some(r);
            }
        }
        let x = solve_flow(net, &rhs, pinned).ok_or_else(|| TrafficError::Singular { class: class.name.clone() })?;
        for (k, v) in x.iter().enumerate() {
            total[k / ns][k % ns] += v;
        }
    }
    Ok(total)
}

/// Solves `x = rhs + M^T x` over (class, station) nodes, with `pinned` (if any) fixed to its
/// right-hand side, where `M` holds the flow multipliers of routing, forks and joins.
fn solve_flow(net: &Network, rhs: &[f64], pinned: Option<usize>) -> Option<Vec<f64>> {
    let (nc, ns) = (net.classes.len(), net.stations.len());
    let n = nc * ns;
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i * n + i] = 1.0;
    }
    let node = |c: ClassId, s: usize| c.index() * ns + s;
    for c in 0..nc {
        let class = ClassId(c as u32);
        for (s, st) in net.stations.iter().enumerate() {
            let from = node(class, s);
            let mut add = |to: usize, m: f64| a[to * n + from] -= m;
            match &st.kind {
                StationKind::Fork { branches } => {
                    for b in branches {
                        add(node(class, b.index()), 1.0);
                    }
                }
                StationKind::Sink => {}
                kind => {
                    let scale = match kind {
                        StationKind::Join { fork } => match &net.station(*fork).kind {
                            StationKind::Fork { branches } => 1.0 / branches.len() as f64,
                            _ => 1.0,
                        },
                        _ => 1.0,
                    };
                    let rule = net.routing.rule(class, super::StationId(s as u32));
                    for (t, p) in Routing::branch_probabilities(rule, &net.groups) {
                        if let Target::Station(to, tc) = t {
                            add(node(tc, to.index()), p * scale);
                        }
                    }
                }
            }
        }
    }
    if let Some(p) = pinned {
        a[p * n..(p + 1) * n].fill(0.0);
        a[p * n + p] = 1.0;
    }
    crate::linalg::solve(a, rhs.to_vec())
}
