//! `parsim validate`.

use std::io::Write as _;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use parsim::report::{csv_field, num, pct};
use parsim::scenario::Scenario;
use parsim::shard::Shard;
use parsim::shard::validate::{CaseResult, Settings, ValidateShard, fingerprint};
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
    /// Also draw one SVG per case into DIR: each metric's simulated mean with its 99% interval
    /// and every analytic method's value or bounds, relative to the simulated mean.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Master seed (overrides each case's).
    #[arg(long)]
    seed: Option<u64>,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Approximations outside their declared tolerance are reported and counted but do not
    /// make the exit code 1 (for a suite that measures approximation errors, as CI runs it;
    /// exact disagreements and undeclared missing predictions still do).
    #[arg(long)]
    allow_outside_tolerance: bool,
    /// Validate only shard K of N (K from 0 to N-1: the cases whose index in the sorted list of
    /// case files is K modulo N) and write its rows to --out, for `parsim merge`, which prints
    /// the single run's report and exits with its code.
    #[arg(
        long,
        value_name = "K/N",
        value_parser = Shard::parse,
        requires = "out",
        conflicts_with_all = ["json", "csv", "report", "plot"]
    )]
    shard: Option<Shard>,
    /// The directory a shard writes its file to.
    #[arg(long, value_name = "DIR", requires = "shard")]
    out: Option<PathBuf>,
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

impl ValidateArgs {
    /// True when the command runs one shard (`--shard` or `--out`).
    pub fn sharded(&self) -> bool {
        self.shard.is_some() || self.out.is_some()
    }
}

/// Runs every case (or one shard's) and prints the report (or writes the shard's file).
pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let files = case_files(&args.paths)?;
    let scenarios = super::run::load_all(&files, &[])?;
    let effort = if args.quick {
        Effort::Quick
    } else {
        Effort::Full
    };
    let mut cases = Vec::new();
    for (index, sc) in scenarios.iter().enumerate() {
        if args.shard.is_none_or(|s| s.owns(index)) {
            let case = validate_case(sc, index, effort, args)?;
            for w in &case.warnings {
                eprintln!("parsim: {w}");
            }
            cases.push(case);
        }
    }
    let settings = Settings {
        quick: args.quick,
        seed: args.seed,
        allow_outside_tolerance: args.allow_outside_tolerance,
    };
    if let (Some(shard), Some(dir)) = (args.shard, &args.out) {
        let texts = files
            .iter()
            .map(|f| Ok((f.display().to_string(), std::fs::read_to_string(f)?)))
            .collect::<std::io::Result<Vec<_>>>()?;
        let file = ValidateShard::new(
            fingerprint(&texts, settings),
            settings,
            shard,
            files.len(),
            cases,
        );
        let path = parsim::shard::write(&file, dir)
            .with_context(|| format!("writing shard {} to {}", shard.index, dir.display()))?;
        eprintln!("parsim: wrote {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let output = Output {
        json: args.json,
        csv: args.csv,
        report: args.report.clone(),
        plot: args.plot.clone(),
        allow_outside_tolerance: args.allow_outside_tolerance,
    };
    output.emit(&cases)
}

/// Validates one case, noting the `[validate]` names that match nothing.
fn validate_case(
    sc: &Scenario,
    index: usize,
    effort: Effort,
    args: &ValidateArgs,
) -> anyhow::Result<CaseResult> {
    let found = validate(sc, effort, args.threads, args.seed)
        .with_context(|| format!("validating {}", sc.path.display()))?;
    let compared = found.iter().any(|r| r.replications > 0);
    let mut warnings = Vec::new();
    for m in sc.validate.metrics.iter().flatten() {
        if compared && !found.iter().any(|r| &r.metric == m) {
            warnings.push(format!(
                "{}: validate.metrics lists {m:?}, which no analytic method predicts (see `parsim analyze`)",
                sc.path.display()
            ));
        }
    }
    for (method, _) in &sc.validate.tolerances {
        if compared && !found.iter().any(|r| r.method.starts_with(method.as_str())) {
            warnings.push(format!(
                "{}: validate.tolerances names {method:?}, which begins no compared method's label (see `parsim analyze`)",
                sc.path.display()
            ));
        }
    }
    Ok(CaseResult {
        index,
        rows: found,
        warnings,
    })
}

/// How a validation report is printed (by `parsim validate` and `parsim merge` alike).
#[derive(Debug)]
pub struct Output {
    /// JSON.
    pub json: bool,
    /// CSV.
    pub csv: bool,
    /// Also a Markdown report to this file.
    pub report: Option<PathBuf>,
    /// Also one picture per case into this directory.
    pub plot: Option<PathBuf>,
    /// `--allow-outside-tolerance`.
    pub allow_outside_tolerance: bool,
}

impl Output {
    /// Prints the report of `cases`; exit 1 when any comparison fails ([`Verdict::fails`]: a
    /// confirmed disagreement, an approximation outside its tolerance unless
    /// `--allow-outside-tolerance`, a case with no prediction it did not declare).
    pub fn emit(&self, cases: &[CaseResult]) -> anyhow::Result<ExitCode> {
        let rows: Vec<Comparison> = cases.iter().flat_map(|c| c.rows.clone()).collect();
        if self.json {
            writeln!(
                std::io::stdout(),
                "{}",
                serde_json::to_string_pretty(&rows)?
            )?;
        } else if self.csv {
            writeln!(
                std::io::stdout(),
                "case,metric,method,exact,analytic,simulated,half_width_99,relative_error,verdict,replications,first_simulated,first_half_width_99"
            )?;
            for r in &rows {
                let (first_mean, first_hw) =
                    r.first_run.map_or((String::new(), String::new()), |f| {
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
        if let Some(path) = &self.report {
            write_markdown(path, &rows)?;
        }
        if let Some(dir) = &self.plot {
            let files = parsim::validate::plot::write(&rows, dir)?;
            eprintln!("parsim: {} pictures in {}", files.len(), dir.display());
        }
        let failed = rows.iter().any(|r| {
            r.verdict.fails()
                && !(self.allow_outside_tolerance && r.verdict == Verdict::OutsideTolerance)
        });
        Ok(if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    }
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
    let comparisons = rows.iter().filter(|r| r.replications > 0).count();
    format!(
        "{} comparisons: {} agree, {} disagree, {} imprecise, {} within bounds; approximations: {} within tolerance, {} outside tolerance, {} undecided, {} reported; {} cases with no prediction ({} expected); worst |relative error| of an exact prediction {}\n\
         first experiments: {} of {} tests at 99% disagreed (about {:.1} expected by chance if every formula is right); rerun on independent streams, {} confirmed",
        comparisons,
        count(Verdict::Agree),
        count(Verdict::Disagree),
        count(Verdict::Imprecise),
        count(Verdict::WithinBounds),
        count(Verdict::WithinTolerance),
        count(Verdict::OutsideTolerance),
        count(Verdict::Undecided),
        count(Verdict::Reported),
        count(Verdict::NoPrediction) + count(Verdict::NoPredictionExpected),
        count(Verdict::NoPredictionExpected),
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
