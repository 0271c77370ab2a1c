//! Reading the measured times a fit starts from: one column of numbers, or a named column of
//! a CSV file with a header; times between events, or time stamps turned into them.

use std::path::Path;

/// The most problems one file's refusal lists.
const MAX_PROBLEMS: usize = 20;

/// What the numbers of the column are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// Times between events (or durations): finite and `>= 0`.
    Intervals,
    /// Time stamps of events, in order: the fit uses the differences between successive ones.
    Timestamps,
}

/// Reads the numbers of `path`: without `column`, every number of the file (separated by
/// white space, commas or new lines, `#` starting a comment), as an `empirical` trace is read;
/// with `column`, the field of that name in a CSV file whose first line is a header. Time
/// stamps become the differences between successive ones. Every problem is listed (file, line,
/// column, value, what to do), up to 20.
pub fn read_times(
    path: &Path,
    column: Option<&str>,
    values: Values,
) -> Result<Vec<f64>, Vec<String>> {
    let mut lines = crate::files::open_lines(path, crate::files::Limit::Data)
        .map_err(|e| vec![e.to_string()])?;
    let shown = path.display();
    let mut problems = Vec::new();
    let mut numbers: Vec<(usize, f64)> = Vec::new();
    let mut field: Option<(usize, usize)> = None; // (index, fields in the header)
    let mut header_seen = false;
    while let Some(line) = lines.next_line() {
        let (line_no, line) = line.map_err(|e| vec![e.to_string()])?;
        let text = line.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        if let Some(name) = column {
            if !header_seen {
                header_seen = true;
                let names: Vec<&str> = text
                    .split(',')
                    .map(|f| f.trim().trim_matches('"'))
                    .collect();
                match names.iter().position(|n| *n == name) {
                    Some(i) => field = Some((i, names.len())),
                    None => {
                        return Err(vec![format!(
                            "{shown}:{line_no}: the header has no column {name:?} (it has {}): name one of them with --column",
                            names
                                .iter()
                                .map(|n| format!("{n:?}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )]);
                    }
                }
                continue;
            }
            let (index, width) = field.expect("set with the header");
            let fields: Vec<&str> = text.split(',').map(str::trim).collect();
            let Some(token) = fields.get(index) else {
                problems.push(format!(
                    "{shown}:{line_no}: {} field(s), the header has {width}: column {name:?} is missing",
                    fields.len()
                ));
                continue;
            };
            push(
                &mut numbers,
                &mut problems,
                &shown,
                line_no,
                Some(name),
                token,
            );
        } else {
            for token in text
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
            {
                if numbers.is_empty() && problems.is_empty() && token.parse::<f64>().is_err() {
                    problems.push(format!(
                        "{shown}:{line_no}: {token:?} is not a number: a CSV file with a header needs --column NAME"
                    ));
                    break;
                }
                push(&mut numbers, &mut problems, &shown, line_no, None, token);
            }
        }
        if problems.len() >= MAX_PROBLEMS {
            problems.push(format!("{shown}: more problems not listed"));
            return Err(problems);
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let times = match values {
        Values::Intervals => numbers.into_iter().map(|(_, v)| v).collect(),
        Values::Timestamps => differences(&numbers, &shown.to_string())?,
    };
    if times.len() < 2 {
        return Err(vec![format!(
            "{shown}: {} time(s): a fit needs at least 2 (with --timestamps, 3 stamps)",
            times.len()
        )]);
    }
    Ok(times)
}

/// Parses one value, or records why it is not one.
fn push(
    numbers: &mut Vec<(usize, f64)>,
    problems: &mut Vec<String>,
    shown: &std::path::Display<'_>,
    line_no: usize,
    column: Option<&str>,
    token: &str,
) {
    let place = column.map_or(String::new(), |c| format!(" column {c:?}:"));
    match token.trim_matches('"').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => numbers.push((line_no, v)),
        _ => problems.push(format!(
            "{shown}:{line_no}:{place} {token:?} is not a finite number >= 0"
        )),
    }
}

/// The differences between successive time stamps; a stamp before its predecessor is a
/// problem (the file is not in time order).
fn differences(stamps: &[(usize, f64)], shown: &str) -> Result<Vec<f64>, Vec<String>> {
    let mut problems = Vec::new();
    let mut out = Vec::with_capacity(stamps.len().saturating_sub(1));
    for pair in stamps.windows(2) {
        let ((_, a), (line_no, b)) = (pair[0], pair[1]);
        if b < a {
            if problems.len() < MAX_PROBLEMS {
                problems.push(format!(
                    "{shown}:{line_no}: time stamp {b} is before the one above it ({a}): sort the file by time"
                ));
            }
        } else {
            out.push(b - a);
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}
