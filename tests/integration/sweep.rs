use std::collections::BTreeMap;

use super::util::{
    call, duplicate_shard, lose_shard, merge_refusal, open_single, shard_dir, temp_scenario,
};

/// Short runs: every point is a small M/M/1 experiment.
const SHORT: [&str; 4] = ["--set", "run.length=3000", "--set", "run.replications=4"];

/// An M/M/1 scenario file (one per test, so that no test reads a file another is writing).
fn mm1(test: &str) -> String {
    let path = temp_scenario(
        &format!("sweep_{test}"),
        &open_single(
            0.5,
            "kind = \"fcfs\"\nservice = { dist = \"exp\", mean = 1.0 }",
        ),
    );
    path.to_str().unwrap().to_owned()
}

/// `parsim sweep` on the M/M/1 file with the short settings and `extra` arguments.
fn sweep(test: &str, extra: &[&str]) -> String {
    let file = mm1(test);
    let mut args = vec!["sweep", file.as_str()];
    args.extend(SHORT);
    args.extend(extra);
    let (code, out, err) = call(&args);
    assert_eq!(code, Some(0), "{err}");
    out
}

/// A CSV text as records of named fields, read by the `csv` crate (so a quoted field with a
/// comma, as a method name may have, stays one field).
fn records(csv: &str) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().expect("a header").clone();
    reader
        .records()
        .map(|r| {
            let r = r.expect("a CSV record");
            header
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

/// The distinct values of a column, in order of appearance.
fn distinct(rows: &[BTreeMap<String, String>], column: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in rows {
        if !seen.contains(&r[column]) {
            seen.push(r[column].clone());
        }
    }
    seen
}

const RATE: &str = "station.arrivals.interarrival.rate";

#[test]
fn each_point_equals_run_with_set() {
    const T: &str = "each_point_equals_run_with_set";
    let rows = records(&sweep(T, &["--vary", &format!("{RATE}=0.3,0.6")]));
    assert_eq!(distinct(&rows, RATE), ["0.3", "0.6"]);
    let response = |r: &BTreeMap<String, String>| {
        r["metric"] == "class.jobs.response" && r["method"] == "M/M/1"
    };
    assert!(rows.iter().any(|r| response(r) && !r["verdict"].is_empty()));
    for rate in ["0.3", "0.6"] {
        let file = mm1(T);
        let set = format!("{RATE}={rate}");
        let mut args = vec!["run", file.as_str(), "--csv", "--set", set.as_str()];
        args.extend(SHORT);
        let (code, out, err) = call(&args);
        assert_eq!(code, Some(0), "{err}");
        let alone = records(&out);
        let in_sweep: Vec<_> = rows.iter().filter(|r| r[RATE] == rate).collect();
        for metric in &alone {
            let row = in_sweep
                .iter()
                .find(|r| r["metric"] == metric["metric"])
                .unwrap_or_else(|| panic!("{} missing from the sweep", metric["metric"]));
            let num = |s: &str| s.parse::<f64>().unwrap();
            assert_eq!(num(&row["simulated"]), num(&metric["mean"]), "{metric:?}");
            assert_eq!(num(&row["half_width_95"]), num(&metric["half_width_95"]));
            assert_eq!(row["replications"], metric["replications"]);
        }
    }
}

#[test]
fn a_point_does_not_depend_on_its_neighbours_order_or_threads() {
    const T: &str = "a_point_does_not_depend_on_its_neighbours_order_or_threads";
    let point = |csv: &str| -> Vec<BTreeMap<String, String>> {
        records(csv)
            .into_iter()
            .filter(|r| r[RATE] == "0.6")
            .collect()
    };
    let forward = sweep(T, &["--vary", &format!("{RATE}=0.3,0.6"), "--threads", "1"]);
    let backward = sweep(
        T,
        &["--vary", &format!("{RATE}=0.6,0.7,0.3"), "--threads", "2"],
    );
    let alone = sweep(T, &["--vary", &format!("{RATE}=0.6")]);
    assert_eq!(point(&forward), point(&backward));
    assert_eq!(point(&forward), point(&alone));
    assert_eq!(
        forward,
        sweep(T, &["--vary", &format!("{RATE}=0.3,0.6"), "--threads", "2"]),
        "same bytes on 1 and 2 threads"
    );
    let other = records(&forward);
    let means = |rate: &str| -> Vec<String> {
        other
            .iter()
            .filter(|r| r[RATE] == rate && r["metric"] == "class.jobs.p50")
            .map(|r| r["simulated"].clone())
            .collect()
    };
    assert_ne!(
        means("0.3"),
        means("0.6"),
        "points draw from their own streams"
    );
}

#[test]
fn several_vary_make_a_grid_and_zip_pairs_them() {
    const T: &str = "several_vary_make_a_grid_and_zip_pairs_them";
    let axes = [
        "--vary",
        "run.seed=1,2",
        "--vary",
        "station.q.service.mean=0.5..1.5:0.5",
    ];
    let grid = records(&sweep(T, &axes));
    let points = |rows: &[BTreeMap<String, String>]| -> Vec<(String, String)> {
        let mut seen = Vec::new();
        for r in rows {
            let p = (r["run.seed"].clone(), r["station.q.service.mean"].clone());
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        seen
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(
        points(&grid),
        pairs(&[
            ("1", "0.5"),
            ("1", "1"),
            ("1", "1.5"),
            ("2", "0.5"),
            ("2", "1"),
            ("2", "1.5")
        ])
    );
    let mut zipped = axes.to_vec();
    zipped[1] = "run.seed=1..3";
    zipped.push("--zip");
    let zip = records(&sweep(T, &zipped));
    assert_eq!(
        points(&zip),
        pairs(&[("1", "0.5"), ("2", "1"), ("3", "1.5")])
    );
    let file = mm1(T);
    let (code, _, err) = call(&[
        "sweep",
        &file,
        "--vary",
        "run.length=1,2",
        "--vary",
        "run.seed=1..3",
        "--zip",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--zip") && err.contains("run.seed"), "{err}");
}

#[test]
fn bad_keys_and_values_name_the_key_and_the_point() {
    const T: &str = "bad_keys_and_values_name_the_key_and_the_point";
    let file = mm1(T);
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["--vary", "class.job.population=1,2"],
            &[
                "point 0",
                "class.job.population",
                "no [[class]] named `job`",
                "`jobs`",
            ],
        ),
        (
            &["--vary", "station.q.service.mean=1,-1"],
            &["1 of 2 points", "point 1", "station.q.service.mean=-1"],
        ),
        (
            &["--vary", "run.lenght=5"],
            &["point 0", "unknown field `lenght`"],
        ),
        (&["--vary", "run.length=1..5:0"], &["run.length", "step"]),
        (&["--vary", "run.length"], &["KEY=VALUES"]),
        (
            &[
                "--vary",
                "run.seed=1..10000",
                "--vary",
                "run.length=1..1000",
            ],
            &["more than 1000000 points"],
        ),
    ];
    for (args, wanted) in cases {
        let mut all = vec!["sweep", file.as_str()];
        all.extend(args);
        let (code, _, err) = call(&all);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        for w in wanted {
            assert!(err.contains(w), "{args:?}: {w:?} not in {err}");
        }
    }
}

#[test]
fn json_holds_the_same_rows() {
    const T: &str = "json_holds_the_same_rows";
    let csv = records(&sweep(T, &["--vary", &format!("{RATE}=0.4")]));
    let json: serde_json::Value =
        serde_json::from_str(&sweep(T, &["--vary", &format!("{RATE}=0.4"), "--json"])).unwrap();
    let rows = json["points"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), csv.len());
    for (j, c) in rows.iter().zip(&csv) {
        assert_eq!(j["metric"].as_str(), Some(c["metric"].as_str()));
        assert_eq!(
            j["simulated"].as_f64().unwrap(),
            c["simulated"].parse::<f64>().unwrap()
        );
    }
}

#[test]
fn plots_draw_curves_for_one_key_and_heat_maps_for_two() {
    const T: &str = "plots_draw_curves_for_one_key_and_heat_maps_for_two";
    let dir = std::env::temp_dir().join(format!("parsim-it-{}-{T}", std::process::id()));
    let one = dir.join("one");
    sweep(
        T,
        &[
            "--vary",
            &format!("{RATE}=0.3,0.6"),
            "--plot",
            one.to_str().unwrap(),
        ],
    );
    let svg = std::fs::read_to_string(one.join("class.jobs.response.svg")).unwrap();
    for label in [
        "class.jobs.response",
        RATE,
        "M/M/1",
        "simulated mean",
        "<polygon",
    ] {
        assert!(svg.contains(label), "{label} not drawn");
    }
    // the percentiles have a prediction too (the M/M/1 sojourn law), so they are drawn with it
    let p50 = std::fs::read_to_string(one.join("class.jobs.p50.svg")).unwrap();
    assert!(
        p50.contains("M/M/1 FCFS sojourn"),
        "percentile drawn with its method"
    );
    let two = dir.join("two");
    sweep(
        T,
        &[
            "--vary",
            &format!("{RATE}=0.3,0.6"),
            "--vary",
            "station.q.service.mean=0.5,1",
            "--plot",
            two.to_str().unwrap(),
        ],
    );
    let heat = std::fs::read_to_string(two.join(format!(
        "class.jobs.response.{}.error.svg",
        parsim::plot::method_key("M/M/1")
    )))
    .unwrap();
    // the background, one cell per point, and the colour scale's 100 steps
    assert_eq!(
        heat.matches("<rect").count(),
        1 + 4 + 100,
        "one cell per point"
    );
    assert!(two.join("class.jobs.response.simulated.svg").exists());
    let lines = dir.join("lines");
    sweep(
        T,
        &[
            "--vary",
            &format!("{RATE}=0.3,0.6"),
            "--vary",
            "station.q.service.mean=0.5,1",
            "--plot",
            lines.to_str().unwrap(),
            "--plot-lines",
        ],
    );
    let chart = std::fs::read_to_string(lines.join("class.jobs.response.svg")).unwrap();
    for label in [
        "simulated mean, station.q.service.mean=0.5",
        "simulated mean, station.q.service.mean=1",
        // M/M/1 depends on the service mean: one curve per series
        "M/M/1, station.q.service.mean=0.5",
    ] {
        assert!(chart.contains(label), "{label} not drawn");
    }
    let errors = std::fs::read_to_string(lines.join(format!(
        "class.jobs.response.{}.error.svg",
        parsim::plot::method_key("M/M/1")
    )))
    .unwrap();
    assert!(errors.contains("relative error of M/M/1"));
    assert_eq!(errors.matches("<polygon").count(), 2, "one band per series");
    let file = mm1(T);
    let (code, _, err) = call(&[
        "sweep",
        &file,
        "--vary",
        "run.seed=1",
        "--vary",
        "run.length=100",
        "--vary",
        "run.replications=2",
        "--plot",
        dir.join("three").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("varies 3"), "{err}");
}

/// Runs the sweep `axes` of the test's M/M/1 file as `shards` shards into `dir`, each with
/// `extra` arguments.
fn run_shards(test: &str, axes: &[&str], shards: usize, dir: &std::path::Path, extra: &[&str]) {
    for k in 0..shards {
        let shard = format!("{k}/{shards}");
        let mut args = axes.to_vec();
        args.extend(["--shard", shard.as_str(), "--out", dir.to_str().unwrap()]);
        args.extend(extra);
        sweep(test, &args);
    }
}

const GRID: [&str; 4] = [
    "--vary",
    "station.arrivals.interarrival.rate=0.2,0.5",
    "--vary",
    "station.q.service.mean=0.5..1.5:0.5",
];

#[test]
fn merged_shards_print_the_single_run_byte_for_byte() {
    const T: &str = "merged_shards_print_the_single_run_byte_for_byte";
    let dir = shard_dir(T, "four");
    run_shards(T, &GRID, 4, &dir, &[]);
    let merge = |json: bool| {
        let mut args = vec!["merge", dir.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let (code, out, err) = call(&args);
        assert_eq!(code, Some(0), "{err}");
        out
    };
    assert_eq!(merge(false), sweep(T, &GRID));
    let mut json = GRID.to_vec();
    json.push("--json");
    assert_eq!(merge(true), sweep(T, &json));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with("shard-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn merge_refuses_missing_duplicate_and_mixed_shards_naming_them() {
    const T: &str = "merge_refuses_missing_duplicate_and_mixed_shards_naming_them";
    let missing = shard_dir(T, "missing");
    run_shards(T, &GRID, 3, &missing, &[]);
    lose_shard(&missing, 1, 3);
    assert!(merge_refusal(&missing).contains("missing shard 1 of 3"));

    let twice = shard_dir(T, "twice");
    run_shards(T, &GRID, 2, &twice, &[]);
    duplicate_shard(&twice, 1, 2);
    let err = merge_refusal(&twice);
    assert!(
        err.contains("shard 1 appears twice") && err.contains("-copy.json"),
        "{err}"
    );

    let seeds = shard_dir(T, "seeds");
    run_shards(T, &GRID, 2, &seeds, &[]);
    let mut reseeded = GRID.to_vec();
    reseeded.extend([
        "--shard",
        "1/2",
        "--out",
        seeds.to_str().unwrap(),
        "--seed",
        "9",
    ]);
    sweep(T, &reseeded);
    let err = merge_refusal(&seeds);
    assert!(
        err.contains("different seeds: the scenario's and 9"),
        "{err}"
    );

    let scenario = shard_dir(T, "scenario");
    run_shards(T, &GRID, 2, &scenario, &[]);
    // one more assignment (to the value the file has) makes another sweep
    let mut changed = GRID.to_vec();
    changed.extend([
        "--set",
        "station.arrivals.class=jobs",
        "--shard",
        "0/2",
        "--out",
        scenario.to_str().unwrap(),
    ]);
    sweep(T, &changed);
    let err = merge_refusal(&scenario);
    assert!(
        err.contains("different sweeps") && err.contains("shard-00000-of-00002.json"),
        "{err}"
    );

    let version = shard_dir(T, "version");
    run_shards(T, &GRID, 2, &version, &[]);
    let file = version.join("shard-00001-of-00002.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let ours = format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&ours));
    std::fs::write(&file, text.replace(&ours, "\"version\": \"0.0.1\"")).unwrap();
    assert!(merge_refusal(&version).contains("different versions of parsim: "));
}

#[test]
fn the_slurm_scripts_run_the_shards_and_merge_what_the_single_run_prints() {
    const T: &str = "the_slurm_scripts_run_the_shards_and_merge_what_the_single_run_prints";
    let dir = shard_dir(T, "slurm");
    let file = mm1(T);
    let mut command = vec![
        "slurm",
        "--shards",
        "3",
        "--out",
        dir.to_str().unwrap(),
        "sweep",
    ];
    command.push(&file);
    command.extend(SHORT);
    command.extend(GRID);
    command.push("--json");
    let (code, _, err) = call(&command);
    assert_eq!(code, Some(0), "{err}");
    let script = std::fs::read_to_string(dir.join("shards.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-2"), "{script}");
    assert_eq!(super::util::run_slurm_scripts(&dir, 3), Some(0));
    let merged = std::fs::read_to_string(dir.join("merged.json")).unwrap();
    let mut single = GRID.to_vec();
    single.push("--json");
    assert_eq!(merged, sweep(T, &single));
    let (code, _, err) = call(&command);
    assert_eq!(code, Some(2), "stale shards are refused");
    assert!(err.contains("already holds shard files"), "{err}");
}

/// At a saturated bus (QCRD at p = 142: 39 groups queue on average) the simulated utilisation is
/// exactly 1 in every replication while exact MVA gives 1 - 4e-5: the zero-width interval cannot
/// test that, so the verdict is imprecise, never a disagreement; the cycle time, which does
/// vary, is still judged.
#[test]
fn a_utilisation_pinned_at_one_is_imprecise_not_a_disagreement() {
    let (code, out, err) = call(&[
        "sweep",
        "scenarios/qcrd_stage2.toml",
        "--vary",
        "spmd.p=142",
        "--set",
        "spmd.d=5",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let mut reader = csv::Reader::from_reader(out.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (metric, method, simulated, half_width, verdict) = (
        column("metric"),
        column("method"),
        column("simulated"),
        column("half_width_95"),
        column("verdict"),
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let bus = rows
        .iter()
        .find(|r| &r[metric] == "station.bus.utilisation" && &r[method] == "exact MVA")
        .expect("exact MVA predicts the bus utilisation");
    assert_eq!(&bus[simulated], "1");
    assert_eq!(&bus[half_width], "0");
    assert_eq!(&bus[verdict], "imprecise");
    let cycle = rows
        .iter()
        .find(|r| &r[metric] == "class.groups.cycle" && &r[method] == "exact MVA")
        .unwrap();
    assert_eq!(&cycle[verdict], "agree");
}

#[test]
fn a_point_short_of_its_precision_or_with_a_wide_interval_is_warned_about() {
    // issue 41: a sweep said nothing where `run` warns and exits 1
    let sweep = [
        "sweep",
        "scenarios/mm1.toml",
        "--vary",
        "station.arrivals.interarrival.rate=0.5,0.9",
        "--set",
        "run.length=2000",
        "--set",
        "run.replications=2",
        "--set",
        "run.max_replications=3",
        "--set",
        "run.precision=0.001",
    ];
    let missed = |rate: &str| {
        format!(
            "parsim: scenarios/mm1.toml: at station.arrivals.interarrival.rate={rate}: precision \
             target 0.001 on class.jobs.response NOT met within 3 replications"
        )
    };
    let (code, out, err) = super::util::call(&sweep);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        out.starts_with("station.arrivals.interarrival.rate,metric"),
        "{out}"
    );
    assert!(
        err.contains(&missed("0.5")) && err.contains(&missed("0.9")),
        "{err}"
    );
    assert!(
        err.contains("2 of 2 points missed their precision target: raise run.max_replications")
            && err.contains("--allow-imprecise accepts the results with exit 0"),
        "{err}"
    );
    let mut allowed = sweep.to_vec();
    allowed.push("--allow-imprecise");
    let (code, _, err) = super::util::call(&allowed);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&missed("0.9")) && !err.contains("--allow-imprecise accepts"),
        "{err}"
    );
    // shards leave the warning and the exit code to the merge
    let dir = super::util::shard_dir("sweep", "imprecise");
    let dir_text = dir.to_str().unwrap();
    for k in ["0/2", "1/2"] {
        let mut shard = sweep.to_vec();
        shard.extend(["--shard", k, "--out", dir_text]);
        let (code, _, err) = super::util::call(&shard);
        assert_eq!(code, Some(0), "{err}");
    }
    let (code, _, merged) = super::util::call(&["merge", dir_text]);
    assert_eq!(code, Some(1), "{merged}");
    assert!(
        merged.contains(&missed("0.5")) && merged.contains(&missed("0.9")),
        "{merged}"
    );
    // a 95% interval of 10% or more on a predicted metric is named, with no effect on the code
    let (code, _, err) = super::util::call(&[
        "sweep",
        "scenarios/mm1.toml",
        "--vary",
        "station.arrivals.interarrival.rate=0.95",
        "--set",
        "run.length=500",
        "--set",
        "run.replications=3",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("1 of 1 points have a 95% interval of +-10% or more of the mean")
            && err.contains("station.arrivals.interarrival.rate=0.95: station.server.")
            && err.contains("--set run.replications=N"),
        "{err}"
    );
}
