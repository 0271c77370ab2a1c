//! Laws every simulated network must obey, checked on random valid networks (proptest): open
//! and closed classes over chains of FCFS, PS and delay stations with feedback, exponential and
//! non-exponential service. For each network, per station and per replication:
//!
//! - Little's law: the time-average number `L` equals throughput times mean response `X R`,
//!   up to the jobs present at the ends of the measured window (at most 2% of `L` here, with
//!   thousands of departures per replication) plus the 99% half-width of the difference over
//!   the replications;
//! - utilisation within `[0, servers]`;
//! - jobs conserved: a closed class's numbers over all stations add up to its population (a
//!   time average of a constant, so to rounding), and an open class leaves at the rate it
//!   arrives (its throughput's 99% interval, widened by 2% for the window's ends, covers its
//!   source's rate);
//! - the same seed gives bit-identical values on 1 thread and on 3.

use parsim::replicate::{self, Experiment, Options};
use parsim::scenario::{Scenario, Warmup};
use parsim::stats::ConfidenceInterval;
use proptest::prelude::*;

use super::util::scenario;

/// A service-time distribution with mean `m`, by family index.
fn service(family: usize, m: f64) -> String {
    match family % 6 {
        0 => format!("{{ dist = \"exp\", mean = {m} }}"),
        1 => format!("{{ dist = \"det\", value = {m} }}"),
        2 => format!("{{ dist = \"erlang\", k = 3, mean = {m} }}"),
        3 => format!("{{ dist = \"h2\", mean = {m}, scv = 4.0 }}"),
        4 => format!("{{ dist = \"uniform\", mean = {m} }}"),
        _ => format!("{{ dist = \"lognormal\", mean = {m}, scv = 2.0 }}"),
    }
}

/// One generated network: its stations (kind, servers, service family, mean) and classes
/// (population, or open; feedback probability from the last station to the first).
#[derive(Clone, Debug)]
struct Spec {
    stations: Vec<(&'static str, u32, usize, f64)>,
    classes: Vec<(Option<u32>, f64)>,
}

impl Spec {
    /// The scenario: every class visits the stations in order, then goes back to the first
    /// with its feedback probability and otherwise exits (open) or starts over (closed). Open
    /// classes' arrival rates load the busiest station to at most 0.7 in all.
    fn text(&self) -> String {
        let mut t = String::new();
        for (k, (population, _)) in self.classes.iter().enumerate() {
            t.push_str(&format!("[[class]]\nname = \"c{k}\"\n"));
            match population {
                Some(n) => t.push_str(&format!("population = {n}\nreference = \"s0\"\n\n")),
                None => {
                    let rate = self.arrival_rate(k);
                    t.push_str(&format!(
                        "\n[[station]]\nname = \"src{k}\"\nkind = \"source\"\nclass = \"c{k}\"\n\
                         interarrival = {{ dist = \"exp\", rate = {rate} }}\n\n\
                         [[route]]\nclass = \"c{k}\"\nfrom = \"src{k}\"\nto = \"s0\"\n\n"
                    ));
                }
            }
        }
        for (i, &(kind, servers, family, m)) in self.stations.iter().enumerate() {
            t.push_str(&format!(
                "[[station]]\nname = \"s{i}\"\nkind = \"{kind}\"\nservice = {}\n",
                service(family, m)
            ));
            if kind == "fcfs" {
                t.push_str(&format!("servers = {servers}\n"));
            }
            t.push('\n');
        }
        let last = self.stations.len() - 1;
        for (k, (population, feedback)) in self.classes.iter().enumerate() {
            let home = if population.is_some() { "s0" } else { "exit" };
            for i in 0..last {
                t.push_str(&format!(
                    "[[route]]\nclass = \"c{k}\"\nfrom = \"s{i}\"\nto = \"s{}\"\n\n",
                    i + 1
                ));
            }
            if *feedback > 0.0 && home == "exit" {
                t.push_str(&format!(
                    "[[route]]\nclass = \"c{k}\"\nfrom = \"s{last}\"\nbranches = [{{ to = \"s0\", p = {feedback} }}, {{ to = \"exit\", p = {} }}]\n\n",
                    1.0 - feedback
                ));
            } else {
                t.push_str(&format!(
                    "[[route]]\nclass = \"c{k}\"\nfrom = \"s{last}\"\nto = \"{home}\"\n\n"
                ));
            }
        }
        t
    }
}

impl Spec {
    /// The arrival rate of open class `k`: the open classes share a load of 0.7 on the busiest
    /// station.
    fn arrival_rate(&self, k: usize) -> f64 {
        let open = self.classes.iter().filter(|c| c.0.is_none()).count().max(1) as f64;
        let visits = 1.0 / (1.0 - self.classes[k].1);
        let load = self
            .stations
            .iter()
            .map(|&(kind, servers, _, m)| match kind {
                "delay" => 0.0,
                "fcfs" => visits * m / f64::from(servers),
                _ => visits * m,
            })
            .fold(0.0, f64::max);
        if load > 0.0 { 0.7 / open / load } else { 1.0 }
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    let station = (
        prop::sample::select(vec!["fcfs", "ps", "delay"]),
        1u32..=3,
        0usize..6,
        prop::sample::select(vec![0.1, 0.25, 0.5, 1.0]),
    );
    let class = (
        prop::option::of(1u32..=6),
        prop::sample::select(vec![0.0, 0.2, 0.5]),
    );
    (
        prop::collection::vec(station, 1..=4),
        prop::collection::vec(class, 1..=2),
    )
        .prop_map(|(stations, classes)| Spec { stations, classes })
}

fn experiment(sc: &Scenario, threads: usize, seed: u64) -> Experiment {
    let mut opt = Options::from_scenario(sc);
    opt.replications = 5;
    opt.length = 4000;
    opt.seed = seed;
    opt.warmup = Warmup::Mser5;
    opt.precision = None;
    opt.threads = threads;
    replicate::run(sc, &opt, &|_| {}).expect("a valid network runs")
}

/// Per-replication values of `name`.
fn values(ex: &Experiment, name: &str) -> Vec<f64> {
    let i = ex
        .index_of(name)
        .unwrap_or_else(|| panic!("no metric {name}"));
    ex.replications.iter().map(|r| r[i]).collect()
}

fn check_laws(spec: &Spec, ex: &Experiment) -> Result<(), TestCaseError> {
    let multi = spec.classes.len() > 1;
    for (i, &(kind, servers, _, _)) in spec.stations.iter().enumerate() {
        let s = format!("station.s{i}");
        let l = values(ex, &format!("{s}.number"));
        let x = values(ex, &format!("{s}.throughput"));
        let r = values(ex, &format!("{s}.response"));
        let d: Vec<f64> = (0..l.len()).map(|k| l[k] - x[k] * r[k]).collect();
        let diff = ConfidenceInterval::from_values(&d, 0.99);
        let mean_l = l.iter().sum::<f64>() / l.len() as f64;
        prop_assert!(
            diff.mean.abs() <= diff.half_width + 0.02 * mean_l,
            "Little's law at s{i}: L - X R = {} +- {} with L = {mean_l}",
            diff.mean,
            diff.half_width
        );
        if kind != "delay" {
            let cap = if kind == "fcfs" {
                f64::from(servers)
            } else {
                1.0
            };
            for u in values(ex, &format!("{s}.utilisation")) {
                prop_assert!(
                    (0.0..=cap).contains(&u),
                    "utilisation of s{i} {u} outside [0, {cap}]"
                );
            }
        }
    }
    for (k, &(population, _)) in spec.classes.iter().enumerate() {
        match population {
            Some(n) => {
                let mut total = vec![0.0; ex.replications.len()];
                for i in 0..spec.stations.len() {
                    let name = if multi {
                        format!("station.s{i}.c{k}.number")
                    } else {
                        format!("station.s{i}.number")
                    };
                    for (t, v) in total.iter_mut().zip(values(ex, &name)) {
                        *t += v;
                    }
                }
                for t in total {
                    prop_assert!(
                        (t - f64::from(n)).abs() <= 1e-6 * f64::from(n),
                        "class c{k} holds {t} jobs on average, not its population {n}"
                    );
                }
            }
            None => {
                let x = ex.interval(
                    ex.index_of(&format!("class.c{k}.throughput")).unwrap(),
                    0.99,
                );
                let rate = spec.arrival_rate(k);
                prop_assert!(
                    (x.mean - rate).abs() <= x.half_width + 0.02 * rate,
                    "class c{k} leaves at {x:?} but arrives at rate {rate}"
                );
            }
        }
    }
    Ok(())
}

/// 64 networks from a fixed seed (the same in every CI run); `PARSIM_PROPERTY_CASES` and
/// `PARSIM_PROPERTY_SEED` explore further.
fn config() -> ProptestConfig {
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    ProptestConfig {
        cases: var("PARSIM_PROPERTY_CASES", 64) as u32,
        rng_seed: proptest::test_runner::RngSeed::Fixed(var("PARSIM_PROPERTY_SEED", 2026)),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_networks_obey_littles_law_conservation_and_capacity(spec in spec(), seed in 1u64..1000) {
        let sc = scenario(&spec.text());
        let ex = experiment(&sc, 1, seed);
        check_laws(&spec, &ex)?;
        let again = experiment(&sc, 3, seed);
        prop_assert!(
            ex.replications.iter().flatten().map(|v| v.to_bits()).eq(
                again.replications.iter().flatten().map(|v| v.to_bits())
            ),
            "1 thread and 3 threads differ"
        );
    }
}
