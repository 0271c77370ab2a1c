//! `[spmd]` as written: plain serde structs, checked for nothing but shape.

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use crate::models::spmd::{Family, Io};
use crate::topology::TopologyKind;

/// `[spmd]`: the parameters of Cremonesi and Gennaro's Table 1, one phase.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSpmd {
    /// Processors `p`.
    pub p: i64,
    /// Disks `d` (default 1).
    pub d: Option<i64>,
    /// Synchronisation level `c`: processors per synchronous group (default 1).
    pub c: Option<i64>,
    /// Contention level `w` in `[0, 1]` (0 fully connected, 1 one bus).
    pub w: f64,
    /// Dimensions `r` of the data, for `g(p) = p^(-(r-1)/r)`; or give `g`.
    pub r: Option<f64>,
    /// The communication scale `g(p)` at this `p`, instead of `r`.
    pub g: Option<f64>,
    /// Parallel CPU time of one computation burst on one processor.
    #[serde(rename = "S_par")]
    pub s_par: f64,
    /// Serial CPU time of one computation burst.
    #[serde(rename = "S_ser")]
    pub s_ser: f64,
    /// Communication start-up time of one burst.
    #[serde(rename = "S0_com")]
    pub s0_com: f64,
    /// Communication transfer time at `g = 1`.
    #[serde(rename = "SR_com")]
    pub sr_com: f64,
    /// I/O start-up time of one I/O burst.
    #[serde(rename = "S0_io")]
    pub s0_io: f64,
    /// I/O transfer time of one I/O burst on one disk.
    #[serde(rename = "SR_io")]
    pub sr_io: f64,
    /// Mean computation bursts per I/O burst (`1 / p_io`).
    pub n_io: f64,
    /// I/O organisation: `sio`, `bus-aio` or `clu-aio`.
    #[schemars(with = "crate::scenario::schema::Io")]
    pub io: Io,
    /// Distribution of CPU bursts (default exponential).
    #[schemars(with = "Option<crate::scenario::schema::Family>")]
    pub cpu: Option<Family>,
    /// Distribution of communication bursts (default exponential).
    #[schemars(with = "Option<crate::scenario::schema::Family>")]
    pub com: Option<Family>,
    /// Distribution of I/O bursts (default exponential).
    #[schemars(with = "Option<crate::scenario::schema::Family>")]
    pub io_dist: Option<Family>,
    /// An explicit interconnect in place of the `w` submodel: the program form of
    /// [`super::program`] (`bus`, `full`, `ring`, `mesh`, `torus`, `tree`, `fat_tree`).
    pub network: Option<TopologyKind>,
    /// Network form: cycles the program runs (default 20).
    pub cycles: Option<i64>,
    /// Network form: per-hop latency of a link (default 0).
    pub latency: Option<f64>,
    /// The phases of a multi-phase program (`[[spmd.phase]]`), in the order they run; none
    /// for a one-phase section.
    #[serde(default, rename = "phase")]
    #[schemars(with = "Vec<RawPhase>")]
    pub phases: Vec<Spanned<RawPhase>>,
}

/// `[[spmd.phase]]`: one phase of a multi-phase program, its name, its cycles and the
/// parameters in which it differs from the section's.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPhase {
    /// The phase's name, in its metrics (`phase.<name>.max`, `spmd.<name>.speedup`).
    pub name: String,
    /// Cycles the phase runs.
    pub cycles: i64,
    /// Contention level, in place of the section's.
    pub w: Option<f64>,
    /// Dimensions of the data, in place of the section's `r` or `g`.
    pub r: Option<f64>,
    /// `g(p)` at this `p`, in place of the section's `r` or `g`.
    pub g: Option<f64>,
    /// Parallel CPU time of a burst, in place of the section's.
    #[serde(rename = "S_par")]
    pub s_par: Option<f64>,
    /// Serial CPU time of a burst, in place of the section's.
    #[serde(rename = "S_ser")]
    pub s_ser: Option<f64>,
    /// Communication start-up time, in place of the section's.
    #[serde(rename = "S0_com")]
    pub s0_com: Option<f64>,
    /// Communication transfer time at `g = 1`, in place of the section's.
    #[serde(rename = "SR_com")]
    pub sr_com: Option<f64>,
    /// I/O start-up time, in place of the section's.
    #[serde(rename = "S0_io")]
    pub s0_io: Option<f64>,
    /// I/O transfer time on one disk, in place of the section's.
    #[serde(rename = "SR_io")]
    pub sr_io: Option<f64>,
    /// Computation bursts per I/O burst, in place of the section's.
    pub n_io: Option<f64>,
    /// CPU burst family, in place of the section's.
    #[schemars(with = "Option<crate::scenario::schema::Family>")]
    pub cpu: Option<Family>,
    /// Communication burst family, in place of the section's.
    #[schemars(with = "Option<crate::scenario::schema::Family>")]
    pub com: Option<Family>,
    /// I/O burst family, in place of the section's.
    #[schemars(with = "Option<crate::scenario::schema::Family>")]
    pub io_dist: Option<Family>,
    /// Machine-wide: refused in a phase (read only to say so).
    #[schemars(skip)]
    pub p: Option<toml::Value>,
    /// Machine-wide: refused in a phase.
    #[schemars(skip)]
    pub d: Option<toml::Value>,
    /// Machine-wide: refused in a phase.
    #[schemars(skip)]
    pub c: Option<toml::Value>,
    /// Machine-wide: refused in a phase.
    #[schemars(skip)]
    pub io: Option<toml::Value>,
    /// Machine-wide: refused in a phase.
    #[schemars(skip)]
    pub network: Option<toml::Value>,
    /// Machine-wide: refused in a phase.
    #[schemars(skip)]
    pub latency: Option<toml::Value>,
}

impl RawPhase {
    /// The machine-wide fields the phase gives (each a problem).
    pub fn machine_wide(&self) -> Vec<&'static str> {
        [
            ("p", self.p.is_some()),
            ("d", self.d.is_some()),
            ("c", self.c.is_some()),
            ("io", self.io.is_some()),
            ("network", self.network.is_some()),
            ("latency", self.latency.is_some()),
        ]
        .into_iter()
        .filter_map(|(f, given)| given.then_some(f))
        .collect()
    }
}
