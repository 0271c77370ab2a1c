//! Each check simulates with a fixed seed and requires (a) the analytic value to lie inside the
//! simulation's 99% confidence interval and (b) that interval's relative half-width to be below
//! a stated bound, so the check has teeth. Seeds are fixed, so the outcome is reproducible.

use parsim::replicate::Experiment;

use super::util::{open_single, scenario, simulate};

/// Asserts `expected` lies in the 99% interval of `metric` and the interval is tighter than
/// `max_relative` (relative half-width).
pub fn assert_agrees(ex: &Experiment, metric: &str, expected: f64, max_relative: f64) {
    let i = ex
        .index_of(metric)
        .unwrap_or_else(|| panic!("no metric {metric}"));
    let ci = ex.interval(i, 0.99);
    assert!(
        ci.relative_half_width() < max_relative,
        "{metric}: interval too wide to mean anything: {} +- {} (need < {max_relative})",
        ci.mean,
        ci.half_width
    );
    assert!(
        (ci.mean - expected).abs() <= ci.half_width,
        "{metric}: analytic {expected} outside the 99% interval {} +- {}",
        ci.mean,
        ci.half_width
    );
}

fn harmonic(n: u32) -> f64 {
    (1..=n).map(|i| 1.0 / f64::from(i)).sum()
}

const EXP1: &str = "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 1.0 }";

#[test]
fn mm1_at_rho_05_and_08_matches_one_over_mu_minus_lambda() {
    for (lambda, seed) in [(0.5, 11), (0.8, 12)] {
        let ex = simulate(&scenario(&open_single(lambda, EXP1)), 20, 40_000, seed);
        assert_agrees(&ex, "class.jobs.response", 1.0 / (1.0 - lambda), 0.03);
        assert_agrees(&ex, "station.q.utilisation", lambda, 0.01);
        assert_agrees(&ex, "station.q.number", lambda / (1.0 - lambda), 0.03);
    }
}

#[test]
fn processor_sharing_mm1_has_the_fcfs_mean() {
    let ex = simulate(
        &scenario(&open_single(
            0.7,
            "kind = \"ps\"\nservice = { dist = \"exp\", mean = 1.0 }",
        )),
        20,
        40_000,
        13,
    );
    assert_agrees(&ex, "class.jobs.response", 1.0 / 0.3, 0.03);
}

/// Pollaczek-Khinchine mean response time.
fn pk(lambda: f64, mean: f64, scv: f64) -> f64 {
    let rho = lambda * mean;
    mean * (1.0 + rho * (1.0 + scv) / (2.0 * (1.0 - rho)))
}

#[test]
fn md1_and_mh2_1_match_pollaczek_khinchine() {
    let cases = [
        ("dist = \"det\", value = 1.0", 0.8, 0.0, 40_000, 21),
        ("dist = \"h2\", mean = 1.0, scv = 4.0", 0.5, 4.0, 60_000, 22),
    ];
    for (service, lambda, scv, length, seed) in cases {
        let text = open_single(
            lambda,
            &format!("kind = \"fcfs\"\nservice = {{ {service} }}"),
        );
        assert_agrees(
            &simulate(&scenario(&text), 20, length, seed),
            "class.jobs.response",
            pk(lambda, 1.0, scv),
            0.03,
        );
    }
}

#[test]
fn mm4_matches_erlang_c() {
    let (lambda, c) = (3.0_f64, 4_u32);
    let a = lambda; // offered load in Erlangs (mean service 1)
    let mut b = 1.0; // Erlang B by recursion
    for k in 1..=c {
        b = a * b / (f64::from(k) + a * b);
    }
    let rho = a / f64::from(c);
    let erlang_c = b / (1.0 - rho + rho * b);
    let r = 1.0 + erlang_c / (f64::from(c) - a);
    assert!((erlang_c - 0.5094).abs() < 1e-4);
    let ex = simulate(
        &scenario(&open_single(
            lambda,
            "kind = \"fcfs\"\nservers = 4\nservice = { dist = \"exp\", mean = 1.0 }",
        )),
        20,
        40_000,
        31,
    );
    assert_agrees(&ex, "class.jobs.response", r, 0.02);
    assert_agrees(&ex, "station.q.utilisation", rho, 0.01);
}

/// Exact single-class MVA: think time `z`, single-server queues with demands `d`, population
/// `n`. Returns (throughput, per-queue residence times).
fn mva(z: f64, d: &[f64], n: u32) -> (f64, Vec<f64>) {
    let mut q = vec![0.0; d.len()];
    let mut x = 0.0;
    let mut r = vec![0.0; d.len()];
    for k in 1..=n {
        for i in 0..d.len() {
            r[i] = d[i] * (1.0 + q[i]);
        }
        x = f64::from(k) / (z + r.iter().sum::<f64>());
        for i in 0..d.len() {
            q[i] = x * r[i];
        }
    }
    (x, r)
}

#[test]
fn closed_delay_and_two_queues_match_exact_mva() {
    let text =
        std::fs::read_to_string(super::util::root().join("scenarios/closed_delay_two_queues.toml"))
            .unwrap();
    // population 16 saturates the CPU; population 4 keeps it in the interesting middle
    for (population, seed) in [(16, 41), (4, 42)] {
        let sc = scenario(&text.replace("population = 16", &format!("population = {population}")));
        let (x, r) = mva(1.0, &[0.2, 0.1], population);
        let ex = simulate(&sc, 20, 30_000, seed);
        assert_agrees(&ex, "class.jobs.cycle", f64::from(population) / x, 0.01);
        assert_agrees(&ex, "class.jobs.throughput", x, 0.01);
        assert_agrees(&ex, "station.cpu.response", r[0], 0.02);
        assert_agrees(&ex, "station.disk.response", r[1], 0.02);
        assert_agrees(&ex, "station.disk.utilisation", 0.1 * x, 0.01);
    }
}

#[test]
fn max_of_8_exponentials_is_h8() {
    let mut text = String::from(
        "[[class]]\nname = \"jobs\"\n\n[[station]]\nname = \"arrivals\"\nkind = \"source\"\nclass = \"jobs\"\ninterarrival = { dist = \"exp\", rate = 0.2 }\n\n[[station]]\nname = \"f\"\nkind = \"fork\"\ncopies = 8\nto = \"d\"\n\n[[station]]\nname = \"d\"\nkind = \"delay\"\nservice = { dist = \"exp\", mean = 1.0 }\n\n[[station]]\nname = \"j\"\nkind = \"join\"\nfork = \"f\"\n",
    );
    for (from, to) in [("arrivals", "f"), ("d", "j"), ("j", "exit")] {
        text += &format!("\n[[route]]\nclass = \"jobs\"\nfrom = \"{from}\"\nto = \"{to}\"\n");
    }
    let ex = simulate(&scenario(&text), 20, 20_000, 51);
    assert_agrees(&ex, "class.jobs.response", harmonic(8), 0.01);
    assert_agrees(&ex, "station.d.response", 1.0, 0.01);
}

#[test]
fn mm1_response_percentiles_are_exponential_quantiles() {
    // M/M/1 FCFS response time is exponential with rate mu - lambda: p_q = -ln(1 - q) / 0.5.
    // Reported percentiles are resolved to 0.4% (2 significant digits, sub-bucket midpoint); their
    // intervals include that resolution.
    let ex = simulate(&scenario(&open_single(0.5, EXP1)), 20, 40_000, 14);
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)] {
        let truth = -(1.0_f64 - q).ln() / 0.5;
        for metric in [format!("class.jobs.{name}"), format!("station.q.{name}")] {
            assert_agrees(&ex, &metric, truth, 0.03);
        }
    }
}
