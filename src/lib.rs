//! # parsim
//!
//! A discrete-event simulator of queueing-network models of parallel programs and machines,
//! built to say how far the analytic models (MVA, M/M/1, M/G/1, fork-join approximations) can
//! be trusted. The same [`model::Network`] is simulated ([`engine`], [`replicate`]) and solved
//! analytically ([`analytic`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod analytic;
pub mod dist;
pub mod engine;
pub mod linalg;
pub mod metrics;
pub mod model;
pub mod predict;
pub mod program;
pub mod provenance;
pub mod replicate;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod selftest;
pub mod shard;
pub mod slurm;
pub mod spmd;
pub mod stats;
pub mod sweep;
pub mod time;
pub mod topology;
pub mod validate;
