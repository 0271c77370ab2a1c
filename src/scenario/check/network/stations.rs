//! `[[class]]` and `[[station]]` elements: their values checked, their names resolved.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use toml::Spanned;

use super::{Checker, MAX_FORK_TASKS, lookup};
use crate::dist::{Dist, DistSpec};
use crate::network::{
    Class, ClassId, ClassKind, Discipline, Network, Station, StationId, StationKind,
};
use crate::scenario::raw::Element;
use crate::scenario::raw::{RawClass, RawKind, RawScenario, RawStation};

/// Largest population of a closed class.
const MAX_POPULATION: i64 = 10_000_000;

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
        };
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
    Class { name, kind }
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
        };
    };
    let path = |field: &str| format!("station[{i}].{field}");
    let allowed: &[&str] = match s.kind {
        RawKind::Delay | RawKind::Ps => &["service", "service_by_class", "demand"],
        RawKind::Fcfs => &["service", "service_by_class", "servers", "demand"],
        RawKind::Fork => &["branches", "copies", "to"],
        RawKind::Join => &["fork"],
        RawKind::Source => &["class", "interarrival"],
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
    ];
    for (field, given) in present {
        if given && !allowed.contains(&field) {
            ck.add(
                Some(e.field_at(field)),
                path(field),
                format!("does not apply to a station of kind {:?}", s.kind),
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
            let interarrival = match &s.interarrival {
                Some(spec) => dist(ck, spec, base, &path("interarrival")).filter(|d| {
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
                None => {
                    ck.add(
                        Some(e.at()),
                        path("interarrival"),
                        "a source needs an interarrival distribution",
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
    Station { name, kind }
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
