//! The event calendar.
//!
//! A binary min-heap of `(time, seq, event)`. `seq` is a counter incremented at every
//! [`Calendar::schedule`], so **events at the same time are delivered in the order they were
//! scheduled (FIFO)**: the tie-break never depends on hashing, threads or random draws. Both
//! `schedule` and [`Calendar::pop`] cost `O(log n)` in the number of pending events; the heap
//! keeps its capacity, so a steady state allocates nothing.
//!
//! `std::collections::BinaryHeap` was chosen over the `priority-queue` crate by measurement
//! (`cargo bench --bench engine -- calendar`): the calendar never changes a priority in place,
//! which is what `priority-queue` is for, and the plain heap is about twice as fast.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::event::Event;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    /// `seq << 2 | tag`.
    seq_tag: u64,
    payload: u64,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq_tag) == (other.time, other.seq_tag)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest `(time, seq)` first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq_tag).cmp(&(self.time, self.seq_tag))
    }
}

#[inline]
fn encode(e: Event) -> (u64, u64) {
    match e {
        Event::Arrival { source } => (0, u64::from(source)),
        Event::Departure { station, job } => (1, (u64::from(station) << 32) | u64::from(job)),
        Event::PsDeparture {
            station,
            generation,
        } => (2, (u64::from(station) << 32) | u64::from(generation)),
    }
}

#[inline]
fn decode(tag: u64, p: u64) -> Event {
    let (hi, lo) = ((p >> 32) as u32, p as u32);
    match tag {
        0 => Event::Arrival { source: lo },
        1 => Event::Departure {
            station: hi,
            job: lo,
        },
        _ => Event::PsDeparture {
            station: hi,
            generation: lo,
        },
    }
}

/// Pending events ordered by `(time, scheduling order)`.
#[derive(Debug, Default)]
pub struct Calendar {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl Calendar {
    /// An empty calendar.
    pub fn new() -> Calendar {
        Calendar::default()
    }

    /// Adds `event` at `time`. `O(log n)`.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let (tag, payload) = encode(event);
        self.heap.push(Entry {
            time: time.key(),
            seq_tag: (seq << 2) | tag,
            payload,
        });
    }

    /// Removes and returns the earliest event (the first scheduled among equal times). `O(log n)`.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.heap
            .pop()
            .map(|e| (SimTime::from_key(e.time), decode(e.seq_tag & 3, e.payload)))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: f64) -> SimTime {
        SimTime::new(v).unwrap()
    }

    #[test]
    fn equal_times_pop_in_scheduling_order() {
        let mut cal = Calendar::new();
        for job in 0..100 {
            cal.schedule(t(1.0), Event::Departure { station: 0, job });
        }
        cal.schedule(t(0.5), Event::Arrival { source: 7 });
        assert_eq!(cal.pop().unwrap().1, Event::Arrival { source: 7 });
        for job in 0..100 {
            assert_eq!(cal.pop().unwrap().1, Event::Departure { station: 0, job });
        }
        assert!(cal.is_empty());
    }

    #[test]
    fn pops_never_go_back_in_time() {
        let mut cal = Calendar::new();
        let mut x = 12345_u64;
        for i in 0..1000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            cal.schedule(t((x >> 40) as f64 / 1000.0), Event::Arrival { source: i });
        }
        let mut last = SimTime::ZERO;
        while let Some((time, _)) = cal.pop() {
            assert!(time >= last);
            last = time;
        }
    }
}
