//! `parsim fit-comm`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use parsim::models::profile::{fit, read_measurements};
use parsim::report::num;

/// Options of `parsim fit-comm`.
#[derive(Debug, Args)]
pub struct FitCommArgs {
    /// Measurements: CSV with the header primitive,ranks,bytes,time.
    measurements: PathBuf,
    /// Write the machine profile (TOML) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Fits every (primitive, ranks), prints the fits and writes the profile.
pub fn run(args: &FitCommArgs) -> anyhow::Result<ExitCode> {
    let path = &args.measurements;
    let text = parsim::files::read_text(path, parsim::files::Limit::Data)?;
    let measurements = read_measurements(&text).with_context(|| path.display().to_string())?;
    let profile = fit(&measurements).with_context(|| path.display().to_string())?;
    let mut out = parsim::files::stdout();
    writeln!(
        out,
        "{:<12} {:>6} {:>14} {:>12} {:>14} {:>12} {:>6} {:>12}",
        "primitive", "ranks", "a", "se(a)", "b", "se(b)", "points", "residual sd"
    )?;
    for f in &profile.fits {
        writeln!(
            out,
            "{:<12} {:>6} {:>14} {:>12} {:>14} {:>12} {:>6} {:>12}",
            f.primitive,
            f.ranks,
            num(f.a),
            num(f.a_se),
            num(f.b),
            num(f.b_se),
            f.points,
            num(f.residual_sd)
        )?;
    }
    if let Some(file) = &args.out {
        parsim::files::write_text(file, &profile.to_toml())?;
        writeln!(out, "machine profile written to {}", file.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
