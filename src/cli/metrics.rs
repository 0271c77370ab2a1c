//! `parsim metrics`.

use std::io::Write as _;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Options of `parsim metrics`.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Scenario files (TOML; `-` reads one from standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    machine: super::run::MachineArgs,
    /// Print the names only, one per line (for scripts); the per-link ones as their pattern,
    /// `link.<name>.utilisation`, whose `<name>` a run's links fill in.
    #[arg(long)]
    names: bool,
}

/// Prints every metric name each scenario reports with its unit and meaning (times are in the
/// scenario's own time unit), or the names alone with `--names`.
pub fn run(args: &MetricsArgs) -> anyhow::Result<ExitCode> {
    let scenarios = super::run::load_all_with(&args.files, &[], &args.machine.machine())?;
    let several = scenarios.len() > 1;
    let mut out = parsim::files::stdout();
    for sc in &scenarios {
        if several {
            writeln!(out, "# {}", sc.path.display())?;
        }
        let names = sc.metric_names();
        let per_link = sc.per_link_metrics();
        if args.names {
            for name in names.iter().chain(&per_link) {
                writeln!(out, "{name}")?;
            }
            continue;
        }
        let width = names
            .iter()
            .chain(&per_link)
            .map(String::len)
            .max()
            .unwrap_or(0);
        for name in names.iter().chain(&per_link) {
            match sc.describe_metric(name) {
                Some(e) => writeln!(out, "{name:width$}  {:<8}  {}", e.unit, e.meaning)?,
                None => writeln!(out, "{name}")?,
            }
        }
        if !per_link.is_empty() {
            writeln!(
                out,
                "(link.<name>.*: one of each per link a message crosses, named as `parsim route` names it, e.g. link.0_0+x.utilisation)"
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
