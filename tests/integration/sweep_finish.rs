//! Sweeps that finish (issue 21): an unstable point is marked and the sweep goes on, an
//! analytic-only sweep answers a grid without simulating, and NaN and infinities are written the
//! same way by a single run and by a merge of its shards.

use std::time::Instant;

use super::util::{call, open_single, shard_dir, temp_scenario};

/// The M/M/1 file of `test` (arrival rate 0.5, mean service 1).
fn mm1(test: &str) -> String {
    let path = temp_scenario(
        &format!("finish_{test}"),
        &open_single(
            0.5,
            "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 1.0 }",
        ),
    );
    path.to_str().unwrap().to_owned()
}

/// A CSV text as (header, records).
fn table(csv: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let records = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, records)
}

#[test]
fn an_unstable_point_is_marked_and_the_sweep_goes_on() {
    let file = mm1("unstable");
    let (code, out, err) = call(&[
        "sweep",
        &file,
        "--vary",
        "station.arrivals.interarrival.rate=0.5,1.2,0.8",
        "--set",
        "run.length=2000",
        "--set",
        "run.replications=3",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("1 of 3 points unstable"), "{err}");
    let (header, records) = table(&out);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let unstable: Vec<&Vec<String>> = records.iter().filter(|r| r[0] == "1.2").collect();
    assert_eq!(
        unstable.len(),
        1,
        "one record for the unstable point: {out}"
    );
    assert_eq!(unstable[0][col("verdict")], "unstable");
    assert!(
        unstable[0][col("method")].contains("utilisation 1.2000 >= 1"),
        "{out}"
    );
    assert_eq!(unstable[0][col("simulated")], "");
    // the points on either side were run
    for rate in ["0.5", "0.8"] {
        assert!(
            records
                .iter()
                .any(|r| r[0] == rate && r[col("replications")] == "3"),
            "{rate}: {out}"
        );
    }
    // JSON says why, and a merge of shards prints the same
    let (_, json, _) = call(&[
        "sweep",
        &file,
        "--vary",
        "station.arrivals.interarrival.rate=0.5,1.2,0.8",
        "--set",
        "run.length=2000",
        "--set",
        "run.replications=3",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        v["points"][1]["unstable"]
            .as_str()
            .unwrap()
            .contains(">= 1")
    );
    assert!(v["points"][0].get("unstable").is_none());
    let dir = shard_dir("unstable", "shards");
    for k in 0..2 {
        let shard = format!("{k}/2");
        let (code, _, err) = call(&[
            "sweep",
            &file,
            "--vary",
            "station.arrivals.interarrival.rate=0.5,1.2,0.8",
            "--set",
            "run.length=2000",
            "--set",
            "run.replications=3",
            "--shard",
            &shard,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{err}");
    }
    let (code, merged, err) = call(&["merge", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(merged, out);
}

#[test]
fn an_analytic_only_sweep_answers_a_grid_in_milliseconds_a_point() {
    let started = Instant::now();
    let (code, out, err) = call(&[
        "sweep",
        "scenarios/closed_delay_two_queues.toml",
        "--vary",
        "class.jobs.population=1..50",
        "--vary",
        "station.cpu.service.mean=0.1..0.5:0.1",
        "--analytic-only",
    ]);
    let took = started.elapsed().as_secs_f64();
    assert_eq!(code, Some(0), "{err}");
    let (header, records) = table(&out);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let points: std::collections::BTreeSet<(String, String)> = records
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    assert_eq!(points.len(), 250);
    // every row a prediction or a bound, nothing simulated
    for r in &records {
        assert_eq!(r[col("replications")], "0");
        assert_eq!(r[col("simulated")], "");
        assert_eq!(r[col("verdict")], "");
        assert!(!r[col("analytic")].is_empty() || !r[col("lower_bound")].is_empty());
    }
    let mva = records
        .iter()
        .find(|r| {
            r[0] == "4"
                && r[1] == "0.2"
                && r[col("metric")] == "class.jobs.cycle"
                && r[col("method")] == "exact MVA"
        })
        .expect("exact MVA at N = 4");
    assert!(!mva[col("analytic")].is_empty());
    // 250 points in well under a second of work each (generous for a loaded machine)
    assert!(took < 25.0, "{took} s for 250 points");
}

#[test]
fn nan_and_infinities_are_written_the_same_by_a_single_run_and_a_merge() {
    // at population 1 nobody waits: the simulated wait is 0, so the exact MVA's relative error
    // is 0/0 and Schweitzer-Bard's (a rounding residue above 0) is infinite
    let args = [
        "sweep",
        "scenarios/closed_delay_two_queues.toml",
        "--vary",
        "class.jobs.population=1,2",
        "--set",
        "run.length=2000",
        "--set",
        "run.replications=3",
    ];
    let (code, single, err) = call(&args);
    assert_eq!(code, Some(0), "{err}");
    let (header, records) = table(&single);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let wait = |method: &str| {
        records
            .iter()
            .find(|r| {
                r[0] == "1" && r[col("metric")] == "station.cpu.wait" && r[col("method")] == method
            })
            .map(|r| r[col("relative_error")].clone())
            .expect("a wait row at population 1")
    };
    assert_eq!(wait("exact MVA"), "", "0/0 is no value");
    let dir = shard_dir("nan", "shards");
    for k in 0..2 {
        let shard = format!("{k}/2");
        let mut sharded = args.to_vec();
        sharded.extend(["--shard", &shard, "--out", dir.to_str().unwrap()]);
        let (code, _, err) = call(&sharded);
        assert_eq!(code, Some(0), "{err}");
    }
    let (code, merged, err) = call(&["merge", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(merged, single, "the merge prints the single run's bytes");
    if wait("Schweitzer-Bard approximate MVA") == "inf" {
        assert!(merged.contains(",inf,"));
    }
    let mut json = args.to_vec();
    json.push("--json");
    let (_, single_json, _) = call(&json);
    let (_, merged_json, _) = call(&["merge", dir.to_str().unwrap(), "--json"]);
    assert_eq!(merged_json, single_json);
}

#[test]
fn validation_shards_share_the_estimated_work_evenly() {
    use parsim::validate::shard::{estimated_cost, owners};
    use parsim::validate::{Effort, ValidateOptions};
    let dir = super::util::root().join("validation");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let costs: Vec<f64> = files
        .iter()
        .map(|f| {
            estimated_cost(
                &parsim::scenario::load(f).unwrap(),
                &ValidateOptions::new(Effort::Quick),
            )
        })
        .collect();
    for (f, c) in files.iter().zip(&costs) {
        println!("{:>14.0} {}", c, f.display());
    }
    let spread = |owner: &dyn Fn(usize) -> usize, n: usize| {
        let mut load = vec![0.0; n];
        for (i, c) in costs.iter().enumerate() {
            load[owner(i)] += c;
        }
        let max = load.iter().copied().fold(0.0, f64::max);
        let min = load.iter().copied().fold(f64::INFINITY, f64::min);
        max / min
    };
    for n in [2, 4, 8] {
        let by_index = spread(&|i| i % n, n);
        let assigned = owners(&costs, n);
        let by_cost = spread(&|i| assigned[i], n);
        println!("{n} shards: most/least loaded {by_index:.2} by index, {by_cost:.2} by cost");
        assert!(by_cost <= by_index, "{n} shards: {by_cost} > {by_index}");
        // the costliest case alone may exceed a fair share; otherwise within 25%
        let largest = costs.iter().copied().fold(0.0, f64::max);
        let fair = costs.iter().sum::<f64>() / n as f64;
        if largest < fair {
            assert!(by_cost < 1.25, "{n} shards: {by_cost}");
        }
    }
}
