use super::util::{open_single, parsim, temp_scenario};

const CLOSED: &str = r#"
[[class]]
name = "jobs"
population = 4
reference = "think"

[[station]]
name = "think"
kind = "delay"
service = { dist = "exp", mean = 1.0 }

[[station]]
name = "cpu"
kind = "fcfs"
service = { dist = "exp", mean = 0.5 }

[[route]]
class = "jobs"
from = "think"
to = "cpu"

[[route]]
class = "jobs"
from = "cpu"
to = "think"
"#;

/// Runs `parsim run` on `text` and returns (exit code, stderr).
fn run_bad(name: &str, text: &str) -> (Option<i32>, String) {
    let path = temp_scenario(name, text);
    let out = parsim(&[
        "run",
        path.to_str().unwrap(),
        "--replications",
        "2",
        "--length",
        "100",
    ]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_input_exits_2_naming_file_line_and_field() {
    let fcfs = "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 1.0 }";
    let cases: Vec<(&str, String, &[&str])> = vec![
        ("unknown_field", open_single(0.5, &format!("{fcfs}\nspeed = 3")), &["unknown field `speed`", ":15"]),
        ("negative_mean", open_single(0.5, "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = -1.0 }"), &["station[1].service.mean", "> 0"]),
        (
            "routing_sum",
            open_single(0.5, fcfs).replace(
                "from = \"q\"\nto = \"exit\"",
                "from = \"q\"\nbranches = [{ to = \"q\", p = 0.5 }, { to = \"exit\", p = 0.4 }]",
            ),
            &["route[1].branches", "sum to 1"],
        ),
        ("unknown_station", open_single(0.5, fcfs).replace("to = \"q\"", "to = \"qq\""), &["route[0].to", "unknown station \"qq\""]),
        (
            "join_without_fork",
            open_single(0.5, fcfs).replace("[[route]]\nclass = \"jobs\"\nfrom = \"q\"", "[[station]]\nname = \"j\"\nkind = \"join\"\nfork = \"q\"\n\n[[route]]\nclass = \"jobs\"\nfrom = \"q\""),
            &["fork", "is not a fork"],
        ),
        ("population_zero", CLOSED.replace("population = 4", "population = 0"), &["class[0].population", "from 1"]),
        ("unstable", open_single(1.25, fcfs), &["station[1]", "unstable", "1.2500 >= 1"]),
        ("exit_closed", CLOSED.replace("from = \"cpu\"\nto = \"think\"", "from = \"cpu\"\nto = \"exit\""), &["route[1].to", "closed"]),
        ("duplicate_name", CLOSED.replace("name = \"cpu\"", "name = \"think\""), &["station[1].name", "is already named \"think\""]),
        ("no_route_on", CLOSED.replace("from = \"cpu\"\nto = \"think\"", "from = \"think\"\nto = \"cpu\""), &["no [[route]] says where it goes next"]),
        ("h2_low_scv", open_single(0.5, "kind = \"fcfs\"\nservice = { dist = \"h2\", mean = 1.0, scv = 0.5 }"), &["station[1].service.scv", ">= 1"]),
        ("bad_dist_kind", open_single(0.5, "kind = \"fcfs\"\nservice = { dist = \"normal\", mean = 1.0 }"), &["unknown variant `normal`"]),
        ("servers_on_delay", open_single(0.5, "kind = \"delay\"\nservers = 2\nservice = { dist = \"exp\", mean = 1.0 }"), &["station[1].servers", "does not apply"]),
        ("no_service", open_single(0.5, "kind = \"fcfs\""), &["station[1].service", "no service time"]),
        ("syntax", "[[class]\nname = 1".to_owned(), &[":1"]),
        ("unknown_run_metric", format!("[run]\nmetric = \"class.job.response\"\n{}", open_single(0.5, fcfs)), &["run.metric", "unknown metric \"class.job.response\""]),
        ("unknown_validate_metric", format!("[validate]\nmetrics = [\"class.jobs.response\", \"station.q.utilization\"]\n{}", open_single(0.5, fcfs)), &["validate.metrics[1]", "unknown metric"]),
        ("bad_tolerance", format!("[validate]\ntolerance = -0.1\n{}", open_single(0.5, fcfs)), &["validate.tolerance", "positive"]),
    ];
    for (name, text, needles) in &cases {
        let (code, stderr) = run_bad(name, text);
        assert_eq!(code, Some(2), "{name}: exit code; stderr: {stderr}");
        assert!(
            stderr.contains(&format!("{name}.toml")),
            "{name}: names the file: {stderr}"
        );
        for needle in *needles {
            assert!(
                stderr.contains(needle),
                "{name}: expected {needle:?} in: {stderr}"
            );
        }
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

#[test]
fn all_problems_of_a_file_are_reported_at_once() {
    let text = open_single(
        0.5,
        "kind = \"fcfs\"\nservers = 0\nservice = { dist = \"exp\", mean = -2.0 }",
    )
    .replace("to = \"exit\"", "to = \"nowhere\"");
    let (code, stderr) = run_bad("many", &text);
    assert_eq!(code, Some(2));
    for needle in [
        "station[1].servers",
        "station[1].service.mean",
        "route[1].to",
        "3 problems",
    ] {
        assert!(stderr.contains(needle), "expected {needle:?} in: {stderr}");
    }
}

#[test]
fn missing_file_and_bad_flags_exit_2() {
    assert_eq!(parsim(&["run", "no/such/file.toml"]).status.code(), Some(2));
    assert_eq!(
        parsim(&["run", "scenarios/mm1.toml", "--replications", "1"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        parsim(&["run", "scenarios/mm1.toml", "--precision", "2"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        parsim(&[
            "run",
            "scenarios/mm1.toml",
            "--metric",
            "nope",
            "--precision",
            "0.5",
            "--length",
            "100"
        ])
        .status
        .code(),
        Some(2)
    );
}

#[test]
fn a_misspelt_precision_metric_gets_the_closest_name() {
    let out = parsim(&[
        "run",
        "scenarios/mm1.toml",
        "--metric",
        "station.servr.utilisation",
        "--precision",
        "0.1",
        "--length",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("did you mean \"station.server.utilisation\"?"),
        "{err}"
    );
}

#[test]
fn a_precision_target_not_met_is_said_and_exits_1_unless_allowed() {
    let args = [
        "run",
        "scenarios/mm1.toml",
        "--precision",
        "0.0001",
        "--replications",
        "2",
        "--max-replications",
        "4",
        "--length",
        "500",
    ];
    let out = parsim(&args);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("NOT met within 4 replications") && err.contains("--allow-imprecise"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("NOT met"));
    let allowed = parsim(&[&args[..], &["--allow-imprecise"]].concat());
    assert_eq!(allowed.status.code(), Some(0));
    assert_eq!(allowed.stdout, out.stdout, "the same report either way");
    assert!(String::from_utf8_lossy(&allowed.stderr).contains("NOT met"));
}

#[test]
fn help_explains_the_commands() {
    let out = parsim(&["--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("run"));
    let out = parsim(&["run", "--help"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("--precision"));
}

#[test]
fn csv_output_has_a_header_and_one_row_per_metric() {
    let out = parsim(&[
        "run",
        "scenarios/mm1.toml",
        "--csv",
        "--replications",
        "2",
        "--length",
        "500",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(parsim::report::CSV_HEADER.join(",").as_str())
    );
    assert!(lines.any(|l| l.contains(",class.jobs.response,")));
}

/// A run of the M/M/1 scenario short enough for tests of what the command prints.
const SHORT_RUN: [&str; 6] = [
    "run",
    "scenarios/mm1.toml",
    "--replications",
    "2",
    "--length",
    "100",
];

#[test]
fn a_closed_pipe_ends_quietly() {
    // `parsim ... | head` closes the pipe early: the write fails with EPIPE, which must end the
    // command with exit 0 and no panic message, on every command that prints.
    // JSON written by serde, whose error hides the pipe's
    let run_json = [&SHORT_RUN[..], &["--json"]].concat();
    for args in [
        &["metrics", "scenarios/two_class_closed.toml"][..],
        &["analyze", "scenarios/two_class_closed.toml"],
        &SHORT_RUN,
        &run_json,
        &["validate", "validation/mm1_rho50.toml", "--quick", "--json"],
        &[
            "sweep",
            "scenarios/mm1.toml",
            "--vary",
            "station.arrivals.interarrival.rate=0.5",
            "--json",
            "--set",
            "run.length=2000",
        ],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_parsim"))
            .args(args)
            .current_dir(super::util::root())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_full_standard_output_is_named_by_every_command_that_prints() {
    // issue 41: help, the version and the fits printed with clap or println!, which exited 0
    // or panicked with "failed printing to stdout" when standard output was full
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    for args in [
        &["--help"][..],
        &["--version"],
        &["run", "--help"],
        &["fit-w", "scenarios/spmd_fitw_mesh.toml", "--p", "4,8"],
        &SHORT_RUN,
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_parsim"))
            .args(args)
            .current_dir(super::util::root())
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            "parsim: cannot write standard output: No space left on device (os error 28)",
            "{args:?}"
        );
    }
}
