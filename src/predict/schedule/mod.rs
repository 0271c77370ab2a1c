//! Analysis of a schedule (the third workload form): a dependency graph on LogGP endpoints.
//! `loggp` derives the closed forms of the collectives a program lowers to, and the LogGP
//! cost of a schedule's critical path where it can be computed without simulating.

pub(crate) mod loggp;

pub use loggp::analyze;
