//! Every metric a scenario reports is described: `parsim metrics` gives its unit and meaning.

use crate::util::{call, root};

/// The scenario files bundled in `scenarios/` and `validation/`.
fn bundled() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for dir in ["scenarios", "validation"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_metric_name_of_every_bundled_scenario_is_described() {
    let mut undescribed = Vec::new();
    let files = bundled();
    assert!(files.len() > 20, "{} bundled files", files.len());
    for path in files {
        let sc = parsim::scenario::load(&path).unwrap();
        for name in sc.metric_names() {
            if sc.describe_metric(&name).is_none() {
                undescribed.push(format!("{}: {name}", path.display()));
            }
        }
    }
    assert!(undescribed.is_empty(), "{}", undescribed.join("\n"));
}

#[test]
fn the_per_link_metrics_a_program_run_reports_are_described() {
    let (code, out, err) = call(&[
        "run",
        "scenarios/program_ring_torus.toml",
        "--replications",
        "2",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sc = parsim::scenario::load(&root().join("scenarios/program_ring_torus.toml")).unwrap();
    let names: Vec<&str> = json[0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metric"].as_str().unwrap())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("link.")), "{names:?}");
    for name in names {
        assert!(
            sc.describe_metric(name).is_some(),
            "{name} is not described"
        );
    }
}

#[test]
fn metrics_prints_each_name_with_its_unit_and_meaning() {
    let (code, out, err) = call(&["metrics", "scenarios/mm1.toml"]);
    assert_eq!(code, Some(0), "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("station.server.utilisation "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("fraction") && line.contains("busy fraction per server"),
        "{line}"
    );
    let (code, names, err) = call(&["metrics", "scenarios/mm1.toml", "--names"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        names.lines().any(|l| l == "station.server.utilisation"),
        "{names}"
    );
    assert!(names.lines().all(|l| !l.contains(' ')), "{names}");
}
