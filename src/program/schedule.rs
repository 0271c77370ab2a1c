//! A scheduled program: a [`Dag`] (or a sequential [`Program`] lowered to one for each
//! execution) on a machine of LogGP endpoints, with or without the links of an interconnect
//! between them. The executor `crate::engine::dag` runs it.
//!
//! **Endpoints.** Every rank is a LogGP(S) host ([`crate::analytic::loggp`]): its CPUs pay the
//! overheads `o` and `O` of messages and run `calc`s, its NICs the gaps `g` and `G`; messages
//! travel `L` after the sender's overhead. Alone, that is LogGOPSim's setting: the wires never
//! queue.
//!
//! **Links.** With an interconnect, a message leaves the sender's node when the sender's
//! overhead `o` ends, crosses the links of its route (each a FCFS queue of `bandwidth` bytes per
//! second with a per-hop `latency`, store-and-forward or cut-through, as
//! [`super::Interconnect`] says), and reaches the receiver `L` after the last link delivered it.
//! The interconnect's `startup` is not used (the endpoints' `o` is the startup). Ranks on one
//! node (`ranks_per_node`) exchange messages without links.

use std::sync::Arc;

use super::dag::{Dag, TICKS_PER_SECOND};
use super::{Interconnect, Program};
use crate::analytic::loggp::LogGp;

/// LogGP parameters in ticks ([`TICKS_PER_SECOND`]), as the executor uses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// `L`.
    pub l: u64,
    /// `o`.
    pub o: u64,
    /// `g`.
    pub g: u64,
    /// `G`, per byte.
    pub big_g: u64,
    /// `O`, per byte.
    pub big_o: u64,
    /// `S`, bytes: larger messages use rendezvous.
    pub s: u64,
}

impl Endpoints {
    /// The parameters `p` (in seconds) in ticks, each rounded to the nearest; an error names a
    /// parameter that is negative, not finite or beyond 10^6 seconds.
    pub fn from_seconds(p: &LogGp) -> Result<Endpoints, String> {
        let t = |name: &str, v: f64| -> Result<u64, String> {
            if !v.is_finite() || !(0.0..=1e6).contains(&v) {
                return Err(format!(
                    "{name} must be a time from 0 to 1e6 seconds, got {v}"
                ));
            }
            Ok((v * TICKS_PER_SECOND).round() as u64)
        };
        Ok(Endpoints {
            l: t("L", p.l)?,
            o: t("o", p.o)?,
            g: t("g", p.g)?,
            big_g: t("G", p.big_g)?,
            big_o: t("O", p.big_o)?,
            s: p.s,
        })
    }

    /// The parameters in seconds.
    pub fn seconds(&self) -> LogGp {
        let s = |t: u64| t as f64 / TICKS_PER_SECOND;
        LogGp {
            l: s(self.l),
            o: s(self.o),
            g: s(self.g),
            big_g: s(self.big_g),
            big_o: s(self.big_o),
            s: self.s,
        }
    }

    /// `base + (size - 1) per_byte`, with LogGOPSim's `size = 0` (`base - per_byte`, at least 0)
    /// and saturating at `u64::MAX`.
    #[inline(always)]
    fn cost(base: u64, size: u64, per_byte: u64) -> u64 {
        if size == 0 {
            base.saturating_sub(per_byte)
        } else {
            base.saturating_add((size - 1).saturating_mul(per_byte))
        }
    }

    /// Sender CPU: `o + (s-1) O`.
    #[inline(always)]
    pub fn send_cpu(&self, size: u64) -> u64 {
        Self::cost(self.o, size, self.big_o)
    }

    /// A NIC side: `g + (s-1) G`.
    #[inline(always)]
    pub fn nic(&self, size: u64) -> u64 {
        Self::cost(self.g, size, self.big_g)
    }

    /// Receiver CPU: `o + (s-1) max(O, G)`; for `s = 0`, LogGOPSim's
    /// `o + max((s-1) O, (s-1) G)` in wrapping 64-bit arithmetic, i.e. `o` minus the smaller
    /// non-zero of `O` and `G` (at least 0).
    #[inline(always)]
    pub fn recv_cpu(&self, size: u64) -> u64 {
        if size == 0 {
            let m = self.big_o.wrapping_neg().max(self.big_g.wrapping_neg());
            return self.o.saturating_sub(m.wrapping_neg());
        }
        Self::cost(self.o, size, self.big_o.max(self.big_g))
    }
}

/// The order in which operations that become ready at once on one rank are started: sends,
/// then receives, then calcs (LogGOPSim's rule), and within each kind:
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReadyOrder {
    /// In the order they became ready (a stable sort): program order.
    #[default]
    Program,
    /// As LogGOPSim 76451de built with GCC 12 orders them: `std::sort`, which keeps that order
    /// for up to 16 operations and permutes more (a port of libstdc++'s introsort).
    LogGopSim,
}

/// The links between the endpoints.
#[derive(Clone, Debug)]
pub struct Links {
    /// The interconnect (its `startup` is not used).
    pub interconnect: Interconnect,
    /// Ranks per node: rank `r` is on node `r / ranks_per_node`.
    pub ranks_per_node: u32,
}

/// What a schedule runs on.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The LogGP endpoints.
    pub endpoints: Endpoints,
    /// The links between them, if any.
    pub links: Option<Links>,
    /// The order of simultaneous ready operations.
    pub order: ReadyOrder,
}

/// The operations of a schedule.
#[derive(Clone, Debug)]
pub enum Form {
    /// A dependency graph, the same for every execution (a GOAL file, labelled operations).
    Dag(Arc<Dag>),
    /// A sequential program, lowered to a graph for each execution (its random times and sizes
    /// drawn from the execution's streams) and kept for its analysis.
    Program(Box<Program>),
}

/// A program run by the dependency-graph executor.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Its operations.
    pub form: Form,
    /// Its machine.
    pub machine: Machine,
    /// Report each rank's figures individually.
    pub report_each: bool,
}

impl Schedule {
    /// Number of ranks.
    pub fn ranks(&self) -> u32 {
        match &self.form {
            Form::Dag(d) => d.ranks(),
            Form::Program(p) => p.ranks,
        }
    }

    /// True when every execution is the same (no random time or size): one execution stands
    /// for all replications.
    pub fn deterministic(&self) -> bool {
        match &self.form {
            Form::Dag(_) => true,
            Form::Program(p) => super::lower::deterministic(p),
        }
    }

    /// The sequential program it was lowered from, if it was.
    pub fn program(&self) -> Option<&Program> {
        match &self.form {
            Form::Program(p) => Some(p),
            Form::Dag(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loggopsim_defaults_in_picoseconds() {
        let e = Endpoints::from_seconds(&LogGp::LOGGOPSIM).unwrap();
        assert_eq!(
            (e.l, e.o, e.g, e.big_g, e.big_o, e.s),
            (2_500_000, 1_500_000, 1_000_000, 6000, 0, 65535)
        );
        assert_eq!(e.send_cpu(1), 1_500_000);
        assert_eq!(e.nic(1000), 1_000_000 + 999 * 6000);
        assert_eq!(e.recv_cpu(0), 1_494_000, "LogGOPSim's wrap-around: o - G");
        assert_eq!(e.nic(0), 994_000);
        assert!(
            Endpoints::from_seconds(&LogGp {
                l: -1.0,
                ..LogGp::LOGGOPSIM
            })
            .is_err()
        );
    }
}
