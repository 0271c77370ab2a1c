//! `parsim metrics`.

use std::io::Write as _;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Options of `parsim metrics`.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Scenario files (TOML).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Prints every metric name each scenario reports, one per line.
pub fn run(args: &MetricsArgs) -> anyhow::Result<ExitCode> {
    let scenarios = super::run::load_all(&args.files, &[])?;
    let several = scenarios.len() > 1;
    for sc in &scenarios {
        if several {
            writeln!(std::io::stdout(), "# {}", sc.path.display())?;
        }
        for name in sc.metric_names() {
            writeln!(std::io::stdout(), "{name}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
