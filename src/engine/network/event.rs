//! The events of the simulation: small `Copy` values carrying ids, and for a job in service its
//! record.

use super::jobs::Job;

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The next open arrival from source station `source`.
    Arrival {
        /// Index of the source station.
        source: u32,
    },
    /// Job `job` finishes service at the delay or FCFS station `record.station`.
    ///
    /// The event carries the job's record as it was when its service started, which is the
    /// record still (nothing changes a job in service), so that the event loop never reads it
    /// from the job arena: with many jobs in the network the arena is large and the record of
    /// the job an event pops is a cache miss. While a job is in service its slot in the arena
    /// is not kept up to date.
    Departure {
        /// Index of the job in the job arena.
        job: u32,
        /// The job's record; its `pending` is 0 (a forked parent is never in service).
        record: Job,
    },
    /// The job with the least remaining work at processor-sharing station `station` finishes,
    /// unless the station's state changed since (`generation` no longer current).
    PsDeparture {
        /// Index of the station.
        station: u32,
        /// The station's generation when this event was scheduled.
        generation: u32,
    },
    /// A timer of an FCFS station with features: the end of the service in server `key`, or
    /// (`abandon`) the end of the patience of waiting job `key`, unless it was superseded
    /// since (`generation` is no longer the server's or the job's current one).
    Wake {
        /// Index of the station.
        station: u32,
        /// The server's slot, or the waiting job.
        key: u32,
        /// The server's or the waiting job's generation when this event was scheduled.
        generation: u32,
        /// The end of a patience, not of a service.
        abandon: bool,
    },
}

/// An event as the calendar stores it: four words (a departure's ids, class and parent, its
/// job's start and arrival times).
pub type Packed = [u64; 4];

/// Two `u32`s as one word.
#[inline(always)]
fn pair(hi: u32, lo: u32) -> u64 {
    (u64::from(hi) << 32) | u64::from(lo)
}

impl crate::engine::calendar::Scheduled for Event {
    const TAG_BITS: u32 = 2;
    type Payload = Packed;

    #[inline(always)]
    fn pack(self) -> (u64, Packed) {
        match self {
            Event::Arrival { source } => (0, [u64::from(source), 0, 0, 0]),
            Event::Departure { job, record } => {
                debug_assert_eq!(record.pending, 0, "a job in service is no forked parent");
                (
                    1,
                    [
                        pair(record.station, job),
                        pair(record.class, record.parent),
                        record.born.ticks(),
                        record.arrived.ticks(),
                    ],
                )
            }
            Event::PsDeparture {
                station,
                generation,
            } => (2, [pair(station, generation), 0, 0, 0]),
            Event::Wake {
                station,
                key,
                generation,
                abandon,
            } => (
                3,
                [
                    pair(station, key),
                    pair(generation, u32::from(abandon)),
                    0,
                    0,
                ],
            ),
        }
    }

    #[inline(always)]
    fn unpack(tag: u64, p: Packed) -> Event {
        let (hi, lo) = ((p[0] >> 32) as u32, p[0] as u32);
        match tag {
            0 => Event::Arrival { source: lo },
            1 => Event::Departure {
                job: lo,
                record: Job {
                    class: (p[1] >> 32) as u32,
                    parent: p[1] as u32,
                    pending: 0,
                    station: hi,
                    born: crate::time::SimTime::from_ticks(p[2]),
                    arrived: crate::time::SimTime::from_ticks(p[3]),
                },
            },
            2 => Event::PsDeparture {
                station: hi,
                generation: lo,
            },
            _ => Event::Wake {
                station: hi,
                key: lo,
                generation: (p[1] >> 32) as u32,
                abandon: p[1] as u32 != 0,
            },
        }
    }
}
