//! The accepted throughput of network traffic, by a fluid model of the links.
//!
//! Each flow of traffic (from a node to a node, its bytes at a steady rate over the injection
//! window) follows its routes (under Valiant routing, each intermediate's route with its
//! chance). A link that receives bytes faster than its capacity `C` passes them on in the
//! proportion they arrive: FCFS serves them in arrival order, so the composition of what leaves
//! is that of what arrives, and a fair-shared (processor-sharing) link in overload holds jobs in
//! proportion to their arrival rates and so serves them in the same proportion (the fluid
//! limit). Each flow leaves link `l` at its arrival rate times `min(1, C_l / Λ_l)`, `Λ_l` the
//! rate of every flow arriving there; the rates at each hop are iterated from the offered ones
//! until they stop falling. The flows' rates out of their last links are the accepted
//! throughput: the offered load below saturation, beyond it what the bottlenecks pass,
//! including what an overloaded link upstream of a destination takes from the traffic that
//! crosses it to be delivered (with the network's buffers unbounded, nothing is held back at
//! the source). (The saturation load, where the busiest link is busy all the time, is that of
//! the channel loads: `parsim route --loads`.)

use super::channels::ChannelLoads;
use crate::analytic::cost;
use crate::program::Program;

/// The method's name, as its labels start.
pub const METHOD: &str =
    "fluid model of the links (each overloaded link passes its flows in proportion)";

/// Most rounds of the iteration of the links' shares.
const MAX_ROUNDS: usize = 1000;

/// What the fluid model predicts for a program's traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct Fluid {
    /// The offered load: bytes per node and time unit over a link's bandwidth.
    pub offered: f64,
    /// The accepted throughput, in the same unit.
    pub accepted: f64,
}

/// The fluid model of the traffic in `loads` (after [`ChannelLoads::spread_random`]), each
/// flow's bytes injected steadily at `scale` times their total per time unit (the walk's
/// injected bytes over its window, over all bytes). Refused under routings whose routes follow
/// the links' backlogs, and beyond the work budget.
pub fn accepted(prog: &Program, loads: &ChannelLoads, scale: f64) -> Result<Fluid, String> {
    let net = &prog.interconnect;
    let topology = &net.topology;
    // the sub-flows: a rate and a route (a range of `links`)
    let mut rates: Vec<f64> = Vec::new();
    let mut routes: Vec<(usize, usize)> = Vec::new();
    let mut links: Vec<u64> = Vec::new();
    for (src, dst, bytes) in loads.traffic_flows() {
        let Some(detours) = topology.detours(src, dst) else {
            return Err(format!(
                "{} routing chooses routes by the links' backlogs: the fluid model needs each flow's routes",
                topology.routing().name()
            ));
        };
        for (detour, chance) in detours {
            let first = links.len();
            topology.route_through(src, dst, detour, |l| links.push(l));
            if links.len() as f64 > cost::scaled(cost::WORK_BUDGET) {
                return Err(format!(
                    "the traffic's routes cross more than {:.1e} links; {}",
                    cost::scaled(cost::WORK_BUDGET),
                    cost::raise()
                ));
            }
            rates.push(bytes * scale * chance);
            routes.push((first, links.len()));
        }
    }
    // link ids to dense indices, with each link's capacity in bytes per time unit
    let mut index: rustc_hash::FxHashMap<u64, usize> = rustc_hash::FxHashMap::default();
    let mut capacity: Vec<f64> = Vec::new();
    let at: Vec<usize> = links
        .iter()
        .map(|&l| {
            *index.entry(l).or_insert_with(|| {
                capacity.push(net.bandwidth * topology.capacity(l));
                capacity.len() - 1
            })
        })
        .collect();
    let mut pass = vec![1.0_f64; capacity.len()];
    let mut arriving = vec![0.0_f64; capacity.len()];
    // where every route meets the links in one order (a flow's hop k never feeds a link that
    // feeds an earlier hop of another), the longest route's rounds settle the rates; routes
    // that meet links in different orders (Valiant's local hops before and after a global
    // one) may take more
    let mut settled = false;
    for _ in 0..MAX_ROUNDS {
        arriving.fill(0.0);
        for (&rate, &(first, end)) in rates.iter().zip(&routes) {
            let mut r = rate;
            for &k in &at[first..end] {
                arriving[k] += r;
                r *= pass[k];
            }
        }
        let mut change = 0.0_f64;
        for ((p, &a), &c) in pass.iter_mut().zip(&arriving).zip(&capacity) {
            // (half a step: where routes meet links in different orders the plain iteration
            // can swing between two states)
            let next = 0.5 * (*p + if a > c { c / a } else { 1.0 });
            change = change.max((next - *p).abs());
            *p = next;
        }
        if change <= 1e-12 {
            settled = true;
            break;
        }
    }
    if !settled {
        return Err(format!(
            "the links' shares had not settled after {MAX_ROUNDS} rounds"
        ));
    }
    let delivered: f64 = rates
        .iter()
        .zip(&routes)
        .map(|(&rate, &(first, end))| at[first..end].iter().fold(rate, |r, &k| r * pass[k]))
        .sum();
    let per_node = f64::from(prog.nodes()) * net.bandwidth;
    let offered = rates.iter().sum::<f64>() / per_node;
    Ok(Fluid {
        offered,
        accepted: delivered / per_node,
    })
}
