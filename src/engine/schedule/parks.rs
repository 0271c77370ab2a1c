//! Events waiting for busy CPUs and NICs, without putting each one back into the queue.
//!
//! LogGOPSim puts an event whose CPU or NIC is busy back into its queue at the time they are
//! free, with its stamp; when they are free, every event put back for them is taken out again
//! and all but one put back once more. `n` independent operations on one CPU (or `n` messages
//! reaching one rank at once) thus cost `n^2 / 2` queue operations. Here the events waiting for
//! the same units (a CPU alone for a calc; a CPU and a NIC's sending side for a send; a CPU and
//! a NIC's receiving side for a message) wait together in a *park*, in stamp order, and one
//! event of the queue stands for them all, keyed by the time the units are free and the first
//! waiter's stamp: each waiter costs one step in and one out.
//!
//! The order is LogGOPSim's: a waiter's retry fails without effect until its units are free
//! (their free times never go back), so the events put back for the same units would be taken
//! out at the time they are free, in stamp order; the first starts and the others are put back
//! again. The stand-in is taken out at that time with the first's stamp, and when it finds the
//! units free, that waiter starts. A newer stand-in (a waiter with an older stamp arrived)
//! makes the older one stale; a stale stand-in taken out of the queue is dropped.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// Which units a waiting event needs, besides its CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// None (a calc).
    Cpu,
    /// The sending side of a NIC (a send).
    Send,
    /// The receiving side of a NIC (a message reaching its receiver).
    Receive,
}

/// The units an event waits for: a CPU and, for a send or a message, a NIC's side (indices
/// into the executor's arrays of free times).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Units {
    /// The CPU's index.
    pub cpu: u32,
    /// The NIC's index (0 for a calc).
    pub nic: u32,
    /// Which side of the NIC.
    pub side: Side,
}

impl Units {
    fn key(self) -> u64 {
        let side = match self.side {
            Side::Cpu => 0,
            Side::Send => 1,
            Side::Receive => 2,
        };
        (side << 62) | (u64::from(self.cpu) << 31) | u64::from(self.nic)
    }
}

/// The events waiting for one set of units.
#[derive(Debug)]
struct Park {
    units: Units,
    /// (stamp, event id), the least stamp first.
    waiting: BinaryHeap<Reverse<(u32, u32)>>,
    /// The key, time and stamp, of the queue's event that stands for the waiters.
    out: (u64, u32),
}

/// Every park with waiters, by slot (a stand-in's event id names its slot).
#[derive(Debug, Default)]
pub struct Parks {
    parks: Vec<Park>,
    free: Vec<u32>,
    by_units: FxHashMap<u64, u32>,
}

impl Parks {
    /// The event `(stamp, id)` found `units` busy until `free`: it waits for them. Returns the
    /// slot of a stand-in to put into the queue at `(free, stamp)`, when the event is now the
    /// first of its park (the park's older stand-in, if any, is then stale).
    pub fn wait(&mut self, units: Units, stamp: u32, id: u32, free: u64) -> Option<u32> {
        let key = units.key();
        let slot = match self.by_units.get(&key) {
            Some(&slot) => slot,
            None => {
                let slot = match self.free.pop() {
                    Some(s) => {
                        // a closed park, empty: its heap's room is kept
                        let park = &mut self.parks[s as usize];
                        park.units = units;
                        park.out = (free, u32::MAX);
                        s
                    }
                    None => {
                        self.parks.push(Park {
                            units,
                            waiting: BinaryHeap::new(),
                            out: (free, u32::MAX),
                        });
                        (self.parks.len() - 1) as u32
                    }
                };
                self.by_units.insert(key, slot);
                slot
            }
        };
        let park = &mut self.parks[slot as usize];
        park.waiting.push(Reverse((stamp, id)));
        // the stand-in comes no later than `(free, stamp)` unless this stamp is older
        let first = park.out.1 == u32::MAX || stamp < park.out.1;
        if first {
            park.out = (free, stamp);
        }
        first.then_some(slot)
    }

    /// The units of the park whose stand-in, keyed `(time, stamp)`, was taken out of the queue;
    /// `None` when the stand-in is stale.
    pub fn stand_in(&self, slot: u32, time: u64, stamp: u32) -> Option<Units> {
        let park = self.parks.get(slot as usize)?;
        (park.out == (time, stamp) && !park.waiting.is_empty()).then_some(park.units)
    }

    /// The park's stand-in goes back into the queue at `(time, stamp)`.
    pub fn put_back(&mut self, slot: u32, time: u64, stamp: u32) {
        self.parks[slot as usize].out = (time, stamp);
    }

    /// The park's first waiter leaves to start: its event id.
    pub fn leave(&mut self, slot: u32) -> u32 {
        let park = &mut self.parks[slot as usize];
        let Reverse((_, id)) = park.waiting.pop().expect("a stand-in has a waiter");
        park.out = (0, u32::MAX);
        id
    }

    /// The stamp of the park's first waiter, or `None` (and the park closed) when none waits.
    pub fn first(&mut self, slot: u32) -> Option<u32> {
        let park = &self.parks[slot as usize];
        if let Some(Reverse((stamp, _))) = park.waiting.peek() {
            return Some(*stamp);
        }
        self.by_units.remove(&park.units.key());
        self.free.push(slot);
        None
    }

    /// Every waiting event's stamp (stand-ins carry their first waiter's).
    pub fn stamps(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_units
            .values()
            .flat_map(|&slot| self.parks[slot as usize].waiting.iter().map(|w| w.0.0))
    }

    /// Gives every waiter and stand-in the stamp `rank` maps its own to (an order-keeping map:
    /// [`super::DagExecution::renumber`]).
    pub fn renumber(&mut self, rank: impl Fn(u32) -> u32) {
        for &slot in self.by_units.values() {
            let park = &mut self.parks[slot as usize];
            let waiting = std::mem::take(&mut park.waiting);
            park.waiting = waiting
                .into_iter()
                .map(|Reverse((stamp, id))| Reverse((rank(stamp), id)))
                .collect();
            if park.out.1 != u32::MAX {
                park.out.1 = rank(park.out.1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU0: Units = Units {
        cpu: 0,
        nic: 0,
        side: Side::Cpu,
    };

    #[test]
    fn waiters_leave_in_stamp_order_and_older_stamps_take_over_the_stand_in() {
        let mut p = Parks::default();
        assert_eq!(p.wait(CPU0, 5, 50, 10), Some(0));
        assert_eq!(p.wait(CPU0, 7, 70, 10), None, "a later stamp waits behind");
        // an older stamp (an event scheduled long ago) stands in from now on
        assert_eq!(p.wait(CPU0, 3, 30, 10), Some(0));
        assert_eq!(p.stand_in(0, 10, 5), None, "the older stand-in is stale");
        assert_eq!(p.stand_in(0, 10, 3), Some(CPU0));
        assert_eq!(p.leave(0), 30);
        assert_eq!(p.first(0), Some(5));
        p.put_back(0, 20, 5);
        assert_eq!(p.stand_in(0, 20, 5), Some(CPU0));
        assert_eq!(p.leave(0), 50);
        assert_eq!(p.first(0), Some(7));
        p.put_back(0, 30, 7);
        assert_eq!(p.leave(0), 70);
        assert_eq!(p.first(0), None, "empty: the park is closed");
        assert!(p.by_units.is_empty());
        // the slot is used again
        let other = Units {
            side: Side::Send,
            ..CPU0
        };
        assert_eq!(p.wait(other, 9, 90, 40), Some(0));
        assert_eq!(p.wait(CPU0, 9, 91, 40), Some(1));
    }

    #[test]
    fn renumbering_keeps_the_order_and_the_stand_in() {
        let mut p = Parks::default();
        p.wait(CPU0, 100, 1, 10);
        p.wait(CPU0, 300, 3, 10);
        p.wait(CPU0, 200, 2, 10);
        let mut stamps: Vec<u32> = p.stamps().collect();
        stamps.sort_unstable();
        assert_eq!(stamps, [100, 200, 300]);
        p.renumber(|s| s / 100);
        assert_eq!(p.stand_in(0, 10, 1), Some(CPU0));
        assert_eq!(p.leave(0), 1);
        assert_eq!(p.first(0), Some(2));
    }

    #[test]
    fn units_keys_differ() {
        let keys: Vec<u64> = [
            CPU0,
            Units {
                side: Side::Send,
                ..CPU0
            },
            Units {
                side: Side::Receive,
                ..CPU0
            },
            Units { cpu: 1, ..CPU0 },
            Units {
                nic: 1,
                side: Side::Send,
                cpu: 0,
            },
        ]
        .iter()
        .map(|u| u.key())
        .collect();
        let mut unique = keys.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), keys.len());
    }
}
