//! `parsim validate --shard K/N`: shard `K` validates the cases whose index (in the sorted list
//! of case files) is `K` modulo `N`, each exactly as the single run does (a case's streams
//! depend on its seed only), and writes their comparison rows; [`merge`] puts the rows back in
//! case order, from which `parsim merge` prints the single run's report and exit code.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Comparison;
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
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// `--quick`.
    pub quick: bool,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--allow-outside-tolerance`.
    pub allow_outside_tolerance: bool,
}

/// A fingerprint of a suite: every case file's name and text, and the settings.
pub fn fingerprint(cases: &[(String, String)], settings: Settings) -> String {
    let mut canon = String::new();
    for (name, text) in cases {
        let _ = write!(canon, "{name}\u{1f}{text}\u{1e}");
    }
    let _ = write!(
        canon,
        "quick {} allow {}",
        settings.quick, settings.allow_outside_tolerance
    );
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
        "suites (case files, --quick or --allow-outside-tolerance)",
    )?;
    let expected = files[0].cases;
    let allow_outside_tolerance = files[0].allow_outside_tolerance;
    let mut cases: Vec<CaseResult> = files.into_iter().flat_map(|f| f.results).collect();
    cases.sort_by_key(|c| c.index);
    let whole = cases.len() == expected && cases.iter().enumerate().all(|(i, c)| c.index == i);
    if !whole {
        return Err(MergeError::Incomplete {
            unit: "cases",
            held: cases.len(),
            expected,
        });
    }
    Ok(Merged {
        cases,
        allow_outside_tolerance,
    })
}
