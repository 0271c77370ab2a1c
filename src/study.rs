//! Analysing a scenario: the core analysis of its workload ([`crate::predict::network`] for a
//! queueing network, [`crate::predict::program`] for a rank program,
//! [`crate::predict::schedule`] for a schedule) and, where the scenario was built from a
//! high-level model, that model's own equations beside them ([`crate::models::Model::analyze`]).

use crate::predict::Analysis;
use crate::scenario::{Scenario, Workload};

/// Every prediction, bound and refusal for a scenario: its network with every method that
/// might apply, or its program with the program methods, then its model's methods.
/// Every budget is multiplied by the scenario's `[analyze] budget` ([`crate::analytic::cost`]);
/// every approximation carries the validation suite's measured error, and each metric's
/// recommended prediction is marked ([`crate::predict::measured`]).
pub fn analyze_scenario(sc: &Scenario) -> Analysis {
    let mut a = crate::analytic::cost::with_budget(sc.analyze.budget, || analyze_workload(sc));
    a.refuse_non_finite();
    crate::predict::measured::annotate(&mut a);
    a
}

/// [`analyze_scenario`] before its non-finite values are refused.
fn analyze_workload(sc: &Scenario) -> Analysis {
    let mut a = match &sc.workload {
        Workload::Network(net) => crate::predict::network::analyze(net),
        Workload::Program(prog) => crate::predict::program::analyze(prog),
        Workload::Schedule(s) => crate::predict::schedule::analyze(s),
    };
    if let Some(model) = &sc.model {
        model.analyze(sc.program(), &sc.default_metric(), &mut a);
    }
    a
}
