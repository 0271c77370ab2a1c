//! # parsim
//!
//! A discrete-event simulator of queueing-network models of parallel programs and machines,
//! built to say how far the analytic models (MVA, M/M/1, M/G/1, fork-join approximations) can
//! be trusted. The same [`model::Network`] is simulated ([`engine`], [`replicate`]) and solved
//! analytically ([`analytic`], [`predict`]).
//!
//! A network is read from a scenario file ([`scenario::load`]) or built in Rust with a
//! [`scenario::builder::NetworkBuilder`], which runs the same checks. Here, a closed network of 4 jobs that
//! think (1 s on average) and then use a CPU (0.2 s) and a disk (0.1 s) is simulated for 10
//! replications and its mean cycle time compared with exact MVA:
//!
//! ```
//! use parsim::dist::DistSpec;
//! use parsim::scenario::builder::NetworkBuilder;
//! use parsim::study::analyze_scenario;
//! use parsim::replicate::{self, Options};
//!
//! let sc = NetworkBuilder::new()
//!     .closed_class("jobs", 4, "think")
//!     .delay("think", DistSpec::exp(1.0))
//!     .queue("cpu", 1, DistSpec::exp(0.2))
//!     .queue("disk", 1, DistSpec::exp(0.1))
//!     .route("jobs", "think", "cpu")
//!     .route("jobs", "cpu", "disk")
//!     .route("jobs", "disk", "think")
//!     .scenario("delay + 2 queues, N=4")?;
//!
//! // the analytic side: every applicable formula, each labelled exact or approximate
//! let analysis = analyze_scenario(&sc);
//! let mva = analysis
//!     .predictions
//!     .iter()
//!     .find(|p| p.metric == "class.jobs.cycle" && p.method == "exact MVA")
//!     .expect("MVA solves a closed product-form network");
//! // MVA by hand (four steps of the recursion): cycle time N / X(4) = 1.441660 s
//! assert!((mva.value - 1.441660).abs() < 1e-6);
//!
//! // the simulation: 10 replications of 20000 cycles, seed 7 (same numbers on any thread count)
//! let opt = Options {
//!     replications: 10,
//!     length: 20_000,
//!     seed: 7,
//!     ..Options::from_scenario(&sc)
//! };
//! let ex = replicate::run(&sc, &opt, &|_| {})?;
//! let cycle = ex.index_of("class.jobs.cycle").expect("a measured metric");
//! let ci = ex.interval(cycle, 0.99);
//! // the exact value lies in the 99% interval, which is within 2% of the mean
//! assert!(ci.contains(mva.value), "{ci:?} vs {}", mva.value);
//! assert!(ci.relative_half_width() < 0.02);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod analytic;
pub mod dist;
pub mod engine;
pub mod hash;
pub mod linalg;
pub mod metrics;
pub mod model;
pub mod models;
pub mod plot;
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
pub mod stats;
pub mod study;
pub mod sweep;
pub mod time;
pub mod topology;
pub mod validate;
