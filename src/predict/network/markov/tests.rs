//! The exact chain against the closed forms where they exist, its internal consistency where
//! they do not, and its refusals.

use super::*;
use crate::analytic::{
    self, CenterKind, PriorityClass, erlang_a, load_dependent_station, mg1_priority_nonpreemptive,
    mg1_priority_preemptive, mmc_priority_nonpreemptive, mmck,
};
use crate::network::{Network, WhenFull, visits};
use crate::scenario::Workload;

/// The network of a scenario's text.
fn network(text: &str) -> Network {
    let sc = crate::scenario::parse(text, std::path::Path::new("test.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    match sc.workload {
        Workload::Network(net) => net,
        _ => panic!("not a network"),
    }
}

/// The full analysis and the chain's predictions in it, by metric.
fn chain_values(net: &Network) -> (Analysis, Vec<(String, f64)>) {
    let a = crate::predict::network::analyze(net);
    let values = a
        .predictions
        .iter()
        .filter(|p| p.method.starts_with(METHOD))
        .map(|p| (p.metric.clone(), p.value))
        .collect();
    (a, values)
}

/// The chain's prediction of `metric`.
fn value(values: &[(String, f64)], metric: &str) -> f64 {
    values
        .iter()
        .find(|(m, _)| m == metric)
        .unwrap_or_else(|| panic!("no prediction of {metric} in {values:?}"))
        .1
}

/// Asserts `got` is `want` to `1e-9` relative.
fn close(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1e-12),
        "{what}: chain {got}, closed form {want}"
    );
}

/// One open FCFS station `q` fed by one Poisson source per class (rates `lambda`, mean services
/// `means`, priorities `priority`), with the station's extra `features` lines.
fn open_station(lambda: &[f64], means: &[f64], priority: &[i32], features: &str) -> Network {
    let mut text = String::from("name = \"t\"\n");
    for (k, p) in priority.iter().enumerate() {
        text += &format!("[[class]]\nname = \"c{k}\"\npriority = {p}\n");
    }
    for (k, l) in lambda.iter().enumerate() {
        text += &format!(
            "[[station]]\nname = \"in{k}\"\nkind = \"source\"\nclass = \"c{k}\"\ninterarrival = {{ dist = \"exp\", rate = {l} }}\n"
        );
    }
    let service: Vec<String> = means
        .iter()
        .enumerate()
        .map(|(k, m)| format!("c{k} = {{ dist = \"exp\", mean = {m} }}"))
        .collect();
    text += &format!(
        "[[station]]\nname = \"q\"\nkind = \"fcfs\"\n{features}\nservice_by_class = {{ {} }}\n",
        service.join(", ")
    );
    for k in 0..lambda.len() {
        text += &format!(
            "[[route]]\nclass = \"c{k}\"\nfrom = \"in{k}\"\nto = \"q\"\n[[route]]\nclass = \"c{k}\"\nfrom = \"q\"\nto = \"exit\"\n"
        );
    }
    network(&text)
}

#[test]
fn mmck_is_the_birth_death_chain() {
    let net = open_station(&[2.0], &[1.0], &[0], "servers = 2\ncapacity = 5");
    let (_, v) = chain_values(&net);
    let m = mmck(2.0, 1.0, 2, 5).unwrap();
    close("loss", value(&v, "station.q.loss"), m.loss_probability);
    close("class loss", value(&v, "class.c0.loss"), m.loss_probability);
    close("number", value(&v, "station.q.number"), m.mean_number);
    close("response", value(&v, "station.q.response"), m.mean_response);
    close("wait", value(&v, "station.q.wait"), m.mean_wait);
    close(
        "throughput",
        value(&v, "station.q.throughput"),
        m.throughput,
    );
    close("busy", value(&v, "station.q.utilisation"), m.utilisation);
    close("class", value(&v, "class.c0.response"), m.mean_response);
}

#[test]
fn erlang_a_is_the_truncated_chain() {
    let net = open_station(
        &[3.0],
        &[1.0],
        &[0],
        "servers = 2\npatience = { dist = \"exp\", mean = 2.0 }",
    );
    let (a, v) = chain_values(&net);
    let label = &a
        .predictions
        .iter()
        .find(|p| p.method.starts_with(METHOD))
        .unwrap()
        .method;
    assert!(label.contains("truncated at"), "{label}");
    let m = erlang_a(3.0, 1.0, 2, 2.0).unwrap();
    close(
        "abandon",
        value(&v, "station.q.abandon"),
        m.abandon_probability,
    );
    close(
        "class abandon",
        value(&v, "class.c0.abandon"),
        m.abandon_probability,
    );
    close("number", value(&v, "station.q.number"), m.mean_number);
    close(
        "throughput",
        value(&v, "station.q.throughput"),
        m.throughput,
    );
    close("busy", value(&v, "station.q.utilisation"), m.utilisation);
    // the served jobs' times are not a state function: not predicted
    assert!(
        v.iter()
            .all(|(m, _)| m != "station.q.response" && m != "station.q.wait")
    );
}

/// The priority classes of an open station, for the formulas.
fn classes(lambda: &[f64], means: &[f64], priority: &[i32]) -> Vec<PriorityClass> {
    (0..lambda.len())
        .map(|k| PriorityClass {
            lambda: lambda[k],
            mean_service: means[k],
            scv: 1.0,
            level: priority[k] as u32 + 1,
        })
        .collect()
}

#[test]
fn two_class_head_of_line_priority_is_cobhams() {
    let (lambda, means, priority) = ([0.3, 0.4], [0.8, 1.2], [0, 1]);
    let net = open_station(
        &lambda,
        &means,
        &priority,
        "servers = 1\npriority = \"non-preemptive\"",
    );
    let (_, v) = chain_values(&net);
    let m = mg1_priority_nonpreemptive(&classes(&lambda, &means, &priority)).unwrap();
    for k in 0..2 {
        let cm = &m.classes[k];
        close(
            "response",
            value(&v, &format!("station.q.c{k}.response")),
            cm.mean_response,
        );
        close(
            "wait",
            value(&v, &format!("station.q.c{k}.wait")),
            cm.mean_wait,
        );
        close(
            "number",
            value(&v, &format!("station.q.c{k}.number")),
            cm.mean_number,
        );
        close(
            "class",
            value(&v, &format!("class.c{k}.response")),
            cm.mean_response,
        );
    }
    close("busy", value(&v, "station.q.utilisation"), m.utilisation);
}

#[test]
fn three_class_preemptive_resume_priority_is_exact() {
    let (lambda, means, priority) = ([0.1, 0.15, 0.1], [1.0, 0.5, 1.5], [0, 1, 2]);
    let net = open_station(
        &lambda,
        &means,
        &priority,
        "servers = 1\npriority = \"preemptive-resume\"",
    );
    // 25,043 states: over the limit at budget factor 1
    let (_, v) = cost::with_budget(3.0, || chain_values(&net));
    let m = mg1_priority_preemptive(&classes(&lambda, &means, &priority)).unwrap();
    for k in 0..3 {
        let cm = &m.classes[k];
        close(
            "response",
            value(&v, &format!("station.q.c{k}.response")),
            cm.mean_response,
        );
        close(
            "number",
            value(&v, &format!("station.q.c{k}.number")),
            cm.mean_number,
        );
    }
    close("number", value(&v, "station.q.number"), m.mean_number);
}

#[test]
fn multi_server_head_of_line_priority_is_exact() {
    let (lambda, means, priority) = ([0.6, 0.6], [1.0, 1.0], [0, 1]);
    let net = open_station(
        &lambda,
        &means,
        &priority,
        "servers = 3\npriority = \"non-preemptive\"",
    );
    let (_, v) = chain_values(&net);
    let m = mmc_priority_nonpreemptive(&classes(&lambda, &means, &priority), 3).unwrap();
    for k in 0..2 {
        let cm = &m.classes[k];
        close(
            "wait",
            value(&v, &format!("station.q.c{k}.wait")),
            cm.mean_wait,
        );
        close(
            "response",
            value(&v, &format!("station.q.c{k}.response")),
            cm.mean_response,
        );
    }
}

#[test]
fn open_load_dependent_station_is_exact() {
    let net = open_station(
        &[1.5],
        &[1.0],
        &[0],
        "servers = 1\nrate_by_jobs = [1.0, 1.6, 2.0]",
    );
    let (_, v) = chain_values(&net);
    let m = load_dependent_station(1.5, 1.0, &[1.0, 1.6, 2.0]).unwrap();
    close("number", value(&v, "station.q.number"), m.mean_number);
    close("response", value(&v, "station.q.response"), m.mean_response);
}

/// A closed network: `n` jobs between a delay (think) and two FCFS queues, visited in turn;
/// the queues' extra lines are `features`, each with its own class set.
const CLOSED: &str = r#"
name = "closed"
[[class]]
name = "a"
population = 4
reference = "think"
[[station]]
name = "think"
kind = "delay"
service = { dist = "exp", mean = 3.0 }
[[station]]
name = "cpu"
kind = "fcfs"
servers = 1
service = { dist = "exp", mean = 0.4 }
[[station]]
name = "disk"
kind = "fcfs"
servers = 2
service = { dist = "exp", mean = 0.9 }
[[route]]
class = "a"
from = "think"
to = "cpu"
[[route]]
class = "a"
from = "cpu"
branches = [{ to = "disk", p = 0.6 }, { to = "think", p = 0.4 }]
[[route]]
class = "a"
from = "disk"
to = "cpu"
"#;

#[test]
fn closed_product_form_network_is_mvas() {
    let net = network(CLOSED);
    let (_, v) = chain_values(&net);
    let visits = visits(&net).unwrap();
    let centers = [
        (CenterKind::Delay, 3.0 * visits[0][0]),
        (CenterKind::Queue, 0.4 * visits[0][1]),
        (CenterKind::MultiServer(2), 0.9 * visits[0][2]),
    ]
    .map(|(kind, demand)| analytic::Center { kind, demand });
    let sol = analytic::mva(&centers, 4).unwrap();
    let full = sol.full();
    close("cycle", value(&v, "class.a.cycle"), full.response_time);
    close(
        "throughput",
        value(&v, "class.a.throughput"),
        full.throughput,
    );
    for (k, s) in ["think", "cpu", "disk"].iter().enumerate() {
        close(
            "number",
            value(&v, &format!("station.{s}.number")),
            full.queue_length[k],
        );
    }
    close(
        "busy",
        value(&v, "station.disk.utilisation"),
        full.utilisation[2].unwrap(),
    );
}

/// The tandem of the validation case: Poisson arrivals (rate 0.9) to `a` (one server, mean
/// 0.8, room for 4, losing), then `b` (one server, mean 0.9, room for 2, `when_full` as given).
fn tandem(when_full: WhenFull) -> Network {
    let mut net = network(
        r#"
name = "tandem"
[[class]]
name = "jobs"
[[station]]
name = "arrivals"
kind = "source"
class = "jobs"
interarrival = { dist = "exp", rate = 0.9 }
[[station]]
name = "a"
kind = "fcfs"
servers = 1
capacity = 4
service = { dist = "exp", mean = 0.8 }
[[station]]
name = "b"
kind = "fcfs"
servers = 1
capacity = 2
service = { dist = "exp", mean = 0.9 }
[[route]]
class = "jobs"
from = "arrivals"
to = "a"
[[route]]
class = "jobs"
from = "a"
to = "b"
[[route]]
class = "jobs"
from = "b"
to = "exit"
"#,
    );
    if let Some(c) = &mut net.stations[2].features.capacity {
        c.when_full = when_full;
    }
    net
}

/// The stationary distribution of `net`'s chain.
fn solved(net: &Network) -> (Chain<'_>, Stationary<chain::State>) {
    let chain = Chain::new(net).unwrap();
    let pi = StateSpace::explore(&chain).unwrap().stationary().unwrap();
    (chain, pi)
}

#[test]
fn blocking_tandem_balances_its_flows() {
    let net = tandem(WhenFull::Block);
    let (chain, pi) = solved(&net);
    // a finite chain: 5 x 3 places, less the states where b is not full and a job is blocked
    assert!(!chain.unbounded());
    let total: f64 = pi.probabilities().iter().sum();
    assert!((total - 1.0).abs() < 1e-12, "probabilities sum to {total}");
    // a job is blocked only while b is full, and holds a's server
    for (state, p) in pi.iter() {
        let w = chain.decode(state);
        if !w.blocked[2].is_empty() {
            assert!(p == 0.0 || chain.present(&w, 2) == 2, "{w:?}");
            assert_eq!(w.serving[1][0], 0, "{w:?}");
        }
    }
    let (_, v) = chain_values(&net);
    let (xa, xb) = (
        value(&v, "station.a.throughput"),
        value(&v, "station.b.throughput"),
    );
    let loss = value(&v, "station.a.loss");
    close("flow a = b", xa, xb);
    close("flow a = lambda (1 - loss)", xa, 0.9 * (1.0 - loss));
    assert_eq!(value(&v, "station.b.loss"), 0.0);
    for s in ["a", "b"] {
        let n = value(&v, &format!("station.{s}.number"));
        let r = value(&v, &format!("station.{s}.response"));
        close("Little", n, r * xa);
    }
    // b serves whenever it has a job, a also while its job is blocked
    close("b busy", value(&v, "station.b.utilisation"), xb * 0.9);
    assert!(value(&v, "station.a.utilisation") > xa * 0.8 + 1e-3);
    close(
        "end to end",
        value(&v, "class.jobs.response"),
        value(&v, "station.a.response") + value(&v, "station.b.response"),
    );
    // blocking keeps jobs in a that losing at b would drop
    let (_, lose) = chain_values(&tandem(WhenFull::Lose));
    assert!(value(&v, "station.a.number") > value(&lose, "station.a.number"));
    assert!(value(&lose, "station.b.loss") > 0.0);
}

/// Two closed classes sharing a priority FCFS station and a delay.
const PRIORITY_CLOSED: &str = r#"
name = "priority closed"
[[class]]
name = "urgent"
population = 3
reference = "think"
priority = 0
[[class]]
name = "batch"
population = 4
reference = "think"
priority = 1
[[station]]
name = "think"
kind = "delay"
service_by_class = { urgent = { dist = "exp", mean = 4.0 }, batch = { dist = "exp", mean = 2.0 } }
[[station]]
name = "cpu"
kind = "fcfs"
servers = 1
priority = "non-preemptive"
service_by_class = { urgent = { dist = "exp", mean = 0.5 }, batch = { dist = "exp", mean = 0.8 } }
[[route]]
class = "urgent"
from = "think"
to = "cpu"
[[route]]
class = "urgent"
from = "cpu"
to = "think"
[[route]]
class = "batch"
from = "think"
to = "cpu"
[[route]]
class = "batch"
from = "cpu"
to = "think"
"#;

#[test]
fn closed_priority_classes_are_consistent() {
    let net = network(PRIORITY_CLOSED);
    let (_, v) = chain_values(&net);
    for (c, n) in [("urgent", 3.0), ("batch", 4.0)] {
        let x = value(&v, &format!("class.{c}.throughput"));
        let at = |s: &str, f: &str| value(&v, &format!("station.{s}.{c}.{f}"));
        close("population", at("think", "number") + at("cpu", "number"), n);
        close("flow", at("think", "throughput"), x);
        close("flow", at("cpu", "throughput"), x);
        close("cycle", value(&v, &format!("class.{c}.cycle")), n / x);
        close(
            "think time",
            at("think", "response"),
            if c == "urgent" { 4.0 } else { 2.0 },
        );
        close(
            "response",
            value(&v, &format!("class.{c}.response")),
            at("cpu", "response"),
        );
    }
    let busy =
        value(&v, "class.urgent.throughput") * 0.5 + value(&v, "class.batch.throughput") * 0.8;
    close(
        "utilisation law",
        value(&v, "station.cpu.utilisation"),
        busy,
    );
    // the urgent class waits less per visit though it is served faster
    assert!(value(&v, "station.cpu.urgent.wait") < value(&v, "station.cpu.batch.wait"));
}

#[test]
fn non_exponential_times_are_refused_by_name() {
    let mut net = open_station(&[0.5], &[1.0], &[0], "servers = 1\ncapacity = 3");
    let StationKind::Queue { service, .. } = &mut net.stations[1].kind else {
        panic!()
    };
    service[0] = Some(crate::dist::Dist::deterministic(1.0).unwrap());
    let a = crate::predict::network::analyze(&net);
    let refusal = a.refusals.iter().find(|r| r.method == METHOD).unwrap();
    assert!(
        refusal.reason.contains("station \"q\" has service SCV 0"),
        "{}",
        refusal.reason
    );
    assert!(a.predictions.iter().all(|p| !p.method.starts_with(METHOD)));
}

#[test]
fn a_chain_over_the_state_limit_is_refused() {
    let net = network(CLOSED);
    let v = visits(&net).unwrap();
    let states = solve(&net, &v, 1000).unwrap().states;
    let err = solve(&net, &v, states - 1).unwrap_err();
    assert!(
        err.contains(&format!("over the limit of {} states", states - 1)),
        "{err}"
    );
}

#[test]
fn a_blocking_deadlock_is_refused_with_its_stations() {
    let mut net = network(
        r#"
name = "deadlock"
[[class]]
name = "a"
population = 3
reference = "think"
[[station]]
name = "think"
kind = "delay"
service = { dist = "exp", mean = 1.0 }
[[station]]
name = "x"
kind = "fcfs"
servers = 1
service = { dist = "exp", mean = 1.0 }
[[station]]
name = "y"
kind = "fcfs"
servers = 1
service = { dist = "exp", mean = 1.0 }
[[route]]
class = "a"
from = "think"
to = "x"
[[route]]
class = "a"
from = "x"
to = "y"
[[route]]
class = "a"
from = "y"
branches = [{ to = "x", p = 0.5 }, { to = "think", p = 0.5 }]
"#,
    );
    for s in 1..3 {
        net.stations[s].features.capacity = Some(crate::network::Capacity {
            jobs: 1,
            when_full: WhenFull::Block,
        });
    }
    let v = visits(&net).unwrap();
    let err = solve(&net, &v, 10_000).unwrap_err();
    assert!(
        err.contains("deadlock") && err.contains("\"x\", \"y\""),
        "{err}"
    );
}

/// Poisson arrivals (rate 1.5) split by `rule` (`round_robin` or `jsq`) between two
/// exponential servers of mean 1.
fn split(rule: &str) -> Network {
    network(&format!(
        r#"
name = "split"
[[class]]
name = "jobs"
[[station]]
name = "arrivals"
kind = "source"
class = "jobs"
interarrival = {{ dist = "exp", rate = 1.5 }}
[[station]]
name = "s1"
kind = "fcfs"
service = {{ dist = "exp", mean = 1.0 }}
[[station]]
name = "s2"
kind = "fcfs"
service = {{ dist = "exp", mean = 1.0 }}
[[route]]
class = "jobs"
from = "arrivals"
policy = "{rule}"
among = ["s1", "s2"]
[[route]]
class = "jobs"
from = "s1"
to = "exit"
[[route]]
class = "jobs"
from = "s2"
to = "exit"
"#
    ))
}

#[test]
fn round_robin_makes_erlang_arrivals() {
    // two queues and the pointer truncated at 100 jobs: over the limit at budget factor 1
    let (_, v) = cost::with_budget(4.0, || chain_values(&split("round_robin")));
    // each server sees Erlang-2 gaps of rate 1.5 per phase: E2/M/1, whose response is
    // 1 / (mu (1 - s)) with s the root of s = (1.5 / (2.5 - s))^2
    let mut s: f64 = 0.5;
    for _ in 0..200 {
        s = (1.5 / (2.5 - s)).powi(2);
    }
    for st in ["s1", "s2"] {
        close(
            "response",
            value(&v, &format!("station.{st}.response")),
            1.0 / (1.0 - s),
        );
        close(
            "throughput",
            value(&v, &format!("station.{st}.throughput")),
            0.75,
        );
    }
}

#[test]
fn the_shortest_queue_beats_a_random_split() {
    let (_, v) = cost::with_budget(4.0, || chain_values(&split("jsq")));
    let r = value(&v, "class.jobs.response");
    // between M/M/2 (one queue, 16/7) and two M/M/1 queues of rate 0.75 (4)
    assert!(r > 16.0 / 7.0 + 0.01 && r < 4.0 - 0.01, "{r}");
    // ties go to s1: it serves more
    assert!(value(&v, "station.s1.throughput") > value(&v, "station.s2.throughput") + 1e-3);
    close(
        "flow",
        value(&v, "station.s1.throughput") + value(&v, "station.s2.throughput"),
        1.5,
    );
}
