//! Multi-phase SPMD programs (`[[spmd.phase]]`): the paper's program is "a sequence of
//! phases, each of `N` statistically identical cycles" (DESIGN 2.1); each phase gives its
//! name, its cycles and the parameters in which it differs from the section.
//!
//! **Which parameters a phase may set.** The program's: `S_par`, `S_ser`, `S0_com`, `SR_com`,
//! `S0_io`, `SR_io`, `n_io`, `w`, `r` or `g`, and the burst families `cpu`, `com`, `io_dist`;
//! every one it leaves out is the section's. The machine's stay the section's: `p`, `d`, `c`,
//! `io`, `network`, `latency`; with `network = ...` also `S0_com` and `SR_com` (the links'
//! startup and bandwidth) and `r` (the decomposition that sets the grid), so a phase of the
//! network form varies its communication only through the `com` family.
//!
//! **How phases run.** A queueing network is observed in steady state and cannot run one
//! population of cycles after another, so a multi-phase section is built as a rank program
//! (`super::program`), the form `network = ...` already uses: each phase is a named `phase`
//! of its cycles, then an ideal (zero-cost) barrier of all ranks, so phases never overlap and
//! the program reports `phase.<name>.mean` and `.max` per phase and `program.makespan` in total.
//! Without `network = ...` the communication burst is the paper's `w` submodel written as
//! program operations (a delay, then one FCFS `bus` unit shared by all groups). As in the
//! network form, a cycle runs exactly `n_io` computation bursts (a whole number), where the
//! paper's network draws them geometrically.

use super::Spmd;

/// One checked phase: its name, its cycles and the model of its cycles (the section's
/// parameters with the phase's in their place).
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Its name, in metric names.
    pub name: String,
    /// Cycles it runs.
    pub cycles: u32,
    /// The parameters of its cycles, checked as a one-phase section.
    pub model: Spmd,
}
