//! `parsim merge`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use parsim::shard;
use parsim::sweep::shard as sweep_shard;
use parsim::validate;

use super::run::Format;
use super::sweep::OutputArgs;

/// Options of `parsim merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The directory the shards wrote to (`--out`).
    dir: PathBuf,
    /// Print CSV (for shards of `parsim run`, whose default is a table; a sweep's default).
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// Also write a Markdown report to this file (for shards of `parsim validate`).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

/// Joins the shards (of `run`, `sweep` or `validate`, told by their files) and prints what the
/// single run would have printed, exiting with its code.
pub fn run(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let format = shard::format_of(&args.dir)?;
    anyhow::ensure!(
        args.report.is_none() || format == validate::shard::FORMAT,
        "--report writes validation reports; {} holds other shards",
        args.dir.display()
    );
    if format == validate::shard::FORMAT {
        anyhow::ensure!(
            args.output.plot_metric.is_empty(),
            "--plot-metric chooses a sweep's pictures; a validation draws every case"
        );
        let merged = validate::shard::merge(&args.dir)?;
        for w in merged.cases.iter().flat_map(|c| &c.warnings) {
            eprintln!("parsim: {w}");
        }
        let output = super::validate::Output {
            json: args.output.json,
            csv: args.csv,
            report: args.report.clone(),
            method_errors: None,
            plot: args.output.plot.clone(),
            allow_outside_tolerance: merged.allow_outside_tolerance,
        };
        return output.emit(&merged.cases);
    }
    if format == shard::run::FORMAT {
        anyhow::ensure!(
            args.output.plot.is_none(),
            "--plot draws sweeps; {} holds shards of `parsim run`",
            args.dir.display()
        );
        let report = shard::run::merge(&args.dir)?;
        let format = Format::of(args.output.json, args.csv);
        let mut out = parsim::files::stdout();
        format.start(&mut out)?;
        format.report(&mut out, &report)?;
        format.finish(&mut out, std::slice::from_ref(&report))?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let (report, allow_imprecise) = sweep_shard::merge(&args.dir)?;
    args.output.emit(&report)?;
    Ok(super::sweep::warn(&report, allow_imprecise))
}
