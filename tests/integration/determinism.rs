use super::util::parsim;

#[test]
fn same_seed_gives_identical_json_on_1_and_4_threads() {
    for file in [
        "scenarios/mm4.toml",
        "scenarios/two_class_closed.toml",
        "scenarios/fork_join_8.toml",
    ] {
        let run = |threads: &str| {
            let out = parsim(&[
                "run",
                file,
                "--json",
                "--seed",
                "42",
                "--replications",
                "6",
                "--length",
                "5000",
                "--threads",
                threads,
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        };
        let one = run("1");
        assert_eq!(one, run("4"), "{file}");
        let other_seed = parsim(&[
            "run",
            file,
            "--json",
            "--seed",
            "43",
            "--replications",
            "6",
            "--length",
            "5000",
        ])
        .stdout;
        assert_ne!(one, other_seed, "{file}: the seed must matter");
    }
}

#[test]
fn precision_rule_adds_replications_deterministically() {
    let args = [
        "run",
        "scenarios/mm1.toml",
        "--json",
        "--length",
        "2000",
        "--precision",
        "0.02",
        "--max-replications",
        "80",
    ];
    let one = parsim(&[&args[..], &["--threads", "1"]].concat());
    let two = parsim(&[&args[..], &["--threads", "2"]].concat());
    assert_eq!(one.stdout, two.stdout);
    let json: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let reps = json[0]["replications"].as_u64().unwrap();
    assert!(
        reps > 10,
        "a 2% target on short runs needs more than the first 10 replications, got {reps}"
    );
    let met = json[0]["precision"]["met"].as_bool().unwrap();
    let rel = json[0]["metrics"][0]["half_width_95"].as_f64().unwrap()
        / json[0]["metrics"][0]["mean"].as_f64().unwrap();
    assert_eq!(
        met,
        rel <= 0.02,
        "met flag agrees with the interval ({rel})"
    );
    assert_eq!(one.status.code(), Some(if met { 0 } else { 1 }));
}

#[test]
fn precision_rule_waits_for_every_named_metric() {
    // Utilisation converges much faster than the mean response; requiring both must take at
    // least as many replications as the response alone, and both must meet the target.
    let run = |metrics: &[&str]| {
        let mut args = vec![
            "run",
            "scenarios/mm1.toml",
            "--json",
            "--length",
            "10000",
            "--precision",
            "0.02",
            "--max-replications",
            "200",
        ];
        for m in metrics {
            args.extend(["--metric", m]);
        }
        let out = parsim(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let util = run(&["station.server.utilisation"]);
    let both = run(&["station.server.utilisation", "class.jobs.response"]);
    let reps = |j: &serde_json::Value| j[0]["replications"].as_u64().unwrap();
    assert!(
        reps(&both) > reps(&util),
        "{} vs {}",
        reps(&both),
        reps(&util)
    );
    assert_eq!(both[0]["precision"]["met"], true);
    assert_eq!(both[0]["precision"]["metrics"].as_array().unwrap().len(), 2);
    for m in both[0]["metrics"].as_array().unwrap() {
        let name = m["metric"].as_str().unwrap();
        if name == "station.server.utilisation" || name == "class.jobs.response" {
            let rel = m["half_width_95"].as_f64().unwrap() / m["mean"].as_f64().unwrap();
            assert!(rel <= 0.02, "{name}: {rel}");
        }
    }
}

/// parsim re-executes itself with glibc's huge-page tunable (`src/cli/huge_pages.rs`) unless
/// `PARSIM_HUGE_PAGES` is set: the re-executed process gets every argument as given (a path
/// with a space), the exit code, and gives the same results as a run with the pages as they
/// were.
#[test]
fn results_and_arguments_survive_the_huge_page_reexecution() {
    use std::process::Command;
    let dir = super::util::shard_dir("huge_pages", "args");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ring on a torus.toml");
    std::fs::copy(
        super::util::root().join("scenarios/program_ring_torus.toml"),
        &file,
    )
    .unwrap();
    let run = |switch: Option<&str>, path: &std::path::Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_parsim"));
        command.args(["run", "--json", "--threads", "1", "--replications", "3"]);
        command.arg(path).env_remove("PARSIM_HUGE_PAGES");
        if let Some(s) = switch {
            command.env("PARSIM_HUGE_PAGES", s);
        }
        command.output().expect("the binary runs")
    };
    let (default, off) = (run(None, &file), run(Some("off"), &file));
    assert!(
        default.status.success(),
        "{}",
        String::from_utf8_lossy(&default.stderr)
    );
    assert_eq!(default.stdout, off.stdout);
    assert!(String::from_utf8_lossy(&default.stdout).contains("ring on a torus.toml"));
    // bad input keeps its exit code and message through the re-execution
    let missing = dir.join("no such file.toml");
    let bad = run(None, &missing);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no such file.toml"));
    std::fs::remove_dir_all(&dir).unwrap();
}
