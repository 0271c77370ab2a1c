//! `[spmd]`: the builder writes the paper's networks, and their simulation agrees with the
//! paper's exact methods where those are exact (fixed seeds; 99% intervals).

use parsim::network::{ClassKind, StationKind};
use parsim::scenario::Scenario;
use parsim::study::analyze_scenario;

use crate::util::{parsim, scenario, simulate, temp_scenario};

/// An `[spmd]` scenario with the given organisation; the lines of `extra` come first and
/// replace the defaults of the same keys.
fn spmd(io: &str, extra: &str) -> String {
    dedup(&format!(
        r#"
[spmd]
{extra}
io = "{io}"
w = 0.5
r = 2
S_par = 4.0
S_ser = 0.1
S0_com = 0.05
SR_com = 0.4
S0_io = 0.1
SR_io = 1.0
n_io = 4
"#
    ))
}

/// The mean service time of a station, by name (of the first class it serves).
fn mean_of(sc: &Scenario, station: &str) -> f64 {
    let net = sc.network().unwrap();
    let st = net.stations.iter().find(|s| s.name == station).unwrap();
    let service = st.kind.service().unwrap();
    service.iter().flatten().next().unwrap().mean()
}

fn kind_of(sc: &Scenario, station: &str) -> &'static str {
    let net = sc.network().unwrap();
    net.stations
        .iter()
        .find(|s| s.name == station)
        .unwrap_or_else(|| panic!("no station {station}"))
        .kind
        .label()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs()
}

#[test]
fn bus_aio_builds_figure_8() {
    let sc = scenario(&spmd("bus-aio", "p = 8\nd = 2\nc = 2"));
    let net = sc.network().unwrap();
    assert_eq!(net.classes.len(), 1);
    assert!(matches!(
        net.classes[0].kind,
        ClassKind::Closed { population: 4, .. }
    ));
    let kinds: Vec<_> = ["cpu_fork", "cpu", "cpu_join", "com", "bus", "io"]
        .iter()
        .map(|s| kind_of(&sc, s))
        .collect();
    assert_eq!(kinds, ["fork", "delay", "join", "delay", "fcfs", "fcfs"]);
    let g = 8f64.powf(-0.5);
    assert!(close(mean_of(&sc, "cpu"), 4.0 / 8.0 + 0.1));
    assert!(close(mean_of(&sc, "com"), 0.05 + 0.5 * g * 0.4));
    assert!(close(mean_of(&sc, "bus"), 0.5 * g * 0.4));
    assert!(close(mean_of(&sc, "io"), 0.1 + 1.0 / 2.0 / 4.0));
    let copies = net.stations.iter().find_map(|s| match &s.kind {
        StationKind::Fork { branches } => Some(branches.len()),
        _ => None,
    });
    assert_eq!(copies, Some(2));
}

#[test]
fn clu_aio_builds_figure_9() {
    let sc = scenario(&spmd("clu-aio", "p = 12\nd = 3\nw = 1.0"));
    let net = sc.network().unwrap();
    let populations: Vec<_> = net
        .classes
        .iter()
        .map(|c| match c.kind {
            ClassKind::Closed { population, .. } => (c.name.as_str(), population),
            ClassKind::Open => panic!("open class"),
        })
        .collect();
    assert_eq!(
        populations,
        [("cluster1", 4), ("cluster2", 4), ("cluster3", 4)]
    );
    for disk in ["disk1", "disk2", "disk3"] {
        assert_eq!(kind_of(&sc, disk), "fcfs");
        assert!(close(mean_of(&sc, disk), 0.1 + 1.0 / 12.0));
    }
    // w = 1: the whole transfer queues, only the start-up is a delay
    assert!(close(mean_of(&sc, "com"), 0.05));
    assert!(net.stations.iter().all(|s| s.name != "cpu_fork"));
}

#[test]
fn sio_builds_figure_7() {
    let sc = scenario(&spmd("sio", "p = 6\nd = 3\nc = 2"));
    let net = sc.network().unwrap();
    assert!(matches!(
        net.classes[0].kind,
        ClassKind::Closed { population: 1, .. }
    ));
    for (s, k) in [
        ("groups_fork", "fork"),
        ("groups_join", "join"),
        ("cpu_fork", "fork"),
        ("io", "fcfs"),
    ] {
        assert_eq!(kind_of(&sc, s), k);
    }
    assert!(close(mean_of(&sc, "io"), 0.1 + 1.0 / 3.0));
    let groups = net
        .stations
        .iter()
        .find(|s| s.name == "groups_fork")
        .map(|s| match &s.kind {
            StationKind::Fork { branches } => branches.len(),
            _ => 0,
        });
    assert_eq!(groups, Some(3));
}

/// Simulates `text` and checks that the exact prediction of `method` for `metric` lies in the
/// 99% interval of the simulation.
fn agrees_with_exact(text: &str, metric: &str, method: &str, seed: u64) {
    let sc = scenario(text);
    let a = analyze_scenario(&sc);
    let p = a
        .predictions
        .iter()
        .find(|p| p.metric == metric && p.method.starts_with(method))
        .unwrap_or_else(|| panic!("no {method} for {metric}: {:?}", a.refusals));
    assert!(p.exact, "{method} is exact for exponential queues");
    let ex = simulate(&sc, 10, 20_000, seed);
    let ci = ex.interval(ex.index_of(metric).unwrap(), 0.99);
    assert!(
        ci.contains(p.value),
        "{metric}: {method} {} outside {} +- {}",
        p.value,
        ci.mean,
        ci.half_width
    );
    // and the interval is tight enough for the check to mean something
    assert!(ci.half_width < 0.01 * ci.mean, "{ci:?}");
}

#[test]
fn bus_aio_simulation_agrees_with_exact_mva() {
    let text = spmd("bus-aio", "p = 16\nd = 2\nc = 2\nw = 0.8");
    agrees_with_exact(&text, "class.groups.cycle", "BUS-AIO exact MVA", 11);
    agrees_with_exact(&text, "spmd.speedup", "BUS-AIO exact MVA", 11);
}

#[test]
fn clu_aio_simulation_agrees_with_exact_multiclass_mva() {
    let text = spmd("clu-aio", "p = 8\nd = 2\nc = 1\nw = 1.0\nS0_io = 1.0");
    agrees_with_exact(
        &text,
        "class.cluster1.cycle",
        "CLU-AIO exact multiclass MVA",
        12,
    );
}

/// The fork-join of one group (`p = c`) takes `h(c)` times the mean burst: `H_c` for
/// exponential bursts, `2c/(c+1)` for uniform ones (eqs. 4-6).
#[test]
fn synchronisation_cost_matches_simulated_fork_join_maxima() {
    for (family, c, h) in [
        (
            "exp",
            8u32,
            (1..=8).map(|i| 1.0 / f64::from(i)).sum::<f64>(),
        ),
        ("uniform", 8, 16.0 / 9.0),
        ("uniform", 2, 4.0 / 3.0),
    ] {
        let text = spmd(
            "bus-aio",
            &format!("p = {c}\nc = {c}\ncpu = {{ dist = \"{family}\" }}"),
        );
        let sc = scenario(&text);
        let ex = simulate(&sc, 20, 20_000, 13);
        let ci = ex.interval(ex.index_of("station.cpu_fork.response").unwrap(), 0.99);
        let want = h * (4.0 / f64::from(c) + 0.1);
        assert!(
            ci.contains(want),
            "{family} c = {c}: h(c) mean {want} outside {} +- {}",
            ci.mean,
            ci.half_width
        );
        assert!(ci.half_width < 0.01 * ci.mean);
    }
}

/// SIO without communication and with exponential CPU bursts (c = 1): each group's computation
/// is a geometric number of exponential bursts, so exponential with mean `n_io S`, and the
/// join waits for the largest of `p` of them: `n_io S H_p + T_io`, which is eq. 16 reading (b)
/// with `R1 = 0`.
#[test]
fn sio_without_communication_waits_for_the_largest_group() {
    let text = spmd(
        "sio",
        "p = 6
d = 2
S0_com = 0.0
SR_com = 0.0",
    );
    let sc = scenario(&text);
    let ex = simulate(&sc, 10, 5_000, 14);
    let ci = ex.interval(ex.index_of("class.program.cycle").unwrap(), 0.99);
    let h6 = (1..=6).map(|i| 1.0 / f64::from(i)).sum::<f64>();
    let want = 4.0 * (4.0 / 6.0 + 0.1) * h6 + 0.1 + 1.0 / 2.0;
    assert!(
        ci.contains(want),
        "{want} outside {} +- {}",
        ci.mean,
        ci.half_width
    );
    assert!(ci.half_width < 0.01 * ci.mean, "{ci:?}");
    let a = analyze_scenario(&sc);
    let b = a
        .predictions
        .iter()
        .find(|p| p.metric == "class.program.cycle" && p.method.contains("reading (b)"))
        .unwrap();
    assert!(close(b.value, want), "{} vs {want}", b.value);
}

#[test]
fn bad_parameters_name_their_field() {
    for (extra, path) in [
        ("p = 6\nc = 4", "spmd.c"),
        ("p = 6\nd = 4\nio = \"clu-aio\"", "spmd.d"),
        ("p = 0", "spmd.p"),
        ("p = 4\nw = 1.5", "spmd.w"),
        ("p = 4\ng = 0.5", "spmd.g"),
        ("p = 4\ncpu = { dist = \"erlang\", k = 0 }", "spmd.cpu"),
        ("p = 4\nn_io = 0.5", "spmd.n_io"),
        ("p = 4\nfoo = 1", "spmd.foo"),
    ] {
        let text = spmd("bus-aio", extra);
        let file = temp_scenario("spmd_bad", &text);
        let out = parsim(&["run", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra}: {err}");
        assert!(err.contains(path), "{extra}: expected {path} in {err}");
        assert!(out.stdout.is_empty());
    }
}

/// Keeps the first of each `key = ` line, so an override wins over the default.
fn dedup(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .filter(|l| match l.split_once(" = ") {
            Some((k, _)) => seen.insert(k.trim().to_owned()),
            None => true,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn show_network_prints_the_built_tables() {
    let file = temp_scenario(
        "spmd_show",
        &format!(
            "[run]\nreplications = 2\nlength = 200\n{}",
            spmd("sio", "p = 4")
        ),
    );
    let out = parsim(&["run", "--show-network", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("name = \"groups_fork\""), "{text}");
    assert!(text.contains("spmd.speedup"), "{text}");
}

/// `cpu = { dist = "empirical", file = ... }`: the trace's shape with the model's mean (the
/// samples 1, 2, 6 scaled to `S_par/p + S_ser`), read relative to the scenario file.
#[test]
fn empirical_bursts_take_the_model_mean_and_the_trace_shape() {
    let dir = std::env::temp_dir().join(format!("parsim-spmd-emp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bursts.txt"), "1\n2\n6\n").unwrap();
    let path = dir.join("emp.toml");
    let text = spmd(
        "bus-aio",
        "p = 4\ncpu = { dist = \"empirical\", file = \"bursts.txt\" }",
    );
    std::fs::write(&path, text).unwrap();
    let sc = parsim::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let want = 4.0 / 4.0 + 0.1;
    assert!(close(mean_of(&sc, "cpu"), want), "{}", mean_of(&sc, "cpu"));
    let net = sc.network().unwrap();
    let st = net.stations.iter().find(|s| s.name == "cpu").unwrap();
    let d = st.kind.service().unwrap().iter().flatten().next().unwrap();
    // scv of 1, 2, 6: mean 3, population variance 14/3, scv 14/27
    assert!((d.scv() - 14.0 / 27.0).abs() < 1e-12, "{}", d.scv());
    // a trace that is missing is an error naming the field, exit 2
    std::fs::remove_file(dir.join("bursts.txt")).unwrap();
    let out = parsim(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("file"));
}
