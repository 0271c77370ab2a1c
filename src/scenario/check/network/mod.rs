//! The check of a queueing network (`[[class]]`, `[[station]]`, `[[route]]`, `[[path]]`):
//! raw tables to a [`Network`].
//!
//! Per element (`stations`, `routes`, `paths`) the values are checked and names resolved; then,
//! when every element had the right shape, the routing graph as a whole (`graph`): every station
//! is visited, every job can leave (open) or return (closed), every task of a fork reaches its
//! join and nothing reaches a join except through its fork; then stability and metric names.

mod blocking;
mod graph;
mod paths;
mod routes;
mod stations;

use std::collections::HashMap;
use std::path::Path;

use super::{Built, Checker, config};
use crate::models::Model;
use crate::models::spmd::Spmd;
use crate::network::{Class, ClassKind, Network, Routing, Station, StationKind, visits};
use crate::problem::Problem;
use crate::scenario::raw::{Element, RawScenario};
use crate::scenario::{RunConfig, ValidateConfig, Workload};

/// The name a station or class may not take: it is the routing target that leaves the network.
const EXIT: &str = "exit";

/// Most tasks one fork may create per job (`copies`, or the length of `branches`): each task is
/// simulated as a job of its own.
pub const MAX_FORK_TASKS: i64 = 100_000;

/// A queueing-network scenario (with its `[spmd]` model, if the network was built from one).
pub(super) fn build(
    mut ck: Checker,
    raw: RawScenario,
    base: &Path,
    run: RunConfig,
    validate: ValidateConfig,
    spmd: Option<Spmd>,
) -> Result<Built, Vec<Problem>> {
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
            stations::check_features(&mut ck, &raw, &net);
            blocking::check_blocking(&mut ck, &raw, &net);
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
            analyze: crate::scenario::AnalyzeConfig::default(),
            name: raw.name,
            description: raw.description,
            model: spmd.map(|m| Model::Spmd(Box::new(m))),
        })
    } else {
        ck.found.sort_by_key(|p| p.at);
        Err(ck.found)
    }
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
        let f = &st.features;
        if f.capacity.is_some() || f.patience.is_some() {
            // jobs that find it full are lost, impatient ones leave: it is stable at any load
            continue;
        }
        let rho =
            load / (f64::from(*servers) * f.rate_by_jobs.as_ref().map_or(1.0, |r| r[r.len() - 1]));
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
