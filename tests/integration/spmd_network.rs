//! `[spmd]` with `network = "<topology>"`: the rank program the builder writes (ranks, grid,
//! neighbours, disks) and, on an idle network with deterministic bursts, the time worked out
//! by hand.

use parsim::engine::program::Execution;
use parsim::metrics::program::measure;
use parsim::program::{Instr, Size};
use parsim::scenario::Scenario;
use parsim::topology::Shape;

use crate::util::{parsim, scenario, simulate, temp_scenario};

/// A network-form `[spmd]` on `network`; the lines of `extra` are added.
fn spmd(network: &str, extra: &str) -> String {
    format!(
        r#"
[spmd]
{extra}
d = 2
w = 0.0
S_par = 4.0
S_ser = 0.0
S0_com = 0.4
SR_com = 1.0
S0_io = 0.0
SR_io = 2.0
io = "sio"
cpu = {{ dist = "det" }}
com = {{ dist = "det" }}
io_dist = {{ dist = "det" }}
network = "{network}"
"#
    )
}

fn makespan(sc: &Scenario) -> f64 {
    let prog = sc.program().expect("a program");
    let run = Execution::new(prog, 1, 0).run().expect("runs");
    let values = measure(prog, &run);
    values
        .iter()
        .find(|(n, _)| n == "program.makespan")
        .expect("makespan")
        .1
}

/// The sizes of the constant-size messages the program sends (sendrecv and send).
fn message_ops(sc: &Scenario) -> (usize, usize, usize) {
    let prog = sc.program().unwrap();
    let count = |f: fn(&Instr) -> bool| prog.code.iter().filter(|i| f(i)).count();
    (
        count(|i| matches!(i, Instr::SendRecv { .. })),
        count(|i| matches!(i, Instr::Send { .. })),
        count(|i| matches!(i, Instr::Recv { .. })),
    )
}

/// The builder lays `p` ranks on the grid of the `r`-dimensional decomposition: a torus of
/// those dims with one sendrecv per direction of each dimension wider than 1, a mesh with a
/// sendrecv, a send and a recv per direction; message sizes `g(p) 2^20 / (2r)`.
#[test]
fn builds_the_grid_and_its_exchanges() {
    for (p, r, dims) in [
        (8u32, 1u32, vec![8u32]),
        (16, 2, vec![4, 4]),
        (12, 2, vec![4, 3]),
        (64, 3, vec![4, 4, 4]),
        (9, 3, vec![3, 3, 1]),
    ] {
        let wide = dims.iter().filter(|&&n| n > 1).count();
        for (network, wrap) in [("torus", true), ("mesh", false)] {
            let sc = scenario(&spmd(network, &format!("p = {p}\nr = {r}\nn_io = 1")));
            let prog = sc.program().unwrap();
            assert_eq!(prog.ranks, p);
            assert_eq!(
                prog.interconnect.topology.shape(),
                &Shape::Grid {
                    dims: dims.clone(),
                    wrap
                },
                "p {p} r {r} {network}"
            );
            let (sendrecv, send, recv) = message_ops(&sc);
            if wrap {
                assert_eq!((sendrecv, send, recv), (2 * wide, 0, 0));
            } else {
                assert_eq!((sendrecv, send, recv), (2 * wide, 2 * wide, 2 * wide));
            }
            let g = f64::from(p).powf(-(f64::from(r) - 1.0) / f64::from(r));
            let face = g * 1_048_576.0 / (2.0 * f64::from(r));
            for i in &prog.code {
                if let Instr::SendRecv { bytes, .. } | Instr::Send { bytes, .. } = i {
                    let Size::Random(d) = bytes else {
                        panic!("sizes are drawn from the com family")
                    };
                    assert!((d.mean() - face).abs() < 1e-9 * face);
                }
            }
            let spmd = sc.spmd().unwrap();
            assert!((prog.interconnect.bandwidth - 1_048_576.0).abs() < 1e-6);
            assert!((prog.interconnect.startup - 0.4 / (2.0 * f64::from(r))).abs() < 1e-15);
            assert_eq!(spmd.network.as_ref().unwrap().dims, dims);
        }
    }
}

/// Deterministic bursts on an idle 2 x 2 torus and mesh (p = 4, r = 2, g = 1/2): a CPU burst
/// is 4/4 = 1; a face message is 0.5 MB / 4 = 131072 bytes, 0.125 at 2^20 bytes per time unit,
/// plus the startup 0.4 / 4 = 0.1 and the hop latency 0.01: four shifts of 0.235, 0.94 a
/// burst (= S0_com + g SR_com + 4 hops); the SIO burst is SR_io / d = 1. A cycle of two bursts
/// and one I/O is 2 (1 + 0.94) + 1 = 4.88, three cycles 14.64.
#[test]
fn idle_network_takes_the_hand_computed_time() {
    for network in ["torus", "mesh"] {
        let text = spmd(
            network,
            "p = 4\nr = 2\nn_io = 2\ncycles = 3\nlatency = 0.01",
        );
        let sc = scenario(&text);
        let t = makespan(&sc);
        assert!((t - 14.64).abs() < 1e-9 * 14.64, "{network}: {t}");
        let spmd = sc.spmd().unwrap();
        assert!((spmd.cycle_time(t) - 4.88).abs() < 1e-9);
    }
}

/// The run reports the speedup of a network-form program: T1 over its makespan per cycle.
#[test]
fn run_reports_the_speedup_per_cycle() {
    let sc = scenario(&format!(
        "[run]\nreplications = 2\n{}",
        spmd("torus", "p = 4\nr = 2\nn_io = 2\ncycles = 3")
    ));
    let ex = simulate(&sc, 2, 1, 1);
    let i = ex.index_of("spmd.speedup").expect("spmd.speedup");
    // T1 = 4 x 2 + 2 = 10; a cycle is 2 (1 + 0.9) + 1 = 4.8
    assert!((ex.replications[0][i] - 10.0 / 4.8).abs() < 1e-9);
}

#[test]
fn bad_network_fields_name_their_field() {
    for (extra, path) in [
        ("p = 4\ng = 0.5\nn_io = 1", "spmd.r"),
        ("p = 4\nr = 4\nn_io = 1", "spmd.r"),
        ("p = 4\nr = 2\nn_io = 1.5", "spmd.n_io"),
        ("p = 4\nr = 2\nn_io = 1\ncycles = 0", "spmd.cycles"),
        ("p = 4\nr = 2\nn_io = 1\nlatency = -1.0", "spmd.latency"),
        (
            "p = 4\nr = 2\nn_io = 1\nnetwork = \"hypercube\"",
            "spmd.network",
        ),
    ] {
        let mut text = spmd("torus", extra);
        if extra.contains("network") {
            text = text.replace("network = \"torus\"\n", "");
        }
        let file = temp_scenario("spmd_net_bad", &text);
        let out = parsim(&["run", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra}: {err}");
        assert!(err.contains(path), "{extra}: expected {path} in {err}");
        assert!(
            err.contains("spmd_net_bad.toml:"),
            "{extra}: no file and line in {err}"
        );
    }
    // the network form's own fields without it
    let text = "[spmd]\np = 4\nr = 2\nw = 0.5\nS_par = 1.0\nS_ser = 0.0\nS0_com = 0.0\n\
                SR_com = 1.0\nS0_io = 0.0\nSR_io = 1.0\nn_io = 1\nio = \"sio\"\ncycles = 5\n";
    let file = temp_scenario("spmd_net_bad2", text);
    let out = parsim(&["run", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("spmd.cycles"), "{err}");
}

#[test]
fn show_network_prints_the_built_program() {
    let file = temp_scenario(
        "spmd_net_show",
        &format!(
            "[run]\nreplications = 2\n{}",
            spmd("mesh", "p = 4\nr = 2\nn_io = 1\ncycles = 2")
        ),
    );
    let out = parsim(&["run", "--show-network", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("# program built from [spmd]"), "{text}");
    assert!(text.contains("kind = \"mesh\""), "{text}");
    assert!(text.contains("dims = [2, 2]"), "{text}");
    assert!(text.contains("spmd.speedup"), "{text}");
}

/// `analyze` on the network form shows the paper's closed form at the scenario's `w` as terms
/// (never compared), with its BUS-AIO cycle time equal to the routed form's exact MVA; and
/// predicts, as a labelled approximation, the closed form at `w = 0` (the idle-network time the
/// builder is calibrated to): the routed form's MVA at `w = 0`, its makespan `cycles` cycles.
#[test]
fn analyze_shows_the_closed_form_as_terms() {
    let text = "[spmd]\np = 8\nd = 2\nw = 0.5\nr = 2\nS_par = 4.0\nS_ser = 0.1\nS0_com = 0.05\n\
                SR_com = 0.4\nS0_io = 0.1\nSR_io = 1.0\nn_io = 1\nio = \"bus-aio\"\n";
    let mva_speedup = |text: &str| {
        parsim::study::analyze_scenario(&scenario(text))
            .predictions
            .iter()
            .find(|p| p.metric == "spmd.speedup" && p.method.starts_with("BUS-AIO"))
            .expect("the routed form's MVA speedup")
            .value
    };
    let net = parsim::study::analyze_scenario(&scenario(&format!(
        "{text}network = \"torus\"\ncycles = 7\n"
    )));
    let term = net
        .terms
        .iter()
        .find(|t| t.metric == "spmd.speedup" && t.method.starts_with("BUS-AIO"))
        .expect("the closed form as a term");
    assert!(term.method.contains("not compared") && !term.exact);
    assert_eq!(term.value, mva_speedup(text));
    let free = net
        .predictions
        .iter()
        .find(|p| p.metric == "spmd.speedup")
        .expect("the contention-free closed form");
    assert!(free.method.contains("closed form at w = 0") && !free.exact);
    let at_zero = mva_speedup(&text.replace("w = 0.5", "w = 0.0"));
    assert!((free.value - at_zero).abs() < 1e-12 * at_zero);
    let makespan = net
        .predictions
        .iter()
        .find(|p| {
            p.metric == "program.makespan" && !super::util::from_program_evaluation(&p.method)
        })
        .expect("makespan");
    // T1 = 4.1 + 1.1 = 5.2 a cycle
    assert!((makespan.value - 7.0 * 5.2 / at_zero).abs() < 1e-9 * makespan.value);
}

/// What `run --show-network` prints for an `[spmd]` section is a scenario in its own right:
/// read back as a file, it builds exactly the network or program the section builds, for
/// every bundled `[spmd]` file (network form, phases, and the paper's networks).
#[test]
fn the_shown_tables_read_back_as_the_same_workload() {
    let mut checked = 0;
    for dir in ["scenarios", "validation"] {
        let mut files: Vec<_> = std::fs::read_dir(crate::util::root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|f| f.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for file in files {
            let sc = parsim::scenario::load(&file).unwrap();
            let Some(spmd) = sc.spmd() else { continue };
            let text = parsim::scenario::show::toml(&spmd.tables());
            let shown = parsim::scenario::parse(&text, &file).unwrap_or_else(|e| {
                panic!("{}: the shown tables do not load: {e}", file.display())
            });
            assert_eq!(
                format!("{:?}", shown.workload),
                format!("{:?}", sc.workload),
                "{}",
                file.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} [spmd] files");
}

#[test]
fn times_too_far_apart_are_refused_at_the_spmd_field_that_sets_them() {
    // issue 41: SR_io = 1e13 was refused at `spmd (built program) program.op[0].body[1].bytes`
    // and `topology.startup`, names from the program the section builds, not the user's
    let torus = std::fs::read_to_string(crate::util::root().join("scenarios/spmd_torus.toml"))
        .unwrap()
        .replace("SR_io = 1.0", "SR_io = 1e13");
    let file = temp_scenario("spmd_io_span", &torus);
    let out = parsim(&["run", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let at = format!("{}:7: spmd.SR_io: makes an I/O burst", file.display());
    assert!(err.contains(&at), "{err}");
    assert!(
        err.contains("from spmd.S0_com") && err.contains("bring SR_io and S0_com within"),
        "{err}"
    );
    assert!(
        !err.contains("built program") && !err.contains("topology."),
        "{err}"
    );
    // a phase's own value is named at the phase; one it inherits, at the section
    let phases =
        std::fs::read_to_string(crate::util::root().join("scenarios/spmd_two_phase.toml")).unwrap();
    let file = temp_scenario(
        "spmd_phase_io_span",
        &phases.replace("SR_io = 30.0", "SR_io = 3e13"),
    );
    let out = parsim(&["run", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(":34: spmd.phase[1].SR_io: makes an I/O burst"),
        "{err}"
    );
}
