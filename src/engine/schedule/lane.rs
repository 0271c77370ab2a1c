//! The executor's lane of hops: headers' hops onto a free link one latency after the one before
//! (cut-through), in `(time, stamp)` order, first in, first out.
//!
//! A hop's time and stamp are not kept with it. Hops are pushed with times that never go back
//! and, mostly, with consecutive stamps at one time (a round of headers moving on together), so
//! the lane keeps them in runs: a run is a time, the stamp of its first hop and how many hops
//! it has, whose stamps follow one another. A hop is 16 bytes and a run 16; at a million
//! headers in flight the lane reads and writes half the memory of one that kept 32 bytes a hop,
//! and no more than that when every hop begins a run of its own.

use std::cmp::Ordering;

use super::LOAD_AHEAD;
use crate::engine::prefetch::prefetch;

/// A header's hop onto a link one latency after it entered a free one (its time and stamp are
/// its run's). It carries what a hop along a straight stretch of uniform links reads, so that
/// such a hop reads its link's state and nothing else of memory
/// (`DagExecution::straight_hops`); the rest of the header (its destination, and off uniform
/// links its size and latest finish) is in the message's flight, and the vertex it reaches
/// follows from the flight's (`DagExecution::lane_header`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LaneHop {
    /// The message's in-flight slot.
    pub slot: u32,
    /// The [place](crate::topology::Topology::place) of the link it enters.
    pub place: u32,
    /// Uniform links: the message's transmission time on a link (else 0).
    pub work: u32,
    /// Its straight stretch, packed (`Net::pack`).
    pub line: u32,
}

// the size the module's documentation gives
const _: () = assert!(std::mem::size_of::<LaneHop>() == 16);

/// Hops at one time whose stamps follow one another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Run {
    pub time: u64,
    /// The first hop's.
    pub stamp: u32,
    /// How many hops (at least one).
    pub count: u32,
}

impl Run {
    /// How many of its hops come before an event at `bound`, a `(time, stamp)`.
    #[inline(always)]
    pub fn before(&self, bound: (u64, u32)) -> u32 {
        match self.time.cmp(&bound.0) {
            Ordering::Less => self.count,
            Ordering::Equal => bound.1.saturating_sub(self.stamp).min(self.count),
            Ordering::Greater => 0,
        }
    }
}

/// Pending hops in `(time, stamp)` order.
#[derive(Debug, Default)]
pub(super) struct Lane {
    hops: Ring<LaneHop>,
    /// The runs the hops fall into, in order.
    runs: Ring<Run>,
}

impl Lane {
    /// Nothing pending.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.hops.is_empty()
    }

    /// Appends a hop at `time` with `stamp`, which come after every pending hop's.
    #[inline(always)]
    pub fn push(&mut self, time: u64, stamp: u32, hop: LaneHop) {
        debug_assert!(self.back() < Some((time, stamp)), "pushed out of order");
        self.hops.push(hop);
        self.extend(time, stamp, 1);
    }

    /// The first run (of the hops not yet [taken](Lane::taken)).
    #[inline(always)]
    pub fn first_run(&self) -> Option<Run> {
        self.runs.get(0).copied()
    }

    /// The last hop's time and stamp.
    fn back(&self) -> Option<(u64, u32)> {
        let last = self.runs.len.checked_sub(1)?;
        self.runs
            .get(last)
            .map(|r| (r.time, r.stamp + (r.count - 1)))
    }

    /// Takes the first hop. The first run counts it, and its stamp is among the pending ones,
    /// until it is [taken](Lane::taken): a round of hops at one time is taken in one go.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<LaneHop> {
        self.hops.pop()
    }

    /// The first `n` hops of the first run, popped, are gone.
    #[inline(always)]
    pub fn taken(&mut self, n: u32) {
        let run = self.runs.front_mut().expect("taken from a run");
        debug_assert!(n <= run.count, "{n} taken from {run:?}");
        if n == run.count {
            self.runs.pop();
        } else {
            run.stamp += n;
            run.count -= n;
        }
    }

    /// Takes up to `most` hops from the front (no more than the first run has left), as many
    /// as `step` gives a hop to go on with, each pushed at `next` with the next stamp from
    /// `stamp`; stops at the first hop it gives none for (left at the front), or before `stamp`
    /// reaches `u32::MAX` (the caller's next stamp renumbers them). `step` is also given the
    /// hop [`LOAD_AHEAD`] places later in the lane (near the back, a stale or just-pushed one),
    /// to load what it will read. Returns how many hops it took (popped: the first run counts
    /// them until they are [taken](Lane::taken)).
    ///
    /// Each hop taken is one pushed, so the ring never grows here, and the hops pushed make
    /// one run (at one time, stamps in a row): the loop touches the two hops and nothing else
    /// of the lane.
    #[inline(always)]
    pub fn follow(
        &mut self,
        most: u32,
        next: u64,
        stamp: &mut u32,
        mut step: impl FnMut(&LaneHop, &LaneHop) -> Option<LaneHop>,
    ) -> u32 {
        debug_assert!(self.back() < Some((next, *stamp)), "followed out of order");
        let most = most
            .min(u32::MAX - *stamp)
            .min(u32::try_from(self.hops.len).unwrap_or(u32::MAX));
        let ring = &mut self.hops;
        let (mask, len) = (ring.mask(), ring.len);
        let mut head = ring.head;
        let mut took = 0;
        while took < most {
            let hop = ring.buf[head];
            prefetch(&ring.buf[(head + 4 * LOAD_AHEAD) & mask]);
            let Some(then) = step(&hop, &ring.buf[(head + LOAD_AHEAD) & mask]) else {
                break;
            };
            ring.buf[(head + len) & mask] = then;
            head = (head + 1) & mask;
            took += 1;
        }
        ring.head = head;
        if took > 0 {
            self.extend(next, *stamp, took);
            *stamp += took;
        }
        took
    }

    /// Counts `count` hops just pushed at `time` with stamps from `stamp` on in the runs.
    #[inline(always)]
    fn extend(&mut self, time: u64, stamp: u32, count: u32) {
        if let Some(run) = self.runs.back_mut()
            && run.time == time
            && u64::from(run.stamp) + u64::from(run.count) == u64::from(stamp)
        {
            run.count += count;
        } else {
            self.runs.push(Run { time, stamp, count });
        }
    }

    /// The `k`-th hop not yet popped (for a prefetch).
    #[inline(always)]
    pub fn get(&self, k: usize) -> Option<&LaneHop> {
        self.hops.get(k)
    }

    /// The pending hops' stamps.
    pub fn stamps(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs
            .iter()
            .flat_map(|r| r.stamp..=r.stamp + (r.count - 1))
    }

    /// Gives each pending hop the stamp `rank` maps its stamp to, which keeps the order of all
    /// pending stamps and leaves no gap between them (so a run's stamps still follow one
    /// another).
    pub fn renumber(&mut self, rank: impl Fn(u32) -> u32) {
        for run in self.runs.iter_mut() {
            run.stamp = rank(run.stamp);
        }
    }
}

/// A first-in-first-out queue in a ring whose size is a power of two (no branch for the wrap,
/// a mask; `VecDeque` spent about 30 instructions a hop).
#[derive(Debug)]
struct Ring<T> {
    /// Empty, or a power of two long.
    buf: Vec<T>,
    head: usize,
    len: usize,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy + Default> Ring<T> {
    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    #[inline(always)]
    fn push(&mut self, x: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & self.mask();
        self.buf[i] = x;
        self.len += 1;
    }

    /// Twice the room (at least 16), the items moved to the front in order.
    #[cold]
    fn grow(&mut self) {
        let mut buf = Vec::with_capacity((2 * self.buf.len()).max(16));
        buf.extend(self.iter());
        buf.resize(buf.capacity().next_power_of_two(), T::default());
        (self.buf, self.head) = (buf, 0);
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(x)
    }

    #[inline(always)]
    fn get(&self, k: usize) -> Option<&T> {
        (k < self.len).then(|| &self.buf[(self.head + k) & self.mask()])
    }

    #[inline(always)]
    fn front_mut(&mut self) -> Option<&mut T> {
        let head = self.head;
        (self.len > 0).then(|| &mut self.buf[head])
    }

    #[inline(always)]
    fn back_mut(&mut self) -> Option<&mut T> {
        let last = self.head.wrapping_add(self.len.wrapping_sub(1)) & self.mask();
        (self.len > 0).then(|| &mut self.buf[last])
    }

    fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).map(|k| self.buf[(self.head + k) & self.mask()])
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        // from the head to the end of the buffer, then round from its start
        let (wrapped, first) = self.buf.split_at_mut(self.head);
        let before_end = first.len().min(self.len);
        let after = self.len - before_end;
        first[..before_end]
            .iter_mut()
            .chain(wrapped[..after].iter_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(slot: u32) -> LaneHop {
        LaneHop {
            slot,
            place: slot + 1,
            work: 2,
            line: 3,
        }
    }

    /// Pops every hop with its time and stamp, one by one.
    fn drain(lane: &mut Lane) -> Vec<(u64, u32, u32)> {
        let mut out = Vec::new();
        while let Some(run) = lane.first_run() {
            let h = lane.pop().expect("a run has a hop");
            lane.taken(1);
            assert_eq!(h, hop(h.slot));
            out.push((run.time, run.stamp, h.slot));
        }
        assert!(lane.is_empty() && lane.pop().is_none());
        out
    }

    #[test]
    fn hops_come_out_with_the_times_and_stamps_they_went_in_with() {
        let mut lane = Lane::default();
        // a run of three, a gap in the stamps, a new time, a lone hop
        let pushed = [
            (5, 10, 0),
            (5, 11, 1),
            (5, 12, 2),
            (5, 14, 3),
            (7, 15, 4),
            (9, 20, 5),
        ];
        for (time, stamp, slot) in pushed {
            lane.push(time, stamp, hop(slot));
        }
        assert_eq!(lane.runs.len, 4, "runs: {:?}", lane.runs);
        assert_eq!(lane.get(4), Some(&hop(4)));
        assert_eq!(lane.stamps().collect::<Vec<_>>(), [10, 11, 12, 14, 15, 20]);
        assert_eq!(drain(&mut lane), pushed);
    }

    #[test]
    fn a_run_counts_what_comes_before_a_bound() {
        let run = Run {
            time: 10,
            stamp: 5,
            count: 3,
        };
        let before = [
            (9, 99),
            (10, 0),
            (10, 5),
            (10, 6),
            (10, 8),
            (10, 99),
            (11, 0),
        ]
        .map(|bound| run.before(bound));
        assert_eq!(before, [0, 0, 0, 1, 3, 3, 3]);
    }

    #[test]
    fn pushing_after_pops_extends_the_last_run() {
        let mut lane = Lane::default();
        lane.push(1, 0, hop(0));
        lane.push(1, 1, hop(1));
        assert_eq!(lane.pop(), Some(hop(0)));
        // taken in one go with the hops pushed meanwhile
        lane.push(1, 2, hop(2));
        lane.push(1, 3, hop(3));
        assert_eq!(lane.pop(), Some(hop(1)));
        lane.taken(2);
        assert_eq!(
            lane.first_run(),
            Some(Run {
                time: 1,
                stamp: 2,
                count: 2
            })
        );
        assert_eq!(lane.pop(), Some(hop(2)));
        lane.taken(1);
        lane.push(1, 4, hop(4));
        assert_eq!(lane.runs.len, 1);
        assert_eq!(drain(&mut lane), [(1, 3, 3), (1, 4, 4)]);
        // an empty lane starts a new run
        lane.push(1, 5, hop(5));
        assert_eq!(drain(&mut lane), [(1, 5, 5)]);
    }

    #[test]
    fn following_takes_hops_until_one_has_no_way_on_and_pushes_them_as_one_run() {
        let mut lane = Lane::default();
        for slot in 0..5 {
            lane.push(1, slot, hop(slot));
        }
        // a heap event took stamps 5 and 6; hops 0 to 2 go on, hop 3 does not
        let mut stamp = 7;
        let took = lane.follow(10, 2, &mut stamp, |h, _| {
            (h.slot < 3).then(|| hop(h.slot + 10))
        });
        assert_eq!((took, stamp), (3, 10));
        lane.taken(took);
        assert_eq!(
            drain(&mut lane),
            [(1, 3, 3), (1, 4, 4), (2, 7, 10), (2, 8, 11), (2, 9, 12)]
        );
        // no more than asked, nor up to the last stamp
        for slot in 0..4 {
            lane.push(3, slot + 20, hop(slot));
        }
        let always = |h: &LaneHop, _: &LaneHop| Some(hop(h.slot + 10));
        assert_eq!(lane.follow(1, 4, &mut stamp, always), 1);
        lane.taken(1);
        let mut last = u32::MAX - 2;
        assert_eq!(lane.follow(9, 4, &mut last, always), 2);
        assert_eq!(last, u32::MAX);
        lane.taken(2);
        assert_eq!(
            drain(&mut lane),
            [
                (3, 23, 3),
                (4, 10, 10),
                (4, u32::MAX - 2, 11),
                (4, u32::MAX - 1, 12)
            ]
        );
    }

    #[test]
    fn following_round_a_full_ring_keeps_the_order() {
        let mut lane = Lane::default();
        for slot in 0..16 {
            lane.push(1, slot, hop(slot));
        }
        for _ in 0..10 {
            lane.pop();
        }
        lane.taken(10);
        for slot in 16..26 {
            lane.push(1, slot, hop(slot));
        }
        // 16 hops in a 16-long ring from place 10 on: their successors go where they were
        assert_eq!(lane.hops.buf.len(), 16);
        let mut stamp = 26;
        let took = lane.follow(16, 2, &mut stamp, |h, _| Some(hop(h.slot + 100)));
        assert_eq!(took, 16);
        lane.taken(16);
        let expect: Vec<_> = (0..16).map(|k| (2, 26 + k, 110 + k)).collect();
        assert_eq!(drain(&mut lane), expect);
    }

    #[test]
    fn renumbering_keeps_runs_whole() {
        let mut lane = Lane::default();
        for (stamp, slot) in [(100, 0), (101, 1), (200, 2), (201, 3)] {
            lane.push(4, stamp, hop(slot));
        }
        // the heap held stamp 150 between them
        let all = [100, 101, 150, 200, 201];
        lane.renumber(|s| all.partition_point(|&x| x < s) as u32);
        assert_eq!(
            drain(&mut lane),
            [(4, 0, 0), (4, 1, 1), (4, 3, 2), (4, 4, 3)]
        );
    }

    #[test]
    fn renumbering_counts_the_hops_popped_but_not_yet_taken() {
        let mut lane = Lane::default();
        for (stamp, slot) in [(5, 0), (6, 1), (7, 2)] {
            lane.push(4, stamp, hop(slot));
        }
        lane.pop();
        lane.pop();
        // the heap holds stamp 9
        let all = [5, 6, 7, 9];
        lane.renumber(|s| all.partition_point(|&x| x < s) as u32);
        lane.taken(2);
        assert_eq!(drain(&mut lane), [(4, 2, 2)]);
    }

    #[test]
    fn a_wrapped_ring_is_changed_in_place_in_order() {
        let mut ring = Ring::<u32>::default();
        for i in 0..16 {
            ring.push(i);
        }
        for _ in 0..10 {
            ring.pop();
        }
        // six at the end of the buffer, six from its start
        for i in 16..22 {
            ring.push(i);
        }
        assert_eq!((ring.buf.len(), ring.head, ring.len), (16, 10, 12));
        for x in ring.iter_mut() {
            *x += 100;
        }
        assert_eq!(
            ring.iter().collect::<Vec<_>>(),
            (110..122).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_ring_keeps_its_order_round_the_end_and_as_it_grows() {
        let mut ring = Ring::<u32>::default();
        let mut model = std::collections::VecDeque::new();
        // pushes and pops that wrap round a 16-long buffer and grow it while wrapped
        for i in 0..200_u32 {
            ring.push(i);
            model.push_back(i);
            if i % 3 == 1 {
                assert_eq!(ring.pop(), model.pop_front());
            }
            if i % 5 == 0 {
                *ring.back_mut().unwrap() += 1000;
                *model.back_mut().unwrap() += 1000;
            }
            assert_eq!(ring.iter().collect::<Vec<_>>(), Vec::from(model.clone()));
            assert_eq!(ring.get(ring.len - 1), model.back());
            assert_eq!(ring.get(ring.len), None);
        }
        for x in ring.iter_mut() {
            *x += 1;
        }
        *ring.front_mut().unwrap() += 7;
        let expect: Vec<u32> = model
            .iter()
            .enumerate()
            .map(|(k, x)| x + 1 + if k == 0 { 7 } else { 0 })
            .collect();
        assert_eq!(ring.iter().collect::<Vec<_>>(), expect);
        while let Some(x) = model.pop_front() {
            let k = expect.len() - model.len() - 1;
            assert_eq!(ring.pop(), Some(expect[k]), "{x}");
        }
        assert!(ring.is_empty() && ring.pop().is_none());
    }
}
