//! `parsim goal`: a program as a GOAL schedule.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use parsim::program::dag::write_goal;
use parsim::program::lower::lower;
use parsim::program::schedule::Form;
use parsim::scenario::Workload;

/// Options of `parsim goal`.
#[derive(Debug, Args)]
pub struct GoalArgs {
    /// A program scenario (TOML), or a GOAL file.
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
    let lowered;
    let dag = match &sc.workload {
        Workload::Network(_) => anyhow::bail!(
            "{} is a queueing network: only a rank program ([program]) has a GOAL schedule",
            sc.path.display()
        ),
        Workload::Program(p) => {
            lowered = lower(p, seed, args.replication)?;
            &lowered
        }
        Workload::Schedule(s) => match &s.form {
            Form::Dag(d) => d.as_ref(),
            Form::Program(p) => {
                lowered = lower(p, seed, args.replication)?;
                &lowered
            }
        },
    };
    let rounded = match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("creating {}", path.display()))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
            let n =
                write_goal(dag, &mut w).with_context(|| format!("writing {}", path.display()))?;
            w.flush()
                .with_context(|| format!("writing {}", path.display()))?;
            n
        }
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            match write_goal(dag, &mut w).and_then(|n| w.flush().map(|()| n)) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Ok(ExitCode::SUCCESS);
                }
                Err(e) => return Err(e.into()),
            }
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
