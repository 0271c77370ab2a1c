//! The discrete-event engine: one replication of a [`Network`].
//!
//! The loop pops the earliest event from the [`Calendar`], sets the clock, and dispatches on the
//! event with a `match`; stations are a closed enum, so nothing in the loop is a virtual call.
//! Jobs live in an arena ([`jobs::Jobs`]) and events carry indices. After the warm-up, the
//! steady state allocates nothing per event: queues, heaps and the arena keep their capacity.
//!
//! **Ordering contract.** Events at the same instant run in the order they were scheduled.
//! Moves that take no time (routing, forking, joining, exiting) happen inside the event that
//! caused them, in program order: a fork sends its tasks to its branches in the order listed.
//!
//! **Run length.** A run counts *observations*: each end-to-end response of an open job (when it
//! exits) and each cycle of a closed job (when it reaches its class's reference station). The
//! first `warmup` observations are discarded (all statistics restart at that instant), then the
//! run measures `length` more and stops at the event that completes the last one.
//!
//! **A run never hangs and never ends short in silence.** [`Simulation::run`] stops with a
//! [`RunFault`] when the clock reaches the end of its range, when nothing is left to happen
//! before the run's length is reached, when [`STALL_EVENTS_PER_OBSERVATION`] times the expected
//! number of events pass without an observation (jobs circulating without ever completing),
//! when more than [`MAX_JOBS`] jobs are in the network at once, or when a histogram overflows.
//! The checks cost one comparison per event and a few per [`CHECK_EVERY`] events; times
//! saturate at the end of the clock, so a run that passes it is stopped at the next check,
//! before anything it measured past the end is reported.

mod blocking;
pub(crate) mod event;
mod featured;
mod head_of_line;
pub mod jobs;
mod recorder;

use std::cmp::Reverse;
use std::collections::VecDeque;

use priority_queue::PriorityQueue;
use rand::RngExt;

pub use event::Event;
pub use recorder::{ClassRecord, Recorder, StationClassRecord, StationRecord};

use super::calendar::Calendar;
use super::ps::PsQueue;
use crate::dist::Dist;
use crate::network::replay::{ReplayPlan, ReplaySite};
use crate::network::{
    ClassId, ClassKind, Discipline, Network, PickGuide, Rule, StationId, StationKind, Target,
};
use crate::rng::{StreamRng, stream};
use crate::stats::Mser;
use crate::time::{Clock, SimTime};
use blocking::{Blocking, Stop};
use jobs::{Job, Jobs, NO_PARENT};

/// Events between the checks for stalls and runaway job counts.
pub const CHECK_EVERY: u64 = 4096;

/// A run stalls when this many times its expected events per observation (and at least
/// [`MIN_STALL_EVENTS`]) pass without an observation.
pub const STALL_EVENTS_PER_OBSERVATION: u64 = 10_000;

/// The fewest events without an observation that count as a stall.
pub const MIN_STALL_EVENTS: u64 = 10_000_000;

/// Most jobs (and fork tasks) in the network at once: about 1 GiB of job records.
pub const MAX_JOBS: usize = 1 << 25;

/// Why a run stopped before making its observations. Every variant is fatal for the run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunFault {
    /// The clock reached the end of its range (see [`crate::time`]): the run lasted longer than
    /// 2^63 ticks. Shorten the run, or bring the scenario's time scales closer together.
    #[error(
        "the run reached the end of the clock's range ({horizon:.4e} time units, 2^63 ticks of {tick:.3e}) after {observed} observations; shorten the run or bring the scenario's time scales closer together"
    )]
    Horizon {
        /// The clock's range in time units.
        horizon: f64,
        /// One tick in time units.
        tick: f64,
        /// Observations made before.
        observed: u64,
    },
    /// Nothing was left to happen (no pending event) before the run's length was reached: every
    /// job left the network and no source remains.
    #[error(
        "the run ran dry after {observed} of {wanted} observations: no event was left to happen (every job left the network and nothing arrives)"
    )]
    Dry {
        /// Observations made.
        observed: u64,
        /// Observations wanted (warm-up plus length).
        wanted: u64,
    },
    /// Events went on without observations: jobs circulate but none completes.
    #[error(
        "no observation in the last {events} events (about {expected:.0} events per observation expected) after {observed} observations: jobs circulate without completing; {diagnosis}"
    )]
    Stalled {
        /// Events since the last observation.
        events: u64,
        /// Events per observation the routing implies.
        expected: f64,
        /// Observations made before.
        observed: u64,
        /// Where the jobs are.
        diagnosis: String,
    },
    /// Stations that block when full hold each other's jobs in a cycle: none can ever move.
    #[error(
        "the run deadlocked after {observed} observations: stations {} block each other (each is full, and each of its servers holds a job waiting for room at another of them); lower the population or raise a capacity",
        stations.join(", ")
    )]
    Deadlock {
        /// The stations, by name (quoted).
        stations: Vec<String>,
        /// Observations made before.
        observed: u64,
    },
    /// Too many jobs in the network at once.
    #[error(
        "more than {limit} jobs are in the network at once after {observed} observations: jobs pile up without leaving; {diagnosis}"
    )]
    Overgrown {
        /// The limit ([`MAX_JOBS`]).
        limit: usize,
        /// Observations made before.
        observed: u64,
        /// Where the jobs are.
        diagnosis: String,
    },
}

/// How long one run lasts, in observations (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLength {
    /// Observations discarded at the start.
    pub warmup: u64,
    /// Observations measured after the warm-up.
    pub length: u64,
}

/// What a finished run reports besides its [`Recorder`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSummary {
    /// Simulated time at the end of the warm-up.
    pub warmup_end: SimTime,
    /// Simulated time at the end of the run.
    pub end: SimTime,
    /// Observations measured after the warm-up.
    pub observed: u64,
    /// Events processed: arrivals plus service completions (stale PS events not counted).
    pub events: u64,
}

/// The run-time state of one station.
#[derive(Debug)]
enum StationState {
    Delay,
    Fcfs {
        servers: u32,
        busy: u32,
        queue: VecDeque<u32>,
    },
    Ps {
        queue: PsQueue,
        /// The most jobs present (`u32::MAX`: no capacity).
        capacity: u32,
    },
    /// A delay station with a capacity.
    LimitedDelay {
        capacity: u32,
    },
    /// An FCFS station whose only feature is head-of-line priority.
    HeadOfLine(head_of_line::HeadOfLine),
    /// An FCFS station with other features (preemptive priority, a capacity, impatience,
    /// load-dependent speed).
    Featured(Box<featured::FeaturedFcfs>),
    Fork,
    Join,
    Source,
    Sink,
}

/// A state-dependent routing group's run-time state.
#[derive(Debug)]
struct Group {
    members: Box<[u32]>,
    /// Round robin: the member chosen next.
    next: usize,
    /// Join the shortest queue: member position by (fewest jobs, lowest position).
    shortest: PriorityQueue<u32, Reverse<(u32, u32)>>,
}

/// One replication of a network, from an empty (open) or initial (closed) state.
#[derive(Debug)]
pub struct Simulation<'n> {
    net: &'n Network,
    now: SimTime,
    /// The network's clock resolution (copied: read on every event).
    clock: Clock,
    calendar: Calendar<Event>,
    jobs: Jobs,
    /// Per station: its state and its stream of service draws, side by side so that one
    /// bounds check serves both.
    stations: Vec<StationRun>,
    /// Service distributions at `station * classes + class` (owned: trace replay advances a
    /// cursor).
    service: Vec<Option<Dist>>,
    /// For each station, its arrival process if it is a source.
    sources: Vec<Option<Source>>,
    /// Where each (class, station) pair routes, at `class * stations + station`.
    hops: Vec<Hop>,
    /// The guide of each random rule of many targets, at `class * stations + station`; empty
    /// when the network has none.
    guides: Vec<Option<PickGuide>>,
    /// Number of classes.
    classes: usize,
    route_rng: Vec<StreamRng>,
    groups: Vec<Group>,
    /// For each station, the groups it belongs to (position in `groups`, member position): a
    /// station may be in several (a round-robin group and a JSQ group, or two JSQ groups), and
    /// each must see its count; empty when the network has no groups.
    jsq_member: Vec<Vec<(u32, u32)>>,
    /// Whether [`Simulation::count`] has more to do than the station's total: true with several
    /// classes or with JSQ groups (one test in the common case instead of two).
    count_more: bool,
    /// For each class, its reference station (`u32::MAX` for an open class).
    reference: Vec<u32>,
    recorder: Recorder,
    /// The blocking state, when some station blocks when full.
    blocking: Option<Box<Blocking>>,
    series: Option<Mser>,
    observed: u64,
    events: u64,
    /// Observations discarded at the start of the current run.
    warmup: u64,
    /// Events per observation the routing implies (for stall detection).
    events_per_observation: f64,
    /// From this many observations on, [`Simulation::observe`] also feeds the series or ends
    /// the warm-up: 0 while recording a series, the warm-up length before it ends, never
    /// (`u64::MAX`) otherwise. One test per observation instead of two.
    check_from: u64,
}

impl<'n> Simulation<'n> {
    /// Starts every replayed trace at replication `replication`'s stretch of `plan` (see
    /// [`crate::network::replay`]); without it, every trace starts at its first sample.
    pub fn replay_stretches(&mut self, plan: &ReplayPlan, replication: u64) {
        for stretch in &plan.stretches {
            let offset = ReplayPlan::offset(stretch, replication);
            let law = match stretch.site {
                ReplaySite::Source(s) => self.sources[s].as_mut().map(|src| &mut src.interarrival),
                ReplaySite::Service { station, class } => {
                    self.service[station * self.classes + class].as_mut()
                }
                ReplaySite::Patience(s) => match &mut self.stations[s].state {
                    StationState::Featured(f) => f.patience_mut(),
                    _ => None,
                },
            };
            if let Some(law) = law {
                law.replay_from(offset);
            }
        }
    }

    /// Sets up replication `replication` of `net` under master seed `seed`: closed jobs placed at
    /// their reference stations, the first arrival of every source scheduled.
    pub fn new(net: &'n Network, seed: u64, replication: u64) -> Simulation<'n> {
        let ns = net.stations.len();
        let id = |s: usize, k: u64| 3 * s as u64 + k;
        let mut sim = Simulation {
            net,
            now: SimTime::ZERO,
            clock: net.clock,
            calendar: Calendar::new(),
            jobs: Jobs::default(),
            stations: net
                .stations
                .iter()
                .enumerate()
                .map(|(s, st)| StationRun {
                    state: initial_state(st, &net.classes),
                    rng: stream(seed, replication, id(s, 0)),
                })
                .collect(),
            service: net
                .stations
                .iter()
                .flat_map(|s| match s.kind.service() {
                    Some(table) => table.clone(),
                    None => vec![None; net.classes.len()],
                })
                .collect(),
            sources: net
                .stations
                .iter()
                .enumerate()
                .map(|(s, st)| match &st.kind {
                    StationKind::Source {
                        interarrival,
                        class,
                    } => Some(Source {
                        interarrival: interarrival.clone(),
                        batch: st.features.batch,
                        class: class.0,
                        rng: stream(seed, replication, id(s, 2)),
                    }),
                    _ => None,
                })
                .collect(),
            hops: hops(net),
            guides: guides(net),
            classes: net.classes.len(),
            route_rng: (0..ns)
                .map(|s| stream(seed, replication, id(s, 1)))
                .collect(),
            groups: Vec::new(),
            count_more: net.classes.len() > 1 || !net.groups.is_empty(),
            jsq_member: if net.groups.is_empty() {
                Vec::new()
            } else {
                vec![Vec::new(); ns]
            },
            reference: net
                .classes
                .iter()
                .map(|c| match c.kind {
                    ClassKind::Closed { reference, .. } => reference.0,
                    ClassKind::Open => u32::MAX,
                })
                .collect(),
            recorder: Recorder::new(net),
            blocking: Blocking::new(net),
            series: None,
            observed: 0,
            events: 0,
            warmup: 0,
            events_per_observation: crate::network::estimates::events_per_observation(net),
            check_from: u64::MAX,
        };
        sim.setup_groups();
        for (c, class) in net.classes.iter().enumerate() {
            if let ClassKind::Closed { .. } = class.kind {
                for (station, jobs) in crate::network::initial_places(net, c) {
                    for _ in 0..jobs {
                        let j = Job {
                            class: c as u32,
                            parent: NO_PARENT,
                            pending: 0,
                            station,
                            born: SimTime::ZERO,
                            arrived: SimTime::ZERO,
                        };
                        let job = sim.jobs.alloc(j);
                        sim.enter(job, j, station);
                    }
                }
            }
        }
        for s in 0..ns {
            if sim.sources[s].is_some() {
                sim.schedule_arrival(s as u32);
            }
        }
        sim
    }

    fn setup_groups(&mut self) {
        for (g, members) in self.net.groups.iter().enumerate() {
            let mut shortest = PriorityQueue::new();
            for (pos, s) in members.iter().enumerate() {
                shortest.push(pos as u32, Reverse((0, pos as u32)));
                self.jsq_member[s.index()].push((g as u32, pos as u32));
            }
            self.groups.push(Group {
                members: members.iter().map(|s| s.0).collect(),
                next: 0,
                shortest,
            });
        }
    }

    /// Records the series of observations for the MSER warm-up rule (used on pilot runs).
    pub fn record_series(&mut self) {
        self.series = Some(Mser::new());
        self.check_from = 0;
    }

    /// Runs until `run.warmup + run.length` observations have been made and returns the
    /// summary, or the [`RunFault`] that stopped it (see the module docs).
    pub fn run(&mut self, run: RunLength) -> Result<RunSummary, RunFault> {
        self.warmup = run.warmup;
        self.check_from = if self.series.is_some() {
            0
        } else if run.warmup > self.observed {
            run.warmup
        } else {
            u64::MAX
        };
        let target = run.warmup.saturating_add(run.length);
        let mut watch = Watch {
            next: self.events + CHECK_EVERY,
            observed: self.observed,
            quiet_since: self.events,
            limit: (self.events_per_observation * STALL_EVENTS_PER_OBSERVATION as f64)
                .max(MIN_STALL_EVENTS as f64) as u64,
        };
        while self.observed < target {
            let Some((time, event)) = self.calendar.pop() else {
                return Err(self.ran_dry(target));
            };
            self.now = time;
            self.dispatch(event);
            if self.events >= watch.next {
                self.check(&mut watch)?;
            }
        }
        if self.now.is_past_end() {
            return Err(self.past_end());
        }
        if let Some(fault) = self.deadlock() {
            return Err(fault);
        }
        Ok(RunSummary {
            warmup_end: self.recorder.start,
            end: self.now,
            observed: self.observed.saturating_sub(run.warmup),
            events: self.events,
        })
    }

    /// The fault of a run with nothing left to happen before `target` observations.
    #[cold]
    #[inline(never)]
    fn ran_dry(&self, target: u64) -> RunFault {
        self.deadlock().unwrap_or(RunFault::Dry {
            observed: self.observed,
            wanted: target,
        })
    }

    /// The fault of a run whose blocking stations deadlocked, if they did.
    fn deadlock(&self) -> Option<RunFault> {
        let stations = self.blocking.as_ref()?.deadlock.as_ref()?;
        Some(RunFault::Deadlock {
            stations: stations
                .iter()
                .map(|&s| format!("{:?}", self.net.stations[s as usize].name))
                .collect(),
            observed: self.observed,
        })
    }

    /// The fault of a run that reached the end of the clock.
    #[cold]
    #[inline(never)]
    fn past_end(&self) -> RunFault {
        RunFault::Horizon {
            horizon: self.clock.horizon(),
            tick: self.clock.tick(),
            observed: self.observed,
        }
    }

    /// The periodic check of a run: stalls and runaway job counts (see the module docs).
    #[cold]
    #[inline(never)]
    fn check(&mut self, watch: &mut Watch) -> Result<(), RunFault> {
        watch.next = self.events + CHECK_EVERY;
        if self.now.is_past_end() {
            return Err(self.past_end());
        }
        if let Some(fault) = self.deadlock() {
            return Err(fault);
        }
        if self.observed != watch.observed {
            watch.observed = self.observed;
            watch.quiet_since = self.events;
        } else if self.events - watch.quiet_since > watch.limit {
            return Err(RunFault::Stalled {
                events: self.events - watch.quiet_since,
                expected: self.events_per_observation,
                observed: self.observed,
                diagnosis: self.where_jobs_are(),
            });
        }
        if self.jobs.len() > MAX_JOBS {
            return Err(RunFault::Overgrown {
                limit: MAX_JOBS,
                observed: self.observed,
                diagnosis: self.where_jobs_are(),
            });
        }
        Ok(())
    }

    /// The stations holding the most jobs, and the classes that completed nothing: the
    /// diagnosis of a stalled or overgrown run.
    fn where_jobs_are(&self) -> String {
        let mut held: Vec<(u32, &str)> = self
            .recorder
            .stations
            .iter()
            .zip(&self.net.stations)
            .map(|(r, s)| (r.present.count(), s.name.as_str()))
            .filter(|(n, _)| *n > 0)
            .collect();
        held.sort_by_key(|h| std::cmp::Reverse(h.0));
        let mut out = if held.is_empty() {
            "no station holds a job".to_owned()
        } else {
            let top: Vec<String> = held
                .iter()
                .take(5)
                .map(|(n, s)| format!("{n} at {s:?}"))
                .collect();
            format!("jobs present: {}", top.join(", "))
        };
        let idle: Vec<&str> = self
            .net
            .classes
            .iter()
            .zip(&self.recorder.classes)
            .filter(|(_, r)| r.response.count() == 0)
            .map(|(c, _)| c.name.as_str())
            .collect();
        if !idle.is_empty() {
            out.push_str(&format!(
                "; no observation since the last restart of class {}",
                idle.join(", ")
            ));
        }
        out
    }

    /// The measurements so far.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The observation series, if [`Simulation::record_series`] was called.
    pub fn series(&self) -> Option<&Mser> {
        self.series.as_ref()
    }

    #[inline(always)]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Arrival { source } => {
                self.events += 1;
                let class = self.schedule_arrival(source);
                let size = self.batch_size(source);
                let now = self.now;
                let j = Job {
                    class,
                    parent: NO_PARENT,
                    pending: 0,
                    station: source,
                    born: now,
                    arrived: now,
                };
                self.recorder.classes[class as usize].arrived += u64::from(size);
                for _ in 0..size {
                    let job = self.jobs.alloc(j);
                    self.route(job, j, source);
                }
            }
            Event::Departure { job, record } => {
                self.events += 1;
                let station = record.station;
                if self.blocking.is_some() {
                    return self.finish_blocking(job, record, station, 0);
                }
                self.next_service(station);
                self.leave(job, record, station);
            }
            Event::PsDeparture {
                station,
                generation,
            } => {
                let StationState::Ps { queue: ps, .. } = &mut self.stations[station as usize].state
                else {
                    unreachable!()
                };
                if !ps.is_current(generation) {
                    return;
                }
                self.events += 1;
                let now = self.now;
                let (job, next) = ps.depart(u128::from(now.ticks()));
                match next {
                    Some((generation, due)) => self.schedule_ps(station, generation, narrow(due)),
                    None => self.recorder.stations[station as usize]
                        .busy
                        .change(now, -1),
                }
                if self.blocking.is_some() {
                    return self.finish_blocking(job, self.jobs[job], station, 0);
                }
                self.leave(job, self.jobs[job], station);
            }
            Event::Wake {
                station,
                key,
                generation,
                abandon,
            } => self.featured_wake(station, key, generation, abandon),
        }
    }

    /// A server of `station` finished (or let go of) a job: at an FCFS station it takes the
    /// next job in the queue, or goes idle; other stations have nothing to do.
    #[inline(always)]
    fn next_service(&mut self, station: u32) {
        let st = &mut self.stations[station as usize];
        if let StationState::Fcfs { busy, queue, .. } = &mut st.state {
            let next = queue.pop_front();
            if next.is_none() {
                *busy -= 1;
            }
            self.serve_next(station, next);
        } else if let StationState::HeadOfLine(_) = st.state {
            self.next_head_of_line(station);
        }
    }

    /// [`Simulation::next_service`] at a head-of-line priority station. Out of line: a call
    /// here costs the plain stations' path less than the code would inline.
    #[inline(never)]
    fn next_head_of_line(&mut self, station: u32) {
        let StationState::HeadOfLine(h) = &mut self.stations[station as usize].state else {
            unreachable!("called for head-of-line stations")
        };
        let next = h.pop();
        if next.is_none() {
            h.busy -= 1;
        }
        self.serve_next(station, next);
    }

    /// A server of the FCFS `station` takes the queued job `next`, or goes idle without one.
    #[inline(always)]
    fn serve_next(&mut self, station: u32, next: Option<u32>) {
        match next {
            Some(next) => {
                let queued = self.jobs[next];
                let Job { class, arrived, .. } = queued;
                let waited = self.now.since(arrived);
                self.recorder.add_wait(self.classes, station, class, waited);
                let rng = &mut self.stations[station as usize].rng;
                let work = draw(&mut self.service, self.classes, station, class, rng);
                self.schedule_departure(next, queued, work);
            }
            None => {
                let now = self.now;
                self.recorder.stations[station as usize]
                    .busy
                    .change(now, -1);
            }
        }
    }

    /// Schedules the next arrival of `source`; returns the class of its jobs.
    #[inline(always)]
    fn schedule_arrival(&mut self, source: u32) -> u32 {
        let s = source as usize;
        let Some(src) = &mut self.sources[s] else {
            unreachable!("arrival events come from sources")
        };
        let gap = self.clock.ticks(src.interarrival.sample(&mut src.rng));
        let class = src.class;
        self.calendar
            .schedule(self.now.after(gap), Event::Arrival { source });
        class
    }

    /// How many jobs arrive now from `source`: 1, or its batch's size drawn from its stream
    /// (after the gap to its next arrival).
    #[inline(always)]
    fn batch_size(&mut self, source: u32) -> u32 {
        match &mut self.sources[source as usize] {
            Some(Source {
                batch: Some(b),
                rng,
                interarrival,
                ..
            }) => b.sample(rng, interarrival),
            _ => 1,
        }
    }

    fn schedule_ps(&mut self, station: u32, generation: u32, due: SimTime) {
        self.calendar.schedule(
            due,
            Event::PsDeparture {
                station,
                generation,
            },
        );
    }

    /// Schedules the end of the service of length `work` of `job`, whose record is `record`, at
    /// the station of its record (the event carries the record).
    #[inline(always)]
    fn schedule_departure(&mut self, job: u32, record: Job, work: f64) {
        let work = self.clock.ticks(work);
        self.calendar
            .schedule(self.now.after(work), Event::Departure { job, record });
    }

    /// Counts a job in or out of a station's population.
    #[inline(always)]
    fn count(&mut self, station: u32, class: u32, delta: i32) {
        let now = self.now;
        let ns = self.stations.len();
        let rec = &mut self.recorder;
        rec.stations[station as usize].present.change(now, delta);
        if !self.count_more {
            return;
        }
        if self.classes > 1 {
            rec.station_classes[class as usize * ns + station as usize]
                .present
                .change(now, delta);
        }
        if let Some(memberships) = self.jsq_member.get(station as usize) {
            let n = rec.stations[station as usize].present.count();
            for &(g, pos) in memberships {
                self.groups[g as usize]
                    .shortest
                    .change_priority(&pos, Reverse((n, pos)));
            }
        }
    }

    /// Job `job`, whose up-to-date record is `j`, arrives at `station` now.
    #[inline(always)]
    fn arrive(&mut self, job: u32, mut j: Job, station: u32) {
        j.arrived = self.now;
        j.station = station;
        self.enter(job, j, station);
    }

    /// Job `job`, whose up-to-date record `j` holds its arrival now at `station`, enters that
    /// station. The record goes with the job: into its departure event when its service starts
    /// now, into the arena when it waits (an FCFS queue, a processor-sharing station, a fork).
    /// Delay, FCFS and join stations, the ones most events reach, are handled inline; the others
    /// in [`Simulation::arrive_other`].
    #[inline(always)]
    fn enter(&mut self, job: u32, j: Job, station: u32) {
        let Job { class, parent, .. } = j;
        let st = &mut self.stations[station as usize];
        match &mut st.state {
            StationState::Delay => {
                let work = draw(&mut self.service, self.classes, station, class, &mut st.rng);
                self.count(station, class, 1);
                self.schedule_departure(job, j, work);
            }
            StationState::Fcfs {
                servers,
                busy,
                queue,
            } => {
                if *busy < *servers {
                    *busy += 1;
                    let work = draw(&mut self.service, self.classes, station, class, &mut st.rng);
                    self.serve_arrival(job, j, station, work);
                } else {
                    queue.push_back(job);
                    self.jobs.set(job, j);
                    self.count(station, class, 1);
                }
            }
            StationState::Join => {
                self.jobs.release(job);
                let p = &mut self.jobs[parent];
                p.pending -= 1;
                if p.pending == 0 {
                    self.release_parent(parent, station);
                }
            }
            _ => self.arrive_other(job, j, station),
        }
    }

    /// Job `job` (record `j`), arriving now at an FCFS station with a server free, starts its
    /// service of length `work` at once.
    #[inline(always)]
    fn serve_arrival(&mut self, job: u32, j: Job, station: u32, work: f64) {
        let now = self.now;
        let class = j.class;
        self.recorder.stations[station as usize].busy.change(now, 1);
        self.recorder.add_wait(self.classes, station, class, 0);
        self.count(station, class, 1);
        self.schedule_departure(job, j, work);
    }

    /// The last task of `parent` reached `join`: the parent leaves its fork and moves on.
    #[inline(never)]
    fn release_parent(&mut self, parent: u32, join: u32) {
        let p = self.jobs[parent];
        self.leave_station(p, p.station);
        self.route(parent, p, join);
    }

    /// [`Simulation::arrive`] at a processor-sharing station, a fork or a sink.
    #[inline(never)]
    fn arrive_other(&mut self, job: u32, j: Job, station: u32) {
        let now = self.now;
        let class = j.class;
        let st = &mut self.stations[station as usize];
        match &mut st.state {
            StationState::Ps {
                queue: ps,
                capacity,
            } => {
                if *capacity != u32::MAX {
                    self.recorder.stations[station as usize].arrived += 1;
                    if self.recorder.stations[station as usize].present.count() >= *capacity {
                        return self.lose(job, j, station);
                    }
                }
                let work = self.clock.ticks(draw(
                    &mut self.service,
                    self.classes,
                    station,
                    class,
                    &mut st.rng,
                ));
                let (generation, due) = ps.arrive(u128::from(now.ticks()), job, u128::from(work));
                let due = narrow(due);
                self.jobs.set(job, j);
                self.count(station, class, 1);
                if self.recorder.stations[station as usize].present.count() == 1 {
                    self.recorder.stations[station as usize].busy.change(now, 1);
                }
                self.schedule_ps(station, generation, due);
            }
            StationState::Fork => {
                self.count(station, class, 1);
                let StationKind::Fork { branches } = &self.net.stations[station as usize].kind
                else {
                    unreachable!()
                };
                self.jobs.set(
                    job,
                    Job {
                        pending: branches.len() as u32,
                        ..j
                    },
                );
                for b in branches {
                    let t = Job {
                        class,
                        parent: job,
                        pending: 0,
                        station: b.0,
                        born: j.born,
                        arrived: now,
                    };
                    let task = self.jobs.alloc(t);
                    self.enter(task, t, b.0);
                }
            }
            StationState::LimitedDelay { capacity } => {
                let capacity = *capacity;
                let rec = &mut self.recorder.stations[station as usize];
                rec.arrived += 1;
                if rec.present.count() >= capacity {
                    return self.lose(job, j, station);
                }
                let work = draw(&mut self.service, self.classes, station, class, &mut st.rng);
                self.count(station, class, 1);
                self.schedule_departure(job, j, work);
            }
            StationState::HeadOfLine(h) => {
                if h.busy < h.servers {
                    h.busy += 1;
                    let work = draw(&mut self.service, self.classes, station, class, &mut st.rng);
                    self.serve_arrival(job, j, station, work);
                } else {
                    h.push(job, class);
                    self.jobs.set(job, j);
                    self.count(station, class, 1);
                }
            }
            StationState::Featured(_) => self.featured_enter(job, j, station),
            StationState::Sink => self.exit(job, j),
            StationState::Delay | StationState::Fcfs { .. } | StationState::Join => {
                unreachable!("handled in arrive")
            }
            StationState::Source => {
                unreachable!("the scenario check forbids routing into a source")
            }
        }
    }

    /// Job `job`, whose record is `j`, finishes at `station`: its visit is recorded and it is
    /// routed on.
    #[inline(always)]
    fn leave(&mut self, job: u32, j: Job, station: u32) {
        self.leave_station(j, station);
        self.route(job, j, station);
    }

    /// Records the visit of the job `j` to `station`, which it leaves now.
    #[inline(always)]
    fn leave_station(&mut self, j: Job, station: u32) {
        let now = self.now;
        let Job { class, arrived, .. } = j;
        let ticks = now.since(arrived);
        let visit = self.clock.span(ticks);
        self.count(station, class, -1);
        let ns = self.stations.len();
        let rec = &mut self.recorder;
        let st = &mut rec.stations[station as usize];
        st.response.add(visit);
        st.percentiles.record(ticks);
        if self.classes > 1 {
            rec.station_classes[class as usize * ns + station as usize]
                .response
                .add(visit);
        }
    }

    /// Sends `job`, whose up-to-date record is `j`, on from `station` by the routing rule of
    /// its class there.
    #[inline(always)]
    fn route(&mut self, job: u32, j: Job, station: u32) {
        match self.next_stop(j.class, station) {
            Some(stop) => self.move_to(job, j, station, stop),
            None => self.exit(job, j),
        }
    }

    /// Where a job of `class` that finishes at `station` goes: a station, or out of the network
    /// (nothing).
    #[inline(always)]
    fn next_stop(&mut self, class: u32, station: u32) -> Option<Stop> {
        let ns = self.stations.len();
        match self.hops[class as usize * ns + station as usize] {
            Hop::Exit => None,
            Hop::To {
                station,
                class,
                cycle,
            } => Some(Stop {
                station,
                class,
                cycle,
            }),
            Hop::Rule => match self.choose(ClassId(class), station) {
                Target::Exit => None,
                Target::Station(to, to_class) => Some(Stop {
                    station: to.0,
                    class: to_class.0,
                    cycle: self.reference[to_class.index()] == to.0,
                }),
            },
        }
    }

    /// Moves `job`, whose up-to-date record is `j`, from `station` to `stop`, closing its
    /// class's cycle there if the stop is its reference station.
    #[inline(always)]
    fn move_to(&mut self, job: u32, mut j: Job, station: u32, stop: Stop) {
        let class = j.class;
        let Stop {
            station: to,
            class: to_class,
            cycle,
        } = stop;
        let now = self.now;
        if j.parent == NO_PARENT && self.reference[class as usize] == station {
            self.jobs.leave_reference(job, now);
        }
        j.class = to_class;
        if cycle && j.parent == NO_PARENT {
            let cycle_ticks = now.since(j.born);
            j.born = now;
            self.observe(to_class, cycle_ticks);
            let response = self.clock.span(now.since(self.jobs.left_reference(job)));
            self.recorder.classes[to_class as usize]
                .outside
                .add(response);
        }
        self.arrive(job, j, to);
    }

    /// The target of a random or state-dependent rule of `class` at `station`.
    fn choose(&mut self, class: ClassId, station: u32) -> Target {
        match self.net.routing.rule(class, StationId(station)) {
            Rule::Fixed(t) => *t,
            Rule::Random {
                cumulative,
                targets,
            } => {
                let u: f64 = self.route_rng[station as usize].random();
                let at = class.index() * self.stations.len() + station as usize;
                match self.guides.get(at) {
                    Some(Some(guide)) => guide.pick(cumulative, targets, u),
                    _ => crate::network::pick(cumulative, targets, u),
                }
            }
            Rule::RoundRobin { group, class } => {
                let g = &mut self.groups[*group as usize];
                let s = g.members[g.next];
                g.next = (g.next + 1) % g.members.len();
                Target::Station(StationId(s), *class)
            }
            Rule::ShortestQueue { group, class } => {
                let g = &self.groups[*group as usize];
                let (&pos, _) = g.shortest.peek().expect("groups are not empty");
                Target::Station(StationId(g.members[pos as usize]), *class)
            }
            Rule::Unset => unreachable!("the scenario check gives every visited station a rule"),
        }
    }

    /// Job `job`, whose record is `j`, leaves the network.
    #[inline(always)]
    fn exit(&mut self, job: u32, j: Job) {
        let Job {
            class,
            born,
            parent,
            ..
        } = j;
        self.jobs.release(job);
        if parent == NO_PARENT {
            self.observe(class, self.now.since(born));
        }
    }

    /// One end-to-end observation of `class`.
    #[inline(always)]
    fn observe(&mut self, class: u32, ticks: u64) {
        self.observed += 1;
        let value = self.clock.span(ticks);
        let rec = &mut self.recorder.classes[class as usize];
        rec.response.add(value);
        rec.percentiles.record(ticks);
        if self.observed >= self.check_from {
            self.observe_more(value);
        }
    }

    /// The rare part of [`Simulation::observe`]: the series, and the end of the warm-up.
    #[inline(never)]
    fn observe_more(&mut self, value: f64) {
        if let Some(series) = &mut self.series {
            series.add(value);
        }
        if self.observed == self.warmup {
            self.recorder.restart(self.now);
        }
        if self.series.is_none() {
            // reached only at the end of the warm-up
            self.check_from = u64::MAX;
        }
    }
}

/// A 128-bit instant back to 64-bit ticks, saturating (the check then reports the end of the
/// clock).
fn narrow(t: u128) -> SimTime {
    SimTime::from_ticks(u64::try_from(t).unwrap_or(u64::MAX))
}

/// What the periodic check of a run remembers.
#[derive(Debug)]
struct Watch {
    /// The event count at which to check next.
    next: u64,
    /// Observations at the last check.
    observed: u64,
    /// The event count when observations last moved.
    quiet_since: u64,
    /// Events without an observation that make a stall.
    limit: u64,
}

/// A station's run-time data used on every visit.
#[derive(Debug)]
struct StationRun {
    state: StationState,
    /// The station's stream of service draws.
    rng: StreamRng,
}

/// Draws the service time of `class` at `station` from `rng`, the station's stream; `service`
/// is the flat table at `station * classes + class`.
#[inline(always)]
fn draw(
    service: &mut [Option<Dist>],
    classes: usize,
    station: u32,
    class: u32,
    rng: &mut StreamRng,
) -> f64 {
    match &mut service[station as usize * classes + class as usize] {
        Some(d) => d.sample(rng),
        None => {
            unreachable!("the scenario check guarantees a service time for every visiting class")
        }
    }
}

/// An open source's arrival process.
#[derive(Debug)]
struct Source {
    interarrival: Dist,
    /// The jobs of one arrival (one without a batch).
    batch: Option<crate::network::Batch>,
    /// The class of the jobs it emits.
    class: u32,
    /// Its stream of inter-arrival draws.
    rng: StreamRng,
}

/// A routing rule resolved for the event loop: fixed routes need no look-up in the network.
#[derive(Clone, Copy, Debug)]
enum Hop {
    /// Out of the network.
    Exit,
    /// Always to `station` as `class`; `cycle` when that is the class's reference station.
    To {
        station: u32,
        class: u32,
        cycle: bool,
    },
    /// Decided per job by the network's rule (random or state-dependent).
    Rule,
}

/// The [`Hop`] of every (class, station) pair, at `class * stations + station`.
fn hops(net: &Network) -> Vec<Hop> {
    net.classes
        .iter()
        .enumerate()
        .flat_map(|(c, _)| {
            (0..net.stations.len()).map(move |s| {
                match net.routing.rule(ClassId(c as u32), StationId(s as u32)) {
                    Rule::Fixed(Target::Exit) => Hop::Exit,
                    Rule::Fixed(Target::Station(to, class)) => Hop::To {
                        station: to.0,
                        class: class.0,
                        cycle: matches!(
                            net.classes[class.index()].kind,
                            ClassKind::Closed { reference, .. } if reference == *to
                        ),
                    },
                    _ => Hop::Rule,
                }
            })
        })
        .collect()
}

/// The [`PickGuide`] of every random rule that has one, at `class * stations + station`, or
/// nothing when no rule has one.
fn guides(net: &Network) -> Vec<Option<PickGuide>> {
    let ns = net.stations.len();
    let guides: Vec<Option<PickGuide>> = (0..net.classes.len() * ns)
        .map(|at| {
            match net
                .routing
                .rule(ClassId((at / ns) as u32), StationId((at % ns) as u32))
            {
                Rule::Random { cumulative, .. } => PickGuide::new(cumulative),
                _ => None,
            }
        })
        .collect();
    if guides.iter().all(Option::is_none) {
        Vec::new()
    } else {
        guides
    }
}

/// The empty run-time state of `station` (its features set the levels of `classes`).
fn initial_state(
    station: &crate::network::Station,
    classes: &[crate::network::Class],
) -> StationState {
    let features = &station.features;
    let capacity = features.capacity.map_or(u32::MAX, |c| c.jobs);
    match &station.kind {
        StationKind::Delay { .. } if features.capacity.is_some() => {
            StationState::LimitedDelay { capacity }
        }
        StationKind::Delay { .. } => StationState::Delay,
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            servers,
            ..
        } if features.is_head_of_line_only() => {
            StationState::HeadOfLine(head_of_line::HeadOfLine::new(*servers, classes))
        }
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            servers,
            ..
        } if !features.is_plain() => StationState::Featured(Box::new(featured::FeaturedFcfs::new(
            *servers, features, classes,
        ))),
        StationKind::Queue {
            discipline: Discipline::Fcfs,
            servers,
            ..
        } => StationState::Fcfs {
            servers: *servers,
            busy: 0,
            queue: VecDeque::new(),
        },
        StationKind::Queue {
            discipline: Discipline::Ps,
            ..
        } => StationState::Ps {
            queue: PsQueue::with_speeds(features.rate_by_jobs.as_deref()),
            capacity,
        },
        StationKind::Fork { .. } => StationState::Fork,
        StationKind::Join { .. } => StationState::Join,
        StationKind::Source { .. } => StationState::Source,
        StationKind::Sink => StationState::Sink,
    }
}
