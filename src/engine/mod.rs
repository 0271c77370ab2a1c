//! The executors: the loops that run one replication of a workload, one per workload form, and
//! what they share.
//!
//! - [`network`]: the queueing engine, one replication of a [`crate::network::Network`]
//!   observed in steady state;
//! - [`program`]: the program executor, one execution of a [`crate::program::Program`] to
//!   completion, its ranks interpreted from their compiled code (loops stay loops);
//! - [`schedule`]: the schedule executor, one execution of a [`crate::schedule::Schedule`] (a
//!   dependency graph on LogGP endpoints, with or without links), LogGOPSim's semantics exactly;
//! - [`calendar`]: the event calendar the queueing and program executors pop from, ordered by
//!   `(time, sequence)` so that events at the same instant run in the order they were scheduled;
//! - `prefetch`: a hint to load a record before the loop reaches it;
//! - `ps`: processor sharing on one server by virtual time (queues and fair-shared links).
//!
//! **Why the schedule executor keeps its own queue and its own links.** The calendar is a
//! monotone radix heap keyed by `(time, sequence)`, the sequence given when an event is
//! scheduled. LogGOPSim's order is not that one: an event carries the stamp it got when its
//! operation became ready and keeps it when it is put back because its CPU or NIC is busy, and an
//! operation released on another CPU is timed from that CPU's free time, which may lie before
//! the last event popped. So its queue (`schedule::queue`) orders 16-byte events by `(time,
//! stamp)` and falls back to a binary heap once an event lands in the past, with first-in
//! first-out lanes for the events always a fixed time ahead; an event is 16 bytes, where a
//! calendar entry takes 24 (a 128-bit key and a 64-bit payload), which counts at 2^20 ranks.
//! Its links are FCFS only, their state kept in the executor's own compact form (a header's hops
//! in a lane of 16-byte records), since a message there is a dependency graph's operation, not
//! a rank's instruction. The two loops share the interconnect ([`crate::topology`]) and the link
//! parameters ([`crate::program::Interconnect`]), not the code that moves messages; the
//! analysis of schedules ([`crate::predict::schedule`]) steps through one rank's events to derive
//! closed forms, and is checked against this executor to the tick.
//!
//! No executor knows of any high-level model: a model builds a network or a program, and runs
//! in the same tested loop as a hand-written one.

pub mod calendar;
pub mod network;
pub(crate) mod prefetch;
pub mod program;
pub(crate) mod ps;
pub mod schedule;
