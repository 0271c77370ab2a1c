//! Fuzzing parse, check, analysis and a short run with structured scenarios, and the other
//! inputs parsim reads or writes.
//!
//! Generators feed one harness: queueing networks built from random choices (valid ones and
//! broken ones: unknown names, bad probabilities, extreme or invalid distribution parameters,
//! forks without joins, closed classes that leave), rank programs (operations, regions,
//! collectives with roots and groups, loops with huge counts, deep expressions, disks,
//! topologies, machine profiles written beside them), `[spmd]` models (one phase or several,
//! network forms, counts that multiply work), `[pipeline]`s, and the bundled scenarios mutated
//! line by line. Each scenario must be refused with problems that have a line, or analysed and
//! run to a report whose every number is finite and obeys the laws (Little's law at every
//! station, utilisations in `[0, servers]`, a deterministic makespan at least the contention-free
//! critical path, every message sent received), or stopped by a run error; never a panic,
//! never a hang (each input has 30 s), never a missing number with success. Beside scenarios:
//! CSV measurements for `fit-comm` (a fit that succeeds has finite coefficients and errors),
//! sweep values (no panic, a bounded number of points), Slurm jobs with hostile values (a job
//! that is written adds no line and parses under `bash -n`), GOAL files on machines given by
//! hostile `--loggp`, `--topology` and `--ranks-per-node` values (every refusal at a line of the
//! file, at the file, or at a flag; a schedule written back reads back the same; every number a
//! run reports finite and not negative), and program timelines under every `--timeline-limit`
//! (a trace holds at most its limit of events, is JSON, and its chart no control character).
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
    if c.hostile && c.chance(15) {
        return hostile_op(c);
    }
    match c.below(if depth < 2 { 9 } else { 8 }) {
        0 if c.chance(40) => format!(
            "kind = \"compute\"\niterations = \"{}\"\ncost = {}\nsplit = {}\n",
            c.pick(&["1000", "rank * 10 + 1", "P * 100"]),
            distribution(c, &["0.0001", "0.001"]),
            c.pick(&["true", "false"])
        ),
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
            let root = if matches!(kind, "bcast" | "reduce" | "scatter" | "gather") && c.chance(30)
            {
                format!(
                    "root = \"{}\"\n",
                    c.either(&["0", "P - 1", "P / 2"], &["rank", "rank % 2", "P", "-1"])
                )
            } else {
                String::new()
            };
            format!("kind = \"{kind}\"\nbytes = {bytes}\n{algorithm}{root}")
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

/// An operation a careless or malicious user writes: counts that multiply work past any budget,
/// regions longer than the clock, expressions nested past the parser's depth, roots that
/// differ between ranks, disks that do not exist.
fn hostile_op(c: &mut Choices<'_>) -> String {
    match c.below(6) {
        0 => format!(
            "kind = \"repeat\"\ntimes = {}\nbody = [{{ kind = \"compute\", time = {{ dist = \"det\", value = 1.0 }} }}]\n",
            c.pick(&[
                "1000000000000",
                "9223372036854775807",
                "\"2^62\"",
                "\"rank * 1000000000000\"",
                "4294967296"
            ])
        ),
        1 => format!(
            "kind = \"compute\"\niterations = \"{}\"\ncost = {{ dist = \"{}\", mean = 1.0 }}\nsplit = {}\n",
            c.pick(&[
                "10000000000000",
                "9223372036854775807",
                "rank * 100000000000000",
                "-5"
            ]),
            c.pick(&["exp", "uniform"]),
            c.pick(&["true", "false"])
        ),
        2 => {
            let depth = *c.pick(&[&10usize, &63, &64, &65, &200, &5000]);
            format!(
                "kind = \"send\"\nto = \"{}(rank + 1) % P{}\"\nbytes = 1\n",
                "(".repeat(depth),
                ")".repeat(depth)
            )
        }
        3 => format!(
            "kind = \"bcast\"\nbytes = 8\nroot = \"{}\"\n",
            c.pick(&["rank", "rank / 2", "node", "P - 1 - rank"])
        ),
        4 => format!(
            "kind = \"io\"\ndisk = \"{}\"\nbytes = {}\n",
            c.pick(&["d0", "nowhere"]),
            c.pick(&[
                "1024",
                "\"rank * 1000000000000000\"",
                "-1",
                "9223372036854775807"
            ])
        ),
        _ => format!(
            "kind = \"sendrecv\"\nto = \"(rank + 1) % P\"\nfrom = \"(rank + P - 1) % P\"\nbytes = {}\n",
            c.pick(&[
                "\"2^40\"",
                "\"2^62\"",
                "9223372036854775807",
                "{ dist = \"exp\", mean = 1e30 }"
            ])
        ),
    }
}

/// An `[spmd]` model: one phase or several, the network form or an interconnect, with counts
/// (`n_io`, `cycles`, `p`) and times that are sometimes extreme.
fn spmd(c: &mut Choices<'_>) -> String {
    let p = c.either(
        &["1", "2", "4", "8", "9", "16"],
        &["0", "-1", "100000000", "3"],
    );
    let mut t = format!(
        "[run]\nreplications = 2\nlength = {}\n\n[spmd]\np = {p}\nd = {}\nw = {}\nS_par = {}\nS_ser = {}\nS0_com = {}\nSR_com = {}\nS0_io = {}\nSR_io = {}\nn_io = {}\nio = \"{}\"\n",
        c.pick(&["20", "100"]),
        c.either(&["1", "2"], &["0", "-1"]),
        c.either(&["0.5", "0.0", "1.0"], &["-0.5", "nan", "2.0"]),
        time_value(c, &["4.0", "1.0"]),
        time_value(c, &["0.1", "0.0"]),
        time_value(c, &["0.05", "0.0"]),
        c.either(
            &["0.2", "0.1"],
            &["1e13", "9.223372036854776e18", "0.0", "1e300"]
        ),
        time_value(c, &["0.01", "0.0"]),
        c.either(
            &["0.4", "1.0"],
            &["1e13", "9.223372036854776e18", "1e-300", "0.0"]
        ),
        c.either(&["5", "1", "2"], &["1000000000", "0.5", "0", "1e300"]),
        c.pick(&["sio", "aio"]),
    );
    let network = c.chance(40);
    if network {
        t.push_str(&format!(
            "network = \"{}\"\nr = {}\ncycles = {}\n",
            c.pick(&["torus", "mesh", "ring", "bus", "full"]),
            c.either(&["1", "2"], &["0", "7"]),
            c.either(&["2", "3"], &["0", "1000000000"]),
        ));
    } else {
        t.push_str(&format!(
            "r = {}\n",
            c.either(&["1", "2", "3"], &["0", "9"])
        ));
    }
    if c.chance(30) {
        t.push_str(&format!(
            "cpu = {{ dist = \"{}\" }}\n",
            c.pick(&["exp", "det", "uniform"])
        ));
    }
    if c.chance(40) {
        for k in 0..1 + c.below(3) {
            t.push_str(&format!(
                "\n[[spmd.phase]]\nname = \"ph{k}\"\ncycles = {}\n",
                c.either(&["1", "2", "5"], &["0", "100000000", "-3"])
            ));
            if c.chance(50) {
                t.push_str(&format!(
                    "n_io = {}\n",
                    c.either(&["1", "3"], &["1000000000", "0", "1e300"])
                ));
            }
            if c.chance(30) {
                t.push_str(&format!("SR_io = {}\n", time_value(c, &["1.0", "30.0"])));
            }
        }
    }
    t
}

/// A `[pipeline]` (Kuntraruk's parallel merge), with item and group counts that are sometimes
/// past any budget.
fn pipeline(c: &mut Choices<'_>) -> String {
    format!(
        "[run]\nreplications = 2\n\n[pipeline]\nranks = {}\nitems = {}\ngroups = {}\ntask = {}\nmessage = {}\nbandwidth = {}\n",
        c.either(&["2", "4", "8"], &["3", "0", "1048576"]),
        c.either(
            &["8", "16", "12"],
            &["1000000000000000", "9223372036854775807", "0", "5"]
        ),
        c.either(&["1", "2"], &["0", "100000000"]),
        distribution(c, &["0.15", "0.01"]),
        distribution(c, &["1000.0", "23720.0"]),
        c.either(&["1.6e8", "1e6"], &["0.0", "1e-300", "inf"]),
    )
}

/// A program whose messages cost what a machine profile says, with the profile written into
/// `dir`: measured fits, or hostile numbers (`nan`, negative, huge), or a file that is not a
/// profile.
fn profiled(c: &mut Choices<'_>, dir: &Path) -> String {
    let ranks = *c.pick(&[&2u32, &4, &8]);
    let mut profile = String::new();
    for primitive in ["send", "bcast", "reduce", "allreduce", "barrier"] {
        profile.push_str(&format!(
            "[[fit]]\nprimitive = \"{primitive}\"\nranks = {ranks}\na = {}\nb = {}\na_se = 0.0\nb_se = 0.0\npoints = 5\nresidual_sd = 0.0\n\n",
            c.either(&["1e-6", "2e-5", "0.0"], &["-1.0", "nan", "1e300", "inf"]),
            c.either(&["1e-9", "5e-10"], &["-1e-9", "nan", "1e300"]),
        ));
    }
    if c.hostile && c.chance(20) {
        profile = c
            .pick(&["not = [a profile", "fits = 5", "", "[[fit]]\nprimitive = 5"])
            .to_owned();
    }
    let name = format!("profile-{}.toml", PROFILES.fetch_add(1, Ordering::Relaxed));
    std::fs::write(dir.join(&name), profile).expect("the fuzz directory is writable");
    let mut t = format!("[program]\nranks = {ranks}\n\n");
    for _ in 0..1 + c.below(3) {
        t.push_str("[[program.op]]\n");
        t.push_str(&match c.below(4) {
            0 => "kind = \"bcast\"\nbytes = 1024\n".to_owned(),
            1 => "kind = \"allreduce\"\nbytes = 8\n".to_owned(),
            2 => "kind = \"sendrecv\"\nto = \"(rank + 1) % P\"\nfrom = \"(rank + P - 1) % P\"\nbytes = 100\n".to_owned(),
            _ => format!("kind = \"compute\"\ntime = {}\n", distribution(c, &["0.001"])),
        });
        t.push('\n');
    }
    t.push_str(&format!("[machine]\nprofile = \"{name}\"\n"));
    t
}

/// Profiles written by [`profiled`], numbered.
static PROFILES: AtomicU64 = AtomicU64::new(0);

/// A CSV of communication measurements for `fit-comm`: lines that fit, lines with extreme or
/// invalid numbers, a header alone.
fn measurements(c: &mut Choices<'_>) -> String {
    let mut t = c
        .either(
            &["primitive,ranks,bytes,time"],
            &["primitive,ranks,bytes", "", "a,b,c,d"],
        )
        .to_owned();
    for _ in 0..c.below(12) {
        t.push_str(&format!(
            "\n{},{},{},{}",
            c.either(&["send", "bcast"], &["", "x y", "\"q\""]),
            c.either(&["2", "4"], &["0", "-1", "4294967296", "2.5"]),
            c.either(
                &["0", "1024", "65536", "1e6"],
                &["1.7e308", "-5", "nan", "inf", "1e-320"]
            ),
            c.either(
                &["1e-5", "2e-5", "0.001"],
                &["1.7e308", "0", "-1", "nan", "1e308", "5e-324"]
            ),
        ));
    }
    t
}

/// Sweep values as a user types them after `--vary KEY=`, sometimes absurd.
fn sweep_values(c: &mut Choices<'_>) -> String {
    c.either(
        &[
            "1,2,4",
            "1..8",
            "0.1..0.9:0.2",
            "2^0..2^6",
            "1..1000:x10",
            "0.01..100:log9",
            "0..1:lin5",
        ],
        &[
            "1..1000000000000",
            "0..1:lin1000000000",
            "1e-300..1e300:log100000",
            "2^0..2^1000",
            "1..2:0",
            "nan..1",
            "1..inf",
            "..",
            "1,,2",
            "0..1:x0",
            "1..1e18:x1.0000001",
        ],
    )
    .to_owned()
}

/// A Slurm job whose values a hostile user chose: shell syntax, control characters, quotes.
fn slurm_job(c: &mut Choices<'_>) -> parsim::slurm::Job {
    const VALUES: &[&str] = &[
        "short",
        "a b",
        "x;touch PWNED",
        "$(touch PWNED)",
        "`touch PWNED`",
        "it's",
        "\"q\"",
        "a\nb",
        "a\rb",
        "a\0b",
        "#c",
        "%j",
        "\\",
        "",
        "a\u{85}b",
        "-o",
        "--wrap=touch PWNED",
    ];
    let mut v = || VALUES[c.below(VALUES.len())].to_owned();
    parsim::slurm::Job {
        parsim: format!("/opt/{}", v()).into(),
        workdir: format!("/home/{}", v()).into(),
        command: vec!["run".into(), v(), "--set".into(), format!("name={}", v())],
        shards: 3,
        out: v().into(),
        merge_args: vec![v()],
        result: format!("{}.txt", v()).into(),
        partition: Some(v()),
        time: Some(v()),
        cpus_per_task: 2,
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
    let sc = match scenario::parse(text, &fuzz_dir().join("fuzz.toml")) {
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
    if let Some(p) = analysis.predictions.iter().find(|p| !p.value.is_finite()) {
        return Err(format!("a prediction that is not a number: {p:?}"));
    }
    let mut opt = Options::from_scenario(&sc);
    opt.replications = 2;
    opt.max_replications = 2;
    opt.length = opt.length.min(500);
    opt.precision = None;
    opt.threads = 1;
    opt.warmup = Warmup::Fixed(0);
    // a program may legitimately run for minutes (up to 2^32 operations); the fuzz stops each
    // one after 2^24 events, which also exercises the budget's diagnosis
    opt.event_budget = 1 << 24;
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
    laws(&sc, &ex, opt.length)?;
    // a program's contention-free evaluation, where it says exact, is what the run measured,
    // to the clock's rounding: 1e-6 relative and a thousand ticks, since a transmission shorter
    // than the program's smallest declared time (a size given by an expression) is rounded to
    // ticks of 2^-31 of that time, which can be several 1e-9 of it (100 bytes at 1e9 B/s beside
    // a 1e-6 latency: 2.8e-9), or of the default scale when no time is declared; a modelling
    // error is far larger
    let tick = sc.program().map_or(0.0, |p| p.clock.tick());
    // (exact in expectation, with random sizes or durations, is checked only where every
    // metric of the two replications agrees, a deterministic program: two replications'
    // sample means say nothing sharp of a mean, and one metric alone can agree by chance, as
    // a mean of message sizes rounded to whole bytes did)
    let deterministic = report.metrics.iter().all(|m| m.ci.half_width == 0.0);
    for p in analysis
        .predictions
        .iter()
        .filter(|p| deterministic && p.exact)
        .filter(|p| p.method.starts_with("contention-free mean-value"))
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
    // a deterministic program's makespan is at least its contention-free critical path (one
    // whose evaluation names nothing random: random sizes can all round to the same whole
    // bytes, the same in every replication, below their mean)
    if let Some(m) = report.metrics.iter().find(|m| m.name == "program.makespan")
        && deterministic
    {
        for p in analysis.predictions.iter().filter(|p| {
            p.metric == "program.makespan"
                && p.method.starts_with("contention-free mean-value")
                && !p.method.contains("random")
        }) {
            if m.ci.mean < p.value * (1.0 - 1e-6) - 1e3 * tick {
                return Err(format!(
                    "the makespan {} is below the contention-free critical path {} ({})",
                    m.ci.mean, p.value, p.method
                ));
            }
        }
    }
    Ok(Outcome::Reported)
}

/// What a fuzz input is.
enum Input {
    /// A scenario file's text.
    Scenario(String),
    /// A CSV of measurements for `fit-comm`.
    Measurements(String),
    /// Sweep values.
    SweepValues(String),
    /// A Slurm job.
    Slurm(Box<parsim::slurm::Job>),
    /// A GOAL file's text and the machine flags it runs on.
    Goal(
        String,
        parsim::scenario::check::schedule::flags::GoalMachine,
    ),
    /// A program scenario recorded with a timeline of at most this many events.
    Timeline(String, u64),
}

impl Input {
    fn text(&self) -> String {
        match self {
            Input::Scenario(t) | Input::Measurements(t) | Input::SweepValues(t) => t.clone(),
            Input::Slurm(job) => format!("{job:?}"),
            Input::Goal(t, machine) => format!("{machine:?}\n{t}"),
            Input::Timeline(t, limit) => format!("--timeline-limit {limit}\n{t}"),
        }
    }
}

/// A GOAL schedule: messages between random pairs (matched, or hostile: unmatched, to ranks
/// beyond `num_ranks`, with wildcards), calcs of every size, labels with `requires` and
/// `irequires` (hostile: undefined, cyclic), CPUs and NICs up to 255 (hostile: 256), blocks
/// opened and closed on one line, comments, and hostile junk: a missing brace, a stray
/// character, numbers past 64 bits, `num_ranks` 0 or beyond the limit.
fn goal(c: &mut Choices<'_>) -> String {
    let ranks = 1 + c.below(5) as u32;
    let mut blocks: Vec<Vec<String>> = vec![Vec::new(); ranks as usize];
    for _ in 0..c.below(12) {
        let (a, b) = (
            c.below(ranks as usize) as u32,
            c.below(ranks as usize) as u32,
        );
        let bytes = c.either(
            &["0", "8", "1000", "70000"],
            &["18446744073709551615", "99999999999999999999"],
        );
        let tag = c.either(&["0", "1", "7"], &["4294967301", "-1"]);
        let peer = if c.hostile && c.chance(10) {
            ranks + 3
        } else {
            b
        };
        blocks[a as usize].push(format!("send {bytes}b to {peer} tag {tag}"));
        let from = if c.chance(20) {
            "-1".to_owned()
        } else {
            a.to_string()
        };
        if !(c.hostile && c.chance(10)) {
            blocks[b as usize].push(format!("recv {bytes}b from {from} tag {tag}"));
        }
    }
    for block in &mut blocks {
        for _ in 0..c.below(4) {
            let ns = c.either(
                &["0", "1", "1000", "250000"],
                &["18446744073709551", "18446744073709551615"],
            );
            block.push(format!("calc {ns}"));
        }
    }
    let header = if c.hostile && c.chance(10) {
        c.pick(&[
            "num_ranks 0",
            "num_ranks 16777217",
            "num_ranks",
            "nm_ranks 2",
        ])
        .to_owned()
    } else {
        format!("num_ranks {ranks}")
    };
    let mut t = format!("{header}\n");
    for (r, block) in blocks.iter_mut().enumerate() {
        let n = block.len();
        for (i, stmt) in block.iter_mut().enumerate() {
            if c.chance(30) {
                let unit = c.either(
                    &["cpu 0", "cpu 1", "cpu 255", "nic 1", "nic 255"],
                    &["cpu 256", "nic 999"],
                );
                if !stmt.starts_with("calc") || unit.starts_with("cpu") {
                    stmt.push(' ');
                    stmt.push_str(unit);
                }
            }
            *stmt = format!("l{i}: {stmt}");
        }
        for _ in 0..c.below(3) {
            if n < 2 {
                break;
            }
            let (x, y) = (c.below(n), c.below(n));
            let (later, earlier) = (x.max(y), x.min(y));
            let kind = *c.pick(&[&"requires", &"irequires"]);
            let dep = if c.hostile && c.chance(20) {
                format!("l{earlier} {kind} l{later}")
            } else if later != earlier {
                format!("l{later} {kind} l{earlier}")
            } else {
                continue;
            };
            block.push(dep);
        }
        if c.hostile && c.chance(5) {
            block.push(
                c.pick(&["l0 requires nowhere", "@@@", "l0: send 8 to 0", "}"])
                    .to_owned(),
            );
        }
        if block.is_empty() && c.chance(50) {
            t.push_str(&format!("rank {r} {{}}\n"));
            continue;
        }
        t.push_str(&format!("rank {r} {{\n"));
        if c.chance(20) {
            t.push_str("/* a comment\n over two lines */\n");
        }
        for stmt in block.iter() {
            t.push_str(stmt);
            t.push('\n');
        }
        if !(c.hostile && c.chance(5)) {
            t.push_str("}\n");
        }
    }
    t
}

/// The machine flags of a GOAL run: `--loggp` keys of every parameter (values in and beyond
/// their units and range, text where a number goes), a `--topology` that fits or not, and
/// ranks per node.
fn goal_machine(c: &mut Choices<'_>) -> parsim::scenario::check::schedule::flags::GoalMachine {
    let mut keys = Vec::new();
    for key in ["L", "o", "g", "G", "O", "S", "order"] {
        if !c.chance(40) {
            continue;
        }
        let value = match key {
            "S" => c.either(&["0", "1000", "65535"], &["-1", "1e3", "\"x\""]),
            "order" => c.either(&["\"program\"", "\"loggopsim\""], &["\"fifo\"", "1"]),
            "G" | "O" => c.either(
                &["0", "6e-9", "2.4e-12", "0.4e-12", "1e-10"],
                &["1e-17", "-1", "nan", "1e5", "1e400", "\"fast\""],
            ),
            _ => c.either(
                &["0", "1e-6", "2.5e-6", "1.1111111e-6"],
                &["1e-13", "-1", "inf", "1e7", "[1]"],
            ),
        };
        keys.push(format!("{key}={value}"));
    }
    if c.hostile && c.chance(10) {
        keys.push(
            c.pick(&["[topology]", "X=1", "L=", "}", "L=1e-6 # comment"])
                .to_owned(),
        );
    }
    let topology = c.chance(30).then(|| {
        c.either(
            &[
                "kind=\"bus\",bandwidth=1e9,latency=1e-7",
                "kind=\"full\",bandwidth=1e10,latency=1e-7",
            ],
            &[
                "kind=\"torus\",dims=[3,3],bandwidth=1e9",
                "kind=\"bus\"",
                "bandwidth=0",
            ],
        )
        .to_owned()
    });
    let ranks_per_node = c.chance(15).then(|| *c.pick(&[&1u32, &2, &0]));
    parsim::scenario::check::schedule::flags::GoalMachine {
        loggp: (c.chance(70)).then(|| keys.join(",")),
        topology,
        ranks_per_node,
    }
}

/// GOAL files written by [`goal`], numbered.
static GOALS: AtomicU64 = AtomicU64::new(0);

/// Reads a GOAL file on its flags' machine as `parsim run x.goal` does: refused with every
/// problem at a line of the file, at the file as a whole, or at a flag; or run to finite
/// numbers (or stopped by a run error); a schedule written back as GOAL reads back the same.
fn exercise_goal(
    text: &str,
    machine: &parsim::scenario::check::schedule::flags::GoalMachine,
) -> Result<Outcome, String> {
    let path = fuzz_dir().join(format!(
        "schedule-{}.goal",
        GOALS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    let sc = match parsim::scenario::check::schedule::flags::load(&path, machine, &[]) {
        Ok(sc) => sc,
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            if e.problems.is_empty() {
                return Err(format!("refused without a problem: {e}"));
            }
            return match e
                .problems
                .iter()
                // a line without a file would be one of the text the flags were read into
                .find(|p| p.file.is_none() && !p.path.starts_with("--"))
            {
                Some(p) => Err(format!(
                    "a problem that names neither the file nor a flag: {p:?}"
                )),
                None => Ok(Outcome::Refused),
            };
        }
    };
    let _ = std::fs::remove_file(&path);
    if let Some(parsim::schedule::Form::Dag(dag)) = sc.schedule().map(|s| &s.form) {
        let mut back = Vec::new();
        parsim::schedule::dag::write_goal(dag, &mut back).map_err(|e| e.to_string())?;
        let again = parsim::scenario::check::schedule::goal::parse(
            &String::from_utf8_lossy(&back),
            Path::new("back.goal"),
        )
        .map_err(|e| format!("the schedule written back does not read: {e}"))?;
        if (again.len(), again.sends(), again.dependencies())
            != (dag.len(), dag.sends(), dag.dependencies())
        {
            return Err("the schedule written back reads back different".into());
        }
    }
    let mut opt = Options::from_scenario(&sc);
    opt.replications = 2;
    opt.threads = 1;
    let Ok(ex) = replicate::run(&sc, &opt, &|_| {}) else {
        return Ok(Outcome::Stopped);
    };
    let report = RunReport::new(&sc, &opt, &ex);
    match report
        .metrics
        .iter()
        .find(|m| !m.ci.mean.is_finite() || m.ci.mean < 0.0)
    {
        Some(m) => Err(format!(
            "a run that succeeded reports {} = {}",
            m.name, m.ci.mean
        )),
        None => Ok(Outcome::Reported),
    }
}

/// Records a program's timeline as `run --timeline --timeline-svg --timeline-limit` does: a
/// run past the limit is refused; a trace within it holds at most that many events, is JSON and
/// within its bytes; a chart is well-formed XML text.
fn exercise_timeline(text: &str, limit: u64) -> Result<Outcome, String> {
    let Ok(sc) = scenario::parse(text, &fuzz_dir().join("timeline.toml")) else {
        return Ok(Outcome::Refused);
    };
    let Some(prog) = sc.program() else {
        return Ok(Outcome::Refused);
    };
    let tracks = parsim::timeline::track_events(prog.ranks);
    if tracks >= limit {
        return Ok(Outcome::Refused);
    }
    let Ok((_, recorded)) =
        parsim::engine::program::Execution::new(prog, 1, 0).run_with_timeline(limit - tracks)
    else {
        return Ok(Outcome::Stopped);
    };
    let about = parsim::timeline::About {
        scenario: sc.name.clone(),
        file: "timeline.toml".into(),
        seed: 1,
        replication: 0,
    };
    let mut trace = Vec::new();
    let most = parsim::timeline::most_trace_bytes(limit);
    if parsim::timeline::write_trace(&mut trace, &recorded, &about, most).is_err() {
        return Ok(Outcome::Stopped);
    }
    let json: serde_json::Value =
        serde_json::from_slice(&trace).map_err(|e| format!("the trace is not JSON: {e}"))?;
    let events = json["traceEvents"].as_array().map_or(0, Vec::len) as u64;
    if events > limit {
        return Err(format!("{events} events in a trace limited to {limit}"));
    }
    if let Ok(svg) = parsim::timeline::gantt_svg(&recorded, &about)
        && svg
            .chars()
            .any(|ch| ch < ' ' && !matches!(ch, '\n' | '\t' | '\r'))
    {
        return Err("a control character in the Gantt chart".into());
    }
    Ok(Outcome::Reported)
}

/// Fits the measurements as `fit-comm` does: a fit that succeeds has finite numbers, and its
/// profile reads back.
fn exercise_measurements(text: &str) -> Result<Outcome, String> {
    use parsim::models::profile::{MachineProfile, fit, read_measurements};
    let Ok(m) = read_measurements(text) else {
        return Ok(Outcome::Refused);
    };
    let Ok(profile) = fit(&m) else {
        return Ok(Outcome::Refused);
    };
    if profile.fits.is_empty() {
        return Err("a fit that succeeded fits nothing".into());
    }
    for f in &profile.fits {
        let numbers = [f.a, f.b, f.a_se, f.b_se, f.residual_sd];
        if numbers.iter().any(|v| !v.is_finite()) || f.a_se < 0.0 || f.b_se < 0.0 {
            return Err(format!("a fit that succeeded has {f:?}"));
        }
    }
    let back: MachineProfile = toml::from_str(&profile.to_toml())
        .map_err(|e| format!("the profile does not read back: {e}"))?;
    if back.fits.len() != profile.fits.len() {
        return Err("the profile reads back different".into());
    }
    Ok(Outcome::Reported)
}

/// Parses sweep values: no panic, and never more points than a sweep can run.
fn exercise_sweep_values(text: &str) -> Result<Outcome, String> {
    match parsim::sweep::Axis::parse(&format!("run.seed={text}")) {
        Err(_) => Ok(Outcome::Refused),
        Ok(axis) if axis.values.len() > 1_000_000 => {
            Err(format!("{} values accepted", axis.values.len()))
        }
        Ok(_) => Ok(Outcome::Reported),
    }
}

/// Writes a job's scripts: a job with a value that could add a line is refused; one that is
/// written has exactly the lines of a plain job, and `bash -n` parses each script.
fn exercise_slurm(job: &parsim::slurm::Job) -> Result<Outcome, String> {
    let Ok(scripts) = job.scripts() else {
        return Ok(Outcome::Refused);
    };
    let plain = parsim::slurm::Job {
        parsim: "/opt/parsim".into(),
        workdir: "/home/u".into(),
        command: vec!["run".into(), "x".into(), "--set".into(), "name=x".into()],
        out: "o".into(),
        merge_args: vec!["--json".into()],
        result: "r.txt".into(),
        partition: Some("p".into()),
        time: Some("1".into()),
        ..job.clone()
    };
    let expected = plain.scripts().map_err(|e| e.to_string())?;
    for ((name, text), (_, plain)) in scripts.iter().zip(&expected) {
        if text.lines().count() != plain.lines().count() {
            return Err(format!(
                "{name} has {} lines, a plain job's has {}:\n{text}",
                text.lines().count(),
                plain.lines().count()
            ));
        }
        if text.chars().any(|ch| ch.is_control() && ch != '\n') {
            return Err(format!("{name} holds a control character:\n{text:?}"));
        }
    }
    // bash itself, now and then (it is a process per script)
    if SLURM_CHECKS
        .fetch_add(1, Ordering::Relaxed)
        .is_multiple_of(20)
    {
        for (name, text) in &scripts {
            let out = std::process::Command::new("bash")
                .arg("-n")
                .arg("-c")
                .arg(text)
                .output()
                .map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(format!(
                    "bash -n refuses {name}: {}\n{text}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    Ok(Outcome::Reported)
}

/// Slurm jobs checked, to run `bash -n` on one in twenty.
static SLURM_CHECKS: AtomicU64 = AtomicU64::new(0);

/// The laws every successful run obeys, in every replication: utilisations in `[0, servers]`,
/// Little's law at every station of a network (`L = X R` over the replication, to the
/// half-width of its difference plus 2% of `L`, as tests/integration/network_properties.rs
/// checks it, plus what the window's edges cut off a run of `length` observations), and for a program whose replications are all the same (no random time) a
/// makespan at least its contention-free critical path.
fn laws(
    sc: &parsim::scenario::Scenario,
    ex: &parsim::replicate::Experiment,
    length: u64,
) -> Result<(), String> {
    let values = |name: &str| -> Option<Vec<f64>> {
        let i = ex.index_of(name)?;
        Some(ex.replications.iter().map(|r| r[i]).collect())
    };
    let servers = match sc.program() {
        Some(p) => f64::from(p.cores.max(1)),
        None => 1.0,
    };
    for name in &ex.metrics {
        if !name.ends_with(".utilisation") {
            continue;
        }
        let cap = match (sc.network(), name.strip_prefix("station.")) {
            (Some(net), Some(rest)) => {
                let station = rest.trim_end_matches(".utilisation");
                match net
                    .stations
                    .iter()
                    .find(|s| s.name == station)
                    .map(|s| &s.kind)
                {
                    Some(parsim::network::StationKind::Queue { servers, .. }) => {
                        f64::from((*servers).max(1))
                    }
                    // a delay (or anything without servers) has no bound to check
                    _ => continue,
                }
            }
            _ => servers,
        };
        for u in values(name).unwrap_or_default() {
            if !(-1e-9..=cap * (1.0 + 1e-9)).contains(&u) {
                return Err(format!("{name} = {u}, outside [0, {cap}]"));
            }
        }
    }
    if let Some(net) = sc.network() {
        for s in &net.stations {
            let base = format!("station.{}", s.name);
            let (Some(l), Some(x), Some(r)) = (
                values(&format!("{base}.number")),
                values(&format!("{base}.throughput")),
                values(&format!("{base}.response")),
            ) else {
                continue;
            };
            let d: Vec<f64> = (0..l.len()).map(|k| l[k] - x[k] * r[k]).collect();
            let n = d.len() as f64;
            let mean = d.iter().sum::<f64>() / n;
            let sd = (d.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0).max(1.0))
                .sqrt();
            let mean_l = l.iter().sum::<f64>() / n;
            let mean_r = r.iter().sum::<f64>() / n;
            // two replications: a t quantile of 63.7 at 99%; and the window's two edges cut
            // the sojourns of the jobs present there (about L of them, each about R long) out
            // of a window of duration T: 2 L R / T. The window holds `length` observations
            // (open jobs' responses and closed jobs' cycles), so T = length / (the classes'
            // throughputs summed): a short run of 50 observations whose closed class cycles 9
            // times per time unit lasts 5.4, where a station's sojourns of 1.1 at each edge
            // put L 0.68 off X R (L^2 / length, the edge term this check first had, took the
            // window as long as the station's own departures, and was 0.12)
            let classes: f64 = net
                .classes
                .iter()
                .filter_map(|c| values(&format!("class.{}.throughput", c.name)))
                .map(|t| t.iter().sum::<f64>() / n)
                .sum();
            let window = length.max(1) as f64 / classes;
            // the jobs at the edges are there for their whole sojourn, which the completed
            // ones' mean R understates when services are long beside the window (a gamma of
            // mean 1e15 in a window of 5 time units: only the short services complete); a
            // job found at an edge is at least its service's residual, mean (1 + SCV) / 2
            // (at a processor-sharing station that residual is stretched by the jobs sharing
            // it, about L: seed 521 of the seventh run, H2 services of SCV 4 at a PS station
            // shared by 2.7 jobs in a 50-observation window, where Little's law holds to 0.1%
            // at 5,000 observations)
            let sharing = match s.kind {
                parsim::network::StationKind::Queue {
                    discipline: parsim::network::Discipline::Ps,
                    ..
                } => mean_l.max(1.0),
                _ => 1.0,
            };
            let residual = s
                .kind
                .service()
                .into_iter()
                .flatten()
                .flatten()
                .map(|d| d.mean() * (1.0 + d.scv()) / 2.0 * sharing)
                .fold(mean_r, f64::max);
            let edges = if window.is_finite() && window > 0.0 {
                2.0 * mean_l * residual / window
            } else {
                mean_l * mean_l.max(1.0) / length.max(1) as f64
            };
            if mean.abs() > 63.7 * sd / n.sqrt() + 0.02 * mean_l + edges + 1e-9 {
                return Err(format!(
                    "Little's law at {}: L - X R = {mean} (sd {sd}) with L = {mean_l}",
                    s.name
                ));
            }
        }
    }
    Ok(())
}

/// The directory the fuzz inputs' side files (machine profiles) are written to.
fn fuzz_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("parsim-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// What [`bounded`] says of an input that did not finish in time.
const TIMED_OUT: &str = "no result within 30 s of CPU (or 600 s of wall time)";

/// [`exercise`] (or its counterpart for the input's kind) on its own thread with a bound on the
/// thread's CPU time (30 s; wall time would call a run a hang when other jobs starve the fuzz,
/// which runs at a low priority: twice a two-rank program went past 30 s of wall time while
/// builds held both cores, and ran in a second alone) and on its wall time (600 s: a thread
/// blocked on a read uses no CPU), with the default stack of a thread (2 MiB: a parser that
/// recursed without limit would overflow it).
fn bounded(input: Input) -> Result<Outcome, String> {
    let (tx, rx) = mpsc::channel();
    let (task_tx, task_rx) = mpsc::channel();
    std::thread::Builder::new()
        .spawn(move || {
            // "PID/task/TID": where /proc keeps this thread's CPU time
            let _ = task_tx.send(std::fs::read_link("/proc/thread-self").ok());
            let outcome = std::panic::catch_unwind(|| match &input {
                Input::Scenario(text) => exercise(text),
                Input::Measurements(text) => exercise_measurements(text),
                Input::SweepValues(text) => exercise_sweep_values(text),
                Input::Slurm(job) => exercise_slurm(job),
                Input::Goal(text, machine) => exercise_goal(text, machine),
                Input::Timeline(text, limit) => exercise_timeline(text, *limit),
            })
            .unwrap_or_else(|_| Err("panicked".to_owned()));
            let _ = tx.send(outcome);
        })
        .expect("a thread");
    let task = task_rx.recv().ok().flatten();
    let start = std::time::Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(outcome) => return outcome,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("the worker thread ended without a result".to_owned());
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let wall = start.elapsed().as_secs_f64();
                let cpu = task.as_deref().and_then(thread_cpu_seconds).unwrap_or(wall);
                if cpu >= 30.0 || wall >= 600.0 {
                    return Err(format!(
                        "{TIMED_OUT}: {cpu:.0} s of CPU in {wall:.0} s (a hang)"
                    ));
                }
            }
        }
    }
}

/// The CPU time (user and system) of thread `task` ("PID/task/TID" under /proc), in seconds.
fn thread_cpu_seconds(task: &std::path::Path) -> Option<f64> {
    let stat =
        std::fs::read_to_string(std::path::Path::new("/proc").join(task).join("stat")).ok()?;
    // after "pid (comm) ": state, ppid, ..., utime and stime are the 12th and 13th fields
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // the kernel's USER_HZ, 100 on Linux
    Some(ticks / 100.0)
}

/// How many generators there are ([`generate`]).
const GENERATORS: u32 = 11;

/// Which generator an input comes from, and the input it generates.
fn generate(bytes: &[u32]) -> Input {
    let first = bytes.first().copied().unwrap_or(0);
    let mut c = Choices {
        bytes,
        at: 1,
        hostile: first / GENERATORS % 2 == 1,
    };
    match first % GENERATORS {
        0 => Input::Scenario(network(&mut c)),
        1 => Input::Scenario(program(&mut c)),
        2 => Input::Scenario(mutated(&mut c)),
        3 => Input::Scenario(spmd(&mut c)),
        4 => Input::Scenario(pipeline(&mut c)),
        5 => Input::Scenario(profiled(&mut c, &fuzz_dir())),
        6 => Input::Measurements(measurements(&mut c)),
        7 => Input::SweepValues(sweep_values(&mut c)),
        8 => Input::Slurm(Box::new(slurm_job(&mut c))),
        9 => Input::Goal(goal(&mut c), goal_machine(&mut c)),
        _ => {
            let mut text = program(&mut c);
            // a title with control characters, now and then, for the chart
            if c.chance(20) {
                text = format!("name = \"\\u0001\\u001b[1m{}\"\n{text}", c.below(100));
            }
            let limit = *c.pick(&[&1u64, &40, &200, &5000, &100_000]);
            Input::Timeline(text, limit)
        }
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
        let input = generate(&bytes);
        let text = input.text();
        let outcome = bounded(input);
        let outcome = outcome.map_err(|e| {
            // proptest prints a finding only after shrinking it, and each shrink step of a
            // hang waits out the bound again: say what hung at once
            eprintln!("fuzz: seed {seed}: {e}\n--- input ---\n{text}\n--- shrinking ---");
            TestCaseError::fail(format!("{e}\n--- input ---\n{text}"))
        })?;
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
    // a long run can resume where an earlier one stopped
    let mut seed: u64 = std::env::var("PARSIM_FUZZ_FIRST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let first = seed;
    let start = Instant::now();
    let mut total = [0; 3];
    while start.elapsed() < Duration::from_secs(seconds) {
        let counts = campaign(seed, 2000);
        for (t, c) in total.iter_mut().zip(counts) {
            *t += c;
        }
        eprintln!(
            "fuzz: {} in {:.0} s (seeds {first}..={seed})",
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
    let mut valid = [0u32; GENERATORS as usize];
    let mut total = [0u32; GENERATORS as usize];
    for _ in 0..1800 {
        let bytes = strategy.new_tree(&mut runner).unwrap().current();
        let which = (bytes[0] % GENERATORS) as usize;
        let Input::Scenario(text) = generate(&bytes) else {
            continue;
        };
        total[which] += 1;
        if scenario::parse(&text, &fuzz_dir().join("fuzz.toml")).is_ok() {
            valid[which] += 1;
        }
    }
    // mutations are meant to break the file: only the generators of whole scenarios count
    let names = [
        "networks",
        "programs",
        "",
        "spmd models",
        "pipelines",
        "profiled programs",
    ];
    for (name, (v, t)) in names.iter().zip(valid.iter().zip(total)) {
        if name.is_empty() {
            continue;
        }
        assert!(
            f64::from(*v) >= 0.25 * f64::from(t),
            "only {v} of {t} generated {name} are valid"
        );
    }
}
