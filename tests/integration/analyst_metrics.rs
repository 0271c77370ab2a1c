//! The metrics analysts ask for (issue 12): `Wq`, visits, residence `V R`, and a closed class's
//! response `N / X - Z`, simulated against closed forms and predicted beside the simulator.

use parsim::predict::network::analyze;
use parsim::stats::ConfidenceInterval;

use super::statistics::assert_agrees;
use super::util::{open_single, root, scenario, simulate};

/// The exact prediction of `metric`.
fn predicted(a: &parsim::predict::Analysis, metric: &str) -> f64 {
    a.predictions
        .iter()
        .find(|p| p.metric == metric && p.exact)
        .unwrap_or_else(|| panic!("no exact prediction of {metric}: {:?}", a.predictions))
        .value
}

#[test]
fn mm1_waiting_time_is_rho_over_mu_minus_lambda() {
    let (lambda, mu) = (0.8, 1.0);
    let sc = scenario(&open_single(
        lambda,
        "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 1.0 }",
    ));
    let wq = lambda / mu / (mu - lambda);
    let ex = simulate(&sc, 20, 40_000, 31);
    assert_agrees(&ex, "station.q.wait", wq, 0.05);
    assert_agrees(&ex, "station.q.visits", 1.0, 1e-9);
    assert_agrees(&ex, "station.q.residence", 1.0 / (mu - lambda), 0.04);
    let a = analyze(sc.network().unwrap());
    assert!((predicted(&a, "station.q.wait") - wq).abs() < 1e-12);
    assert!((predicted(&a, "station.q.residence") - 5.0).abs() < 1e-12);
}

/// Exact single-class MVA by hand: cycle time and per-station responses at population `n`.
fn mva(think: f64, service: &[f64], n: u32) -> (f64, Vec<f64>) {
    let mut q = vec![0.0; service.len()];
    let mut r = vec![0.0; service.len()];
    let mut x = 0.0;
    for k in 1..=n {
        for (i, s) in service.iter().enumerate() {
            r[i] = s * (1.0 + q[i]);
        }
        x = f64::from(k) / (think + r.iter().sum::<f64>());
        for i in 0..q.len() {
            q[i] = x * r[i];
        }
    }
    (f64::from(n) / x, r)
}

#[test]
fn closed_network_response_wait_and_residence_match_mva() {
    let text = std::fs::read_to_string(root().join("validation/closed_2q_n4.toml")).unwrap();
    let sc = scenario(&text);
    // think 1.0, cpu 0.2 and disk 0.1 (both FCFS, one visit per cycle), N = 4
    let (cycle, r) = mva(1.0, &[0.2, 0.1], 4);
    let response = cycle - 1.0;
    let ex = simulate(&sc, 20, 30_000, 33);
    assert_agrees(&ex, "class.jobs.response", response, 0.02);
    assert_agrees(&ex, "station.cpu.wait", r[0] - 0.2, 0.05);
    assert_agrees(&ex, "station.disk.wait", r[1] - 0.1, 0.06);
    assert_agrees(&ex, "station.cpu.residence", r[0], 0.02);
    assert_agrees(&ex, "station.disk.visits", 1.0, 1e-3);

    let a = analyze(sc.network().unwrap());
    assert!((predicted(&a, "class.jobs.response") - response).abs() < 1e-9);
    assert!((predicted(&a, "station.cpu.wait") - (r[0] - 0.2)).abs() < 1e-9);
    assert!((predicted(&a, "station.disk.residence") - r[1]).abs() < 1e-9);

    // the response is measured cycle by cycle (from leaving the think station to coming
    // back); its interval comes from its replication values, and each replication's value is
    // the cycle less the think time to within the few cycles that straddle the window's ends
    let i = ex.index_of("class.jobs.response").unwrap();
    let values: Vec<f64> = ex.replications.iter().map(|row| row[i]).collect();
    assert_eq!(
        ex.interval(i, 0.95),
        ConfidenceInterval::from_values(&values, 0.95)
    );
    let cycle = ex.index_of("class.jobs.cycle").unwrap();
    let z = ex.index_of("station.think.response").unwrap();
    for row in &ex.replications {
        assert!(
            (row[i] - (row[cycle] - row[z])).abs() < 0.01 * row[i],
            "{} against {} - {}",
            row[i],
            row[cycle],
            row[z]
        );
    }
}

#[test]
fn a_path_sums_its_stations_per_replication_and_is_predicted_by_the_sum_of_their_predictions() {
    let sc = parsim::scenario::load(&root().join("scenarios/closed_delay_two_queues.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let ex = simulate(&sc, 10, 5_000, 33);
    let p = ex
        .index_of("path.io.response")
        .expect("the [[path]] is reported");
    let cpu = ex.index_of("station.cpu.response").unwrap();
    let disk = ex.index_of("station.disk.response").unwrap();
    for row in &ex.replications {
        assert!((row[p] - (row[cpu] + row[disk])).abs() <= 1e-12 * row[p]);
    }
    // its interval comes from the replication values (cpu and disk responses are correlated,
    // so adding their half-widths would not give it)
    let values: Vec<f64> = ex.replications.iter().map(|row| row[p]).collect();
    assert_eq!(
        ex.interval(p, 0.95),
        ConfidenceInterval::from_values(&values, 0.95)
    );
    let a = analyze(sc.network().unwrap());
    let sum = predicted(&a, "station.cpu.response") + predicted(&a, "station.disk.response");
    assert!((predicted(&a, "path.io.response") - sum).abs() < 1e-12);
    assert!(
        parsim::metrics::network::names(sc.network().unwrap())
            .contains(&"path.io.response".to_owned())
    );
}
