//! Analysis that is cheap or refuses fast (issue 20): a method whose work is over the budget
//! refuses before it starts, saying why and how much; what it computes is unchanged.

use parsim::predict::Analysis;
use parsim::scenario::assign::Assignment;
use parsim::scenario::{self, Scenario};
use parsim::study::analyze_scenario;

use super::util::root;

/// The bundled QCRD stage 2 scenario with `sets` applied.
fn qcrd(sets: &[&str]) -> Scenario {
    let path = root().join("scenarios/qcrd_stage2.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<Assignment> = sets.iter().map(|s| Assignment::parse(s).unwrap()).collect();
    scenario::parse_with(&text, &path, &sets).unwrap()
}

fn refusal<'a>(a: &'a Analysis, metric: &str) -> Option<&'a str> {
    a.refusals
        .iter()
        .find(|r| r.reason.starts_with(metric))
        .map(|r| r.reason.as_str())
}

#[test]
fn a_stiff_route_law_is_refused_with_its_estimate_not_computed() {
    // p = 64, d = 4: the I/O phases are 200 times faster than the bus, so the route's
    // uniformization would take about 1e5 steps per CDF value (3 s of CPU before issue 20)
    let a = analyze_scenario(&qcrd(&["spmd.p=64", "spmd.d=4"]));
    let reason = refusal(&a, "class.groups.p50..p99").expect("the route law is refused");
    assert!(
        reason.contains("too costly: uniformization would take")
            && reason.contains("rates too far apart")
            && reason.contains("over the budget of 2e7"),
        "{reason}"
    );
    assert!(!a.predictions.iter().any(|p| p.metric == "class.groups.p99"));
    // the cheap laws are still there: the bus by the arrival theorem, MVA
    for metric in ["station.bus.p99", "class.groups.cycle", "spmd.speedup"] {
        assert!(
            a.predictions.iter().any(|p| p.metric == metric),
            "{metric} missing"
        );
    }
}

#[test]
fn an_affordable_route_law_is_computed() {
    // the bundled point (p = 16, d = 4) is within the budget: its percentiles are predicted
    let a = analyze_scenario(&qcrd(&[]));
    assert_eq!(refusal(&a, "class.groups"), None, "{:?}", a.refusals);
    assert!(a.predictions.iter().any(|p| p.metric == "class.groups.p99"));
}

#[test]
fn the_quadratic_sio_reading_is_refused_at_thousands_of_groups() {
    let text = r#"
[spmd]
p = 5000
d = 3
c = 1
io = "sio"
w = 0.5
r = 2
S_par = 4.0
S_ser = 0.1
S0_com = 0.05
SR_com = 0.4
S0_io = 0.1
SR_io = 1.0
n_io = 4
"#;
    let sc = scenario::parse(text, std::path::Path::new("sio5000.toml")).unwrap();
    let a = analyze_scenario(&sc);
    let reading_b = a
        .refusals
        .iter()
        .find(|r| r.method.starts_with("SIO eq. 16 reading (b)"))
        .expect("reading (b) is refused");
    assert!(
        reading_b
            .reason
            .contains("too costly: reading (b) sums R1(i) over i = 1..5000"),
        "{}",
        reading_b.reason
    );
    // reading (a) is linear in p/c: still there
    assert!(
        a.predictions
            .iter()
            .any(|p| p.method.starts_with("SIO eq. 16 reading (a)"))
    );
}

/// The method of Clark's critical path, as `analyze` names it.
const CLARK: &str = "stochastic critical path (Clark's maxima, shared ancestors kept)";

#[test]
fn a_refusal_for_cost_names_the_budget_that_lets_the_method_run() {
    // 256 ranks, 20 iterations of a neighbour exchange: Clark's critical path is over its
    // default budget (and so is its extension from the first iterations, which do not settle
    // before 12), and says by what factor
    let path = root().join("validation/prog_halo_torus_p256.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let load = |sets: &[&str]| {
        let sets: Vec<Assignment> = sets.iter().map(|s| Assignment::parse(s).unwrap()).collect();
        scenario::parse_with(&text, &path, &sets)
    };
    let plain = analyze_scenario(&load(&[]).unwrap());
    let reason = &plain
        .refusals
        .iter()
        .find(|r| r.method == CLARK)
        .expect("Clark's critical path is refused")
        .reason;
    assert!(
        reason.contains("too costly") && reason.contains("an estimated"),
        "{reason}"
    );
    let factor: f64 = reason
        .split("[analyze] budget = ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("no factor in {reason}"));
    assert!(factor > 1.0 && factor <= 100.0, "{reason}");
    let raised = analyze_scenario(&load(&[&format!("analyze.budget={factor}")]).unwrap());
    assert!(
        raised
            .predictions
            .iter()
            .any(|p| p.metric == "program.makespan" && p.method.starts_with(CLARK)),
        "{:?}",
        raised.refusals
    );
    assert!(!raised.refusals.iter().any(|r| r.method == CLARK));
    // the budget changes what is analysed, never a prediction both give
    let mean_value = |a: &Analysis| {
        a.predictions
            .iter()
            .find(|p| p.metric == "program.makespan")
            .map(|p| (p.method.clone(), p.value))
    };
    assert_eq!(mean_value(&plain), mean_value(&raised));
    // a budget that is not a factor in (0, 1e4] is refused at its field
    for bad in [
        "analyze.budget=0",
        "analyze.budget=-2",
        "analyze.budget=1e5",
    ] {
        let e = load(&[bad]).unwrap_err().to_string();
        assert!(
            e.contains("analyze.budget") && e.contains("must be a factor of the analysis budget"),
            "{bad}: {e}"
        );
    }
}
