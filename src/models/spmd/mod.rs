//! Cremonesi and Gennaro's SPMD programs on MIMD machines (`[spmd]`): the paper's parameters
//! (its Table 1), checked, written as an ordinary parsim network (Figs. 5-9, `build`) and
//! solved by the paper's equations ([`formulas`], `analysis`).
//!
//! The network's closed classes count a cycle at the I/O station, so `class.<c>.cycle` is the
//! time of one program cycle (`n_io` computation bursts and one I/O burst, eq. 2 per cycle);
//! the speedup `s(p,d) = T1 / cycle` (eq. 3) and its efficiency, cost and overhead are computed
//! per replication from that cycle time ([`derived`]), so their intervals come from the
//! per-replication values like every other metric.
//!
//! A section with `network = "<topology>"` (`program`) or with phases (`[[spmd.phase]]`,
//! [`phase`]) is built as a rank program instead, which runs a fixed number of cycles: its
//! speedup is over the makespan, per cycle for the network form, of the whole program (and per
//! phase) with phases.

pub(crate) mod analysis;
pub(crate) mod build;
pub(crate) mod check;
pub mod fit;
pub mod formulas;
pub mod phase;
pub(crate) mod program;
pub mod raw;

pub use phase::Phase;

use serde::Deserialize;

use crate::dist::DistSpec;
use crate::metrics::catalogue::{Entry, Unit};
use crate::metrics::name::{Figure, Subject};
use crate::models::tables::Tables;
use crate::topology::TopologyKind;

/// The I/O organisations of section 3.7.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Io {
    /// Synchronous I/O: all groups join, one I/O burst, fork again.
    Sio,
    /// Asynchronous I/O to one pool of disks.
    BusAio,
    /// Asynchronous I/O, one disk per cluster of groups.
    CluAio,
}

/// A distribution family whose mean the model sets: `{ dist = "erlang", k = 4 }`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Family {
    /// Exponential.
    #[serde(alias = "exponential")]
    Exp,
    /// Uniform on `[0, 2 mean]`.
    Uniform,
    /// Deterministic.
    #[serde(alias = "deterministic")]
    Det,
    /// Erlang with `k` phases.
    Erlang {
        /// Phases, at least 1.
        k: i64,
    },
    /// Balanced hyperexponential with squared coefficient of variation `scv >= 1`.
    #[serde(alias = "hyperexp")]
    H2 {
        /// Squared coefficient of variation.
        scv: f64,
    },
    /// Lognormal with squared coefficient of variation `scv`.
    Lognormal {
        /// Squared coefficient of variation.
        scv: f64,
    },
    /// The samples of a trace file (relative to the scenario), scaled to the model's mean.
    Empirical {
        /// Path of the trace.
        file: String,
    },
}

/// A checked `[spmd]` section: one phase of an SPMD program on `p` processors and `d` disks.
#[derive(Clone, Debug, PartialEq)]
pub struct Spmd {
    /// Processors.
    pub p: u32,
    /// Disks.
    pub d: u32,
    /// Synchronisation level: processors per group (divides `p`).
    pub c: u32,
    /// Contention level in `[0, 1]`.
    pub w: f64,
    /// The communication scale `g(p)` at this `p` (0 at `p = 1`).
    pub g: f64,
    /// The dimensions `r` of the data when `g` follows `p` (`g(p) = p^(-(r-1)/r)`); `None`
    /// when `g` was given at this `p`.
    pub r: Option<f64>,
    /// Parallel CPU time of a burst on one processor.
    pub s_par: f64,
    /// Serial CPU time of a burst.
    pub s_ser: f64,
    /// Communication start-up time of a burst.
    pub s0_com: f64,
    /// Communication transfer time at `g = 1`.
    pub sr_com: f64,
    /// I/O start-up time.
    pub s0_io: f64,
    /// I/O transfer time on one disk.
    pub sr_io: f64,
    /// Mean computation bursts per I/O burst.
    pub n_io: f64,
    /// I/O organisation.
    pub io: Io,
    /// CPU burst family.
    pub cpu: Family,
    /// Communication burst family.
    pub com: Family,
    /// I/O burst family.
    pub io_dist: Family,
    /// The explicit interconnect that replaces the `w` submodel (`network = ...`), if any.
    pub network: Option<NetworkForm>,
    /// The phases of a multi-phase program (`[[spmd.phase]]`), in order; empty for one phase.
    pub phases: Vec<Phase>,
}

/// The network form of an `[spmd]` section: a rank program on an explicit interconnect
/// (`program`).
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkForm {
    /// The interconnect's shape.
    pub kind: TopologyKind,
    /// The process grid of the `r`-dimensional block decomposition (x fastest).
    pub dims: Vec<u32>,
    /// Cycles the program runs.
    pub cycles: u32,
    /// Per-hop latency of a link.
    pub latency: f64,
}

/// Most cycles a network-form program may run.
pub const MAX_CYCLES: i64 = 1_000_000;

/// Largest `p` accepted: every processor of a group is a task in the simulation.
pub const MAX_P: i64 = 100_000;

impl Spmd {
    /// Synchronous groups, `p / c`.
    pub fn groups(&self) -> u32 {
        self.p / self.c
    }

    /// The reference time `T1` of one cycle on one processor and one disk (eq. 1).
    pub fn t1(&self) -> f64 {
        formulas::t1(self)
    }

    /// What the section builds: the paper's network (`build::network_tables`), or with
    /// `network = ...` or phases the rank program (`program::program_tables`).
    pub fn tables(&self) -> Tables {
        if self.network.is_some() || !self.phases.is_empty() {
            Tables::Program(program::program_tables(self))
        } else {
            Tables::Network(build::network_tables(self))
        }
    }

    /// The reference time of the whole program on one processor and one disk: `T1` of one
    /// cycle, or with phases the sum over the phases of their cycles times their `T1`.
    pub fn t1_total(&self) -> f64 {
        if self.phases.is_empty() {
            self.t1()
        } else {
            self.phases
                .iter()
                .map(|ph| f64::from(ph.cycles) * ph.model.t1())
                .sum()
        }
    }

    /// The time of one cycle from the run's default metric `measured`: the network's
    /// `class.<c>.cycle` itself, or the network form's makespan over its cycles.
    pub fn cycle_time(&self, measured: f64) -> f64 {
        match &self.network {
            Some(net) => measured / f64::from(net.cycles),
            None => measured,
        }
    }
}

impl Family {
    /// What is wrong with the family's parameters, if anything.
    pub fn problem(&self) -> Option<String> {
        match *self {
            Family::Erlang { k } if !(1..=1000).contains(&k) => {
                Some(format!("erlang needs 1 <= k <= 1000 phases, got {k}"))
            }
            Family::H2 { scv } if !(scv.is_finite() && scv >= 1.0) => {
                Some(format!("h2 needs a finite scv >= 1, got {scv}"))
            }
            Family::Lognormal { scv } if !(scv.is_finite() && scv > 0.0) => {
                Some(format!("lognormal needs a finite scv > 0, got {scv}"))
            }
            _ => None,
        }
    }

    /// The distribution of this family with mean `mean`, as a scenario file writes it
    /// (`{ dist = "exp", mean = 2.0 }`).
    pub fn spec(&self, mean: f64) -> DistSpec {
        match *self {
            Family::Exp => DistSpec::Exp {
                mean: Some(mean),
                rate: None,
            },
            Family::Uniform => DistSpec::Uniform {
                min: None,
                max: None,
                mean: Some(mean),
            },
            Family::Det => DistSpec::Det {
                value: Some(mean),
                mean: None,
            },
            Family::Erlang { k } => DistSpec::Erlang { k, mean },
            Family::H2 { scv } => DistSpec::H2 { mean, scv },
            Family::Lognormal { scv } => DistSpec::Lognormal {
                mean: Some(mean),
                scv: Some(scv),
                mu: None,
                sigma: None,
            },
            Family::Empirical { ref file } => DistSpec::Empirical {
                file: file.clone(),
                mode: None,
                mean: Some(mean),
            },
        }
    }
}

/// The names of the laws [`laws`] computes, in its order.
pub const DERIVED: [&str; 4] = [
    "spmd.speedup",
    "spmd.efficiency",
    "spmd.cost",
    "spmd.overhead",
];

/// What the metrics an `[spmd]` section adds mean ([`DERIVED`] and the per-phase ones).
pub const CATALOGUE: &[Entry] = &[
    Entry {
        pattern: "spmd.speedup",
        unit: Unit::Ratio,
        meaning: "T1 / cycle time (eq. 3); with phases, the whole program's T1 over its makespan",
    },
    Entry {
        pattern: "spmd.efficiency",
        unit: Unit::Ratio,
        meaning: "speedup / p",
    },
    Entry {
        pattern: "spmd.cost",
        unit: Unit::Time,
        meaning: "p x the cycle time (or the makespan, with phases)",
    },
    Entry {
        pattern: "spmd.overhead",
        unit: Unit::Time,
        meaning: "p x the cycle time (or the makespan) - T1",
    },
    Entry {
        pattern: "spmd.<phase>.cycle",
        unit: Unit::Time,
        meaning: "the phase's cycle time: its duration over its cycles",
    },
    Entry {
        pattern: "spmd.<phase>.speedup",
        unit: Unit::Ratio,
        meaning: "the phase's T1 over its cycle time",
    },
];

/// Speedup `t1 / time` (eq. 3), efficiency `s / p`, cost `p time` and overhead `p time - t1`
/// (DESIGN 2.3) of a program of reference time `t1` that takes `time` on `p` processors, named
/// as in [`DERIVED`].
pub fn laws(t1: f64, p: u32, time: f64) -> [(String, f64); 4] {
    let p = f64::from(p);
    let values = [t1 / time, t1 / time / p, p * time, p * time - t1];
    std::array::from_fn(|i| (DERIVED[i].to_owned(), values[i]))
}

/// The laws of one cycle of `spmd` that takes `cycle`: [`laws`] with `T1` of one cycle.
pub fn derived(spmd: &Spmd, cycle: f64) -> [(String, f64); 4] {
    laws(spmd.t1(), spmd.p, cycle)
}

/// The metric of a phase's cycle time, `spmd.<name>.cycle`.
pub fn phase_cycle_metric(name: &str) -> String {
    format!("spmd.{name}.cycle")
}

/// The metric of a phase's speedup, `spmd.<name>.speedup`.
pub fn phase_speedup_metric(name: &str) -> String {
    format!("spmd.{name}.speedup")
}

impl Spmd {
    /// The names of the metrics [`Spmd::derived_metrics`] adds to a run's: the laws
    /// ([`DERIVED`]), and with phases each phase's cycle time and speedup.
    pub fn derived_names(&self) -> Vec<String> {
        let mut names: Vec<String> = DERIVED.map(str::to_owned).into();
        for ph in &self.phases {
            names.push(phase_cycle_metric(&ph.name));
            names.push(phase_speedup_metric(&ph.name));
        }
        names
    }

    /// The metrics computed from one replication's `values`, `default` naming its default
    /// metric: one phase, the laws of its cycle time ([`Spmd::cycle_time`] of `default`); with
    /// phases, the laws of the whole program (`T1` of [`Spmd::t1_total`] over the makespan),
    /// then per phase its cycle time `phase.<name>.max / cycles` (the phase's duration: every
    /// rank starts it together and waits for the others at its end) and speedup `T1 / cycle`.
    /// A missing value gives NaN (the run reports it missing).
    pub fn derived_metrics(&self, values: &[(String, f64)], default: &str) -> Vec<(String, f64)> {
        let value = |name: &str| {
            values
                .iter()
                .find(|(n, _)| n == name)
                .map_or(f64::NAN, |v| v.1)
        };
        if self.phases.is_empty() {
            return derived(self, self.cycle_time(value(default))).into();
        }
        let mut out: Vec<(String, f64)> = laws(self.t1_total(), self.p, value(default)).into();
        for ph in &self.phases {
            let cycle = value(&Subject::Phase(&ph.name).metric(Figure::Max)) / f64::from(ph.cycles);
            out.push((phase_cycle_metric(&ph.name), cycle));
            out.push((phase_speedup_metric(&ph.name), ph.model.t1() / cycle));
        }
        out
    }
}
