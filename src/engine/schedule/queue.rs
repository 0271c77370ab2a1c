//! The executor's pending events, popped in `(time, stamp)` order: a radix heap on the time
//! while no event is scheduled before the last one popped (always, with one CPU and one NIC per
//! rank), a binary heap from the first event that is (LogGOPSim times an operation released on
//! another CPU from that CPU's own free time, which may lie in the past).
//!
//! The radix heap (Ahuja, Mehlhorn, Orlin and Tarjan) keeps the events in 65 buckets by the
//! highest bit in which their time differs from the last time popped; bucket 0 holds the events
//! at that very time, in stamp order. Pushing is an append. Popping takes bucket 0's front; when
//! it is empty, the first non-empty bucket is emptied into the lower ones around its smallest
//! time, the events at that time sorted by stamp. An event moves down at most 64 times, usually
//! a few, and every access is sequential: at a million pending events it is several times
//! faster than a binary heap, whose every pop walks 20 cache lines.
//!
//! Events that become due at the current time after bucket 0 was sorted come with fresh (larger)
//! stamps, so appending keeps the order; an event put back because its resources are busy
//! keeps its stamp and goes to a later time, except the stand-in of waiting events whose
//! first waiter took no time (the executor's `parks`): due now with an old stamp, it is put in
//! its place in bucket 0 ([`Queue::push_old`]).
//!
//! Beside the radix heap, [`LANES`] first-in-first-out lanes take the events that are always
//! scheduled a fixed time after the current one (a message's arrival `o + L` after its send
//! without links, a header's first hop `o` after its send): with fresh stamps they come in
//! `(time, stamp)` order, so a lane is a queue that never sorts, and a pop takes the least of
//! the heap's next event and the lanes' fronts. The order is exactly one heap's. When the
//! heap's least events lie beyond a lane's front, the heap's reference time moves up to that
//! front (its first non-empty bucket is redistributed around it), so that the events scheduled
//! from the front's time on are never in the heap's past.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// One pending event: 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ev {
    /// When.
    pub time: u64,
    /// Its order among events at the same time.
    pub stamp: u32,
    /// What (the executor's encoding).
    pub id: u32,
}

impl Ord for Ev {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        // reversed: the max-heap yields the earliest (time, stamp)
        (other.time, other.stamp).cmp(&(self.time, self.stamp))
    }
}

impl PartialOrd for Ev {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Pending events.
#[derive(Debug)]
pub enum Queue {
    /// While times never go back.
    Radix(Box<Radix>),
    /// Once they did.
    Binary(BinaryHeap<Ev>),
}

impl Default for Queue {
    fn default() -> Self {
        Queue::Radix(Box::default())
    }
}

/// Where a radix heap's next event is.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// At a lane's front.
    Lane(usize),
    /// At `now[head]`.
    Heap,
    /// Nowhere: nothing is pending.
    Nothing,
}

/// The most events an emptied bucket keeps room for (64 KiB); a larger bucket is freed.
const KEPT_CAPACITY: usize = 4096;

/// First-in-first-out lanes beside the radix heap.
pub const LANES: usize = 2;

/// The radix heap, with its lanes.
#[derive(Debug)]
pub struct Radix {
    last: u64,
    /// Bucket 0's events in stamp order, from `head` on.
    now: Vec<Ev>,
    head: usize,
    buckets: [Vec<Ev>; 64],
    /// Each bucket's least time (`u64::MAX` when it is empty).
    least: [u64; 64],
    /// Bit `b` set: bucket `b` holds events.
    filled: u64,
    lanes: [VecDeque<Ev>; LANES],
}

impl Default for Radix {
    fn default() -> Self {
        Radix {
            last: 0,
            now: Vec::new(),
            head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            least: [u64::MAX; 64],
            filled: 0,
            lanes: std::array::from_fn(|_| VecDeque::new()),
        }
    }
}

impl Radix {
    #[inline(always)]
    fn bucket(&self, time: u64) -> usize {
        (64 - (time ^ self.last).leading_zeros()) as usize
    }

    #[inline(always)]
    fn push(&mut self, e: Ev) {
        let b = self.bucket(e.time);
        if b == 0 {
            self.now.push(e);
        } else {
            self.buckets[b - 1].push(e);
            self.least[b - 1] = self.least[b - 1].min(e.time);
            self.filled |= 1 << (b - 1);
        }
    }

    /// Puts `e`, due at the current time with a stamp that may be older than bucket 0's, in
    /// its place in bucket 0: just before the events with later stamps (the room before
    /// `head`, where the events popped were, takes the shift when there is some: the events
    /// before it are few, since its stamp is old).
    fn insert_now(&mut self, e: Ev) {
        let pos = self.head + self.now[self.head..].partition_point(|x| x.stamp < e.stamp);
        if self.head > 0 {
            self.now.copy_within(self.head..pos, self.head - 1);
            self.head -= 1;
            self.now[pos - 1] = e;
        } else {
            self.now.insert(pos, e);
        }
    }

    /// The lane whose front comes first, if any lane holds an event.
    #[inline(always)]
    fn first_lane(&self) -> Option<usize> {
        let mut best: Option<(usize, (u64, u32))> = None;
        for (k, lane) in self.lanes.iter().enumerate() {
            if let Some(f) = lane.front()
                && best.is_none_or(|(_, key)| (f.time, f.stamp) < key)
            {
                best = Some((k, (f.time, f.stamp)));
            }
        }
        best.map(|(k, _)| k)
    }

    /// Where the next event is, after refilling bucket 0 if need be.
    #[inline(always)]
    fn next_source(&mut self) -> Source {
        let lane = self.first_lane();
        if self.head == self.now.len() {
            let front = lane.and_then(|k| self.lanes[k].front()).map(|f| f.time);
            if !self.refill(front) {
                // the heap is empty, or a lane's front comes before all of its events
                return lane.map_or(Source::Nothing, Source::Lane);
            }
        }
        let e = self.now[self.head];
        match lane {
            Some(k)
                if self.lanes[k]
                    .front()
                    .is_some_and(|f| (f.time, f.stamp) < (e.time, e.stamp)) =>
            {
                Source::Lane(k)
            }
            _ => Source::Heap,
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Ev> {
        match self.next_source() {
            Source::Lane(k) => self.lanes[k].pop_front(),
            Source::Heap => {
                self.head += 1;
                Some(self.now[self.head - 1])
            }
            Source::Nothing => None,
        }
    }

    #[inline(always)]
    fn peek(&mut self) -> Option<Ev> {
        match self.next_source() {
            Source::Lane(k) => self.lanes[k].front().copied(),
            Source::Heap => Some(self.now[self.head]),
            Source::Nothing => None,
        }
    }

    /// [`Queue::peek_key_from`].
    #[inline(always)]
    fn peek_from(&mut self, time: u64) -> Option<(u64, u32)> {
        if self.head == self.now.len() {
            let lane = self
                .first_lane()
                .and_then(|k| self.lanes[k].front())
                .map(|f| (f.time, f.stamp));
            let before = lane.map_or(time, |(t, _)| t.min(time));
            if !self.refill(Some(before)) {
                // the heap is empty, or its events all come after `before`: its least time
                // is in its first non-empty bucket
                let heap = (self.filled != 0)
                    .then(|| (self.least[self.filled.trailing_zeros() as usize], 0));
                return match (lane, heap) {
                    (Some(l), Some(h)) => Some(l.min(h)),
                    (l, h) => l.or(h),
                };
            }
        }
        self.peek().map(|e| (e.time, e.stamp))
    }

    /// Moves the events at the heap's next time into bucket 0, sorted by stamp: `true`.
    /// `false` when the heap is empty, or when a lane's front at `before` comes before all of
    /// the heap's events: then the reference time moves up to `before` only (so that what is
    /// scheduled from then on is not in the heap's past), bucket 0 left empty.
    #[cold]
    fn refill(&mut self, before: Option<u64>) -> bool {
        self.now.clear();
        self.head = 0;
        if self.filled == 0 {
            return false;
        }
        let b = self.filled.trailing_zeros() as usize;
        let least = self.least[b];
        let early = before.filter(|&t| t < least);
        if let Some(t) = early {
            // any time from the reference to the least one shares the bits above bucket b's
            // with the reference, so the higher buckets keep their events; bucket b's move
            // only if `t` also shares its bit (with them), else they stay
            let stay = (t ^ self.last) >> b == 0;
            self.last = t;
            if stay {
                return false;
            }
        } else {
            self.last = least;
        }
        let mut moving = std::mem::take(&mut self.buckets[b]);
        self.least[b] = u64::MAX;
        self.filled &= !(1 << b);
        for &e in &moving {
            self.push(e);
        }
        // keep the emptied bucket's capacity unless it is large: the buckets' capacities
        // would otherwise add up to several times the most events ever pending
        if moving.capacity() <= KEPT_CAPACITY {
            moving.clear();
            self.buckets[b] = moving;
        }
        self.now.sort_unstable_by_key(|e| e.stamp);
        early.is_none()
    }

    fn drain(&mut self) -> Vec<Ev> {
        let mut all: Vec<Ev> = self.now.drain(self.head..).collect();
        for b in &mut self.buckets {
            all.append(b);
        }
        for lane in &mut self.lanes {
            all.extend(lane.drain(..));
        }
        self.least = [u64::MAX; 64];
        self.filled = 0;
        self.now.clear();
        self.head = 0;
        all
    }
}

impl Queue {
    /// Adds an event.
    #[inline(always)]
    pub fn push(&mut self, e: Ev) {
        match self {
            Queue::Radix(r) => {
                if e.time < r.last {
                    let all = r.drain();
                    let mut heap = BinaryHeap::from(all);
                    heap.push(e);
                    *self = Queue::Binary(heap);
                } else {
                    r.push(e);
                }
            }
            Queue::Binary(h) => h.push(e),
        }
    }

    /// Adds an event that keeps an old stamp, due at or after the current time: at the current
    /// time, in its place among the events due then.
    pub fn push_old(&mut self, e: Ev) {
        match self {
            Queue::Radix(r) if e.time == r.last => r.insert_now(e),
            _ => self.push(e),
        }
    }

    /// Adds an event to lane `lane`, whose events the caller schedules in `(time, stamp)`
    /// order (always the same time after the current one, with fresh stamps).
    #[inline(always)]
    pub fn push_lane(&mut self, lane: usize, e: Ev) {
        match self {
            Queue::Radix(r) if e.time >= r.last => {
                debug_assert!(
                    r.lanes[lane]
                        .back()
                        .is_none_or(|b| (b.time, b.stamp) < (e.time, e.stamp)),
                    "a lane's events come in order"
                );
                r.lanes[lane].push_back(e);
            }
            _ => self.push(e),
        }
    }

    /// Removes the earliest event (the smallest stamp among equal times).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Ev> {
        match self {
            Queue::Radix(r) => r.pop(),
            Queue::Binary(h) => h.pop(),
        }
    }

    /// The next event's `(time, stamp)`, without removing it, for a caller about to process
    /// events of its own from `time` on (which may schedule events from `time` on): the radix
    /// heap's reference time is not moved past `time`, so that those events are not in its
    /// past. When every event of the heap comes after `time` and none of the lanes' does
    /// first, the key is `(t, 0)` with `t` the heap's least time, which may come before the
    /// next event's own key but, like it, after every event at `time`.
    #[inline(always)]
    pub fn peek_key_from(&mut self, time: u64) -> Option<(u64, u32)> {
        match self {
            Queue::Radix(r) => r.peek_from(time),
            Queue::Binary(h) => h.peek().map(|e| (e.time, e.stamp)),
        }
    }

    /// `true` while times never went back (the radix heap, with its lanes).
    #[inline(always)]
    pub fn is_radix(&self) -> bool {
        matches!(self, Queue::Radix(_))
    }

    /// The event `k` places after the heap's next one, if the radix heap knows it without work
    /// (it is among the events at the current time): popped after the next `k` unless lane
    /// events come between (a hint for loading memory early).
    #[inline(always)]
    pub fn ahead(&self, k: usize) -> Option<Ev> {
        match self {
            Queue::Radix(r) => r.now.get(r.head + k).copied(),
            Queue::Binary(_) => None,
        }
    }

    /// The event `k` places after lane `lane`'s front, if there is one (a hint likewise).
    #[inline(always)]
    pub fn lane_ahead(&self, lane: usize, k: usize) -> Option<Ev> {
        match self {
            Queue::Radix(r) => r.lanes[lane].get(k).copied(),
            Queue::Binary(_) => None,
        }
    }

    /// Turns the queue into a binary heap of the same events (as when a time goes back): a
    /// reference for the radix heap and the lanes.
    #[cfg(test)]
    pub fn make_binary(&mut self) {
        *self = Queue::Binary(BinaryHeap::from(self.drain()));
    }

    /// Every pending event, removed, in no particular order.
    pub fn drain(&mut self) -> Vec<Ev> {
        match self {
            Queue::Radix(r) => r.drain(),
            Queue::Binary(h) => std::mem::take(h).into_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pop (and every peek before it) is the one a binary heap holding every event gives:
    /// events pushed to the heap at and after the current time, requeued with old stamps, to
    /// lanes a fixed time ahead (two lanes, one with a lag longer than the heap's spread), and,
    /// in the second pass, once in the past (the radix heap then becomes a binary heap).
    #[test]
    fn peeking_from_a_time_leaves_the_heap_radix_for_what_is_scheduled_from_then_on() {
        let mut q = Queue::default();
        q.push(Ev {
            time: 1000,
            stamp: 5,
            id: 0,
        });
        // a caller about to process its own events at time 10 learns that the heap's come
        // after them (its least time, stamp 0: before the event's own key)...
        assert_eq!(q.peek_key_from(10), Some((1000, 0)));
        // ...and may then schedule from 10 on without the heap taking it for the past
        q.push(Ev {
            time: 20,
            stamp: 6,
            id: 1,
        });
        assert!(q.is_radix());
        assert_eq!(q.peek_key_from(u64::MAX), Some((20, 6)));
        assert_eq!(q.pop().map(|e| e.id), Some(1));
        assert_eq!(q.pop().map(|e| e.id), Some(0));
        assert_eq!(q.peek_key_from(0), None);
    }

    #[test]
    fn pops_as_one_binary_heap_does_with_lanes_requeues_and_a_time_in_the_past() {
        let mut next = crate::rng::xorshift(4242_u64);
        let (mut lane_pops, mut in_lanes) = (0, std::collections::HashSet::new());
        for past in [false, true] {
            in_lanes.clear();
            let mut q = Queue::default();
            let mut h = BinaryHeap::new();
            let (mut stamp, mut now, mut popped) = (0_u32, 0_u64, None);
            let lag = [700_u64, 1 << 20];
            for round in 0..20_000 {
                for _ in 0..(next() % 4) {
                    let r = next() % 10;
                    if r == 9 {
                        // the event just popped, put back later with its stamp
                        if let Some(p) = popped.take() {
                            let e = Ev {
                                time: now + 1 + next() % 5000,
                                ..p
                            };
                            q.push(e);
                            h.push(e);
                        }
                        continue;
                    }
                    let e = Ev {
                        time: match r {
                            0..=2 => now + lag[r as usize / 2],
                            3 => now,
                            _ => now + next() % 5000,
                        },
                        stamp,
                        id: stamp,
                    };
                    stamp += 1;
                    if r <= 2 {
                        q.push_lane(r as usize / 2, e);
                        in_lanes.insert(e.id);
                    } else {
                        q.push(e);
                    }
                    h.push(e);
                }
                if past && round == 10_000 {
                    let e = Ev {
                        time: now / 2,
                        stamp,
                        id: stamp,
                    };
                    stamp += 1;
                    q.push(e);
                    h.push(e);
                }
                let key = h.peek().map(|e| (e.time, e.stamp));
                assert_eq!(q.peek_key_from(u64::MAX), key, "round {round}");
                let (a, b) = (q.pop(), h.pop());
                assert_eq!(a, b, "round {round}");
                if let Some(e) = a {
                    now = e.time;
                    popped = Some(e);
                    lane_pops += usize::from(in_lanes.contains(&e.id));
                }
            }
            while let Some(e) = h.pop() {
                assert_eq!(q.pop(), Some(e));
            }
            assert!(q.pop().is_none());
            assert_eq!(matches!(q, Queue::Binary(_)), past);
        }
        assert!(lane_pops > 10_000, "{lane_pops}");
    }

    /// What `ahead(k)` shows is the event popped `k` pops later, when nothing is pushed at the
    /// current time in between (many events at each time, as in a collective in step).
    #[test]
    fn the_events_looked_ahead_at_are_the_ones_popped() {
        let mut next = crate::rng::xorshift(777_u64);
        let mut q = Queue::default();
        for stamp in 0..20_000 {
            let time = 1000 * (next() % 50);
            q.push(Ev {
                time,
                stamp,
                id: stamp,
            });
        }
        let (mut seen, mut popped) = (0, Vec::new());
        let mut looked: Vec<(usize, Ev)> = Vec::new();
        while let Some(e) = q.pop() {
            popped.push(e);
            for k in [0, 1, 8, 16] {
                if let Some(a) = q.ahead(k) {
                    looked.push((popped.len() + k, a));
                    seen += 1;
                }
            }
        }
        assert!(seen > 70_000, "{seen}");
        for (at, e) in looked {
            assert_eq!(popped[at], e);
        }
    }
}
