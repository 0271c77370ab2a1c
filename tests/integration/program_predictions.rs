//! The contention-free mean-value evaluation of rank programs: hand-computed values, exact
//! agreement with the simulator where nothing is shared and nothing is random, honest labels
//! where something is, and a prediction for every metric of every bundled program scenario.

use std::path::Path;

use parsim::predict::Analysis;
use parsim::predict::program::evaluation::evaluate;
use parsim::replicate::{self, Experiment, Options};
use parsim::scenario::Scenario;
use parsim::study::analyze_scenario;
use parsim::validate::CLOCK_RELATIVE_ERROR;

use super::util::{root, scenario};

const METHOD: &str = "contention-free mean-value critical path";

/// The evaluation's prediction of `metric`.
fn predicted<'a>(a: &'a Analysis, metric: &str) -> &'a parsim::predict::Prediction {
    a.predictions
        .iter()
        .find(|p| p.metric == metric && p.method.starts_with(METHOD))
        .unwrap_or_else(|| panic!("no evaluation prediction for {metric}"))
}

fn run(sc: &Scenario, replications: u32, seed: u64) -> Experiment {
    let mut opt = Options::from_scenario(sc);
    opt.replications = replications;
    opt.seed = seed;
    opt.threads = 1;
    replicate::run(sc, &opt, &|_| {}).expect("runs")
}

fn simulated(ex: &Experiment, metric: &str) -> f64 {
    let i = ex
        .index_of(metric)
        .unwrap_or_else(|| panic!("the run has no {metric}"));
    ex.interval(i, 0.99).mean
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

/// A ring on a 2 x 2 torus, deterministic, after each rank's compute (see the test): each rank
/// exchanges 10^4 bytes with its neighbours (to r + 1: one hop from ranks 0 and 2, two from 1
/// and 3 under dimension-order routes), then rank 3 sends one more message to rank 0.
const RING: &str = r#"
[[program.op]]
kind = "phase"
name = "exchange"
body = [ { kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + P - 1) % P", bytes = 10000 } ]
[[program.op]]
kind = "send"
when = "rank == 3"
to = 0
bytes = 10000
tag = 1
[[program.op]]
kind = "recv"
when = "rank == 0"
from = 3
tag = 1
[topology]
kind = "torus"
dims = [2, 2]
bandwidth = 1e9
latency = 1e-7
startup = 1e-6
"#;

#[test]
fn a_ring_on_a_four_node_torus_takes_its_hand_computed_times() {
    // cut-through: t_s + l t_h + m t_w = 1e-6 + l 1e-7 + 1e-5
    let cost = |l: f64| 1e-6 + l * 1e-7 + 1e-5;
    let c = |r: usize| (r + 1) as f64 * 1e-3;
    let hops = [1.0, 2.0, 1.0, 2.0];
    // each exchange ends at the later of its own delivery and its neighbour's
    let exchanged: Vec<f64> = (0..4)
        .map(|r| (c(r) + cost(hops[r])).max(c((r + 3) % 4) + cost(hops[(r + 3) % 4])))
        .collect();
    // rank 3's extra message (two hops) and rank 0 waiting for it
    let extra = exchanged[3] + cost(2.0);
    let finish = [extra, exchanged[1], exchanged[2], extra];
    // a rank communicates until its own message is delivered, then waits for its neighbour's
    // (only rank 0, whose neighbour 3 computes longest, waits: for the exchange and for rank
    // 3's extra message)
    let own = |r: usize| c(r) + cost(hops[r]);
    let communication = [
        cost(hops[0]),
        cost(hops[1]),
        cost(hops[2]),
        cost(hops[3]) + cost(2.0),
    ];
    let waiting = [extra - own(0), 0.0, 0.0, 0.0];
    assert!(exchanged[1] == own(1) && exchanged[2] == own(2) && exchanged[3] == own(3));
    // by hand: 4.0112e-3 for ranks 0 and 3 after the exchange, 4.0224e-3 at the end
    assert!(close(exchanged[0], 4.0112e-3, 1e-12));
    assert!(close(extra, 4.0224e-3, 1e-12));

    // rank r computes (r + 1) ms: one `when` branch per rank
    let computes: String = (0..4)
        .map(|r| {
            format!(
                "[[program.op]]\nkind = \"compute\"\nwhen = \"rank == {r}\"\ntime = {{ dist = \"det\", value = {} }}\n",
                c(r)
            )
        })
        .collect();
    let text = format!("[run]\nreplications = 2\n[program]\nranks = 4\n{computes}{RING}");
    let sc = scenario(&text);
    let a = analyze_scenario(&sc);
    let ex = run(&sc, 2, 1);
    let check = |metric: String, want: f64| {
        let p = predicted(&a, &metric);
        assert!(p.exact, "{metric}: {}", p.method);
        assert!(
            close(p.value, want, 1e-12) || (want == 0.0 && p.value.abs() < 1e-15),
            "{metric}: evaluation {} by hand {want}",
            p.value
        );
        let sim = simulated(&ex, &metric);
        assert!(
            (sim - want).abs() <= CLOCK_RELATIVE_ERROR * want.abs().max(1e-9),
            "{metric}: simulated {sim} by hand {want}"
        );
    };
    for r in 0..4 {
        check(format!("rank.{r}.compute"), c(r));
        check(format!("rank.{r}.communication"), communication[r]);
        check(format!("rank.{r}.waiting"), waiting[r]);
        check(format!("rank.{r}.finish"), finish[r]);
    }
    check("program.makespan".to_owned(), extra);
    check("messages.count".to_owned(), 5.0);
    check(
        "messages.delay".to_owned(),
        (2.0 * (1e-7 + 1e-5) + 3.0 * (2e-7 + 1e-5)) / 5.0,
    );
}

/// Every exact prediction of a deterministic program in which nothing meets agrees with the
/// simulation (whose two replications are identical) to the clock's resolution.
fn agrees_exactly(text: &str) -> usize {
    let sc = scenario(text);
    let a = analyze_scenario(&sc);
    let ex = run(&sc, 2, 7);
    let mut checked = 0;
    for p in a
        .predictions
        .iter()
        .filter(|p| p.method.starts_with(METHOD))
    {
        assert!(p.exact, "{}: {}", p.metric, p.method);
        let sim = simulated(&ex, &p.metric);
        assert!(
            (p.value - sim).abs() <= 2.0 * CLOCK_RELATIVE_ERROR * sim.abs().max(1e-9),
            "{}: evaluation {} simulated {sim}",
            p.metric,
            p.value
        );
        checked += 1;
    }
    checked
}

#[test]
fn deterministic_programs_with_nothing_shared_agree_with_the_simulation_exactly() {
    // every collective family on a full network (a link per ordered pair), groups, an isend
    let collectives = r#"
[run]
replications = 2
[program]
ranks = 12
[[program.op]]
kind = "compute"
time = { dist = "det", value = 1e-4 }
when = "rank % 2 == 1"
[[program.op]]
kind = "phase"
name = "b"
body = [ { kind = "bcast", algorithm = "binomial", bytes = 4096, root = 3 } ]
[[program.op]]
kind = "reduce"
algorithm = "chain"
segments = 4
bytes = 8192
combine = { dist = "det", value = 2e-6 }
[[program.op]]
kind = "allreduce"
algorithm = "ring"
bytes = 12000
combine_per_byte = 1e-9
[[program.op]]
kind = "allgather"
algorithm = "bruck"
bytes = 100
[[program.op]]
kind = "alltoall"
bytes = 64
[[program.op]]
kind = "barrier"
algorithm = "dissemination"
[[program.op]]
kind = "scatter"
algorithm = "binomial"
bytes = 128
[[program.op]]
kind = "gather"
algorithm = "linear"
bytes = 128
[[program.op]]
kind = "barrier"
[[program.op]]
kind = "allreduce"
algorithm = "recursive_doubling"
bytes = 800
combine = { dist = "det", value = 1e-6 }
group = "rank % 3"
[[program.op]]
kind = "isend"
to = "(rank + 5) % P"
bytes = 1000
tag = 7
[[program.op]]
kind = "recv"
from = "(rank + P - 5) % P"
tag = 7
[topology]
kind = "full"
bandwidth = 1e8
latency = 1e-7
startup = 1e-6
switching = "store_and_forward"
"#;
    assert!(agrees_exactly(collectives) > 80);
    // loops, regions, disks (one unit per rank), two ranks per two-core node
    let io = r#"
[run]
replications = 2
[program]
ranks = 8
ranks_per_node = 2
cores = 2
[[disk]]
name = "d"
count = 8
startup = 1e-3
bandwidth = 1e7
[[program.op]]
kind = "repeat"
times = 3
var = "i"
body = [
 { kind = "compute", iterations = "1000 * (i + 1)", cost = { dist = "det", value = 1e-6 } },
 { kind = "io", disk = "d", bytes = 10000 },
 { kind = "send", to = "rank + 1", bytes = "1000 * (rank + 1)", when = "rank % 2 == 0" },
 { kind = "recv", from = "rank - 1", when = "rank % 2 == 1" },
]
[topology]
kind = "fat_tree"
arity = 2
bandwidth = 1e8
latency = 1e-6
startup = 1e-6
"#;
    assert!(agrees_exactly(io) > 30);
}

#[test]
fn a_reduce_on_a_shared_bus_is_labelled_and_the_simulation_is_slower() {
    let sc = scenario(
        r#"
[run]
replications = 2
[program]
ranks = 16
[[program.op]]
kind = "reduce"
algorithm = "binomial"
bytes = 65536
combine_per_byte = 1e-9
[topology]
kind = "bus"
bandwidth = 1e9
startup = 5e-6
"#,
    );
    let a = analyze_scenario(&sc);
    let p = predicted(&a, "program.makespan");
    assert!(!p.exact);
    assert!(p.method.contains("messages share link bus"), "{}", p.method);
    let ev = evaluate(sc.program().unwrap()).unwrap();
    assert_eq!(ev.makespan, p.value);
    // counts hold whatever the contention
    assert!(predicted(&a, "messages.count").exact);
    let ex = run(&sc, 2, 3);
    assert_eq!(simulated(&ex, "messages.count"), 15.0);
    // 8 messages of the first round queue on the bus: well above the contention-free value
    let sim = simulated(&ex, "program.makespan");
    assert!(sim >= p.value, "simulated {sim} below {}", p.value);
    assert!(
        sim > 1.5 * p.value,
        "simulated {sim}, evaluation {}",
        p.value
    );
}

#[test]
fn random_compute_times_give_a_lower_bound_where_nothing_can_be_shared() {
    let text = std::fs::read_to_string(root().join("scenarios/program_ring_torus.toml")).unwrap();
    let sc = scenario(&text);
    let a = analyze_scenario(&sc);
    let p = predicted(&a, "program.makespan");
    assert!(!p.exact && p.method.contains("Jensen"), "{}", p.method);
    let b = a
        .bounds
        .iter()
        .find(|b| {
            b.metric == "program.makespan"
                && b.method == parsim::predict::program::stochastic::BOUNDS_METHOD
        })
        .expect("a lower bound");
    assert_eq!(b.lower, p.value);
    // no rank does io: that time is zero whatever chance does
    for metric in ["ranks.io.mean", "rank.3.io"] {
        let z = predicted(&a, metric);
        assert!(z.exact && z.value == 0.0, "{metric}: {z:?}");
    }
    // a rank whose message is delivered waits for its neighbour's, whose compute is random
    assert!(!predicted(&a, "rank.3.compute").exact);
    assert!(!predicted(&a, "ranks.waiting.max").exact);
    let ex = run(&sc, 10, 11);
    // its communication is its own messages' startups and deliveries, fixed where no link
    // can be shared: exact whatever chance does
    for metric in ["ranks.communication.mean", "ranks.communication.max"] {
        let c = predicted(&a, metric);
        let sim = simulated(&ex, metric);
        assert!(c.exact, "{metric}: {}", c.method);
        assert!(
            (c.value - sim).abs() <= CLOCK_RELATIVE_ERROR * sim,
            "{metric}: {} vs {sim}",
            c.value
        );
    }
    let i = ex.index_of("program.makespan").unwrap();
    let ci = ex.interval(i, 0.99);
    assert!(ci.mean - ci.half_width > b.lower, "{ci:?} vs {}", b.lower);
    assert!(ci.mean + ci.half_width < b.upper, "{ci:?} vs {}", b.upper);
}

#[test]
fn every_bundled_program_scenario_gets_a_prediction_for_every_metric() {
    let mut programs = 0;
    for dir in ["scenarios", "validation"] {
        let mut files: Vec<_> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        for f in files {
            let sc = parsim::scenario::load(Path::new(&f)).unwrap_or_else(|e| panic!("{e}"));
            let Some(prog) = sc.program() else { continue };
            programs += 1;
            let a = analyze_scenario(&sc);
            let missing: Vec<String> = parsim::metrics::program::names(prog)
                .into_iter()
                .filter(|m| !a.predictions.iter().any(|p| &p.metric == m))
                .collect();
            assert!(
                missing.is_empty(),
                "{}: no prediction for {missing:?}",
                f.display()
            );
        }
    }
    assert!(programs >= 10, "{programs} program scenarios");
}

#[test]
fn the_p99_of_random_size_messages_is_the_quantile_of_their_contention_free_delays() {
    // one sender, blocking sends, one link: the delays are exactly t_h + X / bandwidth with X
    // exponential, whose 99th percentile is t_h + m ln 100 / bandwidth
    let sc = scenario(
        r#"
[run]
replications = 4
[program]
ranks = 2
[[program.op]]
kind = "repeat"
times = 2000
body = [
  { kind = "send", to = 1, bytes = { dist = "exp", mean = 1000 }, when = "rank == 0" },
  { kind = "recv", from = 0, when = "rank == 1" },
]
[topology]
kind = "full"
bandwidth = 1e6
latency = 1e-4
startup = 1e-5
"#,
    );
    let want = 1e-4 + 1000.0 * 100f64.ln() / 1e6;
    let a = analyze_scenario(&sc);
    let p = predicted(&a, "messages.p99");
    assert!(!p.exact && p.method.contains("a + b X"), "{}", p.method);
    assert!(close(p.value, want, 1e-9), "{} against {want}", p.value);
    // the simulation: bytes rounded, the histogram's resolution, 8,000 draws
    let sim = simulated(&run(&sc, 4, 13), "messages.p99");
    assert!(close(sim, want, 0.05), "simulated {sim} against {want}");
}

/// A program of one phase holding `op` on eight ranks over the topology `topology`.
fn one_collective_phase(op: &str, topology: &str) -> Scenario {
    scenario(&format!(
        r#"
[run]
replications = 2
[program]
ranks = 8
[[program.op]]
kind = "phase"
name = "c"
body = [ {op} ]
[topology]
{topology}
bandwidth = 1e8
latency = 1e-6
startup = 2e-6
switching = "cut_through"
"#
    ))
}

/// The phase's closed-form prediction of the makespan.
fn closed_form(a: &Analysis) -> &parsim::predict::Prediction {
    a.predictions
        .iter()
        .find(|p| p.metric == "program.makespan" && p.method.contains("closed form"))
        .unwrap_or_else(|| panic!("no closed form: {:?}", a.predictions))
}

#[test]
fn a_collective_closed_form_is_labelled_exact_from_its_routes_not_the_topology_kind() {
    // no two messages share a link and each crosses one: exact, and the simulation agrees to
    // the clock's tick, on a ring and on a linear array
    for (op, topology) in [
        (
            r#"{ kind = "allreduce", algorithm = "ring", bytes = 8000 }"#,
            r#"kind = "ring""#,
        ),
        (
            r#"{ kind = "bcast", algorithm = "chain", segments = 4, bytes = 8000 }"#,
            "kind = \"mesh\"\ndims = [8]",
        ),
    ] {
        let sc = one_collective_phase(op, topology);
        let a = analyze_scenario(&sc);
        let p = closed_form(&a);
        assert!(p.exact, "{op} on {topology}: {}", p.method);
        let sim = simulated(&run(&sc, 2, 3), "program.makespan");
        assert!(
            (p.value - sim).abs() <= 2.0 * CLOCK_RELATIVE_ERROR * sim,
            "{op}: {} against {sim}",
            p.value
        );
    }
    // the same ring, recursive doubling: partners two and four hops away, whose messages
    // overlap on the links between: an approximation that names a shared link
    let sc = one_collective_phase(
        r#"{ kind = "allreduce", algorithm = "recursive_doubling", bytes = 8000 }"#,
        r#"kind = "ring""#,
    );
    let p = closed_form(&analyze_scenario(&sc)).clone();
    assert!(!p.exact, "{}", p.method);
    assert!(
        p.method.contains("share link") && p.method.contains("cross up to 4 links"),
        "{}",
        p.method
    );
}

#[test]
fn a_phase_of_exchanges_in_sequence_gets_no_one_round_formula() {
    // (found by the issue-19 validation cases: a halo of four sendrecvs in one phase was given
    // the longest single message, labelled exact, 75% below the simulation) two exchanges
    // one after the other on a 4-node ring: the one-round formula is refused, and the
    // evaluation, which follows them in order, is exact
    let sc = scenario(
        r#"
[run]
replications = 2
[program]
ranks = 4
[[program.op]]
kind = "phase"
name = "two"
body = [
  { kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + P - 1) % P", bytes = 65536 },
  { kind = "sendrecv", to = "(rank + P - 1) % P", from = "(rank + 1) % P", bytes = 65536 },
]
[topology]
kind = "torus"
dims = [4]
bandwidth = 1e9
latency = 1e-7
startup = 2e-6
"#,
    );
    let a = analyze_scenario(&sc);
    assert!(
        a.refusals
            .iter()
            .any(|r| r.reason.contains("more than one send, receive or exchange")),
        "{:?}",
        a.refusals
    );
    let exact: Vec<_> = a
        .predictions
        .iter()
        .filter(|p| p.metric == "phase.two.max" && p.exact)
        .collect();
    assert!(
        exact
            .iter()
            .all(|p| p.method.starts_with("contention-free mean-value")),
        "{exact:?}"
    );
    let sim = simulated(&run(&sc, 2, 1), "phase.two.max");
    for p in exact {
        assert!(close(p.value, sim, 1e-9), "{} vs {sim}", p.value);
    }
}

#[test]
fn a_gather_and_a_round_of_messages_on_a_bus_take_the_sum_of_their_transmissions() {
    // (issue 19: only the contention-free values were offered, 66% to 99.6% low) on a bus every
    // message crosses the one link; messages of one size that start together end, the last of
    // them, after all their transmissions, whether the bus serves them one after the other or
    // shares itself: a linear gather t_s + t_h + (P-1) m t_w, a ring exchange's round the
    // lecture's rule t_s + t_h + k m t_w with k = P messages on the link
    for ranks in [2_u32, 3, 16, 64] {
        for sharing in ["fcfs", "fair"] {
            for switching in ["cut_through", "store_and_forward"] {
                for (body, method) in [
                    (
                        r#"{ kind = "gather", bytes = 65536, algorithm = "linear" }"#,
                        "gather linear on a bus",
                    ),
                    (
                        r#"{ kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + P - 1) % P", bytes = 65536 }"#,
                        "t_w scaled by the messages sharing a link",
                    ),
                ] {
                    let text = format!(
                        "[run]\nreplications = 2\n[program]\nranks = {ranks}\n[[program.op]]\nkind = \"phase\"\nname = \"g\"\nbody = [{body}]\n[topology]\nkind = \"bus\"\nbandwidth = 1e9\nlatency = 1e-7\nstartup = 2e-6\nsharing = \"{sharing}\"\nswitching = \"{switching}\"\n"
                    );
                    let sc = scenario(&text);
                    let a = analyze_scenario(&sc);
                    let sim = simulated(&run(&sc, 2, 1), "phase.g.max");
                    let p = a
                        .predictions
                        .iter()
                        .find(|p| p.metric == "phase.g.max" && p.method.contains(method))
                        .unwrap_or_else(|| panic!("{ranks} {sharing} {switching}: no {method}"));
                    assert!(p.exact, "{ranks} {sharing} {switching}: {}", p.method);
                    let messages = if body.contains("gather") {
                        ranks - 1
                    } else {
                        ranks
                    };
                    let by_hand = 2e-6 + 1e-7 + f64::from(messages) * 65536.0 / 1e9;
                    assert!(
                        close(p.value, by_hand, 1e-12) && close(sim, by_hand, 1e-9),
                        "{ranks} {sharing} {switching} {method}: predicted {} simulated {sim} by hand {by_hand}",
                        p.value
                    );
                }
            }
        }
    }
}

/// The M/G/1 waits at a shared link, by hand: two ranks, 100 times a compute of `c` then an
/// exchange of `m` bytes on a bus (both messages cross the one link). Contention-free, an
/// iteration takes `c + t_s + s + t_h` (`s = m / bandwidth`): `K` for the 100. The bus carries
/// `2n` crossings of `s` in a makespan `T`: `lambda = 2n / T`, `U = 2ns / T`, and each crossing
/// waits `W = lambda s^2 / (2 (1 - U)) = n s^2 / (T - 2ns)`, so `T = K + n W` gives
/// `(T - K)(T - 2ns) = n^2 s^2`, whose root above `2ns` is
/// `((K + 2ns) + sqrt((K - 2ns)^2 + 4 n^2 s^2)) / 2`. The method gives that root, and the
/// simulation (whose two messages always meet: the compute is deterministic) lies above it.
#[test]
fn the_waits_at_a_shared_bus_settle_where_the_m_g_1_queue_meets_the_makespan() {
    let (n, c, ts, th, m, bw) = (100.0_f64, 1e-3_f64, 5e-6_f64, 1e-7_f64, 2e5_f64, 1e9_f64);
    let sc = scenario(&format!(
        r#"
[run]
replications = 2
[program]
ranks = 2
[[program.op]]
kind = "repeat"
times = {n}
body = [
  {{ kind = "compute", time = {{ dist = "det", value = {c} }} }},
  {{ kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + P - 1) % P", bytes = {m} }},
]
[topology]
kind = "bus"
bandwidth = {bw}
latency = {th}
startup = {ts}
"#
    ));
    let a = analyze_scenario(&sc);
    let q = a
        .predictions
        .iter()
        .find(|p| p.metric == "program.makespan" && p.method.contains("M/G/1"))
        .expect("the queueing prediction");
    assert!(
        !q.exact && q.method.contains("approximation"),
        "{}",
        q.method
    );
    let s = m / bw;
    let k = n * (c + ts + s + th);
    let hand = ((k + 2.0 * n * s) + ((k - 2.0 * n * s).powi(2) + 4.0 * n * n * s * s).sqrt()) / 2.0;
    assert!(
        (q.value - hand).abs() <= 1e-6 * hand,
        "method {} against the root {hand}",
        q.value
    );
    // above the contention-free path, and below what the bus really does (the two messages
    // of every exchange arrive together: the second waits a whole transmission)
    let free = evaluate(sc.program().unwrap()).unwrap().makespan;
    assert!((free - k).abs() <= 1e-9 * k, "{free} {k}");
    let sim = simulated(&run(&sc, 2, 1), "program.makespan");
    assert!(
        free < q.value && q.value < sim,
        "{free} < {} < {sim}",
        q.value
    );
}
