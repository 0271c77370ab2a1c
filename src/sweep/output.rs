//! A sweep's results and their two forms: a tidy CSV (one row per point, metric and method) and
//! JSON. Both are functions of the results alone, so a merge of shards prints the same bytes as
//! the single run.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::{Layout, PointResult};

/// The columns after the varied keys.
pub const COLUMNS: [&str; 9] = [
    "metric",
    "method",
    "exact",
    "analytic",
    "simulated",
    "half_width_95",
    "replications",
    "relative_error",
    "verdict",
];

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

impl SweepReport {
    /// Writes the tidy CSV: a header, then one record per point and row; empty fields where a
    /// metric has no prediction.
    pub fn write_csv<W: Write>(&self, out: W) -> csv::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        let header: Vec<&str> = self
            .keys
            .iter()
            .map(String::as_str)
            .chain(COLUMNS)
            .collect();
        w.write_record(&header)?;
        let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
        for p in &self.points {
            for r in &p.rows {
                let mut record = p.values.clone();
                record.extend([
                    r.metric.clone(),
                    r.method.clone().unwrap_or_default(),
                    r.exact.map(|e| e.to_string()).unwrap_or_default(),
                    opt(r.analytic),
                    r.simulated.to_string(),
                    r.half_width_95.to_string(),
                    r.replications.to_string(),
                    opt(r.relative_error),
                    r.verdict.map(|v| v.label().to_owned()).unwrap_or_default(),
                ]);
                w.write_record(&record)?;
            }
        }
        w.flush()?;
        Ok(())
    }

    /// Writes the report as pretty JSON, ending with a newline.
    pub fn write_json<W: Write>(&self, mut out: W) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut out, self)?;
        writeln!(out)
    }
}
