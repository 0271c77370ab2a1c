//! The contention-free mean-value evaluation of a program: each rank's compiled instructions
//! walked with every duration at its mean, independently of the simulator's event engine.
//!
//! A compute takes its mean, a region `n` times its cost's mean, a disk request
//! `startup + bytes / bandwidth`, a combine its mean; a message costs the lecture notes' formula
//! over its route (store-and-forward or cut-through, hop by hop, so a fat tree's faster upper
//! links count) with no queueing anywhere: a link, a processor and a disk unit serve whatever
//! reaches them at once. Sends are buffered (see [`super`]), so a message's delivery depends on
//! its sender alone: `send` ends at its delivery, `isend` after the startup, a `recv` at
//! `max(its rank's clock, the delivery)` of the next message on its (source, tag) in send order,
//! a collective step at the later of its send's delivery and its receive, then its combine, by
//! the algorithm's own steps ([`Collective::step`]); an ideal barrier
//! releases its group when the last member arrives. Ranks run in turn until each blocks on a
//! message not yet sent; nothing is compared across ranks but clocks, so the cost is linear in
//! the operations executed and the hops crossed.
//!
//! The evaluation also keeps each resource's timeline (link crossings, disk requests, and the
//! computes of a node with more ranks than cores), so [`Evaluation::sharing`] says from the
//! evaluation itself whether two messages met on a link or two requests at a disk unit: when
//! nothing met and every duration and size is deterministic, the evaluation is what the
//! simulator computes.
//!
//! A long outermost loop is walked over its first iterations and extended once the walk is
//! periodic (module `extension`), so the walk's cost grows with the iterations it takes to settle,
//! not with the loop's count.

mod extension;
mod in_order;
mod lookup;

use super::channels::ChannelLoads;
use crate::topology::{NO_DETOUR, Routing};
pub use in_order::FcfsLine;
use in_order::Ready;
use lookup::{LinkSlots, Mailbox};

use rustc_hash::FxHashMap;

use super::delays::Delays;
use super::graph::{self, Duration, Graph, Message, Random};
use crate::dist::Dist;
use crate::program::Traffic;
use crate::program::collective::{Algorithm, Collective, GroupShape};
use crate::program::control::{Control, Phases};
use crate::program::repetition::OuterLoop;
use crate::program::{
    Category, CollectiveOp, Destination, Instr, Program, ProgramFault, Size, Switching, Work,
};
use crate::rng::{StreamRng, stream};
use crate::time::{wide_ceil_from_f64, wide_to_f64};
use rand::RngExt;

/// Operations the evaluation executes before it gives up: about 4 s of walking on one core of
/// the machine class of `benches/RESULTS.md`, where a replication of such a program takes
/// minutes (at 2e9, a refusal took 15 s).
const MAX_OPS: u64 = 500_000_000;

/// What the walk notes in [`Evaluation::random`] for the messages to random ranks.
pub const SAMPLED: &str =
    "destinations of messages to random ranks are one sample of their draws (not the run's)";

/// The master seed of the detours the walk draws for routes that are not minimal.
const ROUTE_SEED: u64 = 0x726f_7574_6573;

/// The tags of network traffic in the walk, which no receive matches: to a rank an
/// expression gives, and to a random rank.
const TRAFFIC_TAG: u64 = u64::MAX - 1;
const RANDOM_TAG: u64 = u64::MAX;

/// The master seed of the destinations the walk draws for messages to random ranks (one
/// sample, the same for every analysis; the runs draw their own).
const DESTINATION_SEED: u64 = 0x7261_6e64_6f6d;

/// Resource uses kept for the sharing check; beyond them sharing is not checked.
const MAX_USES: usize = 16_000_000;

/// The category indices of [`Category`].
const COMPUTE: usize = Category::Compute as usize;
const COMMUNICATION: usize = Category::Communication as usize;
const WAITING: usize = Category::Waiting as usize;
const IO: usize = Category::Io as usize;

/// What the contention-free evaluation found.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// When the last rank finished.
    pub makespan: f64,
    /// Per rank: time in each category (compute, communication, waiting, io).
    pub spent: Vec<[f64; 4]>,
    /// Per rank: whether it executed any operation of each category (a category it never
    /// entered is zero whatever chance does).
    pub entered: Vec<[bool; 4]>,
    /// Per rank: when it finished.
    pub finish: Vec<f64>,
    /// Per phase, per rank: time inside the phase.
    pub phases: Vec<Vec<f64>>,
    /// Messages delivered.
    pub messages: u64,
    /// Mean injection-to-delivery time of the messages (`NaN` without messages).
    pub message_delay: f64,
    /// The 99th percentile of the same, as the simulator's histogram reports it.
    pub message_p99: f64,
    /// Every link crossed, in link order.
    pub links: Vec<LinkLoad>,
    /// What met at a resource on the evaluation's own timeline, if anything (see
    /// [`Sharing`]).
    pub sharing: Sharing,
    /// Where the evaluation used a mean for a random quantity (empty: everything executed was
    /// deterministic).
    pub random: Vec<String>,
    /// Per rank: the clock from which its times depend on chance (infinite: never), because it
    /// drew a random quantity or received a message or left a barrier whose time did; what it
    /// settled before is deterministic.
    pub tainted: Vec<f64>,
    /// Per phase, per rank: when the rank first entered the phase (infinite: never).
    pub phase_starts: Vec<Vec<f64>>,
    /// Per phase, per rank: when the rank last left the phase.
    pub phase_ends: Vec<Vec<f64>>,
    /// Per phase: what its messages' routes were (for its closed forms' labels).
    pub phase_routes: Vec<PhaseRoutes>,
    /// True when no resource can ever serve two uses at once whatever the durations: each link
    /// carries the blocking messages of one sender, each disk unit serves one rank, and no node
    /// has more ranks than cores.
    pub unshareable: bool,
    /// Every crossing of a link, in the walk's order (which does not depend on the durations):
    /// recorded only by [`evaluate_served`].
    pub crossings: Vec<Crossing>,
    /// When the walk was extended from the outermost loop's first iterations (once every rank's
    /// clock grew alike each iteration, by what the last iterations added): the iterations
    /// walked and the loop's count.
    pub extended: Option<(i64, i64)>,
    /// The activities of the execution's graph, when it was asked for (recorded or not:
    /// counted as the walk goes, or estimated from the iterations walked when the walk was
    /// extended); zero when it was not.
    pub activities: usize,
}

/// One message's crossing of one link, on the evaluation's timeline.
#[derive(Clone, Copy, Debug)]
pub struct Crossing {
    /// The link's id.
    pub link: u64,
    /// The rank that sent the message.
    pub sender: u32,
    /// When the message's header reached the link (before any wait for it).
    pub enter: f64,
    /// Its transmission time on the link in the evaluation (`bytes / capacity`).
    pub alone: f64,
    /// The same as the simulator serves it: rounded up to whole clock ticks.
    pub work: f64,
}

/// The routes of the messages sent inside a phase (by ranks inside it), on the evaluation's
/// own timeline: a contention-free closed form of one link per message is exact when every
/// message crossed one link of unit capacity and no two crossings that overlapped in time shared
/// a link.
#[derive(Clone, Debug, Default)]
pub struct PhaseRoutes {
    /// The most links a message crossed.
    pub most_hops: u32,
    /// True when a message crossed a link of capacity other than 1.
    pub uneven: bool,
    /// Links whose crossings overlapped while a rank was in the phase: how many.
    pub shared: usize,
    /// The first few of them (by link order), by name.
    pub shared_names: Vec<String>,
}

/// Shared links of a phase named in [`PhaseRoutes::shared_names`].
const NAMED_SHARED: usize = 3;

/// One link's load in the evaluation.
#[derive(Clone, Debug)]
pub struct LinkLoad {
    /// Its id ([`crate::topology::Hop::link`]).
    pub id: u64,
    /// Its name ([`crate::topology::Topology::link_name`]).
    pub name: String,
    /// Crossings.
    pub messages: u64,
    /// Time spent transmitting (the sum of `bytes / capacity`).
    pub busy: f64,
    /// The sum of the squares of its crossings' transmission times.
    pub busy_squared: f64,
    /// Whether more than one rank sends across it.
    pub shared: bool,
    /// The 99th percentile of its crossings' transmission times, as the simulator's histogram
    /// reports it (`None` unless the program reports each link).
    pub p99: Option<f64>,
}

/// Resources on which the evaluation's own timeline has two uses at once.
#[derive(Clone, Debug)]
pub struct Sharing {
    /// Links with overlapping crossings: how many, and the first by link order with its most
    /// crossings at once.
    pub links: usize,
    /// The first such link's name and its most crossings at once.
    pub first_link: Option<(String, usize)>,
    /// The first disk unit with overlapping requests (disk name, unit).
    pub disk: Option<(String, u32)>,
    /// The first node whose computes overlap on more than its cores.
    pub node: Option<u32>,
    /// More uses than `MAX_USES`: sharing was not checked.
    pub unchecked: bool,
    /// The earliest time two uses met at a resource (infinite: never; `-inf` when unchecked).
    pub from: f64,
}

impl Default for Sharing {
    fn default() -> Sharing {
        Sharing {
            links: 0,
            first_link: None,
            disk: None,
            node: None,
            unchecked: false,
            from: f64::INFINITY,
        }
    }
}

impl Sharing {
    /// True when nothing met anywhere (and that was checked).
    pub fn none(&self) -> bool {
        self.links == 0 && self.disk.is_none() && self.node.is_none() && !self.unchecked
    }

    /// What met, in words, one item per kind of resource.
    pub fn describe(&self, prog: &Program) -> Vec<String> {
        let mut why = Vec::new();
        if let Some((name, most)) = &self.first_link {
            let others = match self.links {
                1 => String::new(),
                n => format!(" and {} other links", n - 1),
            };
            why.push(format!(
                "messages share link {name}{others} ({most} at once on the evaluation's own timeline; it has no queueing)"
            ));
        }
        why.extend(self.describe_beyond_links(prog));
        why
    }

    /// What met apart from links (disk units, processors), in words, one item per kind (and
    /// that sharing was not checked, beyond `MAX_USES` uses).
    pub fn describe_beyond_links(&self, prog: &Program) -> Vec<String> {
        let mut why = Vec::new();
        if let Some((disk, unit)) = &self.disk {
            why.push(format!(
                "requests overlap at unit {unit} of disk {disk} (the evaluation has no queueing)"
            ));
        }
        if let Some(node) = self.node {
            why.push(format!(
                "computes overlap on the {} cores of node {node} ({} ranks per node; the evaluation has no processor queueing)",
                prog.cores, prog.ranks_per_node
            ));
        }
        if self.unchecked {
            why.push(format!(
                "more than {MAX_USES} resource uses: sharing was not checked"
            ));
        }
        why
    }
}

/// Evaluates `prog` contention-free at mean values, walking every iteration of every loop (the
/// walks of [`evaluate_with_graph`] and [`evaluate_with_waits`] extend a long loop from its first
/// iterations instead); an error says why it cannot (an expression that fails, a deadlock, a
/// program too long to walk).
pub fn evaluate(prog: &Program) -> Result<Evaluation, String> {
    let mut w = Walker::new(prog, false);
    w.run()?;
    Ok(w.finish().0)
}

/// [`evaluate`], recording the execution's activity graph (`graph`) as it goes: `Err` in the
/// graph's place says why there is none (more than `graph::MAX_NODES` nodes).
pub fn evaluate_with_graph(
    prog: &Program,
) -> Result<(Evaluation, Result<Graph<'_>, String>), String> {
    walk(prog, LinkService::Free, Keep::GraphAndUses, None)
}

/// The activity graph of `prog`'s mean-value walk, contention-free or with a mean wait before
/// every crossing of the links in `waits` ([`evaluate_with_waits`]), for a caller that needs
/// the graph alone (the evaluation's sharing check is not made, nor its resource uses kept).
/// The outer `Err` says why the walk fails, the inner one why there is no graph.
pub fn activity_graph<'p>(
    prog: &'p Program,
    waits: Option<&FxHashMap<u64, f64>>,
) -> Result<Result<Graph<'p>, String>, String> {
    let service = waits.map_or(LinkService::Free, |w| LinkService::MeanWaits(w.clone()));
    walk(prog, service, Keep::Graph, None).map(|(_, graph)| graph)
}

/// [`evaluate_with_graph`] (the graph only if `record`) with a mean wait before every crossing
/// of the links in `waits` (by link id): the mean-value evaluation of queueing that
/// `super::queueing` iterates.
pub fn evaluate_with_waits(
    prog: &Program,
    waits: FxHashMap<u64, f64>,
    record: bool,
) -> Result<(Evaluation, Result<Graph<'_>, String>), String> {
    walk(
        prog,
        LinkService::MeanWaits(waits),
        Keep::graph_if(record),
        None,
    )
}

/// [`evaluate_with_waits`] without the graph, for a program whose walk with other waits was
/// extended from its outermost loop's first `cut` iterations ([`Evaluation::extended`]): the
/// extension starts at the pair of cuts that ends at `cut`, both walked side by side (the later
/// steps of the M/G/1 waits' fixed point, whose walks settle alike).
pub fn evaluate_with_waits_from(
    prog: &Program,
    waits: FxHashMap<u64, f64>,
    cut: i64,
) -> Result<Evaluation, String> {
    walk(prog, LinkService::MeanWaits(waits), Keep::Sums, Some(cut)).map(|(ev, _)| ev)
}

/// [`evaluate_with_graph`] (the graph only if `record`) with each crossing's time beyond its
/// transmission given by `extra` (by crossing, in the walk's order: see
/// [`Evaluation::crossings`], which it records): the evaluation of links served as they serve,
/// that `super::rounds` iterates to its fixed point.
pub fn evaluate_served(
    prog: &Program,
    extra: Vec<f64>,
    record: bool,
) -> Result<(Evaluation, Result<Graph<'_>, String>), String> {
    walk(
        prog,
        LinkService::Served(extra),
        Keep::graph_if(record),
        None,
    )
}

/// The evaluation of `prog` whose FCFS links serve each crossing as it comes, walked in time
/// order (module `in_order`), with its activity graph and the resource uses for the sharing
/// check: the timeline of [`evaluate_served`] at its fixed point, in one walk. `None` when a
/// crossing reached a link out of order (a later hop of a route), where the walk stops.
pub fn evaluate_fcfs_in_order(prog: &Program) -> Result<Option<ServedInOrder<'_>>, String> {
    let mut w = Walker::serving(prog, LinkService::InOrder, true);
    w.ready = Ready::all(prog.ranks, true);
    w.run()?;
    if w.out_of_order {
        return Ok(None);
    }
    let tie = w
        .lines
        .iter()
        .zip(&w.links)
        .filter_map(|(line, l)| line.tie().map(|(count, at)| (l.id, count, at)))
        .min_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)));
    let activities = w.activities;
    let (evaluation, graph) = w.finish();
    Ok(Some(ServedInOrder {
        evaluation,
        graph: graph.ok_or_else(|| graph::too_large(activities)),
        tie,
    }))
}

/// What [`evaluate_fcfs_in_order`] found.
#[derive(Debug)]
pub struct ServedInOrder<'p> {
    /// The evaluation, its links serving as the simulator's FCFS links do.
    pub evaluation: Evaluation,
    /// Its activity graph, each crossing's wait a fixed part of its message's delay (`Err`:
    /// why there is none).
    pub graph: Result<Graph<'p>, String>,
    /// The first instant at which several crossings reached one link together and one of them
    /// had to wait: the link's id, how many arrived, when.
    pub tie: Option<(u64, usize, f64)>,
}

/// The time the evaluation adds on links beyond their transmissions.
#[derive(Clone, Debug, Default)]
enum LinkService {
    /// None: the contention-free evaluation.
    #[default]
    Free,
    /// A mean wait before every crossing of each link, by link id.
    MeanWaits(FxHashMap<u64, f64>),
    /// Each crossing's own time beyond its transmission, by crossing in the walk's order (none
    /// past the end): on an FCFS link a wait before it (its header held), on a fair link a
    /// longer transmission (its header goes on). The crossings are recorded.
    Served(Vec<f64>),
    /// FCFS links serving each crossing as it comes, in a walk in time order (module
    /// `in_order`).
    InOrder,
}

/// What the walk notes in [`Evaluation::random`] for its routes under a routing that is not
/// minimal: the walk follows one route per message, where the run's are drawn or follow the
/// backlogs (`None` under minimal routing).
pub fn walked_routes(prog: &Program) -> Option<&'static str> {
    match prog.interconnect.topology.routing() {
        Routing::Minimal => None,
        Routing::Valiant => {
            Some("valiant routes are one sample of the intermediates (not the run's draws)")
        }
        Routing::Ugal | Routing::Adaptive => Some(
            "the walk's links have no backlogs, so its routes are an idle network's (the run's follow the backlogs)",
        ),
    }
}

/// What the walk took one sample of where the run draws others (the destinations of messages
/// to random ranks, the routes under a routing that is not minimal), as noted in `ev`: every
/// prediction built on the walk names them.
pub fn walked_samples(prog: &Program, ev: &Evaluation) -> Vec<String> {
    [Some(SAMPLED), walked_routes(prog)]
        .into_iter()
        .flatten()
        .filter(|note| ev.random.iter().any(|w| w == note))
        .map(str::to_owned)
        .collect()
}

/// Why a closed form, which follows each message's one route, cannot follow the program's:
/// its routing chooses routes as the messages go. `None` under minimal routing.
pub fn routes_vary(prog: &Program) -> Option<String> {
    let routing = prog.interconnect.topology.routing();
    let how = match routing {
        Routing::Minimal => return None,
        Routing::Valiant => "through a random intermediate drawn for it",
        Routing::Ugal => {
            "minimal or through a random intermediate, by the backlogs at its source router"
        }
        Routing::Adaptive => "by the links' backlogs at each router",
    };
    Some(format!(
        "{} routing chooses each message's route as it goes ({how}); the formula follows each message's one minimal route",
        routing.name()
    ))
}

/// The links' expected loads over the whole program under its routing: the walk's messages
/// (the same whatever their routes), each spread over its links by
/// [`crate::topology::Topology::expected_crossings`]. The walk's own times, on minimal routes,
/// are not used.
pub fn channel_loads(prog: &Program) -> Result<ChannelLoads, String> {
    channel_loads_and_traffic(prog).map(|(loads, _)| loads)
}

/// [`channel_loads`], and the walk's messages to random ranks: the bytes injected and when
/// the last one was, on the walk's timeline (minimal routes, no contention, mean durations).
pub fn channel_loads_and_traffic(prog: &Program) -> Result<(ChannelLoads, Traffic), String> {
    let mut w = Walker::new(prog, false);
    w.keep_uses = false;
    w.channels = Some(ChannelLoads::default());
    w.run()?;
    let mut loads = w.channels.take().expect("set above");
    loads.spread_random(prog);
    loads.within_budget()?;
    let traffic = w.traffic();
    Ok((loads, traffic))
}

/// What a walk keeps beside the evaluation's sums and counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keep {
    /// Nothing more (the iterations of [`super::queueing`] and [`super::rounds`]).
    Sums,
    /// The activity graph, and the resource uses for the sharing check.
    GraphAndUses,
    /// The activity graph alone, for a caller that drops the evaluation.
    Graph,
}

impl Keep {
    /// [`Keep::GraphAndUses`] when `record`, else [`Keep::Sums`].
    fn graph_if(record: bool) -> Keep {
        if record {
            Keep::GraphAndUses
        } else {
            Keep::Sums
        }
    }

    /// Whether the activity graph is recorded (and its activities counted).
    fn graph(self) -> bool {
        self != Keep::Sums
    }

    /// Whether the resource uses are kept for the sharing check.
    fn uses(self) -> bool {
        self == Keep::GraphAndUses
    }
}

/// The walk of `prog` with `service`, keeping what `keep` says, extended from its loop's first
/// iterations where it can be ([`extension::walk`], from the pair ending at cut `like` if
/// given).
fn walk(
    prog: &Program,
    service: LinkService,
    keep: Keep,
    like: Option<i64>,
) -> Result<(Evaluation, Result<Graph<'_>, String>), String> {
    let record = keep.graph();
    let no_graph = |activities: usize| match record {
        true => graph::too_large(activities),
        false => "not recorded".to_owned(),
    };
    if let Some((mut ev, activities)) = extension::walk(prog, &service, keep, like) {
        ev.activities = activities;
        return Ok((ev, Err(no_graph(activities))));
    }
    let mut w = Walker::serving(prog, service, record);
    w.keep_uses = keep.uses();
    w.run()?;
    let activities = w.activities;
    let (ev, g) = w.finish();
    Ok((ev, g.ok_or_else(|| no_graph(activities))))
}

/// The evaluation reports a fault in a rank's operation (an expression, a peer, a tag, a size)
/// as the executor's message for it.
impl From<ProgramFault> for String {
    fn from(fault: ProgramFault) -> String {
        fault.to_string()
    }
}

/// What a rank waits for to end its current operation (or collective step).
#[derive(Clone, Copy, Debug)]
struct Parts {
    /// When the operation started.
    since: f64,
    /// The latest of what is already known (its send's delivery).
    done: f64,
    /// The receive still open: (source, tag).
    recv: Option<(u32, u64)>,
    /// The category its time counts as.
    category: usize,
    /// Bytes to combine once it is over (collective steps of reductions).
    combine: Option<f64>,
    /// The graph node that finishes at `done` ([`graph::NONE`]: the rank's own clock).
    done_node: u32,
}

#[derive(Clone, Debug)]
struct RankState {
    pc: u32,
    clock: f64,
    spent: [f64; 4],
    entered: [bool; 4],
    parts: Option<Parts>,
    /// Waiting at an ideal barrier since this time.
    barrier: Option<f64>,
    /// The clock from which its times depend on chance (see [`Evaluation::tainted`]).
    tainted: f64,
    /// Its clock's node in the activity graph.
    node: u32,
    queued: bool,
    done: bool,
    in_collective: bool,
    step: u32,
    shape: GroupShape,
    tag: u64,
}

/// One link's accumulators.
#[derive(Debug)]
struct LinkAcc {
    id: u64,
    messages: u64,
    busy: f64,
    busy_squared: f64,
    uses: Vec<(f64, f64)>,
    sender: u32,
    one_sender: bool,
    /// Its crossings' transmission times (only when the program reports each link).
    delays: Option<Box<Delays>>,
    /// The histogram scale the simulator uses for it.
    scale: f64,
    /// The mean wait before each crossing ([`LinkService::MeanWaits`]; zero otherwise).
    wait: f64,
}

/// A message in a mailbox: its delivery time, whether it depends on chance, its delivery's
/// graph node.
type Posted = (f64, bool, u32);

struct Walker<'p> {
    prog: &'p Program,
    ranks: Vec<RankState>,
    /// Loop counters, expressions, collective counters and ideal barriers.
    ctl: Control<'p>,
    ready: Ready,
    /// Delivery times of messages not yet received (whether they depend on chance, and their
    /// delivery's graph node), by (destination, source, tag), in send order.
    mailbox: Mailbox<Posted>,
    phases: Phases<f64>,
    slots: LinkSlots,
    links: Vec<LinkAcc>,
    disk_base: Vec<u32>,
    /// Per disk unit: its requests, and the one rank using it (`u32::MAX`: several).
    disk_uses: Vec<(Vec<(f64, f64)>, u32)>,
    /// Per node (only when it has more ranks than cores): its computes.
    cpu_uses: Option<Vec<Vec<(f64, f64)>>>,
    uses: usize,
    messages: u64,
    delay_sum: f64,
    delays: Delays,
    nonblocking_on_links: bool,
    random: Vec<String>,
    phase_start: Vec<f64>,
    phase_end: Vec<f64>,
    /// Per phase: its messages' routes (the shared links are found at the end).
    phase_routes: Vec<PhaseRoutes>,
    ops: u64,
    /// The activity graph, while it is recorded (`None`: not asked for, or too large).
    graph: Option<Graph<'p>>,
    /// Whether the graph was asked for (it may have been given up as too large since).
    record: bool,
    /// Activities of the graph, recorded or not (for the message when it is too large).
    activities: usize,
    /// The time added on links beyond their transmissions.
    service: LinkService,
    /// Crossings so far, in the walk's order.
    crossed: usize,
    /// The crossings, when the service is [`LinkService::Served`].
    crossings: Vec<Crossing>,
    /// Per link slot, its FCFS service, when the service is [`LinkService::InOrder`].
    lines: Vec<FcfsLine>,
    /// Whether a crossing reached a link out of order ([`LinkService::InOrder`]): the walk
    /// stops there.
    out_of_order: bool,
    /// Whether resource uses are kept for the sharing check (not in the iterations of
    /// [`super::queueing`], which need only the makespan and the traffic).
    keep_uses: bool,
    /// The links' expected loads under the program's routing, when they are asked for
    /// ([`channel_loads`]).
    channels: Option<ChannelLoads>,
    /// Per rank, the stream of the destinations of its messages to random ranks (empty when
    /// the program sends none).
    destinations: Vec<StreamRng>,
    /// Per rank, the bytes it sent to random ranks (empty when the program sends none).
    traffic_bytes: Vec<f64>,
    /// Per rank, the stream of the detours of its messages' routes, under a routing that is not
    /// minimal (empty otherwise).
    route_draws: Vec<StreamRng>,
    /// Each rank's clock as it enters the outermost loop and at the end of each of its
    /// iterations, when [`extension`] asks for them.
    trips: Option<Trips>,
}

/// The clocks [`Walker::trips`] keeps: per rank, its clock at the outermost loop's entry and at
/// the end of each iteration.
#[derive(Debug)]
struct Trips {
    /// The loop.
    outer: OuterLoop,
    /// Per rank, its clocks.
    clocks: Vec<Vec<f64>>,
}

impl Trips {
    /// Keeps rank `r`'s clock `now` when the loop instruction it executes, at `pc`, enters the
    /// outermost loop or ends one of its iterations.
    fn note(&mut self, pc: usize, r: usize, now: f64) {
        if pc == self.outer.start || pc == self.outer.next {
            self.clocks[r].push(now);
        }
    }
}

impl<'p> Walker<'p> {
    fn new(prog: &'p Program, record: bool) -> Walker<'p> {
        let p = prog.ranks as usize;
        let mut disk_base = Vec::new();
        let mut units = 0;
        for d in &prog.disks {
            disk_base.push(units);
            units += d.count;
        }
        Walker {
            prog,
            ranks: vec![
                RankState {
                    pc: 0,
                    clock: 0.0,
                    spent: [0.0; 4],
                    entered: [false; 4],
                    parts: None,
                    barrier: None,
                    tainted: f64::INFINITY,
                    node: 0,
                    queued: true,
                    done: false,
                    in_collective: false,
                    step: 0,
                    shape: GroupShape::ALONE,
                    tag: 0,
                };
                p
            ],
            ctl: Control::new(prog),
            ready: Ready::all(prog.ranks, false),
            mailbox: Mailbox::default(),
            phases: Phases::new(prog.ranks, prog.phases.len()),
            slots: LinkSlots::new(
                prog.interconnect.topology.link_count(),
                u64::from(prog.nodes().max(prog.ranks)),
            ),
            links: Vec::new(),
            disk_base,
            disk_uses: vec![(Vec::new(), u32::MAX - 1); units as usize],
            cpu_uses: (prog.ranks_per_node > prog.cores && prog.ranks > 1)
                .then(|| vec![Vec::new(); prog.nodes() as usize]),
            uses: 0,
            messages: 0,
            delay_sum: 0.0,
            delays: Delays::default(),
            nonblocking_on_links: false,
            random: Vec::new(),
            phase_start: vec![f64::INFINITY; p * prog.phases.len()],
            phase_end: vec![0.0; p * prog.phases.len()],
            phase_routes: vec![PhaseRoutes::default(); prog.phases.len()],
            ops: 0,
            graph: record.then(|| Graph::new(prog.ranks)),
            record,
            activities: 0,
            service: LinkService::Free,
            crossed: 0,
            crossings: Vec::new(),
            lines: Vec::new(),
            out_of_order: false,
            keep_uses: true,
            channels: None,
            destinations: if prog.has_traffic() {
                (0..u64::from(prog.ranks))
                    .map(|r| stream(DESTINATION_SEED, 0, r))
                    .collect()
            } else {
                Vec::new()
            },
            route_draws: if walked_routes(prog).is_some() {
                (0..u64::from(prog.ranks))
                    .map(|r| stream(ROUTE_SEED, 0, r))
                    .collect()
            } else {
                Vec::new()
            },
            traffic_bytes: if prog.has_traffic() {
                vec![0.0; p]
            } else {
                Vec::new()
            },
            trips: None,
        }
    }

    /// A walker of `prog` whose links add `service`, recording the activity graph and keeping
    /// the resource uses for the sharing check when `record`.
    fn serving(prog: &'p Program, service: LinkService, record: bool) -> Walker<'p> {
        let mut w = Walker::new(prog, record);
        w.service = service;
        w.keep_uses = record;
        w
    }

    /// Adds a node to the graph (if it is recorded) after `preds`, owned by rank `owner`
    /// ([`graph::NONE`]: no rank), finishing at `time`; returns it ([`graph::NONE`] when the
    /// graph is not recorded).
    fn node(&mut self, preds: &[u32], duration: Duration, owner: u32, time: f64) -> u32 {
        if !self.record {
            return graph::NONE;
        }
        self.activities += 1;
        let Some(g) = &mut self.graph else {
            return graph::NONE;
        };
        if g.len() >= graph::limit() {
            self.graph = None;
            return graph::NONE;
        }
        g.add(preds, duration, owner, time)
    }

    /// Rank `r`'s clock moved to node `v`, the time since its previous node counting as
    /// `category`.
    fn moved(&mut self, r: u32, v: u32, category: usize) {
        if let Some(g) = &mut self.graph
            && v != graph::NONE
        {
            self.ranks[r as usize].node = v;
            g.chains[r as usize].push((v, category as u8));
        }
    }

    /// The duration of a draw of `law`, or the constant `t` when it is not random.
    fn duration(&mut self, t: f64, law: Option<Random<'p>>) -> Duration {
        match (&mut self.graph, law) {
            (Some(g), Some(law)) => g.random(law),
            _ => Duration::Fixed(t),
        }
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(r) = self.ready.pop() {
            self.ranks[r as usize].queued = false;
            self.interpret(r)?;
            if self.out_of_order {
                return Ok(());
            }
        }
        let waiting: Vec<String> = self
            .ranks
            .iter()
            .enumerate()
            .filter(|(_, rk)| !rk.done)
            .take(4)
            .map(|(r, rk)| {
                let path = self
                    .prog
                    .paths
                    .get(rk.pc as usize)
                    .map_or("?", String::as_str);
                format!("rank {r} at {path}")
            })
            .collect();
        if waiting.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the program deadlocks (nothing left to happen; {} wait)",
                waiting.join("; ")
            ))
        }
    }

    /// Notes that rank `r` replaced a random quantity by its mean at its clock.
    fn mean_of(&mut self, r: u32, what: &str, d: &Dist) -> f64 {
        if d.scv() > 0.0 {
            let rk = &mut self.ranks[r as usize];
            rk.tainted = rk.tainted.min(rk.clock);
            if !self.random.iter().any(|w| w.starts_with(what)) {
                self.random.push(format!("{what} (SCV {:.3})", d.scv()));
            }
        }
        d.mean()
    }

    /// The bytes of `s` (a random size at its mean), and its law when it is random.
    fn size(&mut self, r: u32, s: &'p Size) -> Result<(f64, Option<&'p Dist>), String> {
        match s {
            Size::Bytes(e) => Ok((self.ctl.bytes(r, self.ranks[r as usize].pc, e)?, None)),
            // the simulator rounds each draw to whole bytes
            Size::Random(d) if d.scv() == 0.0 => Ok((d.mean().round(), None)),
            Size::Random(d) => Ok((self.mean_of(r, "message sizes are random", d), Some(d))),
        }
    }

    /// A compute's mean time, and its law when it is random.
    fn work(&mut self, r: u32, work: &'p Work) -> Result<(f64, Option<Random<'p>>), String> {
        Ok(match work {
            Work::Time(d) => (
                self.mean_of(r, "compute times are random", d),
                (d.scv() > 0.0).then_some(Random::Draw(d)),
            ),
            Work::Region {
                iterations,
                cost,
                split,
            } => {
                let pc = self.ranks[r as usize].pc;
                let n = self.ctl.iterations(r, pc, iterations, *split)?;
                if n == 0 {
                    (0.0, None)
                } else {
                    (
                        n as f64 * self.mean_of(r, "region iteration costs are random", cost),
                        (cost.scv() > 0.0).then_some(Random::Region { n, cost }),
                    )
                }
            }
        })
    }

    /// Rank `r` holds its processor from its clock for `t` (a draw of `law` at its mean when
    /// random): compute time, and its node's timeline when the node has more ranks than cores.
    fn compute(&mut self, r: u32, t: f64, law: Option<Random<'p>>) {
        let rk = &mut self.ranks[r as usize];
        let start = rk.clock;
        rk.clock += t;
        rk.spent[COMPUTE] += t;
        rk.entered[COMPUTE] = true;
        let (from, clock) = (rk.node, rk.clock);
        let duration = self.duration(t, law);
        let v = self.node(&[from], duration, r, clock);
        self.moved(r, v, COMPUTE);
        if t > 0.0 {
            let node = self.prog.node_of(r) as usize;
            if let Some(cpus) = &mut self.cpu_uses {
                if self.keep_uses && self.uses < MAX_USES {
                    cpus[node].push((start, start + t));
                }
                self.uses += 1;
            }
        }
    }

    /// Rank `r` sends at its clock: the message enters the network after the startup (its
    /// `random_size` is the operation that drew its size, if random), crosses its route
    /// contention-free and is delivered into the mailbox (waking the receiver if it waits for
    /// it); `blocking` when the sender waits for its delivery. Returns its injection and
    /// delivery times, and their graph nodes (the injection's only for an `isend`).
    fn send(
        &mut self,
        r: u32,
        to: u32,
        bytes: f64,
        tag: u64,
        blocking: bool,
        random_size: Option<(u32, &'p Dist)>,
    ) -> (f64, f64, u32, u32) {
        let (from, sent) = (self.ranks[r as usize].node, self.ranks[r as usize].clock);
        let inject = sent + self.prog.interconnect.startup;
        // (the route's links go straight into the graph's, from here)
        let route_start = self.graph.as_ref().map_or(0, |g| g.links.len());
        let prog = self.prog;
        let net = &prog.interconnect;
        let dst = prog.node_of(to);
        let mut at = prog.node_of(r);
        match &mut self.channels {
            Some(c) if tag == RANDOM_TAG => c.add_random(at, bytes),
            Some(c) if tag == TRAFFIC_TAG => c.add_traffic(&net.topology, at, dst, bytes),
            Some(c) => c.add(&net.topology, at, dst, bytes),
            None => {}
        }
        if tag >= TRAFFIC_TAG {
            self.traffic_bytes[r as usize] += bytes;
        }
        let mut clock = inject;
        let mut latest = inject;
        let mut hops = 0_u32;
        let mut uneven = false;
        // the delay's growth per byte of a random size: the sum of the hops' (store and
        // forward), the slowest hop's (cut-through)
        let mut per_byte = 0.0_f64;
        // the delay in the simulator's clock ticks, rounded as it rounds them (for the p99s,
        // whose histogram buckets a tick can change)
        let (tick, uniform) = (prog.clock.tick(), net.topology.uniform());
        let latency_ticks = prog.clock.wide_ticks(net.latency);
        let (mut hop_latency, mut hop_latency_ticks) = (net.latency, latency_ticks);
        let (mut clock_ticks, mut latest_ticks) = (0_u128, 0_u128);
        let mut detour = NO_DETOUR;
        if let Some(note) = walked_routes(prog)
            && at != dst
        {
            let rk = &mut self.ranks[r as usize];
            rk.tainted = rk.tainted.min(rk.clock);
            if !self.random.iter().any(|w| w == note) {
                self.random.push(note.to_owned());
            }
            let draws = &mut self.route_draws[r as usize];
            detour = net.topology.detour(at, dst, |n| draws.random_range(0..n));
        }
        // between two ranks of a node, its own link if it has one
        let mut inside = net.topology.node_hop(at, dst);
        while let Some(hop) = inside.take().or_else(|| {
            if detour == NO_DETOUR {
                net.topology.next(at, dst)
            } else {
                net.topology.next_routed(at, dst, &mut detour, |_| 0)
            }
        }) {
            let capacity = net.topology.capacity(hop.link);
            uneven |= capacity != 1.0;
            let link_per_byte = 1.0 / (net.bandwidth * capacity);
            let w = bytes * link_per_byte;
            let work = wide_ceil_from_f64(match uniform {
                true => bytes / (net.bandwidth * tick),
                false => bytes / (net.bandwidth * capacity * tick),
            });
            latest_ticks = latest_ticks.max(clock_ticks + work);
            hop_latency = net.hop_latency(hop.link);
            hop_latency_ticks = if hop_latency == net.latency {
                latency_ticks
            } else {
                prog.clock.wide_ticks(hop_latency)
            };
            clock_ticks += match net.switching {
                Switching::StoreAndForward => work + hop_latency_ticks,
                Switching::CutThrough => hop_latency_ticks,
            };
            per_byte = match net.switching {
                Switching::StoreAndForward => per_byte + link_per_byte,
                Switching::CutThrough => per_byte.max(link_per_byte),
            };
            let slot = self.slot(hop.link);
            // (a wait before the link and a longer transmission on it, when the links'
            // service is estimated: [`evaluate_with_waits`], [`evaluate_served`])
            let (hold, stretch) = self.service_at(slot, r, clock, (w, wide_to_f64(work) * tick));
            let enter = clock + hold;
            let l = &mut self.links[slot as usize];
            l.messages += 1;
            l.busy += w;
            l.busy_squared += w * w;
            if l.sender != r {
                l.one_sender = l.sender == u32::MAX;
                l.sender = r;
            }
            if let Some(d) = &mut l.delays {
                match random_size {
                    Some((op, _)) => d.linear(op, 0.0, link_per_byte),
                    None => d.fixed(work),
                }
            }
            let end = enter + w + stretch;
            if self.keep_uses && self.uses < MAX_USES {
                l.uses.push((enter, end));
            }
            self.uses += 1;
            if let Some(g) = &mut self.graph {
                g.links.push(hop.link);
            }
            latest = latest.max(end);
            clock = match net.switching {
                Switching::StoreAndForward => end + hop_latency,
                Switching::CutThrough => enter + hop_latency,
            };
            at = hop.to;
            hops += 1;
        }
        for (ph, routes) in self.phase_routes.iter_mut().enumerate() {
            if self.phases.inside(r, ph) {
                routes.most_hops = routes.most_hops.max(hops);
                routes.uneven |= uneven;
            }
        }
        let delivered = match (hops, net.switching) {
            (0, _) => inject,
            (_, Switching::StoreAndForward) => clock,
            (_, Switching::CutThrough) => latest + hop_latency,
        };
        if hops > 0 && !blocking {
            self.nonblocking_on_links = true;
        }
        self.messages += 1;
        self.delay_sum += delivered - inject;
        // the delivery's duration from `start`: fixed, or `a + b X` of a random size
        let after = |start: f64| match random_size {
            Some((_, dist)) if hops > 0 => Some(Random::Affine {
                a: delivered - start - per_byte * bytes,
                b: per_byte,
                dist,
            }),
            _ => None,
        };
        match random_size {
            Some((op, _)) if hops > 0 => {
                let a = delivered - inject - per_byte * bytes;
                self.delays.linear(op, a, per_byte);
            }
            _ => self.delays.fixed(match (hops, net.switching) {
                (0, _) => 0,
                (_, Switching::StoreAndForward) => clock_ticks,
                (_, Switching::CutThrough) => latest_ticks + hop_latency_ticks,
            }),
        }
        // (counted as activities after the graph is given up, recorded as nodes before)
        let (injected, delivery) = if !self.record {
            (graph::NONE, graph::NONE)
        } else if blocking {
            let d = self.duration(delivered - sent, after(sent));
            (graph::NONE, self.node(&[from], d, r, delivered))
        } else {
            let i = self.node(&[from], Duration::Fixed(inject - sent), r, inject);
            let d = self.duration(delivered - inject, after(inject));
            (i, self.node(&[i], d, r, delivered))
        };
        if let Some(g) = &mut self.graph
            && g.links.len() > route_start
        {
            g.messages.push(Message {
                node: delivery,
                bytes,
                hops: route_start as u32..g.links.len() as u32,
            });
        }
        if tag >= TRAFFIC_TAG {
            return (inject, delivered, injected, delivery);
        }
        self.mailbox.post(
            (to, r, tag),
            (
                delivered,
                self.ranks[r as usize].tainted.is_finite(),
                delivery,
            ),
        );
        let d = &mut self.ranks[to as usize];
        if d.parts.is_some_and(|p| p.recv == Some((r, tag))) && !d.queued {
            d.queued = true;
            self.ready.push(to, d.clock);
        }
        (inject, delivered, injected, delivery)
    }

    /// Rank `r`'s `send` or `isend` (`blocking` or not) of `bytes` to `to` with `tag`, at its
    /// program counter: the message sent, the operation's parts open until its delivery (a
    /// `send`) or its injection (an `isend`).
    fn send_op(
        &mut self,
        r: u32,
        to: u32,
        bytes: &'p Size,
        tag: u64,
        blocking: bool,
    ) -> Result<(), String> {
        let (pc, now) = (self.ranks[r as usize].pc, self.ranks[r as usize].clock);
        let (bytes, random) = self.size(r, bytes)?;
        let random_size = random.map(|d| (pc, d));
        let (inject, delivered, injected, delivery) =
            self.send(r, to, bytes, tag, blocking, random_size);
        self.ranks[r as usize].parts = Some(Parts {
            since: now,
            done: if blocking { delivered } else { inject },
            recv: None,
            category: COMMUNICATION,
            combine: None,
            done_node: if blocking { delivery } else { injected },
        });
        Ok(())
    }

    /// The time the crossing of the link in `slot` by rank `r`'s message, its header there at
    /// `clock`, `(alone, work)` its transmission (in time, in the simulator's whole ticks),
    /// spends beyond it: (held before it, added to the transmission). Records the crossing when
    /// the service is per crossing.
    fn service_at(
        &mut self,
        slot: u32,
        r: u32,
        clock: f64,
        (alone, work): (f64, f64),
    ) -> (f64, f64) {
        let k = self.crossed;
        self.crossed += 1;
        match &self.service {
            LinkService::Free => (0.0, 0.0),
            LinkService::MeanWaits(_) => (self.links[slot as usize].wait, 0.0),
            LinkService::InOrder => {
                let wait = self.lines[slot as usize].arrive(clock, r, work);
                self.out_of_order |= wait.is_none();
                (wait.unwrap_or(0.0), 0.0)
            }
            LinkService::Served(extra) => {
                let extra = extra.get(k).copied().unwrap_or(0.0);
                self.crossings.push(Crossing {
                    link: self.links[slot as usize].id,
                    sender: r,
                    enter: clock,
                    alone,
                    work,
                });
                match self.prog.interconnect.sharing {
                    crate::program::Sharing::Fcfs => (extra, 0.0),
                    crate::program::Sharing::Fair => (0.0, extra),
                }
            }
        }
    }

    fn slot(&mut self, link: u64) -> u32 {
        if let Some(s) = self.slots.get(link) {
            return s;
        }
        let prog = self.prog;
        let net = &prog.interconnect;
        let slot = self.links.len() as u32;
        let scale = prog.typical_bytes / (net.bandwidth * net.topology.capacity(link));
        self.links.push(LinkAcc {
            id: link,
            messages: 0,
            busy: 0.0,
            busy_squared: 0.0,
            uses: Vec::new(),
            sender: u32::MAX,
            one_sender: true,
            delays: prog.report_each.then(Box::default),
            scale: scale.max(prog.clock.tick()),
            wait: match &self.service {
                LinkService::MeanWaits(waits) => waits.get(&link).copied().unwrap_or(0.0),
                _ => 0.0,
            },
        });
        if matches!(self.service, LinkService::InOrder) {
            self.lines.push(FcfsLine::default());
        }
        self.slots.insert(link, slot);
        slot
    }

    /// The delivery time of the next message to `r` from `src` with `tag` (whether it depends
    /// on chance, and its graph node), if it was sent.
    fn take(&mut self, r: u32, src: u32, tag: u64) -> Option<(f64, bool, u32)> {
        self.mailbox.take((r, src, tag))
    }

    /// Ends the rank's current operation if its receive has come; false when it still waits.
    fn settle(&mut self, r: u32) -> bool {
        let ri = r as usize;
        let Some(mut parts) = self.ranks[ri].parts else {
            return true;
        };
        // (its own part: the send's delivery, or the start when it only receives)
        let own = parts.done;
        let mut received = graph::NONE;
        if let Some((src, tag)) = parts.recv {
            match self.take(r, src, tag) {
                Some((d, chance, node)) => {
                    parts.done = parts.done.max(d);
                    received = node;
                    if chance {
                        let rk = &mut self.ranks[ri];
                        rk.tainted = rk.tainted.min(parts.since);
                    }
                }
                None => return false,
            }
        }
        let rk = &mut self.ranks[ri];
        rk.parts = None;
        let end = parts.done.max(parts.since);
        // the operation's own category until its own part is done; then, while the partner's
        // message is still to come, waiting (as the engine counts it)
        let sent = own.clamp(parts.since, end);
        rk.spent[parts.category] += sent - parts.since;
        rk.entered[parts.category] = true;
        if parts.recv.is_some() {
            rk.spent[WAITING] += end - sent;
            rk.entered[WAITING] = true;
        }
        rk.clock = end;
        // (the send's own node finishes after the rank's clock at the send: it replaces it)
        let from = match parts.done_node {
            graph::NONE => rk.node,
            done => done,
        };
        let v = if parts.recv.is_none() || !self.record {
            from
        } else {
            if from != rk.node {
                self.moved(r, from, parts.category);
            }
            self.node(&[from, received], Duration::Fixed(0.0), r, end)
        };
        self.moved(
            r,
            v,
            if received == graph::NONE {
                parts.category
            } else {
                WAITING
            },
        );
        let rk = &mut self.ranks[ri];
        if !rk.in_collective {
            rk.pc += 1;
            return true;
        }
        if let Some(bytes) = parts.combine {
            let (t, law) = self.combine_time(r, bytes);
            self.compute(r, t, law);
        }
        self.ranks[ri].step += 1;
        true
    }

    /// A combine's mean time, and its law when it is random.
    fn combine_time(&mut self, r: u32, bytes: f64) -> (f64, Option<Random<'p>>) {
        let prog = self.prog;
        let Some(Instr::Collective(op)) = prog.code.get(self.ranks[r as usize].pc as usize) else {
            return (0.0, None);
        };
        let fixed = op.combine_per_byte * bytes;
        match &op.combine {
            Some(d) => {
                let t = fixed + self.mean_of(r, "combine times are random", d);
                let law = (d.scv() > 0.0).then_some(if fixed == 0.0 {
                    Random::Draw(d)
                } else {
                    Random::Affine {
                        a: fixed,
                        b: 1.0,
                        dist: d,
                    }
                });
                (t, law)
            }
            None => (fixed, None),
        }
    }

    fn interpret(&mut self, r: u32) -> Result<(), String> {
        let prog = self.prog;
        let ri = r as usize;
        loop {
            self.ops += 1;
            if self.ops > MAX_OPS {
                return Err(format!(
                    "the program executes more than {MAX_OPS} operations: too long to walk"
                ));
            }
            if !self.settle(r) {
                return Ok(());
            }
            let now = self.ranks[ri].clock;
            if self.ready.makes_way(r, now) {
                // (in time order: queued again, its operation not executed, nor counted)
                self.ops -= 1;
                self.ranks[ri].queued = true;
                self.ready.push(r, now);
                return Ok(());
            }
            let pc = self.ranks[ri].pc;
            let Some(instr) = prog.code.get(pc as usize) else {
                self.ranks[ri].done = true;
                return Ok(());
            };
            match instr {
                Instr::Compute(work) => {
                    let (t, law) = self.work(r, work)?;
                    self.compute(r, t, law);
                    self.ranks[ri].pc += 1;
                }
                Instr::Send {
                    to,
                    bytes,
                    tag,
                    blocking,
                } => {
                    let to = self.ctl.peer(r, pc, to)?;
                    let tag = self.ctl.user_tag(r, pc, tag)?;
                    self.send_op(r, to, bytes, tag, *blocking)?;
                }
                Instr::Traffic {
                    to,
                    bytes,
                    blocking,
                } => {
                    let (to, tag) = match to {
                        Destination::Rank(e) => (self.ctl.peer(r, pc, e)?, TRAFFIC_TAG),
                        Destination::Random => {
                            let other = self.destinations[ri].random_range(0..prog.ranks - 1);
                            let rk = &mut self.ranks[ri];
                            rk.tainted = rk.tainted.min(rk.clock);
                            if !self.random.iter().any(|w| w == SAMPLED) {
                                self.random.push(SAMPLED.to_owned());
                            }
                            (other + u32::from(other >= r), RANDOM_TAG)
                        }
                    };
                    self.send_op(r, to, bytes, tag, *blocking)?;
                }
                Instr::Recv { from, tag } => {
                    let from = self.ctl.peer(r, pc, from)?;
                    let tag = self.ctl.user_tag(r, pc, tag)?;
                    self.ranks[ri].parts = Some(Parts {
                        since: now,
                        done: now,
                        recv: Some((from, tag)),
                        category: WAITING,
                        combine: None,
                        done_node: graph::NONE,
                    });
                }
                Instr::SendRecv {
                    to,
                    from,
                    bytes,
                    tag,
                } => {
                    let to = self.ctl.peer(r, pc, to)?;
                    let from = self.ctl.peer(r, pc, from)?;
                    let (bytes, random) = self.size(r, bytes)?;
                    let tag = self.ctl.user_tag(r, pc, tag)?;
                    let random_size = random.map(|d| (pc, d));
                    let (_, delivered, _, delivery) =
                        self.send(r, to, bytes, tag, true, random_size);
                    self.ranks[ri].parts = Some(Parts {
                        since: now,
                        done: delivered,
                        recv: Some((from, tag)),
                        category: COMMUNICATION,
                        combine: None,
                        done_node: delivery,
                    });
                }
                Instr::Collective(op) => {
                    if !self.ranks[ri].in_collective {
                        if op.kind == Collective::Barrier && op.algorithm == Algorithm::Ideal {
                            if self.ideal_barrier(r, op) {
                                return Ok(());
                            }
                            continue;
                        }
                        self.start_collective(r, op)?;
                    }
                    self.issue_step(r, op);
                }
                Instr::Io { disk, unit, bytes } => {
                    let u = self.ctl.eval(r, pc, unit)?;
                    let (bytes, random) = self.size(r, bytes)?;
                    let d = &prog.disks[*disk as usize];
                    let unit = self.disk_base[*disk as usize] as usize
                        + u.rem_euclid(i64::from(d.count)) as usize;
                    let t = d.startup + bytes / d.bandwidth;
                    let (uses, user) = &mut self.disk_uses[unit];
                    if self.keep_uses && self.uses < MAX_USES {
                        uses.push((now, now + t));
                    }
                    self.uses += 1;
                    *user = if *user == u32::MAX - 1 || *user == r {
                        r
                    } else {
                        u32::MAX
                    };
                    let rk = &mut self.ranks[ri];
                    rk.clock += t;
                    rk.spent[IO] += t;
                    rk.entered[IO] = true;
                    rk.pc += 1;
                    let (from, clock) = (rk.node, rk.clock);
                    let law = random.map(|dist| Random::Affine {
                        a: d.startup,
                        b: 1.0 / d.bandwidth,
                        dist,
                    });
                    let duration = self.duration(t, law);
                    let v = self.node(&[from], duration, r, clock);
                    self.moved(r, v, IO);
                }
                Instr::Loop { times, depth, end } => {
                    if let Some(t) = &mut self.trips {
                        t.note(pc as usize, ri, now);
                    }
                    self.ranks[ri].pc = self.ctl.enter_loop(r, pc, times, *depth, *end)?;
                }
                Instr::Next { start, depth } => {
                    if *depth == 0
                        && let Some(g) = &mut self.graph
                    {
                        g.trips.push((pc, r, self.ranks[ri].node));
                    }
                    if let Some(t) = &mut self.trips {
                        t.note(pc as usize, ri, now);
                    }
                    self.ranks[ri].pc = self.ctl.next_trip(r, pc, *start, *depth);
                }
                Instr::When { cond, skip } => {
                    self.ranks[ri].pc = self.ctl.when(r, pc, cond, *skip)?;
                }
                Instr::PhaseStart(ph) => {
                    if self.phases.start(r, *ph, now) {
                        let k = ri * prog.phases.len() + usize::from(*ph);
                        self.phase_start[k] = self.phase_start[k].min(now);
                        let node = self.ranks[ri].node;
                        if let Some(g) = &mut self.graph {
                            g.phase_marks.push((r, *ph, node, true));
                        }
                    }
                    self.ranks[ri].pc += 1;
                }
                Instr::PhaseEnd(ph) => {
                    if self.phases.end(r, *ph, now) {
                        let k = ri * prog.phases.len() + usize::from(*ph);
                        self.phase_end[k] = now;
                        let node = self.ranks[ri].node;
                        if let Some(g) = &mut self.graph {
                            g.phase_marks.push((r, *ph, node, false));
                        }
                    }
                    self.ranks[ri].pc += 1;
                }
            }
        }
    }

    fn start_collective(&mut self, r: u32, op: &CollectiveOp) -> Result<(), ProgramFault> {
        let (shape, tag) = self
            .ctl
            .start_collective(r, self.ranks[r as usize].pc, op)?;
        let rk = &mut self.ranks[r as usize];
        rk.in_collective = true;
        rk.step = 0;
        rk.shape = shape;
        rk.tag = tag;
        Ok(())
    }

    /// Issues the rank's current collective step (its send posted, its receive open), or ends
    /// the collective.
    fn issue_step(&mut self, r: u32, op: &CollectiveOp) {
        let ri = r as usize;
        let (_, _, members) = self.ctl.group_of(r, op);
        let global = |i: u32| members.map_or(i, |m| m[i as usize]);
        let rk = &self.ranks[ri];
        let (shape, tag, now) = (rk.shape, rk.tag, rk.clock);
        let Some(step) = op.kind.step(op.algorithm, &shape, rk.step) else {
            let rk = &mut self.ranks[ri];
            rk.in_collective = false;
            rk.pc += 1;
            return;
        };
        let combines = op.combine.is_some() || op.combine_per_byte > 0.0;
        let (done, done_node) = match step.send {
            Some((to, bytes)) => {
                let (_, delivered, _, delivery) = self.send(r, global(to), bytes, tag, true, None);
                (delivered, delivery)
            }
            None => (now, graph::NONE),
        };
        self.ranks[ri].parts = Some(Parts {
            since: now,
            done,
            recv: step.recv.map(|from| (global(from), tag)),
            category: COMMUNICATION,
            combine: step.combine.filter(|_| combines),
            done_node,
        });
    }

    /// An ideal barrier: the rank waits until every member of its group has arrived; the last
    /// to arrive releases all at the latest arrival. True when the rank now waits.
    fn ideal_barrier(&mut self, r: u32, op: &CollectiveOp) -> bool {
        let now = self.ranks[r as usize].clock;
        self.ranks[r as usize].barrier = Some(now);
        let Some(arrived) = self.ctl.arrive_at_barrier(r, op) else {
            return true;
        };
        let release = arrived
            .iter()
            .filter_map(|&w| self.ranks[w as usize].barrier)
            .fold(now, f64::max);
        let chance = arrived
            .iter()
            .any(|&w| self.ranks[w as usize].tainted.is_finite());
        let arrivals: Vec<u32> = if self.graph.is_some() {
            arrived
                .iter()
                .map(|&w| self.ranks[w as usize].node)
                .collect()
        } else {
            Vec::new()
        };
        let released = self.node(&arrivals, Duration::Fixed(0.0), graph::NONE, release);
        for &w in &arrived {
            self.moved(w, released, WAITING);
        }
        for w in arrived {
            let rk = &mut self.ranks[w as usize];
            if let Some(since) = rk.barrier.take() {
                rk.spent[WAITING] += release - since;
                rk.entered[WAITING] = true;
                if chance {
                    rk.tainted = rk.tainted.min(since);
                }
            }
            rk.clock = release;
            rk.pc += 1;
            if w != r && !rk.queued {
                rk.queued = true;
                self.ready.push(w, release);
            }
        }
        false
    }

    /// The walk's [`Traffic`]: its window ends at the first finish of a rank that sent to
    /// random ranks, and each such rank injected, by then, its bytes pro rata of its own time
    /// (nothing is delivered in the walk's figures).
    fn traffic(&self) -> Traffic {
        let senders = || {
            self.traffic_bytes
                .iter()
                .zip(&self.ranks)
                .filter(|(b, _)| **b > 0.0)
                .map(|(&b, rk)| (b, rk.clock))
        };
        let until = senders().map(|(_, t)| t).fold(f64::INFINITY, f64::min);
        if !until.is_finite() {
            return Traffic::default();
        }
        Traffic {
            injected: senders()
                .map(|(b, t)| if t > until { b * until / t } else { b })
                .sum(),
            delivered: 0.0,
            until,
        }
    }

    fn finish(mut self) -> (Evaluation, Option<Graph<'p>>) {
        let prog = self.prog;
        let np = prog.phases.len();
        let finish: Vec<f64> = self.ranks.iter().map(|r| r.clock).collect();
        let makespan = finish.iter().copied().fold(0.0, f64::max);
        let mut sharing = Sharing {
            unchecked: self.uses > MAX_USES,
            ..Sharing::default()
        };
        self.links.sort_by_key(|l| l.id);
        let topology = &prog.interconnect.topology;
        // each phase's window: from its first entry to its last exit
        let windows: Vec<(f64, f64)> = (0..np)
            .map(|ph| {
                (0..prog.ranks as usize).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                    let k = r * np + ph;
                    (lo.min(self.phase_start[k]), hi.max(self.phase_end[k]))
                })
            })
            .collect();
        let mut phase_routes = std::mem::take(&mut self.phase_routes);
        for l in &mut self.links {
            let met_at = overlaps(&mut l.uses);
            for ((lo, hi), routes) in windows.iter().zip(&mut phase_routes) {
                if met_at.iter().any(|t| lo <= t && t < hi) {
                    routes.shared += 1;
                    if routes.shared_names.len() < NAMED_SHARED {
                        routes.shared_names.push(topology.link_name(l.id));
                    }
                }
            }
            let met = met_at.first().copied().unwrap_or(f64::INFINITY);
            sharing.from = sharing.from.min(met);
            if met.is_finite() {
                sharing.links += 1;
                if sharing.first_link.is_none() {
                    let (most, _) = most_at_once(&l.uses, 1);
                    sharing.first_link = Some((topology.link_name(l.id), most));
                }
            }
        }
        for (d, disk) in prog.disks.iter().enumerate() {
            for u in 0..disk.count {
                let unit = self.disk_base[d] as usize + u as usize;
                let met = first_overlap(&mut self.disk_uses[unit].0);
                sharing.from = sharing.from.min(met);
                if met.is_finite() && sharing.disk.is_none() {
                    sharing.disk = Some((disk.name.clone(), u));
                }
            }
        }
        if let Some(cpus) = &mut self.cpu_uses {
            for (n, uses) in cpus.iter().enumerate() {
                let (most, met) = most_at_once(uses, prog.cores as usize);
                sharing.from = sharing.from.min(met);
                if most > prog.cores as usize && sharing.node.is_none() {
                    sharing.node = Some(n as u32);
                }
            }
        }
        if sharing.unchecked {
            sharing.from = f64::NEG_INFINITY;
        }
        let unshareable = prog.ranks_per_node <= prog.cores
            && !self.nonblocking_on_links
            && self.links.iter().all(|l| l.one_sender)
            && self.disk_uses.iter().all(|(_, user)| *user != u32::MAX);
        let per_phase = |v: &[f64]| -> Vec<Vec<f64>> {
            (0..np)
                .map(|ph| (0..prog.ranks as usize).map(|r| v[r * np + ph]).collect())
                .collect()
        };
        let message_p99 = self.delays.quantile(prog, prog.message_scale(), 0.99);
        let graph = self.graph.take();
        let ev = Evaluation {
            makespan,
            spent: self.ranks.iter().map(|r| r.spent).collect(),
            entered: self.ranks.iter().map(|r| r.entered).collect(),
            finish,
            phases: (0..np)
                .map(|ph| (0..prog.ranks).map(|r| self.phases.spent(r, ph)).collect())
                .collect(),
            messages: self.messages,
            message_delay: self.delay_sum / self.messages as f64,
            message_p99,
            links: self
                .links
                .iter()
                .map(|l| LinkLoad {
                    id: l.id,
                    name: topology.link_name(l.id),
                    messages: l.messages,
                    busy: l.busy,
                    busy_squared: l.busy_squared,
                    shared: !l.one_sender,
                    p99: l.delays.as_ref().map(|d| d.quantile(prog, l.scale, 0.99)),
                })
                .collect(),
            sharing,
            random: self.random,
            tainted: self.ranks.iter().map(|r| r.tainted).collect(),
            phase_starts: per_phase(&self.phase_start),
            phase_ends: per_phase(&self.phase_end),
            phase_routes,
            unshareable,
            crossings: std::mem::take(&mut self.crossings),
            extended: None,
            activities: self.activities,
        };
        (ev, graph)
    }
}

/// The first time two uses of a one-server timeline overlap (infinite: never), sorting it by
/// start. Intervals touching end to start do not overlap; a relative `1e-12` absorbs the
/// rounding of sums of times. An empty use (a message of no bytes) inside another, or at the
/// start of another, overlaps it: a FCFS link makes it wait.
fn first_overlap(uses: &mut [(f64, f64)]) -> f64 {
    overlaps(uses).first().copied().unwrap_or(f64::INFINITY)
}

/// Every start of a use that overlaps an earlier one on a one-server timeline, in order,
/// sorting it by start (overlap as in [`first_overlap`]).
fn overlaps(uses: &mut [(f64, f64)]) -> Vec<f64> {
    // by start, the longer first at one instant
    uses.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut busy_until = f64::NEG_INFINITY;
    let mut met = Vec::new();
    for &(s, e) in uses.iter() {
        if s < busy_until - 1e-12 * busy_until.abs() {
            met.push(s);
        }
        busy_until = busy_until.max(e);
    }
    met
}

/// The most uses of a timeline at once, and the first time they exceed `servers` (infinite:
/// never), with the tolerance of [`first_overlap`].
fn most_at_once(uses: &[(f64, f64)], servers: usize) -> (usize, f64) {
    if uses.len() <= servers {
        return (uses.len(), f64::INFINITY);
    }
    let mut events: Vec<(f64, i32)> = uses
        .iter()
        .filter(|(s, e)| e > s)
        .flat_map(|&(s, e)| [(s, 1), (e - 1e-12 * e.abs(), -1)])
        .collect();
    // ends before starts at one instant
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most, mut met) = (0_usize, 0_usize, f64::INFINITY);
    for (t, d) in events {
        now = now.wrapping_add_signed(d as isize);
        most = most.max(now);
        if now > servers && met.is_infinite() {
            met = t;
        }
    }
    (most, met)
}
