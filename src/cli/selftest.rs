//! `parsim selftest`.

use std::io::Write as _;

use std::process::ExitCode;

use clap::{Args, Subcommand};

use parsim::report::pct;
use parsim::selftest::{CoveragePlan, MODELS, coverage, expected_band};

/// Options of `parsim selftest`.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    #[command(subcommand)]
    check: Check,
}

#[derive(Debug, Subcommand)]
enum Check {
    /// Fraction of nominal 95% intervals that contain the true value, on models with known
    /// answers (M/M/1, a closed network, M/H2/1). Expected within the central 99.9% of the
    /// binomial count of 95% coverage over the experiments (92.6% to 97.1% for 1000).
    Coverage {
        /// Independent experiments per model.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(10..))]
        experiments: u32,
        /// Replications per experiment.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=i64::from(parsim::scenario::MAX_REPLICATIONS)))]
        replications: u32,
        /// Observations per replication.
        #[arg(long, default_value_t = 10_000)]
        length: u64,
        /// Seed of the first experiment.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the check; exit 1 when a coverage lies outside the band its number of experiments
/// allows ([`expected_band`]).
pub fn run(args: &SelftestArgs) -> anyhow::Result<ExitCode> {
    let Check::Coverage {
        experiments,
        replications,
        length,
        seed,
        threads,
        json,
    } = args.check;
    let plan = CoveragePlan {
        experiments,
        replications,
        length,
        seed,
    };
    let band = expected_band(experiments);
    let ok = |fraction: f64| (band.0..=band.1).contains(&fraction);
    let results = MODELS
        .iter()
        .map(|m| coverage(m, plan, threads))
        .collect::<Result<Vec<_>, _>>()?;
    if json {
        writeln!(
            parsim::files::stdout(),
            "{}",
            serde_json::to_string_pretty(&results)?
        )?;
    } else {
        writeln!(
            parsim::files::stdout(),
            "{experiments} experiments per model, each {replications} replications x {length} observations, MSER-5 warm-up"
        )?;
        writeln!(
            parsim::files::stdout(),
            "expected coverage {} - {} (the central 99.9% of {experiments} trials at 95%)",
            pct(band.0),
            pct(band.1)
        )?;
        writeln!(
            parsim::files::stdout(),
            "{:<28} {:>8} {:>10} {:>18} {:>10}  verdict",
            "model",
            "truth",
            "coverage",
            "95% interval",
            "bias"
        )?;
        for r in &results {
            writeln!(
                parsim::files::stdout(),
                "{:<28} {:>8.4} {:>10} {:>18} {:>10}  {}",
                r.model,
                r.truth,
                pct(r.fraction),
                format!(
                    "{} - {}",
                    pct(r.fraction_interval.0),
                    pct(r.fraction_interval.1)
                ),
                pct(r.relative_bias),
                if ok(r.fraction) {
                    "ok".to_owned()
                } else {
                    format!("OUTSIDE {} - {}", pct(band.0), pct(band.1))
                }
            )?;
        }
    }
    let bad = results.iter().any(|r| !ok(r.fraction));
    Ok(if bad {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
