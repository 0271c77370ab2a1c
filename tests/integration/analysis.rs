//! What `analyze` offers and refuses.

use parsim::predict::analyze;

use super::util::root;

fn load(file: &str) -> parsim::scenario::Scenario {
    parsim::scenario::load(&root().join(file)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn mva_on_an_fcfs_station_with_class_dependent_means_is_a_labelled_approximation() {
    let fcfs = analyze(
        load("validation/two_class_fcfs_labelled.toml")
            .network()
            .unwrap(),
    );
    let mva: Vec<_> = fcfs
        .predictions
        .iter()
        .filter(|p| p.method.starts_with("exact multiclass MVA"))
        .collect();
    assert!(!mva.is_empty(), "{:?}", fcfs.predictions);
    for p in &mva {
        assert!(!p.exact, "{p:?}");
        assert!(
            p.method.contains("FCFS station \"bus\" serves class \"compute\" with mean 0.3 and class \"io\" with mean 0.5"),
            "{}",
            p.method
        );
    }
    // visits come from the traffic equations, which hold for any distribution
    assert!(
        fcfs.predictions
            .iter()
            .all(|p| !p.exact || p.method.contains("any distribution"))
    );

    let ps = analyze(load("validation/two_class_ps_bus.toml").network().unwrap());
    assert!(ps.predictions.iter().any(|p| p.exact
        && p.method == "exact multiclass MVA"
        && p.metric == "class.compute.cycle"));
}

#[test]
fn non_exponential_fcfs_labels_mva_and_is_exact_by_pollaczek_khinchine_when_open() {
    let closed = std::fs::read_to_string(root().join("scenarios/closed_delay_two_queues.toml"))
        .unwrap()
        .replace(
            "service = { dist = \"exp\", mean = 0.2 }",
            "service = { dist = \"det\", value = 0.2 }",
        );
    let a = analyze(super::util::scenario(&closed).network().unwrap());
    let mva = a
        .predictions
        .iter()
        .find(|p| p.method.starts_with("exact MVA"))
        .expect("MVA is still computed");
    assert!(!mva.exact);
    assert!(
        mva.method.ends_with("has SCV 0, not exponential"),
        "{}",
        mva.method
    );
    // asymptotic bounds hold for any distribution; balanced job bounds need product form
    assert!(a.bounds.iter().any(|b| b.method == "asymptotic bounds"));
    assert!(a.bounds.iter().all(|b| !b.method.starts_with("balanced")));
    assert!(a.refusals.iter().any(|r| r.method == "balanced job bounds"));
    assert!(!a.demands.is_empty() && !a.bottlenecks.is_empty());
    let md1 = analyze(load("scenarios/md1.toml").network().unwrap());
    let r = md1
        .predictions
        .iter()
        .find(|p| p.metric == "class.jobs.response")
        .unwrap();
    assert!((r.value - 3.0).abs() < 1e-12 && r.exact && r.method.starts_with("M/D/1"));
}

#[test]
fn operational_laws_hold_for_any_distribution() {
    // central server: think 2, cpu 0.1 (5 visits), deterministic disk 0.08 (4 visits)
    let a = analyze(load("validation/closed_2q_n16.toml").network().unwrap());
    let cpu = a.demands.iter().find(|d| d.station == "cpu").unwrap();
    assert!((cpu.visits - 1.0).abs() < 1e-12 && (cpu.demand - 0.2).abs() < 1e-12);
    let b = &a.bottlenecks[0];
    assert_eq!(b.station, "cpu");
    // N* = (D + Z) / D_max = (0.2 + 0.1 + 1) / 0.2
    assert!((b.saturation_population.unwrap() - 6.5).abs() < 1e-12);
    // forced flow: U_disk in [X_low D_disk, X_up D_disk] from the asymptotic bounds
    let u = a
        .bounds
        .iter()
        .find(|b| b.metric == "station.disk.utilisation" && b.method.starts_with("asymptotic"))
        .unwrap();
    assert!((u.upper - 0.5).abs() < 1e-12, "{u:?}"); // X <= 1/D_max = 5, D_disk = 0.1
    // open network: the utilisation law is exact whatever the distributions
    let open = analyze(load("validation/mg1_det_rho50.toml").network().unwrap());
    let u = open
        .predictions
        .iter()
        .find(|p| p.metric == "station.q.utilisation")
        .unwrap();
    assert!(u.exact && (u.value - 0.5).abs() < 1e-12 && u.method.starts_with("utilisation law"));
}

#[test]
fn beyond_product_form_the_standard_approximations_are_offered() {
    // Erlang-2 arrivals (SCV 1/2) at an M/D/1-like station: P-K is labelled, Kingman is added.
    let text = std::fs::read_to_string(root().join("validation/mg1_det_rho50.toml"))
        .unwrap()
        .replace(
            "interarrival = { dist = \"exp\", rate = 0.5 }",
            "interarrival = { dist = \"erlang\", k = 2, mean = 2.0 }",
        );
    let a = analyze(super::util::scenario(&text).network().unwrap());
    let response = |prefix: &str| {
        a.predictions
            .iter()
            .find(|p| p.metric == "class.jobs.response" && p.method.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}: {:?}", a.predictions))
    };
    let pk = response("M/D/1");
    assert!(
        !pk.exact
            && pk
                .method
                .contains("source \"arrivals\" is not Poisson (inter-arrival SCV 0.5)")
    );
    let k = response("Kingman");
    // Wq = (0.5 + 0)/2 * 0.5/0.5 * 1 = 0.25
    assert!(!k.exact && (k.value - 1.25).abs() < 1e-12, "{k:?}");

    // A central server with a deterministic disk: MVA labelled, the residual correction added.
    let closed = std::fs::read_to_string(root().join("validation/closed_2q_n4.toml"))
        .unwrap()
        .replace(
            "service = { dist = \"exp\", mean = 0.1 }",
            "service = { dist = \"det\", value = 0.1 }",
        );
    let a = analyze(super::util::scenario(&closed).network().unwrap());
    let methods: Vec<&str> = a
        .predictions
        .iter()
        .filter(|p| p.metric == "class.jobs.cycle")
        .map(|p| p.method.as_str())
        .collect();
    assert!(
        methods.contains(&"MVA with residual-service correction (Reiser 1979)"),
        "{methods:?}"
    );
    assert!(methods.contains(&"exact MVA; FCFS station \"disk\" has SCV 0, not exponential"));
    assert!(
        a.predictions
            .iter()
            .all(|p| !p.exact || p.method.contains("any distribution"))
    );
}

#[test]
fn qna_carries_the_smoothed_departures_of_a_deterministic_server_downstream() {
    let a = analyze(
        load("validation/np_tandem_d_m_rho80.toml")
            .network()
            .unwrap(),
    );
    let qna = a
        .predictions
        .iter()
        .find(|p| p.metric == "class.jobs.response" && p.method == "QNA (Whitt 1983)")
        .expect("QNA is offered");
    // M/D/1 (rho 0.6): R = 0.75 + 0.5625; then c_a^2 = 1 - 0.36 at the exponential server
    // (rho 0.8): Wq = 4 (0.64 + 1)/2 g with the Kraemer-Langenbach-Belz factor g.
    let g = (-2.0 * 0.2 * 0.36f64.powi(2) / (3.0 * 0.8 * 1.64)).exp();
    let expected = 1.3125 + 1.0 + 4.0 * 1.64 / 2.0 * g;
    assert!(!qna.exact && (qna.value - expected).abs() < 1e-9, "{qna:?}");
    let jackson = a
        .predictions
        .iter()
        .find(|p| p.metric == "class.jobs.response" && p.method.starts_with("Jackson"))
        .expect("Jackson is still offered, labelled");
    assert!(!jackson.exact);
    assert!(
        jackson
            .method
            .contains("FCFS station \"a\" has SCV 0, not exponential")
    );
}
