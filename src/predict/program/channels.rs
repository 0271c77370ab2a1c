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

use super::evaluation;
use crate::analytic::cost;
use crate::metrics::name::{Figure, Subject};
use crate::predict::{Analysis, Prediction};
use crate::program::Program;
use crate::topology::Topology;

/// The method's name, as its labels start.
pub const METHOD: &str = "channel-load bound (the busiest link's transmissions)";

/// Bytes expected on each link, accumulated message by message.
#[derive(Debug, Default)]
pub struct ChannelLoads {
    /// Expected bytes by link id.
    bytes: FxHashMap<u64, f64>,
    /// Bytes each node sends into the network (to another node).
    injected: FxHashMap<u32, f64>,
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

/// The channel-load bound on the makespan and the message count, for a program whose routing
/// is not minimal (under minimal routes the evaluation's own predictions include the links'
/// loads); a refusal saying why otherwise.
pub fn predictions(prog: &Program, a: &mut Analysis) {
    let net = &prog.interconnect;
    let loads = match evaluation::channel_loads(prog) {
        Ok(l) => l,
        Err(why) => return a.refuse(METHOD, why),
    };
    a.predictions.push(Prediction {
        metric: Subject::Messages.metric(Figure::Count),
        value: loads.messages as f64,
        method: format!("{METHOD} (a count)"),
        exact: true,
        measured: None,
        recommended: false,
    });
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
    a.predictions.push(Prediction {
        metric: Subject::Program.metric(Figure::Makespan),
        value: time,
        method: format!(
            "{METHOD}; approximation: a lower bound on the mean, from {known} (the busiest, {}, carries {:.0} bytes)",
            net.topology.link_name(link),
            bytes
        ),
        exact: false,
        measured: None,
        recommended: false,
    });
}
