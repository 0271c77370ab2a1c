//! Fuzzing parse, check, analysis and a short run with structured scenarios.
//!
//! Three generators feed one harness: queueing networks built from random choices (valid ones
//! and broken ones: unknown names, bad probabilities, extreme or invalid distribution
//! parameters, forks without joins, closed classes that leave), rank programs (operations,
//! collectives, peers, topologies), and the bundled scenarios mutated line by line. Each input
//! must be refused with problems that have a line, or analysed and run to a report whose every
//! mean and half-width is a finite number, or stopped by a run error; never a panic, never a
//! hang (each input has 30 s), never a missing number with success.
//!
//! CI runs a bounded number of inputs. The long run is
//! `PARSIM_FUZZ_SECONDS=1800 cargo test --release --test integration fuzz -- --nocapture`,
//! which prints how many inputs it executed.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use parsim::replicate::{self, Options};
use parsim::report::RunReport;
use parsim::scenario::{self, Warmup};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Random choices, consumed one at a time (past the end, every choice is 0: the simplest).
struct Choices<'a> {
    bytes: &'a [u32],
    at: usize,
    /// Whether this input may contain invalid values (half of them do): without it, every
    /// choice is a valid one and the input exercises the engine rather than the checks.
    hostile: bool,
}

impl Choices<'_> {
    fn next(&mut self) -> u32 {
        let v = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        v
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        self.next() as usize % n.max(1)
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: u32) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'s, T: ?Sized>(&mut self, items: &[&'s T]) -> &'s T {
        items[self.below(items.len())]
    }

    /// One of `good`, or in a hostile input sometimes one of `bad`.
    fn either<'s>(&mut self, good: &[&'s str], bad: &[&'s str]) -> &'s str {
        if self.hostile && self.chance(25) {
            self.pick(bad)
        } else {
            self.pick(good)
        }
    }
}

/// Time parameters no valid scenario has.
const HOSTILE_TIMES: &[&str] = &[
    "0.0",
    "-1.0",
    "nan",
    "inf",
    "-inf",
    "5e-324",
    "1e-300",
    "1e300",
    "1e-100",
    "1e100",
    "1e-15",
    "1e15",
    "1.7976931348623157e308",
];

/// A positive time parameter: one of `ordinary`, or in a hostile input sometimes an extreme or
/// invalid one.
fn time_value(c: &mut Choices<'_>, ordinary: &[&str]) -> String {
    c.either(ordinary, HOSTILE_TIMES).to_owned()
}

/// A distribution in scenario syntax whose mean is one of `means`.
fn distribution(c: &mut Choices<'_>, means: &[&str]) -> String {
    let m = time_value(c, means);
    let bad = &["0.0", "-1.0", "nan", "1e300", "0.5"];
    match c.below(11) {
        0..=2 => format!("{{ dist = \"exp\", mean = {m} }}"),
        3 => format!(
            "{{ dist = \"exp\", rate = {} }}",
            time_value(c, &["1.0", "2.0", "4.0"])
        ),
        4 => format!("{{ dist = \"det\", value = {m} }}"),
        5 => format!("{{ dist = \"uniform\", mean = {m} }}"),
        6 => format!(
            "{{ dist = \"erlang\", k = {}, mean = {m} }}",
            c.either(&["1", "2", "4"], &["0", "-3", "100000"])
        ),
        7 => format!(
            "{{ dist = \"h2\", mean = {m}, scv = {} }}",
            c.either(&["1.0", "2.0", "4.0", "10.0"], bad)
        ),
        8 => format!(
            "{{ dist = \"lognormal\", mean = {m}, scv = {} }}",
            c.either(&["0.25", "1.0", "4.0"], bad)
        ),
        9 => format!(
            "{{ dist = \"gamma\", mean = {m}, scv = {} }}",
            c.either(&["0.5", "1.0", "3.0"], bad)
        ),
        _ => format!(
            "{{ dist = \"pareto\", scale = {m}, shape = {} }}",
            c.either(&["2.5", "3.0", "5.0"], bad)
        ),
    }
}

/// A queueing network: a chain of service stations visited by open classes (from their
/// sources) and closed classes (from and back to the first station), sometimes with a fork
/// and join; in a hostile input, routes and values that are sometimes wrong.
fn network(c: &mut Choices<'_>) -> String {
    const SERVICE: &[&str] = &["0.05", "0.1", "0.2"];
    const INTERARRIVAL: &[&str] = &["2.0", "5.0", "10.0"];
    let mut t = format!(
        "[run]\nreplications = 2\nlength = {}\n\n",
        c.pick(&["50", "200", "500"])
    );
    let n_classes = 1 + c.below(2);
    let n_service = 1 + c.below(4);
    let stations: Vec<String> = (0..n_service).map(|i| format!("s{i}")).collect();
    let is_closed: Vec<bool> = (0..n_classes).map(|_| c.chance(40)).collect();
    // a fork-join on the first two stations, for a single open class (or anything, if hostile)
    let fork = n_service >= 3 && (c.hostile || (n_classes == 1 && !is_closed[0])) && c.chance(30);
    // where a branch that goes back goes: the first station after the fork-join, if any
    let restart = if fork { "s2" } else { "s0" };
    for (k, &closed) in is_closed.iter().enumerate() {
        t.push_str(&format!("[[class]]\nname = \"c{k}\"\n"));
        if closed {
            let population = c.either(&["1", "2", "3", "5"], &["0", "-1", "20000000"]);
            let reference = c.either(&["s0"], &["nowhere", "f"]);
            t.push_str(&format!(
                "population = {population}\nreference = \"{reference}\"\n\n"
            ));
        } else {
            let entry = if fork { "f" } else { "s0" };
            t.push_str(&format!(
                "\n[[station]]\nname = \"src{k}\"\nkind = \"source\"\nclass = \"c{k}\"\n\
                 interarrival = {}\n\n[[route]]\nclass = \"c{k}\"\nfrom = \"src{k}\"\nto = \"{entry}\"\n\n",
                distribution(c, INTERARRIVAL)
            ));
        }
    }
    for s in &stations {
        let kind = c.pick(&["fcfs", "ps", "delay", "fcfs"]);
        t.push_str(&format!("[[station]]\nname = \"{s}\"\nkind = \"{kind}\"\n"));
        if !c.hostile || c.chance(90) {
            t.push_str(&format!("service = {}\n", distribution(c, SERVICE)));
        }
        if (kind == "fcfs" || c.hostile) && c.chance(20) {
            t.push_str(&format!(
                "servers = {}\n",
                c.either(&["1", "2", "4"], &["0", "-2"])
            ));
        }
        t.push('\n');
    }
    if fork {
        t.push_str("[[station]]\nname = \"f\"\nkind = \"fork\"\n");
        if c.chance(30) {
            let copies = c.either(&["2", "3", "1"], &["0", "1000000"]);
            t.push_str(&format!("copies = {copies}\nto = \"s1\"\n"));
        } else {
            t.push_str("branches = [\"s0\", \"s1\"]\n");
        }
        t.push_str("\n[[station]]\nname = \"j\"\nkind = \"join\"\nfork = \"f\"\n\n");
    }
    for (k, &closed) in is_closed.iter().enumerate() {
        let home = if closed { "s0" } else { "exit" };
        for (i, s) in stations.iter().enumerate() {
            let next = if fork && i <= 1 {
                "j"
            } else {
                stations.get(i + 1).map_or(home, String::as_str)
            };
            t.push_str(&format!("[[route]]\nclass = \"c{k}\"\nfrom = \"{s}\"\n"));
            let plain = next == "j" && !c.hostile;
            match c.below(10) {
                _ if plain => t.push_str(&format!("to = \"{next}\"\n")),
                0 => {
                    // back with probability 1 - p
                    let p = *c.pick(&[&0.5, &0.9, &0.75]);
                    let rest = format!("{}", 1.0 - p);
                    t.push_str(&format!(
                        "branches = [{{ to = \"{next}\", p = {p} }}, {{ to = \"{restart}\", p = {} }}]\n",
                        c.either(&[rest.as_str()], &["1.5", "-0.2", "nan"])
                    ))
                }
                1 if next != "exit" || c.hostile => t.push_str(&format!(
                    "policy = \"{}\"\namong = [\"{}\", \"{next}\"]\n",
                    c.pick(&["jsq", "round_robin"]),
                    if fork {
                        restart
                    } else {
                        stations[c.below(n_service)].as_str()
                    }
                )),
                2 if c.hostile => t.push_str(&format!(
                    "to = \"{}\"\n",
                    c.pick(&["exit", "s0", "nowhere", "j", "f"])
                )),
                3 if n_classes == 2 && (closed == is_closed[1 - k] || c.hostile) => {
                    t.push_str(&format!("to = \"{next}\"\nto_class = \"c{}\"\n", 1 - k))
                }
                _ => t.push_str(&format!("to = \"{next}\"\n")),
            }
            t.push('\n');
        }
        if fork {
            let after = stations.get(2).map_or(home, String::as_str);
            t.push_str(&format!(
                "[[route]]\nclass = \"c{k}\"\nfrom = \"j\"\nto = \"{after}\"\n\n"
            ));
        }
    }
    t
}

/// A rank program on a random topology.
fn program(c: &mut Choices<'_>) -> String {
    let ranks: u32 = *c.pick(&[&1u32, &2, &3, &4, &7, &8, &16, &64]);
    let mut t = format!("[program]\nranks = {ranks}\n\n");
    let n_ops = 1 + c.below(5);
    for _ in 0..n_ops {
        t.push_str("[[program.op]]\n");
        t.push_str(&op(c, 0));
        t.push('\n');
    }
    let kind = c.pick(&["bus", "full", "ring", "mesh", "torus", "tree", "fat_tree"]);
    t.push_str(&format!("[topology]\nkind = \"{kind}\"\n"));
    if kind == "mesh" || kind == "torus" {
        let dims = match (ranks, c.below(3)) {
            (r, 0) => format!("[{r}]"),
            (r, 1) if r % 2 == 0 => format!("[2, {}]", r / 2),
            _ => "[3, 3]".to_owned(),
        };
        t.push_str(&format!("dims = {dims}\n"));
    }
    t.push_str(&format!(
        "bandwidth = {}\nlatency = {}\nstartup = {}\nswitching = \"{}\"\nsharing = \"{}\"\n",
        c.either(&["1e9", "1e6", "100.0"], &["0.0", "-5.0", "1e300"]),
        c.either(&["1e-6", "0.0", "1e-3"], &["-1.0", "nan"]),
        c.either(&["1e-5", "0.0", "2e-6"], &["1e300"]),
        c.pick(&["cut_through", "store_and_forward"]),
        c.pick(&["fcfs", "fair"]),
    ));
    t
}

/// One program operation (at most two levels of loops).
fn op(c: &mut Choices<'_>, depth: u32) -> String {
    let bytes = c.either(
        &["1024", "0", "65536", "8", "\"rank * 100\""],
        &["-4", "\"rank - 5\""],
    );
    let algorithms = [
        "binomial",
        "binary",
        "linear",
        "chain",
        "recursive_doubling",
        "ring",
        "bruck",
        "pairwise",
        "dissemination",
        "ideal",
        "telepathy",
    ];
    match c.below(if depth < 2 { 9 } else { 8 }) {
        0 | 1 => format!(
            "kind = \"compute\"\ntime = {}\n",
            distribution(c, &["0.001", "0.01", "0.1"])
        ),
        2 => format!(
            "kind = \"sendrecv\"\nto = \"{}\"\nfrom = \"{}\"\nbytes = {bytes}\n",
            c.pick(&["(rank + 1) % P", "rank", "rank + 1", "(rank + P - 1) % P"]),
            c.pick(&["(rank + P - 1) % P", "(rank + 1) % P", "rank"]),
        ),
        3 => format!(
            "kind = \"send\"\nto = \"{}\"\nbytes = {bytes}\nwhen = \"rank % 2 == 0\"\n",
            c.pick(&["rank + 1", "(rank + 1) % P", "0"])
        ),
        4 => format!(
            "kind = \"recv\"\nfrom = \"{}\"\nwhen = \"rank % 2 == 1\"\n",
            c.pick(&["rank - 1", "0", "rank"])
        ),
        5 => "kind = \"barrier\"\n".to_owned(),
        6 | 7 => {
            let kind = c.pick(&[
                "bcast",
                "reduce",
                "allreduce",
                "scatter",
                "gather",
                "allgather",
                "alltoall",
            ]);
            // an algorithm that does not fit the collective is an input error: hostile only
            let algorithm = if c.hostile {
                format!("algorithm = \"{}\"\n", c.pick(&algorithms))
            } else {
                String::new()
            };
            format!("kind = \"{kind}\"\nbytes = {bytes}\n{algorithm}")
        }
        _ => {
            let body: Vec<String> = (0..1 + c.below(3))
                .map(|_| {
                    let inner = op(c, depth + 1).trim_end().replace('\n', ", ");
                    format!("{{ {inner} }}")
                })
                .collect();
            format!(
                "kind = \"repeat\"\ntimes = {}\nbody = [{}]\n",
                c.either(&["3", "0", "10"], &["-1", "\"rank - 2\""]),
                body.join(", ")
            )
        }
    }
}

/// A bundled scenario with a few of its lines deleted, duplicated, swapped, cut or changed.
fn mutated(c: &mut Choices<'_>) -> String {
    let files = [
        include_str!("../../scenarios/mm1.toml"),
        include_str!("../../scenarios/fork_join_8.toml"),
        include_str!("../../scenarios/two_class_closed.toml"),
        include_str!("../../scenarios/closed_delay_two_queues.toml"),
        include_str!("../../scenarios/mh21.toml"),
    ];
    let mut lines: Vec<String> = files[c.below(files.len())]
        .lines()
        .map(str::to_owned)
        .collect();
    for _ in 0..1 + c.below(4) {
        if lines.is_empty() {
            break;
        }
        let i = c.below(lines.len());
        match c.below(6) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                let j = c.below(lines.len());
                lines.swap(i, j);
            }
            3 => {
                let cut = c.below(lines[i].len() + 1);
                let cut = (0..=cut)
                    .rev()
                    .find(|&k| lines[i].is_char_boundary(k))
                    .unwrap_or(0);
                lines[i].truncate(cut);
            }
            4 => {
                if let Some(eq) = lines[i].find(" = ") {
                    lines[i] = format!(
                        "{} = {}",
                        &lines[i][..eq],
                        time_value(c, &["1.0", "0.5", "2.0"])
                    );
                }
            }
            _ => lines.insert(
                i,
                c.pick(&[
                    "[[station]]",
                    "[run]",
                    "x = 1",
                    "\"",
                    "[[route]]\nclass = \"jobs\"",
                ])
                .to_owned(),
            ),
        }
    }
    lines.join("\n")
}

/// What became of an input that showed no defect.
#[derive(Clone, Copy)]
enum Outcome {
    /// Refused by the checks, every problem with its line.
    Refused = 0,
    /// Accepted, and stopped by a run error.
    Stopped = 1,
    /// Accepted and run to a report of finite numbers.
    Reported = 2,
}

/// Parses, checks, analyses and briefly runs `text` on this thread; `Err` is a defect.
fn exercise(text: &str) -> Result<Outcome, String> {
    let sc = match scenario::parse(text, Path::new("fuzz.toml")) {
        Ok(sc) => sc,
        Err(e) => {
            if e.problems.is_empty() {
                return Err(format!("refused without a problem: {e}"));
            }
            return match e.problems.iter().find(|p| p.line.is_none()) {
                Some(p) => Err(format!("a problem without a line: {p:?}")),
                None => Ok(Outcome::Refused),
            };
        }
    };
    let analysis = parsim::study::analyze_scenario(&sc);
    let mut opt = Options::from_scenario(&sc);
    opt.replications = 2;
    opt.max_replications = 2;
    opt.length = opt.length.min(500);
    opt.precision = None;
    opt.threads = 1;
    opt.warmup = Warmup::Fixed(0);
    let Ok(ex) = replicate::run(&sc, &opt, &|_| {}) else {
        return Ok(Outcome::Stopped); // a run error is reported to the user with exit 2
    };
    let report = RunReport::new(&sc, &opt, &ex);
    for m in &report.metrics {
        if !m.ci.mean.is_finite() || !m.ci.half_width.is_finite() {
            return Err(format!(
                "a run that succeeded reports {} = {} +- {}",
                m.name, m.ci.mean, m.ci.half_width
            ));
        }
    }
    // a program's contention-free evaluation, where it says exact, is what the run measured,
    // to the clock's rounding: 1e-6 relative and a thousand ticks, since a transmission shorter
    // than the program's smallest declared time (a size given by an expression) is rounded to
    // ticks of 2^-31 of that time, which can be several 1e-9 of it (100 bytes at 1e9 B/s beside
    // a 1e-6 latency: 2.8e-9), or of the default scale when no time is declared; a modelling
    // error is far larger
    let tick = sc.program().map_or(0.0, |p| p.clock.tick());

    for p in analysis
        .predictions
        .iter()
        .filter(|p| p.exact && p.method.starts_with("contention-free mean-value"))
        // (a utilisation is a ratio of the times checked here: its rounding is not in ticks)
        .filter(|p| !p.metric.contains("utilisation"))
    {
        let Some(m) = report.metrics.iter().find(|m| m.name == p.metric) else {
            continue;
        };
        if (p.value - m.ci.mean).abs() > 1e-6 * m.ci.mean.abs() + 1e3 * tick {
            return Err(format!(
                "exact {} = {} ({}) but the run measured {}",
                p.metric, p.value, p.method, m.ci.mean
            ));
        }
    }
    Ok(Outcome::Reported)
}

/// [`exercise`] on its own thread with a time bound.
fn bounded(text: String) -> Result<Outcome, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let outcome = std::panic::catch_unwind(|| exercise(&text))
                .unwrap_or_else(|_| Err("panicked".to_owned()));
            let _ = tx.send(outcome);
        })
        .expect("a thread");
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| Err("no result within 30 s (a hang)".to_owned()))
}

/// Which generator an input comes from, and the text it generates.
fn generate(bytes: &[u32]) -> String {
    let first = bytes.first().copied().unwrap_or(0);
    let mut c = Choices {
        bytes,
        at: 1,
        hostile: first / 3 % 2 == 1,
    };
    match first % 3 {
        0 => network(&mut c),
        1 => program(&mut c),
        _ => mutated(&mut c),
    }
}

/// Runs `cases` generated inputs from `seed`; returns how many ended in each [`Outcome`].
fn campaign(seed: u64, cases: u32) -> [u64; 3] {
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    };
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
    let counts = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
    let outcome = runner.run(&prop::collection::vec(any::<u32>(), 8..160), |bytes| {
        let text = generate(&bytes);
        let outcome = bounded(text.clone())
            .map_err(|e| TestCaseError::fail(format!("{e}\n--- input ---\n{text}")))?;
        counts[outcome as usize].fetch_add(1, Ordering::Relaxed);
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("fuzzing found a defect: {e}");
    }
    counts.map(AtomicU64::into_inner)
}

/// `counts` for the log.
fn tally(counts: [u64; 3]) -> String {
    format!(
        "{} inputs: {} refused, {} stopped by a run error, {} reported",
        counts.iter().sum::<u64>(),
        counts[0],
        counts[1],
        counts[2]
    )
}

#[test]
fn fuzz_parse_check_and_run() {
    let seconds: u64 = std::env::var("PARSIM_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if seconds == 0 {
        eprintln!("fuzz: {}", tally(campaign(0x5eed, 600)));
        return;
    }
    let start = Instant::now();
    let mut total = [0; 3];
    let mut seed = 1;
    while start.elapsed() < Duration::from_secs(seconds) {
        let counts = campaign(seed, 2000);
        for (t, c) in total.iter_mut().zip(counts) {
            *t += c;
        }
        eprintln!(
            "fuzz: {} in {:.0} s (seeds 1..={seed})",
            tally(total),
            start.elapsed().as_secs_f64()
        );
        seed += 1;
    }
}

#[test]
fn the_generators_produce_runnable_scenarios_too() {
    // Fuzzing only the refusals would miss the engine: a fair share of the generated inputs
    // must pass the checks and run.
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = prop::collection::vec(any::<u32>(), 8..160);
    let mut valid = [0u32; 3];
    let mut total = [0u32; 3];
    for _ in 0..600 {
        let bytes = strategy.new_tree(&mut runner).unwrap().current();
        let which = (bytes[0] % 3) as usize;
        total[which] += 1;
        if scenario::parse(&generate(&bytes), Path::new("fuzz.toml")).is_ok() {
            valid[which] += 1;
        }
    }
    // mutations are meant to break the file: only the generators of whole scenarios count
    for (name, (v, t)) in ["networks", "programs"].iter().zip(valid.iter().zip(total)) {
        assert!(
            f64::from(*v) >= 0.25 * f64::from(t),
            "only {v} of {t} generated {name} are valid"
        );
    }
}
