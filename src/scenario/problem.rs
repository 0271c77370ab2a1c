//! Diagnostics: one [`Problem`] per thing wrong with a scenario, and the [`ScenarioError`] that
//! carries all of them, each with the file, the line and the field path.

use std::fmt;
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

/// Why a scenario could not be loaded: every problem found, with where it is.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct ScenarioError {
    /// The file.
    pub file: PathBuf,
    /// The problems, in file order.
    pub problems: Vec<Problem>,
    /// True when the file could not be read at all (the one problem says why).
    pub unreadable: bool,
}

impl ScenarioError {
    /// Why the scenario is unstable, when that is its only problem: an open class loads some
    /// station to utilisation 1 or more, so there is no steady state to simulate or predict (a
    /// sweep marks such a point and goes on). `None` when any other problem is found.
    pub fn unstable(&self) -> Option<String> {
        let why: Vec<&str> = self
            .problems
            .iter()
            .map(|p| p.message.strip_prefix("unstable: "))
            .collect::<Option<_>>()?;
        (!why.is_empty() && !self.unreadable).then(|| why.join("; "))
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        if self.unreadable {
            let why = self.problems.first().map_or("", |p| p.message.as_str());
            return write!(
                f,
                "cannot read scenario file {}: {why}",
                self.file.display()
            );
        }
        write!(
            f,
            "{}: {n} problem{}",
            self.file.display(),
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            write!(f, "\n  {}", p.file.as_ref().unwrap_or(&self.file).display())?;
            if let Some(line) = p.line {
                write!(f, ":{line}")?;
            }
            if p.path.is_empty() {
                write!(f, ": {}", p.message)?;
            } else {
                write!(f, ": {}: {}", p.path, p.message)?;
            }
        }
        Ok(())
    }
}
