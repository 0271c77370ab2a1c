use super::util::{parsim, root};

#[test]
fn every_bundled_scenario_parses_and_runs() {
    let mut files: Vec<_> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "at least the seven required examples");
    for f in files {
        // a rank program has no run length: `run` refuses --length for one
        let program = parsim::scenario::load(&f).is_ok_and(|sc| sc.runs_to_completion());
        let f = f.to_string_lossy().into_owned();
        let mut args = vec!["run", &f, "--json", "--replications", "2"];
        if !program {
            args.extend(["--length", "2000"]);
        }
        let out = parsim(&args);
        assert!(
            out.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
        let metrics = json[0]["metrics"].as_array().expect("metrics");
        assert!(!metrics.is_empty(), "{f}");
        let first = metrics[0]["mean"].as_f64().expect("a number");
        assert!(
            first.is_finite() && first > 0.0,
            "{f}: first metric {first}"
        );
    }
}
