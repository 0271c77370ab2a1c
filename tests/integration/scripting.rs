//! parsim in shell scripts: a scenario from standard input (`-`) gives what its file gives, for
//! every command that reads scenarios; `analyze --set`; `validate --set`, `--replications` and
//! `--length`.

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::util::{call, root};

/// Runs parsim from the repository root with `input` on its standard input: (exit code,
/// stdout, stderr).
fn call_with_stdin(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("a pipe");
    // a command refused before it reads its input closes the pipe: not a failure here
    if let Err(e) = stdin.write_all(input.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn mm1() -> String {
    std::fs::read_to_string(root().join("scenarios/mm1.toml")).unwrap()
}

/// The output with the file's name and the run's identity (which names the input) left out.
fn without_names(text: &str, file: &str) -> String {
    text.replace(file, "FILE")
        .replace("<stdin>", "FILE")
        .lines()
        .filter(|l| !l.contains("run_id") && !l.contains("date"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_scenario_from_standard_input_gives_what_its_file_gives() {
    let file = "scenarios/mm1.toml";
    for args in [
        vec![
            "run",
            "--threads",
            "1",
            "--replications",
            "3",
            "--length",
            "5000",
        ],
        vec!["analyze", "--json"],
        vec!["metrics"],
        vec![
            "sweep",
            "--vary",
            "station.arrivals.interarrival.rate=0.5,0.6",
            "--set",
            "run.replications=2",
        ],
    ] {
        let mut from_file = args.clone();
        from_file.insert(1, file);
        let mut from_pipe = args.clone();
        from_pipe.insert(1, "-");
        let (code, expected, _) = call(&from_file);
        assert_eq!(code, Some(0), "{from_file:?}");
        let (code, got, err) = call_with_stdin(&from_pipe, &mm1());
        assert_eq!(code, Some(0), "{from_pipe:?}: {err}");
        assert!(!got.is_empty());
        assert_eq!(
            without_names(&got, file),
            without_names(&expected, file),
            "{args:?}"
        );
    }
}

#[test]
fn a_validation_case_from_standard_input_is_judged_as_its_file() {
    let file = "validation/mm1_rho50.toml";
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let args = ["validate", "INPUT", "--quick", "--threads", "1", "--csv"];
    let (code, expected, _) = call(&[&[args[0], file], &args[2..]].concat());
    assert_eq!(code, Some(0));
    let (code, got, err) = call_with_stdin(&[&[args[0], "-"], &args[2..]].concat(), &text);
    assert_eq!(code, Some(0), "{err}");
    let numbers = |csv: &str| -> Vec<String> {
        // metric, method, analytic, simulated, half-width and verdict of every row
        csv.lines()
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                [2, 3, 5, 8, 9, 12]
                    .iter()
                    .map(|&i| f[i])
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect()
    };
    assert_eq!(numbers(&got), numbers(&expected));
}

#[test]
fn a_bad_scenario_from_standard_input_is_named_stdin() {
    let (code, _, err) = call_with_stdin(&["run", "-"], "[run]\nlength = \"long\"\n");
    assert_eq!(code, Some(2));
    assert!(err.contains("<stdin>:2: run.length"), "{err}");
    // nothing at all: the checker's problems, not a hang or a panic
    let (code, _, err) = call_with_stdin(&["analyze", "-"], "");
    assert_eq!(code, Some(2));
    assert!(
        err.contains("<stdin>") && err.contains("[[class]]"),
        "{err}"
    );
}

#[test]
fn a_slurm_array_refuses_standard_input() {
    let out = std::env::temp_dir().join(format!("parsim-scripting-slurm-{}", std::process::id()));
    let (code, _, err) = call_with_stdin(
        &[
            "slurm",
            "--shards",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--",
            "run",
            "-",
        ],
        &mm1(),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("standard input"), "{err}");
    assert!(
        !out.exists(),
        "nothing is written when the command is refused"
    );
}

#[test]
fn analyze_takes_set() {
    // M/M/1 at lambda 0.8 with mean service 0.5: R = 1 / (2 - 0.8)
    let (code, out, err) = call(&[
        "analyze",
        "scenarios/mm1.toml",
        "--set",
        "station.server.service.mean=0.5",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let response = v[0]["analysis"]["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["metric"] == "class.jobs.response" && p["method"] == "M/M/1")
        .expect("M/M/1 applies")["value"]
        .as_f64()
        .unwrap();
    assert!((response - 1.0 / 1.2).abs() < 1e-12, "{response}");
    let (code, _, err) = call(&[
        "analyze",
        "scenarios/mm1.toml",
        "--set",
        "station.nowhere.servers=2",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--set station.nowhere.servers=2"), "{err}");
}

/// The CSV rows of `validate --csv` as maps from column to value.
fn csv_rows(csv: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            // the method labels hold no commas in this case
            head.iter()
                .zip(l.split(','))
                .map(|(h, v)| ((*h).to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

/// `validate --quick --csv` of the M/M/1 case on one thread, 4 replications of 3,000
/// observations, with `extra` arguments: (exit code, rows).
fn validate_mm1(extra: &[&str]) -> (Option<i32>, Vec<std::collections::HashMap<String, String>>) {
    let mut args = vec![
        "validate",
        "validation/mm1_rho50.toml",
        "--quick",
        "--replications",
        "4",
        "--length",
        "3000",
        "--threads",
        "1",
        "--csv",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = call(&args);
    assert!(code == Some(0) || code == Some(1), "{err}");
    (code, csv_rows(&out))
}

#[test]
fn validate_takes_set_replications_and_length() {
    let (_, rows) = validate_mm1(&["--set", "station.q.service.mean=0.6"]);
    let response = rows
        .iter()
        .find(|r| r["metric"] == "class.jobs.response" && r["method"] == "M/M/1")
        .expect("M/M/1 is compared");
    // lambda 0.5, mean service 0.6: R = 0.6 / (1 - 0.3)
    let analytic: f64 = response["analytic"].parse().unwrap();
    assert!((analytic - 0.6 / 0.7).abs() < 1e-12, "{analytic}");
    for r in &rows {
        assert_eq!(r["replications"], "4");
        assert_eq!(r["length"], "3000");
    }
    // the assignments key the streams: the case set to its own value draws other numbers
    // than the case without assignments
    let simulated = |rows: &[std::collections::HashMap<String, String>]| {
        rows.iter()
            .map(|r| r["simulated"].clone())
            .collect::<Vec<_>>()
    };
    let (_, same_value) = validate_mm1(&["--set", "station.q.service.mean=1.0"]);
    let (_, unset) = validate_mm1(&[]);
    assert_ne!(simulated(&same_value), simulated(&unset));
}

#[test]
fn validate_refuses_length_for_programs_only() {
    let (code, _, err) = call(&[
        "validate",
        "validation/prog_allreduce_bus_p16.toml",
        "--quick",
        "--length",
        "100",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("drop --length"), "{err}");
    let (code, _, err) = call(&[
        "validate",
        "validation/mm1_rho50.toml",
        "--replications",
        "1",
    ]);
    assert_eq!(code, Some(2), "one replication gives no interval: {err}");
}
