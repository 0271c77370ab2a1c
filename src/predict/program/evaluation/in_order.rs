//! The walk in time order, whose FCFS links serve each crossing as it comes.
//!
//! The walk runs each rank until it blocks ([`Ready::Fifo`]), an order that does not depend on
//! the durations. Run instead always from the ready rank of the earliest clock, one operation
//! at a time ([`Ready::Timed`]: a conservative discrete-event order, since a rank that waits is
//! woken by a message sent no earlier than its sender's clock), the walk sends its messages in
//! order of time, so the first link of every route is reached in order of arrival and can
//! serve its crossings FCFS as they come ([`FcfsLine`], Lindley's recursion): the timeline of
//! links that serve as the simulator's do, in one walk. A later hop of a route is reached at a
//! time the walk's order does not govern; a crossing that reaches a link before one it served
//! already (earlier, or at the same instant from a lower sender) is out of order, and the walk
//! says so instead of serving it.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Two times closer than this, relative, are one instant (the rounding of sums of times).
const SAME_INSTANT: f64 = 1e-12;

/// The ranks ready to go on.
#[derive(Debug)]
pub(super) enum Ready {
    /// Each in turn, until it blocks.
    Fifo(VecDeque<u32>),
    /// The earliest first, by (clock, rank): keyed by the clock it had when queued, which a
    /// rank woken by a message may have passed since (it is queued again at its own clock).
    Timed(BinaryHeap<Reverse<(u64, u32)>>),
}

impl Ready {
    /// All of `ranks` ready, at clock 0.
    pub(super) fn all(ranks: u32, timed: bool) -> Ready {
        match timed {
            false => Ready::Fifo((0..ranks).collect()),
            true => Ready::Timed((0..ranks).map(|r| Reverse((0, r))).collect()),
        }
    }

    /// Queues rank `r`, whose clock is `clock`.
    pub(super) fn push(&mut self, r: u32, clock: f64) {
        match self {
            Ready::Fifo(q) => q.push_back(r),
            Ready::Timed(h) => h.push(Reverse((key(clock), r))),
        }
    }

    /// The next rank to go on.
    pub(super) fn pop(&mut self) -> Option<u32> {
        match self {
            Ready::Fifo(q) => q.pop_front(),
            Ready::Timed(h) => h.pop().map(|Reverse((_, r))| r),
        }
    }

    /// Whether rank `r`, at `clock`, is to make way for an earlier ready rank before its next
    /// operation (never in turn).
    pub(super) fn makes_way(&self, r: u32, clock: f64) -> bool {
        match self {
            Ready::Fifo(_) => false,
            Ready::Timed(h) => h
                .peek()
                .is_some_and(|&Reverse(first)| first < (key(clock), r)),
        }
    }
}

/// A clock's heap key: the bits of a time that is not negative order as the time does.
fn key(clock: f64) -> u64 {
    clock.max(0.0).to_bits()
}

/// One FCFS link serving its crossings in order of arrival, each after the previous one's
/// transmission (Lindley's recursion), and the first instant at which several arrived together
/// and one of them had to wait.
#[derive(Clone, Debug)]
pub struct FcfsLine {
    /// When the link is free again.
    free: f64,
    /// The last arrival: when, from which sender.
    last: (f64, u32),
    /// The arrivals at the last one's instant: how many, when.
    run: (usize, f64),
    /// The first run of arrivals at one instant of which one waited: how many, when.
    tie: Option<(usize, f64)>,
}

impl Default for FcfsLine {
    fn default() -> FcfsLine {
        FcfsLine {
            free: f64::NEG_INFINITY,
            last: (f64::NEG_INFINITY, 0),
            run: (0, f64::NAN),
            tie: None,
        }
    }
}

impl FcfsLine {
    /// The wait of a crossing from `sender` that reaches the link at `enter` and takes `work`
    /// to transmit; `None`, and nothing served, when it comes out of order (before the last
    /// arrival, or at its instant from a lower sender).
    pub fn arrive(&mut self, enter: f64, sender: u32, work: f64) -> Option<f64> {
        if enter
            .total_cmp(&self.last.0)
            .then(sender.cmp(&self.last.1))
            .is_lt()
        {
            return None;
        }
        self.last = (enter, sender);
        let start = enter.max(self.free);
        self.free = start + work;
        if same_instant(enter, self.run.1) {
            self.run.0 += 1;
        } else {
            self.run = (1, enter);
        }
        if self.run.0 > 1 && work > 0.0 && self.tie.is_none_or(|t| t.1 == self.run.1) {
            self.tie = Some(self.run);
        }
        Some(start - enter)
    }

    /// The first instant at which several crossings arrived together and one of them had to
    /// wait: how many arrived then, and when.
    pub fn tie(&self) -> Option<(usize, f64)> {
        self.tie
    }
}

/// True when `a` and `b` are one instant (see [`SAME_INSTANT`]).
fn same_instant(a: f64, b: f64) -> bool {
    (a - b).abs() <= SAME_INSTANT * a.abs().max(b.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_queue_gives_the_earliest_rank_first_and_a_later_one_makes_way() {
        let mut q = Ready::all(3, true);
        assert_eq!(q.pop(), Some(0));
        q.push(0, 2.0);
        assert_eq!(q.pop(), Some(1));
        // rank 1 at 1.0 goes on ahead of rank 2 (at 0) only once rank 2 has gone
        assert!(q.makes_way(1, 1.0));
        assert_eq!(q.pop(), Some(2));
        assert!(!q.makes_way(1, 1.0));
        assert!(q.makes_way(1, 3.0));
        // in turn, nobody makes way
        assert!(!Ready::all(3, false).makes_way(2, 9.0));
    }

    #[test]
    fn a_line_refuses_an_arrival_out_of_order_and_keeps_its_service() {
        let mut l = FcfsLine::default();
        assert_eq!(l.arrive(2.0, 1, 1.0), Some(0.0));
        assert_eq!(l.arrive(2.0, 0, 1.0), None);
        assert_eq!(l.arrive(1.5, 3, 1.0), None);
        assert_eq!(l.arrive(2.0, 1, 1.0), Some(1.0));
        assert_eq!(l.arrive(2.0, 4, 1.0), Some(2.0));
        assert_eq!(l.tie(), Some((3, 2.0)));
    }
}
