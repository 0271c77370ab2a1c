use std::path::Path;

use super::util::{call, duplicate_shard, lose_shard, merge_refusal, shard_dir};

/// Short settings of the bundled M/M/1 file: MSER-5 settles the warm-up.
const MM1: [&str; 8] = [
    "run",
    "scenarios/mm1.toml",
    "--seed",
    "5",
    "--replications",
    "7",
    "--length",
    "2000",
];

/// `parsim` with `args`, which must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let (code, out, err) = call(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

/// Runs `base` as `shards` shards into `dir`, each with `extra` arguments.
fn run_shards(base: &[&str], shards: usize, dir: &Path, extra: &[&str]) {
    for k in 0..shards {
        let shard = format!("{k}/{shards}");
        let mut args = base.to_vec();
        args.extend(["--shard", shard.as_str(), "--out", dir.to_str().unwrap()]);
        args.extend(extra);
        ok(&args);
    }
}

/// `parsim merge dir` with `extra` arguments, which must succeed.
fn merge(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["merge", dir.to_str().unwrap()];
    args.extend(extra);
    ok(&args)
}

#[test]
fn merged_run_shards_print_the_single_run_byte_for_byte() {
    const T: &str = "merged_run_shards_print_the_single_run_byte_for_byte";
    let dir = shard_dir(T, "mm1");
    // shards on different thread counts: the streams depend on the replication only
    run_shards(&MM1, 3, &dir, &["--threads", "1"]);
    for format in [&[][..], &["--json"], &["--csv"]] {
        let mut single = MM1.to_vec();
        single.extend(format);
        single.extend(["--threads", "2"]);
        assert_eq!(merge(&dir, format), ok(&single), "{format:?}");
    }
    let table = merge(&dir, &[]);
    assert!(table.contains("(mser5)"), "{table}");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with("shard-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    // a rank program, and --set (the streams keyed by the assignments)
    let program = [
        "run",
        "scenarios/program_tree_sum.toml",
        "--replications",
        "5",
    ];
    let dir = shard_dir(T, "program");
    run_shards(&program, 2, &dir, &[]);
    assert_eq!(merge(&dir, &[]), ok(&program));
    let set = [
        "run",
        "scenarios/mm1.toml",
        "--replications",
        "4",
        "--set",
        "run.length=1500",
    ];
    let dir = shard_dir(T, "set");
    run_shards(&set, 4, &dir, &[]);
    assert_eq!(
        merge(&dir, &["--json"]),
        ok(&[&set[..], &["--json"]].concat())
    );
}

#[test]
fn every_run_shard_settles_the_same_mser_warm_up_cut() {
    const T: &str = "every_run_shard_settles_the_same_mser_warm_up_cut";
    let dir = shard_dir(T, "cut");
    run_shards(&MM1, 3, &dir, &[]);
    let cuts: Vec<serde_json::Value> = (0..3)
        .map(|k| {
            let file = dir.join(format!("shard-{k:05}-of-00003.json"));
            let shard: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            assert_eq!(shard["rows"].as_array().unwrap().len(), [3, 2, 2][k]);
            shard["warmup"].clone()
        })
        .collect();
    assert_eq!(cuts[0]["method"], "mser5");
    assert!(cuts[0]["observations"].as_u64().unwrap() > 0);
    assert!(cuts.iter().all(|c| *c == cuts[0]), "{cuts:?}");
    let single: serde_json::Value =
        serde_json::from_str(&ok(&[&MM1[..], &["--json"]].concat())).unwrap();
    assert_eq!(single[0]["warmup"], cuts[0]);
}

#[test]
fn merge_refuses_mixed_missing_and_duplicated_run_shards_naming_them() {
    const T: &str = "merge_refuses_mixed_missing_and_duplicated_run_shards_naming_them";
    let missing = shard_dir(T, "missing");
    run_shards(&MM1, 3, &missing, &[]);
    lose_shard(&missing, 2, 3);
    assert!(merge_refusal(&missing).contains("missing shard 2 of 3"));

    let twice = shard_dir(T, "twice");
    run_shards(&MM1, 2, &twice, &[]);
    duplicate_shard(&twice, 0, 2);
    let err = merge_refusal(&twice);
    assert!(
        err.contains("shard 0 appears twice") && err.contains("-copy.json"),
        "{err}"
    );

    let seeds = shard_dir(T, "seeds");
    run_shards(&MM1, 2, &seeds, &[]);
    let mut reseeded = MM1.to_vec();
    reseeded[3] = "12";
    reseeded.extend(["--shard", "1/2", "--out", seeds.to_str().unwrap()]);
    ok(&reseeded);
    let err = merge_refusal(&seeds);
    assert!(err.contains("different seeds: 5 and 12"), "{err}");

    let scenario = shard_dir(T, "scenario");
    run_shards(&MM1, 2, &scenario, &[]);
    let other = [
        "run",
        "scenarios/md1.toml",
        "--seed",
        "5",
        "--replications",
        "7",
        "--length",
        "2000",
    ];
    ok(&[
        &other[..],
        &["--shard", "1/2", "--out", scenario.to_str().unwrap()],
    ]
    .concat());
    let err = merge_refusal(&scenario);
    assert!(
        err.contains("different runs") && err.contains("shard-00001-of-00002.json"),
        "{err}"
    );

    let version = shard_dir(T, "version");
    run_shards(&MM1, 2, &version, &[]);
    let file = version.join("shard-00001-of-00002.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let ours = format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&ours));
    std::fs::write(&file, text.replace(&ours, "\"version\": \"0.0.1\"")).unwrap();
    assert!(merge_refusal(&version).contains("different versions of parsim: "));

    let kinds = shard_dir(T, "kinds");
    run_shards(&MM1, 2, &kinds, &[]);
    ok(&[
        "sweep",
        "scenarios/mm1.toml",
        "--vary",
        "run.length=1000",
        "--set",
        "run.replications=2",
        "--shard",
        "1/2",
        "--out",
        kinds.to_str().unwrap(),
    ]);
    let err = merge_refusal(&kinds);
    assert!(
        err.contains("shard-00001-of-00002.json") && err.contains("parsim-sweep-shard"),
        "{err}"
    );
}

#[test]
fn run_shards_refuse_a_precision_target_per_replication_files_and_more_shards_than_replications() {
    const T: &str = "run_shards_refuse_a_precision_target_per_replication_files_and_more_shards_than_replications";
    let dir = shard_dir(T, "refused");
    let out = dir.to_str().unwrap();
    let (code, _, err) = call(
        &[
            &MM1[..],
            &["--precision", "0.1", "--shard", "0/2", "--out", out],
        ]
        .concat(),
    );
    assert_eq!(code, Some(2), "{err}");
    // a shard has no replication values of its own to export: refused, not ignored
    let values = dir.join("values.csv");
    let (code, _, err) = call(
        &[
            &MM1[..],
            &["--per-replication", values.to_str().unwrap()],
            &["--shard", "0/2", "--out", out],
        ]
        .concat(),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--per-replication"), "{err}");
    let (code, _, err) = call(&[&MM1[..], &["--shard", "0/8", "--out", out]].concat());
    assert_eq!(code, Some(2));
    assert!(err.contains("more shards than the 7 replications"), "{err}");
    let (code, _, err) = call(&[
        "run",
        "scenarios/mm1.toml",
        "scenarios/md1.toml",
        "--shard",
        "0/2",
        "--out",
        out,
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("one scenario file"), "{err}");
}

#[test]
fn the_slurm_scripts_of_a_run_merge_what_the_single_run_prints() {
    const T: &str = "the_slurm_scripts_of_a_run_merge_what_the_single_run_prints";
    let dir = shard_dir(T, "slurm");
    let mut command = vec!["slurm", "--shards", "3", "--out", dir.to_str().unwrap()];
    command.extend(MM1);
    command.push("--json");
    ok(&command);
    let script = std::fs::read_to_string(dir.join("shards.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-2"), "{script}");
    assert!(script.contains("# parsim run in 3 shards"), "{script}");
    assert_eq!(super::util::run_slurm_scripts(&dir, 3), Some(0));
    let merged = std::fs::read_to_string(dir.join("merged.json")).unwrap();
    assert_eq!(merged, ok(&[&MM1[..], &["--json"]].concat()));
    // flags a shard cannot take, and several files, are refused before anything is written
    let refused = |extra: &[&str], says: &str| {
        let other = shard_dir(T, "refused");
        let mut args = vec!["slurm", "--shards", "2", "--out", other.to_str().unwrap()];
        args.extend(MM1);
        args.extend(extra);
        let (code, _, err) = call(&args);
        assert_eq!(code, Some(2), "{extra:?}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!other.exists(), "{extra:?}: nothing written");
    };
    refused(&["--precision", "0.05"], "cannot run in shards");
    refused(&["scenarios/md1.toml"], "runs one scenario file");
    refused(
        &["--shard", "0/2", "--out", "x"],
        "without --shard and --out",
    );
}
