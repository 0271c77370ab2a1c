//! Rank programs: exact contention-free times, collectives against their closed forms, deadlock
//! reports.

use parsim::program::collective::{Collective, Cost, GroupShape};
use parsim::replicate::{self, Options};

use super::util::scenario;

/// The makespan of `ops` (TOML array elements) on `ranks` ranks over `topology` (a TOML
/// `[topology]` body), two replications (every time deterministic, so both agree).
fn makespan(ranks: u32, ops: &str, topology: &str) -> f64 {
    let text = format!(
        "[run]\nreplications = 2\n[program]\nranks = {ranks}\nreport_each = false\n\n[[program.op]]\nkind = \"phase\"\nname = \"all\"\nbody = [{ops}]\n\n[topology]\n{topology}\n"
    );
    let sc = scenario(&text);
    let mut opt = Options::from_scenario(&sc);
    opt.threads = 1;
    let ex = replicate::run(&sc, &opt, &|_| {}).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let i = ex.index_of("program.makespan").unwrap();
    let ci = ex.interval(i, 0.95);
    assert_eq!(
        ci.half_width, 0.0,
        "deterministic times give identical runs"
    );
    ci.mean
}

const ALL: [Collective; 8] = Collective::ALL;

#[test]
fn every_collective_takes_its_closed_form_on_an_idle_network() {
    // message cost a + b m with a = t_s + t_h (one hop), b = 1 / bandwidth; combine g + h m
    let (ts, th, bandwidth, g, h) = (0.5, 0.25, 4.0, 0.3, 0.05);
    let cost = Cost {
        startup: ts + th,
        per_byte: 1.0 / bandwidth,
        combine: g,
        combine_per_byte: h,
        node_startup: ts,
        node_per_byte: 0.0,
    };
    let topology =
        format!("kind = \"full\"\nbandwidth = {bandwidth}\nstartup = {ts}\nlatency = {th}");
    let bytes = 12.0;
    let mut checked = 0;
    for c in ALL {
        for &a in c.algorithms() {
            for n in (1..=17).chain([24, 32, 33]) {
                if c.refuses(a, n, 1).is_some() {
                    continue;
                }
                let segments = if c.segmented(a) { 3 } else { 1 };
                let shape = GroupShape::of_group(n, bytes, segments, 1);
                let (formula, exact) = c.closed_form(a, &shape, &cost);
                if !exact {
                    continue;
                }
                let mut op = format!("{{ kind = \"{}\", algorithm = \"{}\"", c.name(), a.name());
                if c != Collective::Barrier {
                    op += &format!(", bytes = {bytes}");
                }
                if segments > 1 {
                    op += &format!(", segments = {segments}");
                }
                if matches!(c, Collective::Reduce | Collective::Allreduce) {
                    op += &format!(
                        ", combine = {{ dist = \"det\", value = {g} }}, combine_per_byte = {h}"
                    );
                }
                if c.rooted() && n > 2 {
                    op += &format!(", root = {}", n / 2);
                }
                op += " }";
                let sim = makespan(n, &op, &topology);
                assert!(
                    (sim - formula).abs() <= 1e-9 * formula.max(1.0),
                    "{c} {a} on {n} ranks: simulated {sim}, closed form {formula}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked} cases checked");
}

#[test]
fn one_message_on_an_idle_network_costs_the_lecture_formula_on_every_topology() {
    let (ts, th, bandwidth, m) = (1.0, 0.5, 4.0, 10.0);
    let tw = 1.0 / bandwidth;
    let topologies = [
        ("kind = \"bus\"", 16),
        ("kind = \"full\"", 16),
        ("kind = \"ring\"", 16),
        ("kind = \"mesh\"\ndims = [4, 4]", 16),
        ("kind = \"torus\"\ndims = [4, 4]", 16),
        ("kind = \"mesh\"\ndims = [2, 3, 4]", 24),
        ("kind = \"torus\"\ndims = [3, 3, 3]", 27),
        ("kind = \"tree\"\narity = 2", 16),
        ("kind = \"fat_tree\"\narity = 4", 16),
    ];
    for (shape, ranks) in topologies {
        for switching in ["store_and_forward", "cut_through"] {
            for dst in [1, ranks / 2 + 1, ranks - 1] {
                let topology = format!(
                    "{shape}\nbandwidth = {bandwidth}\nstartup = {ts}\nlatency = {th}\nswitching = \"{switching}\""
                );
                let ops = format!(
                    "{{ kind = \"send\", to = {dst}, bytes = {m}, when = \"rank == 0\" }}, {{ kind = \"recv\", from = 0, when = \"rank == {dst}\" }}"
                );
                let text = format!(
                    "[program]\nranks = {ranks}\n[[program.op]]\nkind = \"phase\"\nname = \"all\"\nbody = [{ops}]\n[topology]\n{topology}\n"
                );
                let l = hops(&scenario(&text), dst);
                // a fat tree's upper links are faster: the formula with t_w of the slowest link
                // holds only for store-and-forward over equal links, so fat trees check the
                // cut-through cost, whose single t_w m is the slowest link's (the leaf links')
                let expected = if switching == "store_and_forward" {
                    if shape.contains("fat_tree") {
                        continue;
                    }
                    ts + (m * tw + th) * l
                } else {
                    ts + l * th + m * tw
                };
                let sim = makespan(ranks, &ops, &topology);
                assert!(
                    (sim - expected).abs() <= 1e-9 * expected,
                    "{shape} {switching} 0 -> {dst} ({l} hops): simulated {sim}, formula {expected}"
                );
            }
        }
    }
}

/// The number of links from node 0 to node `dst` in a program scenario's topology.
fn hops(sc: &parsim::scenario::Scenario, dst: u32) -> f64 {
    f64::from(sc.program().unwrap().interconnect.topology.distance(0, dst))
}

#[test]
fn the_tree_sum_of_n_numbers_takes_lg_n_steps() {
    // the lecture: adding n numbers on n processors, T = lg n (t_s + t_w + t_c)
    let (ts, tw, tc) = (0.7, 0.2, 0.1);
    for k in 1..=10 {
        let n = 1_u32 << k;
        let ops = format!(
            "{{ kind = \"reduce\", algorithm = \"binomial\", bytes = 1, combine = {{ dist = \"det\", value = {tc} }} }}"
        );
        let topology = format!("kind = \"full\"\nbandwidth = {}\nstartup = {ts}", 1.0 / tw);
        let sim = makespan(n, &ops, &topology);
        let expected = f64::from(k) * (ts + tw + tc);
        assert!(
            (sim - expected).abs() <= 1e-9 * expected,
            "n = {n}: simulated {sim}, lg n (t_s + t_w + t_c) = {expected}"
        );
    }
}

#[test]
fn p_simultaneous_messages_on_a_fair_bus_take_the_latency_plus_p_m_over_b() {
    for (ranks, m, bandwidth, latency) in [(8, 1000.0, 1000.0, 0.5), (64, 4096.0, 1.0e6, 1.0e-3)] {
        let ops = "{ kind = \"sendrecv\", to = \"(rank + 1) % P\", from = \"(rank + P - 1) % P\", bytes = BYTES }"
            .replace("BYTES", &format!("{m}"));
        let topology = format!(
            "kind = \"bus\"\nbandwidth = {bandwidth}\nlatency = {latency}\nsharing = \"fair\""
        );
        let sim = makespan(ranks, &ops, &topology);
        let expected = latency + f64::from(ranks) * m / bandwidth;
        assert!(
            (sim - expected).abs() <= 1e-9 * expected,
            "{ranks} ranks: simulated {sim}, latency + P m / B = {expected}"
        );
    }
}

#[test]
fn deadlocks_are_reported_with_the_ranks_and_what_they_wait_for() {
    let cases = [
        (
            "recv_without_send",
            "[[program.op]]\nkind = \"recv\"\nfrom = \"(rank + 1) % P\"\n",
            vec![
                "deadlock",
                "rank 0 at program.op[0] waits to receive from rank 1 with tag 0",
            ],
        ),
        (
            "barrier_not_reached",
            "[[program.op]]\nkind = \"barrier\"\nwhen = \"rank != 2\"\n",
            vec![
                "deadlock",
                "1 of 4 ranks finished",
                "rank 0 at program.op[0] waits at a barrier",
            ],
        ),
        (
            "barrier_not_reached_by_all",
            "[[program.op]]\nkind = \"compute\"\ntime = { dist = \"det\", value = 1 }\n[[program.op]]\nkind = \"barrier\"\nwhen = \"rank < 2\"\n",
            vec!["2 of 4 ranks finished", "waits at a barrier"],
        ),
        (
            "wrong_tag",
            "[[program.op]]\nkind = \"send\"\nto = 1\nbytes = 8\ntag = 5\nwhen = \"rank == 0\"\n[[program.op]]\nkind = \"recv\"\nfrom = 0\ntag = 6\nwhen = \"rank == 1\"\n",
            vec!["rank 1 at program.op[1] waits to receive from rank 0 with tag 6"],
        ),
    ];
    for (name, ops, expected) in cases {
        let path = super::util::temp_scenario(
            name,
            &format!("[program]\nranks = 4\n{ops}[topology]\nkind = \"bus\"\nbandwidth = 1.0\n"),
        );
        let out = super::util::parsim(&["run", path.to_str().unwrap(), "--replications", "2"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
        for e in expected {
            assert!(err.contains(e), "{name}: expected {e:?} in {err}");
        }
    }
}

#[test]
fn a_deadlock_at_a_barrier_names_the_barrier_and_the_ranks_that_never_arrive() {
    // 8 ranks; ranks 0-4 reach the barrier, ranks 5 and 6 wait for a message that never
    // comes, rank 7 finishes without it: for every barrier algorithm the report names the
    // barrier, who waits in it and where each missing rank is
    for algorithm in ["ideal", "dissemination", "binomial"] {
        let ops = format!(
            "[[program.op]]\nkind = \"barrier\"\nalgorithm = \"{algorithm}\"\nwhen = \"rank < 5\"\n\
             [[program.op]]\nkind = \"recv\"\nfrom = 0\ntag = 9\nwhen = \"rank == 5 || rank == 6\"\n"
        );
        let path = super::util::temp_scenario(
            &format!("barrier_missing_{algorithm}"),
            &format!("[program]\nranks = 8\n{ops}[topology]\nkind = \"bus\"\nbandwidth = 1.0\n"),
        );
        let out = super::util::parsim(&["run", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{algorithm}: {err}");
        for e in [
            format!("In the barrier ({algorithm}) at program.op[0], 5 of its 8 ranks wait (ranks 0-4)"),
            "never there: ranks 5-6 (at program.op[1] waits to receive from rank 0 with tag 9); rank 7 (finished the program)".to_owned(),
        ] {
            assert!(err.contains(&e), "{algorithm}: expected {e:?} in {err}");
        }
    }
}

#[test]
fn a_reduction_counts_combines_as_compute_sends_as_communication_and_receives_as_waiting() {
    // (the time after a combine used to count as compute; a step waiting for its partner's
    // message counted as communication) binomial reduce over 4 ranks, one link per pair: rank
    // 0 receives from 1, combines, receives from 2 (which combined rank 3's block first),
    // combines again: it only waits and combines
    let sc = scenario(
        r#"
[run]
replications = 2
[program]
ranks = 4
[[program.op]]
kind = "reduce"
algorithm = "binomial"
bytes = 100
combine = { dist = "det", value = 1e-3 }
[topology]
kind = "full"
bandwidth = 1e6
startup = 1e-5
"#,
    );
    let message = 1e-5 + 100.0 / 1e6;
    let makespan = 2.0 * (message + 1e-3);
    let mut opt = Options::from_scenario(&sc);
    opt.threads = 1;
    let ex = replicate::run(&sc, &opt, &|_| {}).expect("runs");
    for (metric, want) in [
        ("program.makespan", makespan),
        ("rank.0.compute", 2e-3),
        ("rank.0.waiting", makespan - 2e-3),
        ("rank.0.communication", 0.0),
        ("rank.1.communication", message),
        ("rank.1.waiting", 0.0),
        ("rank.2.compute", 1e-3),
        ("rank.2.waiting", message),
        ("rank.2.communication", message),
    ] {
        let sim = ex.interval(ex.index_of(metric).unwrap(), 0.95).mean;
        assert!(
            (sim - want).abs() <= 1e-9 * want,
            "{metric}: simulated {sim}, by hand {want}"
        );
    }
    // the contention-free evaluation splits the time the same way, exactly
    let a = parsim::study::analyze_scenario(&sc);
    for metric in ["rank.0.waiting", "rank.2.waiting", "rank.2.communication"] {
        let sim = ex.interval(ex.index_of(metric).unwrap(), 0.95).mean;
        let p = a
            .predictions
            .iter()
            .find(|p| p.metric == metric && p.exact)
            .unwrap_or_else(|| panic!("no exact {metric}"));
        assert!(
            (p.value - sim).abs() <= 1e-9 * sim,
            "{metric}: {} vs {sim}",
            p.value
        );
    }
}

/// Every link of every kind of topology has a name that can be part of a metric name
/// (`link.<name>.utilisation`): no `.`, `,`, quotes or white space.
#[test]
fn every_link_name_is_usable_in_metric_names() {
    use parsim::topology::{Shape, Topology};
    let shapes = [
        (Shape::Bus, 16),
        (Shape::Full, 8),
        (
            Shape::Grid {
                dims: vec![16],
                wrap: true,
            },
            16,
        ),
        (
            Shape::Grid {
                dims: vec![4, 4],
                wrap: false,
            },
            16,
        ),
        (
            Shape::Grid {
                dims: vec![2, 3, 4],
                wrap: true,
            },
            24,
        ),
        (
            Shape::Tree {
                arity: 2,
                fat: false,
            },
            16,
        ),
        (
            Shape::Tree {
                arity: 4,
                fat: true,
            },
            16,
        ),
    ];
    for (shape, nodes) in shapes {
        let topo = Topology::new(shape.clone(), nodes).unwrap();
        for link in 0..topo.link_count() {
            let name = topo.link_name(link);
            assert!(
                parsim::metrics::name_problem(&name).is_none(),
                "{shape:?}: link {link} is named {name:?}"
            );
        }
    }
}

#[test]
fn a_deadlock_of_many_ranks_is_reported_in_a_few_lines() {
    // 65,536 ranks, one in a thousand skips the barrier: the report stays a few lines (runs of
    // ranks shortened, the rest counted), and building it is linear in the ranks
    let path = super::util::temp_scenario(
        "barrier_missing_many",
        "[program]\nranks = 65536\n[[program.op]]\nkind = \"barrier\"\nalgorithm = \"dissemination\"\nwhen = \"rank % 1000 != 7\"\n[topology]\nkind = \"full\"\nbandwidth = 1.0\n",
    );
    let out = super::util::parsim(&["run", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.len() < 3000, "{} bytes: {err}", err.len());
    for e in [
        "In the barrier (dissemination) at program.op[0], 65470 of its 65536 ranks wait (ranks 0-6, 8-1006",
        "never there: ranks 7, 1007, 2007",
        "and 50 more (finished the program)",
        "65470 ranks wait",
    ] {
        assert!(err.contains(e), "expected {e:?} in {err}");
    }
}

/// A run's link summaries (`links.*`) are its per-link figures (`link.<name>.*`) summed, and
/// the same to the bit whether or not the run reports those: on a torus, whose links' states
/// are made up front, and on a full network, whose links' states are made on first use (their
/// slots not in the order of the links' ids).
#[test]
fn the_link_summaries_are_the_per_link_figures_summed_with_or_without_them() {
    use std::collections::HashMap;
    for topology in ["kind = \"torus\"\ndims = [4, 4]", "kind = \"full\""] {
        let figures = |each: bool| -> HashMap<String, f64> {
            let sc = scenario(&format!(
                r#"[program]
ranks = 16
report_each = {each}
[[program.op]]
kind = "repeat"
times = 20
body = [
  {{ kind = "compute", time = {{ dist = "exp", mean = 1e-5 }} }},
  {{ kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + P - 1) % P", bytes = 4096 }},
  {{ kind = "sendrecv", to = "(rank + 5) % P", from = "(rank + P - 5) % P", bytes = 4096 }},
]
[topology]
{topology}
bandwidth = 1e9
latency = 1e-7
"#
            ));
            let prog = sc.program().expect("a program").clone();
            let run = parsim::engine::program::Execution::new(&prog, 7, 0)
                .run()
                .expect("it runs");
            parsim::metrics::program::measure(&prog, &run)
                .into_iter()
                .collect()
        };
        let (with, without) = (figures(true), figures(false));
        for m in [
            "links.utilisation.mean",
            "links.utilisation.max",
            "links.delay.mean",
        ] {
            assert_eq!(with[m].to_bits(), without[m].to_bits(), "{topology}: {m}");
        }
        assert!(
            !without.keys().any(|k| k.starts_with("link.")),
            "{topology}"
        );
        let each = |figure: &str| -> Vec<(String, f64)> {
            let mut v: Vec<(String, f64)> = with
                .iter()
                .filter(|(k, _)| k.starts_with("link.") && k.ends_with(figure))
                .map(|(k, x)| (k.trim_end_matches(figure).to_owned(), *x))
                .collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        let (use_, messages, delay) = (each(".utilisation"), each(".messages"), each(".delay"));
        assert!(use_.len() > 16, "{topology}: {} links used", use_.len());
        let n = use_.len() as f64;
        let mean: f64 = use_.iter().map(|(_, u)| u).sum::<f64>() / n;
        let max = use_.iter().map(|(_, u)| *u).fold(0.0, f64::max);
        let crossings: f64 = messages.iter().map(|(_, m)| m).sum();
        let weighted: f64 = delay
            .iter()
            .zip(&messages)
            .map(|((a, d), (b, m))| {
                assert_eq!(a, b);
                d * m
            })
            .sum::<f64>()
            / crossings;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
        assert!(close(with["links.utilisation.mean"], mean), "{topology}");
        assert_eq!(with["links.utilisation.max"], max, "{topology}");
        assert!(close(with["links.delay.mean"], weighted), "{topology}");
    }
}
