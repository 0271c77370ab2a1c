//! The network model: the intermediate representation every scenario compiles to.
//!
//! A [`Network`] is stations, job classes and per-class routing, all referring to each other by
//! index ([`StationId`], [`ClassId`]). It is plain data, checked once when it is built (by the
//! input layer, from a scenario file or the Rust `NetworkBuilder`, with the same checks); the
//! queueing engine and the network analyser both read it.

pub(crate) mod estimates;
mod routing;
mod traffic;

pub(crate) use routing::{PickGuide, pick};
pub use routing::{Routing, Rule, Target};
pub use traffic::{TrafficError, visits};

use crate::dist::Dist;
use crate::time::Clock;

/// Index of a station in [`Network::stations`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StationId(pub u32);

/// Index of a class in [`Network::classes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClassId(pub u32);

impl StationId {
    /// As a `usize` index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl ClassId {
    /// As a `usize` index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A queueing network: stations, classes and routing.
#[derive(Clone, Debug)]
pub struct Network {
    /// The stations, indexed by [`StationId`].
    pub stations: Vec<Station>,
    /// The job classes, indexed by [`ClassId`].
    pub classes: Vec<Class>,
    /// Where each class goes after each station.
    pub routing: Routing,
    /// Station sets used by state-dependent routing rules, indexed by [`Rule`] group ids.
    pub groups: Vec<Vec<StationId>>,
    /// The clock's resolution, from the smallest mean time of the network
    /// ([`Network::smallest_mean_time`]).
    pub clock: Clock,
    /// Named sums of station responses (`[[path]]`), reported as `path.<name>.response`.
    pub paths: Vec<Path>,
}

/// A named list of stations whose mean responses per visit are summed into one metric,
/// `path.<name>.response`, in each replication (so its interval comes from the replication
/// values, not from adding half-widths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// Its name in the scenario.
    pub name: String,
    /// The stations summed, in the order given.
    pub stations: Vec<StationId>,
}

/// A named station.
#[derive(Clone, Debug)]
pub struct Station {
    /// Its name in the scenario.
    pub name: String,
    /// What it does.
    pub kind: StationKind,
}

/// Service times of one station, one entry per class (`None`: the class does not visit).
pub type ServiceTable = Vec<Option<Dist>>;

/// The scheduling discipline of a [`StationKind::Queue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// First come, first served, with `servers` identical servers.
    Fcfs,
    /// Processor sharing on one server.
    Ps,
}

/// The kinds of station.
#[derive(Clone, Debug)]
pub enum StationKind {
    /// Infinite server: every job is served at once, no waiting.
    Delay {
        /// Service time per class.
        service: ServiceTable,
    },
    /// A queue with `servers` servers and a discipline.
    Queue {
        /// FCFS or PS.
        discipline: Discipline,
        /// Number of servers (1 for PS).
        servers: u32,
        /// Service time per class.
        service: ServiceTable,
    },
    /// Splits each arriving job into one task per branch; the job waits at the matching join.
    Fork {
        /// Where each task goes (a station may appear several times: copies).
        branches: Vec<StationId>,
    },
    /// Releases the waiting parent job once all the tasks of its fork have arrived.
    Join {
        /// The fork whose tasks it gathers.
        fork: StationId,
    },
    /// Open arrivals of one class.
    Source {
        /// The class of the arriving jobs.
        class: ClassId,
        /// Time between arrivals (a renewal process).
        interarrival: Dist,
    },
    /// Jobs that reach it leave the network.
    Sink,
}

impl StationKind {
    /// The service table, for stations that serve jobs.
    pub fn service(&self) -> Option<&ServiceTable> {
        match self {
            StationKind::Delay { service } | StationKind::Queue { service, .. } => Some(service),
            _ => None,
        }
    }

    /// Short name of the kind, as written in scenario files.
    pub fn label(&self) -> &'static str {
        match self {
            StationKind::Delay { .. } => "delay",
            StationKind::Queue {
                discipline: Discipline::Fcfs,
                ..
            } => "fcfs",
            StationKind::Queue {
                discipline: Discipline::Ps,
                ..
            } => "ps",
            StationKind::Fork { .. } => "fork",
            StationKind::Join { .. } => "join",
            StationKind::Source { .. } => "source",
            StationKind::Sink => "sink",
        }
    }
}

/// A job class.
#[derive(Clone, Debug)]
pub struct Class {
    /// Its name in the scenario.
    pub name: String,
    /// Open or closed.
    pub kind: ClassKind,
}

/// Whether a class is open (arrivals from a source, leaves at an exit) or closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassKind {
    /// Jobs arrive from a source and leave.
    Open,
    /// A fixed population circulates; a cycle ends each time a job reaches `reference`.
    Closed {
        /// Number of jobs.
        population: u32,
        /// The station where cycles are counted and where the jobs start.
        reference: StationId,
    },
}

impl Network {
    /// The station with this id.
    pub fn station(&self, id: StationId) -> &Station {
        &self.stations[id.index()]
    }

    /// The index of the join station of the fork at index `fork`, if it has one.
    pub fn join_of(&self, fork: usize) -> Option<usize> {
        self.stations
            .iter()
            .position(|st| matches!(st.kind, StationKind::Join { fork: f } if f.index() == fork))
    }

    /// Every distribution of the network (service and inter-arrival times) with its station.
    pub fn distributions(&self) -> impl Iterator<Item = (&Station, &Dist)> {
        self.stations.iter().flat_map(|s| {
            let dists: Vec<&Dist> = match &s.kind {
                StationKind::Delay { service } | StationKind::Queue { service, .. } => {
                    service.iter().flatten().collect()
                }
                StationKind::Source { interarrival, .. } => vec![interarrival],
                _ => Vec::new(),
            };
            dists.into_iter().map(move |d| (s, d))
        })
    }

    /// The smallest positive mean of any service or inter-arrival time, with the name of its
    /// station (`None` when nothing takes time). The clock resolves a small fraction of it.
    pub fn smallest_mean_time(&self) -> Option<(f64, &str)> {
        self.distributions()
            .map(|(s, d)| (d.mean(), s.name.as_str()))
            .filter(|(m, _)| *m > 0.0)
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// Sets [`Network::clock`] from [`Network::smallest_mean_time`].
    pub fn set_clock(&mut self) {
        self.clock = Clock::for_scale(self.smallest_mean_time().map_or(1.0, |(m, _)| m));
    }
}
