//! The scenario file as written: plain serde structs, checked for nothing but shape.
//!
//! Every struct rejects unknown fields; enums are tagged (`kind = "fcfs"`, `dist = "exp"`);
//! there is no `flatten` and no `untagged`, which would blur serde's error positions. The file
//! is read into these by `super::document`, one section and one array element at a time.

use std::collections::BTreeMap;
use std::ops::Range;

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use crate::dist::{ArrivalSpec, DistSpec};
pub mod program;

use crate::models::pipeline::raw::RawPipeline;
use crate::models::spmd::raw::RawSpmd;
use crate::models::training::raw::RawTraining;
use program::{RawDisk, RawLogGp, RawMachine, RawProgram, RawTopology};

/// A whole scenario file, as `super::document` reads it: each section on its own, each
/// element of an array of tables on its own (see [`Element`]).
#[derive(Debug, Default)]
pub struct RawScenario {
    /// A title for reports.
    pub name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// How to run it.
    pub run: Option<Spanned<RawRun>>,
    /// Job classes (`[[class]]`).
    pub classes: Vec<Element<RawClass>>,
    /// Stations (`[[station]]`).
    pub stations: Vec<Element<RawStation>>,
    /// Routing rules (`[[route]]`).
    pub routes: Vec<Element<RawRoute>>,
    /// Named sums of station responses (`[[path]]`).
    pub paths: Vec<Element<RawPath>>,
    /// How `parsim validate` compares this scenario with its analytic predictions.
    pub validate: Option<Spanned<RawValidate>>,
    /// How far the analysis may go (`[analyze]`).
    pub analyze: Option<Spanned<RawAnalyze>>,
    /// A rank program (`[program]`), instead of classes, stations and routes.
    pub program: Option<Spanned<RawProgram>>,
    /// Kuntraruk's parallel pipeline (`[pipeline]`), built into a program.
    pub pipeline: Option<Spanned<RawPipeline>>,
    /// A data-parallel training step (`[training]`), built into a program.
    pub training: Option<Spanned<RawTraining>>,
    /// The program's interconnect (`[topology]`).
    pub topology: Option<Spanned<RawTopology>>,
    /// The program's message costs from a machine profile (`[machine]`), instead of a topology.
    pub machine: Option<Spanned<RawMachine>>,
    /// The program's LogGP endpoints (`[loggp]`).
    pub loggp: Option<Spanned<RawLogGp>>,
    /// The program's disks (`[[disk]]`).
    pub disks: Vec<Element<RawDisk>>,
    /// An SPMD program of Cremonesi and Gennaro (`[spmd]`), built into the network.
    pub spmd: Option<toml::Spanned<RawSpmd>>,
    /// How many shape problems reading found: when there are any, the checks that need the
    /// whole network (routing graph, forks, stability) are left until they are fixed.
    pub shape_problems: usize,
    /// The top-level sections written in the file, including those that could not be read.
    pub written: Vec<String>,
    /// The GOAL file read in place of `[program] goal` (a file named on the command line,
    /// whose name may hold any bytes).
    pub goal_path: Option<std::path::PathBuf>,
}

impl RawScenario {
    /// Whether the file has the top-level section `key` (read or broken).
    pub fn has(&self, key: &str) -> bool {
        self.written.iter().any(|w| w == key)
    }
}

/// `[validate]`: which predictions to compare and how strictly.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawValidate {
    /// Metrics to compare (default: every predicted metric).
    pub metrics: Option<Vec<String>>,
    /// Target relative half-width of the 99% interval (default 0.01).
    pub precision: Option<f64>,
    /// Allowed |relative error| of approximations; without it they get no verdict.
    pub tolerance: Option<f64>,
    /// Allowed |relative error| per approximation, keyed by the beginning of its method label
    /// (overrides `tolerance` for the methods it names).
    pub tolerances: Option<std::collections::BTreeMap<String, f64>>,
    /// `false` when no analytic method is expected to predict anything (default `true`: a case
    /// with nothing to compare is then a finding).
    pub expect_prediction: Option<bool>,
}

/// `[analyze]`: how much work the analytic methods may spend.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawAnalyze {
    /// Multiplies every analytic method's work budget (default 1; at most 1e4): a method
    /// refused as too costly says the factor that lets it run.
    pub budget: Option<f64>,
}

/// `[run]`: replications, run length, warm-up, seed and precision target.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRun {
    /// Independent replications (default 10).
    pub replications: Option<i64>,
    /// Observations measured per replication (default 20000).
    pub length: Option<i64>,
    /// Observations discarded per replication; absent means MSER-5 on a pilot run.
    pub warmup: Option<i64>,
    /// Master seed (default 1).
    pub seed: Option<i64>,
    /// Target relative half-width of the 95% interval of `metric`; adds replications until met.
    pub precision: Option<f64>,
    /// The metric the precision target applies to (default: the first class's response).
    pub metric: Option<String>,
    /// Most replications the precision rule may use (default 200).
    pub max_replications: Option<i64>,
}

/// `[[class]]`: a job class, closed when it has a population.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawClass {
    /// Unique name.
    pub name: String,
    /// Closed population; absent for an open class.
    pub population: Option<i64>,
    /// Closed classes: where jobs start and cycles are counted.
    pub reference: Option<String>,
    /// Priority level at stations that order by priority (smaller is served first; default 0).
    pub priority: Option<i64>,
}

/// The kinds of `[[station]]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawKind {
    /// Infinite server.
    Delay,
    /// FCFS queue with `servers` servers.
    Fcfs,
    /// Processor sharing, one server.
    Ps,
    /// Splits a job into tasks.
    Fork,
    /// Gathers the tasks of a fork.
    Join,
    /// Open arrivals.
    Source,
    /// Exit.
    Sink,
}

/// `[[station]]`: which fields apply depends on `kind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawStation {
    /// Unique name (`exit` is reserved).
    pub name: String,
    /// What it is.
    pub kind: RawKind,
    /// Delay, fcfs, ps: service time of every class.
    #[schemars(with = "Option<DistSpec>")]
    pub service: Option<Spanned<DistSpec>>,
    /// Delay, fcfs, ps: service time per class name (overrides `service`).
    #[schemars(with = "Option<BTreeMap<String, DistSpec>>")]
    pub service_by_class: Option<BTreeMap<String, Spanned<DistSpec>>>,
    /// Delay, fcfs, ps: service demand per job or cycle (visits times mean service time),
    /// instead of `service`: exponential service of mean `demand / visits`.
    #[schemars(with = "Option<f64>")]
    pub demand: Option<Spanned<f64>>,
    /// Fcfs: number of servers (default 1).
    pub servers: Option<i64>,
    /// Fork: the stations the tasks go to.
    pub branches: Option<Vec<String>>,
    /// Fork: number of copies sent to `to` (instead of `branches`).
    pub copies: Option<i64>,
    /// Fork with `copies`: the station the copies go to.
    pub to: Option<String>,
    /// Join: the fork it gathers.
    pub fork: Option<String>,
    /// Source: the class of arriving jobs.
    pub class: Option<String>,
    /// Source: time between arrivals.
    #[schemars(with = "Option<DistSpec>")]
    pub interarrival: Option<Spanned<DistSpec>>,
    /// Source: a Markovian arrival process, in place of `interarrival`.
    #[schemars(with = "Option<ArrivalSpec>")]
    pub arrivals: Option<Spanned<ArrivalSpec>>,
    /// Source: jobs per arrival (default 1).
    #[schemars(with = "Option<RawBatch>")]
    pub batch: Option<Spanned<RawBatch>>,
    /// Fcfs: serve by the classes' `priority` levels, FCFS within a level.
    pub priority: Option<RawPreemption>,
    /// Delay, fcfs, ps: most jobs at the station, queue and service together.
    pub capacity: Option<i64>,
    /// With `capacity`: what happens to a job that finds the station full (default `lose`).
    pub when_full: Option<RawWhenFull>,
    /// Fcfs: how long a job waits before it leaves unserved.
    #[schemars(with = "Option<DistSpec>")]
    pub patience: Option<Spanned<DistSpec>>,
    /// Fcfs (one server), ps: the service rate's multiple with 1, 2, ... jobs present (the last
    /// entry holds for more).
    pub rate_by_jobs: Option<Vec<f64>>,
}

/// How an `fcfs` station with `priority` treats a job of a more urgent level that arrives while
/// a less urgent job is in service.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RawPreemption {
    /// Head of line: the job in service finishes; the urgent job is next.
    NonPreemptive,
    /// The urgent job takes the server; the interrupted job later resumes where it stopped.
    PreemptiveResume,
}

/// What happens to a job that finds a station with `capacity` full.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawWhenFull {
    /// The arriving job is lost (it leaves the network).
    Lose,
    /// Blocking after service: the job that finished upstream keeps its server until there is
    /// room.
    Block,
}

/// The jobs of one arrival from a source: `batch = 4`, or `{ dist = "geometric", mean = 3.0 }`.
#[derive(Clone, Debug, Deserialize, PartialEq, JsonSchema)]
#[serde(
    remote = "Self",
    tag = "dist",
    rename_all = "snake_case",
    deny_unknown_fields
)]
#[schemars(transform = or_a_whole_number)]
pub enum RawBatch {
    /// Sizes 1, 2, ... with `P(k) = (1 - p)^(k-1) p`, `p = 1 / mean`.
    Geometric {
        /// Mean size, at least 1.
        mean: f64,
    },
    /// Always `size` jobs (`batch = 4` is `{ dist = "fixed", size = 4 }`).
    Fixed {
        /// Jobs per arrival, at least 1.
        size: i64,
    },
}

/// The JSON schema of a batch: its tables, or a bare whole number (a fixed size), as
/// [`RawBatch`]'s deserialiser reads them.
fn or_a_whole_number(schema: &mut schemars::Schema) {
    crate::dist::or_a_scalar(
        schema,
        "integer",
        "A fixed size: 4 is { dist = \"fixed\", size = 4 }.",
    );
}

impl<'de> Deserialize<'de> for RawBatch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawBatch;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a whole number of jobs per arrival, e.g. 4, or { dist = \"geometric\", mean = 3.0 }",
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawBatch, E> {
                Ok(RawBatch::Fixed { size: v })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawBatch, E> {
                Ok(RawBatch::Fixed {
                    size: i64::try_from(v).unwrap_or(i64::MAX),
                })
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<RawBatch, M::Error> {
                RawBatch::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_any(V)
    }
}

impl RawStation {
    /// A station named `name` of `kind` with nothing else set.
    pub fn new(name: &str, kind: RawKind) -> RawStation {
        RawStation {
            name: name.to_owned(),
            kind,
            service: None,
            service_by_class: None,
            demand: None,
            servers: None,
            branches: None,
            copies: None,
            to: None,
            fork: None,
            class: None,
            interarrival: None,
            arrivals: None,
            batch: None,
            priority: None,
            capacity: None,
            when_full: None,
            patience: None,
            rate_by_jobs: None,
        }
    }
}

/// The routing policies of a `[[route]]` with `among`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawPolicy {
    /// Join the shortest queue.
    Jsq,
    /// Round robin.
    RoundRobin,
}

/// `[[route]]`: where `class` goes after `from`: one of `to`, `branches`, or `policy`+`among`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRoute {
    /// The class routed.
    pub class: String,
    /// The station it leaves.
    pub from: String,
    /// A single destination (a station or `exit`).
    pub to: Option<String>,
    /// Class after the move, with `to` or `policy` (class switching).
    pub to_class: Option<String>,
    /// Probabilistic destinations.
    pub branches: Option<Vec<RawBranch>>,
    /// State-dependent choice among `among`.
    pub policy: Option<RawPolicy>,
    /// Stations for `policy`.
    pub among: Option<Vec<String>>,
}

impl RawRoute {
    /// A route of `class` from `from` with no destination yet.
    pub fn new(class: &str, from: &str) -> RawRoute {
        RawRoute {
            class: class.to_owned(),
            from: from.to_owned(),
            to: None,
            to_class: None,
            branches: None,
            policy: None,
            among: None,
        }
    }
}

/// `[[path]]`: stations whose mean responses per visit are summed as `path.<name>.response`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPath {
    /// The name in `path.<name>.response`.
    pub name: String,
    /// The stations, by name.
    pub stations: Vec<String>,
}

/// One probabilistic destination.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawBranch {
    /// A station or `exit`.
    pub to: String,
    /// Probability.
    pub p: f64,
    /// Class after the move.
    pub to_class: Option<String>,
}

/// One element of an array of tables: where it is, its `name` if it has one, and its contents
/// when they have the right shape (`None`: its shape problems were reported).
#[derive(Debug)]
pub struct Element<T> {
    /// Byte range of the element in the file.
    pub span: Range<usize>,
    /// Its `name` field, read from the document even when the element is broken, so that
    /// references to it still resolve.
    pub name: Option<String>,
    /// The element as read: with `broken`, without the fields whose shape was wrong (`None`
    /// when it could not be read at all).
    pub value: Option<T>,
    /// Some field had the wrong shape (reported): the element is checked for what can be, but
    /// nothing that needs the whole network is.
    pub broken: bool,
    /// Each key of the element's table with the offset where it is written, so that a problem
    /// with a field points at the field's own line.
    pub keys: Vec<(String, usize)>,
}

impl<T> Element<T> {
    /// An element that was built rather than read (by the Rust builder or a model), placed at
    /// offset `at`.
    pub fn built(at: usize, name: Option<String>, value: T) -> Element<T> {
        Element {
            span: at..at,
            name,
            value: Some(value),
            broken: false,
            keys: Vec::new(),
        }
    }

    /// Byte offset of the element's start.
    pub fn at(&self) -> usize {
        self.span.start
    }

    /// Byte offset of `field` in the element (of the element itself when it is not written).
    pub fn field_at(&self, field: &str) -> usize {
        self.keys
            .iter()
            .find(|(k, _)| k == field)
            .map_or(self.span.start, |(_, at)| *at)
    }
}
