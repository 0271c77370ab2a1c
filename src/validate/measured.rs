//! The measured error of every approximation a validation compared, per method and kind of
//! metric: what `parsim validate --method-errors` writes, and over `validation/` the table
//! `parsim analyze` shows beside each approximation ([`crate::predict::measured`]).

use std::collections::BTreeMap;

use crate::predict::measured::{ALL_METRICS, MeasuredError, Table, method_name, metric_kind};
use crate::validate::{Comparison, Verdict};

/// The table of the approximations compared in `rows`, with its provenance: the parsim
/// version, today's date and the `command` that wrote it.
pub fn table(rows: &[Comparison], command: String) -> Table {
    Table {
        parsim_version: env!("CARGO_PKG_VERSION").to_owned(),
        date: crate::provenance::utc_date(std::time::SystemTime::now()),
        command,
        errors: summarise(rows),
    }
}

/// The measured errors of the approximations compared in `rows` (a validation's report):
/// per method name and kind of metric, and per method over every metric
/// ([`ALL_METRICS`]), over the rows where an approximation was compared with a simulated mean
/// (bounds and exact predictions left out), sorted by method and metric.
pub fn summarise(rows: &[Comparison]) -> Vec<MeasuredError> {
    let mut errors: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for r in rows {
        let compared = matches!(
            r.verdict,
            Verdict::Reported
                | Verdict::WithinTolerance
                | Verdict::OutsideTolerance
                | Verdict::Undecided
        );
        if !compared || r.exact || r.bounds.is_some() || !r.relative_error.is_finite() {
            continue;
        }
        let method = method_name(&r.method).to_owned();
        for kind in [metric_kind(&r.metric), ALL_METRICS.to_owned()] {
            errors
                .entry((method.clone(), kind))
                .or_default()
                .push(r.relative_error.abs());
        }
    }
    errors
        .into_iter()
        .map(|((method, metric), mut e)| {
            e.sort_by(f64::total_cmp);
            let n = e.len();
            let median = if n % 2 == 1 {
                e[n / 2]
            } else {
                (e[n / 2 - 1] + e[n / 2]) / 2.0
            };
            MeasuredError {
                method,
                metric,
                comparisons: n as u32,
                median,
                worst: e[n - 1],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(method: &str, metric: &str, error: f64, verdict: Verdict) -> Comparison {
        Comparison {
            case: "c".to_owned(),
            metric: metric.to_owned(),
            method: method.to_owned(),
            exact: false,
            analytic: 1.0,
            simulated: 1.0,
            half_width_99: 0.0,
            bounds: None,
            relative_error: error,
            relative_error_half_width_99: 0.0,
            verdict,
            replications: 10,
            first_run: None,
            run: None,
        }
    }

    #[test]
    fn errors_are_summarised_per_method_name_and_metric_kind() {
        let rows = [
            row(
                "m; approximation: a",
                "station.x.response",
                -0.1,
                Verdict::Reported,
            ),
            row(
                "m; approximation: b",
                "station.y.response",
                0.3,
                Verdict::Reported,
            ),
            row("m", "station.z.response", 0.2, Verdict::WithinTolerance),
            row("m", "program.makespan", 0.5, Verdict::NotApplicable),
            row("n", "station.x.response", f64::NAN, Verdict::Reported),
        ];
        let found = summarise(&rows);
        // (the method over every metric first: "*" sorts before the names)
        assert_eq!(found.len(), 2);
        for (e, kind) in found.iter().zip([ALL_METRICS, "station.*.response"]) {
            assert_eq!((e.method.as_str(), e.metric.as_str()), ("m", kind));
            assert_eq!(e.comparisons, 3);
            assert!((e.median - 0.2).abs() < 1e-12 && (e.worst - 0.3).abs() < 1e-12);
        }
    }
}
