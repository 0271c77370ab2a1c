//! A JSON Schema of the scenario file (`parsim schema`), made from the serde shapes under
//! [`super::raw`] by `schemars`, so that an editor that checks TOML against a schema (taplo,
//! Even Better TOML) completes and checks the fields as they are typed.
//!
//! The schema holds the file's shape, as reading it checks it (`super::document`): the
//! sections, their fields and types, the `kind`s and `dist`s; an unknown field is an error, as it
//! is for parsim. What the checks after reading find (values out of range, names that refer to
//! nothing, routing and stability) is not in it.

use schemars::JsonSchema;

use super::raw::program::{RawDisk, RawLogGp, RawMachine, RawProgram, RawTopology};
use super::raw::{RawAnalyze, RawClass, RawPath, RawRoute, RawRun, RawStation, RawValidate};
use crate::models::pipeline::raw::RawPipeline;
use crate::models::spmd::raw::RawSpmd;
use crate::models::training::raw::RawTraining;

/// A whole scenario file as the schema describes it: each top-level section (a scenario file
/// is read section by section, so [`super::raw::RawScenario`] itself is no serde shape).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "parsim scenario",
    description = "A parsim scenario file: a queueing network ([[class]], [[station]], [[route]]), a rank program ([program], [topology] or [machine], [[disk]]), or a model built into one ([spmd], [pipeline], [training])."
)]
#[allow(dead_code)] // read by schemars only
struct ScenarioFile {
    /// A title for reports.
    name: Option<String>,
    /// Free text.
    description: Option<String>,
    /// How to run it.
    run: Option<RawRun>,
    /// How `parsim validate` compares this scenario with its analytic predictions.
    validate: Option<RawValidate>,
    /// How much work the analytic methods may spend.
    analyze: Option<RawAnalyze>,
    /// Job classes.
    class: Option<Vec<RawClass>>,
    /// Stations.
    station: Option<Vec<RawStation>>,
    /// Routing rules.
    route: Option<Vec<RawRoute>>,
    /// Named sums of station responses.
    path: Option<Vec<RawPath>>,
    /// A rank program, instead of classes, stations and routes.
    program: Option<RawProgram>,
    /// Kuntraruk's parallel pipeline, built into a program.
    pipeline: Option<RawPipeline>,
    /// A data-parallel training step, built into a program.
    training: Option<RawTraining>,
    /// The program's interconnect.
    topology: Option<RawTopology>,
    /// The program's message costs from a machine profile, instead of a topology.
    machine: Option<RawMachine>,
    /// The program's LogGP(S) endpoints.
    loggp: Option<RawLogGp>,
    /// The program's disks.
    disk: Option<Vec<RawDisk>>,
    /// An SPMD program of Cremonesi and Gennaro, built into the network.
    spmd: Option<RawSpmd>,
}

/// The names serde also accepts for a `dist` (its `alias`es, which schemars does not read).
const DIST_ALIASES: [(&str, &str); 3] = [
    ("exp", "exponential"),
    ("det", "deterministic"),
    ("h2", "hyperexp"),
];

/// The JSON Schema (draft 2020-12) of a scenario file.
pub fn scenario_schema() -> serde_json::Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(ScenarioFile)).expect("a schema is JSON");
    add_aliases(&mut schema);
    schema
}

/// Lets every `dist` tag also take its alias: `{ "const": "exp" }` becomes
/// `{ "enum": ["exp", "exponential"] }`, wherever a `dist` property is declared.
fn add_aliases(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(dist) = map
                .get_mut("properties")
                .and_then(|p| p.get_mut("dist"))
                .and_then(serde_json::Value::as_object_mut)
                && let Some(name) = dist.get("const").and_then(|c| c.as_str())
                && let Some((_, alias)) = DIST_ALIASES.iter().find(|(n, _)| *n == name)
            {
                let both = serde_json::json!([name, alias]);
                dist.remove("const");
                dist.insert("enum".to_owned(), both);
            }
            for value in map.values_mut() {
                add_aliases(value);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(add_aliases),
        _ => {}
    }
}
