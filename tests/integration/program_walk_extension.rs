//! The mean-value walk of a long outermost loop, extended from its first iterations once every
//! rank's clock grows alike each iteration, against the walk of every iteration: the same
//! times, counts, delays and link loads, up to the rounding of sums.

use parsim::predict::program::evaluation::{
    Evaluation, activity_graph, evaluate, evaluate_with_graph, evaluate_with_waits,
    evaluate_with_waits_from,
};
use rustc_hash::FxHashMap;

use super::util::scenario;

/// Agreement of the extension with the walk of every iteration, relative to the larger value
/// or, for times taken as differences of clocks, to the makespan (both sum the same durations
/// in different orders).
const TOLERANCE: f64 = 1e-9;

/// `a` and `b` agree to [`TOLERANCE`] of the larger of them and `scale`.
fn near(what: &str, a: f64, b: f64, scale: f64) {
    assert!(
        (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(scale) || (a.is_nan() && b.is_nan()),
        "{what}: extended {a}, walked {b}"
    );
}

fn close(what: &str, a: f64, b: f64) {
    near(what, a, b, 0.0);
}

/// Every sum, count and delay of the extended evaluation `x` against the walk of all `w`.
fn same(x: &Evaluation, w: &Evaluation) {
    close("makespan", x.makespan, w.makespan);
    for (r, (a, b)) in x.finish.iter().zip(&w.finish).enumerate() {
        close(&format!("rank {r}'s finish"), *a, *b);
    }
    for (r, (a, b)) in x.spent.iter().zip(&w.spent).enumerate() {
        for c in 0..4 {
            near(&format!("rank {r}'s category {c}"), a[c], b[c], w.makespan);
        }
    }
    for (ph, (a, b)) in x.phases.iter().zip(&w.phases).enumerate() {
        for (r, (a, b)) in a.iter().zip(b).enumerate() {
            near(&format!("rank {r} in phase {ph}"), *a, *b, w.makespan);
        }
    }
    for (ph, (a, b)) in x.phase_ends.iter().zip(&w.phase_ends).enumerate() {
        for (r, (a, b)) in a.iter().zip(b).enumerate() {
            close(&format!("rank {r}'s end of phase {ph}"), *a, *b);
        }
    }
    assert_eq!(x.messages, w.messages);
    close("message delay", x.message_delay, w.message_delay);
    close("message p99", x.message_p99, w.message_p99);
    assert_eq!(x.links.len(), w.links.len());
    for (a, b) in x.links.iter().zip(&w.links) {
        assert_eq!((a.id, a.messages, a.shared), (b.id, b.messages, b.shared));
        close(&format!("{}'s busy time", a.name), a.busy, b.busy);
        close(
            &format!("{}'s squares", a.name),
            a.busy_squared,
            b.busy_squared,
        );
        assert_eq!(a.p99.is_some(), b.p99.is_some());
        if let (Some(p), Some(q)) = (a.p99, b.p99) {
            close(&format!("{}'s p99", a.name), p, q);
        }
    }
    assert_eq!(
        (x.sharing.links, x.sharing.none(), x.unshareable),
        (w.sharing.links, w.sharing.none(), w.unshareable)
    );
    assert_eq!(x.random, w.random);
}

/// `ranks` running `times` iterations of `body` between two phases, on a `dims` torus, each
/// link reported (its delays' p99) or not.
fn program(ranks: u32, dims: &str, times: u32, body: &str, report_each: bool) -> String {
    format!(
        r#"
name = "long loop"
[program]
ranks = {ranks}
report_each = {report_each}
[[program.op]]
kind = "phase"
name = "setup"
body = [ {{ kind = "compute", time = 2e-4, when = "rank % 3 == 0" }} ]
[[program.op]]
kind = "repeat"
times = {times}
body = [ {body} ]
[[program.op]]
kind = "phase"
name = "final"
body = [ {{ kind = "allreduce", bytes = 8, algorithm = "recursive_doubling" }} ]
[topology]
kind = "torus"
dims = {dims}
bandwidth = 1e9
latency = 1e-7
startup = 2e-6
"#
    )
}

/// A 16 x 16 halo of lognormal compute (a phase of its own), 32 KiB messages and an allreduce
/// each iteration.
const HALO: &str = r#"
    { kind = "phase", name = "compute", body = [ { kind = "compute", time = { dist = "lognormal", mean = 1e-3, scv = 0.25 } } ] },
    { kind = "sendrecv", to = "(rank / 16) * 16 + (rank % 16 + 1) % 16", from = "(rank / 16) * 16 + (rank % 16 + 15) % 16", bytes = 32768 },
    { kind = "sendrecv", to = "(rank / 16) * 16 + (rank % 16 + 15) % 16", from = "(rank / 16) * 16 + (rank % 16 + 1) % 16", bytes = 32768 },
    { kind = "sendrecv", to = "(rank + 16) % P", from = "(rank + P - 16) % P", bytes = 32768 },
    { kind = "sendrecv", to = "(rank + P - 16) % P", from = "(rank + 16) % P", bytes = 32768 },
    { kind = "allreduce", bytes = 8, algorithm = "recursive_doubling" },"#;

#[test]
fn a_long_halo_is_walked_over_its_first_iterations_and_extended_to_the_walk_of_all() {
    let sc = scenario(&program(256, "[16, 16]", 400, HALO, true));
    let prog = sc.program().unwrap();
    let (x, _) = evaluate_with_graph(prog).expect("evaluates");
    let (walked, times) = x.extended.expect("extended");
    assert_eq!(times, 400);
    assert!(walked <= 8, "walked {walked} iterations");
    let w = evaluate(prog).expect("evaluates");
    assert_eq!(w.extended, None);
    same(&x, &w);
}

/// A chain of ranks whose first is slower than the rest: its delay reaches one rank further
/// each iteration, so every rank's clock grows alike only once it has crossed the chain.
const CHAIN: &str = r#"
    { kind = "compute", time = 1e-4 },
    { kind = "compute", time = 3e-5, when = "rank == 0" },
    { kind = "send", to = "rank + 1", bytes = 1024, when = "rank < P - 1" },
    { kind = "recv", from = "rank - 1", when = "rank > 0" },"#;

#[test]
fn a_chain_settles_after_its_delay_crosses_it_and_is_extended_from_there() {
    let sc = scenario(&program(16, "[16]", 20_000, CHAIN, true));
    let prog = sc.program().unwrap();
    let (x, _) = evaluate_with_graph(prog).expect("evaluates");
    let (walked, _) = x.extended.expect("extended");
    assert!(walked > 2, "walked {walked} iterations");
    same(&x, &evaluate(prog).expect("evaluates"));
}

#[test]
fn a_chain_longer_than_half_the_loop_is_walked_whole() {
    // 1,024 ranks x 250 iterations is a long walk, but the first rank's delay would take 1,024
    // iterations to cross the chain
    let sc = scenario(&program(1024, "[1024]", 250, CHAIN, false));
    let prog = sc.program().unwrap();
    let (x, _) = evaluate_with_graph(prog).expect("evaluates");
    assert_eq!(x.extended, None);
    same(&x, &evaluate(prog).expect("evaluates"));
}

#[test]
fn a_loop_some_ranks_skip_is_walked_whole() {
    // 1,024 ranks x 1,000 iterations of compute, a long walk; rank 0 skips the loop
    let sc = scenario(
        r#"
name = "guarded loop"
[program]
ranks = 1024
[[program.op]]
kind = "repeat"
times = 1000
when = "rank != 0"
body = [ { kind = "compute", time = 1e-4 } ]
[topology]
kind = "full"
bandwidth = 1e9
latency = 1e-7
"#,
    );
    let prog = sc.program().unwrap();
    let (x, _) = evaluate_with_graph(prog).expect("evaluates");
    assert_eq!(x.extended, None);
    same(&x, &evaluate(prog).expect("evaluates"));
}

/// The activities of a graph too large to record: counted to the end of the walk (and, when
/// the walk is extended, estimated from its iterations) as the graph would have them, so a
/// refusal says what a larger budget must allow.
#[test]
fn a_graph_too_large_to_record_counts_every_activity_walked_or_extended() {
    use parsim::analytic::cost::with_budget;
    // walked whole (the chain never settles), and extended (the halo settles at once)
    for (text, extended) in [
        (program(1024, "[1024]", 250, CHAIN, false), false),
        (program(256, "[16, 16]", 200, HALO, false), true),
    ] {
        let sc = scenario(&text);
        let prog = sc.program().unwrap();
        let (x, graph) = evaluate_with_graph(prog).expect("evaluates");
        assert!(graph.is_err(), "over the default budget");
        assert_eq!(x.extended.is_some(), extended);
        let (_, whole) = with_budget(1e3, || evaluate_with_graph(prog)).expect("evaluates");
        let recorded = whole.expect("recorded at the raised budget").len();
        assert_eq!(x.activities + 1, recorded, "with the graph's root");
    }
}

/// A walk whose first iteration is unlike the later ones (the ranks enter it apart, after the
/// setup phase's compute on every third rank, and the later ones as the allreduce leaves
/// them) is extended from its second iteration, contention-free or with a wait before every
/// link, and is still the walk of every iteration.
#[test]
fn a_walk_periodic_after_its_first_iteration_is_extended_from_the_second() {
    use parsim::analytic::cost::with_budget;
    let sc = scenario(&program(256, "[16, 16]", 200, HALO, false));
    let prog = sc.program().unwrap();
    let (free, _) = evaluate_with_graph(prog).expect("evaluates");
    assert_eq!(
        free.extended,
        Some((3, 200)),
        "periodic from the second iteration"
    );
    same(&free, &evaluate(prog).expect("evaluates"));
    let waits: FxHashMap<u64, f64> = free.links.iter().map(|l| (l.id, 5e-6)).collect();
    let (x, _) = evaluate_with_waits(prog, waits.clone(), false).expect("evaluates");
    assert_eq!(
        x.extended,
        Some((3, 200)),
        "periodic from the second iteration"
    );
    assert!(x.makespan > free.makespan, "the waits lengthen it");
    // the walk of every iteration: the one that records the graph, at a budget that holds it
    let (w, graph) =
        with_budget(1e3, || evaluate_with_waits(prog, waits.clone(), true)).expect("evaluates");
    let graph = graph.expect("recorded at the raised budget");
    assert_eq!(w.extended, None);
    same(&x, &w);
    // the graph alone, without the evaluation's sharing check: the same graph
    let alone = with_budget(1e3, || activity_graph(prog, Some(&waits)))
        .expect("evaluates")
        .expect("recorded at the raised budget");
    assert_eq!((alone.len(), alone.edges()), (graph.len(), graph.edges()));
    assert_eq!(alone.time, graph.time);
}

/// The queueing fixed point's later steps start their walk at the pair of cuts the step before
/// was extended from, both walked side by side: the same evaluation as the whole plan's, and,
/// when that pair is not periodic, the later pairs still tried.
#[test]
fn a_walk_started_at_a_like_walks_pair_is_the_same_walk() {
    let sc = scenario(&program(256, "[16, 16]", 200, HALO, false));
    let prog = sc.program().unwrap();
    let (free, _) = evaluate_with_graph(prog).expect("evaluates");
    let waits: FxHashMap<u64, f64> = free.links.iter().map(|l| (l.id, 5e-6)).collect();
    let (x, _) = evaluate_with_waits(prog, waits.clone(), false).expect("evaluates");
    assert_eq!(x.extended, Some((3, 200)));
    for like in [3, 2] {
        let y = evaluate_with_waits_from(prog, waits.clone(), like).expect("evaluates");
        assert_eq!(
            y.extended,
            Some((3, 200)),
            "started at the pair ending at {like}"
        );
        assert_eq!(y.makespan.to_bits(), x.makespan.to_bits());
        same(&y, &x);
    }
}
