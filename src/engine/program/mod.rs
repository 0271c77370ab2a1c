//! Running a program to completion: one replication is one execution.
//!
//! The same kind of loop as the queueing engine (a calendar ordered by `(time, seq)`, events as
//! small `Copy` values with ids into arenas, a `match` per event, nothing allocated per event
//! once the arenas have grown), over different stations: each node's processor (FCFS, `cores`
//! servers), each link (FCFS or processor sharing), each disk unit (FCFS). Ranks are
//! interpreted from the compiled code; a rank that waits (for its processor, a message, a
//! barrier, a disk) simply stops until the event that frees it puts it back on the ready queue.
//!
//! **Time** is 128-bit clock ticks: a program mixes message-level times (a 64-byte message on a
//! 10 GB/s link takes 6.4·10^-9 s) with runs of hours, which at the clock's resolution of
//! `2^-31` of the smallest time need more than 64 bits. The queueing engine keeps 64-bit ticks
//! (see [`crate::time`]).
//!
//! **A run never hangs.** When nothing is left to happen and some rank has not finished, the
//! run stops with [`ProgramFault::Deadlock`], naming the ranks and the operations they wait in;
//! a rank that executes 10^8 operations without time passing stops with
//! [`ProgramFault::Stuck`].

mod mailbox;
pub mod timeline;

use std::collections::{HashMap, VecDeque};

use rustc_hash::FxHashMap;

use super::calendar::{CalendarEvent, LaneCalendar, WIDE_SEQ_BITS};
use super::prefetch::prefetch;
use super::ps::PsQueue;
use crate::program::collective::{Algorithm, Collective, GroupShape, Step};
use crate::program::control::{COLLECTIVE_TAG, Control, Phases};
use crate::program::{
    Category, CollectiveOp, Destination, Instr, MAX_INSTANT_OPS, Program, ProgramFault, Sharing,
    Size, Switching, Traffic, Work,
};
use crate::rng::{StreamRng, stream};
use crate::stats::{Percentiles, Tally};
use crate::time::{Clock, wide_ceil_from_f64};
use crate::topology::{Hop, NO_DETOUR, Routing};
use mailbox::Mailbox;
use rand::RngExt;
use timeline::{Recorder, Timeline, TimelineError};

/// Time in 128-bit clock ticks.
pub type Ticks = u128;

/// The calendar lane of events one hop latency after the time they are scheduled at: they come
/// in time order, so the lane needs no heap (see [`LaneCalendar`]).
const HOP_LANE: usize = 0;

/// The calendar lane of the ends of sends' startups, each the same span after the time it is
/// scheduled at.
const STARTUP_LANE: usize = 1;

/// The calendar lane of messages' deliveries that come in time order (on free paths, each one
/// transmission and one hop latency after its last hop), used while the heap is a binary heap:
/// there the lane saves a sift per delivery (ring and reduce at 256 ranks, with the startup
/// lane: 1.3 to 2.1 times the messages per second). Once it is a radix heap deliveries go to
/// it: used there too, the lane made the 65,536-rank allreduce 7-8% slower (about 1% of its
/// deliveries came in order).
const DELIVER_LANE: usize = 2;

/// How far down the hop lane [`Execution::load_ahead`] looks: far enough that the records
/// arrive before their event runs (a hop takes some 70 ns, a miss to memory about 100), near
/// enough that they are still in the cache then (on a 256 x 256 torus 4 to 32 places all ran
/// within 5% of each other).
const LOAD_AHEAD: usize = 16;

/// The random stream of the messages' detours, after the ranks' (`0..ranks`).
const ROUTE_STREAM: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PEvent {
    /// The rank's own delay (the startup of a send) ended.
    Wake { rank: u32 },
    /// The rank's compute on its node's processor ended.
    Cpu { rank: u32 },
    /// The request at the head of a disk unit ended.
    Disk { unit: u32 },
    /// A fair-shared link's next departure, unless superseded.
    LinkPs { slot: u32, generation: u32 },
    /// A message's header reaches its next vertex after the per-hop latency and enters the
    /// link of slot `slot` (its route computed when the event was scheduled, so the link's
    /// state and the message's are read side by side, not one after the other).
    Hop { msg: u32, slot: u32 },
    /// A message is delivered after the last hop's latency.
    Deliver { msg: u32 },
}

impl CalendarEvent for PEvent {
    const TAG_BITS: u32 = 3;

    #[inline]
    fn encode(self) -> (u64, u64) {
        let pair = |a: u32, b: u32| (u64::from(a) << 32) | u64::from(b);
        match self {
            PEvent::Wake { rank } => (0, u64::from(rank)),
            PEvent::Cpu { rank } => (1, u64::from(rank)),
            PEvent::Disk { unit } => (2, u64::from(unit)),
            PEvent::LinkPs { slot, generation } => (3, pair(slot, generation)),
            PEvent::Hop { msg, slot } => (4, pair(slot, msg)),
            PEvent::Deliver { msg } => (5, u64::from(msg)),
        }
    }

    #[inline]
    fn decode(tag: u64, p: u64) -> PEvent {
        let (hi, lo) = ((p >> 32) as u32, p as u32);
        match tag {
            0 => PEvent::Wake { rank: lo },
            1 => PEvent::Cpu { rank: lo },
            2 => PEvent::Disk { unit: lo },
            3 => PEvent::LinkPs {
                slot: hi,
                generation: lo,
            },
            4 => PEvent::Hop { msg: lo, slot: hi },
            _ => PEvent::Deliver { msg: lo },
        }
    }
}

/// What a rank is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// On the ready queue or being interpreted.
    Ready,
    /// Computing (or waiting for its processor); then `pc + 1`.
    Cpu,
    /// Combining in a collective; then its next step.
    Combine,
    /// In the startup delay of the send of message `pending`.
    Startup,
    /// Waiting for the parts of the current operation (deliveries, a receive).
    Parts,
    /// At a barrier.
    Barrier,
    /// At a disk.
    Disk,
    /// Finished.
    Done,
}

#[derive(Clone, Debug)]
struct Rank {
    pc: u32,
    wait: Wait,
    /// Outstanding parts of the current operation or collective step.
    parts: u8,
    /// The receive part still open: (source, tag).
    recv: Option<(u32, u64)>,
    /// The message whose startup is running.
    pending: u32,
    /// Whether the pending message's sender waits for its delivery.
    pending_blocks: bool,
    /// In a collective: its current step (index) and that step's combine; the collective's
    /// shape and message tag, fixed when it starts.
    in_collective: bool,
    step: u32,
    combine: Option<f64>,
    shape: GroupShape,
    tag: u64,
    category: Category,
    since: Ticks,
    spent: [Ticks; 4],
    finish: Ticks,
    /// It injected network traffic.
    sent_traffic: bool,
}

/// A message in flight. What a hop reads and writes comes first, in one cache line (the
/// struct is aligned to it); the rest, read at its injection and delivery, in the second.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Msg {
    /// Its transmission time on a link of the base capacity.
    work: Ticks,
    /// Cut-through over FCFS links: the latest end of its transmission on a link so far.
    finish: Ticks,
    /// The vertex the header is at.
    at: u32,
    /// The vertex the header reaches over the link of its pending hop.
    next: u32,
    dst_node: u32,
    /// Its route's detour, under a routing that is not minimal ([`Topology::detour`]).
    detour: u32,
    /// Cut-through over fair links: links still serving it; the header reached the destination.
    serving: u32,
    header_done: bool,
    /// The sender waits for the delivery.
    notify: bool,
    /// Network traffic ([`Instr::Traffic`]): counted on delivery, never received.
    traffic: bool,
    injected: Ticks,
    bytes: f64,
    tag: u64,
    src: u32,
    dst: u32,
}

/// One message at one fair-shared link.
#[derive(Clone, Copy, Debug)]
struct Visit {
    msg: u32,
    arrived: Ticks,
    /// The vertex the link leads to.
    to: u32,
}

/// A link's state that every crossing reads and writes: one cache line. A FCFS link needs no
/// events: messages reach it in time order, so each one's start is `max(arrival, free_at)`
/// (Lindley's recursion) and its transmission ends `work` later, all known on arrival. A
/// fair-shared link is a processor-sharing queue with departure events, its sharing state in
/// [`FairRun`] beside this.
///
/// Nothing else is kept per link: a link's delay percentiles are counted only when the run
/// reports per-link figures ([`Program::report_each`]), in [`Execution::link_percentiles`].
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct LinkRun {
    /// FCFS: when the link finishes the transmissions it has accepted.
    free_at: Ticks,
    /// Time spent transmitting (FCFS: added on arrival; fair: when the link empties).
    busy_total: Ticks,
    /// Sum of the delays (the mean is what is reported per replication).
    delay: Ticks,
    messages: u64,
    /// A message entered it: it is one of the links used, which the run reports.
    used: bool,
}

// the memory estimate of a run counts a link whose state is made up front as one `LinkRun`
const _: () = assert!(std::mem::size_of::<LinkRun>() == crate::program::BYTES_PER_LINK as usize);

/// The rest of a fair-shared link's state: its sharing, whether it serves anything, since when.
#[derive(Debug, Default)]
struct FairRun {
    ps: PsQueue,
    busy: bool,
    busy_since: Ticks,
}

#[derive(Debug, Default)]
struct Server {
    busy: u32,
    queue: VecDeque<(u32, Ticks)>,
    /// For a single-server unit (disks): the rank being served.
    serving: u32,
}

/// A slab of values with a free list: ids are reused, so a steady state allocates nothing.
#[derive(Debug)]
struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Slab<T> {
    fn new() -> Slab<T> {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }

    #[inline]
    fn insert(&mut self, v: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = v;
                i
            }
            None => {
                self.items.push(v);
                (self.items.len() - 1) as u32
            }
        }
    }

    #[inline]
    fn remove(&mut self, i: u32) {
        self.free.push(i);
    }

    fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

/// Where a link's state is: its slot in [`Execution::links`].
#[derive(Debug)]
enum SlotMap {
    /// Slot = link id, every link's state made at the start (zeroed memory, which the system
    /// only commits when a link is first used): for topologies with a few links per node
    /// (grids, trees, the bus), where this saves a look-up per hop.
    Direct,
    /// Slots made on first use, in a table by link id.
    Dense(Vec<u32>),
    /// Slots made on first use, in a hash map by link id (more than 2^24 links).
    Sparse(HashMap<u64, u32>),
}

/// What one execution measured.
#[derive(Clone, Debug)]
pub struct ProgramRun {
    /// When the last rank finished, in time units.
    pub makespan: f64,
    /// Per rank: time in each [`Category`], in time units.
    pub spent: Vec<[f64; 4]>,
    /// Per rank: when it finished.
    pub finish: Vec<f64>,
    /// Per phase, per rank: time inside the phase.
    pub phases: Vec<Vec<f64>>,
    /// Per link used, in the order of the links' ids, when the program reports per-link
    /// figures ([`Program::report_each`]), else empty: its name, utilisation, messages, mean
    /// and p99 delay.
    pub links: Vec<LinkFigures>,
    /// Every used link's figures summed, in the order of the links' ids (whether or not the
    /// program reports per-link figures).
    pub link_summary: LinkSummary,
    /// Messages delivered.
    pub messages: u64,
    /// Mean message delay from injection to delivery.
    pub message_delay: f64,
    /// 99th percentile of the message delay.
    pub message_p99: f64,
    /// Messages sent but never received (left in a mailbox at the end).
    pub unreceived: u64,
    /// Network traffic (messages no operation receives): see [`Traffic`].
    pub traffic: Traffic,
    /// Events processed.
    pub events: u64,
}

/// The used links' figures over one execution, summed link by link in the order of their ids.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkSummary {
    /// Links used.
    pub used: u64,
    /// Their utilisations summed.
    pub utilisation_sum: f64,
    /// The largest utilisation (0 when none is used).
    pub utilisation_max: f64,
    /// Messages that crossed them, each crossing counted.
    pub crossings: u64,
    /// Their delays summed over the crossings (each link's mean times its messages).
    pub delay_sum: f64,
}

impl LinkSummary {
    /// Adds one link's figures.
    fn add(&mut self, link: &LinkFigures) {
        self.used += 1;
        self.utilisation_sum += link.utilisation;
        self.utilisation_max = self.utilisation_max.max(link.utilisation);
        self.crossings += link.messages;
        self.delay_sum += link.delay * link.messages as f64;
    }

    /// The mean utilisation of the used links.
    pub fn mean_utilisation(&self) -> f64 {
        self.utilisation_sum / self.used as f64
    }

    /// The mean delay of a crossing.
    pub fn mean_delay(&self) -> f64 {
        self.delay_sum / self.crossings as f64
    }
}

/// A link's figures over one execution.
#[derive(Clone, Debug)]
pub struct LinkFigures {
    /// Its name ([`crate::topology::Topology::link_name`]) when the program reports per-link
    /// figures ([`Program::report_each`]), empty otherwise.
    pub name: String,
    /// Busy fraction of the makespan.
    pub utilisation: f64,
    /// Messages that crossed it.
    pub messages: u64,
    /// Mean time from arrival at the link to the end of its transmission.
    pub delay: f64,
    /// 99th percentile of the same, counted only when the program reports per-link figures
    /// ([`Program::report_each`]); `NaN` otherwise.
    pub p99: f64,
}

/// One execution of a program.
#[derive(Debug)]
pub struct Execution<'p> {
    prog: &'p Program,
    clock: Clock,
    now: Ticks,
    /// Lane [`HOP_LANE`]: events one hop latency ahead; [`STARTUP_LANE`]: the ends of
    /// startups; [`DELIVER_LANE`]: deliveries in time order while the heap is a binary heap.
    /// The heap holds the rest (computes, delayed hops, other deliveries, disks, fair links).
    calendar: LaneCalendar<PEvent, 3>,
    ranks: Vec<Rank>,
    rng: Vec<StreamRng>,
    /// The draws of the messages' detours (stream [`ROUTE_STREAM`]), under a routing that is
    /// not minimal.
    route_rng: StreamRng,
    /// Routes depend on the message (a routing that is not minimal).
    routed: bool,
    /// Loop counters, expressions, collective counters and ideal barriers.
    ctl: Control<'p>,
    ready: VecDeque<u32>,
    nodes: Vec<Server>,
    disk_base: Vec<u32>,
    units: Vec<Server>,
    links: Vec<LinkRun>,
    /// Per slot, when slots are made on first use: the link's id.
    link_ids: Vec<u64>,
    /// Per slot, with fair sharing: the link's sharing state.
    fair: Vec<FairRun>,
    /// Per slot, when links differ in capacity: bytes per tick.
    per_tick: Vec<f64>,
    /// Per slot, when per-link figures are reported: the link's delay percentiles.
    link_percentiles: FxHashMap<u32, Percentiles>,
    slots: SlotMap,
    msgs: Slab<Msg>,
    visits: Slab<Visit>,
    /// Messages delivered and not yet received.
    mailbox: Mailbox,
    phases: Phases<Ticks>,
    finished: u32,
    events: u64,
    /// Most events the execution may schedule ([`crate::program::budget::MAX_EVENTS`]).
    budget: u64,
    message_count: u64,
    /// Bytes of network traffic injected and delivered in the window (its `until` unset: see
    /// `traffic_end`).
    traffic: Traffic,
    /// When the window closes: the instant the first rank that sent traffic finished (its
    /// events included), `Ticks::MAX` before.
    traffic_end: Ticks,
    message_delay: Tally,
    message_pct: Percentiles,
    latency: Ticks,
    /// A dragonfly's global links' latency (else `latency`).
    global_latency: Ticks,
    /// The nodes' own links' latency.
    node_latency: Ticks,
    /// Every hop has `latency`.
    one_latency: bool,
    startup: Ticks,
    /// Bytes per tick of a link of the base capacity.
    base_per_tick: f64,
    /// Every link has the base capacity.
    uniform: bool,
    /// Per-link figures are reported, their percentiles with them.
    report_links: bool,
    /// The timeline being recorded, when one was asked for ([`Execution::run_with_timeline`]).
    timeline: Option<Box<Recorder>>,
}

impl<'p> Execution<'p> {
    /// Sets up replication `replication` of `prog` under `seed`: every rank ready at time 0.
    pub fn new(prog: &'p Program, seed: u64, replication: u64) -> Execution<'p> {
        let p = prog.ranks as usize;
        let clock = prog.clock;
        let net = &prog.interconnect;
        let links = net.topology.link_count();
        let mut disk_base = Vec::new();
        let mut units = 0;
        for d in &prog.disks {
            disk_base.push(units);
            units += d.count;
        }
        let direct = net.link_states_up_front();
        Execution {
            prog,
            clock,
            now: 0,
            calendar: LaneCalendar::new(),
            ranks: vec![
                Rank {
                    pc: 0,
                    wait: Wait::Ready,
                    parts: 0,
                    recv: None,
                    pending: 0,
                    pending_blocks: false,
                    in_collective: false,
                    step: 0,
                    shape: GroupShape::ALONE,
                    tag: 0,
                    combine: None,
                    category: Category::Compute,
                    since: 0,
                    spent: [0; 4],
                    finish: 0,
                    sent_traffic: false,
                };
                p
            ],
            rng: (0..p as u64)
                .map(|r| stream(seed, replication, r))
                .collect(),
            route_rng: stream(seed, replication, ROUTE_STREAM),
            routed: net.topology.routing() != Routing::Minimal,
            ctl: Control::new(prog),
            ready: (0..prog.ranks).collect(),
            nodes: (0..prog.nodes()).map(|_| Server::default()).collect(),
            disk_base,
            units: (0..units).map(|_| Server::default()).collect(),
            links: if direct {
                vec![LinkRun::default(); links as usize]
            } else {
                Vec::new()
            },
            link_ids: Vec::new(),
            fair: Vec::new(),
            per_tick: if direct && !net.topology.uniform() {
                (0..links)
                    .map(|l| net.bandwidth * net.topology.capacity(l) * clock.tick())
                    .collect()
            } else {
                Vec::new()
            },
            link_percentiles: FxHashMap::default(),
            slots: if direct {
                SlotMap::Direct
            } else if links <= 1 << 24 {
                SlotMap::Dense(vec![u32::MAX; links as usize])
            } else {
                SlotMap::Sparse(HashMap::new())
            },
            msgs: Slab::new(),
            visits: Slab::new(),
            mailbox: Mailbox::new(prog.ranks),
            phases: Phases::new(prog.ranks, prog.phases.len()),
            finished: 0,
            events: 0,
            budget: crate::program::budget::MAX_EVENTS,
            message_count: 0,
            traffic: Traffic::default(),
            traffic_end: Ticks::MAX,
            message_delay: Tally::new(),
            message_pct: Percentiles::wide(&clock, prog.message_scale()),
            latency: clock.wide_ticks(net.latency),
            global_latency: clock.wide_ticks(net.global_latency),
            node_latency: clock.wide_ticks(net.node_latency),
            one_latency: net.one_latency(),
            startup: clock.wide_ticks(net.startup),
            base_per_tick: net.bandwidth * clock.tick(),
            uniform: net.topology.uniform(),
            report_links: prog.report_each,
            timeline: None,
        }
    }

    /// The same execution with a budget of `events` events instead of
    /// [`crate::program::budget::MAX_EVENTS`] (a run that schedules more stops with
    /// [`ProgramFault::Budget`]).
    pub fn with_budget(mut self, events: u64) -> Self {
        self.budget = events;
        self
    }

    /// Runs the program to completion.
    pub fn run(mut self) -> Result<ProgramRun, ProgramFault> {
        self.execute()?;
        Ok(self.figures())
    }

    /// Runs the program to completion, recording its [`Timeline`]: every rank's time in each
    /// category, its phases, and the number of messages at each link used. The run stops with
    /// [`TimelineError::TooLarge`] as soon as the timeline would hold more than `limit` events
    /// (spans, phase spans and changes of a link's occupancy), so its memory stays bounded.
    /// The run's figures are those [`Execution::run`] gives.
    pub fn run_with_timeline(
        mut self,
        limit: u64,
    ) -> Result<(ProgramRun, Timeline), TimelineError> {
        self.timeline = Some(Box::new(Recorder::new(
            limit,
            self.prog.ranks,
            self.prog.phases.len(),
        )));
        self.execute()?;
        let recorder = self.timeline.take().expect("recorded above");
        if recorder.full {
            return Err(TimelineError::TooLarge {
                limit,
                time: self.clock.wide_span(self.now),
                finished: self.finished,
                ranks: self.prog.ranks,
            });
        }
        let finish: Vec<Ticks> = self.ranks.iter().map(|r| r.finish).collect();
        let topology = &self.prog.interconnect.topology;
        let timeline = recorder.timeline(&self.clock, &finish, &self.prog.phases, |slot| {
            let id = self.link_id(slot);
            (id, topology.link_name(id))
        });
        Ok((self.figures(), timeline))
    }

    /// Runs every event, until none is left or (with a timeline) the timeline is full.
    fn execute(&mut self) -> Result<(), ProgramFault> {
        // the calendar's keys hold times below 2^84 ticks and 2^41 events (with their tags)
        const TIME_LIMIT: Ticks = 1 << (128 - WIDE_SEQ_BITS);
        const EVENT_LIMIT: u64 = 1 << (WIDE_SEQ_BITS - 3);
        self.drain()?;
        while let Some((time, event)) = self.calendar.pop() {
            self.now = time;
            self.events += 1;
            self.load_ahead();
            self.dispatch(event);
            // most events (a header's hop) make no rank ready: no call then
            if !self.ready.is_empty() {
                self.drain()?;
            }
            // every event's time is checked (a step is at most 2^68 ticks, so none passes 2^84
            // from below 2^83), the event count every 2^16 events
            if self.now >= TIME_LIMIT / 2
                || (self.events & 0xFFFF == 0 && self.calendar.scheduled() >= EVENT_LIMIT / 2)
            {
                return Err(ProgramFault::Horizon {
                    time: self.clock.wide_span(self.now),
                    events: self.calendar.scheduled(),
                });
            }
            if self.events & 0xFFFF == 0 && self.timeline.as_ref().is_some_and(|t| t.full) {
                return Ok(());
            }
            if self.events & 0xFFFF == 0 && self.calendar.scheduled() >= self.budget {
                return Err(ProgramFault::Budget {
                    time: self.clock.wide_span(self.now),
                    events: self.calendar.scheduled(),
                    limit: self.budget,
                    finished: self.finished,
                    ranks: self.prog.ranks,
                });
            }
        }
        if self.timeline.as_ref().is_some_and(|t| t.full) {
            return Ok(());
        }
        if self.finished < self.prog.ranks {
            return Err(self.deadlock());
        }
        // every message sent is received: one left in a mailbox is a program error
        if let Some(((dst, src, tag), n)) = self.mailbox.first() {
            return Err(ProgramFault::Unreceived {
                count: self.mailbox.total(),
                example: format!("{n} from rank {src} to rank {dst} (tag {tag})"),
            });
        }
        Ok(())
    }

    /// Starts loading what the coming events touch: the hop [`LOAD_AHEAD`] places down the hop
    /// lane, and the heap's next event when the heap is a radix heap, so that their cache
    /// misses overlap with the events before them.
    #[inline(always)]
    fn load_ahead(&self) {
        if let Some(e) = self.calendar.lane_ahead(HOP_LANE, LOAD_AHEAD) {
            self.prefetch_for(e);
        }
        if let Some(e) = self.calendar.heap_next() {
            self.prefetch_for(e);
        }
    }

    /// Starts loading the records `event` reads first: a hop's link and message, a delivered
    /// message.
    #[inline(always)]
    fn prefetch_for(&self, event: PEvent) {
        match event {
            PEvent::Hop { msg, slot } => {
                if let Some(l) = self.links.get(slot as usize) {
                    prefetch(l);
                }
                if let Some(m) = self.msgs.items.get(msg as usize) {
                    prefetch(m);
                }
            }
            PEvent::Deliver { msg } => {
                if let Some(m) = self.msgs.items.get(msg as usize) {
                    prefetch(m);
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, event: PEvent) {
        match event {
            PEvent::Wake { rank } => self.startup_done(rank),
            PEvent::Cpu { rank } => {
                let node = self.ctl.node(rank) as usize;
                let n = &mut self.nodes[node];
                match n.queue.pop_front() {
                    Some((next, work)) => self
                        .calendar
                        .schedule(self.now + work, PEvent::Cpu { rank: next }),
                    None => n.busy -= 1,
                }
                self.cpu_done(rank);
            }
            PEvent::Disk { unit } => {
                let u = &mut self.units[unit as usize];
                let rank = u.serving;
                match u.queue.pop_front() {
                    Some((next, work)) => {
                        u.serving = next;
                        self.calendar
                            .schedule(self.now + work, PEvent::Disk { unit });
                    }
                    None => u.busy = 0,
                }
                // the io is done: on to the next instruction
                self.ranks[rank as usize].pc += 1;
                self.resume(rank);
            }
            PEvent::LinkPs { slot, generation } => {
                let now = self.now;
                let f = &mut self.fair[slot as usize];
                if !f.ps.is_current(generation) {
                    self.events -= 1;
                    return;
                }
                let (visit, next) = f.ps.depart(now);
                match next {
                    Some((generation, due)) => self
                        .calendar
                        .schedule(due, PEvent::LinkPs { slot, generation }),
                    None => {
                        f.busy = false;
                        self.links[slot as usize].busy_total += now - f.busy_since;
                    }
                }
                self.left_link(slot, visit);
            }
            PEvent::Hop { msg, slot } => {
                let to = self.msgs.items[msg as usize].next;
                self.enter_link(msg, slot, to);
            }
            PEvent::Deliver { msg } => self.deliver(msg),
        }
    }

    /// Interprets the ready ranks until each blocks.
    fn drain(&mut self) -> Result<(), ProgramFault> {
        while let Some(r) = self.ready.pop_front() {
            self.interpret(r)?;
        }
        Ok(())
    }

    fn set_category(&mut self, rank: u32, c: Category) {
        let now = self.now;
        let r = &mut self.ranks[rank as usize];
        if let Some(t) = &mut self.timeline {
            t.span(rank, r.category, r.since, now);
        }
        r.spent[r.category as usize] += now - r.since;
        r.since = now;
        r.category = c;
    }

    fn size(&mut self, rank: u32, s: &Size) -> Result<f64, ProgramFault> {
        match s {
            Size::Bytes(e) => self.ctl.bytes(rank, self.ranks[rank as usize].pc, e),
            Size::Random(d) => Ok(d.draw(&mut self.rng[rank as usize]).round()),
        }
    }

    /// Runs rank `r` from its program counter until it blocks or finishes.
    fn interpret(&mut self, r: u32) -> Result<(), ProgramFault> {
        let prog = self.prog;
        let ri = r as usize;
        let mut budget = MAX_INSTANT_OPS;
        loop {
            budget -= 1;
            if budget == 0 {
                return Err(ProgramFault::Stuck {
                    rank: r,
                    path: prog.paths[self.ranks[ri].pc as usize].clone(),
                });
            }
            let pc = self.ranks[ri].pc;
            let Some(instr) = prog.code.get(pc as usize) else {
                self.set_category(r, Category::Compute);
                let rk = &mut self.ranks[ri];
                rk.wait = Wait::Done;
                rk.finish = self.now;
                self.finished += 1;
                if rk.sent_traffic && self.traffic_end == Ticks::MAX {
                    self.traffic_end = self.now;
                }
                return Ok(());
            };
            match instr {
                Instr::Compute(work) => {
                    let t = self.work(r, work)?;
                    self.compute(r, t, Wait::Cpu);
                    return Ok(());
                }
                Instr::Send {
                    to,
                    bytes,
                    tag,
                    blocking,
                } => {
                    let to = self.ctl.peer(r, pc, to)?;
                    let bytes = self.size(r, bytes)?;
                    let tag = self.ctl.user_tag(r, pc, tag)?;
                    self.set_category(r, Category::Communication);
                    self.ranks[ri].parts = u8::from(*blocking);
                    self.send(r, to, bytes, tag, *blocking, false);
                    return Ok(());
                }
                Instr::Traffic {
                    to,
                    bytes,
                    blocking,
                } => {
                    let to = match to {
                        Destination::Rank(e) => self.ctl.peer(r, pc, e)?,
                        Destination::Random => {
                            // another rank, uniformly: a draw below P - 1, its own skipped
                            let other = self.rng[ri].random_range(0..prog.ranks - 1);
                            other + u32::from(other >= r)
                        }
                    };
                    let bytes = self.size(r, bytes)?;
                    self.set_category(r, Category::Communication);
                    self.ranks[ri].parts = u8::from(*blocking);
                    self.send(r, to, bytes, 0, *blocking, true);
                    return Ok(());
                }
                Instr::Recv { from, tag } => {
                    let from = self.ctl.peer(r, pc, from)?;
                    let tag = self.ctl.user_tag(r, pc, tag)?;
                    if self.mailbox.take(r, from, tag) {
                        self.ranks[ri].pc += 1;
                        continue;
                    }
                    self.set_category(r, Category::Waiting);
                    let rk = &mut self.ranks[ri];
                    rk.parts = 1;
                    rk.recv = Some((from, tag));
                    rk.wait = Wait::Parts;
                    return Ok(());
                }
                Instr::SendRecv {
                    to,
                    from,
                    bytes,
                    tag,
                } => {
                    let to = self.ctl.peer(r, pc, to)?;
                    let from = self.ctl.peer(r, pc, from)?;
                    let bytes = self.size(r, bytes)?;
                    let tag = self.ctl.user_tag(r, pc, tag)?;
                    self.set_category(r, Category::Communication);
                    let got = self.mailbox.take(r, from, tag);
                    let rk = &mut self.ranks[ri];
                    rk.parts = 1 + u8::from(!got);
                    rk.recv = (!got).then_some((from, tag));
                    self.send(r, to, bytes, tag, true, false);
                    return Ok(());
                }
                Instr::Collective(op) => {
                    if !self.ranks[ri].in_collective {
                        if self.start_collective(r, op)? {
                            return Ok(());
                        }
                        if op.kind == Collective::Barrier && op.algorithm == Algorithm::Ideal {
                            self.ranks[ri].pc += 1;
                            continue;
                        }
                    }
                    if self.issue_step(r, op) {
                        return Ok(());
                    }
                    self.ranks[ri].in_collective = false;
                    self.ranks[ri].pc += 1;
                }
                Instr::Io { disk, unit, bytes } => {
                    let u = self.ctl.eval(r, pc, unit)?;
                    let bytes = self.size(r, bytes)?;
                    let d = &prog.disks[*disk as usize];
                    let unit =
                        self.disk_base[*disk as usize] + u.rem_euclid(i64::from(d.count)) as u32;
                    let work = self.clock.wide_ticks(d.startup + bytes / d.bandwidth);
                    self.set_category(r, Category::Io);
                    self.ranks[ri].wait = Wait::Disk;
                    let s = &mut self.units[unit as usize];
                    if s.busy == 0 {
                        s.busy = 1;
                        s.serving = r;
                        self.calendar
                            .schedule(self.now + work, PEvent::Disk { unit });
                    } else {
                        s.queue.push_back((r, work));
                    }
                    return Ok(());
                }
                Instr::Loop { times, depth, end } => {
                    self.ranks[ri].pc = self.ctl.enter_loop(r, pc, times, *depth, *end)?;
                }
                Instr::Next { start, depth } => {
                    self.ranks[ri].pc = self.ctl.next_trip(r, pc, *start, *depth);
                }
                Instr::When { cond, skip } => {
                    self.ranks[ri].pc = self.ctl.when(r, pc, cond, *skip)?;
                }
                Instr::PhaseStart(ph) => {
                    if self.phases.start(r, *ph, self.now) && self.timeline.is_some() {
                        self.phase_boundary(r, *ph, true);
                    }
                    self.ranks[ri].pc += 1;
                }
                Instr::PhaseEnd(ph) => {
                    if self.phases.end(r, *ph, self.now) && self.timeline.is_some() {
                        self.phase_boundary(r, *ph, false);
                    }
                    self.ranks[ri].pc += 1;
                }
            }
        }
    }

    /// With a timeline: rank `r` enters (`start`) or leaves `phase` now. Its current span is
    /// cut here (in the same category), so that the phase's span holds whole spans.
    #[cold]
    #[inline(never)]
    fn phase_boundary(&mut self, r: u32, phase: u16, start: bool) {
        self.set_category(r, self.ranks[r as usize].category);
        let now = self.now;
        if let Some(t) = &mut self.timeline {
            if start {
                t.phase_start(r, phase, now);
            } else {
                t.phase_end(r, phase, now);
            }
        }
    }

    fn work(&mut self, r: u32, work: &Work) -> Result<Ticks, ProgramFault> {
        let t = match work {
            Work::Time(d) => d.draw(&mut self.rng[r as usize]),
            Work::Region {
                iterations,
                cost,
                split,
            } => {
                let pc = self.ranks[r as usize].pc;
                let n = self.ctl.iterations(r, pc, iterations, *split)?;
                cost.draw_sum(n, &mut self.rng[r as usize])
            }
        };
        Ok(self.clock.wide_ticks(t))
    }

    /// Puts rank `r` on its node's processor for `work` ticks; `then` says what follows.
    fn compute(&mut self, r: u32, work: Ticks, then: Wait) {
        self.set_category(r, Category::Compute);
        self.ranks[r as usize].wait = then;
        let node = self.ctl.node(r) as usize;
        let n = &mut self.nodes[node];
        if n.busy < self.prog.cores {
            n.busy += 1;
            self.calendar
                .schedule(self.now + work, PEvent::Cpu { rank: r });
        } else {
            n.queue.push_back((r, work));
        }
    }

    fn cpu_done(&mut self, r: u32) {
        let ri = r as usize;
        match self.ranks[ri].wait {
            Wait::Combine => {
                // the collective's further steps count as communication again
                self.set_category(r, Category::Communication);
                self.ranks[ri].step += 1;
                self.resume(r);
            }
            _ => {
                self.ranks[ri].pc += 1;
                self.resume(r);
            }
        }
    }

    /// Puts a rank whose wait ended back on the ready queue.
    fn resume(&mut self, r: u32) {
        self.ranks[r as usize].wait = Wait::Ready;
        self.ready.push_back(r);
    }

    /// Sends a message from `r`: after the startup, it enters the network. `blocks`: the sender
    /// waits for its delivery (one of its `parts`).
    fn send(&mut self, r: u32, to: u32, bytes: f64, tag: u64, blocks: bool, traffic: bool) {
        let dst_node = self.ctl.node(to);
        let at = self.ctl.node(r);
        let detour = if self.routed {
            let rng = &mut self.route_rng;
            self.prog
                .interconnect
                .topology
                .detour(at, dst_node, |n| rng.random_range(0..n))
        } else {
            NO_DETOUR
        };
        let msg = self.msgs.insert(Msg {
            src: r,
            dst: to,
            tag,
            bytes,
            at,
            next: 0,
            dst_node,
            detour,
            notify: blocks,
            traffic,
            work: wide_ceil_from_f64(bytes / self.base_per_tick),
            injected: 0,
            finish: 0,
            serving: 0,
            header_done: false,
        });
        let rk = &mut self.ranks[r as usize];
        rk.pending = msg;
        rk.pending_blocks = blocks;
        rk.wait = Wait::Startup;
        if self.startup > 0 {
            self.calendar.schedule_lane(
                STARTUP_LANE,
                self.now + self.startup,
                PEvent::Wake { rank: r },
            );
        } else {
            self.startup_done(r);
        }
    }

    /// The startup of the rank's pending message is over: it enters the network.
    fn startup_done(&mut self, r: u32) {
        let ri = r as usize;
        let msg = self.ranks[ri].pending;
        let blocks = self.ranks[ri].pending_blocks;
        self.msgs.items[msg as usize].injected = self.now;
        if self.msgs.items[msg as usize].traffic {
            self.ranks[ri].sent_traffic = true;
            if self.in_window() {
                self.traffic.injected += self.msgs.items[msg as usize].bytes;
            }
        }
        self.ranks[ri].wait = Wait::Parts;
        if !blocks && self.ranks[ri].parts == 0 {
            // isend: the sender goes on
            self.ranks[ri].pc += 1;
            self.resume(r);
        }
        let m = self.msgs.items[msg as usize];
        if m.at == m.dst_node {
            match self.prog.interconnect.topology.node_hop(m.at, m.dst_node) {
                Some(hop) => {
                    let slot = self.slot(hop.link);
                    self.enter_link(msg, slot, hop.to);
                }
                None => self.deliver(msg),
            }
        } else {
            let (slot, to) = self.route(msg, m.at, m.dst_node);
            self.enter_link(msg, slot, to);
        }
    }

    /// The next hop of message `msg` from vertex `at` towards node `dst`: the slot of its link
    /// and the vertex it leads to.
    #[inline(always)]
    fn route(&mut self, msg: u32, at: u32, dst: u32) -> (u32, u32) {
        let topology = &self.prog.interconnect.topology;
        let hop = if self.routed {
            self.routed_hop(msg, at, dst)
        } else {
            topology.next(at, dst)
        };
        let hop = hop.expect("a message in the network is not yet at its destination");
        (self.slot(hop.link), hop.to)
    }

    /// The next hop of message `msg` under a routing that is not minimal: its detour kept in
    /// the message, the links' backlogs read where the routing asks.
    #[inline(never)]
    fn routed_hop(&mut self, msg: u32, at: u32, dst: u32) -> Option<Hop> {
        let topology = &self.prog.interconnect.topology;
        let mut detour = self.msgs.items[msg as usize].detour;
        let hop = topology.next_routed(at, dst, &mut detour, |link| self.backlog(link));
        self.msgs.items[msg as usize].detour = detour;
        hop
    }

    /// What waits at `link`: a FCFS link's ticks of accepted work still to transmit, a fair
    /// link's messages (0 for a link not used yet).
    fn backlog(&self, link: u64) -> u64 {
        let slot = match &self.slots {
            SlotMap::Direct => link as u32,
            SlotMap::Dense(v) => v[link as usize],
            SlotMap::Sparse(m) => m.get(&link).copied().unwrap_or(u32::MAX),
        };
        if slot == u32::MAX {
            return 0;
        }
        match self.fair.get(slot as usize) {
            Some(f) => f.ps.len() as u64,
            None => {
                let ahead = self.links[slot as usize].free_at.saturating_sub(self.now);
                u64::try_from(ahead).unwrap_or(u64::MAX)
            }
        }
    }

    /// The latency of a hop over the link of `slot`.
    #[inline(always)]
    fn hop_latency(&self, slot: u32) -> Ticks {
        if self.one_latency {
            return self.latency;
        }
        let (link, topology) = (self.link_id(slot), &self.prog.interconnect.topology);
        if topology.is_node_link(link) {
            self.node_latency
        } else if topology.is_global(link) {
            self.global_latency
        } else {
            self.latency
        }
    }

    /// The hop event of message `msg`, whose header is at `at`, towards node `dst`: its next
    /// link found now (the vertex it leads to kept in the message).
    #[inline(always)]
    fn hop_event(&mut self, msg: u32, at: u32, dst: u32) -> PEvent {
        let (slot, to) = self.route(msg, at, dst);
        self.msgs.items[msg as usize].next = to;
        PEvent::Hop { msg, slot }
    }

    /// The slot of `link`'s state, made on its first use (direct slots are marked used when
    /// a message enters them).
    #[inline(always)]
    fn slot(&mut self, link: u64) -> u32 {
        let existing = match &self.slots {
            SlotMap::Direct => return link as u32,
            SlotMap::Dense(v) => v[link as usize],
            SlotMap::Sparse(m) => m.get(&link).copied().unwrap_or(u32::MAX),
        };
        if existing != u32::MAX {
            return existing;
        }
        self.new_slot(link)
    }

    /// A slot for `link`, on its first use.
    #[inline(never)]
    fn new_slot(&mut self, link: u64) -> u32 {
        let net = &self.prog.interconnect;
        let slot = self.links.len() as u32;
        self.links.push(LinkRun {
            used: true,
            ..LinkRun::default()
        });
        self.link_ids.push(link);
        if net.sharing == Sharing::Fair {
            self.fair.push(FairRun::default());
        }
        if !net.topology.uniform() {
            self.per_tick
                .push(net.bandwidth * net.topology.capacity(link) * self.clock.tick());
        }
        match &mut self.slots {
            SlotMap::Direct => unreachable!("direct slots exist from the start"),
            SlotMap::Dense(v) => v[link as usize] = slot,
            SlotMap::Sparse(m) => {
                m.insert(link, slot);
            }
        }
        slot
    }

    /// The link id of `slot`.
    fn link_id(&self, slot: u32) -> u64 {
        match self.slots {
            SlotMap::Direct => u64::from(slot),
            _ => self.link_ids[slot as usize],
        }
    }

    /// Counts a delay of `ticks` at the link of `slot` in its percentiles (only when per-link
    /// figures are reported).
    #[cold]
    #[inline(never)]
    fn record_link_delay(&mut self, slot: u32, ticks: Ticks) {
        let link = self.link_id(slot);
        let net = &self.prog.interconnect;
        let (clock, typical) = (self.clock, self.prog.typical_bytes);
        self.link_percentiles
            .entry(slot)
            .or_insert_with(|| {
                let scale = typical / (net.bandwidth * net.topology.capacity(link));
                Percentiles::wide(&clock, scale.max(clock.tick()))
            })
            .record_wide(ticks);
    }

    /// The message's header enters the link of `slot`, which leads to vertex `to`.
    fn enter_link(&mut self, msg: u32, slot: u32, to: u32) {
        let m = self.msgs.items[msg as usize];
        let now = self.now;
        let last = to == m.dst_node;
        let work = if self.uniform {
            m.work
        } else {
            wide_ceil_from_f64(m.bytes / self.per_tick[slot as usize])
        };
        if let Some(t) = &mut self.timeline {
            t.link(slot, now, true);
        }
        if let Some(f) = self.fair.get_mut(slot as usize) {
            self.links[slot as usize].used = true;
            let visit = self.visits.insert(Visit {
                msg,
                arrived: now,
                to,
            });
            let (generation, due) = f.ps.arrive(now, visit, work);
            if !f.busy {
                f.busy = true;
                f.busy_since = now;
            }
            self.calendar
                .schedule(due, PEvent::LinkPs { slot, generation });
            if self.prog.interconnect.switching == Switching::CutThrough {
                let m = &mut self.msgs.items[msg as usize];
                m.serving += 1;
                m.at = to;
                if last {
                    m.header_done = true;
                } else {
                    let dst = m.dst_node;
                    let event = self.hop_event(msg, to, dst);
                    let latency = self.hop_latency(slot);
                    self.at(now + latency, event);
                }
            }
            return;
        }
        // FCFS: Lindley's recursion
        let l = &mut self.links[slot as usize];
        let start = now.max(l.free_at);
        let finish = start + work;
        l.used = true;
        l.free_at = finish;
        l.busy_total += work;
        l.messages += 1;
        l.delay += finish - now;
        if let Some(t) = &mut self.timeline {
            t.link(slot, finish, false);
        }
        if self.report_links {
            self.record_link_delay(slot, finish - now);
        }
        let m = &mut self.msgs.items[msg as usize];
        m.at = to;
        m.finish = m.finish.max(finish);
        let (dst, latest) = (m.dst_node, m.finish);
        let (next, event) = match (self.prog.interconnect.switching, last) {
            (Switching::StoreAndForward, false) => (finish, self.hop_event(msg, to, dst)),
            (Switching::StoreAndForward, true) => (finish, PEvent::Deliver { msg }),
            (Switching::CutThrough, false) => (start, self.hop_event(msg, to, dst)),
            (Switching::CutThrough, true) => (latest, PEvent::Deliver { msg }),
        };
        let latency = self.hop_latency(slot);
        self.at(next + latency, event);
    }

    /// Runs `event` now if `time` is now, else schedules it: one hop latency ahead (a header
    /// entering a free link, the last bits of a message leaving its last fair link) in the
    /// calendar's first-in-first-out lane, later in its heap.
    #[inline]
    fn at(&mut self, time: Ticks, event: PEvent) {
        if time == self.now {
            self.dispatch(event);
        } else if time == self.now + self.latency {
            self.calendar.schedule_lane(HOP_LANE, time, event);
        } else if matches!(event, PEvent::Deliver { .. }) {
            self.calendar
                .schedule_lane_while_small(DELIVER_LANE, time, event);
        } else {
            self.calendar.schedule(time, event);
        }
    }

    /// A fair link's visit ended: its statistics, then the message moves on.
    fn left_link(&mut self, slot: u32, visit: u32) {
        let v = self.visits.items[visit as usize];
        self.visits.remove(visit);
        let now = self.now;
        if let Some(t) = &mut self.timeline {
            t.link(slot, now, false);
        }
        let l = &mut self.links[slot as usize];
        let delay = now - v.arrived;
        l.messages += 1;
        l.delay += delay;
        if self.report_links {
            self.record_link_delay(slot, delay);
        }
        let msg = v.msg;
        match self.prog.interconnect.switching {
            Switching::StoreAndForward => {
                self.msgs.items[msg as usize].at = v.to;
                let dst = self.msgs.items[msg as usize].dst_node;
                let event = if v.to == dst {
                    PEvent::Deliver { msg }
                } else {
                    self.hop_event(msg, v.to, dst)
                };
                let latency = self.hop_latency(slot);
                self.at(now + latency, event);
            }
            Switching::CutThrough => {
                let m = &mut self.msgs.items[msg as usize];
                m.serving -= 1;
                if m.header_done && m.serving == 0 {
                    let latency = self.hop_latency(slot);
                    self.at(now + latency, PEvent::Deliver { msg });
                }
            }
        }
    }

    /// Whether the traffic's window is open: until the end of the instant at which the first
    /// rank that sent traffic finished (so that what the other ranks do at that instant counts).
    fn in_window(&self) -> bool {
        self.now <= self.traffic_end
    }

    /// The message reached its destination's mailbox.
    fn deliver(&mut self, msg: u32) {
        let m = self.msgs.items[msg as usize];
        self.msgs.remove(msg);
        let delay = self.now - m.injected;
        self.message_count += 1;
        self.message_delay.add(self.clock.wide_span(delay));
        self.message_pct.record_wide(delay);
        if m.notify {
            self.part_done(m.src);
        }
        if m.traffic {
            if self.in_window() {
                self.traffic.delivered += m.bytes;
            }
            return;
        }
        let d = &mut self.ranks[m.dst as usize];
        if d.recv == Some((m.src, m.tag)) {
            d.recv = None;
            self.part_done(m.dst);
        } else {
            self.mailbox.put(m.dst, m.src, m.tag);
        }
    }

    /// One part of the rank's current operation is done.
    fn part_done(&mut self, r: u32) {
        let ri = r as usize;
        let rk = &mut self.ranks[ri];
        rk.parts -= 1;
        if rk.parts > 0 && rk.wait == Wait::Parts && rk.recv.is_some() {
            // its own send is delivered: what is left is waiting for the partner's message
            self.set_category(r, Category::Waiting);
            return;
        }
        if rk.parts > 0 || rk.wait != Wait::Parts {
            return;
        }
        if !rk.in_collective {
            rk.pc += 1;
            self.resume(r);
            return;
        }
        match (rk.combine.take(), &self.prog.code[rk.pc as usize]) {
            (Some(bytes), Instr::Collective(op)) => {
                let t = self.combine_time(r, op, bytes);
                self.compute(r, t, Wait::Combine);
            }
            _ => {
                self.ranks[ri].step += 1;
                self.resume(r);
            }
        }
    }

    fn combine_time(&mut self, r: u32, op: &CollectiveOp, bytes: f64) -> Ticks {
        let mut t = op.combine_per_byte * bytes;
        if let Some(d) = &op.combine {
            t += d.draw(&mut self.rng[r as usize]);
        }
        self.clock.wide_ticks(t)
    }

    /// Starts a collective: counts it (its messages' tag), checks its root and size, and
    /// synchronises an ideal barrier. True when the rank now waits (at an ideal barrier).
    fn start_collective(&mut self, r: u32, op: &CollectiveOp) -> Result<bool, ProgramFault> {
        if op.kind == Collective::Barrier && op.algorithm == Algorithm::Ideal {
            return Ok(self.ideal_barrier(r, op));
        }
        let (shape, tag) = self
            .ctl
            .start_collective(r, self.ranks[r as usize].pc, op)?;
        self.set_category(r, Category::Communication);
        let rk = &mut self.ranks[r as usize];
        rk.in_collective = true;
        rk.step = 0;
        rk.shape = shape;
        rk.tag = tag;
        Ok(false)
    }

    /// Issues the rank's collective steps from its current one: steps whose message was already
    /// buffered complete at once; true when the rank now waits, false when the collective is
    /// over. (Its root and size were checked when it started.)
    fn issue_step(&mut self, r: u32, op: &CollectiveOp) -> bool {
        let (_, _, members) = self.ctl.group_of(r, op);
        let Rank { shape, tag, .. } = self.ranks[r as usize];
        let global = |i: u32| members.map_or(i, |m| m[i as usize]);
        let combines = op.combine.is_some() || op.combine_per_byte > 0.0;
        loop {
            let Some(step) = op
                .kind
                .step(op.algorithm, &shape, self.ranks[r as usize].step)
            else {
                return false;
            };
            let Step {
                send,
                recv,
                combine,
            } = step;
            let combine = combine.filter(|_| combines);
            let recv = recv.map(global);
            let got = recv.is_some_and(|from| self.mailbox.take(r, from, tag));
            let open = recv.filter(|_| !got).map(|from| (from, tag));
            if send.is_none() && open.is_none() {
                // the step's message was already here
                match combine {
                    Some(b) => {
                        let t = self.combine_time(r, op, b);
                        self.compute(r, t, Wait::Combine);
                        return true;
                    }
                    None => {
                        self.ranks[r as usize].step += 1;
                        continue;
                    }
                }
            }
            // a step that only receives is waiting for the partner; one that sends is
            // communication until its message is delivered
            let category = if send.is_some() {
                Category::Communication
            } else {
                Category::Waiting
            };
            if self.ranks[r as usize].category != category {
                self.set_category(r, category);
            }
            let rk = &mut self.ranks[r as usize];
            rk.combine = combine;
            rk.recv = open;
            rk.parts = u8::from(send.is_some()) + u8::from(open.is_some());
            rk.wait = Wait::Parts;
            if let Some((to, b)) = send {
                self.send(r, global(to), b, tag, true, false);
            }
            return true;
        }
    }

    /// An ideal barrier: the rank waits until every member of its group has arrived; true when
    /// it waits.
    fn ideal_barrier(&mut self, r: u32, op: &CollectiveOp) -> bool {
        self.set_category(r, Category::Waiting);
        let Some(arrived) = self.ctl.arrive_at_barrier(r, op) else {
            self.ranks[r as usize].wait = Wait::Barrier;
            return true;
        };
        for w in arrived {
            if w != r {
                self.ranks[w as usize].pc += 1;
                self.resume(w);
            }
        }
        false
    }

    /// Where rank `r` is stuck, in words: `at program.op[2] waits to receive from rank 0
    /// with tag 0`, or `finished the program`.
    fn stuck_at(&self, r: u32) -> String {
        let rk = &self.ranks[r as usize];
        let path = self
            .prog
            .paths
            .get(rk.pc as usize)
            .map_or("?", String::as_str);
        let what = match (rk.wait, rk.recv) {
            (Wait::Done, _) => return "finished the program".to_owned(),
            (Wait::Parts, Some((src, tag))) if tag >= COLLECTIVE_TAG => {
                format!("waits in a collective for a message from rank {src}")
            }
            (Wait::Parts, Some((src, tag))) => {
                format!("waits to receive from rank {src} with tag {tag}")
            }
            (Wait::Parts, None) => "waits for its message to be delivered".to_owned(),
            (Wait::Barrier, _) => "waits at a barrier".to_owned(),
            (w, _) => format!("{w:?}"),
        };
        format!("at {path} {what}")
    }

    /// The collective rank `r` waits inside, if it waits inside one.
    fn waits_in_collective(&self, r: u32) -> Option<&'p CollectiveOp> {
        let rk = &self.ranks[r as usize];
        let inside = rk.wait == Wait::Barrier
            || matches!((rk.wait, rk.recv), (Wait::Parts, Some((_, tag))) if tag >= COLLECTIVE_TAG);
        match self.prog.code.get(rk.pc as usize) {
            Some(Instr::Collective(op)) if inside => Some(op),
            _ => None,
        }
    }

    /// Each collective some rank waits inside (the first [`DEADLOCK_COLLECTIVES`]): its
    /// members that wait in it, and where the others are (the ranks that never arrived, and
    /// what holds them, grouped by place, the first [`DEADLOCK_PLACES`] places named). Linear
    /// in the ranks, so a deadlock of a million ranks is reported at once.
    fn blocked_collectives(&self) -> Vec<String> {
        let mut seen: Vec<(u32, u32)> = Vec::new();
        let mut found = Vec::new();
        for r in 0..self.prog.ranks {
            if found.len() == DEADLOCK_COLLECTIVES {
                break;
            }
            let Some(op) = self.waits_in_collective(r) else {
                continue;
            };
            let pc = self.ranks[r as usize].pc;
            let (_, _, group) = self.ctl.group_of(r, op);
            let key = (pc, group.map_or(u32::MAX, |m| m[0]));
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let members: Vec<u32> =
                group.map_or_else(|| (0..self.prog.ranks).collect(), <[u32]>::to_vec);
            let (inside, away): (Vec<u32>, Vec<u32>) = members.iter().partition(|&&m| {
                self.ranks[m as usize].pc == pc && self.waits_in_collective(m).is_some()
            });
            // the others, grouped by where they are, in rank order of first appearance
            let mut places: Vec<(String, Vec<u32>)> = Vec::new();
            let mut index: FxHashMap<String, usize> = FxHashMap::default();
            for m in away {
                let at = self.stuck_at(m);
                match index.get(&at) {
                    Some(&k) => places[k].1.push(m),
                    None => {
                        index.insert(at.clone(), places.len());
                        places.push((at, vec![m]));
                    }
                }
            }
            let mut others: Vec<String> = places
                .iter()
                .take(DEADLOCK_PLACES)
                .map(|(at, ranks)| format!("{} ({at})", rank_list(ranks)))
                .collect();
            if places.len() > DEADLOCK_PLACES {
                let rest: usize = places[DEADLOCK_PLACES..].iter().map(|(_, v)| v.len()).sum();
                others.push(format!("{rest} more ranks elsewhere"));
            }
            let others = if others.is_empty() {
                String::new()
            } else {
                format!("; never there: {}", others.join("; "))
            };
            found.push(format!(
                "In the {} ({}) at {}, {} of its {} ranks wait ({}){others}",
                op.kind,
                op.algorithm,
                self.prog.paths.get(pc as usize).map_or("?", String::as_str),
                inside.len(),
                members.len(),
                rank_list(&inside),
            ));
        }
        found
    }

    fn deadlock(&self) -> ProgramFault {
        let waiting = (0..self.prog.ranks)
            .filter(|&r| self.ranks[r as usize].wait != Wait::Done)
            .take(8)
            .map(|r| format!("rank {r} {}", self.stuck_at(r)))
            .collect();
        ProgramFault::Deadlock {
            time: self.clock.wide_span(self.now),
            finished: self.finished,
            ranks: self.prog.ranks,
            collectives: self.blocked_collectives(),
            waiting,
        }
    }

    /// The links' figures over the run that ended at `makespan_ticks`: their summary, and each
    /// used link's own when the run reports per-link figures (else none, so that a run's end
    /// holds nothing per link beyond [`LinkRun`]). Both in the order of the links' ids.
    fn link_figures(&self, makespan_ticks: Ticks) -> (Vec<LinkFigures>, LinkSummary) {
        let mut summary = LinkSummary::default();
        let mut each = Vec::new();
        let mut add = |slot: usize, id: u64| {
            let l = &self.links[slot];
            let open = match self.fair.get(slot) {
                Some(f) if f.busy => makespan_ticks.saturating_sub(f.busy_since),
                _ => 0,
            };
            let busy = (l.busy_total + open).min(makespan_ticks);
            let figures = LinkFigures {
                // (only reported with the per-link figures: no string per link else)
                name: String::new(),
                utilisation: if makespan_ticks > 0 {
                    busy as f64 / makespan_ticks as f64
                } else {
                    0.0
                },
                messages: l.messages,
                delay: self.clock.wide_span(l.delay) / l.messages as f64,
                p99: f64::NAN,
            };
            summary.add(&figures);
            if self.report_links {
                let p99 = self
                    .link_percentiles
                    .get(&(slot as u32))
                    .map_or(f64::NAN, |p| p.quantiles([0.99])[0]);
                let name = self.prog.interconnect.topology.link_name(id);
                each.push(LinkFigures {
                    name,
                    p99,
                    ..figures
                });
            }
        };
        if let SlotMap::Direct = self.slots {
            // (slot = id: in order already)
            for (slot, l) in self.links.iter().enumerate() {
                if l.used {
                    add(slot, slot as u64);
                }
            }
        } else {
            let mut used: Vec<(u64, u32)> = (0..self.links.len() as u32)
                .filter(|&slot| self.links[slot as usize].used)
                .map(|slot| (self.link_id(slot), slot))
                .collect();
            used.sort_unstable();
            for (id, slot) in used {
                add(slot as usize, id);
            }
        }
        (each, summary)
    }

    fn figures(self) -> ProgramRun {
        let clock = self.clock;
        let makespan_ticks = self.ranks.iter().map(|r| r.finish).max().unwrap_or(0);
        let makespan = clock.wide_span(makespan_ticks);
        let np = self.prog.phases.len();
        let (links, link_summary) = self.link_figures(makespan_ticks);
        let [message_p99] = self.message_pct.quantiles([0.99]);
        ProgramRun {
            makespan,
            spent: self
                .ranks
                .iter()
                .map(|r| r.spent.map(|t| clock.wide_span(t)))
                .collect(),
            finish: self
                .ranks
                .iter()
                .map(|r| clock.wide_span(r.finish))
                .collect(),
            phases: (0..np)
                .map(|ph| {
                    (0..self.prog.ranks)
                        .map(|r| clock.wide_span(self.phases.spent(r, ph)))
                        .collect()
                })
                .collect(),
            links,
            link_summary,
            messages: self.message_count,
            message_delay: self.message_delay.mean(),
            message_p99,
            unreceived: self.mailbox.total() + self.msgs.live() as u64,
            traffic: Traffic {
                until: if self.traffic_end == Ticks::MAX {
                    0.0
                } else {
                    clock.wide_span(self.traffic_end)
                },
                ..self.traffic
            },
            events: self.events,
        }
    }
}

/// Most collectives a deadlock report describes.
const DEADLOCK_COLLECTIVES: usize = 4;

/// Most places a deadlock report names for the ranks missing from one collective.
const DEADLOCK_PLACES: usize = 6;

/// Most runs of ranks [`rank_list`] writes out.
const RANK_RUNS: usize = 16;

/// Ranks in increasing order, in words with runs shortened: `rank 5`, `ranks 0-4, 7` (past
/// [`RANK_RUNS`] runs, the count of the rest).
fn rank_list(ranks: &[u32]) -> String {
    let mut runs: Vec<String> = Vec::new();
    let mut k = 0;
    while k < ranks.len() {
        let mut end = k;
        while end + 1 < ranks.len() && ranks[end + 1] == ranks[end] + 1 {
            end += 1;
        }
        if runs.len() == RANK_RUNS {
            runs.push(format!("and {} more", ranks.len() - k));
            break;
        }
        runs.push(if end == k {
            ranks[k].to_string()
        } else {
            format!("{}-{}", ranks[k], ranks[end])
        });
        k = end + 1;
    }
    let noun = if ranks.len() == 1 { "rank" } else { "ranks" };
    format!("{noun} {}", runs.join(", "))
}
