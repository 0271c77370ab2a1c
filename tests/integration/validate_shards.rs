use std::path::{Path, PathBuf};

use super::util::{call, duplicate_shard, lose_shard, root, shard_dir};

/// A suite directory for a test: four bundled cases and one no method predicts (exit 1, and
/// rows whose numbers are NaN).
fn suite(test: &str) -> PathBuf {
    let dir = shard_dir(test, "cases");
    std::fs::create_dir_all(&dir).unwrap();
    for case in ["mm1_rho50", "fj2_rho60", "closed_2q_n4", "mg1_det_rho50"] {
        let file = format!("{case}.toml");
        std::fs::copy(root().join("validation").join(&file), dir.join(&file)).unwrap();
    }
    // a two-server queue in a closed fork-join: no sojourn law for it
    let text = std::fs::read_to_string(root().join("validation/closed_fork_join_n1.toml"))
        .unwrap()
        .replace(
            "name = \"b1\"\nkind = \"fcfs\"\n",
            "name = \"b1\"\nkind = \"fcfs\"\nservers = 2\n",
        )
        .replace(
            "\n[validate]\n",
            "\n[validate]\nmetrics = [\"station.b1.p99\"]\n",
        );
    assert!(text.contains("station.b1.p99") && text.contains("servers = 2"));
    std::fs::write(dir.join("zz_no_prediction.toml"), text).unwrap();
    dir
}

/// `parsim validate --quick` of `cases` with `extra` arguments: (exit code, stdout).
fn validate(cases: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["validate", "--quick", cases.to_str().unwrap()];
    args.extend(extra);
    let (code, out, err) = call(&args);
    assert_ne!(code, Some(2), "{args:?}: {err}");
    (code, out)
}

/// Validates `cases` as `shards` shards into `out`, each with `extra` arguments.
fn shards(cases: &Path, count: usize, out: &Path, extra: &[&str]) {
    for k in 0..count {
        let shard = format!("{k}/{count}");
        let mut args = vec!["--shard", shard.as_str(), "--out", out.to_str().unwrap()];
        args.extend(extra);
        assert_eq!(validate(cases, &args).0, Some(0));
    }
}

/// `parsim merge dir` with `extra` arguments: (exit code, stdout, stderr).
fn merge(dir: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["merge", dir.to_str().unwrap()];
    args.extend(extra);
    call(&args)
}

#[test]
fn merged_validate_shards_print_the_single_report_and_exit_code() {
    const T: &str = "merged_validate_shards_print_the_single_report_and_exit_code";
    let cases = suite(T);
    let out = shard_dir(T, "shards");
    shards(&cases, 3, &out, &[]);
    let single_md = out.with_extension("single.md");
    let merged_md = out.with_extension("merged.md");
    for format in [&[][..], &["--json"], &["--csv"]] {
        let (code, single) = validate(&cases, format);
        assert_eq!(code, Some(1), "the case without a prediction fails");
        let (merged_code, merged, err) = merge(&out, format);
        assert_eq!(merged_code, code, "{err}");
        assert_eq!(merged, single, "{format:?}");
    }
    let (_, table) = validate(&cases, &["--report", single_md.to_str().unwrap()]);
    assert!(table.contains("  no_prediction\n"), "{table}");
    merge(&out, &["--report", merged_md.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(merged_md).unwrap(),
        std::fs::read_to_string(single_md).unwrap()
    );

    // --allow-outside-tolerance travels in the shard files
    let allowed = shard_dir(T, "allowed");
    shards(&cases, 2, &allowed, &["--allow-outside-tolerance"]);
    let (code, single) = validate(&cases, &["--allow-outside-tolerance"]);
    let (merged_code, merged, _) = merge(&allowed, &[]);
    assert_eq!((merged_code, merged), (code, single));
}

#[test]
fn merge_refuses_mixed_missing_and_duplicated_validate_shards() {
    const T: &str = "merge_refuses_mixed_missing_and_duplicated_validate_shards";
    let cases = suite(T);
    let refusal = |dir: &Path| {
        let (code, _, err) = merge(dir, &[]);
        assert_eq!(code, Some(2), "{err}");
        err
    };
    let missing = shard_dir(T, "missing");
    shards(&cases, 3, &missing, &[]);
    lose_shard(&missing, 0, 3);
    assert!(refusal(&missing).contains("missing shard 0 of 3"));

    let twice = shard_dir(T, "twice");
    shards(&cases, 2, &twice, &[]);
    duplicate_shard(&twice, 1, 2);
    assert!(refusal(&twice).contains("shard 1 appears twice"));

    let seeds = shard_dir(T, "seeds");
    shards(&cases, 2, &seeds, &[]);
    validate(
        &cases,
        &[
            "--seed",
            "3",
            "--shard",
            "1/2",
            "--out",
            seeds.to_str().unwrap(),
        ],
    );
    let err = refusal(&seeds);
    assert!(
        err.contains("different seeds: the scenario's and 3"),
        "{err}"
    );

    let suites = shard_dir(T, "suites");
    shards(&cases, 2, &suites, &[]);
    std::fs::remove_file(cases.join("zz_no_prediction.toml")).unwrap();
    validate(
        &cases,
        &["--shard", "1/2", "--out", suites.to_str().unwrap()],
    );
    let err = refusal(&suites);
    assert!(
        err.contains("different suites") && err.contains("shard-00001-of-00002.json"),
        "{err}"
    );
}

#[test]
fn validate_plot_draws_one_svg_per_case_and_merge_draws_the_same() {
    const T: &str = "validate_plot_draws_one_svg_per_case_and_merge_draws_the_same";
    let cases = suite(T);
    let single = shard_dir(T, "single-plots");
    validate(&cases, &["--plot", single.to_str().unwrap()]);
    let mut names: Vec<String> = std::fs::read_dir(&single)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    // the case without a prediction has nothing to compare
    assert_eq!(
        names,
        [
            "2-server_fork-join_queue_rho_0.6.svg",
            "Closed__delay___2_queues__N_4.svg",
            "M_G_1_det_rho_0.5.svg",
            "M_M_1_rho_0.5.svg",
        ]
    );
    for name in &names {
        let svg = std::fs::read_to_string(single.join(name)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{name}"
        );
        assert_eq!(svg.matches("<svg").count(), svg.matches("</svg>").count());
        for label in ["simulated mean, 99% interval", "value / simulated mean"] {
            assert!(svg.contains(label), "{name}: {label} not drawn");
        }
    }
    let mm1 = std::fs::read_to_string(single.join("M_M_1_rho_0.5.svg")).unwrap();
    for label in ["class.jobs.response", "M/M/1", "<circle"] {
        assert!(mm1.contains(label), "{label} not drawn");
    }

    let out = shard_dir(T, "shards");
    shards(&cases, 2, &out, &[]);
    let merged = shard_dir(T, "merged-plots");
    merge(&out, &["--plot", merged.to_str().unwrap()]);
    for name in &names {
        assert_eq!(
            std::fs::read(merged.join(name)).unwrap(),
            std::fs::read(single.join(name)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn the_slurm_scripts_of_a_validation_keep_its_report_and_exit_code() {
    const T: &str = "the_slurm_scripts_of_a_validation_keep_its_report_and_exit_code";
    let cases = suite(T);
    let dir = shard_dir(T, "slurm");
    let args = [
        "slurm",
        "--shards",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "validate",
        "--quick",
        cases.to_str().unwrap(),
    ];
    let (code, _, err) = call(&args);
    assert_eq!(code, Some(0), "{err}");
    // a case without prediction makes the single run exit 1; the merge job exits 1 too and
    // still keeps the whole table
    let (single_code, single) = validate(&cases, &[]);
    assert_eq!(single_code, Some(1));
    assert_eq!(super::util::run_slurm_scripts(&dir, 2), Some(1));
    let merged = std::fs::read_to_string(dir.join("merged.txt")).unwrap();
    assert_eq!(merged, single);
}
