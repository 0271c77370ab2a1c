//! A model's scenario tables ([`crate::models::tables`]) written as the TOML a user could have
//! put in a scenario file: what `parsim run --show-network` prints, so that what a model builds
//! can be read, copied and edited like any scenario.
//!
//! Top-level operations are `[[program.op]]` tables with one field a line; operations inside a
//! `body` are inline tables, one a line, indented two spaces deeper at each level. Fields come
//! in one order everywhere: `kind`, `name`, `disk`, `when`, `time`, `to`, `from`, `unit`,
//! `bytes`, `tag`, `algorithm`, `group`, `times`, `body`.

use std::fmt::Write as _;

use crate::models::tables::{
    Destination, NetworkTables, OpTable, ProgramTables, StationTableKind, Tables,
};

/// The tables as scenario TOML, each table preceded by an empty line.
pub fn toml(t: &Tables) -> String {
    match t {
        Tables::Network(n) => network(n),
        Tables::Program(p) => program(p),
    }
}

/// A string as a TOML value.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn network(t: &NetworkTables) -> String {
    let mut out = String::new();
    for c in &t.classes {
        section(&mut out, "[[class]]");
        field(&mut out, "name", &quoted(&c.name));
        field(&mut out, "population", &c.population.to_string());
        field(&mut out, "reference", &quoted(&c.reference));
    }
    for s in &t.stations {
        section(&mut out, "[[station]]");
        field(&mut out, "name", &quoted(&s.name));
        match &s.kind {
            StationTableKind::Delay(d) => {
                field(&mut out, "kind", "\"delay\"");
                field(&mut out, "service", &d.to_string());
            }
            StationTableKind::Fcfs(d) => {
                field(&mut out, "kind", "\"fcfs\"");
                field(&mut out, "service", &d.to_string());
            }
            StationTableKind::Fork { copies, to } => {
                field(&mut out, "kind", "\"fork\"");
                field(&mut out, "copies", &copies.to_string());
                field(&mut out, "to", &quoted(to));
            }
            StationTableKind::Join { fork } => {
                field(&mut out, "kind", "\"join\"");
                field(&mut out, "fork", &quoted(fork));
            }
        }
    }
    for r in &t.routes {
        section(&mut out, "[[route]]");
        field(&mut out, "class", &quoted(&r.class));
        field(&mut out, "from", &quoted(&r.from));
        match &r.to {
            Destination::Station(s) => field(&mut out, "to", &quoted(s)),
            Destination::Branches(b) => {
                let branches: Vec<String> = b
                    .iter()
                    .map(|(to, p)| format!("{{ to = {}, p = {p:?} }}", quoted(to)))
                    .collect();
                field(&mut out, "branches", &format!("[{}]", branches.join(", ")));
            }
        }
    }
    out
}

fn program(t: &ProgramTables) -> String {
    let mut out = String::new();
    section(&mut out, "[program]");
    field(&mut out, "ranks", &t.ranks.to_string());
    field(&mut out, "report_each", &t.report_each.to_string());
    for op in &t.ops {
        section(&mut out, "[[program.op]]");
        for (key, value) in fields(op, 0) {
            field(&mut out, key, &value);
        }
    }
    let topo = &t.topology;
    section(&mut out, "[topology]");
    field(&mut out, "kind", &quoted(topo.kind.name()));
    if let Some(dims) = &topo.dims {
        let dims: Vec<String> = dims.iter().map(u32::to_string).collect();
        field(&mut out, "dims", &format!("[{}]", dims.join(", ")));
    }
    field(&mut out, "bandwidth", &format!("{:?}", topo.bandwidth));
    if let Some(latency) = topo.latency {
        field(&mut out, "latency", &format!("{latency:?}"));
    }
    if let Some(startup) = topo.startup {
        field(&mut out, "startup", &format!("{startup:?}"));
    }
    for d in &t.disks {
        section(&mut out, "[[disk]]");
        field(&mut out, "name", &quoted(&d.name));
        field(&mut out, "count", &d.count.to_string());
        field(&mut out, "bandwidth", &format!("{:?}", d.bandwidth));
    }
    out
}

fn section(out: &mut String, header: &str) {
    let _ = write!(out, "\n{header}\n");
}

fn field(out: &mut String, key: &str, value: &str) {
    let _ = writeln!(out, "{key} = {value}");
}

/// An expression as a TOML value: a bare integer, or a string.
fn expr(e: &str) -> String {
    if e.parse::<i64>().is_ok() {
        e.to_owned()
    } else {
        quoted(e)
    }
}

/// The fields of `op` in the one order, its body (if any) rendered as inline tables nested
/// `depth` inline tables deep.
fn fields(op: &OpTable, depth: usize) -> Vec<(&'static str, String)> {
    let mut f: Vec<(&'static str, String)> = Vec::new();
    let when = |f: &mut Vec<(&'static str, String)>, w: &Option<String>| {
        if let Some(w) = w {
            f.push(("when", quoted(w)));
        }
    };
    let tag = |f: &mut Vec<(&'static str, String)>, t: Option<u32>| {
        if let Some(t) = t {
            f.push(("tag", t.to_string()));
        }
    };
    match op {
        OpTable::Compute { when: w, time } => {
            f.push(("kind", quoted("compute")));
            when(&mut f, w);
            f.push(("time", time.to_string()));
        }
        OpTable::Send {
            when: w,
            to,
            bytes,
            tag: t,
        } => {
            f.push(("kind", quoted("send")));
            when(&mut f, w);
            f.push(("to", quoted(to)));
            f.push(("bytes", bytes.to_string()));
            tag(&mut f, *t);
        }
        OpTable::Isend { when: w, to, bytes } => {
            f.push(("kind", quoted("isend")));
            when(&mut f, w);
            f.push(("to", quoted(to)));
            f.push(("bytes", bytes.to_string()));
        }
        OpTable::Allreduce {
            bytes,
            algorithm,
            segments,
            combine_per_byte,
            group,
        } => {
            f.push(("kind", quoted("allreduce")));
            f.push(("bytes", expr(bytes)));
            f.push(("algorithm", quoted(algorithm)));
            if let Some(s) = segments {
                f.push(("segments", s.to_string()));
            }
            if *combine_per_byte > 0.0 {
                f.push(("combine_per_byte", format!("{combine_per_byte:e}")));
            }
            if let Some(g) = group {
                f.push(("group", quoted(g)));
            }
        }
        OpTable::Recv {
            when: w,
            from,
            tag: t,
        } => {
            f.push(("kind", quoted("recv")));
            when(&mut f, w);
            f.push(("from", quoted(from)));
            tag(&mut f, *t);
        }
        OpTable::SendRecv {
            when: w,
            to,
            from,
            bytes,
            tag: t,
        } => {
            f.push(("kind", quoted("sendrecv")));
            when(&mut f, w);
            f.push(("to", quoted(to)));
            f.push(("from", quoted(from)));
            f.push(("bytes", bytes.to_string()));
            tag(&mut f, Some(*t));
        }
        OpTable::Io {
            disk,
            when: w,
            unit,
            bytes,
        } => {
            f.push(("kind", quoted("io")));
            f.push(("disk", quoted(disk)));
            when(&mut f, w);
            f.push(("unit", quoted(unit)));
            f.push(("bytes", bytes.to_string()));
        }
        OpTable::Barrier { group } => {
            f.push(("kind", quoted("barrier")));
            f.push(("algorithm", quoted("ideal")));
            if let Some(g) = group {
                f.push(("group", quoted(g)));
            }
        }
        OpTable::Repeat {
            when: w,
            times,
            body,
        } => {
            f.push(("kind", quoted("repeat")));
            when(&mut f, w);
            f.push(("times", expr(times)));
            f.push(("body", body_text(body, depth)));
        }
        OpTable::Phase { name, body } => {
            f.push(("kind", quoted("phase")));
            f.push(("name", quoted(name)));
            f.push(("body", body_text(body, depth)));
        }
    }
    f
}

/// A body of operations inside a table `depth` inline tables deep: one inline table a line,
/// indented `2 (depth + 1)` spaces, the closing bracket at `2 depth`.
fn body_text(body: &[OpTable], depth: usize) -> String {
    let inner = "  ".repeat(depth + 1);
    let mut out = String::from("[\n");
    for op in body {
        let items: Vec<String> = fields(op, depth + 1)
            .into_iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        let _ = writeln!(out, "{inner}{{ {} }},", items.join(", "));
    }
    out.push_str(&"  ".repeat(depth));
    out.push(']');
    out
}
