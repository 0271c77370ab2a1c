//! Slurm job scripts for a sharded `parsim run`, `sweep` or `validate`: an `sbatch` job array
//! whose task K runs shard K, a merge job, and a submit script that starts the merge only after every task succeeded
//! (`--dependency=afterok`). The scripts are plain, commented shell so that a site can adapt
//! them (modules, accounts, QoS).
//!
//! **One quoting rule.** Every value a user gives (the command's words, paths, the partition,
//! the time limit) goes into a script through [`shell_quote`], on `#SBATCH` lines and in
//! commands alike: single quotes, which `bash` and `sbatch`'s own reading of `#SBATCH` lines
//! treat the same way, so no character can end the word. A value with a control character (a
//! new line, a carriage return, NUL, ...) cannot be written at all: [`Job::check`] refuses it,
//! so no value can add a line to a script. [`Job::scripts`] checks, then writes.

use std::fmt::Write as _;
use std::path::PathBuf;

/// What the scripts run and ask Slurm for.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The parsim binary (absolute).
    pub parsim: PathBuf,
    /// The directory the jobs run in (absolute).
    pub workdir: PathBuf,
    /// The command's arguments after `parsim` (`sweep FILE --vary ...`, `run FILE`,
    /// `validate DIR`), without `--shard`/`--out`.
    pub command: Vec<String>,
    /// The number of shards, one array task each.
    pub shards: usize,
    /// Where the shards write, relative to `workdir` or absolute.
    pub out: PathBuf,
    /// The merge's arguments after `parsim merge DIR` (`--json`, `--plot DIR`).
    pub merge_args: Vec<String>,
    /// The file the merge prints into.
    pub result: PathBuf,
    /// `--partition`, if given.
    pub partition: Option<String>,
    /// `--time`, if given.
    pub time: Option<String>,
    /// `--cpus-per-task`.
    pub cpus_per_task: u32,
}

/// The file names of the scripts, inside the shard directory.
pub const SHARDS_SCRIPT: &str = "shards.sbatch";
/// The merge job's script.
pub const MERGE_SCRIPT: &str = "merge.sbatch";
/// The script that submits both.
pub const SUBMIT_SCRIPT: &str = "submit.sh";

/// Why a job's scripts cannot be written.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{what}: {why}")]
pub struct ScriptError {
    /// The option or value ("--partition", "the command's word 3", ...).
    pub what: String,
    /// What is wrong with it.
    pub why: String,
}

/// Refuses a value that cannot go into a script: one with a control character (a new line
/// would start a line the user did not write).
fn writable(what: &str, value: &str) -> Result<(), ScriptError> {
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(ScriptError {
            what: what.to_owned(),
            why: format!(
                "{value:?} holds the control character {c:?}, which cannot be written into a job script (it could end a line and start a command)"
            ),
        });
    }
    Ok(())
}

/// Quotes a word for the shell (and for `sbatch`'s reading of `#SBATCH` lines) when it needs
/// it: single quotes, with `'` written `'\''`. Words with control characters are refused
/// before ([`Job::check`]).
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+^@%".contains(c));
    if safe {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn words(items: &[String]) -> String {
    items
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn path(p: &std::path::Path) -> String {
    shell_quote(&p.display().to_string())
}

impl Job {
    /// Refuses any value that cannot be written into a script ([`ScriptError`]): a control
    /// character anywhere, a time limit not in Slurm's format, a partition with white space.
    pub fn check(&self) -> Result<(), ScriptError> {
        writable(
            "the parsim binary's path",
            &self.parsim.display().to_string(),
        )?;
        writable("the working directory", &self.workdir.display().to_string())?;
        for (i, w) in self.command.iter().enumerate() {
            writable(&format!("the command's word {} ({w:?})", i + 1), w)?;
        }
        for w in &self.merge_args {
            writable("an output option", w)?;
        }
        writable("--out", &self.out.display().to_string())?;
        // the job logs go to `--out`, named in `#SBATCH --output`, where Slurm reads `%` as
        // the start of a replacement symbol and a backslash as "no replacements"
        // (a relative one after the working directory, as Slurm resolves it)
        let out = self.workdir.join(&self.out).display().to_string();
        if let Some(c) = out.chars().find(|c| matches!(c, '%' | '\\')) {
            return Err(ScriptError {
                what: "--out".into(),
                why: format!(
                    "{out:?} holds {c:?}, which Slurm reads as a pattern in the job's log file name (#SBATCH --output): choose a directory (and, for a relative --out, a working directory) without % or \\"
                ),
            });
        }
        writable("--result", &self.result.display().to_string())?;
        if let Some(p) = &self.partition {
            writable("--partition", p)?;
            if p.is_empty() || p.chars().any(char::is_whitespace) {
                return Err(ScriptError {
                    what: "--partition".into(),
                    why: format!(
                        "{p:?} is not a partition name (or a comma-separated list of them)"
                    ),
                });
            }
        }
        if let Some(t) = &self.time {
            writable("--time", t)?;
            let slurm_format = !t.is_empty()
                && (t
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ':' || c == '-')
                    || ["UNLIMITED", "INFINITE"].contains(&t.as_str()));
            if !slurm_format {
                return Err(ScriptError {
                    what: "--time".into(),
                    why: format!(
                        "{t:?} is not a Slurm time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED)"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The three scripts by file name ([`SHARDS_SCRIPT`], [`MERGE_SCRIPT`], [`SUBMIT_SCRIPT`]),
    /// once every value is [`Job::check`]ed.
    pub fn scripts(&self) -> Result<[(&'static str, String); 3], ScriptError> {
        self.check()?;
        Ok([
            (SHARDS_SCRIPT, self.shards_script()),
            (MERGE_SCRIPT, self.merge_script()),
            (SUBMIT_SCRIPT, self.submit_script()),
        ])
    }

    /// The parsim subcommand (`run`, `sweep` or `validate`).
    fn subcommand(&self) -> &str {
        self.command.first().map_or("sweep", String::as_str)
    }

    /// What task K runs, for the array script's comments.
    fn share(&self) -> String {
        let n = self.shards;
        match self.subcommand() {
            "run" => format!(
                "the replications whose index is K modulo {n}, each on the streams the single run\n\
                 # gives it (every task settles the same warm-up)"
            ),
            "validate" => {
                format!("the cases whose index in the sorted list of case files is K modulo {n}")
            }
            _ => format!(
                "the sweep's points whose index is K modulo {n}, each under the seed it has\n\
                 # in the whole sweep"
            ),
        }
    }

    /// The `#SBATCH` lines both jobs share.
    fn resources(&self, s: &mut String) {
        if let Some(p) = &self.partition {
            let _ = writeln!(s, "#SBATCH --partition={}", shell_quote(p));
        }
        if let Some(t) = &self.time {
            let _ = writeln!(s, "#SBATCH --time={}", shell_quote(t));
        }
        let _ = writeln!(s, "#SBATCH --chdir={}", path(&self.workdir));
    }

    /// The job array: task K runs shard K of N.
    pub fn shards_script(&self) -> String {
        let n = self.shards;
        let mut s = String::from("#!/bin/bash\n");
        let _ = writeln!(
            s,
            "# parsim {} in {n} shards: a Slurm job array, one task per shard. Written by\n\
             # `parsim slurm` (parsim {}); submit with {SUBMIT_SCRIPT}, which also queues the merge.\n\
             #\n\
             # Task K runs {},\n\
             # and writes {}/shard-K-of-N.json (atomically). Rerunning a task rewrites the same\n\
             # file with the same numbers.",
            self.subcommand(),
            env!("CARGO_PKG_VERSION"),
            self.share(),
            self.out.display()
        );
        let _ = writeln!(s, "#SBATCH --job-name=parsim-shards");
        let _ = writeln!(s, "#SBATCH --array=0-{}", n.saturating_sub(1));
        let _ = writeln!(s, "#SBATCH --ntasks=1");
        let _ = writeln!(s, "#SBATCH --cpus-per-task={}", self.cpus_per_task);
        self.resources(&mut s);
        let _ = writeln!(
            s,
            "#SBATCH --output={}",
            shell_quote(&format!("{}/slurm-%A_%a.out", self.out.display()))
        );
        let _ = writeln!(s, "set -euo pipefail");
        let _ = writeln!(
            s,
            "# the task's replications run on its CPUs\n\
             exec {} {} \\\n    --threads \"${{SLURM_CPUS_PER_TASK:-1}}\" \\\n    --shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\" --out {}",
            path(&self.parsim),
            words(&self.command),
            path(&self.out)
        );
        s
    }

    /// The merge job: joins the shards into the result file.
    pub fn merge_script(&self) -> String {
        let mut s = String::from("#!/bin/bash\n");
        let _ = writeln!(
            s,
            "# Joins the {} shard files into {} (the same bytes a single `parsim {}` prints).\n\
             # Queued by {SUBMIT_SCRIPT} to start only after every array task succeeded; parsim merge\n\
             # refuses missing, duplicated or mixed shards and names them.",
            self.shards,
            self.result.display(),
            self.subcommand()
        );
        let _ = writeln!(s, "#SBATCH --job-name=parsim-merge");
        let _ = writeln!(s, "#SBATCH --ntasks=1");
        let _ = writeln!(s, "#SBATCH --cpus-per-task=1");
        self.resources(&mut s);
        let _ = writeln!(
            s,
            "#SBATCH --output={}",
            shell_quote(&format!("{}/slurm-merge-%j.out", self.out.display()))
        );
        let _ = writeln!(s, "set -euo pipefail");
        let merge = words(&self.merge_args);
        let result = path(&self.result);
        // a fresh temporary name beside the result (mktemp creates it, never through a link)
        let template = shell_quote(&format!("{}.XXXXXX", self.result.display()));
        let _ = writeln!(
            s,
            "status=0\n\
             tmp=$(mktemp {template})\n\
             {} merge {}{}{} > \"$tmp\" || status=$?\n\
             # exit 1 (a validation with a failed comparison) still prints the whole report\n\
             # mktemp makes the file private; the result gets the mode any new file gets\n\
             if [ \"$status\" -le 1 ]; then chmod \"$(printf %o $((0666 & ~0$(umask))))\" \"$tmp\"; mv -f \"$tmp\" {result}; else rm -f \"$tmp\"; fi\n\
             exit \"$status\"",
            path(&self.parsim),
            path(&self.out),
            if merge.is_empty() { "" } else { " " },
            merge,
        );
        s
    }

    /// Submits the array, then the merge with `--dependency=afterok` on the whole array;
    /// prints both job ids.
    pub fn submit_script(&self) -> String {
        let dir = path(&self.out);
        format!(
            "#!/bin/bash\n\
             # Submits the {n}-task shard array, then the merge, which Slurm starts only when every\n\
             # task of the array has finished successfully (afterok on the array's job id).\n\
             set -euo pipefail\n\
             cd {workdir}\n\
             array=$(sbatch --parsable {dir}/{SHARDS_SCRIPT})\n\
             array=${{array%%;*}}  # sbatch --parsable prints id[;cluster]\n\
             merge=$(sbatch --parsable --dependency=afterok:\"$array\" {dir}/{MERGE_SCRIPT})\n\
             echo \"shards: job $array (array 0-{last}); merge: job ${{merge%%;*}} ->\" {result}\n",
            n = self.shards,
            workdir = path(&self.workdir),
            last = self.shards.saturating_sub(1),
            result = path(&self.result)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job {
            parsim: PathBuf::from("/opt/parsim"),
            workdir: PathBuf::from("/home/a b"),
            command: vec![
                "sweep".into(),
                "mm1.toml".into(),
                "--vary".into(),
                "run.seed=1..3".into(),
                "--set".into(),
                "station.q.kind=it's".into(),
            ],
            shards: 8,
            out: PathBuf::from("shards"),
            merge_args: vec!["--json".into()],
            result: PathBuf::from("shards/merged.json"),
            partition: Some("short".into()),
            time: None,
            cpus_per_task: 4,
        }
    }

    #[test]
    fn the_array_runs_one_shard_per_task() {
        let s = job().shards_script();
        assert!(s.contains("#SBATCH --array=0-7"), "{s}");
        assert!(s.contains("#SBATCH --cpus-per-task=4"));
        assert!(s.contains("#SBATCH --partition=short"));
        assert!(!s.contains("--time"));
        assert!(s.contains("#SBATCH --chdir='/home/a b'"));
        assert!(s.contains("--shard \"${SLURM_ARRAY_TASK_ID}/8\" --out shards"));
        assert!(s.contains("'station.q.kind=it'\\''s'"), "{s}");
    }

    #[test]
    fn an_out_directory_slurm_would_read_as_a_pattern_is_refused() {
        for bad in ["logs%j", "a\\b"] {
            let j = Job {
                out: PathBuf::from(bad),
                ..job()
            };
            let e = j.check().unwrap_err();
            assert_eq!(e.what, "--out");
            assert!(e.why.contains("Slurm reads as a pattern"), "{}", e.why);
        }
        assert!(job().check().is_ok());
    }

    #[test]
    fn the_merge_waits_for_every_task() {
        let j = job();
        assert!(
            j.merge_script()
                .contains("/opt/parsim merge shards --json > \"$tmp\"")
        );
        let submit = j.submit_script();
        assert!(submit.contains("--dependency=afterok:\"$array\" shards/merge.sbatch"));
        assert!(submit.contains("sbatch --parsable shards/shards.sbatch"));
    }
}
