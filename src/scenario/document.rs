//! The first stage of loading: TOML text to the raw scenario, one section and one array element
//! at a time, so that every shape problem (an unknown field, a wrong type, a missing field, an
//! unknown `kind`) is reported with its field path, and one broken element does not hide the
//! problems of the others.
//!
//! The text is parsed into toml's spanned document (syntax errors stop here: what follows a
//! syntax error cannot be trusted), then each top-level section, and each element of an array of
//! tables (`[[station]]`), is deserialized on its own through `serde_path_to_error`, which names
//! the field that failed.

use serde::de::{DeserializeOwned, IntoDeserializer};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::assign::{self, Assignment};
use super::raw::program::{RawDisk, RawLogGp, RawMachine, RawProgram, RawTopology};
use super::raw::{
    Element, RawAnalyze, RawClass, RawPath, RawRoute, RawRun, RawScenario, RawStation, RawValidate,
};
use crate::models::pipeline::raw::RawPipeline;
use crate::models::spmd::raw::RawSpmd;
use crate::models::training::raw::RawTraining;
use crate::problem::Problem;

/// How `serde_path_to_error` names the inner value of a `toml::Spanned` field in a path.
const SPAN_WRAPPER: &str = "$__serde_spanned_private_value.";

/// The top-level sections a scenario may have, for the message about an unknown one.
const SECTIONS: &[&str] = &[
    "name",
    "description",
    "run",
    "validate",
    "analyze",
    "class",
    "station",
    "route",
    "path",
    "program",
    "pipeline",
    "training",
    "topology",
    "machine",
    "loggp",
    "disk",
    "spmd",
];

/// Parses `text` into a raw scenario, with every shape problem found, after setting the fields
/// `assignments` name ([`super::assign`]). Syntax errors and keys that name no field are
/// returned alone (`None`).
pub(super) fn read(text: &str, assignments: &[Assignment]) -> (Option<RawScenario>, Vec<Problem>) {
    let values: Vec<String> = assignments.iter().map(|a| a.value.toml()).collect();
    let (mut doc, errors) = DeTable::parse_recoverable(text);
    if !errors.is_empty() && looks_like_goal(text) {
        return (
            None,
            vec![Problem::new(
                Some(0),
                "",
                "reads as a GOAL schedule (it begins with num_ranks), and parsim reads GOAL schedules from files whose names end in .goal: rename it, or name it in a scenario ([program] goal = \"...\" with [loggp])",
            )],
        );
    }
    if !errors.is_empty() {
        let found = errors
            .into_iter()
            .map(|e| {
                let at = e.span().map(|s| s.start);
                let mut message = e.message().trim().to_owned();
                let key = e
                    .span()
                    .and_then(|s| text.get(s))
                    .filter(|k| is_bare_key(k));
                if let Some(k) = key
                    && message == "duplicate key"
                {
                    message = format!("duplicate key `{k}`: a key may be given once per table");
                }
                let mut path = at
                    .filter(|&o| !in_header(text, o))
                    .map(|o| table_at(text, o))
                    .unwrap_or_default();
                if let Some(k) = key {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                }
                Problem::new(at, path, message)
            })
            .collect();
        return (None, found);
    }
    let mut found = Vec::new();
    let span = doc.span();
    for (a, value) in assignments.iter().zip(&values) {
        if let Err(why) = assign::apply(doc.get_mut(), span.clone(), &a.key, value) {
            found.push(Problem::new(None, a.key.clone(), why));
        }
    }
    if !found.is_empty() {
        return (None, found);
    }
    let mut raw = RawScenario::default();
    for (key, value) in doc.into_inner() {
        let at = key.span().start;
        let key = key.into_inner();
        raw.written.push(key.to_string());
        match key.as_ref() {
            "name" => raw.name = one(value, "name", &mut found).map(Spanned::into_inner),
            "description" => {
                raw.description = one(value, "description", &mut found).map(Spanned::into_inner)
            }
            "run" => raw.run = one::<RawRun>(value, "run", &mut found),
            "validate" => raw.validate = one::<RawValidate>(value, "validate", &mut found),
            "analyze" => raw.analyze = one::<RawAnalyze>(value, "analyze", &mut found),
            "class" => raw.classes = many::<RawClass>(value, "class", &mut found),
            "station" => raw.stations = many::<RawStation>(value, "station", &mut found),
            "route" => raw.routes = many::<RawRoute>(value, "route", &mut found),
            "path" => raw.paths = many::<RawPath>(value, "path", &mut found),
            "program" => raw.program = one::<RawProgram>(value, "program", &mut found),
            "pipeline" => raw.pipeline = one::<RawPipeline>(value, "pipeline", &mut found),
            "training" => raw.training = one::<RawTraining>(value, "training", &mut found),
            "topology" => raw.topology = one::<RawTopology>(value, "topology", &mut found),
            "machine" => raw.machine = one::<RawMachine>(value, "machine", &mut found),
            "loggp" => raw.loggp = one::<RawLogGp>(value, "loggp", &mut found),
            "disk" => raw.disks = many::<RawDisk>(value, "disk", &mut found),
            "spmd" => raw.spmd = one::<RawSpmd>(value, "spmd", &mut found),
            other => found.push(Problem::new(
                Some(at),
                // an empty key (`"" = 1`) still gets a path the message can show
                if other.is_empty() {
                    "\"\"".to_owned()
                } else {
                    other.to_owned()
                },
                format!(
                    "unknown section `{other}`; a scenario has {}",
                    SECTIONS
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
    raw.shape_problems = found.len();
    (Some(raw), found)
}

/// Whether `text` begins, past blank lines and comments, with GOAL's `num_ranks`.
fn looks_like_goal(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("num_ranks"))
}

/// serde's type names (`expected i64`) in the words of a scenario file.
fn plain_types(message: &str) -> String {
    // an integer TOML cannot hold (its integers are 64-bit and signed)
    let whole = if message.contains("invalid value: integer") {
        "expected a whole number of at most 9223372036854775807 (2^63 - 1, TOML's largest)"
    } else {
        "expected a whole number"
    };
    message
        .replace("expected i64", whole)
        .replace("expected u64", "expected a whole number >= 0")
        .replace("expected f64", "expected a number")
}

/// Whether `s` is written like a bare TOML key.
fn is_bare_key(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `offset` lies on a table header line (`[run]`, `[[station]]`).
fn in_header(text: &str, offset: usize) -> bool {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    text[start..].trim_start().starts_with('[')
}

/// The path of the table a syntax error at `offset` is in (`station[2]`, `run`), from the table
/// headers written above it: a syntax error stops the parse, so the document cannot say.
fn table_at(text: &str, offset: usize) -> String {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut current = String::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if pos > offset {
            break;
        }
        pos += line.len();
        let t = line.trim();
        if let Some(name) = t.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = name.trim();
            let n = counts.entry(name).or_insert(0);
            current = format!("{name}[{n}]");
            *n += 1;
        } else if let Some(name) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
            current = name.trim().to_owned();
        }
    }
    current
}

/// Deserializes one value at `path`, recording its problem (with the path of the field that
/// failed) in `found`.
fn one<T: DeserializeOwned>(
    value: Spanned<DeValue<'_>>,
    path: &str,
    found: &mut Vec<Problem>,
) -> Option<Spanned<T>> {
    let (v, broken) = repaired(value, path, found);
    if broken { None } else { v }
}

/// Deserializes a table, and when a field has the wrong shape, reports it, removes it and tries
/// again, so that the other fields of the same table are still checked: returns the value read
/// without the broken fields (if it could be read) and whether any field was broken.
fn repaired<T: DeserializeOwned>(
    mut value: Spanned<DeValue<'_>>,
    path: &str,
    found: &mut Vec<Problem>,
) -> (Option<Spanned<T>>, bool) {
    let span = value.span();
    let mut removed: Vec<String> = Vec::new();
    loop {
        let attempt = value.clone();
        let e = match serde_path_to_error::deserialize::<_, T>(attempt.into_deserializer()) {
            Ok(v) => return (Some(Spanned::new(span.clone(), v)), !removed.is_empty()),
            Err(e) => e,
        };
        let inner = e.inner();
        let message = plain_types(inner.message().trim());
        // serde's path names toml's span wrapper as a field of its own
        let sub = e
            .path()
            .to_string()
            .replace(SPAN_WRAPPER, "")
            // (before an index, as for an array given where a table is expected, no dot either)
            .replace(&format!("{}[", SPAN_WRAPPER.trim_end_matches('.')), "[")
            .replace(".[", "[");
        // (at the end of the path, as for a field missing from a spanned table, it has no dot)
        let sub = sub
            .strip_suffix(SPAN_WRAPPER.trim_end_matches('.'))
            .map_or(sub.as_str(), |s| s.trim_end_matches('.'))
            .to_owned();
        let mut field = path.to_owned();
        if !sub.is_empty() && sub != "?" && sub != "." {
            field.push('.');
            field.push_str(&sub);
        }
        // serde names a missing field in the message, not in the path
        let named = quoted_field(&message).map(str::to_owned);
        let named = named.as_deref();
        if let Some(name) = named
            && !field.ends_with(&format!(".{name}"))
        {
            field.push('.');
            field.push_str(name);
        }
        let missing_because_removed = message.starts_with("missing field")
            && named.is_some_and(|n| removed.iter().any(|r| r == n));
        let unknown = message.starts_with("unknown field");
        if !missing_because_removed {
            found.push(Problem::new(
                Some(inner.span().unwrap_or(span.clone()).start),
                field,
                message,
            ));
        }
        // the top-level key of the table that failed, if it can be taken out
        let key = sub
            .split(['.', '['])
            .next()
            .filter(|k| !k.is_empty() && *k != "?")
            .or(named.filter(|_| unknown))
            .map(str::to_owned);
        let removable = key.filter(|k| match value.get_mut() {
            DeValue::Table(t) => t.remove(k.as_str()).is_some(),
            _ => false,
        });
        match removable {
            Some(k) => removed.push(k),
            None => return (None, true),
        }
    }
}

/// The field named by serde's "unknown field `x`" and "missing field `x`" messages.
fn quoted_field(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("missing field `"))?;
    rest.split('`').next()
}

/// Deserializes an array of tables element by element (`path[i]`).
fn many<T: DeserializeOwned>(
    value: Spanned<DeValue<'_>>,
    path: &str,
    found: &mut Vec<Problem>,
) -> Vec<Element<T>> {
    let span = value.span();
    let DeValue::Array(items) = value.into_inner() else {
        found.push(Problem::new(
            Some(span.start),
            path.to_owned(),
            format!("must be an array of tables (`[[{path}]]`)"),
        ));
        return Vec::new();
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let span = item.span();
            let table = item.get_ref().as_table();
            let name = table
                .and_then(|t| t.get("name"))
                .and_then(|n| n.get_ref().as_str())
                .map(str::to_owned);
            let keys = table
                .map(|t| {
                    t.iter()
                        .map(|(k, _)| (k.get_ref().to_string(), k.span().start))
                        .collect()
                })
                .unwrap_or_default();
            let (value, broken) = repaired::<T>(item, &format!("{path}[{i}]"), found);
            Element {
                span,
                name,
                value: value.map(Spanned::into_inner),
                broken,
                keys,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<(String, String)> {
        let (_, found) = read(text, &[]);
        found.into_iter().map(|p| (p.path, p.message)).collect()
    }

    #[test]
    fn shape_errors_name_the_field() {
        let text = r#"
[[class]]
name = "jobs"

[[station]]
name = "q"
kind = "fcfs"
speed = 3

[[station]]
name = "r"
kind = "teleport"

[[station]]
name = "s"
kind = "fcfs"
servers = "two"

[[route]]
class = "jobs"
"#;
        let found = problems(text);
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "route[0].from",
                "station[0].speed",
                "station[1].kind",
                "station[2].servers"
            ],
            "{found:?}"
        );
        assert!(found[2].1.contains("teleport"), "{found:?}");
    }

    #[test]
    fn a_broken_element_keeps_its_name_and_place() {
        let (raw, _) = read(
            "[[station]]\nname = \"a\"\nkind = \"x\"\n[[station]]\nname = \"b\"\nkind = \"sink\"\n",
            &[],
        );
        let raw = raw.unwrap();
        assert_eq!(raw.stations.len(), 2);
        assert_eq!(raw.stations[0].name.as_deref(), Some("a"));
        assert!(raw.stations[0].value.is_none() && raw.stations[1].value.is_some());
        assert!(raw.stations[0].broken && !raw.stations[1].broken);
        assert_eq!(raw.shape_problems, 1);
    }

    #[test]
    fn a_table_with_a_bad_field_is_still_checked_for_the_rest() {
        let (raw, found) = read(
            "[[station]]\nname = \"q\"\nkind = \"fcfs\"\nspeed = 3\nservers = \"x\"\n",
            &[],
        );
        let raw = raw.unwrap();
        let mut paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
        paths.sort_unstable();
        assert_eq!(paths, ["station[0].servers", "station[0].speed"]);
        let s = raw.stations[0].value.as_ref().unwrap();
        assert!(raw.stations[0].broken && s.servers.is_none());
    }

    #[test]
    fn unknown_sections_and_syntax_errors() {
        let found = problems("[rn]\nlength = 3\n");
        assert_eq!(found[0].0, "rn");
        let (raw, found) = read("[[class]\nname = 1", &[]);
        assert!(raw.is_none() && !found.is_empty());
    }
}
