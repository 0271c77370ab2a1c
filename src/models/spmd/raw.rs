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
    #[schemars(with = "schema::Io")]
    pub io: Io,
    /// Distribution of CPU bursts (default exponential).
    #[schemars(with = "Option<schema::Family>")]
    pub cpu: Option<Family>,
    /// Distribution of communication bursts (default exponential).
    #[schemars(with = "Option<schema::Family>")]
    pub com: Option<Family>,
    /// Distribution of I/O bursts (default exponential).
    #[schemars(with = "Option<schema::Family>")]
    pub io_dist: Option<Family>,
    /// An explicit interconnect in place of the `w` submodel: the program form of
    /// the model (`bus`, `full`, `ring`, `mesh`, `torus`, `tree`, `fat_tree`; a `dragonfly`
    /// or `hyperx` is refused: it needs sizes the model does not have).
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
    #[schemars(with = "Option<schema::Family>")]
    pub cpu: Option<Family>,
    /// Communication burst family, in place of the section's.
    #[schemars(with = "Option<schema::Family>")]
    pub com: Option<Family>,
    /// I/O burst family, in place of the section's.
    #[schemars(with = "Option<schema::Family>")]
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

/// Mirrors of the model's laws and I/O organisations, which the scenario's JSON schema is made
/// from (the types themselves read with their own serde rules).
mod schema {
    use schemars::JsonSchema;

    /// A law of the model's times, scaled to the mean the model gives them (read by the
    /// model's own `Family`; this mirror is what the schema is made from).
    #[derive(JsonSchema)]
    #[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
    #[allow(dead_code)] // read by schemars only
    pub(super) enum Family {
        /// Exponential.
        Exp,
        /// Uniform on `[0, 2 mean]`.
        Uniform,
        /// Deterministic.
        Det,
        /// Erlang with `k` phases.
        Erlang {
            /// Phases, at least 1.
            k: i64,
        },
        /// Balanced hyperexponential with squared coefficient of variation `scv >= 1`.
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

    /// How the groups do their I/O (read by the model's own `Io`; this mirror is what the
    /// schema is made from).
    #[derive(JsonSchema)]
    #[serde(rename_all = "kebab-case")]
    #[allow(dead_code)] // read by schemars only
    pub(super) enum Io {
        /// Synchronous I/O: all groups join, one I/O burst, fork again.
        Sio,
        /// Asynchronous I/O to one pool of disks.
        BusAio,
        /// Asynchronous I/O, one disk per cluster of groups.
        CluAio,
    }
}

#[cfg(test)]
mod tests {
    use super::schema::{Family, Io};

    #[test]
    fn the_mirrors_of_the_spmd_types_read_as_the_types_do() {
        use crate::models::spmd::{Family as Real, Io as RealIo};
        let schema = serde_json::to_value(schemars::schema_for!(Family)).unwrap();
        let tags: Vec<String> = schema["oneOf"]
            .as_array()
            .expect("one schema per family")
            .iter()
            .map(|v| {
                v["properties"]["dist"]["const"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(tags.len(), 7);
        for tag in &tags {
            let extra = match tag.as_str() {
                "erlang" => ", k = 2",
                "h2" | "lognormal" => ", scv = 2.0",
                "empirical" => ", file = \"t.txt\"",
                _ => "",
            };
            let text = format!("f = {{ dist = \"{tag}\"{extra} }}");
            #[derive(serde::Deserialize)]
            struct F {
                #[allow(dead_code)]
                f: Real,
            }
            toml::from_str::<F>(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        }
        // documented unit variants come as one `const` each
        let io = serde_json::to_value(schemars::schema_for!(Io)).unwrap();
        let names: Vec<&str> = io["oneOf"]
            .as_array()
            .expect("one schema per organisation")
            .iter()
            .map(|v| v["const"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["sio", "bus-aio", "clu-aio"]);
        for name in names {
            serde_json::from_value::<RealIo>(serde_json::json!(name)).expect(name);
        }
    }
}
