//! `parsim validate` end to end: exit codes, the report formats, the rerun column.

use super::util::{parsim, root, temp_scenario};

#[test]
fn the_quick_suite_on_two_cases_agrees_and_reports_json() {
    let out = parsim(&[
        "validate",
        "--quick",
        "--json",
        "validation/mm1_rho50.toml",
        "validation/mmc_c4.toml",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = rows.as_array().expect("an array of comparisons");
    assert!(rows.len() >= 4);
    for r in rows {
        assert!(
            r.get("first_simulated").is_some(),
            "every row says whether it was rerun"
        );
        assert_ne!(r["verdict"], "disagree");
    }
    assert!(
        rows.iter()
            .any(|r| r["exact"] == true && r["verdict"] == "agree")
    );
}

#[test]
fn an_approximation_outside_its_declared_tolerance_exits_1() {
    // E2/D/1 at rho 0.5: Pollaczek-Khinchine (labelled: the arrivals are not Poisson) is about
    // 28% above the simulated response, Kingman about 6%; tolerances 5% and 30%.
    let text = std::fs::read_to_string(root().join("validation/mg1_det_rho50.toml"))
        .expect("the case exists")
        .replace(
            "interarrival = { dist = \"exp\", rate = 0.5 }",
            "interarrival = { dist = \"erlang\", k = 2, mean = 2.0 }",
        )
        .replace(
            "[validate]",
            "[validate]\ntolerances = { \"M/D/1\" = 0.05, \"Kingman\" = 0.3 }",
        );
    let path = temp_scenario("e2d1_tolerances", &text);
    let report = path.with_extension("md");
    let out = parsim(&[
        "validate",
        "--quick",
        path.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("  outside_tolerance\n"), "{table}");
    assert!(
        table.contains("1 within_tolerance, 1 outside_tolerance, 0 undecided"),
        "{table}"
    );
    assert!(table.contains("0 disagree"), "{table}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let allowed = parsim(&[
        "validate",
        "--quick",
        "--allow-outside-tolerance",
        path.to_str().unwrap(),
    ]);
    assert_eq!(allowed.status.code(), Some(0), "counted, not failed");
    assert!(String::from_utf8_lossy(&allowed.stdout).contains("1 outside_tolerance"));
    let typo = temp_scenario(
        "e2d1_tolerance_typo",
        &text.replace("\"Kingman\" = 0.3", "\"Kingmann\" = 0.3"),
    );
    let out = parsim(&["validate", "--quick", typo.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "validate.tolerances names \"Kingmann\", which begins no compared method's label"
        ),
        "{err}"
    );
    let md = std::fs::read_to_string(&report).expect("the report was written");
    assert!(md.starts_with("# parsim validation report"));
    assert!(md.contains("| outside_tolerance |"), "{md}");
}

#[test]
fn validate_names_a_bad_case_file_and_exits_2() {
    let path = temp_scenario(
        "bad_validate",
        "name = \"x\"\n[validate]\nprecision = -1\n[[class]]\nname = \"jobs\"\n",
    );
    let out = parsim(&["validate", "--quick", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad_validate.toml"), "{err}");
    assert!(err.contains("validate.precision"), "{err}");
}

#[test]
fn a_case_with_no_prediction_exits_1_unless_it_declares_none() {
    // A two-server queue in a closed fork-join: no sojourn law for it.
    let text = std::fs::read_to_string(root().join("validation/closed_fork_join_n1.toml"))
        .expect("the case exists")
        .replace(
            "name = \"b1\"\nkind = \"fcfs\"\n",
            "name = \"b1\"\nkind = \"fcfs\"\nservers = 2\n",
        );
    assert!(text.contains("servers = 2"));
    assert!(text.contains("[validate]"));
    let net = text.replace(
        "\n[validate]\n",
        "\n[validate]\nmetrics = [\"station.b1.p99\"]\n",
    );
    let net = strip_metrics_line(&net);
    let none = temp_scenario("no_prediction", &net);
    let out = parsim(&["validate", "--quick", none.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{table}");
    assert!(table.contains("  no_prediction\n"), "{table}");
    assert!(
        table.contains("1 no_prediction, 0 no_prediction_expected"),
        "{table}"
    );

    let declared = temp_scenario(
        "no_prediction_declared",
        &net.replace(
            "\n[validate]\n",
            "\n[validate]\nexpect_prediction = false\n",
        ),
    );
    let out = parsim(&["validate", "--quick", "--json", declared.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(rows[0]["verdict"], "no_prediction_expected");
}

/// The case text with its original `metrics = [...]` line under `[validate]` removed (the
/// first one is kept).
fn strip_metrics_line(text: &str) -> String {
    let mut seen = false;
    text.lines()
        .filter(|l| {
            if l.starts_with("metrics") {
                let keep = !seen;
                seen = true;
                keep
            } else {
                true
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn deterministic_programs_agree_with_their_exact_closed_forms_up_to_the_clocks_rounding() {
    // every time fixed: the interval has width zero, and the simulated time differs from the
    // formula's only by the clock's rounding (relative error below 1e-9)
    let out = parsim(&[
        "validate",
        "--json",
        "validation/program_tree_sum.toml",
        "validation/program_ring_torus.toml",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = rows.as_array().expect("an array of comparisons");
    // the methods that do not apply are listed after the comparisons, each with its reason
    let (refused, rows): (Vec<_>, Vec<_>) =
        rows.iter().partition(|r| r["verdict"] == "not_applicable");
    assert!(!refused.is_empty());
    for r in &refused {
        assert_eq!(r["metric"], "-", "{r}");
        assert!(
            r["method"].as_str().is_some_and(|m| m.contains(": ")),
            "{r}"
        );
    }
    // each metric twice: the closed form and the contention-free evaluation, both exact
    assert_eq!(rows.len(), 6);
    for r in rows {
        assert_eq!(r["verdict"], "agree", "{r}");
        assert_eq!(r["half_width_99"], 0.0, "{r}");
    }
}

#[test]
fn csv_and_json_carry_the_same_fields_and_an_awkward_case_name_round_trips() {
    let text = std::fs::read_to_string(root().join("validation/mm1_rho50.toml"))
        .expect("the case exists")
        .replace(
            "name = \"M/M/1 rho 0.5\"",
            "name = 'M/M/1, \"quoted\", rho 0.5'",
        );
    let path = temp_scenario("awkward_case_name", &text);
    let csv_out = parsim(&["validate", "--quick", "--csv", path.to_str().unwrap()]);
    assert_eq!(csv_out.status.code(), Some(0));
    let mut reader = csv::Reader::from_reader(csv_out.stdout.as_slice());
    let header: Vec<String> = reader
        .headers()
        .expect("a header")
        .iter()
        .map(str::to_owned)
        .collect();
    let records: Vec<csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .expect("the csv crate reads it back");
    assert!(records.len() >= 2);
    for r in &records {
        assert_eq!(&r[0], "M/M/1, \"quoted\", rho 0.5");
        assert_eq!(r.len(), header.len());
    }
    let json_out = parsim(&["validate", "--quick", "--json", path.to_str().unwrap()]);
    let rows: serde_json::Value = serde_json::from_slice(&json_out.stdout).expect("JSON");
    for (row, record) in rows.as_array().expect("an array").iter().zip(&records) {
        let mut keys: Vec<&String> = row.as_object().expect("an object").keys().collect();
        keys.sort();
        let mut columns: Vec<&String> = header.iter().collect();
        columns.sort();
        assert_eq!(keys, columns);
        let column = |name: &str| &record[header.iter().position(|h| h == name).unwrap()];
        assert_eq!(row["verdict"], column("verdict"), "the same verdict word");
        assert_eq!(row["metric"], column("metric"));
        assert_eq!(
            row["half_width_99"].as_f64().unwrap(),
            column("half_width_99").parse::<f64>().unwrap()
        );
    }
}

#[test]
fn a_deterministic_program_with_nothing_shared_agrees_on_every_metric() {
    // every metric compared (no `metrics` list): the contention-free evaluation is exact for
    // all of them, deterministic zeros included; the bcast's closed form, which starts the
    // ranks together, is labelled with the staggered entry it does not model
    let out = parsim(&[
        "validate",
        "--json",
        "validation/program_collectives_full.toml",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = rows.as_array().expect("an array of comparisons");
    let evaluated: Vec<_> = rows
        .iter()
        .filter(|r| {
            r["method"]
                .as_str()
                .is_some_and(|m| m.starts_with("contention-free mean-value"))
        })
        .collect();
    assert!(evaluated.len() >= 15, "{}", evaluated.len());
    for r in evaluated {
        assert_eq!(r["exact"], true, "{r}");
        assert_eq!(r["verdict"], "agree", "{r}");
    }
    let closed = rows
        .iter()
        .find(|r| {
            r["method"]
                .as_str()
                .is_some_and(|m| m.starts_with("bcast binomial"))
        })
        .expect("the bcast's closed form");
    assert_eq!(closed["exact"], false, "{closed}");
    assert!(
        closed["method"]
            .as_str()
            .unwrap()
            .contains("enter the phase at different times"),
        "{closed}"
    );
}
