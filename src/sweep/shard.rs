//! Sweeps split over machines: shard `K` of `N` runs the points whose index is `K` modulo `N`
//! (so costly and cheap regions of an axis spread evenly), each under exactly the seed it has
//! in the whole sweep, and writes one file; [`merge`] joins the files into the report the
//! single run prints, number for number.
//!
//! A shard file holds its points' results, the shard number and count, the parsim version, the
//! master seed override and a fingerprint of the sweep (the scenario text, the fixed
//! assignments, the axes and the layout). It is written to a temporary name and renamed, so a
//! reader never sees half a file. Merging refuses files of different sweeps, seeds, versions or
//! shard counts, and missing or duplicated shards, naming them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Sweep;
use super::output::SweepReport;
use crate::rng::derive_seed;

/// The format tag of a shard file.
pub const FORMAT: &str = "parsim-sweep-shard/1";

/// One shard's place: `index` of `count`, counting from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 0 to `count - 1`.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// Reads `K/N` (K from 0 to N-1, as a Slurm array index).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}`: expected K/N with 0 <= K < N, e.g. 0/8");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether the point with this index belongs to the shard.
    pub fn owns(&self, point: usize) -> bool {
        point % self.count == self.index
    }

    /// The shard's file name in the output directory.
    pub fn file_name(&self) -> String {
        format!("shard-{:05}-of-{:05}.json", self.index, self.count)
    }
}

/// What one shard wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    /// [`FORMAT`].
    pub format: String,
    /// The parsim version that wrote it.
    pub version: String,
    /// [`fingerprint`] of the sweep.
    pub fingerprint: String,
    /// The master seed override (`--seed`), if any; the scenario's own seed is in the
    /// fingerprint.
    pub seed: Option<u64>,
    /// Which shard.
    pub shard: usize,
    /// Of how many.
    pub shards: usize,
    /// Points in the whole sweep.
    pub points: usize,
    /// The shard's points, in order.
    pub report: SweepReport,
}

impl ShardFile {
    /// The file of `shard` of `sweep`, holding `report` (its points).
    pub fn new(sweep: &Sweep, shard: Shard, report: SweepReport) -> ShardFile {
        ShardFile {
            format: FORMAT.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            fingerprint: fingerprint(sweep),
            seed: sweep.seed,
            shard: shard.index,
            shards: shard.count,
            points: sweep.points().len(),
            report,
        }
    }

    /// Writes the file into `dir` (created if needed) atomically: a temporary file, then a
    /// rename. Returns its path.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let name = Shard {
            index: self.shard,
            count: self.shards,
        }
        .file_name();
        let path = dir.join(&name);
        let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&temp, text)?;
        std::fs::rename(&temp, &path)?;
        Ok(path)
    }
}

/// A 64-bit fingerprint, in hex, of what a sweep computes: the scenario text, the fixed
/// assignments, the axes and the layout.
pub fn fingerprint(sweep: &Sweep) -> String {
    let mut canon = sweep.text.clone();
    for a in &sweep.fixed {
        let _ = write!(canon, "\n--set {}={}", a.key, a.value.toml());
    }
    for axis in &sweep.axes {
        let values: Vec<String> = axis.values.iter().map(|v| v.toml()).collect();
        let _ = write!(canon, "\n--vary {}={}", axis.key, values.join("\u{1f}"));
    }
    let _ = write!(canon, "\n{:?}", sweep.layout);
    format!("{:016x}", derive_seed(0, &canon))
}

/// Why shard files could not be merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// A file or the directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not a shard file parsim can read.
    #[error("{} is not a parsim sweep shard: {message}", path.display())]
    NotAShard {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The directory holds no shard file.
    #[error("no shard files (shard-*.json) in {}", .0.display())]
    Empty(PathBuf),
    /// Two files disagree on something every shard of one sweep shares.
    #[error("{} and {} come from different {what}: {first} and {second}", a.display(), b.display())]
    Mixed {
        /// What differs: "sweeps (scenario, assignments or axes)", "seeds", "versions", ...
        what: &'static str,
        /// One file.
        a: PathBuf,
        /// Its value.
        first: String,
        /// The other file.
        b: PathBuf,
        /// Its value.
        second: String,
    },
    /// The same shard appears in several files.
    #[error("shard {shard} appears twice: {} and {}", a.display(), b.display())]
    Duplicate {
        /// The shard.
        shard: usize,
        /// One file.
        a: PathBuf,
        /// The other.
        b: PathBuf,
    },
    /// Shards are missing.
    #[error("missing shard{} {} of {count} (shard-K-of-N.json)", if missing.len() == 1 { "" } else { "s" }, list(missing))]
    Missing {
        /// The missing shard numbers.
        missing: Vec<usize>,
        /// How many shards there should be.
        count: usize,
    },
    /// The points of the shards do not make the whole sweep (a file was edited).
    #[error("the shards hold points {held} of {expected}; a shard file was altered")]
    Points {
        /// Points found.
        held: usize,
        /// Points the sweep has.
        expected: usize,
    },
}

fn list(items: &[usize]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads every `shard-*.json` of `dir`, checks they make one whole sweep, and joins their points
/// into the report the single run would have produced.
pub fn merge(dir: &Path) -> Result<SweepReport, MergeError> {
    let read_err = |path: &Path| {
        let path = path.to_owned();
        move |source| MergeError::Read { path, source }
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_err(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json"))
        })
        .collect();
    paths.sort();
    let mut files: Vec<(PathBuf, ShardFile)> = Vec::with_capacity(paths.len());
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(read_err(&path))?;
        let file: ShardFile = serde_json::from_str(&text).map_err(|e| MergeError::NotAShard {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if file.format != FORMAT {
            return Err(MergeError::NotAShard {
                path,
                message: format!("format {:?}, expected {FORMAT:?}", file.format),
            });
        }
        files.push((path, file));
    }
    let Some((first_path, first)) = files.first() else {
        return Err(MergeError::Empty(dir.to_owned()));
    };
    type Field = fn(&ShardFile) -> String;
    let shared: [(&'static str, Field); 5] = [
        ("versions of parsim", |f| f.version.clone()),
        ("sweeps (scenario, assignments or axes)", |f| {
            f.fingerprint.clone()
        }),
        ("seeds", |f| {
            f.seed
                .map_or_else(|| "the scenario's".to_owned(), |s| s.to_string())
        }),
        ("shard counts", |f| f.shards.to_string()),
        ("point counts", |f| f.points.to_string()),
    ];
    for (path, file) in &files[1..] {
        for (what, field) in shared {
            if field(file) != field(first) {
                return Err(MergeError::Mixed {
                    what,
                    a: first_path.clone(),
                    first: field(first),
                    b: path.clone(),
                    second: field(file),
                });
            }
        }
    }
    let count = first.shards;
    let mut owner: Vec<Option<&Path>> = vec![None; count];
    for (path, file) in &files {
        match owner.get_mut(file.shard) {
            Some(Some(other)) => {
                return Err(MergeError::Duplicate {
                    shard: file.shard,
                    a: other.to_path_buf(),
                    b: path.clone(),
                });
            }
            Some(slot) => *slot = Some(path),
            None => {
                return Err(MergeError::NotAShard {
                    path: path.clone(),
                    message: format!("shard {} of {count}", file.shard),
                });
            }
        }
    }
    let missing: Vec<usize> = (0..count).filter(|&k| owner[k].is_none()).collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing { missing, count });
    }
    let expected = first.points;
    let mut report = first.report.clone();
    report.points = files
        .into_iter()
        .flat_map(|(_, f)| f.report.points)
        .collect();
    report.points.sort_by_key(|p| p.index);
    let whole = report.points.len() == expected
        && report.points.iter().enumerate().all(|(i, p)| p.index == i);
    if !whole {
        return Err(MergeError::Points {
            held: report.points.len(),
            expected,
        });
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_points_round_robin() {
        let s = Shard::parse("2/3").unwrap();
        let owned: Vec<usize> = (0..10).filter(|&i| s.owns(i)).collect();
        assert_eq!(owned, [2, 5, 8]);
        for bad in ["3/3", "1", "a/2", "1/0"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
