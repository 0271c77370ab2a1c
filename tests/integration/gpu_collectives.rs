//! The collectives of GPU training on nodes with links of their own: the hierarchical allreduce
//! equals its closed form to the tick where the rings' messages share fair links, FCFS links
//! make the formula an approximation the analysis labels, a node's own link carries the
//! messages between its ranks, and the configuration errors are refused.

use parsim::study::analyze_scenario;

use super::util::{labelled_makespan, prediction, scenario, simulated_means};

/// `ranks` ranks, `per_node` a node (each with a core of its own, as a GPU has), on a ring of
/// nodes whose links are `sharing`, each node with a link of its own, running `op` once.
fn machine(ranks: u32, per_node: u32, sharing: &str, op: &str) -> String {
    format!(
        r#"name = "gpus"
[program]
ranks = {ranks}
ranks_per_node = {per_node}
cores = {per_node}
[[program.op]]
kind = "phase"
name = "allreduce"
body = [{op}]
[topology]
kind = "ring"
bandwidth = 25e9
latency = 2e-6
startup = 1e-6
node_bandwidth = 600e9
node_latency = 5e-7
sharing = "{sharing}"
"#
    )
}

const HIERARCHICAL: &str = r#"{ kind = "allreduce", algorithm = "hierarchical", bytes = 1048576, combine = { dist = "det", value = 1e-6 }, combine_per_byte = 1e-12 }"#;

#[test]
fn the_hierarchical_allreduce_takes_its_closed_form_on_fair_links() {
    let mut checked = 0;
    for (per_node, nodes) in [(2, 2), (2, 3), (4, 2), (4, 4), (8, 3), (3, 5)] {
        let text = machine(per_node * nodes, per_node, "fair", HIERARCHICAL);
        let sc = scenario(&text);
        let a = analyze_scenario(&sc);
        let p = prediction(&a, "program.makespan", "allreduce hierarchical closed form");
        assert!(p.exact, "{per_node} a node, {nodes} nodes: {}", p.method);
        let sim = simulated_means(&sc, 2, 1, &["program.makespan"])[0];
        // the formula by hand: L-1 steps each way inside a node (the node's L messages on its
        // link, fair), 2 (N-1) across (L messages on each ring link)
        let (l, n, m) = (f64::from(per_node), f64::from(nodes), 1048576.0);
        let g = |x: f64| 1e-6 + 1e-12 * x;
        let inside = 1.5e-6 + l * (m / l) / 600e9;
        let across = 3e-6 + l * (m / (l * n)) / 25e9;
        let by_hand =
            (l - 1.0) * (2.0 * inside + g(m / l)) + (n - 1.0) * (2.0 * across + g(m / (l * n)));
        // the clock's tick is 1e-12 of the smallest time or finer: a few ticks of rounding
        for (what, v) in [("simulated", sim), ("closed form", p.value)] {
            assert!(
                (v - by_hand).abs() <= 1e-9 * by_hand,
                "{per_node} a node, {nodes} nodes: {what} {v}, by hand {by_hand}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 6);
}

#[test]
fn fcfs_links_make_the_hierarchical_formula_a_labelled_approximation() {
    let sc = scenario(&machine(16, 4, "fcfs", HIERARCHICAL));
    let a = analyze_scenario(&sc);
    let p = prediction(&a, "program.makespan", "allreduce hierarchical closed form");
    assert!(!p.exact);
    assert!(p.method.contains("FCFS links serve"), "{}", p.method);
    // the run pipelines the node's messages through the FCFS links: faster than side by side
    let sim = simulated_means(&sc, 2, 1, &["program.makespan"])[0];
    assert!(sim < p.value, "simulated {sim}, formula {}", p.value);
    // the rounds' evaluation serves them in turn, as the run does (labelled an approximation
    // all the same: the node's messages reach its link at one instant, and it serves them in
    // rank order where the simulator takes its events' order, which here is the same)
    let rounds = prediction(
        &a,
        "program.makespan",
        "mean-value critical path with shared links",
    );
    assert!(
        (rounds.value - sim).abs() <= 1e-9 * sim,
        "{rounds:?} against {sim}"
    );
}

#[test]
fn a_message_inside_a_node_crosses_the_nodes_own_link() {
    // rank 0 to rank 1 of one node: startup, the node link's latency and transmission; rank 0
    // to rank 2 (the next node): the ring link's
    let op = r#"{ kind = "send", to = "rank + 1", bytes = 6e5, when = "rank % 2 == 0" }, { kind = "recv", from = "rank - 1", when = "rank % 2 == 1" }"#;
    let inside = simulated_means(
        &scenario(&machine(4, 2, "fcfs", op)),
        2,
        1,
        &["program.makespan"],
    )[0];
    let expected = 1e-6 + 5e-7 + 6e5 / 600e9;
    assert!(
        (inside - expected).abs() <= 1e-12,
        "{inside} against {expected}"
    );
    let without = machine(4, 2, "fcfs", op)
        .replace("node_bandwidth = 600e9\n", "")
        .replace("node_latency = 5e-7\n", "");
    let local = simulated_means(&scenario(&without), 2, 1, &["program.makespan"])[0];
    assert!((local - 1e-6).abs() <= 1e-12, "the startup alone: {local}");
    let sc = scenario(&machine(4, 2, "fcfs", op));
    let a = analyze_scenario(&sc);
    let p = prediction(&a, "program.makespan", "contention-free mean-value");
    assert!((p.value - expected).abs() <= 1e-12 && p.exact, "{p:?}");
}

#[test]
fn the_double_binary_tree_and_the_chunked_ring_run_on_nodes() {
    // the closed forms are checked against the idle network elsewhere (every collective); on
    // nodes of 4 with their own links, the simulation runs and the evaluation's rounds agree
    for op in [
        r#"{ kind = "allreduce", algorithm = "double_binary_tree", bytes = 1048576, segments = 4 }"#,
        r#"{ kind = "allreduce", algorithm = "ring", bytes = 1048576, segments = 4 }"#,
    ] {
        let sc = scenario(&machine(16, 4, "fair", op));
        let sim = simulated_means(&sc, 2, 1, &["program.makespan"])[0];
        let a = analyze_scenario(&sc);
        let p = prediction(
            &a,
            "program.makespan",
            "mean-value critical path with shared links",
        );
        assert!(
            (p.value - sim).abs() <= 1e-6 * sim,
            "{op}: {} against {sim}",
            p.value
        );
    }
}

#[test]
fn the_hierarchical_allreduce_runs_in_groups_that_fill_their_nodes_evenly() {
    // 16 ranks, 4 a node, the odd ranks and the even ones in two groups: each group has 2 ranks
    // on each of its 4 nodes; the run equals the steps' recursion with each message its own link
    // (the two groups' messages share the node links, so the formula is labelled)
    let op =
        r#"{ kind = "allreduce", algorithm = "hierarchical", bytes = 65536, group = "rank % 2" }"#;
    let sc = scenario(&machine(16, 4, "fair", op));
    let prog = sc.program().unwrap();
    assert_eq!(prog.groups[0].per_node, Some(2));
    let (form, sim) = labelled_makespan(
        &sc,
        "allreduce hierarchical closed form",
        "runs in groups",
        2,
    );
    assert!(
        sim >= form * (1.0 - 1e-9),
        "sharing only slows it: {sim} against {form}"
    );
}
