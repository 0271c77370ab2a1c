//! Channel loads: the bytes each link must carry over a whole program, expected under its
//! routing, and the lower bound they put on the makespan.
//!
//! Whatever the timing, a link transmits every byte routed over it, one message at a time or
//! shared, so the makespan is at least the busiest link's transmissions, `max_l B_l / C_l`, in
//! every run. Under Valiant routes `B_l` is random (each message's intermediate is drawn); its
//! mean is the sum over messages of their bytes times the share of intermediates whose route
//! crosses `l`, and `E[makespan] >= E[max_l B_l / C_l] >= max_l E[B_l] / C_l`. Under UGAL and
//! adaptive routing the routes between routers follow the backlogs, so only the host links'
//! loads are known, and the bound uses those. This is the program's side of the channel-load
//! analysis of a traffic pattern (Dally and Towles, ch. 3): the busiest channel sets the rate.

use rustc_hash::FxHashMap;

use super::{evaluation, fluid};
use crate::analytic::cost;
use crate::metrics::name::{Figure, Subject};
use crate::predict::{Analysis, Prediction};
use crate::program::{Program, Traffic};
use crate::topology::Topology;

/// The method's name, as its labels start.
pub const METHOD: &str = "channel-load bound (the busiest link's transmissions)";

/// The name of the offered load's prediction.
pub const INJECTION_METHOD: &str =
    "the contention-free walk's injection (the bytes sent per host over its window)";

/// Bytes expected on each link, accumulated message by message.
#[derive(Debug, Default)]
pub struct ChannelLoads {
    /// Expected bytes by link id.
    bytes: FxHashMap<u64, f64>,
    /// Bytes each node sends into the network (to another node).
    injected: FxHashMap<u32, f64>,
    /// Bytes sent to random ranks, by sending node.
    random: FxHashMap<u32, f64>,
    /// Bytes of network traffic to given ranks, by (sending node, receiving node).
    traffic: FxHashMap<(u32, u32), f64>,
    /// Bytes of network traffic, to the sender's own node too.
    traffic_total: f64,
    /// Messages added.
    messages: u64,
    /// Hops walked to spread them (the work, against the budget).
    hops: u64,
}

impl ChannelLoads {
    /// Adds a message of `bytes` (their mean when random) from node `src` to node `dst`; past
    /// the budget only the messages are counted.
    pub fn add(&mut self, topology: &Topology, src: u32, dst: u32, bytes: f64) {
        self.messages += 1;
        if src != dst {
            *self.injected.entry(src).or_default() += bytes;
        }
        if self.hops as f64 > cost::scaled(cost::WORK_BUDGET) {
            return;
        }
        let loads = &mut self.bytes;
        self.hops += topology.expected_crossings(src, dst, |link, share| {
            *loads.entry(link).or_default() += share * bytes;
        });
    }

    /// Adds a message of network traffic ([`crate::program::Instr::Traffic`]) of `bytes` from
    /// node `src` to node `dst`, as [`Self::add`] does, and to the traffic's flows.
    pub fn add_traffic(&mut self, topology: &Topology, src: u32, dst: u32, bytes: f64) {
        self.add(topology, src, dst, bytes);
        self.traffic_total += bytes;
        if src != dst {
            *self.traffic.entry((src, dst)).or_default() += bytes;
        }
    }

    /// Adds a message of `bytes` from node `src` to a rank drawn uniformly from the others; its
    /// bytes are spread over every destination by [`Self::spread_random`].
    pub fn add_random(&mut self, src: u32, bytes: f64) {
        self.messages += 1;
        self.traffic_total += bytes;
        *self.random.entry(src).or_default() += bytes;
    }

    /// Spreads the bytes sent to random ranks over their destinations: from a node, each other
    /// rank is drawn with probability `1 / (P - 1)`, so a node `d` with `k_d` ranks receives
    /// `k_d / (P - 1)` of the bytes (the sender's own node, `(k - 1) / (P - 1)`, over no link),
    /// each share over the routes from the sender's node to `d`.
    pub fn spread_random(&mut self, prog: &Program) {
        let topology = &prog.interconnect.topology;
        let others = f64::from(prog.ranks - 1);
        let nodes = prog.nodes();
        let on =
            |n: u32| f64::from((prog.ranks - n * prog.ranks_per_node).min(prog.ranks_per_node));
        let mut senders: Vec<(u32, f64)> = self.random.iter().map(|(&n, &b)| (n, b)).collect();
        senders.sort_by_key(|&(n, _)| n);
        for (src, bytes) in senders {
            *self.injected.entry(src).or_default() += bytes * (1.0 - (on(src) - 1.0) / others);
            for dst in (0..nodes).filter(|&d| d != src) {
                if self.hops as f64 > cost::scaled(cost::WORK_BUDGET) {
                    return;
                }
                let share = bytes * on(dst) / others;
                *self.traffic.entry((src, dst)).or_default() += share;
                let loads = &mut self.bytes;
                self.hops += topology.expected_crossings(src, dst, |link, part| {
                    *loads.entry(link).or_default() += part * share;
                });
            }
        }
    }

    /// The network traffic's bytes between nodes, as (sending node, receiving node, bytes), in
    /// node order; a random destination's bytes spread over every node (after
    /// [`Self::spread_random`]).
    pub fn traffic_flows(&self) -> Vec<(u32, u32, f64)> {
        let mut flows: Vec<(u32, u32, f64)> =
            self.traffic.iter().map(|(&(s, d), &b)| (s, d, b)).collect();
        flows.sort_by_key(|&(s, d, _)| (s, d));
        flows
    }

    /// Whether any message went to a random rank.
    pub fn has_random(&self) -> bool {
        !self.random.is_empty()
    }

    /// The bytes of network traffic, to the sender's own node too.
    pub fn traffic_total(&self) -> f64 {
        self.traffic_total
    }

    /// The messages added.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    /// The bytes expected on each link that carries any, as (link, bytes, its transmission
    /// time), the longest transmission first (ties by link id).
    pub fn by_link(&self, topology: &Topology, bandwidth: f64) -> Vec<(u64, f64, f64)> {
        let mut links: Vec<(u64, f64, f64)> = self
            .bytes
            .iter()
            .map(|(&l, &b)| (l, b, b / (bandwidth * topology.capacity(l))))
            .collect();
        links.sort_by(|x, y| y.2.total_cmp(&x.2).then(x.0.cmp(&y.0)));
        links
    }

    /// The most bytes a node sends into the network.
    pub fn most_injected(&self) -> f64 {
        self.injected.values().copied().fold(0.0, f64::max)
    }

    /// An error when spreading the messages took more than the budget.
    pub fn within_budget(&self) -> Result<(), String> {
        if self.hops as f64 <= cost::scaled(cost::WORK_BUDGET) {
            return Ok(());
        }
        Err(format!(
            "spreading {} messages over their routes' intermediates walks more than {:.1e} hops; {}",
            self.messages,
            cost::scaled(cost::WORK_BUDGET),
            cost::raise()
        ))
    }
}

/// The channel-load bound on the makespan, for a program whose routing is not minimal or that
/// sends network traffic (otherwise every link's load is the evaluation's); for network
/// traffic, the offered load of the walk's injection window and the accepted throughput of the
/// [`fluid`] model. A refusal saying why where the loads cannot be had.
pub fn predictions(prog: &Program, a: &mut Analysis) {
    let net = &prog.interconnect;
    let (loads, traffic) = match evaluation::channel_loads_and_traffic(prog) {
        Ok(l) => l,
        Err(why) => return a.refuse(METHOD, why),
    };
    let Some(&(link, bytes, time)) = loads.by_link(&net.topology, net.bandwidth).first() else {
        return a.refuse(
            METHOD,
            "the program sends no message over a link".to_owned(),
        );
    };
    let routing = net.topology.routing().name();
    let known = if net.topology.crossings_known() {
        format!("each message's bytes spread over its {routing} routes")
    } else {
        format!("the host links only: {routing} routes between routers follow the links' backlogs")
    };
    let random = if loads.has_random() {
        ", and a message to a random rank over every destination"
    } else {
        ""
    };
    let busiest = net.topology.link_name(link);
    // the injection share at which the busiest link fills, each node injecting in the
    // program's proportions (as `parsim route --loads` prints it)
    let saturation = loads.most_injected() / net.bandwidth / time;
    a.predictions.push(Prediction {
        metric: Subject::Program.metric(Figure::Makespan),
        value: time,
        method: format!(
            "{METHOD}; approximation: a lower bound on the mean, from {known}{random} (the busiest, {busiest}, carries {bytes:.0} bytes: the nodes saturate it at {:.1}% of their injection bandwidth)",
            100.0 * saturation
        ),
        exact: false,
        measured: None,
        recommended: false,
    });
    if prog.has_traffic() {
        traffic_predictions(prog, &loads, &traffic, a);
    }
}

/// The offered load over the walk's injection window `[0, until]`, and the accepted throughput
/// of the [`fluid`] model with every flow injected at the walk's rate.
fn traffic_predictions(prog: &Program, loads: &ChannelLoads, traffic: &Traffic, a: &mut Analysis) {
    let [offered, _] = traffic.shares(prog);
    if !offered.is_finite() {
        return a.refuse(
            fluid::METHOD,
            "the first rank to send network traffic finishes at time 0: there is no window to measure a rate over".to_owned(),
        );
    }
    let window = "the contention-free walk's injection window (mean durations)";
    // (the walk runs every compute at once: ranks that share a node's cores queue in the run)
    let shared = if prog.ranks_per_node > prog.cores {
        let cores = match prog.cores {
            1 => "its core".to_owned(),
            c => format!("its {c} cores"),
        };
        format!(
            ", the {} ranks of a node computing at once on {cores} (the run queues them)",
            prog.ranks_per_node
        )
    } else {
        String::new()
    };
    a.predictions.push(Prediction {
        metric: Subject::Messages.metric(Figure::Offered),
        value: offered,
        method: format!("{INJECTION_METHOD}; approximation: every duration at its mean{shared}"),
        exact: false,
        measured: None,
        recommended: false,
    });
    let scale = traffic.injected / (traffic.until * loads.traffic_total());
    let f = match fluid::accepted(prog, loads, scale) {
        Ok(f) => f,
        Err(why) => return a.refuse(fluid::METHOD, why),
    };
    // (traffic to the sender's own node crosses no link: delivered as offered)
    let own_node = offered - f.offered;
    a.predictions.push(Prediction {
        metric: Subject::Messages.metric(Figure::Accepted),
        value: f.accepted + own_node,
        method: format!(
            "{}; approximation: every flow steady at the walk's rate over {window}{shared}, unbounded buffers, the bytes in flight at the window's ends neglected",
            fluid::METHOD
        ),
        exact: false,
        measured: None,
        recommended: false,
    });
}
