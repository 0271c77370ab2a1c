//! Routing features against exact results: class switching, round robin, join the shortest
//! queue, and empirical traces. Fixed seeds; tolerances as in `statistics`.

use super::statistics::assert_agrees;
use super::util::{open_single, scenario, simulate, temp_scenario};

const TWO_SERVERS: &str = r#"
[[class]]
name = "jobs"

[[station]]
name = "arrivals"
kind = "source"
class = "jobs"
interarrival = { dist = "exp", rate = 1.5 }

[[station]]
name = "dispatch"
kind = "delay"
service = { dist = "det", value = 0.0 }

[[station]]
name = "s1"
kind = "fcfs"
service = { dist = "exp", mean = 1.0 }

[[station]]
name = "s2"
kind = "fcfs"
service = { dist = "exp", mean = 1.0 }

[[route]]
class = "jobs"
from = "arrivals"
to = "dispatch"

[[route]]
class = "jobs"
from = "dispatch"
policy = "POLICY"
among = ["s1", "s2"]

[[route]]
class = "jobs"
from = "s1"
to = "exit"

[[route]]
class = "jobs"
from = "s2"
to = "exit"
"#;

#[test]
fn round_robin_gives_each_server_erlang_2_arrivals() {
    // Each server sees Erlang-2 inter-arrivals of rate 0.75: an E2/M/1 queue, R = 1/(mu (1 - s))
    // where s solves s = (2 l / (2 l + mu (1 - s)))^2 with l = 0.75, mu = 1.
    let mut s = 0.5_f64;
    for _ in 0..200 {
        s = (1.5 / (1.5 + 1.0 - s)).powi(2);
    }
    let r = 1.0 / (1.0 - s);
    let ex = simulate(
        &scenario(&TWO_SERVERS.replace("POLICY", "round_robin")),
        20,
        40_000,
        61,
    );
    assert_agrees(&ex, "class.jobs.response", r, 0.02);
    assert_agrees(&ex, "station.s1.utilisation", 0.75, 0.01);
    assert_agrees(&ex, "station.s2.utilisation", 0.75, 0.01);
}

#[test]
fn join_the_shortest_queue_lies_between_m_m_2_and_random_split() {
    let ex = simulate(
        &scenario(&TWO_SERVERS.replace("POLICY", "jsq")),
        20,
        40_000,
        62,
    );
    let ci = ex.interval(ex.index_of("class.jobs.response").unwrap(), 0.99);
    // M/M/2 at rho 0.75 (one shared queue) is the best any dispatcher can do: R = 16/7.
    let mm2 = 16.0 / 7.0;
    // A random split gives two M/M/1 queues at 0.75: R = 4.
    assert!(
        ci.mean - ci.half_width > mm2,
        "JSQ {} +- {} beats M/M/2 {mm2}",
        ci.mean,
        ci.half_width
    );
    assert!(
        ci.mean + ci.half_width < 3.0,
        "JSQ {} +- {} should be far better than a random split (4)",
        ci.mean,
        ci.half_width
    );
    // ties go to the first listed server, so s1 works more than s2; together they carry 1.5
    let u = |s: &str| {
        ex.interval(
            ex.index_of(&format!("station.{s}.utilisation")).unwrap(),
            0.99,
        )
        .mean
    };
    assert!(
        u("s1") > u("s2"),
        "ties favour s1: {} vs {}",
        u("s1"),
        u("s2")
    );
    assert!(
        (u("s1") + u("s2") - 1.5).abs() < 0.01,
        "total utilisation {}",
        u("s1") + u("s2")
    );
}

#[test]
fn class_switching_runs_a_loop_a_fixed_number_of_times() {
    let text = r#"
[[class]]
name = "first"

[[class]]
name = "second"

[[station]]
name = "arrivals"
kind = "source"
class = "first"
interarrival = { dist = "exp", rate = 0.5 }

[[station]]
name = "d"
kind = "delay"
service = { dist = "exp", mean = 1.0 }

[[route]]
class = "first"
from = "arrivals"
to = "d"

[[route]]
class = "first"
from = "d"
to = "d"
to_class = "second"

[[route]]
class = "second"
from = "d"
to = "exit"
"#;
    let ex = simulate(&scenario(text), 20, 20_000, 63);
    // two visits of mean 1 each; jobs leave as class "second"
    assert_agrees(&ex, "class.second.response", 2.0, 0.01);
    assert_agrees(&ex, "station.d.throughput", 1.0, 0.01);
    assert_agrees(&ex, "station.d.first.throughput", 0.5, 0.01);
}

#[test]
fn empirical_trace_service_matches_pollaczek_khinchine() {
    // Service drawn at random from {0.5, 1.5}: mean 1, SCV 0.25; rho 0.7.
    let dir = temp_scenario("trace_holder", "")
        .parent()
        .unwrap()
        .to_owned();
    std::fs::write(dir.join("two_point.txt"), "0.5\n1.5\n").unwrap();
    let text = open_single(
        0.7,
        "kind = \"fcfs\"\nservice = { dist = \"empirical\", file = \"two_point.txt\" }",
    );
    let path = temp_scenario("empirical", &text);
    let sc = parsim::scenario::load(&path).unwrap();
    let r = 1.0 + 0.7 * 1.25 / (2.0 * 0.3);
    assert_agrees(
        &simulate(&sc, 20, 100_000, 64),
        "class.jobs.response",
        r,
        0.01,
    );
}

#[test]
fn a_station_in_two_groups_counts_for_both() {
    // "b" is in a round-robin group and a JSQ group. The JSQ group used to see no counts (only
    // a station's first group was updated), so its ties sent every job from "b" back to "b":
    // the jobs never returned and the run stalled. With both groups counted, leaving "b" a job
    // finds its fellow jobs there and goes on to "c" (JSQ counts jobs present), and every cycle
    // passes "c" once: X_c = X_a.
    let sc = scenario(
        r#"
[[class]]
name = "jobs"
population = 5
reference = "a"

[[station]]
name = "a"
kind = "fcfs"
service = { dist = "exp", mean = 0.1 }

[[station]]
name = "b"
kind = "delay"
service = { dist = "exp", mean = 0.2 }

[[station]]
name = "c"
kind = "ps"
service = { dist = "exp", mean = 0.05 }

[[route]]
class = "jobs"
from = "a"
policy = "round_robin"
among = ["c", "b"]

[[route]]
class = "jobs"
from = "b"
policy = "jsq"
among = ["b", "c"]

[[route]]
class = "jobs"
from = "c"
to = "a"
"#,
    );
    let ex = simulate(&sc, 4, 20_000, 11);
    let x = |s: &str| {
        ex.interval(
            ex.index_of(&format!("station.{s}.throughput")).unwrap(),
            0.99,
        )
    };
    let (a, c) = (x("a"), x("c"));
    assert!(a.mean > 1.0, "{a:?}");
    assert!(
        (a.mean - c.mean).abs() <= a.half_width + c.half_width,
        "X_a {a:?} and X_c {c:?} differ"
    );
}
