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
