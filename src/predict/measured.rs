//! Which prediction to trust: what the project's validation suite measured of every
//! approximation, and the method `analyze` recommends for each metric.
//!
//! `parsim validate --method-errors FILE` (over `validation/`) writes, for every approximation
//! and every kind of metric it predicted (the metric's name with its instances as `*`:
//! `station.*.response`, `program.makespan`), the number of comparisons, the median and the
//! worst `|relative error|` against the simulation (`crate::validate::measured`). The suite's table is
//! `validation/measured/method-errors.toml`, built into parsim; [`annotate`] attaches its line to every
//! approximate prediction and marks, per metric, the recommended prediction: an exact one when
//! there is one, else the approximation with the smallest measured median error (then the
//! smallest worst) among those that apply to the case. A method the suite never measured on
//! such a metric carries nothing and is not recommended.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::Analysis;

/// The suite's table, built in.
const SUITE: &str = include_str!("../../validation/measured/method-errors.toml");

/// The measured error of one method on one kind of metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasuredError {
    /// The method's name: its label before any `; ` (what breaks varies from case to case).
    pub method: String,
    /// The kind of metric: its name with every instance as `*` ([`metric_kind`]).
    pub metric: String,
    /// Comparisons measured: the cases and instances where the method predicted such a metric as an
    /// approximation.
    pub comparisons: u32,
    /// The median `|relative error|`.
    pub median: f64,
    /// The largest `|relative error|`.
    pub worst: f64,
}

/// The `metric` of an entry over every kind of metric the method was compared on.
pub const ALL_METRICS: &str = "*";

/// A table of measured errors, as `parsim validate --method-errors` writes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The parsim version that measured it.
    pub parsim_version: String,
    /// The UTC date of the measurement.
    pub date: String,
    /// The command that wrote it.
    pub command: String,
    /// One entry per method and kind of metric, sorted by both.
    #[serde(rename = "error", default)]
    pub errors: Vec<MeasuredError>,
}

impl Table {
    /// The entry of `method` (a full label) over every kind of metric it was compared on
    /// ([`ALL_METRICS`]), if measured.
    pub fn overall(&self, method: &str) -> Option<&MeasuredError> {
        let method = method_name(method);
        self.errors
            .iter()
            .find(|e| e.method == method && e.metric == ALL_METRICS)
    }

    /// The entry of `method` (a full label) on `metric` (a full name), if measured.
    pub fn find(&self, method: &str, metric: &str) -> Option<&MeasuredError> {
        let (method, kind) = (method_name(method), metric_kind(metric));
        self.errors
            .iter()
            .find(|e| e.method == method && e.metric == kind)
    }
}

/// `table` as the TOML file `parsim validate --method-errors` writes, with a header saying
/// what it is.
pub fn to_toml(table: &Table) -> Result<String, toml::ser::Error> {
    Ok(format!(
        "# The measured error of every approximation over a validation suite, per kind of metric:\n\
         # written by `parsim validate --method-errors` (src/predict/measured.rs), not by hand.\n\
         # Over validation/ it is the table `parsim analyze` shows and recommends methods by.\n{}",
        toml::to_string(table)?
    ))
}

/// The suite's table (empty if the built-in text does not read, which a test rules out).
pub fn suite() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| toml::from_str(SUITE).unwrap_or_default())
}

/// A method label's name: the label before any `; ` (which starts what breaks).
pub fn method_name(label: &str) -> &str {
    label.split("; ").next().unwrap_or(label)
}

/// A metric's kind: its name with the instance segments (the class, station, path, phase,
/// rank or link named) as `*`: `station.cpu.jobs.wait` is `station.*.*.wait`.
pub fn metric_kind(metric: &str) -> String {
    let parts: Vec<&str> = metric.split('.').collect();
    match parts.as_slice() {
        [first, middle @ .., last]
            if !middle.is_empty()
                && matches!(
                    *first,
                    "class" | "station" | "path" | "phase" | "rank" | "link"
                ) =>
        {
            let stars = vec!["*"; middle.len()].join(".");
            format!("{first}.{stars}.{last}")
        }
        _ => metric.to_owned(),
    }
}

/// Attaches the suite's measured error to every approximate prediction of `a` and marks the
/// recommended prediction of each metric (see the module documentation).
pub fn annotate(a: &mut Analysis) {
    annotate_with(a, suite());
}

/// [`annotate`] with `table` in place of the suite's.
pub fn annotate_with(a: &mut Analysis, table: &Table) {
    for p in &mut a.predictions {
        p.measured = (!p.exact)
            .then(|| table.find(&p.method, &p.metric).cloned())
            .flatten();
        p.recommended = false;
    }
    let mut best: BTreeMap<&str, usize> = BTreeMap::new();
    let rank = |p: &super::Prediction| match (&p.measured, p.exact) {
        (_, true) => Some((0.0, 0.0)),
        (Some(m), false) => Some((m.median, m.worst)),
        (None, false) => None,
    };
    for (i, p) in a.predictions.iter().enumerate() {
        let Some(mine) = rank(p) else { continue };
        match best.get(p.metric.as_str()) {
            Some(&j) if rank(&a.predictions[j]).is_some_and(|theirs| theirs <= mine) => {}
            _ => {
                best.insert(p.metric.as_str(), i);
            }
        }
    }
    let chosen: Vec<usize> = best.into_values().collect();
    for i in chosen {
        a.predictions[i].recommended = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::Prediction;

    #[test]
    fn the_suite_table_reads() {
        assert!(toml::from_str::<Table>(SUITE).is_ok());
        assert!(!suite().errors.is_empty());
    }

    #[test]
    fn metric_kinds_star_the_instances() {
        assert_eq!(metric_kind("program.makespan"), "program.makespan");
        assert_eq!(metric_kind("station.cpu.response"), "station.*.response");
        assert_eq!(metric_kind("station.cpu.jobs.wait"), "station.*.*.wait");
        assert_eq!(metric_kind("ranks.waiting.mean"), "ranks.waiting.mean");
        assert_eq!(metric_kind("link.x0y1-x1y1.delay"), "link.*.delay");
        assert_eq!(metric_kind("phase.solve.max"), "phase.*.max");
    }

    fn prediction(metric: &str, method: &str, exact: bool) -> Prediction {
        Prediction {
            metric: metric.to_owned(),
            value: 1.0,
            method: method.to_owned(),
            exact,
            measured: None,
            recommended: false,
        }
    }

    fn measured(method: &str, median: f64, worst: f64) -> MeasuredError {
        MeasuredError {
            method: method.to_owned(),
            metric: "program.makespan".to_owned(),
            comparisons: 3,
            median,
            worst,
        }
    }

    #[test]
    fn the_best_measured_approximation_is_recommended_unless_one_is_exact() {
        let table = Table {
            errors: vec![measured("a", 0.05, 0.4), measured("b", 0.02, 0.1)],
            ..Table::default()
        };
        let mut a = Analysis {
            predictions: vec![
                prediction("program.makespan", "a; approximation: x", false),
                prediction("program.makespan", "b; approximation: y", false),
                prediction("program.makespan", "c; approximation: z", false),
            ],
            ..Analysis::default()
        };
        annotate_with(&mut a, &table);
        let marks: Vec<bool> = a.predictions.iter().map(|p| p.recommended).collect();
        assert_eq!(marks, [false, true, false]);
        assert_eq!(a.predictions[1].measured.as_ref().unwrap().median, 0.02);
        assert!(a.predictions[2].measured.is_none());
        a.predictions
            .push(prediction("program.makespan", "a", true));
        annotate_with(&mut a, &table);
        let marks: Vec<bool> = a.predictions.iter().map(|p| p.recommended).collect();
        assert_eq!(marks, [false, false, false, true]);
        assert!(a.predictions[3].measured.is_none());
    }
}
