//! Blocking after service: stations with a capacity and `when_full = "block"`.
//!
//! A job that finishes its service and is routed to a full blocking station stays where it is:
//! counted in its station's jobs, in its server (an FCFS server neither serves nor takes the
//! next job; it is not counted busy), its visit not yet ended. Jobs blocked on one station
//! enter it in the order they were blocked, each as soon as a place frees; the place it leaves
//! behind may in turn let in a job blocked on its own station, and so on up the chain, all in
//! the event that freed the first place. A job routed back to its own station is never blocked
//! (it frees the place it takes).
//!
//! **Deadlock.** When a job is blocked, the stations whose every server (every job, at a delay
//! or processor-sharing station) holds a blocked job are found; those whose blocked jobs all
//! wait for stations of the same kind can never move again. The run stops with
//! [`super::RunFault::Deadlock`] naming them.

use std::collections::VecDeque;

use super::jobs::Job;
use super::{Simulation, StationState};
use crate::network::{Network, WhenFull};

/// The blocking state of a run.
#[derive(Debug)]
pub(super) struct Blocking {
    /// Each station's capacity if it blocks when full (`u32::MAX` otherwise).
    limit: Vec<u32>,
    /// The jobs blocked on each station, in the order they were blocked.
    waiting: Vec<VecDeque<Held>>,
    /// How many of each station's jobs are blocked there.
    held: Vec<u32>,
    /// The stations found blocking each other, if any.
    pub(super) deadlock: Option<Vec<u32>>,
}

/// A job blocked after its service.
#[derive(Clone, Copy, Debug)]
struct Held {
    job: u32,
    /// Its record, as it finished its service.
    record: Job,
    /// The station it finished at (where it is held).
    from: u32,
    /// The server it holds there (featured FCFS stations).
    slot: u32,
    /// Where it goes.
    stop: Stop,
}

/// Where a job goes next: a station, under a class, and whether that closes its class's cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stop {
    /// The station.
    pub(super) station: u32,
    /// The job's class there.
    pub(super) class: u32,
    /// True when the station is the class's reference station.
    pub(super) cycle: bool,
}

impl Blocking {
    /// The blocking state of `net`, or nothing when no station blocks.
    pub(super) fn new(net: &Network) -> Option<Box<Blocking>> {
        let limit: Vec<u32> = net
            .stations
            .iter()
            .map(|s| match s.features.capacity {
                Some(c) if c.when_full == WhenFull::Block => c.jobs,
                _ => u32::MAX,
            })
            .collect();
        if limit.iter().all(|&k| k == u32::MAX) {
            return None;
        }
        let n = limit.len();
        Some(Box::new(Blocking {
            limit,
            waiting: vec![VecDeque::new(); n],
            held: vec![0; n],
            deadlock: None,
        }))
    }
}

impl Simulation<'_> {
    fn blocking(&mut self) -> &mut Blocking {
        self.blocking
            .as_deref_mut()
            .expect("called only in a network with blocking stations")
    }

    /// Job `job` (record `j`) finished its service at `station` (in server `slot` of a
    /// featured FCFS station): it moves on, or is held there if its next station blocks and is
    /// full.
    #[inline(never)]
    pub(super) fn finish_blocking(&mut self, job: u32, j: Job, station: u32, slot: u32) {
        let stop = self.next_stop(j.class, station);
        if let Some(stop) = stop
            && stop.station != station
            && self.is_full(stop.station)
        {
            return self.hold(Held {
                job,
                record: j,
                from: station,
                slot,
                stop,
            });
        }
        self.free_server(station, slot);
        self.leave_station(j, station);
        match stop {
            Some(stop) => self.move_to(job, j, station, stop),
            None => self.exit(job, j),
        }
        self.let_in(station);
    }

    /// True when `station` blocks when full and is full.
    fn is_full(&mut self, station: u32) -> bool {
        let limit = self.blocking().limit[station as usize];
        limit != u32::MAX && self.recorder.stations[station as usize].present.count() >= limit
    }

    /// Holds a job whose next station is full, and looks for a deadlock.
    fn hold(&mut self, h: Held) {
        let now = self.now;
        let from = h.from as usize;
        match &mut self.stations[from].state {
            StationState::Fcfs { .. } | StationState::HeadOfLine(_) => {
                self.recorder.stations[from].busy.change(now, -1)
            }
            StationState::Featured(f) => {
                f.block(h.slot);
                self.recorder.stations[from].busy.change(now, -1);
            }
            _ => {}
        }
        let b = self.blocking();
        b.held[from] += 1;
        b.waiting[h.stop.station as usize].push_back(h);
        if b.deadlock.is_none() {
            let stuck = self.stuck();
            if !stuck.is_empty() {
                self.blocking().deadlock = Some(stuck);
            }
        }
    }

    /// The server the finished job `slot` held at `station` takes the next waiting job, or
    /// goes idle.
    fn free_server(&mut self, station: u32, slot: u32) {
        match &self.stations[station as usize].state {
            StationState::Fcfs { .. } | StationState::HeadOfLine(_) => self.next_service(station),
            StationState::Featured(_) => self.free_slot(station, slot),
            _ => {}
        }
    }

    /// Places freed at `station` let in the jobs blocked on it, and the places those leave let
    /// in the jobs blocked on theirs, up the chain.
    pub(super) fn let_in(&mut self, mut station: u32) {
        loop {
            let full = self.is_full(station);
            let b = self.blocking();
            if full {
                return;
            }
            let Some(h) = b.waiting[station as usize].pop_front() else {
                return;
            };
            b.held[h.from as usize] -= 1;
            let now = self.now;
            if matches!(
                self.stations[h.from as usize].state,
                StationState::Fcfs { .. } | StationState::HeadOfLine(_) | StationState::Featured(_)
            ) {
                self.recorder.stations[h.from as usize].busy.change(now, 1);
            }
            self.free_server(h.from, h.slot);
            self.leave_station(h.record, h.from);
            self.move_to(h.job, h.record, h.from, h.stop);
            station = h.from;
        }
    }

    /// How many blocked jobs make `station` unable to move: its servers, or at a delay or
    /// processor-sharing station its jobs present.
    fn holders(&self, station: usize) -> u32 {
        match &self.stations[station].state {
            StationState::Fcfs { servers, .. } => *servers,
            StationState::HeadOfLine(h) => h.servers,
            StationState::Featured(f) => f.servers(),
            _ => self.recorder.stations[station].present.count(),
        }
    }

    /// The stations that can never move again: every server holds a blocked job, and every
    /// blocked job waits for another such station (the largest such set).
    fn stuck(&self) -> Vec<u32> {
        let Some(b) = self.blocking.as_deref() else {
            return Vec::new();
        };
        let mut stuck: Vec<bool> = (0..b.held.len())
            .map(|s| b.held[s] > 0 && b.held[s] >= self.holders(s))
            .collect();
        loop {
            let mut changed = false;
            for (to, queue) in b.waiting.iter().enumerate() {
                for h in queue {
                    if stuck[h.from as usize] && !stuck[to] {
                        stuck[h.from as usize] = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        (0..stuck.len() as u32)
            .filter(|&s| stuck[s as usize])
            .collect()
    }
}
