//! `parsim validate`.

use std::io::Write as _;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use parsim::report::{csv_field, num, pct};
use parsim::validate::{Comparison, Effort, LEVEL, Verdict, validate};

/// Options of `parsim validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Case files or directories (default: validation/).
    paths: Vec<PathBuf>,
    /// Short runs, precision target relaxed fivefold (what CI runs).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The declared run lengths and precision targets (the default): replications are added
    /// until every exact prediction's metric meets the target or max_replications is spent.
    #[arg(long)]
    full: bool,
    /// Print JSON.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV.
    #[arg(long)]
    csv: bool,
    /// Also write a Markdown report to this file.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Master seed (overrides each case's).
    #[arg(long)]
    seed: Option<u64>,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

fn case_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let roots = if paths.is_empty() {
        vec![PathBuf::from("validation")]
    } else {
        paths.to_vec()
    };
    let mut files = Vec::new();
    for p in roots {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(&p)
                .with_context(|| format!("reading {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "toml"))
                .collect();
            found.sort();
            anyhow::ensure!(
                !found.is_empty(),
                "no case files (*.toml) in {}",
                p.display()
            );
            files.extend(found);
        } else {
            files.push(p);
        }
    }
    Ok(files)
}

/// Runs every case; exit 1 when any comparison disagrees.
pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let scenarios = super::run::load_all(&case_files(&args.paths)?, &[])?;
    let effort = if args.quick {
        Effort::Quick
    } else {
        Effort::Full
    };
    let mut rows: Vec<Comparison> = Vec::new();
    for sc in &scenarios {
        let found = validate(sc, effort, args.threads, args.seed)
            .with_context(|| format!("validating {}", sc.path.display()))?;
        if found.is_empty() {
            eprintln!(
                "parsim: {}: no analytic prediction applies; nothing to compare",
                sc.path.display()
            );
        }
        for m in sc.validate.metrics.iter().flatten() {
            if !found.is_empty() && !found.iter().any(|r| &r.metric == m) {
                eprintln!(
                    "parsim: {}: validate.metrics lists {m:?}, which no analytic method predicts (see `parsim analyze`)",
                    sc.path.display()
                );
            }
        }
        rows.extend(found);
    }
    if args.json {
        writeln!(
            std::io::stdout(),
            "{}",
            serde_json::to_string_pretty(&rows)?
        )?;
    } else if args.csv {
        writeln!(
            std::io::stdout(),
            "case,metric,method,exact,analytic,simulated,half_width_99,relative_error,verdict,replications,first_simulated,first_half_width_99"
        )?;
        for r in &rows {
            let (first_mean, first_hw) = r.first_run.map_or((String::new(), String::new()), |f| {
                (f.simulated.to_string(), f.half_width.to_string())
            });
            writeln!(
                std::io::stdout(),
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&r.case),
                r.metric,
                csv_field(&r.method),
                r.exact,
                r.analytic,
                r.simulated,
                r.half_width,
                r.relative_error,
                r.verdict.label(),
                r.replications,
                first_mean,
                first_hw
            )?;
        }
    } else {
        write!(std::io::stdout(), "{}", table(&rows))?;
    }
    if let Some(path) = &args.report {
        write_markdown(path, &rows)?;
    }
    let disagree = rows.iter().any(|r| r.verdict == Verdict::Disagree);
    Ok(if disagree {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn summary(rows: &[Comparison]) -> String {
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let worst = rows
        .iter()
        .filter(|r| r.exact)
        .map(|r| r.relative_error.abs())
        .fold(0.0, f64::max);
    let tests = rows
        .iter()
        .filter(|r| r.exact || r.bounds.is_some())
        .count();
    let rerun: Vec<&Comparison> = rows.iter().filter(|r| r.first_run.is_some()).collect();
    let confirmed = rerun
        .iter()
        .filter(|r| r.verdict == Verdict::Disagree)
        .count();
    format!(
        "{} comparisons: {} agree, {} disagree, {} imprecise, {} within tolerance, {} reported, {} within bounds; worst |relative error| of an exact prediction {}\n\
         first experiments: {} of {} tests at 99% disagreed (about {:.1} expected by chance if every formula is right); rerun on independent streams, {} confirmed",
        rows.len(),
        count(Verdict::Agree),
        count(Verdict::Disagree),
        count(Verdict::Imprecise),
        count(Verdict::WithinTolerance),
        count(Verdict::Reported),
        count(Verdict::WithinBounds),
        pct(worst),
        rerun.len(),
        tests,
        tests as f64 * (1.0 - LEVEL),
        confirmed
    )
}

/// The verdict, marked when it comes from a second experiment after the first disagreed.
fn verdict(r: &Comparison) -> String {
    match r.first_run {
        Some(f) => format!(
            "{} on rerun (first experiment {} +- {} disagreed)",
            r.verdict.label(),
            num(f.simulated),
            num(f.half_width)
        ),
        None => r.verdict.label().to_string(),
    }
}

/// The analytic column: the value, or `[lower, upper]` for a bound.
fn analytic(r: &Comparison) -> String {
    match r.bounds {
        Some([lo, hi]) => format!("[{}, {}]", num(lo), num(hi)),
        None => num(r.analytic),
    }
}

fn table(rows: &[Comparison]) -> String {
    let mut s = String::new();
    let cw = rows.iter().map(|r| r.case.len()).max().unwrap_or(4).max(4);
    let mw = rows
        .iter()
        .map(|r| r.metric.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        s,
        "{:<cw$}  {:<mw$}  {:>22}  {:>24}  {:>18}  {:<16}  method",
        "case", "metric", "analytic", "simulated +- 99% CI", "rel. error", "verdict"
    );
    // A rerun's verdict is long; it goes last so the columns stay aligned.
    for r in rows {
        let sim = format!("{} +- {}", num(r.simulated), num(r.half_width));
        let err = format!(
            "{} +- {}",
            pct(r.relative_error),
            pct(r.relative_error_half_width)
        );
        let _ = writeln!(
            s,
            "{:<cw$}  {:<mw$}  {:>22}  {:>24}  {:>18}  {:<16}  {}{}",
            r.case,
            r.metric,
            analytic(r),
            sim,
            err,
            r.verdict.label(),
            r.method,
            if r.first_run.is_some() {
                format!("  [{}]", verdict(r))
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(s, "{}", summary(rows));
    s
}

fn write_markdown(path: &Path, rows: &[Comparison]) -> anyhow::Result<()> {
    let mut s = String::from("# parsim validation report\n\n");
    let _ = writeln!(s, "{}\n", summary(rows));
    s += "| case | metric | method | analytic | simulated ± 99% CI | relative error | verdict |\n|---|---|---|---|---|---|---|\n";
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {} ± {} | {} ± {} | {} |",
            r.case,
            r.metric,
            r.method,
            analytic(r),
            num(r.simulated),
            num(r.half_width),
            pct(r.relative_error),
            pct(r.relative_error_half_width),
            verdict(r)
        );
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}
