//! `parsim route`.

use std::io::Write as _;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use parsim::analytic::MessageCost;
use parsim::program::Switching;

/// Options of `parsim route`.
#[derive(Debug, Args)]
pub struct RouteArgs {
    /// A program scenario (TOML with [program] and [topology]).
    file: PathBuf,
    /// Source rank.
    #[arg(long)]
    from: u32,
    /// Destination rank.
    #[arg(long)]
    to: u32,
    /// Also print the idle-network cost of a message of this many bytes.
    #[arg(long)]
    bytes: Option<f64>,
}

/// Prints the links a message crosses from one rank to another.
pub fn run(args: &RouteArgs) -> anyhow::Result<ExitCode> {
    let scenarios = super::run::load_all(std::slice::from_ref(&args.file), &[])?;
    let sc = &scenarios[0];
    let Some(prog) = sc.program() else {
        anyhow::bail!(
            "{} is a queueing network, not a program: it has no topology",
            sc.path.display()
        );
    };
    for (flag, r) in [("--from", args.from), ("--to", args.to)] {
        anyhow::ensure!(
            r < prog.ranks,
            "{flag} {r}: the program has {} ranks, 0 to {}",
            prog.ranks,
            prog.ranks - 1
        );
    }
    // every option is checked before anything is printed
    if let Some(bytes) = args.bytes {
        anyhow::ensure!(
            bytes.is_finite() && bytes >= 0.0,
            "--bytes {bytes}: a message size must be a finite number of bytes >= 0"
        );
    }
    let net = &prog.network;
    let (src, dst) = (prog.node_of(args.from), prog.node_of(args.to));
    let route = net.topology.route(src, dst);
    writeln!(
        parsim::files::stdout(),
        "{}: rank {} (node {src}) to rank {} (node {dst}): {} links",
        net.topology.shape(),
        args.from,
        args.to,
        route.len()
    )?;
    for (k, hop) in route.iter().enumerate() {
        let capacity = net.topology.capacity(hop.link);
        writeln!(
            parsim::files::stdout(),
            "  {:>3}  {:<16}  bandwidth {}",
            k + 1,
            net.topology.link_name(hop.link),
            net.bandwidth * capacity
        )?;
    }
    if let Some(bytes) = args.bytes {
        let cost = MessageCost {
            startup: net.startup,
            per_hop: net.latency,
            per_byte: 1.0 / net.bandwidth,
        };
        let l = route.len() as u32;
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
        writeln!(
            parsim::files::stdout(),
            "idle-network cost of {bytes} bytes ({name}): {}",
            parsim::report::num(t)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
