//! Dragonflies and HyperX (issue 40): the simulated effect of their routings against what the
//! routes make of each pattern by hand.

use parsim::scenario::Scenario;

use super::util::{call, dragonfly_text, scenario, simulated_means, temp_scenario};

/// The simulated mean of `metric` over `replications` on `threads` threads, seed 1.
fn simulated(sc: &Scenario, replications: u32, threads: usize, metric: &str) -> f64 {
    simulated_means(sc, replications, threads, &[metric])[0]
}

/// [`dragonfly_text`], parsed.
fn dragonfly(routing: &str, times: u32, body: &str) -> Scenario {
    scenario(&dragonfly_text(routing, times, body))
}

/// The group-to-group shift: every host exchanges 64 KiB with the host in its place in the
/// next group.
const SHIFT: &str =
    r#"[{ kind = "sendrecv", to = "(rank + 8) % P", from = "(rank + P - 8) % P", bytes = 65536 }]"#;

/// Under minimal routes the 8 hosts of a group share the one global link to the next group:
/// each round takes 8 transmissions of 65.5 us on it (1 / (a p) of a host's injection
/// bandwidth), give or take the startup and a few hops' latency. Valiant routes spread the
/// load over every group's links and take well under that.
#[test]
fn the_group_shift_is_held_to_one_global_link_by_minimal_routes_and_not_by_valiant_ones() {
    let rounds = 10.0;
    let transmission = 65536.0 / 1e9;
    let minimal = simulated(&dragonfly("minimal", 10, SHIFT), 1, 1, "program.makespan");
    let bound = rounds * 8.0 * transmission;
    assert!(
        minimal >= bound && minimal <= bound + rounds * (2e-6 + 10.0 * 1e-7),
        "minimal {minimal} against 10 x 8 x 65.5 us = {bound}"
    );
    let valiant = simulated(&dragonfly("valiant", 10, SHIFT), 4, 1, "program.makespan");
    assert!(
        valiant < 0.6 * minimal,
        "valiant {valiant}, minimal {minimal}"
    );
}

/// One message on an idle dragonfly: UGAL sees no backlog and takes the minimal route (the same
/// delay to the tick); Valiant crosses a second global link and more local ones.
#[test]
fn ugal_on_an_idle_network_takes_the_minimal_route() {
    let one = r#"[{ kind = "send", to = "71", bytes = 4096, when = "rank == 0" }, { kind = "recv", from = "0", when = "rank == 71" }]"#;
    let delay = |routing| simulated(&dragonfly(routing, 1, one), 3, 1, "messages.delay");
    let (minimal, ugal, valiant) = (delay("minimal"), delay("ugal"), delay("valiant"));
    assert_eq!(
        ugal.to_bits(),
        minimal.to_bits(),
        "ugal {ugal}, minimal {minimal}"
    );
    assert!(valiant > minimal, "valiant {valiant}, minimal {minimal}");
}

/// The detours come from a stream of their own: the same seed gives the same run on 1 or 3
/// threads.
#[test]
fn routed_runs_are_the_same_on_any_number_of_threads() {
    let body = r#"[{ kind = "compute", time = { dist = "exp", mean = 1e-4 } }, { kind = "sendrecv", to = "(rank + 8) % P", from = "(rank + P - 8) % P", bytes = 65536 }]"#;
    for routing in ["valiant", "ugal"] {
        let sc = dragonfly(routing, 5, body);
        let one = simulated(&sc, 6, 1, "program.makespan");
        let three = simulated(&sc, 6, 3, "program.makespan");
        assert_eq!(one.to_bits(), three.to_bits(), "{routing}");
    }
}

/// On a 4 x 4 HyperX with 2 hosts per router, the two hosts of router (0, 0) send at once to
/// routers (1, 1) and (1, 2): dimension order sends both along x first, one after the other on
/// the same link; adaptive routing sends the second along y, where nothing waits, and both
/// arrive about one transmission after they start.
#[test]
fn adaptive_routing_on_a_hyperx_avoids_the_busy_dimension() {
    let run = |routing: &str| {
        let sc = scenario(&format!(
            r#"
[program]
ranks = 32
[[program.op]]
kind = "send"
to = "10 + 8 * rank"
bytes = 65536
when = "rank < 2"
[[program.op]]
kind = "recv"
from = "(rank - 10) / 8"
when = "rank == 10 || rank == 18"
[topology]
kind = "hyperx"
dims = [4, 4]
hosts_per_router = 2
bandwidth = 1e9
routing = "{routing}"
"#
        ));
        simulated(&sc, 1, 1, "program.makespan")
    };
    let transmission = 65536.0 / 1e9;
    let (minimal, adaptive) = (run("minimal"), run("adaptive"));
    assert!(
        (minimal - 2.0 * transmission).abs() < 1e-9,
        "minimal {minimal}: two transmissions on the x link"
    );
    assert!(
        (adaptive - transmission).abs() < 1e-9,
        "adaptive {adaptive}: one transmission on each of two links"
    );
}

/// Under routings other than minimal `analyze` gives the channel-load lower bound on the
/// makespan, which the simulation stays above, and the evaluation on one sample of the routes
/// (its count exact, its times labelled with the sample).
#[test]
fn the_channel_load_bound_lies_below_the_simulated_makespan() {
    let body = r#"[{ kind = "compute", time = { dist = "exp", mean = 1e-4 } }, { kind = "sendrecv", to = "(rank + 8) % P", from = "(rank + P - 8) % P", bytes = 65536 }]"#;
    for routing in ["valiant", "ugal"] {
        let sc = dragonfly(routing, 10, body);
        let a = parsim::study::analyze_scenario(&sc);
        let find = |metric: &str| {
            a.predictions
                .iter()
                .find(|p| p.metric == metric && p.method.starts_with("channel-load bound"))
                .unwrap_or_else(|| panic!("{routing}: no channel-load {metric}: {:?}", a.refusals))
        };
        let count = a
            .predictions
            .iter()
            .find(|p| p.metric == "messages.count")
            .expect("a count");
        assert!(count.exact);
        assert_eq!(count.value, simulated(&sc, 2, 1, "messages.count"));
        let walked = a
            .predictions
            .iter()
            .find(|p| p.metric == "program.makespan" && p.method.starts_with("contention-free"))
            .expect("the evaluation applies");
        assert!(!walked.exact);
        assert!(
            walked.method.contains("routes are"),
            "{routing}: {}",
            walked.method
        );
        let bound = find("program.makespan");
        assert!(!bound.exact);
        let makespan = simulated(&sc, 4, 1, "program.makespan");
        assert!(
            bound.value > 0.0 && bound.value < makespan,
            "{routing}: {} against {makespan}",
            bound.value
        );
    }
}

/// `route --loads`: under minimal routes the group shift loads each global link with the
/// traffic of a whole group, so the hosts saturate it at 1 / (a p) = 12.5% of their injection
/// bandwidth (Kim et al.); Valiant routes spread it, to about half.
#[test]
fn route_loads_give_the_saturation_of_the_group_shift() {
    let text = |routing: &str| dragonfly_text(routing, 3, SHIFT);
    let saturation = |routing: &str| -> f64 {
        let file = temp_scenario(&format!("loads_{routing}"), &text(routing));
        let (code, out, err) = call(&["route", file.to_str().unwrap(), "--loads"]);
        assert_eq!(code, Some(0), "{err}");
        let last = out.lines().last().unwrap();
        let (head, _) = last.split_once("% of their injection").expect(last);
        head.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(saturation("minimal"), 12.5);
    let valiant = saturation("valiant");
    assert!((40.0..=50.0).contains(&valiant), "{valiant}");
    let file = temp_scenario("loads_flags", &text("minimal"));
    let (code, _, err) = call(&["route", file.to_str().unwrap(), "--loads", "--from", "0"]);
    assert_eq!(code, Some(2), "{err}");
}
