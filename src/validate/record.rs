//! A [`Comparison`] as JSON and CSV write it: one flat record whose field names are the
//! vocabulary every output of `parsim validate` shares (the table's and the Markdown report's
//! column headers are the same words). Both formats go through serde, so their field names are
//! the same by construction, and the CSV is quoted by the `csv` crate.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::{Comparison, FirstRun, RunIdentity, Verdict};
use crate::report::csv_io_error;

/// One comparison, flat. Numbers a row does not have are empty in CSV and `null` in JSON: an
/// exact value or approximation has no bounds, a bound has no `analytic` value, a comparison
/// that was not rerun has no `first_*` fields. Read back, a `null` simulated value or error is
/// NaN (JSON writes every non-finite number as `null`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRecord {
    /// Case (scenario) name.
    pub case: String,
    /// The case's file (empty for a row that ran nothing).
    pub file: Option<String>,
    /// Metric compared.
    pub metric: String,
    /// Analytic method.
    pub method: String,
    /// Whether the method is exact.
    pub exact: bool,
    /// The analytic value (none for a bound).
    pub analytic: Option<f64>,
    /// A bound's lower side.
    pub lower_bound: Option<f64>,
    /// A bound's upper side.
    pub upper_bound: Option<f64>,
    /// Simulated mean.
    #[serde(deserialize_with = "nan_if_null")]
    pub simulated: f64,
    /// Half-width of its 99% interval.
    #[serde(deserialize_with = "nan_if_null")]
    pub half_width_99: f64,
    /// Signed relative error (see [`Comparison::relative_error`]).
    #[serde(deserialize_with = "nan_if_null")]
    pub relative_error: f64,
    /// Half-width of the relative error's 99% interval.
    #[serde(deserialize_with = "nan_if_null")]
    pub relative_error_half_width_99: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Replications used.
    pub replications: u64,
    /// For a comparison that was rerun: the first experiment's mean.
    pub first_simulated: Option<f64>,
    /// The first experiment's 99% half-width.
    pub first_half_width_99: Option<f64>,
    /// The first experiment's replications.
    pub first_replications: Option<u64>,
    /// The first experiment's run id.
    pub first_run_id: Option<String>,
    /// The parsim version that ran the experiment.
    pub parsim_version: Option<String>,
    /// The hash of the scenario's text.
    pub scenario_hash: Option<String>,
    /// The experiment's run id (the key of `--per-replication`'s rows).
    pub run_id: Option<String>,
    /// The date it ran (UTC).
    pub date: Option<String>,
    /// Its master seed.
    pub seed: Option<u64>,
    /// Observations measured per replication.
    pub length: Option<u64>,
    /// Observations discarded as warm-up per replication.
    pub warmup: Option<u64>,
}

/// Reads a number that JSON may have written as `null` (NaN, infinities) as NaN.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl From<Comparison> for ComparisonRecord {
    fn from(c: Comparison) -> ComparisonRecord {
        ComparisonRecord {
            analytic: c.bounds.is_none().then_some(c.analytic),
            lower_bound: c.bounds.map(|[lo, _]| lo),
            upper_bound: c.bounds.map(|[_, hi]| hi),
            first_simulated: c.first_run.as_ref().map(|f| f.simulated),
            first_half_width_99: c.first_run.as_ref().map(|f| f.half_width_99),
            first_replications: c.first_run.as_ref().map(|f| f.replications),
            first_run_id: c.first_run.and_then(|f| f.run_id),
            file: c.run.as_ref().map(|r| r.file.clone()),
            parsim_version: c.run.as_ref().map(|r| r.parsim_version.clone()),
            scenario_hash: c.run.as_ref().map(|r| r.scenario_hash.clone()),
            date: c.run.as_ref().map(|r| r.date.clone()),
            seed: c.run.as_ref().map(|r| r.seed),
            length: c.run.as_ref().map(|r| r.length),
            warmup: c.run.as_ref().map(|r| r.warmup),
            run_id: c.run.map(|r| r.run_id),
            case: c.case,
            metric: c.metric,
            method: c.method,
            exact: c.exact,
            simulated: c.simulated,
            half_width_99: c.half_width_99,
            relative_error: c.relative_error,
            relative_error_half_width_99: c.relative_error_half_width_99,
            verdict: c.verdict,
            replications: c.replications,
        }
    }
}

impl From<ComparisonRecord> for Comparison {
    fn from(r: ComparisonRecord) -> Comparison {
        let bounds = r.lower_bound.zip(r.upper_bound).map(|(lo, hi)| [lo, hi]);
        let first_run = match (r.first_simulated, r.first_replications) {
            (Some(simulated), Some(replications)) => Some(FirstRun {
                simulated,
                half_width_99: r.first_half_width_99.unwrap_or(f64::NAN),
                replications,
                run_id: r.first_run_id,
            }),
            _ => None,
        };
        let run = match (
            r.file,
            r.parsim_version,
            r.scenario_hash,
            r.run_id,
            r.date,
            r.seed,
            r.length,
            r.warmup,
        ) {
            (
                Some(file),
                Some(parsim_version),
                Some(scenario_hash),
                Some(run_id),
                Some(date),
                Some(seed),
                Some(length),
                Some(warmup),
            ) => Some(RunIdentity {
                file,
                parsim_version,
                scenario_hash,
                run_id,
                date,
                seed,
                length,
                warmup,
            }),
            _ => None,
        };
        Comparison {
            run,
            analytic: match bounds {
                Some([lo, hi]) => 0.5 * (lo + hi),
                None => r.analytic.unwrap_or(f64::NAN),
            },
            bounds,
            first_run,
            case: r.case,
            metric: r.metric,
            method: r.method,
            exact: r.exact,
            simulated: r.simulated,
            half_width_99: r.half_width_99,
            relative_error: r.relative_error,
            relative_error_half_width_99: r.relative_error_half_width_99,
            verdict: r.verdict,
            replications: r.replications,
        }
    }
}

/// Writes `rows` as CSV with a header of [`ComparisonRecord`]'s field names. Errors are I/O
/// errors, so that a closed pipe is recognised as one.
pub fn write_csv<W: Write>(rows: &[Comparison], out: W) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for r in rows {
        w.serialize(ComparisonRecord::from(r.clone()))
            .map_err(csv_io_error)?;
    }
    w.flush()
}

/// Writes `rows` as a pretty JSON array of [`ComparisonRecord`]s, ending with a newline.
pub fn write_json<W: Write>(rows: &[Comparison], mut out: W) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut out, rows)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rerun approximation and a bound, with names that need quoting in CSV.
    fn awkward_rows() -> Vec<Comparison> {
        let row = Comparison {
            case: "Case \"one\", with a comma".into(),
            metric: "station.q,\"x\".response".into(),
            method: "Kingman, \"GI/G/1\"\napproximation".into(),
            exact: false,
            analytic: 2.5,
            simulated: 2.4,
            half_width_99: 0.05,
            bounds: None,
            relative_error: 0.1 / 2.4,
            relative_error_half_width_99: 0.02,
            verdict: Verdict::WithinTolerance,
            replications: 12,
            first_run: Some(FirstRun {
                simulated: 2.0,
                half_width_99: 0.04,
                replications: 10,
                run_id: Some("00000000000000aa".into()),
            }),
            run: Some(RunIdentity {
                file: "validation/a \"b\", c.toml".into(),
                parsim_version: "0.1.0".into(),
                scenario_hash: "0123456789abcdef".into(),
                run_id: "fedcba9876543210".into(),
                date: "2026-11-23".into(),
                seed: 7,
                length: 5000,
                warmup: 120,
            }),
        };
        let bound = Comparison {
            analytic: 3.0,
            bounds: Some([2.0, 4.0]),
            verdict: Verdict::WithinBounds,
            first_run: None,
            ..row.clone()
        };
        vec![row, bound]
    }

    #[test]
    fn csv_round_trips_names_with_commas_quotes_and_newlines() {
        let rows = awkward_rows();
        let mut out = Vec::new();
        write_csv(&rows, &mut out).expect("written");
        let back: Vec<ComparisonRecord> = csv::Reader::from_reader(out.as_slice())
            .deserialize()
            .collect::<Result<_, _>>()
            .expect("read back");
        let expected: Vec<ComparisonRecord> = rows.into_iter().map(Into::into).collect();
        assert_eq!(back, expected);
        assert_eq!(back[0].case, "Case \"one\", with a comma");
        assert_eq!(back[1].analytic, None, "a bound has no analytic value");
        assert_eq!(back[1].lower_bound, Some(2.0));
    }

    #[test]
    fn json_and_csv_use_the_same_field_names() {
        let rows = awkward_rows();
        let mut csv_text = Vec::new();
        write_csv(&rows, &mut csv_text).expect("written");
        let header: Vec<String> = csv::Reader::from_reader(csv_text.as_slice())
            .headers()
            .expect("a header")
            .iter()
            .map(str::to_owned)
            .collect();
        let mut json_text = Vec::new();
        write_json(&rows, &mut json_text).expect("written");
        let json: serde_json::Value = serde_json::from_slice(&json_text).expect("JSON");
        for row in json.as_array().expect("an array") {
            let keys: Vec<&String> = row.as_object().expect("an object").keys().collect();
            let mut sorted_header: Vec<&String> = header.iter().collect();
            sorted_header.sort();
            let mut sorted_keys = keys.clone();
            sorted_keys.sort();
            assert_eq!(sorted_keys, sorted_header);
        }
        assert!(header.iter().any(|h| h == "half_width_99"));
        // the verdict word is the same in both
        assert!(String::from_utf8_lossy(&csv_text).contains(",within_bounds,"));
        assert_eq!(json[1]["verdict"], "within_bounds");
    }

    /// A pipe whose reader has gone.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_closed_pipe_is_reported_as_one_so_that_parsim_ends_quietly() {
        let rows = awkward_rows();
        let csv = write_csv(&rows, ClosedPipe).expect_err("the pipe is closed");
        assert_eq!(csv.kind(), std::io::ErrorKind::BrokenPipe);
        let json = write_json(&rows, ClosedPipe).expect_err("the pipe is closed");
        assert_eq!(json.kind(), std::io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn json_round_trips_through_the_record() {
        let rows = awkward_rows();
        let mut text = Vec::new();
        write_json(&rows, &mut text).expect("written");
        let back: Vec<Comparison> = serde_json::from_slice(&text).expect("read back");
        let as_records = |rows: Vec<Comparison>| -> Vec<ComparisonRecord> {
            rows.into_iter().map(Into::into).collect()
        };
        assert_eq!(as_records(back.clone()), as_records(rows));
        assert_eq!(back[1].analytic, 3.0, "a bound's midpoint is restored");
    }
}
