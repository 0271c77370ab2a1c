//! Every bundled scenario and validation case gets a prediction (or a bound) for every metric
//! it reports (issue 12: "a prediction for every metric it reports"), percentiles included.

use parsim::scenario::load;
use parsim::study::analyze_scenario;

use super::util::root;

#[test]
fn every_bundled_metric_has_a_prediction() {
    let mut missing = Vec::new();
    let mut checked = 0;
    let mut percentiles = 0;
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
                percentiles += usize::from(percentile);
                checked += 1;
                if !predicted(&m) {
                    missing.push(format!("{dir}/{file}: {m}"));
                }
            }
        }
    }
    assert!(
        checked > 3000 && percentiles > 1500,
        "only {checked} metric names checked ({percentiles} percentiles)"
    );
    assert!(
        missing.is_empty(),
        "unpredicted metrics:\n{}",
        missing.join("\n")
    );
}
