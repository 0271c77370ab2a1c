//! Blocking after service (`when_full = "block"`): the simulation against the exact Markov
//! chain of a cyclic network, computed here; Akyildiz's published MVABLO values through
//! `analyze`; a deadlock that stops the run with the stations' names. Fixed seeds; each check
//! asks the exact value to lie in the 99% interval and the interval to be tighter than a
//! stated bound (`statistics::assert_agrees`).

use std::collections::HashMap;

use super::statistics::assert_agrees;
use super::util::{call, scenario, simulate, temp_scenario};
use parsim::study::analyze_scenario;

/// A cycle of one-server FCFS stations `a`, `b`, `c` with the given capacities (blocking after
/// service) and exponential means, and `jobs` jobs.
fn cycle(capacity: [u32; 3], mean: [f64; 3], jobs: u32) -> String {
    let mut text = format!("[[class]]\nname = \"jobs\"\npopulation = {jobs}\nreference = \"a\"\n");
    for (k, name) in ["a", "b", "c"].iter().enumerate() {
        text += &format!(
            "[[station]]\nname = \"{name}\"\nkind = \"fcfs\"\ncapacity = {}\nwhen_full = \"block\"\nservice = {{ dist = \"exp\", mean = {} }}\n",
            capacity[k], mean[k]
        );
    }
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a")] {
        text += &format!("[[route]]\nclass = \"jobs\"\nfrom = \"{from}\"\nto = \"{to}\"\n");
    }
    text
}

/// The exact mean jobs at each station and the throughput of a cycle of one-server
/// exponential stations under blocking after service: the chain on (jobs, blocked) per
/// station, enumerated from `start`, solved densely.
fn exact_cycle(capacity: [u32; 3], mean: [f64; 3], start: [u32; 3]) -> ([f64; 3], f64) {
    type State = ([u32; 3], [bool; 3]);
    // a freed place at `i` lets in the job blocked upstream of it, and so on up the cycle
    let let_in = |n: &mut [u32; 3], b: &mut [bool; 3], mut i: usize| {
        loop {
            let p = (i + 2) % 3;
            if b[p] && n[i] < capacity[i] {
                b[p] = false;
                n[p] -= 1;
                n[i] += 1;
                i = p;
            } else {
                return;
            }
        }
    };
    let mut index: HashMap<State, usize> = HashMap::new();
    let mut states: Vec<State> = vec![(start, [false; 3])];
    index.insert(states[0], 0);
    let mut moves = Vec::new();
    let mut k = 0;
    while k < states.len() {
        let (n, b) = states[k];
        for i in 0..3 {
            if n[i] == 0 || b[i] {
                continue;
            }
            let (mut m, mut c) = (n, b);
            let j = (i + 1) % 3;
            if m[j] < capacity[j] {
                m[i] -= 1;
                m[j] += 1;
                let_in(&mut m, &mut c, i);
            } else {
                c[i] = true;
            }
            let next = *index.entry((m, c)).or_insert_with(|| {
                states.push((m, c));
                states.len() - 1
            });
            moves.push((k, next, 1.0 / mean[i], i));
        }
        k += 1;
    }
    let s = states.len();
    // Q^T p = 0 with the first equation replaced by sum p = 1
    let mut a = vec![0.0; s * s];
    for &(from, to, rate, _) in &moves {
        a[to * s + from] += rate;
        a[from * s + from] -= rate;
    }
    for x in a.iter_mut().take(s) {
        *x = 1.0;
    }
    let mut rhs = vec![0.0; s];
    rhs[0] = 1.0;
    let p = parsim::linalg::solve(a, rhs).expect("an irreducible chain");
    let mut jobs = [0.0; 3];
    for (q, (n, _)) in p.iter().zip(&states) {
        for i in 0..3 {
            jobs[i] += q * f64::from(n[i]);
        }
    }
    let throughput = moves
        .iter()
        .filter(|m| m.3 == 0)
        .map(|&(from, _, rate, _)| p[from] * rate)
        .sum();
    (jobs, throughput)
}

#[test]
fn a_blocking_cycle_matches_its_exact_markov_chain() {
    // Akyildiz's example network with 10 jobs
    let (capacity, mean) = ([4, 5, 5], [1.5, 2.0, 1.0]);
    let (jobs, x) = exact_cycle(capacity, mean, [4, 5, 1]);
    let ex = simulate(&scenario(&cycle(capacity, mean, 10)), 20, 40_000, 41);
    assert_agrees(&ex, "class.jobs.throughput", x, 0.01);
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        assert_agrees(&ex, &format!("station.{name}.number"), jobs[i], 0.02);
        assert_agrees(&ex, &format!("station.{name}.response"), jobs[i] / x, 0.02);
        // a blocked server is not busy: the utilisation is the throughput times the service
        assert_agrees(
            &ex,
            &format!("station.{name}.utilisation"),
            x * mean[i],
            0.01,
        );
    }
    // the blocking is real: without capacities the same network carries more
    assert!(x < 0.49, "throughput {x}");
}

#[test]
fn analyze_reproduces_akyildiz_published_responses() {
    for (jobs, published) in [(10, [6.925, 8.061, 4.185]), (12, [7.967, 9.019, 8.011])] {
        let a = analyze_scenario(&scenario(&cycle([4, 5, 5], [1.5, 2.0, 1.0], jobs)));
        for (name, value) in ["a", "b", "c"].iter().zip(published) {
            let metric = format!("station.{name}.response");
            let p = a
                .predictions
                .iter()
                .find(|p| p.metric == metric && p.method.starts_with("Akyildiz"))
                .unwrap_or_else(|| panic!("no MVABLO prediction of {metric}: {:?}", a.refusals));
            assert!(!p.exact, "an approximation");
            // the published digits, truncated
            assert!(
                (p.value - value).abs() < 1e-3 && p.value >= value,
                "{jobs} jobs, {metric}: {} against {value}",
                p.value
            );
        }
    }
}

#[test]
fn stations_that_block_each_other_stop_the_run_with_their_names() {
    // "a" sends half its jobs to "b", half to "c"; "b" and "c" send theirs back: with one
    // place at each, a job done at "a" for a full "b" holds "a" while "b"'s job waits for "a"
    let text = r#"
[run]
replications = 2
length = 100000
[[class]]
name = "jobs"
population = 2
reference = "a"
[[station]]
name = "a"
kind = "fcfs"
capacity = 1
when_full = "block"
service = { dist = "exp", mean = 1.0 }
[[station]]
name = "b"
kind = "fcfs"
capacity = 1
when_full = "block"
service = { dist = "exp", mean = 1.0 }
[[station]]
name = "c"
kind = "fcfs"
capacity = 1
when_full = "block"
service = { dist = "exp", mean = 1.0 }
[[route]]
class = "jobs"
from = "a"
branches = [{ to = "b", p = 0.5 }, { to = "c", p = 0.5 }]
[[route]]
class = "jobs"
from = "b"
to = "a"
[[route]]
class = "jobs"
from = "c"
to = "a"
"#;
    let path = temp_scenario("blocking_deadlock", text);
    let (code, out, err) = call(&["run", path.to_str().unwrap()]);
    assert_ne!(code, Some(0), "{out}");
    assert!(err.contains("deadlocked"), "{err}");
    assert!(
        err.contains(r#"stations "a", "b" block each other"#)
            || err.contains(r#"stations "a", "c" block each other"#),
        "{err}"
    );
}
