//! Running a [`Dag`] on LogGP endpoints, with or without links between them: one execution of a
//! [`crate::schedule::Schedule`].
//!
//! **Semantics** (LogGOPSim's, commit 76451de, `LogGOPSim.cpp`; see
//! [`crate::analytic::loggp`] for the costs). Each rank has CPUs (free at `cpu_free`), and
//! NICs with a sending and a receiving side (free at `send_free`, `recv_free`). Events are
//! processed in the order of `(time, stamp)`; a stamp is given when an operation becomes ready
//! or a message is sent, and an event put back because its resources are busy keeps its stamp.
//!
//! - A **calc** starts when its CPU is free and holds it for its time.
//! - A **send** starts when its CPU and its NIC's sending side are free, holds them
//!   `o + (s-1) O` and `g + (s-1) G`, and its message arrives `o + L` later (with links: it
//!   enters the network when `o` ends and arrives `L` after the network delivers it). An eager
//!   send (`s <= S`) finishes when it starts; a rendezvous send when its receive matches it,
//!   which also holds the sender's CPU and NIC until then.
//! - A **receive** is posted as soon as it is ready, at no cost. It matches the first queued
//!   message (in arrival order) with its source and tag, where either side's `-1` matches
//!   anything; otherwise it waits in the rank's queue of posted receives.
//! - A **message** is processed at the receiver when the CPU and NIC receiving side the send
//!   named are free: they are held `o + (s-1) max(O, G)` and `g + (s-1) G` whether or not a
//!   receive is posted; it matches the first posted receive with its source and tag, which then
//!   finishes, or waits in the queue of unexpected messages.
//! - An operation is **ready** when everything it `requires` has finished and everything it
//!   `irequires` has started. After each event, the ranks it touched (in increasing order) start
//!   their ready operations: sorted sends, receives, calcs ([`ReadyOrder`]), each given the next
//!   stamp and the time its resources are free.
//! - A rank's **finish** is when its last CPU becomes free; the makespan is the latest finish.
//!
//! An execution that ends with a receive never matched, a message never received or an
//! operation that never became ready (a cycle of dependencies) is a [`DagFault`]: LogGOPSim
//! prints no times for the first two and ignores the third.
//!
//! **Cost.** An operation is a 16-byte record read once or twice and a one-byte counter of the
//! dependencies it waits for; an event is 16 bytes in a radix or binary heap, a header's hop
//! onto a free link 16 bytes in the executor's lane of hops (and 16 for each change of time
//! or break in the stamps: the `lane` module); the per-rank state is three times
//! per CPU or NIC and four queue ends. Nothing is allocated per event once the vectors have
//! grown.

mod counters;
mod lane;
mod parks;
mod queue;
mod sort;
#[cfg(test)]
mod tests;

use rustc_hash::FxHashMap;
use zerocopy::FromZeros;

use crate::engine::prefetch::prefetch;
use crate::program::{Sharing, Switching};
use crate::schedule::dag::{ANY, Dag, Op, OpKind, TICKS_PER_SECOND};
use crate::schedule::{Endpoints, Links, Machine, ReadyOrder};
use crate::time::wide_ceil_from_f64;
use crate::topology::{Hop, Shape, Straight};
use counters::Counters;
use lane::{Lane, LaneHop};
use parks::{Parks, Side, Units};
use queue::{Ev, Queue as Events};

/// Event ids: an operation's index, or a message (its in-flight slot) arriving at the receiver,
/// or a message's header reaching its next vertex, or the stand-in of the events waiting for
/// busy units (its park's slot: [`parks`]).
const MSG: u32 = 1 << 30;
const HOP: u32 = 2 << 30;
const PARK: u32 = 3 << 30;
const KIND: u32 = 3 << 30;

/// No queue entry.
const NIL: u32 = u32::MAX;

/// The event queue's first-in-first-out lanes ([`queue`]): without links, messages' arrivals
/// (`o + L` after their sends); with links, headers' first hops (`o` after their sends). A
/// header's hop onto a free link, one latency after the previous one (cut-through), goes to the
/// executor's own lane of [`LaneHop`]s instead.
const ARRIVAL_LANE: usize = 0;
const INJECT_LANE: usize = 1;

/// How many events ahead [`DagExecution::run`] starts loading records.
const LOAD_AHEAD: usize = 16;

/// Times from here on are refused (`2^62` ps, about 53 days).
const TIME_LIMIT: u64 = 1 << 62;

/// A queued message (unexpected) or posted receive.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The send (unexpected messages) or receive (posted receives).
    op: u32,
    /// The in-flight slot of an unexpected message.
    slot: u32,
    /// The sender (messages) or the source asked for, maybe [`ANY`] (receives).
    peer: u32,
    tag: u32,
    next: u32,
}

/// A first-in-first-out list of entries.
#[derive(Clone, Copy, Debug)]
struct Fifo {
    head: u32,
    tail: u32,
}

impl Fifo {
    const EMPTY: Fifo = Fifo {
        head: NIL,
        tail: NIL,
    };
}

/// A message on its way, with a copy of its send (read at each hop and at the receiver without
/// going back to the graph, whose records are scattered through memory).
#[derive(Clone, Copy, Debug)]
struct Flight {
    op: Op,
    /// When its send started.
    start: u64,
    /// With links: (cut-through) the latest end of its transmission on a link so far (kept
    /// up to date while its pending hop is in the queue, or in the lane off uniform links).
    finish: u64,
    /// With uniform links: its transmission time on a link.
    work: u64,
    /// With links: while its pending hop is in the queue, the
    /// [place](crate::topology::Topology::place) of the link its header enters (so that a
    /// look ahead can load the link's state before the hop); while it is in the lane, that of
    /// the link the header entered the lane for (its lane hop's place has moved on along its
    /// straight stretch since: [`DagExecution::lane_header`]).
    place: u64,
    send: u32,
    /// With links, at the same time: the vertex that link leads to.
    to: u32,
}

/// Where a message's header is: what its next hop reads and updates.
#[derive(Clone, Copy, Debug)]
struct Header {
    /// The [place](crate::topology::Topology::place) of the link it enters at its next hop.
    place: u64,
    /// (Cut-through) the latest end of its transmission on a link so far.
    finish: u64,
    /// Its transmission time on a link (uniform links), else its size in bytes.
    work: u64,
    /// The vertex that link leads to.
    to: u32,
    /// Its destination node.
    dst: u32,
    /// The hops after the next one that go on in a straight line (routed without the
    /// topology's arithmetic); none when it comes from its flight.
    straight: Straight,
}

/// A [`LaneHop`]'s `line` is its straight stretch's hops times this, plus the index of its step
/// in [`Net::steps`].
const LINE_STEPS: u32 = 8;

/// A link's state and figures (all zero until a message crosses it: a link is used when
/// `messages > 0`); what headers waited for it is kept apart ([`LinkRuns`]), since most hops
/// find their link free.
#[derive(Clone, Copy, Debug, Default, FromZeros)]
struct LinkRun {
    free_at: u64,
    busy: u64,
    messages: u64,
}

impl LinkRun {
    /// A header reaches the link at `now` with a transmission of `work`: the transmission
    /// starts when the link is free; its start and finish.
    #[inline(always)]
    fn enter(&mut self, now: u64, work: u64) -> (u64, u64) {
        let start = now.max(self.free_at);
        let finish = start.saturating_add(work);
        self.free_at = finish;
        self.busy = self.busy.saturating_add(work);
        self.messages += 1;
        (start, finish)
    }
}

/// The steps of a straight stretch on `shape` ([`Net::steps`]; none but a grid's).
fn stretch_steps(shape: &Shape) -> [i32; LINE_STEPS as usize] {
    let mut steps = [0; LINE_STEPS as usize];
    if let Shape::Grid { dims, .. } = shape {
        let mut stride = 1_i64;
        for (k, &d) in dims.iter().enumerate() {
            // a stride beyond i32 has no straight stretch (`Straight::step` is an i32)
            let step = i32::try_from(stride).unwrap_or(0);
            (steps[2 * k], steps[2 * k + 1]) = (step, -step);
            stride *= i64::from(d);
        }
    }
    steps
}

/// What one execution measured.
#[derive(Clone, Debug)]
pub struct DagRun {
    /// When the last CPU became free, in seconds.
    pub makespan: f64,
    /// The same in ticks (picoseconds).
    pub makespan_ticks: u64,
    /// Per rank: when its last CPU became free, in ticks.
    pub finish: Vec<u64>,
    /// Per rank: time its CPUs spent in calcs, in ticks.
    pub compute: Vec<u64>,
    /// Messages received.
    pub messages: u64,
    /// Bytes they carried.
    pub bytes: u64,
    /// Mean time from the start of a send to the start of its processing at the receiver, in
    /// seconds.
    pub message_delay: f64,
    /// Per link used (with links), in the order of their ids: its id (which
    /// [`Topology::link_name`](crate::topology::Topology::link_name) names), utilisation,
    /// messages and mean delay (from the header's arrival to the end of the transmission), in
    /// seconds.
    pub links: Vec<(u64, f64, u64, f64)>,
    /// Events processed (an operation executed, a message processed, a header's hop), as
    /// LogGOPSim counts them.
    pub events: u64,
    /// Events put back because their CPU or NIC was busy.
    pub requeued: u64,
}

/// Why an execution did not complete.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DagFault {
    /// Messages or receives were left unmatched, or operations never became ready.
    #[error(
        "the schedule did not complete: {unmatched_receives} receive(s) never matched, {unreceived} message(s) never received, {never_ready} operation(s) never ready (a cycle, or waiting for those receives){}",
        if stuck.is_empty() { String::new() } else { format!("; e.g. {}", stuck.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")) }
    )]
    Incomplete {
        /// Posted receives no message matched.
        unmatched_receives: u64,
        /// Messages no receive matched.
        unreceived: u64,
        /// Operations whose dependencies were never all satisfied.
        never_ready: u64,
        /// A few of them.
        stuck: Vec<Stuck>,
    },
    /// Some time passed the executor's range.
    #[error(
        "times passed 2^62 ps (about 53 days) at rank {rank}: the schedule's times are too large"
    )]
    Overflow {
        /// The rank.
        rank: u32,
    },
    /// A sum the figures report passed 64 bits.
    #[error(
        "{0} add up past 2^64 ps (about 213 days), beyond what parsim sums exactly: the schedule's times are too large"
    )]
    Sum(String),
    /// The interconnect cannot carry the schedule.
    #[error("{0}")]
    Machine(String),
}

/// An operation an incomplete execution left waiting ([`DagFault::Incomplete`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// How it was left.
    pub how: StuckHow,
    /// Its global index.
    pub op: u32,
    /// Its rank.
    pub rank: u32,
    /// Its index among its rank's operations.
    pub local: u32,
    /// It as a GOAL statement (`recv 8b from 1 tag 3`).
    pub statement: String,
    /// Where it was written, when the schedule's source can say (`x.goal:4, l2`, or the
    /// operation's path in a scenario): named in place of its index.
    pub source: Option<String>,
}

/// How an operation was left waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StuckHow {
    /// A receive posted that no message matched.
    Receive,
    /// A send whose message, at rank `at`, no receive matched.
    Message {
        /// The receiving rank.
        at: u32,
    },
    /// An operation whose dependencies were never all satisfied.
    NeverReady,
}

impl std::fmt::Display for Stuck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let place = match &self.source {
            Some(s) => format!("rank {} at {s}", self.rank),
            None => format!("rank {} operation {}", self.rank, self.local),
        };
        match self.how {
            StuckHow::Receive => write!(f, "receive of {place} ({})", self.statement),
            StuckHow::Message { at } => {
                write!(f, "message of {place} ({}) at rank {at}", self.statement)
            }
            StuckHow::NeverReady => write!(f, "{place} ({}) never ready", self.statement),
        }
    }
}

impl DagFault {
    /// Names the operations an incomplete execution left waiting by where they were written
    /// (`source` of each; `None` keeps its index).
    pub fn name_sources(&mut self, mut source: impl FnMut(&Stuck) -> Option<String>) {
        if let DagFault::Incomplete { stuck, .. } = self {
            for s in stuck {
                s.source = source(s);
            }
        }
    }
}

/// One execution of a schedule.
#[derive(Debug)]
pub struct DagExecution<'d> {
    dag: &'d Dag,
    ep: Endpoints,
    order: ReadyOrder,
    cpus: usize,
    nics: usize,
    counters: Counters,
    cpu_free: Vec<u64>,
    send_free: Vec<u64>,
    recv_free: Vec<u64>,
    compute: Vec<u64>,
    posted: Vec<Fifo>,
    unexpected: Vec<Fifo>,
    entries: Vec<Entry>,
    free_entry: u32,
    flights: Vec<Flight>,
    free_flights: Vec<u32>,
    heap: Events,
    /// Pending hops onto links one latency after a free one, in `(time, stamp)` order (pushed
    /// only while times never go back, so that appending keeps the order).
    lane: Lane,
    /// Events waiting for busy CPUs and NICs.
    parks: Parks,
    stamp: u32,
    now: u64,
    /// Operations that became ready, with their rank.
    ready: Vec<(u32, u32)>,
    batch: Vec<(u32, u32)>,
    scratch: Vec<(u8, u32)>,
    events: u64,
    requeued: u64,
    messages: u64,
    bytes: u64,
    delay: u128,
    net: Option<Net<'d>>,
    overflow: Option<u32>,
    /// (Tests) the last event processed, while times never went back (none after stamps were
    /// renumbered): each must come after it.
    #[cfg(test)]
    last: Option<(u64, u32)>,
}

/// The links, while running.
#[derive(Debug)]
struct Net<'d> {
    links: &'d Links,
    /// Ticks per byte on a link of the base bandwidth.
    per_byte: f64,
    latency: u64,
    /// Transmission times do not depend on the link (every link of the base capacity): a
    /// message's is computed at its first hop and kept in its flight.
    uniform: bool,
    /// The steps a straight stretch can take (a grid's: each dimension's stride, forwards and
    /// backwards), by their index in a [`LaneHop`]'s `line`.
    steps: [i32; LINE_STEPS as usize],
    runs: LinkRuns,
}

/// Where the links' states are kept.
#[derive(Debug)]
enum LinkRuns {
    /// Indexed by [place](crate::topology::Topology::place) (on a grid, the links that
    /// neighbouring nodes' messages enter in one direction are neighbours, and a straight
    /// stretch's links are its step apart), every link's (up to [`DIRECT_LINKS`] links): allocated
    /// zeroed, so the pages of links no message crosses are never touched; and the time
    /// headers waited for each (a page touched where headers wait).
    Direct { runs: Vec<LinkRun>, waits: Vec<u64> },
    /// Beyond: each used link's state, and the time headers waited for it, by place.
    Sparse {
        runs: FxHashMap<u64, LinkRun>,
        waits: FxHashMap<u64, u64>,
    },
}

/// The most links whose states are kept in one array indexed by place (24 and 8 bytes each).
const DIRECT_LINKS: u64 = 1 << 24;

/// The most memory the ranks' CPUs and NICs may take (8 bytes each per rank, a NIC twice).
pub const MAX_UNIT_STATE: u64 = 4 << 30;

/// Whether the ranks' CPUs and NICs of `dag` fit in [`MAX_UNIT_STATE`]: every rank has as many
/// as the highest `cpu` and `nic` any operation names.
pub fn check_units(dag: &Dag) -> Result<(), String> {
    let (cpus, nics) = (u64::from(dag.cpus()), u64::from(dag.nics()));
    let bytes = u64::from(dag.ranks()) * (cpus + 2 * nics) * 8;
    if bytes > MAX_UNIT_STATE {
        return Err(format!(
            "every one of the {} ranks gets {cpus} CPUs and {nics} NICs (the highest cpu and nic an operation names, plus one), {:.1} GiB of state, beyond the {} GiB an execution allows: number the CPUs and NICs from 0",
            dag.ranks(),
            bytes as f64 / f64::from(1u32 << 30),
            MAX_UNIT_STATE >> 30
        ));
    }
    Ok(())
}

impl<'d> DagExecution<'d> {
    /// Sets up an execution of `dag` on `machine`: every operation without dependencies ready
    /// at time 0.
    pub fn new(dag: &'d Dag, machine: &'d Machine) -> Result<DagExecution<'d>, DagFault> {
        check_units(dag).map_err(DagFault::Machine)?;
        let p = dag.ranks() as usize;
        let (cpus, nics) = (usize::from(dag.cpus()), usize::from(dag.nics()));
        let net = match &machine.links {
            None => None,
            Some(links) => {
                let ic = &links.interconnect;
                if ic.sharing == Sharing::Fair {
                    return Err(DagFault::Machine(
                        "LogGP endpoints with links support sharing = \"fcfs\" only".to_owned(),
                    ));
                }
                let nodes = dag.ranks().div_ceil(links.ranks_per_node);
                if ic.topology.nodes() != nodes {
                    return Err(DagFault::Machine(format!(
                        "the topology has {} nodes but the schedule's {} ranks need {nodes}",
                        ic.topology.nodes(),
                        dag.ranks()
                    )));
                }
                let count = ic.topology.link_count();
                Some(Net {
                    links,
                    per_byte: TICKS_PER_SECOND / ic.bandwidth,
                    latency: (ic.latency * TICKS_PER_SECOND).round() as u64,
                    uniform: ic.topology.uniform(),
                    steps: stretch_steps(ic.topology.shape()),
                    runs: if count <= DIRECT_LINKS {
                        LinkRuns::Direct {
                            runs: LinkRun::new_vec_zeroed(count as usize)
                                .expect("the links' states fit in memory"),
                            waits: u64::new_vec_zeroed(count as usize)
                                .expect("the links' waits fit in memory"),
                        }
                    } else {
                        LinkRuns::Sparse {
                            runs: FxHashMap::default(),
                            waits: FxHashMap::default(),
                        }
                    },
                })
            }
        };
        let mut ex = DagExecution {
            dag,
            ep: machine.endpoints,
            order: machine.order,
            cpus,
            nics,
            counters: Counters::new(dag),
            cpu_free: vec![0; p * cpus],
            send_free: vec![0; p * nics],
            recv_free: vec![0; p * nics],
            compute: vec![0; p],
            posted: vec![Fifo::EMPTY; p],
            unexpected: vec![Fifo::EMPTY; p],
            entries: Vec::new(),
            free_entry: NIL,
            flights: Vec::new(),
            free_flights: Vec::new(),
            heap: Events::default(),
            lane: Lane::default(),
            parks: Parks::default(),
            stamp: 0,
            now: 0,
            ready: Vec::new(),
            batch: Vec::new(),
            scratch: Vec::new(),
            events: 0,
            requeued: 0,
            messages: 0,
            bytes: 0,
            delay: 0,
            net,
            overflow: None,
            #[cfg(test)]
            last: None,
        };
        // every rank's operations without dependencies, in file order, sorted by kind
        for r in 0..dag.ranks() {
            for i in dag.rank_ops(r) {
                if ex.counters.is_free(i) {
                    ex.ready.push((r, i));
                }
            }
            ex.release_rank(r, true);
        }
        Ok(ex)
    }

    /// Runs the schedule to the end.
    pub fn run(mut self) -> Result<DagRun, DagFault> {
        loop {
            if !self.lane.is_empty() {
                self.lane_hops();
                if let Some(rank) = self.overflow {
                    return Err(DagFault::Overflow { rank });
                }
            }
            let Some(ev) = self.heap.pop() else {
                if self.lane.is_empty() {
                    break;
                }
                continue;
            };
            self.load_ahead();
            self.now = ev.time;
            // a stand-in of waiting events: the first waiter, if it can start now
            let (ev, park) = if ev.id & KIND == PARK {
                match self.stand_in(ev) {
                    Some((waiter, park)) => (waiter, Some(park)),
                    None => continue,
                }
            } else {
                (ev, None)
            };
            #[cfg(test)]
            self.check_order(ev.time, ev.stamp);
            match ev.id & KIND {
                0 => self.operation(ev),
                MSG => self.message(ev),
                _ => {
                    self.events += 1;
                    let slot = ev.id & !KIND;
                    let header = self.header(slot);
                    self.hop(slot, header);
                }
            }
            if let Some((slot, units)) = park {
                self.next_stand_in(slot, units);
            }
            if !self.ready.is_empty() {
                self.release();
            }
            if let Some(rank) = self.overflow {
                return Err(DagFault::Overflow { rank });
            }
        }
        self.figures()
    }

    /// Processes the lane's hops that come before every event of the queue (a hop makes no
    /// operation ready, so nothing else is due in between), a run at a time: every event a hop
    /// of the run schedules comes after the run's later hops (a later time, or the same with a
    /// fresh stamp), so the events before which the run stops are known at its start.
    fn lane_hops(&mut self) {
        // the links' latency when every hop of a straight stretch onto a free link can take
        // the short way ([`Self::straight_hops`])
        let straight = match &self.net {
            Some(net)
                if net.uniform
                    && net.links.interconnect.switching == Switching::CutThrough
                    && matches!(net.runs, LinkRuns::Direct { .. })
                    && self.heap.is_radix() =>
            {
                Some(net.latency)
            }
            _ => None,
        };
        while let Some(run) = self.lane.first_run() {
            let next = self.heap.peek_key_from(run.time);
            let n = run.before(next.unwrap_or((u64::MAX, u32::MAX)));
            if n == 0 {
                return;
            }
            self.now = run.time;
            let mut k = 0;
            while k < n {
                if let Some(latency) = straight {
                    let took = self.straight_hops(n - k, latency);
                    k += took;
                    // each of them (with the run's first stamp as it is now: stamps may have
                    // been renumbered)
                    #[cfg(test)]
                    for j in k - took..k {
                        self.check_order(run.time, self.lane.first_run().unwrap().stamp + j);
                    }
                    if k == n {
                        break;
                    }
                }
                let h = self.lane.pop().expect("a run's hops are in the lane");
                if let Some(ahead) = self.lane.get(LOAD_AHEAD) {
                    if let Some(net) = &self.net
                        && let Some(l) = net.peek(ahead.place.into())
                    {
                        prefetch(l);
                    }
                    if let Some(f) = self.flights.get(ahead.slot as usize) {
                        prefetch(f);
                    }
                }
                if let Some(far) = self.lane.get(4 * LOAD_AHEAD) {
                    prefetch(far);
                }
                #[cfg(test)]
                self.check_order(run.time, self.lane.first_run().unwrap().stamp + k);
                self.events += 1;
                self.hop(h.slot, self.lane_header(&h));
                if self.overflow.is_some() {
                    self.lane.taken(k + 1);
                    return;
                }
                k += 1;
            }
            self.lane.taken(n);
        }
    }

    /// Starts loading the records of the events ahead, among the heap's at the current time
    /// and down the arrival and hop lanes, so that their cache misses overlap with the events
    /// before them: [`LOAD_AHEAD`] places ahead what they read first, half as far what they
    /// read next.
    #[inline(always)]
    fn load_ahead(&self) {
        self.load_early(self.heap.ahead(LOAD_AHEAD));
        self.load_late(self.heap.ahead(LOAD_AHEAD / 2));
        self.load_early(self.heap.lane_ahead(ARRIVAL_LANE, LOAD_AHEAD));
        self.load_late(self.heap.lane_ahead(ARRIVAL_LANE, LOAD_AHEAD / 2));
    }

    /// What an event reads first: an operation's record, rank-table entry and counter, or a
    /// message's in-flight slot.
    #[inline(always)]
    fn load_early(&self, e: Option<Ev>) {
        let Some(e) = e else { return };
        if e.id & KIND == 0 {
            let (record, rank) = self.dag.op_memory(e.id);
            record.map(prefetch);
            rank.map(prefetch);
            self.counters.prefetch(e.id);
        } else if let Some(f) = self.flights.get((e.id & !KIND) as usize) {
            prefetch(f);
        }
    }

    /// What an event reads once its first records have arrived: an operation's dependents, or
    /// the state of the link a hop enters.
    #[inline(always)]
    fn load_late(&self, e: Option<Ev>) {
        let Some(e) = e else { return };
        match e.id & KIND {
            0 => {
                self.dag.dependents_memory(e.id).map(prefetch);
            }
            HOP => {
                if let Some(f) = self.flights.get((e.id & !KIND) as usize)
                    && let Some(net) = &self.net
                    && let Some(l) = net.peek(f.place)
                {
                    prefetch(l);
                }
            }
            _ => {}
        }
    }

    /// (Tests) the event of `(time, stamp)`, processed now, comes after the one before it
    /// while times never go back.
    #[cfg(test)]
    fn check_order(&mut self, time: u64, stamp: u32) {
        if self.heap.is_radix() {
            assert!(
                self.last < Some((time, stamp)),
                "{:?} processed after {:?}",
                (time, stamp),
                self.last
            );
            self.last = Some((time, stamp));
        }
    }

    #[inline(always)]
    fn push(&mut self, time: u64, id: u32) {
        let stamp = self.next_stamp();
        self.heap.push(Ev { time, stamp, id });
    }

    /// Schedules an event in lane `lane`: `time` is the current time plus the lane's fixed
    /// delay (saturating, which keeps the order).
    #[inline(always)]
    fn push_lane(&mut self, lane: usize, time: u64, id: u32) {
        let stamp = self.next_stamp();
        self.heap.push_lane(lane, Ev { time, stamp, id });
    }

    /// A fresh stamp, after every pending event's.
    #[inline(always)]
    fn next_stamp(&mut self) -> u32 {
        if self.stamp == u32::MAX {
            self.renumber();
        }
        self.stamp += 1;
        self.stamp - 1
    }

    /// Gives the pending events stamps `0..n` in their order, so that stamps never run out
    /// (only their order matters).
    #[cold]
    fn renumber(&mut self) {
        let mut pending = self.heap.drain();
        // pushed back in stamp order: those at the heap's current time keep it in bucket 0
        pending.sort_unstable_by_key(|e| e.stamp);
        let mut stamps: Vec<u32> = pending.iter().map(|e| e.stamp).collect();
        stamps.extend(self.lane.stamps());
        stamps.extend(self.parks.stamps());
        // every pending event has its own stamp
        stamps.sort_unstable();
        let rank = |stamp: u32| stamps.partition_point(|&s| s < stamp) as u32;
        for e in pending {
            self.heap.push(Ev {
                stamp: rank(e.stamp),
                ..e
            });
        }
        self.lane.renumber(rank);
        self.parks.renumber(rank);
        self.stamp = stamps.len() as u32;
        #[cfg(test)]
        {
            self.last = None;
        }
    }

    /// The event `ev` found `units` busy until `free`: it waits for them in their park.
    #[inline(always)]
    fn wait(&mut self, ev: Ev, units: Units, free: u64) {
        self.requeued += 1;
        if let Some(slot) = self.parks.wait(units, ev.stamp, ev.id, free) {
            self.heap.push(Ev {
                time: free,
                id: PARK | slot,
                ..ev
            });
        }
    }

    /// When `units` are free.
    #[inline(always)]
    fn free_at(&self, units: Units) -> u64 {
        let cpu = self.cpu_free[units.cpu as usize];
        match units.side {
            Side::Cpu => cpu,
            Side::Send => cpu.max(self.send_free[units.nic as usize]),
            Side::Receive => cpu.max(self.recv_free[units.nic as usize]),
        }
    }

    /// The stand-in of a park's waiters: if the units are free, the first waiter, to be
    /// processed now as if it had been taken out of the queue itself, with its park; else the
    /// stand-in goes back for the time they are free. A stale stand-in is dropped.
    #[inline(always)]
    fn stand_in(&mut self, ev: Ev) -> Option<(Ev, (u32, Units))> {
        let slot = ev.id & !KIND;
        let units = self.parks.stand_in(slot, ev.time, ev.stamp)?;
        let free = self.free_at(units);
        if free > ev.time {
            self.requeued += 1;
            self.parks.put_back(slot, free, ev.stamp);
            self.heap.push(Ev { time: free, ..ev });
            return None;
        }
        let waiter = Ev {
            id: self.parks.leave(slot),
            ..ev
        };
        Some((waiter, (slot, units)))
    }

    /// After a park's first waiter started: the next one's stand-in goes into the queue for
    /// the time the units are free (maybe now: the waiter took no time).
    fn next_stand_in(&mut self, slot: u32, units: Units) {
        if let Some(stamp) = self.parks.first(slot) {
            let time = self.free_at(units).max(self.now);
            self.parks.put_back(slot, time, stamp);
            self.heap.push_old(Ev {
                time,
                stamp,
                id: PARK | slot,
            });
        }
    }

    #[inline(always)]
    fn check(&mut self, t: u64, rank: u32) {
        if t >= TIME_LIMIT {
            self.overflow = Some(rank);
        }
    }

    /// An operation's event: start it if its resources are free, else put it back.
    fn operation(&mut self, ev: Ev) {
        let i = ev.id;
        let op = self.dag.op(i);
        let h = op.rank as usize;
        let t = ev.time;
        let c = h * self.cpus + usize::from(op.cpu);
        match op.kind {
            OpKind::Calc => {
                if self.cpu_free[c] > t {
                    let units = Units {
                        cpu: c as u32,
                        nic: 0,
                        side: Side::Cpu,
                    };
                    return self.wait(ev, units, self.cpu_free[c]);
                }
                self.events += 1;
                let end = t.saturating_add(op.size);
                self.check(end, op.rank);
                self.cpu_free[c] = end;
                // saturating: a sum past 2^64 ps is refused when the figures are made
                self.compute[h] = self.compute[h].saturating_add(op.size);
                self.started(i, op.rank);
                self.done(i, op.rank);
            }
            OpKind::Send => {
                let n = h * self.nics + usize::from(op.nic);
                let free = self.cpu_free[c].max(self.send_free[n]);
                if free > t {
                    let units = Units {
                        cpu: c as u32,
                        nic: n as u32,
                        side: Side::Send,
                    };
                    return self.wait(ev, units, free);
                }
                self.events += 1;
                self.started(i, op.rank);
                self.cpu_free[c] = t.saturating_add(self.ep.send_cpu(op.size));
                self.send_free[n] = t.saturating_add(self.ep.nic(op.size));
                self.check(self.cpu_free[c].max(self.send_free[n]), op.rank);
                let slot = self.flight(op, i, t);
                match &self.net {
                    Some(net) if net.node(op.rank) != net.node(op.peer) => {
                        let hop = net.next_hop(net.node(op.rank), op.peer);
                        let f = &mut self.flights[slot as usize];
                        (f.place, f.to) = (net.place(hop.link), hop.to);
                        let at = t.saturating_add(self.ep.o);
                        self.push_lane(INJECT_LANE, at, HOP | slot);
                    }
                    _ => {
                        let at = t.saturating_add(self.ep.o).saturating_add(self.ep.l);
                        self.check(at, op.rank);
                        self.push_lane(ARRIVAL_LANE, at, MSG | slot);
                    }
                }
                if op.size <= self.ep.s {
                    self.done(i, op.rank);
                }
            }
            OpKind::Recv => {
                self.events += 1;
                self.started(i, op.rank);
                match self.take(Queue::Unexpected, h, op.peer, op.tag) {
                    Some((send, slot)) => {
                        self.free_flights.push(slot);
                        if op.size > self.ep.s {
                            // rendezvous: the send completes now; LogGOPSim bumps the sender's
                            // CPU and NIC with the *receive's* indices
                            let s = self.dag.rank_of(send);
                            let sc = s as usize * self.cpus + usize::from(op.cpu);
                            let sn = s as usize * self.nics + usize::from(op.nic);
                            self.cpu_free[sc] = self.cpu_free[sc].max(t);
                            self.send_free[sn] = self.send_free[sn].max(t);
                            self.done(send, s);
                        }
                        self.done(i, op.rank);
                    }
                    None => self.enqueue(Queue::Posted, h, i, NIL, op.peer, op.tag),
                }
            }
            OpKind::End => unreachable!("the sentinel is never scheduled"),
        }
    }

    /// A message reaches its receiver.
    fn message(&mut self, ev: Ev) {
        let slot = ev.id & !KIND;
        let f = self.flights[slot as usize];
        let op = f.op;
        let h = op.peer as usize;
        let t = ev.time;
        let c = h * self.cpus + usize::from(op.cpu);
        let n = h * self.nics + usize::from(op.nic);
        let free = self.cpu_free[c].max(self.recv_free[n]);
        if free > t {
            let units = Units {
                cpu: c as u32,
                nic: n as u32,
                side: Side::Receive,
            };
            return self.wait(ev, units, free);
        }
        self.events += 1;
        self.messages += 1;
        self.bytes += op.size;
        self.delay += u128::from(t - f.start);
        self.cpu_free[c] = t.saturating_add(self.ep.recv_cpu(op.size));
        self.recv_free[n] = t.saturating_add(self.ep.nic(op.size));
        self.check(self.cpu_free[c].max(self.recv_free[n]), op.peer);
        match self.take(Queue::Posted, h, op.rank, op.tag) {
            Some((recv, _)) => {
                self.free_flights.push(slot);
                if op.size > self.ep.s {
                    let s = op.rank as usize;
                    let sc = s * self.cpus + usize::from(op.cpu);
                    let sn = s * self.nics + usize::from(op.nic);
                    self.cpu_free[sc] = self.cpu_free[sc].max(t);
                    self.send_free[sn] = self.send_free[sn].max(t);
                    self.done(f.send, op.rank);
                }
                self.done(recv, op.peer);
            }
            None => self.enqueue(Queue::Unexpected, h, f.send, slot, op.rank, op.tag),
        }
    }

    /// The header of the message in flight in `slot`, as its flight keeps it (a hop from the
    /// queue).
    fn header(&self, slot: u32) -> Header {
        let f = &self.flights[slot as usize];
        let net = self.net.as_ref().expect("hops only happen with links");
        Header {
            place: f.place,
            finish: f.finish,
            work: if net.uniform { f.work } else { f.op.size },
            to: f.to,
            dst: net.node(f.op.peer),
            straight: Straight::default(),
        }
    }

    /// [`Self::hop`] for up to `most` hops from the lane's front that go on along their
    /// straight stretches, on uniform links with cut-through whose states are in the array,
    /// while the queue is a radix heap: while the next such hop's link is free, the header
    /// takes it and the hop after it goes to the lane, as [`Self::hop`] would do, without the
    /// cases that cannot arise. Returns how many hops it took; the one it stopped at, if any,
    /// is left for [`Self::hop`].
    #[inline(always)]
    fn straight_hops(&mut self, most: u32, latency: u64) -> u32 {
        let now = self.now;
        let next = now.saturating_add(latency);
        if next >= TIME_LIMIT {
            return 0;
        }
        let Some(Net {
            runs: LinkRuns::Direct { runs, .. },
            steps,
            ..
        }) = &mut self.net
        else {
            unreachable!("straight hops are taken with the links' states in the array")
        };
        let flights = &self.flights;
        let took = self.lane.follow(most, next, &mut self.stamp, |h, ahead| {
            if let Some(l) = runs.get(ahead.place as usize) {
                prefetch(l);
            }
            // a hop that ends its stretch reads its message's flight
            if ahead.line < LINE_STEPS
                && let Some(f) = flights.get(ahead.slot as usize)
            {
                prefetch(f);
            }
            let l = &mut runs[h.place as usize];
            if h.line < LINE_STEPS || l.free_at > now {
                return None;
            }
            l.enter(now, h.work.into());
            let step = steps[(h.line % LINE_STEPS) as usize];
            Some(LaneHop {
                place: h.place.wrapping_add_signed(step),
                line: h.line - LINE_STEPS,
                ..*h
            })
        });
        self.events += u64::from(took);
        took
    }

    /// The header of a lane hop due now, from the hop and the message's flight: on uniform
    /// links the latest finish so far is that on the link before, which the header entered free
    /// one latency ago (every link before it finished no later); the vertex the link leads to is
    /// as far on from the flight's as the link's place is from the flight's (the same, or along
    /// the straight stretch that began there).
    fn lane_header(&self, h: &LaneHop) -> Header {
        let net = self.net.as_ref().expect("hops only happen with links");
        let f = &self.flights[h.slot as usize];
        let (finish, work) = if net.uniform {
            let work = u64::from(h.work);
            (self.now - net.latency + work, work)
        } else {
            (f.finish, f.op.size)
        };
        Header {
            place: h.place.into(),
            finish,
            work,
            to: f.to.wrapping_add(h.place.wrapping_sub(f.place as u32)),
            dst: net.node(f.op.peer),
            straight: net.unpack(h.line),
        }
    }

    /// The message in flight in `slot`, whose header is `h`, reaches the next link of its route
    /// (found when the hop was scheduled).
    #[inline(always)]
    fn hop(&mut self, slot: u32, h: Header) {
        let now = self.now;
        let net = self.net.as_mut().expect("hops only happen with links");
        let last = h.to == h.dst;
        let work = if net.uniform {
            h.work
        } else {
            net.transmission(h.work, net.link_at(h.place))
        };
        let switching = net.links.interconnect.switching;
        let latency = net.latency;
        let (start, finish) = net.slot(h.place).enter(now, work);
        if start > now {
            net.wait(h.place, start - now);
        }
        let (next, arrived) = match (switching, last) {
            (Switching::StoreAndForward, last) => (finish, last),
            (Switching::CutThrough, false) => (start, false),
            (Switching::CutThrough, true) => (h.finish.max(finish), true),
        };
        let next = next.saturating_add(latency);
        let mut h = Header {
            finish: h.finish.max(finish),
            ..h
        };
        if arrived {
            let at = next.saturating_add(self.ep.l);
            self.check_flight(at, slot);
            self.push(at, MSG | slot);
            return;
        }
        (h.place, h.to, h.straight) = match h.straight {
            Straight { hops: 0, .. } => {
                let topology = &net.links.interconnect.topology;
                let (hop, straight) = topology
                    .next_straight(h.to, h.dst)
                    .expect("a message in the network is not yet at its destination");
                (topology.place(hop.link), hop.to, straight)
            }
            s => (
                h.place.wrapping_add_signed(s.step.into()),
                h.to.wrapping_add_signed(s.step),
                Straight {
                    hops: s.hops - 1,
                    ..s
                },
            ),
        };
        // the lane's entry, if the header goes to the lane and its figures fit
        let uniform = net.uniform;
        let lane = (switching == Switching::CutThrough && start == now && self.heap.is_radix())
            .then(|| {
                let work = if uniform { h.work } else { 0 };
                Some((
                    u32::try_from(h.place).ok()?,
                    u32::try_from(work).ok()?,
                    net.pack(h.straight),
                ))
            })
            .flatten();
        self.check_flight(next, slot);
        if let Some((place, work, line)) = lane {
            let fl = &mut self.flights[slot as usize];
            (fl.place, fl.to) = (h.place, h.to);
            if !uniform {
                fl.finish = h.finish;
            }
            let stamp = self.next_stamp();
            self.lane.push(
                next,
                stamp,
                LaneHop {
                    slot,
                    place,
                    work,
                    line,
                },
            );
        } else {
            let fl = &mut self.flights[slot as usize];
            (fl.finish, fl.place, fl.to) = (h.finish, h.place, h.to);
            self.push(next, HOP | slot);
        }
    }

    /// [`Self::check`] for the sender of the message in flight in `slot`.
    #[inline(always)]
    fn check_flight(&mut self, t: u64, slot: u32) {
        if t >= TIME_LIMIT {
            self.overflow = Some(self.flights[slot as usize].op.rank);
        }
    }

    fn flight(&mut self, op: Op, send: u32, start: u64) -> u32 {
        let work = match &self.net {
            Some(net) if net.uniform => net.transmission(op.size, 0),
            _ => 0,
        };
        let f = Flight {
            op,
            start,
            finish: 0,
            work,
            place: 0,
            send,
            to: NIL,
        };
        match self.free_flights.pop() {
            Some(s) => {
                self.flights[s as usize] = f;
                s
            }
            None => {
                self.flights.push(f);
                (self.flights.len() - 1) as u32
            }
        }
    }

    /// Operation `i` of `rank` started: its `irequires` dependents may become ready.
    #[inline(always)]
    fn started(&mut self, i: u32, rank: u32) {
        for &e in self.dag.raw_dependents(i) {
            if Dag::is_start_edge(e) {
                let a = Dag::edge_target(e);
                // as LogGOPSim's counter: an operation finished twice (a rendezvous send whose
                // receive disagrees on the size) never makes a dependent ready twice
                if self.counters.satisfy(a) {
                    self.ready.push((rank, a));
                }
            }
        }
    }

    /// Operation `i` of `rank` finished: its `requires` dependents (of the same rank) may
    /// become ready.
    #[inline(always)]
    fn done(&mut self, i: u32, rank: u32) {
        for &e in self.dag.raw_dependents(i) {
            if !Dag::is_start_edge(e) && self.counters.satisfy(e) {
                self.ready.push((rank, e));
            }
        }
    }

    /// Starts the operations that became ready, rank by rank in increasing order.
    fn release(&mut self) {
        if self.ready.len() > 1 {
            // stable: within a rank, the order they became ready in
            self.ready.sort_by_key(|&(rank, _)| rank);
        }
        let mut all = std::mem::take(&mut self.batch);
        std::mem::swap(&mut all, &mut self.ready);
        // `all` holds the ready operations, `ready` the (empty) buffer of `batch`
        let mut k = 0;
        while k < all.len() {
            let rank = all[k].0;
            let mut j = k + 1;
            while j < all.len() && all[j].0 == rank {
                j += 1;
            }
            self.ready.extend_from_slice(&all[k..j]);
            self.release_rank(rank, false);
            k = j;
        }
        all.clear();
        self.batch = all;
    }

    /// Starts the ready operations of `rank` (all in `ready`), sorted by kind: at time 0
    /// initially, else when their resources are free.
    fn release_rank(&mut self, rank: u32, initial: bool) {
        let dag = self.dag;
        if self.ready.len() > 1 {
            self.scratch.clear();
            self.scratch
                .extend(self.ready.iter().map(|&(_, i)| (dag.kind(i) as u8, i)));
            match self.order {
                ReadyOrder::Program => sort::stable(&mut self.scratch, |x| x.0),
                ReadyOrder::LogGopSim => sort::libstdcxx(&mut self.scratch, |x| x.0),
            }
            for (k, &(_, i)) in self.scratch.iter().enumerate() {
                self.ready[k].1 = i;
            }
        }
        for k in 0..self.ready.len() {
            let i = self.ready[k].1;
            let op = dag.op_in(i, rank);
            let time = if initial {
                0
            } else {
                let h = rank as usize;
                let c = self.cpu_free[h * self.cpus + usize::from(op.cpu)];
                if op.kind == OpKind::Send {
                    c.max(self.send_free[h * self.nics + usize::from(op.nic)])
                } else {
                    c
                }
            };
            self.push(time, i);
        }
        self.ready.clear();
    }

    fn enqueue(&mut self, q: Queue, h: usize, op: u32, slot: u32, peer: u32, tag: u32) {
        let e = Entry {
            op,
            slot,
            peer,
            tag,
            next: NIL,
        };
        let idx = if self.free_entry != NIL {
            let i = self.free_entry;
            self.free_entry = self.entries[i as usize].next;
            self.entries[i as usize] = e;
            i
        } else {
            self.entries.push(e);
            (self.entries.len() - 1) as u32
        };
        let fifo = match q {
            Queue::Posted => &mut self.posted[h],
            Queue::Unexpected => &mut self.unexpected[h],
        };
        if fifo.tail == NIL {
            fifo.head = idx;
        } else {
            self.entries[fifo.tail as usize].next = idx;
        }
        fifo.tail = idx;
    }

    /// Removes and returns the first entry of rank `h`'s queue `q` matching `(src, tag)`
    /// (either side's [`ANY`] matches anything): its operation and in-flight slot.
    #[inline]
    fn take(&mut self, q: Queue, h: usize, src: u32, tag: u32) -> Option<(u32, u32)> {
        let fifo = match q {
            Queue::Posted => self.posted[h],
            Queue::Unexpected => self.unexpected[h],
        };
        let mut prev = NIL;
        let mut cur = fifo.head;
        while cur != NIL {
            let e = self.entries[cur as usize];
            if (src == ANY || e.peer == ANY || e.peer == src)
                && (tag == ANY || e.tag == ANY || e.tag == tag)
            {
                let mut fifo = fifo;
                if prev == NIL {
                    fifo.head = e.next;
                } else {
                    self.entries[prev as usize].next = e.next;
                }
                if fifo.tail == cur {
                    fifo.tail = prev;
                }
                match q {
                    Queue::Posted => self.posted[h] = fifo,
                    Queue::Unexpected => self.unexpected[h] = fifo,
                }
                self.entries[cur as usize].next = self.free_entry;
                self.free_entry = cur;
                return Some((e.op, e.slot));
            }
            prev = cur;
            cur = e.next;
        }
        None
    }

    fn figures(self) -> Result<DagRun, DagFault> {
        let dag = self.dag;
        let mut stuck = Vec::new();
        let example = |how: StuckHow, op: u32| {
            let rank = dag.rank_of(op);
            Stuck {
                how,
                op,
                rank,
                local: op - dag.rank_ops(rank).start,
                statement: dag.describe(op),
                source: None,
            }
        };
        let count = |queues: &[Fifo], message: bool, stuck: &mut Vec<Stuck>| -> u64 {
            let mut n = 0;
            for (r, f) in queues.iter().enumerate() {
                let mut cur = f.head;
                while cur != NIL {
                    let e = self.entries[cur as usize];
                    n += 1;
                    if stuck.len() < 5 {
                        let how = if message {
                            StuckHow::Message { at: r as u32 }
                        } else {
                            StuckHow::Receive
                        };
                        stuck.push(example(how, e.op));
                    }
                    cur = e.next;
                }
            }
            n
        };
        let unmatched_receives = count(&self.posted, false, &mut stuck);
        let unreceived = count(&self.unexpected, true, &mut stuck);
        let mut never_ready = 0;
        // not counted: an operation that ran and was then released once more (an eager send
        // finished again by a receive larger than `S`, as LogGOPSim does)
        for i in self.counters.never_ready() {
            never_ready += 1;
            if stuck.len() < 5 {
                stuck.push(example(StuckHow::NeverReady, i));
            }
        }
        if unmatched_receives + unreceived + never_ready > 0 {
            return Err(DagFault::Incomplete {
                unmatched_receives,
                unreceived,
                never_ready,
                stuck,
            });
        }
        if let Some(rank) = self.compute.iter().position(|&c| c == u64::MAX) {
            return Err(DagFault::Sum(format!("the calcs of rank {rank}")));
        }
        let finish: Vec<u64> = self
            .cpu_free
            .chunks(self.cpus)
            .map(|c| c.iter().copied().max().unwrap_or(0))
            .collect();
        let makespan_ticks = finish.iter().copied().max().unwrap_or(0);
        let links = match &self.net {
            None => Vec::new(),
            Some(net) => {
                // each used link's id, state and waits, by id
                let runs: Vec<(u64, LinkRun, u64)> = match &net.runs {
                    LinkRuns::Direct { runs, waits } => (0..runs.len() as u64)
                        .map(|id| {
                            let place = net.place(id) as usize;
                            (id, runs[place], waits[place])
                        })
                        .filter(|(_, l, _)| l.messages > 0)
                        .collect(),
                    LinkRuns::Sparse { runs, waits } => {
                        let mut used: Vec<_> = runs
                            .iter()
                            .map(|(&place, l)| {
                                let w = waits.get(&place).copied().unwrap_or(0);
                                (net.link_at(place), *l, w)
                            })
                            .collect();
                        used.sort_by_key(|&(id, _, _)| id);
                        used
                    }
                };
                if let Some((id, _, _)) = runs
                    .iter()
                    .find(|(_, l, w)| l.busy == u64::MAX || *w == u64::MAX)
                {
                    let name = net.links.interconnect.topology.link_name(*id);
                    return Err(DagFault::Sum(format!(
                        "the transmissions at link {name}, or the times headers waited for it,"
                    )));
                }
                runs.iter()
                    .map(|(id, l, waits)| {
                        (
                            *id,
                            if makespan_ticks > 0 {
                                l.busy as f64 / makespan_ticks as f64
                            } else {
                                0.0
                            },
                            l.messages,
                            // from a header's arrival to the end of its transmission
                            (u128::from(l.busy) + u128::from(*waits)) as f64
                                / l.messages.max(1) as f64
                                / TICKS_PER_SECOND,
                        )
                    })
                    .collect()
            }
        };
        Ok(DagRun {
            makespan: makespan_ticks as f64 / TICKS_PER_SECOND,
            makespan_ticks,
            finish,
            compute: self.compute,
            messages: self.messages,
            bytes: self.bytes,
            message_delay: if self.messages > 0 {
                self.delay as f64 / self.messages as f64 / TICKS_PER_SECOND
            } else {
                0.0
            },
            links,
            events: self.events,
            requeued: self.requeued,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    Posted,
    Unexpected,
}

impl Net<'_> {
    #[inline(always)]
    fn node(&self, rank: u32) -> u32 {
        rank / self.links.ranks_per_node
    }

    /// The next hop from vertex `at` towards `rank`'s node (not `at`).
    #[inline(always)]
    fn next_hop(&self, at: u32, rank: u32) -> Hop {
        self.links
            .interconnect
            .topology
            .next(at, self.node(rank))
            .expect("a message in the network is not yet at its destination")
    }

    /// A straight stretch as a [`LaneHop`]'s `line` (up to `u32::MAX / LINE_STEPS` hops: a
    /// longer stretch is routed again where the line ends).
    fn pack(&self, s: Straight) -> u32 {
        match self.steps.iter().position(|&step| step == s.step) {
            Some(i) if s.hops > 0 => s.hops.min(u32::MAX / LINE_STEPS) * LINE_STEPS + i as u32,
            _ => 0,
        }
    }

    /// The straight stretch a [`LaneHop`]'s `line` packs.
    fn unpack(&self, line: u32) -> Straight {
        Straight {
            hops: line / LINE_STEPS,
            step: self.steps[(line % LINE_STEPS) as usize],
        }
    }

    /// Where `link`'s state is kept ([its place](crate::topology::Topology::place)).
    #[inline(always)]
    fn place(&self, link: u64) -> u64 {
        self.links.interconnect.topology.place(link)
    }

    /// The link whose state is at `place`.
    fn link_at(&self, place: u64) -> u64 {
        self.links.interconnect.topology.link_at(place)
    }

    /// The transmission time of `bytes` on `link`.
    #[inline(always)]
    fn transmission(&self, bytes: u64, link: u64) -> u64 {
        let capacity = self.links.interconnect.topology.capacity(link);
        wide_ceil_from_f64(bytes as f64 * self.per_byte / capacity).min(u128::from(TIME_LIMIT))
            as u64
    }

    /// The state of the link at `place`, if it is kept in the array (for a prefetch).
    #[inline(always)]
    fn peek(&self, place: u64) -> Option<&LinkRun> {
        match &self.runs {
            LinkRuns::Direct { runs, .. } => runs.get(place as usize),
            LinkRuns::Sparse { .. } => None,
        }
    }

    /// The state of the link at `place`.
    #[inline(always)]
    fn slot(&mut self, place: u64) -> &mut LinkRun {
        match &mut self.runs {
            LinkRuns::Direct { runs, .. } => &mut runs[place as usize],
            LinkRuns::Sparse { runs, .. } => runs.entry(place).or_default(),
        }
    }

    /// A header waited `ticks` for the link at `place`.
    fn wait(&mut self, place: u64, ticks: u64) {
        match &mut self.runs {
            // saturating: a sum past 2^64 ps is refused when the figures are made
            LinkRuns::Direct { waits, .. } => {
                waits[place as usize] = waits[place as usize].saturating_add(ticks);
            }
            LinkRuns::Sparse { waits, .. } => {
                let w = waits.entry(place).or_default();
                *w = w.saturating_add(ticks);
            }
        }
    }
}
