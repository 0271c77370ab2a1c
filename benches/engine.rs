//! Engine benchmarks (`cargo bench --bench engine`; figures in `benches/RESULTS.md`).
//!
//! Groups, selectable by name (`cargo bench --bench engine -- calendar`):
//!
//! * `models`: the normal engine (statistics on, one thread) on (A) M/M/1 at rho 0.8, (B) a
//!   closed delay -> FCFS -> FCFS network of 16 jobs, (C) an open fork-join into 8 FCFS servers,
//!   each run for about 10^6 events, next to a hand-written "speed of light" loop for A and B
//!   (a `BinaryHeap` of `(time, seq, event)`, Xoshiro256++ draws, no statistics).
//! * `calendar`: the hold model (pop the earliest event, push it back a random time later) with
//!   `n` pending events (10 to 10^6), for [`Calendar`] and (to 10^5) for
//!   `priority_queue::PriorityQueue`.
//! * `large_calendar`: open networks of 10 and 1000 delay stations (about 5000 pending events
//!   either way: what differs is the per-station state) and a closed network of delay stations
//!   with a growing population, 10 to 10^6 pending events.
//! * `programs`: rank programs, a ring exchange (`sendrecv` to the right neighbour) and a
//!   repeated binomial reduce, of 64 KiB messages, at 16, 256 and 4096 ranks on a bus and on a
//!   2-D torus (1 GB/s links, 1 us per hop, 2 us startup, cut-through, FCFS), all statistics
//!   on; throughput in messages (about 2*10^5 per execution).
//!
//! Rank programs at scale (4,096 to 1,048,576 ranks) are `benches/scale.rs`
//! (`cargo bench --bench scale`): too long for criterion's samples, run once each under
//! `/usr/bin/time`.
//!
//! Every throughput is in events (arrivals plus service completions, as counted by
//! [`parsim::engine::network::RunSummary::events`]) or calendar holds per second.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main,
};
use parsim::engine::calendar::Calendar;
use parsim::engine::network::jobs::Job;
use parsim::engine::network::{Event, RunLength, Simulation};
use parsim::network::Network;
use parsim::time::SimTime;
use priority_queue::PriorityQueue;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::Exp1;

/// Master seed of every run.
const SEED: u64 = 1;

/// About how many events one benchmarked run processes.
const EVENTS: u64 = 1_000_000;

/// Calendar holds (one pop and one push) per benchmark iteration.
const HOLDS: u64 = 100_000;

/// (A) M/M/1: Poisson arrivals at rate 0.8 into one exponential server of rate 1.
const MM1: &str = include_str!("../scenarios/mm1.toml");

/// (B) Closed: 16 jobs cycle through a delay (mean 1), an FCFS CPU (0.2) and an FCFS disk (0.1).
const CLOSED: &str = include_str!("../scenarios/closed_delay_two_queues.toml");

/// (C) Open fork-join: Poisson arrivals at rate 0.5 fork into 8 exponential FCFS servers of
/// rate 1 and wait at a join.
const FORK_JOIN: &str = include_str!("../scenarios/fork_join_8.toml");

/// (A') model A split into two classes of rate 0.4 at two priority levels, head of line: the
/// same load through the engine's path for FCFS stations with features.
const MM1_PRIORITY: &str = r#"
[[class]]
name = "urgent"
priority = 0
[[class]]
name = "background"
priority = 1
[[station]]
name = "in_urgent"
kind = "source"
class = "urgent"
interarrival = { dist = "exp", rate = 0.4 }
[[station]]
name = "in_background"
kind = "source"
class = "background"
interarrival = { dist = "exp", rate = 0.4 }
[[station]]
name = "server"
kind = "fcfs"
priority = "non-preemptive"
service = { dist = "exp", mean = 1.0 }
[[route]]
class = "urgent"
from = "in_urgent"
to = "server"
[[route]]
class = "urgent"
from = "server"
to = "exit"
[[route]]
class = "background"
from = "in_background"
to = "server"
[[route]]
class = "background"
from = "server"
to = "exit"
"#;

/// An open network: Poisson arrivals at rate 1000, each routed uniformly at random to one of
/// `stations` delay stations of mean 5, then out; about 5000 events pend.
fn open_delays_toml(stations: usize) -> String {
    let mut s = String::from(
        "[[class]]\nname = \"jobs\"\n\n\
         [[station]]\nname = \"arrivals\"\nkind = \"source\"\nclass = \"jobs\"\ninterarrival = { dist = \"exp\", rate = 1000.0 }\n\n\
         [[route]]\nclass = \"jobs\"\nfrom = \"arrivals\"\nbranches = [\n",
    );
    let p = 1.0 / stations as f64;
    for d in 0..stations {
        writeln!(s, "  {{ to = \"d{d}\", p = {p} }},").expect("writing to a String cannot fail");
    }
    s.push_str("]\n");
    for d in 0..stations {
        write!(
            s,
            "\n[[station]]\nname = \"d{d}\"\nkind = \"delay\"\nservice = {{ dist = \"exp\", mean = 5.0 }}\n\n\
             [[route]]\nclass = \"jobs\"\nfrom = \"d{d}\"\nto = \"exit\"\n"
        )
        .expect("writing to a String cannot fail");
    }
    s
}

/// A closed network of `population` jobs alternating between two delay stations of mean 1:
/// every job always has exactly one pending event.
fn closed_delays_toml(population: u64) -> String {
    format!(
        "[[class]]\nname = \"jobs\"\npopulation = {population}\nreference = \"a\"\n\n\
         [[station]]\nname = \"a\"\nkind = \"delay\"\nservice = {{ dist = \"exp\", mean = 1.0 }}\n\n\
         [[station]]\nname = \"b\"\nkind = \"delay\"\nservice = {{ dist = \"exp\", mean = 1.0 }}\n\n\
         [[route]]\nclass = \"jobs\"\nfrom = \"a\"\nto = \"b\"\n\n\
         [[route]]\nclass = \"jobs\"\nfrom = \"b\"\nto = \"a\"\n"
    )
}

/// Builds the network of a scenario text, panicking with the scenario's problems if any.
fn network(text: &str) -> Network {
    parsim::scenario::parse(text, Path::new("bench.toml"))
        .unwrap_or_else(|e| panic!("{e}"))
        .network()
        .expect("the benchmark models are queueing networks")
        .clone()
}

/// Benchmarks one engine run of `length` observations (no warm-up) on `net`, with the
/// throughput set to the exact number of events the run processes; returns that number.
fn bench_engine(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    net: &Network,
    length: u64,
) -> u64 {
    let run = RunLength { warmup: 0, length };
    let events = Simulation::new(net, SEED, 0)
        .run(run)
        .expect("the benchmark models run to their length")
        .events;
    group.throughput(Throughput::Elements(events));
    group.bench_function(id, |b| {
        b.iter_batched(
            || Simulation::new(net, SEED, 0),
            |mut sim| {
                black_box(
                    sim.run(run)
                        .expect("the benchmark models run to their length"),
                );
                sim // dropped outside the timed section
            },
            BatchSize::PerIteration,
        );
    });
    events
}

/// The events of the bare loops: which station finishes (or 0 for an arrival in M/M/1).
type BareEvent = u8;

/// The bare loops' calendar: a max-heap of reversed `(time bits, seq, event)`.
#[derive(Default)]
struct BareCalendar {
    /// Pending events.
    heap: BinaryHeap<Reverse<(u64, u64, BareEvent)>>,
    /// Scheduling counter, the tie-break between equal times.
    seq: u64,
}

impl BareCalendar {
    /// Schedules `event` at `time` (finite, non-negative).
    #[inline]
    fn push(&mut self, time: f64, event: BareEvent) {
        self.seq += 1;
        self.heap.push(Reverse((time.to_bits(), self.seq, event)));
    }

    /// The earliest event.
    #[inline]
    fn pop(&mut self) -> (f64, BareEvent) {
        let Reverse((t, _, e)) = self.heap.pop().expect("the bare models never run dry");
        (f64::from_bits(t), e)
    }
}

/// One exponential draw of the given mean.
#[inline]
fn exp(rng: &mut Xoshiro256PlusPlus, mean: f64) -> f64 {
    mean * rng.sample::<f64, _>(Exp1)
}

/// The speed of light for (A): `events` events of M/M/1 (rate 0.8 into rate 1) with nothing but
/// a count of jobs present. Returns the final clock.
fn bare_mm1(events: u64) -> f64 {
    const ARRIVAL: BareEvent = 0;
    const DEPARTURE: BareEvent = 1;
    let mut arrivals = Xoshiro256PlusPlus::seed_from_u64(SEED);
    let mut service = Xoshiro256PlusPlus::seed_from_u64(SEED + 1);
    let mut cal = BareCalendar::default();
    let mut present = 0_u32;
    let mut now = 0.0;
    cal.push(exp(&mut arrivals, 1.25), ARRIVAL);
    for _ in 0..events {
        let (t, e) = cal.pop();
        now = t;
        if e == ARRIVAL {
            cal.push(now + exp(&mut arrivals, 1.25), ARRIVAL);
            present += 1;
            if present == 1 {
                cal.push(now + exp(&mut service, 1.0), DEPARTURE);
            }
        } else {
            present -= 1;
            if present > 0 {
                cal.push(now + exp(&mut service, 1.0), DEPARTURE);
            }
        }
    }
    now
}

/// The speed of light for (B): `events` service completions of the closed network of 16 jobs
/// (delay 1 -> FCFS 0.2 -> FCFS 0.1), with nothing but a count of jobs at each queue. Returns the
/// final clock.
fn bare_closed(events: u64) -> f64 {
    const MEANS: [f64; 3] = [1.0, 0.2, 0.1];
    let mut rngs: [Xoshiro256PlusPlus; 3] =
        std::array::from_fn(|s| Xoshiro256PlusPlus::seed_from_u64(SEED + s as u64));
    let mut cal = BareCalendar::default();
    let mut present = [0_u32; 3];
    let mut now = 0.0;
    for _ in 0..16 {
        cal.push(exp(&mut rngs[0], MEANS[0]), 0);
    }
    for _ in 0..events {
        let (t, s) = cal.pop();
        now = t;
        let s = usize::from(s);
        if s > 0 {
            present[s] -= 1;
            if present[s] > 0 {
                cal.push(now + exp(&mut rngs[s], MEANS[s]), s as BareEvent);
            }
        }
        let to = (s + 1) % 3;
        if to == 0 {
            cal.push(now + exp(&mut rngs[0], MEANS[0]), 0);
        } else {
            present[to] += 1;
            if present[to] == 1 {
                cal.push(now + exp(&mut rngs[to], MEANS[to]), to as BareEvent);
            }
        }
    }
    now
}

/// Models A (plain and with priorities), B, C on the engine and the bare loops for A and B.
fn models(c: &mut Criterion) {
    let mut group = c.benchmark_group("models");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(4));

    let mm1 = network(MM1);
    let events = bench_engine(
        &mut group,
        BenchmarkId::new("parsim", "A_mm1"),
        &mm1,
        EVENTS / 2,
    );
    group.bench_function(BenchmarkId::new("bare", "A_mm1"), |b| {
        b.iter(|| black_box(bare_mm1(black_box(events))))
    });

    bench_engine(
        &mut group,
        BenchmarkId::new("parsim", "A_mm1_priority"),
        &network(MM1_PRIORITY),
        EVENTS / 2,
    );

    let closed = network(CLOSED);
    let events = bench_engine(
        &mut group,
        BenchmarkId::new("parsim", "B_closed"),
        &closed,
        EVENTS / 3,
    );
    group.bench_function(BenchmarkId::new("bare", "B_closed"), |b| {
        b.iter(|| black_box(bare_closed(black_box(events))))
    });

    let fork_join = network(FORK_JOIN);
    bench_engine(
        &mut group,
        BenchmarkId::new("parsim", "C_fork_join_8"),
        &fork_join,
        EVENTS / 9,
    );
    group.finish();
}

/// An event of the `priority_queue` calendar, identified (hashed and compared) by its sequence
/// number alone, as the crate requires distinct items.
#[derive(Clone, Copy, Debug)]
struct Keyed {
    /// Scheduling sequence number, unique.
    seq: u64,
    /// The payload.
    event: Event,
}

impl PartialEq for Keyed {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}

impl Eq for Keyed {}

impl Hash for Keyed {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.seq.hash(state);
    }
}

/// A departure of `job` from station 0 (a job that arrived at the start).
fn departure(job: u32) -> Event {
    Event::Departure {
        job,
        record: Job {
            class: 0,
            parent: parsim::engine::network::jobs::NO_PARENT,
            pending: 0,
            station: 0,
            born: SimTime::ZERO,
            arrived: SimTime::ZERO,
        },
    }
}

/// A span of mean-1 time as clock ticks (the clock of a scenario whose smallest mean is 1).
fn ticks(span: f64) -> u64 {
    parsim::time::Clock::default().ticks(span)
}

/// The hold model on [`Calendar`] with 10 to 10^6 pending events, and on `PriorityQueue` with
/// 10 to 10^5.
fn calendar(c: &mut Criterion) {
    let mut group = c.benchmark_group("calendar");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    group.throughput(Throughput::Elements(HOLDS));
    for n in [10_u32, 1000, 10_000, 100_000, 1_000_000] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(SEED);
        let mut cal = Calendar::new();
        for job in 0..n {
            cal.schedule(SimTime::ZERO.after(ticks(rng.sample(Exp1))), departure(job));
        }
        group.bench_function(BenchmarkId::new("parsim_Calendar", n), |b| {
            b.iter(|| {
                for _ in 0..HOLDS {
                    let (t, e) = cal.pop().expect("the hold model never runs dry");
                    cal.schedule(t.after(ticks(rng.sample(Exp1))), e);
                }
            });
        });

        if n > 100_000 {
            continue;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(SEED);
        let mut pq: PriorityQueue<Keyed, Reverse<(u64, u64)>> =
            PriorityQueue::with_capacity(n as usize);
        let mut seq = 0_u64;
        for job in 0..n {
            let t: f64 = rng.sample(Exp1);
            seq += 1;
            pq.push(
                Keyed {
                    seq,
                    event: departure(job),
                },
                Reverse((t.to_bits(), seq)),
            );
        }
        group.bench_function(BenchmarkId::new("priority_queue", n), |b| {
            b.iter(|| {
                for _ in 0..HOLDS {
                    let (k, Reverse((t, _))) = pq.pop().expect("the hold model never runs dry");
                    let t = f64::from_bits(t) + rng.sample::<f64, _>(Exp1);
                    seq += 1;
                    pq.push(
                        Keyed {
                            seq,
                            event: k.event,
                        },
                        Reverse((t.to_bits(), seq)),
                    );
                }
            });
        });
    }
    group.finish();
}

/// The engine with a large calendar: open networks of 10 and 1000 delay stations (about 5000
/// pending events either way), and closed delay networks of 10 to 10^6 jobs.
fn large_calendar(c: &mut Criterion) {
    let mut group = c.benchmark_group("large_calendar");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(3));

    for stations in [10, 1000] {
        let open = network(&open_delays_toml(stations));
        bench_engine(
            &mut group,
            BenchmarkId::new("open_delays", stations),
            &open,
            EVENTS / 2,
        );
    }

    for population in [10_u64, 1000, 10_000, 100_000, 1_000_000] {
        let closed = network(&closed_delays_toml(population));
        bench_engine(
            &mut group,
            BenchmarkId::new("closed_delays", population),
            &closed,
            EVENTS / 2,
        );
    }
    group.finish();
}

/// A program scenario: `pattern` ("ring" or "reduce") of 64 KiB messages on `ranks` ranks over
/// a bus or a square-ish 2-D torus, repeated to about 2*10^5 messages.
fn program_toml(pattern: &str, ranks: u32, torus: bool) -> String {
    let body = match pattern {
        "ring" => {
            "{ kind = \"sendrecv\", to = \"(rank + 1) % P\", from = \"(rank + P - 1) % P\", bytes = 65536 }"
        }
        _ => "{ kind = \"reduce\", algorithm = \"binomial\", bytes = 65536 }",
    };
    let times = (200_000 / ranks).max(4);
    let topology = if torus {
        let x = (1..=ranks)
            .rev()
            .find(|x| x * x <= ranks && ranks.is_multiple_of(*x))
            .unwrap_or(1);
        format!("kind = \"torus\"\ndims = [{x}, {}]", ranks / x)
    } else {
        "kind = \"bus\"".to_owned()
    };
    format!(
        "[program]\nranks = {ranks}\nreport_each = false\n\n[[program.op]]\nkind = \"repeat\"\ntimes = {times}\nbody = [{body}]\n\n[topology]\n{topology}\nbandwidth = 1e9\nlatency = 1e-6\nstartup = 2e-6\n"
    )
}

/// Rank programs: messages per second (see the module docs).
fn programs(c: &mut Criterion) {
    let mut group = c.benchmark_group("programs");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    for pattern in ["ring", "reduce"] {
        for torus in [false, true] {
            for ranks in [16_u32, 256, 4096] {
                let sc = parsim::scenario::parse(
                    &program_toml(pattern, ranks, torus),
                    Path::new("bench.toml"),
                )
                .unwrap_or_else(|e| panic!("{e}"));
                let prog = sc.program().expect("a program scenario").clone();
                let run = || {
                    parsim::engine::program::Execution::new(&prog, SEED, 0)
                        .run()
                        .expect("the benchmark programs run to completion")
                };
                group.throughput(Throughput::Elements(run().messages));
                let id = format!("{pattern}_{}", if torus { "torus" } else { "bus" });
                group.bench_function(BenchmarkId::new(id, ranks), |b| b.iter(|| black_box(run())));
            }
        }
    }
    group.finish();
}

criterion_group!(benches, models, calendar, large_calendar, programs);
criterion_main!(benches);
