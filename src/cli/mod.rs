//! Command-line parsing (clap) and the subcommands.

mod analyze;
mod fit;
mod fit_comm;
mod fit_trace;
mod fit_w;
mod goal;
pub mod huge_pages;
mod merge;
mod metrics;
mod progress;
mod route;
mod run;
mod schema;
mod selftest;
mod slurm;
mod sweep;
mod validate;

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// parsim: simulate queueing-network models of parallel programs and compare them with their
/// analytic solutions.
#[derive(Debug, Parser)]
#[command(
    name = "parsim",
    version,
    about,
    long_about = None,
    after_help = "Environment: on Linux with transparent huge pages on request (the usual \
                  `madvise`), parsim runs itself again once at the start with glibc's \
                  huge-page tunable (GLIBC_TUNABLES=glibc.malloc.hugetlb=1): the same results, \
                  large programs faster. PARSIM_HUGE_PAGES=off leaves the pages as they are."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate scenario files and print every metric with its 95% confidence interval.
    Run(run::RunArgs),
    /// Print every analytic prediction that applies to a scenario, and why the others do not.
    Analyze(analyze::AnalyzeArgs),
    /// Simulate and analyse validation cases; verdicts account for sampling error.
    ///
    /// An exact prediction agrees when it lies in the simulation's 99% interval and the interval
    /// meets the case's precision target. A disagreement is rerun once on independent streams
    /// and stands only if the rerun disagrees too; the report keeps the first interval. Where a
    /// case has an exact prediction beside approximations, the table also gives each
    /// approximation's error against the exact value. Exit 0 when nothing disagrees, 1 when
    /// something does, 2 on bad input.
    Validate(validate::ValidateArgs),
    /// Run a scenario at many points (--vary KEY=VALUES), each simulated and compared with
    /// every analytic prediction; tidy CSV or JSON out.
    Sweep(sweep::SweepArgs),
    /// Join the shard files of a sweep, run or validate started with --shard K/N --out DIR,
    /// checking they make one whole piece of work, and print what the single run prints, byte
    /// for byte (validate: with its exit code).
    Merge(merge::MergeArgs),
    /// Write (and with --submit, submit) a Slurm job array that runs a sweep, a run or a
    /// validation in shards, and a merge job that starts when every shard has succeeded.
    Slurm(slurm::SlurmArgs),
    /// Check the statistics themselves (coverage of nominal 95% intervals).
    Selftest(selftest::SelftestArgs),
    /// List every metric a scenario reports, with its unit and meaning (the names --metric,
    /// [validate] metrics and the result files use; --names for the names alone).
    Metrics(metrics::MetricsArgs),
    /// Write a program as a GOAL schedule (the input of LogGOPSim's txt2bin): every rank's
    /// operations with loops unrolled and collectives expanded, each waiting for the one before
    /// or for the labelled operations it names; a summary goes to standard error.
    Goal(goal::GoalArgs),
    /// Print the JSON Schema of a scenario file, for editors that check TOML against a schema
    /// (taplo, Even Better TOML): `parsim schema > parsim.schema.json`, then `#:schema
    /// parsim.schema.json` as a scenario's first line.
    Schema(schema::SchemaArgs),
    /// Print the links a program's message crosses between two ranks (dimension order on
    /// meshes and tori, up-down on trees), and its idle-network cost; or, with --loads, the
    /// bytes every link carries over the whole program and where the busiest saturates.
    Route(route::RouteArgs),
    /// Fit `a + b m` per primitive and per number of ranks to measured communication times
    /// (least squares, with standard errors) and write a machine profile that a program
    /// scenario can use in place of a topology (`[machine] profile = "..."`).
    FitComm(fit_comm::FitCommArgs),
    /// Least-squares estimates of chosen [spmd] parameters from observed speedups s(p,d)
    /// (CSV p,d,speedup), the model speedup from the analytic formulas, with standard errors,
    /// residuals and the paper's average error.
    Fit(fit::FitArgs),
    /// The contention level w at which the [spmd] closed form best matches the simulated
    /// speedups of a reference scenario over a range of p (least squares, with its standard
    /// error); the reference may be an explicit interconnect (network = "mesh", "torus", ...).
    FitW(fit_w::FitWArgs),
    /// Fit phase-type laws (two and three moments), an MMPP(2) (three moments and the
    /// autocorrelations) and a MAP(2) (three moments and lag 1) to measured times or time stamps; print them beside the sample's
    /// moments, autocorrelations and a goodness figure, with the TOML to paste into a scenario
    /// (--toml writes it, --plot draws the picture).
    FitTrace(fit_trace::FitTraceArgs),
}

/// With this variable set, parsim parses its command line and exits (0, or clap's 2 with its
/// message) without running anything: the guide's test checks that every command the guide
/// shows is still accepted this way.
const CHECK_ARGUMENTS: &str = "PARSIM_CHECK_ARGUMENTS";

/// Parses the command line and runs the subcommand. Help and the version go to standard output
/// through [`parsim::files::stdout`], so that a failure to write them (a full disk) is reported
/// like any other output's; clap's own printing would ignore it and exit 0.
pub fn main() -> anyhow::Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() && !std::io::stdout().is_terminal() => {
            let mut out = parsim::files::stdout();
            write!(out, "{}", e.render())?;
            out.flush()?;
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => e.exit(),
    };
    if std::env::var_os(CHECK_ARGUMENTS).is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Analyze(args) => analyze::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Merge(args) => merge::run(&args),
        Command::Slurm(args) => slurm::run(&args),
        Command::Selftest(args) => selftest::run(&args),
        Command::Metrics(args) => metrics::run(&args),
        Command::Route(args) => route::run(&args),
        Command::Goal(args) => goal::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::FitComm(args) => fit_comm::run(&args),
        Command::Fit(args) => fit::run(&args),
        Command::FitW(args) => fit_w::run(&args),
        Command::FitTrace(args) => fit_trace::run(&args),
    }
}
