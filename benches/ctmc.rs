//! The exact CTMC solver at a million states (`cargo bench --bench ctmc`; figures in the
//! report of the commit that added it).
//!
//! Each benchmark is end to end: the breadth-first enumeration of the reachable states and the
//! sparse LU solve of the stationary distribution, with the residual check.
//!
//! * `cycle_1412`: a closed cycle of three exponential single-server stations (rates 1, 2,
//!   0.7) with 1412 jobs: `1413 * 1414 / 2 = 998,991` states on a triangle, checked once
//!   against the product form before timing.
//! * `tandem_1000`: Poisson arrivals (rate 1) into two exponential stations in tandem (rates
//!   1.2 and 1.1) with room for 1000 jobs each, arrivals to a full first station lost, a job
//!   done at the first while the second is full blocked there: 1,003,001 states on a square.
//!
//! * `network_chain`: the chain `parsim analyze` builds from a network (its states, events and
//!   means, `src/predict/network/markov.rs`), end to end through the public analysis: a closed
//!   network of two classes of 14 jobs, a delay, a preemptive-resume priority FCFS station and
//!   a PS station, 25,425 states at budget factor 20.
//!
//! Ten samples of one solve each (criterion's least): some ten minutes in all.
//!
//! Measured once (the lines this bench prints first), on 2 cores shared with other builds:
//! `cycle_1412` 2,992,734 transitions, enumeration 0.38 s, solve (sparse LU, one thread)
//! 30.1 s, residual 1.1e-16, largest error against the product form 1.0e-13; `tandem_1000`
//! 3,004,999 transitions, enumeration 0.35 s, solve 20.2 s, residual 1.4e-16; peak resident
//! memory 4.0 GB.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use parsim::analytic::ctmc::{MarkovModel, StateSpace, Stationary, stationary};

/// A closed cycle of three exponential single-server stations.
struct Cycle {
    mu: [f64; 3],
    jobs: u32,
}

impl MarkovModel for Cycle {
    type State = [u32; 3];
    fn initial(&self) -> [u32; 3] {
        [self.jobs, 0, 0]
    }
    fn transitions(&self, s: &[u32; 3], out: &mut Vec<([u32; 3], f64)>) {
        for i in 0..3 {
            if s[i] > 0 {
                let mut t = *s;
                t[i] -= 1;
                t[(i + 1) % 3] += 1;
                out.push((t, self.mu[i]));
            }
        }
    }
}

/// Two exponential stations in tandem with finite rooms and blocking after service.
struct Tandem {
    lambda: f64,
    mu: [f64; 2],
    room: [u32; 2],
}

impl MarkovModel for Tandem {
    /// Jobs at each station; whether the first station's job is done and blocked.
    type State = (u32, u32, bool);
    fn initial(&self) -> Self::State {
        (0, 0, false)
    }
    fn transitions(&self, &(n1, n2, blocked): &Self::State, out: &mut Vec<(Self::State, f64)>) {
        if n1 < self.room[0] {
            out.push(((n1 + 1, n2, blocked), self.lambda));
        }
        if n1 > 0 && !blocked {
            let to = if n2 < self.room[1] {
                (n1 - 1, n2 + 1, false)
            } else {
                (n1, n2, true)
            };
            out.push((to, self.mu[0]));
        }
        if n2 > 0 {
            let to = if blocked {
                (n1 - 1, n2, false)
            } else {
                (n1, n2 - 1, false)
            };
            out.push((to, self.mu[1]));
        }
    }
}

const CYCLE: Cycle = Cycle {
    mu: [1.0, 2.0, 0.7],
    jobs: 1412,
};

const TANDEM: Tandem = Tandem {
    lambda: 1.0,
    mu: [1.2, 1.1],
    room: [1000, 1000],
};

/// The largest difference between the solved probabilities and the product form
/// `prod (1/mu_i)^n_i / G` (in logarithms, so that `G` does not overflow).
fn product_form_error(s: &Stationary<[u32; 3]>) -> f64 {
    let log_weight =
        |st: &[u32; 3]| -> f64 { (0..3).map(|i| -f64::from(st[i]) * CYCLE.mu[i].ln()).sum() };
    let top = s.states().iter().map(log_weight).fold(f64::MIN, f64::max);
    let g: f64 = s
        .states()
        .iter()
        .map(|st| (log_weight(st) - top).exp())
        .sum();
    s.iter()
        .map(|(st, p)| (p - (log_weight(st) - top).exp() / g).abs())
        .fold(0.0, f64::max)
}

/// Enumerates and solves `model` once, printing the time of each step.
fn timed<M: MarkovModel>(name: &str, model: &M) -> Stationary<M::State> {
    let start = Instant::now();
    let space = StateSpace::explore(model).expect("within the state limit");
    let explored = start.elapsed();
    let (states, transitions) = (space.len(), space.transition_count());
    let solved = space.stationary().expect("solves");
    eprintln!(
        "{name}: {states} states, {transitions} transitions, enumeration {explored:.2?}, \
         solve {:.2?}, residual {:.1e}",
        start.elapsed() - explored,
        solved.residual()
    );
    solved
}

fn million_states(c: &mut Criterion) {
    let solved = timed("cycle_1412", &CYCLE);
    let error = product_form_error(&solved);
    eprintln!("cycle_1412: largest error against the product form {error:.1e}");
    assert!(error < 1e-10);
    drop(solved);
    drop(timed("tandem_1000", &TANDEM));

    let mut group = c.benchmark_group("ctmc");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(60));
    group.bench_function("cycle_1412", |b| {
        b.iter(|| black_box(stationary(black_box(&CYCLE)).expect("solves").residual()))
    });
    group.bench_function("tandem_1000", |b| {
        b.iter(|| black_box(stationary(black_box(&TANDEM)).expect("solves").residual()))
    });
    group.finish();
}

/// The closed priority network of `network_chain`.
const NETWORK: &str = r#"
name = "closed priority network"
[[class]]
name = "urgent"
population = 14
reference = "think"
priority = 0
[[class]]
name = "batch"
population = 14
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
priority = "preemptive-resume"
service_by_class = { urgent = { dist = "exp", mean = 0.3 }, batch = { dist = "exp", mean = 0.4 } }
[[station]]
name = "disk"
kind = "ps"
service_by_class = { urgent = { dist = "exp", mean = 0.5 }, batch = { dist = "exp", mean = 0.6 } }
[[route]]
class = "urgent"
from = "think"
to = "cpu"
[[route]]
class = "urgent"
from = "cpu"
branches = [{ to = "disk", p = 0.7 }, { to = "think", p = 0.3 }]
[[route]]
class = "urgent"
from = "disk"
to = "cpu"
[[route]]
class = "batch"
from = "think"
to = "cpu"
[[route]]
class = "batch"
from = "cpu"
branches = [{ to = "disk", p = 0.8 }, { to = "think", p = 0.2 }]
[[route]]
class = "batch"
from = "disk"
to = "cpu"
"#;

fn network_chain(c: &mut Criterion) {
    let sc = parsim::scenario::parse(NETWORK, std::path::Path::new("network_chain.toml"))
        .expect("a valid scenario");
    let parsim::scenario::Workload::Network(net) = &sc.workload else {
        unreachable!("a network")
    };
    let analyse =
        || parsim::analytic::cost::with_budget(20.0, || parsim::predict::network::analyze(net));
    let start = Instant::now();
    let a = analyse();
    let label = a
        .predictions
        .iter()
        .find(|p| p.method.starts_with("exact Markov chain"))
        .map(|p| p.method.clone())
        .expect("the chain is within the budget");
    eprintln!(
        "network_chain: {label}, analysed in {:.2?}",
        start.elapsed()
    );
    let mut group = c.benchmark_group("ctmc");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(60));
    group.bench_function("network_chain", |b| {
        b.iter(|| black_box(analyse().predictions.len()))
    });
    group.finish();
}

criterion_group!(benches, million_states, network_chain);
criterion_main!(benches);
