//! The paper's networks (Figs. 5-9) built as the `[[class]]`, `[[station]]` and `[[route]]`
//! tables of an ordinary scenario ([`NetworkTables`]): the input layer checks them like any
//! file's, so a built model gets every check a hand-written one gets, and
//! `parsim run --show-network` prints exactly what runs.
//!
//! Stations: `cpu` (a delay of mean `S_par/p + S_ser`, behind `cpu_fork`/`cpu_join` into `c`
//! copies when `c > 1`), `com` (the delay of eq. 10) and `bus` (the queue of eq. 9), each left
//! out when its mean is 0; then the I/O per organisation: SIO `groups_fork` into `p/c` group
//! tasks, `groups_join`, one `io` queue; BUS-AIO one `io` queue; CLU-AIO `disk1..d`, one per
//! class. After each computation burst a group goes to I/O with probability `1/n_io`.

use super::formulas::{com_delay, com_queue, cpu_mean, t_io};
use super::{Io, Spmd};
use crate::models::tables::{
    ClassTable, Destination, NetworkTables, RouteTable, StationTable, StationTableKind,
};

/// The network of `m` as scenario tables.
pub fn network_tables(m: &Spmd) -> NetworkTables {
    let mut t = NetworkTables::default();
    let groups = m.groups();
    // classes: (name, population, the I/O station it counts its cycles at)
    let classes: Vec<(String, u32, String)> = match m.io {
        Io::Sio => vec![("program".into(), 1, "io".into())],
        Io::BusAio => vec![("groups".into(), groups, "io".into())],
        Io::CluAio => (1..=m.d)
            .map(|r| (format!("cluster{r}"), groups / m.d, format!("disk{r}")))
            .collect(),
    };
    for (name, population, reference) in &classes {
        t.classes.push(ClassTable {
            name: name.clone(),
            population: *population,
            reference: reference.clone(),
        });
    }
    let mut station = |name: &str, kind: StationTableKind| {
        t.stations.push(StationTable {
            name: name.to_owned(),
            kind,
        })
    };
    // the computation burst: its stations in order
    let mut burst: Vec<&str> = Vec::new();
    if m.c > 1 {
        station(
            "cpu_fork",
            StationTableKind::Fork {
                copies: m.c,
                to: "cpu".into(),
            },
        );
        burst.push("cpu_fork");
    }
    station("cpu", StationTableKind::Delay(m.cpu.spec(cpu_mean(m))));
    if m.c > 1 {
        station(
            "cpu_join",
            StationTableKind::Join {
                fork: "cpu_fork".into(),
            },
        );
        burst.push("cpu_join");
    } else {
        burst.push("cpu");
    }
    if com_delay(m) > 0.0 {
        station("com", StationTableKind::Delay(m.com.spec(com_delay(m))));
        burst.push("com");
    }
    if com_queue(m) > 0.0 {
        station("bus", StationTableKind::Fcfs(m.com.spec(com_queue(m))));
        burst.push("bus");
    }
    let io_spec = m.io_dist.spec(t_io(m));
    let sio_groups = m.io == Io::Sio && groups > 1;
    let entry = burst[0];
    if sio_groups {
        station(
            "groups_fork",
            StationTableKind::Fork {
                copies: groups,
                to: entry.into(),
            },
        );
        station(
            "groups_join",
            StationTableKind::Join {
                fork: "groups_fork".into(),
            },
        );
    }
    for (_, _, disk) in &classes {
        station(disk, StationTableKind::Fcfs(io_spec.clone()));
    }
    let mut route = |class: &str, from: &str, to: Destination| {
        t.routes.push(RouteTable {
            class: class.to_owned(),
            from: from.to_owned(),
            to,
        })
    };
    let to = |s: &str| Destination::Station(s.to_owned());
    for (class, _, disk) in &classes {
        if m.c > 1 {
            route(class, "cpu", to("cpu_join"));
        }
        for pair in burst.windows(2) {
            // a fork sends its tasks on by itself
            if pair[0] != "cpu_fork" {
                route(class, pair[0], to(pair[1]));
            }
        }
        let last = burst[burst.len() - 1];
        let to_io = if sio_groups { "groups_join" } else { disk };
        let after = if m.n_io > 1.0 {
            let stay = 1.0 - 1.0 / m.n_io;
            Destination::Branches(vec![
                (entry.to_owned(), stay),
                (to_io.to_owned(), 1.0 / m.n_io),
            ])
        } else {
            to(to_io)
        };
        route(class, last, after);
        if sio_groups {
            route(class, "groups_join", to("io"));
            route(class, "io", to("groups_fork"));
        } else {
            route(class, disk, to(entry));
        }
    }
    t
}
