//! The paper's networks (Figs. 5-9) written as the `[[class]]`, `[[station]]` and `[[route]]`
//! tables of an ordinary scenario: the scenario loader reads them like any other file, so a
//! built model gets every check a hand-written one gets, and `parsim run --show-network` prints
//! exactly what runs.
//!
//! Stations: `cpu` (a delay of mean `S_par/p + S_ser`, behind `cpu_fork`/`cpu_join` into `c`
//! copies when `c > 1`), `com` (the delay of eq. 10) and `bus` (the queue of eq. 9), each left
//! out when its mean is 0; then the I/O per organisation: SIO `groups_fork` into `p/c` group
//! tasks, `groups_join`, one `io` queue; BUS-AIO one `io` queue; CLU-AIO `disk1..d`, one per
//! class. After each computation burst a group goes to I/O with probability `1/n_io`.

use std::fmt::Write as _;

use super::formulas::{com_delay, com_queue, cpu_mean, t_io};
use super::{Io, Spmd};

/// The equivalent scenario tables of `m` (TOML).
pub fn network_toml(m: &Spmd) -> String {
    let mut t = String::new();
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
        section(&mut t, "class");
        line(&mut t, "name", &quoted(name));
        line(&mut t, "population", &population.to_string());
        line(&mut t, "reference", &quoted(reference));
    }
    // the computation burst: its stations in order
    let mut burst: Vec<&str> = Vec::new();
    if m.c > 1 {
        fork(&mut t, "cpu_fork", m.c, "cpu");
        burst.push("cpu_fork");
    }
    service(&mut t, "cpu", "delay", &m.cpu.spec(cpu_mean(m)));
    if m.c > 1 {
        join(&mut t, "cpu_join", "cpu_fork");
        burst.push("cpu_join");
    } else {
        burst.push("cpu");
    }
    if com_delay(m) > 0.0 {
        service(&mut t, "com", "delay", &m.com.spec(com_delay(m)));
        burst.push("com");
    }
    if com_queue(m) > 0.0 {
        service(&mut t, "bus", "fcfs", &m.com.spec(com_queue(m)));
        burst.push("bus");
    }
    let io_spec = m.io_dist.spec(t_io(m));
    let sio_groups = m.io == Io::Sio && groups > 1;
    let entry = burst[0];
    if sio_groups {
        fork(&mut t, "groups_fork", groups, entry);
        join(&mut t, "groups_join", "groups_fork");
    }
    for (_, _, disk) in &classes {
        service(&mut t, disk, "fcfs", &io_spec);
    }
    for (class, _, disk) in &classes {
        if m.c > 1 {
            route(&mut t, class, "cpu", "to = \"cpu_join\"");
        }
        for pair in burst.windows(2) {
            // a fork sends its tasks on by itself
            if pair[0] != "cpu_fork" {
                route(&mut t, class, pair[0], &format!("to = {}", quoted(pair[1])));
            }
        }
        let last = burst[burst.len() - 1];
        let to_io = if sio_groups { "groups_join" } else { disk };
        let after = if m.n_io > 1.0 {
            let stay = 1.0 - 1.0 / m.n_io;
            format!(
                "branches = [{{ to = {}, p = {stay:?} }}, {{ to = {}, p = {:?} }}]",
                quoted(entry),
                quoted(to_io),
                1.0 / m.n_io
            )
        } else {
            format!("to = {}", quoted(to_io))
        };
        route(&mut t, class, last, &after);
        if sio_groups {
            route(&mut t, class, "groups_join", "to = \"io\"");
            route(&mut t, class, "io", "to = \"groups_fork\"");
        } else {
            route(&mut t, class, disk, &format!("to = {}", quoted(entry)));
        }
    }
    t
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

fn section(t: &mut String, name: &str) {
    let _ = write!(t, "\n[[{name}]]\n");
}

fn line(t: &mut String, key: &str, value: &str) {
    let _ = writeln!(t, "{key} = {value}");
}

fn service(t: &mut String, name: &str, kind: &str, spec: &str) {
    section(t, "station");
    line(t, "name", &quoted(name));
    line(t, "kind", &quoted(kind));
    line(t, "service", spec);
}

fn fork(t: &mut String, name: &str, copies: u32, to: &str) {
    section(t, "station");
    line(t, "name", &quoted(name));
    line(t, "kind", "\"fork\"");
    line(t, "copies", &copies.to_string());
    line(t, "to", &quoted(to));
}

fn join(t: &mut String, name: &str, fork: &str) {
    section(t, "station");
    line(t, "name", &quoted(name));
    line(t, "kind", "\"join\"");
    line(t, "fork", &quoted(fork));
}

fn route(t: &mut String, class: &str, from: &str, rest: &str) {
    section(t, "route");
    line(t, "class", &quoted(class));
    line(t, "from", &quoted(from));
    let _ = writeln!(t, "{rest}");
}
