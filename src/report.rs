//! Presenting an experiment: a readable table, JSON and CSV. No statistics are computed here
//! beyond asking the experiment for its intervals.

use std::fmt::Write as _;

use serde::Serialize;

use crate::provenance::Provenance;
use crate::replicate::{Experiment, Options, WarmupReport};
use crate::scenario::Scenario;
use crate::stats::ConfidenceInterval;

/// Confidence level of reported intervals.
pub const LEVEL: f64 = 0.95;

/// One metric's summary.
#[derive(Clone, Debug, Serialize)]
#[serde(into = "MetricRecord")]
pub struct MetricRow {
    /// Metric name.
    pub name: String,
    /// Its mean and 95% interval.
    pub ci: ConfidenceInterval,
}

/// A [`MetricRow`] as JSON and CSV write it: the field names shared by every output.
#[derive(Clone, Debug, Serialize)]
pub struct MetricRecord {
    /// Metric name.
    pub metric: String,
    /// Mean over replications.
    pub mean: f64,
    /// Half-width of the 95% Student-t interval over replication values.
    pub half_width_95: f64,
    /// Replications the interval rests on.
    pub replications: u64,
}

impl From<MetricRow> for MetricRecord {
    fn from(m: MetricRow) -> MetricRecord {
        MetricRecord {
            metric: m.name,
            mean: m.ci.mean,
            half_width_95: m.ci.half_width,
            replications: m.ci.replications,
        }
    }
}

/// The report of one scenario's experiment.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Scenario title.
    pub scenario: String,
    /// Its file.
    pub file: String,
    /// Version, scenario hash, run id and date.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// Master seed, as the user set it (`--seed`, `run.seed`, or `--set run.seed=...`).
    pub seed: u64,
    /// With `--set`: the seed the streams came from, derived from `seed` and the assignments
    /// ([`crate::scenario::assign::keyed_seed`]) so that `run --set` gives a sweep point's
    /// numbers; absent when the streams come from `seed` itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_key: Option<u64>,
    /// Replications run.
    pub replications: usize,
    /// Observations measured per replication.
    pub length: u64,
    /// The warm-up used.
    pub warmup: WarmupReport,
    /// Events over all replications.
    pub events: u64,
    /// The precision target and whether it was met.
    pub precision: Option<PrecisionReport>,
    /// Every metric.
    pub metrics: Vec<MetricRow>,
    /// A rank program (each replication one execution to completion), not a queueing network.
    pub program: bool,
}

/// Whether the sequential rule reached its target.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct PrecisionReport {
    /// The metrics it applies to (each must meet it).
    pub metrics: Vec<String>,
    /// Target relative half-width.
    pub target: f64,
    /// Whether it was reached within the budget.
    pub met: bool,
}

impl RunReport {
    /// Summarises an experiment.
    pub fn new(sc: &Scenario, opt: &Options, ex: &Experiment) -> RunReport {
        let file = sc.path.display().to_string();
        let program = sc.runs_to_completion();
        let provenance = Provenance::new(&sc.text_hash, opt);
        RunReport::of(sc.name.clone(), file, provenance, program, opt, ex)
    }

    /// Summarises an experiment of the scenario titled `scenario` read from `file`, identified
    /// by `provenance` (a rank program when `program`), e.g. one merged from shards.
    pub fn of(
        scenario: String,
        file: String,
        provenance: Provenance,
        program: bool,
        opt: &Options,
        ex: &Experiment,
    ) -> RunReport {
        RunReport {
            scenario,
            file,
            provenance,
            seed: opt.seed,
            stream_key: None,
            replications: ex.replications.len(),
            length: opt.length,
            warmup: ex.warmup,
            events: ex.events,
            precision: opt.precision.map(|target| PrecisionReport {
                metrics: opt.metrics.clone(),
                target,
                met: ex.precision_met.unwrap_or(false),
            }),
            program,
            metrics: (0..ex.metrics.len())
                .map(|i| MetricRow {
                    name: ex.metrics[i].clone(),
                    ci: ex.interval(i, LEVEL),
                })
                .collect(),
        }
    }

    /// The report of a run whose streams came from `opt.seed` derived from the master seed
    /// `master` and `--set` assignments: `seed` shows `master`, `stream_key` the derived seed
    /// (none when they are the same).
    pub fn keyed_from(mut self, master: u64) -> RunReport {
        if self.seed != master {
            self.stream_key = Some(self.seed);
            self.seed = master;
        }
        self
    }

    /// The seed as the table shows it: the master seed, and the derived stream key if any.
    fn seed_text(&self) -> String {
        match self.stream_key {
            Some(key) => format!("seed {} (streams keyed by it and --set: {key})", self.seed),
            None => format!("seed {}", self.seed),
        }
    }

    /// A plain-text table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# {} ({})",
            printable(&self.scenario, false),
            printable(&self.file, false)
        );
        let p = &self.provenance;
        let _ = writeln!(
            s,
            "parsim {}, scenario_hash {}, run_id {}, date {}",
            p.parsim_version, p.scenario_hash, p.run_id, p.date
        );
        let cut = if self.warmup.at_limit {
            " (MSER minimum at its limit: lengthen the run)"
        } else {
            ""
        };
        if self.program {
            let _ = writeln!(
                s,
                "{}, {} replications, each one execution of the program to completion, {} events",
                self.seed_text(),
                self.replications,
                self.events
            );
        } else {
            let _ = writeln!(
                s,
                "{}, {} replications x {} observations, warm-up cut {} observations ({}){cut}, {} events",
                self.seed_text(),
                self.replications,
                self.length,
                self.warmup.observations,
                self.warmup.method,
                self.events
            );
        }
        if let Some((name, u)) = self.busiest_link() {
            let _ = writeln!(s, "busiest link: {name} (utilisation {})", num(u));
        }
        if let Some(p) = &self.precision {
            let _ = writeln!(
                s,
                "precision target {} on {}: {}",
                p.target,
                p.metrics.join(", "),
                if p.met {
                    "met"
                } else {
                    "NOT met within the replication budget"
                }
            );
        }
        let width = self
            .metrics
            .iter()
            .map(|m| m.name.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(
            s,
            "{:<width$}  {:>14}  {:>14}  {:>8}  {:>5}",
            "metric", "mean", "half_width_95", "rel", "reps"
        );
        let shown = self.shown_links();
        for m in &self.metrics {
            if let Some(link) = link_of(&m.name)
                && !shown.contains(&link)
            {
                continue;
            }
            let _ = writeln!(
                s,
                "{:<width$}  {:>14}  {:>14}  {:>8}  {:>5}",
                m.name,
                num(m.ci.mean),
                num(m.ci.half_width),
                pct(m.ci.relative_half_width()),
                m.ci.replications
            );
        }
        let links = self.links_by_utilisation().len();
        if links > shown.len() {
            let _ = writeln!(
                s,
                "({} more links not shown: --json or --csv lists every one)",
                links - shown.len()
            );
        }
        s
    }

    /// Per-link utilisations (program runs), busiest first.
    fn links_by_utilisation(&self) -> Vec<(&str, f64)> {
        let mut links: Vec<(&str, f64)> = self
            .metrics
            .iter()
            .filter_map(|m| {
                let link = link_of(&m.name)?;
                m.name
                    .ends_with(".utilisation")
                    .then_some((link, m.ci.mean))
            })
            .collect();
        links.sort_by(|a, b| b.1.total_cmp(&a.1));
        links
    }

    /// The busiest link by mean utilisation, if the run has per-link figures.
    pub fn busiest_link(&self) -> Option<(&str, f64)> {
        self.links_by_utilisation().first().copied()
    }

    /// The links whose figures the table prints: every one up to 16, else the 10 busiest.
    fn shown_links(&self) -> Vec<&str> {
        let links = self.links_by_utilisation();
        let keep = if links.len() <= 16 { links.len() } else { 10 };
        links.into_iter().take(keep).map(|(l, _)| l).collect()
    }

    /// Writes one CSV record per metric (fields [`CSV_HEADER`]) through the `csv` crate.
    pub fn write_csv<W: std::io::Write>(&self, w: &mut csv::Writer<W>) -> csv::Result<()> {
        let p = &self.provenance;
        for m in &self.metrics {
            w.write_record([
                self.scenario.as_str(),
                &self.file,
                &p.scenario_hash,
                &p.run_id,
                p.parsim_version,
                &p.date,
                &self.seed.to_string(),
                &self.replications.to_string(),
                &self.length.to_string(),
                &self.warmup.observations.to_string(),
                &m.name,
                &m.ci.mean.to_string(),
                &m.ci.half_width.to_string(),
            ])?;
        }
        Ok(())
    }
}

/// The columns of `--per-replication` (`run` and `validate`): the experiment's run id, the
/// replication's index, the metric and its value in that replication.
pub const PER_REPLICATION_HEADER: [&str; 4] = ["run_id", "replication", "metric", "value"];

/// Starts the `--per-replication` file at `path` with its header ([`PER_REPLICATION_HEADER`]):
/// written to a temporary file ([`crate::files::Output`]) that [`finish_per_replication`] puts
/// in place, and refused when `path` is an input.
pub fn per_replication_writer(
    path: &std::path::Path,
) -> Result<csv::Writer<crate::files::Output>, crate::files::FileError> {
    let out = crate::files::Output::create(path)?;
    let mut w = csv::Writer::from_writer(out);
    w.write_record(PER_REPLICATION_HEADER)
        .map_err(|e| crate::files::FileError::writing(path, csv_io_error(e)))?;
    Ok(w)
}

/// Puts the `--per-replication` file in place once every replication is written.
pub fn finish_per_replication(
    mut w: csv::Writer<crate::files::Output>,
) -> Result<(), crate::files::FileError> {
    let path = w.get_ref().path().to_owned();
    let failed = |e| crate::files::FileError::writing(&path, e);
    w.flush().map_err(failed)?;
    w.into_inner()
        .map_err(|e| failed(std::io::Error::new(e.error().kind(), e.error().to_string())))?
        .commit()
}

/// Writes one record per replication and metric of `ex` (fields [`PER_REPLICATION_HEADER`]), in
/// replication order. The reported mean of a metric is the mean of its values.
pub fn write_replications<W: std::io::Write>(
    w: &mut csv::Writer<W>,
    run_id: &str,
    ex: &Experiment,
) -> csv::Result<()> {
    for (r, row) in ex.replications.iter().enumerate() {
        for (name, value) in ex.metrics.iter().zip(row) {
            w.write_record([run_id, &r.to_string(), name, &value.to_string()])?;
        }
    }
    Ok(())
}

/// The link of a per-link metric name (`link.<name>.<figure>`).
fn link_of(metric: &str) -> Option<&str> {
    let rest = metric.strip_prefix("link.")?;
    Some(&rest[..rest.rfind('.')?])
}

/// The CSV header matching [`RunReport::write_csv`]: the run's identity on every row, then the
/// metric, its mean and its 95% half-width.
pub const CSV_HEADER: [&str; 13] = [
    "scenario",
    "file",
    "scenario_hash",
    "run_id",
    "parsim_version",
    "date",
    "seed",
    "replications",
    "length",
    "warmup",
    "metric",
    "mean",
    "half_width_95",
];

/// One approximation of a metric against the exact value: (metric, value, exact, relative
/// error).
type Against<'a> = (&'a str, f64, f64, f64);

/// Where a metric has an exact prediction and approximations beside it, each approximation's
/// error against the exact value: one line per approximation (its method's name up to the
/// first `(` or `;`), its first metric and its worst. `predictions` are (method, exact, metric,
/// value), in the order to report.
pub fn against_exact<'a>(
    predictions: impl Iterator<Item = (&'a str, bool, &'a str, f64)> + Clone,
) -> Vec<String> {
    let short = |method: &str| -> String {
        let head = method.split(';').next().unwrap_or(method);
        head.split(" (").next().unwrap_or(head).trim().to_owned()
    };
    // per approximation (short name, in order of appearance): its comparisons
    let mut per_method: Vec<(String, Vec<Against>)> = Vec::new();
    for (method, _, metric, value) in predictions.clone().filter(|p| !p.1) {
        let Some((_, _, _, exact)) = predictions
            .clone()
            .find(|e| e.1 && e.2 == metric && e.3 != 0.0)
        else {
            continue;
        };
        let name = short(method);
        let entry = (metric, value, exact, value / exact - 1.0);
        match per_method.iter_mut().find(|(n, _)| *n == name) {
            Some((_, list)) => list.push(entry),
            None => per_method.push((name, vec![entry])),
        }
    }
    per_method
        .into_iter()
        .map(|(name, list)| {
            let (metric, value, exact, error) = list[0];
            let mut line = format!(
                "  {name}: {metric} {} against {} ({})",
                num(value),
                num(exact),
                signed_percent(error)
            );
            if list.len() > 1 {
                let worst = list
                    .iter()
                    .max_by(|x, y| x.3.abs().total_cmp(&y.3.abs()))
                    .expect("not empty");
                line.push_str(&format!(
                    "; worst of {} metrics {} ({})",
                    list.len(),
                    signed_percent(worst.3),
                    worst.0
                ));
            }
            line
        })
        .collect()
}

/// A signed relative error as a percentage with one decimal.
fn signed_percent(x: f64) -> String {
    format!("{:+.1}%", 100.0 * x)
}

/// Formats a number with 6 significant digits, or `-` when undefined.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".to_owned()
    } else if v != 0.0 && (v.abs() >= 1e6 || v.abs() < 1e-3) {
        format!("{v:.5e}")
    } else {
        let digits = (5 - v.abs().log10().floor().max(-3.0) as i32).clamp(0, 8) as usize;
        format!("{v:.digits$}")
    }
}

/// `text` fit for a terminal: its control characters (an escape sequence would drive the
/// terminal) written as Rust escapes (`\u{1b}`), but new lines and tabs where `lines` says so.
pub fn printable(text: &str, lines: bool) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && !(lines && matches!(c, '\n' | '\t'));
    if !text.contains(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| {
            if bad(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Formats a ratio as a percentage.
pub fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.2}%", 100.0 * v)
    } else {
        "-".to_owned()
    }
}

/// A CSV error as the I/O error it wraps (the `From` the `csv` crate provides hides its kind),
/// so that a closed pipe is recognised as one; any other CSV error as an I/O error of its own.
pub fn csv_io_error(e: csv::Error) -> std::io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => io,
        other => std::io::Error::other(format!("writing CSV: {other:?}")),
    }
}
