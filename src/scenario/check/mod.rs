//! The check stage: raw scenario to [`Network`], [`RunConfig`] and [`ValidateConfig`],
//! collecting every problem.
//!
//! Per element (`stations`, `routes`) the values are checked and names resolved; then, when
//! every element had the right shape, the routing graph as a whole (`graph`): every station is
//! visited, every job can leave (open) or return (closed), every task of a fork reaches its join
//! and nothing reaches a join except through its fork; then stability and metric names.

mod config;
mod graph;
mod paths;
pub(crate) mod pipeline;
pub(crate) mod program;
mod routes;
pub mod schedule;
pub(crate) mod spmd;
mod stations;
pub(crate) mod tables;

use std::collections::HashMap;
use std::path::Path;

use super::Problem;
use super::raw::Element;
use super::raw::RawScenario;
use super::{RunConfig, ValidateConfig, Workload};
use crate::models::Model;
use crate::models::spmd::Spmd;
use crate::models::tables::Tables;
use crate::network::{Class, ClassKind, Network, Routing, Station, StationKind, visits};

/// What a successful check yields.
pub(super) struct Built {
    pub workload: Workload,
    pub run: RunConfig,
    pub validate: ValidateConfig,
    pub name: Option<String>,
    pub description: Option<String>,
    pub model: Option<Model>,
}

/// The name a station or class may not take: it is the routing target that leaves the network.
const EXIT: &str = "exit";

/// Most tasks one fork may create per job (`copies`, or the length of `branches`): each task is
/// simulated as a job of its own.
pub const MAX_FORK_TASKS: i64 = 100_000;

/// Collects problems.
#[derive(Default)]
pub(super) struct Checker {
    found: Vec<Problem>,
    /// A name is duplicated or a reference unresolved: the network's structure is not what the
    /// file meant, so the checks of the routing graph would only add noise.
    broken_structure: bool,
}

impl Checker {
    fn add(&mut self, at: Option<usize>, path: impl Into<String>, message: impl Into<String>) {
        self.found
            .push(Problem::new(at, path.into(), message.into()));
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

pub(super) fn build(mut raw: RawScenario, base: &Path) -> Result<Built, Vec<Problem>> {
    let mut ck = Checker::default();
    let run = config::run_config(&mut ck, raw.run.as_ref());
    let validate = config::validate_config(&mut ck, raw.validate.as_ref());
    let spmd = if raw.has("spmd") {
        match spmd_network(&mut ck, &mut raw, base) {
            Some(s) => Some(s),
            None => return Err(ck.found),
        }
    } else {
        None
    };
    if raw.has("program") || raw.has("pipeline") {
        if raw.has("path") {
            ck.add(
                Some(0),
                "path",
                "[[path]] sums stations of a queueing network; a [program] has none",
            );
        }
        return build_program(ck, raw, base, run, validate, spmd);
    }
    for (field, given) in [
        ("loggp", raw.loggp.is_some()),
        ("topology", raw.topology.is_some()),
        ("machine", raw.machine.is_some()),
        ("disk", !raw.disks.is_empty()),
    ] {
        if given {
            ck.add(
                Some(0),
                field,
                format!("[{field}] belongs to a [program]; a queueing network has [[station]]s"),
            );
        }
    }
    let class_names = names(&mut ck, &raw.classes, "class");
    let station_names = names(&mut ck, &raw.stations, "station");
    let classes: Vec<Class> = raw
        .classes
        .iter()
        .enumerate()
        .map(|(i, e)| stations::class(&mut ck, e, i, &station_names))
        .collect();
    let station_list: Vec<Station> = raw
        .stations
        .iter()
        .enumerate()
        .map(|(i, e)| stations::station(&mut ck, e, i, base, &station_names, &classes))
        .collect();
    let mut net = Network {
        routing: Routing::new(classes.len(), station_list.len()),
        stations: station_list,
        classes,
        groups: Vec::new(),
        clock: Default::default(),
        paths: Vec::new(),
    };
    if raw.classes.is_empty() {
        ck.add(Some(0), "class", "the scenario has no [[class]]");
    }
    if raw.stations.is_empty() {
        ck.add(Some(0), "station", "the scenario has no [[station]]");
    }
    stations::check_sources(&mut ck, &raw, &net);
    let declared = routes::routes(
        &mut ck,
        &raw.routes,
        &raw.stations,
        &mut net,
        &station_names,
        &class_names,
    );
    net.paths = paths::paths(&mut ck, &raw.paths, &station_names, &net);
    // The graph checks need every element as meant: with shape problems, duplicate names or
    // unresolved references they would only add noise.
    if raw.shape_problems == 0
        && !ck.broken_structure
        && !raw.stations.is_empty()
        && !raw.classes.is_empty()
    {
        let forks_ok = graph::check_forks(&mut ck, &raw, &net);
        if forks_ok {
            let reached = graph::check_routing(&mut ck, &raw, &net, &declared);
            graph::prune_service(&mut net, &reached);
        }
    }
    if ck.found.is_empty() {
        stations::demand_service(&mut ck, &raw, &mut net);
    }
    net.set_clock();
    if ck.found.is_empty() {
        check_stability(&mut ck, &raw, &net);
        config::check_metric_names(
            &mut ck,
            &raw,
            &run,
            &validate,
            &Workload::Network(net.clone()),
        );
    }
    if ck.found.is_empty() {
        Ok(Built {
            workload: Workload::Network(net),
            run,
            validate,
            name: raw.name,
            description: raw.description,
            model: spmd.map(|m| Model::Spmd(Box::new(m))),
        })
    } else {
        ck.found.sort_by_key(|p| p.at);
        Err(ck.found)
    }
}

/// An `[spmd]` scenario: checks the section and puts the tables it builds
/// ([`Spmd::tables`]) in place of the `[[class]]`, `[[station]]` and `[[route]]` tables, or
/// with `network = ...` or phases in place of `[program]`, `[topology]` and `[[disk]]`; the
/// file must leave those out. `None` when there were problems (added to `ck`).
fn spmd_network(ck: &mut Checker, raw: &mut RawScenario, base: &Path) -> Option<Spmd> {
    for field in [
        "class", "station", "route", "program", "pipeline", "topology", "machine", "disk", "loggp",
    ] {
        if raw.has(field) {
            ck.add(
                Some(0),
                field,
                format!("a scenario with [spmd] builds its network from it: leave out [{field}]"),
            );
        }
    }
    // an [spmd] that could not be read has had its shape problems reported
    let section = raw.spmd.as_ref()?;
    let spmd = match spmd::check(section.get_ref(), section.span().start) {
        Ok(s) if ck.found.is_empty() => s,
        Ok(_) => return None,
        Err(found) => {
            ck.found.extend(found);
            return None;
        }
    };
    let at = section.span().start;
    // a family's trace is read here, so that its problems name the [spmd] field the user
    // wrote, not a station or operation of the tables built from it
    let raw_spmd = section.get_ref();
    let mut families: Vec<(usize, String, &crate::models::spmd::Family)> = Vec::new();
    for (field, f) in [
        ("cpu", &raw_spmd.cpu),
        ("com", &raw_spmd.com),
        ("io_dist", &raw_spmd.io_dist),
    ] {
        if let Some(f) = f {
            families.push((at, format!("spmd.{field}"), f));
        }
    }
    for (i, ph) in raw_spmd.phases.iter().enumerate() {
        let r = ph.get_ref();
        for (field, f) in [("cpu", &r.cpu), ("com", &r.com), ("io_dist", &r.io_dist)] {
            if let Some(f) = f {
                families.push((ph.span().start, format!("spmd.phase[{i}].{field}"), f));
            }
        }
    }
    let mut traces_ok = true;
    for (at, path, family) in families {
        if let crate::models::spmd::Family::Empirical { .. } = family
            && let Err(e) = family.spec(1.0).build(base)
        {
            ck.add(Some(at), format!("{path}.{}", e.field), e.message);
            traces_ok = false;
        }
    }
    if !traces_ok {
        return None;
    }
    match spmd.tables() {
        Tables::Network(t) => tables::put_network(raw, &t, at),
        Tables::Program(t) => tables::put_program(raw, &t, at),
    }
    Some(spmd)
}

/// A program scenario: a `[program]` (with `[topology]` and `[[disk]]`) or a `[pipeline]`
/// (with an optional `[topology]`), and no network sections.
fn build_program(
    mut ck: Checker,
    raw: RawScenario,
    base: &Path,
    run: RunConfig,
    validate: ValidateConfig,
    spmd: Option<Spmd>,
) -> Result<Built, Vec<Problem>> {
    let at = raw.program.as_ref().map_or_else(
        || raw.pipeline.as_ref().map_or(0, |p| p.span().start),
        |p| p.span().start,
    );
    for (field, n) in [
        ("class", raw.classes.len()),
        ("station", raw.stations.len()),
        ("route", raw.routes.len()),
    ] {
        if n > 0 {
            ck.add(
                Some(at),
                field,
                format!(
                    "a scenario with a [program] or [pipeline] builds its stations from it: leave out [[{field}]]"
                ),
            );
        }
    }
    let mut model = spmd.map(|m| Model::Spmd(Box::new(m)));
    if raw.loggp.is_some() && !raw.has("program") {
        ck.add(
            raw.loggp.as_ref().map(|l| l.span().start),
            "loggp",
            "[loggp] gives the endpoints of a [program]; a [pipeline] builds its own",
        );
    }
    if let Some(program) = raw.program.as_ref().filter(|p| p.get_ref().goal.is_some()) {
        let written = raw.has("loggp") || raw.has("topology");
        for (field, given, why) in [
            (
                "machine",
                raw.has("machine"),
                "a machine profile prices the primitives of a rank program; a GOAL schedule runs on [loggp] endpoints and/or the links of a [topology]: leave out [machine]",
            ),
            (
                "disk",
                raw.has("disk"),
                "a GOAL schedule has no io operations: leave out [[disk]]",
            ),
        ] {
            if given {
                ck.add(Some(at), field, why);
            }
        }
        let sched = schedule::goal(
            program,
            raw.loggp.as_ref(),
            raw.topology.as_ref(),
            written,
            base,
            raw.goal_path.as_deref(),
        );
        return match sched {
            Ok(s) if ck.found.is_empty() && raw.shape_problems == 0 => {
                finish_schedule(ck, &raw, run, validate, s, model)
            }
            Ok(_) => Err(ck.found),
            Err(found) => {
                ck.found.extend(found);
                ck.found.sort_by_key(|p| p.at);
                Err(ck.found)
            }
        };
    }
    let built = match (&raw.program, &raw.pipeline) {
        (Some(program), None) => {
            let disks: Vec<_> = raw
                .disks
                .iter()
                .filter_map(|e| e.value.as_ref().map(|d| (e.at(), d)))
                .collect();
            program::compile(&program::Sources {
                program,
                topology: raw.topology.as_ref(),
                topology_written: raw.has("topology") || raw.has("machine"),
                machine: raw.machine.as_ref(),
                disks,
                base,
                endpoints: raw.loggp.is_some(),
            })
        }
        (None, Some(pipeline)) => {
            if !raw.disks.is_empty() {
                ck.add(
                    Some(at),
                    "disk",
                    "a [pipeline] has no disks: leave out [[disk]]",
                );
            }
            pipeline::build(pipeline, raw.topology.as_ref(), base).map(|(prog, p)| {
                model = Some(Model::Pipeline(Box::new(p)));
                prog
            })
        }
        // a [program] or [pipeline] that could not be read has had its shape problems reported
        (None, None) => return Err(ck.found),
        (Some(_), Some(_)) => {
            ck.add(
                Some(at),
                "pipeline",
                "a scenario has a [program] or a [pipeline] (which builds its own program), not both",
            );
            return Err(ck.found);
        }
    };
    match built {
        Ok(prog) if ck.found.is_empty() && raw.shape_problems == 0 => {
            if raw.loggp.is_some() || prog.marks.is_some() {
                return match schedule::lowered(prog, raw.loggp.as_ref(), raw.topology.as_ref()) {
                    Ok(s) => finish_schedule(ck, &raw, run, validate, s, model),
                    Err(found) => {
                        ck.found.extend(found);
                        Err(ck.found)
                    }
                };
            }
            let workload = Workload::Program(Box::new(prog));
            config::check_metric_names(&mut ck, &raw, &run, &validate, &workload);
            if !ck.found.is_empty() {
                return Err(ck.found);
            }
            Ok(Built {
                workload,
                run,
                validate,
                name: raw.name,
                description: raw.description,
                model,
            })
        }
        Ok(_) => Err(ck.found),
        Err(found) => {
            // a program built from [spmd] has offsets in a text the user never wrote: point
            // at the [spmd] section instead
            let spmd_at = matches!(model, Some(Model::Spmd(_)))
                .then(|| raw.spmd.as_ref().map(|s| s.span().start));
            ck.found.extend(found.into_iter().map(|p| match spmd_at {
                Some(spmd_at) => Problem::new(
                    spmd_at,
                    format!("spmd (built program) {}", p.path),
                    p.message,
                ),
                None => p,
            }));
            ck.found.sort_by_key(|p| p.at);
            Err(ck.found)
        }
    }
}

/// A program run as a dependency graph: its metric names checked, the scenario built.
fn finish_schedule(
    mut ck: Checker,
    raw: &RawScenario,
    run: RunConfig,
    validate: ValidateConfig,
    schedule: crate::schedule::Schedule,
    model: Option<Model>,
) -> Result<Built, Vec<Problem>> {
    let workload = Workload::Schedule(Box::new(schedule));
    config::check_metric_names(&mut ck, raw, &run, &validate, &workload);
    if !ck.found.is_empty() {
        return Err(ck.found);
    }
    Ok(Built {
        workload,
        run,
        validate,
        name: raw.name.clone(),
        description: raw.description.clone(),
        model,
    })
}

/// What is wrong with a station or class name, if anything: besides the rules of every name
/// ([`crate::metrics::name_problem`]), `exit` is reserved.
fn name_problem(name: &str) -> Option<String> {
    if name == EXIT {
        return Some("`exit` is reserved: it is the routing target that leaves the network".into());
    }
    crate::metrics::name_problem(name)
}

/// Checks that the names of one kind are usable and unique, and maps them to indices. Broken
/// elements keep their name (read from the document), so that references to them resolve.
fn names<T>(ck: &mut Checker, items: &[Element<T>], what: &str) -> HashMap<String, u32> {
    let mut map = HashMap::new();
    for (i, e) in items.iter().enumerate() {
        let Some(name) = &e.name else {
            if e.value.is_some() {
                ck.add(Some(e.at()), format!("{what}[{i}].name"), "is missing");
            }
            continue;
        };
        if let Some(problem) = name_problem(name) {
            ck.add(
                Some(e.at()),
                format!("{what}[{i}].name"),
                format!("{name:?} is not a usable name: it {problem}"),
            );
        }
        if let Some(first) = map.insert(name.clone(), i as u32) {
            map.insert(name.clone(), first);
            ck.broken_structure = true;
            ck.add(
                Some(e.at()),
                format!("{what}[{i}].name"),
                format!("{what}[{first}] is already named {name:?}: names must be unique"),
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
            ck.broken_structure = true;
            ck.add(Some(at), path, format!("unknown {what} {name:?}"));
            None
        }
    }
}

/// Refuses an open class that loads some station to utilisation 1 or more.
fn check_stability(ck: &mut Checker, raw: &RawScenario, net: &Network) {
    let v = match visits(net) {
        Ok(v) => v,
        Err(e) => {
            ck.add(Some(0), "route", e.to_string());
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
                Some(raw.stations[s].at()),
                format!("station[{s}]"),
                format!("unstable: the open classes load {:?} to utilisation {rho:.4} >= 1 (no steady state exists)", st.name),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::name_problem;

    #[test]
    fn names_say_which_character_is_wrong() {
        assert!(name_problem("cpu_0").is_none());
        assert!(name_problem("disk-1").is_none());
        assert!(name_problem("a.b").unwrap().contains("'.'"));
        assert!(name_problem("a,b").unwrap().contains("','"));
        assert!(name_problem("a b").unwrap().contains("white space"));
        assert!(name_problem("a\"b").unwrap().contains("quotes"));
        assert!(name_problem("exit").unwrap().contains("reserved"));
        assert!(name_problem("").unwrap().contains("empty"));
    }
}
