//! The picture of a fit (`parsim fit-trace --plot FILE`): on the left the autocorrelation of
//! successive times against the lag, the sample's as dots within the band independent samples
//! stay in, each fit's as a line; on the right the probability that one time exceeds `x`, on a
//! log scale, the sample's and each fit's.

use std::path::Path;

use plotters::prelude::*;

use super::{Fitted, TraceFit};
use crate::plot::{PALETTE, PlotError, SIMULATED, draw_error, svg_file_of_size, tick};

/// The picture's size: two panels side by side.
const SIZE: (u32, u32) = (1200, 520);

/// Points along x of the distribution panel.
const STEPS: usize = 200;

/// Draws the picture of `fit` into `file` (SVG).
pub fn draw(fit: &TraceFit, file: &Path) -> Result<(), PlotError> {
    let fail = draw_error(file);
    svg_file_of_size(file, SIZE, |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        autocorrelation_panel(fit, &left).map_err(|e| fail(e.to_string()))?;
        survival_panel(fit, &right).map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))
    })
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Failure<'a> = DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>;

fn autocorrelation_panel<'a>(fit: &TraceFit, area: &Area<'a>) -> Result<(), Failure<'a>> {
    let s = &fit.sample;
    let lags = s.autocorrelations.len();
    let values = s
        .autocorrelations
        .iter()
        .chain(fit.fits.iter().flat_map(|f| &f.stats.autocorrelations));
    let (lo, hi) = values.fold((-s.white_noise_band, s.white_noise_band), |(lo, hi), v| {
        (lo.min(*v), hi.max(*v))
    });
    let pad = 0.08 * (hi - lo).max(1e-3);
    let mut chart = ChartBuilder::on(area)
        .caption("autocorrelation of successive times", ("sans-serif", 18))
        .margin(12)
        .margin_right(20)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5..lags as f64 + 0.5, (lo - pad)..(hi + pad))?;
    chart
        .configure_mesh()
        .x_desc("lag")
        .y_desc("autocorrelation")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| tick(*v))
        .draw()?;
    let band = s.white_noise_band;
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(0.5, -band), (lags as f64 + 0.5, band)],
            RGBColor(200, 200, 200).mix(0.5).filled(),
        )))?
        .label("independent samples, 95%")
        .legend(|(x, y)| {
            Rectangle::new(
                [(x, y - 5), (x + 20, y + 5)],
                RGBColor(200, 200, 200).filled(),
            )
        });
    chart
        .draw_series(
            s.autocorrelations
                .iter()
                .enumerate()
                .map(|(k, &r)| Circle::new(((k + 1) as f64, r), 3, SIMULATED.filled())),
        )?
        .label("sample")
        .legend(|(x, y)| Circle::new((x + 10, y), 3, SIMULATED.filled()));
    fits_and_legend(&mut chart, fit, |f| {
        f.stats
            .autocorrelations
            .iter()
            .enumerate()
            .map(|(k, &r)| ((k + 1) as f64, r))
            .collect()
    })
}

fn survival_panel<'a>(fit: &TraceFit, area: &Area<'a>) -> Result<(), Failure<'a>> {
    let sorted = &fit.sorted;
    let n = sorted.len();
    // up to the sample's 99.9% point: beyond it the sample's tail is a handful of values
    let x_max = sorted[((0.999 * n as f64) as usize).min(n - 1)].max(f64::MIN_POSITIVE);
    // the sample's survival at x_max is about 0.001: the scale goes a little below it
    let floor = (0.5 / n as f64).max(5e-4);
    let survival = |x: f64| 1.0 - sorted.partition_point(|&v| v <= x) as f64 / n as f64;
    let xs: Vec<f64> = (0..=STEPS)
        .map(|i| x_max * i as f64 / STEPS as f64)
        .collect();
    let mut chart = ChartBuilder::on(area)
        .caption("P(one time > x)", ("sans-serif", 18))
        .margin(12)
        .margin_right(20)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, (floor..1.0).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("x")
        .y_desc("probability (log scale)")
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            xs.iter()
                .map(|&x| (x, survival(x)))
                .filter(|&(_, p)| p >= floor),
            SIMULATED.stroke_width(3),
        ))?
        .label("sample")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], SIMULATED.stroke_width(3)));
    fits_and_legend(&mut chart, fit, |f| {
        xs.iter()
            .filter_map(|&x| Some((x, 1.0 - f.marginal.cdf(x).ok()?)))
            .filter(|&(_, p)| p >= floor)
            .collect()
    })
}

/// Draws each fit's curve (`points` of it), dashed in its colour, and the panel's legend.
fn fits_and_legend<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    fit: &TraceFit,
    points: impl Fn(&Fitted) -> Vec<(f64, f64)>,
) -> Result<(), Failure<'a>>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, f) in fit.fits.iter().enumerate() {
        let style = PALETTE[i % PALETTE.len()].stroke_width(2);
        chart
            .draw_series(DashedLineSeries::new(points(f), 4 + 4 * i as u32, 4, style))?
            .label(f.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}
