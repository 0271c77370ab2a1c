//! Exact percentile predictions of `analyze` against simulation: every exact `p50..p99` of an
//! M/M/1 and an M/M/2 queue lies in the simulation's 99% interval (fixed seeds; each interval,
//! which includes the histogram's 0.4% resolution, must be tighter than 4% so the check has
//! teeth).

use parsim::predict::network::analyze;
use parsim::scenario::Workload;

use super::statistics::assert_agrees;
use super::util::{open_single, scenario, simulate};

fn exact_percentiles_agree(station: &str, rate: f64, seed: u64) {
    let sc = scenario(&open_single(rate, station));
    let Workload::Network(net) = &sc.workload else {
        panic!("a network scenario")
    };
    let predictions: Vec<_> = analyze(net)
        .predictions
        .into_iter()
        .filter(|p| {
            p.exact
                && p.metric
                    .rsplit('.')
                    .next()
                    .is_some_and(|l| l.starts_with('p'))
        })
        .collect();
    // p50, p90, p95, p99 of the station and of the class
    assert_eq!(predictions.len(), 8, "{predictions:?}");
    let ex = simulate(&sc, 30, 80_000, seed);
    for p in predictions {
        assert_agrees(&ex, &p.metric, p.value, 0.04);
    }
}

#[test]
fn mm1_percentiles_agree_with_simulation() {
    exact_percentiles_agree(
        "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 1.0 }",
        0.7,
        61,
    );
}

#[test]
fn mm2_percentiles_agree_with_simulation() {
    exact_percentiles_agree(
        "kind = \"fcfs\"\nservers = 2\nservice = { dist = \"exp\", mean = 1.0 }",
        1.4,
        62,
    );
}
