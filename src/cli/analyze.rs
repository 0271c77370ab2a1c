//! `parsim analyze`.

use std::io::Write as _;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use parsim::report::num;
use parsim::study::analyze_scenario;

/// Options of `parsim analyze`.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Scenario files (TOML).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Prints the predictions and refusals of each scenario.
pub fn run(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let scenarios = super::run::load_all(&args.files, &[])?;
    let analyses: Vec<_> = scenarios
        .iter()
        .map(|sc| (sc, analyze_scenario(sc)))
        .collect();
    if args.json {
        let out: Vec<_> = analyses
            .iter()
            .map(|(sc, a)| serde_json::json!({ "scenario": sc.name, "file": sc.path, "analysis": a }))
            .collect();
        writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&out)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for (sc, a) in analyses {
        writeln!(std::io::stdout(), "# {} ({})", sc.name, sc.path.display())?;
        let width = a
            .predictions
            .iter()
            .map(|p| p.metric.len())
            .max()
            .unwrap_or(6)
            .max(6);
        writeln!(
            std::io::stdout(),
            "{:<width$}  {:>14}  {:<13}  method",
            "metric",
            "value",
            "kind"
        )?;
        for p in &a.predictions {
            let kind = if p.exact { "exact" } else { "approximation" };
            writeln!(
                std::io::stdout(),
                "{:<width$}  {:>14}  {kind:<13}  {}",
                p.metric,
                num(p.value),
                p.method
            )?;
        }
        for t in &a.terms {
            writeln!(
                std::io::stdout(),
                "{:<width$}  {:>14}  {:<13}  {}",
                t.metric,
                num(t.value),
                "term",
                t.method
            )?;
        }
        for b in &a.bounds {
            writeln!(
                std::io::stdout(),
                "{:<width$}  {:>14}  {:<13}  {}",
                b.metric,
                format!("[{}, {}]", num(b.lower), num(b.upper)),
                "bounds",
                b.method
            )?;
        }
        if !a.demands.is_empty() {
            writeln!(
                std::io::stdout(),
                "visits and demands (any distribution; Little's law L = X R holds at every station):"
            )?;
            for d in &a.demands {
                writeln!(
                    std::io::stdout(),
                    "  {} at {}: visits {}, demand {}",
                    d.class,
                    d.station,
                    num(d.visits),
                    num(d.demand)
                )?;
            }
        }
        for b in &a.bottlenecks {
            let n_star = b
                .saturation_population
                .map_or(String::new(), |n| format!(", N* = {}", num(n)));
            writeln!(
                std::io::stdout(),
                "bottleneck of {}: {} (demand per server {}, throughput at most {}{n_star})",
                b.class,
                b.station,
                num(b.demand_per_server),
                num(1.0 / b.demand_per_server)
            )?;
        }
        for r in &a.refusals {
            writeln!(
                std::io::stdout(),
                "not applicable: {}: {}",
                r.method,
                r.reason
            )?;
        }
        writeln!(std::io::stdout())?;
    }
    Ok(ExitCode::SUCCESS)
}
