//! The continuous-time Markov chain of an exponential network: its states, coded as flat
//! vectors, and the events out of each state with what they count (departures, losses,
//! abandonments, completed observations), following the engine's rules move by move.

use std::cell::RefCell;

use crate::analytic::ctmc::MarkovModel;
use crate::analytic::mam::Map;
use crate::dist::Dist;
use crate::network::{
    Batch, ClassId, ClassKind, Discipline, Network, Preemption, Routing, Rule, StationId,
    StationKind, Target, WhenFull, rate_multiple,
};

/// The flag of a waiting FCFS entry whose job was preempted during its service (it resumes,
/// does not abandon, and its wait already ended).
const PREEMPTED: u16 = 0x8000;

/// A state of the chain: the [`Work`] of every station and group, coded flat.
pub(super) type State = Box<[u16]>;

/// What a station does in the chain.
#[derive(Clone, Debug)]
enum Kind {
    /// Infinite server: every job present is served.
    Delay,
    /// Processor sharing on one server.
    Ps,
    /// FCFS with `servers` servers and `levels` priority levels.
    Fcfs {
        servers: u32,
        levels: usize,
        preemptive: bool,
    },
    /// Arrivals of `class` from a (batch) Markovian arrival process: `d0` its phase changes
    /// without an arrival, `batches` the rates of those with an arrival, with its size (one
    /// phase for Poisson arrivals; phase-type renewal arrivals as the MAP they are).
    Source {
        class: usize,
        d0: Vec<Vec<f64>>,
        batches: Vec<(u32, Vec<Vec<f64>>)>,
    },
    /// Jobs that reach it leave.
    Sink,
}

/// The static description of one station.
#[derive(Clone, Debug)]
struct Node {
    kind: Kind,
    /// Service rate per class (0 where the class has no service here).
    mu: Vec<f64>,
    /// The most jobs present, and what an arrival finding it full does.
    capacity: Option<(u32, WhenFull)>,
    /// Abandonment rate of each waiting job (0: no patience).
    patience: f64,
    /// The speed's multiples by jobs present.
    rates: Option<Vec<f64>>,
}

/// The decoded state: per station, the jobs in service (or present, for delay and PS) by
/// class and the waiting lines by level; per blocking station, the jobs blocked on it in the
/// order they were blocked; per routing group, its round-robin pointer.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Work {
    /// `serving[s][c]`: class-`c` jobs in service at `s` (all present, at a delay or PS).
    pub serving: Vec<Vec<u16>>,
    /// `waiting[s][level]`: the classes waiting at FCFS station `s`, in order, flagged
    /// [`PREEMPTED`] for a job preempted during its service.
    pub waiting: Vec<Vec<Vec<u16>>>,
    /// `blocked[j]`: the jobs blocked on full station `j`, first blocked first, as (station
    /// they finished at, their class there, their class at `j`).
    pub blocked: Vec<Vec<(u16, u16, u16)>>,
    /// Round-robin pointer of each group.
    pub pointer: Vec<u16>,
    /// `phase[s]`: the phase of the arrival process of source `s` (0 elsewhere, and at a
    /// Poisson source).
    pub phase: Vec<u16>,
}

/// What one event counts, for the rates of the events of the long run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Mark {
    /// A job of the class (its class there) left the station after service.
    Depart(usize, usize),
    /// A job of the class found the station full and was lost.
    Lost(usize, usize),
    /// A waiting job of the class left the station unserved.
    Abandon(usize, usize),
    /// The class completed an observation (an open job left, a closed job reached its
    /// reference station).
    Complete(usize),
    /// Jobs of the class arrived from its sources.
    Arrive(usize, u32),
}

/// One target of a rule: where, its probability, and the round-robin pointer it sets (group,
/// next member).
type Branch = (Target, f64, Option<(usize, u16)>);

/// A state being changed by one event, with what the event counted so far.
#[derive(Clone, Debug)]
struct Step {
    w: Work,
    marks: Vec<Mark>,
}

/// The chain of a network; built by [`Chain::new`], which refuses what it does not model.
#[derive(Debug)]
pub(super) struct Chain<'n> {
    net: &'n Network,
    nodes: Vec<Node>,
    /// The level of each class at each FCFS station with priorities (0 elsewhere).
    level_of: Vec<Vec<usize>>,
    /// The truncation: arrivals of an open class stop while its group has this many jobs
    /// present (per group; `None`: not truncated). The groups are the open classes, or, when
    /// routes switch classes, one group of all open jobs.
    pub open_limit: Option<Vec<u32>>,
    /// Whether the open classes are truncated together (routes switch classes).
    pub pooled: bool,
    /// Whether any open class is in the network.
    open_classes: Vec<bool>,
    /// The first deadlocked state met, described.
    deadlock: RefCell<Option<String>>,
}

impl<'n> Chain<'n> {
    /// The chain of `net`, or why it cannot be built: a service or patience time that is not
    /// exponential, inter-arrival times neither phase type nor a MAP, a fork,
    /// a geometric batch, preemption on several servers where a level has several classes, a
    /// load-dependent speed on several servers, a PS station or a source that would hold a
    /// blocked job.
    pub fn new(net: &'n Network) -> Result<Chain<'n>, String> {
        if let Some(reason) = not_markovian(net) {
            return Err(reason);
        }
        let nc = net.classes.len();
        let mut nodes = Vec::new();
        let mut level_of = Vec::new();
        for st in &net.stations {
            let f = &st.features;
            let mu: Vec<f64> = match st.kind.service() {
                Some(table) => table
                    .iter()
                    .map(|d| d.as_ref().map_or(0.0, |d| 1.0 / d.mean()))
                    .collect(),
                None => vec![0.0; nc],
            };
            let mut levels = vec![0; nc];
            let kind = match &st.kind {
                StationKind::Delay { .. } => Kind::Delay,
                StationKind::Queue {
                    discipline: Discipline::Ps,
                    ..
                } => Kind::Ps,
                StationKind::Queue {
                    discipline: Discipline::Fcfs,
                    servers,
                    ..
                } => {
                    let mut count = 1;
                    if f.priority.is_some() {
                        let mut p: Vec<i32> = net.classes.iter().map(|c| c.priority).collect();
                        p.sort_unstable();
                        p.dedup();
                        count = p.len();
                        for (c, class) in net.classes.iter().enumerate() {
                            levels[c] = p.binary_search(&class.priority).unwrap_or(0);
                        }
                    }
                    let preemptive = f.priority == Some(Preemption::PreemptiveResume);
                    if preemptive && *servers > 1 {
                        let visiting: Vec<usize> = (0..nc).filter(|&c| mu[c] > 0.0).collect();
                        if let Some(&(a, b)) = visiting
                            .iter()
                            .flat_map(|&a| visiting.iter().map(move |&b| (a, b)))
                            .find(|&(a, b)| a < b && levels[a] == levels[b])
                            .as_ref()
                        {
                            return Err(format!(
                                "station {:?} preempts on {servers} servers and classes {:?} and {:?} share a priority level: the order of their preempted jobs is not modelled",
                                st.name, net.classes[a].name, net.classes[b].name
                            ));
                        }
                    }
                    if f.rate_by_jobs.is_some() && *servers > 1 {
                        return Err(format!(
                            "station {:?} has a load-dependent speed on {servers} servers, which the engine does not run",
                            st.name
                        ));
                    }
                    Kind::Fcfs {
                        servers: *servers,
                        levels: count,
                        preemptive,
                    }
                }
                StationKind::Source {
                    class,
                    interarrival,
                } => {
                    let process = source_process(interarrival).ok_or_else(|| {
                        format!(
                            "source {:?} has inter-arrival times that are neither phase type nor a Markovian arrival process",
                            st.name
                        )
                    })?;
                    let batches = match f.batch {
                        None => vec![(1, process.d1().to_vec())],
                        Some(Batch::Fixed(k)) => vec![(k, process.d1().to_vec())],
                        Some(Batch::Markovian { .. }) => interarrival
                            .arrival_process()
                            .map(|m| (1..).zip(m.sizes().iter().cloned()).collect())
                            .ok_or_else(|| {
                                format!(
                                    "source {:?} has batch sizes set by an arrival process it does not have",
                                    st.name
                                )
                            })?,
                        Some(Batch::Geometric { .. }) => {
                            return Err(format!(
                                "source {:?} has geometric batches, of unbounded size",
                                st.name
                            ));
                        }
                    };
                    Kind::Source {
                        class: class.index(),
                        d0: process.d0().to_vec(),
                        batches,
                    }
                }
                StationKind::Sink => Kind::Sink,
                StationKind::Fork { .. } | StationKind::Join { .. } => {
                    return Err(format!(
                        "station {:?} is a {}: forks and joins are not modelled",
                        st.name,
                        st.kind.label()
                    ));
                }
            };
            level_of.push(levels);
            nodes.push(Node {
                kind,
                mu,
                capacity: f.capacity.map(|c| (c.jobs, c.when_full)),
                patience: f.patience.as_ref().map_or(0.0, |d| 1.0 / d.mean()),
                rates: f.rate_by_jobs.clone(),
            });
        }
        let chain = Chain {
            net,
            nodes,
            level_of,
            open_limit: None,
            pooled: switches_class(net),
            open_classes: net
                .classes
                .iter()
                .map(|c| c.kind == ClassKind::Open)
                .collect(),
            deadlock: RefCell::new(None),
        };
        chain.check_blocking()?;
        Ok(chain)
    }

    /// Refuses a blocking station fed by a source or a PS station (neither holds a blocked
    /// job in a server).
    fn check_blocking(&self) -> Result<(), String> {
        let net = self.net;
        for (s, node) in self.nodes.iter().enumerate() {
            if !matches!(node.kind, Kind::Source { .. } | Kind::Ps) {
                continue;
            }
            for c in 0..net.classes.len() {
                let rule = net.routing.rule(ClassId(c as u32), StationId(s as u32));
                for (t, _) in Routing::branch_probabilities(rule, &net.groups) {
                    if let Target::Station(to, _) = t
                        && self.blocks(to.index())
                    {
                        return Err(format!(
                            "{} station {:?} feeds station {:?}, which blocks when full: a job cannot be held there",
                            net.stations[s].kind.label(),
                            net.stations[s].name,
                            net.stations[to.index()].name
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether some open class's stations have no capacity, so that the chain is infinite
    /// without truncation.
    pub fn unbounded(&self) -> bool {
        let net = self.net;
        (0..net.classes.len())
            .filter(|&c| self.open_classes[c])
            .any(|c| {
                self.nodes
                    .iter()
                    .any(|n| n.mu[c] > 0.0 && n.capacity.is_none())
            })
    }

    /// The number of stations.
    pub fn stations(&self) -> usize {
        self.nodes.len()
    }

    /// The network.
    pub fn net(&self) -> &'n Network {
        self.net
    }

    /// The number of classes.
    pub fn classes(&self) -> usize {
        self.net.classes.len()
    }

    /// Whether station `s` serves jobs (a delay or a queue).
    pub fn serves(&self, s: usize) -> bool {
        matches!(
            self.nodes[s].kind,
            Kind::Delay | Kind::Ps | Kind::Fcfs { .. }
        )
    }

    /// Whether station `s` is an FCFS queue, and its servers.
    pub fn fcfs_servers(&self, s: usize) -> Option<u32> {
        match self.nodes[s].kind {
            Kind::Fcfs { servers, .. } => Some(servers),
            _ => None,
        }
    }

    /// Whether station `s` blocks the jobs routed to it when full.
    fn blocks(&self, s: usize) -> bool {
        matches!(self.nodes[s].capacity, Some((_, WhenFull::Block)))
    }

    /// The empty state, with the closed populations entered at their reference stations.
    fn empty(&self) -> Work {
        let nc = self.net.classes.len();
        Work {
            serving: self
                .nodes
                .iter()
                .map(|n| match n.kind {
                    Kind::Delay | Kind::Ps | Kind::Fcfs { .. } => vec![0; nc],
                    _ => Vec::new(),
                })
                .collect(),
            waiting: self
                .nodes
                .iter()
                .map(|n| match n.kind {
                    Kind::Fcfs { levels, .. } => vec![Vec::new(); levels],
                    _ => Vec::new(),
                })
                .collect(),
            blocked: vec![Vec::new(); self.nodes.len()],
            pointer: vec![0; self.net.groups.len()],
            phase: vec![0; self.nodes.len()],
        }
    }

    /// The phases of the arrival process of station `s` (0 for a station that is not a
    /// source): a source of one phase keeps none in the state.
    fn phases(&self, s: usize) -> usize {
        match &self.nodes[s].kind {
            Kind::Source { d0, .. } => d0.len(),
            _ => 0,
        }
    }

    /// Codes a state flat: per service station the counts by class, then each FCFS level's
    /// length and entries; per blocking station the length and triples of its blocked list;
    /// per source of several phases its phase; the group pointers.
    pub fn encode(&self, w: &Work) -> State {
        let mut out = Vec::with_capacity(32);
        for s in 0..self.nodes.len() {
            out.extend_from_slice(&w.serving[s]);
            for level in &w.waiting[s] {
                out.push(level.len() as u16);
                out.extend_from_slice(level);
            }
            if self.blocks(s) {
                out.push(w.blocked[s].len() as u16);
                for &(a, b, c) in &w.blocked[s] {
                    out.extend_from_slice(&[a, b, c]);
                }
            }
            if self.phases(s) > 1 {
                out.push(w.phase[s]);
            }
        }
        out.extend_from_slice(&w.pointer);
        out.into_boxed_slice()
    }

    /// The state coded by [`Chain::encode`].
    pub fn decode(&self, state: &[u16]) -> Work {
        let mut w = self.empty();
        let mut at = 0;
        let mut next = || {
            at += 1;
            state[at - 1]
        };
        for s in 0..self.nodes.len() {
            for x in w.serving[s].iter_mut() {
                *x = next();
            }
            for level in w.waiting[s].iter_mut() {
                let len = next();
                level.extend((0..len).map(|_| next()));
            }
            if self.blocks(s) {
                let len = next();
                for _ in 0..len {
                    let (a, b, c) = (next(), next(), next());
                    w.blocked[s].push((a, b, c));
                }
            }
            if self.phases(s) > 1 {
                w.phase[s] = next();
            }
        }
        for p in w.pointer.iter_mut() {
            *p = next();
        }
        w
    }

    /// Jobs present at station `s`: served, waiting, and finished but blocked.
    pub fn present(&self, w: &Work, s: usize) -> u32 {
        let serving: u32 = w.serving[s].iter().map(|&n| u32::from(n)).sum();
        let waiting: usize = w.waiting[s].iter().map(Vec::len).sum();
        serving + waiting as u32 + self.blocked_at(w, s)
    }

    /// Jobs that finished at station `s` and are blocked on a full station.
    pub fn blocked_at(&self, w: &Work, s: usize) -> u32 {
        w.blocked
            .iter()
            .flatten()
            .filter(|b| usize::from(b.0) == s)
            .count() as u32
    }

    /// Class-`c` jobs present at station `s` (waiting ones split out as never served).
    pub fn present_class(&self, w: &Work, s: usize, c: usize) -> (u32, u32) {
        let waiting = w.waiting[s].iter().flatten();
        let fresh = waiting.clone().filter(|&&e| usize::from(e) == c).count() as u32;
        let resumed = waiting.filter(|&&e| e == c as u16 | PREEMPTED).count() as u32;
        let blocked = w
            .blocked
            .iter()
            .flatten()
            .filter(|b| usize::from(b.0) == s && usize::from(b.1) == c)
            .count() as u32;
        let serving = w.serving[s].get(c).map_or(0, |&n| u32::from(n));
        (serving + resumed + blocked + fresh, fresh)
    }

    /// Busy servers at station `s`, as the simulator counts them: serving a job (a server
    /// holding a job blocked downstream is not busy); for PS 1 when a job is present.
    pub fn busy(&self, w: &Work, s: usize) -> f64 {
        match self.nodes[s].kind {
            Kind::Ps => f64::from(u8::from(self.present(w, s) > 0)),
            _ => {
                let serving: u32 = w.serving[s].iter().map(|&n| u32::from(n)).sum();
                f64::from(serving)
            }
        }
    }

    /// The truncation group of open class `c`.
    pub fn group(&self, c: usize) -> usize {
        if self.pooled { 0 } else { c }
    }

    /// The number of truncation groups.
    pub fn groups(&self) -> usize {
        if self.pooled {
            1
        } else {
            self.net.classes.len()
        }
    }

    /// Open jobs in the network, per truncation group.
    pub fn open_jobs(&self, w: &Work) -> Vec<u32> {
        let mut n = vec![0; self.groups()];
        let mut count = |c: usize, k: u32| {
            if self.open_classes[c] {
                n[self.group(c)] += k;
            }
        };
        for s in 0..self.nodes.len() {
            for (c, &k) in w.serving[s].iter().enumerate() {
                count(c, u32::from(k));
            }
            for &e in w.waiting[s].iter().flatten() {
                count(usize::from(e & !PREEMPTED), 1);
            }
            for b in &w.blocked[s] {
                count(usize::from(b.1), 1);
            }
        }
        n
    }

    /// Every event out of state `w` with its rate and what it counts (events that leave the
    /// state as it is included), given to `emit`.
    pub fn events(&self, w: &Work, emit: &mut dyn FnMut(Work, f64, &[Mark])) {
        let net = self.net;
        for (s, node) in self.nodes.iter().enumerate() {
            match node.kind {
                Kind::Source {
                    class,
                    ref d0,
                    ref batches,
                } => {
                    let full = self.open_limit.as_ref().is_some_and(|limit| {
                        let g = self.group(class);
                        self.open_jobs(w)[g] >= limit[g]
                    });
                    let i = usize::from(w.phase[s]);
                    for (j, &rate) in d0[i].iter().enumerate() {
                        if j != i && rate > 0.0 {
                            let mut x = w.clone();
                            x.phase[s] = j as u16;
                            emit(x, rate, &[]);
                        }
                    }
                    for (batch, d) in batches {
                        for (j, &rate) in d[i].iter().enumerate() {
                            if rate <= 0.0 {
                                continue;
                            }
                            let mut start = w.clone();
                            start.phase[s] = j as u16;
                            if full {
                                // truncated: the arrival is not admitted, the phase still moves
                                if j != i {
                                    emit(start, rate, &[]);
                                }
                                continue;
                            }
                            for (step, p) in self.arrive(start, s, class, *batch) {
                                emit(step.w, rate * p, &step.marks);
                            }
                        }
                    }
                }
                Kind::Delay | Kind::Ps | Kind::Fcfs { .. } => {
                    let n = self.present(w, s);
                    let serving: u32 = w.serving[s].iter().map(|&k| u32::from(k)).sum();
                    let speed = node
                        .rates
                        .as_deref()
                        .map_or(1.0, |r| rate_multiple(r, n as usize));
                    for c in 0..net.classes.len() {
                        let k = w.serving[s][c];
                        if k == 0 {
                            continue;
                        }
                        let rate = match node.kind {
                            Kind::Ps => f64::from(k) / f64::from(serving) * node.mu[c] * speed,
                            _ => f64::from(k) * node.mu[c] * speed,
                        };
                        for (step, p) in self.complete(w, s, c) {
                            emit(step.w, rate * p, &step.marks);
                        }
                    }
                    if node.patience > 0.0 {
                        for (l, level) in w.waiting[s].iter().enumerate() {
                            // removing any entry of a run of equal ones gives one state
                            let mut i = 0;
                            while i < level.len() {
                                let e = level[i];
                                let run = level[i..].iter().take_while(|&&x| x == e).count();
                                if e & PREEMPTED == 0 {
                                    let mut step = Step {
                                        w: w.clone(),
                                        marks: vec![Mark::Abandon(s, usize::from(e))],
                                    };
                                    step.w.waiting[s][l].remove(i);
                                    self.made_room(&mut step, s);
                                    emit(step.w, node.patience * run as f64, &step.marks);
                                }
                                i += run;
                            }
                        }
                    }
                }
                Kind::Sink => {}
            }
        }
    }

    /// A batch of `batch` class-`c` jobs leaves source `s` in state `w`: each outcome of their
    /// routes, with its probability.
    fn arrive(&self, w: Work, s: usize, c: usize, batch: u32) -> Vec<(Step, f64)> {
        let mut steps = vec![(
            Step {
                w,
                marks: vec![Mark::Arrive(c, batch)],
            },
            1.0,
        )];
        for _ in 0..batch {
            steps = steps
                .into_iter()
                .flat_map(|(step, p)| {
                    self.route(step, s, c)
                        .into_iter()
                        .map(move |(x, q)| (x, p * q))
                })
                .collect();
        }
        steps
    }

    /// The service of a class-`c` job at station `s` ends: each outcome of its route.
    fn complete(&self, w: &Work, s: usize, c: usize) -> Vec<(Step, f64)> {
        let mut out = Vec::new();
        for (target, p, pointer) in self.targets(w, s, c, true) {
            let mut step = Step {
                w: w.clone(),
                marks: Vec::new(),
            };
            if let Some((g, next)) = pointer {
                step.w.pointer[g] = next;
            }
            step.w.serving[s][c] -= 1;
            match target {
                Target::Station(to, to_class)
                    if self.blocks(to.index())
                        && self.present(&step.w, to.index()) + u32::from(to.index() == s)
                            >= self.capacity(to.index()) =>
                {
                    // blocked after service: it keeps its server and its place here
                    step.w.blocked[to.index()].push((s as u16, c as u16, to_class.0 as u16));
                }
                _ => {
                    step.marks.push(Mark::Depart(s, c));
                    self.free_server(&mut step.w, s);
                    self.send(&mut step, c, target);
                    self.made_room(&mut step, s);
                }
            }
            out.push((step, p));
        }
        out
    }

    /// The capacity of station `s` (`u32::MAX` without one).
    fn capacity(&self, s: usize) -> u32 {
        self.nodes[s].capacity.map_or(u32::MAX, |c| c.0)
    }

    /// A job leaves source `s` as class `c`: each outcome of its route.
    fn route(&self, step: Step, s: usize, c: usize) -> Vec<(Step, f64)> {
        self.targets(&step.w, s, c, false)
            .into_iter()
            .map(|(target, p, pointer)| {
                let mut x = step.clone();
                if let Some((g, next)) = pointer {
                    x.w.pointer[g] = next;
                }
                self.send(&mut x, c, target);
                (x, p)
            })
            .collect()
    }

    /// The targets of class `c`'s rule at station `s` in state `w`, with their probabilities
    /// and the round-robin pointer they set. `leaving`: the job is still counted at `s` and
    /// must not be in the shortest-queue comparison (the engine counts it out first).
    fn targets(&self, w: &Work, s: usize, c: usize, leaving: bool) -> Vec<Branch> {
        let net = self.net;
        let rule = net.routing.rule(ClassId(c as u32), StationId(s as u32));
        match rule {
            Rule::RoundRobin { group, class } => {
                let g = *group as usize;
                let members = &net.groups[g];
                let at = usize::from(w.pointer[g]);
                let next = ((at + 1) % members.len()) as u16;
                vec![(Target::Station(members[at], *class), 1.0, Some((g, next)))]
            }
            Rule::ShortestQueue { group, class } => {
                let members = &net.groups[*group as usize];
                let count = |m: StationId| {
                    let n = self.present(w, m.index());
                    n - u32::from(leaving && m.index() == s).min(n)
                };
                let best = members
                    .iter()
                    .enumerate()
                    .min_by_key(|&(pos, &m)| (count(m), pos))
                    .map(|(_, &m)| m)
                    .expect("groups are not empty");
                vec![(Target::Station(best, *class), 1.0, None)]
            }
            _ => Routing::branch_probabilities(rule, &net.groups)
                .into_iter()
                .filter(|&(_, p)| p > 0.0)
                .map(|(t, p)| (t, p, None))
                .collect(),
        }
    }

    /// A class-`c` job that left a station goes to `target` (out, or into a station as its
    /// class there), counting a completed observation where it makes one.
    fn send(&self, step: &mut Step, c: usize, target: Target) {
        let (to, to_class) = match target {
            Target::Exit => {
                step.marks.push(Mark::Complete(c));
                return;
            }
            Target::Station(to, k) => (to.index(), k.index()),
        };
        if let ClassKind::Closed { reference, .. } = self.net.classes[to_class].kind
            && reference.index() == to
        {
            step.marks.push(Mark::Complete(to_class));
        }
        self.enter(step, to, to_class);
    }

    /// A class-`c` job arrives at station `s`: it leaves at a sink, is lost at a full station
    /// that loses, is served at once, takes a less urgent job's server, or waits.
    fn enter(&self, step: &mut Step, s: usize, c: usize) {
        let node = &self.nodes[s];
        if let Kind::Sink = node.kind {
            step.marks.push(Mark::Complete(c));
            return;
        }
        if let Some((k, _)) = node.capacity
            && self.present(&step.w, s) >= k
        {
            // a blocking station is full here only for a job no server holds (refused at
            // construction): both lose it
            step.marks.push(Mark::Lost(s, c));
            return;
        }
        let w = &mut step.w;
        match node.kind {
            Kind::Fcfs {
                servers,
                preemptive,
                ..
            } => {
                let busy: u32 =
                    w.serving[s].iter().map(|&n| u32::from(n)).sum::<u32>() + self.blocked_at(w, s);
                let level = self.level_of[s][c];
                if busy < servers {
                    w.serving[s][c] += 1;
                } else if let Some(victim) = preemptive.then(|| self.victim(w, s, level)).flatten()
                {
                    w.serving[s][victim] -= 1;
                    w.waiting[s][self.level_of[s][victim]].insert(0, victim as u16 | PREEMPTED);
                    w.serving[s][c] += 1;
                } else {
                    w.waiting[s][level].push(c as u16);
                }
            }
            _ => w.serving[s][c] += 1,
        }
    }

    /// The class of the job a class of `level` preempts at `s`: one of the least urgent
    /// level in service, if it is below `level` (the classes of that level are one class on
    /// several servers, or the one job of one server).
    fn victim(&self, w: &Work, s: usize, level: usize) -> Option<usize> {
        (0..w.serving[s].len())
            .filter(|&c| w.serving[s][c] > 0 && self.level_of[s][c] > level)
            .max_by_key(|&c| self.level_of[s][c])
    }

    /// A server of FCFS station `s` was freed: the head of the most urgent waiting level
    /// starts (or resumes).
    fn free_server(&self, w: &mut Work, s: usize) {
        let Kind::Fcfs { servers, .. } = self.nodes[s].kind else {
            return;
        };
        let busy: u32 =
            w.serving[s].iter().map(|&n| u32::from(n)).sum::<u32>() + self.blocked_at(w, s);
        if busy >= servers {
            return;
        }
        if let Some(level) = w.waiting[s].iter_mut().find(|l| !l.is_empty()) {
            let e = level.remove(0);
            w.serving[s][usize::from(e & !PREEMPTED)] += 1;
        }
    }

    /// Station `s` lost a job: while it has room, the jobs blocked on it enter, first blocked
    /// first, each freeing its server where it was held (which may let more jobs in there).
    fn made_room(&self, step: &mut Step, s: usize) {
        if !self.blocks(s) {
            return;
        }
        while self.present(&step.w, s) < self.capacity(s) && !step.w.blocked[s].is_empty() {
            let (from, c, to_class) = step.w.blocked[s].remove(0);
            let (from, c) = (usize::from(from), usize::from(c));
            step.marks.push(Mark::Depart(from, c));
            self.free_server(&mut step.w, from);
            self.send(
                step,
                c,
                Target::Station(StationId(s as u32), ClassId(u32::from(to_class))),
            );
            self.made_room(step, from);
        }
    }

    /// The stations of a blocking deadlock in `w`, if there is one: stations where nothing is
    /// served and every server (every job, at a delay) holds a job blocked on a station of the
    /// set, and no waiting job can abandon.
    fn deadlocked(&self, w: &Work) -> Vec<usize> {
        let ns = self.nodes.len();
        let mut dead: Vec<bool> = (0..ns)
            .map(|s| {
                let held = self.blocked_at(w, s);
                if held == 0 || w.serving[s].iter().any(|&n| n > 0) {
                    return false;
                }
                let node = &self.nodes[s];
                let impatient = node.patience > 0.0
                    && w.waiting[s].iter().flatten().any(|&e| e & PREEMPTED == 0);
                match node.kind {
                    Kind::Fcfs { servers, .. } => held >= servers && !impatient,
                    Kind::Delay => true,
                    _ => false,
                }
            })
            .collect();
        loop {
            let mut changed = false;
            for s in 0..ns {
                if dead[s]
                    && w.blocked
                        .iter()
                        .enumerate()
                        .any(|(j, list)| list.iter().any(|b| usize::from(b.0) == s) && !dead[j])
                {
                    dead[s] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        (0..ns).filter(|&s| dead[s]).collect()
    }

    /// The first deadlock met while enumerating, described.
    pub fn deadlock(&self) -> Option<String> {
        self.deadlock.borrow().clone()
    }
}

impl MarkovModel for Chain<'_> {
    type State = State;

    fn initial(&self) -> State {
        let mut step = Step {
            w: self.empty(),
            marks: Vec::new(),
        };
        for (c, class) in self.net.classes.iter().enumerate() {
            if let ClassKind::Closed { .. } = class.kind {
                for (station, jobs) in crate::network::initial_places(self.net, c) {
                    for _ in 0..jobs {
                        self.enter(&mut step, station as usize, c);
                    }
                }
            }
        }
        self.encode(&step.w)
    }

    fn transitions(&self, state: &State, out: &mut Vec<(State, f64)>) {
        let w = self.decode(state);
        let dead = self.deadlocked(&w);
        if !dead.is_empty() {
            let mut first = self.deadlock.borrow_mut();
            if first.is_none() {
                let names: Vec<String> = dead
                    .iter()
                    .map(|&s| format!("{:?}", self.net.stations[s].name))
                    .collect();
                *first = Some(format!(
                    "blocking deadlock: stations {} hold only jobs blocked on each other's full buffers (a reachable state; nothing there can move again)",
                    names.join(", ")
                ));
            }
            return;
        }
        self.events(&w, &mut |target, rate, _| {
            out.push((self.encode(&target), rate));
        });
    }
}

/// Whether some route of `net` changes a job's class.
pub(super) fn switches_class(net: &Network) -> bool {
    (0..net.classes.len()).any(|c| {
        (0..net.stations.len()).any(|s| {
            let rule = net.routing.rule(ClassId(c as u32), StationId(s as u32));
            Routing::branch_probabilities(rule, &net.groups)
                .iter()
                .any(|(t, _)| matches!(t, Target::Station(_, k) if k.index() != c))
        })
    })
}

/// The arrival process of a source whose inter-arrival times are `d`, as a MAP: Poisson, a
/// phase-type renewal process, or the MAP written; `None` for other laws.
fn source_process(d: &Dist) -> Option<Map> {
    if let Some(m) = d.arrival_process() {
        return Some(m.map().clone());
    }
    if d.is_exponential() {
        return Map::poisson(1.0 / d.mean()).ok();
    }
    Map::renewal(&super::super::matrix_analytic::phase_type(d)?).ok()
}

/// The first time of `net` the chain cannot hold, named with its station (and SCV for a
/// time that is not exponential): inter-arrival times neither phase type nor a MAP, service
/// and patience times not exponential.
pub(super) fn not_markovian(net: &Network) -> Option<String> {
    for st in &net.stations {
        let what = match &st.kind {
            StationKind::Source { interarrival, .. } => {
                if source_process(interarrival).is_none() {
                    return Some(format!(
                        "source {:?} has inter-arrival SCV {}, neither phase type nor a Markovian arrival process",
                        st.name,
                        crate::predict::short(interarrival.scv())
                    ));
                }
                None
            }
            _ => st
                .kind
                .service()
                .and_then(|t| t.iter().flatten().find(|d| !d.is_exponential()))
                .map(|d| ("service", d.scv())),
        };
        let what = what.or_else(|| {
            st.features
                .patience
                .as_ref()
                .filter(|d| !d.is_exponential())
                .map(|d| ("patience", d.scv()))
        });
        if let Some((time, scv)) = what {
            return Some(format!(
                "station {:?} has {time} SCV {}, not exponential",
                st.name,
                crate::predict::short(scv)
            ));
        }
    }
    None
}
