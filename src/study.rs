//! Analysing a scenario: the core analysis of its workload ([`crate::predict::network`] for a
//! queueing network, [`crate::predict::program`] for a rank program) and, where the scenario
//! was built from a high-level model, that model's own equations beside them.

use crate::models::Model;
use crate::predict::Analysis;
use crate::scenario::{Scenario, Workload};

/// Every prediction, bound and refusal for a scenario: its network with every method that
/// might apply, or its program with the program methods, then its model's methods.
pub fn analyze_scenario(sc: &Scenario) -> Analysis {
    let mut a = analyze_workload(sc);
    a.refuse_non_finite();
    a
}

/// [`analyze_scenario`] before its non-finite values are refused.
fn analyze_workload(sc: &Scenario) -> Analysis {
    match &sc.workload {
        Workload::Network(net) => {
            let mut a = crate::predict::network::analyze(net);
            if let Some(spmd) = sc.spmd() {
                crate::models::spmd::analysis::analyze(spmd, &sc.default_metric(), &mut a);
            }
            a
        }
        Workload::Program(prog) => {
            let mut a = crate::predict::program::analyze(prog);
            match &sc.model {
                Some(Model::Spmd(spmd)) => {
                    crate::models::spmd::analysis::analyze_program(spmd, &mut a);
                }
                Some(Model::Pipeline(p)) => {
                    let (predictions, refusals) =
                        crate::models::pipeline::analysis::predictions(prog, p);
                    a.predictions.extend(predictions);
                    a.refusals.extend(refusals);
                }
                None => {}
            }
            a
        }
        Workload::Schedule(s) => crate::predict::schedule::analyze(s),
    }
}
