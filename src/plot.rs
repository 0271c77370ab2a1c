//! What every picture parsim draws shares: its size, the colours of the simulated mean and of
//! the analytic methods, the error type, ranges padded around the data, tick labels written
//! readably, units from metric names, text cut to the room it has, and file names made safe and
//! short. The pictures themselves are drawn by the outputs that own them (`crate::sweep::plot`,
//! `crate::validate::plot`).

use std::path::{Path, PathBuf};

use plotters::prelude::*;

/// Size of every picture in pixels.
pub const SIZE: (u32, u32) = (800, 520);

/// Colours of the analytic methods' curves, in order of first appearance.
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// The simulated mean's colour.
pub const SIMULATED: RGBColor = RGBColor(0, 84, 159);

/// Why pictures could not be drawn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The sweep has no shape a picture shows: more than two varied keys on a grid.
    #[error("--plot draws sweeps of one key, or two on a grid; this one varies {0} on a grid")]
    Shape(usize),
    /// An x metric asked for heat maps, which have their keys on both axes.
    #[error(
        "--plot-x draws line charts: vary one key, --zip several, or add --plot-lines to a grid of two"
    )]
    AxisOnMap,
    /// A metric to draw that the sweep does not report.
    #[error("unknown metric {0:?} to plot (`parsim metrics <scenario>` lists every name)")]
    UnknownMetric(String),
    /// The directory could not be made.
    #[error("cannot make the directory {} for --plot: {why}", dir.display())]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// Why.
        why: String,
    },
    /// Drawing or writing a picture failed.
    #[error("cannot draw {}: {message}", file.display())]
    Draw {
        /// The picture's file.
        file: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// `svg` with every character XML 1.0 forbids (the control characters but tab, new line and
/// carriage return, and U+FFFE, U+FFFF), which a name may hold and no escape can write, shown
/// as U+FFFD: the picture stays well-formed whatever the names.
pub fn xml_safe(svg: String) -> String {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if !svg.contains(bad) {
        return svg;
    }
    svg.chars()
        .map(|c| if bad(c) { '\u{FFFD}' } else { c })
        .collect()
}

/// Draws a picture of [`SIZE`] with `draw` and writes it to `file` as every output is written
/// ([`crate::files::write_text`]: never over an input of the command, complete or not at all).
pub fn svg_file(
    file: &Path,
    draw: impl FnOnce(DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), PlotError>,
) -> Result<(), PlotError> {
    svg_file_of_size(file, SIZE, draw)
}

/// [`svg_file`] for a picture of `size` pixels in place of [`SIZE`] (one that grows with what
/// it shows: a column per metric, a legend line per method).
pub fn svg_file_of_size(
    file: &Path,
    size: (u32, u32),
    draw: impl FnOnce(DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), PlotError>,
) -> Result<(), PlotError> {
    let mut svg = String::new();
    draw(SVGBackend::with_string(&mut svg, size).into_drawing_area())?;
    crate::files::write_text(file, &xml_safe(svg)).map_err(|e| draw_error(file)(e.reason()))
}

/// Makes the directory pictures are drawn into: called before anything is simulated, so that
/// a directory that cannot be made is refused at once, and again by the drawing.
pub fn make_dir(dir: &Path) -> Result<(), PlotError> {
    crate::files::make_folder(dir).map_err(|e| PlotError::Directory {
        dir: dir.to_owned(),
        why: e.unnamed(),
    })
}

/// `name` made safe and at most 40 characters for a file name: a longer one keeps its first 32
/// and adds 6 hex digits of a hash of the whole.
pub fn short_file_part(name: &str) -> String {
    let safe = file_part(name);
    if safe.len() <= 40 {
        return safe;
    }
    let head: String = safe.chars().take(32).collect();
    let hash = crate::hash::fnv1a(name.as_bytes());
    format!(
        "{}-{:06x}",
        head.trim_end_matches(['_', '.', '-']),
        hash & 0xff_ffff
    )
}

/// A name safe in a file name.
pub fn file_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A range around `values`, padded by 5% (or by 1 when they are all equal).
pub fn padded(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    let pad = if hi > lo { 0.05 * (hi - lo) } else { 1.0 };
    (lo - pad)..(hi + pad)
}

/// Turns a drawing failure on `file` into a [`PlotError`].
pub fn draw_error(file: &Path) -> impl Fn(String) -> PlotError + '_ {
    move |message| PlotError::Draw {
        file: file.to_owned(),
        message,
    }
}

/// A tick value written readably: four significant digits at most, trailing zeros dropped
/// (`0.30000000000000004` is `0.3`), powers of ten for the very large and very small.
pub fn tick(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    if a < 1e-12 {
        return "0".to_owned();
    }
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    if !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.3e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{exponent}", trim(mantissa.to_owned()));
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    trim(format!("{v:.decimals$}"))
}

/// Ticks from 0 to at most `max` (positive) at a round step (1, 2 or 5 times a power of ten)
/// giving about `about` intervals. Each is `k * step`, so write it with [`tick`].
pub fn ticks_to(max: f64, about: usize) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) {
        return vec![0.0];
    }
    let rough = max / about.max(1) as f64;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= rough * (1.0 - 1e-9))
        .unwrap_or(10.0 * power);
    (0..)
        .map(|k| f64::from(k) * step)
        .take_while(|t| *t <= max * (1.0 + 1e-9))
        .collect()
}

/// The unit of a metric, from its name: times in the scenario's time unit, throughputs per time
/// unit, utilisations and speedups dimensionless, numbers of jobs, counts; empty when the name
/// says nothing.
pub fn unit(metric: &str) -> &'static str {
    let parts: Vec<&str> = metric.split('.').collect();
    let has = |w: &str| parts.contains(&w);
    let last = parts.last().copied().unwrap_or("");
    let percentile =
        last.len() > 1 && last.starts_with('p') && last[1..].chars().all(|c| c.is_ascii_digit());
    if has("utilisation") || has("utilization") || has("efficiency") || has("speedup") {
        "dimensionless"
    } else if has("throughput") {
        "per time unit"
    } else if last == "number" {
        "jobs"
    } else if has("visits") {
        "visits per job"
    } else if has("count") {
        "count"
    } else if percentile
        || [
            "response",
            "cycle",
            "wait",
            "residence",
            "makespan",
            "delay",
            "time",
            "max",
            "mean",
            "overhead",
            "cost",
        ]
        .contains(&last)
    {
        "time units"
    } else {
        ""
    }
}

/// An axis label of `metric` with its unit: `station.cpu.response (time units)`.
pub fn with_unit(metric: &str) -> String {
    match unit(metric) {
        "" => metric.to_owned(),
        u => format!("{metric} ({u})"),
    }
}

/// About how wide `text` is, in pixels, in a sans-serif font of `size` pixels (an upper estimate
/// for DejaVu Sans: 0.62 of the size a character).
pub fn text_width(text: &str, size: u32) -> u32 {
    (text.chars().count() as f64 * 0.62 * f64::from(size)).ceil() as u32
}

/// `text` cut to fit `width` pixels in a font of `size` pixels, ending with an ellipsis where it
/// was cut (the end is dropped, never the beginning).
pub fn fit(text: &str, width: u32, size: u32) -> String {
    if text_width(text, size) <= width {
        return text.to_owned();
    }
    let most = ((f64::from(width) / (0.62 * f64::from(size))).floor() as usize).max(2);
    let kept: String = text.chars().take(most - 1).collect();
    format!("{}…", kept.trim_end())
}

/// `text` broken at spaces into lines of at most `width` pixels in a font of `size` pixels
/// ([`text_width`]); a word longer than a line is broken inside. Nothing is left out.
pub fn wrap(text: &str, width: u32, size: u32) -> Vec<String> {
    let most = ((f64::from(width) / (0.62 * f64::from(size))).floor() as usize).max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        let used = line.chars().count();
        if used > 0 && used + 1 + word.len() <= most {
            line.push(' ');
            line.extend(&word);
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > most {
            lines.push(word.drain(..most).collect());
        }
        line.extend(&word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// A short file-name part for a method: its first words (up to its first comma, semicolon or
/// parenthesis), made safe, at most 20 characters, then 6 hex digits of a hash of the whole
/// name, so that two methods that begin alike still get two files.
pub fn method_key(method: &str) -> String {
    let head = method
        .split([',', ';', '('])
        .next()
        .unwrap_or(method)
        .trim();
    let mut key: String = file_part(head).chars().take(20).collect();
    key = key.trim_end_matches(['_', '.', '-']).to_owned();
    let hash = crate::hash::fnv1a(method.as_bytes());
    format!("{key}-{:06x}", hash & 0xff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(0.30000000000000004), "0.3");
        assert_eq!(tick(0.1 + 0.2 - 0.3), "0");
        assert_eq!(tick(1250.0), "1250");
        assert_eq!(tick(-0.05), "-0.05");
        assert_eq!(tick(2.5e-6), "2.5e-6");
        assert_eq!(tick(12.345678), "12.35");
    }

    #[test]
    fn ticks_to_a_maximum_are_round() {
        let t = ticks_to(0.103, 6);
        assert_eq!(t.len(), 6, "{t:?}");
        let labels: Vec<String> = t.iter().map(|&v| tick(v)).collect();
        assert_eq!(labels, ["0", "0.02", "0.04", "0.06", "0.08", "0.1"]);
        let t = ticks_to(0.7, 7);
        assert_eq!(tick(t[3]), "0.3");
        assert_eq!(ticks_to(123.0, 5).last(), Some(&100.0));
        assert_eq!(ticks_to(0.0, 5), [0.0]);
    }

    #[test]
    fn units_come_from_the_metric_name() {
        assert_eq!(unit("class.jobs.cycle"), "time units");
        assert_eq!(unit("station.cpu.p99"), "time units");
        assert_eq!(unit("station.cpu.utilisation"), "dimensionless");
        assert_eq!(unit("class.jobs.throughput"), "per time unit");
        assert_eq!(unit("station.cpu.number"), "jobs");
        assert_eq!(unit("messages.count"), "count");
        assert_eq!(
            with_unit("program.makespan"),
            "program.makespan (time units)"
        );
    }

    #[test]
    fn method_keys_are_short_and_distinct() {
        let a = method_key("independent-branch maximum, correlation-corrected (Nelson-Tantawi)");
        let b = method_key("independent-branch maximum, lockstep");
        assert_ne!(a, b);
        assert!(
            a.len() <= 27 && a.starts_with("independent-branch_m"),
            "{a}"
        );
        assert_eq!(fit("abcdefghij", 40, 10), "abcde…");
        assert_eq!(fit("abc", 40, 10), "abc");
    }

    #[test]
    fn wrapped_text_keeps_every_word_within_the_width() {
        // 6.2 pixels a character at size 10: 31 pixels hold 5 characters
        assert_eq!(
            wrap("ab cd efghijkl m", 31, 10),
            ["ab cd", "efghi", "jkl m"]
        );
        assert_eq!(wrap("short", 100, 10), ["short"]);
        assert_eq!(wrap("", 100, 10), [""]);
    }
}
