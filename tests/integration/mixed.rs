//! Mixed networks (open and closed classes together): exact mixed MVA through `analyze`
//! against the simulation, and its label when the network is not product form.

use super::statistics::assert_agrees;
use super::util::{root, scenario, simulate};
use parsim::study::analyze_scenario;

/// The bundled mixed case with the disk's service law replaced by `disk`.
fn mixed(disk: &str) -> String {
    let text =
        std::fs::read_to_string(root().join("validation/mixed_ps_fcfs_open_closed.toml")).unwrap();
    let at = text.find("[run]").unwrap();
    let body = &text[at..];
    let body = body.replacen(
        "name = \"disk\"\nkind = \"fcfs\"\nservice = { dist = \"exp\", mean = 0.3 }",
        &format!("name = \"disk\"\nkind = \"fcfs\"\nservice = {disk}"),
        1,
    );
    assert!(body.contains(disk), "the disk's service was replaced");
    body
}

/// The prediction of `metric` by mixed MVA.
fn mixed_mva(a: &parsim::predict::Analysis, metric: &str) -> (f64, bool) {
    let p = a
        .predictions
        .iter()
        .find(|p| p.metric == metric && p.method.starts_with("exact mixed MVA"))
        .unwrap_or_else(|| panic!("no mixed MVA prediction of {metric}: {:?}", a.refusals));
    (p.value, p.exact)
}

#[test]
fn mixed_mva_is_exact_for_a_product_form_mixed_network() {
    let sc = scenario(&mixed("{ dist = \"exp\", mean = 0.3 }"));
    let a = analyze_scenario(&sc);
    let ex = simulate(&sc, 20, 40_000, 51);
    for (metric, tolerance) in [
        ("class.users.cycle", 0.01),
        ("class.users.throughput", 0.01),
        ("class.batch.response", 0.02),
        ("station.cpu.utilisation", 0.01),
        ("station.disk.number", 0.02),
        ("station.cpu.batch.response", 0.02),
    ] {
        let (value, exact) = mixed_mva(&a, metric);
        assert!(exact, "{metric}");
        assert_agrees(&ex, metric, value, tolerance);
    }
}

#[test]
fn a_deterministic_fcfs_disk_makes_mixed_mva_an_approximation() {
    let sc = scenario(&mixed("{ dist = \"det\", value = 0.3 }"));
    let a = analyze_scenario(&sc);
    let p = a
        .predictions
        .iter()
        .find(|p| p.metric == "class.batch.response" && p.method.starts_with("exact mixed MVA"))
        .expect("labelled, not refused");
    assert!(!p.exact);
    assert!(p.method.contains("SCV 0"), "{}", p.method);
}
