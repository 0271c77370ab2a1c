//! `parsim validate`'s table for a terminal: no line longer than [`WIDTH`] characters. Each
//! case's name is printed once above its rows and each method once above the metrics it
//! predicts; the columns are named by the fields of [`super::record::ComparisonRecord`] and the
//! verdicts are the words JSON and CSV write. A metric name too long for its column gets a line
//! of its own above its numbers; case names, methods and the summary are wrapped at word
//! boundaries.

use std::fmt::Write as _;

use super::{Comparison, LEVEL, Verdict};
use crate::report::{self, num, pct};

/// The widest line the table prints.
pub const WIDTH: usize = 120;

/// Indentation of a method's line under its case.
const METHOD_INDENT: usize = 2;
/// Indentation of a metric's row under its method.
const ROW_INDENT: usize = 4;
/// Indentation of a rerun's note under its row.
const NOTE_INDENT: usize = 6;
/// The numeric columns after the metric, right-aligned, then the verdict.
const HEADERS: [&str; 5] = [
    "analytic",
    "simulated",
    "half_width_99",
    "relative_error",
    "verdict",
];

/// The table of `rows` followed by the [`summary`]. Rows are grouped by case, then by method
/// (each group in order of first appearance, rows within it in their order).
pub fn table(rows: &[Comparison]) -> String {
    let ordered = grouped(rows);
    let cells: Vec<[String; 5]> = ordered.iter().map(|r| cells(r)).collect();
    let mut widths = HEADERS.map(str::len);
    for c in &cells {
        for (w, cell) in widths.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let fixed: usize = widths.iter().map(|w| w + 2).sum();
    let longest_metric = rows.iter().map(|r| r.metric.chars().count()).max();
    let metric_width = longest_metric
        .unwrap_or(0)
        .min(WIDTH.saturating_sub(ROW_INDENT + fixed))
        .max("metric".len());
    let mut s = String::new();
    let line = |metric: &str, cells: &[String]| {
        let mut l = format!("{:ROW_INDENT$}{metric:<metric_width$}", "");
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                let _ = write!(l, "  {cell}");
            } else {
                let _ = write!(l, "  {cell:>w$}");
            }
        }
        l.trim_end().to_owned()
    };
    let _ = writeln!(s, "{}", line("metric", &HEADERS.map(str::to_owned)));
    let mut previous: Option<(&str, &str)> = None;
    for (&r, c) in ordered.iter().zip(&cells) {
        if previous.is_none_or(|(case, _)| case != r.case) {
            if let Some((case, _)) = previous {
                push_against_exact(&mut s, rows, case);
            }
            push_wrapped(&mut s, &r.case, 0, 0);
            previous = None;
        }
        if previous.is_none_or(|(_, method)| method != r.method) {
            push_wrapped(&mut s, &r.method, METHOD_INDENT, METHOD_INDENT + 2);
        }
        previous = Some((&r.case, &r.method));
        if r.metric.chars().count() > metric_width {
            push_wrapped(&mut s, &r.metric, ROW_INDENT, ROW_INDENT);
            let _ = writeln!(s, "{}", line("", c));
        } else {
            let _ = writeln!(s, "{}", line(&r.metric, c));
        }
        if let Some(note) = rerun_note(r) {
            push_wrapped(&mut s, &note, NOTE_INDENT, NOTE_INDENT);
        }
    }
    if let Some((case, _)) = previous {
        push_against_exact(&mut s, rows, case);
    }
    for l in summary(rows) {
        push_wrapped(&mut s, &l, 0, 2);
    }
    s
}

/// Where case `case` has exact predictions and approximations of the same metrics, each
/// approximation's error against the exact value ([`report::against_exact`]), under a heading.
fn push_against_exact(s: &mut String, rows: &[Comparison], case: &str) {
    let predicted = rows
        .iter()
        .filter(move |r| r.case == case && r.bounds.is_none() && r.analytic.is_finite());
    let lines = report::against_exact(
        predicted.map(|r| (r.method.as_str(), r.exact, r.metric.as_str(), r.analytic)),
    );
    if lines.is_empty() {
        return;
    }
    push_wrapped(
        s,
        "approximations against the exact value (relative error):",
        METHOD_INDENT,
        METHOD_INDENT,
    );
    for l in lines {
        push_wrapped(s, l.trim_start(), ROW_INDENT, ROW_INDENT + 2);
    }
}

/// `rows` by case, then by method, each in order of first appearance.
fn grouped(rows: &[Comparison]) -> Vec<&Comparison> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        let key = (r.case.as_str(), r.method.as_str());
        if !keys.contains(&key) {
            let after_case = keys.iter().rposition(|(case, _)| *case == key.0);
            keys.insert(after_case.map_or(keys.len(), |i| i + 1), key);
        }
    }
    keys.iter()
        .flat_map(|&(case, method)| {
            rows.iter()
                .filter(move |r| r.case == case && r.method == method)
        })
        .collect()
}

/// A row's cells under [`HEADERS`].
fn cells(r: &Comparison) -> [String; 5] {
    [
        analytic(r),
        num(r.simulated),
        num(r.half_width_99),
        relative_error(r),
        r.verdict.label().to_owned(),
    ]
}

/// The analytic value, or `[lower_bound, upper_bound]` for a bound.
pub(super) fn analytic(r: &Comparison) -> String {
    match r.bounds {
        Some([lo, hi]) => format!("[{}, {}]", num(lo), num(hi)),
        None => num(r.analytic),
    }
}

/// The relative error with the half-width of its 99% interval.
pub(super) fn relative_error(r: &Comparison) -> String {
    if r.relative_error.is_finite() {
        format!(
            "{} +- {}",
            pct(r.relative_error),
            pct(r.relative_error_half_width_99)
        )
    } else {
        "-".to_owned()
    }
}

/// For a comparison that was rerun: what the first experiment found.
pub(super) fn rerun_note(r: &Comparison) -> Option<String> {
    r.first_run.as_ref().map(|f| {
        format!(
            "rerun: the first experiment ({} +- {}, {} replications) disagreed; the verdict is the second's",
            num(f.simulated),
            num(f.half_width_99),
            f.replications
        )
    })
}

/// The summary of a report, one statement a line (unwrapped): the count of every verdict
/// (tests, approximations, cases without a prediction), the worst error of an exact
/// prediction that is judged (a visits ratio is reported: [`crate::validate::window_ratio`]),
/// and the reruns.
pub fn summary(rows: &[Comparison]) -> Vec<String> {
    let counts = |verdicts: &[Verdict]| {
        let counted: Vec<String> = verdicts
            .iter()
            .map(|&v| {
                let n = rows.iter().filter(|r| r.verdict == v).count();
                format!("{n} {}", v.label())
            })
            .collect();
        counted.join(", ")
    };
    let comparisons = rows.iter().filter(|r| r.replications > 0).count();
    // none when no row has an exact prediction (said so, not 0%)
    let worst = rows
        .iter()
        .filter(|r| r.exact && r.verdict != Verdict::Reported)
        .map(|r| r.relative_error.abs())
        .reduce(f64::max);
    let tests = rows
        .iter()
        .filter(|r| (r.exact || r.bounds.is_some()) && r.verdict != Verdict::Reported)
        .count();
    let rerun = rows.iter().filter(|r| r.first_run.is_some());
    let confirmed = rerun
        .clone()
        .filter(|r| r.verdict == Verdict::Disagree)
        .count();
    vec![
        format!(
            "{comparisons} comparisons: {}",
            counts(&[
                Verdict::Agree,
                Verdict::Disagree,
                Verdict::Imprecise,
                Verdict::WithinBounds,
                Verdict::AtBound
            ])
        ),
        format!(
            "approximations: {}",
            counts(&[
                Verdict::WithinTolerance,
                Verdict::OutsideTolerance,
                Verdict::Undecided,
                Verdict::Reported
            ])
        ),
        format!(
            "cases without a prediction: {}",
            counts(&[Verdict::NoPrediction, Verdict::NoPredictionExpected])
        ),
        format!(
            "methods that do not apply (each with its reason): {}",
            counts(&[Verdict::NotApplicable])
        ),
        match worst {
            Some(worst) => format!(
                "worst |relative_error| of an exact prediction: {}",
                pct(worst)
            ),
            None => "worst |relative_error| of an exact prediction: none (no exact prediction)"
                .to_owned(),
        },
        format!(
            "first experiments: {} of {} tests at 99% disagreed (about {:.1} expected by chance if every formula is right); rerun on independent streams, {} confirmed",
            rerun.count(),
            tests,
            tests as f64 * (1.0 - LEVEL),
            confirmed
        ),
    ]
}

/// Appends `text` word-wrapped to [`WIDTH`]: the first line indented by `first`, the others by
/// `rest`. A word longer than a line is cut.
fn push_wrapped(s: &mut String, text: &str, first: usize, rest: usize) {
    let mut indent = first;
    let mut line = String::new();
    let mut flush = |line: &mut String, indent: &mut usize| {
        if line.is_empty() {
            s.push('\n');
        } else {
            let _ = writeln!(s, "{:indent$}{line}", "", indent = *indent);
        }
        line.clear();
        *indent = rest;
    };
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let room = WIDTH.saturating_sub(indent).max(1);
            let used = line.chars().count();
            let needed = if used == 0 {
                word.len()
            } else {
                used + 1 + word.len()
            };
            if needed <= room {
                if used > 0 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                flush(&mut line, &mut indent);
                continue;
            }
            // a word longer than the line: cut it
            let rest_of_word = word.split_off(room);
            line.extend(word.iter());
            flush(&mut line, &mut indent);
            word = rest_of_word;
        }
    }
    if !line.is_empty() || indent == first {
        flush(&mut line, &mut indent);
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::scenario::{Scenario, load};
    use crate::study::analyze_scenario;
    use crate::validate::FirstRun;

    /// Every case of the bundled suite.
    fn suite() -> Vec<Scenario> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("validation");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("validation/ exists")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| load(f).expect("a bundled case loads"))
            .collect()
    }

    /// The rows a validation of `sc` could print, without simulating: every prediction and
    /// bound with wide numbers, one of them rerun, and the case's no-prediction row with every
    /// refusal, so that the longest texts the case can produce are all laid out.
    fn rows_of(sc: &Scenario) -> Vec<Comparison> {
        let analysis = analyze_scenario(sc);
        let row = |metric: &str, method: &str, exact: bool, value: f64| Comparison {
            case: sc.name.clone(),
            metric: metric.to_owned(),
            method: method.to_owned(),
            exact,
            analytic: value,
            simulated: -1.234_567e-5,
            half_width_99: 1.234_567e7,
            bounds: None,
            relative_error: -12.3456,
            relative_error_half_width_99: 10.9876,
            verdict: Verdict::OutsideTolerance,
            replications: 10,
            first_run: None,
            run: None,
        };
        let mut rows: Vec<Comparison> = analysis
            .predictions
            .iter()
            .map(|p| row(&p.metric, &p.method, p.exact, -p.value - 1e6))
            .collect();
        for b in &analysis.bounds {
            rows.push(Comparison {
                bounds: Some([-1.234_567e-5, -9.876_543e7]),
                verdict: Verdict::NoPredictionExpected,
                ..row(&b.metric, &b.method, false, 0.0)
            });
        }
        if let Some(first) = rows.first_mut() {
            first.first_run = Some(FirstRun {
                simulated: -1.234_567e-5,
                half_width_99: 1.234_567e7,
                replications: 1000,
                run_id: None,
            });
        }
        let metrics: Vec<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
        let refusals: Vec<String> = analysis
            .refusals
            .iter()
            .map(|r| format!("{}: {}", r.method, r.reason))
            .collect();
        let none = Comparison {
            verdict: Verdict::NoPrediction,
            replications: 0,
            ..row(&metrics.join(" "), &refusals.join("; "), false, f64::NAN)
        };
        rows.push(none);
        rows
    }

    #[test]
    fn the_table_of_every_bundled_case_fits_the_width() {
        let cases = suite();
        assert!(cases.len() >= 50, "the suite is bundled");
        let rows: Vec<Comparison> = cases.iter().flat_map(rows_of).collect();
        let text = table(&rows);
        for line in text.lines() {
            assert!(
                line.chars().count() <= WIDTH,
                "{} chars: {line}",
                line.len()
            );
        }
        // every case named exactly once, as a line of its own
        for sc in &cases {
            let named = text.lines().filter(|l| *l == sc.name).count();
            assert_eq!(named, 1, "{}", sc.name);
        }
        // nothing lost: every metric and every method is printed
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for r in &rows {
            assert!(flat.contains(&r.metric), "{}", r.metric);
            let method: String = r.method.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(&method), "{}", r.method);
        }
    }

    #[test]
    fn a_method_is_printed_once_above_its_metrics() {
        let sc = suite()
            .into_iter()
            .find(|s| s.name.starts_with("M/M/1"))
            .expect("an M/M/1 case");
        let rows = rows_of(&sc);
        let shared = rows
            .windows(2)
            .find(|w| w[0].method == w[1].method)
            .expect("a method that predicts several metrics");
        let method = &shared[0].method;
        let text = table(&rows);
        let heading = format!("{:METHOD_INDENT$}{method}", "");
        assert_eq!(text.lines().filter(|l| *l == heading).count(), 1, "{text}");
        assert_eq!(text.lines().filter(|l| *l == sc.name).count(), 1, "{text}");
    }

    #[test]
    fn a_summary_without_an_exact_prediction_says_so() {
        let approximation = Comparison {
            case: "c".into(),
            metric: "class.jobs.response".into(),
            method: "an approximation".into(),
            exact: false,
            analytic: 1.1,
            simulated: 1.0,
            half_width_99: 0.01,
            bounds: None,
            relative_error: 0.1,
            relative_error_half_width_99: 0.01,
            verdict: Verdict::Reported,
            replications: 10,
            first_run: None,
            run: None,
        };
        let lines = summary(std::slice::from_ref(&approximation));
        let worst = lines
            .iter()
            .find(|l| l.starts_with("worst |relative_error|"))
            .expect("a line on the worst error");
        assert!(worst.ends_with("none (no exact prediction)"), "{worst}");
        let exact = Comparison {
            exact: true,
            relative_error: -0.002,
            verdict: Verdict::Agree,
            ..approximation
        };
        let lines = summary(&[exact]);
        assert!(
            lines.iter().any(|l| l.ends_with("prediction: 0.20%")),
            "{lines:?}"
        );
    }

    #[test]
    fn long_words_are_cut_and_short_text_wrapped_at_the_width() {
        let mut s = String::new();
        let long = "x".repeat(WIDTH + 10);
        push_wrapped(&mut s, &format!("a {long} b"), 2, 4);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "  a");
        assert_eq!(lines[1].len(), WIDTH);
        assert_eq!(lines[2], format!("    {} b", "x".repeat(14)));
        let mut empty = String::new();
        push_wrapped(&mut empty, "", 0, 0);
        assert_eq!(empty, "\n");
    }
}
