//! The scenario tables a model builds: typed, one value per table a scenario file would hold
//! (`[[class]]`, `[[station]]`, `[[route]]`, or `[program]` with its operations, `[topology]`
//! and `[[disk]]`), in the file's own vocabulary: names for references, distribution specs for
//! times and sizes, expressions as text.
//!
//! A model writes its system in these tables; the input layer checks them with exactly the
//! checks a hand-written file gets and builds the IR from them, and `parsim run --show-network`
//! prints them as the TOML a user could have written. A model never writes TOML text itself.

use crate::dist::DistSpec;
use crate::topology::TopologyKind;

/// Everything a model builds: a queueing network (classes, stations, routes) or a rank program.
#[derive(Clone, Debug, PartialEq)]
pub enum Tables {
    /// A queueing network.
    Network(NetworkTables),
    /// A rank program on an interconnect, with its disks.
    Program(ProgramTables),
}

/// A queueing network's tables, in the order they are written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetworkTables {
    /// `[[class]]`: closed classes.
    pub classes: Vec<ClassTable>,
    /// `[[station]]`.
    pub stations: Vec<StationTable>,
    /// `[[route]]`.
    pub routes: Vec<RouteTable>,
}

/// A closed class: `population` jobs whose cycles are counted at `reference`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassTable {
    /// Its name.
    pub name: String,
    /// Its jobs.
    pub population: u32,
    /// The station where its cycles are counted.
    pub reference: String,
}

/// A station and what it does.
#[derive(Clone, Debug, PartialEq)]
pub struct StationTable {
    /// Its name.
    pub name: String,
    /// Its kind and parameters.
    pub kind: StationTableKind,
}

/// The kinds of station a model builds.
#[derive(Clone, Debug, PartialEq)]
pub enum StationTableKind {
    /// An infinite server of this service time.
    Delay(DistSpec),
    /// A one-server FCFS queue of this service time.
    Fcfs(DistSpec),
    /// A fork of `copies` tasks, each sent to the station `to`.
    Fork {
        /// Tasks per job.
        copies: u32,
        /// Where the tasks go.
        to: String,
    },
    /// The join of the fork named `fork`.
    Join {
        /// The fork it gathers.
        fork: String,
    },
}

/// Where `class` goes after `from`.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteTable {
    /// The class routed.
    pub class: String,
    /// The station it leaves.
    pub from: String,
    /// Its destination.
    pub to: Destination,
}

/// The destination of a route.
#[derive(Clone, Debug, PartialEq)]
pub enum Destination {
    /// One station.
    Station(String),
    /// Stations by probability: `(station, p)`, summing to 1.
    Branches(Vec<(String, f64)>),
}

/// A rank program's tables.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramTables {
    /// Ranks.
    pub ranks: u32,
    /// Report every rank and link individually.
    pub report_each: bool,
    /// The operations every rank runs, in order.
    pub ops: Vec<OpTable>,
    /// The interconnect.
    pub topology: TopologyTable,
    /// The disks.
    pub disks: Vec<DiskTable>,
}

/// One operation of a rank program. `when` (an expression of `rank` and `P`) restricts it to
/// the ranks where it is true.
#[derive(Clone, Debug, PartialEq)]
pub enum OpTable {
    /// Hold the processor for a time.
    Compute {
        /// Ranks that run it.
        when: Option<String>,
        /// Its time.
        time: DistSpec,
    },
    /// Send, blocking until delivered.
    Send {
        /// Ranks that run it.
        when: Option<String>,
        /// Destination rank.
        to: String,
        /// Bytes, drawn per message.
        bytes: DistSpec,
        /// Tag (`None`: the default, 0).
        tag: Option<u32>,
    },
    /// Send, going on after the startup (`isend`).
    Isend {
        /// Ranks that run it.
        when: Option<String>,
        /// Destination rank.
        to: String,
        /// Bytes, drawn per message.
        bytes: DistSpec,
    },
    /// An allreduce of `bytes` (an expression) among the ranks of each group.
    Allreduce {
        /// Bytes of the vector.
        bytes: String,
        /// The algorithm's name.
        algorithm: String,
        /// Chunks (`None`: the algorithm's default).
        segments: Option<u32>,
        /// Time per byte combined.
        combine_per_byte: f64,
        /// The group of each rank, an expression of `rank` and `P` (`None`: all ranks).
        group: Option<String>,
    },
    /// Receive.
    Recv {
        /// Ranks that run it.
        when: Option<String>,
        /// Source rank.
        from: String,
        /// Tag (`None`: the default, 0).
        tag: Option<u32>,
    },
    /// Send and receive at once.
    SendRecv {
        /// Ranks that run it.
        when: Option<String>,
        /// Destination rank.
        to: String,
        /// Source rank.
        from: String,
        /// Bytes sent, drawn per message.
        bytes: DistSpec,
        /// Tag of both.
        tag: u32,
    },
    /// A request at a disk.
    Io {
        /// The disk's name.
        disk: String,
        /// Ranks that run it.
        when: Option<String>,
        /// Which unit of the disk.
        unit: String,
        /// Bytes moved, drawn per request.
        bytes: DistSpec,
    },
    /// An ideal (zero-cost) barrier of all ranks, or of the rank's group.
    Barrier {
        /// The group of each rank, an expression of `rank` and `P` (`None`: all ranks).
        group: Option<String>,
    },
    /// A loop.
    Repeat {
        /// Ranks that run it.
        when: Option<String>,
        /// Iterations.
        times: String,
        /// Its body.
        body: Vec<OpTable>,
    },
    /// A named phase.
    Phase {
        /// Its name.
        name: String,
        /// Its body.
        body: Vec<OpTable>,
    },
}

/// An interconnect (cut-through switching, FCFS links).
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyTable {
    /// Its shape.
    pub kind: TopologyKind,
    /// Nodes along each dimension (meshes and tori).
    pub dims: Option<Vec<u32>>,
    /// Bytes per time unit of a link.
    pub bandwidth: f64,
    /// Per-hop latency (`None`: the default, 0).
    pub latency: Option<f64>,
    /// Per-message startup (`None`: the default, 0).
    pub startup: Option<f64>,
}

/// A disk of `count` identical FCFS units.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskTable {
    /// Its name.
    pub name: String,
    /// Units.
    pub count: u32,
    /// Bytes per time unit.
    pub bandwidth: f64,
}
