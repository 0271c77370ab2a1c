//! Pictures of a sweep, as SVG (plotters, SVG backend only).
//!
//! The metrics drawn are those asked for, or by default every metric some analytic method
//! predicts.
//!
//! - One varied key (or a `--zip` of several, drawn along the first): for each metric that some
//!   analytic method predicts, the simulated mean with its 95% band and each method's curve,
//!   `<metric>.svg`.
//! - Two keys on a grid: for each such metric, a heat map of the simulated mean
//!   (`<metric>.simulated.svg`) and one of each method's signed relative error
//!   (`<metric>.<method>.error.svg`, red where the formula is above the simulation, blue below):
//!   the picture that says where a formula can be trusted.
//!
//! Axis labels carry the metric's name; x values that are not numbers are drawn at their
//! positions.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::output::SweepReport;
use super::{Layout, Row};

/// Size of every picture in pixels.
pub(crate) const SIZE: (u32, u32) = (800, 520);

/// Colours of the analytic methods' curves, in order of first appearance.
pub(crate) const PALETTE: [RGBColor; 6] = [
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// A curve's points `(x, y)`.
type Curve = Vec<(f64, f64)>;

/// The simulated mean's colour.
pub(crate) const SIMULATED: RGBColor = RGBColor(0, 84, 159);

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

/// Checks, before a sweep runs, that its pictures can be drawn: one key, a zip, or two keys
/// on a grid.
pub fn check_shape(layout: Layout, keys: usize) -> Result<(), PlotError> {
    if layout == Layout::Grid && keys > 2 {
        return Err(PlotError::Shape(keys));
    }
    Ok(())
}

/// Writes the pictures of `metrics` (none: every metric some method predicts) into `dir`
/// (created if needed); returns their files.
pub fn write(
    report: &SweepReport,
    dir: &Path,
    metrics: &[String],
) -> Result<Vec<PathBuf>, PlotError> {
    check_shape(report.layout, report.keys.len())?;
    let measured = |m: &String| {
        report
            .points
            .iter()
            .any(|p| p.rows.iter().any(|r| &r.metric == m))
    };
    if let Some(unknown) = metrics.iter().find(|m| !measured(m)) {
        return Err(PlotError::UnknownMetric(unknown.clone()));
    }
    let metrics = if metrics.is_empty() {
        predicted_metrics(report)
    } else {
        metrics.to_vec()
    };
    let two_d = report.layout == Layout::Grid && report.keys.len() == 2;
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Directory {
        dir: dir.to_owned(),
        source,
    })?;
    let mut files = Vec::new();
    for metric in metrics {
        if two_d {
            let file = dir.join(format!("{}.simulated.svg", file_part(&metric)));
            let title = format!("{metric}: simulated mean");
            let simulated = cell_values(report, &metric, |_| true, |r| Some(r.simulated));
            heat_map(
                report,
                &file,
                &title,
                &simulated,
                Shade::Range,
                crate::report::num,
            )?;
            files.push(file);
            for method in methods(report, &metric, false) {
                let file = dir.join(format!(
                    "{}.{}.error.svg",
                    file_part(&metric),
                    file_part(&method)
                ));
                let title = format!("{metric}: relative error of {method}");
                let of_method = |r: &Row| r.method.as_deref() == Some(method.as_str());
                let errors = cell_values(report, &metric, of_method, |r| r.relative_error);
                let percent = |v: f64| format!("{:+.1}%", 100.0 * v);
                heat_map(report, &file, &title, &errors, Shade::Signed, percent)?;
                files.push(file);
            }
        } else {
            let file = dir.join(format!("{}.svg", file_part(&metric)));
            curves(report, &file, &metric)?;
            files.push(file);
        }
    }
    Ok(files)
}

/// The metrics some method predicts (not merely bounds), in report order.
fn predicted_metrics(report: &SweepReport) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for p in &report.points {
        for r in &p.rows {
            if r.analytic.is_some() && !found.contains(&r.metric) {
                found.push(r.metric.clone());
            }
        }
    }
    found
}

/// The methods predicting `metric` at some point, in order of first appearance: values
/// (`bounds == false`) or bounds (`true`).
fn methods(report: &SweepReport, metric: &str, bounds: bool) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for p in &report.points {
        for r in p.rows.iter().filter(|r| r.metric == metric) {
            if let Some(m) = &r.method
                && r.bounds.is_some() == bounds
                && !found.contains(m)
            {
                found.push(m.clone());
            }
        }
    }
    found
}

/// A name safe in a file name.
pub(crate) fn file_part(s: &str) -> String {
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

/// The x coordinate of every point along the first key: its value when every value is a
/// number, else its position.
fn positions(report: &SweepReport, axis: usize) -> Vec<f64> {
    let numbers: Option<Vec<f64>> = report
        .points
        .iter()
        .map(|p| p.values[axis].parse::<f64>().ok())
        .collect();
    numbers.unwrap_or_else(|| (0..report.points.len()).map(|i| i as f64).collect())
}

/// A range around `values`, padded by 5% (or by 1 when they are all equal).
pub(crate) fn padded(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
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
pub(crate) fn draw_error(file: &Path) -> impl Fn(String) -> PlotError + '_ {
    move |message| PlotError::Draw {
        file: file.to_owned(),
        message,
    }
}

/// One metric along one key: the simulated band and mean, and each method's curve.
fn curves(report: &SweepReport, file: &Path, metric: &str) -> Result<(), PlotError> {
    let fail = draw_error(file);
    let xs = positions(report, 0);
    let simulated: Vec<(f64, f64, f64)> = report
        .points
        .iter()
        .zip(&xs)
        .filter_map(|(p, &x)| {
            let r = p.rows.iter().find(|r| r.metric == metric)?;
            Some((x, r.simulated, r.half_width_95))
        })
        .collect();
    // each method's points: (x, value) or, for bounds, (x, lower) and (x, upper)
    let curve = |method: &str, at: fn(&Row) -> Option<f64>| -> Curve {
        report
            .points
            .iter()
            .zip(&xs)
            .filter_map(|(p, &x)| {
                let r = p
                    .rows
                    .iter()
                    .find(|r| r.metric == metric && r.method.as_deref() == Some(method))?;
                Some((x, at(r)?))
            })
            .collect()
    };
    let analytic: Vec<(String, Curve)> = methods(report, metric, false)
        .into_iter()
        .map(|m| {
            let c = curve(&m, |r| r.analytic);
            (m, c)
        })
        .collect();
    let bounds: Vec<(String, [Curve; 2])> = methods(report, metric, true)
        .into_iter()
        .map(|m| {
            let lower = curve(&m, |r| r.bounds.map(|b| b[0]));
            let upper = curve(&m, |r| r.bounds.map(|b| b[1]));
            (m, [lower, upper])
        })
        .collect();
    let ys = simulated
        .iter()
        .flat_map(|&(_, m, h)| [m - h, m + h])
        .chain(analytic.iter().flat_map(|(_, c)| c.iter().map(|p| p.1)));
    let y_range = padded(ys);
    let x_range = padded(xs.iter().copied());

    let root = SVGBackend::new(file, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{metric} against {}", report.keys[0]),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range, y_range)
        .map_err(|e| fail(e.to_string()))?;
    let integral = xs.iter().all(|x| x.fract() == 0.0);
    let x_tick = |v: &f64| {
        if integral {
            format!("{v:.0}")
        } else {
            format!("{v}")
        }
    };
    chart
        .configure_mesh()
        .x_desc(report.keys[0].as_str())
        .y_desc(metric)
        .x_label_formatter(&x_tick)
        .draw()
        .map_err(|e| fail(e.to_string()))?;
    let band: Vec<(f64, f64)> = simulated
        .iter()
        .map(|&(x, m, h)| (x, m + h))
        .chain(simulated.iter().rev().map(|&(x, m, h)| (x, m - h)))
        .collect();
    chart
        .draw_series(std::iter::once(Polygon::new(band, SIMULATED.mix(0.2))))
        .map_err(|e| fail(e.to_string()))?
        .label("simulated, 95% interval")
        .legend(|(x, y)| {
            Rectangle::new([(x, y - 5), (x + 20, y + 5)], SIMULATED.mix(0.2).filled())
        });
    chart
        .draw_series(LineSeries::new(
            simulated.iter().map(|&(x, m, _)| (x, m)),
            SIMULATED.stroke_width(2),
        ))
        .map_err(|e| fail(e.to_string()))?
        .label("simulated mean")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], SIMULATED.stroke_width(2)));
    chart
        .draw_series(
            simulated
                .iter()
                .map(|&(x, m, _)| Circle::new((x, m), 3, SIMULATED.filled())),
        )
        .map_err(|e| fail(e.to_string()))?;
    for (i, (method, points)) in analytic.into_iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))
            .map_err(|e| fail(e.to_string()))?
            .label(method)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    for (i, (method, [lower, upper])) in bounds.into_iter().enumerate() {
        let colour = PALETTE[(PALETTE.len() - 1 - i) % PALETTE.len()];
        chart
            .draw_series(DashedLineSeries::new(lower, 6, 4, colour.stroke_width(1)))
            .map_err(|e| fail(e.to_string()))?
            .label(format!("{method} (lower, upper)"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
        chart
            .draw_series(DashedLineSeries::new(upper, 6, 4, colour.stroke_width(1)))
            .map_err(|e| fail(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .position(legend_place(&simulated))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(e.to_string()))?;
    root.present().map_err(|e| fail(e.to_string()))
}

/// Where the legend hides the least: below a rising curve, above a falling one.
fn legend_place(simulated: &[(f64, f64, f64)]) -> SeriesLabelPosition {
    match (simulated.first(), simulated.last()) {
        (Some(first), Some(last)) if last.1 >= first.1 => SeriesLabelPosition::LowerRight,
        _ => SeriesLabelPosition::UpperRight,
    }
}

/// How a heat map colours its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shade {
    /// White at 0, red above, blue below, full colour at the largest magnitude (errors).
    Signed,
    /// From pale at the smallest value to full red at the largest (a surface).
    Range,
}

/// At every point, `value` of the first row of `metric` that `pick` chooses.
fn cell_values(
    report: &SweepReport,
    metric: &str,
    pick: impl Fn(&Row) -> bool,
    value: impl Fn(&Row) -> Option<f64>,
) -> Vec<Option<f64>> {
    report
        .points
        .iter()
        .map(|p| {
            p.rows
                .iter()
                .find(|r| r.metric == metric && pick(r))
                .and_then(&value)
        })
        .collect()
}

/// A heat map over the grid of two keys: each point's cell coloured by its value as `shade`
/// says, with the value written in it by `show` when the grid is small enough to read.
fn heat_map(
    report: &SweepReport,
    file: &Path,
    title: &str,
    values: &[Option<f64>],
    shade: Shade,
    show: fn(f64) -> String,
) -> Result<(), PlotError> {
    let fail = draw_error(file);
    let labels = |axis: usize| -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for p in &report.points {
            if !seen.contains(&p.values[axis]) {
                seen.push(p.values[axis].clone());
            }
        }
        seen
    };
    let (xl, yl) = (labels(0), labels(1));
    let cells: Vec<(usize, usize, Option<f64>)> = report
        .points
        .iter()
        .zip(values)
        .map(|(p, &v)| {
            let x = xl.iter().position(|l| l == &p.values[0]).unwrap_or(0);
            let y = yl.iter().position(|l| l == &p.values[1]).unwrap_or(0);
            (x, y, v)
        })
        .collect();
    let known = || values.iter().flatten().copied();
    let (lo, hi) = match shade {
        Shade::Signed => (0.0, known().fold(0.0_f64, |m, v| m.max(v.abs()))),
        Shade::Range => (
            known().fold(f64::INFINITY, f64::min),
            known().fold(f64::NEG_INFINITY, f64::max),
        ),
    };
    let colour = |v: f64| -> RGBColor {
        let t = match shade {
            Shade::Signed => v.abs() / hi,
            Shade::Range => 0.15 + 0.85 * (v - lo) / (hi - lo),
        };
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.5
        };
        let fade = |c: u8| (255.0 - t * (255.0 - f64::from(c))) as u8;
        if v < 0.0 && shade == Shade::Signed {
            RGBColor(fade(33), fade(102), fade(172))
        } else {
            RGBColor(fade(178), fade(24), fade(43))
        }
    };
    let root = SVGBackend::new(file, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
    let (nx, ny) = (xl.len() as f64, yl.len() as f64);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..nx, 0.0..ny)
        .map_err(|e| fail(e.to_string()))?;
    let tick = |labels: &[String], v: f64| -> String {
        let i = (v - 0.5).round();
        if (v - 0.5 - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(report.keys[0].as_str())
        .y_desc(report.keys[1].as_str())
        .x_labels(2 * xl.len() + 1)
        .y_labels(2 * yl.len() + 1)
        .x_label_formatter(&|v| tick(&xl, *v))
        .y_label_formatter(&|v| tick(&yl, *v))
        .draw()
        .map_err(|e| fail(e.to_string()))?;
    chart
        .draw_series(cells.iter().map(|&(x, y, v)| {
            let fill = v.map_or(RGBColor(220, 220, 220), colour);
            Rectangle::new(
                [(x as f64, y as f64), (x as f64 + 1.0, y as f64 + 1.0)],
                fill.filled(),
            )
        }))
        .map_err(|e| fail(e.to_string()))?;
    if xl.len() <= 12 && yl.len() <= 16 {
        let written = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), show);
        chart
            .draw_series(cells.iter().map(|&(x, y, v)| {
                Text::new(
                    written(v),
                    (x as f64 + 0.5, y as f64 + 0.5),
                    ("sans-serif", 13)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                )
            }))
            .map_err(|e| fail(e.to_string()))?;
    }
    root.present().map_err(|e| fail(e.to_string()))
}
