//! Rounds of messages on a shared bus, and on routes of several links (issue 39): the
//! evaluation with the links serving each round as the machine does, against the simulation of
//! the same program.

use parsim::predict::Prediction;
use parsim::replicate::{self, Options};
use parsim::scenario::Scenario;
use parsim::study::analyze_scenario;

use super::util::scenario;

/// The rounds method's name, as its labels start.
const ROUNDS: &str = "mean-value critical path with shared links serving each round";

/// `ranks` ranks on a bus shared as `sharing`, `times` rounds of (a compute of `compute`, a
/// ring sendrecv of 32 KiB).
fn ring_on_a_bus(ranks: u32, times: u32, compute: &str, sharing: &str) -> Scenario {
    scenario(&format!(
        r#"
[program]
ranks = {ranks}
[[program.op]]
kind = "repeat"
times = {times}
body = [
  {{ kind = "compute", time = {compute} }},
  {{ kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + P - 1) % P", bytes = 32768 }},
]
[topology]
kind = "bus"
bandwidth = 1e9
latency = 1e-7
startup = 2e-6
sharing = "{sharing}"
"#
    ))
}

/// The rounds method's prediction of `metric`.
fn rounds(sc: &Scenario, metric: &str) -> Prediction {
    let a = analyze_scenario(sc);
    a.predictions
        .iter()
        .find(|p| p.metric == metric && p.method.starts_with(ROUNDS))
        .cloned()
        .unwrap_or_else(|| panic!("no rounds prediction of {metric}: {:?}", a.refusals))
}

/// The simulated mean of `metric` over `replications`.
fn simulated(sc: &Scenario, replications: u32, metric: &str) -> f64 {
    let mut opt = Options::from_scenario(sc);
    opt.replications = replications;
    opt.threads = 1;
    let ex = replicate::run(sc, &opt, &|_| {}).expect("runs");
    let i = ex.index_of(metric).expect("the run has the metric");
    ex.interval(i, 0.99).mean
}

/// The validation suite's case `file`.
fn validation_case(file: &str) -> Scenario {
    parsim::scenario::load(std::path::Path::new(&format!("validation/{file}")))
        .expect("the validation case reads")
}

/// Asserts that `p`, a prediction of `sc`'s makespan, is within `ticks` of the simulator's
/// clock ticks of its simulated makespan (`what` names the case).
fn simulated_within(sc: &Scenario, p: &Prediction, ticks: f64, what: &str) {
    let tick = sc.program().expect("a program").clock.tick();
    let sim = simulated(sc, 2, "program.makespan");
    let apart = (p.value - sim).abs() / tick;
    assert!(
        apart <= ticks,
        "{what}: {} against {sim}, {apart} ticks apart",
        p.value
    );
}

#[test]
fn fair_rounds_on_a_bus_through_repeat_are_exact_to_the_tick() {
    // each round: the P messages start together after the startup and share the bus to the
    // end, t_s + t_h + P m / B, after the compute: the whole run is 20 such rounds
    for ranks in [16, 64, 256] {
        let sc = ring_on_a_bus(ranks, 20, "1e-3", "fair");
        let tick = sc.program().expect("a program").clock.tick();
        let by_hand = 20.0 * (1e-3 + 2e-6 + 1e-7 + f64::from(ranks) * 32768.0 / 1e9);
        let p = rounds(&sc, "program.makespan");
        assert!(p.exact, "{ranks} ranks: {}", p.method);
        assert!(
            (p.value - by_hand).abs() <= 1e-12 * by_hand,
            "{ranks} ranks: {} against {by_hand}",
            p.value
        );
        // the simulator rounds each of a round's compute, startup and latency to the nearest
        // tick (the transmissions it rounds up, as the evaluation's link does): at most 1.5
        // ticks a round
        simulated_within(&sc, &p, 1.5 * 20.0, &format!("{ranks} ranks"));
        let comm = rounds(&sc, "ranks.communication.mean");
        let sim_comm = simulated(&sc, 1, "ranks.communication.mean");
        assert!(
            comm.exact && (comm.value - sim_comm).abs() / tick <= 1.5 * 20.0,
            "{ranks} ranks: {} against {sim_comm}",
            comm.value
        );
    }
}

#[test]
fn fcfs_rounds_released_together_are_labelled_by_their_tie() {
    // the same rounds on an FCFS bus: the k-th message of a round waits k - 1 transmissions, in
    // an order the evaluation takes from the ranks and the simulator from its events
    let p = rounds(&ring_on_a_bus(16, 5, "1e-3", "fcfs"), "program.makespan");
    assert!(!p.exact, "{}", p.method);
    assert!(
        p.method
            .contains("16 messages reach link bus at the same instant"),
        "{}",
        p.method
    );
}

#[test]
fn random_compute_makes_the_rounds_an_approximation_beside_their_expected_maxima() {
    let sc = ring_on_a_bus(16, 5, r#"{ dist = "exp", mean = 1e-3 }"#, "fair");
    let p = rounds(&sc, "program.makespan");
    assert!(
        !p.exact && p.method.contains("compute times are random"),
        "{}",
        p.method
    );
    let a = analyze_scenario(&sc);
    let stochastic = a
        .predictions
        .iter()
        .find(|q| {
            q.metric == "program.makespan"
                && q.method.contains("with shared links serving each round")
                && !q.method.starts_with(ROUNDS)
        })
        .unwrap_or_else(|| panic!("no stochastic rounds prediction: {:?}", a.refusals));
    // E[max] >= max E: the composition of the random computes is above the mean-value path
    assert!(
        stochastic.value > p.value,
        "{} against {}",
        stochastic.value,
        p.value
    );
    assert!(!stochastic.exact);
}

#[test]
fn fcfs_rounds_that_the_service_staggers_are_the_simulated_timeline() {
    // ranks that start 1.3 us apart and queue on the bus ring by ring: served in turn, in one
    // walk in time order, as the simulator serves them (its 320 messages would take a walk a
    // round to settle by iterating the walk and the service)
    let sc = scenario(
        r#"
[program]
ranks = 16
[[program.op]]
kind = "compute"
iterations = "rank"
cost = 1.3e-6
split = false
[[program.op]]
kind = "repeat"
times = 20
body = [
  { kind = "compute", time = 1.37e-4 },
  { kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + P - 1) % P", bytes = 32768 },
]
[topology]
kind = "bus"
bandwidth = 1e9
latency = 1e-7
startup = 2e-6
sharing = "fcfs"
"#,
    );
    let p = rounds(&sc, "program.makespan");
    // the simulator rounds each compute, startup and latency to the nearest tick: at most a
    // tick a round
    simulated_within(&sc, &p, 20.0, "the staggered ring");
    // the bus carries its 320 transmissions one at a time: 10.5 ms, where the contention-free
    // walk takes 3.4 ms
    assert!(p.value > 320.0 * 32768e-9, "{}", p.value);
}

#[test]
fn a_ring_allreduce_on_an_fcfs_bus_is_served_within_the_default_budget() {
    // the validation suite's 16-rank ring allreduce: 10,080 crossings a walk, in rounds that
    // the service shifts apart, which iterating walk and service had not settled after the
    // 198 walks of the default budget
    let sc = validation_case("prog_allreduce_bus_p16.toml");
    let a = analyze_scenario(&sc);
    assert!(
        !a.refusals.iter().any(|r| r.method.starts_with(ROUNDS)),
        "{:?}",
        a.refusals
    );
    let p = rounds(&sc, "program.makespan");
    // each of the 21 allreduces' 30 steps queues its 16 blocks of 4 KiB on the bus
    let queued = 21.0 * 30.0 * 16.0 * 4096e-9;
    assert!(p.value > queued, "{} against {queued}", p.value);
}

#[test]
fn rounds_whose_later_links_are_reached_out_of_order_are_iterated_to_the_simulated_timeline() {
    // the dragonfly's group shift on minimal routes: a message reaches its global link after
    // its router's, at a time the walk in time order does not govern, so walk and service
    // are iterated (50 rounds of 64 KiB, deterministic)
    let sc = validation_case("prog_shift_dragonfly_p72.toml");
    let p = rounds(&sc, "program.makespan");
    simulated_within(&sc, &p, 50.0, "the group shift");
}
