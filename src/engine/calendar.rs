//! The event calendar.
//!
//! A binary min-heap of `(time, seq, event)`, generic over the event type
//! ([`CalendarEvent`]: the queueing engine's events, the rank programs' events) and the time
//! type ([`CalendarTime`]: 64-bit [`SimTime`] ticks or the programs' 128-bit ticks; either way
//! the key with the sequence number is one `u128`, compared in one go). `seq` is a counter incremented at every
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
use std::collections::{BinaryHeap, VecDeque};
use std::marker::PhantomData;

use crate::time::SimTime;

/// An event the calendar can hold: packed into a small tag and a 64-bit payload.
pub trait CalendarEvent: Copy {
    /// Bits the tag needs (the sequence number keeps the rest of its word).
    const TAG_BITS: u32;
    /// The event as (tag, payload), `tag < 2^TAG_BITS`.
    fn encode(self) -> (u64, u64);
    /// The event back from [`CalendarEvent::encode`]'s output.
    fn decode(tag: u64, payload: u64) -> Self;
}

/// A time the calendar orders by: with the scheduling sequence number, one ordered key.
pub trait CalendarTime: Copy {
    /// `(time, seq)` as something compared in one go.
    type Key: Ord + Copy + std::fmt::Debug;
    /// The key of this time and a sequence word.
    fn key(self, seq: u64) -> Self::Key;
    /// The time back from its key.
    fn from_key(key: Self::Key) -> Self;
    /// The sequence word back from its key.
    fn seq(key: Self::Key) -> u64;
}

impl CalendarTime for SimTime {
    /// One 128-bit integer: a single comparison.
    type Key = u128;

    #[inline(always)]
    fn key(self, seq: u64) -> u128 {
        (u128::from(self.ticks()) << 64) | u128::from(seq)
    }

    #[inline(always)]
    fn from_key(key: u128) -> SimTime {
        SimTime::from_ticks((key >> 64) as u64)
    }

    #[inline(always)]
    fn seq(key: u128) -> u64 {
        key as u64
    }
}

/// Bits of a wide (128-bit) calendar key given to the sequence word: times below
/// `2^(128 - WIDE_SEQ_BITS)` ticks and sequence words below `2^WIDE_SEQ_BITS` share one `u128`,
/// compared in one go. The rank-program engine checks both limits
/// ([`crate::program::ProgramFault::Horizon`]).
pub const WIDE_SEQ_BITS: u32 = 44;

impl CalendarTime for u128 {
    /// Wide ticks (rank programs) above, the sequence word below.
    type Key = u128;

    #[inline(always)]
    fn key(self, seq: u64) -> u128 {
        debug_assert!(self < 1 << (128 - WIDE_SEQ_BITS) && seq < 1 << WIDE_SEQ_BITS);
        (self << WIDE_SEQ_BITS) | u128::from(seq)
    }

    #[inline(always)]
    fn from_key(key: u128) -> u128 {
        key >> WIDE_SEQ_BITS
    }

    #[inline(always)]
    fn seq(key: u128) -> u64 {
        (key & ((1 << WIDE_SEQ_BITS) - 1)) as u64
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry<K> {
    /// `(time, seq << TAG_BITS | tag)`.
    key: K,
    payload: u64,
}

impl<K: Ord> PartialEq for Entry<K> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<K: Ord> Eq for Entry<K> {}

/// Reversed, so the max-heap pops the earliest `(time, seq)` first. The operators are written
/// out because `BinaryHeap` sifts with `<=`, which would otherwise go through `cmp`.
impl<K: Ord> PartialOrd for Entry<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    #[inline]
    fn lt(&self, other: &Self) -> bool {
        other.key < self.key
    }
    #[inline]
    fn le(&self, other: &Self) -> bool {
        other.key <= self.key
    }
    #[inline]
    fn gt(&self, other: &Self) -> bool {
        other.key > self.key
    }
    #[inline]
    fn ge(&self, other: &Self) -> bool {
        other.key >= self.key
    }
}

impl<K: Ord> Ord for Entry<K> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// The entry of `event` at `time`, taking the next sequence number from `next_seq`.
#[inline(always)]
fn entry<E: CalendarEvent, T: CalendarTime>(
    next_seq: &mut u64,
    time: T,
    event: E,
) -> Entry<T::Key> {
    let seq = *next_seq;
    *next_seq += 1;
    let (tag, payload) = event.encode();
    Entry {
        key: time.key((seq << E::TAG_BITS) | tag),
        payload,
    }
}

/// The time and event an entry holds.
#[inline(always)]
fn open<E: CalendarEvent, T: CalendarTime>(e: Entry<T::Key>) -> (T, E) {
    let tag = T::seq(e.key) & ((1 << E::TAG_BITS) - 1);
    (T::from_key(e.key), E::decode(tag, e.payload))
}

/// A binary heap of entries whose top, once returned, stays in place until the next push
/// overwrites it (one sift instead of a pop and a push: most events schedule a successor) or
/// the next pop removes it.
#[derive(Debug)]
struct Heap<K> {
    entries: BinaryHeap<Entry<K>>,
    /// The top entry was returned and is only waiting to be replaced or removed.
    taken: bool,
}

impl<K: Ord + Copy> Heap<K> {
    fn new() -> Self {
        Heap {
            entries: BinaryHeap::new(),
            taken: false,
        }
    }

    /// Adds `entry`, in place of the returned top if there is one.
    #[inline(always)]
    fn push(&mut self, entry: Entry<K>) {
        if self.taken {
            self.taken = false;
            if let Some(mut top) = self.entries.peek_mut() {
                *top = entry;
                return;
            }
        }
        self.entries.push(entry);
    }

    /// The earliest pending entry, after removing the returned top if there is one.
    #[inline(always)]
    fn top(&mut self) -> Option<Entry<K>> {
        if self.taken {
            self.entries.pop();
            self.taken = false;
        }
        self.entries.peek().copied()
    }

    /// Marks the top (as [`Heap::top`] just gave it) returned.
    #[inline(always)]
    fn take_top(&mut self) {
        self.taken = true;
    }

    /// Pending entries.
    fn len(&self) -> usize {
        self.entries.len() - usize::from(self.taken)
    }
}

/// Pending events ordered by `(time, scheduling order)`.
#[derive(Debug)]
pub struct Calendar<E: CalendarEvent, T: CalendarTime = SimTime> {
    heap: Heap<T::Key>,
    next_seq: u64,
    event: PhantomData<E>,
}

impl<E: CalendarEvent, T: CalendarTime> Default for Calendar<E, T> {
    fn default() -> Self {
        Calendar {
            heap: Heap::new(),
            next_seq: 0,
            event: PhantomData,
        }
    }
}

impl<E: CalendarEvent, T: CalendarTime> Calendar<E, T> {
    /// An empty calendar.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `event` at `time`. `O(log n)`.
    #[inline(always)]
    pub fn schedule(&mut self, time: T, event: E) {
        let e = entry(&mut self.next_seq, time, event);
        self.heap.push(e);
    }

    /// Removes and returns the earliest event (the first scheduled among equal times). `O(log n)`.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(T, E)> {
        let e = self.heap.top()?;
        self.heap.take_top();
        Some(open(e))
    }

    /// Events scheduled since the calendar was made (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A [`Calendar`] of wide (128-bit) times with `LANES` first-in-first-out lanes beside its heap,
/// for the rank-program engine, whose events mostly fall a fixed span after the current time
/// (a message's header reaches the next vertex one hop latency after it entered a free link; a
/// send's startup ends one startup time after it began).
///
/// Events scheduled through [`LaneCalendar::schedule_lane`] at times that never decrease within
/// a lane (as `now + constant` with a clock that never goes back) form a lane already sorted by
/// `(time, seq)`, since the sequence numbers grow too; pushing one costs a `VecDeque` append and
/// popping compares the lanes' fronts with the heap's top. All events share one sequence
/// counter, so the delivery order is exactly that of one heap: the earliest time, the first
/// scheduled among equal times. An event that would break a lane's order goes to the heap.
#[derive(Debug)]
pub struct LaneCalendar<E: CalendarEvent, const LANES: usize> {
    heap: Heap<u128>,
    lanes: [VecDeque<Entry<u128>>; LANES],
    next_seq: u64,
    event: PhantomData<E>,
}

impl<E: CalendarEvent, const LANES: usize> Default for LaneCalendar<E, LANES> {
    fn default() -> Self {
        LaneCalendar {
            heap: Heap::new(),
            lanes: std::array::from_fn(|_| VecDeque::new()),
            next_seq: 0,
            event: PhantomData,
        }
    }
}

impl<E: CalendarEvent, const LANES: usize> LaneCalendar<E, LANES> {
    /// An empty calendar.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `event` at `time` to the heap. `O(log n)`.
    #[inline(always)]
    pub fn schedule(&mut self, time: u128, event: E) {
        let e = entry(&mut self.next_seq, time, event);
        self.heap.push(e);
    }

    /// Adds `event` at `time` to lane `lane`, or to the heap if `time` is earlier than the
    /// lane's last event. `O(1)` in the lane.
    #[inline(always)]
    pub fn schedule_lane(&mut self, lane: usize, time: u128, event: E) {
        let e = entry(&mut self.next_seq, time, event);
        let l = &mut self.lanes[lane];
        match l.back() {
            Some(last) if last.key > e.key => self.heap.push(e),
            _ => l.push_back(e),
        }
    }

    /// Removes and returns the earliest event (the first scheduled among equal times).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u128, E)> {
        // the smallest key among the heap's top and the lanes' fronts (`None`: the heap)
        let top = self.heap.top();
        let mut best = top.map(|e| e.key);
        let mut from = None;
        for (i, l) in self.lanes.iter().enumerate() {
            if let Some(f) = l.front()
                && best.is_none_or(|b| f.key < b)
            {
                best = Some(f.key);
                from = Some(i);
            }
        }
        let e = match from {
            Some(i) => self.lanes[i].pop_front()?,
            None => {
                let e = top?;
                self.heap.take_top();
                e
            }
        };
        Some(open(e))
    }

    /// Events scheduled since the calendar was made (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test event: an arrival from a source, or a job's departure from a station.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Event {
        Arrival { source: u32 },
        Departure { station: u32, job: u32 },
    }

    impl CalendarEvent for Event {
        const TAG_BITS: u32 = 1;

        fn encode(self) -> (u64, u64) {
            match self {
                Event::Arrival { source } => (0, u64::from(source)),
                Event::Departure { station, job } => {
                    (1, (u64::from(station) << 32) | u64::from(job))
                }
            }
        }

        fn decode(tag: u64, p: u64) -> Event {
            match tag {
                0 => Event::Arrival { source: p as u32 },
                _ => Event::Departure {
                    station: (p >> 32) as u32,
                    job: p as u32,
                },
            }
        }
    }

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
    #[test]
    fn lanes_deliver_in_the_heaps_order() {
        // the same random schedule on a plain wide calendar and on one with two lanes (lane 0:
        // now + 3, lane 1: now + a growing-or-not span that sometimes breaks the lane's order)
        let mut plain: Calendar<Event, u128> = Calendar::new();
        let mut laned: LaneCalendar<Event, 2> = LaneCalendar::new();
        let mut x = 7_u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut now = 0_u128;
        let mut job = 0;
        for round in 0..20_000 {
            for _ in 0..next(3) {
                job += 1;
                let ev = Event::Departure { station: 0, job };
                match next(4) {
                    0 => {
                        plain.schedule(now + 3, ev);
                        laned.schedule_lane(0, now + 3, ev);
                    }
                    1 => {
                        let at = now + u128::from(next(6));
                        plain.schedule(at, ev);
                        laned.schedule_lane(1, at, ev);
                    }
                    _ => {
                        let at = now + u128::from(next(9));
                        plain.schedule(at, ev);
                        laned.schedule(at, ev);
                    }
                }
            }
            assert_eq!(plain.len(), laned.len(), "round {round}");
            let (a, b) = (plain.pop(), laned.pop());
            assert_eq!(a, b, "round {round}");
            match a {
                Some((t, _)) => now = t,
                None => break,
            }
        }
        assert_eq!(plain.scheduled(), laned.scheduled());
        while let Some(a) = plain.pop() {
            assert_eq!(Some(a), laned.pop());
        }
        assert!(laned.is_empty());
    }
}
