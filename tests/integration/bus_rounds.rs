//! Rounds of messages on a shared bus (issue 39): the evaluation with the links serving each
//! round as the machine does, against the simulation of the same program.

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
        let sim = simulated(&sc, 1, "program.makespan");
        // the simulator rounds each of a round's compute, startup and latency to the nearest
        // tick (the transmissions it rounds up, as the evaluation's link does): at most 1.5
        // ticks a round
        let ticks = (p.value - sim).abs() / tick;
        assert!(
            ticks <= 1.5 * 20.0,
            "{ranks} ranks: {} against {sim}, {ticks} ticks apart",
            p.value
        );
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
