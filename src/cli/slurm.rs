//! `parsim slurm`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser};

use parsim::slurm::{Job, MERGE_SCRIPT, SHARDS_SCRIPT, SUBMIT_SCRIPT};

use super::{Cli, Command};

/// Options of `parsim slurm`.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// Shards: array tasks, task K running the points (sweep), replications (run) or cases
    /// (validate) whose index is K modulo N.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    shards: u32,
    /// Directory for the shard files, the scripts and Slurm's logs (created).
    #[arg(long, default_value = "parsim-shards")]
    out: PathBuf,
    /// The merged result (default: OUT/merged.json with --json, OUT/merged.csv for a sweep or
    /// with --csv, OUT/merged.txt otherwise).
    #[arg(long)]
    result: Option<PathBuf>,
    /// Slurm partition.
    #[arg(long)]
    partition: Option<String>,
    /// Time limit of each task (Slurm's format, e.g. 00:30:00).
    #[arg(long)]
    time: Option<String>,
    /// CPUs of each task; its replications run on them.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    cpus_per_task: u32,
    /// Submit at once (runs OUT/submit.sh: sbatch the array, then the merge with
    /// --dependency=afterok).
    #[arg(long)]
    submit: bool,
    /// The parsim command to shard: `sweep`, `run` (one scenario file) or `validate`, e.g.
    /// `sweep scenarios/mm1.toml --vary run.seed=1..100` (its --json, --csv, --plot,
    /// --plot-metric, --plot-lines, --plot-x and --report go to the merge).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<String>,
}

/// Splits the merge's output flags from the shard command.
fn split_output_flags(command: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut shard, mut merge) = (Vec::new(), Vec::new());
    let mut words = command.iter();
    while let Some(w) = words.next() {
        let flag = w.split('=').next().unwrap_or_default();
        match flag {
            "--json" | "--csv" | "--plot-lines" => merge.push(w.clone()),
            "--plot" | "--plot-metric" | "--plot-x" | "--report" => {
                merge.push(w.clone());
                if !w.contains('=')
                    && let Some(value) = words.next()
                {
                    merge.push(value.clone());
                }
            }
            _ => shard.push(w.clone()),
        }
    }
    (shard, merge)
}

/// Checks the command, writes the three scripts and, with --submit, submits them.
pub fn run(args: &SlurmArgs) -> anyhow::Result<ExitCode> {
    let (command, merge_args) = split_output_flags(&args.command);
    anyhow::ensure!(
        !command.iter().any(|w| w == parsim::files::STDIN_ARGUMENT),
        "the command to shard reads `-` (standard input), which the tasks, started later on the cluster's nodes, cannot read: save the scenario to a file and give its path"
    );
    let parse = |words: &[String]| {
        Cli::try_parse_from(std::iter::once("parsim".to_owned()).chain(words.iter().cloned()))
    };
    let parsed = parse(&command)
        .map_err(|e| anyhow::anyhow!("the command to shard is not a valid parsim command:\n{e}"))?;
    let (sharded, sweep) = match &parsed.command {
        Command::Sweep(a) => (a.sharded(), true),
        Command::Run(a) => {
            anyhow::ensure!(
                a.files().len() == 1,
                "a sharded `parsim run` runs one scenario file; give one per `parsim slurm`"
            );
            (a.sharded(), false)
        }
        Command::Validate(a) => (a.sharded(), false),
        _ => anyhow::bail!("only `parsim run`, `parsim sweep` and `parsim validate` run in shards"),
    };
    anyhow::ensure!(!sharded, "give the command without --shard and --out");
    // the inputs every task reads, checked here as each task would check them (a bad scenario,
    // a sweep key that does not exist), and what there is to share: more shards than pieces
    // would fail in every task
    let (pieces, what) = match &parsed.command {
        Command::Sweep(a) => a.pieces(),
        Command::Run(a) => a.pieces(),
        Command::Validate(a) => a.pieces(),
        _ => unreachable!("refused above"),
    }
    .context("the command to shard would fail in every task")?;
    anyhow::ensure!(
        args.shards as usize <= pieces,
        "--shards {}: more shards than the {pieces} {what} to share out (each task needs at least one); use --shards {pieces} or fewer",
        args.shards
    );
    // each task's command as parsim will parse it: flags a shard cannot take fail here, not
    // on the cluster
    let mut task = command.clone();
    task.extend([
        "--shard".to_owned(),
        format!("0/{}", args.shards),
        "--out".to_owned(),
        args.out.display().to_string(),
    ]);
    parse(&task).map_err(|e| anyhow::anyhow!("the command cannot run in shards:\n{e}"))?;
    let has = |flag: &str| merge_args.iter().any(|a| a == flag);
    let name = match (has("--json"), sweep || has("--csv")) {
        (true, _) => "merged.json",
        (false, true) => "merged.csv",
        (false, false) => "merged.txt",
    };
    let result = args.result.clone().unwrap_or_else(|| args.out.join(name));
    // the merge job writes the result: not over an input of the command (read by the check
    // above), a link, a device or a pipe, nor over a shard
    parsim::files::check_outputs([result.as_path()], &[])?;
    let shard_name = result
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("shard-"));
    let resolved = parsim::files::resolved_folder;
    anyhow::ensure!(
        !(shard_name && resolved(&parsim::files::folder_of(&result)) == resolved(&args.out)),
        "--result {}: the shards are written there; name the result otherwise",
        result.display()
    );
    let job = Job {
        parsim: std::env::current_exe().context("finding the parsim binary")?,
        workdir: std::env::current_dir().context("finding the working directory")?,
        command,
        shards: args.shards as usize,
        out: args.out.clone(),
        merge_args,
        result,
        partition: args.partition.clone(),
        time: args.time.clone(),
        cpus_per_task: args.cpus_per_task,
    };
    let scripts = job.scripts()?;
    parsim::files::make_folder(&args.out)?;
    let stale = std::fs::read_dir(&args.out)
        .with_context(|| format!("reading {}", args.out.display()))?
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with("shard-"));
    anyhow::ensure!(
        !stale,
        "{} already holds shard files; remove them or choose another --out",
        args.out.display()
    );
    for (name, text) in scripts {
        let path = args.out.join(name);
        parsim::files::write_text(&path, &text)?;
    }
    let submit = args.out.join(SUBMIT_SCRIPT);
    if !args.submit {
        let mut out = parsim::files::stdout();
        writeln!(
            out,
            "wrote {}, {} and {}; submit with: bash {}",
            args.out.join(SHARDS_SCRIPT).display(),
            args.out.join(MERGE_SCRIPT).display(),
            submit.display(),
            submit.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut bash = std::process::Command::new("bash");
    // the jobs get the user's environment, not what parsim's re-execution added
    super::huge_pages::user_environment(&mut bash);
    let status = bash
        .arg(&submit)
        .status()
        .with_context(|| format!("running {}", submit.display()))?;
    anyhow::ensure!(status.success(), "{} failed ({status})", submit.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::split_output_flags;

    #[test]
    fn output_flags_go_to_the_merge() {
        let words: Vec<String> = [
            "sweep",
            "f.toml",
            "--json",
            "--plot",
            "pics",
            "--vary",
            "a=1",
            "--plot-metric=m",
            "--csv",
            "--report",
            "r.md",
            "--plot-lines",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let (shard, merge) = split_output_flags(&words);
        assert_eq!(shard, ["sweep", "f.toml", "--vary", "a=1"]);
        assert_eq!(
            merge,
            [
                "--json",
                "--plot",
                "pics",
                "--plot-metric=m",
                "--csv",
                "--report",
                "r.md",
                "--plot-lines"
            ]
        );
    }
}
