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
            r.get("first_run").is_some(),
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
    // Nelson-Tantawi is about 2% off for K = 4; declare a 0.1% tolerance.
    let text = std::fs::read_to_string(root().join("validation/nelson_tantawi_k4.toml"))
        .expect("the case exists");
    assert!(text.contains("tolerance"), "the case declares a tolerance");
    let strict: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("tolerance") {
                "tolerance = 0.001".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = temp_scenario("nt_strict", &strict);
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
    assert!(table.contains("DISAGREE"), "{table}");
    let md = std::fs::read_to_string(&report).expect("the report was written");
    assert!(md.starts_with("# parsim validation report"));
    assert!(md.contains("| DISAGREE |"), "{md}");
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
    assert_eq!(rows.len(), 3);
    for r in rows {
        assert_eq!(r["verdict"], "agree", "{r}");
        assert_eq!(r["half_width"], 0.0, "{r}");
    }
}
