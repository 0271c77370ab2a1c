//! What `parsim run` and `parsim validate` write (issue 12, "Result files"): the run's identity in every output, a
//! run id that does not depend on the threads, and `--per-replication` values that give the
//! reported means.

use std::collections::BTreeMap;

use super::util::{parsim, root};

/// `parsim run scenarios/mm1.toml` on `threads` threads with `extra` options, as JSON.
fn run_json(threads: &str, extra: &[&str]) -> serde_json::Value {
    let file = root().join("scenarios/mm1.toml");
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--json",
        "--replications",
        "4",
        "--length",
        "2000",
        "--threads",
        threads,
    ];
    args.extend_from_slice(extra);
    let out = parsim(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn json_carries_the_runs_identity_and_the_run_id_ignores_threads() {
    let one = run_json("1", &[]);
    let two = run_json("2", &[]);
    let r = &one[0];
    for field in [
        "parsim_version",
        "file",
        "scenario_hash",
        "seed",
        "replications",
        "length",
        "warmup",
        "run_id",
        "date",
    ] {
        assert!(!r[field].is_null(), "{field} missing from {r}");
    }
    assert_eq!(r["parsim_version"], env!("CARGO_PKG_VERSION"));
    let text = std::fs::read_to_string(root().join("scenarios/mm1.toml")).unwrap();
    assert_eq!(r["scenario_hash"], parsim::hash::text_hash(&text));
    assert!(r["metrics"][0]["half_width_95"].is_f64(), "{r}");
    assert_eq!(r["run_id"], two[0]["run_id"]);
    let other_seed = run_json("1", &["--seed", "2"]);
    assert_ne!(r["run_id"], other_seed[0]["run_id"]);
}

#[test]
fn per_replication_values_round_trip_and_give_the_reported_means() {
    let dir = std::env::temp_dir().join(format!("parsim-per-rep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("values.csv");
    let report = run_json("2", &["--per-replication", file.to_str().unwrap()]);
    let mut reader = csv::Reader::from_path(&file).unwrap();
    assert_eq!(
        reader.headers().unwrap(),
        vec!["run_id", "replication", "metric", "value"]
    );
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for record in reader.records() {
        let record = record.unwrap();
        assert_eq!(record[0], report[0]["run_id"].as_str().unwrap().to_owned());
        values
            .entry(record[2].to_owned())
            .or_default()
            .push(record[3].parse().unwrap());
    }
    let metrics = report[0]["metrics"].as_array().unwrap();
    assert_eq!(values.len(), metrics.len());
    for m in metrics {
        let v = &values[m["metric"].as_str().unwrap()];
        assert_eq!(v.len(), 4);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let reported = m["mean"].as_f64().unwrap();
        assert!(
            (mean - reported).abs() <= 1e-12 * reported.abs(),
            "{m}: {mean}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validate_rows_carry_their_experiments_identity_and_its_replications_give_the_means() {
    let dir = std::env::temp_dir().join(format!("parsim-validate-rep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let values_file = dir.join("values.csv");
    let case = root().join("validation/mm1_rho50.toml");
    let out = parsim(&[
        "validate",
        case.to_str().unwrap(),
        "--quick",
        "--json",
        "--threads",
        "2",
        "--per-replication",
        values_file.to_str().unwrap(),
    ]);
    assert!(
        out.status.code() == Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    let text = std::fs::read_to_string(&case).unwrap();
    for r in rows {
        assert_eq!(r["parsim_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(r["scenario_hash"], parsim::hash::text_hash(&text));
        assert_eq!(r["file"], case.to_str().unwrap());
        for field in ["seed", "length", "warmup"] {
            assert!(r[field].is_u64(), "{field} missing from {r}");
        }
        assert!(r["date"].is_string() && r["run_id"].is_string(), "{r}");
    }
    let mut values: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut reader = csv::Reader::from_path(&values_file).unwrap();
    for record in reader.records() {
        let record = record.unwrap();
        values
            .entry((record[0].to_owned(), record[2].to_owned()))
            .or_default()
            .push(record[3].parse().unwrap());
    }
    for r in rows {
        let key = (
            r["run_id"].as_str().unwrap().to_owned(),
            r["metric"].as_str().unwrap().to_owned(),
        );
        let v = &values[&key];
        assert_eq!(v.len() as u64, r["replications"].as_u64().unwrap());
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let simulated = r["simulated"].as_f64().unwrap();
        assert!(
            (mean - simulated).abs() <= 1e-12 * simulated.abs(),
            "{r}: {mean}"
        );
    }
    // a shard's experiments stay in its file: --per-replication is refused, not ignored
    let refused = parsim(&[
        "validate",
        case.to_str().unwrap(),
        "--quick",
        "--shard",
        "0/2",
        "--out",
        dir.to_str().unwrap(),
        "--per-replication",
        values_file.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}
