//! `parsim run --shard K/N`: shard `K` runs the replications whose index is `K` modulo `N`,
//! each on the streams the single run gives it, after the same warm-up (a fixed cut, or MSER-5
//! on the pilot replication, which depends on the seed only, so every shard finds the same
//! cut). Its file holds, per replication, the metric values the report's intervals are
//! computed from and the events; [`merge`] rebuilds the single run's report from them.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Header, MergeError, Shard, read_all};
use crate::replicate::{self, Experiment, Options, Row, Share, WarmupReport};
use crate::report::{LEVEL, RunReport};
use crate::scenario::assign::Assignment;
use crate::scenario::{Scenario, Warmup};

/// The format tag of a run shard file.
pub const FORMAT: &str = "parsim-run-shard/1";

/// What one shard of `parsim run` wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunShard {
    /// Format, version, fingerprint, seed, shard.
    #[serde(flatten)]
    pub header: Header,
    /// The scenario's title.
    pub scenario: String,
    /// Its file, as the single run names it.
    pub file: String,
    /// The single run's scenario hash and run id, so the merged report names the same run.
    pub scenario_hash: String,
    /// See `scenario_hash`.
    pub run_id: String,
    /// Whether it is a rank program.
    pub program: bool,
    /// Replications of the whole run.
    pub replications: u32,
    /// Observations measured per replication.
    pub length: u64,
    /// The warm-up the shard used.
    pub warmup: StoredWarmup,
    /// Metric names, aligned with every row's values.
    pub metrics: Vec<String>,
    /// The shard's replications.
    pub rows: Vec<Row>,
    /// The master seed the run's streams were keyed from with its `--set` assignments (the
    /// header's seed is the keyed one); the merged report shows it as the single run does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_seed: Option<u64>,
}

impl super::ShardFile for RunShard {
    fn header(&self) -> &Header {
        &self.header
    }
}

/// A [`WarmupReport`] as a shard file stores it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredWarmup {
    /// Observations discarded.
    pub observations: u64,
    /// How it was settled.
    pub method: String,
    /// Whether MSER's minimum sat at its limit.
    pub at_limit: bool,
}

impl std::fmt::Display for StoredWarmup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} observations cut by {}{}",
            self.observations,
            self.method,
            if self.at_limit { " (at its limit)" } else { "" }
        )
    }
}

/// The replication indices shard `shard` runs out of `replications`.
pub fn indices(shard: Shard, replications: u32) -> Vec<u64> {
    (0..u64::from(replications))
        .filter(|&r| shard.owns(r as usize))
        .collect()
}

/// A fingerprint of what a run computes: the scenario's hash (its text and every file it read,
/// [`crate::hash::scenario_hash`]; for a GOAL file, the machine its flags give too), the
/// `--set` assignments and the options that change its numbers (replications, length,
/// warm-up).
pub fn fingerprint(scenario_hash: &str, assignments: &[Assignment], opt: &Options) -> String {
    let mut canon = format!("scenario {scenario_hash}");
    for a in assignments {
        let _ = write!(canon, "\n--set {a}");
    }
    let _ = write!(
        canon,
        "\nreplications {} length {} warmup {:?}",
        opt.replications, opt.length, opt.warmup
    );
    super::fingerprint(&canon)
}

impl RunShard {
    /// The file of `shard` of the run of `sc` (with `assignments` applied) under `opt`, holding
    /// `share`.
    pub fn new(
        sc: &Scenario,
        assignments: &[Assignment],
        opt: &Options,
        shard: Shard,
        share: Share,
    ) -> RunShard {
        let w = share.warmup;
        RunShard {
            header: Header::new(
                FORMAT,
                fingerprint(&sc.text_hash, assignments, opt),
                Some(opt.seed),
                shard,
            ),
            scenario: sc.name.clone(),
            file: sc.path.display().to_string(),
            scenario_hash: sc.text_hash.clone(),
            run_id: crate::provenance::Provenance::new(&sc.text_hash, opt).run_id,
            program: sc.runs_to_completion(),
            replications: opt.replications,
            length: opt.length,
            warmup: StoredWarmup {
                observations: w.observations,
                method: w.method.to_owned(),
                at_limit: w.at_limit,
            },
            metrics: share.metrics,
            rows: share.rows,
            master_seed: None,
        }
    }
}

/// Reads every `shard-*.json` of `dir`, checks they make one whole run, and rebuilds the report
/// the single run would have printed.
pub fn merge(dir: &Path) -> Result<RunReport, MergeError> {
    let files: Vec<RunShard> = read_all(
        dir,
        FORMAT,
        "runs (scenario or the files it reads, the machine flags of a GOAL file, --set, replications, length or warm-up)",
    )?;
    let first = &files[0];
    let shard_path = |f: &RunShard| {
        dir.join(
            Shard {
                index: f.header.shard,
                count: f.header.shards,
            }
            .file_name(),
        )
    };
    for f in &files[1..] {
        if f.warmup != first.warmup || f.metrics != first.metrics {
            let (what, ours, theirs) = if f.warmup != first.warmup {
                (
                    "warm-up cuts",
                    first.warmup.to_string(),
                    f.warmup.to_string(),
                )
            } else {
                (
                    "lists of metrics",
                    first.metrics.join(", "),
                    f.metrics.join(", "),
                )
            };
            return Err(MergeError::Mixed {
                what,
                a: shard_path(first),
                first: ours,
                b: shard_path(f),
                second: theirs,
            });
        }
    }
    let method =
        WarmupReport::method_named(&first.warmup.method).ok_or_else(|| MergeError::NotAShard {
            path: shard_path(first),
            message: format!("unknown warm-up method {:?}", first.warmup.method),
        })?;
    let warmup = WarmupReport {
        observations: first.warmup.observations,
        method,
        at_limit: first.warmup.at_limit,
    };
    let expected = first.replications as usize;
    let mut rows: Vec<&Row> = files.iter().flat_map(|f| &f.rows).collect();
    rows.sort_by_key(|r| r.index);
    let indices: Vec<usize> = rows.iter().map(|r| r.index as usize).collect();
    super::check_whole("replications", "replication", &indices, expected)?;
    if let Some(r) = rows.iter().find(|r| r.values.len() != first.metrics.len()) {
        return Err(MergeError::NotAShard {
            path: dir.to_owned(),
            message: format!(
                "replication {} holds {} values for the {} metrics",
                r.index,
                r.values.len(),
                first.metrics.len()
            ),
        });
    }
    let ex = Experiment {
        metrics: first.metrics.clone(),
        replications: rows.iter().map(|r| r.values.clone()).collect(),
        warmup,
        events: rows.iter().map(|r| r.events).sum(),
        precision_met: None,
    };
    let opt = Options {
        seed: first.header.seed.unwrap_or_default(),
        replications: first.replications,
        length: first.length,
        warmup: Warmup::Fixed(warmup.observations),
        precision: None,
        level: LEVEL,
        metrics: Vec::new(),
        max_replications: first.replications,
        threads: 0,
        event_budget: crate::program::budget::MAX_EVENTS,
        stop: replicate::StopFlag::default(),
    };
    let report = RunReport::of(
        first.scenario.clone(),
        first.file.clone(),
        crate::provenance::Provenance {
            run_id: first.run_id.clone(),
            ..crate::provenance::Provenance::new(&first.scenario_hash, &opt)
        },
        first.program,
        &opt,
        &ex,
    );
    Ok(match first.master_seed {
        Some(master) => report.keyed_from(master),
        None => report,
    })
}
