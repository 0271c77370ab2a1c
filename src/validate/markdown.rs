//! `parsim validate --report FILE`: the report as a Markdown document, its columns named by the
//! fields of [`super::record::ComparisonRecord`] and its verdicts the words every output uses.

use std::fmt::Write as _;

use super::Comparison;
use super::table::{analytic, relative_error, rerun_note, summary};
use crate::report::num;

/// The Markdown report of `rows`: the summary, then one table row per comparison.
pub fn markdown(rows: &[Comparison]) -> String {
    let mut s = String::from("# parsim validation report\n\n");
    for line in summary(rows) {
        let _ = writeln!(s, "{line}  ");
    }
    s += "\n| case | metric | method | analytic | simulated | half_width_99 | relative_error | verdict |\n";
    s += "|---|---|---|---|---|---|---|---|\n";
    for r in rows {
        let verdict = match rerun_note(r) {
            Some(note) => format!("{} ({note})", r.verdict.label()),
            None => r.verdict.label().to_owned(),
        };
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {} | {} | {} | {} |",
            cell(&r.case),
            cell(&r.metric),
            cell(&r.method),
            analytic(r),
            num(r.simulated),
            num(r.half_width_99),
            relative_error(r),
            verdict
        );
    }
    s
}

/// Text made safe for a table cell: a `|` would end the cell, a newline the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::{FirstRun, Verdict};

    #[test]
    fn cells_keep_pipes_and_newlines_from_breaking_the_table() {
        let row = Comparison {
            case: "a | b".into(),
            metric: "m".into(),
            method: "one\ntwo".into(),
            exact: true,
            analytic: 1.0,
            simulated: 1.0,
            half_width_99: 0.01,
            bounds: None,
            relative_error: 0.0,
            relative_error_half_width_99: 0.01,
            verdict: Verdict::Agree,
            replications: 10,
            first_run: Some(FirstRun {
                simulated: 1.1,
                half_width_99: 0.01,
                replications: 10,
                run_id: None,
            }),
            run: None,
        };
        let text = markdown(&[row]);
        let last = text.lines().last().expect("a row");
        assert!(
            last.starts_with("| a \\| b | `m` | one two | 1.00000 |"),
            "{last}"
        );
        assert!(
            last.contains("| agree (rerun: the first experiment (1.10000"),
            "{last}"
        );
        assert_eq!(last.matches(" | ").count(), 7, "eight cells: {last}");
    }
}
