//! What `analyze` offers and refuses.

use parsim::predict::analyze;

use super::util::root;

fn load(file: &str) -> parsim::scenario::Scenario {
    parsim::scenario::load(&root().join(file)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn mva_refuses_an_fcfs_station_with_class_dependent_means_and_accepts_the_ps_bus() {
    let fcfs = analyze(
        load("validation/two_class_fcfs_refused.toml")
            .network()
            .unwrap(),
    );
    assert!(fcfs.predictions.is_empty(), "{:?}", fcfs.predictions);
    let reason = fcfs
        .refusals
        .iter()
        .find(|r| r.method == "exact MVA")
        .expect("exact MVA refuses");
    assert!(
        reason.reason.contains("\"bus\"") && reason.reason.contains("not product form"),
        "{}",
        reason.reason
    );

    let ps = analyze(load("validation/two_class_ps_bus.toml").network().unwrap());
    assert!(ps.predictions.iter().any(|p| p.exact
        && p.method == "exact multiclass MVA"
        && p.metric == "class.compute.cycle"));
}

#[test]
fn non_exponential_fcfs_is_refused_by_mva_but_solved_by_pollaczek_khinchine_when_open() {
    let closed = std::fs::read_to_string(root().join("scenarios/closed_delay_two_queues.toml"))
        .unwrap()
        .replace(
            "service = { dist = \"exp\", mean = 0.2 }",
            "service = { dist = \"det\", value = 0.2 }",
        );
    let a = analyze(super::util::scenario(&closed).network().unwrap());
    assert!(a.predictions.iter().all(|p| p.method != "exact MVA"));
    assert!(
        a.refusals
            .iter()
            .any(|r| r.method == "exact MVA" && r.reason.contains("non-exponential"))
    );
    let md1 = analyze(load("scenarios/md1.toml").network().unwrap());
    let r = md1
        .predictions
        .iter()
        .find(|p| p.metric == "class.jobs.response")
        .unwrap();
    assert!((r.value - 3.0).abs() < 1e-12 && r.exact && r.method.starts_with("M/D/1"));
}
