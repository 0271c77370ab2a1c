//! A trace replayed in order (`mode = "replay"`): each replication reads its own stretch of
//! the file, so replications are independent and the flow-balance check agrees; a trace too
//! short for the replications asked is warned about; a trace whose successive values are
//! correlated makes the renewal formulas approximations.

use std::path::PathBuf;

use parsim::replicate::{self, Options};
use parsim::scenario::Warmup;

use crate::util::{call, mmpp2_trace, temp_scenario};

/// A source replaying `trace` (a file name beside the scenario) into one FCFS server of
/// deterministic service `service`.
fn replayed(name: &str, trace: &str, service: f64) -> PathBuf {
    temp_scenario(
        name,
        &format!(
            r#"
[[class]]
name = "jobs"

[[station]]
name = "arrivals"
kind = "source"
class = "jobs"
interarrival = {{ dist = "empirical", file = "{trace}", mode = "replay" }}

[[station]]
name = "q"
kind = "fcfs"
service = {{ dist = "det", value = {service} }}

[[route]]
class = "jobs"
from = "arrivals"
to = "q"

[[route]]
class = "jobs"
from = "q"
to = "exit"
"#
        ),
    )
}

fn write_trace(name: &str, values: &[f64]) {
    let dir = temp_scenario("trace_holder", "")
        .parent()
        .unwrap()
        .to_owned();
    let text: Vec<String> = values.iter().map(|v| format!("{v:.12}")).collect();
    std::fs::write(dir.join(name), text.join("\n") + "\n").unwrap();
}

fn options(sc: &parsim::scenario::Scenario, replications: u32, length: u64) -> Options {
    Options {
        seed: 5,
        replications,
        length,
        warmup: Warmup::Fixed(0),
        precision: None,
        ..Options::from_scenario(sc)
    }
}

/// Two halves of different inter-arrival times, no randomness anywhere: replication 0 must see
/// the first half's rate and replication 1 the second's. Before each replication had its own
/// stretch, both replayed the file from its first line and reported the same throughput.
#[test]
fn each_replication_reads_its_own_stretch_of_the_trace() {
    let mut trace = vec![0.5; 2000];
    trace.extend(vec![1.5; 2000]);
    write_trace("two_halves.txt", &trace);
    let sc = parsim::scenario::load(&replayed("two_halves", "two_halves.txt", 0.1)).unwrap();
    let opt = options(&sc, 2, 1000);
    assert!(replicate::warnings(&sc, &opt).is_empty());
    let ex = replicate::run(&sc, &opt, &|_| {}).unwrap();
    let i = ex.index_of("class.jobs.throughput").unwrap();
    let (first, second) = (ex.replications[0][i], ex.replications[1][i]);
    assert!((first - 2.0).abs() < 0.01, "replication 0: {first}");
    assert!((second - 1.0 / 1.5).abs() < 0.01, "replication 1: {second}");
}

/// The issue's case: an MMPP(2) trace replayed into a queue. The replications' throughput
/// interval covers the trace's own rate (the flow-balance check), where replaying the same
/// prefix every time gave an interval of almost no width around the prefix's rate.
#[test]
fn flow_balance_holds_on_a_replayed_mmpp_trace() {
    let trace = mmpp2_trace(200_000, [1.5, 0.1], [0.05, 0.05], 11);
    write_trace("mmpp_trace.txt", &trace);
    let rate = trace.len() as f64 / trace.iter().sum::<f64>();
    let sc = parsim::scenario::load(&replayed("mmpp_replay", "mmpp_trace.txt", 1.0)).unwrap();
    let opt = options(&sc, 10, 15_000);
    assert!(replicate::warnings(&sc, &opt).is_empty());
    let ex = replicate::run(&sc, &opt, &|_| {}).unwrap();
    let ci = ex.interval(ex.index_of("class.jobs.throughput").unwrap(), 0.99);
    assert!(
        (ci.mean - rate).abs() <= ci.half_width,
        "throughput {} +- {} against the trace's rate {rate}",
        ci.mean,
        ci.half_width
    );
    // the replications differ as independent stretches of a bursty trace do
    assert!(ci.half_width > 0.005 * rate, "{ci:?}");
}

/// A trace too short for the replications asked is warned about, with the count it holds.
#[test]
fn a_short_trace_is_warned_about() {
    write_trace("short_trace.txt", &vec![1.0; 5000]);
    let sc = parsim::scenario::load(&replayed("short_replay", "short_trace.txt", 0.5)).unwrap();
    let warnings = replicate::warnings(&sc, &options(&sc, 10, 2000));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("5000 samples") && warnings[0].contains("holds 2 independent"),
        "{}",
        warnings[0]
    );
    let (code, _, err) = call(&[
        "run",
        replayed("short_replay", "short_trace.txt", 0.5)
            .to_str()
            .unwrap(),
        "--replications",
        "10",
        "--length",
        "2000",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning") && err.contains("not independent"),
        "{err}"
    );
}

/// Renewal formulas on a correlated trace are labelled approximations, with the correlation;
/// on a trace of independent values they are not.
#[test]
fn a_correlated_trace_makes_renewal_formulas_approximations() {
    let trace = mmpp2_trace(50_000, [1.5, 0.1], [0.05, 0.05], 3);
    write_trace("correlated.txt", &trace);
    let path = replayed("correlated", "correlated.txt", 1.0);
    let (code, out, err) = call(&["analyze", path.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("replays a trace whose successive inter-arrival times are correlated"),
        "{out}"
    );
    let shuffled: Vec<f64> = (0..trace.len())
        .map(|i| trace[(i * 7919) % trace.len()])
        .collect();
    write_trace("independent.txt", &shuffled);
    let path = replayed("independent", "independent.txt", 1.0);
    let (_, out, _) = call(&["analyze", path.to_str().unwrap()]);
    assert!(!out.contains("are correlated"), "{out}");
}
