//! Diagnostics: one [`Problem`] per thing wrong with an input (a scenario, the section of a
//! model, a file a scenario names), with where it is and the field path. Every check reports in
//! this one type; `crate::scenario::ScenarioError` carries all of a scenario's.

use std::path::PathBuf;

/// One problem in a scenario: where it is, the field path and what is wrong (with the fix,
/// where there is one). Every check (the document reader, the network, program and model
/// checks, the Rust builder) reports in this one type.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Byte offset in the text where it is, when known (what checks record).
    pub at: Option<usize>,
    /// 1-based line, when known (filled in from `at` once the text is known).
    pub line: Option<usize>,
    /// Field path, e.g. `station[2].service.mean`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The file the problem is in, when it is not the scenario's own text but a file the
    /// scenario names (a GOAL schedule): `line` is then a line of that file.
    pub file: Option<PathBuf>,
}

impl Problem {
    /// A problem at byte offset `at` of the text (its line is found later).
    pub fn new(at: Option<usize>, path: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            at,
            line: None,
            path: path.into(),
            message: message.into(),
            file: None,
        }
    }

    /// A problem at `line` (if known) of `file`, a file the scenario names, reached through
    /// its field `path`.
    pub fn in_file(
        file: PathBuf,
        line: Option<usize>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Problem {
        Problem {
            at: None,
            line,
            path: path.into(),
            message: message.into(),
            file: Some(file),
        }
    }
}
