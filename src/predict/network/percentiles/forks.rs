//! The sojourn from a fork to its join's release: the maximum of the branch sojourns.
//!
//! The branch sojourns of one job are associated random variables (each is a non-decreasing
//! function of the same independent service times and a non-increasing one of the same
//! inter-arrival times; Esary, Proschan and Walkup 1967), so
//! `prod_i P(T_i <= t) <= P(max T_i <= t) <= min_i P(T_i <= t)`: each percentile of the
//! maximum lies between the largest branch percentile and the percentile of the maximum of
//! independent branches (Nelson and Tantawi 1988 for the mean). Delay branches are independent,
//! so their maximum is exact.

use super::{Estimate, Sojourn, emit, quantiles};
use crate::analytic::route_moments;
use crate::dist::Dist;
use crate::dist::Law;
use crate::metrics::name::{Figure, Subject};
use crate::network::{ClassId, Network, Routing, StationId, StationKind, Target};
use crate::predict::{Analysis, Bound};

const METHOD: &str = "fork-join maximum";
const ASSOCIATED: &str = "associated branch sojourns (Esary-Proschan-Walkup 1967, Nelson-Tantawi 1988): between the largest branch percentile and the independent-branch maximum's";

/// How far a stage's law can be trusted.
#[derive(Clone, Debug)]
pub(super) enum Trust {
    /// The law is exact.
    Exact,
    /// The law is an approximation.
    Approximate,
    /// The law (of independent branches) bounds the percentiles from above; the largest
    /// percentile of `branches` bounds them from below.
    UpperBound {
        /// The branch laws.
        branches: Vec<Sojourn>,
    },
}

/// The sojourn from a fork to its join's release.
#[derive(Clone, Debug)]
pub(super) struct Stage {
    /// The law (for queue branches, of independent branches).
    pub law: Sojourn,
    /// The method's label.
    pub method: String,
    /// How far it can be trusted.
    pub trust: Trust,
    /// True when every branch is a delay.
    pub delays_only: bool,
}

/// The stage law of every fork whose branches are distinct stations with a sojourn law, each
/// routed straight to the fork's join (one class), with its predictions or bounds added.
pub(super) fn laws(
    net: &Network,
    laws: &[Option<Estimate>],
    a: &mut Analysis,
) -> Vec<Option<Stage>> {
    let mut out = vec![None; net.stations.len()];
    for (f, st) in net.stations.iter().enumerate() {
        let StationKind::Fork { branches } = &st.kind else {
            continue;
        };
        let stage = stage(net, f, branches, laws).or_else(|straight| {
            task_walks(net, f, branches, laws).map_err(|walk| format!("{straight}; {walk}"))
        });
        match stage {
            Ok(stage) => {
                emit_stage(a, Subject::Station(&st.name), &stage);
                out[f] = Some(stage);
            }
            Err(reason) => a.refuse(METHOD, format!("fork {:?}: {reason}", st.name)),
        }
    }
    out
}

/// The stage of fork `f`, or why there is none.
fn stage(
    net: &Network,
    f: usize,
    branches: &[StationId],
    laws: &[Option<Estimate>],
) -> Result<Stage, String> {
    let join = net.join_of(f).ok_or("it has no join")?;
    if net.classes.len() != 1 {
        return Err("only one class is supported".to_owned());
    }
    let mut seen: Vec<usize> = branches.iter().map(|b| b.index()).collect();
    seen.sort_unstable();
    seen.dedup();
    let delays_only = branches
        .iter()
        .all(|b| matches!(net.station(*b).kind, StationKind::Delay { .. }));
    // the tasks at a delay draw their service times independently, so a delay may be the
    // branch of several tasks; a queue shared by tasks has no per-task law here
    if seen.len() != branches.len() && !delays_only {
        return Err("a queue is a branch more than once".to_owned());
    }
    let mut parts: Vec<&Estimate> = Vec::with_capacity(branches.len());
    for b in branches {
        let rule = net.routing.rule(ClassId(0), *b);
        let to_join = matches!(
            Routing::branch_probabilities(rule, &net.groups)[..],
            [(Target::Station(j, _), p)] if j.index() == join && p == 1.0
        );
        if !to_join {
            return Err(format!(
                "branch {:?} is not routed straight to the join",
                net.station(*b).name
            ));
        }
        let est = laws[b.index()]
            .as_ref()
            .ok_or_else(|| format!("no sojourn law for branch {:?}", net.station(*b).name))?;
        parts.push(est);
    }
    let all_exact = parts.iter().all(|e| e.exact);
    let closed = net.classes[0].kind != crate::network::ClassKind::Open;
    let law = Sojourn::Max(parts.iter().map(|e| e.law.clone()).collect());
    let lockstep = !delays_only
        && branches.iter().all(|b| {
            matches!(
                net.station(*b).kind.service().and_then(|t| t[0].as_ref()).map(Dist::law),
                Some(Law::Deterministic { value }) if Some(*value) == net.station(branches[0]).kind.service().and_then(|t| t[0].as_ref()).map(Dist::mean)
            )
        });
    Ok(if delays_only {
        Stage {
            law,
            method: format!(
                "maximum of independent delay branches ({})",
                parts[0].method
            ),
            trust: if all_exact {
                Trust::Exact
            } else {
                Trust::Approximate
            },
            delays_only,
        }
    } else if all_exact && !closed {
        Stage {
            law,
            method: format!("{ASSOCIATED}; branches: {}", parts[0].method),
            trust: Trust::UpperBound {
                branches: parts.iter().map(|e| e.law.clone()).collect(),
            },
            delays_only,
        }
    } else if lockstep {
        Stage {
            law: parts[0].law.clone(),
            method: format!(
                "lockstep deterministic branches: the maximum is one branch's sojourn; {}",
                parts[0].method
            ),
            trust: Trust::Approximate,
            delays_only,
        }
    } else if closed {
        Stage {
            law,
            method: format!(
                "independent-branch maximum; approximation: in a closed network the branch sojourns are dependent and no association argument is claimed, so this is no bound; branches: {}",
                parts[0].method
            ),
            trust: Trust::Approximate,
            delays_only,
        }
    } else {
        Stage {
            law,
            method: format!(
                "independent-branch maximum (a bound only for exact branch laws: the branches are associated); branches: {}",
                parts[0].method
            ),
            trust: Trust::Approximate,
            delays_only,
        }
    })
}

/// The predictions, or the bounds, of `subject`'s percentiles from `stage`.
pub(super) fn emit_stage(a: &mut Analysis, subject: Subject<'_>, stage: &Stage) {
    let Trust::UpperBound { branches } = &stage.trust else {
        let exact = matches!(stage.trust, Trust::Exact);
        let est = Estimate {
            law: stage.law.clone(),
            method: stage.method.clone(),
            exact,
        };
        emit(a, subject, &est);
        return;
    };
    // the maximum's quantiles and every branch's
    if let Some(Err(e)) =
        super::total_work(std::iter::once(&stage.law).chain(branches)).map(|w| w.check())
    {
        a.refuse(
            &stage.method,
            format!("{}: {e}", super::percentile_range(subject)),
        );
        return;
    }
    let upper = quantiles(&stage.law);
    let lower: Result<Vec<Vec<f64>>, _> = branches.iter().map(quantiles).collect();
    match (upper, lower) {
        (Ok(upper), Ok(lower)) => {
            for (i, figure) in Figure::PERCENTILES.into_iter().enumerate() {
                let low = lower.iter().map(|q| q[i]).fold(0.0, f64::max);
                a.bounds.push(Bound {
                    metric: subject.metric(figure),
                    lower: low,
                    upper: upper[i].max(low),
                    method: stage.method.clone(),
                });
            }
        }
        (Err(e), _) | (_, Err(e)) => a.refuse(&stage.method, format!("{subject}: {e}")),
    }
}

/// The stage of fork `f` whose tasks walk through several stations to the join: each task's
/// time a gamma law fitted to the two moments of its walk with independent per-visit
/// sojourns ([`route_moments`]), and their maximum taken as independent.
fn task_walks(
    net: &Network,
    f: usize,
    branches: &[StationId],
    laws: &[Option<Estimate>],
) -> Result<Stage, String> {
    let join = net.join_of(f).ok_or("it has no join")?;
    let mut tasks = Vec::with_capacity(branches.len());
    let mut method = String::new();
    for b in branches {
        let mut nodes = vec![b.index()];
        let mut route: Vec<Vec<(usize, f64)>> = Vec::new();
        let mut at = 0;
        while at < nodes.len() {
            let s = nodes[at];
            if !matches!(
                net.stations[s].kind,
                StationKind::Delay { .. } | StationKind::Queue { .. }
            ) {
                return Err(format!(
                    "a task meets {:?}, not a service station",
                    net.stations[s].name
                ));
            }
            let rule = net.routing.rule(ClassId(0), StationId(s as u32));
            let mut out = Vec::new();
            for (t, p) in Routing::branch_probabilities(rule, &net.groups) {
                let Target::Station(to, _) = t else {
                    return Err("a task leaves the network".to_owned());
                };
                if to.index() == join || p == 0.0 {
                    continue;
                }
                let j = nodes
                    .iter()
                    .position(|&n| n == to.index())
                    .unwrap_or_else(|| {
                        nodes.push(to.index());
                        nodes.len() - 1
                    });
                out.push((j, p));
            }
            route.push(out);
            at += 1;
        }
        let n = nodes.len();
        let mut dense = vec![vec![0.0; n]; n];
        for (i, out) in route.iter().enumerate() {
            for &(j, p) in out {
                dense[i][j] += p;
            }
        }
        let mut entry = vec![0.0; n];
        entry[0] = 1.0;
        let visit: Vec<(f64, f64)> = nodes
            .iter()
            .map(|&s| {
                let est = laws[s]
                    .as_ref()
                    .ok_or_else(|| format!("no sojourn law for {:?}", net.stations[s].name))?;
                if method.is_empty() && !est.exact {
                    method.clone_from(&est.method);
                }
                est.law.moments().map_err(|e| e.to_string())
            })
            .collect::<Result<_, String>>()?;
        let (m1, m2) = route_moments(&entry, &dense, &visit).map_err(|e| e.to_string())?;
        tasks.push(Sojourn::gamma_fit(m1, m2).map_err(|e| e.to_string())?);
    }
    Ok(Stage {
        law: Sojourn::Max(tasks),
        method: format!(
            "independent maximum of the tasks, each a gamma fit to the two moments of its walk to the join (independent per-visit sojourns); approximation: the tasks share stations and are dependent, and a task's time is not gamma; stations: {method}"
        ),
        trust: Trust::Approximate,
        delays_only: false,
    })
}
