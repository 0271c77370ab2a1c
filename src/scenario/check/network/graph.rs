//! The routing graph as a whole.
//!
//! Every class is followed from where it enters (its sources, or its reference station) through
//! every route with positive probability, carrying the stack of forks whose tasks it is (its
//! *context*). A state is (class, station, context), plus whether it is a parent moving on from
//! a join. From this graph:
//!
//! - every station must be visited, every visited station must serve the class and say where it
//!   goes next;
//! - outside any fork, an open job must be able to leave the network from every state it can
//!   reach, and a closed job must be able to complete a cycle (reach the reference station of its
//!   class); otherwise it would circulate forever;
//! - a task must reach the join of its own fork from every state it can reach, without leaving
//!   the network, reaching another fork's join, or re-entering its own fork; and nothing reaches
//!   a join except as a task of its fork.
//!
//! State-dependent routing counts as able to reach each of its stations, except that join the
//! shortest queue never picks a station listed after position `P - 1` in a network of `P`
//! jobs in all (closed classes only): picking it needs a job at every station listed before it.

use std::collections::{HashMap, HashSet, VecDeque};

use super::Checker;
use crate::network::{ClassId, ClassKind, Network, Routing, Rule, StationId, StationKind, Target};
use crate::scenario::raw::RawScenario;

/// Most states the analysis explores before it gives up on a routing as too large to check.
const MAX_STATES: usize = 1_000_000;

/// Checks that every join names a fork, that each fork has exactly one join, and that a fork's
/// tasks go to stations that serve them. Returns false when it found a problem (the routing
/// analysis needs the pairing).
pub(super) fn check_forks(ck: &mut Checker, raw: &RawScenario, net: &Network) -> bool {
    let before = ck.found.len();
    let mut joins_of: HashMap<StationId, usize> = HashMap::new();
    for (i, st) in net.stations.iter().enumerate() {
        let e = &raw.stations[i];
        match &st.kind {
            StationKind::Join { fork } if fork.0 != u32::MAX => {
                if !matches!(
                    net.stations.get(fork.index()).map(|s| &s.kind),
                    Some(StationKind::Fork { .. })
                ) {
                    ck.add(
                        Some(e.field_at("fork")),
                        format!("station[{i}].fork"),
                        format!(
                            "{:?} is not a fork: a join must gather the tasks of a fork",
                            net.stations[fork.index()].name
                        ),
                    );
                } else if let Some(other) = joins_of.insert(*fork, i) {
                    ck.add(
                        Some(e.field_at("fork")),
                        format!("station[{i}].fork"),
                        format!("station[{other}] already joins this fork"),
                    );
                }
            }
            StationKind::Join { .. } => ck.add(
                Some(e.at()),
                format!("station[{i}].fork"),
                "a join must name the fork whose tasks it gathers",
            ),
            StationKind::Fork { branches } => {
                for (k, b) in branches.iter().enumerate() {
                    if !matches!(
                        net.station(*b).kind,
                        StationKind::Delay { .. }
                            | StationKind::Queue { .. }
                            | StationKind::Fork { .. }
                    ) {
                        ck.add(
                            Some(e.field_at("branches")),
                            format!("station[{i}].branches[{k}]"),
                            "a fork's tasks must go to a station that serves them (delay, fcfs, ps) or to a nested fork",
                        );
                    }
                }
            }
            _ => {}
        }
    }
    for (i, st) in net.stations.iter().enumerate() {
        if matches!(st.kind, StationKind::Fork { .. })
            && !joins_of.contains_key(&StationId(i as u32))
        {
            ck.add(
                Some(raw.stations[i].at()),
                format!("station[{i}]"),
                "this fork has no join (add a station with kind = \"join\" and fork = its name)",
            );
        }
    }
    // the reference station of a closed class is where its jobs start and are served
    for (c, class) in net.classes.iter().enumerate() {
        if let ClassKind::Closed { reference, .. } = class.kind
            && raw.classes[c].value.is_some()
            && !matches!(
                net.station(reference).kind,
                StationKind::Delay { .. } | StationKind::Queue { .. }
            )
        {
            ck.add(
                Some(raw.classes[c].field_at("reference")),
                format!("class[{c}].reference"),
                format!(
                    "{:?} is a {}: the reference station of a closed class must serve its jobs (delay, fcfs or ps)",
                    net.station(reference).name,
                    net.station(reference).kind.label()
                ),
            );
        }
    }
    ck.found.len() == before
}

/// A state of the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct State {
    class: u32,
    station: u32,
    /// Index into [`Walk::contexts`]: the stack of forks whose task this is (0: none).
    context: u32,
    /// A parent moving on from the join of its fork (rather than a job arriving at a station).
    from_join: bool,
}

/// The explored graph.
struct Walk<'a> {
    net: &'a Network,
    raw: &'a RawScenario,
    declared: &'a HashMap<(ClassId, StationId), usize>,
    contexts: Vec<Vec<u32>>,
    context_index: HashMap<Vec<u32>, u32>,
    states: Vec<State>,
    index: HashMap<State, u32>,
    /// Successors of each state, with whether they are in the same context.
    next: Vec<Vec<(u32, bool)>>,
    /// The state meets its context's goal at once (leaves, completes a cycle, joins), or is a
    /// dead end already reported (so that it does not cause a second report).
    goal: Vec<bool>,
    /// The join of each fork station.
    join_of: Vec<Option<u32>>,
    /// Most stations join the shortest queue can pick from (`None`: no limit).
    jsq_reach: Option<usize>,
    queue: VecDeque<u32>,
    /// Problems already reported, by (path, message), so each is reported once.
    reported: HashSet<(String, String)>,
    too_large: bool,
}

impl<'a> Walk<'a> {
    fn new(
        net: &'a Network,
        raw: &'a RawScenario,
        declared: &'a HashMap<(ClassId, StationId), usize>,
    ) -> Walk<'a> {
        let mut join_of = vec![None; net.stations.len()];
        for (j, st) in net.stations.iter().enumerate() {
            if let StationKind::Join { fork } = st.kind {
                join_of[fork.index()] = Some(j as u32);
            }
        }
        let any_open = net.classes.iter().any(|c| c.kind == ClassKind::Open);
        let population: u64 = net
            .classes
            .iter()
            .map(|c| match c.kind {
                ClassKind::Closed { population, .. } => u64::from(population),
                ClassKind::Open => 0,
            })
            .sum();
        let mut context_index = HashMap::new();
        context_index.insert(Vec::new(), 0);
        Walk {
            net,
            raw,
            declared,
            contexts: vec![Vec::new()],
            context_index,
            states: Vec::new(),
            index: HashMap::new(),
            next: Vec::new(),
            goal: Vec::new(),
            join_of,
            jsq_reach: (!any_open).then_some(population as usize),
            queue: VecDeque::new(),
            reported: HashSet::new(),
            too_large: false,
        }
    }

    fn class_name(&self, c: u32) -> &str {
        &self.net.classes[c as usize].name
    }

    fn station_name(&self, s: u32) -> &str {
        &self.net.stations[s as usize].name
    }

    fn is_closed(&self, c: u32) -> bool {
        matches!(self.net.classes[c as usize].kind, ClassKind::Closed { .. })
    }

    /// The state's index, adding it (and queueing it) when new.
    fn visit(&mut self, state: State) -> u32 {
        if let Some(&i) = self.index.get(&state) {
            return i;
        }
        if self.states.len() >= MAX_STATES {
            self.too_large = true;
            return 0;
        }
        let i = self.states.len() as u32;
        self.states.push(state);
        self.index.insert(state, i);
        self.next.push(Vec::new());
        self.goal.push(false);
        self.queue.push_back(i);
        i
    }

    fn link(&mut self, from: u32, to: State) {
        let same = to.context == self.states[from as usize].context;
        let t = self.visit(to);
        if !self.too_large {
            self.next[from as usize].push((t, same));
        }
    }

    fn deeper(&mut self, context: u32, fork: u32) -> u32 {
        let mut stack = self.contexts[context as usize].clone();
        stack.push(fork);
        if let Some(&i) = self.context_index.get(&stack) {
            return i;
        }
        let i = self.contexts.len() as u32;
        self.contexts.push(stack.clone());
        self.context_index.insert(stack, i);
        i
    }

    /// Reports a problem once, at the line of the route of (`class`, `station`) when there is
    /// one, else at the station's.
    fn report(
        &mut self,
        ck: &mut Checker,
        class: u32,
        station: u32,
        path: String,
        message: String,
    ) {
        if !self.reported.insert((path.clone(), message.clone())) {
            return;
        }
        let at = self
            .declared
            .get(&(ClassId(class), StationId(station)))
            .map(|&r| self.raw.routes[r].at())
            .unwrap_or_else(|| self.raw.stations[station as usize].at());
        ck.add(Some(at), path, message);
    }

    fn route_path(&self, class: u32, station: u32) -> String {
        match self.declared.get(&(ClassId(class), StationId(station))) {
            Some(r) => format!("route[{r}]"),
            None => format!("station[{station}]"),
        }
    }

    /// Explores from every entry point.
    fn explore(&mut self, ck: &mut Checker) {
        for (c, class) in self.net.classes.iter().enumerate() {
            let starts: Vec<u32> = match class.kind {
                ClassKind::Closed { reference, .. } => vec![reference.0],
                ClassKind::Open => (0..self.net.stations.len() as u32)
                    .filter(|&s| {
                        matches!(self.net.stations[s as usize].kind,
                            StationKind::Source { class, .. } if class.index() == c)
                    })
                    .collect(),
            };
            for s in starts {
                self.visit(State {
                    class: c as u32,
                    station: s,
                    context: 0,
                    from_join: false,
                });
            }
        }
        while let Some(i) = self.queue.pop_front() {
            if self.too_large {
                return;
            }
            self.step(ck, i);
        }
    }

    fn step(&mut self, ck: &mut Checker, i: u32) {
        let st = self.states[i as usize];
        let (c, s) = (st.class, st.station);
        let stack = self.contexts[st.context as usize].clone();
        let net = self.net;
        match &net.stations[s as usize].kind {
            StationKind::Fork { branches } if !st.from_join => {
                if stack.contains(&s) {
                    self.goal[i as usize] = true;
                    self.report(
                        ck,
                        c,
                        s,
                        format!("station[{s}]"),
                        format!(
                            "the tasks of fork {:?} reach it again before reaching its join: the fork would nest without end",
                            self.station_name(s)
                        ),
                    );
                    return;
                }
                let inner = self.deeper(st.context, s);
                let mut seen = HashSet::new();
                for b in branches {
                    if seen.insert(b.0) {
                        self.link(
                            i,
                            State {
                                class: c,
                                station: b.0,
                                context: inner,
                                from_join: false,
                            },
                        );
                    }
                }
                if let Some(j) = self.join_of[s as usize] {
                    self.link(
                        i,
                        State {
                            class: c,
                            station: j,
                            context: st.context,
                            from_join: true,
                        },
                    );
                }
            }
            StationKind::Join { fork } if !st.from_join => {
                self.goal[i as usize] = true;
                match stack.last() {
                    Some(&top) if top == fork.0 => {}
                    Some(&top) => {
                        let message = format!(
                            "a task of fork {:?} (class {:?}) reaches join {:?}, which gathers fork {:?}: a task must reach the join of its own fork",
                            self.station_name(top),
                            self.class_name(c),
                            self.station_name(s),
                            self.station_name(fork.0)
                        );
                        self.report(ck, c, s, format!("station[{s}]"), message);
                    }
                    None => {
                        let message = format!(
                            "class {:?} reaches join {:?} without passing its fork {:?}: only the fork's tasks may reach a join",
                            self.class_name(c),
                            self.station_name(s),
                            self.station_name(fork.0)
                        );
                        self.report(ck, c, s, format!("station[{s}]"), message);
                    }
                }
            }
            StationKind::Sink => {
                self.goal[i as usize] = true;
                if let Some(&top) = stack.last() {
                    let message = format!(
                        "a task of fork {:?} (class {:?}) leaves the network at sink {:?} before reaching its join",
                        self.station_name(top),
                        self.class_name(c),
                        self.station_name(s)
                    );
                    self.report(ck, c, s, format!("station[{s}]"), message);
                } else if self.is_closed(c) {
                    let message = format!(
                        "closed class {:?} reaches sink {:?}: the jobs of a closed class cannot leave",
                        self.class_name(c),
                        self.station_name(s)
                    );
                    self.report(ck, c, s, format!("station[{s}]"), message);
                }
            }
            _ => self.routed(ck, i, &stack),
        }
    }

    /// A job at a station that routes it (or a parent moving on from a join).
    fn routed(&mut self, ck: &mut Checker, i: u32, stack: &[u32]) {
        let st = self.states[i as usize];
        let (c, s) = (st.class, st.station);
        let net = self.net;
        let station = &net.stations[s as usize];
        if !st.from_join
            && let Some(table) = station.kind.service()
            && table[c as usize].is_none()
        {
            let given = self.raw.stations[s as usize]
                .value
                .as_ref()
                .is_some_and(|r| {
                    r.service.is_some()
                        || r.service_by_class
                            .as_ref()
                            .is_some_and(|m| m.contains_key(self.class_name(c)))
                });
            if !given {
                let message = format!(
                    "class {:?} reaches this station but has no service time here",
                    self.class_name(c)
                );
                self.report(ck, c, s, format!("station[{s}].service"), message);
            }
        }
        let rule = net.routing.rule(ClassId(c), StationId(s));
        if *rule == Rule::Unset {
            self.goal[i as usize] = true;
            if !self.declared.contains_key(&(ClassId(c), StationId(s))) {
                let message = if st.from_join {
                    format!(
                        "class {:?} leaves this join but no [[route]] says where it goes",
                        self.class_name(c)
                    )
                } else {
                    format!(
                        "class {:?} reaches this station but no [[route]] says where it goes next",
                        self.class_name(c)
                    )
                };
                self.report(ck, c, s, format!("station[{s}]"), message);
            }
            return;
        }
        let mut targets = Routing::branch_probabilities(rule, &net.groups);
        if let (Rule::ShortestQueue { .. }, Some(reach)) = (rule, self.jsq_reach) {
            targets.truncate(reach.max(1));
        }
        for (target, p) in targets {
            if p <= 0.0 {
                continue;
            }
            match target {
                Target::Exit => {
                    self.goal[i as usize] = true;
                    if let Some(&top) = stack.last() {
                        let message = format!(
                            "a task of fork {:?} (class {:?}) leaves the network from {:?} before reaching its join",
                            self.station_name(top),
                            self.class_name(c),
                            self.station_name(s)
                        );
                        let path = self.route_path(c, s);
                        self.report(ck, c, s, path, message);
                    }
                }
                Target::Station(to, tc) => {
                    if stack.is_empty()
                        && let ClassKind::Closed { reference, .. } = net.classes[tc.index()].kind
                        && reference == to
                    {
                        self.goal[i as usize] = true;
                    }
                    self.link(
                        i,
                        State {
                            class: tc.0,
                            station: to.0,
                            context: st.context,
                            from_join: false,
                        },
                    );
                }
            }
        }
    }

    /// States that can meet their context's goal: the goal states, and those with a successor
    /// in the same context that can.
    fn good(&self) -> Vec<bool> {
        let mut back: Vec<Vec<u32>> = vec![Vec::new(); self.states.len()];
        for (from, succ) in self.next.iter().enumerate() {
            for &(to, same) in succ {
                if same {
                    back[to as usize].push(from as u32);
                }
            }
        }
        let mut good = self.goal.clone();
        let mut queue: VecDeque<u32> = (0..self.states.len() as u32)
            .filter(|&i| good[i as usize])
            .collect();
        while let Some(i) = queue.pop_front() {
            for &p in &back[i as usize] {
                if !std::mem::replace(&mut good[p as usize], true) {
                    queue.push_back(p);
                }
            }
        }
        good
    }

    /// One problem per (class, context) whose states cannot all meet their goal, naming the
    /// stations where its jobs are trapped.
    fn report_traps(&mut self, ck: &mut Checker) {
        let good = self.good();
        let mut traps: Vec<((u32, u32), Vec<u32>)> = Vec::new();
        for (i, st) in self.states.iter().enumerate() {
            if good[i] {
                continue;
            }
            let key = (st.class, st.context);
            match traps.iter_mut().find(|(k, _)| *k == key) {
                Some((_, stations)) => {
                    if !stations.contains(&st.station) {
                        stations.push(st.station);
                    }
                }
                None => traps.push((key, vec![st.station])),
            }
        }
        for ((c, context), stations) in traps {
            let s = stations[0];
            let names: Vec<String> = stations
                .iter()
                .take(6)
                .map(|&t| format!("{:?}", self.station_name(t)))
                .collect();
            let trap = names.join(", ");
            let message = match self.contexts[context as usize].last() {
                Some(&fork) => format!(
                    "the tasks of fork {:?} (class {:?}) can reach {trap} but never the join {:?} from there: the job would wait at its fork forever",
                    self.station_name(fork),
                    self.class_name(c),
                    self.join_of[fork as usize].map_or("?", |j| self.station_name(j)),
                ),
                None if self.is_closed(c) => {
                    let ClassKind::Closed { reference, .. } = self.net.classes[c as usize].kind
                    else {
                        unreachable!("closed")
                    };
                    format!(
                        "the jobs of closed class {:?} can reach {trap} but never return from there to the reference station {:?} (of their class): no cycle would complete",
                        self.class_name(c),
                        self.station_name(reference.0)
                    )
                }
                None => format!(
                    "the jobs of class {:?} can reach {trap} but never leave the network from there: no route leads to `exit` (they would circulate forever)",
                    self.class_name(c)
                ),
            };
            self.report(ck, c, s, format!("station[{s}]"), message);
        }
    }

    /// Which `class * stations + station` pairs are reached (arriving, not moving on).
    fn reached(&self) -> Vec<bool> {
        let ns = self.net.stations.len();
        let mut reached = vec![false; self.net.classes.len() * ns];
        for st in &self.states {
            if !st.from_join {
                reached[st.class as usize * ns + st.station as usize] = true;
            }
        }
        reached
    }
}

/// Checks the routing graph (see the module docs); returns which `class * stations + station`
/// pairs are reached.
pub(super) fn check_routing(
    ck: &mut Checker,
    raw: &RawScenario,
    net: &Network,
    declared: &HashMap<(ClassId, StationId), usize>,
) -> Vec<bool> {
    let mut walk = Walk::new(net, raw, declared);
    walk.explore(ck);
    if walk.too_large {
        ck.add(
            Some(0),
            "route",
            format!("the routing has more than {MAX_STATES} (class, station, fork) states: too large to check"),
        );
        return walk.reached();
    }
    walk.report_traps(ck);
    let ns = net.stations.len();
    let mut visited = vec![false; ns];
    for st in &walk.states {
        visited[st.station as usize] = true;
    }
    for (s, st) in net.stations.iter().enumerate() {
        if !visited[s] && !matches!(st.kind, StationKind::Source { .. }) {
            ck.add(
                Some(raw.stations[s].at()),
                format!("station[{s}]"),
                format!(
                    "station {:?} is never visited: no class's routing reaches it (remove it, or route to it)",
                    st.name
                ),
            );
        }
    }
    for (c, class) in net.classes.iter().enumerate() {
        if class.kind == ClassKind::Open && !walk.states.iter().any(|st| st.class == c as u32) {
            ck.add(
                Some(raw.classes[c].at()),
                format!("class[{c}]"),
                format!(
                    "open class {:?} never enters the network: it has no source and no route switches into it",
                    class.name
                ),
            );
        }
    }
    walk.reached()
}

/// Keeps a service time only for the classes that reach the station, so the service table says
/// exactly which classes visit (reports list per-class figures only for those).
pub(super) fn prune_service(net: &mut Network, reached: &[bool]) {
    let ns = net.stations.len();
    for (s, st) in net.stations.iter_mut().enumerate() {
        if let StationKind::Delay { service } | StationKind::Queue { service, .. } = &mut st.kind {
            for (c, entry) in service.iter_mut().enumerate() {
                if !reached[c * ns + s] {
                    *entry = None;
                }
            }
        }
    }
}
