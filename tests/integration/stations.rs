//! Stations with features against their exact results, computed here from the closed forms
//! (birth-death chains and Cobham's priority formulas): priorities (head of line and
//! preemptive-resume), capacities that lose, impatience, batch arrivals, load-dependent speed.
//! Fixed seeds; each check asks the exact value to lie in the 99% interval and the interval to
//! be tighter than a stated bound (`statistics::assert_agrees`).

use super::statistics::assert_agrees;
use super::util::{load, open_single, prediction, scenario, simulate};

/// Two Poisson classes of rate 0.4 each at one exponential server of mean 1, `urgent` at
/// level 0 and `background` at level 1, under `preemption`.
fn two_levels(preemption: &str) -> String {
    format!(
        r#"
[[class]]
name = "urgent"
priority = 0
[[class]]
name = "background"
priority = 1
[[station]]
name = "in_u"
kind = "source"
class = "urgent"
interarrival = {{ dist = "exp", rate = 0.4 }}
[[station]]
name = "in_b"
kind = "source"
class = "background"
interarrival = {{ dist = "exp", rate = 0.4 }}
[[station]]
name = "cpu"
kind = "fcfs"
priority = "{preemption}"
service = {{ dist = "exp", mean = 1.0 }}
[[route]]
class = "urgent"
from = "in_u"
to = "cpu"
[[route]]
class = "urgent"
from = "cpu"
to = "exit"
[[route]]
class = "background"
from = "in_b"
to = "cpu"
[[route]]
class = "background"
from = "cpu"
to = "exit"
"#
    )
}

#[test]
fn head_of_line_priority_gives_cobhams_waits() {
    // W0 = sum lambda E[S^2] / 2 = 0.8; W_k = W0 / ((1 - sigma_{k-1})(1 - sigma_k))
    let ex = simulate(&scenario(&two_levels("non-preemptive")), 20, 50_000, 31);
    assert_agrees(&ex, "station.cpu.urgent.wait", 0.8 / 0.6, 0.03);
    assert_agrees(&ex, "station.cpu.background.wait", 0.8 / (0.6 * 0.2), 0.06);
    assert_agrees(&ex, "station.cpu.utilisation", 0.8, 0.01);
}

#[test]
fn preemptive_resume_priority_hides_the_background_from_the_urgent_class() {
    // T_k = E[S] / (1 - sigma_{k-1}) + sum_{i <= k} lambda_i E[S_i^2] / 2 / ((1 - sigma_{k-1})(1 - sigma_k))
    let ex = simulate(&scenario(&two_levels("preemptive-resume")), 20, 50_000, 32);
    assert_agrees(&ex, "class.urgent.response", 1.0 + 0.4 / 0.6, 0.02);
    assert_agrees(
        &ex,
        "class.background.response",
        1.0 / 0.6 + 0.8 / (0.6 * 0.2),
        0.06,
    );
}

/// Two closed classes (4 interactive jobs at level 0, 3 batch jobs at level 1) through a think
/// delay, a one-server head-of-line cpu (with `cpu_extra` lines) and a disk of capacity 2 that
/// blocks the cpu when full.
fn head_of_line_before_a_blocking_disk(cpu_extra: &str) -> String {
    let mut text = String::from(
        "[[class]]\nname = \"interactive\"\npopulation = 4\nreference = \"think\"\npriority = 0\n\
         [[class]]\nname = \"batch\"\npopulation = 3\nreference = \"think\"\npriority = 1\n\
         [[station]]\nname = \"think\"\nkind = \"delay\"\nservice = { dist = \"exp\", mean = 1.0 }\n",
    );
    text += &format!(
        "[[station]]\nname = \"cpu\"\nkind = \"fcfs\"\npriority = \"non-preemptive\"\n{cpu_extra}\n\
         service = {{ dist = \"exp\", mean = 0.3 }}\n\
         [[station]]\nname = \"disk\"\nkind = \"fcfs\"\ncapacity = 2\nwhen_full = \"block\"\n\
         service = {{ dist = \"exp\", mean = 0.4 }}\n"
    );
    for class in ["interactive", "batch"] {
        for (from, to) in [("think", "cpu"), ("cpu", "disk"), ("disk", "think")] {
            text += &format!("[[route]]\nclass = \"{class}\"\nfrom = \"{from}\"\nto = \"{to}\"\n");
        }
    }
    text
}

#[test]
fn head_of_line_priority_takes_the_fast_path_with_the_featured_paths_figures_bit_for_bit() {
    // `rate_by_jobs = [1.0]` changes nothing in the model but sends the cpu through the
    // featured FCFS station (timers with generations, work in f64); without it the cpu is the
    // head-of-line fast path. Same draws, same events, same figures, blocked jobs included.
    let fast = simulate(
        &scenario(&head_of_line_before_a_blocking_disk("")),
        3,
        20_000,
        7,
    );
    let featured = simulate(
        &scenario(&head_of_line_before_a_blocking_disk("rate_by_jobs = [1.0]")),
        3,
        20_000,
        7,
    );
    assert_eq!(fast.metrics, featured.metrics);
    assert_eq!(fast.events, featured.events);
    for (a, b) in fast.replications.iter().zip(&featured.replications) {
        let bits = |row: &[f64]| row.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(a), bits(b));
    }
    let i = fast.index_of("station.disk.number").expect("reported");
    assert!(
        fast.interval(i, 0.99).mean > 1.0,
        "the disk fills: blocking is exercised"
    );
}

/// The time-average probabilities of a birth-death chain with birth rate `lambda` and death
/// rate `death(n)` in state `n`, over states `0..=last`.
fn birth_death(lambda: f64, death: impl Fn(usize) -> f64, last: usize) -> Vec<f64> {
    let mut p = vec![1.0];
    for n in 1..=last {
        p.push(p[n - 1] * lambda / death(n));
    }
    let total: f64 = p.iter().sum();
    p.iter().map(|x| x / total).collect()
}

fn mean(p: &[f64]) -> f64 {
    p.iter().enumerate().map(|(n, x)| n as f64 * x).sum()
}

#[test]
fn a_full_m_m_2_5_loses_what_the_birth_death_chain_says() {
    let p = birth_death(2.0, |n| n.min(2) as f64, 5);
    let station =
        "kind = \"fcfs\"\nservers = 2\ncapacity = 5\nservice = { dist = \"exp\", mean = 1.0 }";
    let ex = simulate(&scenario(&open_single(2.0, station)), 20, 50_000, 33);
    assert_agrees(&ex, "station.q.loss", p[5], 0.02);
    assert_agrees(&ex, "class.jobs.loss", p[5], 0.02);
    assert_agrees(&ex, "station.q.number", mean(&p), 0.02);
    assert_agrees(
        &ex,
        "class.jobs.response",
        mean(&p) / (2.0 * (1.0 - p[5])),
        0.02,
    );
}

#[test]
fn a_delay_with_a_capacity_loses_erlang_b_whatever_its_service_law() {
    // Erlang B at a = 2, c = 3: insensitive to the (uniform) service law
    let mut b = 1.0;
    for k in 1..=3 {
        b = 2.0 * b / (f64::from(k) + 2.0 * b);
    }
    let station =
        "kind = \"delay\"\ncapacity = 3\nservice = { dist = \"uniform\", min = 0.0, max = 2.0 }";
    let ex = simulate(&scenario(&open_single(2.0, station)), 20, 50_000, 34);
    assert_agrees(&ex, "station.q.loss", b, 0.02);
    assert_agrees(&ex, "station.q.number", 2.0 * (1.0 - b), 0.02);
}

#[test]
fn impatient_callers_abandon_as_erlang_a_says() {
    // M/M/2+M: death rate min(n, 2) + 0.5 max(n - 2, 0); P(abandon) = theta E[Lq] / lambda
    let p = birth_death(
        2.5,
        |n| n.min(2) as f64 + 0.5 * n.saturating_sub(2) as f64,
        200,
    );
    let queued: f64 = p
        .iter()
        .enumerate()
        .map(|(n, x)| n.saturating_sub(2) as f64 * x)
        .sum();
    let station = "kind = \"fcfs\"\nservers = 2\npatience = { dist = \"exp\", mean = 2.0 }\nservice = { dist = \"exp\", mean = 1.0 }";
    let ex = simulate(&scenario(&open_single(2.5, station)), 20, 50_000, 35);
    assert_agrees(&ex, "station.q.abandon", 0.5 * queued / 2.5, 0.02);
    assert_agrees(&ex, "class.jobs.abandon", 0.5 * queued / 2.5, 0.02);
    assert_agrees(&ex, "station.q.number", mean(&p), 0.02);
}

#[test]
fn geometric_batches_wait_as_m_x_m_1_says() {
    // Wq = lambda_b E[X] E[S^2] / (2 (1 - rho)) + E[S] (E[X^2] - E[X]) / (2 E[X] (1 - rho))
    let (lb, ex1, p) = (0.2, 3.0, 1.0 / 3.0);
    let ex2 = (2.0 - p) / (p * p);
    let rho = lb * ex1;
    let wait = lb * ex1 * 2.0 / (2.0 * (1.0 - rho)) + (ex2 - ex1) / (2.0 * ex1 * (1.0 - rho));
    let text = open_single(lb, "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 1.0 }")
        .replace(
            "interarrival = { dist = \"exp\", rate = 0.2 }",
            "interarrival = { dist = \"exp\", rate = 0.2 }\nbatch = { dist = \"geometric\", mean = 3.0 }",
        );
    let ex = simulate(&scenario(&text), 20, 50_000, 36);
    assert_agrees(&ex, "station.q.wait", wait, 0.04);
    assert_agrees(&ex, "station.q.utilisation", rho, 0.01);
    assert_agrees(&ex, "class.jobs.throughput", lb * ex1, 0.01);
}

#[test]
fn a_load_dependent_server_matches_its_birth_death_chain_fcfs_and_ps() {
    let lambda = 1.0 / 0.6;
    let r = [1.0, 1.5, 2.0];
    let p = birth_death(lambda, |n| r[n.min(3) - 1], 3000);
    for (kind, seed) in [("fcfs", 37), ("ps", 38)] {
        let station = format!(
            "kind = \"{kind}\"\nrate_by_jobs = [1.0, 1.5, 2.0]\nservice = {{ dist = \"exp\", mean = 1.0 }}"
        );
        let ex = simulate(&scenario(&open_single(lambda, &station)), 20, 50_000, seed);
        assert_agrees(&ex, "station.q.number", mean(&p), 0.04);
        assert_agrees(&ex, "station.q.utilisation", 1.0 - p[0], 0.01);
    }
}

#[test]
fn a_plain_network_reports_no_loss_and_no_abandonment() {
    let ex = simulate(
        &scenario(&open_single(0.5, "kind = \"fcfs\"\nservice = 1.0")),
        2,
        1_000,
        39,
    );
    for name in ["station.q.loss", "class.jobs.loss", "station.q.abandon"] {
        assert!(ex.index_of(name).is_none(), "{name} is reported");
    }
}

#[test]
fn the_loss_decomposition_is_exact_where_poisson_splits_into_buffers() {
    // a Poisson stream split at random is two Poisson streams: each buffer is exactly M/M/1/K,
    // though the method, which cannot know it, says approximation
    let text = r#"
[[class]]
name = "jobs"
[[station]]
name = "arrivals"
kind = "source"
class = "jobs"
interarrival = { dist = "exp", rate = 2.0 }
[[station]]
name = "a"
kind = "fcfs"
capacity = 3
service = { dist = "exp", mean = 1.0 }
[[station]]
name = "b"
kind = "fcfs"
capacity = 2
service = { dist = "exp", mean = 0.5 }
[[route]]
class = "jobs"
from = "arrivals"
branches = [{ to = "a", p = 0.3 }, { to = "b", p = 0.7 }]
[[route]]
class = "jobs"
from = "a"
to = "exit"
[[route]]
class = "jobs"
from = "b"
to = "exit"
"#;
    let a = parsim::study::analyze_scenario(&scenario(text));
    let predicted = |metric: &str| prediction(&a, metric, "loss decomposition").value;
    let la = parsim::analytic::mmck(0.6, 1.0, 1, 3).unwrap();
    let lb = parsim::analytic::mmck(1.4, 0.5, 1, 2).unwrap();
    assert!((predicted("station.a.loss") - la.loss_probability).abs() < 1e-12);
    assert!((predicted("station.b.loss") - lb.loss_probability).abs() < 1e-12);
    let lost = 0.3 * la.loss_probability + 0.7 * lb.loss_probability;
    assert!((predicted("class.jobs.loss") - lost).abs() < 1e-12);
    let ex = simulate(&scenario(text), 20, 50_000, 61);
    assert_agrees(&ex, "class.jobs.loss", lost, 0.01);
}

#[test]
fn the_poisson_decomposition_is_exact_where_poisson_sources_feed_a_priority_station() {
    // validation/priority_open_two_stations.toml: "cpu" (head of line, exponential, mean 0.8)
    // sees the two Poisson sources (0.4 each): Cobham, W0 = 0.8 * 1.28 / 2 = 0.512,
    // W_hi = W0 / 0.68, W_lo = W0 / (0.68 * 0.36); "disk" (preemptive resume, Erlang-2, mean
    // 0.9, E[S^2] = 1.215) sees cpu's departures, taken as Poisson: R_hi = 0.9 + 0.243 / 0.64
    let sc = load("validation/priority_open_two_stations.toml");
    let a = parsim::study::analyze_scenario(&sc);
    let predicted = |metric: &str| prediction(&a, metric, "Poisson decomposition");
    let hand = [
        ("station.cpu.hi.wait", 0.512 / 0.68, true),
        ("station.cpu.lo.wait", 0.512 / (0.68 * 0.36), true),
        ("station.disk.hi.response", 0.9 + 0.243 / 0.64, false),
        (
            "class.hi.response",
            0.8 + 0.512 / 0.68 + 0.9 + 0.243 / 0.64,
            false,
        ),
    ];
    for (metric, value, exact) in hand {
        let p = predicted(metric);
        assert!(
            (p.value - value).abs() < 1e-9 * value,
            "{metric}: {}",
            p.value
        );
        assert_eq!(p.exact, exact, "{metric}: {}", p.method);
    }
    assert!(
        predicted("class.hi.response")
            .method
            .contains("the jobs other stations send to \"disk\" taken as Poisson arrivals")
    );
    let ex = simulate(&sc, 20, 50_000, 71);
    assert_agrees(&ex, "station.cpu.hi.wait", 0.512 / 0.68, 0.03);
    assert_agrees(&ex, "station.cpu.lo.wait", 0.512 / (0.68 * 0.36), 0.04);
}

#[test]
fn a_bmap_queue_gets_the_exact_chain_and_m_x_g_1_as_an_approximation_beside_it() {
    // validation/mam_bmap_m1.toml: the phases' law (1/3, 2/3); batches of 1 at 0.4/3 and of 3
    // at 0.3/3 per unit time, so lambda_b = 0.7/3, E[X] = 1.3/0.7, E[X^2] = 3.1/0.7; service
    // exponential of mean 1.5 (E[S^2] = 4.5): M^X/G/1 with the epochs taken as Poisson,
    // Wq = lambda_b E[X] E[S^2] / (2 (1 - rho)) + E[S] (E[X^2] - E[X]) / (2 E[X] (1 - rho))
    let a = parsim::study::analyze_scenario(&load("validation/mam_bmap_m1.toml"));
    let find = |start: &str| prediction(&a, "class.jobs.response", start);
    let (lb, ex, ex2, s) = (0.7 / 3.0, 1.3 / 0.7, 3.1 / 0.7, 1.5);
    let rho = lb * ex * s;
    let wq =
        lb * ex * 2.0 * s * s / (2.0 * (1.0 - rho)) + s * (ex2 - ex) / (2.0 * ex * (1.0 - rho));
    let mx = find("M^X/G/1");
    assert!(
        (mx.value - (wq + s)).abs() < 1e-9 * mx.value,
        "{}",
        mx.value
    );
    assert!(!mx.exact && mx.method.contains("its epochs taken as Poisson"));
    let chain = find("exact Markov chain");
    assert!(chain.exact);
    // the bursts wait longer than compound Poisson batches of the same sizes
    assert!(
        chain.value > 1.5 * mx.value,
        "{} against {}",
        chain.value,
        mx.value
    );
}
