//! How far the renewal approximations of a FCFS exponential server are from the exact value
//! when the arrivals are bursty and correlated (`cargo run --release --example
//! bursty_findings`; the findings page is `docs/guide/findings/bursty.md`).
//!
//! For every utilisation `u`, inter-arrival SCV and lag-1 autocorrelation `rho1` of the grid,
//! an MMPP(2) is fitted to mean 1, that SCV, the third moment of the balanced-means H2 of that
//! SCV, and `rho1` (`fit_mmpp2`, closed form); a scenario of that source and one `fcfs`
//! station of exponential service of mean `u` is written as TOML text, parsed and analysed as
//! `parsim analyze` does, and every approximation of `station.q.response` is set beside the
//! exact MAP/PH/1 value. Writes `validation/findings/bursty.csv` and
//! `docs/bursty-approximation-errors.svg`, and prints per method and utilisation the median
//! and worst relative error.
//!
//! Uses only parsim's public API.

use std::path::{Path, PathBuf};
use std::time::Instant;

use parsim::analytic::mam::{Correlation, Mmpp2Fit, Mmpp2Targets, Ph, fit_mmpp2, gim1};
use parsim::plot::{PlotError, draw_error, svg_file_of_size, text_width};
use parsim::study::analyze_scenario;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Utilisations of the server (its mean service time, the mean inter-arrival time being 1).
const UTILISATIONS: [f64; 3] = [0.5, 0.7, 0.9];
/// Squared coefficients of variation of the inter-arrival time.
const SCVS: [f64; 5] = [1.5, 2.0, 4.0, 8.0, 16.0];
/// Lag-1 autocorrelations of successive inter-arrival times.
const RHO1S: [f64; 6] = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4];
/// The metric compared.
const METRIC: &str = "station.q.response";
/// How far the fitted lag-1 autocorrelation may be from the target before the cell counts as
/// out of the MMPP(2)'s reach.
const RHO1_TOLERANCE: f64 = 1e-3;
/// How far (relative) the fitted mean, SCV and third moment may be from the targets.
const MOMENT_TOLERANCE: f64 = 1e-6;
/// How far (relative) the exact MAP/PH/1 value of a renewal MMPP(2) may be from the exact
/// H2/M/1 value of `gim1`.
const RENEWAL_TOLERANCE: f64 = 1e-6;
/// The command that writes every output of this program.
const COMMAND: &str = "cargo run --release --example bursty_findings";

/// One point of the grid.
#[derive(Debug, Clone, Copy)]
struct Point {
    /// Utilisation `u`.
    u: f64,
    /// Inter-arrival SCV.
    scv: f64,
    /// Target lag-1 autocorrelation.
    rho1: f64,
}

/// What the analysis of one reachable point gave.
#[derive(Debug, Clone)]
struct Solved {
    /// The fitted MMPP(2).
    fit: Mmpp2Fit,
    /// The exact MAP/PH/1 mean response time, and its method's name.
    exact: (String, f64),
    /// Each approximation's short name and mean response time, in `analyze`'s order.
    approximations: Vec<(String, f64)>,
}

/// One point and its outcome: solved, or the reason it is out of reach.
#[derive(Debug, Clone)]
struct Cell {
    /// The point.
    point: Point,
    /// The nearest lag-1 autocorrelation the MMPP(2) reached (the target when reachable).
    fitted_rho1: Option<f64>,
    /// The outcome.
    outcome: Result<Solved, String>,
}

/// The method's name without what `analyze` adds after a `;` (why it is an approximation, or
/// the correlation it saw), which names this point's SCV and correlation: the same method gets
/// the same name at every point. A parenthesis the cut leaves open is dropped with what follows
/// it (`MAP/PH/1 (matrix-analytic: ...; lag-1 correlation 0.1)` is `MAP/PH/1`).
fn short_method(method: &str) -> String {
    let head = method.split(';').next().unwrap_or(method);
    let open = head.matches('(').count() > head.matches(')').count();
    let head = match head.rfind('(') {
        Some(i) if open => &head[..i],
        _ => head,
    };
    head.trim().to_owned()
}

/// The MMPP(2) of mean 1, `scv`, the balanced H2's third moment and lag-1 autocorrelation
/// `rho1` (a renewal process for `rho1 = 0`), with the lag-1 autocorrelation it reached; `Err`
/// with the reason when it does not match all four (`rho1` within
/// [`RHO1_TOLERANCE`], the moments within [`MOMENT_TOLERANCE`]).
fn fit(scv: f64, rho1: f64) -> (Option<f64>, Result<Mmpp2Fit, String>) {
    let third_moment = Ph::h2_balanced(1.0, scv)
        .and_then(|h2| h2.moment(3))
        .expect("balanced H2 of SCV >= 1");
    let correlation = if rho1 == 0.0 {
        Correlation::Decay(0.0)
    } else {
        Correlation::Lags(vec![rho1])
    };
    let targets = Mmpp2Targets {
        mean: 1.0,
        scv,
        third_moment,
        correlation,
    };
    let fit = match fit_mmpp2(&targets) {
        Ok(fit) => fit,
        Err(e) => return (None, Err(format!("no MMPP(2) fitted: {e}"))),
    };
    let got = &fit.fitted;
    let reached = got.autocorrelations[0];
    if (reached - rho1).abs() > RHO1_TOLERANCE {
        return (
            Some(reached),
            Err(format!(
                "no MMPP(2) with these three moments has lag-1 autocorrelation {rho1}; the \
                 nearest reaches {reached:.4}"
            )),
        );
    }
    let moments_off = [
        got.mean - 1.0,
        got.scv / scv - 1.0,
        got.third_moment / third_moment - 1.0,
    ]
    .iter()
    .fold(0.0_f64, |m, e| m.max(e.abs()));
    if moments_off > MOMENT_TOLERANCE {
        return (
            Some(reached),
            Err(format!(
                "the MMPP(2) misses the three moments by {moments_off:.1e} (relative; {:?})",
                fit.method
            )),
        );
    }
    (Some(reached), Ok(fit))
}

/// The scenario of `fit`'s MMPP(2) feeding one exponential FCFS server of mean `u`, as TOML.
fn scenario_text(fit: &Mmpp2Fit, u: f64) -> String {
    format!(
        r#"name = "MMPP(2)/M/1 for the bursty findings"

[[class]]
name = "jobs"

[[station]]
name = "source"
kind = "source"
class = "jobs"
arrivals = {{ process = "mmpp2", rates = [{:?}, {:?}], switching = [{:?}, {:?}] }}

[[station]]
name = "q"
kind = "fcfs"
service = {{ dist = "exp", mean = {u:?} }}

[[route]]
class = "jobs"
from = "source"
to = "q"

[[route]]
class = "jobs"
from = "q"
to = "exit"
"#,
        fit.rates[0], fit.rates[1], fit.switching[0], fit.switching[1]
    )
}

/// The exact value and the approximations `analyze` gives for [`METRIC`] at `point`.
fn solve(point: Point, fit: Mmpp2Fit) -> Result<Solved, String> {
    let text = scenario_text(&fit, point.u);
    let sc = parsim::scenario::parse(&text, Path::new("inline.toml"))
        .map_err(|e| format!("scenario refused: {e}"))?;
    let analysis = analyze_scenario(&sc);
    let ours = analysis.predictions.iter().filter(|p| p.metric == METRIC);
    let exact = ours
        .clone()
        .find(|p| p.exact && p.method.starts_with("MAP/PH/1"))
        .map(|p| (short_method(&p.method), p.value))
        .ok_or_else(|| format!("analyze gave no exact MAP/PH/1 value of {METRIC}"))?;
    let approximations = ours
        .filter(|p| !p.exact)
        .map(|p| (short_method(&p.method), p.value))
        .collect();
    Ok(Solved {
        fit,
        exact,
        approximations,
    })
}

/// At `rho1 = 0` the MMPP(2) is a renewal process whose inter-arrival law has the balanced
/// H2's three moments, so it is that H2 (an order-two phase-type law is fixed by three
/// moments): the exact MAP/PH/1 value must be the exact H2/M/1 value of `gim1`.
///
/// Panics when the two differ by more than [`RENEWAL_TOLERANCE`] (relative).
fn check_renewal(point: Point, solved: &Solved) {
    let h2 = Ph::h2_balanced(1.0, point.scv).expect("balanced H2 of SCV >= 1");
    let laplace = |s: f64| h2.laplace(s).unwrap_or(f64::NAN);
    let gim = gim1(&laplace, 1.0, point.u, 1)
        .unwrap_or_else(|e| panic!("H2/M/1 at u = {}, SCV {}: {e}", point.u, point.scv));
    let (renewal, map) = (gim.metrics.mean_response, solved.exact.1);
    let off = map / renewal - 1.0;
    assert!(
        off.abs() <= RENEWAL_TOLERANCE,
        "sanity check failed at u = {}, SCV {}, rho1 = 0: the exact MAP/PH/1 response of the \
         renewal MMPP(2) is {map}, the exact H2/M/1 (GI/M/1) response is {renewal}, relative \
         difference {off:.3e} (at most {RENEWAL_TOLERANCE:e} allowed)",
        point.u,
        point.scv
    );
}

/// Every point of the grid, fitted and analysed; the points at `rho1 = 0` checked by
/// [`check_renewal`] (panics when one fails or is not solved).
fn cells() -> Vec<Cell> {
    let mut cells = Vec::new();
    for &u in &UTILISATIONS {
        for &scv in &SCVS {
            for &rho1 in &RHO1S {
                let point = Point { u, scv, rho1 };
                let (fitted_rho1, fitted) = fit(scv, rho1);
                let outcome = fitted.and_then(|f| solve(point, f));
                if rho1 == 0.0 {
                    match &outcome {
                        Ok(solved) => check_renewal(point, solved),
                        Err(why) => panic!("the renewal MMPP(2) at u = {u}, SCV {scv}: {why}"),
                    }
                }
                cells.push(Cell {
                    point,
                    fitted_rho1,
                    outcome,
                });
            }
        }
    }
    cells
}

/// The tidy CSV of every cell: one row per method (the exact one first) at a reachable point,
/// one row with empty values and the reason at an unreachable one; a first comment line names
/// the command that writes it.
fn csv_text(cells: &[Cell]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "utilisation",
        "scv",
        "rho1",
        "fitted_rho1",
        "fit_method",
        "decay",
        "rate_1",
        "rate_2",
        "switching_1",
        "switching_2",
        "method",
        "exact",
        "value",
        "relative_error",
        "reason",
    ];
    w.write_record(header).expect("CSV to memory");
    let num = |v: f64| format!("{v:?}");
    for c in cells {
        let p = c.point;
        let head = [
            num(p.u),
            num(p.scv),
            num(p.rho1),
            c.fitted_rho1.map_or_else(String::new, num),
        ];
        match &c.outcome {
            Ok(s) => {
                let f = &s.fit;
                let process = [
                    format!("{:?}", f.method),
                    f.fitted.decay.map_or_else(String::new, num),
                    num(f.rates[0]),
                    num(f.rates[1]),
                    num(f.switching[0]),
                    num(f.switching[1]),
                ];
                let exact_row = (&s.exact.0, true, s.exact.1, String::new());
                let approx_rows = s
                    .approximations
                    .iter()
                    .map(|(m, v)| (m, false, *v, num(v / s.exact.1 - 1.0)));
                for (method, exact, value, error) in std::iter::once(exact_row).chain(approx_rows) {
                    let mut row: Vec<String> = head.to_vec();
                    row.extend(process.iter().cloned());
                    row.extend([
                        method.clone(),
                        exact.to_string(),
                        num(value),
                        error,
                        String::new(),
                    ]);
                    w.write_record(&row).expect("CSV to memory");
                }
            }
            Err(reason) => {
                let mut row: Vec<String> = head.to_vec();
                row.extend(std::iter::repeat_n(
                    String::new(),
                    header.len() - head.len() - 1,
                ));
                row.push(reason.clone());
                w.write_record(&row).expect("CSV to memory");
            }
        }
    }
    let body = String::from_utf8(w.into_inner().expect("CSV to memory")).expect("UTF-8 CSV");
    format!("# written by `{COMMAND}`; one row per method and point\n{body}")
}

/// One row of the picture: a method (or several that give identical numbers everywhere) and
/// its relative error at every point, `None` where the point is out of reach.
#[derive(Debug, Clone)]
struct MethodErrors {
    /// The method's name, or the names of methods with identical numbers joined by " = ".
    name: String,
    /// Relative error at each cell, in the order of [`cells`].
    errors: Vec<Option<f64>>,
}

/// The relative errors of every approximation, methods with identical numbers at every point
/// merged into one (named by all of them).
fn method_errors(cells: &[Cell]) -> Vec<MethodErrors> {
    let mut names: Vec<String> = Vec::new();
    for c in cells {
        if let Ok(s) = &c.outcome {
            for (m, _) in &s.approximations {
                if !names.contains(m) {
                    names.push(m.clone());
                }
            }
        }
    }
    let mut rows: Vec<MethodErrors> = Vec::new();
    for name in names {
        let errors: Vec<Option<f64>> = cells
            .iter()
            .map(|c| {
                let s = c.outcome.as_ref().ok()?;
                let v = s.approximations.iter().find(|(m, _)| *m == name)?.1;
                Some(v / s.exact.1 - 1.0)
            })
            .collect();
        let same = |a: &[Option<f64>], b: &[Option<f64>]| {
            a.iter().zip(b).all(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * (1.0 + x.abs()),
                (None, None) => true,
                _ => false,
            })
        };
        match rows.iter_mut().find(|r| same(&r.errors, &errors)) {
            Some(r) => r.name = format!("{} = {name}", r.name),
            None => rows.push(MethodErrors { name, errors }),
        }
    }
    rows
}

/// The median of `values` (not empty).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

/// Prints, per method and utilisation, the median and worst signed relative error (worst by
/// magnitude) and where the error is within 10%.
fn print_summary(cells: &[Cell], methods: &[MethodErrors]) {
    for m in methods {
        println!("{}", m.name);
        for &u in &UTILISATIONS {
            let mut errs: Vec<f64> = Vec::new();
            // the rho1 where the error is within 10%, per SCV (in the grid's order)
            let mut within: Vec<(f64, Vec<f64>)> = SCVS.iter().map(|&s| (s, Vec::new())).collect();
            for (c, e) in cells.iter().zip(&m.errors) {
                if c.point.u != u {
                    continue;
                }
                if let Some(e) = *e {
                    errs.push(e);
                    if e.abs() <= 0.10
                        && let Some((_, rhos)) = within.iter_mut().find(|(s, _)| *s == c.point.scv)
                    {
                        rhos.push(c.point.rho1);
                    }
                }
            }
            let worst = errs
                .iter()
                .copied()
                .max_by(|a, b| a.abs().total_cmp(&b.abs()))
                .unwrap_or(f64::NAN);
            let mut abs: Vec<f64> = errs.iter().map(|e| e.abs()).collect();
            println!(
                "  u = {u}: {} points, median {:+.1}%, median |error| {:.1}%, worst {:+.1}%; \
                 rho1 within 10% per SCV {within:?}",
                errs.len(),
                100.0 * median(&mut errs),
                100.0 * median(&mut abs),
                100.0 * worst,
            );
        }
    }
}

/// Fits and analyses the grid, writes the CSV and the picture, and prints what is out of reach,
/// the summary and the time taken.
fn main() {
    let started = Instant::now();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cells = cells();
    let solved_at = started.elapsed();
    let methods = method_errors(&cells);
    let csv_file = root.join("validation/findings/bursty.csv");
    parsim::files::write_text(&csv_file, &csv_text(&cells)).unwrap_or_else(|e| panic!("{e}"));
    let svg = root.join("docs/bursty-approximation-errors.svg");
    picture::draw(&svg, &cells, &methods).unwrap_or_else(|e| panic!("{e}"));
    for c in &cells {
        if let Err(reason) = &c.outcome {
            let p = c.point;
            println!(
                "out of reach: u = {}, SCV {}, rho1 {}: {reason}",
                p.u, p.scv, p.rho1
            );
        }
    }
    print_summary(&cells, &methods);
    println!(
        "{} points fitted and analysed in {:.2} s, everything written in {:.2} s: {}, {}",
        cells.len(),
        solved_at.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        csv_file.display(),
        svg.display()
    );
}

/// The picture: a heat map of the relative error per approximation (rows) and utilisation
/// (columns), SCV across and `rho1` up, on one symmetric diverging colour scale.
mod picture {
    use super::*;

    /// Width of one heat map.
    const PANEL_W: u32 = 360;
    /// Height of one heat map.
    const PANEL_H: u32 = 330;
    /// Height of the strip naming a row's method.
    const ROW_HEAD: u32 = 30;
    /// Height of the title and subtitle.
    const TITLE_H: u32 = 96;
    /// Height of the note under the maps.
    const FOOT_H: u32 = 40;
    /// Width of the colour scale beside the maps.
    const SCALE_W: u32 = 150;
    /// Red of errors above the exact value (the sweep heat maps' red).
    const ABOVE: (u8, u8, u8) = (178, 24, 43);
    /// Blue of errors below the exact value (the sweep heat maps' blue).
    const BELOW: (u8, u8, u8) = (33, 102, 172);
    /// Fill of points out of the MMPP(2)'s reach.
    const UNREACHABLE: RGBColor = RGBColor(205, 205, 205);

    /// The colour of relative error `e` on the scale `-half..half`: white at 0, full red or
    /// blue at `|e| >= half`.
    fn colour(e: f64, half: f64) -> RGBColor {
        let t = (e.abs() / half).clamp(0.0, 1.0);
        let fade = |c: u8| (255.0 - t * (255.0 - f64::from(c))).round() as u8;
        let (r, g, b) = if e < 0.0 { BELOW } else { ABOVE };
        RGBColor(fade(r), fade(g), fade(b))
    }

    /// A relative error as a signed percentage: one decimal below 10%, none above.
    fn percent(e: f64) -> String {
        let p = 100.0 * e;
        if p.abs() < 9.95 {
            format!("{p:+.1}%")
        } else {
            format!("{p:+.0}%")
        }
    }

    /// The label of the category whose centre is `v`, empty at the boundaries.
    fn category(labels: &[String], v: &SegmentValue<usize>) -> String {
        match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// The half-range of the colour scale: the largest error in magnitude, rounded up to a
    /// multiple of 10%.
    fn half_range(methods: &[MethodErrors]) -> f64 {
        let worst = methods
            .iter()
            .flat_map(|m| m.errors.iter().flatten())
            .fold(0.0_f64, |m, e| m.max(e.abs()));
        ((worst * 10.0).ceil() / 10.0).max(0.1)
    }

    /// Draws the picture into `file`.
    pub fn draw(file: &Path, cells: &[Cell], methods: &[MethodErrors]) -> Result<(), PlotError> {
        let fail = draw_error(file);
        let width = UTILISATIONS.len() as u32 * PANEL_W + SCALE_W;
        let height = TITLE_H + methods.len() as u32 * (ROW_HEAD + PANEL_H) + FOOT_H;
        let half = half_range(methods);
        let xl: Vec<String> = SCVS.iter().map(|&v| parsim::plot::tick(v)).collect();
        let yl: Vec<String> = RHO1S.iter().map(|&v| parsim::plot::tick(v)).collect();
        svg_file_of_size(file, (width, height), |root| {
            let err = |e: String| fail(e);
            root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
            let (title, rest) = root.split_vertically(TITLE_H);
            let (body, foot) = rest.split_vertically(height - TITLE_H - FOOT_H);
            let centre = |size: u32, y: i32, text: &str, area: &DrawingArea<_, _>| {
                let x = (width.saturating_sub(text_width(text, size)) / 2) as i32;
                area.draw_text(
                    text,
                    &("sans-serif", size).into_font().color(&BLACK),
                    (x, y),
                )
            };
            centre(
                20,
                10,
                "Renewal approximations of the mean response time against the exact MAP/PH/1 value",
                &title,
            )
            .map_err(|e| err(e.to_string()))?;
            for (i, line) in [
                "one exponential FCFS server at utilisation u, fed by an MMPP(2) with mean \
                 inter-arrival time 1,",
                "the SCV and third moment of the balanced-means H2 and lag-1 autocorrelation rho1; \
                 each cell: approx / exact - 1 of station.q.response",
            ]
            .iter()
            .enumerate()
            {
                centre(15, 42 + 20 * i as i32, line, &title).map_err(|e| err(e.to_string()))?;
            }
            foot.draw_text(
                "grey x: out of the MMPP(2)'s reach (no MMPP(2) with these three moments has this \
                 lag-1 autocorrelation)",
                &("sans-serif", 14).into_font().color(&BLACK),
                (20, 12),
            )
            .map_err(|e| err(e.to_string()))?;
            let (maps, scale) = body.split_horizontally(width - SCALE_W);
            colour_scale(&scale, half).map_err(|e| err(e.to_string()))?;
            let rows = maps.split_evenly((methods.len(), 1));
            for (m, row) in methods.iter().zip(&rows) {
                let (head, panels) = row.split_vertically(ROW_HEAD);
                head.draw_text(
                    &m.name,
                    &("sans-serif", 18)
                        .into_font()
                        .style(FontStyle::Bold)
                        .color(&BLACK),
                    (14, 8),
                )
                .map_err(|e| err(e.to_string()))?;
                let columns = panels.split_evenly((1, UTILISATIONS.len()));
                for (&u, panel) in UTILISATIONS.iter().zip(&columns) {
                    let values: Vec<(usize, usize, Option<f64>)> = cells
                        .iter()
                        .zip(&m.errors)
                        .filter(|(c, _)| c.point.u == u)
                        .map(|(c, &e)| {
                            let x = SCVS.iter().position(|&s| s == c.point.scv).unwrap_or(0);
                            let y = RHO1S.iter().position(|&r| r == c.point.rho1).unwrap_or(0);
                            (x, y, e)
                        })
                        .collect();
                    heat_map(panel, &format!("u = {u}"), &values, half, &xl, &yl)
                        .map_err(|e| err(e.to_string()))?;
                }
            }
            root.present().map_err(|e| err(e.to_string()))
        })
    }

    /// One heat map in `area`: cells `(x, y, error)` over the SCV and `rho1` categories.
    fn heat_map<DB: DrawingBackend>(
        area: &DrawingArea<DB, plotters::coord::Shift>,
        caption: &str,
        values: &[(usize, usize, Option<f64>)],
        half: f64,
        xl: &[String],
        yl: &[String],
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let mut chart = ChartBuilder::on(area)
            .caption(caption, ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(58)
            // one segment per category (plotters' integer ranges hold their end)
            .build_cartesian_2d(
                (0..xl.len() - 1).into_segmented(),
                (0..yl.len() - 1).into_segmented(),
            )?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("inter-arrival SCV")
            .y_desc("lag-1 autocorrelation rho1")
            .axis_desc_style(("sans-serif", 14))
            .label_style(("sans-serif", 13))
            .x_labels(xl.len() + 1)
            .y_labels(yl.len() + 1)
            .x_label_formatter(&|v| category(xl, v))
            .y_label_formatter(&|v| category(yl, v))
            .draw()?;
        let corner = |x: usize, y: usize| (SegmentValue::Exact(x), SegmentValue::Exact(y));
        chart.draw_series(values.iter().map(|&(x, y, e)| {
            let fill = e.map_or(UNREACHABLE, |e| colour(e, half));
            Rectangle::new([corner(x, y), corner(x + 1, y + 1)], fill.filled())
        }))?;
        // thin white lines between cells
        chart.draw_series(values.iter().map(|&(x, y, _)| {
            Rectangle::new([corner(x, y), corner(x + 1, y + 1)], WHITE.stroke_width(1))
        }))?;
        chart.draw_series(values.iter().map(|&(x, y, e)| {
            let (text, ink) = match e {
                Some(e) if e.abs() / half > 0.55 => (percent(e), WHITE),
                Some(e) => (percent(e), BLACK),
                None => ("x".to_owned(), RGBColor(80, 80, 80)),
            };
            Text::new(
                text,
                (SegmentValue::CenterOf(x), SegmentValue::CenterOf(y)),
                ("sans-serif", 13)
                    .into_font()
                    .color(&ink)
                    .pos(Pos::new(HPos::Center, VPos::Center)),
            )
        }))?;
        Ok(())
    }

    /// The vertical colour scale from `-half` to `half`, ticks in percent, labelled along its
    /// side, with which side is above the exact value written at its ends.
    fn colour_scale<DB: DrawingBackend>(
        area: &DrawingArea<DB, plotters::coord::Shift>,
        half: f64,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let (_, height) = area.dim_in_pixel();
        let (label_area, bar_area) = area.split_horizontally(26);
        label_area.draw(&Text::new(
            "relative error, approx / exact - 1",
            (6, height as i32 / 2),
            ("sans-serif", 14)
                .into_font()
                .transform(FontTransform::Rotate270)
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        let mut chart = ChartBuilder::on(&bar_area)
            .margin_top(60)
            .margin_bottom(60)
            .margin_right(60)
            .y_label_area_size(0)
            .right_y_label_area_size(52)
            .build_cartesian_2d(0.0..1.0, -half..half)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_labels(9)
            .label_style(("sans-serif", 13))
            .y_label_formatter(&|v| match (100.0 * v).round() {
                0.0 => "0%".to_owned(),
                p => format!("{p:+.0}%"),
            })
            .draw()?;
        const STEPS: usize = 200;
        let step = 2.0 * half / STEPS as f64;
        chart.draw_series((0..STEPS).map(|k| {
            let from = -half + k as f64 * step;
            Rectangle::new(
                [(0.0, from), (1.0, from + step)],
                colour(from + step / 2.0, half).filled(),
            )
        }))?;
        let h = bar_area.dim_in_pixel().1;
        let note = ("sans-serif", 13).into_font().color(&BLACK);
        bar_area.draw_text("above exact", &note, (4, 36))?;
        bar_area.draw_text("below exact", &note, (4, h as i32 - 48))?;
        Ok(())
    }
}
