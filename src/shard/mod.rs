//! Work split over machines: shard `K` of `N` does the units of work (replications, sweep
//! points, validation cases) whose index is `K` modulo `N`, under exactly the streams one
//! machine would have used for them, and writes one file; `parsim merge` joins the files into
//! the report the single run prints, byte for byte.
//!
//! Every shard file starts with a [`Header`]: the file format, the parsim version, a
//! fingerprint of the work (the scenario text and everything that changes its numbers), the
//! master seed, the shard number and count. Files are written to a temporary name and renamed,
//! so a reader never sees half a file. [`read_all`] refuses files of different work, seeds,
//! versions or shard counts, and missing or duplicated shards, naming them.

pub mod run;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

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

    /// Whether the unit of work with this index belongs to the shard.
    pub fn owns(&self, unit: usize) -> bool {
        unit % self.count == self.index
    }

    /// The shard's file name in the output directory.
    pub fn file_name(&self) -> String {
        format!("shard-{:05}-of-{:05}.json", self.index, self.count)
    }
}

/// What every shard file of one piece of work shares, and which shard it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The file format (which command wrote it, and the layout's version).
    pub format: String,
    /// The parsim version that wrote it.
    pub version: String,
    /// A fingerprint of the work (see [`fingerprint`]).
    pub fingerprint: String,
    /// The master seed override (`--seed`) or the seed used, if any.
    pub seed: Option<u64>,
    /// Which shard.
    pub shard: usize,
    /// Of how many.
    pub shards: usize,
}

impl Header {
    /// The header of `shard` of work in `format` with this fingerprint and seed.
    pub fn new(format: &str, fingerprint: String, seed: Option<u64>, shard: Shard) -> Header {
        Header {
            format: format.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            fingerprint,
            seed,
            shard: shard.index,
            shards: shard.count,
        }
    }
}

/// A shard file: a [`Header`] (flattened into it) and whatever the work needs merged.
pub trait ShardFile: Serialize + DeserializeOwned {
    /// Its header.
    fn header(&self) -> &Header;
}

/// A 64-bit fingerprint, in hex, of a canonical description of some work.
pub fn fingerprint(canon: &str) -> String {
    format!("{:016x}", crate::rng::derive_seed(0, canon))
}

/// Writes `file` into `dir` (created if needed) atomically: a temporary file, then a rename.
/// Returns its path.
pub fn write<T: ShardFile>(file: &T, dir: &Path) -> std::io::Result<PathBuf> {
    crate::files::make_folder(dir).map_err(std::io::Error::other)?;
    let h = file.header();
    let name = Shard {
        index: h.shard,
        count: h.shards,
    }
    .file_name();
    let path = dir.join(&name);
    let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
    crate::files::write_text(&path, &text).map_err(std::io::Error::other)?;
    Ok(path)
}

/// Why shard files could not be merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// A file or the directory could not be read.
    #[error("cannot read {}: {why}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why (in the message, not as a source of its own: the reason once).
        why: String,
    },
    /// A file is not a shard file parsim can read.
    #[error("{} is not a parsim shard of this kind: {message}", path.display())]
    NotAShard {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The directory holds no shard file.
    #[error("no shard files (shard-*.json) in {}", .0.display())]
    Empty(PathBuf),
    /// Two files disagree on something every shard of one piece of work shares.
    #[error("{} and {} come from different {what}: {first} and {second}", a.display(), b.display())]
    Mixed {
        /// What differs: "sweeps (scenario or the files it reads, assignments or axes)", "seeds", "versions", ...
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
    /// The units of work the shards hold do not make the whole (a file was edited).
    #[error(
        "the shards hold {held} {unit} of {expected}, and {unit_one} {which}: a shard file was altered"
    )]
    Incomplete {
        /// What the units are: "points", "replications", "cases".
        unit: &'static str,
        /// One of them: "point", "replication", "case".
        unit_one: &'static str,
        /// Units found.
        held: usize,
        /// Units the work has.
        expected: usize,
        /// What is wrong with the first one that is: "3 appears twice", "3 is missing".
        which: String,
    },
}

/// Checks that the units of work the shards hold, by their indices in order, are each of the
/// `expected` units once.
pub fn check_whole(
    unit: &'static str,
    unit_one: &'static str,
    sorted: &[usize],
    expected: usize,
) -> Result<(), MergeError> {
    let which = (0..expected.max(sorted.len())).find_map(|k| match sorted.get(k) {
        _ if k > 0 && sorted.get(k) == sorted.get(k - 1) => {
            Some(format!("{} appears twice", k - 1))
        }
        Some(&i) if i != k => Some(format!("{k} is missing")),
        None => Some(format!("{k} is missing")),
        Some(_) if k >= expected => Some(format!("{k} is not one of the work's")),
        Some(_) => None,
    });
    match which {
        None => Ok(()),
        Some(which) => Err(MergeError::Incomplete {
            unit,
            unit_one,
            held: sorted.len(),
            expected,
            which,
        }),
    }
}

fn list(items: &[usize]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `shard-*.json` files of `dir`, sorted.
fn shard_paths(dir: &Path) -> Result<Vec<PathBuf>, MergeError> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| MergeError::Read {
            path: dir.to_owned(),
            why: if e.kind() == std::io::ErrorKind::NotADirectory {
                "is not a directory (give the directory the shards wrote to, --out)".to_owned()
            } else {
                e.to_string()
            },
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json"))
        })
        .collect();
    paths.sort();
    Ok(paths)
}

fn read_text(path: &Path) -> Result<String, MergeError> {
    crate::files::read_text(path, crate::files::Limit::Shard).map_err(|e| MergeError::Read {
        path: path.to_owned(),
        why: e.reason(),
    })
}

fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, MergeError> {
    serde_json::from_str(text).map_err(|e| MergeError::NotAShard {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// The format of the first shard file in `dir` (which command wrote the shards).
pub fn format_of(dir: &Path) -> Result<String, MergeError> {
    let paths = shard_paths(dir)?;
    let first = paths
        .first()
        .ok_or_else(|| MergeError::Empty(dir.to_owned()))?;
    let header: Header = parse(first, &read_text(first)?)?;
    Ok(header.format)
}

/// Reads every `shard-*.json` of `dir` as a file of `format`, checks they are the shards of one
/// piece of work (`work` names what the fingerprint covers, for messages), all present once,
/// and returns them in shard order.
pub fn read_all<T: ShardFile>(
    dir: &Path,
    format: &str,
    work: &'static str,
) -> Result<Vec<T>, MergeError> {
    let mut files: Vec<(PathBuf, T)> = Vec::new();
    for path in shard_paths(dir)? {
        let text = read_text(&path)?;
        let header: Header = parse(&path, &text)?;
        if header.format != format {
            return Err(MergeError::NotAShard {
                path,
                message: format!("format {:?}, expected {format:?}", header.format),
            });
        }
        let file = parse(&path, &text)?;
        files.push((path, file));
    }
    let Some((first_path, first)) = files.first() else {
        return Err(MergeError::Empty(dir.to_owned()));
    };
    type Field = fn(&Header) -> String;
    let shared: [(&'static str, Field); 4] = [
        ("versions of parsim", |h| h.version.clone()),
        ("", |h| h.fingerprint.clone()),
        ("seeds", |h| {
            h.seed
                .map_or_else(|| "the scenario's".to_owned(), |s| s.to_string())
        }),
        ("shard counts", |h| h.shards.to_string()),
    ];
    for (path, file) in &files[1..] {
        for (what, field) in shared {
            let (ours, theirs) = (field(first.header()), field(file.header()));
            if ours != theirs {
                return Err(MergeError::Mixed {
                    what: if what.is_empty() { work } else { what },
                    a: first_path.clone(),
                    first: ours,
                    b: path.clone(),
                    second: theirs,
                });
            }
        }
    }
    let count = first.header().shards;
    let mut slots: Vec<Option<(PathBuf, T)>> = (0..count).map(|_| None).collect();
    for (path, file) in files {
        let k = file.header().shard;
        match slots.get_mut(k) {
            Some(Some((other, _))) => {
                return Err(MergeError::Duplicate {
                    shard: k,
                    a: other.clone(),
                    b: path,
                });
            }
            Some(slot) => *slot = Some((path, file)),
            None => {
                return Err(MergeError::NotAShard {
                    path,
                    message: format!("shard {k} of {count}"),
                });
            }
        }
    }
    let missing: Vec<usize> = (0..count).filter(|&k| slots[k].is_none()).collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing { missing, count });
    }
    Ok(slots.into_iter().flatten().map(|(_, f)| f).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_work_round_robin() {
        let s = Shard::parse("2/3").unwrap();
        let owned: Vec<usize> = (0..10).filter(|&i| s.owns(i)).collect();
        assert_eq!(owned, [2, 5, 8]);
        for bad in ["3/3", "1", "a/2", "1/0"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
