//! The [`ScenarioError`] that carries every [`Problem`] of a scenario, each with the file, the
//! line and the field path.

use std::fmt;
use std::path::PathBuf;

use crate::problem::Problem;

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
