//! `parsim route`.

use std::io::Write as _;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use parsim::analytic::MessageCost;
use parsim::program::{Interconnect, Switching};
use parsim::scenario::assign::Assignment;
use parsim::scenario::{Scenario, Workload};
use parsim::schedule::Form;

/// Options of `parsim route`.
#[derive(Debug, Args)]
pub struct RouteArgs {
    /// A program scenario (TOML with [program] and [topology]; `-` reads it from standard
    /// input), or a GOAL file with --topology.
    file: PathBuf,
    /// Source rank.
    #[arg(long, required_unless_present = "loads")]
    from: Option<u32>,
    /// Destination rank.
    #[arg(long, required_unless_present = "loads")]
    to: Option<u32>,
    /// Also print the idle-network cost of a message of this many bytes (a whole number, at
    /// most 2^53).
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=1 << 53))]
    bytes: Option<u64>,
    /// Print instead the channel loads of the whole program: the bytes each link carries under
    /// the routing (expected over Valiant's intermediates; the host links only under UGAL and
    /// adaptive routes), the busiest first, and the share of a host's bandwidth at which the
    /// busiest link saturates when every node injects in the program's proportions.
    #[arg(long, conflicts_with_all = ["from", "to", "bytes"])]
    loads: bool,
    /// Override a scenario field (repeatable), as `run --set` does: KEY is its path, e.g.
    /// topology.routing; VALUE is read as TOML (a bare word is a string).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Assignment::parse)]
    set: Vec<Assignment>,
    #[command(flatten)]
    machine: super::run::MachineArgs,
}

/// The interconnect a scenario's messages cross, its ranks, and its ranks per node.
fn links_of(sc: &Scenario) -> anyhow::Result<(&Interconnect, u32, u32)> {
    let file = sc.path.display();
    match &sc.workload {
        Workload::Program(p) => Ok((&p.interconnect, p.ranks, p.ranks_per_node)),
        Workload::Schedule(s) => {
            let Some(links) = &s.machine.links else {
                let how = if matches!(s.form, Form::Dag(_)) {
                    "give the links with --topology (e.g. --topology 'kind=\"torus\",dims=[4,4],bandwidth=1e10,latency=1e-7')"
                } else {
                    "give it a [topology]"
                };
                anyhow::bail!(
                    "{file} runs on LogGP endpoints alone, whose messages cross no links: {how}"
                );
            };
            Ok((&links.interconnect, s.ranks(), links.ranks_per_node))
        }
        Workload::Network(_) => anyhow::bail!(
            "{file} is a queueing network (routed classes), not a rank program: it has no ranks and no topology"
        ),
    }
}

/// A number as written when it is a whole one of at most 15 digits, else in scientific form.
fn whole(v: f64) -> String {
    if !v.is_finite() || (v.fract() == 0.0 && v.abs() < 1e15) {
        format!("{v}")
    } else {
        parsim::report::num(v)
    }
}

/// Prints the links a message crosses from one rank to another.
pub fn run(args: &RouteArgs) -> anyhow::Result<ExitCode> {
    let scenarios = super::run::load_all_with(
        std::slice::from_ref(&args.file),
        &args.set,
        &args.machine.machine(),
    )?;
    let sc = &scenarios[0];
    if args.loads {
        return loads(sc);
    }
    let (net, ranks, per_node) = links_of(sc)?;
    let (Some(from), Some(to)) = (args.from, args.to) else {
        anyhow::bail!("give --from and --to, or --loads");
    };
    for (flag, r) in [("--from", from), ("--to", to)] {
        anyhow::ensure!(
            r < ranks,
            "{flag} {r}: the program has {ranks} ranks, 0 to {}",
            ranks - 1
        );
    }
    // every option is checked before anything is printed
    let cost = match args.bytes {
        None => None,
        Some(bytes) => {
            // exact: at most 2^53
            let bytes = bytes as f64;
            let (src, dst) = (from / per_node, to / per_node);
            let cost = MessageCost {
                startup: net.startup,
                per_hop: net.latency,
                per_byte: 1.0 / net.bandwidth,
            };
            let route = net.topology.route(src, dst);
            let l = route.len() as u32;
            // global links of a latency of their own add to `l t_h`
            let extra: f64 = route
                .iter()
                .map(|h| net.hop_latency(h.link) - net.latency)
                .sum();
            let (name, t) = match net.switching {
                Switching::StoreAndForward => (
                    "store-and-forward t_s + (m t_w + t_h) l",
                    cost.store_and_forward(bytes, l)?,
                ),
                Switching::CutThrough => (
                    "cut-through t_s + l t_h + m t_w",
                    cost.cut_through(bytes, l)?,
                ),
            };
            let t = t + extra;
            anyhow::ensure!(
                t.is_finite(),
                "--bytes {}: the cost of the message passes the largest number parsim holds (about 1.8e308 time units): the bandwidth is too small for it",
                whole(bytes)
            );
            Some((bytes, name, t))
        }
    };
    let (src, dst) = (from / per_node, to / per_node);
    let route = net.topology.route(src, dst);
    let mut out = parsim::files::stdout();
    writeln!(
        out,
        "{}: rank {} (node {src}) to rank {} (node {dst}): {} links",
        net.topology.shape(),
        from,
        to,
        route.len()
    )?;
    let routing = net.topology.routing();
    if routing != parsim::topology::Routing::Minimal {
        writeln!(
            out,
            "  (the minimal route: under {} routing each message may take a detour, chosen as it goes)",
            routing.name()
        )?;
    }
    for (k, hop) in route.iter().enumerate() {
        let capacity = net.topology.capacity(hop.link);
        writeln!(
            out,
            "  {:>3}  {:<16}  bandwidth {}",
            k + 1,
            net.topology.link_name(hop.link),
            whole(net.bandwidth * capacity)
        )?;
    }
    if let Some((bytes, name, t)) = cost {
        writeln!(
            out,
            "idle-network cost of {bytes} bytes ({name}): {}",
            parsim::report::num(t)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// How many of the busiest links `--loads` lists.
const LISTED: usize = 12;

/// `--loads`: the channel loads of a rank program's whole run.
fn loads(sc: &Scenario) -> anyhow::Result<ExitCode> {
    let file = sc.path.display();
    let Workload::Program(prog) = &sc.workload else {
        anyhow::bail!(
            "{file}: --loads walks a rank program's messages; this is not one (a GOAL file or a queueing network)"
        );
    };
    let net = &prog.interconnect;
    let loads = parsim::predict::program::evaluation::channel_loads(prog)
        .map_err(|why| anyhow::anyhow!("{file}: the channel loads cannot be walked: {why}"))?;
    let links = loads.by_link(&net.topology, net.bandwidth);
    let mut out = parsim::files::stdout();
    let known = if net.topology.crossings_known() {
        "every link"
    } else {
        "the host links only (the routes between routers follow the backlogs)"
    };
    writeln!(
        out,
        "{}: the channel loads of the whole program under {} routes, {known}: {} messages",
        net.topology.shape(),
        net.topology.routing().name(),
        loads.messages()
    )?;
    let Some(&(busiest, _, longest)) = links.first() else {
        writeln!(out, "  no message crosses a link")?;
        return Ok(ExitCode::SUCCESS);
    };
    writeln!(
        out,
        "  {:<16}  {:>14}  {:>14}",
        "link", "bytes", "transmission"
    )?;
    for &(link, bytes, time) in links.iter().take(LISTED) {
        writeln!(
            out,
            "  {:<16}  {:>14}  {:>14}",
            net.topology.link_name(link),
            parsim::report::num(bytes),
            parsim::report::num(time)
        )?;
    }
    if links.len() > LISTED {
        writeln!(out, "  ... {} more links", links.len() - LISTED)?;
    }
    let injected = loads.most_injected() / net.bandwidth;
    let (at_most, unseen) = if net.topology.crossings_known() {
        ("", "")
    } else {
        ("at most ", " (the links between routers are not counted)")
    };
    writeln!(
        out,
        "the busiest link, {}, transmits for {} where the busiest node injects for {}: the nodes saturate it at {at_most}{:.1}% of their injection bandwidth{unseen}",
        net.topology.link_name(busiest),
        parsim::report::num(longest),
        parsim::report::num(injected),
        100.0 * injected / longest
    )?;
    Ok(ExitCode::SUCCESS)
}
