//! Building a [`Network`] in Rust, without a scenario file.
//!
//! [`NetworkBuilder`] collects classes, stations and routes as a scenario file declares them
//! (`[[class]]`, `[[station]]`, `[[route]]`), and [`NetworkBuilder::build`] checks them with the
//! scenario checks themselves ([`crate::scenario::from_raw`]): the same names, values, routing
//! graph, forks and stability are refused with the same messages, each naming the field
//! (`station[1].service.mean`, elements counted in the order they were added).
//!
//! ```
//! use parsim::dist::DistSpec;
//! use parsim::scenario::builder::NetworkBuilder;
//!
//! // a closed network: 4 jobs think, then use a CPU and a disk
//! let net = NetworkBuilder::new()
//!     .closed_class("jobs", 4, "think")
//!     .delay("think", DistSpec::exp(1.0))
//!     .queue("cpu", 1, DistSpec::exp(0.2))
//!     .queue("disk", 1, DistSpec::exp(0.1))
//!     .route("jobs", "think", "cpu")
//!     .route_branches("jobs", "cpu", &[("disk", 0.5), ("think", 0.5)])
//!     .route("jobs", "disk", "think")
//!     .build()?;
//! assert_eq!(net.stations.len(), 3);
//! # Ok::<(), parsim::scenario::builder::NetworkError>(())
//! ```

use std::fmt;

use toml::Spanned;

use super::Scenario;
use super::raw::Element;
use super::raw::{RawBranch, RawClass, RawKind, RawRoute, RawScenario, RawStation};
use crate::dist::DistSpec;
use crate::network::Network;
use crate::problem::Problem;

/// Classes, stations and routes of a network, added one by one (see the [module](self)).
#[derive(Debug, Default)]
pub struct NetworkBuilder {
    classes: Vec<RawClass>,
    stations: Vec<RawStation>,
    routes: Vec<RawRoute>,
    /// Calls that named a station not added yet ([`NetworkBuilder::service_of`]).
    misuse: Vec<Problem>,
}

/// Why [`NetworkBuilder::build`] refused a network: every problem the scenario checks found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct NetworkError {
    /// The problems, each with its field path (`station[1].service.mean`) and what is wrong.
    pub problems: Vec<Problem>,
}

impl fmt::Display for NetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(f, "network: {n} problem{}", if n == 1 { "" } else { "s" })?;
        for p in &self.problems {
            write!(f, "\n  {}: {}", p.path, p.message)?;
        }
        Ok(())
    }
}

impl NetworkBuilder {
    /// An empty network.
    pub fn new() -> NetworkBuilder {
        NetworkBuilder::default()
    }

    /// A closed class of `population` jobs that start at, and count a cycle at, `reference`.
    pub fn closed_class(mut self, name: &str, population: u32, reference: &str) -> Self {
        self.classes.push(RawClass {
            name: name.to_owned(),
            population: Some(i64::from(population)),
            reference: Some(reference.to_owned()),
            priority: None,
        });
        self
    }

    /// An open class whose jobs arrive as a Poisson stream of `arrival_rate` from a source
    /// station named `source` (route them on from there).
    pub fn open_class(self, name: &str, source: &str, arrival_rate: f64) -> Self {
        let poisson = DistSpec::Exp {
            mean: None,
            rate: Some(arrival_rate),
        };
        self.open_class_with(name, source, poisson)
    }

    /// An open class whose jobs arrive from a source station named `source` with renewal
    /// inter-arrival times `interarrival`.
    pub fn open_class_with(mut self, name: &str, source: &str, interarrival: DistSpec) -> Self {
        self.classes.push(RawClass {
            name: name.to_owned(),
            population: None,
            reference: None,
            priority: None,
        });
        let mut station = RawStation::new(source, RawKind::Source);
        station.class = Some(name.to_owned());
        station.interarrival = Some(spanned(interarrival));
        self.stations.push(station);
        self
    }

    /// An infinite-server (delay) station: every class it serves takes `service`.
    pub fn delay(self, name: &str, service: DistSpec) -> Self {
        self.serving(name, RawKind::Delay, None, service)
    }

    /// A first-come-first-served queue with `servers` servers: every class takes `service`.
    pub fn queue(self, name: &str, servers: u32, service: DistSpec) -> Self {
        self.serving(name, RawKind::Fcfs, Some(i64::from(servers)), service)
    }

    /// A processor-sharing station on one server: every class takes `service`.
    pub fn processor_sharing(self, name: &str, service: DistSpec) -> Self {
        self.serving(name, RawKind::Ps, None, service)
    }

    /// Gives `class` its own service time at `station` (added before), instead of the
    /// station's.
    pub fn service_of(mut self, station: &str, class: &str, service: DistSpec) -> Self {
        match self.stations.iter_mut().rfind(|s| s.name == station) {
            Some(s) => {
                s.service_by_class
                    .get_or_insert_default()
                    .insert(class.to_owned(), spanned(service));
            }
            None => self.misuse.push(Problem::new(
                None,
                format!("service_of({station:?})"),
                format!("no station {station:?} was added before"),
            )),
        }
        self
    }

    /// Jobs of `class` go from `from` to `to` (a station, or `exit` to leave the network).
    pub fn route(mut self, class: &str, from: &str, to: &str) -> Self {
        self.routes.push(RawRoute {
            to: Some(to.to_owned()),
            ..RawRoute::new(class, from)
        });
        self
    }

    /// Jobs of `class` leaving `from` go to each `(to, probability)` of `branches`.
    pub fn route_branches(mut self, class: &str, from: &str, branches: &[(&str, f64)]) -> Self {
        let branches = branches
            .iter()
            .map(|&(to, p)| RawBranch {
                to: to.to_owned(),
                p,
                to_class: None,
            })
            .collect();
        self.routes.push(RawRoute {
            branches: Some(branches),
            ..RawRoute::new(class, from)
        });
        self
    }

    /// The network, checked as a scenario file's is; every problem otherwise.
    pub fn build(self) -> Result<Network, NetworkError> {
        let sc = self.scenario("network")?;
        match sc.workload {
            super::Workload::Network(net) => Ok(net),
            super::Workload::Program(_) | super::Workload::Schedule(_) => {
                unreachable!("a builder makes no program")
            }
        }
    }

    /// The network as a [`Scenario`] titled `name`, with the default run settings of a file
    /// without `[run]` (10 replications of 20000 observations, seed 1, MSER-5 warm-up), ready
    /// for [`crate::replicate::run`] and [`crate::study::analyze_scenario`].
    pub fn scenario(self, name: &str) -> Result<Scenario, NetworkError> {
        if !self.misuse.is_empty() {
            return Err(NetworkError {
                problems: self.misuse,
            });
        }
        let raw = RawScenario {
            classes: self.classes.into_iter().map(element).collect(),
            stations: self.stations.into_iter().map(element).collect(),
            routes: self.routes.into_iter().map(element).collect(),
            ..RawScenario::default()
        };
        super::from_raw(raw, name).map_err(|problems| NetworkError { problems })
    }

    fn serving(mut self, name: &str, kind: RawKind, servers: Option<i64>, d: DistSpec) -> Self {
        let mut station = RawStation::new(name, kind);
        station.servers = servers;
        station.service = Some(spanned(d));
        self.stations.push(station);
        self
    }
}

/// A value with no place in a file.
fn spanned<T>(value: T) -> Spanned<T> {
    Spanned::new(0..0, value)
}

/// An array element as the document reader makes it, with no place in a file.
fn element<T: Named>(value: T) -> Element<T> {
    Element::built(0, value.name(), value)
}

/// The `name` of an element, which references to it use.
trait Named {
    fn name(&self) -> Option<String>;
}

impl Named for RawClass {
    fn name(&self) -> Option<String> {
        Some(self.name.clone())
    }
}

impl Named for RawStation {
    fn name(&self) -> Option<String> {
        Some(self.name.clone())
    }
}

impl Named for RawRoute {
    fn name(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{ClassKind, StationKind};

    /// M/M/1 at utilisation 0.5.
    fn mm1() -> NetworkBuilder {
        NetworkBuilder::new()
            .open_class("jobs", "arrivals", 0.5)
            .queue("q", 1, DistSpec::exp(1.0))
            .route("jobs", "arrivals", "q")
            .route("jobs", "q", "exit")
    }

    /// The problems of a refused network, as `path: message`.
    fn problems(b: NetworkBuilder) -> Vec<String> {
        let err = b.build().expect_err("refused");
        err.problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect()
    }

    #[test]
    fn a_valid_network_is_built_as_its_file_would_be() {
        let net = mm1().build().expect("valid");
        assert_eq!(net.classes[0].kind, ClassKind::Open);
        assert!(matches!(net.stations[0].kind, StationKind::Source { .. }));
        let file = crate::scenario::parse(
            include_str!("../../validation/mm1_rho50.toml"),
            std::path::Path::new("mm1.toml"),
        )
        .expect("valid");
        let from_file = file.network().expect("a network");
        assert_eq!(format!("{net:?}"), format!("{from_file:?}"));
    }

    #[test]
    fn a_bad_value_names_its_field() {
        let p = problems(
            NetworkBuilder::new()
                .open_class("jobs", "arrivals", 0.5)
                .queue("q", 1, DistSpec::exp(-1.0))
                .route("jobs", "arrivals", "q")
                .route("jobs", "q", "exit"),
        );
        assert_eq!(
            p,
            ["station[1].service.mean: must be a finite number > 0, got -1"]
        );
    }

    #[test]
    fn unknown_and_duplicate_names_are_refused() {
        let p = problems(mm1().route("jobs", "q", "nowhere"));
        assert!(
            p.iter().any(|p| p.contains("unknown station \"nowhere\"")),
            "{p:?}"
        );
        let p = problems(mm1().queue("q", 2, DistSpec::exp(1.0)));
        assert!(
            p.iter().any(|p| p.contains("names must be unique")),
            "{p:?}"
        );
        let p = problems(mm1().delay("a.b", DistSpec::exp(1.0)));
        assert!(
            p.iter()
                .any(|p| p.starts_with("station[2].name") && p.contains("'.'")),
            "{p:?}"
        );
    }

    #[test]
    fn an_unstable_open_network_and_a_dead_end_are_refused() {
        let p = problems(
            NetworkBuilder::new()
                .open_class("jobs", "arrivals", 2.0)
                .queue("q", 1, DistSpec::exp(1.0))
                .route("jobs", "arrivals", "q")
                .route("jobs", "q", "exit"),
        );
        assert!(p.iter().any(|p| p.contains("unstable")), "{p:?}");
        let p = problems(
            NetworkBuilder::new()
                .closed_class("jobs", 2, "think")
                .delay("think", DistSpec::exp(1.0))
                .queue("q", 1, DistSpec::exp(1.0))
                .route("jobs", "think", "q"),
        );
        assert!(!p.is_empty());
        let text = NetworkError {
            problems: vec![Problem::new(None, "route", "x")],
        }
        .to_string();
        assert_eq!(text, "network: 1 problem\n  route: x");
    }

    #[test]
    fn branches_and_per_class_service_are_checked() {
        let p = problems(
            NetworkBuilder::new()
                .closed_class("jobs", 2, "think")
                .delay("think", DistSpec::exp(1.0))
                .queue("q", 1, DistSpec::exp(1.0))
                .route("jobs", "think", "q")
                .route_branches("jobs", "q", &[("think", 0.5), ("q", 0.4)]),
        );
        assert!(p.iter().any(|p| p.starts_with("route[1]")), "{p:?}");
        let net = NetworkBuilder::new()
            .closed_class("jobs", 2, "think")
            .delay("think", DistSpec::exp(1.0))
            .queue("q", 1, DistSpec::exp(1.0))
            .service_of("q", "jobs", DistSpec::det(0.5))
            .route("jobs", "think", "q")
            .route("jobs", "q", "think")
            .build()
            .expect("valid");
        let service = net.stations[1].kind.service().expect("serves");
        assert_eq!(service[0].as_ref().map(|d| d.mean()), Some(0.5));
        let p = problems(mm1().service_of("disk", "jobs", DistSpec::exp(1.0)));
        assert_eq!(
            p,
            ["service_of(\"disk\"): no station \"disk\" was added before"]
        );
    }
}
