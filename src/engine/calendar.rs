//! The event calendar.
//!
//! A binary min-heap of `(time, seq, event)`. `seq` is a counter incremented at every
//! [`Calendar::schedule`], so **events at the same time are delivered in the order they were
//! scheduled (FIFO)**: the tie-break never depends on hashing, threads or random draws. Both
//! `schedule` and [`Calendar::pop`] cost `O(log n)` in the number of pending events; the heap
//! keeps its capacity, so a steady state allocates nothing.
//!
//! **Hold.** [`Calendar::pop`] leaves the earliest entry in the heap, marked as taken, and the
//! next [`Calendar::schedule`] overwrites it in place and sifts it down once. An event that
//! schedules one successor (the common case: a departure starting the next service, an arrival
//! scheduling the next arrival) thus costs one sift instead of a pop and a push. The entry is
//! removed for real only if the next call is another `pop`. The delivery order is unchanged:
//! `(time, seq)` keys are unique, so any valid heap yields the same sequence.
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

impl Entry {
    /// `(time, seq)` as one integer, so that a comparison is a single 128-bit compare.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq_tag)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Entry {}

/// Reversed, so the max-heap pops the earliest `(time, seq)` first. The operators are written
/// out because `BinaryHeap` sifts with `<=`, which would otherwise go through `cmp`.
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    #[inline]
    fn lt(&self, other: &Self) -> bool {
        other.key() < self.key()
    }
    #[inline]
    fn le(&self, other: &Self) -> bool {
        other.key() <= self.key()
    }
    #[inline]
    fn gt(&self, other: &Self) -> bool {
        other.key() > self.key()
    }
    #[inline]
    fn ge(&self, other: &Self) -> bool {
        other.key() >= self.key()
    }
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
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
    /// The top entry was returned by `pop` and is only waiting to be replaced or removed.
    taken: bool,
}

impl Calendar {
    /// An empty calendar.
    pub fn new() -> Calendar {
        Calendar::default()
    }

    /// Adds `event` at `time`. `O(log n)`.
    #[inline(always)]
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let (tag, payload) = encode(event);
        let entry = Entry {
            time: time.ticks(),
            seq_tag: (seq << 2) | tag,
            payload,
        };
        if self.taken {
            self.taken = false;
            if let Some(mut top) = self.heap.peek_mut() {
                *top = entry;
                return;
            }
        }
        self.heap.push(entry);
    }

    /// Removes and returns the earliest event (the first scheduled among equal times). `O(log n)`.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        if self.taken {
            self.heap.pop();
            self.taken = false;
        }
        let e = *self.heap.peek()?;
        self.taken = true;
        Some((
            SimTime::from_ticks(e.time),
            decode(e.seq_tag & 3, e.payload),
        ))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.taken)
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: f64) -> SimTime {
        SimTime::from_ticks((v * 1000.0) as u64)
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

    #[test]
    fn interleaved_pops_and_schedules_follow_time_then_order() {
        let mut cal = Calendar::new();
        let mut reference: Vec<(u64, u32)> = Vec::new(); // (time in ticks, job), in scheduling order
        let mut x = 99_u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut now = 0.0;
        for job in 0..5000 {
            // 0, 1 or 2 successors per popped event, times on a coarse grid to force ties
            for _ in 0..next(3) {
                let at = t(now + next(4) as f64);
                cal.schedule(at, Event::Departure { station: 0, job });
                reference.push((at.ticks(), job));
            }
            if job % 7 == 0 {
                cal.schedule(t(now), Event::Departure { station: 1, job });
                reference.push((t(now).ticks(), job + 1_000_000));
            }
            assert_eq!(cal.len(), reference.len());
            let Some((time, event)) = cal.pop() else {
                break;
            };
            // the earliest time, first scheduled among equals
            let best = (0..reference.len())
                .min_by_key(|&i| (reference[i].0, i))
                .unwrap();
            let (key, id) = reference.remove(best);
            let got = match event {
                Event::Departure { station: 0, job } => job,
                Event::Departure { job, .. } => job + 1_000_000,
                other => panic!("unexpected {other:?}"),
            };
            assert_eq!((time.ticks(), got), (key, id));
            now = time.ticks() as f64 / 1000.0;
        }
    }
}
