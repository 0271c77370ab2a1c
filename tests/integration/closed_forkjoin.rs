//! Closed fork-join networks solved by composite centres: every station gets a prediction, and
//! the composite values check against hand computations, exact MVA and the SPMD equations.

use parsim::analytic::{Center, CenterKind, harmonic, mva};
use parsim::predict::Analysis;
use parsim::predict::network::analyze;
use parsim::study::analyze_scenario;

use super::util::{load, scenario};

/// The value of `metric` by the method whose label starts with `method`.
fn value(a: &Analysis, metric: &str, method: &str) -> f64 {
    a.predictions
        .iter()
        .find(|p| p.metric == metric && p.method.starts_with(method))
        .unwrap_or_else(|| panic!("no {method:?} for {metric}: {:?}", a.predictions))
        .value
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

const VARKI: &str = "Varki mean-value approximation (closed fork-join)";

#[test]
fn varki_at_one_job_gives_each_queue_its_service_and_the_fork_the_expected_maximum() {
    let a = analyze(
        load("validation/closed_fork_join_n1.toml")
            .network()
            .unwrap(),
    );
    // one job: it finds every branch empty, the fork lasts H_4 x 0.5 = 25/24, the cycle 2 + 25/24
    let fork = harmonic(4) * 0.5;
    assert!(close(fork, 25.0 / 24.0, 1e-15));
    let x = 1.0 / (2.0 + fork);
    assert!(close(
        value(&a, "class.jobs.cycle", VARKI),
        2.0 + fork,
        1e-12
    ));
    assert!(close(
        value(&a, "station.split.response", VARKI),
        fork,
        1e-12
    ));
    assert!(close(
        value(&a, "station.split.number", VARKI),
        x * fork,
        1e-12
    ));
    assert!(close(
        value(&a, "station.think.number", VARKI),
        x * 2.0,
        1e-12
    ));
    assert!(close(value(&a, "class.jobs.response", VARKI), fork, 1e-12));
    for b in ["b1", "b2", "b3", "b4"] {
        assert!(close(
            value(&a, &format!("station.{b}.response"), VARKI),
            0.5,
            1e-12
        ));
        assert_eq!(value(&a, &format!("station.{b}.wait"), VARKI), 0.0);
        // forced flow: U = X V S at the method's throughput
        assert!(close(
            value(&a, &format!("station.{b}.utilisation"), VARKI),
            x * 0.5,
            1e-12
        ));
        assert!(close(
            value(&a, &format!("station.{b}.number"), VARKI),
            x * 0.5,
            1e-12
        ));
        assert!(close(
            value(&a, &format!("station.{b}.residence"), VARKI),
            0.5,
            1e-12
        ));
    }
    assert!(
        a.predictions
            .iter()
            .all(|p| !p.method.starts_with(VARKI) || !p.exact)
    );
}

#[test]
fn varki_branch_values_obey_forced_flow_and_littles_law_at_four_jobs() {
    let a = analyze(
        load("validation/closed_fork_join_n4.toml")
            .network()
            .unwrap(),
    );
    let x = value(&a, "class.jobs.throughput", VARKI);
    let cycle = value(&a, "class.jobs.cycle", VARKI);
    assert!(close(x * cycle, 4.0, 1e-12));
    let r = value(&a, "station.b1.response", VARKI);
    // a task waits (0.5 < R) but leaves no later than its job's maximum
    assert!(r > 0.5 && r < value(&a, "station.split.response", VARKI));
    assert!(close(
        value(&a, "station.b1.utilisation", VARKI),
        x * 0.5,
        1e-12
    ));
    assert!(close(value(&a, "station.b1.number", VARKI), x * r, 1e-12));
    assert!(close(value(&a, "station.b1.wait", VARKI), r - 0.5, 1e-12));
    // the jobs are at the think station or inside the fork-join
    let jobs = value(&a, "station.think.number", VARKI) + value(&a, "station.split.number", VARKI);
    assert!(close(jobs, 4.0, 1e-12));
}

/// A think delay, `fork` into one branch `b` (or straight to `b` when `fork` is false), and a
/// queue `q`: a fork with one branch is just its branch.
fn one_branch(kind: &str, fork: bool) -> String {
    let stations = if fork {
        r#"
[[station]]
name = "split"
kind = "fork"
branches = ["b"]

[[station]]
name = "merge"
kind = "join"
fork = "split"

[[route]]
class = "jobs"
from = "think"
to = "split"

[[route]]
class = "jobs"
from = "b"
to = "merge"

[[route]]
class = "jobs"
from = "merge"
to = "q"
"#
    } else {
        r#"
[[route]]
class = "jobs"
from = "think"
to = "b"

[[route]]
class = "jobs"
from = "b"
to = "q"
"#
    };
    format!(
        r#"
[[class]]
name = "jobs"
population = 5
reference = "think"

[[station]]
name = "think"
kind = "delay"
service = {{ dist = "exp", mean = 2.0 }}

[[station]]
name = "b"
kind = "{kind}"
service = {{ dist = "exp", mean = 0.4 }}

[[station]]
name = "q"
kind = "fcfs"
service = {{ dist = "exp", mean = 0.3 }}

[[route]]
class = "jobs"
from = "q"
to = "think"
{stations}"#
    )
}

#[test]
fn a_fork_with_one_branch_is_its_branch_and_the_composite_equals_exact_mva() {
    for kind in ["fcfs", "delay"] {
        let b_kind = if kind == "fcfs" {
            CenterKind::Queue
        } else {
            CenterKind::Delay
        };
        let centers = [
            Center {
                kind: CenterKind::Delay,
                demand: 2.0,
            },
            Center {
                kind: b_kind,
                demand: 0.4,
            },
            Center {
                kind: CenterKind::Queue,
                demand: 0.3,
            },
        ];
        let exact = mva(&centers, 5).unwrap();
        let level = exact.full();
        let a = analyze(scenario(&one_branch(kind, true)).network().unwrap());
        let plain = analyze(scenario(&one_branch(kind, false)).network().unwrap());
        let method = if kind == "fcfs" { VARKI } else { "exact MVA" };
        let cycle = value(&a, "class.jobs.cycle", method);
        assert!(close(cycle, level.response_time, 1e-12), "{kind}: {cycle}");
        assert!(close(
            cycle,
            value(&plain, "class.jobs.cycle", "exact MVA"),
            1e-12
        ));
        for (k, s) in ["think", "b", "q"].iter().enumerate() {
            let r = value(&a, &format!("station.{s}.response"), method);
            assert!(close(r, level.residence[k], 1e-12), "{kind} {s}");
            let n = value(&a, &format!("station.{s}.number"), method);
            assert!(close(n, level.queue_length[k], 1e-12), "{kind} {s}");
        }
        assert!(close(
            value(&a, "station.split.response", method),
            level.residence[1],
            1e-12
        ));
        assert!(close(
            value(&a, "station.q.utilisation", method),
            level.throughput * 0.3,
            1e-12
        ));
        // a fork-join of delays is exact; Varki's centre is always labelled an approximation
        let exactness = a
            .predictions
            .iter()
            .find(|p| p.metric == "class.jobs.cycle" && p.method.starts_with(method))
            .unwrap()
            .exact;
        assert_eq!(exactness, kind == "delay", "{kind}");
    }
}

#[test]
fn bus_aio_composite_reproduces_the_papers_exact_mva_for_every_station() {
    let a = analyze_scenario(&load("validation/spmd_bus_aio_p16.toml"));
    const COMPOSITE: &str = "exact MVA with each fork-join of identical delays";
    let eq = value(&a, "class.groups.cycle", "BUS-AIO exact MVA");
    let cycle = value(&a, "class.groups.cycle", COMPOSITE);
    assert!(close(cycle, eq, 1e-12), "{cycle} vs eqs. 19-21 {eq}");
    // the fork-join of c = 2 exponential bursts of mean 0.35 lasts h(2) x 0.35
    assert!(close(
        value(&a, "station.cpu_fork.response", COMPOSITE),
        1.5 * 0.35,
        1e-9
    ));
    let x = value(&a, "class.groups.throughput", COMPOSITE);
    // forced flow at the bus: 4 bursts per cycle of demand 0.08
    assert!(close(
        value(&a, "station.bus.utilisation", COMPOSITE),
        x * 4.0 * 0.08,
        1e-12
    ));
    for metric in [
        "station.bus.wait",
        "station.io.number",
        "station.cpu.number",
        "station.cpu_fork.number",
        "class.groups.response",
    ] {
        let p = a
            .predictions
            .iter()
            .find(|p| p.metric == metric && p.method.starts_with(COMPOSITE))
            .unwrap_or_else(|| panic!("no {metric}"));
        assert!(p.exact, "{p:?}");
    }
}

#[test]
fn sio_tasks_by_the_generic_composite_give_both_readings_of_eq_16() {
    let a = analyze_scenario(&load("scenarios/btio_p9.toml"));
    const DRAINING: &str = "composite MVA, fork-join tasks by MVA of the tasks, draining";
    const FULL: &str = "composite MVA, fork-join tasks by MVA of the tasks at full population";
    for (generic, paper) in [
        (DRAINING, "SIO eq. 16 reading (b)"),
        (FULL, "SIO eq. 16 reading (a)"),
    ] {
        let ours = value(&a, "class.program.cycle", generic);
        let eq = value(&a, "class.program.cycle", paper);
        assert!(close(ours, eq, 1e-9), "{generic}: {ours} vs {eq}");
        // one program at the I/O queue: no wait there, and its response is T_io = 1/3
        assert!(close(
            value(&a, "station.io.response", generic),
            1.0 / 3.0,
            1e-12
        ));
        let x = value(&a, "class.program.throughput", generic);
        // 45 bus visits per cycle (9 groups x 5 bursts), each of mean w g SR_com
        let bus = 0.23 * 1.125 * 0.037;
        assert!(close(
            value(&a, "station.bus.utilisation", generic),
            x * 45.0 * bus,
            1e-9
        ));
        assert!(value(&a, "station.bus.wait", generic) > 0.0);
    }
    // the full-population reading sees more contention at the bus than the draining one
    assert!(value(&a, "station.bus.response", FULL) > value(&a, "station.bus.response", DRAINING));
}

/// A think delay and a fork of 3 copies into one FCFS queue `a` (mean 0.5), joined again;
/// `extra` goes at the end (routes of a station outside the fork-join, say).
fn copies_into_one_queue(population: u32, extra: &str) -> String {
    format!(
        r#"
[[class]]
name = "jobs"
population = {population}
reference = "think"

[[station]]
name = "think"
kind = "delay"
service = {{ dist = "exp", mean = 2.0 }}

[[station]]
name = "split"
kind = "fork"
copies = 3
to = "a"

[[station]]
name = "a"
kind = "fcfs"
service = {{ dist = "exp", mean = 0.5 }}

[[station]]
name = "merge"
kind = "join"
fork = "split"

[[route]]
class = "jobs"
from = "think"
to = "split"

[[route]]
class = "jobs"
from = "merge"
to = "think"
{extra}"#
    )
}

#[test]
fn tasks_sharing_one_queue_leave_after_all_their_services_and_other_jobs_are_refused() {
    let route = "\n[[route]]\nclass = \"jobs\"\nfrom = \"a\"\nto = \"merge\"\n";
    let a = analyze(
        scenario(&copies_into_one_queue(1, route))
            .network()
            .unwrap(),
    );
    // one job: its 3 tasks queue at `a`, and the last leaves after 3 exponential services,
    // which both readings give (T(i) = 0.5 i)
    for reading in [
        "composite MVA, fork-join tasks by MVA of the tasks, draining",
        "composite MVA, fork-join tasks by MVA of the tasks at full",
    ] {
        assert!(close(
            value(&a, "station.split.response", reading),
            1.5,
            1e-12
        ));
        assert!(close(value(&a, "class.jobs.cycle", reading), 3.5, 1e-12));
        assert!(close(
            value(&a, "station.a.utilisation", reading),
            1.5 / 3.5,
            1e-12
        ));
    }
    // a visit's mean over the draining phases: (1.5 + 1.0 + 0.5) / 3
    assert!(close(
        value(
            &a,
            "station.a.response",
            "composite MVA, fork-join tasks by MVA of the tasks, draining"
        ),
        1.0,
        1e-12
    ));
    // two jobs: the second job's tasks would compete for `a`, which the composite ignores
    let two = analyze(
        scenario(&copies_into_one_queue(2, route))
            .network()
            .unwrap(),
    );
    let refusal = two
        .refusals
        .iter()
        .find(|r| r.method == "closed fork-join composite MVA")
        .expect("refused");
    assert!(refusal.reason.contains("2 jobs circulate"), "{refusal:?}");
    assert!(
        !two.predictions
            .iter()
            .any(|p| p.metric == "class.jobs.cycle")
    );
}
