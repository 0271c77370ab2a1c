//! `parsim sweep`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use parsim::replicate::StopFlag;
use parsim::scenario::assign::Assignment;
use parsim::sweep::execute::{Execution, check_points, run_points};
use parsim::sweep::output::SweepReport;
use parsim::sweep::shard::{Shard, ShardFile};
use parsim::sweep::{Axis, Layout, Point, Sweep, plot};

/// How VALUES are written, for `--help`.
const VALUES_HELP: &str = "\
KEY is a scenario field by its path: array-of-tables elements by name (or index), then the field:
  class.jobs.population       population of the [[class]] named jobs
  station.disk.service.mean   mean of the service of the [[station]] named disk
  run.length, run.replications, program.ranks, route.0.to

VALUES:
  1,2,4,8           a list (TOML values; bare words are strings)
  1..64             every integer from 1 to 64
  0.1..0.9:0.2      from 0.1 to 0.9 by steps of 0.2
  2^0..2^6          powers of 2 from 2^0 to 2^6 (2^0..2^6:2 steps the exponent by 2)
  1..1000:x10       a log range by factor: 1, 10, 100, 1000
  0.01..100:log9    9 points evenly spaced in log scale
  0..1:lin5         5 points evenly spaced

Output: CSV on stdout, one row per point, metric and analytic method, with columns: the varied
keys, metric, method, exact, analytic (or lower_bound and upper_bound for bounds), simulated,
half_width_95, replications, relative_error, verdict (verdicts by `parsim validate`'s rules, on
the 99% interval, in its words: agree, within_bounds, ...). Each point's streams are
keyed by the seed and its assignments: `parsim run --set` of the same values gives the same
numbers.

Warnings on standard error: a point that misses its precision target (run.precision, with
--set run.precision=0.01 say) within run.max_replications is named, and makes the exit code 1
unless --allow-imprecise, as `parsim run` does; points whose 95% interval on a predicted metric
is 10% of the mean or more are named too, with their widest metric (no effect on the exit
code).";

/// Options of `parsim sweep`.
#[derive(Debug, Args)]
#[command(after_long_help = VALUES_HELP)]
pub struct SweepArgs {
    /// The scenario file (TOML; `-` reads it from standard input).
    scenario: PathBuf,
    /// A field and the values it takes (repeatable; several make a grid). KEY and VALUES are
    /// explained at the end of --help.
    #[arg(long, value_name = "KEY=VALUES", required = true, value_parser = Axis::parse)]
    vary: Vec<Axis>,
    /// Pair the --vary values (the i-th of each together) instead of making a grid.
    #[arg(long)]
    zip: bool,
    /// Override a field at every point (repeatable), as `parsim run --set` does
    /// (`analyze.budget=K` multiplies every analytic method's work budget by K).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Assignment::parse)]
    set: Vec<Assignment>,
    #[command(flatten)]
    output: OutputArgs,
    /// Run only shard K of N (K from 0 to N-1: the points whose index is K modulo N) and write
    /// its results to --out, for `parsim merge`.
    #[arg(
        long,
        value_name = "K/N",
        value_parser = Shard::parse,
        requires = "out",
        conflicts_with_all = ["json", "plot"]
    )]
    shard: Option<Shard>,
    /// The directory a shard writes its file to.
    #[arg(long, value_name = "DIR", requires = "shard")]
    out: Option<PathBuf>,
    /// Master seed (overrides the scenario's).
    #[arg(long)]
    seed: Option<u64>,
    /// Only the analytic side, the what-if of a solver such as JMVA: every prediction and
    /// bound at every point, nothing simulated (the simulated columns empty, 0 replications);
    /// milliseconds a point.
    #[arg(long, conflicts_with = "plot")]
    analytic_only: bool,
    /// Worker threads, shared by the points and their replications (default: one per core).
    /// Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// A point that misses its precision target (run.precision) within the replication budget
    /// is still reported (standard error names it) but does not make the exit code 1.
    #[arg(long)]
    allow_imprecise: bool,
}

/// How a sweep's results are shown (by `parsim sweep` and `parsim merge` alike).
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Print JSON instead of CSV.
    #[arg(long)]
    pub json: bool,
    /// Also draw SVG pictures into DIR: for one key, each predicted metric's simulated mean
    /// with its 95% band and every method's curve; for two keys on a grid, heat maps of the
    /// simulated mean and of each method's relative error (or, with --plot-lines, curves).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// A metric to draw with --plot (repeatable; default: every metric some analytic method
    /// predicts).
    #[arg(long, value_name = "METRIC", requires = "plot")]
    pub plot_metric: Vec<String>,
    /// Draw a grid of two keys as line charts instead of heat maps: the first key along x,
    /// one curve per value of the second (e.g. a distribution family or a server count).
    #[arg(long, requires = "plot")]
    pub plot_lines: bool,
    /// Draw the line charts against each point's simulated mean of METRIC instead of the first
    /// key (e.g. --plot-x messages.offered: latency and accepted throughput against the offered
    /// load of a sweep over the injection interval).
    #[arg(long, value_name = "METRIC", requires = "plot")]
    pub plot_x: Option<String>,
}

impl OutputArgs {
    /// How a grid of two keys is drawn.
    pub fn style(&self) -> plot::Style {
        if self.plot_lines {
            plot::Style::Lines
        } else {
            plot::Style::HeatMaps
        }
    }

    /// Prints the report as CSV or JSON on stdout and draws the pictures asked for.
    pub fn emit(&self, report: &SweepReport) -> anyhow::Result<()> {
        let mut out = parsim::files::stdout();
        if self.json {
            report.write_json(&mut out)?;
        } else {
            report.write_csv(&mut out)?;
        }
        out.flush()?;
        if let Some(dir) = &self.plot {
            let files = plot::write(
                report,
                dir,
                &self.plot_metric,
                self.style(),
                self.plot_x.as_deref(),
            )?;
            eprintln!("parsim: {} pictures in {}", files.len(), dir.display());
            if files.is_empty() {
                eprintln!(
                    "parsim: no metric has an analytic prediction; name metrics to draw with --plot-metric"
                );
            }
        }
        Ok(())
    }
}

impl SweepArgs {
    /// True when the command runs one shard (`--shard` or `--out`).
    pub fn sharded(&self) -> bool {
        self.shard.is_some() || self.out.is_some()
    }

    /// Builds the sweep and checks every point, as each shard would: the number of points to
    /// share out.
    pub fn pieces(&self) -> anyhow::Result<(usize, &'static str)> {
        let layout = if self.zip { Layout::Zip } else { Layout::Grid };
        let sweep = Sweep::new(
            &self.scenario,
            self.set.clone(),
            self.vary.clone(),
            layout,
            self.seed,
        )
        .map_err(anyhow::Error::msg)?;
        let points = sweep.points();
        check_points(&sweep, &points, None)?;
        Ok((points.len(), "points"))
    }
}

/// Checks every point, runs them (or one shard's) in order and prints the results (or writes
/// the shard's file).
pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let layout = if args.zip { Layout::Zip } else { Layout::Grid };
    let sweep = Sweep::new(
        &args.scenario,
        args.set.clone(),
        args.vary.clone(),
        layout,
        args.seed,
    )
    .map_err(anyhow::Error::msg)?;
    if let Some(dir) = &args.output.plot {
        plot::check_shape(
            layout,
            sweep.axes.len(),
            args.output.style(),
            args.output.plot_x.is_some(),
        )?;
        parsim::plot::make_dir(dir)?;
    }
    let points = sweep.points();
    let checked = check_points(&sweep, &points, args.shard)?;
    // the metrics to draw are known before the sweep runs: an unknown one is refused now
    if args.output.plot.is_some()
        && (!args.output.plot_metric.is_empty() || args.output.plot_x.is_some())
        && let Some(first) = points.first()
    {
        let names = sweep
            .scenario(first)
            .map(|sc| sc.metric_names())
            .unwrap_or_default();
        let mut asked = args
            .output
            .plot_metric
            .iter()
            .map(|m| ("--plot-metric", m))
            .chain(args.output.plot_x.iter().map(|m| ("--plot-x", m)));
        if let Some((flag, unknown)) = asked.find(|(_, m)| !names.contains(*m)) {
            anyhow::bail!(
                "{flag} {unknown}: the scenario reports no such metric (`parsim metrics {}` lists them)",
                sweep.path.display()
            );
        }
        if args.output.plot_x.is_some() && args.analytic_only {
            anyhow::bail!(
                "--plot-x draws against simulated means, and --analytic-only simulates nothing: leave out one of them"
            );
        }
    }
    let owned: Vec<&Point> = points
        .iter()
        .filter(|p| args.shard.is_none_or(|s| s.owns(p.index)))
        .collect();
    let total = if args.analytic_only {
        0
    } else {
        checked.replications
    };
    let bar = super::progress::Progress::new(&format!("{} points", owned.len()), total);
    let pool = parsim::replicate::thread_pool(args.threads)?;
    let results = run_points(
        &sweep,
        &owned,
        &Execution {
            analytic_only: args.analytic_only,
            pool: &pool,
            progress: &|step| bar.tell(step),
            stop: &StopFlag::default(),
        },
    )?;
    bar.finish();
    let unstable = results.iter().filter(|p| p.unstable.is_some()).count();
    if unstable > 0 {
        eprintln!(
            "parsim: {unstable} of {} points unstable (utilisation >= 1): marked `unstable`, not run",
            results.len()
        );
    }
    let report = sweep.report(&checked, results);
    match (args.shard, &args.out) {
        (Some(shard), Some(dir)) => {
            // the merge warns and sets the exit code, for the whole sweep
            let file = ShardFile::new(&sweep, &checked.inputs, shard, report, args.allow_imprecise);
            let path = parsim::shard::write(&file, dir)
                .with_context(|| format!("writing shard {} to {}", shard.index, dir.display()))?;
            eprintln!("parsim: wrote {}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            args.output.emit(&report)?;
            Ok(warn(&report, args.allow_imprecise))
        }
    }
}

/// Prints the report's warnings on standard error ([`SweepReport::warnings`]) and returns the
/// exit code: 1 when a point missed its precision target, unless `allow_imprecise`, as `parsim
/// run` does.
pub fn warn(report: &SweepReport, allow_imprecise: bool) -> ExitCode {
    for w in report.warnings(allow_imprecise) {
        eprintln!("parsim: {w}");
    }
    if report.imprecise().is_empty() || allow_imprecise {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
