//! The check stage of programs that run as dependency graphs
//! ([`crate::schedule::Schedule`]): `[loggp]`, a `[program]` whose `goal` names a GOAL
//! file, and the programs written with labels and dependencies or given LogGP endpoints.

pub mod flags;
pub mod goal;

use std::path::Path;
use std::sync::Arc;

use toml::Spanned;

use super::program::compile::Compiled;
use crate::analytic::loggp::LogGp;
use crate::problem::Problem;
use crate::program::{Program, Sharing};
use crate::scenario::raw::program::{RawLogGp, RawProgram, RawTopology};
use crate::schedule::{Endpoints, Form, Links, Machine, PerByte, ReadyOrder, Schedule};

/// The endpoints and order `[loggp]` gives (LogGOPSim's defaults for what it leaves out).
pub fn endpoints(raw: &Spanned<RawLogGp>) -> Result<(Endpoints, ReadyOrder), Vec<Problem>> {
    let at = raw.span().start;
    let r = raw.get_ref();
    let d = LogGp::LOGGOPSIM;
    let mut found = Vec::new();
    let p = LogGp {
        l: r.l.unwrap_or(d.l),
        o: r.o.unwrap_or(d.o),
        g: r.g.unwrap_or(d.g),
        big_g: r.big_g.unwrap_or(d.big_g),
        big_o: r.big_o.unwrap_or(d.big_o),
        s: match r.s {
            None => d.s,
            Some(s) if s >= 0 => s as u64,
            Some(s) => {
                found.push(Problem::new(
                    Some(at),
                    "loggp.S",
                    format!("must be a number of bytes >= 0, got {s}"),
                ));
                d.s
            }
        },
    };
    let order = match r.order.as_deref() {
        None | Some("program") => ReadyOrder::Program,
        Some("loggopsim") => ReadyOrder::LogGopSim,
        Some(other) => {
            found.push(Problem::new(
                Some(at),
                "loggp.order",
                format!("unknown order {other:?} (\"program\" or \"loggopsim\")"),
            ));
            ReadyOrder::Program
        }
    };
    let e = Endpoints::from_seconds(&p).map_err(|bad| {
        bad.into_iter()
            .map(|(name, m)| Problem::new(Some(at), format!("loggp.{name}"), m))
            .collect::<Vec<_>>()
    });
    match e {
        Ok(e) if found.is_empty() => Ok((e, order)),
        Ok(_) => Err(found),
        Err(more) => {
            found.extend(more);
            Err(found)
        }
    }
}

/// A `[topology]`'s `startup` beside `[loggp]` endpoints, which pay `o` per message instead:
/// refused rather than ignored.
fn startup_unused(
    loggp: Option<&Spanned<RawLogGp>>,
    topology: Option<&Spanned<RawTopology>>,
) -> Option<Problem> {
    let t = topology?;
    loggp?;
    t.get_ref().startup.map(|_| {
        Problem::new(
            Some(t.span().start),
            "topology.startup",
            "LogGP endpoints pay o per message in place of a topology's startup, which would go unused: leave it out, or add it to o",
        )
    })
}

/// Endpoints for a graph that has links but no `[loggp]`: the sender's CPU pays the topology's
/// startup, the rest is the links' (`L = g = G = O = 0`, every message eager).
fn startup_only(startup: f64) -> Endpoints {
    Endpoints {
        l: 0,
        o: (startup * crate::schedule::dag::TICKS_PER_SECOND).round() as u64,
        g: 0,
        big_g: PerByte::default(),
        big_o: PerByte::default(),
        s: u64::MAX,
    }
}

/// The links, refused if they share their bandwidth fairly (the graph executor queues FCFS),
/// route other than minimally, give global links a latency of their own, or give nodes links
/// of their own.
fn links(
    ic: crate::program::Interconnect,
    ranks_per_node: u32,
    at: Option<usize>,
) -> Result<Links, Vec<Problem>> {
    if ic.sharing == Sharing::Fair {
        return Err(vec![Problem::new(
            at,
            "topology.sharing",
            "a program run as a dependency graph (LogGP endpoints, labels, a GOAL file) queues its links first come first served: leave out sharing = \"fair\"",
        )]);
    }
    let routing = ic.topology.routing();
    if routing != crate::topology::Routing::Minimal {
        return Err(vec![Problem::new(
            at,
            "topology.routing",
            format!(
                "a program run as a dependency graph (LogGP endpoints, labels, a GOAL file) takes minimal routes: leave out routing = \"{}\", or run the program as ranks",
                routing.name()
            ),
        )]);
    }
    if ic.topology.has_node_links() {
        return Err(vec![Problem::new(
            at,
            "topology.node_bandwidth",
            "a program run as a dependency graph (LogGP endpoints, labels, a GOAL file) sends the messages inside a node over no link: leave out node_bandwidth, or run the program as ranks",
        )]);
    }
    if ic.global_latency != ic.latency {
        return Err(vec![Problem::new(
            at,
            "topology.global_latency",
            "a program run as a dependency graph (LogGP endpoints, labels, a GOAL file) has one latency per hop: leave out global_latency, or run the program as ranks",
        )]);
    }
    Ok(Links {
        interconnect: ic,
        ranks_per_node,
    })
}

/// A sequential program (maybe with labels and dependencies) run as a dependency graph, on
/// `[loggp]` endpoints and/or the links of its topology.
pub fn lowered(
    prog: Program,
    loggp: Option<&Spanned<RawLogGp>>,
    topology: Option<&Spanned<RawTopology>>,
) -> Result<Schedule, Vec<Problem>> {
    if let Some(p) = startup_unused(loggp, topology) {
        return Err(vec![p]);
    }
    let (endpoints, order) = match loggp {
        Some(l) => endpoints(l)?,
        None => (startup_only(prog.interconnect.startup), ReadyOrder::Program),
    };
    let links = match topology {
        Some(t) => Some(links(
            prog.interconnect.clone(),
            prog.ranks_per_node,
            Some(t.span().start),
        )?),
        None => None,
    };
    let report_each = prog.report_each;
    Ok(Schedule {
        form: Form::Program(Box::new(prog)),
        machine: Machine {
            endpoints,
            links,
            order,
        },
        report_each,
        goal_file: None,
    })
}

/// A `[program]` with `goal = "file.goal"`: the schedule read from the file (relative to `base`,
/// or the file `given` in its place: a GOAL file named on the command line), on `[loggp]`
/// endpoints and/or the links of a `[topology]`. A problem of the schedule names its file and
/// line.
pub fn goal(
    program: &Spanned<RawProgram>,
    loggp: Option<&Spanned<RawLogGp>>,
    topology: Option<&Spanned<RawTopology>>,
    machine_written: bool,
    base: &Path,
    given: Option<&Path>,
) -> Result<Schedule, Vec<Problem>> {
    let at = program.span().start;
    let p = program.get_ref();
    let mut found = Vec::new();
    let mut add = |path: &str, message: String| {
        found.push(Problem::new(Some(at), path, message));
    };
    if !p.ops.is_empty() {
        add(
            "program.op",
            "a GOAL schedule is the whole program: leave out [[program.op]]".to_owned(),
        );
    }
    if p.cores.is_some() {
        add(
            "program.cores",
            "does not apply to a GOAL schedule (its operations name their CPUs)".to_owned(),
        );
    }
    if !machine_written {
        add(
            "loggp",
            "a GOAL schedule runs on LogGP endpoints ([loggp], e.g. L = 2.5e-6) and/or the links of a [topology]: give one".to_owned(),
        );
    }
    if topology.is_none() && p.ranks_per_node.is_some() {
        add(
            "program.ranks_per_node",
            "places ranks on the nodes of a [topology], and there is none: leave it out, or give the links".to_owned(),
        );
    }
    if p.goal.as_deref() == Some("") && given.is_none() {
        add(
            "program.goal",
            "is empty: name a GOAL file (relative to the scenario), e.g. goal = \"allreduce.goal\""
                .to_owned(),
        );
    }
    if let Some(p) = startup_unused(loggp, topology) {
        add(&p.path, p.message);
    }
    let file = p.goal.as_deref().unwrap_or_default();
    let path = given.map_or_else(|| base.join(file), Path::to_owned);
    let (dag, digests) =
        crate::files::recording(|| crate::scenario::check::schedule::goal::read_file(&path));
    let digest = digests.last().copied().unwrap_or_default();
    let dag = dag
        .map_err(|e| {
            Problem::in_file(
                e.file,
                (e.line > 0).then_some(e.line),
                "program.goal",
                e.message,
            )
        })
        .and_then(|d| {
            crate::engine::schedule::check_units(&d)
                .map(|()| d)
                .map_err(|why| Problem::in_file(path.clone(), None, "program.goal", why))
        });
    let dag = match dag {
        Ok(d) => d,
        Err(p) => {
            found.push(p);
            return Err(found);
        }
    };
    if let Some(r) = p.ranks
        && r != i64::from(dag.ranks())
    {
        add(
            "program.ranks",
            format!(
                "is {r} but {file} has num_ranks {} (leave ranks out)",
                dag.ranks()
            ),
        );
    }
    let per_node = p.ranks_per_node.unwrap_or(1);
    if !(1..=i64::from(dag.ranks())).contains(&per_node) {
        add(
            "program.ranks_per_node",
            format!(
                "must be a whole number from 1 to {}, got {per_node}",
                dag.ranks()
            ),
        );
    }
    if !found.is_empty() {
        return Err(found);
    }
    let per_node = per_node as u32;
    let (endpoints, order) = match (loggp, topology) {
        (Some(l), _) => endpoints(l)?,
        (None, Some(t)) => (
            startup_only(t.get_ref().startup.unwrap_or(0.0)),
            ReadyOrder::Program,
        ),
        // written but unreadable: its problems were reported when the file was read
        (None, None) => return Err(found),
    };
    let links = match topology {
        Some(t) => {
            let nodes = dag.ranks().div_ceil(per_node);
            let ic = crate::scenario::check::program::compile::interconnect(t, nodes, base)?;
            Some(links(ic, per_node, Some(t.span().start))?)
        }
        None => None,
    };
    let report_each = p.report_each.unwrap_or(dag.ranks() <= 16);
    Ok(Schedule {
        form: Form::Dag(Arc::new(dag)),
        machine: Machine {
            endpoints,
            links,
            order,
        },
        report_each,
        goal_file: Some((path, digest)),
    })
}
/// Checks that a compiled program fits a dependency graph (its loops unrolled, no ideal
/// barrier, no disk I/O, user tags below `2^31`: [`crate::schedule::lower::unfit`]), each
/// problem at its operation (`at` for the program as a whole).
pub(in crate::scenario::check) fn fits(compiled: &Compiled, at: usize) -> Result<(), Vec<Problem>> {
    let program = &compiled.program;
    let unfit = crate::schedule::lower::unfit(program);
    if unfit.is_empty() {
        return Ok(());
    }
    let offset = |i: usize| compiled.offsets.get(i).copied().unwrap_or(at);
    Err(unfit
        .into_iter()
        .map(|u| {
            let (at, path) = match u.instr {
                Some(i) if u.field.is_empty() => (offset(i), program.paths[i].clone()),
                Some(i) => (offset(i), format!("{}.{}", program.paths[i], u.field)),
                None => (at, "program".to_owned()),
            };
            Problem::new(Some(at), path, u.message)
        })
        .collect())
}
