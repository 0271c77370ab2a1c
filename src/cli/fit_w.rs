//! `parsim fit-w`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use parsim::models::spmd::fit::{Observation, Param, SioReading, fit};
use parsim::replicate::{self, Options};
use parsim::report::num;
use parsim::scenario::assign::Assignment;

/// Options of `parsim fit-w`.
#[derive(Debug, Args)]
pub struct FitWArgs {
    /// The reference: a scenario with [spmd] (and r), simulated at each --p; with
    /// network = "<topology>" in [spmd], the program on that explicit interconnect (`-` reads
    /// it from standard input).
    scenario: PathBuf,
    /// The processor counts to simulate, comma-separated (at least two).
    #[arg(long, value_delimiter = ',', required = true)]
    p: Vec<u32>,
    /// Replications per point (default: the scenario's [run]; 2 to 1,000,000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=i64::from(parsim::scenario::MAX_REPLICATIONS)))]
    replications: Option<u32>,
    /// Observations per replication (default: the scenario's [run]); not for the network
    /// form, which runs spmd.cycles cycles.
    #[arg(long)]
    length: Option<u64>,
}

/// Simulates the reference at every `p` (the k-th point on seed `seed + k`, so the points are
/// independent), fits `w` of the closed form to the simulated speedups, each weighted by its
/// standard error over the replications, and prints both.
pub fn run(args: &FitWArgs) -> anyhow::Result<ExitCode> {
    if args.p.len() < 2 {
        anyhow::bail!("--p: give at least two processor counts");
    }
    let mut obs = Vec::new();
    let mut half_widths = Vec::new();
    let mut base = None;
    for (k, &p) in args.p.iter().enumerate() {
        let set = Assignment::parse(&format!("spmd.p={p}")).map_err(|e| anyhow::anyhow!(e))?;
        let sc = super::run::load_all(std::slice::from_ref(&args.scenario), &[set])
            .with_context(|| format!("--p: at p = {p}"))?
            .pop()
            .context("no scenario")?;
        let spmd = sc
            .spmd()
            .cloned()
            .with_context(|| format!("{} has no [spmd]", args.scenario.display()))?;
        if !spmd.phases.is_empty() {
            anyhow::bail!(
                "{} has [[spmd.phase]]: fit-w fits the w of one phase; give it a one-phase \
                 [spmd]",
                args.scenario.display()
            );
        }
        if spmd.network.is_some() && args.length.is_some() {
            anyhow::bail!(
                "--length: the reference has network = ..., a program that runs spmd.cycles \
                 cycles; set cycles in its [spmd] instead"
            );
        }
        let mut opt = Options::from_scenario(&sc);
        opt.seed = opt.seed.wrapping_add(k as u64);
        opt.replications = args.replications.unwrap_or(opt.replications);
        opt.length = args.length.unwrap_or(opt.length);
        opt.metrics = vec!["spmd.speedup".into()];
        let ex = replicate::run(&sc, &opt, &|_| {})?;
        let i = ex.index_of("spmd.speedup").context("no spmd.speedup")?;
        let ci = ex.interval(i, 0.95);

        let se = standard_error(&ex.replications, i)?;
        if se == 0.0 {
            anyhow::bail!(
                "the simulated speedup at p = {p} is the same in every replication ({}): a \
                 deterministic reference has no standard error to weight the fit by; give some \
                 burst a random distribution",
                num(ci.mean)
            );
        }
        obs.push(Observation {
            p,
            d: spmd.d,
            speedup: ci.mean,
            sd: Some(se),
        });
        half_widths.push(ci.half_width);
        base.get_or_insert(spmd);
    }
    let base = base.context("no points")?;
    let fitted = fit(&base, &[Param::W], &obs, SioReading::Draining)?;
    let w = &fitted.estimates[0];
    let mut out = parsim::files::stdout();
    writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>12} {:>12}",
        "p", "simulated", "half_width_95", "closed form", "at w given"
    )?;
    for ((o, s), hw) in fitted.residuals.iter().zip(&half_widths) {
        let given = parsim::models::spmd::fit::model_speedup(&base, SioReading::Draining, o.p, o.d);
        writeln!(
            out,
            "{:>6} {:>12} {:>12} {:>12} {:>12}",
            o.p,
            num(o.speedup),
            num(*hw),
            num(*s),
            num(given.unwrap_or(f64::NAN))
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "w = {} +- {} (standard error; the scenario's w = {}); reduced chi-square {}; average \
         error {}%",
        num(w.value),
        num(w.se),
        num(w.start),
        num(fitted.s2),
        num(100.0 * fitted.average_error)
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The standard error of the mean of column `i` over the replications' rows.
fn standard_error(rows: &[Vec<f64>], i: usize) -> anyhow::Result<f64> {
    let n = rows.len();
    if n < 2 {
        anyhow::bail!("--replications: at least 2 are needed for a standard error, got {n}");
    }
    let mean = rows.iter().map(|r| r[i]).sum::<f64>() / n as f64;
    let var = rows.iter().map(|r| (r[i] - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Ok((var / n as f64).sqrt())
}
