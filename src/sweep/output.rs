//! A sweep's results and their two forms: a tidy CSV (one row per point, metric and method) and
//! JSON. Both are functions of the results alone, so a merge of shards prints the same bytes as
//! the single run.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::{Layout, PointResult};
use crate::report::csv_io_error;

/// The columns after the varied keys, named as `parsim validate`'s
/// ([`crate::validate::record::ComparisonRecord`]) except for the interval's level: a sweep
/// reports the 95% interval `parsim run` reports.
pub const COLUMNS: [&str; 11] = [
    "metric",
    "method",
    "exact",
    "analytic",
    "lower_bound",
    "upper_bound",
    "simulated",
    "half_width_95",
    "replications",
    "relative_error",
    "verdict",
];

/// The verdict column of a point not run because it is unstable.
pub const UNSTABLE: &str = "unstable";

/// A number as the CSV writes it: NaN (no value: nothing simulated, or `0 / 0`) as an empty
/// field, infinities as `inf` and `-inf`, anything else as Rust prints it (the shortest text that
/// reads back to the same number). The JSON writes the same values: NaN as `null`, infinities
/// as the strings `"inf"` and `"-inf"` ([`number`]), so a merge of shards prints the same bytes
/// as the single run.
pub fn number_text(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        v.to_string()
    }
}

/// Serde for an `f64` of a sweep's rows: a finite number as a JSON number, NaN as `null`, an
/// infinity as `"inf"` or `"-inf"` (JSON has no infinities, and `serde_json` would write them
/// as `null` and fail to read them back).
pub mod number {
    use serde::{Deserialize, Deserializer, Serializer};

    /// A number, as the JSON holds it.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Number(f64),
        Text(String),
    }

    /// Writes `v`.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_nan() {
            s.serialize_none()
        } else if v.is_infinite() {
            s.serialize_str(if *v > 0.0 { "inf" } else { "-inf" })
        } else {
            s.serialize_f64(*v)
        }
    }

    /// Reads what [`serialize`] wrote.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Option::<Written>::deserialize(d)? {
            None => Ok(f64::NAN),
            Some(Written::Number(v)) => Ok(v),
            Some(Written::Text(t)) => match t.as_str() {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                "NaN" => Ok(f64::NAN),
                other => Err(serde::de::Error::custom(format!(
                    "expected a number, `inf` or `-inf`, got {other:?}"
                ))),
            },
        }
    }
}

/// Serde for an `Option<f64>` of a sweep's rows, as [`number`] writes an `f64`; `None` and NaN
/// are both `null` (and both an empty CSV field).
pub mod optional_number {
    use serde::{Deserializer, Serializer};

    /// Writes `v`.
    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        super::number::serialize(&v.unwrap_or(f64::NAN), s)
    }

    /// Reads what [`serialize`] wrote: `null` as `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let v = super::number::deserialize(d)?;
        Ok((!v.is_nan()).then_some(v))
    }
}

/// A whole sweep's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// The scenario's title.
    pub scenario: String,
    /// Its file.
    pub file: String,
    /// The varied keys, in axis order.
    pub keys: Vec<String>,
    /// The assignments every point shares (`KEY=VALUE`).
    pub fixed: Vec<String>,
    /// Grid or zip.
    pub layout: Layout,
    /// Every point, in order.
    pub points: Vec<PointResult>,
}

/// The relative half-width of a point's 95% interval from which [`SweepReport::warnings`]
/// calls it wide: 10% of the mean or more on a metric that some method predicts.
pub const WIDE: f64 = 0.10;

/// How many points a warning names before it counts the rest.
const NAMED: usize = 5;

impl SweepReport {
    /// A point named by its values: `class.jobs.population=12, run.seed=2`.
    pub fn describe(&self, point: &PointResult) -> String {
        let parts: Vec<String> = self
            .keys
            .iter()
            .zip(&point.values)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        parts.join(", ")
    }

    /// The points that missed their precision target (`run.precision`) within the replication
    /// budget.
    pub fn imprecise(&self) -> Vec<&PointResult> {
        self.points
            .iter()
            .filter(|p| p.precision.as_ref().is_some_and(|pr| !pr.met))
            .collect()
    }

    /// What the sweep's results cannot be trusted for, one statement a line (empty when
    /// nothing): the points that missed their precision target, then the points whose 95%
    /// interval on some predicted metric is [`WIDE`] (its widest metric named), each with what
    /// to do. `allow_imprecise` leaves out the note that a missed target makes the exit code 1.
    pub fn warnings(&self, allow_imprecise: bool) -> Vec<String> {
        let mut out = Vec::new();
        let imprecise = self.imprecise();
        for p in imprecise.iter().take(NAMED) {
            let pr = p
                .precision
                .as_ref()
                .expect("imprecise points have a target");
            let replications = p.rows.first().map_or(0, |r| r.replications);
            out.push(format!(
                "{}: at {}: precision target {} on {} NOT met within {replications} replications",
                self.file,
                self.describe(p),
                pr.target,
                pr.metrics.join(", ")
            ));
        }
        if !imprecise.is_empty() {
            out.push(format!(
                "{} of {} points missed their precision target{}: raise run.max_replications or \
                 run.length (--set run.max_replications=N, --set run.length=N){}",
                imprecise.len(),
                self.points.len(),
                if imprecise.len() > NAMED {
                    format!(" ({NAMED} named above)")
                } else {
                    String::new()
                },
                if allow_imprecise {
                    ""
                } else {
                    "; --allow-imprecise accepts the results with exit 0"
                }
            ));
        }
        let wide: Vec<(&PointResult, &super::Row)> = self
            .points
            .iter()
            .filter_map(|p| {
                let relative = |r: &&super::Row| r.half_width_95 / r.simulated.abs();
                p.rows
                    .iter()
                    .filter(|r| r.method.is_some() && r.simulated != 0.0)
                    .filter(|r| relative(r) >= WIDE)
                    .max_by(|a, b| relative(a).total_cmp(&relative(b)))
                    .map(|r| (p, r))
            })
            .collect();
        if !wide.is_empty() {
            let named: Vec<String> = wide
                .iter()
                .take(NAMED)
                .map(|(p, r)| {
                    format!(
                        "{}: {} {} +- {} ({:.1}%)",
                        self.describe(p),
                        r.metric,
                        crate::report::num(r.simulated),
                        crate::report::num(r.half_width_95),
                        100.0 * r.half_width_95 / r.simulated.abs()
                    )
                })
                .collect();
            out.push(format!(
                "{}: {} of {} points have a 95% interval of +-{:.0}% or more of the mean on a \
                 predicted metric, whose verdicts say little: \
                 {}{}; add replications or length (--set run.replications=N, --set \
                 run.length=N) or set a target (--set run.precision=0.02)",
                self.file,
                wide.len(),
                self.points.len(),
                100.0 * WIDE,
                named.join("; "),
                if wide.len() > NAMED {
                    format!("; and {} more", wide.len() - NAMED)
                } else {
                    String::new()
                }
            ));
        }
        out
    }
    /// Writes the tidy CSV: a header, then one record per point and row; empty fields where a
    /// metric has no prediction, and a bound's row has its sides instead of an analytic value.
    /// Errors are I/O errors, so that a closed pipe is recognised as one.
    pub fn write_csv<W: Write>(&self, out: W) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        let header: Vec<&str> = self
            .keys
            .iter()
            .map(String::as_str)
            .chain(COLUMNS)
            .collect();
        w.write_record(&header).map_err(csv_io_error)?;
        let opt = |v: Option<f64>| v.map(number_text).unwrap_or_default();
        for p in &self.points {
            if let Some(why) = &p.unstable {
                // one record: the point's values, `unstable` as its verdict, the reason as its
                // method
                let mut record = p.values.clone();
                record.extend(COLUMNS.iter().map(|c| match *c {
                    "method" => why.clone(),
                    "replications" => "0".to_owned(),
                    "verdict" => UNSTABLE.to_owned(),
                    _ => String::new(),
                }));
                w.write_record(&record).map_err(csv_io_error)?;
                continue;
            }
            for r in &p.rows {
                let mut record = p.values.clone();
                record.extend([
                    r.metric.clone(),
                    r.method.clone().unwrap_or_default(),
                    r.exact.map(|e| e.to_string()).unwrap_or_default(),
                    opt(r.analytic),
                    opt(r.lower_bound),
                    opt(r.upper_bound),
                    number_text(r.simulated),
                    number_text(r.half_width_95),
                    r.replications.to_string(),
                    opt(r.relative_error),
                    r.verdict.map(|v| v.label().to_owned()).unwrap_or_default(),
                ]);
                w.write_record(&record).map_err(csv_io_error)?;
            }
        }
        w.flush()
    }

    /// Writes the report as pretty JSON, ending with a newline.
    pub fn write_json<W: Write>(&self, mut out: W) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut out, self)?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Row;
    use crate::validate::Verdict;

    #[test]
    fn the_csv_speaks_validates_vocabulary_and_round_trips_awkward_names() {
        let bound = Row {
            metric: "class.jobs.cycle".into(),
            method: Some("asymptotic bounds, \"ABA\"".into()),
            exact: Some(false),
            analytic: None,
            lower_bound: Some(1.0),
            upper_bound: Some(2.0),
            simulated: 1.4,
            half_width_95: 0.1,
            replications: 5,
            relative_error: Some(0.0),
            verdict: Some(Verdict::WithinBounds),
        };
        let report = SweepReport {
            scenario: "s".into(),
            file: "s.toml".into(),
            keys: vec!["class.jobs.population".into()],
            fixed: Vec::new(),
            layout: Layout::Grid,
            points: vec![PointResult {
                index: 0,
                values: vec!["4".into()],
                seed: 1,
                events: 10,
                rows: vec![bound],
                unstable: None,
                precision: None,
            }],
        };
        let mut out = Vec::new();
        report.write_csv(&mut out).expect("written");
        let mut reader = csv::Reader::from_reader(out.as_slice());
        let header = reader.headers().expect("a header").clone();
        let record = reader.records().next().expect("one row").expect("readable");
        let field = |name: &str| &record[header.iter().position(|h| h == name).expect(name)];
        assert_eq!(field("method"), "asymptotic bounds, \"ABA\"");
        assert_eq!(field("analytic"), "", "a bound has no analytic value");
        assert_eq!((field("lower_bound"), field("upper_bound")), ("1", "2"));
        assert_eq!(field("verdict"), "within_bounds");
        // the JSON names the same fields
        let json = serde_json::to_value(&report.points[0].rows[0]).expect("serialised");
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        for column in COLUMNS {
            assert!(
                keys.contains(&column),
                "{column} not in the JSON's {keys:?}"
            );
        }
        // every column but the interval's (95% here, 99% in validate) is one of validate's
        let validate_fields = csv_header_of_validate();
        for column in COLUMNS.iter().filter(|c| **c != "half_width_95") {
            assert!(validate_fields.contains(&(*column).to_owned()), "{column}");
        }
    }

    /// The header `parsim validate --csv` writes.
    fn csv_header_of_validate() -> Vec<String> {
        let row = crate::validate::Comparison {
            case: "c".into(),
            metric: "m".into(),
            method: "x".into(),
            exact: true,
            analytic: 1.0,
            simulated: 1.0,
            half_width_99: 0.0,
            bounds: None,
            relative_error: 0.0,
            relative_error_half_width_99: 0.0,
            verdict: Verdict::Agree,
            replications: 2,
            first_run: None,
            run: None,
        };
        let mut out = Vec::new();
        crate::validate::record::write_csv(&[row], &mut out).expect("written");
        csv::Reader::from_reader(out.as_slice())
            .headers()
            .expect("a header")
            .iter()
            .map(str::to_owned)
            .collect()
    }
}
