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
//!   (`<metric>.<method key>.error.svg`, [`crate::plot::method_key`]; red where the formula is
//!   above the simulation, blue below): the picture that says where a formula can be trusted.
//!   Each map has a labelled colour scale; an error map's is symmetric and reaches at least
//!   ±10%, so that noise does not set it, a `*` marks an error whose
//!   interval excludes 0 and a black frame a failing verdict.
//! - Two keys on a grid drawn as [`Style::Lines`]: for each metric, the first key along x and
//!   one curve per value of the second (its simulated mean and band, and each method's curve in
//!   the same colour, dashed; drawn once in black or grey where it does not depend on the
//!   second key), each method in a dash pattern of its own and under its own name.
//!
//! Axis labels carry the metric's name and unit ([`crate::plot::unit`]); ticks are written short
//! ([`crate::plot::tick`]); titles and legend entries are cut to the picture's width; x values
//! that are not numbers are drawn at their positions.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::output::SweepReport;
use super::{Layout, Row};
use crate::plot::{
    PALETTE, PlotError, SIMULATED, SIZE, draw_error, file_part, fit, method_key, padded, tick,
    with_unit,
};
use crate::predict::measured::method_name;
use crate::validate::Verdict;

/// A curve's points `(x, y)`.
type Curve = Vec<(f64, f64)>;

/// How a sweep of two keys on a grid is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// Heat maps of the simulated mean and of each method's relative error.
    #[default]
    HeatMaps,
    /// Line charts: the first key along x, one curve per value of the second.
    Lines,
}

/// Checks, before a sweep runs, that its pictures can be drawn: one key, a zip, or two keys
/// on a grid; along an x metric (`x_metric`), line charts only.
pub fn check_shape(
    layout: Layout,
    keys: usize,
    style: Style,
    x_metric: bool,
) -> Result<(), PlotError> {
    if layout == Layout::Grid && keys > 2 {
        return Err(PlotError::Shape(keys));
    }
    if x_metric && layout == Layout::Grid && keys == 2 && style == Style::HeatMaps {
        return Err(PlotError::AxisOnMap);
    }
    Ok(())
}

/// The x axis of a line chart: its label and every point's coordinate.
struct Axis {
    label: String,
    xs: Vec<f64>,
}

/// Writes the pictures of `metrics` (none: every metric some method predicts) into `dir`
/// (created if needed), a grid of two keys drawn in `style`, along the first key or, given
/// `x`, along each point's simulated mean of that metric (line charts only); returns their
/// files.
pub fn write(
    report: &SweepReport,
    dir: &Path,
    metrics: &[String],
    style: Style,
    x: Option<&str>,
) -> Result<Vec<PathBuf>, PlotError> {
    check_shape(report.layout, report.keys.len(), style, x.is_some())?;
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
    let axis = match x {
        None => Axis {
            label: report.keys[0].clone(),
            xs: positions(report),
        },
        Some(m) => Axis {
            label: with_unit(m),
            xs: report
                .points
                .iter()
                .map(|p| {
                    p.rows
                        .iter()
                        .find(|r| r.metric == m)
                        .map(|r| r.simulated)
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| PlotError::UnknownMetric(m.to_owned()))
                })
                .collect::<Result<_, _>>()?,
        },
    };
    let series = if two_d && style == Style::Lines {
        series_of(report)
    } else {
        vec![Series {
            label: None,
            points: (0..report.points.len()).collect(),
        }]
    };
    crate::plot::make_dir(dir)?;
    let mut files = Vec::new();
    for metric in metrics {
        if two_d && style == Style::HeatMaps {
            let file = dir.join(format!("{}.simulated.svg", file_part(&metric)));
            let title = format!("{metric}: simulated mean");
            let simulated = cell_values(report, &metric, |_| true, |r| Some(r.simulated));
            heat_map(
                report,
                &file,
                &title,
                &simulated,
                None,
                Shade::Range,
                tick,
                &format!("simulated mean, {}", with_unit(&metric)),
            )?;
            files.push(file);
            for method in methods(report, &metric, false) {
                let file = dir.join(format!(
                    "{}.{}.error.svg",
                    file_part(&metric),
                    method_key(&method)
                ));
                let title = format!("{metric}: relative error of {}", short(&method));
                let of_method = |r: &Row| of_method(r, &method);
                let errors = cell_values(report, &metric, of_method, |r| r.relative_error);
                let marks = cell_marks(report, &metric, of_method);
                let percent = |v: f64| {
                    if (100.0 * v).abs() < 0.05 {
                        "0%".to_owned()
                    } else {
                        format!("{:+.1}%", 100.0 * v)
                    }
                };
                heat_map(
                    report,
                    &file,
                    &title,
                    &errors,
                    Some(&marks),
                    Shade::Signed,
                    percent,
                    "(analytic - simulated) / simulated",
                )?;
                files.push(file);
            }
        } else {
            let file = dir.join(format!("{}.svg", file_part(&metric)));
            curves(report, &file, &metric, &series, &axis)?;
            files.push(file);
            if two_d {
                for method in methods(report, &metric, false) {
                    let file = dir.join(format!(
                        "{}.{}.error.svg",
                        file_part(&metric),
                        method_key(&method)
                    ));
                    error_lines(report, &file, &metric, &method, &series, &axis)?;
                    files.push(file);
                }
            }
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

/// The methods predicting `metric` at some point, by name (their labels without what breaks,
/// which may name figures of the point: [`method_name`]), in order of first appearance: values
/// (`bounds == false`) or bounds (`true`).
fn methods(report: &SweepReport, metric: &str, bounds: bool) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for p in &report.points {
        for r in p.rows.iter().filter(|r| r.metric == metric) {
            if let Some(m) = r.method.as_deref().map(method_name)
                && r.lower_bound.is_some() == bounds
                && !found.iter().any(|f| f == m)
            {
                found.push(m.to_owned());
            }
        }
    }
    found
}

/// Whether `r` is a row of the method named `name` ([`methods`]).
fn of_method(r: &Row, name: &str) -> bool {
    r.method.as_deref().map(method_name) == Some(name)
}

/// Some of a sweep's points drawn as one curve: all of them, or those sharing a value of the
/// second key (`label`, `KEY=VALUE`).
struct Series {
    /// The legend's suffix, if the picture has several series.
    label: Option<String>,
    /// Indices into the report's points, in sweep order.
    points: Vec<usize>,
}

/// One series per value of the second key, in order of first appearance.
fn series_of(report: &SweepReport) -> Vec<Series> {
    let mut series: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, p) in report.points.iter().enumerate() {
        match series.iter_mut().find(|(v, _)| v == &p.values[1]) {
            Some((_, points)) => points.push(i),
            None => series.push((p.values[1].clone(), vec![i])),
        }
    }
    series
        .into_iter()
        .map(|(value, points)| Series {
            label: Some(format!("{}={value}", report.keys[1])),
            points,
        })
        .collect()
}

/// A method's name up to its first comma or semicolon: what a legend or title has room for
/// (file names keep the whole name).
fn short(method: &str) -> &str {
    method
        .split([',', ';'])
        .next()
        .map_or(method, str::trim_end)
}

/// The x coordinate of every point: its first value when every first value is a number, else
/// the position of that value among the distinct first values.
fn positions(report: &SweepReport) -> Vec<f64> {
    let numbers: Option<Vec<f64>> = report
        .points
        .iter()
        .map(|p| p.values[0].parse::<f64>().ok())
        .collect();
    numbers.unwrap_or_else(|| {
        let mut seen: Vec<&str> = Vec::new();
        report
            .points
            .iter()
            .map(|p| {
                let v = p.values[0].as_str();
                let at = seen.iter().position(|s| *s == v).unwrap_or_else(|| {
                    seen.push(v);
                    seen.len() - 1
                });
                at as f64
            })
            .collect()
    })
}

/// One series' simulated points `(x, mean, 95% half-width)` of `metric`.
fn simulated_points(
    report: &SweepReport,
    xs: &[f64],
    series: &Series,
    metric: &str,
) -> Vec<(f64, f64, f64)> {
    series
        .points
        .iter()
        .filter_map(|&i| {
            let r = report.points[i].rows.iter().find(|r| r.metric == metric)?;
            Some((xs[i], r.simulated, r.half_width_95))
        })
        .collect()
}

/// One series' curve of `method` for `metric`: `at` of its row at every point that has one.
fn method_curve(
    report: &SweepReport,
    xs: &[f64],
    series: &Series,
    metric: &str,
    method: &str,
    at: fn(&Row) -> Option<f64>,
) -> Curve {
    series
        .points
        .iter()
        .filter_map(|&i| {
            let r = report.points[i]
                .rows
                .iter()
                .find(|r| r.metric == metric && of_method(r, method))?;
            Some((xs[i], at(r)?))
        })
        .collect()
}

/// How a line of a chart is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stroke {
    /// A solid line with a dot at each point (a simulated mean).
    Measured,
    /// A solid line (a method's curve).
    Solid,
    /// A dashed line (a method's curve beside several series), in the `k`-th method's dash
    /// pattern ([`DASHES`]).
    Dashed(usize),
    /// A thin dashed line (a bound).
    Bound,
}

/// The dash patterns (dash, gap, in pixels) of the methods' curves beside several series, one
/// per method in order, so that two methods never share a line style.
const DASHES: [(u32, u32); 4] = [(10, 4), (3, 3), (16, 4), (6, 6)];

/// The inks of methods drawn once beside several series (their curve the same for every
/// series): black and greys, told apart by their dashes.
const INKS: [RGBColor; 4] = [
    RGBColor(0, 0, 0),
    RGBColor(90, 90, 90),
    RGBColor(40, 40, 40),
    RGBColor(130, 130, 130),
];

/// The legend names of `methods`: each one's short name, or its whole name where two short
/// names are the same.
fn legend_names(methods: &[String]) -> Vec<String> {
    methods
        .iter()
        .map(|m| {
            let name = short(m);
            let shared = methods.iter().filter(|o| short(o) == name).count() > 1;
            if shared { m.clone() } else { name.to_owned() }
        })
        .collect()
}

/// One line of a chart, with its 95% band if it has one.
struct Line {
    /// Its legend entry; none for the second line of a pair of bounds.
    label: Option<String>,
    /// Its colour.
    colour: RGBColor,
    /// How it is drawn.
    stroke: Stroke,
    /// Its points `(x, y)`.
    points: Curve,
    /// Its band: `(x, half-width)` at each point, drawn around `points`.
    band: Option<Vec<f64>>,
}

/// One metric along the first key: for each series its simulated band and mean and each
/// method's curve; bounds, dashed, when there is one series.
fn curves(
    report: &SweepReport,
    file: &Path,
    metric: &str,
    series: &[Series],
    axis: &Axis,
) -> Result<(), PlotError> {
    let xs = &axis.xs;
    let several = series.len() > 1;
    let colour_of = |i: usize| {
        if several {
            PALETTE[i % PALETTE.len()]
        } else {
            SIMULATED
        }
    };
    let mut lines = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let simulated = simulated_points(report, xs, s, metric);
        let suffix = s
            .label
            .as_ref()
            .map(|l| format!(", {l}"))
            .unwrap_or_default();
        lines.push(Line {
            label: Some(format!("simulated mean{suffix}")),
            colour: colour_of(i),
            stroke: Stroke::Measured,
            points: simulated.iter().map(|&(x, m, _)| (x, m)).collect(),
            band: Some(simulated.iter().map(|&(_, _, h)| h).collect()),
        });
    }
    // each method once where every series gives the same curve (in black beside several
    // series), else once per series in its colour
    let predicting = methods(report, metric, false);
    let names = legend_names(&predicting);
    for (k, method) in predicting.into_iter().enumerate() {
        let per_series: Vec<Curve> = series
            .iter()
            .map(|s| method_curve(report, xs, s, metric, &method, |r| r.analytic))
            .collect();
        let name = names[k].as_str();
        if !several || per_series.windows(2).all(|w| w[0] == w[1]) {
            let (colour, stroke) = if several {
                (INKS[k % INKS.len()], Stroke::Dashed(k % DASHES.len()))
            } else {
                (PALETTE[k % PALETTE.len()], Stroke::Solid)
            };
            lines.push(Line {
                label: Some(name.to_owned()),
                colour,
                stroke,
                points: per_series.into_iter().next().unwrap_or_default(),
                band: None,
            });
        } else {
            for (i, (s, points)) in series.iter().zip(per_series).enumerate() {
                // (a series the method does not predict gets no line and no legend entry)
                if points.is_empty() {
                    continue;
                }
                let label = s.label.as_deref().unwrap_or_default();
                lines.push(Line {
                    label: Some(format!("{name}, {label}")),
                    colour: colour_of(i),
                    stroke: Stroke::Dashed(k % DASHES.len()),
                    points,
                    band: None,
                });
            }
        }
    }
    if !several {
        for (i, method) in methods(report, metric, true).into_iter().enumerate() {
            let colour = PALETTE[(PALETTE.len() - 1 - i) % PALETTE.len()];
            let lower: fn(&Row) -> Option<f64> = |r| r.lower_bound;
            let upper: fn(&Row) -> Option<f64> = |r| r.upper_bound;
            let label = format!("{} (lower, upper)", short(&method));
            for (at, label) in [(lower, Some(label)), (upper, None)] {
                lines.push(Line {
                    label,
                    colour,
                    stroke: Stroke::Bound,
                    points: method_curve(report, xs, &series[0], metric, &method, at),
                    band: None,
                });
            }
        }
    }
    let title = format!("{metric} against {}", axis.label);
    draw_lines(file, &title, &with_unit(metric), axis, &lines, false)
}

/// Each method's signed relative error `(analytic - simulated) / simulated` for `metric`
/// along the first key, one line per series with its 95% band (from the simulated
/// interval): how far the formula is from each series' simulation.
fn error_lines(
    report: &SweepReport,
    file: &Path,
    metric: &str,
    method: &str,
    series: &[Series],
    axis: &Axis,
) -> Result<(), PlotError> {
    let xs = &axis.xs;
    let mut lines = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let (points, band): (Curve, Vec<f64>) = s
            .points
            .iter()
            .filter_map(|&p| {
                let r = report.points[p]
                    .rows
                    .iter()
                    .find(|r| r.metric == metric && of_method(r, method))?;
                let (a, m) = (r.analytic?, r.simulated);
                let error = r.relative_error?;
                Some(((xs[p], error), (a / m).abs() * r.half_width_95 / m.abs()))
            })
            .unzip();
        lines.push(Line {
            label: s.label.clone(),
            colour: PALETTE[i % PALETTE.len()],
            stroke: Stroke::Measured,
            points,
            band: Some(band),
        });
    }
    let title = format!("{metric}: relative error of {}", short(method));
    draw_lines(
        file,
        &title,
        "relative error (analytic - simulated) / simulated",
        axis,
        &lines,
        true,
    )
}

/// Draws `lines` along `axis` into `file` (y values as percentages when `percent`).
fn draw_lines(
    file: &Path,
    title: &str,
    y_desc: &str,
    axis: &Axis,
    lines: &[Line],
    percent: bool,
) -> Result<(), PlotError> {
    let xs = &axis.xs;
    let fail = draw_error(file);
    let ys = lines.iter().flat_map(|l| {
        l.points.iter().enumerate().flat_map(move |(i, &(_, y))| {
            let h = l.band.as_ref().map_or(0.0, |b| b[i]);
            [y - h, y + h]
        })
    });
    let y_range = padded(ys);
    let x_range = padded(xs.iter().copied());
    let (x_range_for_legend, y_range_for_legend) = (x_range.clone(), y_range.clone());
    crate::plot::svg_file(file, |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(fit(title, SIZE.0 - 24, 20), ("sans-serif", 20))
            .margin(12)
            .margin_right(24)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range, y_range)
            .map_err(|e| fail(e.to_string()))?;
        let integral = xs.iter().all(|x| x.fract() == 0.0);
        let x_tick = |v: &f64| {
            if integral {
                format!("{v:.0}")
            } else {
                tick(*v)
            }
        };
        let y_tick = |v: &f64| {
            if percent {
                format!("{}%", tick(100.0 * v))
            } else {
                tick(*v)
            }
        };
        chart
            .configure_mesh()
            .x_desc(axis.label.as_str())
            .y_desc(fit(y_desc, SIZE.1 - 120, 14))
            .x_label_formatter(&x_tick)
            .y_label_formatter(&y_tick)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        let one_band = lines.iter().filter(|l| l.band.is_some()).count() == 1;
        for line in lines {
            let colour = line.colour;
            if let Some(band) = &line.band {
                let outline: Vec<(f64, f64)> = line
                    .points
                    .iter()
                    .zip(band)
                    .map(|(&(x, y), h)| (x, y + h))
                    .chain(
                        line.points
                            .iter()
                            .zip(band)
                            .rev()
                            .map(|(&(x, y), h)| (x, y - h)),
                    )
                    .collect();
                let fill = colour.mix(0.2);
                let drawn = chart
                    .draw_series(std::iter::once(Polygon::new(outline, fill)))
                    .map_err(|e| fail(e.to_string()))?;
                if one_band {
                    drawn
                        .label("simulated, 95% interval")
                        .legend(move |(x, y)| {
                            Rectangle::new([(x, y - 5), (x + 20, y + 5)], fill.filled())
                        });
                }
            }
            let width = if line.stroke == Stroke::Bound { 1 } else { 2 };
            let style = colour.stroke_width(width);
            let dashes = match line.stroke {
                Stroke::Dashed(k) => Some(DASHES[k % DASHES.len()]),
                Stroke::Bound => Some((8, 4)),
                Stroke::Solid | Stroke::Measured => None,
            };
            let drawn = match dashes {
                Some((dash, gap)) => chart
                    .draw_series(DashedLineSeries::new(line.points.clone(), dash, gap, style))
                    .map_err(|e| fail(e.to_string()))?,
                None => chart
                    .draw_series(LineSeries::new(line.points.clone(), style))
                    .map_err(|e| fail(e.to_string()))?,
            };
            if let Some(label) = &line.label {
                // the legend's sample drawn in the line's own dashes, 24 pixels long
                let (dash, gap) = dashes.map_or((24, 0), |(d, g)| (d as i32, g as i32));
                drawn
                    .label(fit(label, LEGEND_WIDTH, 13))
                    .legend(move |(x, y)| {
                        let piece = |k: i32| {
                            let from = (k * (dash + gap)).min(24);
                            PathElement::new(vec![(from, 0), ((from + dash).min(24), 0)], style)
                        };
                        EmptyElement::at((x, y)) + piece(0) + piece(1) + piece(2)
                    });
            }
            if line.stroke == Stroke::Measured {
                chart
                    .draw_series(
                        line.points
                            .iter()
                            .map(|&p| Circle::new(p, 3, colour.filled())),
                    )
                    .map_err(|e| fail(e.to_string()))?;
            }
        }
        chart
            .configure_series_labels()
            .position(legend_place(
                lines,
                lines.iter().filter(|l| l.label.is_some()).count(),
                &x_range_for_legend,
                &y_range_for_legend,
            ))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))
    })
}

/// The widest a legend's label may be, in pixels (longer ones are cut with an ellipsis).
const LEGEND_WIDTH: u32 = 420;

/// Where the legend hides the least: the corner (of the four) with the fewest points of
/// `lines` in the share of the plot a legend of `entries` lines covers, given the plot's ranges;
/// ties in the order upper left, upper right, lower right, lower left.
fn legend_place(
    lines: &[Line],
    entries: usize,
    x: &std::ops::Range<f64>,
    y: &std::ops::Range<f64>,
) -> SeriesLabelPosition {
    // the legend box: about half the width, and 20 pixels a line of the 400-odd of the plot
    let (w, h) = (0.55, (0.06 * entries as f64 + 0.04).min(0.9));
    let at = |(px, py): (f64, f64)| {
        (
            (px - x.start) / (x.end - x.start),
            (py - y.start) / (y.end - y.start),
        )
    };
    let corners = [
        (SeriesLabelPosition::UpperLeft, true, true),
        (SeriesLabelPosition::UpperRight, false, true),
        (SeriesLabelPosition::LowerRight, false, false),
        (SeriesLabelPosition::LowerLeft, true, false),
    ];
    let hidden = |left: bool, upper: bool| {
        lines
            .iter()
            .flat_map(|l| l.points.iter().copied().map(at))
            .filter(|&(u, v)| {
                (if left { u <= w } else { u >= 1.0 - w })
                    && (if upper { v >= 1.0 - h } else { v <= h })
            })
            .count()
    };
    corners
        .into_iter()
        .min_by_key(|&(_, left, upper)| hidden(left, upper))
        .map_or(SeriesLabelPosition::UpperLeft, |(p, _, _)| p)
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

/// What an error cell says beyond its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Mark {
    /// The error's 95% interval (from the simulated mean's) excludes 0: more than noise.
    significant: bool,
    /// Its verdict fails: a disagreement, or an approximation outside its tolerance.
    failing: bool,
}

/// The smallest half-range of an error map's colour scale: errors within it are pale, so that
/// a map of noise looks like one.
const ERROR_FLOOR: f64 = 0.10;

/// At every point, the [`Mark`] of the first row of `metric` that `pick` chooses.
fn cell_marks(report: &SweepReport, metric: &str, pick: impl Fn(&Row) -> bool) -> Vec<Mark> {
    report
        .points
        .iter()
        .map(|p| {
            let Some(r) = p.rows.iter().find(|r| r.metric == metric && pick(r)) else {
                return Mark::default();
            };
            let significant = match (r.analytic, r.relative_error) {
                (Some(a), Some(e)) if r.simulated != 0.0 && e.is_finite() => {
                    let m = r.simulated;
                    e.abs() > (a / m).abs() * r.half_width_95 / m.abs()
                }
                _ => false,
            };
            let failing = r
                .verdict
                .is_some_and(|v| matches!(v, Verdict::Disagree | Verdict::OutsideTolerance));
            Mark {
                significant,
                failing,
            }
        })
        .collect()
}

/// A heat map over the grid of two keys: each point's cell coloured by its value as `shade`
/// says, with the value written in it by `show` when the grid is small enough to read, and
/// with `marks` (error maps): a `*` after a value whose error is more than noise, a black frame
/// around a failing verdict. The colour scale beside it is labelled `scale_label`. An error
/// map's scale is symmetric about 0 and reaches at least [`ERROR_FLOOR`], so noise does not set
/// it.
#[allow(clippy::too_many_arguments)]
fn heat_map(
    report: &SweepReport,
    file: &Path,
    title: &str,
    values: &[Option<f64>],
    marks: Option<&[Mark]>,
    shade: Shade,
    show: fn(f64) -> String,
    scale_label: &str,
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
    let known = || values.iter().flatten().copied().filter(|v| v.is_finite());
    // an error map's scale: the largest error that is more than noise, at least the floor
    let beyond_noise = values
        .iter()
        .enumerate()
        .filter(|(i, _)| marks.is_none_or(|m| m[*i].significant))
        .filter_map(|(_, v)| *v)
        .filter(|v| v.is_finite())
        .fold(0.0_f64, |m, v| m.max(v.abs()));
    let (lo, hi) = match shade {
        Shade::Signed => (0.0, beyond_noise.max(ERROR_FLOOR)),
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
    crate::plot::svg_file(file, |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let root = root
            .titled(&fit(title, SIZE.0 - 24, 18), ("sans-serif", 18))
            .map_err(|e| fail(e.to_string()))?;
        let (map_area, scale_area) = root.split_horizontally(SIZE.0 - 130);
        let scale = match shade {
            Shade::Signed => -hi..hi,
            Shade::Range => lo..hi,
        };
        colour_scale(&scale_area, scale, &colour, show, scale_label)
            .map_err(|e| fail(e.to_string()))?;
        let (nx, ny) = (xl.len() as f64, yl.len() as f64);
        let mut chart = ChartBuilder::on(&map_area)
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
        if let Some(marks) = marks {
            // a failing verdict framed in black
            chart
                .draw_series(cells.iter().zip(marks).filter(|(_, m)| m.failing).map(
                    |(&(x, y, _), _)| {
                        let (x, y) = (x as f64, y as f64);
                        Rectangle::new(
                            [(x + 0.04, y + 0.04), (x + 0.96, y + 0.96)],
                            BLACK.stroke_width(3),
                        )
                    },
                ))
                .map_err(|e| fail(e.to_string()))?;
        }
        if xl.len() <= 12 && yl.len() <= 16 {
            let written = |i: usize, v: Option<f64>| {
                let star = marks.is_some_and(|m| m[i].significant);
                let text = v.map_or_else(|| "-".to_owned(), show);
                if star { format!("{text}*") } else { text }
            };
            chart
                .draw_series(cells.iter().enumerate().map(|(i, &(x, y, v))| {
                    Text::new(
                        written(i, v),
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
    })
}

/// A vertical colour scale over `range` (values coloured by `colour`, ticks written by `show`)
/// in `area`, with `label` written along it; nothing when the range is empty or not finite (no
/// known value).
fn colour_scale<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    range: std::ops::Range<f64>,
    colour: &dyn Fn(f64) -> RGBColor,
    show: fn(f64) -> String,
    label: &str,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    if !(range.start.is_finite() && range.end.is_finite()) || range.end <= range.start {
        return Ok(());
    }
    let (width, height) = area.dim_in_pixel();
    let (label_area, area) = area.split_horizontally(22);
    // the label, read from the bottom up, centred on the bar
    let size = 13;
    let text = fit(label, height.saturating_sub(110), size);
    label_area.draw(&Text::new(
        text,
        (4, height as i32 / 2 + 8),
        ("sans-serif", size)
            .into_font()
            .transform(FontTransform::Rotate270)
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    let _ = width;
    let mut chart = ChartBuilder::on(&area)
        .margin_top(40)
        .margin_bottom(57)
        .margin_right(8)
        .y_label_area_size(62)
        .build_cartesian_2d(0.0..1.0, range.clone())?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(7)
        .y_label_style(("sans-serif", 12))
        .y_label_formatter(&|v| show(*v))
        .draw()?;
    const STEPS: usize = 100;
    let step = (range.end - range.start) / STEPS as f64;
    chart.draw_series((0..STEPS).map(|k| {
        let from = range.start + k as f64 * step;
        Rectangle::new(
            [(0.0, from), (1.0, from + step)],
            colour(from + step / 2.0).filled(),
        )
    }))?;
    Ok(())
}
