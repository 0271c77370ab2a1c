//! A GOAL file run directly (`parsim run x.goal --loggp L=5e-6 --topology 'kind="bus",...'`):
//! the scenario it stands for is a `[program]` whose `goal` is the file, on the `[loggp]`
//! endpoints and `[topology]` its flags give, checked as a scenario file is.
//!
//! The flags' keys become inline tables of that scenario (`loggp = { L = 5e-6 }`), one line
//! each, so a flag's value cannot add a section or a key outside its own table (a value with a
//! control character, such as a new line, is refused before it is read). The file itself is
//! read by its path, whatever bytes its name holds. A problem is reported where the user wrote
//! it: in the GOAL file at its line, in a flag (`--loggp L`), or in a `--set` assignment.

use std::path::Path;

use crate::problem::Problem;
use crate::scenario::assign::Assignment;
use crate::scenario::{Scenario, ScenarioError};

/// The machine a GOAL file runs on, as its flags give it: `[loggp]` and `[topology]` keys
/// (`KEY=VALUE,...`) and the ranks per node.
#[derive(Clone, Debug, Default)]
pub struct GoalMachine {
    /// `[loggp]`'s keys (LogGOPSim's defaults when `None`).
    pub loggp: Option<String>,
    /// `[topology]`'s keys, if links are wanted.
    pub topology: Option<String>,
    /// Ranks per node.
    pub ranks_per_node: Option<u32>,
}

/// `--loggp` as an example in messages: LogGOPSim's defaults.
const LOGGP_EXAMPLE: &str = "--loggp L=2.5e-6,o=1.5e-6,g=1e-6,G=6e-9,O=0,S=65535";

/// `--topology` as an example in messages.
const TOPOLOGY_EXAMPLE: &str = "--topology 'kind=\"torus\",dims=[4,4],bandwidth=1e10,latency=1e-7'";

/// Reads the value of `--loggp` or `--topology` (keys as `KEY=VALUE,...`): refused when it
/// holds a control character (a new line could start a section of its own).
pub fn keys_flag(value: &str) -> Result<String, String> {
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(format!(
            "the value holds the control character {c:?}: write the keys on one line, separated by commas (e.g. L=2.5e-6,o=1.5e-6)"
        ));
    }
    Ok(value.to_owned())
}

/// The keys a flag's value gives (none when it does not read as keys: its problems are
/// reported where the scenario is checked).
fn flag_keys(value: &str) -> Vec<String> {
    flag_table(value)
        .ok()
        .and_then(|t| t.get("t")?.as_table().map(|t| t.keys().cloned().collect()))
        .unwrap_or_default()
}

/// A flag's value read alone, as the table `t`.
fn flag_table(value: &str) -> Result<toml::Table, toml::de::Error> {
    toml::from_str::<toml::Table>(&format!("t = {}", inline_table(value)))
}

/// A flag's keys as a TOML inline table; a trailing comma is forgiven (TOML's inline tables
/// refuse it).
fn inline_table(keys: &str) -> String {
    format!("{{ {} }}", keys.trim().trim_end_matches(',').trim_end())
}

/// True for a GOAL file: a name ending in `.goal`, in any case.
pub fn is_goal_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("goal"))
}

impl GoalMachine {
    /// True when any flag of the machine was given.
    pub fn given(&self) -> bool {
        self.loggp.is_some() || self.topology.is_some() || self.ranks_per_node.is_some()
    }

    /// The scenario the GOAL file `file` stands for on this machine: the flags' tables first
    /// (line 1 `loggp`, line 2 `topology` if given), then `[program]`.
    pub fn scenario_text(&self, file: &Path) -> String {
        let mut text = format!(
            "loggp = {}\n",
            inline_table(self.loggp.as_deref().unwrap_or(""))
        );
        if let Some(t) = &self.topology {
            text.push_str(&format!("topology = {}\n", inline_table(t)));
        }
        let name = file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        text.push_str(&format!(
            "\n[program]\ngoal = {}\n",
            toml::Value::String(name)
        ));
        if let Some(n) = self.ranks_per_node {
            text.push_str(&format!("ranks_per_node = {n}\n"));
        }
        text
    }

    /// The flag a problem of the scenario text (at `line`, with field `path`) belongs to, with
    /// an example of it.
    fn flag_of(&self, line: Option<usize>, path: &str) -> Option<(&'static str, &'static str)> {
        let under = |key: &str| path == key || path.starts_with(&format!("{key}."));
        if line == Some(1) || under("loggp") {
            Some(("--loggp", LOGGP_EXAMPLE))
        } else if (line == Some(2) && self.topology.is_some()) || under("topology") {
            Some(("--topology", TOPOLOGY_EXAMPLE))
        } else if under("program.ranks_per_node") {
            Some(("--ranks-per-node", "--ranks-per-node 4"))
        } else {
            None
        }
    }
}

/// The GOAL file `path` on `machine`, with `assignments` applied, checked as a scenario file
/// is. Every problem names what the user wrote: the GOAL file and its line, a flag and its key,
/// or a `--set` assignment.
pub fn load(
    path: &Path,
    machine: &GoalMachine,
    assignments: &[Assignment],
) -> Result<Scenario, ScenarioError> {
    if let Some(a) = assignments.iter().find(|a| a.key == "program.goal") {
        return Err(ScenarioError {
            file: path.to_owned(),
            problems: vec![Problem::new(
                None,
                format!("--set {a}"),
                "the GOAL file is the one given on the command line: run the other file instead",
            )],
            unreadable: false,
        });
    }
    // a key given twice, by its flag and by --set, is ambiguous
    for (section, flag, keys) in [
        ("loggp", "--loggp", &machine.loggp),
        ("topology", "--topology", &machine.topology),
    ] {
        let given = keys.as_deref().map(flag_keys).unwrap_or_default();
        if let Some(a) = assignments.iter().find(|a| {
            a.key
                .strip_prefix(section)
                .and_then(|k| k.strip_prefix('.'))
                .is_some_and(|k| given.iter().any(|g| g == k))
        }) {
            return Err(ScenarioError {
                file: path.to_owned(),
                problems: vec![Problem::new(
                    None,
                    format!("--set {a}"),
                    format!("{flag} gives this key too: give it once"),
                )],
                unreadable: false,
            });
        }
    }
    // each flag read alone: where a flag's mistake spills past its line of the text (a `#`
    // hides the rest of its table), this names it
    let unreadable: Vec<Problem> = [
        ("--loggp", &machine.loggp, LOGGP_EXAMPLE),
        ("--topology", &machine.topology, TOPOLOGY_EXAMPLE),
    ]
    .into_iter()
    .filter_map(|(flag, keys, example)| {
        let keys = keys.as_deref()?;
        let e = flag_table(keys).err()?;
        let comment = if keys.contains('#') {
            " (a `#` starts a TOML comment, which hides the rest: leave it out)"
        } else {
            ""
        };
        Some(Problem::new(
            None,
            flag,
            format!(
                "does not read as KEY=VALUE,...: {}{comment} (e.g. {example})",
                e.message().trim_end()
            ),
        ))
    })
    .collect();
    let text = machine.scenario_text(path);
    crate::scenario::parse_text(&text, path, assignments, Some(path)).map_err(|mut e| {
        for p in &mut e.problems {
            if p.file.is_some() {
                // the schedule's own problem, at its line: the file is all the user wrote
                p.path.clear();
                continue;
            }
            if p.path.starts_with("--set ") {
                // a --set's own problem (named so where the scenario is checked)
            } else if let Some((flag, example)) = machine.flag_of(p.line, &p.path) {
                let field = p.path.split_once('.').map_or("", |(_, f)| f);
                let field = if flag == "--ranks-per-node" {
                    ""
                } else {
                    field
                };
                p.path = format!("{flag} {field}").trim_end().to_owned();
                p.message = format!("{} (e.g. {example})", p.message);
                p.line = None;
            }
        }
        // TOML's recovery can report one mistake of a flag twice
        e.problems.dedup();
        let hidden = |p: &Problem| p.file.is_none() && !p.path.starts_with("--");
        if !unreadable.is_empty() && e.problems.iter().any(hidden) {
            e.problems = unreadable;
        }
        e
    })
}
