//! Percentile predictions of queueing networks against values computed by hand, and their
//! labels.

use std::path::Path;

use statrs::distribution::{ContinuousCDF, Gamma};

use parsim::predict::Analysis;
use parsim::predict::network::analyze;
use parsim::scenario::{Workload, parse};

fn analysis(text: &str) -> Analysis {
    let sc = parse(text, Path::new("inline.toml")).unwrap_or_else(|e| panic!("{e}"));
    let Workload::Network(net) = &sc.workload else {
        panic!("a network scenario")
    };
    analyze(net)
}

/// The one prediction of `metric`, as (value, method, exact).
fn only(a: &Analysis, metric: &str) -> (f64, String, bool) {
    let found: Vec<_> = a
        .predictions
        .iter()
        .filter(|p| p.metric == metric)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{metric}: {found:?} (refusals {:?})",
        a.refusals
    );
    (found[0].value, found[0].method.clone(), found[0].exact)
}

fn station(name: &str, body: &str) -> String {
    format!("\n[[station]]\nname = \"{name}\"\n{body}\n")
}

fn route(from: &str, to: &str) -> String {
    format!("\n[[route]]\nclass = \"jobs\"\nfrom = \"{from}\"\nto = \"{to}\"\n")
}

fn open(rate: f64) -> String {
    format!(
        "[[class]]\nname = \"jobs\"\n{}",
        station(
            "arrivals",
            &format!(
                "kind = \"source\"\nclass = \"jobs\"\ninterarrival = {{ dist = \"exp\", rate = {rate} }}"
            )
        )
    )
}

const EXP1: &str = "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 1.0 }";

#[test]
fn mm1_p90_is_ln10_over_mu_minus_lambda_and_exact() {
    let text = open(0.8) + &station("q", EXP1) + &route("arrivals", "q") + &route("q", "exit");
    let a = analysis(&text);
    for metric in ["station.q.p90", "class.jobs.p90"] {
        let (value, method, exact) = only(&a, metric);
        assert!((value / (10f64.ln() / 0.2) - 1.0).abs() < 1e-9, "{value}");
        assert!(exact && method.starts_with("M/M/1"), "{method}");
    }
}

#[test]
fn mm2_p90_is_the_worked_value() {
    // lambda 1, E[S] 1, two servers: P(T > t) = e^-t (1 + t/3), p90 = 2.99488 (bisection by hand)
    let body = "kind = \"fcfs\"\nservers = 2\nservice = { dist = \"exp\", mean = 1.0 }";
    let text = open(1.0) + &station("q", body) + &route("arrivals", "q") + &route("q", "exit");
    let (value, _, exact) = only(&analysis(&text), "station.q.p90");
    assert!((value - 2.994_878).abs() < 1e-5 && exact, "{value}");
}

#[test]
fn delay_percentiles_are_the_service_quantiles() {
    let body = "kind = \"delay\"\nservice = { dist = \"erlang\", k = 3, mean = 1.5 }";
    let text = open(5.0) + &station("d", body) + &route("arrivals", "d") + &route("d", "exit");
    let (value, _, exact) = only(&analysis(&text), "station.d.p95");
    let reference = Gamma::new(3.0, 2.0).unwrap().inverse_cdf(0.95);
    assert!((value / reference - 1.0).abs() < 1e-10 && exact, "{value}");
}

#[test]
fn a_tandem_of_mm1_queues_is_hypoexponential_and_exact() {
    // sojourn rates 1 - 0.5 and 2 - 0.5: P(T > t) = (b e^-at - a e^-bt)/(b - a), p90 = 5.41313
    let fast = "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 0.5 }";
    let text = open(0.5)
        + &station("q1", EXP1)
        + &station("q2", fast)
        + &route("arrivals", "q1")
        + &route("q1", "q2")
        + &route("q2", "exit");
    let (value, method, exact) = only(&analysis(&text), "class.jobs.p90");
    assert!((value - 5.413_126).abs() < 1e-5, "{value}");
    assert!(exact && method.contains("tandem"), "{method}");
}

#[test]
fn feedback_makes_the_class_law_an_approximation() {
    let text = open(0.3)
        + &station("q", EXP1)
        + &route("arrivals", "q")
        + "\n[[route]]\nclass = \"jobs\"\nfrom = \"q\"\nbranches = [{ to = \"q\", p = 0.5 }, { to = \"exit\", p = 0.5 }]\n";
    let a = analysis(&text);
    // the visit's sojourn is exact (Jackson: arrivals see time averages) ...
    let (visit, _, exact) = only(&a, "station.q.p50");
    assert!(
        exact && (visit / (2f64.ln() / 0.4) - 1.0).abs() < 1e-9,
        "{visit}"
    );
    // ... the sum over a geometric number of dependent visits is not
    let (_, method, exact) = only(&a, "class.jobs.p50");
    assert!(!exact && method.contains("dependent"), "{method}");
}

#[test]
fn mg1_is_a_labelled_gamma_fit_and_needs_a_third_moment() {
    let det = "kind = \"fcfs\"\nservice = { dist = \"det\", value = 1.0 }";
    let text = open(0.5) + &station("q", det) + &route("arrivals", "q") + &route("q", "exit");
    let a = analysis(&text);
    let by = |label: &str| {
        let p = a
            .predictions
            .iter()
            .find(|p| p.metric == "station.q.p50" && p.method.contains(label))
            .unwrap_or_else(|| panic!("{label}: {:?}", a.predictions));
        assert!(!p.exact, "{p:?}");
        p.value
    };
    // M/D/1 at rho 0.5: E[T] = 1.5; a gamma median lies below its mean
    let gamma = by("gamma fit to the first two moments (Takacs)");
    assert!(gamma > 1.0 && gamma < 1.5, "{gamma}");
    // half the jobs do not wait (probability 1 - rho, exact): the median is the service time
    assert_eq!(by("Pollaczek-Khinchine mean wait"), 1.0);
    let pareto = "kind = \"fcfs\"\nservice = { dist = \"pareto\", shape = 2.5, scale = 0.6 }";
    let text = open(0.5) + &station("q", pareto) + &route("arrivals", "q") + &route("q", "exit");
    let a = analysis(&text);
    // no gamma fit without a third moment (the waited law needs only the second)
    assert!(
        !a.predictions
            .iter()
            .any(|p| p.metric == "station.q.p50" && p.method.contains("gamma"))
    );
    assert!(
        a.refusals.iter().any(|r| r.reason.contains("third moment")),
        "{:?}",
        a.refusals
    );
}

fn fork_of_two(branch: &str) -> String {
    open(0.5)
        + &station("split", "kind = \"fork\"\nbranches = [\"b0\", \"b1\"]")
        + &station("b0", branch)
        + &station("b1", branch)
        + &station("merge", "kind = \"join\"\nfork = \"split\"")
        + &route("arrivals", "split")
        + &route("b0", "merge")
        + &route("b1", "merge")
        + &route("merge", "exit")
}

#[test]
fn a_fork_of_exponential_queues_is_bounded_by_association() {
    let a = analysis(&fork_of_two(EXP1));
    // each branch is M/M/1 (rate 0.5): median ln 2 / 0.5; the independent maximum's median
    // solves (1 - e^-0.5t)^2 = 1/2
    let branch = 2f64.ln() / 0.5;
    let independent = -(1.0 - 0.5f64.sqrt()).ln() / 0.5;
    for metric in ["station.split.p50", "class.jobs.p50"] {
        let b = a.bounds.iter().find(|b| b.metric == metric).expect(metric);
        assert!((b.lower / branch - 1.0).abs() < 1e-9, "{b:?}");
        assert!((b.upper / independent - 1.0).abs() < 1e-9, "{b:?}");
        assert!(!a.predictions.iter().any(|p| p.metric == metric));
    }
}

#[test]
fn a_fork_of_delays_is_an_exact_maximum() {
    let body = "kind = \"delay\"\nservice = { dist = \"exp\", mean = 1.0 }";
    let (value, _, exact) = only(&analysis(&fork_of_two(body)), "class.jobs.p90");
    // P(max <= t) = (1 - e^-t)^2 = 0.9
    assert!(
        (value + (1.0 - 0.9f64.sqrt()).ln()).abs() < 1e-9 && exact,
        "{value}"
    );
}

#[test]
fn a_closed_queue_follows_the_arrival_theorem() {
    // two exponential queues of mean 1 in a cycle, 2 jobs: an arriving job finds the other one
    // there half the time, so P(T > t) = e^-t (1 + t/2), p90 = 3.27181
    let text = "[[class]]\nname = \"jobs\"\npopulation = 2\nreference = \"q1\"\n".to_owned()
        + &station("q1", EXP1)
        + &station("q2", EXP1)
        + &route("q1", "q2")
        + &route("q2", "q1");
    let a = analysis(&text);
    let (value, method, exact) = only(&a, "station.q1.p90");
    assert!(
        (value - 3.271_812).abs() < 1e-5 && exact,
        "{value} {method}"
    );
    let (_, method, exact) = only(&a, "class.jobs.p90");
    assert!(!exact && method.contains("fixed population"), "{method}");
}

#[test]
fn a_cycle_with_rates_far_apart_is_refused_not_ground_through() {
    // think time 1e5 times the fast server's mean: the cycle's phase-type law would need about
    // 1e5 uniformization steps per CDF value; the stations keep their exact laws
    let text = "[[class]]\nname = \"jobs\"\npopulation = 60\nreference = \"think\"\n".to_owned()
        + &station(
            "think",
            "kind = \"delay\"\nservice = { dist = \"exp\", mean = 100.0 }",
        )
        + &station(
            "fast",
            "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 0.001 }",
        )
        + &route("think", "fast")
        + &route("fast", "think");
    let a = analysis(&text);
    assert!(a.predictions.iter().all(|p| p.value.is_finite()));
    let (_, _, exact) = only(&a, "station.fast.p99");
    assert!(exact);
    assert!(!a.predictions.iter().any(|p| p.metric == "class.jobs.p99"));
    assert!(
        a.refusals
            .iter()
            .any(|r| r.reason.contains("uniformization")),
        "{:?}",
        a.refusals
    );
}

#[test]
fn a_tandem_with_a_deterministic_queue_gets_a_labelled_gamma_class_law() {
    let det = "kind = \"fcfs\"\nservice = { dist = \"det\", value = 1.0 }";
    let text = open(0.5)
        + &station("a", det)
        + &station("b", EXP1)
        + &route("arrivals", "a")
        + &route("a", "b")
        + &route("b", "exit");
    let a = analysis(&text);
    let found: Vec<_> = a
        .predictions
        .iter()
        .filter(|p| p.metric == "class.jobs.p90")
        .collect();
    assert_eq!(found.len(), 1, "{found:?} {:?}", a.refusals);
    assert!(!found[0].exact && found[0].method.starts_with("gamma fit to the route"));
    // mean: the predicted class response (QNA); variance: a's M/D/1 response variance by
    // Takacs (rho 1/2: E[W] = 0.5, E[W^2] = 2 E[W]^2 + lambda E[S^3] / (3 (1 - rho)) = 5/6,
    // so 7/12) plus b's waited law (exponential service: 1; wait 0 w.p. 1/2 else exponential
    // around QNA's Wq: 2 Wq^2 / 0.5 - Wq^2 = 3 Wq^2)
    let qna = |metric: &str| {
        a.predictions
            .iter()
            .find(|p| p.metric == metric && p.method.starts_with("QNA"))
            .unwrap_or_else(|| panic!("QNA predicts {metric}"))
            .value
    };
    let mean = qna("class.jobs.response");
    let rb = qna("station.b.response");
    let wq = rb - 1.0;
    let var = 7.0 / 12.0 + 1.0 + 3.0 * wq * wq;
    let hand = Gamma::new(mean * mean / var, mean / var)
        .unwrap()
        .inverse_cdf(0.9);
    assert!(
        (found[0].value / hand - 1.0).abs() < 1e-6,
        "{} {hand}",
        found[0].value
    );
}

#[test]
fn a_delay_shared_by_three_tasks_of_a_fork_is_an_exact_maximum_of_three_draws() {
    let body = "kind = \"delay\"\nservice = { dist = \"exp\", mean = 1.0 }";
    let text = open(0.5)
        + &station("split", "kind = \"fork\"\nbranches = [\"b\", \"b\", \"b\"]")
        + &station("b", body)
        + &station("merge", "kind = \"join\"\nfork = \"split\"")
        + &route("arrivals", "split")
        + &route("b", "merge")
        + &route("merge", "exit");
    let (value, _, exact) = only(&analysis(&text), "station.split.p90");
    // P(max <= t) = (1 - e^-t)^3 = 0.9
    let hand = -(1.0 - 0.9f64.powf(1.0 / 3.0)).ln();
    assert!((value / hand - 1.0).abs() < 1e-9 && exact, "{value} {hand}");
}
