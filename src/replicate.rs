//! Independent replications in parallel, with warm-up and the sequential precision rule.
//!
//! Replication `r` draws from streams seeded by `(seed, r, stream)` only, runs on whichever
//! rayon thread picks it up, and its results are collected in index order and reduced serially,
//! so an experiment gives bit-identical numbers on 1 thread or 16.
//!
//! **The MSER-5 pilot grows only as long as it must.** The warm-up is found by MSER-5 on a
//! pilot run on its own streams (index `u64::MAX`, shared with no measured replication). The
//! pilot first makes `length / 8` observations (at least [`MIN_PILOT`]); MSER's cut is accepted
//! when it lies well inside them ([`well_inside`]: not at MSER's limit of half the series and
//! within its first quarter). Otherwise the same run goes on to twice as many observations, and
//! so on up to `length`, where the cut is taken as it is, as it always was. A transient long
//! enough to matter pushes MSER's minimum towards its limit and so lengthens the pilot; a short
//! one is seen as well in the first eighth as in the whole run. The pilot is a function of the
//! seed only, so every share, sweep and thread count settles the same cut.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::engine::network::{RunFault, RunLength, Simulation};
use crate::engine::program::Execution;
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::{class_metric, measure};
use crate::network::Network;
use crate::network::replay::ReplayPlan;
use crate::program::ProgramFault;
use crate::scenario::{Scenario, Warmup, Workload};
use crate::stats::{ConfidenceInterval, Truncation};

/// The worker threads an experiment uses: `opt.threads` (0: one per core), but never more than
/// the replications of one batch or four per core, since more threads only cost (and 5000 of
/// them turned a 0.01 s run into 32 s).
pub fn worker_threads(opt: &Options) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let wanted = if opt.threads == 0 { cores } else { opt.threads };
    wanted
        .min(opt.replications.max(1) as usize)
        .min(4 * cores)
        .max(1)
}

/// The fewest observations of a pilot's first stage (MSER-5 needs at least 10 batches of 5).
pub const MIN_PILOT: u64 = 1000;

/// Settings of one experiment (the scenario's `[run]` after command-line overrides).
#[derive(Clone, Debug)]
pub struct Options {
    /// Master seed.
    pub seed: u64,
    /// Replications to start with.
    pub replications: u32,
    /// Observations per replication after the warm-up.
    pub length: u64,
    /// Warm-up rule.
    pub warmup: Warmup,
    /// Target relative half-width of the intervals of `metrics` at `level`.
    pub precision: Option<f64>,
    /// Confidence level the precision target refers to (0.95 for `run`, 0.99 for `validate`).
    pub level: f64,
    /// The metrics the target applies to: replications are added until every one meets it.
    pub metrics: Vec<String>,
    /// Most replications the precision rule may use.
    pub max_replications: u32,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Most events one replication of a rank program may schedule before it stops with a
    /// diagnosis ([`crate::program::budget::MAX_EVENTS`] unless lowered, as a fuzzer does to
    /// keep every input short).
    pub event_budget: u64,
    /// Raised by another thread to stop the experiment (an interrupt from a notebook).
    pub stop: StopFlag,
}

/// A flag another thread raises to stop an experiment: no replication (or stage of the warm-up
/// pilot) starts after it is raised, those under way finish, and the experiment ends with
/// [`RunError::Stopped`]. Clones share the flag.
#[derive(Clone, Debug, Default)]
pub struct StopFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl StopFlag {
    /// Asks every experiment holding this flag to stop.
    pub fn raise(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// True once [`StopFlag::raise`] was called.
    pub fn raised(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `Err(RunError::Stopped)` once raised.
    pub fn check(&self) -> Result<(), RunError> {
        if self.raised() {
            Err(RunError::Stopped)
        } else {
            Ok(())
        }
    }
}

impl Options {
    /// The scenario's own settings.
    pub fn from_scenario(sc: &Scenario) -> Options {
        let r = &sc.run;
        Options {
            seed: r.seed,
            replications: r.replications,
            length: r.length,
            warmup: r.warmup,
            precision: r.precision,
            level: 0.95,
            metrics: vec![r.metric.clone().unwrap_or_else(|| sc.default_metric())],
            max_replications: r.max_replications,
            threads: 0,
            event_budget: crate::program::budget::MAX_EVENTS,
            stop: StopFlag::default(),
        }
    }
}

/// How the warm-up was settled.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WarmupReport {
    /// Observations discarded at the start of every replication.
    pub observations: u64,
    /// `"mser5"` (found on a pilot replication) or `"fixed"`.
    pub method: &'static str,
    /// True when MSER's minimum sat at its n/2 limit: the pilot was too short to see a steady
    /// state; lengthen the run.
    pub at_limit: bool,
}

impl WarmupReport {
    /// `method` of a warm-up found by MSER-5 on a pilot replication.
    pub const MSER5: &'static str = "mser5";
    /// `method` of a fixed warm-up.
    pub const FIXED: &'static str = "fixed";
    /// `method` for programs, which have no warm-up.
    pub const NONE: &'static str = "none: programs run to completion";

    /// The method named `name`, as the report stores it (for reading reports back).
    pub fn method_named(name: &str) -> Option<&'static str> {
        [Self::MSER5, Self::FIXED, Self::NONE]
            .into_iter()
            .find(|m| *m == name)
    }
}

/// What an experiment tells its progress callback as it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The MSER-5 warm-up pilot started.
    PilotStarted,
    /// The pilot ended: the warm-up is settled and the replications start.
    PilotDone,
    /// Replication `index` finished (or failed) after `events` events.
    Replication {
        /// The replication.
        index: u64,
        /// Its events.
        events: u64,
    },
}

/// Why an experiment could not run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The precision metric is not one the scenario reports: the message names it and the
    /// closest names the scenario has ([`crate::metrics::unknown_metric`]).
    #[error("{0}")]
    UnknownMetric(String),
    /// The thread pool could not be built.
    #[error("cannot start worker threads: {0}")]
    Threads(String),
    /// The run would outlast the clock (see [`crate::time`]): refused before it starts.
    #[error(
        "refused: the run would last about {estimate:.3e} time units ({observations} observations at about {rate:.3e} per time unit), beyond the {horizon:.3e} the clock can represent: its tick is 2^-31 of the smallest mean time ({smallest:e}, at station {station:?}), so the scenario's time scales span too many orders of magnitude for this run length; shorten the run (run.length, --length) or bring the time scales closer together"
    )]
    Horizon {
        /// The estimated length of the longest run (pilot or replication), in time units.
        estimate: f64,
        /// Observations it makes.
        observations: u64,
        /// Observations per time unit estimated from the routing.
        rate: f64,
        /// The clock's range in time units.
        horizon: f64,
        /// The smallest mean time, which sets the tick.
        smallest: f64,
        /// The station it belongs to.
        station: String,
    },
    /// A replication would take too many events (see
    /// `crate::network::estimates::too_many_events`): refused before it starts.
    #[error("refused: {0}")]
    TooLong(String),
    /// A program run stopped before every rank finished (see [`ProgramFault`]).
    #[error("replication {replication}: {fault}")]
    Program {
        /// The replication.
        replication: u64,
        /// What stopped it.
        fault: ProgramFault,
    },
    /// A program run as a dependency graph could not be lowered or did not complete (see
    /// [`crate::engine::schedule::DagFault`]).
    #[error("replication {replication}: {message}")]
    Schedule {
        /// The replication.
        replication: u64,
        /// What went wrong.
        message: String,
    },
    /// The experiment was stopped from outside ([`StopFlag`]) before it finished.
    #[error("stopped before it finished (interrupted): nothing is reported")]
    Stopped,
    /// A run stopped on a fault (see [`RunFault`]).
    #[error("{run}: {fault}")]
    Fault {
        /// Which run: "the warm-up pilot" or "replication r".
        run: String,
        /// What stopped it.
        fault: RunFault,
    },
    /// A run finished but some metric has no value (e.g. a station with no departure after
    /// the warm-up): reported, never printed as a blank.
    #[error("replication {replication} measured nothing for {}: {hint}", metrics.join(", "))]
    Missing {
        /// The replication.
        replication: u64,
        /// The metrics without a value (at most a few are listed).
        metrics: Vec<String>,
        /// What to do about it.
        hint: &'static str,
    },
    /// A percentile histogram overflowed its counters (more than 4·10^9 values).
    #[error(
        "replication {replication}: {count} values of {metric} could not be counted in its histogram (more than 2^32 values); run shorter replications"
    )]
    Clamped {
        /// The replication.
        replication: u64,
        /// The metric.
        metric: String,
        /// Values not counted.
        count: u64,
    },
}

/// The outcome of an experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// Metric names, in report order.
    pub metrics: Vec<String>,
    /// One row per replication, values aligned with `metrics`.
    pub replications: Vec<Vec<f64>>,
    /// The warm-up used.
    pub warmup: WarmupReport,
    /// Events processed over all replications (pilot excluded).
    pub events: u64,
    /// True when a precision target was set and met.
    pub precision_met: Option<bool>,
}

impl Experiment {
    /// The confidence interval of metric `i` at `level` across replications.
    ///
    /// A percentile's interval also covers the histogram's resolution (see
    /// [`crate::metrics::resolution`]): with many observations every replication reports the same
    /// histogram bucket, and the sampling half-width alone would shrink to zero around a value
    /// that is only known to within that bucket.
    pub fn interval(&self, i: usize, level: f64) -> ConfidenceInterval {
        let values: Vec<f64> = self.replications.iter().map(|r| r[i]).collect();
        let mut ci = ConfidenceInterval::from_values(&values, level);
        ci.half_width += crate::metrics::resolution(&self.metrics[i]) * ci.mean.abs();
        ci
    }

    /// The index of a metric by name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m == name)
    }
}

struct Replication {
    values: Vec<(String, f64)>,
    events: u64,
}

fn replicate(sc: &Scenario, opt: &Options, warmup: u64, r: u64) -> Result<Replication, RunError> {
    let (mut values, events) = match &sc.workload {
        Workload::Network(net) => simulate(net, opt, warmup, r)?,
        Workload::Program(prog) => {
            let run = Execution::new(prog, opt.seed, r)
                .with_budget(opt.event_budget)
                .run()
                .map_err(|fault| RunError::Program {
                    replication: r,
                    fault,
                })?;
            (crate::metrics::program::measure(prog, &run), run.events)
        }
        Workload::Schedule(s) => schedule(s, opt, r)?,
    };
    // a model's own metrics (an [spmd]'s speedup, efficiency, cost and overhead) from this
    // replication's
    if let Some(model) = &sc.model {
        let derived = model.derived_metrics(&values, &sc.default_metric());
        values.extend(derived);
    }
    let missing: Vec<String> = values
        .iter()
        .filter(|(_, v)| !v.is_finite())
        .map(|(name, _)| name.clone())
        .take(5)
        .collect();
    if !missing.is_empty() {
        return Err(RunError::Missing {
            replication: r,
            metrics: missing,
            hint: match sc.workload {
                Workload::Network(_) => {
                    "lengthen the run (run.length) so that every station and class is observed after the warm-up"
                }
                Workload::Program(_) | Workload::Schedule(_) => {
                    "the program never did what these metrics measure"
                }
            },
        });
    }
    Ok(Replication { values, events })
}

/// One execution of a schedule (its program lowered with replication `r`'s streams): its
/// metrics and events.
fn schedule(
    s: &crate::schedule::Schedule,
    opt: &Options,
    r: u64,
) -> Result<(Vec<(String, f64)>, u64), RunError> {
    use crate::schedule::Form;
    let fail = |message: String| RunError::Schedule {
        replication: r,
        message,
    };
    let dag: std::borrow::Cow<'_, crate::schedule::dag::Dag> = match &s.form {
        Form::Dag(d) => std::borrow::Cow::Borrowed(d.as_ref()),
        Form::Program(p) => std::borrow::Cow::Owned(
            crate::schedule::lower::lower(p, opt.seed, r).map_err(|e| fail(e.to_string()))?,
        ),
    };
    let outcome =
        crate::engine::schedule::DagExecution::new(&dag, &s.machine).and_then(|ex| ex.run());
    match outcome {
        Ok(run) => Ok((crate::metrics::schedule::measure(s, &run), run.events)),
        Err(mut e) => {
            // naming the operations lowers the program again: not beside this graph
            drop(dag);
            name_sources(s, opt.seed, r, &mut e);
            Err(fail(e.to_string()))
        }
    }
}

/// Names the operations a fault of schedule `s` (execution `r` of `seed`) left waiting by where
/// the user wrote them: a GOAL file's line and label, or a program's operation path.
fn name_sources(
    s: &crate::schedule::Schedule,
    seed: u64,
    r: u64,
    fault: &mut crate::engine::schedule::DagFault,
) {
    use crate::schedule::Form;
    let crate::engine::schedule::DagFault::Incomplete { stuck, .. } = &*fault else {
        return;
    };
    match &s.form {
        Form::Dag(_) => {
            let Some((file, digest)) = &s.goal_file else {
                return;
            };
            let ops: Vec<(u32, u32)> = stuck.iter().map(|x| (x.rank, x.local)).collect();
            let mut places =
                crate::scenario::check::schedule::goal::locate(file, *digest, &ops).into_iter();
            fault.name_sources(|_| places.next().flatten());
        }
        Form::Program(p) => {
            let Ok(origins) = crate::schedule::lower::origins(p, seed, r) else {
                return;
            };
            fault.name_sources(|x| origins.name(p, x.op));
        }
    }
}

/// One replication of a queueing network: its metrics and events.
fn simulate(
    net: &Network,
    opt: &Options,
    warmup: u64,
    r: u64,
) -> Result<(Vec<(String, f64)>, u64), RunError> {
    let mut sim = Simulation::new(net, opt.seed, r);
    sim.replay_stretches(&replay_plan(net, opt), r);
    let summary = sim
        .run(RunLength {
            warmup,
            length: opt.length,
        })
        .map_err(|fault| RunError::Fault {
            run: format!("replication {r}"),
            fault,
        })?;
    if let Some((metric, count)) = clamped(net, sim.recorder()) {
        return Err(RunError::Clamped {
            replication: r,
            metric,
            count,
        });
    }
    Ok((measure(net, sim.recorder(), &summary), summary.events))
}

/// Where each replication of an experiment reads the network's replayed traces (see
/// [`crate::network::replay`]): stretches sized for the warm-up (fixed, or the largest MSER may
/// cut, half the length) and the length, over the replications planned (the precision rule's
/// budget when it is set). A function of the options only, so threads and shards agree.
pub fn replay_plan(net: &Network, opt: &Options) -> ReplayPlan {
    let warmup = match opt.warmup {
        Warmup::Fixed(n) => n,
        Warmup::Mser5 => opt.length / 2,
    };
    let planned = if opt.precision.is_some() {
        opt.max_replications.max(opt.replications)
    } else {
        opt.replications
    };
    ReplayPlan::new(net, warmup.saturating_add(opt.length), u64::from(planned))
}

/// The warnings to print before an experiment: replayed traces too short for the planned
/// replications to be independent.
pub fn warnings(sc: &Scenario, opt: &Options) -> Vec<String> {
    match &sc.workload {
        Workload::Network(net) => replay_plan(net, opt).warnings(
            net,
            if opt.precision.is_some() {
                "the precision rule may run"
            } else {
                "planned"
            },
        ),
        Workload::Program(_) | Workload::Schedule(_) => Vec::new(),
    }
}

/// The first histogram with values it could not count, and how many.
fn clamped(
    net: &crate::network::Network,
    rec: &crate::engine::network::Recorder,
) -> Option<(String, u64)> {
    let classes = rec
        .classes
        .iter()
        .enumerate()
        .map(|(c, r)| (class_metric(net, c), r.percentiles.clamped()));
    let stations = rec.stations.iter().zip(&net.stations).map(|(r, s)| {
        (
            Subject::Station(&s.name).metric(Figure::Response),
            r.percentiles.clamped(),
        )
    });
    classes.chain(stations).find(|(_, n)| *n > 0)
}

/// Refuses an experiment whose longest run (the pilot or a replication) would take more events
/// than a replication may (`crate::network::estimates::too_many_events`), or outlast the
/// clock, estimated from the routing (`crate::network::estimates::observation_rate`); the run
/// itself still stops with [`RunFault::Horizon`] if the estimate was too low.
pub fn check_horizon(sc: &Scenario, opt: &Options) -> Result<(), RunError> {
    // a program's 128-bit clock covers any run it can make
    let Workload::Network(net) = &sc.workload else {
        return Ok(());
    };
    let warmup = match opt.warmup {
        Warmup::Fixed(n) => n,
        Warmup::Mser5 => opt.length / 2,
    };
    let observations = warmup.saturating_add(opt.length);
    let too_long = || match crate::network::estimates::too_many_events(net, observations) {
        Some(why) => Err(RunError::TooLong(why)),
        None => Ok(()),
    };
    let (Some(rate), Some((smallest, station))) = (
        crate::network::estimates::observation_rate(net),
        net.smallest_mean_time(),
    ) else {
        return too_long();
    };
    let estimate = observations as f64 / rate;
    let horizon = net.clock.horizon();
    // margin: a run lasts longer than its mean length by chance, and the rate is an estimate
    if estimate > horizon / 2.0 {
        return Err(RunError::Horizon {
            estimate,
            observations,
            rate,
            horizon,
            smallest,
            station: station.to_owned(),
        });
    }
    too_long()
}

/// Settles the warm-up: fixed, or MSER-5 over a pilot replication (its own streams, index
/// `u64::MAX`, so it shares no draws with the measured replications) that grows in stages
/// until MSER's cut lies well inside it (see the module docs). `progress` is told when the
/// pilot starts and ends.
pub fn settle_warmup(
    sc: &Scenario,
    opt: &Options,
    progress: &(dyn Fn(Step) + Sync),
) -> Result<WarmupReport, RunError> {
    let Workload::Network(net) = &sc.workload else {
        return Ok(WarmupReport {
            observations: 0,
            method: WarmupReport::NONE,
            at_limit: false,
        });
    };
    match opt.warmup {
        Warmup::Fixed(n) => Ok(WarmupReport {
            observations: n,
            method: WarmupReport::FIXED,
            at_limit: false,
        }),
        Warmup::Mser5 => {
            progress(Step::PilotStarted);
            let mut sim = Simulation::new(net, opt.seed, u64::MAX);
            sim.record_series();
            let mut found = None;
            for stage in pilot_stages(opt.length) {
                if let Err(stopped) = opt.stop.check() {
                    progress(Step::PilotDone);
                    return Err(stopped);
                }
                // the same run goes on: its series keeps the earlier observations
                let ran = sim.run(RunLength {
                    warmup: 0,
                    length: stage,
                });
                if let Err(fault) = ran {
                    progress(Step::PilotDone);
                    return Err(RunError::Fault {
                        run: "the warm-up pilot".to_owned(),
                        fault,
                    });
                }
                found = sim.series().and_then(|s| s.truncation());
                if well_inside(found, stage) {
                    break;
                }
            }
            progress(Step::PilotDone);
            Ok(WarmupReport {
                observations: found.map_or(0, |t| t.observations),
                method: WarmupReport::MSER5,
                at_limit: found.is_some_and(|t| t.at_limit),
            })
        }
    }
}

/// The pilot's lengths, in observations: `length / 8` (at least [`MIN_PILOT`], at most
/// `length`), doubled until `length`, which is always the last.
pub fn pilot_stages(length: u64) -> impl Iterator<Item = u64> {
    let first = (length / 8).max(MIN_PILOT).min(length);
    std::iter::successors(Some(first), move |&n| {
        (n < length).then(|| (2 * n).min(length))
    })
}

/// Whether MSER's cut on a pilot of `stage` observations can be taken before the pilot's last
/// stage: found, not at MSER's limit of half the series, and within the first quarter of it
/// (half of MSER's search range), so that the series after it is at least three times as long.
pub fn well_inside(cut: Option<Truncation>, stage: u64) -> bool {
    cut.is_some_and(|t| !t.at_limit && 4 * t.observations <= stage)
}

/// The pool of worker threads an experiment runs on.
fn pool(opt: &Options) -> Result<rayon::ThreadPool, RunError> {
    thread_pool(worker_threads(opt))
}

/// A pool of `threads` worker threads (0: one per core), at most four per core: for several
/// experiments sharing one pool ([`run_on`]), as a sweep's points do.
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, RunError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if threads == 0 { cores } else { threads };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.min(4 * cores))
        .build()
        .map_err(|e| RunError::Threads(e.to_string()))
}

/// Runs the replications `indices` in parallel; their results in the order of `indices`, or
/// the first failure in that order, whatever the threads did.
fn batch(
    pool: &rayon::ThreadPool,
    sc: &Scenario,
    opt: &Options,
    warmup: u64,
    indices: &[u64],
    progress: &(dyn Fn(Step) + Sync),
) -> Result<Vec<Replication>, RunError> {
    // a schedule that draws nothing is the same every time: one execution stands for all (a
    // schedule of a million ranks is then not held once per thread)
    if let Workload::Schedule(s) = &sc.workload
        && s.deterministic()
        && let Some(&first) = indices.first()
    {
        let one = replicate(sc, opt, warmup, first)?;
        return Ok(indices
            .iter()
            .map(|&r| {
                progress(Step::Replication {
                    index: r,
                    events: one.events,
                });
                Replication {
                    values: one.values.clone(),
                    events: one.events,
                }
            })
            .collect());
    }
    let fresh: Vec<Result<Replication, RunError>> = pool.install(|| {
        indices
            .par_iter()
            .map(|&r| {
                opt.stop.check()?;
                let rep = replicate(sc, opt, warmup, r);
                progress(Step::Replication {
                    index: r,
                    events: rep.as_ref().map_or(0, |rep| rep.events),
                });
                rep
            })
            .collect()
    });
    fresh.into_iter().collect()
}

/// Runs the experiment: warm-up, the first batch of replications, then more batches of the
/// same size while the precision target is unmet and the budget allows. `progress` is told
/// when the pilot starts and ends and when each replication finishes.
pub fn run(
    sc: &Scenario,
    opt: &Options,
    progress: &(dyn Fn(Step) + Sync),
) -> Result<Experiment, RunError> {
    run_on(&pool(opt)?, sc, opt, progress)
}

/// [`run`] on the threads of `pool` (`opt.threads` is not consulted), which other work may
/// share: the experiments of a sweep run side by side, their replications interleaved on the
/// same threads. The numbers are the same as [`run`]'s.
pub fn run_on(
    pool: &rayon::ThreadPool,
    sc: &Scenario,
    opt: &Options,
    progress: &(dyn Fn(Step) + Sync),
) -> Result<Experiment, RunError> {
    check_horizon(sc, opt)?;
    let warmup = settle_warmup(sc, opt, progress)?;
    let batch_size = u64::from(opt.replications);
    let mut rows: Vec<Replication> = Vec::new();
    let mut metric_indices: Option<Vec<usize>> = None;
    let mut precision_met = None;
    loop {
        let start = rows.len() as u64;
        let end = (start + batch_size).min(u64::from(opt.max_replications.max(opt.replications)));
        let indices: Vec<u64> = (start..end).collect();
        rows.extend(batch(
            pool,
            sc,
            opt,
            warmup.observations,
            &indices,
            progress,
        )?);
        let Some(target) = opt.precision else { break };
        let indices = match &metric_indices {
            Some(found) => found,
            None => metric_indices.insert(
                opt.metrics
                    .iter()
                    .map(|m| {
                        rows[0]
                            .values
                            .iter()
                            .position(|(n, _)| n == m)
                            .ok_or_else(|| {
                                let known: Vec<String> =
                                    rows[0].values.iter().map(|(n, _)| n.clone()).collect();
                                RunError::UnknownMetric(crate::metrics::unknown_metric(m, &known))
                            })
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        let met = indices.iter().all(|&i| {
            let values: Vec<f64> = rows.iter().map(|r| r.values[i].1).collect();
            ConfidenceInterval::from_values(&values, opt.level).relative_half_width() <= target
        });
        precision_met = Some(met);
        if met || end >= u64::from(opt.max_replications) {
            break;
        }
    }
    let share = Share::new(warmup, (0..).zip(rows).collect());
    Ok(Experiment {
        metrics: share.metrics,
        events: share.rows.iter().map(|r| r.events).sum(),
        replications: share.rows.into_iter().map(|r| r.values).collect(),
        warmup,
        precision_met,
    })
}

/// One replication's metric values (aligned with [`Share::metrics`]) and events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The replication index (its streams are keyed by it).
    pub index: u64,
    /// Its metric values.
    pub values: Vec<f64>,
    /// Events it processed.
    pub events: u64,
}

/// Some of an experiment's replications, run without the precision rule (a shard's share).
#[derive(Clone, Debug)]
pub struct Share {
    /// Metric names, in report order.
    pub metrics: Vec<String>,
    /// The warm-up used (the same in every share: the pilot depends on the seed only).
    pub warmup: WarmupReport,
    /// The replications, in the order asked for.
    pub rows: Vec<Row>,
}

impl Share {
    fn new(warmup: WarmupReport, reps: Vec<(u64, Replication)>) -> Share {
        let metrics = reps
            .first()
            .map(|(_, r)| r.values.iter().map(|(n, _)| n.clone()).collect())
            .unwrap_or_default();
        let rows = reps
            .into_iter()
            .map(|(index, r)| Row {
                index,
                values: r.values.into_iter().map(|(_, v)| v).collect(),
                events: r.events,
            })
            .collect();
        Share {
            metrics,
            warmup,
            rows,
        }
    }
}

/// Runs the replications `indices` only (warm-up settled as [`run`] settles it, no precision
/// rule): what one shard of an experiment does.
pub fn run_share(
    sc: &Scenario,
    opt: &Options,
    indices: &[u64],
    progress: &(dyn Fn(Step) + Sync),
) -> Result<Share, RunError> {
    let pool = pool(opt)?;
    check_horizon(sc, opt)?;
    let warmup = settle_warmup(sc, opt, progress)?;
    let reps = batch(&pool, sc, opt, warmup.observations, indices, progress)?;
    Ok(Share::new(
        warmup,
        indices.iter().copied().zip(reps).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_stop_flag_ends_the_experiment_before_its_next_replication() {
        let sc = crate::scenario::parse(
            include_str!("../scenarios/mm1.toml"),
            std::path::Path::new("mm1.toml"),
        )
        .expect("valid scenario");
        let mut opt = Options::from_scenario(&sc);
        opt.length = 2000;
        opt.replications = 50;
        opt.threads = 1;
        // raised before it starts: not even the warm-up pilot runs
        opt.stop.raise();
        let started = std::sync::atomic::AtomicU64::new(0);
        let count = |_: Step| {
            started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        assert!(matches!(run(&sc, &opt, &count), Err(RunError::Stopped)));
        assert_eq!(started.load(std::sync::atomic::Ordering::Relaxed), 2);
        // raised by the third replication: on one thread, no other replication starts
        opt.stop = StopFlag::default();
        let done = std::sync::atomic::AtomicU64::new(0);
        let stop = opt.stop.clone();
        let third = |step: Step| {
            if let Step::Replication { .. } = step
                && done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 2
            {
                stop.raise();
            }
        };
        assert!(matches!(run(&sc, &opt, &third), Err(RunError::Stopped)));
        assert_eq!(done.load(std::sync::atomic::Ordering::Relaxed), 3);
    }

    #[test]
    fn a_percentile_interval_never_shrinks_below_the_histogram_resolution() {
        let ex = Experiment {
            metrics: vec!["class.jobs.p50".into(), "class.jobs.response".into()],
            replications: vec![vec![3.4688, 5.0]; 10],
            warmup: WarmupReport {
                observations: 0,
                method: "fixed",
                at_limit: false,
            },
            events: 0,
            precision_met: None,
        };
        let p50 = ex.interval(0, 0.95);
        assert!((p50.half_width - 3.4688 * crate::stats::RESOLUTION).abs() < 1e-12);
        assert!(
            p50.contains(3.4657),
            "the true median is within the resolution"
        );
        assert_eq!(ex.interval(1, 0.95).half_width, 0.0);
    }

    #[test]
    fn the_pilot_starts_at_an_eighth_and_doubles_up_to_the_length() {
        let stages = |n| pilot_stages(n).collect::<Vec<u64>>();
        assert_eq!(stages(50_000), [6250, 12_500, 25_000, 50_000]);
        assert_eq!(stages(10_000), [1250, 2500, 5000, 10_000]);
        assert_eq!(stages(3000), [1000, 2000, 3000]);
        assert_eq!(stages(600), [600]);
        assert_eq!(stages(0), [0]);
    }

    #[test]
    fn a_cut_is_taken_early_only_well_inside_the_pilot() {
        let cut = |observations, at_limit| {
            Some(Truncation {
                observations,
                total: 1000,
                at_limit,
            })
        };
        assert!(well_inside(cut(250, false), 1000));
        assert!(well_inside(cut(0, false), 1000));
        assert!(
            !well_inside(cut(255, false), 1000),
            "past the first quarter"
        );
        assert!(!well_inside(cut(100, true), 1000), "at MSER's limit");
        assert!(!well_inside(None, 1000), "too few batches");
    }
}
