//! `parsim goal`: a program as a GOAL schedule.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use parsim::scenario::Workload;
use parsim::schedule::Form;
use parsim::schedule::dag::write_goal;
use parsim::schedule::lower::lower;

/// Options of `parsim goal`.
#[derive(Debug, Args)]
pub struct GoalArgs {
    /// A program scenario (TOML; `-` reads it from standard input), or a GOAL file.
    scenario: PathBuf,
    /// Write the schedule to FILE (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Master seed of the random times and sizes (default: the scenario's).
    #[arg(long)]
    seed: Option<u64>,
    /// The replication whose streams draw them.
    #[arg(long, default_value_t = 0)]
    replication: u64,
}

/// Lowers the program and writes it as GOAL text.
pub fn run(args: &GoalArgs) -> anyhow::Result<ExitCode> {
    let scenarios = super::run::load_all(std::slice::from_ref(&args.scenario), &[])?;
    let sc = &scenarios[0];
    let seed = args.seed.unwrap_or(sc.run.seed);
    // a lowering's problem names the file, and the model that built the program if one did
    let built = if sc.model.is_some() {
        " (in the program its model builds)"
    } else {
        ""
    };
    let lower = |p| {
        lower(p, seed, args.replication)
            .map_err(|e| anyhow::anyhow!("{}: {e}{built}", sc.path.display()))
    };
    let lowered;
    let dag = match &sc.workload {
        Workload::Network(_) => anyhow::bail!(
            "{} is a queueing network: only a rank program ([program]) has a GOAL schedule",
            sc.path.display()
        ),
        Workload::Program(p) => {
            lowered = lower(p)?;
            &lowered
        }
        Workload::Schedule(s) => match &s.form {
            Form::Dag(d) => d.as_ref(),
            Form::Program(p) => {
                lowered = lower(p)?;
                &lowered
            }
        },
    };
    let rounded = match &args.output {
        Some(path) => {
            // not over the schedule's own file or scenario, a device or a pipe
            parsim::files::check_outputs([path.as_path()], &[])?;
            let mut out =
                std::io::BufWriter::with_capacity(1 << 20, parsim::files::Output::create(path)?);
            let n = write_goal(dag, &mut out)
                .and_then(|n| out.flush().map(|()| n))
                .map_err(|e| parsim::files::FileError::writing(path, e))?;
            out.into_inner()
                .map_err(|e| parsim::files::FileError::writing(path, e.into_error()))?
                .commit()?;
            n
        }
        None => {
            let mut w = std::io::BufWriter::new(parsim::files::stdout());
            let n = write_goal(dag, &mut w)?;
            w.flush()?;
            n
        }
    };
    eprintln!(
        "parsim: {} ranks, {} operations ({} sends), {} dependencies{}",
        dag.ranks(),
        dag.len(),
        dag.sends(),
        dag.dependencies(),
        if rounded > 0 {
            format!("; {rounded} calc times rounded to the nanosecond (GOAL's unit)")
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}
