//! `parsim run`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::progress::Progress;
use anyhow::Context;
use clap::Args;

use parsim::engine::program::timeline::TimelineError;
use parsim::problem::Problem;
use parsim::replicate::{self, Options};
use parsim::report::{CSV_HEADER, RunReport};
use parsim::scenario::assign::{self, Assignment, keyed_seed};
use parsim::scenario::check::schedule::flags as goal_flags;
use parsim::scenario::{self, Scenario, ScenarioError, Warmup};
use parsim::shard::Shard;
use parsim::shard::run::{self as run_shards, RunShard};

/// Options of `parsim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario files (TOML; `-` reads one from standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Override a scenario field (repeatable): KEY is its path, e.g. class.jobs.population,
    /// station.disk.service.mean, run.length, program.ranks; VALUE is read as TOML (a bare word
    /// is a string). The streams are then keyed by the seed and the assignments, as a sweep
    /// point's are, so `run --set` reproduces that point of `parsim sweep` exactly.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Assignment::parse)]
    set: Vec<Assignment>,
    /// Print JSON (one array of reports) instead of tables.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV instead of tables: one row per metric, each carrying the run's identity
    /// (scenario, file, scenario_hash, run_id, parsim_version, date, seed, replications,
    /// length, warmup) before metric, mean and half_width_95.
    #[arg(long)]
    csv: bool,
    /// Also write every replication's value of every metric to FILE, as CSV with the columns
    /// run_id, replication, metric, value (the reported mean is the mean of each metric's values).
    #[arg(long, value_name = "FILE")]
    per_replication: Option<PathBuf>,
    /// Master seed (overrides the scenario's).
    #[arg(long)]
    seed: Option<u64>,
    /// Replications (overrides the scenario's; 2 to 1,000,000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=i64::from(scenario::MAX_REPLICATIONS)))]
    replications: Option<u32>,
    /// Observations measured per replication (overrides the scenario's). A rank program has no
    /// run length (each replication runs it once to completion): --length is refused when every
    /// scenario given is a program, and ignored with a warning for the programs among queueing
    /// networks (use --replications for more samples).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    length: Option<u64>,
    /// Fixed warm-up in observations (overrides MSER-5).
    #[arg(long)]
    warmup: Option<u64>,
    /// Add replications until the 95% interval of --metric has this relative half-width.
    #[arg(long)]
    precision: Option<f64>,
    /// A metric --precision applies to; repeat it to require several (default: the first
    /// class's response or cycle time).
    #[arg(long)]
    metric: Vec<String>,
    /// Most replications --precision may use (at most 1,000,000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=i64::from(scenario::MAX_REPLICATIONS)))]
    max_replications: Option<u32>,
    /// A precision target (--precision or the scenario's run.precision) not met within the
    /// replication budget is still reported (table, JSON and stderr say so) but does not make
    /// the exit code 1.
    #[arg(long)]
    allow_imprecise: bool,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Print the network (or, with `network = ...` or `[[spmd.phase]]`, the rank program) an
    /// `[spmd]` section builds, as scenario tables, before its results.
    #[arg(long)]
    show_network: bool,
    /// Run only shard K of N (K from 0 to N-1: the replications whose index is K modulo N, on
    /// the streams the single run gives them) of one scenario and write them to --out, for
    /// `parsim merge`. Every shard settles the same warm-up; --precision and --per-replication
    /// cannot be used.
    #[arg(
        long,
        value_name = "K/N",
        value_parser = Shard::parse,
        requires = "out",
        conflicts_with_all = ["json", "csv", "precision", "show_network", "per_replication"]
    )]
    shard: Option<Shard>,
    /// The directory a shard writes its file to.
    #[arg(long, value_name = "DIR", requires = "shard")]
    out: Option<PathBuf>,
    /// Write a timeline of a rank program's run to FILE (JSON in the Trace Event Format, which
    /// https://ui.perfetto.dev and chrome://tracing open): ONE replication, the first (index 0,
    /// the same seed and streams as the run's replication 0), with a track per rank (its spans
    /// of compute, communication, waiting and io, inside its phases' spans) and a counter per
    /// link used (messages at the link). Times in microseconds, the scenario's time unit read
    /// as one second. One scenario file; refused for a queueing network.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["shard", "out"])]
    timeline: Option<PathBuf>,
    /// Draw the same replication as a Gantt chart in SVG: a row per rank (at most 256), spans
    /// coloured by category, phase starts and ends marked, a time axis.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["shard", "out"])]
    timeline_svg: Option<PathBuf>,
    /// The most events (the names of the trace's tracks, two per rank, then spans, phase spans
    /// and changes of a link's occupancy) a timeline may hold: a run that would pass it is
    /// stopped and refused (exit 2), so that memory and the file stay bounded (about 50 bytes
    /// an event while recording; about 100 bytes of JSON, refused past 256 on average).
    #[arg(long, value_name = "EVENTS", value_parser = clap::value_parser!(u64).range(1..))]
    timeline_limit: Option<u64>,
    #[command(flatten)]
    machine: MachineArgs,
}

/// The machine of a GOAL file given on the command line (`run`, `route`, `metrics`).
#[derive(Debug, Args)]
pub struct MachineArgs {
    /// GOAL files (`.goal`): the LogGP endpoints, as the keys of `[loggp]`: L, o, g in seconds
    /// (kept in whole picoseconds), G, O in seconds per byte (kept in whole femtoseconds), S
    /// (the eager limit) in bytes, order = "program" or "loggopsim", e.g.
    /// `L=2.5e-6,o=1.5e-6,g=1e-6,G=6e-9,O=0,S=65535,order="loggopsim"`; LogGOPSim's defaults
    /// (these) for what is left out. On one line; a value finer than its unit by more than one
    /// part in a million is refused.
    #[arg(long, value_name = "KEY=VALUE,...", value_parser = goal_flags::keys_flag)]
    loggp: Option<String>,
    /// GOAL files: links between the endpoints, as the keys of `[topology]` (without
    /// `startup`: the endpoints' `o` is the startup), e.g.
    /// `kind="torus",dims=[32,32],bandwidth=1e10,latency=1e-7`.
    #[arg(long, value_name = "KEY=VALUE,...", value_parser = goal_flags::keys_flag)]
    topology: Option<String>,
    /// GOAL files: ranks per node of the topology (default 1; needs --topology).
    #[arg(long, value_name = "N")]
    ranks_per_node: Option<u32>,
}

impl MachineArgs {
    /// The machine the flags give.
    pub fn machine(&self) -> goal_flags::GoalMachine {
        goal_flags::GoalMachine {
            loggp: self.loggp.clone(),
            topology: self.topology.clone(),
            ranks_per_node: self.ranks_per_node,
        }
    }
}

impl RunArgs {
    /// The master seed of `sc`'s run: `--seed`, else the scenario's (after `--set`).
    fn master_seed(&self, sc: &Scenario) -> u64 {
        self.seed.unwrap_or(Options::from_scenario(sc).seed)
    }

    fn options(&self, sc: &Scenario) -> anyhow::Result<Options> {
        let mut o = Options::from_scenario(sc);
        o.seed = keyed_seed(self.master_seed(sc), &self.set);
        o.replications = self.replications.unwrap_or(o.replications);
        if let Some(length) = self.length {
            if sc.runs_to_completion() {
                eprintln!(
                    "parsim: warning: --length {length} ignored for {}: a rank program runs to completion once per replication and has no run length (--replications gives more samples)",
                    sc.path.display()
                );
            } else {
                o.length = length;
            }
        }
        if let Some(w) = self.warmup {
            o.warmup = Warmup::Fixed(w);
        }
        if let Some(p) = self.precision {
            anyhow::ensure!(
                p > 0.0 && p < 1.0,
                "--precision must lie in (0, 1), got {p}"
            );
            o.precision = Some(p);
        }
        if !self.metric.is_empty() {
            o.metrics = self.metric.clone();
        }
        o.max_replications = self
            .max_replications
            .unwrap_or(o.max_replications)
            .max(o.replications);
        o.threads = self.threads;
        let used = replicate::worker_threads(&o);
        if self.threads > used {
            eprintln!(
                "parsim: --threads {}: using {used} (no more than the replications of a batch or four per core)",
                self.threads
            );
        }
        Ok(o)
    }
}

/// How `parsim run` (and `parsim merge` of run shards) prints reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A table per scenario.
    Table,
    /// One CSV table of every scenario.
    Csv,
    /// One JSON array of every report.
    Json,
}

impl Format {
    /// The format `--json` or `--csv` ask for (a table when neither does).
    pub fn of(json: bool, csv: bool) -> Format {
        match (json, csv) {
            (true, _) => Format::Json,
            (false, true) => Format::Csv,
            (false, false) => Format::Table,
        }
    }

    /// What comes before the first report.
    pub fn start(self, out: &mut impl Write) -> std::io::Result<()> {
        if self == Format::Csv {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(CSV_HEADER)?;
            w.flush()?;
        }
        Ok(())
    }

    /// What each report prints as it is done.
    pub fn report(self, out: &mut impl Write, report: &RunReport) -> std::io::Result<()> {
        match self {
            Format::Table => writeln!(out, "{}", report.table()),
            Format::Csv => {
                // as io errors, so that a closed pipe is recognised and ends quietly
                let mut w = csv::Writer::from_writer(out);
                report
                    .write_csv(&mut w)
                    .map_err(parsim::report::csv_io_error)?;
                w.flush()
            }
            Format::Json => Ok(()),
        }
    }

    /// What comes after the last report.
    pub fn finish(self, out: &mut impl Write, reports: &[RunReport]) -> anyhow::Result<()> {
        if self == Format::Json {
            serde_json::to_writer_pretty(&mut *out, reports)?;
            writeln!(out)?;
        }
        Ok(())
    }
}

impl RunArgs {
    /// True when the command runs one shard (`--shard` or `--out`).
    pub fn sharded(&self) -> bool {
        self.shard.is_some() || self.out.is_some()
    }

    /// The scenario files.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Loads and checks the scenario as each shard would: the number of replications to
    /// share out.
    pub fn pieces(&self) -> anyhow::Result<(usize, &'static str)> {
        let scenarios = load_all(&self.files, &self.set)?;
        let mut replications = 0;
        for sc in &scenarios {
            replications = self.options(sc)?.replications as usize;
        }
        Ok((replications, "replications"))
    }
}

/// Loads every file first (reporting all their problems), then runs them in order (or one
/// shard of one file).
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let machine = args.machine.machine();
    let scenarios = load_all_with(&args.files, &args.set, &machine)?;
    // no output may replace an input, a device or another output: refused before anything runs
    parsim::files::check_outputs(
        [&args.per_replication, &args.timeline, &args.timeline_svg]
            .into_iter()
            .flatten()
            .map(PathBuf::as_path),
        &[],
    )?;
    if let Some(length) = args.length
        && scenarios.iter().all(Scenario::runs_to_completion)
    {
        anyhow::bail!(
            "--length {length} sets the run length of a queueing network, and every scenario given is a rank program, which runs to completion once per replication: drop --length (--replications gives more samples)"
        );
    }
    anyhow::ensure!(
        args.timeline_limit.is_none() || args.timeline.is_some() || args.timeline_svg.is_some(),
        "--timeline-limit bounds a timeline, and none was asked for: give --timeline or --timeline-svg, or leave it out"
    );
    if let (Some(shard), Some(dir)) = (args.shard, &args.out) {
        let [sc] = scenarios.as_slice() else {
            anyhow::bail!("--shard runs one scenario file at a time");
        };
        return run_shard(args, sc, shard, dir);
    }
    if args.timeline.is_some() || args.timeline_svg.is_some() {
        let [sc] = scenarios.as_slice() else {
            anyhow::bail!(
                "--timeline and --timeline-svg record one scenario's run: give one file (got {})",
                scenarios.len()
            );
        };
        write_timeline(args, sc)?;
    }
    let format = Format::of(args.json, args.csv);
    let mut reports = Vec::new();
    let mut out = parsim::files::stdout();
    let mut per_rep = per_replication_file(args.per_replication.as_deref())?;
    format.start(&mut out)?;
    for sc in &scenarios {
        if args.show_network
            && let Some(model) = &sc.model
            && let Some(tables) = model.tables()
        {
            let tables = parsim::scenario::show::toml(&tables);
            let what = if sc.program().is_some() {
                "program"
            } else {
                "network"
            };
            writeln!(
                out,
                "# {what} built from [{}] of {}{tables}",
                model.section(),
                sc.path.display()
            )?;
        }
        let opt = args.options(sc)?;
        for w in replicate::warnings(sc, &opt) {
            eprintln!("parsim: warning: {}: {w}", sc.path.display());
        }
        let bar = Progress::new(&sc.name, u64::from(opt.replications));
        let ex = replicate::run(sc, &opt, &|step| bar.tell(step))
            .with_context(|| format!("running {}", sc.path.display()))?;
        bar.finish();
        let report = RunReport::new(sc, &opt, &ex).keyed_from(args.master_seed(sc));
        if let Some(w) = &mut per_rep {
            parsim::report::write_replications(w, &report.provenance.run_id, &ex)?;
        }
        format.report(&mut out, &report)?;
        reports.push(report);
    }
    format.finish(&mut out, &reports)?;
    if let Some(w) = per_rep {
        parsim::report::finish_per_replication(w)?;
    }
    let mut imprecise = false;
    for r in &reports {
        if let Some(p) = r.precision.as_ref().filter(|p| !p.met) {
            imprecise = true;
            eprintln!(
                "parsim: {}: precision target {} on {} NOT met within {} replications (raise --max-replications or the run length{})",
                r.file,
                p.target,
                p.metrics.join(", "),
                r.replications,
                if args.allow_imprecise {
                    ""
                } else {
                    "; --allow-imprecise accepts the result with exit 0"
                }
            );
        }
    }
    Ok(if imprecise && !args.allow_imprecise {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs replication 0 of `sc`'s program with a timeline and writes the files `--timeline` and
/// `--timeline-svg` ask for (checking first what can be refused before running).
fn write_timeline(args: &RunArgs, sc: &Scenario) -> anyhow::Result<()> {
    use parsim::timeline::{self, About};
    let limit = args.timeline_limit.unwrap_or(timeline::DEFAULT_LIMIT);
    let Some(prog) = sc.program() else {
        let what = if sc.schedule().is_some() {
            "a GOAL schedule on LogGP endpoints, whose executor records no timeline yet"
        } else {
            "a queueing network (routed classes observed in steady state), which has no ranks"
        };
        anyhow::bail!(
            "{}: --timeline shows a rank program's run, and this scenario is {what}: give a scenario with a [program] (or an [spmd], [pipeline] or [training] model that builds one)",
            sc.path.display()
        );
    };
    if args.timeline_svg.is_some() && prog.ranks > timeline::MAX_GANTT_RANKS {
        anyhow::bail!(
            "--timeline-svg: {}",
            timeline::GanttError::TooManyRanks(prog.ranks)
        );
    }
    let about = About {
        scenario: sc.name.clone(),
        file: sc.path.display().to_string(),
        seed: keyed_seed(args.master_seed(sc), &args.set),
        replication: 0,
    };
    // the trace's names of tracks count against the limit, so that it bounds the file
    let tracks = if args.timeline.is_some() {
        timeline::track_events(prog.ranks)
    } else {
        0
    };
    if tracks >= limit {
        anyhow::bail!(
            "{}: --timeline refused: the trace names each rank's track, {tracks} events for {} ranks before any span, and --timeline-limit is {}: record fewer ranks (--set program.ranks=N) or raise --timeline-limit",
            sc.path.display(),
            prog.ranks,
            limit
        );
    }
    let (_, recorded) = parsim::engine::program::Execution::new(prog, about.seed, 0)
        .run_with_timeline(limit - tracks)
        .map_err(|e| match e {
            TimelineError::TooLarge {
                time,
                finished,
                ranks,
                ..
            } => anyhow::anyhow!(
                "{}: --timeline refused: the timeline would hold more than {} events ({tracks} names of tracks, then spans, phase spans and link changes): the run was stopped at time {time:.6e} with {finished} of {ranks} ranks finished. Record a smaller run (fewer ranks or iterations: --set program.ranks=N, a smaller repeat count) or raise --timeline-limit (memory grows by about 50 bytes an event)",
                sc.path.display(),
                limit
            ),
            _ => anyhow::anyhow!("running {} for its timeline: {e}", sc.path.display()),
        })?;
    if let Some(path) = &args.timeline {
        let mut out = parsim::files::Output::create(path)?;
        let most = timeline::most_trace_bytes(limit);
        timeline::write_trace(&mut out, &recorded, &about, most)
            .map_err(|e| parsim::files::FileError::writing(path, e))?;
        out.commit()?;
        eprintln!(
            "parsim: wrote the timeline of replication 0 of {} ({} events) to {}",
            sc.path.display(),
            recorded.events(),
            path.display()
        );
    }
    if let Some(path) = &args.timeline_svg {
        let svg = timeline::gantt_svg(&recorded, &about)?;
        parsim::files::write_text(path, &svg)?;
        eprintln!(
            "parsim: drew the Gantt chart of replication 0 of {} in {}",
            sc.path.display(),
            path.display()
        );
    }
    Ok(())
}

/// Runs shard `shard` of the replications of `sc` and writes its file into `dir`.
fn run_shard(args: &RunArgs, sc: &Scenario, shard: Shard, dir: &Path) -> anyhow::Result<ExitCode> {
    let opt = args.options(sc)?;
    anyhow::ensure!(
        opt.precision.is_none(),
        "{}: a precision target (run.precision) needs every replication in one place; shards run a fixed number (set run.replications, drop run.precision)",
        sc.path.display()
    );
    anyhow::ensure!(
        shard.count <= opt.replications as usize,
        "--shard {}/{}: more shards than the {} replications",
        shard.index,
        shard.count,
        opt.replications
    );
    for w in replicate::warnings(sc, &opt) {
        eprintln!("parsim: warning: {}: {w}", sc.path.display());
    }
    let indices = run_shards::indices(shard, opt.replications);
    let bar = Progress::new(&sc.name, indices.len() as u64);
    let share = replicate::run_share(sc, &opt, &indices, &|step| bar.tell(step))
        .with_context(|| format!("running {}", sc.path.display()))?;
    bar.finish();
    let mut file = RunShard::new(sc, &args.set, &opt, shard, share);
    file.master_seed = Some(args.master_seed(sc));
    let path = parsim::shard::write(&file, dir)
        .with_context(|| format!("writing shard {} to {}", shard.index, dir.display()))?;
    eprintln!("parsim: wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// The `--per-replication` file (`run` and `validate`), created with its header, if one was asked
/// for.
pub fn per_replication_file(
    path: Option<&Path>,
) -> anyhow::Result<Option<csv::Writer<parsim::files::Output>>> {
    Ok(path
        .map(parsim::report::per_replication_writer)
        .transpose()?)
}

/// Loads every scenario with `assignments` applied, collecting the problems of all files before
/// failing. A `.goal` file runs on LogGOPSim's default endpoints.
pub fn load_all(files: &[PathBuf], assignments: &[Assignment]) -> anyhow::Result<Vec<Scenario>> {
    load_all_with(files, assignments, &goal_flags::GoalMachine::default())
}

/// [`load_all`], with `.goal` files on `machine`.
pub fn load_all_with(
    files: &[PathBuf],
    assignments: &[Assignment],
    machine: &goal_flags::GoalMachine,
) -> anyhow::Result<Vec<Scenario>> {
    assign::check_distinct(assignments).map_err(|e| anyhow::anyhow!("--set: {e}"))?;
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        let loaded = if goal_flags::is_goal_file(f) {
            goal_flags::load(f, machine, assignments)
        } else if machine.given() {
            Err(ScenarioError {
                file: f.clone(),
                problems: vec![Problem::new(
                    None,
                    "",
                    "--loggp, --topology and --ranks-per-node give the machine of a GOAL file (.goal); a scenario file has its own: write them as its [loggp] and [topology] sections",
                )],
                unreadable: false,
            })
        } else {
            scenario::load_with(f, assignments)
        };
        match loaded {
            Ok(s) => scenarios.push(s),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        for w in scenarios.iter().flat_map(Scenario::warnings) {
            eprintln!("parsim: warning: {w}");
        }
        return Ok(scenarios);
    }
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    if errors.iter().all(|e| e.unreadable) {
        anyhow::bail!("{}", text.join("\n"))
    }
    anyhow::bail!("invalid scenario\n{}", text.join("\n"))
}
