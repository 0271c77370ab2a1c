//! `parsim validate --plot DIR`: one SVG per case, `<case>.svg` (a long case name cut, with a
//! hash: [`crate::plot::short_file_part`]), comparing for each metric the
//! simulated mean with its 99% interval and every analytic method's value (or bounds). Metrics
//! of different units share one picture by being drawn relative to their simulated mean: the
//! simulation is the bar around 1, a method agrees where its marker falls within the bar.
//!
//! The picture grows with what it shows, so that nothing in it is cut: a column of at least
//! [`COLUMN`] pixels per metric, each labelled with its full name (turned upright when the names
//! do not fit side by side; a name beyond [`LABEL_CHARS`] characters keeps its beginning and
//! end around an ellipsis), the title wrapped onto as many lines as it needs, and the legend
//! below the plot, every method's full name wrapped to the picture's width.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::Comparison;
use crate::plot::{
    PALETTE, PlotError, SIMULATED, SIZE, draw_error, padded, short_file_part, text_width, tick,
    wrap,
};

/// The narrowest column a metric gets, in pixels: room for an upright label.
pub const COLUMN: u32 = 18;

/// The longest metric label, in characters; a longer name keeps its first and last characters
/// around an ellipsis (the end, which says what is measured, is never dropped).
pub const LABEL_CHARS: usize = 48;

/// Font sizes (plotters' sizes: the SVG's are 1.24 times smaller) of the title, the metric
/// labels and the legend.
const TITLE_FONT: u32 = 18;
const LABEL_FONT: u32 = 12;
const LEGEND_FONT: u32 = 12;

/// Pixels around the picture's edge, and the y axis's label area.
const MARGIN: u32 = 12;
const Y_LABELS: u32 = 80;

/// Height of the plotting area itself, in pixels.
const PLOT_HEIGHT: u32 = 340;

/// Line heights of the title and of the legend, in pixels.
const TITLE_LINE: u32 = 24;
const LEGEND_LINE: u32 = 16;

/// Where the legend's text starts, right of its marks.
const LEGEND_TEXT: u32 = 40;

/// The label of a metric's column: its name, or for a name beyond [`LABEL_CHARS`] characters,
/// its beginning and end around an ellipsis.
pub fn label(metric: &str) -> String {
    let chars: Vec<char> = metric.chars().collect();
    if chars.len() <= LABEL_CHARS {
        return metric.to_owned();
    }
    let tail = LABEL_CHARS / 2;
    let head = LABEL_CHARS - tail - 1;
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{start}…{end}")
}

/// The sizes of one case's picture, worked out before it is drawn so that its canvas holds
/// everything.
struct Layout {
    /// Width and height of the canvas.
    size: (u32, u32),
    /// The title's lines.
    title: Vec<String>,
    /// Each column's label.
    labels: Vec<String>,
    /// True when the labels stand upright (they do not fit side by side).
    upright: bool,
    /// Height of the area below the plot that holds the labels and the axis's name.
    label_area: u32,
    /// Height of the chart (plot, axes and labels), below the title.
    chart: u32,
    /// Each legend entry's lines: the simulation's, then each method's.
    legend: Vec<Vec<String>>,
}

impl Layout {
    fn of(case: &str, cols: &[Column], methods: &[&str]) -> Layout {
        let n = cols.len().max(1) as u32;
        let labels: Vec<String> = cols.iter().map(|c| label(c.metric)).collect();
        let sides = MARGIN + Y_LABELS + 2 * MARGIN;
        let widest = labels
            .iter()
            .map(|l| text_width(l, LABEL_FONT))
            .max()
            .unwrap_or(0);
        // side by side when every label fits its column at the usual width
        let upright = widest + 6 > (SIZE.0 - sides) / n;
        let width = if upright {
            SIZE.0.max(sides + n * COLUMN)
        } else {
            SIZE.0
        };
        let title = wrap(
            &format!("{case}: simulated (99% interval) and analytic"),
            width - 2 * MARGIN,
            TITLE_FONT,
        );
        // the labels, then the axis's name
        // (text_width overestimates: the SVG font is 1.24 times smaller than its nominal size)
        let label_area = if upright { widest * 3 / 4 + 10 } else { 22 } + 24;
        let chart = MARGIN + PLOT_HEIGHT + label_area + MARGIN;
        let text = width - 2 * MARGIN - LEGEND_TEXT;
        let legend: Vec<Vec<String>> = std::iter::once("simulated mean, 99% interval")
            .chain(methods.iter().copied())
            .map(|m| wrap(m, text, LEGEND_FONT))
            .collect();
        let legend_lines: u32 = legend.iter().map(|l| l.len() as u32).sum();
        let height = title.len() as u32 * TITLE_LINE
            + MARGIN
            + chart
            + legend_lines * LEGEND_LINE
            + legend.len() as u32 * 4
            + MARGIN;
        Layout {
            size: (width, height),
            title,
            labels,
            upright,
            label_area,
            chart,
            legend,
        }
    }
}

/// The legend mark of method `k`: the palette's colour, in a circle, then (a seventh method
/// and on) a triangle, then a cross.
fn mark<DB: DrawingBackend>(k: usize, at: (i32, i32)) -> DynElement<'static, DB, (i32, i32)> {
    let colour = PALETTE[k % PALETTE.len()];
    match k / PALETTE.len() {
        0 => Circle::new(at, 4, colour.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 6, colour.filled()).into_dyn(),
        _ => Cross::new(at, 5, colour.stroke_width(2)).into_dyn(),
    }
}

/// One metric's column: its simulated relative half-width and each method's value (or
/// `[lower, upper]`), relative to the simulated mean.
struct Column<'a> {
    metric: &'a str,
    half_width: f64,
    methods: Vec<(&'a str, [f64; 2])>,
}

/// The columns of one case's rows, metrics in report order (rows without a simulation or a
/// prediction are left out).
fn columns<'a>(rows: &[&'a Comparison]) -> Vec<Column<'a>> {
    let mut cols: Vec<Column> = Vec::new();
    for r in rows {
        let drawn = r.replications > 0 && r.simulated.is_finite() && r.simulated != 0.0;
        let value = match r.bounds {
            Some([lo, hi]) => [lo, hi],
            None => [r.analytic; 2],
        };
        if !drawn || !value.iter().all(|v| v.is_finite()) {
            continue;
        }
        let relative = value.map(|v| v / r.simulated);
        let col = match cols.iter().position(|c| c.metric == r.metric) {
            Some(i) => &mut cols[i],
            None => {
                cols.push(Column {
                    metric: &r.metric,
                    half_width: r.half_width_99 / r.simulated.abs(),
                    methods: Vec::new(),
                });
                cols.last_mut().expect("just pushed")
            }
        };
        col.methods.push((&r.method, relative));
    }
    cols
}

/// Writes one picture per case of `rows` into `dir` (created if needed); returns their files.
/// Cases with nothing to compare get no picture.
pub fn write(rows: &[Comparison], dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    crate::plot::make_dir(dir)?;
    let mut cases: Vec<&str> = Vec::new();
    for r in rows {
        if !cases.contains(&r.case.as_str()) {
            cases.push(&r.case);
        }
    }
    let mut files = Vec::new();
    for case in cases {
        let of_case: Vec<&Comparison> = rows.iter().filter(|r| r.case == case).collect();
        let cols = columns(&of_case);
        if cols.is_empty() {
            continue;
        }
        let file = dir.join(format!("{}.svg", short_file_part(case)));
        draw(case, &cols, &file)?;
        files.push(file);
    }
    Ok(files)
}

/// Draws one case's columns into `file`.
fn draw(case: &str, cols: &[Column], file: &Path) -> Result<(), PlotError> {
    let fail = draw_error(file);
    let mut methods: Vec<&str> = Vec::new();
    for (m, _) in cols.iter().flat_map(|c| &c.methods) {
        if !methods.contains(m) {
            methods.push(m);
        }
    }
    let layout = Layout::of(case, cols, &methods);
    let ys = cols.iter().flat_map(|c| {
        [1.0 - c.half_width, 1.0 + c.half_width]
            .into_iter()
            .chain(c.methods.iter().flat_map(|(_, v)| *v))
    });
    let y_range = padded(ys);
    let x_range = -0.5..(cols.len() as f64 - 0.5);
    let (width, _) = layout.size;
    crate::plot::svg_file_of_size(file, layout.size, |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let title_height = layout.title.len() as u32 * TITLE_LINE + MARGIN;
        let (title, rest) = root.split_vertically(title_height);
        let (chart_area, legend) = rest.split_vertically(layout.chart);
        let centred = ("sans-serif", TITLE_FONT)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, line) in layout.title.iter().enumerate() {
            let y = (MARGIN + i as u32 * TITLE_LINE) as i32;
            title
                .draw(&Text::new(
                    line.clone(),
                    ((width / 2) as i32, y),
                    centred.clone(),
                ))
                .map_err(|e| fail(e.to_string()))?;
        }
        let mut chart = ChartBuilder::on(&chart_area)
            .margin(MARGIN)
            .margin_right(2 * MARGIN)
            .x_label_area_size(layout.label_area)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(x_range, y_range.clone())
            .map_err(|e| fail(e.to_string()))?;
        chart
            .configure_mesh()
            .x_labels(0)
            .y_label_formatter(&|v| tick(*v))
            .disable_x_mesh()
            .x_desc("metric")
            .y_desc("value / simulated mean (dimensionless)")
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        // each column's label under it: across, or upright reading upwards, ending at the axis
        let style = ("sans-serif", LABEL_FONT).into_font().color(&BLACK);
        let style = if layout.upright {
            style
                .transform(FontTransform::Rotate270)
                .pos(Pos::new(HPos::Right, VPos::Center))
        } else {
            style.pos(Pos::new(HPos::Center, VPos::Top))
        };
        for (i, text) in layout.labels.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64, y_range.start));
            let tick_mark = PathElement::new(vec![(x, y), (x, y + 4)], BLACK);
            root.draw(&tick_mark).map_err(|e| fail(e.to_string()))?;
            root.draw(&Text::new(text.clone(), (x, y + 7), style.clone()))
                .map_err(|e| fail(e.to_string()))?;
        }
        // the simulation: a bar of the 99% interval around 1 in every column
        let bar = |x: f64, [lo, hi]: [f64; 2], w: f64| {
            [
                vec![(x, lo), (x, hi)],
                vec![(x - w, lo), (x + w, lo)],
                vec![(x - w, hi), (x + w, hi)],
            ]
        };
        chart
            .draw_series(cols.iter().enumerate().flat_map(|(i, c)| {
                bar(i as f64, [1.0 - c.half_width, 1.0 + c.half_width], 0.08)
                    .map(|p| PathElement::new(p, SIMULATED.stroke_width(3)))
            }))
            .map_err(|e| fail(e.to_string()))?;
        // each method beside it: a dot for a value, a capped bar for bounds
        let step = 0.6 / methods.len().max(1) as f64;
        for (k, method) in methods.iter().enumerate() {
            let colour = PALETTE[k % PALETTE.len()];
            let dx = -0.3 + step * (k as f64 + 0.5);
            let marks =
                cols.iter().enumerate().flat_map(|(i, c)| {
                    let x = i as f64 + dx;
                    c.methods
                        .iter()
                        .filter(|(m, _)| m == method)
                        .flat_map(move |&(_, v)| {
                            // a seventh method and on: the palette again, in another marker
                            let dot = match k / PALETTE.len() {
                                0 => Circle::new((x, v[0]), 4, colour.filled()).into_dyn(),
                                1 => TriangleMarker::new((x, v[0]), 6, colour.filled()).into_dyn(),
                                _ => Cross::new((x, v[0]), 5, colour.stroke_width(2)).into_dyn(),
                            };
                            let bounds = (v[0] != v[1]).then(|| bar(x, v, 0.04));
                            std::iter::once(dot).chain(bounds.into_iter().flatten().map(move |p| {
                                PathElement::new(p, colour.stroke_width(2)).into_dyn()
                            }))
                        })
                });
            chart.draw_series(marks).map_err(|e| fail(e.to_string()))?;
        }
        // the legend below the chart: each entry's mark, then its full name, line by line
        let text_style = ("sans-serif", LEGEND_FONT)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let mut y = (LEGEND_LINE / 2) as i32;
        for (k, lines) in layout.legend.iter().enumerate() {
            let x = MARGIN as i32;
            if k == 0 {
                let line =
                    PathElement::new(vec![(x + 4, y), (x + 24, y)], SIMULATED.stroke_width(3));
                legend.draw(&line).map_err(|e| fail(e.to_string()))?;
            } else {
                legend
                    .draw(&mark(k - 1, (x + 14, y)))
                    .map_err(|e| fail(e.to_string()))?;
            }
            for line in lines {
                legend
                    .draw(&Text::new(
                        line.clone(),
                        ((MARGIN + LEGEND_TEXT) as i32, y),
                        text_style.clone(),
                    ))
                    .map_err(|e| fail(e.to_string()))?;
                y += LEGEND_LINE as i32;
            }
            y += 4;
        }
        root.present().map_err(|e| fail(e.to_string()))
    })
}
