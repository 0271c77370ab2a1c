//! GOAL files and dependency-graph programs from the command line: `parsim run x.goal` with
//! LogGP from flags, `[program] goal = ...`, `parsim goal` and back, `irecv`/`wait` against hand
//! values, and bad input (exit 2, the file, the line and what to do).

use std::path::Path;

use crate::goal::{Example, example_file};
use crate::util::{call, temp_scenario};

/// `program.makespan` of `parsim run <args> --csv`, in ns (rounded).
fn makespan_ns(args: &[&str]) -> u64 {
    let mut all = args.to_vec();
    all.push("--csv");
    let (code, out, err) = call(&all);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    let row = out
        .lines()
        .find(|l| l.contains(",program.makespan,"))
        .unwrap_or_else(|| panic!("no makespan in {out}"));
    let mean: f64 = row.split(',').nth(11).unwrap().parse().unwrap();
    (mean * 1e9).round() as u64
}

fn tree() -> String {
    example_file(Example::BinaryTree).display().to_string()
}

#[test]
fn a_goal_file_runs_on_loggopsims_defaults_or_on_the_flags() {
    let tree = tree();
    assert_eq!(makespan_ns(&["run", &tree]), 22_000);
    // the deepest host is four hops of o + L + o (1 byte, g < o never binds): L = 5 us adds
    // 4 x 2.5 us
    assert_eq!(makespan_ns(&["run", &tree, "--loggp", "L=5e-6"]), 32_000);
    // the same file from a scenario, its path relative to the scenario or absolute
    let sc = temp_scenario(
        "goal_in_toml",
        &format!("[program]\ngoal = {tree:?}\n\n[loggp]\nL = 5e-6\n"),
    );
    assert_eq!(makespan_ns(&["run", sc.to_str().unwrap()]), 32_000);
    // links between the endpoints: a 4 x 4 torus of 1 GB/s adds each hop's bytes and latency
    let torus = makespan_ns(&[
        "run",
        &tree,
        "--topology",
        "kind=\"torus\",dims=[4,4],bandwidth=1e9,latency=1e-7",
    ]);
    assert!(torus > 22_000, "{torus}");
}

#[test]
fn links_add_their_latency_and_transmission_between_the_endpoints() {
    let dir = std::env::temp_dir().join(format!("parsim-it-{}-goal-links", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 1,000 bytes from rank 0 to rank 2 of 4; rank 2 posts its receive at once
    let goal = dir.join("far.goal");
    std::fs::write(
        &goal,
        "num_ranks 4\nrank 0 {\nl1: send 1000b to 2 tag 0\n}\nrank 1 {\n}\nrank 2 {\nl1: recv 1000b from 0 tag 0\n}\nrank 3 {\n}\n",
    )
    .unwrap();
    let goal = goal.to_str().unwrap();
    // LogGP alone: o + L + o + 999 G = 1500 + 2500 + 1500 + 5994
    assert_eq!(makespan_ns(&["run", goal]), 11_494);
    // a ring of 1 GB/s links, 100 ns a hop, two hops: the message leaves when the sender's o
    // ends and reaches the receiver L after the last link delivered it. Cut-through: 2 x 100
    // ns + 1000 ns; store-and-forward: 2 x (100 + 1000) ns
    let ring = "kind=\"ring\",bandwidth=1e9,latency=1e-7";
    assert_eq!(
        makespan_ns(&["run", goal, "--topology", ring]),
        11_494 + 1_200
    );
    let saf = format!("{ring},switching=\"store_and_forward\"");
    assert_eq!(
        makespan_ns(&["run", goal, "--topology", &saf]),
        11_494 + 2_200
    );
}

/// A binomial broadcast of 8 bytes to 16 ranks with LogGOPSim's parameters.
const BCAST: &str = r#"
[program]
ranks = 16

[[program.op]]
kind = "bcast"
algorithm = "binomial"
bytes = 8

[loggp]
"#;

#[test]
fn an_exported_program_runs_back_to_its_makespan() {
    let sc = temp_scenario("goal_bcast", BCAST);
    let direct = makespan_ns(&["run", sc.to_str().unwrap()]);
    // LogGOPSim 76451de gives 22168 ns for the exported file: four hops of o + L + o + 7 G
    // (the receiver's per-byte cost), 4 x (5500 + 42)
    assert_eq!(direct, 22_168);
    let goal = sc.with_extension("goal");
    let (code, _, err) = call(&["goal", sc.to_str().unwrap(), "-o", goal.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("16 ranks, 30 operations (15 sends)"), "{err}");
    assert_eq!(makespan_ns(&["run", goal.to_str().unwrap()]), direct);
    // standard output is the same text as the file
    let (_, out, _) = call(&["goal", sc.to_str().unwrap()]);
    assert_eq!(out, std::fs::read_to_string(&goal).unwrap());
}

/// Rank 1 sends 8 bytes to rank 0, which computes 10 us: receiving with `{recv}` first.
fn receive_then_compute(recv: &str) -> String {
    let wait = if recv == "irecv" {
        "\n[[program.op]]\nkind = \"wait\"\nfor = [\"r\"]\nwhen = \"rank == 0\"\n"
    } else {
        ""
    };
    format!(
        r#"
[program]
ranks = 2

[[program.op]]
kind = "{recv}"
from = "1"
when = "rank == 0"
label = "r"

[[program.op]]
kind = "compute"
time = {{ dist = "det", value = 10e-6 }}
when = "rank == 0"
{wait}
[[program.op]]
kind = "send"
to = "0"
bytes = 8
when = "rank == 1"

[loggp]
"#
    )
}

#[test]
fn irecv_overlaps_the_message_with_computation() {
    // blocking: the message arrives at o + L = 4 us, costs the receiver o + 7 G = 1.542 us,
    // then 10 us of computation
    let sc = temp_scenario("goal_recv", &receive_then_compute("recv"));
    assert_eq!(makespan_ns(&["run", sc.to_str().unwrap()]), 15_542);
    // irecv: the computation starts at once; the message, there at 4 us, waits for the CPU
    // until 10 us (LogGOPSim gives 11542 ns for the exported schedule)
    let sc = temp_scenario("goal_irecv", &receive_then_compute("irecv"));
    assert_eq!(makespan_ns(&["run", sc.to_str().unwrap()]), 11_542);
    let (code, goal, err) = call(&["goal", sc.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        goal.contains("l1 irequires l0\nl2 requires l0\nl2 requires l1"),
        "{goal}"
    );
}

/// Runs `parsim <args>` expecting exit 2 and every one of `wanted` in its error output.
fn refused(args: &[&str], wanted: &[&str]) {
    let (code, out, err) = call(args);
    assert_eq!(code, Some(2), "{args:?}: {out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in wanted {
        assert!(err.contains(w), "{args:?}: no {w:?} in\n{err}");
    }
}

#[test]
fn bad_goal_input_names_the_file_the_line_and_the_fix() {
    let dir = std::env::temp_dir().join(format!("parsim-it-{}-goal-bad", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let undefined = write(
        "undefined.goal",
        "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\nl2: calc 100\nl2 requires l3\n}\n",
    );
    refused(
        &["run", &undefined],
        &[
            "undefined.goal:5: label \"l3\" is not defined in rank 0",
            "define it there",
        ],
    );
    let outside = write(
        "outside.goal",
        "num_ranks 2\nrank 0 {\nsend 8b to 5 tag 0\n}\n",
    );
    refused(&["run", &outside], &["outside.goal:3: a send to rank 5"]);
    let unit = write("unit.goal", "num_ranks 1\nrank 0 {\nsend 8 to 0\n}\n");
    refused(&["run", &unit], &["unit.goal:3:", "sizes are in bytes: 8b"]);
    let open = write("open.goal", "num_ranks 1\nrank 0 {\ncalc 5\n");
    refused(&["run", &open], &["open.goal:", "never closed"]);
    refused(
        &["run", &dir.join("missing.goal").display().to_string()],
        &["missing.goal: cannot read it"],
    );
    // and through a scenario: the schedule's file and line, and the field that names it
    let sc = temp_scenario(
        "goal_bad_ref",
        &format!("[program]\ngoal = {undefined:?}\n\n[loggp]\n"),
    );
    refused(
        &["run", sc.to_str().unwrap()],
        &[
            "goal_bad_ref.toml: 1 problem",
            "undefined.goal:5: program.goal: label",
        ],
    );
    // the flags: the flag, what is wrong, an example
    let tree = tree();
    refused(
        &["run", &tree, "--loggp", "L=-1"],
        &[
            "--loggp L: must be a time in seconds",
            "e.g. --loggp L=2.5e-6",
        ],
    );
    refused(
        &["run", &tree, "--loggp", "X=1"],
        &["--loggp X: unknown field `X`"],
    );
    refused(
        &["run", &tree, "--topology", "kind=\"torus\",dims=[4,4]"],
        &["--topology bandwidth: missing field"],
    );
    refused(
        &["run", &tree, "--ranks-per-node", "0"],
        &["--ranks-per-node: must be a whole number from 1 to 16"],
    );
    refused(
        &["run", "scenarios/mm1.toml", "--loggp", "L=1e-6"],
        &["give the machine of a GOAL file", "[loggp]"],
    );
    // a program's dependencies
    let bad_label = temp_scenario(
        "goal_bad_label",
        "[program]\nranks = 2\n\n[[program.op]]\nkind = \"compute\"\ntime = { dist = \"det\", value = 1e-6 }\nrequires = [\"nowhere\"]\n\n[loggp]\n",
    );
    refused(
        &["run", bad_label.to_str().unwrap()],
        &["program.op[0].requires: no operation is labelled \"nowhere\""],
    );
    let bad_wait = temp_scenario(
        "goal_bad_wait",
        "[program]\nranks = 2\n\n[[program.op]]\nkind = \"wait\"\n\n[loggp]\n",
    );
    refused(
        &["run", bad_wait.to_str().unwrap()],
        &["program.op[0].for: is missing: give the labels"],
    );
    assert!(Path::new(&tree).exists());
}

/// An eager send whose receive is posted larger than `S`: LogGOPSim's rule (the receive's size
/// decides rendezvous) finishes the send a second time when the receive matches it, and the
/// operation that required it, already run, is released once more. LogGOPSim 76451de prints
/// the host times (101,507 and 11,542 ns with `-S 4095`); parsim used to stop with "calc never
/// ready" (found by the MPI-trace path: NPB MG posts 18,496-byte receives for 8-byte sends).
#[test]
fn an_eager_send_finished_again_by_a_larger_receive_runs_as_loggopsim_runs_it() {
    let dir = std::env::temp_dir().join(format!("parsim-it-{}-double-done", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let goal = dir.join("double_done.goal");
    std::fs::write(
        &goal,
        "num_ranks 2\n\nrank 0 {\nl1: send 8b to 1 tag 5\nl2: calc 100000\nl3: calc 7\nl3 requires l1\nl3 requires l2\n}\n\nrank 1 {\nl1: calc 10000\nl2: recv 18496b from 0 tag 5\nl2 requires l1\n}\n",
    )
    .unwrap();
    let goal = goal.to_str().unwrap();
    assert_eq!(makespan_ns(&["run", goal, "--loggp", "S=4095"]), 101_507);
    let (code, out, err) = call(&["run", goal, "--loggp", "S=4095", "--csv"]);
    assert_eq!(code, Some(0), "{err}");
    let rank1 = out
        .lines()
        .find(|l| l.contains(",rank.1.finish,"))
        .and_then(|l| l.split(',').nth(11))
        .map(|v| (v.parse::<f64>().unwrap() * 1e9).round() as u64);
    assert_eq!(rank1, Some(11_542));
}
