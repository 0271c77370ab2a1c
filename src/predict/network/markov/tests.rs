//! The exact chain against the closed forms where they exist, its internal consistency where
//! they do not, and its refusals.

use super::*;
use crate::analytic::{
    self, CenterKind, PriorityClass, erlang_a, load_dependent_station, mg1_priority_nonpreemptive,
    mg1_priority_preemptive, mmc_priority_nonpreemptive, mmck,
};
use crate::dist::Dist;
use crate::network::{
    Capacity, Class, ClassId, Discipline, Features, Network, Preemption, Routing, Rule, Station,
    StationId, StationKind, Target, WhenFull, visits,
};
use crate::time::Clock;

/// An exponential time of mean `mean`.
fn exp(mean: f64) -> Option<Dist> {
    Some(Dist::exponential(mean).unwrap())
}

/// A station named `name`.
fn station(name: &str, kind: StationKind, features: Features) -> Station {
    Station {
        name: name.to_owned(),
        kind,
        features,
    }
}

/// A Poisson source of `class` at `rate`.
fn source(name: &str, class: u32, rate: f64) -> Station {
    let interarrival = exp(1.0 / rate).unwrap();
    station(
        name,
        StationKind::Source {
            class: ClassId(class),
            interarrival,
        },
        Features::default(),
    )
}

/// An FCFS queue with `servers` and the exponential services of `means` by class (0: none).
fn fcfs(name: &str, servers: u32, means: &[f64], features: Features) -> Station {
    let service = means
        .iter()
        .map(|&m| (m > 0.0).then(|| exp(m)).flatten())
        .collect();
    let kind = StationKind::Queue {
        discipline: Discipline::Fcfs,
        servers,
        service,
    };
    station(name, kind, features)
}

/// A delay with the exponential services of `means` by class.
fn delay(name: &str, means: &[f64]) -> Station {
    let service = means.iter().map(|&m| exp(m)).collect();
    station(name, StationKind::Delay { service }, Features::default())
}

/// A class: open, or closed with `population` jobs starting at station `reference`.
fn class(name: &str, closed: Option<(u32, u32)>, priority: i32) -> Class {
    Class {
        name: name.to_owned(),
        kind: closed.map_or(ClassKind::Open, |(population, reference)| {
            ClassKind::Closed {
                population,
                reference: StationId(reference),
            }
        }),
        priority,
    }
}

/// To station `s`, as class `c`.
fn to(s: u32, c: u32) -> Target {
    Target::Station(StationId(s), ClassId(c))
}

/// A random rule: each target with its probability.
fn random(branches: &[(Target, f64)]) -> Rule {
    let mut sum = 0.0;
    let cumulative = branches
        .iter()
        .map(|b| {
            sum += b.1;
            sum
        })
        .collect();
    Rule::Random {
        cumulative,
        targets: branches.iter().map(|b| b.0).collect(),
    }
}

/// The network of `stations` and `classes` with the rules `routes` (class, from station,
/// rule) and routing `groups`.
fn build(
    stations: Vec<Station>,
    classes: Vec<Class>,
    routes: Vec<(u32, u32, Rule)>,
    groups: Vec<Vec<StationId>>,
) -> Network {
    let mut routing = Routing::new(classes.len(), stations.len());
    for (c, s, rule) in routes {
        routing.set(ClassId(c), StationId(s), rule);
    }
    let mut net = Network {
        stations,
        classes,
        routing,
        groups,
        clock: Clock::for_scale(1.0),
        paths: Vec::new(),
    };
    net.set_clock();
    net
}

/// Features with a capacity of `k` that loses.
fn capacity(k: u32) -> Features {
    Features {
        capacity: Some(Capacity {
            jobs: k,
            when_full: WhenFull::Lose,
        }),
        ..Features::default()
    }
}

/// Features with priorities.
fn prioritised(p: Preemption) -> Features {
    Features {
        priority: Some(p),
        ..Features::default()
    }
}

/// The chain's analysis of `net` alone (the other methods would keep it from the metrics they
/// predict exactly) and its predictions, by metric.
fn chain_values(net: &Network) -> (Analysis, Vec<(String, f64)>) {
    let mut a = Analysis::default();
    analyze(net, &visits(net).unwrap(), &mut a);
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

/// Asserts the chain's `figures` of each class `c<k>` at station `q` (`"class"`: its end-to-end
/// response) equal the formula's per-class results `classes`.
fn close_classes(
    v: &[(String, f64)],
    classes: &[crate::analytic::StationMetrics],
    figures: &[&str],
) {
    for (k, cm) in classes.iter().enumerate() {
        for &figure in figures {
            let (metric, want) = match figure {
                "response" => (format!("station.q.c{k}.response"), cm.mean_response),
                "wait" => (format!("station.q.c{k}.wait"), cm.mean_wait),
                "number" => (format!("station.q.c{k}.number"), cm.mean_number),
                "class" => (format!("class.c{k}.response"), cm.mean_response),
                other => panic!("no figure {other:?}"),
            };
            close(figure, value(v, &metric), want);
        }
    }
}

/// Asserts `got` is `want` to `1e-9` relative.
fn close(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1e-12),
        "{what}: chain {got}, closed form {want}"
    );
}

/// One open FCFS station `q` (station `k` for `k` classes) fed by one Poisson source per class
/// (rates `lambda`, mean services `means`, priorities `priority`), with `servers` and
/// `features`.
fn open_station(
    lambda: &[f64],
    means: &[f64],
    priority: &[i32],
    servers: u32,
    features: Features,
) -> Network {
    let k = lambda.len() as u32;
    let mut stations: Vec<Station> = (0..k)
        .map(|c| source(&format!("in{c}"), c, lambda[c as usize]))
        .collect();
    stations.push(fcfs("q", servers, means, features));
    let classes = (0..k)
        .map(|c| class(&format!("c{c}"), None, priority[c as usize]))
        .collect();
    let routes = (0..k)
        .flat_map(|c| {
            [
                (c, c, Rule::Fixed(to(k, c))),
                (c, k, Rule::Fixed(Target::Exit)),
            ]
        })
        .collect();
    build(stations, classes, routes, Vec::new())
}

#[test]
fn mmck_is_the_birth_death_chain() {
    let net = open_station(&[2.0], &[1.0], &[0], 2, capacity(5));
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
        2,
        Features {
            patience: exp(2.0),
            ..Features::default()
        },
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
        1,
        prioritised(Preemption::NonPreemptive),
    );
    let (_, v) = chain_values(&net);
    let m = mg1_priority_nonpreemptive(&classes(&lambda, &means, &priority)).unwrap();
    close_classes(&v, &m.classes, &["response", "wait", "number", "class"]);
    close("busy", value(&v, "station.q.utilisation"), m.utilisation);
}

#[test]
fn three_class_preemptive_resume_priority_is_exact() {
    let (lambda, means, priority) = ([0.1, 0.15, 0.1], [1.0, 0.5, 1.5], [0, 1, 2]);
    let net = open_station(
        &lambda,
        &means,
        &priority,
        1,
        prioritised(Preemption::PreemptiveResume),
    );
    // 25,043 states: over the limit at budget factor 1
    let (_, v) = cost::with_budget(3.0, || chain_values(&net));
    let m = mg1_priority_preemptive(&classes(&lambda, &means, &priority)).unwrap();
    close_classes(&v, &m.classes, &["response", "number"]);
    close("number", value(&v, "station.q.number"), m.mean_number);
}

#[test]
fn multi_server_head_of_line_priority_is_exact() {
    let (lambda, means, priority) = ([0.6, 0.6], [1.0, 1.0], [0, 1]);
    let net = open_station(
        &lambda,
        &means,
        &priority,
        3,
        prioritised(Preemption::NonPreemptive),
    );
    let (_, v) = chain_values(&net);
    let m = mmc_priority_nonpreemptive(&classes(&lambda, &means, &priority), 3).unwrap();
    close_classes(&v, &m.classes, &["wait", "response"]);
}

#[test]
fn open_load_dependent_station_is_exact() {
    let net = open_station(
        &[1.5],
        &[1.0],
        &[0],
        1,
        Features {
            rate_by_jobs: Some(vec![1.0, 1.6, 2.0]),
            ..Features::default()
        },
    );
    let (_, v) = chain_values(&net);
    let m = load_dependent_station(1.5, 1.0, &[1.0, 1.6, 2.0]).unwrap();
    close("number", value(&v, "station.q.number"), m.mean_number);
    close("response", value(&v, "station.q.response"), m.mean_response);
}

/// A closed network: 4 jobs from a delay (think, mean 3) to an FCFS server (mean 0.4), then to
/// a two-server FCFS disk (mean 0.9, probability 0.6, then back to the server) or back to think.
fn closed() -> Network {
    let stations = vec![
        delay("think", &[3.0]),
        fcfs("cpu", 1, &[0.4], Features::default()),
        fcfs("disk", 2, &[0.9], Features::default()),
    ];
    let routes = vec![
        (0, 0, Rule::Fixed(to(1, 0))),
        (0, 1, random(&[(to(2, 0), 0.6), (to(0, 0), 0.4)])),
        (0, 2, Rule::Fixed(to(1, 0))),
    ];
    build(
        stations,
        vec![class("a", Some((4, 0)), 0)],
        routes,
        Vec::new(),
    )
}

#[test]
fn closed_product_form_network_is_mvas() {
    let net = closed();
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
    let mut b = capacity(2);
    if let Some(c) = &mut b.capacity {
        c.when_full = when_full;
    }
    let stations = vec![
        source("arrivals", 0, 0.9),
        fcfs("a", 1, &[0.8], capacity(4)),
        fcfs("b", 1, &[0.9], b),
    ];
    let routes = vec![
        (0, 0, Rule::Fixed(to(1, 0))),
        (0, 1, Rule::Fixed(to(2, 0))),
        (0, 2, Rule::Fixed(Target::Exit)),
    ];
    build(stations, vec![class("jobs", None, 0)], routes, Vec::new())
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
    assert!(
        v.iter().all(|(k, _)| k != "station.b.loss"),
        "a blocking station loses nothing and has no loss metric"
    );
    for s in ["a", "b"] {
        let n = value(&v, &format!("station.{s}.number"));
        let r = value(&v, &format!("station.{s}.response"));
        close("Little", n, r * xa);
    }
    // a server holding a blocked job is not busy (as the simulator counts): both stations'
    // utilisations are throughput x mean service, though a's jobs stay longer than served
    close("b busy", value(&v, "station.b.utilisation"), xb * 0.9);
    close("a busy", value(&v, "station.a.utilisation"), xa * 0.8);
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

/// Two closed classes (3 urgent jobs of priority 0, 4 batch jobs of priority 1) between a
/// delay (means 4 and 2) and a head-of-line priority FCFS server (means 0.5 and 0.8): the
/// network of `validation/ctmc_priority_closed_two_class.toml`.
fn priority_closed() -> Network {
    let stations = vec![
        delay("think", &[4.0, 2.0]),
        fcfs(
            "cpu",
            1,
            &[0.5, 0.8],
            prioritised(Preemption::NonPreemptive),
        ),
    ];
    let routes = (0..2)
        .flat_map(|c| [(c, 0, Rule::Fixed(to(1, c))), (c, 1, Rule::Fixed(to(0, c)))])
        .collect();
    let classes = vec![
        class("urgent", Some((3, 0)), 0),
        class("batch", Some((4, 0)), 1),
    ];
    build(stations, classes, routes, Vec::new())
}

#[test]
fn closed_priority_classes_are_consistent() {
    let net = priority_closed();
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
    // the tandem, which no formula covers, with a deterministic service at "b"
    let mut net = tandem(WhenFull::Lose);
    let StationKind::Queue { service, .. } = &mut net.stations[2].kind else {
        panic!()
    };
    service[0] = Some(Dist::deterministic(0.9).unwrap());
    let a = crate::predict::network::analyze(&net);
    let refusal = a.refusals.iter().find(|r| r.method == METHOD).unwrap();
    assert!(
        refusal.reason.contains("station \"b\" has service SCV 0"),
        "{}",
        refusal.reason
    );
    assert!(a.predictions.iter().all(|p| !p.method.starts_with(METHOD)));
}

#[test]
fn a_chain_over_the_state_limit_is_refused() {
    let net = closed();
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
    let stations = vec![
        delay("think", &[1.0]),
        fcfs("x", 1, &[1.0], Features::default()),
        fcfs("y", 1, &[1.0], Features::default()),
    ];
    let routes = vec![
        (0, 0, Rule::Fixed(to(1, 0))),
        (0, 1, Rule::Fixed(to(2, 0))),
        (0, 2, random(&[(to(1, 0), 0.5), (to(0, 0), 0.5)])),
    ];
    let mut net = build(
        stations,
        vec![class("a", Some((3, 0)), 0)],
        routes,
        Vec::new(),
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

/// Poisson arrivals (rate 1.5) split by `rule` (round robin or the shortest queue, of group 0)
/// between two
/// exponential servers of mean 1.
fn split(rule: fn(u32, ClassId) -> Rule) -> Network {
    let stations = vec![
        source("arrivals", 0, 1.5),
        fcfs("s1", 1, &[1.0], Features::default()),
        fcfs("s2", 1, &[1.0], Features::default()),
    ];
    let routes = vec![
        (0, 0, rule(0, ClassId(0))),
        (0, 1, Rule::Fixed(Target::Exit)),
        (0, 2, Rule::Fixed(Target::Exit)),
    ];
    let groups = vec![vec![StationId(1), StationId(2)]];
    build(stations, vec![class("jobs", None, 0)], routes, groups)
}

#[test]
fn round_robin_makes_erlang_arrivals() {
    // two queues and the pointer truncated at 100 jobs: over the limit at budget factor 1
    let (_, v) = cost::with_budget(4.0, || {
        chain_values(&split(|group, class| Rule::RoundRobin { group, class }))
    });
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
    let (_, v) = cost::with_budget(4.0, || {
        chain_values(&split(|group, class| Rule::ShortestQueue { group, class }))
    });
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

/// One FCFS station `q` with `servers` exponential servers of mean `mean`, fed by one source
/// whose inter-arrival times are `interarrival`.
fn fed_by(interarrival: Dist, servers: u32, mean: f64) -> Network {
    let mut net = open_station(&[1.0], &[mean], &[0], servers, Features::default());
    let StationKind::Source {
        interarrival: d, ..
    } = &mut net.stations[0].kind
    else {
        panic!("station 0 is the source")
    };
    *d = interarrival;
    net
}

/// Asserts the chain's means at station `q` equal `want`.
fn close_station(v: &[(String, f64)], want: &crate::analytic::StationMetrics) {
    close("number", value(v, "station.q.number"), want.mean_number);
    close(
        "response",
        value(v, "station.q.response"),
        want.mean_response,
    );
    close("wait", value(v, "station.q.wait"), want.mean_wait);
    close(
        "throughput",
        value(v, "station.q.throughput"),
        want.throughput,
    );
    close("class", value(v, "class.c0.response"), want.mean_response);
}

/// An MMPP(2) of mean rate 0.8: 1.2 in phase 1, 0.2 in phase 2, leaving them at 0.2 and 0.3.
fn bursty() -> Dist {
    crate::dist::ArrivalSpec::Mmpp2 {
        rates: vec![1.2, 0.2],
        switching: vec![0.2, 0.3],
    }
    .build()
    .unwrap()
}

#[test]
fn mmpp2_into_exponential_servers_is_the_quasi_birth_death_solution() {
    // independent: the matrix-analytic solutions (logarithmic reduction of the QBD's R)
    let map = bursty().arrival_process().unwrap().map().clone();
    let ph = crate::analytic::mam::Ph::exponential(1.0).unwrap();
    let one = crate::analytic::mam::map_ph1(&map, &ph).unwrap();
    let (_, v) = chain_values(&fed_by(bursty(), 1, 1.0));
    close_station(&v, &one.metrics);
    let two = crate::analytic::mam::map_mc(&map, 2.0, 2).unwrap();
    let (_, v) = chain_values(&fed_by(bursty(), 2, 2.0));
    close_station(&v, &two.metrics);
}

#[test]
fn erlang_renewal_arrivals_are_the_gi_m_1_root() {
    let erlang = crate::dist::DistSpec::erlang(3, 1.25)
        .build(std::path::Path::new("."))
        .unwrap();
    let want = crate::analytic::mam::gim1(&|s| erlang.laplace(s).unwrap(), 0.8, 1.0, 1).unwrap();
    let (_, v) = chain_values(&fed_by(erlang, 1, 1.0));
    close_station(&v, &want.metrics);
}

#[test]
fn a_bursty_tandem_carries_its_arrival_rate_through_both_stations() {
    // MMPP(2) into two exponential queues in series: the first is the MAP/M/1 queue, the
    // second has no closed form; at both, the throughput (from the rates of the departures)
    // is the arrival rate and the busy fraction (from the stationary law) is rate x service
    let stations = vec![
        source("arrivals", 0, 0.8),
        fcfs("a", 1, &[0.5], Features::default()),
        fcfs("b", 1, &[0.6], Features::default()),
    ];
    let routes = vec![
        (0, 0, Rule::Fixed(to(1, 0))),
        (0, 1, Rule::Fixed(to(2, 0))),
        (0, 2, Rule::Fixed(Target::Exit)),
    ];
    let mut net = build(stations, vec![class("jobs", None, 0)], routes, Vec::new());
    let StationKind::Source { interarrival, .. } = &mut net.stations[0].kind else {
        panic!("station 0 is the source")
    };
    *interarrival = bursty();
    let (a, v) = chain_values(&net);
    assert!(a.refusals.is_empty(), "{:?}", a.refusals);
    for (s, mean) in [("a", 0.5), ("b", 0.6)] {
        close(
            "throughput",
            value(&v, &format!("station.{s}.throughput")),
            0.8,
        );
        close(
            "busy",
            value(&v, &format!("station.{s}.utilisation")),
            0.8 * mean,
        );
    }
    let map = bursty().arrival_process().unwrap().map().clone();
    let ph = crate::analytic::mam::Ph::exponential(2.0).unwrap();
    let first = crate::analytic::mam::map_ph1(&map, &ph).unwrap().metrics;
    close("a's wait", value(&v, "station.a.wait"), first.mean_wait);
    close(
        "a's number",
        value(&v, "station.a.number"),
        first.mean_number,
    );
}

#[test]
fn a_one_phase_bmap_is_the_compound_poisson_queue_of_m_x_g_1() {
    // batches of 1 at rate 0.3 and of 3 at 0.1 (job rate 0.6): E[X] = 1.5, E[X^2] = 3,
    // into one exponential server of mean 1; independent: Chaudhry and Templeton's M^X/G/1
    let interarrival = crate::dist::ArrivalSpec::Bmap {
        d0: vec![vec![-0.4]],
        d: vec![vec![vec![0.3]], vec![vec![0.0]], vec![vec![0.1]]],
    }
    .build()
    .unwrap();
    let (mean, second_moment) = interarrival.arrival_process().unwrap().batch_moments();
    close("E[X]", mean, 1.5);
    close("E[X^2]", second_moment, 3.0);
    let mut net = fed_by(interarrival, 1, 1.0);
    net.stations[0].features.batch = Some(crate::network::Batch::Markovian {
        mean,
        second_moment,
    });
    let size = crate::analytic::BatchSize {
        mean,
        second_moment,
    };
    let want = crate::analytic::mxg1(0.4, size, 1.0, 1.0).unwrap();
    let (_, v) = chain_values(&net);
    close_station(&v, &want);
}
