//! The check stage: raw scenario to [`Network`] and [`RunConfig`], collecting every problem.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

use toml::Spanned;

use super::raw::{
    RawBranch, RawKind, RawPolicy, RawRoute, RawRun, RawScenario, RawStation, RawValidate,
};
use super::{RunConfig, ValidateConfig, Warmup};
use crate::dist::{Dist, DistSpec};
use crate::model::{
    Class, ClassId, ClassKind, Discipline, Network, Routing, Rule, Station, StationId, StationKind,
    Target, visits,
};

/// Problems found: byte offset (for the line), field path, message.
pub(super) type Found = Vec<(Option<usize>, String, String)>;

/// What a successful check yields: network, run settings, validation settings, name,
/// description.
type Built = (
    Network,
    RunConfig,
    ValidateConfig,
    Option<String>,
    Option<String>,
);

const EXIT: &str = "exit";

#[derive(Default)]
struct Checker {
    found: Found,
}

impl Checker {
    fn add(&mut self, at: Option<usize>, path: impl Into<String>, message: impl Into<String>) {
        self.found.push((at, path.into(), message.into()));
    }

    fn dist(&mut self, spec: &Spanned<DistSpec>, base: &Path, path: &str) -> Option<Dist> {
        spec.get_ref()
            .build(base)
            .map_err(|e| {
                self.add(
                    Some(spec.span().start),
                    format!("{path}.{}", e.field),
                    e.message,
                )
            })
            .ok()
    }

    fn whole(&mut self, v: Option<i64>, default: i64, min: i64, at: usize, path: &str) -> u64 {
        let v = v.unwrap_or(default);
        if v < min {
            self.add(
                Some(at),
                path,
                format!("must be a whole number >= {min}, got {v}"),
            );
        }
        v.max(min) as u64
    }
}

pub(super) fn build(raw: RawScenario, base: &Path) -> Result<Built, Found> {
    let mut ck = Checker::default();
    let run = run_config(&mut ck, raw.run.as_ref());
    let classes = names(
        &mut ck,
        raw.classes
            .iter()
            .map(|c| (c.span().start, c.get_ref().name.as_str())),
        "class",
    );
    let stations = names(
        &mut ck,
        raw.stations
            .iter()
            .map(|s| (s.span().start, s.get_ref().name.as_str())),
        "station",
    );
    let class_list = raw
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| class(&mut ck, c, i, &stations))
        .collect::<Vec<_>>();
    let station_list = raw
        .stations
        .iter()
        .enumerate()
        .map(|(i, s)| station(&mut ck, s, i, base, &stations, &classes))
        .collect::<Vec<_>>();
    let mut net = Network {
        stations: station_list,
        classes: class_list,
        routing: Routing::new(raw.classes.len(), raw.stations.len()),
        groups: Vec::new(),
        clock: Default::default(),
    };
    if net.classes.is_empty() {
        ck.add(None, "class", "the scenario has no [[class]]");
    }
    let declared = routes(&mut ck, &raw.routes, &mut net, &stations, &classes);
    check_forks(&mut ck, &raw, &net);
    let reached = check_reach(&mut ck, &raw, &net, &declared);
    prune_service(&mut net, &reached);
    net.set_clock();
    let validate = validate_config(&mut ck, raw.validate.as_ref());
    if ck.found.is_empty() {
        check_stability(&mut ck, &raw, &net);
        check_metric_names(&mut ck, &raw, &run, &validate, &net);
    }
    if ck.found.is_empty() {
        Ok((net, run, validate, raw.name, raw.description))
    } else {
        ck.found.sort_by_key(|p| p.0);
        Err(ck.found)
    }
}

fn run_config(ck: &mut Checker, raw: Option<&Spanned<RawRun>>) -> RunConfig {
    let at = raw.map_or(0, |r| r.span().start);
    let empty = RawRun {
        replications: None,
        length: None,
        warmup: None,
        seed: None,
        precision: None,
        metric: None,
        max_replications: None,
    };
    let r = raw.map_or(&empty, |r| r.get_ref());
    let replications = ck.whole(r.replications, 10, 2, at, "run.replications") as u32;
    let max_replications = ck.whole(
        r.max_replications,
        200.max(i64::from(replications)),
        2,
        at,
        "run.max_replications",
    ) as u32;
    if max_replications < replications {
        ck.add(
            Some(at),
            "run.max_replications",
            format!("must be >= run.replications ({replications})"),
        );
    }
    if let Some(p) = r.precision
        && !(p > 0.0 && p < 1.0)
    {
        ck.add(
            Some(at),
            "run.precision",
            format!("must be a relative half-width in (0, 1), got {p}"),
        );
    }
    if let Some(seed) = r.seed
        && seed < 0
    {
        ck.add(Some(at), "run.seed", format!("must be >= 0, got {seed}"));
    }
    RunConfig {
        replications,
        length: ck.whole(r.length, 20_000, 1, at, "run.length"),
        warmup: r.warmup.map_or(Warmup::Mser5, |w| {
            Warmup::Fixed(ck.whole(Some(w), 0, 0, at, "run.warmup"))
        }),
        seed: r.seed.unwrap_or(1).max(0) as u64,
        precision: r.precision,
        metric: r.metric.clone(),
        max_replications,
    }
}

/// `[validate]`, with its defaults (every predicted metric, a 1% precision target, no tolerance).
fn validate_config(ck: &mut Checker, raw: Option<&Spanned<RawValidate>>) -> ValidateConfig {
    let Some(raw) = raw else {
        return ValidateConfig {
            precision: 0.01,
            ..ValidateConfig::default()
        };
    };
    let at = Some(raw.span().start);
    let v = raw.get_ref();
    let precision = v.precision.unwrap_or(0.01);
    if !(precision > 0.0 && precision < 1.0) {
        ck.add(
            at,
            "validate.precision",
            format!("must be a relative half-width in (0, 1), got {precision}"),
        );
    }
    if let Some(t) = v.tolerance
        && !(t > 0.0 && t.is_finite())
    {
        ck.add(
            at,
            "validate.tolerance",
            format!("must be a positive relative error, got {t}"),
        );
    }
    if v.metrics.as_ref().is_some_and(Vec::is_empty) {
        ck.add(
            at,
            "validate.metrics",
            "is empty: leave it out to compare every predicted metric",
        );
    }
    ValidateConfig {
        metrics: v.metrics.clone(),
        precision,
        tolerance: v.tolerance,
    }
}

/// `run.metric` and `validate.metrics` must name metrics the network reports.
fn check_metric_names(
    ck: &mut Checker,
    raw: &RawScenario,
    run: &RunConfig,
    validate: &ValidateConfig,
    net: &Network,
) {
    let known = crate::metrics::names(net);
    let mut check = |name: &str, at: Option<usize>, path: &str| {
        if !known.iter().any(|k| k == name) {
            ck.add(
                at,
                path,
                format!(
                    "unknown metric {name:?}; this network reports e.g. {}",
                    known[..known.len().min(4)].join(", ")
                ),
            );
        }
    };
    if let Some(m) = &run.metric {
        check(m, raw.run.as_ref().map(|r| r.span().start), "run.metric");
    }
    for (i, m) in validate.metrics.iter().flatten().enumerate() {
        check(
            m,
            raw.validate.as_ref().map(|v| v.span().start),
            &format!("validate.metrics[{i}]"),
        );
    }
}

/// Checks that names are unique and not empty, and maps them to indices.
fn names<'a>(
    ck: &mut Checker,
    items: impl Iterator<Item = (usize, &'a str)>,
    what: &str,
) -> HashMap<String, u32> {
    let mut map = HashMap::new();
    for (i, (at, name)) in items.enumerate() {
        if name.is_empty() || name == EXIT || name.contains(char::is_whitespace) {
            ck.add(
                Some(at),
                format!("{what}[{i}].name"),
                format!("{name:?} is not a usable name (empty, blank or `exit`)"),
            );
        }
        if map.insert(name.to_owned(), i as u32).is_some() {
            ck.add(
                Some(at),
                format!("{what}[{i}].name"),
                format!("a {what} named {name:?} is already defined"),
            );
        }
    }
    map
}

fn lookup<T: Copy>(
    ck: &mut Checker,
    map: &HashMap<String, u32>,
    name: &str,
    at: usize,
    path: &str,
    what: &str,
    wrap: fn(u32) -> T,
) -> Option<T> {
    match map.get(name) {
        Some(&i) => Some(wrap(i)),
        None => {
            ck.add(Some(at), path, format!("unknown {what} {name:?}"));
            None
        }
    }
}

fn class(
    ck: &mut Checker,
    raw: &Spanned<crate::scenario::raw::RawClass>,
    i: usize,
    stations: &HashMap<String, u32>,
) -> Class {
    let (at, c) = (raw.span().start, raw.get_ref());
    let kind = match (c.population, &c.reference) {
        (None, None) => ClassKind::Open,
        (None, Some(_)) => {
            ck.add(
                Some(at),
                format!("class[{i}].reference"),
                "only a closed class (with a population) has a reference station",
            );
            ClassKind::Open
        }
        (Some(n), reference) => {
            if !(1..=10_000_000).contains(&n) {
                ck.add(
                    Some(at),
                    format!("class[{i}].population"),
                    format!("must be a whole number from 1 to 10^7, got {n}"),
                );
            }
            let reference = match reference {
                Some(r) => lookup(
                    ck,
                    stations,
                    r,
                    at,
                    &format!("class[{i}].reference"),
                    "station",
                    StationId,
                ),
                None => {
                    ck.add(
                        Some(at),
                        format!("class[{i}].reference"),
                        "a closed class needs a reference station",
                    );
                    None
                }
            };
            ClassKind::Closed {
                population: n.clamp(1, 10_000_000) as u32,
                reference: reference.unwrap_or(StationId(0)),
            }
        }
    };
    Class {
        name: c.name.clone(),
        kind,
    }
}

fn station(
    ck: &mut Checker,
    raw: &Spanned<RawStation>,
    i: usize,
    base: &Path,
    stations: &HashMap<String, u32>,
    classes: &HashMap<String, u32>,
) -> Station {
    let (at, s) = (raw.span().start, raw.get_ref());
    let path = |field: &str| format!("station[{i}].{field}");
    let allowed: &[&str] = match s.kind {
        RawKind::Delay | RawKind::Ps => &["service", "service_by_class"],
        RawKind::Fcfs => &["service", "service_by_class", "servers"],
        RawKind::Fork => &["branches", "copies", "to"],
        RawKind::Join => &["fork"],
        RawKind::Source => &["class", "interarrival"],
        RawKind::Sink => &[],
    };
    let present = [
        ("service", s.service.is_some()),
        ("service_by_class", s.service_by_class.is_some()),
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
                Some(at),
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
            let servers = ck.whole(s.servers, 1, 1, at, &path("servers")) as u32;
            StationKind::Queue {
                discipline: Discipline::Fcfs,
                servers,
                service: service_table(ck, s, i, base, classes),
            }
        }
        RawKind::Fork => {
            let branches = match (&s.branches, s.copies, &s.to) {
                (Some(list), None, None) if !list.is_empty() => list
                    .iter()
                    .enumerate()
                    .filter_map(|(k, b)| {
                        lookup(
                            ck,
                            stations,
                            b,
                            at,
                            &path(&format!("branches[{k}]")),
                            "station",
                            StationId,
                        )
                    })
                    .collect(),
                (None, Some(c), Some(to)) => {
                    let copies = ck.whole(Some(c), 1, 1, at, &path("copies")) as usize;
                    lookup(ck, stations, to, at, &path("to"), "station", StationId)
                        .map_or(Vec::new(), |t| vec![t; copies])
                }
                _ => {
                    ck.add(
                        Some(at),
                        path("branches"),
                        "a fork needs either a non-empty `branches` list or `copies` and `to`",
                    );
                    Vec::new()
                }
            };
            StationKind::Fork { branches }
        }
        RawKind::Join => match &s.fork {
            Some(f) => StationKind::Join {
                fork: lookup(ck, stations, f, at, &path("fork"), "station", StationId)
                    .unwrap_or(StationId(0)),
            },
            None => {
                ck.add(
                    Some(at),
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
                Some(c) => lookup(ck, classes, c, at, &path("class"), "class", ClassId),
                None => {
                    ck.add(
                        Some(at),
                        path("class"),
                        "a source must name the class it generates",
                    );
                    None
                }
            };
            let interarrival = match &s.interarrival {
                Some(spec) => ck.dist(spec, base, &path("interarrival")),
                None => {
                    ck.add(
                        Some(at),
                        path("interarrival"),
                        "a source needs an interarrival distribution",
                    );
                    None
                }
            };
            StationKind::Source {
                class: class.unwrap_or(ClassId(0)),
                interarrival: interarrival.unwrap_or(Dist::Exponential { mean: 1.0 }),
            }
        }
        RawKind::Sink => StationKind::Sink,
    };
    Station {
        name: s.name.clone(),
        kind,
    }
}

fn service_table(
    ck: &mut Checker,
    s: &RawStation,
    i: usize,
    base: &Path,
    classes: &HashMap<String, u32>,
) -> Vec<Option<Dist>> {
    let mut table = vec![None; classes.len()];
    if let Some(spec) = &s.service {
        let d = ck.dist(spec, base, &format!("station[{i}].service"));
        table.iter_mut().for_each(|t| *t = d.clone());
    }
    for (name, spec) in s.service_by_class.iter().flat_map(BTreeMap::iter) {
        let path = format!("station[{i}].service_by_class.{name}");
        match classes.get(name) {
            Some(&c) => table[c as usize] = ck.dist(spec, base, &path),
            None => ck.add(
                Some(spec.span().start),
                path,
                format!("unknown class {name:?}"),
            ),
        }
    }
    table
}

/// Builds the routing rules; returns every (class, from) pair a route was written for, valid or
/// not, so later checks do not report a missing route where a broken one was already reported.
fn routes(
    ck: &mut Checker,
    raw: &[Spanned<RawRoute>],
    net: &mut Network,
    stations: &HashMap<String, u32>,
    classes: &HashMap<String, u32>,
) -> HashMap<(ClassId, StationId), usize> {
    let mut seen = HashMap::new();
    for (i, r) in raw.iter().enumerate() {
        let (at, route) = (r.span().start, r.get_ref());
        let path = |f: &str| format!("route[{i}].{f}");
        let class = lookup(
            ck,
            classes,
            &route.class,
            at,
            &path("class"),
            "class",
            ClassId,
        );
        let from = lookup(
            ck,
            stations,
            &route.from,
            at,
            &path("from"),
            "station",
            StationId,
        );
        let (Some(class), Some(from)) = (class, from) else {
            continue;
        };
        if let Some(prev) = seen.insert((class, from), i) {
            ck.add(
                Some(at),
                path("from"),
                format!(
                    "route[{prev}] already routes class {:?} from {:?}",
                    route.class, route.from
                ),
            );
        }
        match &net.station(from).kind {
            StationKind::Fork { .. } => ck.add(
                Some(at),
                path("from"),
                "a fork sends its tasks to its branches; route the job from its join",
            ),
            StationKind::Sink => ck.add(Some(at), path("from"), "nothing leaves a sink"),
            _ => {}
        }
        let target = |ck: &mut Checker,
                      name: &str,
                      to_class: &Option<String>,
                      field: &str|
         -> Option<Target> {
            let tc = match to_class {
                Some(n) => lookup(
                    ck,
                    classes,
                    n,
                    at,
                    &path(&format!("{field}_class")),
                    "class",
                    ClassId,
                )?,
                None => class,
            };
            if name == EXIT {
                if matches!(net.classes[tc.index()].kind, ClassKind::Closed { .. }) {
                    ck.add(
                        Some(at),
                        path(field),
                        format!(
                            "class {:?} is closed: its jobs cannot exit",
                            net.classes[tc.index()].name
                        ),
                    );
                }
                return Some(Target::Exit);
            }
            let to = lookup(ck, stations, name, at, &path(field), "station", StationId)?;
            if matches!(net.station(to).kind, StationKind::Source { .. }) {
                ck.add(
                    Some(at),
                    path(field),
                    format!("{name:?} is a source: nothing can be routed into it"),
                );
            }
            Some(Target::Station(to, tc))
        };
        let rule = match (&route.to, &route.branches, route.policy, &route.among) {
            (Some(to), None, None, None) => target(ck, to, &route.to_class, "to").map(Rule::Fixed),
            (None, Some(branches), None, None) if route.to_class.is_none() => random_rule(
                ck,
                branches,
                &path,
                &mut |ck, b: &RawBranch, k| {
                    target(ck, &b.to, &b.to_class, &format!("branches[{k}].to"))
                },
                at,
            ),
            (None, None, Some(policy), Some(among)) if !among.is_empty() => {
                let tc = match &route.to_class {
                    Some(n) => lookup(ck, classes, n, at, &path("to_class"), "class", ClassId),
                    None => Some(class),
                };
                let members: Vec<StationId> = among
                    .iter()
                    .enumerate()
                    .filter_map(|(k, n)| {
                        let t = target(ck, n, &None, &format!("among[{k}]"));
                        match t {
                            Some(Target::Station(s, _)) => Some(s),
                            Some(Target::Exit) => {
                                ck.add(
                                    Some(at),
                                    path(&format!("among[{k}]")),
                                    "`exit` cannot be one of a policy's stations",
                                );
                                None
                            }
                            None => None,
                        }
                    })
                    .collect();
                tc.filter(|_| members.len() == among.len()).map(|tc| {
                    let group = net
                        .groups
                        .iter()
                        .position(|g| *g == members)
                        .unwrap_or_else(|| {
                            net.groups.push(members);
                            net.groups.len() - 1
                        }) as u32;
                    match policy {
                        RawPolicy::Jsq => Rule::ShortestQueue { group, class: tc },
                        RawPolicy::RoundRobin => Rule::RoundRobin { group, class: tc },
                    }
                })
            }
            _ => {
                ck.add(Some(at), path("to"), "give exactly one of `to` (with optional `to_class`), `branches`, or `policy` with a non-empty `among`");
                None
            }
        };
        if let Some(rule) = rule {
            net.routing.set(class, from, rule);
        }
    }
    seen
}

type BranchTarget<'a> = dyn FnMut(&mut Checker, &RawBranch, usize) -> Option<Target> + 'a;

fn random_rule(
    ck: &mut Checker,
    branches: &[RawBranch],
    path: &dyn Fn(&str) -> String,
    target: &mut BranchTarget<'_>,
    at: usize,
) -> Option<Rule> {
    let mut cumulative = Vec::new();
    let mut targets = Vec::new();
    let mut sum = 0.0;
    let mut ok = !branches.is_empty();
    for (k, b) in branches.iter().enumerate() {
        if !(b.p.is_finite() && (0.0..=1.0).contains(&b.p)) {
            ck.add(
                Some(at),
                path(&format!("branches[{k}].p")),
                format!("a probability must lie in [0, 1], got {}", b.p),
            );
            ok = false;
        }
        match target(ck, b, k) {
            Some(t) => targets.push(t),
            None => ok = false,
        }
        sum += b.p;
        cumulative.push(sum);
    }
    if (sum - 1.0).abs() > 1e-9 {
        ck.add(Some(at), path("branches"), format!("probabilities must sum to 1 (write `exit` explicitly for the rest), they sum to {sum}"));
        ok = false;
    }
    if let Some(last) = cumulative.last_mut() {
        *last = 1.0;
    }
    ok.then_some(Rule::Random {
        cumulative,
        targets,
    })
}

fn check_forks(ck: &mut Checker, raw: &RawScenario, net: &Network) {
    let mut joins_of: HashMap<StationId, usize> = HashMap::new();
    for (i, st) in net.stations.iter().enumerate() {
        let at = Some(raw.stations[i].span().start);
        match &st.kind {
            StationKind::Join { fork } if fork.0 != u32::MAX => {
                if !matches!(
                    net.stations.get(fork.index()).map(|s| &s.kind),
                    Some(StationKind::Fork { .. })
                ) {
                    ck.add(
                        at,
                        format!("station[{i}].fork"),
                        format!(
                            "{:?} is not a fork: a join must gather the tasks of a fork",
                            net.stations[fork.index()].name
                        ),
                    );
                } else if let Some(other) = joins_of.insert(*fork, i) {
                    ck.add(
                        at,
                        format!("station[{i}].fork"),
                        format!("station[{other}] already joins this fork"),
                    );
                }
            }
            StationKind::Fork { branches } => {
                for (k, b) in branches.iter().enumerate() {
                    if !matches!(
                        net.station(*b).kind,
                        StationKind::Delay { .. }
                            | StationKind::Queue { .. }
                            | StationKind::Fork { .. }
                    ) {
                        ck.add(at, format!("station[{i}].branches[{k}]"), "a fork's tasks must go to a station that serves them (delay, fcfs, ps) or to a nested fork");
                    }
                }
            }
            _ => {}
        }
    }
    for (i, st) in net.stations.iter().enumerate() {
        if matches!(st.kind, StationKind::Fork { .. })
            && !joins_of.contains_key(&StationId(i as u32))
        {
            ck.add(
                Some(raw.stations[i].span().start),
                format!("station[{i}]"),
                "this fork has no join (add a station with kind = \"join\" and fork = its name)",
            );
        }
    }
}

/// Keeps a service time only for the classes that reach the station, so the service table says
/// exactly which classes visit (reports list per-class figures only for those).
fn prune_service(net: &mut Network, reached: &[bool]) {
    let ns = net.stations.len();
    for (s, st) in net.stations.iter_mut().enumerate() {
        if let StationKind::Delay { service } | StationKind::Queue { service, .. } = &mut st.kind {
            for (c, entry) in service.iter_mut().enumerate() {
                if !reached[c * ns + s] {
                    *entry = None;
                }
            }
        }
    }
}

/// Follows every class from where it enters (its sources, or its reference station) and checks
/// that each station it reaches serves it and tells it where to go next. Returns which
/// `class * stations + station` pairs are reached.
fn check_reach(
    ck: &mut Checker,
    raw: &RawScenario,
    net: &Network,
    declared: &HashMap<(ClassId, StationId), usize>,
) -> Vec<bool> {
    let ns = net.stations.len();
    let mut seen = vec![false; net.classes.len() * ns];
    let mut todo = VecDeque::new();
    for (c, class) in net.classes.iter().enumerate() {
        let starts: Vec<StationId> = match class.kind {
            ClassKind::Closed { reference, .. } => vec![reference],
            ClassKind::Open => net
                .stations
                .iter()
                .enumerate()
                .filter(|(_, s)| matches!(s.kind, StationKind::Source { class, .. } if class.index() == c))
                .map(|(i, _)| StationId(i as u32))
                .collect(),
        };
        for s in starts {
            todo.push_back((ClassId(c as u32), s));
        }
    }
    let join_of = |fork: StationId| {
        net.stations
            .iter()
            .position(|s| matches!(s.kind, StationKind::Join { fork: f } if f == fork))
            .map(|j| StationId(j as u32))
    };
    while let Some((c, s)) = todo.pop_front() {
        let k = c.index() * ns + s.index();
        if std::mem::replace(&mut seen[k], true) {
            continue;
        }
        let st = net.station(s);
        let at = Some(raw.stations[s.index()].span().start);
        let cname = &net.classes[c.index()].name;
        let rs = raw.stations[s.index()].get_ref();
        let specified = rs.service.is_some()
            || rs
                .service_by_class
                .as_ref()
                .is_some_and(|m| m.contains_key(cname));
        if let Some(table) = st.kind.service()
            && table[c.index()].is_none()
            && !specified
        {
            ck.add(
                at,
                format!("station[{}].service", s.index()),
                format!("class {cname:?} reaches this station but has no service time here"),
            );
        }
        let mut next: Vec<(ClassId, StationId)> = Vec::new();
        match &st.kind {
            StationKind::Fork { branches } => {
                next.extend(branches.iter().map(|b| (c, *b)));
                next.extend(join_of(s).map(|j| (c, j)));
            }
            StationKind::Sink => {}
            StationKind::Join { .. } if net.routing.rule(c, s) == &Rule::Unset => {}
            _ => match net.routing.rule(c, s) {
                Rule::Unset if declared.contains_key(&(c, s)) => {}
                Rule::Unset => ck.add(at, format!("station[{}]", s.index()), format!("class {cname:?} reaches this station but no [[route]] says where it goes next")),
                rule => {
                    for (t, _) in Routing::branch_probabilities(rule, &net.groups) {
                        if let Target::Station(to, tc) = t {
                            next.push((tc, to));
                        }
                    }
                }
            },
        }
        todo.extend(next);
    }
    // A class must enter somewhere: a source, a reference station, or a class switch into it.
    for (c, class) in net.classes.iter().enumerate() {
        if !seen[c * ns..(c + 1) * ns].iter().any(|&x| x) {
            ck.add(
                Some(raw.classes[c].span().start),
                format!("class[{c}]"),
                format!("open class {:?} never enters the network: it has no source and no route switches into it", class.name),
            );
        }
    }
    // Parents leave through the join: every join reached by a class's tasks needs a rule.
    for (j, st) in net.stations.iter().enumerate() {
        if let StationKind::Join { fork } = st.kind {
            for c in 0..net.classes.len() {
                let fork_seen =
                    fork.0 != u32::MAX && seen.get(c * ns + fork.index()).copied().unwrap_or(false);
                if fork_seen
                    && net.routing.rule(ClassId(c as u32), StationId(j as u32)) == &Rule::Unset
                {
                    ck.add(
                        Some(raw.stations[j].span().start),
                        format!("station[{j}]"),
                        format!(
                            "class {:?} leaves this join but no [[route]] says where it goes",
                            net.classes[c].name
                        ),
                    );
                }
            }
        }
    }
    seen
}

/// Refuses an open class that loads some station to utilisation 1 or more.
fn check_stability(ck: &mut Checker, raw: &RawScenario, net: &Network) {
    let v = match visits(net) {
        Ok(v) => v,
        Err(e) => {
            ck.add(None, "route", e.to_string());
            return;
        }
    };
    for (s, st) in net.stations.iter().enumerate() {
        let StationKind::Queue {
            servers, service, ..
        } = &st.kind
        else {
            continue;
        };
        let load: f64 = net
            .classes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind == ClassKind::Open)
            .filter_map(|(c, _)| service[c].as_ref().map(|d| v[c][s] * d.mean()))
            .sum();
        let rho = load / f64::from(*servers);
        if rho >= 1.0 {
            ck.add(
                Some(raw.stations[s].span().start),
                format!("station[{s}]"),
                format!("unstable: the open classes load {:?} to utilisation {rho:.4} >= 1 (no steady state exists)", st.name),
            );
        }
    }
}
