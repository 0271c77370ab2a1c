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
//! keeps its stamp but always goes to a later time.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

/// The most events an emptied bucket keeps room for (64 KiB); a larger bucket is freed.
const KEPT_CAPACITY: usize = 4096;

/// The radix heap.
#[derive(Debug)]
pub struct Radix {
    last: u64,
    /// Bucket 0's events in stamp order, from `head` on.
    now: Vec<Ev>,
    head: usize,
    buckets: [Vec<Ev>; 64],
}

impl Default for Radix {
    fn default() -> Self {
        Radix {
            last: 0,
            now: Vec::new(),
            head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
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
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Ev> {
        if self.head == self.now.len() {
            self.refill()?;
        }
        let e = self.now[self.head];
        self.head += 1;
        Some(e)
    }

    /// Moves the events at the next time into bucket 0 (sorted by stamp).
    #[cold]
    fn refill(&mut self) -> Option<()> {
        self.now.clear();
        self.head = 0;
        let b = self.buckets.iter().position(|v| !v.is_empty())?;
        let mut moving = std::mem::take(&mut self.buckets[b]);
        self.last = moving
            .iter()
            .map(|e| e.time)
            .min()
            .expect("a non-empty bucket");
        for &e in &moving {
            let k = self.bucket(e.time);
            if k == 0 {
                self.now.push(e);
            } else {
                self.buckets[k - 1].push(e);
            }
        }
        // keep the emptied bucket's capacity unless it is large: the buckets' capacities
        // would otherwise add up to several times the most events ever pending
        if moving.capacity() <= KEPT_CAPACITY {
            moving.clear();
            self.buckets[b] = moving;
        }
        self.now.sort_unstable_by_key(|e| e.stamp);
        Some(())
    }

    fn drain(&mut self) -> Vec<Ev> {
        let mut all: Vec<Ev> = self.now.drain(self.head..).collect();
        for b in &mut self.buckets {
            all.append(b);
        }
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

    /// Removes the earliest event (the smallest stamp among equal times).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Ev> {
        match self {
            Queue::Radix(r) => r.pop(),
            Queue::Binary(h) => h.pop(),
        }
    }

    /// The event `k` places after the next one, if the radix heap knows it without work (it is
    /// among the events at the current time).
    #[inline(always)]
    pub fn ahead(&self, k: usize) -> Option<Ev> {
        match self {
            Queue::Radix(r) => r.now.get(r.head + k).copied(),
            Queue::Binary(_) => None,
        }
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

    /// Every pop is the one a binary heap gives, before and after a time in the past.
    #[test]
    fn pops_as_a_binary_heap_does_and_survives_a_time_in_the_past() {
        let mut next = crate::rng::xorshift(12345_u64);
        for past in [false, true] {
            let mut q = Queue::default();
            let mut h = BinaryHeap::new();
            let (mut stamp, mut now, mut pops) = (0, 0, 0);
            for round in 0..5000 {
                for _ in 0..(next() % 4) {
                    let dt = if next().is_multiple_of(3) {
                        0
                    } else {
                        next() % 5000
                    };
                    let time = if past && round == 2500 {
                        now / 2
                    } else {
                        now + dt
                    };
                    let e = Ev {
                        time,
                        stamp,
                        id: stamp,
                    };
                    stamp += 1;
                    q.push(e);
                    h.push(e);
                }
                let (a, b) = (q.pop(), h.pop());
                assert_eq!(a, b, "round {round}");
                if let Some(e) = a {
                    now = e.time;
                    pops += 1;
                }
            }
            while let Some(e) = h.pop() {
                assert_eq!(q.pop(), Some(e));
            }
            assert!(q.pop().is_none() && pops > 1000);
            assert_eq!(matches!(q, Queue::Binary(_)), past);
        }
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
