//! Open fork-join networks: one fork or several in series, the expected maximum, the fork-join
//! queue formulas and the independent-branch maximum for any branch distribution (closed ones
//! are in `closed_forkjoin`).

use super::open::{arrival_problem, arrival_scv};
use super::{Analysis, Dist, labelled, non_exponential_fcfs, service_stations};
use crate::analytic::{
    self, QueueBranch, ServiceLaw, expected_max_exponential, expected_max_numeric,
    expected_max_uniform, fork_join_2_server, fork_join_independent_max, fork_join_interpolation,
    kingman, nelson_tantawi, nelson_tantawi_correlation_factor,
};
use crate::dist::Law;
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::class_metric;
use crate::network::{ClassKind, Discipline, Network, Routing, StationKind, Target};

/// The expected maximum of `c` i.i.d. delays of distribution `d`, with the method's name: the
/// closed forms for exponential (`H_c` mean) and uniform delays, the numeric integral of
/// `1 - F^c` otherwise.
pub(super) fn delay_maximum(c: u32, d: &Dist) -> analytic::Result<(f64, &'static str)> {
    match d.law() {
        Law::Exponential { mean } => {
            expected_max_exponential(c, *mean).map(|x| (x, "max of c exponentials (H_c mean)"))
        }
        Law::Uniform { min, max } => {
            expected_max_uniform(c, *min, *max).map(|x| (x, "max of c uniforms"))
        }
        _ => expected_max_numeric(c, &|t| d.cdf(t), d.lower_bound(), f64::INFINITY)
            .map(|x| (x, "max of c i.i.d. (numeric integral of 1 - F^c)")),
    }
}

/// One fork-join stage's mean response by one family of methods.
#[derive(Clone)]
struct StageValue {
    value: f64,
    /// The method, without the assumption that breaks.
    base: String,
    /// The assumption of the method that breaks, if one does.
    problem: Option<String>,
    exact: bool,
}

impl StageValue {
    /// A value by `base`, exact when `exact` and nothing breaks its assumptions.
    fn new(value: f64, base: &str, exact: bool, problem: Option<&str>) -> StageValue {
        StageValue {
            value,
            base: base.to_owned(),
            problem: problem.map(str::to_owned),
            exact: exact && problem.is_none(),
        }
    }

    /// The method's label, naming the assumption that breaks.
    fn method(&self) -> String {
        labelled(&self.base, self.exact, self.problem.as_deref()).0
    }
}

/// The families of methods a stage is solved by, in report order: the exponential-branch
/// formula (expected maximum for delays, Flatto-Hahn or Nelson-Tantawi for queues), the
/// independent-branch maximum, that maximum with Nelson and Tantawi's correlation factor, the
/// lockstep value of deterministic branches, and the light-traffic interpolation of branches
/// with a service density. A delay stage gives its exact maximum to every family.
const FAMILIES: usize = 5;

/// `independent-branch maximum` and its corrected form, named with what they assume.
const INDEPENDENT_MAX: &str = "independent-branch maximum (assumes independent branches; wait 0 w.p. 1 - rho, else exponential of mean Wq/rho)";
const LOCKSTEP: &str = "lockstep deterministic branches (identical copies of one queue: the maximum is one branch's response)";
const INTERPOLATION: &str = "light-traffic interpolation (Reiman-Simon 1988: exact light-traffic value and slope; heavy-traffic limit taken as the slope, as Varma-Makowski 1994, capped by the independent-branch limit)";
const CORRECTED_MAX: &str = "correlation-corrected branch maximum (independent-branch maximum x Nelson-Tantawi factor for exponential branches at the same rho)";

/// The forks of an open single-class network in the order a job meets them, when the network
/// is a chain source -> fork -> branches -> join -> fork -> ... -> exit whose branches are its
/// only service stations, each routed straight to its fork's join; `None` otherwise.
fn stages_in_series(net: &Network) -> Option<Vec<(usize, Vec<usize>)>> {
    if net.classes.len() != 1 || net.classes[0].kind != ClassKind::Open {
        return None;
    }
    let class = crate::network::ClassId(0);
    let sole_target = |s: usize| -> Option<Target> {
        let rule = net.routing.rule(class, crate::network::StationId(s as u32));
        match Routing::branch_probabilities(rule, &net.groups)[..] {
            [(t, 1.0)] => Some(t),
            _ => None,
        }
    };
    let sources: Vec<usize> = net
        .stations
        .iter()
        .enumerate()
        .filter(|(_, st)| matches!(st.kind, StationKind::Source { .. }))
        .map(|(i, _)| i)
        .collect();
    let [source] = sources[..] else { return None };
    let mut next = sole_target(source)?;
    let mut stages = Vec::new();
    while let Target::Station(at, _) = next {
        let f = at.index();
        let StationKind::Fork { branches } = &net.stations[f].kind else {
            return None;
        };
        let join = net.join_of(f)?;
        let branches: Vec<usize> = branches.iter().map(|b| b.index()).collect();
        let routed_to_join = branches.iter().all(|&b| {
            net.stations[b].kind.service().is_some()
                && matches!(sole_target(b), Some(Target::Station(j, _)) if j.index() == join)
        });
        if !routed_to_join || stages.iter().any(|(g, _)| *g == f) {
            return None;
        }
        stages.push((f, branches));
        next = sole_target(join)?;
    }
    // every service station serves one stage, as distinct branches or as the copies of one
    // fork (`copies = n, to = ...`: n tasks at one station)
    let mut stations: Vec<usize> = Vec::new();
    for (_, branches) in &stages {
        let mut own = branches.clone();
        own.sort_unstable();
        own.dedup();
        if own.len() != branches.len() && own.len() != 1 {
            return None;
        }
        stations.extend(own);
    }
    stations.sort_unstable();
    let count = stations.len();
    stations.dedup();
    (stations.len() == count && count == service_stations(net).count()).then_some(stages)
}

/// True when the stage's tasks all go to one station (`copies = n, to = ...`).
fn copies(branches: &[usize]) -> bool {
    branches.len() > 1 && branches.iter().all(|&b| b == branches[0])
}

/// Open fork-join networks: one fork, or several in series (a chain of barriers), each fork's
/// branches identical delays or single-server FCFS queues. Each stage is solved on its own
/// and the class response is the sum of the stages (means add along the chain); a stage after
/// a queueing stage is fed by a join's departures, not a Poisson stream, which its labels say.
pub(super) fn fork_join(net: &Network, a: &mut Analysis) {
    let Some(stages) = stages_in_series(net) else {
        a.refuse(
            "fork-join formulas",
            "only an open, single-class network whose service stations are the branches of one fork, or of forks in series (source -> fork -> branches -> join -> fork -> ... -> exit), is solved",
        );
        return;
    };
    let lambda = crate::network::estimates::arrival_rate(net, 0);
    let source_scv = arrival_scv(net);
    let mut upstream_queue: Option<usize> = None;
    let mut values: Vec<Vec<Option<StageValue>>> = Vec::new();
    for (f, branches) in &stages {
        let (arrivals, ca2) = match upstream_queue {
            Some(prev) => (
                Some(format!(
                    "fork {:?} is fed by the join of fork {:?}, not a Poisson stream",
                    net.stations[*f].name, net.stations[prev].name
                )),
                1.0,
            ),
            None => (arrival_problem(net), source_scv),
        };
        let Some(stage) = stage(net, *f, branches, (lambda, ca2), arrivals.as_deref(), a) else {
            return;
        };
        let name = &net.stations[*f].name;
        for v in distinct(stage.iter().flatten()) {
            a.add(
                Subject::Station(name).metric(Figure::Response),
                v.value,
                &v.method(),
                v.exact,
            );
        }
        if matches!(net.stations[branches[0]].kind, StationKind::Queue { .. }) {
            upstream_queue = Some(*f);
        }
        values.push(stage);
    }
    let totals: Vec<StageValue> = (0..FAMILIES)
        .filter_map(|k| {
            let parts: Option<Vec<&StageValue>> = values.iter().map(|s| s[k].as_ref()).collect();
            parts.map(|p| series(&p))
        })
        .collect();
    for v in distinct(totals.iter()) {
        a.add(class_metric(net, 0), v.value, &v.method(), v.exact);
    }
}

/// The sum of stage values along a chain, labelled with each stage's method.
fn series(parts: &[&StageValue]) -> StageValue {
    if let [one] = parts {
        return (*one).clone();
    }
    let value = parts.iter().map(|p| p.value).sum();
    let exact = parts.iter().all(|p| p.exact);
    let mut bases: Vec<&str> = Vec::new();
    let mut problems: Vec<&str> = Vec::new();
    for p in parts {
        if !bases.contains(&p.base.as_str()) {
            bases.push(&p.base);
        }
        if let Some(q) = p.problem.as_deref().filter(|q| !problems.contains(q)) {
            problems.push(q);
        }
    }
    let base = format!(
        "sum of {} fork-join stages in series by {}",
        parts.len(),
        bases.join(" + ")
    );
    let problem = (!problems.is_empty()).then(|| problems.join("; "));
    StageValue::new(value, &base, exact, problem.as_deref())
}

/// `values` without repeated method labels.
fn distinct<'a>(values: impl Iterator<Item = &'a StageValue>) -> Vec<&'a StageValue> {
    let mut seen: Vec<&StageValue> = Vec::new();
    for v in values {
        if !seen.iter().any(|s| s.method() == v.method()) {
            seen.push(v);
        }
    }
    seen
}

/// One fork-join stage at arrival rate `lambda` with inter-arrival SCV `ca2`, by every family that applies (see
/// [`FAMILIES`]); `arrivals` says why its arrivals are not Poisson, if they are not. Queue
/// branches also get their own response and number. `None` (with a refusal) when the
/// branches are not identical delays or single-server FCFS queues.
fn stage(
    net: &Network,
    f: usize,
    branches: &[usize],
    (lambda, ca2): (f64, f64),
    arrivals: Option<&str>,
    a: &mut Analysis,
) -> Option<Vec<Option<StageValue>>> {
    let c = branches.len() as u32;
    let first = &net.stations[branches[0]];
    let d = first.kind.service().and_then(|t| t[0].clone())?;
    let same = branches.iter().all(|&b| {
        let st = &net.stations[b];
        std::mem::discriminant(&st.kind) == std::mem::discriminant(&first.kind)
            && st
                .kind
                .service()
                .and_then(|t| t[0].as_ref())
                .is_some_and(|x| {
                    (x.mean() - d.mean()).abs() < 1e-12 && (x.scv() - d.scv()).abs() < 1e-12
                })
    });
    if !same {
        a.refuse(
            "fork-join formulas",
            format!(
                "the branches of fork {:?} are not identical",
                net.stations[f].name
            ),
        );
        return None;
    }
    match &first.kind {
        // Delay branches do not interact: the maximum holds whatever the arrivals.
        StationKind::Delay { .. } => match delay_maximum(c, &d) {
            Ok((value, m)) => {
                let v = StageValue::new(value, m, true, None);
                Some(vec![Some(v); FAMILIES])
            }
            Err(e) => {
                a.refuse("expected maximum", e.to_string());
                None
            }
        },
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            servers: 1,
            ..
        } if copies(branches) => Some(batch_stage(net, branches, &d, (lambda, ca2), arrivals, a)),
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            servers: 1,
            ..
        } => Some(queue_stage(net, branches, &d, (lambda, ca2), arrivals, a)),
        _ if copies(branches) => {
            a.refuse(
                "fork-join queue",
                format!(
                    "the {} copies of fork {:?} queue together at {:?}, which is not a delay or a single FCFS server: a batch arrival with no formula here",
                    branches.len(),
                    net.stations[f].name,
                    first.name
                ),
            );
            None
        }
        _ => {
            a.refuse(
                "fork-join queue",
                "branches are not single FCFS servers or delays",
            );
            None
        }
    }
}

/// A stage whose `c` tasks are copies queued at one single-server FCFS station of service `d`
/// (`copies = c, to = ...`): they arrive together, so FCFS serves them one after the other
/// with no other task between, and the job leaves with its last. The stage is then one queue
/// whose customer is the batch, of service the sum of `c` services (mean `c E[S]`, SCV
/// `scv(S) / c`): M/G/1 by Pollaczek-Khinchine, exact for Poisson arrivals (Kingman's
/// GI/G/1 approximation for renewal ones). A task waits for the batch's wait and for the
/// tasks of its batch served before it: on average `Wq + (c + 1) / 2 E[S]`.
fn batch_stage(
    net: &Network,
    branches: &[usize],
    d: &Dist,
    (lambda, ca2): (f64, f64),
    arrivals: Option<&str>,
    a: &mut Analysis,
) -> Vec<Option<StageValue>> {
    const BATCH: &str = "batch FCFS queue (the copies queue together and leave with the last: M/G/1 of the batch's total service, Pollaczek-Khinchine)";
    let c = branches.len() as f64;
    let mut out = vec![None; FAMILIES];
    let batch = match kingman(lambda, ca2, c * d.mean(), d.scv() / c) {
        Ok(m) => m,
        Err(e) => {
            a.refuse(BATCH, e.to_string());
            return out;
        }
    };
    let (base, exact) = if ca2 == 1.0 {
        (BATCH.to_owned(), true)
    } else {
        (
            format!("{BATCH}, Kingman GI/G/1 approximation for renewal arrivals"),
            false,
        )
    };
    let task = batch.mean_wait + 0.5 * (c + 1.0) * d.mean();
    let name = &net.stations[branches[0]].name;
    let (method, exact_here) = labelled(&base, exact, arrivals);
    a.add(
        Subject::Station(name).metric(Figure::Response),
        task,
        &method,
        exact_here,
    );
    a.add(
        Subject::Station(name).metric(Figure::Number),
        lambda * c * task,
        &method,
        exact_here,
    );
    out[0] = Some(StageValue::new(batch.mean_response, &base, exact, arrivals));
    out
}

/// A stage of identical single-server FCFS branches with service `d`: the exponential-branch
/// formula (labelled where it does not hold), the independent-branch maximum, its
/// correlation-corrected form, and for deterministic service the exact lockstep value; each branch's own response and number by Pollaczek-Khinchine
/// (Kingman for renewal arrivals), which the marginal M/G/1 queue makes exact.
fn queue_stage(
    net: &Network,
    branches: &[usize],
    d: &Dist,
    (lambda, ca2): (f64, f64),
    arrivals: Option<&str>,
    a: &mut Analysis,
) -> Vec<Option<StageValue>> {
    let c = branches.len() as u32;
    let problem = arrivals
        .map(str::to_owned)
        .or_else(|| non_exponential_fcfs(net, branches[0]).map(|(_, reason)| reason));
    let mu = 1.0 / d.mean();
    let (base, exact, r) = if c == 2 {
        (
            "2-server fork-join (Flatto-Hahn, Nelson-Tantawi)",
            true,
            fork_join_2_server(lambda, mu),
        )
    } else {
        (
            "Nelson-Tantawi approximation",
            false,
            nelson_tantawi(c, lambda, mu),
        )
    };
    let mut out = vec![None; FAMILIES];
    match r {
        Ok(value) => out[0] = Some(StageValue::new(value, base, exact, problem.as_deref())),
        Err(e) => a.refuse(&labelled(base, exact, problem.as_deref()).0, e.to_string()),
    }
    // Every branch sees the whole arrival stream: a GI/G/1 queue, M/G/1 when it is Poisson
    // (`ca2` is the inter-arrival SCV: 1 for a stage fed by a join, taken as Poisson and
    // labelled).
    let renewal = ca2 != 1.0;
    let branch = match kingman(lambda, ca2, d.mean(), d.scv()) {
        Ok(m) => m,
        Err(e) => {
            a.refuse(INDEPENDENT_MAX, e.to_string());
            return out;
        }
    };
    let (branch_method, branch_exact) = if renewal {
        (
            "Kingman GI/G/1 approximation (Kingman 1961; each branch sees every arrival)"
                .to_owned(),
            false,
        )
    } else if d.is_exponential() {
        labelled("M/M/1 (each branch sees every arrival)", true, arrivals)
    } else {
        labelled(
            "M/G/1 (Pollaczek-Khinchine; each branch sees every arrival)",
            true,
            arrivals,
        )
    };
    for &b in branches {
        let name = &net.stations[b].name;
        a.add(
            Subject::Station(name).metric(Figure::Response),
            branch.mean_response,
            &branch_method,
            branch_exact,
        );
        a.add(
            Subject::Station(name).metric(Figure::Number),
            branch.mean_number,
            &branch_method,
            branch_exact,
        );
    }
    let cdf = |t: f64| d.cdf(t);
    let queue = QueueBranch {
        service_cdf: &cdf,
        service_lower: d.lower_bound(),
        utilisation: branch.utilisation.unwrap_or(lambda * d.mean()),
        mean_wait: branch.mean_wait,
    };
    let max = fork_join_independent_max(c, &queue);
    let factor = nelson_tantawi_correlation_factor(c, queue.utilisation);
    match (max, factor) {
        (Ok(max), Ok(factor)) => {
            out[1] = Some(StageValue::new(max, INDEPENDENT_MAX, false, arrivals));
            out[2] = Some(StageValue::new(
                max * factor,
                CORRECTED_MAX,
                false,
                arrivals,
            ));
        }
        (Err(e), _) | (_, Err(e)) => a.refuse(INDEPENDENT_MAX, e.to_string()),
    }
    // Branches with a service density: the interpolation between the exact light-traffic
    // value and slope and a heavy-traffic limit (Poisson input assumed, as `arrivals` says)
    if d.has_density() {
        let density = |t: f64| d.density(t).unwrap_or(0.0);
        let law = ServiceLaw::ByDensity {
            cdf: &cdf,
            density: &density,
            lower: d.lower_bound(),
            upper: d.upper_bound(),
            mean: d.mean(),
            scv: d.scv(),
        };
        match fork_join_interpolation(c, lambda, &law) {
            Ok(r) => {
                out[4] = Some(StageValue::new(
                    r.mean_response,
                    INTERPOLATION,
                    false,
                    arrivals,
                ))
            }
            Err(e) => a.refuse(INTERPOLATION, e.to_string()),
        }
    }
    // Deterministic branches fed the same arrivals have the same queue at every instant, so
    // the job's last task leaves with its first: the stage is one GI/D/1 queue.
    if matches!(d.law(), Law::Deterministic { .. }) {
        let (base, exact) = if renewal {
            (format!("{LOCKSTEP}, Kingman GI/D/1"), false)
        } else {
            (format!("{LOCKSTEP}, M/D/1"), true)
        };
        out[3] = Some(StageValue::new(
            branch.mean_response,
            &base,
            exact,
            arrivals,
        ));
    }
    out
}
