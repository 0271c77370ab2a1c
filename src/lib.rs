//! # parsim
//!
//! A discrete-event simulator of parallel programs and machines, built to say how far the
//! analytic models (MVA, M/M/1, M/G/1, fork-join approximations, message-cost and collective
//! formulas, the SPMD and pipeline models of the literature) can be trusted. Every system is
//! both simulated and solved analytically, and the two are put side by side.
//!
//! ## Three workload forms over the same stations
//!
//! - **Routed classes** ([`network::Network`]): open and closed job classes routed between
//!   stations (delays, FCFS and processor-sharing queues, forks and joins), observed in steady
//!   state after a warm-up. The form the MVA and queueing formulas describe.
//! - **Rank programs** ([`program::Program`]): `P` ranks, each running the same list of
//!   operations (compute, send, receive, collectives, disk requests, loops, phases) on
//!   processors, the links of an interconnect ([`topology`]) and disks, to completion. One
//!   replication is one execution; loops stay loops.
//! - **Schedules** ([`schedule::Schedule`]): dependency graphs of sends, receives and calcs (a
//!   GOAL file, or a program lowered to one) on LogGP endpoints, with or without links, under
//!   LogGOPSim's semantics exactly.
//!
//! The form is the second folder of every layer, under the same three names: the IR
//! (`src/network/`, `src/program/`, `src/schedule/`), its executor (`engine/network/`,
//! `engine/program/`, `engine/schedule/`), what a run measures (`metrics/network.rs`, ...), its
//! analysis (`predict/network/`, ...) and its checks (`scenario/check/network/`, ...). A test
//! (`tests/integration/layers.rs`) fails when a file of one form sits in another's folder.
//!
//! A scenario file (TOML, [`scenario::load`]) gives one of them directly (a `.goal` file is a
//! schedule), or a high-level model ([`models`]: `[spmd]`, `[pipeline]`) that builds one.
//! [`replicate::run`] simulates independent replications in parallel (the same numbers on any
//! number of threads); [`study::analyze_scenario`] gives every analytic prediction that
//! applies, each labelled exact or with the assumption that breaks; [`validate`] and [`sweep`]
//! compare the two.
//!
//! ## Layers
//!
//! Each module belongs to one layer and imports only from its own or lower ones (checked by a
//! test, `tests/integration/layers.rs`):
//!
//! | layer | modules |
//! |---|---|
//! | foundations | [`time`], [`rng`], [`linalg`], [`hash`], [`files`], [`memory`], [`problem`] |
//! | maths: formulas, laws, estimators | [`analytic`], [`dist`], [`stats`] |
//! | the three IRs and the interconnect | [`network`] (queueing networks), [`program`] (rank programs), [`schedule`] (dependency graphs on LogGP endpoints), [`topology`] |
//! | executors and what they measure | [`engine`] (three event loops and the calendar), [`metrics`] |
//! | analysis | [`predict`] (the vocabulary at its root; `network`, `program` and `schedule` analysers below it) |
//! | high-level models | [`models`] (`spmd`, `pipeline`, machine profiles; [`models::Model`] is the one interface the rest calls) |
//! | input | [`scenario`] (raw shapes, checks, the Rust builder, diagnostics) |
//! | runs | [`replicate`], [`study`] |
//! | outputs | [`report`], [`validate`], [`sweep`], [`shard`], [`plot`], [`timeline`], [`selftest`], [`slurm`], [`provenance`] |
//!
//! The binary's command line (`src/cli/`) sits on top.
//!
//! ## The ordering contract
//!
//! Every executor pops its events in a fixed order: the queueing and program executors from a
//! calendar ordered by `(time, sequence)` ([`engine::calendar`]), where events at the same
//! instant run in the order they were scheduled; the schedule executor from its own queue
//! ordered by `(time, stamp)`, LogGOPSim's order ([`engine::schedule`]). Never by hashing,
//! thread or chance. Every random draw comes from a stream keyed by (master seed, replication,
//! stream id) ([`rng`]); replications are collected in index order and reduced serially. So a
//! seed gives bit-identical results on 1 or 16 threads, alone, in a sweep point or in a shard.
//!
//! ## A queueing network, simulated and solved
//!
//! A network is read from a scenario file ([`scenario::load`]) or built in Rust with a
//! [`scenario::builder::NetworkBuilder`], which runs the same checks. Here, a closed network of
//! 4 jobs that think (1 s on average) and then use a CPU (0.2 s) and a disk (0.1 s) is
//! simulated for 10 replications and its mean cycle time compared with exact MVA:
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
//!
//! ## A rank program, one execution
//!
//! A scenario's program runs in the program executor ([`engine::program::Execution`]), one
//! replication at a time; [`metrics::program::measure`] names what it measured. A binomial
//! reduction of 64 numbers on a fully connected machine, each round one message (startup
//! `t_s = 1` us, one byte at `t_w = 0.5` us) and one addition (`t_c = 0.25` us), takes exactly the
//! lecture notes' `lg n (t_s + t_w + t_c) = 10.5` us:
//!
//! ```
//! use std::path::Path;
//! use parsim::engine::program::Execution;
//!
//! let text = r#"
//! [program]
//! ranks = 64
//!
//! [[program.op]]
//! kind = "reduce"
//! algorithm = "binomial"
//! bytes = 1
//! combine = { dist = "det", value = 0.25e-6 }
//!
//! [topology]
//! kind = "full"
//! bandwidth = 2e6
//! startup = 1e-6
//! "#;
//! let sc = parsim::scenario::parse(text, Path::new("tree_sum.toml"))?;
//! let prog = sc.program().expect("a program scenario");
//! let run = Execution::new(prog, 1, 0).run()?;
//! assert!((run.makespan - 10.5e-6).abs() < 1e-15, "{}", run.makespan);
//! let metrics = parsim::metrics::program::measure(prog, &run);
//! assert_eq!(metrics[0], ("program.makespan".to_owned(), run.makespan));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## A high-level model
//!
//! A model section builds its system as scenario tables ([`models::tables`]) that get every
//! check a hand-written file gets; the scenario keeps the model ([`scenario::Scenario::model`])
//! for its own equations. Cremonesi and Gennaro's SPMD program with synchronous I/O on 4
//! processors builds a closed network, and the paper's methods sit beside the network ones:
//!
//! ```
//! use std::path::Path;
//! use parsim::models::tables::Tables;
//!
//! let text = r#"
//! [spmd]
//! p = 4
//! d = 1
//! w = 0.5
//! S_par = 4.0
//! S_ser = 0.1
//! S0_com = 0.05
//! SR_com = 0.2
//! S0_io = 0.01
//! SR_io = 0.4
//! n_io = 5
//! r = 2
//! io = "sio"
//! "#;
//! let sc = parsim::scenario::parse(text, Path::new("spmd.toml"))?;
//! let spmd = sc.spmd().expect("an [spmd] scenario");
//! let Tables::Network(tables) = spmd.tables() else { panic!("the paper's network") };
//! assert_eq!(tables.classes[0].name, "program");
//! let analysis = parsim::study::analyze_scenario(&sc);
//! assert!(analysis.predictions.iter().any(|p| p.metric == "spmd.speedup"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Simulation against analysis
//!
//! [`validate::validate`] runs a case and judges every prediction against the simulation's 99%
//! intervals: an exact one agrees or disagrees, an approximation gets its relative error.
//!
//! ```
//! use std::path::Path;
//! use parsim::validate::{Effort, ValidateOptions, Verdict, validate};
//!
//! let text = r#"
//! [[class]]
//! name = "jobs"
//!
//! [[station]]
//! name = "arrivals"
//! kind = "source"
//! class = "jobs"
//! interarrival = { dist = "exp", mean = 2.0 }
//!
//! [[station]]
//! name = "server"
//! kind = "fcfs"
//! service = { dist = "exp", mean = 1.0 }
//!
//! [[route]]
//! class = "jobs"
//! from = "arrivals"
//! to = "server"
//!
//! [[route]]
//! class = "jobs"
//! from = "server"
//! to = "exit"
//!
//! [run]
//! length = 20000
//! "#;
//! let sc = parsim::scenario::parse(text, Path::new("mm1.toml"))?;
//! let case = validate(&sc, &ValidateOptions::new(Effort::Quick))?;
//! let mm1 = case
//!     .rows
//!     .iter()
//!     .find(|r| r.metric == "class.jobs.response" && r.method == "M/M/1")
//!     .expect("M/M/1 predicts the response time");
//! assert_eq!(mm1.analytic, 2.0);
//! assert!(mm1.exact && mm1.verdict != Verdict::Disagree);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod analytic;
pub mod dist;
pub mod engine;
pub mod files;
pub mod hash;
pub mod linalg;
pub mod memory;
pub mod metrics;
pub mod models;
pub mod network;
pub mod plot;
pub mod predict;
pub mod problem;
pub mod program;
pub mod provenance;
pub mod replicate;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod schedule;
pub mod selftest;
pub mod shard;
pub mod slurm;
pub mod stats;
pub mod study;
pub mod sweep;
pub mod time;
pub mod timeline;
pub mod topology;
pub mod traffic_fit;
pub mod validate;
