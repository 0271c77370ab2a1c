//! The analyses a sweep's points share. A point's analysis is a function of its workload, its
//! model and its analysis budget alone ([`analyze_scenario`] reads nothing else: not the run settings, the
//! validation settings, the name or the path), so points whose analytic inputs are equal (a
//! sweep over `run.length`, seeds or replications, or any axis the analysis does not see) are
//! analysed once. Inputs are compared whole, by their `Debug` text, which prints every field
//! and every number exactly (shortest round-trip form): two points share an analysis only when
//! it would be the same, so a sweep's output is byte-identical with or without the memo.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex, PoisonError};

use crate::predict::Analysis;
use crate::scenario::Scenario;
use crate::study::analyze_scenario;

/// The most key text the memo holds; past it, it starts again (a sweep's repeats are usually
/// near one another).
const MAX_BYTES: usize = 64 << 20;

/// Inputs longer than this (a long empirical trace, a large program) are analysed without the
/// memo.
const MAX_KEY: usize = 1 << 20;

/// Analyses by the `Debug` text of their inputs.
#[derive(Default)]
struct Memo {
    analyses: HashMap<String, Arc<Analysis>>,
    bytes: usize,
}

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

/// The text two scenarios share exactly when their analyses are equal, or `None` when it is
/// longer than [`MAX_KEY`].
fn key(sc: &Scenario) -> Option<String> {
    let mut text = String::new();
    write!(text, "{:?}\n{:?}\n{:?}", sc.workload, sc.model, sc.analyze).ok()?;
    (text.len() <= MAX_KEY).then_some(text)
}

/// [`analyze_scenario`] of `sc`, or the analysis of an earlier point with the same analytic
/// inputs.
pub fn analysis(sc: &Scenario) -> Arc<Analysis> {
    let Some(key) = key(sc) else {
        return Arc::new(analyze_scenario(sc));
    };
    let known = MEMO
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .and_then(|memo| memo.analyses.get(&key).cloned());
    if let Some(analysis) = known {
        return analysis;
    }
    // analysed outside the lock: points analysed side by side do not wait for one another
    let analysis = Arc::new(analyze_scenario(sc));
    let mut guard = MEMO.lock().unwrap_or_else(PoisonError::into_inner);
    let memo = guard.get_or_insert_with(Memo::default);
    if memo.bytes + key.len() > MAX_BYTES {
        *memo = Memo::default();
    }
    memo.bytes += key.len();
    memo.analyses.insert(key, Arc::clone(&analysis));
    analysis
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::assign::Assignment;

    const TEXT: &str = r#"
[run]
replications = 3
length = 1000

[[class]]
name = "jobs"
population = 3
reference = "think"

[[station]]
name = "think"
kind = "delay"
service = { dist = "exp", mean = 1.0 }

[[station]]
name = "cpu"
kind = "fcfs"
service = { dist = "exp", mean = 0.25 }

[[route]]
class = "jobs"
from = "think"
to = "cpu"

[[route]]
class = "jobs"
from = "cpu"
to = "think"
"#;

    fn point(sets: &[&str]) -> Scenario {
        let sets: Vec<Assignment> = sets.iter().map(|s| Assignment::parse(s).unwrap()).collect();
        crate::scenario::parse_with(TEXT, std::path::Path::new("memo.toml"), &sets).unwrap()
    }

    #[test]
    fn points_that_differ_in_run_settings_share_their_analysis_and_others_do_not() {
        let a = analysis(&point(&["run.length=5000"]));
        let b = analysis(&point(&["run.length=9000", "run.replications=7"]));
        assert!(
            Arc::ptr_eq(&a, &b),
            "run settings do not change an analysis"
        );
        let c = analysis(&point(&["class.jobs.population=4"]));
        assert!(!Arc::ptr_eq(&a, &c));
        // a mean that differs in the last digit is another point
        let d = analysis(&point(&["station.cpu.service.mean=0.25000000000000006"]));
        assert!(!Arc::ptr_eq(&a, &d));
        for (memoised, sets) in [
            (&a, &["run.length=5000"][..]),
            (&c, &["class.jobs.population=4"]),
            (&d, &["station.cpu.service.mean=0.25000000000000006"]),
        ] {
            let fresh = analyze_scenario(&point(sets));
            assert_eq!(memoised.predictions, fresh.predictions);
            assert_eq!(memoised.bounds, fresh.bounds);
            assert_eq!(memoised.refusals, fresh.refusals);
        }
    }
}
