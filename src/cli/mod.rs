//! Command-line parsing (clap) and the subcommands.

mod run;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// parsim: simulate queueing-network models of parallel programs and compare them with their
/// analytic solutions.
#[derive(Debug, Parser)]
#[command(name = "parsim", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate scenario files and print every metric with its 95% confidence interval.
    Run(run::RunArgs),
}

/// Parses the command line and runs the subcommand.
pub fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run::run(&args),
    }
}
