//! How the operations of a program written as a graph wait: their labels, their `requires` and
//! `irequires` dependencies, `irecv` and `wait` ([`Marks`]). A program with marks runs as a
//! dependency graph (`crate::schedule::lower` lowers it), not in the sequential executor.

/// How an operation waits for another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dependency {
    /// `a requires b`: `a` starts after `b` has finished.
    Requires,
    /// `a irequires b`: `a` starts after `b` has started.
    Irequires,
}

impl Dependency {
    /// The GOAL keyword.
    pub fn name(self) -> &'static str {
        match self {
            Dependency::Requires => "requires",
            Dependency::Irequires => "irequires",
        }
    }
}

/// The labels and dependencies of a program written as a graph: for each instruction of
/// [`super::Program::code`], its [`Mark`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marks {
    /// The labels, by index.
    pub labels: Vec<String>,
    /// Per instruction.
    pub of: Vec<Mark>,
}

/// How one operation waits, when it was written with labels, dependencies, `irecv` or `wait`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mark {
    /// Its label: later operations may wait for the rank's latest execution of it.
    pub label: Option<u32>,
    /// What it waits for instead of the operation before it: labels, each finished
    /// (`requires`) or started (`irequires`).
    pub after: Option<Vec<(u32, Dependency)>>,
    /// A `wait`: it also waits for these labels to finish.
    pub wait: Vec<u32>,
    /// An `irecv`: the next operation waits only for it to be posted.
    pub nonblocking: bool,
}
