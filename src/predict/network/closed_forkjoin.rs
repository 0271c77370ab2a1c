//! Closed single-class networks with fork-joins, solved as composite centres: each fork-join
//! becomes one centre of the network around it and that network is solved by MVA; the
//! stations inside a fork-join get their values from the composite's own solution.
//!
//! A fork-join enters its network as
//! - a delay of the expected maximum when its branches are identical delays routed straight to
//!   the join (any distribution: the tasks never meet, and a delay is insensitive, so with
//!   product-form stations elsewhere exact MVA stays exact);
//! - Varki's fork-join centre when its branches are distinct single-server FCFS queues of one
//!   mean routed straight to the join (an approximation);
//! - a delay of the tasks' fork-to-join time when its branches are copies of one station from
//!   which the tasks traverse a sub-network (loops, queues they share) before the join: `K`
//!   tasks solved by MVA of the tasks alone ([`analytic::task_fork`]), in two readings. The
//!   network around it must then hold one job (or the tasks meet no queue), so that no other
//!   job competes for the sub-network.
//!
//! Every station then has a response (per visit), utilisation by the forced-flow law
//! `U = X V S / c` at the solution's throughput, and through `derived` its number (Little),
//! throughput, wait, residence and the class's response.

use std::collections::BTreeSet;

use super::forkjoin::delay_maximum;
use super::{
    Analysis, center_kind, labelled, mean_service, non_exponential_fcfs, product_form_problem,
};
use crate::analytic::{self, Center, CenterKind, ClosedLevel, ForkJoinCenter, TaskFork};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::class_metric;
use crate::network::{
    ClassId, ClassKind, Discipline, Network, Routing, StationId, StationKind, Target,
};

/// Varki's centre is in the network.
const VARKI: &str = "Varki mean-value approximation (closed fork-join)";
/// Only fork-joins of delays, each a delay of the expected maximum.
const COMPOSITE: &str = "exact MVA with each fork-join of identical delays as a delay of their expected maximum (composite centre)";
/// A fork-join of tasks through a sub-network, draining reading.
const DRAINING: &str = "composite MVA, fork-join tasks by MVA of the tasks, draining maximum (while i tasks are left each ends at rate 1/T(i): Cremonesi-Gennaro eq. 16 (b) for any sub-network; assumes exponential task times)";
/// A fork-join of tasks through a sub-network, full-population reading.
const FULL: &str = "composite MVA, fork-join tasks by MVA of the tasks at full population (every task sees all K tasks, the join costs nothing: Cremonesi-Gennaro eq. 16 (a) for any sub-network)";

/// How one fork-join enters the network around it.
enum Composite {
    /// Identical delays routed straight to the join: a delay of their expected maximum.
    Delays { max: f64 },
    /// Distinct single-server FCFS queues of one mean routed straight to the join.
    Queues { service: f64 },
    /// Copies of one station whose tasks traverse `inside` before the join.
    Tasks {
        copies: u32,
        inside: Vec<Part>,
        solution: TaskFork,
    },
}

/// A fork station with its branch stations and its composite.
struct ForkJoin {
    fork: usize,
    branches: Vec<usize>,
    composite: Composite,
}

/// One centre of a network level: a service station or a whole fork-join.
enum Part {
    Station(usize),
    ForkJoin(ForkJoin),
}

/// The reading of the task fork-joins a solution uses.
#[derive(Clone, Copy, PartialEq)]
enum Reading {
    Draining,
    Full,
}

impl TaskFork {
    fn time(&self, reading: Reading) -> f64 {
        match reading {
            Reading::Draining => self.draining,
            Reading::Full => self.full,
        }
    }

    fn residence(&self, reading: Reading) -> &[f64] {
        match reading {
            Reading::Draining => &self.residence_draining,
            Reading::Full => &self.residence_full,
        }
    }
}

/// The network's structure: visits per cycle and each fork's region (the stations its tasks
/// can reach before its join).
struct ForkJoinShape<'a> {
    net: &'a Network,
    v: &'a [f64],
    regions: Vec<Option<BTreeSet<usize>>>,
    /// Each fork's join.
    join_of: Vec<Option<usize>>,
}

/// Solves a closed single-class network with fork-joins by composite centres (see the module
/// documentation), or refuses with the reason.
pub(super) fn closed_fork_join(net: &Network, v: &[Vec<f64>], a: &mut Analysis) {
    const METHOD: &str = "closed fork-join composite MVA";
    if let Err(reason) = solve(net, &v[0], a) {
        a.refuse(METHOD, reason);
    }
}

fn solve(net: &Network, v: &[f64], a: &mut Analysis) -> Result<(), String> {
    let ClassKind::Closed {
        population,
        reference,
    } = net.classes[0].kind
    else {
        return Err("the class is not closed".into());
    };
    let mut regions = vec![None; net.stations.len()];
    let mut join_of = vec![None; net.stations.len()];
    for (f, st) in net.stations.iter().enumerate() {
        if matches!(st.kind, StationKind::Fork { .. }) {
            let join = net
                .join_of(f)
                .ok_or_else(|| format!("fork {:?} has no join", st.name))?;
            regions[f] = Some(region(net, f, join)?);
            join_of[f] = Some(join);
        }
    }
    let shape = ForkJoinShape {
        net,
        v,
        regions,
        join_of,
    };
    if shape.inside_any(reference.index()) {
        return Err(format!(
            "the reference station {:?} is inside a fork-join",
            net.stations[reference.index()].name
        ));
    }
    let all: BTreeSet<usize> = (0..net.stations.len()).collect();
    let outer = shape.parts(vec![reference.index()], None, &all)?;
    for part in &outer {
        if let Part::ForkJoin(ForkJoin {
            fork,
            composite: Composite::Tasks { inside, .. },
            ..
        }) = part
            && population > 1
            && inside.iter().any(|p| shape.queues_in(p))
        {
            return Err(format!(
                "the tasks of fork {:?} meet queues and {population} jobs circulate: other jobs' tasks would compete with them, which the composite centre does not model",
                net.stations[*fork].name
            ));
        }
    }
    let readings: &[Reading] = if outer.iter().any(has_tasks) {
        &[Reading::Draining, Reading::Full]
    } else {
        &[Reading::Draining]
    };
    let problem = outer.iter().find_map(|p| shape.problem(p));
    for &reading in readings {
        let mut bases = Vec::new();
        if outer.iter().any(has_queues_composite) {
            bases.push(VARKI);
        }
        if outer.iter().any(has_tasks) {
            bases.push(match reading {
                Reading::Draining => DRAINING,
                Reading::Full => FULL,
            });
        }
        let exact = bases.is_empty();
        if exact {
            bases.push(COMPOSITE);
        }
        let (method, exact) = labelled(&bases.join("; "), exact, problem.as_deref());
        let sol = shape.outer_solution(&outer, reading, population)?;
        let level = sol.full();
        a.add(class_metric(net, 0), level.response_time, &method, exact);
        a.add(
            Subject::Class(&net.classes[0].name).metric(Figure::Throughput),
            level.throughput,
            &method,
            exact,
        );
        let out = Out {
            shape: &shape,
            x: level.throughput,
            method: &method,
            exact,
        };
        out.level(&outer, level, &sol, reading, a);
    }
    Ok(())
}

fn has_tasks(p: &Part) -> bool {
    matches!(
        p,
        Part::ForkJoin(ForkJoin {
            composite: Composite::Tasks { .. },
            ..
        })
    )
}

fn has_queues_composite(p: &Part) -> bool {
    matches!(
        p,
        Part::ForkJoin(ForkJoin {
            composite: Composite::Queues { .. },
            ..
        })
    )
}

/// The stations the tasks of fork `f` can reach before its join (inner forks, their joins and
/// regions included; `f`'s join excluded).
fn region(net: &Network, f: usize, join: usize) -> Result<BTreeSet<usize>, String> {
    let name = &net.stations[f].name;
    let mut seen = BTreeSet::new();
    let mut todo: Vec<usize> = successors(net, f)?;
    while let Some(s) = todo.pop() {
        if s == join || !seen.insert(s) {
            continue;
        }
        if s == f {
            return Err(format!(
                "the tasks of fork {name:?} can come back to it without passing its join"
            ));
        }
        todo.extend(successors(net, s)?);
    }
    Ok(seen)
}

/// Where a job or task goes from station `s`: a fork's branches, otherwise its routing.
fn successors(net: &Network, s: usize) -> Result<Vec<usize>, String> {
    if let StationKind::Fork { branches } = &net.stations[s].kind {
        return Ok(branches.iter().map(|b| b.index()).collect());
    }
    let rule = net.routing.rule(ClassId(0), StationId(s as u32));
    Routing::branch_probabilities(rule, &net.groups)
        .into_iter()
        .filter(|&(_, p)| p > 0.0)
        .map(|(t, _)| match t {
            Target::Station(to, _) => Ok(to.index()),
            Target::Exit => Err(format!(
                "jobs leave the network from station {:?}",
                net.stations[s].name
            )),
        })
        .collect()
}

/// The single target of station `s` with probability 1, if it has one.
fn sole_target(net: &Network, s: usize) -> Option<usize> {
    let rule = net.routing.rule(ClassId(0), StationId(s as u32));
    match Routing::branch_probabilities(rule, &net.groups)[..] {
        [(Target::Station(to, _), 1.0)] => Some(to.index()),
        _ => None,
    }
}

impl ForkJoinShape<'_> {
    fn inside_any(&self, s: usize) -> bool {
        self.regions.iter().flatten().any(|r| r.contains(&s))
    }

    /// The centres of one level: the service stations and forks that jobs (or a fork's tasks)
    /// reach from `starts` before `stop` (the fork's join), passing over every fork-join they
    /// meet (from a fork straight to its join). `scope` is the level's region (every station
    /// for the network around all fork-joins): an inner fork-join must lie in it, and no
    /// station may be visited both inside an inner fork-join and outside it.
    fn parts(
        &self,
        starts: Vec<usize>,
        stop: Option<usize>,
        scope: &BTreeSet<usize>,
    ) -> Result<Vec<Part>, String> {
        let net = self.net;
        let name = |s: usize| &net.stations[s].name;
        let mut seen = BTreeSet::new();
        let mut todo = starts;
        while let Some(s) = todo.pop() {
            if Some(s) == stop || !seen.insert(s) {
                continue;
            }
            match self.join_of[s] {
                Some(join) => todo.push(join),
                None => todo.extend(successors(net, s)?),
            }
        }
        for &s in &seen {
            if let StationKind::Join { fork } = net.stations[s].kind
                && !seen.contains(&fork.index())
            {
                return Err(format!(
                    "jobs reach join {:?} without passing its fork {:?}",
                    name(s),
                    name(fork.index())
                ));
            }
            let Some(region) = &self.regions[s] else {
                continue;
            };
            if !region.is_subset(scope) {
                return Err(format!(
                    "fork {:?} is not nested in the fork-join around it",
                    name(s)
                ));
            }
            if let Some(&both) = seen.iter().find(|t| region.contains(t)) {
                return Err(format!(
                    "station {:?} is visited both inside the fork-join of fork {:?} and outside it",
                    name(both),
                    name(s)
                ));
            }
        }
        let mut parts = Vec::new();
        for &s in &seen {
            if net.stations[s].kind.service().is_some() {
                parts.push(Part::Station(s));
            } else if let Some(region) = &self.regions[s] {
                parts.push(Part::ForkJoin(self.fork_join(s, region)?));
            }
        }
        Ok(parts)
    }

    /// Fork `f` (region `region`) as a composite centre.
    fn fork_join(&self, f: usize, region: &BTreeSet<usize>) -> Result<ForkJoin, String> {
        let net = self.net;
        let name = &net.stations[f].name;
        let StationKind::Fork { branches } = &net.stations[f].kind else {
            unreachable!("regions are computed for forks only")
        };
        let branches: Vec<usize> = branches.iter().map(|b| b.index()).collect();
        let copies = branches.len() as u32;
        let join = self.join_of[f];
        let straight = branches
            .iter()
            .all(|&b| net.stations[b].kind.service().is_some() && sole_target(net, b) == join);
        let service = |b: usize| net.stations[b].kind.service().and_then(|t| t[0].clone());
        let first = service(branches[0]);
        let distinct: BTreeSet<usize> = branches.iter().copied().collect();
        if straight && let Some(d) = &first {
            // one family, mean and SCV: the open stages' test of identical branches
            let same_dist = branches.iter().all(|&b| {
                service(b).is_some_and(|x| {
                    std::mem::discriminant(x.law()) == std::mem::discriminant(d.law())
                        && (x.mean() - d.mean()).abs() <= 1e-12 * d.mean()
                        && (x.scv() - d.scv()).abs() <= 1e-12
                })
            });
            let all_delays = branches
                .iter()
                .all(|&b| matches!(net.stations[b].kind, StationKind::Delay { .. }));
            if all_delays && same_dist {
                let (max, _) = delay_maximum(copies, d)
                    .map_err(|e| format!("fork {name:?}: expected maximum: {e}"))?;
                return Ok(ForkJoin {
                    fork: f,
                    branches,
                    composite: Composite::Delays { max },
                });
            }
            let fcfs = |b: usize| {
                matches!(
                    net.stations[b].kind,
                    StationKind::Queue {
                        discipline: Discipline::Fcfs,
                        servers: 1,
                        ..
                    }
                )
            };
            let one_mean = branches.iter().all(|&b| {
                service(b).is_some_and(|x| (x.mean() - d.mean()).abs() <= 1e-12 * d.mean())
            });
            if distinct.len() == branches.len() && branches.iter().all(|&b| fcfs(b)) && one_mean {
                return Ok(ForkJoin {
                    fork: f,
                    branches,
                    composite: Composite::Queues { service: d.mean() },
                });
            }
        }
        if distinct.len() != 1 {
            return Err(format!(
                "the branches of fork {name:?} are neither identical delays nor single-server FCFS queues of one mean routed straight to its join, nor copies of one station"
            ));
        }
        let inside = self.parts(branches.clone(), self.join_of[f], region)?;
        let per_task = self.v[f] * f64::from(copies);
        let mut centers = Vec::new();
        for part in &inside {
            centers.push(match part {
                Part::Station(s) => Center {
                    kind: center_kind(&net.stations[*s]),
                    demand: self.v[*s] * mean_service(&net.stations[*s], 0) / per_task,
                },
                Part::ForkJoin(ForkJoin {
                    fork: g,
                    composite: Composite::Delays { max },
                    ..
                }) => Center {
                    kind: CenterKind::Delay,
                    demand: self.v[*g] * max / per_task,
                },
                Part::ForkJoin(inner) => {
                    return Err(format!(
                        "fork {:?} inside the tasks of fork {name:?}: only a fork-join of delays is solved there",
                        net.stations[inner.fork].name
                    ));
                }
            });
        }
        let solution = analytic::task_fork(&centers, copies)
            .map_err(|e| format!("the tasks of fork {name:?}: {e}"))?;
        Ok(ForkJoin {
            fork: f,
            branches,
            composite: Composite::Tasks {
                copies,
                inside,
                solution,
            },
        })
    }

    /// True when `part` is or contains a queue.
    fn queues_in(&self, part: &Part) -> bool {
        match part {
            Part::Station(s) => matches!(self.net.stations[*s].kind, StationKind::Queue { .. }),
            Part::ForkJoin(fj) => match &fj.composite {
                Composite::Delays { .. } => false,
                Composite::Queues { .. } => true,
                Composite::Tasks { inside, .. } => inside.iter().any(|p| self.queues_in(p)),
            },
        }
    }

    /// The first assumption of the composite solution that `part` breaks: a product-form
    /// problem at a station, a non-exponential branch of Varki's centre.
    fn problem(&self, part: &Part) -> Option<String> {
        match part {
            Part::Station(s) => product_form_problem(self.net, *s),
            Part::ForkJoin(fj) => match &fj.composite {
                Composite::Delays { .. } => None,
                Composite::Queues { .. } => fj
                    .branches
                    .iter()
                    .find_map(|&b| non_exponential_fcfs(self.net, b).map(|(_, r)| r)),
                Composite::Tasks { inside, .. } => inside.iter().find_map(|p| self.problem(p)),
            },
        }
    }

    /// The network of `outer` with each fork-join as its centre, at every population.
    fn outer_solution(
        &self,
        outer: &[Part],
        reading: Reading,
        population: u32,
    ) -> Result<analytic::ClosedSolution, String> {
        let mut centers = Vec::new();
        let mut fork_joins = Vec::new();
        for part in outer {
            match part {
                Part::Station(s) => centers.push(Center {
                    kind: center_kind(&self.net.stations[*s]),
                    demand: self.v[*s] * mean_service(&self.net.stations[*s], 0),
                }),
                Part::ForkJoin(fj) => {
                    let visits = self.v[fj.fork];
                    match &fj.composite {
                        Composite::Delays { max } => centers.push(Center {
                            kind: CenterKind::Delay,
                            demand: visits * max,
                        }),
                        Composite::Tasks { solution, .. } => centers.push(Center {
                            kind: CenterKind::Delay,
                            demand: visits * solution.time(reading),
                        }),
                        Composite::Queues { service } => fork_joins.push(ForkJoinCenter {
                            branches: fj.branches.len() as u32,
                            demand: visits * service,
                        }),
                    }
                }
            }
        }
        let sol = if fork_joins.is_empty() {
            analytic::mva(&centers, population)
        } else {
            analytic::varki_closed_fork_join(&fork_joins, &centers, population)
        };
        sol.map_err(|e| e.to_string())
    }
}

/// Writes one solution's station values.
struct Out<'a> {
    shape: &'a ForkJoinShape<'a>,
    x: f64,
    method: &'a str,
    exact: bool,
}

impl Out<'_> {
    /// A station's response per visit, and for a queue its utilisation by the forced-flow law.
    fn station(&self, s: usize, response: f64, a: &mut Analysis) {
        let st = &self.shape.net.stations[s];
        a.add(
            Subject::Station(&st.name).metric(Figure::Response),
            response,
            self.method,
            self.exact,
        );
        if let StationKind::Queue { servers, .. } = st.kind {
            let u = self.x * self.shape.v[s] * mean_service(st, 0) / f64::from(servers);
            a.add(
                Subject::Station(&st.name).metric(Figure::Utilisation),
                u,
                self.method,
                self.exact,
            );
        }
    }

    /// The stations of the outer level from the network's solution `level` (residences in
    /// the solver's order: centres, then Varki's fork-joins).
    fn level(
        &self,
        outer: &[Part],
        level: &ClosedLevel,
        sol: &analytic::ClosedSolution,
        reading: Reading,
        a: &mut Analysis,
    ) {
        let v = self.shape.v;
        let centers = outer.iter().filter(|p| !has_queues_composite(p)).count();
        let (mut k, mut j) = (0, centers);
        for part in outer {
            match part {
                Part::Station(s) => {
                    self.station(*s, level.residence[k] / v[*s], a);
                    k += 1;
                }
                Part::ForkJoin(fj) => {
                    if let Composite::Queues { service } = fj.composite {
                        let f = fj.fork;
                        self.fork(f, level.residence[j] / v[f], a);
                        for &b in &fj.branches {
                            let demand = v[b] * service;
                            let r = analytic::varki_task_residence(sol, demand);
                            self.station(b, r / v[b], a);
                        }
                        j += 1;
                    } else {
                        self.fork_join(fj, reading, a);
                        k += 1;
                    }
                }
            }
        }
    }

    fn fork(&self, f: usize, response: f64, a: &mut Analysis) {
        a.add(
            Subject::Station(&self.shape.net.stations[f].name).metric(Figure::Response),
            response,
            self.method,
            self.exact,
        );
    }

    /// A fork-join of delays or of tasks: the fork's response and its stations'.
    fn fork_join(&self, fj: &ForkJoin, reading: Reading, a: &mut Analysis) {
        let net = self.shape.net;
        let v = self.shape.v;
        match &fj.composite {
            Composite::Delays { max } => {
                self.fork(fj.fork, *max, a);
                let distinct: BTreeSet<usize> = fj.branches.iter().copied().collect();
                for b in distinct {
                    self.station(b, mean_service(&net.stations[b], 0), a);
                }
            }
            Composite::Tasks {
                copies,
                inside,
                solution,
            } => {
                self.fork(fj.fork, solution.time(reading), a);
                let per_task = v[fj.fork] * f64::from(*copies);
                for (part, r) in inside.iter().zip(solution.residence(reading)) {
                    match part {
                        Part::Station(s) => self.station(*s, r * per_task / v[*s], a),
                        Part::ForkJoin(inner) => self.fork_join(inner, reading, a),
                    }
                }
            }
            Composite::Queues { .. } => unreachable!("Varki's centres are solved with the level"),
        }
    }
}
