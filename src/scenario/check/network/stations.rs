//! `[[class]]` and `[[station]]` elements: their values checked, their names resolved.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use toml::Spanned;

use super::{Checker, MAX_FORK_TASKS, lookup};
use crate::dist::{Dist, DistSpec};
use crate::network::{
    Batch, Capacity, Class, ClassId, ClassKind, Discipline, Features, Network, Preemption, Station,
    StationId, StationKind, WhenFull,
};
use crate::scenario::raw::Element;
use crate::scenario::raw::{
    RawBatch, RawClass, RawKind, RawPreemption, RawScenario, RawStation, RawWhenFull,
};

/// Largest population of a closed class.
const MAX_POPULATION: i64 = 10_000_000;

/// Largest (fixed or mean) batch of a source.
const MAX_BATCH: i64 = 1_000_000;

/// A class; a broken element becomes an open placeholder (its problems are already reported).
pub(super) fn class(
    ck: &mut Checker,
    e: &Element<RawClass>,
    i: usize,
    stations: &HashMap<String, u32>,
) -> Class {
    let name = e.name.clone().unwrap_or_default();
    let Some(c) = &e.value else {
        return Class {
            name,
            kind: ClassKind::Open,
            priority: 0,
        };
    };
    let priority = match c.priority {
        Some(p) if i32::try_from(p).is_err() => {
            ck.add(
                Some(e.field_at("priority")),
                format!("class[{i}].priority"),
                format!(
                    "must be a whole number from {} to {} (smaller is served first), got {p}",
                    i32::MIN,
                    i32::MAX
                ),
            );
            0
        }
        Some(p) => p as i32,
        None => 0,
    };
    let kind = match (c.population, &c.reference) {
        (None, None) => ClassKind::Open,
        (None, Some(_)) => {
            ck.add(
                Some(e.field_at("reference")),
                format!("class[{i}].reference"),
                "only a closed class (with a population) has a reference station",
            );
            ClassKind::Open
        }
        (Some(n), reference) => {
            if !(1..=MAX_POPULATION).contains(&n) {
                ck.add(
                    Some(e.field_at("population")),
                    format!("class[{i}].population"),
                    format!("must be a whole number from 1 to 10^7, got {n}"),
                );
            }
            let reference = match reference {
                Some(r) => lookup(
                    ck,
                    stations,
                    r,
                    e.field_at("reference"),
                    &format!("class[{i}].reference"),
                    "station",
                    StationId,
                ),
                None => {
                    ck.add(
                        Some(e.at()),
                        format!("class[{i}].reference"),
                        "a closed class needs a reference station",
                    );
                    None
                }
            };
            ClassKind::Closed {
                population: n.clamp(1, MAX_POPULATION) as u32,
                reference: reference.unwrap_or(StationId(0)),
            }
        }
    };
    Class {
        name,
        kind,
        priority,
    }
}

/// A station; a broken element becomes a sink placeholder (its problems are already reported).
pub(super) fn station(
    ck: &mut Checker,
    e: &Element<RawStation>,
    i: usize,
    base: &Path,
    stations: &HashMap<String, u32>,
    classes: &[Class],
) -> Station {
    let name = e.name.clone().unwrap_or_default();
    let Some(s) = &e.value else {
        return Station {
            name,
            kind: StationKind::Sink,
            features: Features::default(),
        };
    };
    let path = |field: &str| format!("station[{i}].{field}");
    let allowed: &[&str] = match s.kind {
        RawKind::Delay => &[
            "service",
            "service_by_class",
            "demand",
            "capacity",
            "when_full",
        ],
        RawKind::Ps => &[
            "service",
            "service_by_class",
            "demand",
            "capacity",
            "when_full",
            "rate_by_jobs",
        ],
        RawKind::Fcfs => &[
            "service",
            "service_by_class",
            "servers",
            "demand",
            "priority",
            "capacity",
            "when_full",
            "patience",
            "rate_by_jobs",
        ],
        RawKind::Fork => &["branches", "copies", "to"],
        RawKind::Join => &["fork"],
        RawKind::Source => &["class", "interarrival", "arrivals", "batch"],
        RawKind::Sink => &[],
    };
    let present = [
        ("service", s.service.is_some()),
        ("service_by_class", s.service_by_class.is_some()),
        ("demand", s.demand.is_some()),
        ("servers", s.servers.is_some()),
        ("branches", s.branches.is_some()),
        ("copies", s.copies.is_some()),
        ("to", s.to.is_some()),
        ("fork", s.fork.is_some()),
        ("class", s.class.is_some()),
        ("interarrival", s.interarrival.is_some()),
        ("arrivals", s.arrivals.is_some()),
        ("batch", s.batch.is_some()),
        ("priority", s.priority.is_some()),
        ("capacity", s.capacity.is_some()),
        ("when_full", s.when_full.is_some()),
        ("patience", s.patience.is_some()),
        ("rate_by_jobs", s.rate_by_jobs.is_some()),
    ];
    for (field, given) in present {
        if given && !allowed.contains(&field) {
            ck.add(
                Some(e.field_at(field)),
                path(field),
                format!(
                    "does not apply to a station of kind {:?}{}",
                    s.kind,
                    not_here(field, s.kind)
                ),
            );
        }
    }
    let kind = match s.kind {
        RawKind::Delay => StationKind::Delay {
            service: service_table(ck, s, i, base, classes),
        },
        RawKind::Ps => StationKind::Queue {
            discipline: Discipline::Ps,
            servers: 1,
            service: service_table(ck, s, i, base, classes),
        },
        RawKind::Fcfs => {
            let servers = ck.whole(s.servers, 1, 1, e.field_at("servers"), &path("servers")) as u32;
            StationKind::Queue {
                discipline: Discipline::Fcfs,
                servers,
                service: service_table(ck, s, i, base, classes),
            }
        }
        RawKind::Fork => StationKind::Fork {
            branches: fork_branches(ck, e, s, i, stations),
        },
        RawKind::Join => match &s.fork {
            Some(f) => StationKind::Join {
                fork: lookup(
                    ck,
                    stations,
                    f,
                    e.field_at("fork"),
                    &path("fork"),
                    "station",
                    StationId,
                )
                .unwrap_or(StationId(u32::MAX)),
            },
            None => {
                ck.add(
                    Some(e.at()),
                    path("fork"),
                    "a join must name the fork whose tasks it gathers",
                );
                StationKind::Join {
                    fork: StationId(u32::MAX),
                }
            }
        },
        RawKind::Source => {
            let class = match &s.class {
                Some(c) => {
                    let at = e.field_at("class");
                    let found = classes.iter().position(|k| &k.name == c);
                    if found.is_none() {
                        ck.broken_structure = true;
                        ck.add(Some(at), path("class"), format!("unknown class {c:?}"));
                    }
                    found.map(|k| ClassId(k as u32))
                }
                None => {
                    ck.add(
                        Some(e.at()),
                        path("class"),
                        "a source must name the class it generates",
                    );
                    None
                }
            };
            let interarrival = match (&s.interarrival, &s.arrivals) {
                (Some(spec), None) => dist(ck, spec, base, &path("interarrival")).filter(|d| {
                    let positive = d.mean() > 0.0;
                    if !positive {
                        ck.add(
                            Some(spec.span().start),
                            path("interarrival"),
                            "has mean 0: an infinite arrival rate, every job at one instant without end; give the times between arrivals a positive mean",
                        );
                    }
                    positive
                }),
                (None, Some(spec)) => spec
                    .get_ref()
                    .build()
                    .map_err(|e| {
                        ck.add(
                            Some(spec.span().start),
                            format!("{}.{}", path("arrivals"), e.field),
                            e.message,
                        )
                    })
                    .ok(),
                (Some(_), Some(spec)) => {
                    ck.add(
                        Some(spec.span().start),
                        path("arrivals"),
                        "give `interarrival` (a renewal law) or `arrivals` (a Markovian arrival process), not both",
                    );
                    None
                }
                (None, None) => {
                    ck.add(
                        Some(e.at()),
                        path("interarrival"),
                        "a source needs an interarrival distribution (or an arrival process: arrivals = { process = \"mmpp2\", ... })",
                    );
                    None
                }
            };
            StationKind::Source {
                class: class.unwrap_or(ClassId(0)),
                interarrival: interarrival.unwrap_or(Dist::EXP1),
            }
        }
        RawKind::Sink => StationKind::Sink,
    };
    let features = features(ck, e, s, i, base, &kind);
    Station {
        name,
        kind,
        features,
    }
}

/// Why a station feature does not apply to a kind of station, after "does not apply to a
/// station of kind ...".
fn not_here(field: &str, kind: RawKind) -> &'static str {
    match (field, kind) {
        ("patience", RawKind::Delay) => {
            ": a delay station serves every job at once, so no job waits to lose patience"
        }
        ("patience" | "priority", RawKind::Ps) => {
            ": a processor-sharing station serves every job at once; give it kind = \"fcfs\""
        }
        ("priority", RawKind::Delay) => {
            ": a delay station serves every job at once, so there is no order to set"
        }
        ("priority" | "capacity" | "when_full" | "patience" | "rate_by_jobs", _) => {
            ": it applies to fcfs stations (priority, patience), and to delay and ps stations (capacity, rate_by_jobs on ps)"
        }
        ("batch", _) => ": a batch is the jobs of one arrival of a source",
        _ => "",
    }
}

/// The station's [`Features`], checked: a capacity of at least one job (and the servers), a
/// `when_full` only with a capacity, a positive patience, rate multiples finite and positive
/// (on one server), a batch of at least one job; a BMAP source's sizes as its batch.
fn features(
    ck: &mut Checker,
    e: &Element<RawStation>,
    s: &RawStation,
    i: usize,
    base: &Path,
    kind: &StationKind,
) -> Features {
    let path = |field: &str| format!("station[{i}].{field}");
    let mut f = Features {
        priority: s
            .priority
            .filter(|_| s.kind == RawKind::Fcfs)
            .map(|p| match p {
                RawPreemption::NonPreemptive => Preemption::NonPreemptive,
                RawPreemption::PreemptiveResume => Preemption::PreemptiveResume,
            }),
        ..Features::default()
    };
    let servers = match kind {
        StationKind::Queue { servers, .. } => i64::from(*servers),
        _ => 1,
    };
    match (s.capacity, s.when_full) {
        (Some(k), when) => {
            let least = if matches!(kind, StationKind::Queue { .. }) {
                servers
            } else {
                1
            };
            if !(least..=i64::from(u32::MAX)).contains(&k) {
                let why = if least > 1 {
                    format!("at least its {least} servers")
                } else {
                    "at least 1".to_owned()
                };
                ck.add(
                    Some(e.field_at("capacity")),
                    path("capacity"),
                    format!(
                        "must be a whole number of jobs, {why} (queue and service together), got {k}"
                    ),
                );
            }
            f.capacity = Some(Capacity {
                jobs: k.clamp(1, i64::from(u32::MAX)) as u32,
                when_full: if when == Some(RawWhenFull::Block) {
                    WhenFull::Block
                } else {
                    WhenFull::Lose
                },
            });
        }
        (None, Some(_)) => ck.add(
            Some(e.field_at("when_full")),
            path("when_full"),
            "applies with a `capacity`: what a job that finds the station full does",
        ),
        (None, None) => {}
    }
    if let Some(spec) = &s.patience {
        f.patience = dist(ck, spec, base, &path("patience")).filter(|d| {
            let positive = d.mean() > 0.0;
            if !positive {
                ck.add(
                    Some(spec.span().start),
                    path("patience"),
                    "has mean 0: every job that has to wait would leave at once; give it a positive mean",
                );
            }
            positive
        });
    }
    if let Some(r) = &s.rate_by_jobs {
        let at = e.field_at("rate_by_jobs");
        if r.is_empty() {
            ck.add(
                Some(at),
                path("rate_by_jobs"),
                "is empty: give the rate's multiple with 1, 2, ... jobs present, e.g. [1.0, 1.5, 2.0]",
            );
        } else if let Some((n, x)) = r
            .iter()
            .enumerate()
            .find(|(_, x)| !(x.is_finite() && **x > 0.0))
        {
            ck.add(
                Some(at),
                path(&format!("rate_by_jobs[{n}]")),
                format!("must be a finite number > 0 (a rate's multiple), got {x}"),
            );
        } else if servers > 1 {
            ck.add(
                Some(at),
                path("rate_by_jobs"),
                format!(
                    "applies to a station of one server ({servers} here): the multiples are of the whole station's rate, which is what servers = {servers} already sets"
                ),
            );
        } else {
            f.rate_by_jobs = Some(r.clone());
        }
    }
    if let Some(b) = &s.batch {
        let at = b.span().start;
        match *b.get_ref() {
            RawBatch::Fixed { size } => {
                if (1..=MAX_BATCH).contains(&size) {
                    f.batch = Some(Batch::Fixed(size as u32));
                } else {
                    ck.add(
                        Some(at),
                        path("batch"),
                        format!("must be a whole number of jobs from 1 to {MAX_BATCH}, got {size}"),
                    );
                }
            }
            RawBatch::Geometric { mean } => {
                if mean.is_finite() && (1.0..=MAX_BATCH as f64).contains(&mean) {
                    f.batch = Some(Batch::Geometric { mean });
                } else {
                    ck.add(
                        Some(at),
                        path("batch.mean"),
                        format!(
                            "must be a number from 1 to {MAX_BATCH} (sizes are 1, 2, ...), got {mean}"
                        ),
                    );
                }
            }
        }
    }
    // a BMAP's arrivals carry their sizes
    if let StationKind::Source { interarrival, .. } = kind
        && let Some(m) = interarrival.arrival_process()
        && m.sizes().len() > 1
    {
        if let Some(b) = &s.batch {
            ck.add(
                Some(b.span().start),
                path("batch"),
                "a bmap's arrivals carry their own sizes (d[k - 1] holds the rates of batches of k jobs): remove `batch`",
            );
        } else {
            let (mean, second_moment) = m.batch_moments();
            f.batch = Some(Batch::Markovian {
                mean,
                second_moment,
            });
        }
    }
    f
}

/// A fork's task targets: `branches`, or `copies` of `to`, at most [`MAX_FORK_TASKS`].
fn fork_branches(
    ck: &mut Checker,
    e: &Element<RawStation>,
    s: &RawStation,
    i: usize,
    stations: &HashMap<String, u32>,
) -> Vec<StationId> {
    let path = |field: &str| format!("station[{i}].{field}");
    match (&s.branches, s.copies, &s.to) {
        (Some(list), None, None) if !list.is_empty() => {
            if list.len() as i64 > MAX_FORK_TASKS {
                ck.broken_structure = true;
                ck.add(
                    Some(e.field_at("branches")),
                    path("branches"),
                    format!(
                        "{} branches: a fork may create at most {MAX_FORK_TASKS} tasks per job (each is simulated as a job of its own)",
                        list.len()
                    ),
                );
                return Vec::new();
            }
            list.iter()
                .enumerate()
                .filter_map(|(k, b)| {
                    lookup(
                        ck,
                        stations,
                        b,
                        e.field_at("branches"),
                        &path(&format!("branches[{k}]")),
                        "station",
                        StationId,
                    )
                })
                .collect()
        }
        (None, Some(c), Some(to)) => {
            let at = e.field_at("copies");
            if !(1..=MAX_FORK_TASKS).contains(&c) {
                ck.broken_structure = true;
                ck.add(
                    Some(at),
                    path("copies"),
                    format!(
                        "must be a whole number from 1 to {MAX_FORK_TASKS} (each copy is simulated as a job of its own), got {c}"
                    ),
                );
                return Vec::new();
            }
            lookup(
                ck,
                stations,
                to,
                e.field_at("to"),
                &path("to"),
                "station",
                StationId,
            )
            .map_or(Vec::new(), |t| vec![t; c as usize])
        }
        _ => {
            ck.broken_structure = true;
            ck.add(
                Some(e.at()),
                path("branches"),
                "a fork needs either a non-empty `branches` list or `copies` and `to`",
            );
            Vec::new()
        }
    }
}

fn dist(ck: &mut Checker, spec: &Spanned<DistSpec>, base: &Path, path: &str) -> Option<Dist> {
    spec.get_ref()
        .build(base)
        .map_err(|e| {
            ck.add(
                Some(spec.span().start),
                format!("{path}.{}", e.field),
                e.message,
            )
        })
        .ok()
}

/// The service time of every class at a station (`None` where none is given).
fn service_table(
    ck: &mut Checker,
    s: &RawStation,
    i: usize,
    base: &Path,
    classes: &[Class],
) -> Vec<Option<Dist>> {
    let mut table = vec![None; classes.len()];
    if let Some(demand) = &s.demand {
        let at = demand.span().start;
        let path = format!("station[{i}].demand");
        let d = *demand.get_ref();
        if s.service.is_some() || s.service_by_class.is_some() {
            ck.add(
                Some(at),
                path,
                "give either `demand` (exponential service of mean demand / visits) or `service`/`service_by_class`, not both",
            );
        } else if !(d.is_finite() && d > 0.0) {
            ck.add(
                Some(at),
                path,
                format!("must be a finite number > 0, got {d}"),
            );
            // a stand-in, so that no "no service time here" follows from the same mistake
            table.fill(Some(Dist::EXP1));
        } else {
            // a stand-in: the mean per visit is set once the routing gives the visits
            // (demand_service)
            table.fill(Some(Dist::EXP1));
        }
        return table;
    }
    if let Some(spec) = &s.service {
        let d = dist(ck, spec, base, &format!("station[{i}].service"));
        table.iter_mut().for_each(|t| *t = d.clone());
    }
    for (name, spec) in s.service_by_class.iter().flat_map(BTreeMap::iter) {
        let path = format!("station[{i}].service_by_class.{name}");
        match classes.iter().position(|c| &c.name == name) {
            Some(c) => table[c] = dist(ck, spec, base, &path),
            None => ck.add(
                Some(spec.span().start),
                path,
                format!("unknown class {name:?}"),
            ),
        }
    }
    table
}

/// A source emits jobs of an open class: a closed class has a fixed population that starts at
/// its reference station.
pub(super) fn check_sources(ck: &mut Checker, raw: &RawScenario, net: &Network) {
    for (i, st) in net.stations.iter().enumerate() {
        if let StationKind::Source { class, .. } = st.kind
            && raw.stations[i]
                .value
                .as_ref()
                .is_some_and(|s| s.class.is_some())
            && let Some(c) = net.classes.get(class.index())
            && matches!(c.kind, ClassKind::Closed { .. })
        {
            ck.add(
                Some(raw.stations[i].field_at("class")),
                format!("station[{i}].class"),
                format!(
                    "class {:?} is closed: its population is fixed and starts at its reference station, so no source may emit its jobs",
                    c.name
                ),
            );
        }
    }
}

/// The features that depend on who visits: a priority needs classes to order, and a closed
/// class's jobs can be neither lost (a capacity that loses) nor impatient (they would leave a
/// population that is fixed).
pub(super) fn check_features(ck: &mut Checker, raw: &RawScenario, net: &Network) {
    for (i, st) in net.stations.iter().enumerate() {
        let f = &st.features;
        let visiting: Vec<&Class> = st.kind.service().map_or_else(Vec::new, |t| {
            t.iter()
                .zip(&net.classes)
                .filter(|(d, _)| d.is_some())
                .map(|(_, c)| c)
                .collect()
        });
        let e = &raw.stations[i];
        if f.priority.is_some() && visiting.len() < 2 {
            let who = match visiting.first() {
                Some(c) => format!("only class {:?} visits it", c.name),
                None => "no class visits it".to_owned(),
            };
            ck.add(
                Some(e.field_at("priority")),
                format!("station[{i}].priority"),
                format!(
                    "{who}: there are no classes to order; give the classes that share it `priority` levels in [[class]], or drop `priority`"
                ),
            );
        }
        let forks = net
            .stations
            .iter()
            .any(|s| matches!(s.kind, StationKind::Fork { .. }));
        if forks && (f.capacity.is_some() || f.patience.is_some()) {
            let field = if f.capacity.is_some() {
                "capacity"
            } else {
                "patience"
            };
            ck.add(
                Some(e.field_at(field)),
                format!("station[{i}].{field}"),
                format!(
                    "a {field} in a network with forks is not simulated yet: a task lost or gone would leave its parent waiting at the join forever; see docs/guide/reference/limits.md"
                ),
            );
        }
        let closed = visiting
            .iter()
            .find(|c| matches!(c.kind, ClassKind::Closed { .. }));
        let loses = f.capacity.is_some_and(|c| c.when_full == WhenFull::Lose);
        for (field, given, what, alternative) in [
            (
                "capacity",
                loses,
                "lost when it is full",
                ", or a capacity with when_full = \"block\"",
            ),
            ("patience", f.patience.is_some(), "lost to impatience", ""),
        ] {
            if let (true, Some(c)) = (given, closed) {
                ck.add(
                    Some(e.field_at(field)),
                    format!("station[{i}].{field}"),
                    format!(
                        "closed class {:?} visits it, and its jobs cannot be {what}: a closed population is fixed; only open classes may visit a station with a {field}{alternative}",
                        c.name
                    ),
                );
            }
        }
    }
}

/// Stations given a `demand` instead of a service time: each visiting class's exponential
/// service gets the mean `demand / V`, with `V` its visits per job (open) or per cycle (closed)
/// from the traffic equations, so that visits times mean service is the demand written.
pub(super) fn demand_service(ck: &mut Checker, raw: &RawScenario, net: &mut Network) {
    let given: Vec<(usize, f64, usize)> = raw
        .stations
        .iter()
        .enumerate()
        .filter_map(|(s, e)| {
            let demand = e.value.as_ref()?.demand.as_ref()?;
            Some((s, *demand.get_ref(), demand.span().start))
        })
        .collect();
    if given.is_empty() {
        return;
    }
    let v = match crate::network::visits(net) {
        Ok(v) => v,
        Err(e) => {
            ck.add(Some(0), "route", e.to_string());
            return;
        }
    };
    let rates: Vec<f64> = (0..net.classes.len())
        .map(|c| match net.classes[c].kind {
            ClassKind::Open => crate::network::estimates::arrival_rate(net, c),
            ClassKind::Closed { .. } => 1.0,
        })
        .collect();
    for (s, demand, at) in given {
        if let StationKind::Delay { service } | StationKind::Queue { service, .. } =
            &mut net.stations[s].kind
        {
            for (c, entry) in service.iter_mut().enumerate() {
                let visits = v[c][s] / rates[c];
                if entry.is_some() && visits > 0.0 {
                    match Dist::exponential(demand / visits) {
                        Ok(d) => *entry = Some(d),
                        Err(e) => ck.add(
                            Some(at),
                            format!("station[{s}].demand"),
                            format!(
                                "{demand:?} over {visits:?} visits per job or cycle is a mean service time per visit that {}",
                                e.message
                            ),
                        ),
                    }
                }
            }
        }
    }
}
