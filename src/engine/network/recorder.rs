//! What one run measures, collected as the run goes.

use crate::network::Network;
use crate::stats::{Occupancy, Percentiles, Tally};
use crate::time::SimTime;

/// Waiting times summed as whole ticks: two integer additions per service start, exact, and
/// all the mean needs (its interval comes from the replications' means).
#[derive(Clone, Copy, Debug, Default)]
pub struct WaitTotal {
    ticks: u128,
    count: u64,
}

impl WaitTotal {
    /// One job waited `ticks` ticks.
    #[inline(always)]
    pub fn add(&mut self, ticks: u64) {
        self.ticks += u128::from(ticks);
        self.count += 1;
    }

    /// The mean wait in the scenario's unit (NaN when no service started).
    pub fn mean(&self, clock: &crate::time::Clock) -> f64 {
        crate::time::wide_to_f64(self.ticks) * clock.tick() / self.count as f64
    }
}

/// Per-station measurements (all classes together).
#[derive(Clone, Debug)]
pub struct StationRecord {
    /// Jobs present (for a fork: parents waiting for their tasks; for a join: tasks waiting).
    pub present: Occupancy,
    /// Busy servers (queues only).
    pub busy: Occupancy,
    /// Time from arrival to departure (for a fork: from the fork to the join's release).
    pub response: Tally,
    /// Time from arrival to the start of service (FCFS queues only; added when service starts).
    pub wait: WaitTotal,
    /// Percentiles of the same.
    pub percentiles: Percentiles,
    /// Arrivals, lost ones included (stations with features only).
    pub arrived: u64,
    /// Arrivals that found it full and were lost.
    pub lost: u64,
    /// Arrivals that left unserved when their patience ran out.
    pub abandoned: u64,
}

/// Per-(station, class) measurements.
#[derive(Clone, Copy, Debug, Default)]
pub struct StationClassRecord {
    /// Jobs of the class present.
    pub present: Occupancy,
    /// Their visit times.
    pub response: Tally,
    /// Their waits from arrival to the start of service (FCFS queues only).
    pub wait: WaitTotal,
}

/// Per-class end-to-end measurements: response time (open) or cycle time (closed).
#[derive(Clone, Debug)]
pub struct ClassRecord {
    /// End-to-end times.
    pub response: Tally,
    /// (Closed classes) the part of each cycle from leaving the reference station: the
    /// response.
    pub outside: Tally,
    /// Percentiles of the same.
    pub percentiles: Percentiles,
    /// Jobs that arrived from the class's sources.
    pub arrived: u64,
    /// Jobs lost to a full station while of this class.
    pub lost: u64,
    /// Jobs that left unserved, impatient, while of this class.
    pub abandoned: u64,
}

/// Everything one run measures since the end of its warm-up.
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Indexed by station.
    pub stations: Vec<StationRecord>,
    /// Indexed by `class * stations + station`; filled only when the network has more than one
    /// class (with one class they would repeat `stations`, so the engine skips them).
    pub station_classes: Vec<StationClassRecord>,
    /// Indexed by class.
    pub classes: Vec<ClassRecord>,
    /// When measurement started (the end of the warm-up).
    pub start: SimTime,
}

impl Recorder {
    /// Empty records for `net`, each histogram scaled to its own metric: a station's to its
    /// smallest mean service time, a class's to the smaller of its demand per observation and
    /// the network's smallest mean time.
    pub fn new(net: &Network) -> Recorder {
        let clock = &net.clock;
        let fallback = net.smallest_mean_time().map_or(1.0, |(m, _)| m);
        let stations = net
            .stations
            .iter()
            .map(|s| {
                let scale = s
                    .kind
                    .service()
                    .and_then(|t| t.iter().flatten().map(|d| d.mean()).reduce(f64::min))
                    .filter(|m| *m > 0.0)
                    .unwrap_or(fallback);
                StationRecord {
                    present: Occupancy::default(),
                    busy: Occupancy::default(),
                    response: Tally::new(),
                    wait: WaitTotal::default(),
                    percentiles: Percentiles::new(clock, scale),
                    arrived: 0,
                    lost: 0,
                    abandoned: 0,
                }
            })
            .collect();
        let scales = crate::network::estimates::demand_per_observation(net);
        // (a class's responses can lie far below its mean demand, as a heavy-tailed delay
        // makes them: its histogram's unit follows the smaller of the demand and the network's
        // smallest mean time, so that no completed response rounds to 0)
        let classes = scales
            .iter()
            .map(|&scale| ClassRecord {
                response: Tally::new(),
                outside: Tally::new(),
                percentiles: Percentiles::new(clock, scale.map_or(fallback, |s| s.min(fallback))),
                arrived: 0,
                lost: 0,
                abandoned: 0,
            })
            .collect();
        Recorder {
            stations,
            station_classes: vec![
                StationClassRecord::default();
                net.stations.len() * net.classes.len()
            ],
            classes,
            start: SimTime::ZERO,
        }
    }

    /// A job of `class` waited `ticks` at FCFS `station` before its service started (per
    /// class too when the network has `classes > 1`).
    #[inline(always)]
    pub fn add_wait(&mut self, classes: usize, station: u32, class: u32, ticks: u64) {
        self.stations[station as usize].wait.add(ticks);
        if classes > 1 {
            let ns = self.stations.len();
            self.station_classes[class as usize * ns + station as usize]
                .wait
                .add(ticks);
        }
    }

    /// Drops everything measured so far and measures from `now` on (end of the warm-up).
    pub fn restart(&mut self, now: SimTime) {
        self.start = now;
        for s in &mut self.stations {
            s.present.restart(now);
            s.busy.restart(now);
            s.response = Tally::new();
            s.wait = WaitTotal::default();
            s.percentiles.clear();
            s.arrived = 0;
            s.lost = 0;
            s.abandoned = 0;
        }
        for sc in &mut self.station_classes {
            sc.present.restart(now);
            sc.response = Tally::new();
            sc.wait = WaitTotal::default();
        }
        for c in &mut self.classes {
            c.response = Tally::new();
            c.outside = Tally::new();
            c.percentiles.clear();
            c.arrived = 0;
            c.lost = 0;
            c.abandoned = 0;
        }
    }
}
