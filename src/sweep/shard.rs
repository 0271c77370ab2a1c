//! Sweeps split over machines: shard `K` of `N` runs the points whose index is `K` modulo `N`
//! (so costly and cheap regions of an axis spread evenly), each under exactly the seed it has
//! in the whole sweep, and writes one file (see [`crate::shard`]); [`merge`] joins the files
//! into the report the single run prints, number for number.
//!
//! Besides the [`Header`], a sweep shard file holds its points' results and the number of
//! points in the whole sweep; the fingerprint covers the scenario text, the files its points
//! read, the fixed assignments, the axes and the layout.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Sweep;
use super::output::SweepReport;
use crate::shard::{Header, read_all};
pub use crate::shard::{MergeError, Shard};

/// The format tag of a sweep shard file.
pub const FORMAT: &str = "parsim-sweep-shard/2";

/// What one shard of a sweep wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    /// Format, version, fingerprint, seed override, shard.
    #[serde(flatten)]
    pub header: Header,
    /// Points in the whole sweep.
    pub points: usize,
    /// The shard's points, in order.
    pub report: SweepReport,
    /// `--allow-imprecise`: points that missed their precision target do not make the merge's
    /// exit code 1.
    #[serde(default)]
    pub allow_imprecise: bool,
}

impl crate::shard::ShardFile for ShardFile {
    fn header(&self) -> &Header {
        &self.header
    }
}

impl ShardFile {
    /// The file of `shard` of `sweep`, holding `report` (its points); `inputs` is a hash of
    /// the contents of the files its points read; `allow_imprecise` is `--allow-imprecise`.
    pub fn new(
        sweep: &Sweep,
        inputs: &str,
        shard: Shard,
        report: SweepReport,
        allow_imprecise: bool,
    ) -> ShardFile {
        ShardFile {
            header: Header::new(
                FORMAT,
                fingerprint(sweep, inputs, allow_imprecise),
                sweep.seed,
                shard,
            ),
            points: sweep.points().len(),
            report,
            allow_imprecise,
        }
    }
}

/// A 64-bit fingerprint, in hex, of what a sweep computes: the scenario text, the fixed
/// assignments, the axes, the layout and `inputs`, a hash of the files its points read; and
/// `--allow-imprecise`, which the merge's exit code depends on (so that shards run with and
/// without it are not merged).
pub fn fingerprint(sweep: &Sweep, inputs: &str, allow_imprecise: bool) -> String {
    let mut canon = sweep.text.clone();
    let _ = write!(canon, "\n--inputs {inputs}");
    for a in &sweep.fixed {
        let _ = write!(canon, "\n--set {}={}", a.key, a.value.toml());
    }
    for axis in &sweep.axes {
        let values: Vec<String> = axis.values.iter().map(|v| v.toml()).collect();
        let _ = write!(canon, "\n--vary {}={}", axis.key, values.join("\u{1f}"));
    }
    let _ = write!(canon, "\n{:?}", sweep.layout);
    if allow_imprecise {
        canon.push_str("\n--allow-imprecise");
    }
    crate::shard::fingerprint(&canon)
}

/// Reads every `shard-*.json` of `dir`, checks they make one whole sweep, and joins their points
/// into the report the single run would have produced, with the shards' `--allow-imprecise`.
pub fn merge(dir: &Path) -> Result<(SweepReport, bool), MergeError> {
    let files: Vec<ShardFile> = read_all(
        dir,
        FORMAT,
        "sweeps (scenario or the files it reads, assignments, axes or --allow-imprecise)",
    )?;
    let allow_imprecise = files[0].allow_imprecise;
    let expected = files[0].points;
    let mut report = files[0].report.clone();
    report.points = files.into_iter().flat_map(|f| f.report.points).collect();
    report.points.sort_by_key(|p| p.index);
    let indices: Vec<usize> = report.points.iter().map(|p| p.index).collect();
    crate::shard::check_whole("points", "point", &indices, expected)?;
    Ok((report, allow_imprecise))
}
