//! Every bundled scenario and validation case gets a prediction (or a bound) for each of its
//! percentile metrics (`.p50 .. .p99`), except the ones listed in [`NOT_YET`].

use parsim::predict::analyze_scenario;
use parsim::scenario::load;

use super::util::root;

/// Percentiles still unpredicted (file, or any file for "", and metric prefix): a message's
/// latency (`messages.p99`, the program predictions' job); the fork-to-join time of a fork
/// whose tasks run through several stations (btio's groups), with the end-to-end percentiles
/// of the class that crosses it.
const NOT_YET: [(&str, &str); 5] = [
    ("", "messages.p99"),
    ("btio_p9.toml", "station.groups_fork."),
    ("btio_p9.toml", "class.program."),
    ("btio_p64.toml", "station.groups_fork."),
    ("btio_p64.toml", "class.program."),
];

fn exempt(file: &str, metric: &str) -> bool {
    NOT_YET
        .iter()
        .any(|(f, m)| (f.is_empty() || *f == file) && metric.starts_with(m))
}

#[test]
fn every_bundled_percentile_has_a_prediction() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for dir in ["scenarios", "validation"] {
        let mut files: Vec<_> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for path in files {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let sc = load(&path).unwrap_or_else(|e| panic!("{e}"));
            let a = analyze_scenario(&sc);
            let predicted = |m: &str| {
                a.predictions.iter().any(|p| p.metric == m)
                    || a.bounds.iter().any(|b| b.metric == m)
            };
            for m in sc.metric_names() {
                let percentile = m
                    .rsplit_once(".p")
                    .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
                if !percentile || exempt(&file, &m) {
                    continue;
                }
                checked += 1;
                if !predicted(&m) {
                    missing.push(format!("{dir}/{file}: {m}"));
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} percentile names checked");
    assert!(
        missing.is_empty(),
        "unpredicted percentiles:\n{}",
        missing.join("\n")
    );
}
