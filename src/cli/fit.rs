//! `parsim fit`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};

use parsim::models::spmd::fit::{Param, SioReading, fit, read_observations};
use parsim::report::num;

/// The models `parsim fit` can fit.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum FitModel {
    /// Cremonesi and Gennaro's SPMD model (`[spmd]`).
    Spmd,
}

/// The reading of eq. 16 used for SIO.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Reading {
    /// Reading (a): full population, no join cost.
    FullPopulation,
    /// Reading (b): the draining sum over i = 1..p/c.
    Draining,
}

/// Options of `parsim fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Observed speedups: CSV with the header p,d,speedup and optionally sd (each speedup's
    /// standard error, which then weights the fit).
    measured: PathBuf,
    /// The model whose speedup is fitted.
    #[arg(long, value_enum)]
    model: FitModel,
    /// The parameters to estimate, comma-separated (w, S_par, S_ser, S0_com, SR_com, S0_io,
    /// SR_io, n_io, r); the others, and the starting values, come from --scenario.
    #[arg(long, value_delimiter = ',', required = true)]
    free: Vec<String>,
    /// The base scenario: its [spmd] section (with r) gives the fixed parameters, c, the I/O
    /// organisation and the burst families (`-` reads it from standard input).
    #[arg(long)]
    scenario: PathBuf,
    /// The reading of eq. 16 for SIO models.
    #[arg(long, value_enum, default_value = "draining")]
    sio_reading: Reading,
}

/// Fits, then prints the estimates, the residuals and the average error.
pub fn run(args: &FitArgs) -> anyhow::Result<ExitCode> {
    let FitModel::Spmd = args.model;
    let free = args
        .free
        .iter()
        .map(|name| {
            Param::parse(name.trim()).with_context(|| {
                format!(
                    "--free: unknown parameter {name:?} (w, S_par, S_ser, S0_com, SR_com, S0_io, \
                     SR_io, n_io, r)"
                )
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let base = super::run::load_all(std::slice::from_ref(&args.scenario), &[])?
        .pop()
        .and_then(|sc| sc.spmd().cloned())
        .with_context(|| format!("--scenario: {} has no [spmd]", args.scenario.display()))?;
    if !base.phases.is_empty() {
        anyhow::bail!(
            "--scenario: {} has [[spmd.phase]]: fit estimates the parameters of one phase; give \
             it a one-phase [spmd]",
            args.scenario.display()
        );
    }
    let path = &args.measured;
    let text = parsim::files::read_text(path, parsim::files::Limit::Data)?;
    let obs = read_observations(&text).with_context(|| path.display().to_string())?;
    let reading = match args.sio_reading {
        Reading::FullPopulation => SioReading::FullPopulation,
        Reading::Draining => SioReading::Draining,
    };
    let fitted = fit(&base, &free, &obs, reading)?;
    let mut out = parsim::files::stdout();
    writeln!(
        out,
        "{:<8} {:>14} {:>14} {:>12}",
        "param", "start", "estimate", "se"
    )?;
    for e in &fitted.estimates {
        writeln!(
            out,
            "{:<8} {:>14} {:>14} {:>12}",
            e.param.name(),
            num(e.start),
            num(e.value),
            num(e.se)
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:>6} {:>4} {:>12} {:>12} {:>12}",
        "p", "d", "observed", "model", "residual"
    )?;
    for (o, s) in &fitted.residuals {
        writeln!(
            out,
            "{:>6} {:>4} {:>12} {:>12} {:>12}",
            o.p,
            o.d,
            num(o.speedup),
            num(*s),
            num(s - o.speedup)
        )?;
    }
    writeln!(out)?;
    let spread = if fitted.weighted {
        format!("reduced chi-square {} (weighted by sd)", num(fitted.s2))
    } else {
        format!("residual sd {}", num(fitted.s2.sqrt()))
    };
    writeln!(
        out,
        "{} observations, {} free; {spread}; average error {}%",
        obs.len(),
        free.len(),
        num(100.0 * fitted.average_error)
    )?;
    Ok(ExitCode::SUCCESS)
}
