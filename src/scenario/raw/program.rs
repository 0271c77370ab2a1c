//! The scenario-file form of `[program]`, `[topology]` and `[[disk]]`: plain serde structs,
//! checked for nothing but shape (see `crate::scenario::check::program` for the checks).
//!
//! ```toml
//! [program]
//! ranks = 16
//!
//! [[program.op]]
//! kind = "repeat"
//! times = 100
//! var = "step"
//! body = [
//!   { kind = "compute", time = { dist = "exp", mean = 0.01 } },
//!   { kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + P - 1) % P", bytes = 65536 },
//!   { kind = "allreduce", bytes = 8, algorithm = "recursive_doubling" },
//! ]
//!
//! [topology]
//! kind = "torus"
//! dims = [4, 4]
//! bandwidth = 1e9      # bytes per time unit
//! latency = 1e-7       # per hop
//! startup = 2e-6       # per message
//! ```

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use crate::dist::DistSpec;
use crate::topology::TopologyKind;

/// `[program]`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawProgram {
    /// Number of ranks `P` (required unless `goal` gives them).
    pub ranks: Option<i64>,
    /// A GOAL schedule to run (relative to the scenario), instead of `op`s.
    pub goal: Option<String>,
    /// Ranks per node (default 1).
    pub ranks_per_node: Option<i64>,
    /// Processor servers per node (default 1).
    pub cores: Option<i64>,
    /// Report every rank and link individually (default: only when `P <= 16`).
    pub report_each: Option<bool>,
    /// The operations (`[[program.op]]`).
    #[serde(default, rename = "op")]
    #[schemars(with = "Vec<RawOp>")]
    pub ops: Vec<Spanned<RawOp>>,
}

/// The kinds of operation.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// Hold the processor for a time.
    Compute,
    /// Send, blocking until delivered.
    Send,
    /// Send, blocking for the startup only.
    Isend,
    /// Receive.
    Recv,
    /// Receive without waiting for the message: the next operation starts once it is posted
    /// (wait for it with `wait`).
    Irecv,
    /// Wait for the labelled operations `for` (and the one before).
    Wait,
    /// Send and receive at once.
    Sendrecv,
    /// Wait for all ranks (or the rank's group).
    Barrier,
    /// Read or write at a disk.
    Io,
    /// Broadcast.
    Bcast,
    /// Reduce to a root.
    Reduce,
    /// Reduce to all.
    Allreduce,
    /// Scatter from a root.
    Scatter,
    /// Gather to a root.
    Gather,
    /// Gather to all.
    Allgather,
    /// All to all.
    Alltoall,
    /// A loop.
    Repeat,
    /// A named phase.
    Phase,
}

/// One `[[program.op]]` (or an element of a `body`): which fields apply depends on `kind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawOp {
    /// What it is.
    pub kind: OpKind,
    /// Run only on the ranks where this is true.
    pub when: Option<ExprText>,
    /// A name other operations' `requires`, `irequires` and `for` refer to (the rank's latest
    /// execution of this operation).
    pub label: Option<String>,
    /// Start only after these labelled operations have finished (instead of after the
    /// previous operation).
    pub requires: Option<Vec<String>>,
    /// Start only after these labelled operations have started (instead of after the previous
    /// operation).
    pub irequires: Option<Vec<String>>,
    /// Wait: the labelled operations it waits for.
    #[serde(rename = "for")]
    pub wait_for: Option<Vec<String>>,
    /// Compute: its time.
    #[schemars(with = "Option<DistSpec>")]
    pub time: Option<Spanned<DistSpec>>,
    /// Compute region: total iterations.
    pub iterations: Option<ExprText>,
    /// Compute region: cost of one iteration.
    #[schemars(with = "Option<DistSpec>")]
    pub cost: Option<Spanned<DistSpec>>,
    /// Compute region: split over the ranks (default) or replicated on each.
    pub split: Option<bool>,
    /// Send, isend, sendrecv: the destination rank.
    pub to: Option<ExprText>,
    /// Recv, sendrecv: the source rank.
    pub from: Option<ExprText>,
    /// Message, collective, io: bytes (an expression, or a distribution drawn per message).
    pub bytes: Option<SizeSpec>,
    /// Message tag (default 0).
    pub tag: Option<ExprText>,
    /// Send, isend: `false` for a message no operation receives (network traffic, counted on
    /// delivery); `to = "random"` implies it.
    pub received: Option<bool>,
    /// Rooted collectives: the root (index in the group, default 0).
    pub root: Option<ExprText>,
    /// Collectives and barrier: the algorithm.
    pub algorithm: Option<String>,
    /// Chain algorithms: segments (default 1).
    pub segments: Option<i64>,
    /// Reductions: time to combine one received block.
    #[schemars(with = "Option<DistSpec>")]
    pub combine: Option<Spanned<DistSpec>>,
    /// Reductions: time per byte combined.
    pub combine_per_byte: Option<f64>,
    /// Collectives and barrier: the group of each rank, an expression of `rank` and `P`.
    pub group: Option<ExprText>,
    /// Io: the disk's name.
    pub disk: Option<String>,
    /// Io: which unit of the disk (default `rank`, modulo the disk's count).
    pub unit: Option<ExprText>,
    /// Repeat: iterations.
    pub times: Option<ExprText>,
    /// Repeat: the name of its counter (0, 1, ...), usable in expressions inside.
    pub var: Option<String>,
    /// Phase: its name.
    pub name: Option<String>,
    /// Repeat, phase: the operations inside.
    #[schemars(with = "Option<Vec<RawOp>>")]
    pub body: Option<Vec<Spanned<RawOp>>>,
}

impl RawOp {
    /// An operation of `kind` with no field set.
    pub fn new(kind: OpKind) -> RawOp {
        RawOp {
            kind,
            when: None,
            label: None,
            requires: None,
            irequires: None,
            wait_for: None,
            time: None,
            iterations: None,
            cost: None,
            split: None,
            to: None,
            from: None,
            bytes: None,
            tag: None,
            received: None,
            root: None,
            algorithm: None,
            segments: None,
            combine: None,
            combine_per_byte: None,
            group: None,
            disk: None,
            unit: None,
            times: None,
            var: None,
            name: None,
            body: None,
        }
    }
}

/// How messages cross several hops.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawSwitching {
    /// `t_s + (m t_w + t_h) l`.
    StoreAndForward,
    /// `t_s + l t_h + m t_w`.
    CutThrough,
}

/// How a link is shared.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawSharing {
    /// Packets queue.
    Fcfs,
    /// Flows share the bandwidth.
    Fair,
}

/// `[topology]`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    /// The shape.
    pub kind: TopologyKind,
    /// Mesh, torus: nodes along each dimension (product = the program's nodes); HyperX:
    /// routers along each dimension.
    pub dims: Option<Vec<i64>>,
    /// Tree, fat tree: children per switch (default 2).
    pub arity: Option<i64>,
    /// Dragonfly, HyperX: hosts per router (`p`, default 1).
    pub hosts_per_router: Option<i64>,
    /// Dragonfly: routers per group (`a`).
    pub routers_per_group: Option<i64>,
    /// Dragonfly: global links per router (`h`).
    pub global_links_per_router: Option<i64>,
    /// Dragonfly: groups (`g`, default `a h + 1`: every pair of groups joined by one global
    /// link).
    pub groups: Option<i64>,
    /// Dragonfly: a global link's bytes per time unit (default `bandwidth`).
    pub global_bandwidth: Option<f64>,
    /// Dragonfly: a global link's latency (default `latency`).
    pub global_latency: Option<f64>,
    /// Bytes per time unit of each node's own link, which carries the messages between the
    /// node's ranks (default: no such link, those messages cost their startup only).
    pub node_bandwidth: Option<f64>,
    /// Latency of a node's own link (default `latency`).
    pub node_latency: Option<f64>,
    /// `minimal` (default); `valiant` (dragonfly, HyperX); `ugal` (dragonfly); `adaptive`
    /// (HyperX).
    pub routing: Option<crate::topology::Routing>,
    /// Bytes per time unit of a link (`1 / t_w`).
    pub bandwidth: f64,
    /// Per-hop latency `t_h` (default 0).
    pub latency: Option<f64>,
    /// Per-message startup `t_s` (default 0).
    pub startup: Option<f64>,
    /// `store_and_forward` or `cut_through` (default).
    pub switching: Option<RawSwitching>,
    /// `fcfs` (default) or `fair`.
    pub sharing: Option<RawSharing>,
}

impl RawTopology {
    /// A topology of `kind` with links of `bandwidth` and every other field left out.
    pub fn of_kind(kind: TopologyKind, bandwidth: f64) -> RawTopology {
        RawTopology {
            kind,
            dims: None,
            arity: None,
            hosts_per_router: None,
            routers_per_group: None,
            global_links_per_router: None,
            groups: None,
            global_bandwidth: None,
            global_latency: None,
            node_bandwidth: None,
            node_latency: None,
            routing: None,
            bandwidth,
            latency: None,
            startup: None,
            switching: None,
            sharing: None,
        }
    }
}

/// `[machine]`: message costs from a machine profile (measured costs, as `parsim fit-comm` writes
/// them) instead of a `[topology]`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMachine {
    /// The profile file written by `parsim fit-comm`, relative to the scenario.
    pub profile: String,
    /// The primitive whose fit costs a message (default `"send"`).
    pub primitive: Option<String>,
}

/// `[loggp]`: LogGP(S) endpoints (times in seconds, `S` in bytes), LogGOPSim's defaults for
/// what is left out.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLogGp {
    /// Latency `L`.
    #[serde(rename = "L")]
    pub l: Option<f64>,
    /// CPU overhead per message `o`.
    pub o: Option<f64>,
    /// NIC gap per message `g`.
    pub g: Option<f64>,
    /// NIC gap per byte `G`.
    #[serde(rename = "G")]
    pub big_g: Option<f64>,
    /// CPU overhead per byte `O`.
    #[serde(rename = "O")]
    pub big_o: Option<f64>,
    /// Largest eager message, bytes (larger ones use rendezvous).
    #[serde(rename = "S")]
    pub s: Option<i64>,
    /// The order of operations that become ready together: `"program"` (default) or
    /// `"loggopsim"` (LogGOPSim's unstable sort).
    pub order: Option<String>,
}

/// `[[disk]]`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDisk {
    /// Its name (what `io` ops refer to).
    pub name: String,
    /// Units (default 1).
    pub count: Option<i64>,
    /// Time per request (default 0).
    pub startup: Option<f64>,
    /// Bytes per time unit.
    pub bandwidth: f64,
}

/// An expression as written: a string, or a plain integer.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprText(pub String);

impl JsonSchema for ExprText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Expression".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An integer, or an expression of rank, P and loop variables in a string, e.g. \"(rank + 1) % P\".",
            "type": ["integer", "string"]
        })
    }
}

impl<'de> Deserialize<'de> for ExprText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ExprText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer or an expression in a string, e.g. \"(rank + 1) % P\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ExprText, E> {
                Ok(ExprText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ExprText, E> {
                Ok(ExprText(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ExprText, E> {
                Ok(ExprText(v.to_owned()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A message size as written: an integer, an integral float (`6.5e4`), an expression, or a
/// distribution table (`{ dist = "exp", mean = 23720 }`).
#[derive(Clone, Debug, PartialEq)]
pub enum SizeSpec {
    /// An expression (integers are expressions too).
    Expr(ExprText),
    /// A distribution.
    Dist(DistSpec),
    /// A float that is not a whole number (refused by the check, with its value).
    Fraction(f64),
}

impl JsonSchema for SizeSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Size".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let dist = generator.subschema_for::<DistSpec>();
        schemars::json_schema!({
            "description": "Bytes: a whole number, an expression in a string, or a distribution table drawn per message.",
            "anyOf": [
                { "type": ["number", "string"] },
                dist
            ]
        })
    }
}

impl<'de> Deserialize<'de> for SizeSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SizeSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of bytes, an expression, or a distribution table")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SizeSpec, E> {
                Ok(SizeSpec::Expr(ExprText(v.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SizeSpec, E> {
                Ok(SizeSpec::Expr(ExprText(v.to_string())))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<SizeSpec, E> {
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Ok(SizeSpec::Expr(ExprText((v as i64).to_string())))
                } else {
                    Ok(SizeSpec::Fraction(v))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SizeSpec, E> {
                Ok(SizeSpec::Expr(ExprText(v.to_owned())))
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<SizeSpec, M::Error> {
                DistSpec::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(SizeSpec::Dist)
            }
        }
        d.deserialize_any(V)
    }
}
