//! Schedules, the third workload form: a [`Dag`] (a GOAL file's, or a sequential [`Program`]
//! lowered to one for each execution by [`lower`]) on a machine of LogGP endpoints, with or
//! without the links of an interconnect between them. The executor `crate::engine::schedule`
//! runs it, with LogGOPSim's semantics.
//!
//! **Endpoints.** Every rank is a LogGP(S) host ([`crate::analytic::loggp`]): its CPUs pay the
//! overheads `o` and `O` of messages and run `calc`s, its NICs the gaps `g` and `G`; messages
//! travel `L` after the sender's overhead. Alone, that is LogGOPSim's setting: the wires never
//! queue.
//!
//! **Links.** With an interconnect, a message leaves the sender's node when the sender's
//! overhead `o` ends, crosses the links of its route (each a FCFS queue of `bandwidth` bytes per
//! second with a per-hop `latency`, store-and-forward or cut-through, as
//! [`crate::program::Interconnect`] says), and reaches the receiver `L` after the last link delivered it.
//! The interconnect's `startup` is not used (the endpoints' `o` is the startup). Ranks on one
//! node (`ranks_per_node`) exchange messages without links.

pub mod dag;
pub mod lower;

use std::sync::Arc;

use crate::analytic::loggp::LogGp;
use crate::program::{Interconnect, Program};
use dag::{Dag, TICKS_PER_SECOND};

/// LogGP parameters as the executor uses them: `L`, `o` and `g` in ticks ([`TICKS_PER_SECOND`],
/// picoseconds), `G` and `O` in femtoseconds per byte ([`PerByte`]), so that a per-byte cost
/// below a picosecond is kept (0.4 ps per byte is 2.5 TB/s); a message's `(s-1) G` is rounded
/// to the tick once, not per byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// `L`, ticks.
    pub l: u64,
    /// `o`, ticks.
    pub o: u64,
    /// `g`, ticks.
    pub g: u64,
    /// `G`.
    pub big_g: PerByte,
    /// `O`.
    pub big_o: PerByte,
    /// `S`, bytes: larger messages use rendezvous.
    pub s: u64,
}

/// A cost per byte in femtoseconds, held as whole ticks and the femtoseconds beyond them (the
/// usual cost, a whole number of picoseconds, then takes one multiplication).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct PerByte {
    ticks: u64,
    fs: u16,
}

impl PerByte {
    /// `fs` femtoseconds per byte.
    pub const fn from_fs(fs: u64) -> PerByte {
        PerByte {
            ticks: fs / FS_PER_TICK,
            fs: (fs % FS_PER_TICK) as u16,
        }
    }

    /// Femtoseconds per byte.
    pub const fn fs(self) -> u64 {
        self.ticks * FS_PER_TICK + self.fs as u64
    }

    /// `bytes` bytes, in ticks rounded to the nearest (saturating).
    #[inline(always)]
    fn of(self, bytes: u64) -> u64 {
        let whole = bytes.saturating_mul(self.ticks);
        if self.fs == 0 {
            return whole;
        }
        let fs = u128::from(bytes) * u128::from(self.fs) + u128::from(FS_PER_TICK / 2);
        let part = u64::try_from(fs / u128::from(FS_PER_TICK)).unwrap_or(u64::MAX);
        whole.saturating_add(part)
    }
}

/// Femtoseconds per tick.
pub const FS_PER_TICK: u64 = 1000;

/// The largest `G` or `O`, in seconds per byte (its femtoseconds fit 64 bits).
pub const MAX_PER_BYTE: f64 = 1e4;

/// How far a parameter may lie from the whole number of its unit it is kept as: one part in a
/// million (a decimal value's binary rounding is some 10^-16 of it).
const KEPT_WITHIN: f64 = 1e-6;

impl Endpoints {
    /// The parameters `p` (in seconds): `L`, `o` and `g` in whole picoseconds, `G` and `O` in
    /// whole femtoseconds per byte, each refused (with the parameter's name and what to write)
    /// when it is negative, not finite, beyond 10^6 seconds (`G` and `O`: [`MAX_PER_BYTE`]), or
    /// not within one part in a million of a whole number of its unit.
    pub fn from_seconds(p: &LogGp) -> Result<Endpoints, Vec<(&'static str, String)>> {
        let mut found = Vec::new();
        let mut kept = |name: &'static str, v: f64, per_second: f64, max: f64, unit: &str| {
            if !v.is_finite() || !(0.0..=max).contains(&v) {
                found.push((
                    name,
                    format!("must be a time in seconds from 0 to {max:e}, got {v}"),
                ));
                return 0;
            }
            let x = v * per_second;
            let whole = x.round();
            if (x - whole).abs() > KEPT_WITHIN * whole.max(1.0) {
                found.push((
                    name,
                    format!(
                        "{v} s is {x} {unit}, and parsim keeps {name} in whole {unit}: give it to the {} (e.g. {:e})",
                        unit.trim_end_matches('s'),
                        whole.max(1.0) / per_second
                    ),
                ));
                return 0;
            }
            whole as u64
        };
        let fs = TICKS_PER_SECOND * FS_PER_TICK as f64;
        let e = Endpoints {
            l: kept("L", p.l, TICKS_PER_SECOND, 1e6, "picoseconds"),
            o: kept("o", p.o, TICKS_PER_SECOND, 1e6, "picoseconds"),
            g: kept("g", p.g, TICKS_PER_SECOND, 1e6, "picoseconds"),
            big_g: PerByte::from_fs(kept("G", p.big_g, fs, MAX_PER_BYTE, "femtoseconds")),
            big_o: PerByte::from_fs(kept("O", p.big_o, fs, MAX_PER_BYTE, "femtoseconds")),
            s: p.s,
        };
        if found.is_empty() { Ok(e) } else { Err(found) }
    }

    /// `base + (size - 1) per_byte`, with LogGOPSim's `size = 0` (`base - per_byte`, at least 0)
    /// and saturating at `u64::MAX`.
    #[inline(always)]
    fn cost(base: u64, size: u64, per_byte: PerByte) -> u64 {
        if size == 0 {
            base.saturating_sub(per_byte.of(1))
        } else {
            base.saturating_add(per_byte.of(size - 1))
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
            let smaller = match (self.big_o.fs(), self.big_g.fs()) {
                (0, _) => self.big_g,
                (_, 0) => self.big_o,
                _ => self.big_o.min(self.big_g),
            };
            return self.o.saturating_sub(smaller.of(1));
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
    /// The GOAL file the graph was read from, if it was, and the digest (XXH3) of what it
    /// held: a fault names the statements the user wrote by its lines, if it still holds that.
    pub goal_file: Option<(std::path::PathBuf, u64)>,
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
            Form::Program(p) => lower::deterministic(p),
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
            (e.l, e.o, e.g, e.big_g.fs(), e.big_o.fs(), e.s),
            (2_500_000, 1_500_000, 1_000_000, 6_000_000, 0, 65535)
        );
        assert_eq!(e.send_cpu(1), 1_500_000);
        assert_eq!(e.nic(1000), 1_000_000 + 999 * 6000);
        assert_eq!(e.recv_cpu(0), 1_494_000, "LogGOPSim's wrap-around: o - G");
        assert_eq!(e.nic(0), 994_000);
        let e = Endpoints::from_seconds(&LogGp {
            l: -1.0,
            big_g: f64::NAN,
            ..LogGp::LOGGOPSIM
        })
        .unwrap_err();
        assert_eq!(e.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["L", "G"]);
    }

    /// Per-byte costs below a picosecond are kept: 2.4 ps and 0.4 ps per byte cost what they
    /// say over a whole message (rounding per byte made them 2 ps, -17%, and 0, free).
    #[test]
    fn per_byte_costs_are_kept_in_femtoseconds() {
        for (big_g, bytes, ticks) in [
            (2.4e-12, 1_000_001, 2_400_000),
            (0.4e-12, 1 << 30, 429_496_729),
            (0.4e-12, 2, 0),
            (0.4e-12, 3, 1),
            (6e-9, 1 << 20, 6 * ((1 << 20) - 1) * 1000),
        ] {
            let e = Endpoints::from_seconds(&LogGp {
                big_g,
                g: 0.0,
                ..LogGp::LOGGOPSIM
            })
            .unwrap();
            assert_eq!(e.nic(bytes), ticks, "G = {big_g}, {bytes} bytes");
        }
        // a gigabyte at 0.4 ps a byte is 0.43 ms, not free
        let e = Endpoints::from_seconds(&LogGp {
            big_g: 0.4e-12,
            ..LogGp::LOGGOPSIM
        })
        .unwrap();
        assert!(e.nic(1 << 30) > 400_000_000);
        // the largest sizes saturate rather than wrap
        let e = Endpoints::from_seconds(&LogGp {
            big_g: 1e4,
            ..LogGp::LOGGOPSIM
        })
        .unwrap();
        assert_eq!(e.nic(u64::MAX), u64::MAX);
    }

    /// What the units cannot hold within one part in a million is refused, with what to write.
    #[test]
    fn parameters_finer_than_their_unit_are_refused() {
        for (p, name) in [
            (
                LogGp {
                    big_g: 1e-17,
                    ..LogGp::LOGGOPSIM
                },
                "G",
            ),
            (
                LogGp {
                    o: 0.4e-12,
                    ..LogGp::LOGGOPSIM
                },
                "o",
            ),
            (
                LogGp {
                    big_g: 1e5,
                    ..LogGp::LOGGOPSIM
                },
                "G",
            ),
        ] {
            let e = Endpoints::from_seconds(&p).unwrap_err();
            assert_eq!(e.len(), 1, "{e:?}");
            assert_eq!(e[0].0, name, "{e:?}");
        }
        // a sweep's value of L, 1.1111111e-6 s, is within a millionth of 1,111,111 ps
        let e = Endpoints::from_seconds(&LogGp {
            l: 1.1111111e-6,
            ..LogGp::LOGGOPSIM
        })
        .unwrap();
        assert_eq!(e.l, 1_111_111);
    }
}
