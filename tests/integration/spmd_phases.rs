//! Multi-phase `[spmd]` programs (`[[spmd.phase]]`): the program they build, per-phase and
//! total times worked out by hand, the total as the sum of its phases (analytic exactly,
//! simulated within the interval), and the errors of bad phase tables.

use parsim::predict::Analysis;
use parsim::study::analyze_scenario;

use crate::util::{parsim, scenario, simulate, temp_scenario};

/// The BUS-AIO machine of `validation/spmd_bus_aio_p16.toml` (p = 16, c = 2) as a section
/// whose phases follow in `phases`.
fn bus_aio(phases: &str) -> String {
    format!(
        "[spmd]\np = 16\nd = 2\nc = 2\nw = 0.8\nr = 2\nS_par = 4.0\nS_ser = 0.1\nS0_com = 0.05\n\
         SR_com = 0.4\nS0_io = 0.1\nSR_io = 1.0\nn_io = 4\nio = \"bus-aio\"\n{phases}"
    )
}

/// A compute phase with the section's parameters, and an I/O-heavy checkpoint.
const COMPUTE: &str = "\n[[spmd.phase]]\nname = \"compute\"\ncycles = 60\n";
const CHECKPOINT: &str =
    "\n[[spmd.phase]]\nname = \"checkpoint\"\ncycles = 30\nS_par = 1.0\nn_io = 1\nSR_io = 8.0\n";

/// The `[spmd]` prediction of `metric` (not the program's contention-free or stochastic
/// evaluation).
fn predicted(a: &Analysis, metric: &str) -> f64 {
    a.predictions
        .iter()
        .find(|p| p.metric == metric && !super::util::from_program_evaluation(&p.method))
        .unwrap_or_else(|| panic!("no prediction of {metric}"))
        .value
}

/// Analytic: the two-phase total is the sum of the one-phase programs' totals, each phase's
/// time is its cycles times the routed one-phase network's exact MVA cycle, and the speedup is
/// T1 of the whole program over the total.
#[test]
fn analytic_total_is_the_sum_of_the_phases() {
    let both = analyze_scenario(&scenario(&bus_aio(&format!("{COMPUTE}{CHECKPOINT}"))));
    let first = analyze_scenario(&scenario(&bus_aio(COMPUTE)));
    let second = analyze_scenario(&scenario(&bus_aio(CHECKPOINT)));
    let total = predicted(&both, "program.makespan");
    let sum = predicted(&first, "program.makespan") + predicted(&second, "program.makespan");
    assert!((total - sum).abs() <= 1e-12 * total, "{total} {sum}");
    // the routed network of the compute phase, solved by exact MVA
    let routed = analyze_scenario(&scenario(&bus_aio("")));
    let cycle = routed
        .predictions
        .iter()
        .find(|p| p.metric == "class.groups.cycle" && p.method.starts_with("BUS-AIO"))
        .expect("MVA cycle")
        .value;
    assert_eq!(predicted(&both, "spmd.compute.cycle"), cycle);
    assert!((predicted(&both, "phase.compute.max") - 60.0 * cycle).abs() < 1e-12 * cycle * 60.0);
    // T1: compute 4.1 x 4 + 1.1 = 17.5 a cycle, checkpoint 1.1 x 1 + 8.1 = 9.2
    let t1 = 60.0 * 17.5 + 30.0 * 9.2;
    assert!((predicted(&both, "spmd.speedup") - t1 / total).abs() < 1e-12);
    assert!(
        (predicted(&both, "spmd.checkpoint.speedup") * predicted(&both, "spmd.checkpoint.cycle")
            - 9.2)
            .abs()
            < 1e-12
    );
    // (the program's contention-free evaluation has exact counts beside them)
    assert!(
        both.predictions
            .iter()
            .filter(|p| !p.method.starts_with("contention-free mean-value"))
            .all(|p| !p.exact)
    );
    assert!(
        both.terms
            .iter()
            .any(|t| t.metric == "spmd.checkpoint.T_io")
    );
}

/// Deterministic bursts (SIO, p = 2, c = 1, w = 0.5, g = 1): a burst is 1 of CPU, the delay
/// 0.05 + 0.5 x 0.2 = 0.15, then the bus of 0.1 that both ranks reach at once (one waits 0.1):
/// 1.35; the I/O SR_io / d = 1; a cycle 2.35, two cycles 4.7. The second phase's CPU burst is
/// 4 / 2 = 2: a cycle 3.35. Total 8.05 = the sum of the phases' durations.
#[test]
fn deterministic_phases_take_the_hand_computed_time() {
    let text = "[run]\nreplications = 2\n[spmd]\np = 2\nw = 0.5\ng = 1.0\nS_par = 2.0\nS_ser = 0.0\n\
                S0_com = 0.05\nSR_com = 0.2\nS0_io = 0.0\nSR_io = 1.0\nn_io = 1\nio = \"sio\"\n\
                cpu = { dist = \"det\" }\ncom = { dist = \"det\" }\nio_dist = { dist = \"det\" }\n\
                [[spmd.phase]]\nname = \"a\"\ncycles = 2\n\
                [[spmd.phase]]\nname = \"b\"\ncycles = 1\nS_par = 4.0\n";
    let sc = scenario(text);
    let ex = simulate(&sc, 2, 1, 1);
    let value = |m: &str| ex.replications[0][ex.index_of(m).unwrap_or_else(|| panic!("{m}"))];
    for (metric, want) in [
        ("phase.a.max", 4.7),
        ("phase.a.mean", 4.7),
        ("phase.b.max", 3.35),
        ("program.makespan", 8.05),
        ("spmd.a.cycle", 2.35),
        ("spmd.b.cycle", 3.35),
        // T1 = 2 x (2 + 1) + (4 + 1) = 11
        ("spmd.speedup", 11.0 / 8.05),
        ("spmd.cost", 2.0 * 8.05),
    ] {
        assert!(
            (value(metric) - want).abs() < 1e-9 * want,
            "{metric}: {}",
            value(metric)
        );
    }
}

/// Simulated: the two-phase program's makespan is the sum of its phases' durations in every
/// replication, and its mean is the sum of the means of the two one-phase programs (run on
/// other seeds) within the 99% interval of the difference.
#[test]
fn simulated_total_is_the_sum_of_one_phase_runs() {
    let reps = 20;
    let both = scenario(&bus_aio(&format!("{COMPUTE}{CHECKPOINT}")));
    let ex = simulate(&both, reps, 1, 1);
    let col = |ex: &parsim::replicate::Experiment, m: &str| ex.index_of(m).expect(m);
    let (t, a, b) = (
        col(&ex, "program.makespan"),
        col(&ex, "phase.compute.max"),
        col(&ex, "phase.checkpoint.max"),
    );
    for r in &ex.replications {
        assert!((r[t] - r[a] - r[b]).abs() < 1e-9 * r[t]);
    }
    let first = simulate(&scenario(&bus_aio(COMPUTE)), reps, 1, 2);
    let second = simulate(&scenario(&bus_aio(CHECKPOINT)), reps, 1, 3);
    let ci = |ex: &parsim::replicate::Experiment| ex.interval(col(ex, "program.makespan"), 0.99);
    let (whole, one, two) = (ci(&ex), ci(&first), ci(&second));
    let diff = whole.mean - one.mean - two.mean;
    let hw = (whole.half_width.powi(2) + one.half_width.powi(2) + two.half_width.powi(2)).sqrt();
    assert!(
        diff.abs() <= hw,
        "{} vs {} + {}: diff {diff} +- {hw}",
        whole.mean,
        one.mean,
        two.mean
    );
    // and the phases are reported
    for m in [
        "spmd.compute.cycle",
        "spmd.checkpoint.speedup",
        "phase.checkpoint.mean",
    ] {
        assert!(ex.index_of(m).is_some(), "{m}");
    }
}

/// Bad phase tables: exit 2, the file and line, the field path.
#[test]
fn bad_phases_name_file_line_and_field() {
    for (phases, path) in [
        (
            "\n[[spmd.phase]]\nname = \"a\"\ncycles = 0\n",
            "spmd.phase[0].cycles",
        ),
        (
            "\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\nS_pra = 1.0\n",
            "spmd.phase[0].S_pra",
        ),
        (
            "\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\np = 4\n",
            "spmd.phase[0].p",
        ),
        (
            "\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\nio = \"sio\"\n",
            "spmd.phase[0].io",
        ),
        (
            "\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\n",
            "spmd.phase[1].name",
        ),
        (
            "\n[[spmd.phase]]\nname = \"a.b\"\ncycles = 5\n",
            "spmd.phase[0].name",
        ),
        (
            "\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\nn_io = 2.5\n",
            "spmd.phase[0].n_io",
        ),
        (
            "\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\nS_par = -1.0\n",
            "spmd.phase[0].S_par",
        ),
        ("\n[[spmd.phase]]\ncycles = 5\n", "spmd.phase[0].name"),
        (
            "\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\nw = 2.0\n",
            "spmd.phase[0].w",
        ),
    ] {
        let file = temp_scenario("spmd_phase_bad", &bus_aio(phases));
        let out = parsim(&["run", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{phases}: {err}");
        assert!(err.contains(path), "{phases}: expected {path} in {err}");
        assert!(
            err.contains("spmd_phase_bad.toml:1"),
            "{phases}: no file and line in {err}"
        );
    }
    // the network form keeps the links' fields machine-wide; cycles belong to the phases
    let text =
        bus_aio("network = \"torus\"\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\nSR_com = 1.0\n");
    let file = temp_scenario("spmd_phase_bad_net", &text);
    let (code, _, err) = crate::util::call(&["run", file.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("spmd.phase[0].SR_com"), "{err}");
    let text = bus_aio("cycles = 5\n[[spmd.phase]]\nname = \"a\"\ncycles = 5\n");
    let file = temp_scenario("spmd_phase_bad_cycles", &text);
    let (code, _, err) = crate::util::call(&["run", file.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("spmd.cycles"), "{err}");
}

/// `--show-network` prints the program a multi-phase section builds: a named phase per phase,
/// each followed by a barrier of all ranks, and the `bus` of the `w` submodel; `--set` reaches
/// a phase's field by its index.
#[test]
fn show_network_prints_the_phases_and_set_reaches_them() {
    let file = temp_scenario(
        "spmd_phase_show",
        &format!(
            "[run]\nreplications = 2\n{}",
            bus_aio(&format!("{COMPUTE}{CHECKPOINT}"))
        ),
    );
    let (code, out, err) = crate::util::call(&[
        "run",
        "--show-network",
        "--set",
        "spmd.phase.1.cycles=3",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("# program built from [spmd]"), "{out}");
    assert_eq!(out.matches("kind = \"phase\"").count(), 2, "{out}");
    assert!(
        out.contains("name = \"checkpoint\"\nbody = [\n  { kind = \"repeat\", times = 3,"),
        "{out}"
    );
    assert!(out.contains("name = \"bus\""), "{out}");
    assert!(out.contains("spmd.checkpoint.speedup"), "{out}");
}

/// Where the fixed-count SIO reading is exact (exponential CPU bursts, no communication, c = 1),
/// it lies in the 99% interval of the simulated cycle: 6 groups of 3 bursts, the join waits for
/// the largest Erlang-3 sum, then one exponential I/O burst; 10 replications of 2000 cycles.
#[test]
fn fixed_count_sio_matches_the_simulated_join() {
    let text = "[spmd]\np = 6\nw = 0.0\ng = 0.0\nS_par = 3.0\nS_ser = 0.0\nS0_com = 0.0\n\
                SR_com = 1.0\nS0_io = 0.0\nSR_io = 0.5\nn_io = 3\nio = \"sio\"\n\
                [[spmd.phase]]\nname = \"only\"\ncycles = 2000\n";
    let sc = scenario(text);
    let a = analyze_scenario(&sc);
    let fixed = a
        .predictions
        .iter()
        .find(|p| p.metric == "spmd.only.cycle" && p.method.starts_with("SIO, exactly"))
        .expect("the fixed-count reading")
        .value;
    let ex = simulate(&sc, 10, 1, 11);
    let ci = ex.interval(ex.index_of("spmd.only.cycle").unwrap(), 0.99);
    assert!(ci.relative_half_width() < 0.01, "{ci:?}");
    assert!(
        (fixed - ci.mean).abs() <= ci.half_width,
        "{fixed} against {} +- {}",
        ci.mean,
        ci.half_width
    );
}
