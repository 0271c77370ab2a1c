//! FCFS stations with features: priority levels (head of line or preemptive-resume), a
//! capacity that loses the arrivals finding it full, impatience, and a speed that depends on
//! the number of jobs present. Plain FCFS stations never come here: they keep the engine's
//! fast path, and so do stations whose only feature is head-of-line priority
//! ([`super::head_of_line`]).
//!
//! Services and patiences end by [`Event::Wake`] timers that carry a generation: a preempted
//! service, a service whose speed changed, or a patience that ended with the start of service
//! leaves a stale timer in the calendar, recognised and ignored when it comes up. A job at such
//! a station keeps its record in the job arena.
//!
//! **Order.** Within a priority level jobs are served in order of arrival; a preempted job goes
//! back to the head of its level (before every later arrival of its level) and resumes with the
//! work it had left. A preempting job takes the server of the least urgent job in service, the
//! one that (re)started last among several. Work is measured in ticks at speed 1; with
//! `rate_by_jobs` a service advances at the multiple for the jobs present, changed at every
//! arrival and departure.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::head_of_line::priority_levels;
use super::{Event, Simulation, StationState, draw};
use crate::dist::Dist;
use crate::network::{Class, Features, Preemption, rate_multiple};
use crate::time::SimTime;

/// The run-time state of an FCFS station with features.
#[derive(Debug)]
pub(super) struct FeaturedFcfs {
    /// One slot per server.
    servers: Vec<Server>,
    /// The slots of the idle servers.
    idle: Vec<u32>,
    /// The waiting jobs of each level, most urgent level first, each in order of arrival.
    levels: Vec<VecDeque<Waiting>>,
    /// The level (position in `levels`) of each class.
    level_of: Box<[u32]>,
    /// Whether an urgent arrival takes a server from a less urgent job.
    preemptive: bool,
    /// The most jobs present (`u32::MAX`: no capacity).
    capacity: u32,
    /// Jobs present, queue and service together.
    present: u32,
    /// How long a job waits before it leaves.
    patience: Option<Dist>,
    /// The generation of each job still waiting with a patience running; a queue entry whose
    /// job is not here (it abandoned) is skipped.
    patient: FxHashMap<u32, u32>,
    /// The next generation of a waiting job.
    next_generation: u32,
    /// The speed's multiple with 1, 2, ... jobs present.
    rate_by_jobs: Option<Box<[f64]>>,
}

/// One server of a [`FeaturedFcfs`].
#[derive(Clone, Copy, Debug)]
struct Server {
    /// The job in service (or blocked after it), if any.
    job: Option<u32>,
    /// True when that job finished and is blocked, waiting for room at its next station.
    blocked: bool,
    /// Its current timer's generation.
    generation: u32,
    /// The job's level.
    level: u32,
    /// When its work was last brought up to date.
    since: SimTime,
    /// Work left at `since`, in ticks at speed 1.
    work: f64,
    /// Ticks of work done per tick of time.
    speed: f64,
}

/// A job in the queue of a [`FeaturedFcfs`].
#[derive(Clone, Copy, Debug)]
struct Waiting {
    job: u32,
    /// Its generation (for a patient job: the key of its entry in `patient`).
    generation: u32,
    arrived: SimTime,
    /// Work left, for a job preempted during its service.
    resume: Option<f64>,
}

impl FeaturedFcfs {
    /// The empty state of an FCFS station of `servers` servers with `features`, serving
    /// `classes` (whose priorities set the levels).
    pub(super) fn new(servers: u32, features: &Features, classes: &[Class]) -> FeaturedFcfs {
        let (levels, level_of) = if features.priority.is_some() {
            priority_levels(classes)
        } else {
            (1, vec![0; classes.len()].into_boxed_slice())
        };
        FeaturedFcfs {
            servers: vec![
                Server {
                    job: None,
                    blocked: false,
                    generation: 0,
                    level: 0,
                    since: SimTime::ZERO,
                    work: 0.0,
                    speed: 1.0,
                };
                servers as usize
            ],
            idle: (0..servers).rev().collect(),
            levels: vec![VecDeque::new(); levels],
            level_of,
            preemptive: features.priority == Some(Preemption::PreemptiveResume),
            capacity: features.capacity.map_or(u32::MAX, |c| c.jobs),
            present: 0,
            patience: features.patience.clone(),
            patient: FxHashMap::default(),
            next_generation: 0,
            rate_by_jobs: features.rate_by_jobs.as_deref().map(Box::from),
        }
    }

    /// The patience law, to move a replayed trace's cursor.
    pub(super) fn patience_mut(&mut self) -> Option<&mut Dist> {
        self.patience.as_mut()
    }

    /// The speed with the jobs present now.
    fn speed(&self) -> f64 {
        self.rate_by_jobs
            .as_deref()
            .map_or(1.0, |r| rate_multiple(r, self.present as usize))
    }

    /// The server to preempt for a job of `level`: the least urgent in service below it, the
    /// one that (re)started last among several.
    fn victim(&self, level: u32) -> Option<u32> {
        self.servers
            .iter()
            .enumerate()
            .filter(|(_, s)| s.job.is_some() && !s.blocked && s.level > level)
            .max_by_key(|(_, s)| (s.level, s.since))
            .map(|(k, _)| k as u32)
    }

    /// The number of servers.
    pub(super) fn servers(&self) -> u32 {
        self.servers.len() as u32
    }

    /// The job in server `slot` finished and is blocked: the server holds it without serving.
    pub(super) fn block(&mut self, slot: u32) {
        self.servers[slot as usize].blocked = true;
    }

    /// The next job to serve: the head of the most urgent non-empty level, skipping the
    /// entries of jobs that abandoned.
    fn next_waiting(&mut self) -> Option<Waiting> {
        for level in &mut self.levels {
            while let Some(w) = level.pop_front() {
                if w.resume.is_some() || self.patience.is_none() {
                    return Some(w);
                }
                if self.patient.get(&w.job) == Some(&w.generation) {
                    self.patient.remove(&w.job);
                    return Some(w);
                }
            }
        }
        None
    }
}

impl Simulation<'_> {
    fn featured(&mut self, station: u32) -> &mut FeaturedFcfs {
        match &mut self.stations[station as usize].state {
            StationState::Featured(f) => f,
            _ => unreachable!("a featured event comes from a featured FCFS station"),
        }
    }

    /// Job `job`, whose up-to-date record `j` holds its arrival now, enters the featured FCFS
    /// `station`: it is lost if the station is full, served at once if a server is idle (or
    /// can be taken from a less urgent job), queued otherwise.
    #[inline(never)]
    pub(super) fn featured_enter(&mut self, job: u32, j: super::Job, station: u32) {
        let now = self.now;
        self.recorder.stations[station as usize].arrived += 1;
        let f = self.featured(station);
        if f.present >= f.capacity {
            return self.lose(job, j, station);
        }
        f.present += 1;
        let level = f.level_of[j.class as usize];
        self.jobs.set(job, j);
        self.count(station, j.class, 1);
        let f = self.featured(station);
        if let Some(slot) = f.idle.pop() {
            self.recorder.stations[station as usize].busy.change(now, 1);
            self.recorder.add_wait(self.classes, station, j.class, 0);
            self.start(station, slot, job, level, None);
        } else if let Some(slot) = f.preemptive.then(|| f.victim(level)).flatten() {
            self.preempt(station, slot);
            self.recorder.add_wait(self.classes, station, j.class, 0);
            self.start(station, slot, job, level, None);
        } else {
            let generation = f.next_generation;
            f.next_generation = generation.wrapping_add(1);
            f.levels[level as usize].push_back(Waiting {
                job,
                generation,
                arrived: now,
                resume: None,
            });
            if f.patience.is_some() {
                f.patient.insert(job, generation);
                let st = &mut self.stations[station as usize];
                let StationState::Featured(f) = &mut st.state else {
                    unreachable!()
                };
                let patience = f.patience.as_mut().expect("checked").sample(&mut st.rng);
                let at = now.after(self.clock.ticks(patience));
                self.calendar.schedule(
                    at,
                    Event::Wake {
                        station,
                        key: job,
                        generation,
                        abandon: true,
                    },
                );
            }
        }
        self.respeed(station);
    }

    /// Starts (or resumes, with `resume` work left) the service of `job` in server `slot`.
    fn start(&mut self, station: u32, slot: u32, job: u32, level: u32, resume: Option<f64>) {
        let now = self.now;
        let work = match resume {
            Some(w) => w,
            None => {
                let class = self.jobs[job].class;
                let st = &mut self.stations[station as usize];
                self.clock.ticks(draw(
                    &mut self.service,
                    self.classes,
                    station,
                    class,
                    &mut st.rng,
                )) as f64
            }
        };
        let f = self.featured(station);
        let speed = f.speed();
        let s = &mut f.servers[slot as usize];
        s.job = Some(job);
        s.level = level;
        s.since = now;
        s.work = work;
        s.speed = speed;
        self.schedule_end(station, slot);
    }

    /// Schedules the end of the service in server `slot` under a new generation.
    fn schedule_end(&mut self, station: u32, slot: u32) {
        let now = self.now;
        let s = &mut self.featured(station).servers[slot as usize];
        s.generation = s.generation.wrapping_add(1);
        let generation = s.generation;
        // round up: the service never ends before its work is done
        let ticks = (s.work / s.speed).ceil();
        let due = now.after(if ticks >= u64::MAX as f64 {
            u64::MAX
        } else {
            ticks as u64
        });
        self.calendar.schedule(
            due,
            Event::Wake {
                station,
                key: slot,
                generation,
                abandon: false,
            },
        );
    }

    /// The work of the job in server `slot` brought up to now.
    fn work_left(&mut self, station: u32, slot: u32) -> f64 {
        let now = self.now;
        let s = &mut self.featured(station).servers[slot as usize];
        let done = now.since(s.since) as f64 * s.speed;
        s.work = (s.work - done).max(0.0);
        s.since = now;
        s.work
    }

    /// The job in server `slot` is preempted: back to the head of its level with the work it
    /// has left (its timer goes stale).
    fn preempt(&mut self, station: u32, slot: u32) {
        let work = self.work_left(station, slot);
        let f = self.featured(station);
        let s = &mut f.servers[slot as usize];
        let job = s.job.take().expect("a victim is in service");
        s.generation = s.generation.wrapping_add(1);
        let level = s.level as usize;
        let arrived = self.jobs[job].arrived;
        let f = self.featured(station);
        let queue = &mut f.levels[level];
        let at = queue.partition_point(|w| w.arrived <= arrived);
        queue.insert(
            at,
            Waiting {
                job,
                generation: 0,
                arrived,
                resume: Some(work),
            },
        );
    }

    /// With `rate_by_jobs`, the job in service moves at the speed for the jobs present now.
    fn respeed(&mut self, station: u32) {
        let f = self.featured(station);
        if f.rate_by_jobs.is_none() || f.servers[0].job.is_none() || f.servers[0].blocked {
            return;
        }
        let speed = f.speed();
        if speed == f.servers[0].speed {
            return;
        }
        self.work_left(station, 0);
        self.featured(station).servers[0].speed = speed;
        self.schedule_end(station, 0);
    }

    /// A timer of a featured FCFS station came up: a service ends, or a patience does.
    #[inline(never)]
    pub(super) fn featured_wake(&mut self, station: u32, key: u32, generation: u32, abandon: bool) {
        if abandon {
            return self.abandon(station, key, generation);
        }
        let f = self.featured(station);
        let s = f.servers[key as usize];
        let Some(job) = s.job.filter(|_| s.generation == generation) else {
            return;
        };
        self.events += 1;
        let record = self.jobs[job];
        if self.blocking.is_some() {
            return self.finish_blocking(job, record, station, key);
        }
        self.free_slot(station, key);
        self.leave(job, record, station);
    }

    /// Server `slot` of `station` lets go of its job (served, or blocked and now let through):
    /// it takes the next waiting job, or goes idle.
    pub(super) fn free_slot(&mut self, station: u32, slot: u32) {
        let f = self.featured(station);
        f.servers[slot as usize].blocked = false;
        f.servers[slot as usize].job = None;
        f.present -= 1;
        let next = f.next_waiting();
        match next {
            Some(w) => {
                if w.resume.is_none() {
                    let waited = self.now.since(w.arrived);
                    let class = self.jobs[w.job].class;
                    self.recorder.add_wait(self.classes, station, class, waited);
                }
                let class = self.jobs[w.job].class;
                let level = self.featured(station).level_of[class as usize];
                self.start(station, slot, w.job, level, w.resume);
            }
            None => {
                self.featured(station).idle.push(slot);
                let now = self.now;
                self.recorder.stations[station as usize]
                    .busy
                    .change(now, -1);
            }
        }
        self.respeed(station);
    }

    /// The patience of waiting job `job` ends: it leaves the network unserved, unless its
    /// service started since.
    fn abandon(&mut self, station: u32, job: u32, generation: u32) {
        let f = self.featured(station);
        if f.patient.get(&job) != Some(&generation) {
            return;
        }
        f.patient.remove(&job);
        f.present -= 1;
        self.events += 1;
        let class = self.jobs[job].class;
        self.count(station, class, -1);
        self.recorder.stations[station as usize].abandoned += 1;
        self.recorder.classes[class as usize].abandoned += 1;
        self.jobs.release(job);
        self.respeed(station);
        if self.blocking.is_some() {
            self.let_in(station);
        }
    }

    /// Job `job` (record `j`) found `station` full: it is lost.
    pub(super) fn lose(&mut self, job: u32, j: super::Job, station: u32) {
        self.recorder.stations[station as usize].lost += 1;
        self.recorder.classes[j.class as usize].lost += 1;
        self.jobs.release(job);
    }
}
