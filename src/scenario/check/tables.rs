//! A model's scenario tables ([`crate::models::tables`]) as the raw structs a file would have
//! been read into, so that they get exactly the checks of a hand-written scenario. Every
//! element is placed at the model's section (`at`), which is where a problem in it is shown.

use std::ops::Range;

use toml::Spanned;

use crate::models::tables::{
    Destination, DiskTable, NetworkTables, OpTable, StationTable, StationTableKind, TopologyTable,
};
use crate::scenario::raw::Element;
use crate::scenario::raw::program::{
    ExprText, OpKind, RawDisk, RawOp, RawProgram, RawTopology, SizeSpec,
};
use crate::scenario::raw::{RawBranch, RawClass, RawKind, RawRoute, RawScenario, RawStation};

/// Puts the network `t` in `raw` in place of its `[[class]]`, `[[station]]` and `[[route]]`.
pub fn put_network(raw: &mut RawScenario, t: &NetworkTables, at: usize) {
    raw.classes = t
        .classes
        .iter()
        .map(|c| {
            element(
                at,
                Some(&c.name),
                RawClass {
                    name: c.name.clone(),
                    population: Some(i64::from(c.population)),
                    reference: Some(c.reference.clone()),
                    priority: None,
                },
            )
        })
        .collect();
    raw.stations = t
        .stations
        .iter()
        .map(|s| element(at, Some(&s.name), station(s, at)))
        .collect();
    raw.routes = t
        .routes
        .iter()
        .map(|r| {
            let (to, branches) = match &r.to {
                Destination::Station(s) => (Some(s.clone()), None),
                Destination::Branches(b) => (
                    None,
                    Some(
                        b.iter()
                            .map(|(to, p)| RawBranch {
                                to: to.clone(),
                                p: *p,
                                to_class: None,
                            })
                            .collect(),
                    ),
                ),
            };
            let mut route = RawRoute::new(&r.class, &r.from);
            route.to = to;
            route.branches = branches;
            element(at, None, route)
        })
        .collect();
    for section in ["class", "station", "route"] {
        raw.written.push(section.to_owned());
    }
}

/// Puts the program `t` in `raw` in place of its `[program]`, `[topology]` and `[[disk]]`.
pub fn put_program(raw: &mut RawScenario, t: &crate::models::tables::ProgramTables, at: usize) {
    let span = at..at;
    raw.program = Some(Spanned::new(
        span.clone(),
        raw_program(t.ranks, None, t.report_each, &t.ops, at),
    ));
    raw.topology = Some(Spanned::new(span, topology(&t.topology)));
    raw.disks = t
        .disks
        .iter()
        .map(|d| element(at, Some(&d.name), disk(d)))
        .collect();
    for section in ["program", "topology", "disk"] {
        raw.written.push(section.to_owned());
    }
}

/// `[program]` of `ranks` ranks running `ops`.
pub fn raw_program(
    ranks: u32,
    per_node: Option<u32>,
    report_each: bool,
    ops: &[OpTable],
    at: usize,
) -> RawProgram {
    RawProgram {
        ranks: Some(i64::from(ranks)),
        goal: None,
        ranks_per_node: per_node.map(i64::from),
        // a core for each rank of a node
        cores: per_node.map(i64::from),
        report_each: Some(report_each),
        ops: ops
            .iter()
            .map(|o| Spanned::new(at..at, op(o, at)))
            .collect(),
    }
}

fn element<T>(at: usize, name: Option<&str>, value: T) -> Element<T> {
    Element::built(at, name.map(str::to_owned), value)
}

fn station(s: &StationTable, at: usize) -> RawStation {
    let mut st = RawStation::new(&s.name, RawKind::Delay);
    let spanned = |d: &crate::dist::DistSpec| Some(Spanned::new(at..at, d.clone()));
    match &s.kind {
        StationTableKind::Delay(d) => st.service = spanned(d),
        StationTableKind::Fcfs(d) => {
            st.kind = RawKind::Fcfs;
            st.service = spanned(d);
        }
        StationTableKind::Fork { copies, to } => {
            st.kind = RawKind::Fork;
            st.copies = Some(i64::from(*copies));
            st.to = Some(to.clone());
        }
        StationTableKind::Join { fork } => {
            st.kind = RawKind::Join;
            st.fork = Some(fork.clone());
        }
    }
    st
}

fn topology(t: &TopologyTable) -> RawTopology {
    RawTopology {
        dims: t
            .dims
            .as_ref()
            .map(|d| d.iter().map(|&n| i64::from(n)).collect()),
        latency: t.latency,
        startup: t.startup,
        ..RawTopology::of_kind(t.kind, t.bandwidth)
    }
}

fn disk(d: &DiskTable) -> RawDisk {
    RawDisk {
        name: d.name.clone(),
        count: Some(i64::from(d.count)),
        startup: None,
        bandwidth: d.bandwidth,
    }
}

fn op(o: &OpTable, at: usize) -> RawOp {
    let text = |s: &str| Some(ExprText(s.to_owned()));
    let when = |w: &Option<String>| w.as_deref().and_then(text);
    let dist = |d: &crate::dist::DistSpec| Some(SizeSpec::Dist(d.clone()));
    let span: Range<usize> = at..at;
    let body = |ops: &[OpTable]| {
        Some(
            ops.iter()
                .map(|o| Spanned::new(span.clone(), op(o, at)))
                .collect(),
        )
    };
    match o {
        OpTable::Compute { when: w, time } => {
            let mut r = RawOp::new(OpKind::Compute);
            r.when = when(w);
            r.time = Some(Spanned::new(span.clone(), time.clone()));
            r
        }
        OpTable::Send {
            when: w,
            to,
            bytes,
            tag,
        } => {
            let mut r = RawOp::new(OpKind::Send);
            r.when = when(w);
            r.to = text(to);
            r.bytes = dist(bytes);
            r.tag = tag.map(|t| ExprText(t.to_string()));
            r
        }
        OpTable::Isend { when: w, to, bytes } => {
            let mut r = RawOp::new(OpKind::Isend);
            r.when = when(w);
            r.to = text(to);
            r.bytes = dist(bytes);
            r
        }
        OpTable::Allreduce {
            bytes,
            algorithm,
            segments,
            combine_per_byte,
            group,
        } => {
            let mut r = RawOp::new(OpKind::Allreduce);
            r.bytes = Some(SizeSpec::Expr(ExprText(bytes.clone())));
            r.algorithm = Some(algorithm.clone());
            r.segments = segments.map(i64::from);
            r.combine_per_byte = (*combine_per_byte > 0.0).then_some(*combine_per_byte);
            r.group = group.as_deref().and_then(text);
            r
        }
        OpTable::Recv { when: w, from, tag } => {
            let mut r = RawOp::new(OpKind::Recv);
            r.when = when(w);
            r.from = text(from);
            r.tag = tag.map(|t| ExprText(t.to_string()));
            r
        }
        OpTable::SendRecv {
            when: w,
            to,
            from,
            bytes,
            tag,
        } => {
            let mut r = RawOp::new(OpKind::Sendrecv);
            r.when = when(w);
            r.to = text(to);
            r.from = text(from);
            r.bytes = dist(bytes);
            r.tag = text(&tag.to_string());
            r
        }
        OpTable::Io {
            disk,
            when: w,
            unit,
            bytes,
        } => {
            let mut r = RawOp::new(OpKind::Io);
            r.disk = Some(disk.clone());
            r.when = when(w);
            r.unit = text(unit);
            r.bytes = dist(bytes);
            r
        }
        OpTable::Barrier { group } => {
            let mut r = RawOp::new(OpKind::Barrier);
            r.algorithm = Some("ideal".to_owned());
            r.group = group.as_deref().and_then(text);
            r
        }
        OpTable::Repeat {
            when: w,
            times,
            body: ops,
        } => {
            let mut r = RawOp::new(OpKind::Repeat);
            r.when = when(w);
            r.times = text(times);
            r.body = body(ops);
            r
        }
        OpTable::Phase { name, body: ops } => {
            let mut r = RawOp::new(OpKind::Phase);
            r.name = Some(name.clone());
            r.body = body(ops);
            r
        }
    }
}
