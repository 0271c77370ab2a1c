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
    /// Print the names only, one per line (for scripts).
    #[arg(long)]
    names: bool,
}

/// Prints every metric name each scenario reports with its unit and meaning (times are in the
/// scenario's own time unit), or the names alone with `--names`.
pub fn run(args: &MetricsArgs) -> anyhow::Result<ExitCode> {
    let scenarios = super::run::load_all(&args.files, &[])?;
    let several = scenarios.len() > 1;
    let mut out = parsim::files::stdout();
    for sc in &scenarios {
        if several {
            writeln!(out, "# {}", sc.path.display())?;
        }
        let names = sc.metric_names();
        if args.names {
            for name in &names {
                writeln!(out, "{name}")?;
            }
            continue;
        }
        let width = names.iter().map(String::len).max().unwrap_or(0);
        for name in &names {
            match sc.describe_metric(name) {
                Some(e) => writeln!(out, "{name:width$}  {:<8}  {}", e.unit, e.meaning)?,
                None => writeln!(out, "{name}")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
