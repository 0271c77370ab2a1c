//! The distribution of message delays in the contention-free evaluation
//! ([`super::evaluation`]): a fixed delay counted by its clock tick, a delay `a + b X` of a message
//! whose size `X` is drawn from its operation's distribution counted by that operation and
//! `(a, b)`. Its 99th percentile is the simulator's order statistic counted in the simulator's
//! histogram when every delay is fixed, and the mixture's quantile otherwise.

use std::hash::Hash;

use rustc_hash::FxHashMap;

use crate::program::{Instr, Program, Size};
use crate::stats::Percentiles;

/// Delays, fixed and size-dependent.
#[derive(Debug, Default)]
pub struct Delays {
    /// Fixed delays: clock ticks and how many.
    fixed: FxHashMap<u128, u64>,
    /// Random-size delays `a + b X`: (operation index, `a` bits, `b` bits) and how many.
    linear: FxHashMap<(u32, u64, u64), u64>,
    total: u64,
}

impl Delays {
    /// Counts a fixed delay of `ticks` clock ticks.
    pub fn fixed(&mut self, ticks: u128) {
        *self.fixed.entry(ticks).or_default() += 1;
        self.total += 1;
    }

    /// Counts a delay `a + b X`, `X` the size drawn by operation `op`.
    pub fn linear(&mut self, op: u32, a: f64, b: f64) {
        *self
            .linear
            .entry((op, a.to_bits(), b.to_bits()))
            .or_default() += 1;
        self.total += 1;
    }

    /// Extends these delays, a walk's, by `left` more iterations of a loop whose last `k` are
    /// what they counted beyond `short`'s (the same walk `k` iterations shorter): each count
    /// grows by `left / k` times its growth from `short`. `None` when the growth does not
    /// repeat (a count fell, or its growth times `left` is not a multiple of `k`); these delays
    /// are then partly extended, to be dropped.
    pub fn extend(&mut self, short: &Delays, left: u64, k: u64) -> Option<()> {
        self.total += grow(&mut self.fixed, &short.fixed, left, k)?;
        self.total += grow(&mut self.linear, &short.linear, left, k)?;
        Some(())
    }

    /// The `q` quantile as the simulator reports it (`NaN` without delays): with every delay
    /// fixed, the order statistic the simulator's histogram (`scale` as its) finds, in its
    /// unit; otherwise the quantile of the mixture, by bisection.
    pub fn quantile(&self, prog: &Program, scale: f64, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        if self.linear.is_empty() {
            let mut ticks: Vec<(u128, u64)> = self.fixed.iter().map(|(&t, &n)| (t, n)).collect();
            ticks.sort_unstable();
            let target = ((q * self.total as f64).ceil() as u64).max(1);
            let mut running = 0;
            let at = ticks
                .iter()
                .find(|&&(_, n)| {
                    running += n;
                    running >= target
                })
                .map_or(0, |&(t, _)| t);
            let mut h = Percentiles::wide(&prog.clock, scale);
            h.record_wide(at);
            return h.quantiles([q])[0];
        }
        let (mut lo, mut hi) = (0.0, self.largest_fixed(prog).max(f64::MIN_POSITIVE));
        let mut grow = 0;
        while self.cdf(prog, hi) < q && grow < 200 {
            (lo, hi) = (hi, 2.0 * hi);
            grow += 1;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.cdf(prog, mid) >= q {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }

    fn largest_fixed(&self, prog: &Program) -> f64 {
        let most = self.fixed.keys().copied().max().unwrap_or(0);
        prog.clock.wide_span(most)
            + self
                .linear
                .keys()
                .map(|&(_, a, _)| f64::from_bits(a))
                .fold(0.0, f64::max)
    }

    /// The fraction of delays at most `t`.
    fn cdf(&self, prog: &Program, t: f64) -> f64 {
        let fixed: u64 = self
            .fixed
            .iter()
            .filter(|&(&k, _)| prog.clock.wide_span(k) <= t)
            .map(|(_, &n)| n)
            .sum();
        let linear: f64 = self
            .linear
            .iter()
            .map(|(&(op, a, b), &n)| {
                let (a, b) = (f64::from_bits(a), f64::from_bits(b));
                let p = match size_of(prog, op) {
                    Some(d) if b > 0.0 => d.cdf((t - a) / b),
                    _ => f64::from(u8::from(a <= t)),
                };
                n as f64 * p
            })
            .sum();
        (fixed as f64 + linear) / self.total as f64
    }
}

/// Grows each count of `long` by `left / k` times its growth from `short` (see
/// [`Delays::extend`]); the counts added, or `None` when a growth does not repeat.
fn grow<K: Eq + Hash>(
    long: &mut FxHashMap<K, u64>,
    short: &FxHashMap<K, u64>,
    left: u64,
    k: u64,
) -> Option<u64> {
    if short.keys().any(|key| !long.contains_key(key)) {
        return None;
    }
    let mut added = 0;
    for (key, n) in long.iter_mut() {
        let grown = grown(*n, short.get(key).copied().unwrap_or(0), left, k)?;
        added += grown - *n;
        *n = grown;
    }
    Some(added)
}

/// A count of a walk, `long`, grown by `left / k` times its growth from `short` (the same walk
/// `k` iterations of a loop shorter): `None` when it fell, or when its growth times `left` is
/// not a multiple of `k`.
pub(super) fn grown(long: u64, short: u64, left: u64, k: u64) -> Option<u64> {
    let more = long.checked_sub(short)? * left;
    more.is_multiple_of(k).then_some(long + more / k)
}

/// The size distribution of operation `op`, if it draws one.
fn size_of(prog: &Program, op: u32) -> Option<&crate::dist::Dist> {
    match prog.code.get(op as usize)? {
        Instr::Send {
            bytes: Size::Random(d),
            ..
        }
        | Instr::SendRecv {
            bytes: Size::Random(d),
            ..
        }
        | Instr::Io {
            bytes: Size::Random(d),
            ..
        } => Some(d),
        _ => None,
    }
}
