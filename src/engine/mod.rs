//! The executors: the loops that run one replication of a workload, and what they share.
//!
//! - [`network`]: the queueing engine, one replication of a [`crate::network::Network`] observed in
//!   steady state;
//! - [`program`]: the program executor, one execution of a [`crate::program::Program`] to
//!   completion;
//! - [`calendar`]: the event calendar both loops pop from, ordered by `(time, sequence)` so
//!   that events at the same instant run in the order they were scheduled;
//! - [`prefetch`]: a hint to load a record before the loop reaches it;
//! - [`ps`]: processor sharing on one server by virtual time (queues and fair-shared links).
//!
//! Neither loop knows of any high-level model: a model builds a network or a program, and runs
//! in the same tested loop as a hand-written one.

pub mod calendar;
pub mod network;
pub mod prefetch;
pub mod program;
pub mod ps;
pub mod schedule;
