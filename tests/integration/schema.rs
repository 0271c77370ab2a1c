//! `parsim schema`: every bundled scenario is valid against it, and it rejects the structural
//! errors of the malformed corpus in tests/bad/ (unknown sections and fields, wrong types,
//! unknown kinds); the semantic errors (values out of range, names that refer to nothing,
//! routing, stability) are the checks' and pass the schema, as they must for a file an editor
//! is still completing.

use std::path::{Path, PathBuf};

use super::util::{call, root};

/// The corpus files whose error is one of shape, which the schema must reject.
const STRUCTURAL: &[&str] = &[
    "dist_given_as_array.toml",
    "empty_key.toml",
    "missing_route_class.toml",
    "program_unknown_op.toml",
    "shape_and_value_together.toml",
    "topology_unknown_kind.toml",
    "unknown_dist.toml",
    "unknown_section.toml",
    "unknown_station_field.toml",
    "unknown_station_kind.toml",
    "warmup_unknown.toml",
    "wrong_type_servers.toml",
];

/// The corpus files that are not TOML (syntax errors, a key given twice, nesting past the TOML
/// parser's depth limit): no document to check.
const NOT_TOML: &[&str] = &[
    "duplicate_key.toml",
    "station_not_array.toml",
    "syntax_bad_value.toml",
    "syntax_unclosed_table.toml",
    "toml_nested_arrays_100000.toml",
    "toml_nested_tables_100000.toml",
];

/// The schema `parsim schema` prints, compiled.
fn validator() -> jsonschema::Validator {
    let (code, out, err) = call(&["schema"]);
    assert_eq!(code, Some(0), "{err}");
    let schema: serde_json::Value = serde_json::from_str(&out).expect("the schema is JSON");
    assert_eq!(
        schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "a draft the editors read"
    );
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// A TOML file as the JSON an editor checks against the schema (`None`: not TOML).
fn as_json(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let table: toml::Table = toml::from_str(&text).ok()?;
    Some(serde_json::to_value(table).expect("TOML values are JSON values"))
}

/// The `*.toml` files of `dir`, sorted.
fn files(dir: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    found.sort();
    found
}

/// What the validator says is wrong with `json` (empty when valid).
fn errors(v: &jsonschema::Validator, json: &serde_json::Value) -> Vec<String> {
    v.iter_errors(json)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn every_bundled_scenario_is_valid_against_the_schema() {
    let v = validator();
    let mut checked = 0;
    for f in files("scenarios").into_iter().chain(files("validation")) {
        let json = as_json(&f).unwrap_or_else(|| panic!("{} is TOML", f.display()));
        let wrong = errors(&v, &json);
        assert!(wrong.is_empty(), "{}: {wrong:?}", f.display());
        checked += 1;
    }
    assert!(checked > 100, "{checked} files");
}

#[test]
fn the_schema_rejects_the_structural_errors_of_the_bad_corpus() {
    let v = validator();
    let mut semantic = Vec::new();
    let mut mismatches: Vec<String> = Vec::new();
    for f in files("tests/bad") {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let Some(json) = as_json(&f) else {
            assert!(NOT_TOML.contains(&name.as_str()), "{name} is not TOML");
            continue;
        };
        let wrong = errors(&v, &json);
        if STRUCTURAL.contains(&name.as_str()) {
            if wrong.is_empty() {
                mismatches.push(format!("{name}: a structural error the schema missed"));
            }
        } else if wrong.is_empty() {
            // the checks find these; the schema leaves them be
            semantic.push(name);
        } else {
            mismatches.push(format!("{name} (semantic) rejected: {wrong:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(semantic.len() > 50, "{semantic:?}");
}

#[test]
fn the_schema_knows_every_section_and_dist() {
    let (_, out, _) = call(&["schema"]);
    let schema: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sections: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for s in [
        "name",
        "description",
        "run",
        "validate",
        "class",
        "station",
        "route",
        "path",
        "program",
        "pipeline",
        "topology",
        "machine",
        "loggp",
        "disk",
        "spmd",
    ] {
        assert!(sections.contains(&s), "{s} not in {sections:?}");
    }
    assert_eq!(schema["additionalProperties"], false);
    // a dist's alias is accepted as serde accepts it
    let v = jsonschema::validator_for(&schema).unwrap();
    let station = |service: serde_json::Value| serde_json::json!({"station": [{"name": "q", "kind": "fcfs", "service": service}]});
    assert!(v.is_valid(&station(
        serde_json::json!({"dist": "exponential", "mean": 1.0})
    )));
    assert!(v.is_valid(&station(serde_json::json!({"dist": "exp", "mean": 1.0}))));
    assert!(!v.is_valid(&station(serde_json::json!({"dist": "exp", "mena": 1.0}))));
    // a bare number is a fixed time
    assert!(
        v.is_valid(&station(serde_json::json!(0.5))),
        "a bare number"
    );
    assert!(!v.is_valid(&station(serde_json::json!("0.5"))), "a string");
}
