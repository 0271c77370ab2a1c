//! `parsim validate --shard K/N`: shard `K` validates the cases [`owners`] gives it, each
//! exactly as the single run does (a case's streams depend on its seed only), and writes their
//! comparison rows; [`merge`] puts the rows back in case order, from which `parsim merge` prints
//! the single run's report and exit code.
//!
//! Cases differ in cost by orders of magnitude (an M/M/1 at rho 0.3 against a 64-rank program),
//! so cases are not dealt out by index: each case's cost is estimated from its scenario
//! ([`estimated_cost`]), and the cases are given, costliest first, each to the shard with the
//! least estimated work so far (the longest-processing-time rule). Every shard computes the same
//! assignment from the same files.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Comparison, ValidateOptions, planned_runs};
use crate::program::{Instr, Program};
use crate::scenario::{Scenario, Workload};
use crate::schedule::Form;
use crate::shard::{Header, MergeError, Shard, read_all};

/// The format tag of a validate shard file.
pub const FORMAT: &str = "parsim-validate-shard/3";

/// What one shard of `parsim validate` wrote.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ValidateShard {
    /// Format, version, fingerprint, `--seed` override, shard.
    #[serde(flatten)]
    pub header: Header,
    /// Cases in the whole suite.
    pub cases: usize,
    /// Whether approximations outside their tolerance leave the exit code 0.
    pub allow_outside_tolerance: bool,
    /// The shard's cases, in order.
    pub results: Vec<CaseResult>,
}

impl crate::shard::ShardFile for ValidateShard {
    fn header(&self) -> &Header {
        &self.header
    }
}

/// One case's comparisons and the warnings validating it printed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case's index in the suite.
    pub index: usize,
    /// Its rows of the report.
    pub rows: Vec<Comparison>,
    /// Its warnings (printed on stderr).
    pub warnings: Vec<String>,
}

/// The suite's settings that change its numbers or its exit code.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `--quick`.
    pub quick: bool,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--allow-outside-tolerance`.
    pub allow_outside_tolerance: bool,
    /// `--set`, each as `KEY=VALUE` with the value as TOML.
    pub set: Vec<String>,
    /// `--replications`.
    pub replications: Option<u32>,
    /// `--length`.
    pub length: Option<u64>,
    /// `--budget`.
    pub budget: Option<f64>,
}

/// About how many events validating `sc` with `options` simulates: for a network,
/// replications x (run length + a fifth for the warm-up pilot) x events per observation
/// (`crate::network::estimates::events_per_observation`); for a program, replications x the
/// operations its ranks execute (loops multiplied out where their counts are constants, a
/// collective counted as its `log2 P + 1` steps). An estimate for sharing work out, not a
/// prediction: a precision target may add replications.
pub fn estimated_cost(sc: &Scenario, options: &ValidateOptions) -> f64 {
    let (replications, length) = planned_runs(sc, options);
    let replications = f64::from(replications);
    match &sc.workload {
        Workload::Network(net) => {
            replications
                * 1.2
                * length as f64
                * crate::network::estimates::events_per_observation(net)
        }
        Workload::Program(p) => replications * program_operations(p),
        // a schedule that draws nothing runs once for all its replications
        Workload::Schedule(s) => {
            let runs = if s.deterministic() { 1.0 } else { replications };
            runs * match &s.form {
                Form::Dag(d) => d.len() as f64,
                Form::Program(p) => program_operations(p),
            }
        }
    }
}

/// The operations a program's ranks execute, loops multiplied out (a loop whose count is not a
/// constant counted as 10 iterations).
fn program_operations(p: &Program) -> f64 {
    let ranks = f64::from(p.ranks.max(1));
    let collective = ranks.log2().ceil() + 1.0;
    let mut multiplier = vec![1.0_f64];
    let mut total = 0.0;
    for instr in &p.code {
        let times = *multiplier.last().unwrap_or(&1.0);
        match instr {
            Instr::Loop { times: n, .. } => {
                let n = n.as_constant().map_or(10.0, |n| n.max(0) as f64);
                multiplier.push(times * n);
            }
            Instr::Next { .. } => {
                multiplier.pop();
            }
            Instr::Collective(_) => total += times * collective,
            _ => total += times,
        }
    }
    ranks * total.max(1.0)
}

/// The shard of each case, given the cases' estimated `costs` and `count` shards: the cases
/// taken costliest first (ties by index), each given to the shard with the least cost so far
/// (ties to the lowest shard). Deterministic, so every shard finds the same assignment.
pub fn owners(costs: &[f64], count: usize) -> Vec<usize> {
    let count = count.max(1);
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0.0_f64; count];
    let mut owner = vec![0; costs.len()];
    for case in order {
        let lightest = (0..count)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        owner[case] = lightest;
        load[lightest] += costs[case].max(0.0);
    }
    owner
}

/// A fingerprint of a suite: every case file's name and scenario hash (its text and the files
/// it read, [`crate::hash::scenario_hash`]), and the settings.
pub fn fingerprint(cases: &[(String, String)], settings: &Settings) -> String {
    let mut canon = String::new();
    for (name, hash) in cases {
        let _ = write!(canon, "{name}\u{1f}{hash}\u{1e}");
    }
    let _ = write!(
        canon,
        "quick {} allow {}",
        settings.quick, settings.allow_outside_tolerance
    );
    // what older shard files never had stays out of the text when unused, so that their
    // fingerprints still match
    for set in &settings.set {
        let _ = write!(canon, " set {set}");
    }
    if let Some(r) = settings.replications {
        let _ = write!(canon, " replications {r}");
    }
    if let Some(l) = settings.length {
        let _ = write!(canon, " length {l}");
    }
    if let Some(b) = settings.budget {
        let _ = write!(canon, " budget {b}");
    }
    crate::shard::fingerprint(&canon)
}

impl ValidateShard {
    /// The file of `shard` of the suite with this fingerprint and `cases` cases.
    pub fn new(
        fingerprint: String,
        settings: Settings,
        shard: Shard,
        cases: usize,
        results: Vec<CaseResult>,
    ) -> ValidateShard {
        ValidateShard {
            header: Header::new(FORMAT, fingerprint, settings.seed, shard),
            cases,
            allow_outside_tolerance: settings.allow_outside_tolerance,
            results,
        }
    }
}

/// The merged suite: every case's result in order, and whether outside-tolerance
/// approximations are allowed.
#[derive(Clone, Debug)]
pub struct Merged {
    /// Every case, in suite order.
    pub cases: Vec<CaseResult>,
    /// `--allow-outside-tolerance` of the shards.
    pub allow_outside_tolerance: bool,
}

/// Reads every `shard-*.json` of `dir`, checks they make one whole suite, and returns its cases
/// in order.
pub fn merge(dir: &Path) -> Result<Merged, MergeError> {
    let files: Vec<ValidateShard> = read_all(
        dir,
        FORMAT,
        "suites (case files, --quick, --allow-outside-tolerance, --set, --replications, --length or --budget)",
    )?;
    let expected = files[0].cases;
    let allow_outside_tolerance = files[0].allow_outside_tolerance;
    let mut cases: Vec<CaseResult> = files.into_iter().flat_map(|f| f.results).collect();
    cases.sort_by_key(|c| c.index);
    let indices: Vec<usize> = cases.iter().map(|c| c.index).collect();
    crate::shard::check_whole("cases", "case", &indices, expected)?;
    Ok(Merged {
        cases,
        allow_outside_tolerance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_of_other_overrides_have_other_fingerprints() {
        let cases = [("a.toml".to_owned(), "0123456789abcdef".to_owned())];
        let plain = Settings {
            quick: true,
            seed: None,
            allow_outside_tolerance: false,
            set: Vec::new(),
            replications: None,
            length: None,
            budget: None,
        };
        let base = fingerprint(&cases, &plain);
        // the text before the overrides existed, so that older shard files still merge
        assert_eq!(
            base,
            crate::shard::fingerprint("a.toml\u{1f}0123456789abcdef\u{1e}quick true allow false")
        );
        let changed = [
            Settings {
                set: vec!["station.q.servers=2".to_owned()],
                ..plain.clone()
            },
            Settings {
                replications: Some(20),
                ..plain.clone()
            },
            Settings {
                length: Some(5000),
                ..plain.clone()
            },
            Settings {
                budget: Some(10.0),
                ..plain.clone()
            },
        ];
        let prints: Vec<String> = changed.iter().map(|s| fingerprint(&cases, s)).collect();
        for (i, p) in prints.iter().enumerate() {
            assert_ne!(*p, base);
            assert!(prints[..i].iter().all(|q| q != p));
        }
    }

    #[test]
    fn cases_go_costliest_first_to_the_least_loaded_shard() {
        // one costly case and many cheap ones: the costly one gets a shard to itself
        let costs = [1.0, 100.0, 1.0, 1.0, 1.0, 50.0, 1.0, 1.0];
        let owner = owners(&costs, 2);
        assert_eq!(owner[1], 0);
        assert_eq!(owner[5], 1);
        let load = |k: usize| -> f64 {
            (0..costs.len())
                .filter(|&i| owner[i] == k)
                .map(|i| costs[i])
                .sum()
        };
        assert_eq!((load(0), load(1)), (100.0, 56.0));
        // deterministic, and every case has a shard
        assert_eq!(owners(&costs, 2), owner);
        assert_eq!(owners(&costs, 3).len(), costs.len());
        assert_eq!(owners(&[], 4), Vec::<usize>::new());
    }
}
