//! GOAL schedules on LogGP endpoints: the two 16-rank schedules of LogGOPSim's repository
//! (written here as its Schedgen writes them, not copied), and 300 random schedules with the
//! per-host times LogGOPSim printed for them.

use std::path::Path;

use parsim::analytic::loggp::LogGp;
use parsim::engine::schedule::{DagExecution, DagFault};
use parsim::scenario::check::schedule::goal;
use parsim::schedule::dag::TICKS_PER_NS;
use parsim::schedule::{Endpoints, FS_PER_TICK, Machine, PerByte, ReadyOrder};

use crate::util::root;

fn machine(endpoints: Endpoints, order: ReadyOrder) -> Machine {
    Machine {
        endpoints,
        links: None,
        order,
    }
}

fn defaults() -> Endpoints {
    Endpoints::from_seconds(&LogGp::LOGGOPSIM).unwrap()
}

/// Which of LogGOPSim's two example schedules.
#[derive(Clone, Copy)]
pub enum Example {
    /// `binary_tree_16.goal`: a binomial-tree broadcast from rank 0.
    BinaryTree,
    /// `dissemination_16.goal`: four rounds of the dissemination pattern.
    Dissemination,
}

/// The GOAL text of one of LogGOPSim's example schedules, as its Schedgen writes them
/// (`-p binomialtreebcast` or `-p dissemination`, `-s 16`, 1-byte messages, tag 0).
pub fn example(which: Example) -> String {
    let p = 16u32;
    let mut s = format!("num_ranks {p}\n");
    for r in 0..p {
        s.push_str(&format!("\nrank {r} {{\n"));
        match which {
            Example::BinaryTree => {
                // the parent is r with its highest set bit cleared; children r + 2^k, 2^k > r
                let mut l = 0;
                if r > 0 {
                    l = 1;
                    let parent = r & !(1 << (31 - r.leading_zeros()));
                    s.push_str(&format!("l1: recv 1b from {parent} tag 0\n"));
                }
                let mut k = if r == 0 {
                    1
                } else {
                    1 << (32 - r.leading_zeros())
                };
                while r + k < p {
                    l += 1;
                    s.push_str(&format!("l{l}: send 1b to {} tag 0\n", r + k));
                    if r > 0 {
                        s.push_str(&format!("l{l} requires l1\n"));
                    }
                    k <<= 1;
                }
            }
            Example::Dissemination => {
                for round in 0..4u32 {
                    let d = 1 << round;
                    let (send, recv) = (2 * round + 1, 2 * round + 2);
                    s.push_str(&format!("l{send}: send 1b to {} tag 0\n", (r + d) % p));
                    if round > 0 {
                        s.push_str(&format!("l{send} requires l{}\n", send - 1));
                    }
                    s.push_str(&format!(
                        "l{recv}: recv 1b from {} tag 0\n",
                        (r + p - d) % p
                    ));
                }
            }
        }
        s.push_str("}\n");
    }
    s
}

/// [`example`] written to a temporary file, for the command line.
pub fn example_file(which: Example) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("parsim-it-{}-goal", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = match which {
        Example::BinaryTree => "binary_tree_16.goal",
        Example::Dissemination => "dissemination_16.goal",
    };
    let path = dir.join(name);
    std::fs::write(&path, example(which)).unwrap();
    path
}

#[test]
fn the_two_schedules_from_loggopsim_take_22000_ns() {
    for which in [Example::BinaryTree, Example::Dissemination] {
        let file = example_file(which);
        let dag = goal::read_file(&file).unwrap();
        assert_eq!(dag.ranks(), 16);
        for order in [ReadyOrder::Program, ReadyOrder::LogGopSim] {
            let m = machine(defaults(), order);
            let run = DagExecution::new(&dag, &m).unwrap().run().unwrap();
            assert_eq!(run.makespan_ticks, 22_000 * TICKS_PER_NS, "{file:?}");
            assert!(
                (run.makespan - 22e-6).abs() < 1e-18,
                "{file:?}: {}",
                run.makespan
            );
        }
    }
    // the broadcast's hosts, as LogGOPSim prints them
    let dag = goal::parse(&example(Example::BinaryTree), Path::new("tree.goal")).unwrap();
    let m = machine(defaults(), ReadyOrder::Program);
    let run = DagExecution::new(&dag, &m).unwrap().run().unwrap();
    let ns: Vec<u64> = run.finish.iter().map(|t| t / TICKS_PER_NS).collect();
    assert_eq!(
        ns,
        [
            6000, 10000, 10000, 14000, 10000, 14000, 14000, 18000, 10000, 14000, 14000, 18000,
            14000, 18000, 18000, 22000
        ]
    );
    assert_eq!(run.events, 45, "LogGOPSim counts 45 events");
}

/// A case of `tests/data/goal/loggopsim_fuzz.txt`: its number, LogGOPSim's options, the
/// schedule, and the per-host times in ns (`None`: LogGOPSim found unmatched queues).
type Case = (usize, Vec<(char, u64)>, String, Option<Vec<u64>>);

fn fuzz_cases() -> Vec<Case> {
    let text = std::fs::read_to_string(root().join("tests/data/goal/loggopsim_fuzz.txt")).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(head) = lines.next() {
        let rest = head.strip_prefix("### case ").expect("a case header");
        let (n, args) = rest.split_once(" args").unwrap();
        let words: Vec<&str> = args.split_whitespace().collect();
        let opts = words
            .chunks(2)
            .map(|c| (c[0].chars().nth(1).unwrap(), c[1].parse().unwrap()))
            .collect();
        let mut body = String::new();
        for l in lines.by_ref() {
            if let Some(e) = l.strip_prefix("### expect ") {
                let expect = (e != "unmatched")
                    .then(|| e.split_whitespace().map(|x| x.parse().unwrap()).collect());
                out.push((n.parse().unwrap(), opts, body, expect));
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
    }
    out
}

#[test]
fn random_schedules_give_loggopsims_host_times_to_the_nanosecond() {
    let cases = fuzz_cases();
    assert_eq!(cases.len(), 300);
    let mut completed = 0;
    for (n, opts, body, expect) in cases {
        let dag = goal::parse(&body, Path::new(&format!("case{n}.goal"))).unwrap();
        // LogGOPSim's options, in nanoseconds (and bytes for S)
        let (mut l, mut o, mut g, mut big_g, mut big_o, mut s) = (2500, 1500, 1000, 6, 0, 65535);
        for (k, v) in opts {
            match k {
                'L' => l = v,
                'o' => o = v,
                'g' => g = v,
                'G' => big_g = v,
                'O' => big_o = v,
                'S' => s = v,
                _ => panic!("option -{k}"),
            }
        }
        let ns = |x: u64| x * TICKS_PER_NS;
        let e = Endpoints {
            l: ns(l),
            o: ns(o),
            g: ns(g),
            // per byte in femtoseconds
            big_g: PerByte::from_fs(ns(big_g) * FS_PER_TICK),
            big_o: PerByte::from_fs(ns(big_o) * FS_PER_TICK),
            s,
        };
        let m = machine(e, ReadyOrder::LogGopSim);
        let got = DagExecution::new(&dag, &m).unwrap().run();
        match (expect, got) {
            (Some(times), Ok(run)) => {
                completed += 1;
                let host: Vec<u64> = run.finish.iter().map(|t| t / TICKS_PER_NS).collect();
                assert_eq!(host, times, "case {n}");
            }
            (None, Err(DagFault::Incomplete { .. })) => {}
            (expect, got) => panic!("case {n}: LogGOPSim {expect:?}, parsim {got:?}"),
        }
    }
    assert!(completed > 100, "{completed}");
}
