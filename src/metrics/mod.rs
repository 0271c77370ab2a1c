//! What the executors measure, by name: the flat list of named values one replication
//! reports, for the queueing networks ([`network`]) and the rank programs ([`program`]).
//!
//! Names are dotted paths (`class.<c>.response`, `station.<s>.utilisation`,
//! `program.makespan`, `link.<name>.p99`) and are the contract between the measuring side and
//! the analytic side: a prediction names the metric it predicts exactly as a run reports it.
//! `parsim metrics <scenario>` lists a scenario's names.

pub mod catalogue;
pub mod name;
pub mod network;
pub mod program;
pub mod schedule;

/// What is wrong with a name that becomes part of metric names (a station, class, phase or
/// disk), if anything: it may not be empty, or contain `.`, `,`, quotes, white space or control
/// characters.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".to_owned());
    }
    let bad = name
        .chars()
        .find(|c| matches!(c, '.' | ',' | '"' | '\'') || c.is_whitespace() || c.is_control())?;
    let why = match bad {
        '.' => "`.` separates the parts of metric names (station.<name>.response)",
        ',' => "`,` separates CSV fields",
        '"' | '\'' => "quotes would have to be escaped in every output",
        _ => "white space and control characters do not survive tables and CSV",
    };
    Some(format!("contains {bad:?}: {why}"))
}

/// The resolution of a metric's values, relative to the value: the histogram's for percentiles
/// ([`crate::stats::RESOLUTION`]), none for means, rates and averages.
pub fn resolution(name: &str) -> f64 {
    let is_percentile = name
        .rsplit('.')
        .next()
        .is_some_and(|last| crate::stats::PERCENTILES.iter().any(|(p, _)| *p == last));
    if is_percentile {
        crate::stats::RESOLUTION
    } else {
        0.0
    }
}

/// The message for a metric name that is not among `known`: the closest known names as a
/// suggestion (`parsim metrics <scenario>` lists them all).
pub fn unknown_metric(name: &str, known: &[String]) -> String {
    let mut close: Vec<(f64, &String)> = known
        .iter()
        .map(|k| (strsim::normalized_damerau_levenshtein(name, k), k))
        .filter(|(score, _)| *score >= 0.6)
        .collect();
    close.sort_by(|a, b| b.0.total_cmp(&a.0));
    let hint = match close.first() {
        Some((_, best)) => format!("did you mean {best:?}?"),
        None => format!(
            "this scenario reports e.g. {}",
            known[..known.len().min(4)].join(", ")
        ),
    };
    format!("unknown metric {name:?}: {hint} (`parsim metrics <scenario>` lists every name)")
}
