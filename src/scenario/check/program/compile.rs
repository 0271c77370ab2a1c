//! The check stage of programs: `[program]`, `[topology]` and `[[disk]]` to a [`Program`],
//! collecting every problem with its field path (`program.op[2].body[0].to`) and byte offset.

use std::collections::HashMap;
use std::path::Path;

use toml::Spanned;

use crate::dist::{Dist, DistSpec};
use crate::problem::Problem;
use crate::program::collective::{Algorithm, Collective};
use crate::program::expr::{Env, Expr, Var};
use crate::program::marks::Dependency;
use crate::program::marks::{Mark, Marks};
use crate::program::{
    CollectiveOp, Destination, Disk, Groups, Instr, Interconnect, MAX_RANKS, Program, RANDOM,
    Sharing, Size, Switching, Work,
};
use crate::scenario::raw::program::{
    ExprText, OpKind, RawDisk, RawMachine, RawOp, RawProgram, RawSharing, RawSwitching,
    RawTopology, SizeSpec,
};
use crate::time::Clock;
use crate::topology::TopologyKind;
use crate::topology::dragonfly::Dragonfly;
use crate::topology::hyperx::HyperX;
use crate::topology::{Shape, Topology};

/// Deepest loop nesting.
const MAX_DEPTH: usize = 64;

/// The parts of a scenario that describe a program, with where each starts.
#[derive(Debug)]
pub struct Sources<'a> {
    /// `[program]` with its offset.
    pub program: &'a Spanned<RawProgram>,
    /// `[topology]` with its offset.
    pub topology: Option<&'a Spanned<RawTopology>>,
    /// Whether `[topology]` is written (when it is but `topology` is `None`, its shape problems
    /// have been reported and its absence is not one more).
    pub topology_written: bool,
    /// `[machine]` with its offset: message costs from a profile instead of a topology.
    pub machine: Option<&'a Spanned<RawMachine>>,
    /// `[[disk]]` with their offsets.
    pub disks: Vec<(usize, &'a RawDisk)>,
    /// `[loggp]` is given: the program may do without a topology (its messages then cross no
    /// links).
    pub endpoints: bool,
    /// The directory relative trace files are read from.
    pub base: &'a Path,
}

/// The interconnect a `[topology]` describes for `nodes` nodes; every problem is returned.
pub fn interconnect(
    t: &Spanned<RawTopology>,
    nodes: u32,
    base: &Path,
) -> Result<Interconnect, Vec<Problem>> {
    let mut c = Compiler::new(base, nodes, t.span().start);
    match c.topology(t, nodes) {
        Some(ic) if c.found.is_empty() => Ok(ic),
        _ => Err(c.found),
    }
}

/// A compiled program with where its operations were written.
pub struct Compiled {
    /// The program.
    pub program: Program,
    /// For each instruction of [`Program::code`], the byte offset of its operation.
    pub offsets: Vec<usize>,
}

/// Checks a program and builds it; every problem is returned.
pub fn compile(src: &Sources<'_>) -> Result<Compiled, Vec<Problem>> {
    let mut c = Compiler::new(src.base, 1, src.program.span().start);
    let at = src.program.span().start;
    let p = src.program.get_ref();
    let ranks = match p.ranks {
        Some(r) => r,
        None => {
            c.add(at, "program.ranks", "is missing (the number of ranks P)");
            1
        }
    };
    if !(1..=MAX_RANKS).contains(&ranks) {
        c.add(
            at,
            "program.ranks",
            format!("must be a whole number from 1 to {MAX_RANKS}, got {ranks}"),
        );
    }
    if p.goal.is_some() {
        c.add(
            at,
            "program.goal",
            "a GOAL schedule is the whole program: leave out [[program.op]]",
        );
    }
    c.ranks = ranks.clamp(1, MAX_RANKS) as u32;
    let ranks_per_node = c.whole(
        p.ranks_per_node,
        1,
        1,
        i64::from(c.ranks),
        at,
        "program.ranks_per_node",
    );
    c.per_node = ranks_per_node;
    let cores = c.whole(p.cores, 1, 1, 1024, at, "program.cores");
    let nodes = c.ranks.div_ceil(ranks_per_node);
    for (i, (at, d)) in src.disks.iter().enumerate() {
        c.disk(*at, i, d);
    }
    // a topology's size is judged against a valid number of ranks only
    let ranks_valid = p.ranks.is_some() && (1..=MAX_RANKS).contains(&ranks);
    let network = match (src.topology, src.machine) {
        (Some(t), None) => {
            let before = c.found.len();
            let network = c.topology(t, nodes);
            if !ranks_valid {
                let mut k = before;
                while k < c.found.len() {
                    if c.found[k].path == "topology" {
                        c.found.remove(k);
                    } else {
                        k += 1;
                    }
                }
            }
            network
        }
        (None, Some(m)) => c.machine(m, nodes),
        (Some(_), Some(m)) => {
            c.add(
                m.span().start,
                "machine",
                "give a [topology] or a [machine] profile, not both",
            );
            None
        }
        // written but unreadable: its shape problems were reported when the file was read
        (None, None) if src.topology_written => None,
        // LogGP endpoints alone: a placeholder the dependency-graph executor never uses
        (None, None) if src.endpoints => {
            Topology::new(Shape::Full, nodes)
                .ok()
                .map(|topology| Interconnect {
                    topology,
                    bandwidth: f64::INFINITY,
                    latency: 0.0,
                    global_latency: 0.0,
                    node_latency: 0.0,
                    startup: 0.0,
                    switching: Switching::CutThrough,
                    sharing: Sharing::Fcfs,
                })
        }
        (None, None) => {
            c.add(at, "topology", "a program needs a [topology] for its messages (kind = \"bus\", \"full\", \"ring\", \"mesh\", \"torus\", \"tree\", \"fat_tree\", \"dragonfly\" or \"hyperx\"), or a [machine] profile");
            None
        }
    };
    if let Some(net) = network.as_ref().filter(|_| ranks_valid) {
        c.memory(at, net);
    }
    if p.ops.is_empty() {
        c.add(
            at,
            "program.op",
            "the program has no operations ([[program.op]])",
        );
    }
    c.block(&p.ops, "program.op");
    let ((smallest, _, smallest_path), (largest, largest_at, largest_path)) =
        c.time_range(network.as_ref());
    if largest / smallest > MAX_TIME_RATIO {
        c.add(
            largest_at,
            largest_path,
            format!(
                "{largest:.3e} time units is {:.3e} times the program's smallest time \
                 ({smallest:.3e}, at {smallest_path}; times include message transmissions, bytes \
                 / bandwidth), a ratio beyond {MAX_TIME_RATIO:.1e} (2^37): the clock resolves \
                 2^-31 of the smallest time and must still hold 2^16 of the largest, so one of \
                 them is probably a mistake (a bandwidth in the wrong unit?)",
                largest / smallest
            ),
        );
    }
    if !c.found.is_empty() {
        c.found.sort_by_key(|f| f.at);
        return Err(c.found);
    }
    // without a network, the [topology] was written but unreadable, and its problems were
    // reported when the file was read
    let Some(network) = network else {
        return Err(c.found);
    };
    let marks = c.marks();
    if !c.found.is_empty() {
        c.found.sort_by_key(|f| f.at);
        return Err(c.found);
    }
    tabulate(&mut c.code, c.ranks, ranks_per_node);
    let loop_depth = c.depth_max();
    let typical_bytes = c.typical_bytes();
    let offsets = std::mem::take(&mut c.offsets);
    let program = Program {
        ranks: c.ranks,
        ranks_per_node,
        cores,
        code: c.code,
        paths: c.paths,
        loop_depth,
        typical_bytes,
        phases: c.phases,
        groups: c.groups,
        interconnect: network,
        disks: c.disks,
        clock: Clock::for_scale(smallest),
        report_each: p.report_each.unwrap_or(c.ranks <= 16),
        marks,
    };
    // every rank of a rooted collective names the same root (each its own would send
    // messages nobody receives)
    if let Some((i, message)) = split_root(&program) {
        return Err(vec![Problem::new(
            Some(offsets[i]),
            format!("{}.root", program.paths[i]),
            message,
        )]);
    }
    // the counts and durations known before the run, within their bounds
    let excess = crate::program::budget::check(&program);
    if !excess.is_empty() {
        return Err(excess
            .into_iter()
            .map(|e| {
                Problem::new(
                    Some(offsets[e.instr]),
                    format!("{}.{}", program.paths[e.instr], e.field),
                    e.message,
                )
            })
            .collect());
    }
    Ok(Compiled { program, offsets })
}

use crate::program::budget::MAX_TIME_RATIO;

/// A time of the program with its offset and field path.
type Timed = (f64, usize, String);

/// The first rooted collective whose root differs between ranks of one group (for roots known
/// before the run: expressions of `rank`, `P` and `node`), and what differs.
fn split_root(prog: &Program) -> Option<(usize, String)> {
    for (i, instr) in prog.code.iter().enumerate() {
        let Instr::Collective(op) = instr else {
            continue;
        };
        if !op.kind.rooted() || op.root.as_constant().is_some() || op.root.uses_loops() {
            continue;
        }
        // the root each group's first rank names, by group
        let mut named: HashMap<u32, (u32, i64)> = HashMap::new();
        for r in 0..prog.ranks {
            let group = op
                .group
                .map_or(0, |g| prog.groups[g as usize].group_of[r as usize]);
            let root = match op.root.quick(r) {
                Some(v) => v,
                None => match op.root.eval(&Env {
                    rank: i64::from(r),
                    ranks: i64::from(prog.ranks),
                    node: i64::from(r / prog.ranks_per_node),
                    loops: &[],
                }) {
                    Ok(v) => v,
                    Err(_) => continue, // reported by the run, with the rank
                },
            };
            match named.get(&group) {
                None => {
                    named.insert(group, (r, root));
                }
                Some(&(first, theirs)) if theirs != root => {
                    return Some((
                        i,
                        format!(
                            "`{}` names root {theirs} on rank {first} but {root} on rank {r}: every rank of a {} must name the same root",
                            op.root,
                            op.kind.name()
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    None
}

/// Tabulates the per-rank values of the expressions that read no loop counter (see
/// [`Expr::tabulate`]), in program order, up to [`crate::program::expr::MAX_TABULATED`] entries.
fn tabulate(code: &mut [Instr], ranks: u32, ranks_per_node: u32) {
    let mut budget = crate::program::expr::MAX_TABULATED;
    for i in code {
        let exprs = i.expressions_mut();
        for e in exprs {
            if budget < ranks as usize {
                return;
            }
            budget -= e.tabulate(ranks, |r| r / ranks_per_node);
        }
    }
}

struct Compiler<'a> {
    found: Vec<Problem>,
    base: &'a Path,
    code: Vec<Instr>,
    paths: Vec<String>,
    phases: Vec<String>,
    groups: Vec<Groups>,
    group_text: HashMap<String, u32>,
    disks: Vec<Disk>,
    /// Current loop nesting, and the deepest seen.
    depth: usize,
    loop_vars: Vec<String>,
    /// Mean times seen, for the clock, each with where it was given (offset and field path).
    times: Vec<(f64, usize, String)>,
    ranks: u32,
    /// Ranks a node (the hierarchical allreduce's nodes).
    per_node: u32,
    /// For each instruction, the offset of its operation.
    offsets: Vec<usize>,
    /// The offset of the operation being compiled.
    at: usize,
    /// Labels and dependencies of the operations that have them, by instruction.
    pending_marks: Vec<(usize, PendingMark)>,
}

/// An operation's label and dependencies as written.
struct PendingMark {
    at: usize,
    path: String,
    label: Option<String>,
    requires: Option<Vec<String>>,
    irequires: Option<Vec<String>>,
    wait: Vec<String>,
    nonblocking: bool,
}

impl<'a> Compiler<'a> {
    /// An empty compiler of a program of `ranks` ranks whose files are relative to `base`,
    /// at offset `at`.
    fn new(base: &'a Path, ranks: u32, at: usize) -> Compiler<'a> {
        Compiler {
            found: Vec::new(),
            base,
            code: Vec::new(),
            paths: Vec::new(),
            phases: Vec::new(),
            groups: Vec::new(),
            group_text: HashMap::new(),
            disks: Vec::new(),
            depth: 0,
            loop_vars: Vec::new(),
            times: Vec::new(),
            ranks,
            per_node: 1,
            offsets: Vec::new(),
            at,
            pending_marks: Vec::new(),
        }
    }

    fn add(&mut self, at: usize, path: impl Into<String>, message: impl Into<String>) {
        self.found
            .push(Problem::new(Some(at), path.into(), message.into()));
    }

    fn whole(
        &mut self,
        v: Option<i64>,
        default: i64,
        min: i64,
        max: i64,
        at: usize,
        path: &str,
    ) -> u32 {
        let v = v.unwrap_or(default);
        if !(min..=max).contains(&v) {
            self.add(
                at,
                path,
                format!("must be a whole number from {min} to {max}, got {v}"),
            );
        }
        v.clamp(min, max) as u32
    }

    /// Refuses a run of the program's ranks on `net` whose memory, estimated before it starts
    /// ([`crate::program::run_memory`]), is more than the process may take.
    fn memory(&mut self, at: usize, net: &Interconnect) {
        let need = crate::program::run_memory(self.ranks, net);
        if let Some(limit) = crate::memory::limit()
            && need > limit as f64
        {
            self.add(
                at,
                "program.ranks",
                format!(
                    "{} ranks need about {} ({} bytes a rank, with a message in flight each, and \
                     {} a link whose state a run keeps), more than the {} this process may take \
                     (the machine's memory, or a lower limit on the process); run fewer ranks, \
                     or on a machine with more memory",
                    self.ranks,
                    crate::memory::show(need),
                    crate::program::BYTES_PER_RANK,
                    crate::program::BYTES_PER_LINK,
                    crate::memory::show(limit as f64),
                ),
            );
        }
    }

    fn depth_max(&self) -> u16 {
        self.code
            .iter()
            .filter_map(|i| match i {
                Instr::Loop { depth, .. } => Some(depth + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    fn time(&mut self, at: usize, path: &str, what: &str, v: Option<f64>) -> f64 {
        let v = v.unwrap_or(0.0);
        if !(v.is_finite() && (0.0..=crate::dist::TIME_BOUNDS.1).contains(&v)) {
            self.add(
                at,
                format!("{path}.{what}"),
                format!("must be a finite time >= 0, got {v}"),
            );
            return 0.0;
        }
        if v > 0.0 && v < crate::dist::TIME_BOUNDS.0 {
            self.add(
                at,
                format!("{path}.{what}"),
                format!(
                    "{v:e} is below {:e} time units: express the times in a smaller unit",
                    crate::dist::TIME_BOUNDS.0
                ),
            );
        }
        if v > 0.0 {
            self.times.push((v, at, format!("{path}.{what}")));
        }
        v
    }

    fn rate(&mut self, at: usize, path: &str, v: f64) -> f64 {
        if !(v.is_finite() && v > 0.0) {
            self.add(
                at,
                path,
                format!("must be a finite number > 0 (bytes per time unit), got {v}"),
            );
            return 1.0;
        }
        v
    }

    /// A link per pair of nodes costing the profile's `a + b m` per message (see
    /// [`crate::models::profile`]).
    fn machine(&mut self, m: &Spanned<RawMachine>, nodes: u32) -> Option<Interconnect> {
        let at = m.span().start;
        let r = m.get_ref();
        let primitive = r.primitive.as_deref().unwrap_or("send");
        let profile =
            match crate::models::profile::MachineProfile::load(&self.base.join(&r.profile)) {
                Ok(p) => p,
                Err(e) => {
                    self.add(at, "machine.profile", e);
                    return None;
                }
            };
        let Some(fit) = profile.get(primitive, self.ranks) else {
            let measured: Vec<String> = profile
                .fits
                .iter()
                .filter(|f| f.primitive == primitive)
                .map(|f| f.ranks.to_string())
                .collect();
            self.add(
                at,
                "machine.primitive",
                format!(
                    "the profile has no fit of {primitive:?} at {} ranks (it has {primitive:?} at [{}])",
                    self.ranks,
                    measured.join(", ")
                ),
            );
            return None;
        };
        if !(fit.a >= 0.0 && fit.b > 0.0) {
            self.add(
                at,
                "machine.profile",
                format!(
                    "the fit of {primitive:?} at {} ranks, a = {:e}, b = {:e}, is not a message cost (needs a >= 0 and b > 0)",
                    self.ranks, fit.a, fit.b
                ),
            );
            return None;
        }
        let startup = self.time(at, "machine", "profile.a", Some(fit.a));
        let topology = match Topology::new(Shape::Full, nodes) {
            Ok(t) => t,
            Err(e) => {
                self.add(at, "machine", e);
                return None;
            }
        };
        Some(Interconnect {
            topology,
            bandwidth: 1.0 / fit.b,
            latency: 0.0,
            global_latency: 0.0,
            node_latency: 0.0,
            startup,
            switching: Switching::CutThrough,
            sharing: Sharing::Fcfs,
        })
    }

    fn disk(&mut self, at: usize, i: usize, d: &RawDisk) {
        let path = format!("disk[{i}]");
        if let Some(problem) = crate::metrics::name_problem(&d.name) {
            self.add(
                at,
                format!("{path}.name"),
                format!("{:?} is not a usable name: it {problem}", d.name),
            );
        }
        if self.disks.iter().any(|x| x.name == d.name) {
            self.add(
                at,
                format!("{path}.name"),
                format!("a disk named {:?} is already defined", d.name),
            );
        }
        let count = self.whole(d.count, 1, 1, 1 << 20, at, &format!("{path}.count"));
        let startup = self.time(at, &path, "startup", d.startup);
        let bandwidth = self.rate(at, &format!("{path}.bandwidth"), d.bandwidth);
        self.disks.push(Disk {
            name: d.name.clone(),
            count,
            startup,
            bandwidth,
        });
    }

    fn topology(&mut self, t: &Spanned<RawTopology>, nodes: u32) -> Option<Interconnect> {
        let at = t.span().start;
        let r = t.get_ref();
        let bandwidth = self.rate(at, "topology.bandwidth", r.bandwidth);
        let latency = self.time(at, "topology", "latency", r.latency);
        let startup = self.time(at, "topology", "startup", r.startup);
        self.fields_of_kind(at, r);
        let shape = match r.kind {
            TopologyKind::Bus => Shape::Bus,
            TopologyKind::Full => Shape::Full,
            TopologyKind::Ring => Shape::Grid {
                dims: vec![nodes],
                wrap: true,
            },
            TopologyKind::Mesh | TopologyKind::Torus | TopologyKind::Hyperx => {
                let Some(dims) = &r.dims else {
                    let hint = match r.kind {
                        TopologyKind::Hyperx => "a hyperx needs its routers along each dimension, e.g. dims = [4, 4] with hosts_per_router = 4".to_owned(),
                        _ => format!("a mesh or torus needs its dimensions, whose product is the {nodes} nodes, e.g. dims = {}", crate::topology::example_dims(nodes)),
                    };
                    self.add(at, "topology.dims", hint);
                    return None;
                };
                if dims
                    .iter()
                    .any(|&d| !(1..=i64::from(u32::MAX)).contains(&d))
                {
                    self.add(
                        at,
                        "topology.dims",
                        format!(
                            "each dimension must be a whole number from 1 to {}, got {dims:?}",
                            u32::MAX
                        ),
                    );
                    return None;
                }
                let dims = dims.iter().map(|&d| d as u32).collect();
                if r.kind == TopologyKind::Hyperx {
                    Shape::HyperX(HyperX {
                        dims,
                        hosts_per_router: self.router_size(
                            at,
                            "hosts_per_router",
                            r.hosts_per_router,
                            Some(1),
                        )?,
                    })
                } else {
                    Shape::Grid {
                        dims,
                        wrap: r.kind == TopologyKind::Torus,
                    }
                }
            }
            TopologyKind::Tree | TopologyKind::FatTree => Shape::Tree {
                arity: self.whole(r.arity, 2, 2, 1 << 16, at, "topology.arity"),
                fat: r.kind == TopologyKind::FatTree,
            },
            TopologyKind::Dragonfly => {
                let hosts_per_router =
                    self.router_size(at, "hosts_per_router", r.hosts_per_router, Some(1));
                let routers_per_group =
                    self.router_size(at, "routers_per_group", r.routers_per_group, None);
                let global_links_per_router = self.router_size(
                    at,
                    "global_links_per_router",
                    r.global_links_per_router,
                    None,
                );
                let most = u64::from(routers_per_group.unwrap_or(1))
                    * u64::from(global_links_per_router.unwrap_or(1))
                    + 1;
                let groups =
                    self.router_size(at, "groups", r.groups, Some(most.min(1 << 20) as i64));
                // (every size checked, each problem reported, before giving up)
                let (
                    Some(hosts_per_router),
                    Some(routers_per_group),
                    Some(global_links_per_router),
                    Some(groups),
                ) = (
                    hosts_per_router,
                    routers_per_group,
                    global_links_per_router,
                    groups,
                )
                else {
                    return None;
                };
                let d = Dragonfly {
                    hosts_per_router,
                    routers_per_group,
                    global_links_per_router,
                    groups,
                };
                if let Err(e) = d.check() {
                    let field = if e.starts_with("hosts_per_router") {
                        "hosts_per_router"
                    } else {
                        "groups"
                    };
                    self.add(at, format!("topology.{field}"), e);
                    return None;
                }
                Shape::Dragonfly(d)
            }
        };
        let node_capacity = self.node_links(at, r).map(|b| b / bandwidth);
        let topology = Topology::new(shape, nodes).and_then(|t| {
            let t = t.with_routing(r.routing.unwrap_or_default())?;
            let t = match node_capacity {
                Some(c) => t.with_node_links(c),
                None => t,
            };
            Ok(match r.global_bandwidth {
                Some(b) => {
                    let b = self.rate(at, "topology.global_bandwidth", b);
                    t.with_global_capacity(b / bandwidth)
                }
                None => t,
            })
        });
        let topology = match topology {
            Ok(t) => t,
            Err(e) => {
                let field = if e.contains("routing") {
                    "topology.routing"
                } else {
                    "topology"
                };
                self.add(at, field, e);
                return None;
            }
        };
        let global_latency = match r.global_latency {
            Some(_) => self.time(at, "topology", "global_latency", r.global_latency),
            None => latency,
        };
        let node_latency = match r.node_latency {
            Some(_) => self.time(at, "topology", "node_latency", r.node_latency),
            None => latency,
        };
        Some(Interconnect {
            topology,
            bandwidth,
            latency,
            global_latency,
            node_latency,
            startup,
            switching: match r.switching {
                Some(RawSwitching::StoreAndForward) => Switching::StoreAndForward,
                _ => Switching::CutThrough,
            },
            sharing: match r.sharing {
                Some(RawSharing::Fair) => Sharing::Fair,
                _ => Sharing::Fcfs,
            },
        })
    }

    /// The bandwidth of the nodes' own links (`node_bandwidth`), when they have them: refused
    /// where no two ranks share a node, and `node_latency` without them.
    fn node_links(&mut self, at: usize, r: &RawTopology) -> Option<f64> {
        let Some(b) = r.node_bandwidth else {
            if r.node_latency.is_some() {
                self.add(
                    at,
                    "topology.node_latency",
                    "is the latency of the nodes' own links: give their node_bandwidth too, or leave it out",
                );
            }
            return None;
        };
        let b = self.rate(at, "topology.node_bandwidth", b);
        if self.per_node == 1 {
            self.add(
                at,
                "topology.node_bandwidth",
                "no two ranks share a node (program.ranks_per_node = 1), so no message crosses a node's own link: set ranks_per_node, or leave out node_bandwidth",
            );
        }
        Some(b)
    }

    /// Refuses every field of `[topology]` its kind does not have.
    fn fields_of_kind(&mut self, at: usize, r: &RawTopology) {
        use TopologyKind as K;
        let fields: [(&str, bool, &[K]); 8] = [
            ("dims", r.dims.is_some(), &[K::Mesh, K::Torus, K::Hyperx]),
            ("arity", r.arity.is_some(), &[K::Tree, K::FatTree]),
            (
                "hosts_per_router",
                r.hosts_per_router.is_some(),
                &[K::Dragonfly, K::Hyperx],
            ),
            (
                "routers_per_group",
                r.routers_per_group.is_some(),
                &[K::Dragonfly],
            ),
            (
                "global_links_per_router",
                r.global_links_per_router.is_some(),
                &[K::Dragonfly],
            ),
            ("groups", r.groups.is_some(), &[K::Dragonfly]),
            (
                "global_bandwidth",
                r.global_bandwidth.is_some(),
                &[K::Dragonfly],
            ),
            (
                "global_latency",
                r.global_latency.is_some(),
                &[K::Dragonfly],
            ),
        ];
        for (field, given, kinds) in fields {
            if given && !kinds.contains(&r.kind) {
                let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                self.add(
                    at,
                    format!("topology.{field}"),
                    format!(
                        "does not apply to a {} topology (only to {})",
                        r.kind.name(),
                        names.join(", ")
                    ),
                );
            }
        }
    }

    /// A dragonfly's or HyperX's size `field`: a whole number from 1 to 2^20 (`default` when
    /// left out; required without one). `None` when it is not one (the problem added).
    fn router_size(
        &mut self,
        at: usize,
        field: &str,
        v: Option<i64>,
        default: Option<i64>,
    ) -> Option<u32> {
        let path = format!("topology.{field}");
        match v.or(default) {
            None => {
                self.add(at, path, "is missing: a dragonfly needs hosts_per_router, routers_per_group and global_links_per_router (groups defaults to a h + 1)");
                None
            }
            Some(v) if (1..=1 << 20).contains(&v) => Some(v as u32),
            Some(v) => {
                self.add(
                    at,
                    path,
                    format!("must be a whole number from 1 to {}, got {v}", 1 << 20),
                );
                None
            }
        }
    }

    fn block(&mut self, ops: &[Spanned<RawOp>], path: &str) {
        for (i, op) in ops.iter().enumerate() {
            self.op(op, &format!("{path}[{i}]"));
        }
    }

    fn expr(&mut self, at: usize, path: &str, text: &ExprText) -> Expr {
        let vars: Vec<&str> = self.loop_vars.iter().map(String::as_str).collect();
        Expr::parse(&text.0, &vars).unwrap_or_else(|e| {
            // a long expression is shown by its start (a message is read, not scrolled)
            let shown = if text.0.chars().count() > 80 {
                let start: String = text.0.chars().take(40).collect();
                format!("{start:?}... ({} characters)", text.0.chars().count())
            } else {
                format!("{:?}", text.0)
            };
            self.add(at, path, format!("{shown}: {}", e.0));
            Expr::constant(0)
        })
    }

    fn required<'t>(
        &mut self,
        at: usize,
        path: &str,
        field: &str,
        v: &'t Option<ExprText>,
    ) -> Option<&'t ExprText> {
        if v.is_none() {
            self.add(at, format!("{path}.{field}"), "is missing");
        }
        v.as_ref()
    }

    fn dist(&mut self, spec: &Spanned<DistSpec>, path: &str) -> Option<Dist> {
        match spec.get_ref().build(self.base) {
            Ok(d) => {
                if d.mean() > 0.0 {
                    self.times
                        .push((d.mean(), spec.span().start, path.to_owned()));
                }
                Some(d)
            }
            Err(e) => {
                self.add(spec.span().start, format!("{path}.{}", e.field), e.message);
                None
            }
        }
    }

    fn size(&mut self, at: usize, path: &str, spec: &Option<SizeSpec>) -> Option<Size> {
        let path = format!("{path}.bytes");
        match spec {
            None => {
                self.add(at, path, "is missing");
                None
            }
            Some(SizeSpec::Fraction(v)) => {
                self.add(
                    at,
                    path,
                    format!("must be a whole number of bytes, got {v}"),
                );
                None
            }
            Some(SizeSpec::Expr(text)) => {
                let e = self.expr(at, &path, text);
                if let Some(v) = e.as_constant()
                    && v < 0
                {
                    self.add(at, path, format!("must be >= 0, got {v}"));
                }
                Some(Size::Bytes(e))
            }
            Some(SizeSpec::Dist(spec)) => match spec.build(self.base) {
                Ok(d) => Some(Size::Random(d)),
                Err(e) => {
                    self.add(at, format!("{path}.{}", e.field), e.message);
                    None
                }
            },
        }
    }

    /// The fields each kind accepts besides `kind` and `when`.
    fn allowed(kind: OpKind) -> &'static [&'static str] {
        match kind {
            OpKind::Compute => &["time", "iterations", "cost", "split"],
            OpKind::Send | OpKind::Isend => &["to", "bytes", "tag", "received"],
            OpKind::Recv | OpKind::Irecv => &["from", "tag"],
            OpKind::Wait => &["for"],
            OpKind::Sendrecv => &["to", "from", "bytes", "tag"],
            OpKind::Barrier => &["algorithm", "group"],
            OpKind::Io => &["disk", "unit", "bytes"],
            OpKind::Bcast | OpKind::Scatter | OpKind::Gather => {
                &["bytes", "root", "algorithm", "segments", "group"]
            }
            OpKind::Reduce => &[
                "bytes",
                "root",
                "algorithm",
                "segments",
                "group",
                "combine",
                "combine_per_byte",
            ],
            OpKind::Allreduce => &[
                "bytes",
                "algorithm",
                "segments",
                "group",
                "combine",
                "combine_per_byte",
            ],
            OpKind::Allgather | OpKind::Alltoall => &["bytes", "algorithm", "group"],
            OpKind::Repeat => &["times", "var", "body"],
            OpKind::Phase => &["name", "body"],
        }
    }

    fn op(&mut self, op: &Spanned<RawOp>, path: &str) {
        let at = op.span().start;
        self.at = at;
        let o = op.get_ref();
        let given = [
            ("time", o.time.is_some()),
            ("iterations", o.iterations.is_some()),
            ("cost", o.cost.is_some()),
            ("split", o.split.is_some()),
            ("to", o.to.is_some()),
            ("from", o.from.is_some()),
            ("bytes", o.bytes.is_some()),
            ("tag", o.tag.is_some()),
            ("received", o.received.is_some()),
            ("root", o.root.is_some()),
            ("algorithm", o.algorithm.is_some()),
            ("segments", o.segments.is_some()),
            ("combine", o.combine.is_some()),
            ("combine_per_byte", o.combine_per_byte.is_some()),
            ("group", o.group.is_some()),
            ("disk", o.disk.is_some()),
            ("unit", o.unit.is_some()),
            ("times", o.times.is_some()),
            ("var", o.var.is_some()),
            ("name", o.name.is_some()),
            ("body", o.body.is_some()),
        ];
        let allowed = Self::allowed(o.kind);
        let block = matches!(o.kind, OpKind::Repeat | OpKind::Phase);
        for (field, present) in [
            ("label", o.label.is_some()),
            ("requires", o.requires.is_some()),
            ("irequires", o.irequires.is_some()),
        ] {
            if present && block {
                self.add(
                    at,
                    format!("{path}.{field}"),
                    format!(
                        "does not apply to a {:?}: give it to the operations inside",
                        o.kind
                    ),
                );
            }
        }
        if o.wait_for.is_some() && o.kind != OpKind::Wait {
            self.add(
                at,
                format!("{path}.for"),
                format!("does not apply to an operation of kind {:?}", o.kind),
            );
        }
        let marked = !block
            && (o.label.is_some()
                || o.requires.is_some()
                || o.irequires.is_some()
                || matches!(o.kind, OpKind::Irecv | OpKind::Wait));
        for (field, present) in given {
            if present && !allowed.contains(&field) {
                self.add(
                    at,
                    format!("{path}.{field}"),
                    format!("does not apply to an operation of kind {:?}", o.kind),
                );
            }
        }
        let before = self.code.len();
        let guard = o.when.as_ref().map(|w| {
            let cond = self.expr(at, &format!("{path}.when"), w);
            self.push(
                Instr::When {
                    cond,
                    skip: u32::MAX,
                },
                path,
            )
        });
        match o.kind {
            OpKind::Compute => self.compute(at, path, o),
            OpKind::Send | OpKind::Isend
                if o.received == Some(false) || o.to.as_ref().is_some_and(|t| t.0 == RANDOM) =>
            {
                self.traffic(at, path, o)
            }
            OpKind::Send | OpKind::Isend => {
                let to = self
                    .required(at, path, "to", &o.to)
                    .map(|t| self.expr(at, &format!("{path}.to"), t));
                let bytes = self.size(at, path, &o.bytes);
                let tag = self.tag(at, path, o);
                if let (Some(to), Some(bytes)) = (to, bytes) {
                    self.push(
                        Instr::Send {
                            to,
                            bytes,
                            tag,
                            blocking: o.kind == OpKind::Send,
                        },
                        path,
                    );
                }
            }
            OpKind::Recv | OpKind::Irecv => {
                let from = self
                    .required(at, path, "from", &o.from)
                    .map(|t| self.expr(at, &format!("{path}.from"), t));
                let tag = self.tag(at, path, o);
                if let Some(from) = from {
                    self.push(Instr::Recv { from, tag }, path);
                }
            }
            OpKind::Wait => {
                let problem = match &o.wait_for {
                    None => Some("is missing"),
                    Some(labels) if labels.is_empty() => Some("is empty"),
                    Some(_) => None,
                };
                if let Some(problem) = problem {
                    self.add(
                        at,
                        format!("{path}.for"),
                        format!("{problem}: give the labels of the operations to wait for"),
                    );
                }
                // a wait is a computation of no time that depends on what it waits for
                let nothing = Dist::deterministic(0.0).expect("0 is a valid deterministic time");
                self.push(Instr::Compute(Work::Time(nothing)), path);
            }
            OpKind::Sendrecv if o.to.as_ref().is_some_and(|t| t.0 == RANDOM) => self.add(
                at,
                format!("{path}.to"),
                "\"random\" is for a send or an isend, whose message no operation receives; a sendrecv's message is received: give a rank expression",
            ),
            OpKind::Sendrecv => {
                let to = self
                    .required(at, path, "to", &o.to)
                    .map(|t| self.expr(at, &format!("{path}.to"), t));
                let from = self
                    .required(at, path, "from", &o.from)
                    .map(|t| self.expr(at, &format!("{path}.from"), t));
                let bytes = self.size(at, path, &o.bytes);
                let tag = self.tag(at, path, o);
                if let (Some(to), Some(from), Some(bytes)) = (to, from, bytes) {
                    self.push(
                        Instr::SendRecv {
                            to,
                            from,
                            bytes,
                            tag,
                        },
                        path,
                    );
                }
            }
            OpKind::Io => self.io(at, path, o),
            OpKind::Barrier
            | OpKind::Bcast
            | OpKind::Reduce
            | OpKind::Allreduce
            | OpKind::Scatter
            | OpKind::Gather
            | OpKind::Allgather
            | OpKind::Alltoall => self.collective(at, path, o),
            OpKind::Repeat => self.repeat(at, path, o),
            OpKind::Phase => self.phase(at, path, o),
        }
        let main = guard.map_or(before, |g| g + 1);
        if marked && self.code.len() > main {
            self.pending_marks.push((
                main,
                PendingMark {
                    at,
                    path: path.to_owned(),
                    label: o.label.clone(),
                    requires: o.requires.clone(),
                    irequires: o.irequires.clone(),
                    wait: o.wait_for.clone().unwrap_or_default(),
                    nonblocking: o.kind == OpKind::Irecv,
                },
            ));
        }
        if let Some(g) = guard {
            let end = self.code.len() as u32;
            if let Instr::When { skip, .. } = &mut self.code[g] {
                *skip = end;
            }
        }
    }

    /// The labels and dependencies of the operations, checked: `None` when no operation has
    /// any (a sequential program).
    fn marks(&mut self) -> Option<Box<Marks>> {
        if self.pending_marks.is_empty() {
            return None;
        }
        let mut labels: Vec<String> = Vec::new();
        let mut index: HashMap<String, u32> = HashMap::new();
        let pending = std::mem::take(&mut self.pending_marks);
        for (_, m) in &pending {
            if let Some(l) = &m.label {
                if l.is_empty() {
                    self.add(m.at, format!("{}.label", m.path), "is empty");
                } else if index.contains_key(l) {
                    self.add(
                        m.at,
                        format!("{}.label", m.path),
                        format!("{l:?} labels another operation already: labels must be unique"),
                    );
                } else {
                    index.insert(l.clone(), labels.len() as u32);
                    labels.push(l.clone());
                }
            }
        }
        let mut of = vec![Mark::default(); self.code.len()];
        for (pc, m) in pending {
            let resolve = |names: &[String], field: &str, c: &mut Self| -> Vec<u32> {
                names
                    .iter()
                    .filter_map(|n| {
                        let found = index.get(n).copied();
                        if found.is_none() {
                            c.add(
                                m.at,
                                format!("{}.{field}", m.path),
                                format!("no operation is labelled {n:?}"),
                            );
                        }
                        found
                    })
                    .collect()
            };
            let mut after = None;
            if m.requires.is_some() || m.irequires.is_some() {
                let mut deps: Vec<(u32, Dependency)> = Vec::new();
                for l in resolve(m.requires.as_deref().unwrap_or(&[]), "requires", self) {
                    deps.push((l, Dependency::Requires));
                }
                for l in resolve(m.irequires.as_deref().unwrap_or(&[]), "irequires", self) {
                    deps.push((l, Dependency::Irequires));
                }
                after = Some(deps);
            }
            let wait = resolve(&m.wait, "for", self);
            of[pc] = Mark {
                label: m.label.as_ref().and_then(|l| index.get(l).copied()),
                after,
                wait,
                nonblocking: m.nonblocking,
            };
        }
        Some(Box::new(Marks { labels, of }))
    }

    fn push(&mut self, i: Instr, path: &str) -> usize {
        self.code.push(i);
        self.paths.push(path.to_owned());
        self.offsets.push(self.at);
        self.code.len() - 1
    }

    /// A `send` or `isend` no operation receives (`received = false`, or `to = "random"`: a
    /// rank drawn uniformly from the others, in a program of more than one rank): network
    /// traffic, without a tag.
    fn traffic(&mut self, at: usize, path: &str, o: &RawOp) {
        let random = o.to.as_ref().is_some_and(|t| t.0 == RANDOM);
        if random && o.received == Some(true) {
            self.add(
                at,
                format!("{path}.received"),
                "a message to a random rank cannot be received (no rank knows to expect it): leave out received = true",
            );
        }
        if random && self.ranks == 1 {
            self.add(
                at,
                format!("{path}.to"),
                "\"random\" draws one of the other ranks, and this program has one rank: give P >= 2, or a rank expression",
            );
        }
        if o.tag.is_some() {
            self.add(
                at,
                format!("{path}.tag"),
                "a message no operation receives has no tag: remove the field",
            );
        }
        let to = if random {
            Some(Destination::Random)
        } else {
            self.required(at, path, "to", &o.to)
                .map(|t| Destination::Rank(self.expr(at, &format!("{path}.to"), t)))
        };
        if let (Some(to), Some(bytes)) = (to, self.size(at, path, &o.bytes)) {
            self.push(
                Instr::Traffic {
                    to,
                    bytes,
                    blocking: o.kind == OpKind::Send,
                },
                path,
            );
        }
    }

    fn tag(&mut self, at: usize, path: &str, o: &RawOp) -> Expr {
        match &o.tag {
            Some(t) => {
                let e = self.expr(at, &format!("{path}.tag"), t);
                if let Some(v) = e.as_constant()
                    && !(0..1 << 40).contains(&v)
                {
                    self.add(
                        at,
                        format!("{path}.tag"),
                        format!("must lie in 0..2^40, got {v}"),
                    );
                }
                e
            }
            None => Expr::constant(0),
        }
    }

    fn compute(&mut self, at: usize, path: &str, o: &RawOp) {
        let work = match (&o.time, &o.iterations, &o.cost) {
            (Some(t), None, None) => {
                if o.split.is_some() {
                    self.add(
                        at,
                        format!("{path}.split"),
                        "applies to a region (iterations and cost), not to a time",
                    );
                }
                self.dist(t, &format!("{path}.time")).map(Work::Time)
            }
            (None, Some(iterations), Some(cost)) => {
                let iterations = self.expr(at, &format!("{path}.iterations"), iterations);
                let cost = self.dist(cost, &format!("{path}.cost"));
                cost.map(|cost| Work::Region {
                    iterations,
                    cost,
                    split: o.split.unwrap_or(true),
                })
            }
            _ => {
                self.add(at, format!("{path}.time"), "a compute needs either `time` (a distribution) or a region: `iterations` and `cost` (per iteration)");
                None
            }
        };
        if let Some(work) = work {
            self.push(Instr::Compute(work), path);
        }
    }

    fn io(&mut self, at: usize, path: &str, o: &RawOp) {
        let disk = match &o.disk {
            Some(name) => match self.disks.iter().position(|d| &d.name == name) {
                Some(d) => Some(d as u32),
                None => {
                    self.add(
                        at,
                        format!("{path}.disk"),
                        format!("unknown disk {name:?} (disks are declared with [[disk]])"),
                    );
                    None
                }
            },
            None => {
                self.add(at, format!("{path}.disk"), "is missing");
                None
            }
        };
        let unit = match &o.unit {
            Some(u) => self.expr(at, &format!("{path}.unit"), u),
            None => Expr::parse("rank", &[]).expect("valid"),
        };
        let bytes = self.size(at, path, &o.bytes);
        if let (Some(disk), Some(bytes)) = (disk, bytes) {
            if let Size::Bytes(b) = &bytes
                && let Some(v) = b.as_constant()
            {
                let d = &self.disks[disk as usize];
                let t = d.startup + v as f64 / d.bandwidth;
                if t > 0.0 {
                    self.times.push((t, at, format!("{path}.bytes")));
                }
            }
            self.push(Instr::Io { disk, unit, bytes }, path);
        }
    }

    fn collective(&mut self, at: usize, path: &str, o: &RawOp) {
        let kind = match o.kind {
            OpKind::Barrier => Collective::Barrier,
            OpKind::Bcast => Collective::Bcast,
            OpKind::Reduce => Collective::Reduce,
            OpKind::Allreduce => Collective::Allreduce,
            OpKind::Scatter => Collective::Scatter,
            OpKind::Gather => Collective::Gather,
            OpKind::Allgather => Collective::Allgather,
            _ => Collective::Alltoall,
        };
        let algorithm = match &o.algorithm {
            None => kind.algorithms()[0],
            Some(name) => match Algorithm::ALL.iter().find(|a| a.name() == name) {
                Some(&a) => a,
                None => {
                    let names: Vec<&str> = kind.algorithms().iter().map(|a| a.name()).collect();
                    self.add(
                        at,
                        format!("{path}.algorithm"),
                        format!(
                            "unknown algorithm {name:?} (for {kind}: {})",
                            names.join(", ")
                        ),
                    );
                    return;
                }
            },
        };
        let group = o.group.as_ref().and_then(|g| self.group(at, path, g));
        let sizes: Vec<u32> = match group {
            Some(g) => {
                let mut s: Vec<u32> = self.groups[g as usize]
                    .members
                    .iter()
                    .map(|m| m.len() as u32)
                    .collect();
                s.sort_unstable();
                s.dedup();
                s
            }
            None => vec![self.ranks],
        };
        let per_node = match group {
            None => Some(self.per_node),
            Some(g) => self.groups[g as usize].per_node,
        };
        if algorithm == Algorithm::Hierarchical && per_node.is_none() {
            self.add(
                at,
                format!("{path}.group"),
                "the hierarchical allreduce needs each group's members to fill their nodes in blocks of consecutive members, the same number on every node of every group: these groups do not (group whole nodes, e.g. \"rank / 8\" with 4 ranks a node, or interleave evenly, e.g. \"rank % 2\")",
            );
            return;
        }
        for &n in &sizes {
            if let Some(why) = kind.refuses(algorithm, n, per_node.unwrap_or(1)) {
                self.add(at, format!("{path}.algorithm"), why);
                return;
            }
        }
        let bytes = if kind == Collective::Barrier {
            Expr::constant(0)
        } else {
            match self.size(at, path, &o.bytes) {
                Some(Size::Bytes(e)) => e,
                Some(Size::Random(_)) => {
                    self.add(
                        at,
                        format!("{path}.bytes"),
                        "a collective's size must be an expression, not a distribution",
                    );
                    return;
                }
                None => return,
            }
        };
        let root = match &o.root {
            Some(r) => {
                let e = self.expr(at, &format!("{path}.root"), r);
                let smallest = sizes.first().copied().unwrap_or(1);
                if let Some(v) = e.as_constant()
                    && !(0..i64::from(smallest)).contains(&v)
                {
                    self.add(
                        at,
                        format!("{path}.root"),
                        format!("must be an index within the group, 0..{smallest}, got {v}"),
                    );
                }
                e
            }
            None => Expr::constant(0),
        };
        if !kind.segmented(algorithm) && o.segments.is_some() {
            self.add(
                at,
                format!("{path}.segments"),
                "applies to the chain algorithms and the allreduce's ring and double_binary_tree only",
            );
        }
        let segments = self.whole(o.segments, 1, 1, 1 << 20, at, &format!("{path}.segments"));
        let combine = o
            .combine
            .as_ref()
            .and_then(|c| self.dist(c, &format!("{path}.combine")));
        let combine_per_byte = match o.combine_per_byte {
            Some(v) if !(v.is_finite() && v >= 0.0) => {
                self.add(
                    at,
                    format!("{path}.combine_per_byte"),
                    format!("must be a finite time >= 0, got {v}"),
                );
                0.0
            }
            Some(v) => v,
            None => 0.0,
        };
        self.push(
            Instr::Collective(CollectiveOp {
                kind,
                algorithm,
                root,
                bytes,
                segments,
                combine,
                combine_per_byte,
                group,
            }),
            path,
        );
    }

    /// The groups of a group expression, built once per distinct expression.
    fn group(&mut self, at: usize, path: &str, text: &ExprText) -> Option<u32> {
        if let Some(&g) = self.group_text.get(&text.0) {
            return Some(g);
        }
        let e = Expr::parse(&text.0, &[]).map_err(|e| {
            self.add(
                at,
                format!("{path}.group"),
                format!(
                    "{:?}: {} (a group may use `rank`, `P` and `node` only)",
                    text.0, e.0
                ),
            );
        });
        let e = e.ok()?;
        let mut keys = Vec::with_capacity(self.ranks as usize);
        for r in 0..self.ranks {
            let env = Env {
                rank: i64::from(r),
                ranks: i64::from(self.ranks),
                node: 0,
                loops: &[],
            };
            match e.eval(&env) {
                Ok(k) => keys.push(k),
                Err(err) => {
                    self.add(at, format!("{path}.group"), format!("rank {r}: {}", err.0));
                    return None;
                }
            }
        }
        if e.uses(Var::Node) {
            self.add(
                at,
                format!("{path}.group"),
                "a group may use `rank` and `P`, not `node`",
            );
            return None;
        }
        let mut ids: HashMap<i64, u32> = HashMap::new();
        let mut groups = Groups {
            group_of: Vec::with_capacity(keys.len()),
            index_in: Vec::with_capacity(keys.len()),
            members: Vec::new(),
            per_node: None,
        };
        for (r, k) in keys.iter().enumerate() {
            let next = ids.len() as u32;
            let g = *ids.entry(*k).or_insert(next);
            if g as usize == groups.members.len() {
                groups.members.push(Vec::new());
            }
            groups.group_of.push(g);
            groups
                .index_in
                .push(groups.members[g as usize].len() as u32);
            groups.members[g as usize].push(r as u32);
        }
        groups.per_node = Groups::node_blocks(&groups.members, self.per_node);
        let g = self.groups.len() as u32;
        self.groups.push(groups);
        self.group_text.insert(text.0.clone(), g);
        Some(g)
    }

    fn body<'o>(&mut self, at: usize, path: &str, o: &'o RawOp) -> &'o [Spanned<RawOp>] {
        match &o.body {
            Some(b) if !b.is_empty() => b,
            _ => {
                self.add(
                    at,
                    format!("{path}.body"),
                    "is missing or empty: give the operations inside",
                );
                &[]
            }
        }
    }

    fn repeat(&mut self, at: usize, path: &str, o: &RawOp) {
        let Some(times) = self.required(at, path, "times", &o.times) else {
            return;
        };
        let times = self.expr(at, &format!("{path}.times"), times);
        if let Some(v) = times.as_constant()
            && v < 0
        {
            self.add(
                at,
                format!("{path}.times"),
                format!("must be >= 0, got {v}"),
            );
        }
        if self.depth >= MAX_DEPTH {
            self.add(
                at,
                path.to_owned(),
                format!("loops are nested more than {MAX_DEPTH} deep"),
            );
            return;
        }
        let var = o.var.clone().unwrap_or_default();
        if let Some(v) = &o.var
            && (matches!(v.as_str(), "rank" | "P" | "node")
                || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || v.starts_with(|c: char| c.is_ascii_digit()))
        {
            self.add(at, format!("{path}.var"), format!("{v:?} cannot name a loop counter (letters, digits and _, not starting with a digit, and not rank, P or node)"));
        }
        let depth = self.depth as u16;
        let start = self.push(
            Instr::Loop {
                times,
                depth,
                end: u32::MAX,
            },
            path,
        );
        self.depth += 1;
        self.loop_vars.push(var);
        let body = self.body(at, path, o);
        self.block(body, &format!("{path}.body"));
        self.loop_vars.pop();
        self.depth -= 1;
        self.push(
            Instr::Next {
                start: start as u32 + 1,
                depth,
            },
            path,
        );
        let end = self.code.len() as u32;
        if let Instr::Loop { end: e, .. } = &mut self.code[start] {
            *e = end;
        }
    }

    fn phase(&mut self, at: usize, path: &str, o: &RawOp) {
        let Some(name) = &o.name else {
            self.add(at, format!("{path}.name"), "is missing");
            return;
        };
        if let Some(problem) = crate::metrics::name_problem(name) {
            self.add(
                at,
                format!("{path}.name"),
                format!("{name:?} is not a usable name: it {problem}"),
            );
        }
        let id = match self.phases.iter().position(|p| p == name) {
            Some(i) => i,
            None => {
                self.phases.push(name.clone());
                self.phases.len() - 1
            }
        } as u16;
        self.push(Instr::PhaseStart(id), path);
        let body = self.body(at, path, o);
        self.block(body, &format!("{path}.body"));
        self.push(Instr::PhaseEnd(id), path);
    }

    /// The mean of the program's constant message sizes (1 when it has none): the scale of its
    /// link delays.
    fn typical_bytes(&self) -> f64 {
        let sizes: Vec<f64> = self
            .code
            .iter()
            .filter_map(|i| match i {
                Instr::Send {
                    bytes: Size::Bytes(b),
                    ..
                }
                | Instr::SendRecv {
                    bytes: Size::Bytes(b),
                    ..
                } => b.as_constant(),
                Instr::Collective(c) => c.bytes.as_constant(),
                _ => None,
            })
            .filter(|&b| b > 0)
            .map(|b| b as f64)
            .collect();
        if sizes.is_empty() {
            1.0
        } else {
            sizes.iter().sum::<f64>() / sizes.len() as f64
        }
    }

    /// The smallest and largest positive times of the program (the smallest sets its clock's
    /// scale).
    /// The smallest and largest time of the program, each with where it is given (offset and
    /// field path).
    fn time_range(&mut self, network: Option<&Interconnect>) -> (Timed, Timed) {
        let mut times = std::mem::take(&mut self.times);
        // disk requests of a random size (constant ones are counted where they are compiled):
        // they bound the largest time only, so that the clock of every program that was valid
        // before stays the same
        let mut longer = Vec::new();
        for (k, i) in self.code.iter().enumerate() {
            if let Instr::Io {
                disk,
                bytes: Size::Random(d),
                ..
            } = i
                && let Some(disk) = self.disks.get(*disk as usize)
            {
                let t = disk.startup + d.mean() / disk.bandwidth;
                if t > 0.0 {
                    longer.push((t, self.offsets[k], format!("{}.bytes", self.paths[k])));
                }
            }
        }
        if let Some(n) = network {
            for (k, i) in self.code.iter().enumerate() {
                let bytes = match i {
                    Instr::Send {
                        bytes: Size::Bytes(b),
                        ..
                    }
                    | Instr::SendRecv {
                        bytes: Size::Bytes(b),
                        ..
                    } => b.as_constant().map(|b| b as f64),
                    Instr::Send {
                        bytes: Size::Random(d),
                        ..
                    }
                    | Instr::SendRecv {
                        bytes: Size::Random(d),
                        ..
                    } => Some(d.mean()),
                    Instr::Collective(c) => c.bytes.as_constant().map(|b| b as f64),
                    _ => None,
                };
                if let Some(b) = bytes.filter(|&b| b > 0.0) {
                    times.push((
                        b / n.bandwidth,
                        self.offsets[k],
                        format!("{}.bytes", self.paths[k]),
                    ));
                }
            }
        }
        let positive = || times.iter().filter(|t| t.0 > 0.0);
        let smallest = positive().min_by(|a, b| a.0.total_cmp(&b.0)).cloned();
        let largest = positive()
            .chain(&longer)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .cloned();
        match (smallest, largest) {
            (Some(s), Some(l)) => (s, l),
            _ => {
                let none = (1.0, 0, String::new());
                (none.clone(), none)
            }
        }
    }
}
