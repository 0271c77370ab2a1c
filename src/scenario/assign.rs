//! Overriding one scenario field by its path (`--set KEY=VALUE`, `sweep --vary`).
//!
//! A key names a field as the file nests it, with array-of-tables elements chosen by their
//! `name` (or, for elements without one, such as routes, by their 0-based index):
//! `class.jobs.population` is the field `population` of the `[[class]]` whose name is `jobs`,
//! `station.disk.service.mean` the `mean` of that station's `service` table, `run.length` a field
//! of `[run]`. An assignment edits the parsed TOML document *before* it is read, so an overridden
//! scenario goes through exactly the checks a file does; a field the file does not write is added
//! (and rejected there if the section has no such field), a missing table such as `[run]` is
//! created.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::rng::derive_seed;

/// A value given on the command line, read as TOML would read it: an integer, a float, a boolean,
/// a quoted string, an array or inline table, or else a bare word taken as a string
/// (`kind=fcfs`).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A string (bare or quoted).
    Str(String),
    /// An array or inline table, as TOML text.
    Toml(String),
}

impl Value {
    /// Reads a command-line value (see [`Value`]).
    pub fn parse(text: &str) -> Result<Value, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("empty value".to_owned());
        }
        let digits = text.replace('_', "");
        if let Ok(i) = digits.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        if text.bytes().any(|b| b.is_ascii_digit())
            && let Ok(f) = digits.parse::<f64>()
        {
            return Ok(Value::Float(f));
        }
        match text {
            "true" => return Ok(Value::Bool(true)),
            "false" => return Ok(Value::Bool(false)),
            _ => {}
        }
        if text.starts_with(['"', '\'', '[', '{']) {
            let parsed = DeValue::parse(text).map_err(|e| e.message().trim().to_owned())?;
            return Ok(match parsed.into_inner() {
                DeValue::String(s) => Value::Str(s.into_owned()),
                _ => Value::Toml(text.to_owned()),
            });
        }
        Ok(Value::Str(text.to_owned()))
    }

    /// A number: an integer when `v` is integral and `integral` allows it, else a float.
    pub fn number(v: f64, integral: bool) -> Value {
        if integral && v.fract() == 0.0 && v.abs() < 2f64.powi(53) {
            Value::Int(v as i64)
        } else {
            Value::Float(v)
        }
    }

    /// The value as TOML text (floats keep a decimal point or an exponent).
    pub fn toml(&self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Float(f) if f.is_nan() => "nan".to_owned(),
            Value::Float(f) if f.is_infinite() => if *f > 0.0 { "inf" } else { "-inf" }.to_owned(),
            Value::Float(f) => format!("{f:?}"),
            Value::Bool(b) => b.to_string(),
            Value::Str(s) => toml::Value::String(s.clone()).to_string(),
            Value::Toml(t) => t.clone(),
        }
    }

    /// The value as a number, if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    /// Numbers as numbers, strings without quotes, anything else as TOML.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => f.write_str(s),
            other => f.write_str(&other.toml()),
        }
    }
}

/// One field override: `key = value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The field's path (see the module documentation).
    pub key: String,
    /// Its new value.
    pub value: Value,
}

impl Assignment {
    /// Reads `KEY=VALUE`.
    pub fn parse(text: &str) -> Result<Assignment, String> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}`: expected KEY=VALUE"))?;
        let key = check_key(key)?;
        let value = Value::parse(value).map_err(|e| format!("{key}: {e}"))?;
        Ok(Assignment { key, value })
    }
}

impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// Checks the shape of a key (dot-separated, no empty part) and returns it trimmed.
pub fn check_key(key: &str) -> Result<String, String> {
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(format!(
            "`{key}` is not a field path (e.g. class.jobs.population, run.length)"
        ));
    }
    Ok(key.to_owned())
}

/// The seed a set of assignments runs under: the master seed itself without assignments, else
/// one derived from the master seed and every assignment (sorted by key, values as TOML), so
/// each point of a sweep draws from its own streams, the same whether it runs alone
/// (`run --set`), in a sweep or in a shard, and whatever the order of the points.
pub fn keyed_seed(master: u64, assignments: &[Assignment]) -> u64 {
    if assignments.is_empty() {
        return master;
    }
    let mut parts: Vec<String> = assignments
        .iter()
        .map(|a| format!("{}={}", a.key, a.value.toml()))
        .collect();
    parts.sort();
    derive_seed(master, &parts.join("\n"))
}

/// Refuses two assignments to the same key.
pub fn check_distinct(assignments: &[Assignment]) -> Result<(), String> {
    for (i, a) in assignments.iter().enumerate() {
        if assignments[..i].iter().any(|b| b.key == a.key) {
            return Err(format!("{} is set twice", a.key));
        }
    }
    Ok(())
}

/// Sets the field `key` of the document `doc` (which spans `span`) to the TOML text `value`; the
/// error says why the key names no field. The new value takes the span of the value it replaces
/// (or of its table), so later problems with it point at the line that wrote the field.
pub(super) fn apply<'i>(
    doc: &mut DeTable<'i>,
    span: Range<usize>,
    key: &str,
    value: &'i str,
) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    let mut table = doc;
    let mut table_span = span;
    let mut i = 0;
    while i + 1 < parts.len() {
        let part = parts[i];
        let place = parts[..=i].join(".");
        if table.get_mut(part).is_none() {
            let created = Spanned::new(table_span.clone(), DeValue::Table(DeTable::default()));
            table.insert(
                Spanned::new(table_span.clone(), Cow::Owned(part.to_owned())),
                created,
            );
        }
        let entry = table.get_mut(part).expect("present or just created");
        table_span = entry.span();
        match entry.get_mut() {
            DeValue::Table(t) => {
                table = t;
                i += 1;
            }
            DeValue::Array(items) => {
                let which = parts[i + 1];
                let element = element(items, which).map_err(|names| {
                    format!("there is no [[{place}]] named `{which}`; the names are {names}")
                })?;
                table_span = element.span();
                let DeValue::Table(t) = element.get_mut() else {
                    return Err(format!("`{place}` is not an array of tables"));
                };
                if i + 2 == parts.len() {
                    return Err(format!(
                        "`{}` names a whole [[{place}]] element; add the field to set",
                        key
                    ));
                }
                table = t;
                i += 2;
            }
            other => {
                return Err(format!("`{place}` is a {}, not a table", other.type_str()));
            }
        }
    }
    let field = parts[parts.len() - 1];
    let place = match table.get_mut(field) {
        Some(old) if old.get_ref().is_array() && is_array_of_tables(old.get_ref()) => {
            return Err(format!(
                "`{}` is an array of tables; name an element and a field ({}.<name>.<field>)",
                key, key
            ));
        }
        Some(old) => old.span(),
        None => table_span,
    };
    let value = DeValue::parse(value).map_err(|e| e.message().trim().to_owned())?;
    table.insert(
        Spanned::new(place.clone(), Cow::Owned(field.to_owned())),
        Spanned::new(place, value.into_inner()),
    );
    Ok(())
}

fn is_array_of_tables(v: &DeValue<'_>) -> bool {
    v.as_array()
        .is_some_and(|items| items.iter().all(|e| e.get_ref().is_table()))
}

/// The element of an array of tables named `which` (or at index `which` when no element has
/// that name); else the names there are, for the message.
fn element<'a, 'i>(
    items: &'a mut [Spanned<DeValue<'i>>],
    which: &str,
) -> Result<&'a mut Spanned<DeValue<'i>>, String> {
    let name_of = |e: &Spanned<DeValue<'_>>| {
        e.get_ref()
            .get("name")
            .and_then(|n| n.get_ref().as_str().map(str::to_owned))
    };
    let by_name = items
        .iter()
        .position(|e| name_of(e).as_deref() == Some(which));
    let at = by_name.or_else(|| which.parse::<usize>().ok().filter(|&i| i < items.len()));
    match at {
        Some(i) => Ok(&mut items[i]),
        None => {
            let names: Vec<String> = items
                .iter()
                .filter_map(|e| name_of(e).map(|n| format!("`{n}`")))
                .collect();
            Err(if names.is_empty() {
                format!(
                    "none (choose by index, 0 to {})",
                    items.len().saturating_sub(1)
                )
            } else {
                names.join(", ")
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_toml_would() {
        assert_eq!(Value::parse("8"), Ok(Value::Int(8)));
        assert_eq!(Value::parse("0.50"), Ok(Value::Float(0.5)));
        assert_eq!(Value::parse("1e-3"), Ok(Value::Float(1e-3)));
        assert_eq!(Value::parse("fcfs"), Ok(Value::Str("fcfs".into())));
        assert_eq!(Value::parse("\"a b\""), Ok(Value::Str("a b".into())));
        assert_eq!(Value::parse("true"), Ok(Value::Bool(true)));
        assert!(Value::parse("[1, 2").is_err());
        assert_eq!(Value::Float(1.0).toml(), "1.0");
        assert_eq!(Value::Float(1e300).toml(), "1e300");
        let quoted = Value::Str("x\"y".into());
        assert_eq!(Value::parse(&quoted.toml()), Ok(quoted));
    }

    /// The document `text` after `key=value`, as TOML values by path, or the error.
    fn after(text: &str, key: &str, value: &str) -> Result<toml::Table, String> {
        let (mut doc, errors) = DeTable::parse_recoverable(text);
        assert!(errors.is_empty(), "{errors:?}");
        let span = doc.span();
        let value = Value::parse(value)?.toml();
        apply(doc.get_mut(), span.clone(), key, &value)?;
        let whole = Spanned::new(span, DeValue::Table(doc.into_inner()));
        Ok(<toml::Table as serde::Deserialize>::deserialize(
            serde::de::IntoDeserializer::into_deserializer(whole),
        )
        .expect("a table"))
    }

    #[test]
    fn keys_reach_fields_of_tables_and_named_or_numbered_elements() {
        let text =
            "[[class]]\nname = \"jobs\"\npopulation = 2\n[[route]]\nfrom = \"a\"\nto = \"b\"\n";
        let t = after(text, "class.jobs.population", "5").unwrap();
        assert_eq!(t["class"][0]["population"].as_integer(), Some(5));
        let t = after(text, "route.0.to", "c").unwrap();
        assert_eq!(t["route"][0]["to"].as_str(), Some("c"));
        let t = after(text, "run.length", "100").unwrap();
        assert_eq!(t["run"]["length"].as_integer(), Some(100), "[run] created");
        let t = after(text, "class.jobs.service.mean", "0.5").unwrap();
        assert_eq!(t["class"][0]["service"]["mean"].as_float(), Some(0.5));
        assert!(
            after(text, "class.job.population", "5")
                .unwrap_err()
                .contains("`jobs`")
        );
        assert!(
            after(text, "route.3.to", "c")
                .unwrap_err()
                .contains("0 to 0")
        );
        assert!(
            after(text, "class.jobs.name.x", "c")
                .unwrap_err()
                .contains("not a table")
        );
    }

    #[test]
    fn seeds_depend_on_the_assignments_not_their_order() {
        let a = Assignment::parse("a=1").unwrap();
        let b = Assignment::parse("b=2").unwrap();
        assert_eq!(keyed_seed(7, &[]), 7);
        assert_eq!(
            keyed_seed(7, &[a.clone(), b.clone()]),
            keyed_seed(7, &[b.clone(), a.clone()])
        );
        let alone = std::slice::from_ref(&a);
        assert_ne!(keyed_seed(7, alone), keyed_seed(7, &[b]));
        assert_ne!(keyed_seed(7, alone), keyed_seed(8, alone));
    }
}
