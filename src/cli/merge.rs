//! `parsim merge`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use parsim::sweep::shard;

use super::sweep::OutputArgs;

/// Options of `parsim merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The directory the shards wrote to (`--out`).
    dir: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

/// Joins the shards and prints what the single run would have printed.
pub fn run(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let report = shard::merge(&args.dir)?;
    args.output.emit(&report)?;
    Ok(ExitCode::SUCCESS)
}
