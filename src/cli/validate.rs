//! `parsim validate`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use parsim::replicate::Options;
use parsim::scenario::Scenario;
use parsim::scenario::assign::{Assignment, keyed_seed};
use parsim::shard::Shard;
use parsim::validate::markdown::markdown;
use parsim::validate::record;
use parsim::validate::shard::{
    CaseResult, Settings, ValidateShard, estimated_cost, fingerprint, owners,
};
use parsim::validate::table::table;
use parsim::validate::{
    CaseValidation, Comparison, Effort, ValidateOptions, ValidationRun, Verdict, validate,
};

/// Options of `parsim validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Case files or directories (default: validation/); `-` reads one case from standard input.
    paths: Vec<PathBuf>,
    /// Short runs, precision target relaxed fivefold (what CI runs).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The declared run lengths and precision targets (the default): replications are added
    /// until every exact prediction's metric meets the target or max_replications is spent.
    #[arg(long)]
    full: bool,
    /// Print JSON: one object per comparison, with the fields the CSV columns name.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV: one row per comparison (case, file, metric, method, exact, analytic,
    /// lower_bound, upper_bound, simulated, half_width_99, relative_error,
    /// relative_error_half_width_99, verdict, replications, first_simulated,
    /// first_half_width_99, first_replications, first_run_id, then the experiment's identity:
    /// parsim_version, scenario_hash, run_id, date, seed, length, warmup).
    #[arg(long)]
    csv: bool,
    /// Also write a Markdown report to this file (the table's columns and verdict words).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Also write FILE (TOML): every approximation's measured error per kind of metric (the
    /// count of comparisons, the median and the worst |relative error|). Over `validation/` it
    /// regenerates the table `analyze` shows beside each approximation
    /// (`validation/measured/method-errors.toml`, built into parsim).
    #[arg(long, value_name = "FILE", conflicts_with = "shard")]
    method_errors: Option<PathBuf>,
    /// Also draw one SVG per case into DIR: each metric's simulated mean with its 99% interval
    /// and every analytic method's value or bounds, relative to the simulated mean.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Also write every replication's value of every metric of every experiment to FILE, as CSV
    /// with the columns run_id, replication, metric, value; `run_id` is the column of the same
    /// name in the report's rows (a confirmed disagreement has two experiments, the first one's
    /// id in `first_run_id`).
    #[arg(long, value_name = "FILE", conflicts_with = "shard")]
    per_replication: Option<PathBuf>,
    /// Multiply every analytic method's work budget by FACTOR (up to 1e4) for every case, as
    /// `[analyze] budget` does in a file: a method refused as too costly says the factor it
    /// needs. The simulations are unchanged.
    #[arg(long, value_name = "FACTOR", value_parser = super::analyze::parse_budget)]
    budget: Option<f64>,
    /// Override a field of every case (repeatable), as `run --set` does: KEY is its path, e.g.
    /// station.server.service.mean, run.length; VALUE is read as TOML (a bare word is a
    /// string). A case's streams are then keyed by its seed, its name and the assignments.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Assignment::parse)]
    set: Vec<Assignment>,
    /// Replications of every case (2 to 1,000,000): the fixed count of --quick (default 10),
    /// the first batch of the precision rule otherwise (default the case's run.replications).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=i64::from(parsim::scenario::MAX_REPLICATIONS)))]
    replications: Option<u32>,
    /// Observations per replication of every queueing-network case (default: the case's
    /// run.length, a fifth of it and at least 2,000 with --quick). A rank program runs to
    /// completion once per replication: --length is refused when every case is one, and
    /// ignored with a warning for those among networks.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    length: Option<u64>,
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
    /// Validate only shard K of N (K from 0 to N-1) and write its rows to --out, for `parsim
    /// merge`, which prints the single run's report and exits with its code. The cases are
    /// shared out by estimated cost (events to simulate), costliest first to the least loaded
    /// shard, the same way in every shard.
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
        let default = PathBuf::from("validation");
        if !default.is_dir() {
            let here = std::env::current_dir()
                .map(|d| d.join("validation").display().to_string())
                .unwrap_or_else(|_| "validation".to_owned());
            anyhow::bail!(
                "validate expects case files (*.toml) or directories of them; with none it reads \
                 the directory validation/ of the repository, which is not here ({here} does not \
                 exist): run it from the repository root or name the cases, e.g. \
                 `parsim validate path/to/parsim/validation`"
            );
        }
        vec![default]
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

    /// Loads and checks every case, as each shard would: the number of cases to share out.
    pub fn pieces(&self) -> anyhow::Result<(usize, &'static str)> {
        let files = case_files(&self.paths)?;
        super::analyze::load_with_budget(&files, &self.set, self.budget)?;
        Ok((files.len(), "cases"))
    }

    /// How `sc` is simulated: the effort, and the command line's overrides of its `[run]` (its
    /// master seed keyed by the `--set` assignments, as `run --set` keys it).
    fn options(&self, sc: &Scenario) -> ValidateOptions {
        let seed = if self.set.is_empty() {
            self.seed
        } else {
            let master = self.seed.unwrap_or(Options::from_scenario(sc).seed);
            Some(keyed_seed(master, &self.set))
        };
        ValidateOptions {
            effort: if self.quick {
                Effort::Quick
            } else {
                Effort::Full
            },
            threads: self.threads,
            seed,
            replications: self.replications,
            length: self.length,
            stop: Default::default(),
        }
    }
}

/// Runs every case (or one shard's) and prints the report (or writes the shard's file).
pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let files = case_files(&args.paths)?;
    let scenarios = super::analyze::load_with_budget(&files, &args.set, args.budget)?;
    if let Some(length) = args.length {
        let programs: Vec<String> = scenarios
            .iter()
            .filter(|sc| sc.runs_to_completion())
            .map(|sc| sc.path.display().to_string())
            .collect();
        anyhow::ensure!(
            programs.len() < scenarios.len(),
            "--length {length} sets the run length of a queueing network, and every case given is a rank program, which runs to completion once per replication: drop --length (--replications gives more samples)"
        );
        if !programs.is_empty() {
            eprintln!(
                "parsim: warning: --length {length} ignored for {}: a rank program runs to completion once per replication and has no run length (--replications gives more samples)",
                programs.join(", ")
            );
        }
    }
    // no output may replace an input: refused before anything runs
    parsim::files::check_outputs(
        args.report
            .iter()
            .chain(&args.per_replication)
            .chain(&args.method_errors)
            .map(|p| p.as_path()),
        &[],
    )?;
    if let Some(dir) = &args.plot {
        parsim::plot::make_dir(dir)?;
    }
    let mut per_rep = super::run::per_replication_file(args.per_replication.as_deref())?;
    // which shard validates each case, by estimated cost (the same in every shard)
    let assigned = args.shard.map(|shard| {
        let costs: Vec<f64> = scenarios
            .iter()
            .map(|sc| estimated_cost(sc, &args.options(sc)))
            .collect();
        owners(&costs, shard.count)
    });
    let mut cases = Vec::new();
    for (index, sc) in scenarios.iter().enumerate() {
        let mine = match (args.shard, &assigned) {
            (Some(shard), Some(owners)) => owners[index] == shard.index,
            _ => true,
        };
        if mine {
            let (case, runs) = validate_case(sc, index, &args.options(sc))?;
            for w in &case.warnings {
                eprintln!("parsim: {w}");
            }
            if let Some(w) = &mut per_rep {
                for run in &runs {
                    parsim::report::write_replications(w, &run.identity.run_id, &run.experiment)?;
                }
            }
            cases.push(case);
        }
    }
    if let Some(w) = per_rep {
        parsim::report::finish_per_replication(w)?;
    }
    let settings = Settings {
        quick: args.quick,
        seed: args.seed,
        allow_outside_tolerance: args.allow_outside_tolerance,
        set: args.set.iter().map(ToString::to_string).collect(),
        replications: args.replications,
        length: args.length,
        budget: args.budget,
    };
    if let (Some(shard), Some(dir)) = (args.shard, &args.out) {
        let hashes: Vec<(String, String)> = scenarios
            .iter()
            .map(|sc| (sc.path.display().to_string(), sc.text_hash.clone()))
            .collect();
        let file = ValidateShard::new(
            fingerprint(&hashes, &settings),
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
        method_errors: args.method_errors.clone(),
        plot: args.plot.clone(),
        allow_outside_tolerance: args.allow_outside_tolerance,
    };
    output.emit(&cases)
}

/// Validates one case, noting the `[validate]` names that match nothing; with the experiments
/// its rows were judged on.
fn validate_case(
    sc: &Scenario,
    index: usize,
    options: &ValidateOptions,
) -> anyhow::Result<(CaseResult, Vec<ValidationRun>)> {
    let CaseValidation {
        rows: found,
        runs,
        warnings: run_warnings,
    } = validate(sc, options).with_context(|| format!("validating {}", sc.path.display()))?;
    let compared = found.iter().any(|r| r.replications > 0);
    let mut warnings: Vec<String> = run_warnings
        .into_iter()
        .map(|w| format!("warning: {}: {w}", sc.path.display()))
        .collect();
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
    Ok((
        CaseResult {
            index,
            rows: found,
            warnings,
        },
        runs,
    ))
}

/// The command line, its arguments quoted where they need it (for a file's provenance).
fn command_line() -> String {
    let mut words: Vec<String> = std::env::args_os()
        .map(|a| {
            let a = a.to_string_lossy().into_owned();
            if a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=,:".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect();
    if let Some(first) = words.first_mut() {
        *first = "parsim".to_owned();
    }
    words.join(" ")
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
    /// Also the approximations' measured errors to this file.
    pub method_errors: Option<PathBuf>,
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
        let mut out = parsim::files::stdout();
        if self.json {
            record::write_json(&rows, out)?;
        } else if self.csv {
            record::write_csv(&rows, out)?;
        } else {
            write!(out, "{}", table(&rows))?;
        }
        if let Some(path) = &self.report {
            parsim::files::write_text(path, &markdown(&rows))?;
        }
        if let Some(path) = &self.method_errors {
            let table = parsim::validate::measured::table(&rows, command_line());
            parsim::files::write_text(path, &parsim::predict::measured::to_toml(&table)?)?;
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
