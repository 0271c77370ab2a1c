//! The network model: the intermediate representation every scenario compiles to.
//!
//! A [`Network`] is stations, job classes and per-class routing, all referring to each other by
//! index ([`StationId`], [`ClassId`]). It is plain data, checked once when it is built (by the
//! input layer, from a scenario file or the Rust `NetworkBuilder`, with the same checks); the
//! queueing engine and the network analyser both read it.

pub(crate) mod estimates;
pub mod replay;
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
    /// What it has beyond its kind's basics (nothing for most stations).
    pub features: Features,
}

/// What a station may have beyond its kind's basics: priorities, a capacity, impatience,
/// load-dependent speed, batch arrivals. A station with none of them is *plain*, and the
/// engine serves it on its fast path.
#[derive(Clone, Debug, Default)]
pub struct Features {
    /// FCFS queues: serve the classes by their [`Class::priority`] levels, FCFS within a level.
    pub priority: Option<Preemption>,
    /// Delay, FCFS and PS stations: the most jobs present, and what a job finding it full does.
    pub capacity: Option<Capacity>,
    /// FCFS queues: how long a job waits before it leaves the network unserved.
    pub patience: Option<Dist>,
    /// FCFS (one server) and PS stations: with `n` jobs present the service runs at
    /// `rate_by_jobs[n - 1]` times its rate (the last entry for every larger `n`).
    pub rate_by_jobs: Option<Vec<f64>>,
    /// Sources: the jobs of one arrival.
    pub batch: Option<Batch>,
}

impl Features {
    /// True when the station has none of the features.
    pub fn is_plain(&self) -> bool {
        let Features {
            priority,
            capacity,
            patience,
            rate_by_jobs,
            batch,
        } = self;
        priority.is_none()
            && capacity.is_none()
            && patience.is_none()
            && rate_by_jobs.is_none()
            && batch.is_none()
    }

    /// True when the station's only feature is head-of-line (non-preemptive) priority.
    pub fn is_head_of_line_only(&self) -> bool {
        self.priority == Some(Preemption::NonPreemptive)
            && self.capacity.is_none()
            && self.patience.is_none()
            && self.rate_by_jobs.is_none()
            && self.batch.is_none()
    }
}

impl Features {
    /// True when the station has a capacity and loses the jobs that find it full.
    pub fn loses(&self) -> bool {
        self.capacity.is_some_and(|c| c.when_full == WhenFull::Lose)
    }
}

/// The multiple of a station's rate with `n` jobs present under `rate_by_jobs = rates`:
/// `rates[n - 1]`, the last entry for every larger `n` (and the first for `n = 0`).
#[inline]
pub fn rate_multiple(rates: &[f64], n: usize) -> f64 {
    rates[(n.max(1) - 1).min(rates.len() - 1)]
}

/// How a priority queue treats an urgent job that arrives while less urgent ones are served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preemption {
    /// Head of line: services in progress finish; the urgent job is next.
    NonPreemptive,
    /// The urgent job takes the server of the least urgent job in service (the latest started
    /// among them), which resumes later where it stopped.
    PreemptiveResume,
}

/// A station's capacity: at most `jobs` present, queue and service together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// The most jobs present.
    pub jobs: u32,
    /// What a job that finds the station full does.
    pub when_full: WhenFull,
}

/// What a job that finds a station full does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhenFull {
    /// It is lost: it leaves the network and counts in the station's and its class's loss.
    Lose,
    /// Blocking after service: the job that finished upstream and is routed here stays where
    /// it is (keeping its server, counted in that station's jobs) until this station has room;
    /// jobs blocked on one station enter it in the order they were blocked.
    Block,
}

/// The number of jobs in one arrival of a source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Batch {
    /// Always this many.
    Fixed(u32),
    /// Geometric on 1, 2, ...: `P(k) = (1 - p)^(k-1) p` with `p = 1 / mean`.
    Geometric {
        /// The mean size, at least 1.
        mean: f64,
    },
    /// Set by the source's batch Markovian arrival process, arrival by arrival (the sizes
    /// depend on its phase: they are neither independent nor of one law given the past).
    Markovian {
        /// The mean size.
        mean: f64,
        /// The second moment of the size.
        second_moment: f64,
    },
}

impl Batch {
    /// The mean size `E[X]`.
    pub fn mean(&self) -> f64 {
        match *self {
            Batch::Fixed(k) => f64::from(k),
            Batch::Geometric { mean } | Batch::Markovian { mean, .. } => mean,
        }
    }

    /// The second moment `E[X^2]`.
    pub fn second_moment(&self) -> f64 {
        match *self {
            Batch::Fixed(k) => f64::from(k) * f64::from(k),
            Batch::Geometric { mean } => {
                let p = 1.0 / mean;
                (2.0 - p) / (p * p)
            }
            Batch::Markovian { second_moment, .. } => second_moment,
        }
    }

    /// The size of the arrival just drawn from `arrivals` (the source's inter-arrival law):
    /// drawn with `rng`, by inversion `1 + floor(ln U / ln(1 - p))` for the geometric law (one
    /// draw per batch); the size the arrival process drew with it for a BMAP.
    pub fn sample(&self, rng: &mut crate::rng::StreamRng, arrivals: &crate::dist::Dist) -> u32 {
        match *self {
            Batch::Fixed(k) => k,
            Batch::Markovian { .. } => arrivals.arrival_process().map_or(1, |m| m.last_batch()),
            Batch::Geometric { mean } => {
                let p = 1.0 / mean;
                if p >= 1.0 {
                    return 1;
                }
                let u: f64 = rand::RngExt::random(rng);
                // 1 - u lies in (0, 1]: its logarithm is finite
                let k = 1.0 + ((1.0 - u).ln() / (1.0 - p).ln()).floor();
                k.min(f64::from(u32::MAX)) as u32
            }
        }
    }
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
    /// Its priority level at stations that serve by priority: smaller is served first.
    pub priority: i32,
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
            let dists = dists.into_iter().chain(&s.features.patience);
            dists.map(move |d| (s, d))
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

/// Where the jobs of closed class `class` start, as (station, jobs): all at its reference
/// station, unless stations block when full: then the reference station up to its capacity,
/// then the stations its jobs reach from there (breadth first, class unchanged), each up to
/// its blocking capacity; whatever does not fit stays at the reference station.
pub fn initial_places(net: &Network, class: usize) -> Vec<(u32, u32)> {
    let ClassKind::Closed {
        population,
        reference,
    } = net.classes[class].kind
    else {
        return Vec::new();
    };
    let room = |s: usize| match net.stations[s].features.capacity {
        Some(c) if c.when_full == WhenFull::Block => c.jobs,
        _ => u32::MAX,
    };
    let mut order = vec![reference.0];
    let mut at = 0;
    while at < order.len() {
        let s = order[at];
        at += 1;
        let rule = net.routing.rule(ClassId(class as u32), StationId(s));
        for (t, _) in Routing::branch_probabilities(rule, &net.groups) {
            if let Target::Station(to, c) = t
                && c.index() == class
                && !order.contains(&to.0)
                && net.stations[to.index()].kind.service().is_some()
            {
                order.push(to.0);
            }
        }
    }
    let mut left = population;
    let mut places = Vec::new();
    for s in order {
        let here = left.min(room(s as usize));
        if here > 0 {
            places.push((s, here));
            left -= here;
        }
    }
    if left > 0 {
        match places.first_mut() {
            Some((s, n)) if *s == reference.0 => *n += left,
            _ => places.insert(0, (reference.0, left)),
        }
    }
    places
}
