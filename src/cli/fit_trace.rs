//! `parsim fit-trace`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use parsim::traffic_fit::read::{Values, read_times};
use parsim::traffic_fit::{Role, TraceFit, plot};

/// What the measured times are.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Times {
    /// Times between arrivals: phase-type laws, an MMPP(2) and a MAP(2) are fitted.
    Interarrival,
    /// Service times: a phase-type law is fitted.
    Service,
}

/// Options of `parsim fit-trace`.
#[derive(Debug, Args)]
pub struct FitTraceArgs {
    /// The measurements: numbers separated by new lines, commas or spaces (`#` starts a
    /// comment), or with --column a CSV file whose first line is a header.
    file: PathBuf,
    /// The column of a CSV file with a header to read.
    #[arg(long)]
    column: Option<String>,
    /// The numbers are time stamps in increasing order: the times between successive ones are
    /// fitted.
    #[arg(long)]
    timestamps: bool,
    /// What the times are.
    #[arg(long = "as", value_enum, default_value = "interarrival")]
    role: Times,
    /// Autocorrelation lags to measure and compare (1 to this).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    lags: u32,
    /// Write the recommended fit's TOML here (the MMPP(2) when successive times are
    /// correlated, the three-moment PH law otherwise).
    #[arg(long)]
    toml: Option<PathBuf>,
    /// Draw the sample's and the fits' autocorrelations and distributions into this SVG file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// Reads, fits, prints, and writes the TOML and the picture when asked.
pub fn run(args: &FitTraceArgs) -> anyhow::Result<ExitCode> {
    parsim::files::check_outputs(
        args.toml.iter().chain(&args.plot).map(PathBuf::as_path),
        &[args.file.as_path()],
    )?;
    let values = if args.timestamps {
        Values::Timestamps
    } else {
        Values::Intervals
    };
    let times = read_times(&args.file, args.column.as_deref(), values)
        .map_err(|problems| anyhow::anyhow!("{}", problems.join("\n")))?;
    let role = match args.role {
        Times::Interarrival => Role::Interarrival,
        Times::Service => Role::Service,
    };
    let fit = TraceFit::new(
        &args.file.display().to_string(),
        &times,
        role,
        args.lags as usize,
    )?;
    let mut out = parsim::files::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&fit)?)?;
    } else {
        write!(out, "{}", fit.table())?;
    }
    if let Some(file) = &args.toml {
        let chosen = fit.recommended();
        parsim::files::write_text(
            file,
            &format!(
                "# {} fitted to {} by parsim fit-trace ({})\n{}\n",
                chosen.name,
                args.file.display(),
                chosen.how,
                chosen.toml
            ),
        )?;
        eprintln!("parsim: wrote {} ({})", file.display(), chosen.name);
    }
    if let Some(file) = &args.plot {
        plot::draw(&fit, file)?;
        eprintln!("parsim: wrote {}", file.display());
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
