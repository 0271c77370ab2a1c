//! The events of the simulation: small `Copy` values carrying ids, not references.

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The next open arrival from source station `source`.
    Arrival {
        /// Index of the source station.
        source: u32,
    },
    /// Job `job` finishes service at delay or FCFS station `station`.
    Departure {
        /// Index of the station.
        station: u32,
        /// Index of the job in the job arena.
        job: u32,
    },
    /// The job with the least remaining work at processor-sharing station `station` finishes,
    /// unless the station's state changed since (`generation` no longer current).
    PsDeparture {
        /// Index of the station.
        station: u32,
        /// The station's generation when this event was scheduled.
        generation: u32,
    },
}

const _: () = assert!(std::mem::size_of::<Event>() <= 12);

impl crate::engine::calendar::CalendarEvent for Event {
    const TAG_BITS: u32 = 2;

    #[inline]
    fn encode(self) -> (u64, u64) {
        match self {
            Event::Arrival { source } => (0, u64::from(source)),
            Event::Departure { station, job } => (1, (u64::from(station) << 32) | u64::from(job)),
            Event::PsDeparture {
                station,
                generation,
            } => (2, (u64::from(station) << 32) | u64::from(generation)),
        }
    }

    #[inline]
    fn decode(tag: u64, p: u64) -> Event {
        let (hi, lo) = ((p >> 32) as u32, p as u32);
        match tag {
            0 => Event::Arrival { source: lo },
            1 => Event::Departure {
                station: hi,
                job: lo,
            },
            _ => Event::PsDeparture {
                station: hi,
                generation: lo,
            },
        }
    }
}
