//! The values one `--vary KEY=VALUES` takes.
//!
//! | VALUES | means |
//! |---|---|
//! | `1,2,4,8` | a list (each item read as TOML, bare words as strings) |
//! | `1..64` | every integer from 1 to 64 |
//! | `0.1..0.9:0.2` | from 0.1 to 0.9 in steps of 0.2 (the end is included when a step lands on it) |
//! | `2^0..2^6` | powers: 1, 2, 4, ..., 64 (`2^0..2^6:2` steps the exponent by 2) |
//! | `1..1000:x10` | a log range by factor: 1, 10, 100, 1000 |
//! | `0.01..100:log9` | 9 points evenly spaced in log scale from 0.01 to 100 |
//! | `0..1:lin5` | 5 points evenly spaced from 0 to 1 |
//!
//! A range gives integers when its ends (and step or factor) are written as integers and every
//! value is one; otherwise floats, rounded to 12 significant digits so that `0.1..0.3:0.1` ends
//! at `0.3`, not `0.30000000000000004`.

use crate::scenario::assign::Value;

/// The most values one `--vary` may take.
pub const MOST: usize = 1_000_000;

/// Reads VALUES (see the module documentation).
pub fn parse(text: &str) -> Result<Vec<Value>, String> {
    let text = text.trim();
    let values = match text.split_once("..") {
        Some((lo, rest)) if !text.starts_with(['"', '\'', '[', '{']) => range(lo, rest)?,
        _ => split_list(text)
            .into_iter()
            .map(Value::parse)
            .collect::<Result<_, _>>()?,
    };
    if values.is_empty() {
        return Err(format!("`{text}` gives no value"));
    }
    Ok(values)
}

/// Splits a list at the commas that are outside quotes, brackets and braces.
fn split_list(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// A number as written: its value and whether it was written as an integer.
#[derive(Clone, Copy, Debug)]
struct Written {
    value: f64,
    integer: bool,
}

fn number(text: &str) -> Result<Written, String> {
    match Value::parse(text)? {
        Value::Int(i) => Ok(Written {
            value: i as f64,
            integer: true,
        }),
        Value::Float(f) if f.is_finite() => Ok(Written {
            value: f,
            integer: false,
        }),
        _ => Err(format!("`{}` is not a finite number", text.trim())),
    }
}

/// How a range steps from its start to its end.
#[derive(Clone, Copy, Debug)]
enum Spacing {
    /// Add this step.
    Step(Written),
    /// Multiply by this factor.
    Factor(Written),
    /// This many points evenly spaced.
    Linear(usize),
    /// This many points evenly spaced in log scale.
    Log(usize),
}

fn spacing(text: &str) -> Result<Spacing, String> {
    let count = |n: &str| {
        n.trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| (2..=MOST).contains(&n))
            .ok_or_else(|| format!("`{text}`: a count of points from 2 to {MOST}"))
    };
    let text = text.trim();
    if let Some(n) = text.strip_prefix("log") {
        Ok(Spacing::Log(count(n)?))
    } else if let Some(n) = text.strip_prefix("lin") {
        Ok(Spacing::Linear(count(n)?))
    } else if let Some(f) = text.strip_prefix('x') {
        Ok(Spacing::Factor(number(f)?))
    } else {
        Ok(Spacing::Step(number(text)?))
    }
}

/// `lo..hi[:spacing]`, ends either numbers or powers `b^e`.
fn range(lo: &str, rest: &str) -> Result<Vec<Value>, String> {
    let (hi, spec) = match rest.split_once(':') {
        Some((hi, spec)) => (hi, Some(spacing(spec)?)),
        None => (rest, None),
    };
    match (lo.split_once('^'), hi.split_once('^')) {
        (Some((b1, e1)), Some((b2, e2))) => {
            let base = number(b1)?;
            if base.value != number(b2)?.value {
                return Err(format!("`{lo}..{hi}`: both ends need the same base"));
            }
            let exponents = stepped(number(e1)?, number(e2)?, spec)?;
            Ok(exponents
                .into_iter()
                .map(|e| {
                    let integral = base.integer && e.as_f64().is_some_and(|e| e >= 0.0);
                    Value::number(tidy(base.value.powf(e.as_f64().unwrap_or(0.0))), integral)
                })
                .collect())
        }
        (None, None) => stepped(number(lo)?, number(hi)?, spec),
        _ => Err(format!(
            "`{lo}..{hi}`: write both ends as powers (2^0..2^6) or neither"
        )),
    }
}

/// The values from `lo` to `hi` by `spec` (step 1 without one).
fn stepped(lo: Written, hi: Written, spec: Option<Spacing>) -> Result<Vec<Value>, String> {
    let spec = spec.unwrap_or(Spacing::Step(Written {
        value: 1.0,
        integer: true,
    }));
    let ends_integer = lo.integer && hi.integer;
    let (a, b) = (lo.value, hi.value);
    let points: Vec<(f64, bool)> = match spec {
        Spacing::Step(s) => {
            let n = count(
                (b - a) / s.value,
                s.value != 0.0,
                "the step must move from start to end",
            )?;
            (0..n)
                .map(|i| (a + i as f64 * s.value, ends_integer && s.integer))
                .collect()
        }
        Spacing::Factor(f) => {
            if a <= 0.0 || b <= 0.0 || f.value <= 0.0 || f.value == 1.0 {
                return Err("a factor range needs positive ends and a factor other than 1".into());
            }
            let n = count(
                (b / a).ln() / f.value.ln(),
                true,
                "the factor must move from start to end",
            )?;
            (0..n)
                .map(|i| (a * f.value.powi(i as i32), ends_integer && f.integer))
                .collect()
        }
        Spacing::Linear(n) => (0..n)
            .map(|i| (a + (b - a) * i as f64 / (n - 1) as f64, ends_integer))
            .collect(),
        Spacing::Log(n) => {
            if a <= 0.0 || b <= 0.0 {
                return Err("a log range needs positive ends".into());
            }
            let (la, lb) = (a.ln(), b.ln());
            (0..n)
                .map(|i| {
                    (
                        (la + (lb - la) * i as f64 / (n - 1) as f64).exp(),
                        ends_integer,
                    )
                })
                .collect()
        }
    };
    Ok(points
        .into_iter()
        .map(|(v, integral)| Value::number(tidy(v), integral))
        .collect())
}

/// The number of points `0..=floor(steps)` when `steps` is a sane count of steps.
fn count(steps: f64, moves: bool, why: &str) -> Result<usize, String> {
    // a step that lands within rounding of the end includes it
    let steps = (steps + 1e-9).floor();
    if !moves || !steps.is_finite() || steps < 0.0 {
        return Err(why.to_owned());
    }
    if steps >= MOST as f64 {
        return Err(format!("more than {MOST} values"));
    }
    Ok(steps as usize + 1)
}

/// `v` rounded to 12 significant digits.
fn tidy(v: f64) -> f64 {
    format!("{v:.11e}").parse().unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Vec<String> {
        parse(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .iter()
            .map(Value::toml)
            .collect()
    }

    #[test]
    fn lists_and_ranges() {
        assert_eq!(shown("1,2,4,8"), ["1", "2", "4", "8"]);
        assert_eq!(shown("fcfs, ps"), ["\"fcfs\"", "\"ps\""]);
        assert_eq!(shown("[1, 2],[3]"), ["[1, 2]", "[3]"]);
        assert_eq!(shown("1..4"), ["1", "2", "3", "4"]);
        assert_eq!(shown("1..10:4"), ["1", "5", "9"]);
        assert_eq!(shown("0.1..0.3:0.1"), ["0.1", "0.2", "0.3"]);
        assert_eq!(shown("2^0..2^3"), ["1", "2", "4", "8"]);
        assert_eq!(shown("2^0..2^6:3"), ["1", "8", "64"]);
        assert_eq!(shown("1..1000:x10"), ["1", "10", "100", "1000"]);
        assert_eq!(
            shown("0.01..100:log5"),
            ["0.01", "0.1", "1.0", "10.0", "100.0"]
        );
        assert_eq!(shown("1..100:log3"), ["1", "10", "100"]);
        assert_eq!(shown("0..1:lin3"), ["0", "0.5", "1"]);
        assert_eq!(shown("5..1:-2"), ["5", "3", "1"]);
    }

    #[test]
    fn bad_values_say_why() {
        for bad in [
            "1..5:0",
            "1..5:-1",
            "0..10:x2",
            "1..2:log1",
            "2^0..3^2",
            "2^1..8",
            "a..b",
            "",
        ] {
            assert!(parse(bad).is_err(), "{bad} accepted");
        }
        assert!(parse("1..1e9").unwrap_err().contains("more than"));
    }
}
