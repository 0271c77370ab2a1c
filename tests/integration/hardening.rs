//! Hostile inputs of issue 44: the surfaces added with GOAL schedules, LogGP
//! endpoints and timelines, and the last findings of a fuzzer on the older ones. Each case is
//! refused before anything runs, with what and where, or gives the exact number; none hangs,
//! panics, writes where it must not or exits 0 with a wrong result.

use std::path::Path;
use std::process::Command;

use super::util::{call_bounded, call_in, root, scratch};

/// A two-rank GOAL schedule: a send from 0 to 1 and a calc on each.
const PING: &str = "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 5\nl2: calc 1000\n}\nrank 1 {\nl1: recv 8b from 0 tag 5\n}\n";

/// A 16-rank program on a torus, run to completion (what a timeline records).
fn ring(dir: &Path) -> String {
    let text = std::fs::read_to_string(root().join("scenarios/program_ring_torus.toml")).unwrap();
    std::fs::write(dir.join("ring.toml"), text).unwrap();
    "ring.toml".to_owned()
}

/// Runs `args` in `dir`, expecting exit 2 and each of `wanted` in the error.
fn refused(dir: &Path, args: &[&str], wanted: &[&str]) -> String {
    let (code, out, err) = call_bounded(dir, args, 60);
    assert_eq!(code, Some(2), "{args:?}: {out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in wanted {
        assert!(err.contains(w), "{args:?}: no {w:?} in\n{err}");
    }
    err
}

/// The JSON report of `args` in `dir` (exit 0).
fn report(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = call_in(dir, &all);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v[0].clone()
}

/// The mean of `metric` in a report.
fn mean(report: &serde_json::Value, metric: &str) -> f64 {
    report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} in {report}"))["mean"]
        .as_f64()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn outputs_never_go_through_a_planted_link_into_a_device_or_a_pipe() {
    let dir = scratch("planted");
    let sc = ring(&dir);
    std::fs::write(dir.join("victim"), "precious").unwrap();
    // links planted under the names writers used to choose
    for planted in ["tl.json.tmp", "tl.svg.tmp"] {
        std::os::unix::fs::symlink(dir.join("victim"), dir.join(planted)).unwrap();
    }
    let (code, _, err) = call_in(
        &dir,
        &[
            "run",
            &sc,
            "--timeline",
            "tl.json",
            "--timeline-svg",
            "tl.svg",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("victim")).unwrap(),
        "precious"
    );
    assert!(
        std::fs::read_to_string(dir.join("tl.json"))
            .unwrap()
            .starts_with("{\"traceEvents\"")
    );
    // a link at the output itself (as /dev/stdout is one) is neither written through nor replaced
    std::os::unix::fs::symlink(dir.join("victim"), dir.join("link.svg")).unwrap();
    refused(
        &dir,
        &["run", &sc, "--timeline-svg", "link.svg"],
        &["symbolic link"],
    );
    assert!(
        std::fs::symlink_metadata(dir.join("link.svg"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("victim")).unwrap(),
        "precious"
    );
    // a device node of our own (the null device's numbers: mknod needs root) and a pipe stay
    // what they are
    let mut specials = Vec::new();
    if Command::new("mknod")
        .args(["node", "c", "1", "3"])
        .current_dir(&dir)
        .status()
        .is_ok_and(|s| s.success())
    {
        specials.push(("node", "a character device"));
    }
    let fifo = Command::new("mkfifo")
        .arg("fifo")
        .current_dir(&dir)
        .status();
    assert!(fifo.is_ok_and(|s| s.success()), "mkfifo failed");
    specials.push(("fifo", "a named pipe"));
    for (name, kind) in specials {
        for flag in ["--timeline", "--timeline-svg", "--per-replication"] {
            refused(&dir, &["run", &sc, flag, name], &[name, kind]);
        }
        refused(&dir, &["goal", &sc, "-o", name], &[name, kind]);
        let meta = std::fs::symlink_metadata(dir.join(name)).unwrap();
        assert!(!meta.is_file(), "{name} became a regular file");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn no_output_replaces_an_input_or_another_output() {
    let dir = scratch("inputs");
    let sc = ring(&dir);
    // a program whose compute times come from a trace
    std::fs::write(dir.join("times.txt"), "0.001\n0.002\n").unwrap();
    std::fs::write(
        dir.join("traced.toml"),
        std::fs::read_to_string(dir.join(&sc)).unwrap().replace(
            "time = { dist = \"exp\", mean = 1e-3 }",
            "time = { dist = \"empirical\", file = \"times.txt\" }",
        ),
    )
    .unwrap();
    std::fs::write(dir.join("ping.goal"), PING).unwrap();
    std::fs::write(
        dir.join("via.toml"),
        "[program]\ngoal = \"ping.goal\"\n\n[loggp]\n",
    )
    .unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["run", &sc, "--timeline", "ring.toml"], "ring.toml"),
        (&["run", &sc, "--timeline-svg", "./ring.toml"], "ring.toml"),
        (
            &["run", "traced.toml", "--timeline", "times.txt"],
            "times.txt",
        ),
        (
            &["run", "ping.goal", "--per-replication", "ping.goal"],
            "ping.goal",
        ),
        (
            &["run", "via.toml", "--per-replication", "ping.goal"],
            "ping.goal",
        ),
        (&["goal", "ping.goal", "-o", "ping.goal"], "ping.goal"),
        (&["goal", &sc, "-o", "ring.toml"], "ring.toml"),
        (&["goal", "via.toml", "-o", "./ping.goal"], "ping.goal"),
    ];
    for (args, input) in cases {
        let before = std::fs::read(dir.join(input)).unwrap();
        refused(&dir, args, &["also an input"]);
        assert_eq!(std::fs::read(dir.join(input)).unwrap(), before, "{args:?}");
    }
    refused(
        &dir,
        &[
            "run",
            &sc,
            "--timeline",
            "x.json",
            "--timeline-svg",
            "./x.json",
        ],
        &["another output"],
    );
    assert!(!dir.join("x.json").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_goal_file_gets_the_checks_a_scenario_gets() {
    let dir = scratch("goal-files");
    let mut bad: Vec<(String, &str)> = Vec::new();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero.goal")).unwrap();
        bad.push(("zero.goal".to_owned(), "a character device"));
        if Command::new("mkfifo")
            .arg("pipe.goal")
            .current_dir(&dir)
            .status()
            .is_ok_and(|s| s.success())
        {
            bad.push(("pipe.goal".to_owned(), "a named pipe"));
        }
    }
    // a sparse file past the limit (no disk is used), and a line that never ends
    let big = std::fs::File::create(dir.join("big.goal")).unwrap();
    if big.set_len(100 << 30).is_ok() {
        bad.push(("big.goal".to_owned(), "beyond the limit"));
    }
    std::fs::write(dir.join("zeros.goal"), vec![0u8; 1 << 20]).unwrap();
    bad.push(("zeros.goal".to_owned(), "zeros.goal:1: the line is longer"));
    for (file, why) in &bad {
        refused(&dir, &["run", file], &[file, why]);
        refused(&dir, &["goal", file], &[file, why]);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn goal_statements_at_their_limits_run() {
    let dir = scratch("goal-limits");
    // the highest CPU and NIC (255) make 256 of each, and a block may open and close on a line
    std::fs::write(
        dir.join("units.goal"),
        "num_ranks 3\nrank 0 {\nl1: send 8b to 1 tag 5 nic 255\nl2: calc 1000 cpu 255\n}\n\
         rank 1 {\nl1: recv 8b from 0 tag 5 cpu 255 nic 255\n}\nrank 2 {}\n",
    )
    .unwrap();
    let r = report(&dir, &["run", "units.goal", "--replications", "2"]);
    assert!(mean(&r, "program.makespan") > 0.0);
    // names a shell or TOML would trip on: a new line, a byte that is no UTF-8, a capital suffix
    let mut names = vec!["UP.GOAL".to_owned(), "new\nline.goal".to_owned()];
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"odd\xff.goal");
        std::fs::write(dir.join(odd), PING).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_parsim"))
            .arg("run")
            .arg(odd)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for name in names.drain(..) {
        std::fs::write(dir.join(&name), PING).unwrap();
        let (code, _, err) = call_in(&dir, &["run", &name, "--replications", "2"]);
        assert_eq!(code, Some(0), "{name:?}: {err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_deadlock_names_the_statements_the_user_wrote() {
    let dir = scratch("deadlock");
    std::fs::write(
        dir.join("dl.goal"),
        "num_ranks 2\nrank 0 {\nl1: calc 5\nl2: recv 8b from 1 tag 3\nl7: send 8b to 1 tag 0\nl7 requires l2\n}\n\
         rank 1 {\nx: recv 8b from 0 tag 0\ny: send 8b to 0 tag 3\ny requires x\n}\n",
    )
    .unwrap();
    refused(
        &dir,
        &["run", "dl.goal"],
        &[
            "receive of rank 0 at dl.goal:4, l2",
            "rank 1 at dl.goal:10, y",
        ],
    );
    std::fs::write(
        dir.join("dl.toml"),
        "[program]\nranks = 2\n[[program.op]]\nkind = \"repeat\"\ntimes = 3\n\
         body = [{ kind = \"compute\", time = { dist = \"det\", value = 1e-6 } }]\n\
         [[program.op]]\nkind = \"recv\"\nfrom = \"1 - rank\"\n\
         [[program.op]]\nkind = \"send\"\nto = \"1 - rank\"\nbytes = 8\n[loggp]\n",
    )
    .unwrap();
    let err = refused(
        &dir,
        &["run", "dl.toml"],
        &["receive of rank 0 at program.op[1]", "at program.op[2]"],
    );
    assert!(!err.contains("pass"), "{err}");
    // receives left in a loop are told apart by the pass that posted them
    std::fs::write(
        dir.join("passes.toml"),
        "[program]\nranks = 2\n[[program.op]]\nkind = \"repeat\"\ntimes = 3\n\
         body = [{ kind = \"irecv\", from = \"1 - rank\" }]\n[loggp]\n",
    )
    .unwrap();
    refused(
        &dir,
        &["run", "passes.toml"],
        &[
            "receive of rank 0 at program.op[0].body[0], pass 1 (",
            "receive of rank 0 at program.op[0].body[0], pass 3 (",
        ],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn loops_are_sized_before_they_are_unrolled() {
    let dir = scratch("unroll");
    let text = "[program]\nranks = 2\n\n[[program.op]]\nkind = \"repeat\"\ntimes = 1000000000\n\
                body = [{ kind = \"compute\", time = { dist = \"det\", value = 1e-9 } }]\n\n[loggp]\n";
    std::fs::write(dir.join("loop.toml"), text).unwrap();
    for args in [vec!["run", "loop.toml"], vec!["goal", "loop.toml"]] {
        refused(
            &dir,
            &args,
            &["program.op[0].times", "2.000e9 operations", "beyond"],
        );
    }
    // without [loggp] the loop stays a loop, and parsim goal of it is refused the same way
    std::fs::write(
        dir.join("plain.toml"),
        text.replace("[loggp]\n", "[topology]\nkind = \"bus\"\nbandwidth = 1e9\n"),
    )
    .unwrap();
    refused(&dir, &["goal", "plain.toml"], &["2.000e9 operations"]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A message of `bytes` on endpoints whose only cost is `G` per byte: the makespan.
fn per_byte_makespan(dir: &Path, big_g: &str, bytes: u64) -> f64 {
    std::fs::write(
        dir.join("one.goal"),
        format!(
            "num_ranks 2\nrank 0 {{\nl1: send {bytes}b to 1\n}}\nrank 1 {{\nl1: recv {bytes}b from 0\n}}\n"
        ),
    )
    .unwrap();
    let loggp = format!("L=0,o=0,g=0,O=0,S=1000000000000,G={big_g}");
    mean(
        &report(dir, &["run", "one.goal", "--loggp", &loggp]),
        "program.makespan",
    )
}

#[test]
fn per_byte_costs_are_kept_exactly() {
    let dir = scratch("per-byte");
    // the receiver's CPU is busy (s - 1) max(O, G) after the message: 2.4 ps a byte over
    // 1,000,000 bytes is 2.4 us (whole picoseconds a byte made it 2 us, 17% short)
    let short = per_byte_makespan(&dir, "2.4e-12", 1_000_001);
    assert!((short - 2.4e-6).abs() < 1e-18, "{short}");
    // 0.4 ps a byte over a GiB is 0.43 ms (it was free)
    let gib = per_byte_makespan(&dir, "0.4e-12", (1 << 30) + 1);
    assert!((gib - 0.4e-12 * f64::from(1 << 30)).abs() < 1e-12, "{gib}");
    // what femtoseconds cannot hold within a millionth is refused, naming the flag
    refused(
        &dir,
        &["run", "one.goal", "--loggp", "G=1e-17"],
        &["--loggp G", "whole femtoseconds"],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_runs_identity_covers_its_goal_file_and_machine() {
    let dir = scratch("identity");
    for sub in ["a", "b"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("a/x.goal"), PING).unwrap();
    std::fs::write(dir.join("b/x.goal"), PING.replace("calc 1000", "calc 2000")).unwrap();
    let hash = |args: &[&str]| report(&dir, args)["scenario_hash"].clone();
    let a = hash(&["run", "a/x.goal"]);
    assert_ne!(a, hash(&["run", "b/x.goal"]), "same name, other content");
    assert_ne!(
        a,
        hash(&["run", "a/x.goal", "--loggp", "L=1e-6"]),
        "other machine"
    );
    // a scenario that names the file: editing the schedule changes the identity
    std::fs::write(
        dir.join("a/s.toml"),
        "[program]\ngoal = \"x.goal\"\n\n[loggp]\n",
    )
    .unwrap();
    let before = hash(&["run", "a/s.toml"]);
    std::fs::write(dir.join("a/x.goal"), PING.replace("calc 1000", "calc 3000")).unwrap();
    assert_ne!(before, hash(&["run", "a/s.toml"]));
    // shards of one GOAL file on two machines do not merge
    for (k, loggp) in [(0, "L=1e-6"), (1, "L=2e-6")] {
        shard(
            &dir,
            k,
            &["a/x.goal", "--loggp", loggp, "--replications", "2"],
        );
    }
    refused(&dir, &["merge", "shards"], &["come from different runs"]);
    // shards of a sweep whose schedule was edited between them do not merge
    for k in 0..2 {
        std::fs::write(
            dir.join("a/x.goal"),
            PING.replace("calc 1000", &format!("calc {}", 1000 + k)),
        )
        .unwrap();
        let shard = format!("{k}/2");
        let (code, _, err) = call_in(
            &dir,
            &[
                "sweep",
                "a/s.toml",
                "--vary",
                "loggp.L=1e-6,2e-6",
                "--shard",
                &shard,
                "--out",
                "sweep-shards",
                "--set",
                "run.replications=2",
            ],
        );
        assert_eq!(code, Some(0), "{err}");
    }
    refused(
        &dir,
        &["merge", "sweep-shards"],
        &["different sweeps (scenario or the files it reads"],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_merge_names_what_differs_in_words() {
    let dir = scratch("merge-words");
    let sc = root().join("scenarios/mm1.toml");
    two_shards(
        &dir,
        &[
            sc.to_str().unwrap(),
            "--replications",
            "2",
            "--length",
            "200",
        ],
    );
    // one shard edited to another warm-up: the message says what each holds, not a dump
    edit_second_shard(&dir, |v| {
        v["warmup"]["observations"] = serde_json::json!(12345)
    });
    let err = refused(
        &dir,
        &["merge", "shards"],
        &["warm-up cuts", "12345 observations cut by"],
    );
    assert!(!err.contains("StoredWarmup"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn machine_flags_cannot_add_sections_and_their_mistakes_name_them() {
    let dir = scratch("flags");
    std::fs::write(dir.join("ping.goal"), PING).unwrap();
    // a new line: refused by the flag's reader
    refused_flag(
        &dir,
        "--loggp",
        "L=1e-6\n[topology]\nkind=\"bus\"",
        &["--loggp", "control character"],
    );
    // a comment would hide the table's end: named as the flag's, not a line of hidden text
    refused(
        &dir,
        &["run", "ping.goal", "--loggp", "L=1e-6 # comment"],
        &[
            "--loggp: does not read as KEY=VALUE",
            "a `#` starts a TOML comment",
        ],
    );
    // a section written between commas is no key
    refused_flag(
        &dir,
        "--loggp",
        "L=1e-6,[topology],kind=\"bus\",bandwidth=1e9",
        &["--loggp:"],
    );
    let err = refused(
        &dir,
        &["run", "ping.goal", "--loggp", "L=-1"],
        &["--loggp L: must be a time", "e.g. --loggp"],
    );
    assert!(
        !err.split("ping.goal:")
            .skip(1)
            .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit())),
        "a flag's mistake is no line of the file: {err}"
    );
    refused(
        &dir,
        &["run", "ping.goal", "--set", "loggp.L=-1"],
        &["--set loggp.L=-1: must be a time"],
    );
    refused(
        &dir,
        &["run", "ping.goal", "--topology", "kind=\"torus\",dims=[2]"],
        &["--topology bandwidth"],
    );
    // a machine profile says nothing of a GOAL schedule's machine
    std::fs::write(
        dir.join("prof.toml"),
        "[program]\ngoal = \"ping.goal\"\n\n[loggp]\n\n[machine]\nprofile = \"m.toml\"\n",
    )
    .unwrap();
    refused(
        &dir,
        &["run", "prof.toml"],
        &["machine", "leave out [machine]"],
    );
    // a sweep has no fields to vary in a GOAL file: one message, not one per point
    let err = refused(
        &dir,
        &["sweep", "ping.goal", "--vary", "loggp.L=1e-6,2e-6"],
        &["a GOAL file has none", "[program] goal"],
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn route_reads_goal_files_and_its_numbers() {
    let dir = scratch("route");
    std::fs::write(dir.join("ping.goal"), PING).unwrap();
    refused(
        &dir,
        &["route", "ping.goal", "--from", "0", "--to", "1"],
        &["LogGP endpoints alone", "--topology"],
    );
    let (code, out, err) = call_in(
        &dir,
        &[
            "route",
            "ping.goal",
            "--from",
            "0",
            "--to",
            "1",
            "--topology",
            "kind=\"torus\",dims=[2],bandwidth=1e9,latency=1e-7",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("1 links"), "{out}");
    let sc = ring(&dir);
    refused(
        &dir,
        &["route", &sc, "--from", "0", "--to", "5", "--bytes", "1e300"],
        &["--bytes", "1e300"],
    );
    refused(
        &dir,
        &[
            "route",
            &sc,
            "--from",
            "0",
            "--to",
            "5",
            "--bytes",
            "9007199254740993",
        ],
        &["--bytes", "9007199254740992"],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn metrics_lists_the_per_link_metrics_a_run_reports() {
    let dir = scratch("metrics");
    let sc = ring(&dir);
    let (code, names, err) = call_in(&dir, &["metrics", &sc, "--names"]);
    assert_eq!(code, Some(0), "{err}");
    let r = report(&dir, &["run", &sc, "--replications", "2"]);
    let metrics = r["metrics"].as_array().unwrap();
    assert!(
        metrics
            .iter()
            .any(|m| m["metric"].as_str().unwrap().starts_with("link.")),
        "the run reports no link"
    );
    for m in metrics {
        let name = m["metric"].as_str().unwrap();
        let pattern = match name.strip_prefix("link.") {
            Some(rest) => format!("link.<name>.{}", rest.rsplit('.').next().unwrap()),
            None => name.to_owned(),
        };
        assert!(
            names.lines().any(|l| l == pattern),
            "{name} ({pattern}) not listed"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_timeline_is_bounded_and_its_pictures_well_formed() {
    let dir = scratch("timeline-bounds");
    let sc = ring(&dir);
    // the tracks' names count: 16 ranks name 36 tracks before any span
    refused(
        &dir,
        &["run", &sc, "--timeline", "t.json", "--timeline-limit", "30"],
        &["36 events for 16 ranks"],
    );
    assert!(!dir.join("t.json").exists());
    let limit = 9000;
    let (code, _, err) = call_in(
        &dir,
        &[
            "run",
            &sc,
            "--timeline",
            "t.json",
            "--timeline-limit",
            &limit.to_string(),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let size = std::fs::metadata(dir.join("t.json")).unwrap().len();
    assert!(size <= parsim::timeline::most_trace_bytes(limit), "{size}");
    let events = std::fs::read_to_string(dir.join("t.json"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('{') && l.contains("\"ph\""))
        .count() as u64;
    assert!(events <= limit, "{events} events");
    // a title with control characters still makes a well-formed picture
    std::fs::write(
        dir.join("odd.toml"),
        std::fs::read_to_string(dir.join(&sc)).unwrap().replace(
            "name = \"Ring exchange",
            "name = \"\\u0001\\u001b[31mRing exchange",
        ),
    )
    .unwrap();
    let (code, _, err) = call_in(&dir, &["run", "odd.toml", "--timeline-svg", "odd.svg"]);
    assert_eq!(code, Some(0), "{err}");
    let svg = std::fs::read_to_string(dir.join("odd.svg")).unwrap();
    assert!(
        !svg.chars()
            .any(|c| c < ' ' && !matches!(c, '\n' | '\t' | '\r')),
        "a control character in the SVG"
    );
    resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default()).expect("well-formed");
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn slurm_jobs_get_the_users_environment() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("slurm-env");
    // an sbatch that notes the environment it was given and answers with a job id
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let sbatch = bin.join("sbatch");
    std::fs::write(
        &sbatch,
        "#!/bin/sh\nenv > \"$(dirname \"$0\")/../env.txt\"\necho 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&sbatch, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sc = root().join("scenarios/mm1.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args([
            "slurm",
            "--shards",
            "2",
            "--out",
            "jobs",
            "--submit",
            "run",
            sc.to_str().unwrap(),
        ])
        .current_dir(&dir)
        .env("PATH", path)
        .env_remove("PARSIM_HUGE_PAGES")
        .env_remove("GLIBC_TUNABLES")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env = std::fs::read_to_string(dir.join("env.txt")).unwrap();
    for leak in ["PARSIM_HUGE_PAGES", "hugetlb", "PARSIM_USER_GLIBC_TUNABLES"] {
        assert!(!env.contains(leak), "{leak} reached the jobs");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_older_surfaces_last_findings() {
    let dir = scratch("older");
    // a closed class whose only queue serves in no time: its response is 0, not negative
    let closed = "[run]\nreplications = 4\nlength = 2000\n\n[[class]]\nname = \"jobs\"\npopulation = 4\nreference = \"think\"\n\n\
                  [[station]]\nname = \"think\"\nkind = \"delay\"\nservice = { dist = \"exp\", mean = 1.0 }\n\n\
                  [[station]]\nname = \"cpu\"\nkind = \"fcfs\"\nservice = { dist = \"det\", value = 0 }\n\n\
                  [[route]]\nclass = \"jobs\"\nfrom = \"think\"\nto = \"cpu\"\n\n\
                  [[route]]\nclass = \"jobs\"\nfrom = \"cpu\"\nto = \"think\"\n";
    std::fs::write(dir.join("det0.toml"), closed).unwrap();
    let r = report(&dir, &["run", "det0.toml"]);
    assert_eq!(mean(&r, "class.jobs.response"), 0.0);
    // an open class arriving every 0 time units is an infinite rate: refused
    let open = super::util::open_single(
        1.0,
        "kind = \"delay\"\nservice = { dist = \"exp\", mean = 1.0 }",
    )
    .replace(
        "{ dist = \"exp\", rate = 1 }",
        "{ dist = \"det\", value = 0 }",
    );
    assert!(open.contains("value = 0"), "{open}");
    std::fs::write(dir.join("rate.toml"), open).unwrap();
    refused(&dir, &["run", "rate.toml"], &["interarrival: has mean 0"]);
    // a route back with probability 0.9999999: 10^7 visits per cycle, refused with the estimate
    std::fs::write(
        dir.join("loop.toml"),
        closed.replace(
            "[[route]]\nclass = \"jobs\"\nfrom = \"cpu\"\nto = \"think\"\n",
            "[[route]]\nclass = \"jobs\"\nfrom = \"cpu\"\nbranches = [{ to = \"think\", p = 0.0000001 }, { to = \"cpu\", p = 0.9999999 }]\n",
        ),
    )
    .unwrap();
    refused(
        &dir,
        &["run", "loop.toml", "--length", "20000"],
        &["1.000e7 times per cycle", "2^36"],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn settings_that_would_go_unused_are_refused() {
    let dir = scratch("unused");
    std::fs::write(dir.join("ping.goal"), PING).unwrap();
    let sc = ring(&dir);
    let cases: [(&[&str], &[&str]); 7] = [
        (
            &[
                "run",
                "ping.goal",
                "--topology",
                "kind=\"bus\",bandwidth=1e9,startup=1",
            ],
            &["--topology startup", "add it to o"],
        ),
        (
            &["run", "ping.goal", "--ranks-per-node", "2"],
            &["--ranks-per-node", "no"],
        ),
        (
            &["run", &sc, "--timeline-limit", "5"],
            &["--timeline-limit", "--timeline"],
        ),
        (
            &[
                "run",
                &sc,
                "--timeline-limit",
                "5",
                "--shard",
                "0/2",
                "--out",
                "shards",
            ],
            &["--timeline-limit", "--timeline"],
        ),
        (
            &[
                "run",
                "ping.goal",
                "--loggp",
                "L=2e-6",
                "--set",
                "loggp.L=1e-6",
            ],
            &["--set loggp.L", "--loggp gives this key too"],
        ),
        (
            &["run", &sc, "--replications", "4294967295"],
            &["--replications", "1000000"],
        ),
        (
            &["run", &sc, "--set", "run.replications=5000000000"],
            &["at most 1000000"],
        ),
    ];
    for (args, wanted) in cases {
        refused(&dir, args, wanted);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn messages_name_what_the_user_wrote() {
    let dir = scratch("messages");
    let sc = ring(&dir);
    // a --set's mistake is the --set's, not a line of the file, and adds no false problem
    let err = refused(
        &dir,
        &["run", &sc, "--set", "program.ranks=-1"],
        &[
            "--set program.ranks=-1: must be a whole number",
            "1 problem",
        ],
    );
    assert!(!err.contains("dims"), "{err}");
    // a GOAL schedule under another name
    std::fs::write(dir.join("ping.txt"), PING).unwrap();
    refused(
        &dir,
        &["run", "ping.txt"],
        &["reads as a GOAL schedule", "end in .goal"],
    );
    // the GOAL reader's mistakes say what is wrong
    for (text, wanted) in [
        (
            "num_ranks 1\nrank 0 {\nl1: calc 5\nl1 requires l1\n}\n",
            "x.goal:4: \"l1\" requires itself",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 5\nrank 1 {\n}\n",
            "x.goal:4: \"rank\" inside the block of rank 0",
        ),
        (
            "num_ranks 1\nrank 0 {\nl1: calc 5\n}\n}\n",
            "x.goal:5: a \"}\" with no block open",
        ),
        (
            "num_ranks 2\nrank 0 { l1: calc 5 } rank 1 { }\n",
            "x.goal:2: a \"}\" before the end of the line",
        ),
    ] {
        std::fs::write(dir.join("x.goal"), text).unwrap();
        refused(&dir, &["run", "x.goal"], &[wanted]);
    }
    // a tag a graph cannot keep is refused at its operation's line, before the run
    std::fs::write(
        dir.join("tag.toml"),
        "[program]\nranks = 2\n\n[[program.op]]\nkind = \"send\"\nto = 1\nbytes = 8\ntag = 4294967295\nwhen = \"rank == 0\"\n\n[loggp]\n",
    )
    .unwrap();
    refused(
        &dir,
        &["run", "tag.toml"],
        &["tag.toml:4: program.op[0].tag", "2^31"],
    );
    // an empty list is not a missing one; a whole number TOML cannot hold, and a dimension
    // too large to index, say their limits
    std::fs::write(
        dir.join("wait.toml"),
        "[program]\nranks = 2\n\n[[program.op]]\nkind = \"wait\"\nfor = []\n\n[loggp]\n",
    )
    .unwrap();
    refused(
        &dir,
        &["run", "wait.toml"],
        &["wait.toml:4: program.op[0].for: is empty"],
    );
    std::fs::write(dir.join("ping.goal"), PING).unwrap();
    refused(
        &dir,
        &["run", "ping.goal", "--loggp", "S=18446744073709551615"],
        &["--loggp S", "at most 9223372036854775807"],
    );
    refused_flag(
        &dir,
        "--topology",
        "kind=\"torus\",dims=[1,9223372036854775807],bandwidth=1e9,latency=1e-6",
        &["--topology dims", "from 1 to 4294967295"],
    );
    // a merge names the replication that is not there
    two_shards(&dir, &[&sc, "--replications", "4"]);
    edit_second_shard(&dir, |v| v["rows"][0]["index"] = serde_json::json!(0));
    refused(&dir, &["merge", "shards"], &["replication 0 appears twice"]);
    refused(&dir, &["merge", "ping.txt"], &["is not a directory"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_link_too_slow_for_its_message_is_no_link_at_all() {
    let dir = scratch("slow-link");
    std::fs::write(dir.join("ping.goal"), PING).unwrap();
    // the transmission passes every clock: refused, not wrapped to a free link
    refused_flag(
        &dir,
        "--topology",
        "kind=\"bus\",bandwidth=1e-30",
        &["2^62"],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_message_percentile_is_measured_where_there_is_no_startup() {
    let dir = scratch("p99");
    for bytes in [8, 1000, 100_000] {
        std::fs::write(
            dir.join("p.toml"),
            format!(
                "[program]\nranks = 2\n[[program.op]]\nkind = \"send\"\nto = 1\nbytes = {bytes}\nwhen = \"rank == 0\"\n\
                 [[program.op]]\nkind = \"recv\"\nfrom = 0\nwhen = \"rank == 1\"\n[topology]\nkind = \"bus\"\nbandwidth = 1e9\n"
            ),
        )
        .unwrap();
        let r = report(&dir, &["run", "p.toml"]);
        let (delay, p99) = (mean(&r, "messages.delay"), mean(&r, "messages.p99"));
        // every message takes the same time: the percentile is it, to the 0.4% resolution
        assert!(
            (p99 - delay).abs() <= 0.005 * delay,
            "{bytes} bytes: p99 {p99}, delay {delay}"
        );
    }
    // messages of 0 bytes that take the latency, in a program that also writes (in a loop run
    // no time) large ones: the scale is the latency, not a transmission none of them makes
    std::fs::write(
        dir.join("q.toml"),
        "[program]\nranks = 4\n[[program.op]]\nkind = \"repeat\"\ntimes = 0\n\
         body = [{ kind = \"allreduce\", bytes = 1024 }]\n[[program.op]]\nkind = \"bcast\"\n\
         bytes = 0\n[topology]\nkind = \"bus\"\nbandwidth = 100.0\nlatency = 1e-6\n",
    )
    .unwrap();
    let r = report(&dir, &["run", "q.toml"]);
    let (delay, p99) = (mean(&r, "messages.delay"), mean(&r, "messages.p99"));
    assert!(
        delay > 0.0 && (p99 - delay).abs() <= 0.005 * delay,
        "p99 {p99}, delay {delay}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_slurm_result_is_checked_as_every_output_and_written_through_a_fresh_name() {
    let dir = scratch("slurm-result");
    let sc = ring(&dir);
    refused(
        &dir,
        &[
            "slurm",
            "--shards",
            "2",
            "--out",
            "o",
            "--result",
            &sc,
            "run",
            &sc,
            "--replications",
            "4",
        ],
        &["also an input"],
    );
    refused(
        &dir,
        &[
            "slurm",
            "--shards",
            "2",
            "--out",
            "o",
            "--result",
            "./o/../o/shard-00000-of-00002.json",
            "run",
            &sc,
            "--replications",
            "4",
        ],
        &["the shards are written there"],
    );
    let (code, _, err) = call_in(
        &dir,
        &[
            "slurm",
            "--shards",
            "2",
            "--out",
            "o",
            "run",
            &sc,
            "--replications",
            "4",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let merge = std::fs::read_to_string(dir.join("o/merge.sbatch")).unwrap();
    assert!(merge.contains("tmp=$(mktemp "), "{merge}");
    assert!(!merge.contains(".tmp'"), "{merge}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs shard `k` of 2 of `parsim run ARGS` into `dir/shards`.
fn shard(dir: &Path, k: usize, args: &[&str]) {
    let shard = format!("{k}/2");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--shard", &shard, "--out", "shards"]);
    let (code, _, err) = call_in(dir, &all);
    assert_eq!(code, Some(0), "{err}");
}

/// Runs both shards of 2 of `parsim run ARGS` into `dir/shards`.
fn two_shards(dir: &Path, args: &[&str]) {
    for k in 0..2 {
        shard(dir, k, args);
    }
}

/// Rewrites the second of two shard files in `dir/shards` through `edit`.
fn edit_second_shard(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("shards/shard-00001-of-00002.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&path, v.to_string()).unwrap();
}

/// Runs `ping.goal` in `dir` with `flag` set to `value`, expecting it refused with each of
/// `wanted` in the error.
fn refused_flag(dir: &Path, flag: &str, value: &str, wanted: &[&str]) -> String {
    refused(dir, &["run", "ping.goal", flag, value], wanted)
}
