//! `parsim fit --model spmd`: known parameters recovered from a speedup surface simulated with
//! them (fixed seeds), and the command's output and errors.

use parsim::models::spmd::fit::{Observation, Param, SioReading, fit};

use super::util::{parsim, scenario, simulate, temp_scenario};

/// The true model: BUS-AIO, `c = 1`, exponential bursts (where exact MVA is exact).
const TRUTH: &str = r#"
io = "bus-aio"
c = 1
w = 0.5
r = 2
S_par = 4.0
S_ser = 0.1
S0_com = 0.05
SR_com = 0.4
S0_io = 0.1
SR_io = 1.0
n_io = 4
"#;

/// The base scenario the fit starts from: `w`, `S_par` and `SR_com` 25-50% off.
const START: &str = r#"
[spmd]
p = 1
io = "bus-aio"
c = 1
w = 0.3
r = 2
S_par = 3.0
S_ser = 0.1
S0_com = 0.05
SR_com = 0.6
S0_io = 0.1
SR_io = 1.0
n_io = 4
"#;

const FREE: [Param; 3] = [Param::W, Param::SPar, Param::SRCom];

/// The simulated surface: `spmd.speedup` (mean of 8 replications of 10000 cycles) at
/// `p = 1, 2, 4, 8, 16, 32` and `d = 1, 2, 4`, each point its own seed.
fn simulated_surface() -> Vec<Observation> {
    let mut obs = Vec::new();
    for (i, p) in [1u32, 2, 4, 8, 16, 32].into_iter().enumerate() {
        for (j, d) in [1u32, 2, 4].into_iter().enumerate() {
            let sc = scenario(&format!("[spmd]\np = {p}\nd = {d}\n{TRUTH}"));
            let ex = simulate(&sc, 8, 10000, 100 + 10 * i as u64 + j as u64);
            let speedup = ex.interval(ex.index_of("spmd.speedup").unwrap(), 0.95).mean;
            obs.push(Observation {
                p,
                d,
                speedup,
                sd: None,
            });
        }
    }
    obs
}

/// From 18 simulated speedups the fit finds `w = 0.5`, `S_par = 4` and `SR_com = 0.4` within
/// three standard errors and within 5% (seeds 100-152: 0.508 +- 0.006, 4.002 +- 0.038,
/// 0.394 +- 0.008), and the
/// fitted model's average error (the paper's figure) is below 0.5%.
#[test]
fn recovers_parameters_from_a_simulated_surface() {
    let obs = simulated_surface();
    let base = scenario(START).spmd().cloned().unwrap();
    let fitted = fit(&base, &FREE, &obs, SioReading::Draining).unwrap();
    let truth = [0.5, 4.0, 0.4];
    for (e, want) in fitted.estimates.iter().zip(truth) {
        let off = (e.value - want).abs();
        eprintln!(
            "{}: {:.4} +- {:.4} (true {want})",
            e.param.name(),
            e.value,
            e.se
        );
        assert!(
            off <= 3.0 * e.se && off <= 0.05 * want,
            "{}: {} +- {} vs {want}",
            e.param.name(),
            e.value,
            e.se
        );
    }
    assert!(fitted.average_error < 0.005, "{}", fitted.average_error);
}

#[test]
fn the_command_prints_estimates_and_rejects_bad_input() {
    let base = temp_scenario("fit_spmd_base.toml", START);
    let mut csv = String::from("p,d,speedup\n");
    let truth = scenario(&format!("[spmd]\np = 1\n{TRUTH}"))
        .spmd()
        .cloned()
        .unwrap();
    for p in [1u32, 2, 4, 8, 16, 32] {
        for d in [1u32, 2, 4] {
            let s = parsim::models::spmd::fit::model_speedup(&truth, SioReading::Draining, p, d)
                .unwrap();
            csv.push_str(&format!("{p},{d},{s}\n"));
        }
    }
    let measured = temp_scenario("fit_spmd.csv", &csv);
    let (m, b) = (measured.to_str().unwrap(), base.to_str().unwrap());
    let out = parsim(&[
        "fit",
        m,
        "--model",
        "spmd",
        "--free",
        "w,S_par,SR_com",
        "--scenario",
        b,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("18 observations, 3 free"), "{stdout}");
    let estimate = |name: &str| -> f64 {
        let line = stdout.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    assert!((estimate("w ") - 0.5).abs() < 1e-4, "{stdout}");
    assert!((estimate("S_par") - 4.0).abs() < 1e-3, "{stdout}");
    let bad = parsim(&[
        "fit",
        m,
        "--model",
        "spmd",
        "--free",
        "w,S_pra",
        "--scenario",
        b,
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--free: unknown parameter \"S_pra\""));
    let bad_csv = temp_scenario("fit_spmd_bad.csv", "p,d,speedup\n4,1,x\n");
    let bad = parsim(&[
        "fit",
        bad_csv.to_str().unwrap(),
        "--model",
        "spmd",
        "--free",
        "w",
        "--scenario",
        b,
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("line 2: speedup"));
}

/// `fit-w` on a BUS-AIO reference, where exact MVA is exact for the simulated network: the
/// fitted `w` is the scenario's 0.8 within three standard errors (seed 1 + k at the k-th `p`,
/// each point weighted by its standard error: 0.7971 +- 0.0020 from 8 replications of 10000
/// cycles at p = 2..32).
#[test]
fn fit_w_finds_the_contention_level_of_an_exact_reference() {
    let case = super::util::root().join("validation/spmd_bus_aio_p16.toml");
    let case = case.to_str().unwrap();
    let out = parsim(&[
        "fit-w",
        case,
        "--p",
        "2,4,8,16,32",
        "--replications",
        "8",
        "--length",
        "10000",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let line = stdout.lines().find(|l| l.starts_with("w = ")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let (w, se): (f64, f64) = (words[2].parse().unwrap(), words[4].parse().unwrap());
    assert!((w - 0.8).abs() <= 3.0 * se, "{line}");
    let one = parsim(&["fit-w", case, "--p", "4"]);
    assert_eq!(one.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&one.stderr).contains("--p: give at least two"));
}

/// The fitted `w` of `fit-w` on `reference` with `network` in place of its own, at p = 4..16.
fn fitted_w(reference: &str, network: &str) -> (f64, f64) {
    let text = std::fs::read_to_string(super::util::root().join(reference))
        .unwrap()
        .replace("network = \"torus\"", &format!("network = \"{network}\""))
        .replace("cycles = 100", "cycles = 40");
    let file = super::util::temp_scenario(&format!("fitw_{network}"), &text);
    let out = parsim(&["fit-w", file.to_str().unwrap(), "--p", "4,8,16"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().find(|l| l.starts_with("w = ")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    (words[2].parse().unwrap(), words[4].parse().unwrap())
}

/// `fit-w` against an explicit interconnect (`network = ...`): one shared bus carries every
/// face message, a torus gives each its own link, so the closed form's best contention level
/// is far higher for the bus than for the torus (measured at p = 4..64, 10 x 100 cycles: 0.87
/// and 0.13; here p = 4..16, 10 x 40 cycles).
#[test]
fn fit_w_ranks_a_bus_above_a_torus() {
    let reference = "scenarios/spmd_fitw_torus.toml";
    let (torus, torus_se) = fitted_w(reference, "torus");
    let (bus, bus_se) = fitted_w(reference, "bus");
    assert!((0.0..=1.0).contains(&torus) && (0.0..=1.0).contains(&bus));
    assert!(
        bus - torus > 3.0 * (bus_se + torus_se) && bus > 2.0 * torus,
        "bus {bus} +- {bus_se}, torus {torus} +- {torus_se}"
    );
    // a deterministic reference has no standard error to weight by: refused, exit 2
    let text = std::fs::read_to_string(super::util::root().join(reference))
        .unwrap()
        .replace("\nn_io = 1\n", "\nn_io = 1\ncpu = { dist = \"det\" }\n");
    let file = super::util::temp_scenario("fitw_det", &text);
    let out = parsim(&["fit-w", file.to_str().unwrap(), "--p", "4,8"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("same in every replication"));
}
