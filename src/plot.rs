//! What every picture parsim draws shares: its size, the colours of the simulated mean and of
//! the analytic methods, the error type, ranges padded around the data, and file names made
//! safe. The pictures themselves are drawn by the outputs that own them (`crate::sweep::plot`,
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
    /// A metric to draw that the sweep does not report.
    #[error("unknown metric {0:?} to plot (`parsim metrics <scenario>` lists every name)")]
    UnknownMetric(String),
    /// The directory could not be made.
    #[error("cannot create {}: {source}", dir.display())]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
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
