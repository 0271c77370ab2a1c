//! `parsim validate --plot DIR`: one SVG per case, `<case>.svg` (a long case name cut, with a
//! hash: [`crate::plot::short_file_part`]), comparing for each metric the
//! simulated mean with its 99% interval and every analytic method's value (or bounds). Metrics
//! of different units share one picture by being drawn relative to their simulated mean: the
//! simulation is the bar around 1, a method agrees where its marker falls within the bar.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::Comparison;
use crate::plot::{
    PALETTE, PlotError, SIMULATED, SIZE, draw_error, fit, padded, short_file_part, tick,
};

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
    let ys = cols.iter().flat_map(|c| {
        [1.0 - c.half_width, 1.0 + c.half_width]
            .into_iter()
            .chain(c.methods.iter().flat_map(|(_, v)| *v))
    });
    let y_range = padded(ys);
    // room above the marks for the legend
    let y_range = y_range.start
        ..y_range.end + 0.1 * (methods.len() + 1) as f64 * (y_range.end - y_range.start);
    let x_range = -0.5..(cols.len() as f64 - 0.5);
    crate::plot::svg_file(file, |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                fit(
                    &format!("{case}: simulated (99% interval) and analytic"),
                    SIZE.0 - 24,
                    20,
                ),
                ("sans-serif", 20),
            )
            .margin(12)
            .margin_right(24)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range, y_range)
            .map_err(|e| fail(e.to_string()))?;
        // each metric's name cut to its column's width (the plot is about 680 pixels wide)
        let column = (SIZE.0 - 110) / cols.len().max(1) as u32;
        let x_tick = |v: &f64| {
            let i = v.round();
            match cols.get(i as usize) {
                Some(c) if (v - i).abs() < 1e-9 && i >= 0.0 => fit(c.metric, column - 6, 12),
                _ => String::new(),
            }
        };
        chart
            .configure_mesh()
            .x_labels(cols.len().max(2))
            .x_label_formatter(&x_tick)
            .x_label_style(("sans-serif", 12))
            .y_label_formatter(&|v| tick(*v))
            .disable_x_mesh()
            .x_desc("metric")
            .y_desc("value / simulated mean (dimensionless)")
            .draw()
            .map_err(|e| fail(e.to_string()))?;
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
            .map_err(|e| fail(e.to_string()))?
            .label("simulated mean, 99% interval")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], SIMULATED.stroke_width(3))
            });
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
            chart
                .draw_series(marks)
                .map_err(|e| fail(e.to_string()))?
                .label(fit(method, 420, 13))
                .legend(move |(x, y)| match k / PALETTE.len() {
                    0 => Circle::new((x + 10, y), 4, colour.filled()).into_dyn(),
                    1 => TriangleMarker::new((x + 10, y), 6, colour.filled()).into_dyn(),
                    _ => Cross::new((x + 10, y), 5, colour.stroke_width(2)).into_dyn(),
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))
    })
}
