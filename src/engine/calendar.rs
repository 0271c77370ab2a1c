//! The event calendar.
//!
//! A **radix heap** of `(time, seq, event)` entries, generic over the event type
//! ([`Scheduled`]: the queueing engine's events, which carry a job's record, and every
//! [`CalendarEvent`], such as the rank programs' events) and the time type ([`CalendarTime`]:
//! 64-bit [`SimTime`] ticks or the programs' 128-bit ticks; either way the time and the sequence
//! number make one `u128` key, compared in one go). `seq` is a counter incremented at every
//! [`Calendar::schedule`], so **events at the same time are delivered in the order they were
//! scheduled (FIFO)**: the tie-break never depends on hashing, threads or random draws.
//!
//! **Why a radix heap.** A discrete-event calendar is *monotone*: nothing is ever scheduled
//! before the time of the event being processed, so every key pushed is at least the last key
//! popped. A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) uses exactly that. Here its
//! keys are read in digits of 6 bits: bucket `(level, digit)` holds the keys whose highest digit
//! differing from the last popped key is digit `level`, with value `digit` there. A push is one
//! `xor`, one leading-zero count, a shift and a `Vec` append; a pop takes the lowest non-empty
//! bucket and, if it holds more than one entry, moves its entries to lower levels relative to
//! their minimum (which each bucket keeps, so the move is one pass). An entry only ever moves
//! down, a whole level at a time, at most 21 times and in practice two or three (2.7 per pop
//! in the hold model at 10^5 pending events of exponential gaps, where a binary radix heap,
//! one bucket per bit, moved it 7.9 times), so both operations cost `O(1)` amortised whatever
//! the number of pending events, and every access is a sequential walk of a `Vec` rather than
//! a sift through a binary heap that no longer fits in the cache: the binary heap alone ran 4-5
//! times slower at 10^5 pending events than at 10 (`benches/RESULTS.md`). An entry's last one
//! or two moves are replaced by one sort: a bucket of at most 1024 entries about to be emptied
//! is sorted, once, into a **run** (a counting pass on one digit, then each small group by the
//! whole key), which the next pops read in order while comparing its next key with the
//! buckets' least (entries scheduled meanwhile go to the buckets as ever): in that hold model,
//! 1.6 moves and 0.95 sorted entries per pop instead of 2.7 moves. Buckets keep their
//! capacity up to an eighth of the pending entries, so a steady state allocates little. Beyond a
//! few thousand entries the heap outgrows the L2 cache, and its time goes to memory: a bucket
//! being emptied is loaded a few entries ahead of the move, and every append to a bucket starts
//! loading the bucket's room 128 bytes on, so that the stores do not wait for their lines.
//!
//! **While few events pend** (below a couple of thousand) a binary heap is cheaper: with two
//! pending events (an M/M/1 queue) a pop and a push cost a sift of one level, and the heap
//! keeps the entry it just returned and overwrites it with the next event scheduled (one sift
//! instead of a pop and a push: most events schedule one successor). The calendar therefore
//! starts as a binary heap, moves its entries to a radix heap when more than [`GROW_AT`] pend and
//! back below [`SHRINK_AT`] (the gap keeps a size near one threshold from moving them back and
//! forth; each move is linear in the pending events and rare).
//!
//! The delivery order is exactly that of any priority queue on the unique `(time, seq)` keys.

use std::collections::VecDeque;
use std::marker::PhantomData;

use super::prefetch::prefetch;
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

/// An event a [`Calendar`] can hold: a small tag and a payload of any `Copy` type, stored in the
/// calendar's entry beside the key. Every [`CalendarEvent`] is one (its payload a `u64`); an
/// event that carries more (the queueing engine's departures carry the job's record, so that
/// the event loop does not fetch it from a large job arena) implements this directly.
pub trait Scheduled: Copy {
    /// Bits the tag needs (the sequence number keeps the rest of its word).
    const TAG_BITS: u32;
    /// What the entry stores besides the key and the tag.
    type Payload: Copy;
    /// The event as (tag, payload), `tag < 2^TAG_BITS`.
    fn pack(self) -> (u64, Self::Payload);
    /// The event back from [`Scheduled::pack`]'s output.
    fn unpack(tag: u64, payload: Self::Payload) -> Self;
}

impl<E: CalendarEvent> Scheduled for E {
    const TAG_BITS: u32 = E::TAG_BITS;
    type Payload = u64;

    #[inline(always)]
    fn pack(self) -> (u64, u64) {
        self.encode()
    }

    #[inline(always)]
    fn unpack(tag: u64, payload: u64) -> E {
        E::decode(tag, payload)
    }
}

/// A time the calendar orders by: with the scheduling sequence number, one `u128` key.
pub trait CalendarTime: Copy {
    /// The key of this time and a sequence word: `(time, seq)` as one integer.
    fn key(self, seq: u64) -> u128;
    /// The time back from its key.
    fn from_key(key: u128) -> Self;
    /// The sequence word back from its key.
    fn seq(key: u128) -> u64;
}

impl CalendarTime for SimTime {
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

/// One pending event: its `u128` key as two words (24 bytes in all for a `u64` payload rather
/// than the 32 a 16-byte-aligned `u128` would take) and its payload.
#[derive(Clone, Copy, Debug)]
struct Entry<P = u64> {
    hi: u64,
    lo: u64,
    payload: P,
}

impl<P: Copy> Entry<P> {
    #[inline(always)]
    fn new(key: u128, payload: P) -> Entry<P> {
        Entry {
            hi: (key >> 64) as u64,
            lo: key as u64,
            payload,
        }
    }

    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.hi) << 64) | u128::from(self.lo)
    }
}

/// The entry of `event` at `time`, taking the next sequence number from `next_seq`.
#[inline(always)]
fn entry<E: Scheduled, T: CalendarTime>(
    next_seq: &mut u64,
    time: T,
    event: E,
) -> Entry<E::Payload> {
    let seq = *next_seq;
    *next_seq += 1;
    let (tag, payload) = event.pack();
    Entry::new(time.key((seq << E::TAG_BITS) | tag), payload)
}

/// The time and event an entry holds.
#[inline(always)]
fn open<E: Scheduled, T: CalendarTime>(e: Entry<E::Payload>) -> (T, E) {
    let key = e.key();
    let tag = T::seq(key) & ((1 << E::TAG_BITS) - 1);
    (T::from_key(key), E::unpack(tag, e.payload))
}

/// Bits of a key each level of the radix heap sorts by: a level has `2^DIGIT_BITS` buckets.
const DIGIT_BITS: u32 = 6;

/// Buckets per level, one per value of a digit.
const DIGITS: usize = 1 << DIGIT_BITS;

/// Levels of the radix heap: one per digit of a `u128` key (the last digit has 2 bits).
const LEVELS: usize = 128_usize.div_ceil(DIGIT_BITS as usize);

/// The bucket of `key` relative to `last` (`key >= last`): the level of the highest digit in
/// which they differ (0 when they are equal), and in it the value of that digit of `key`, as
/// one index `level * DIGITS + digit`.
#[inline(always)]
fn bucket_of(key: u128, last: u128) -> usize {
    let level = (127 - (key ^ last).leading_zeros().min(127)) / DIGIT_BITS;
    let digit = (key >> (level * DIGIT_BITS)) as usize & (DIGITS - 1);
    level as usize * DIGITS + digit
}

/// How far beyond its last entry a bucket's room is loaded when an entry is appended.
const APPEND_AHEAD_BYTES: usize = 128;

/// Appends `e` to `bucket` and starts loading the bucket's room a little further on.
///
/// Most buckets of a large radix heap were last touched long ago, beyond the L2 cache, and are
/// appended to a few entries at a time, in turn with dozens of others (a redistribution spreads
/// one bucket over 64): each first store to one of their cache lines waits for that line to be
/// read, and enough of them fill the processor's store buffer and stop it. Loading the line
/// the next entries go to while this one is stored lets the read overlap other work.
#[inline(always)]
fn append<P: Copy>(bucket: &mut Vec<Entry<P>>, e: Entry<P>) {
    bucket.push(e);
    let ahead = APPEND_AHEAD_BYTES / std::mem::size_of::<Entry<P>>();
    if let Some(room) = bucket.spare_capacity_mut().get(ahead) {
        prefetch(room);
    }
}

/// How many entries ahead of the one it moves a redistribution starts loading.
const MOVE_AHEAD: usize = 8;

/// Entries a bucket the radix heap empties may keep room for whatever the number of pending
/// entries.
const KEPT_CAPACITY: usize = 256;

/// Entries in a bucket up to which the radix heap sorts the bucket into its run instead of
/// moving the entries to lower levels.
const RUN_MAX: usize = 1024;

/// A monotone radix heap of entries (see the module docs) with `2^DIGIT_BITS`-ary digits: every
/// key pushed is at least the last key popped, keys are unique.
///
/// Bucket `(level, digit)` holds the keys whose highest digit differing from the last popped key
/// is digit `level`, and whose value there is `digit`. Between levels the lower level holds the
/// smaller keys; within a level the smaller digit. A pop takes the least key of the lowest
/// non-empty bucket (each bucket keeps its least key) and makes it the last key: the other
/// entries of that bucket share every digit from `level` up with it, so they move to lower
/// levels; the other buckets keep their place (their highest differing digit and its value are
/// unchanged). An entry moves down at least one level, a whole digit, each time it moves,
/// where a binary radix heap (one bucket per bit) moved it down a bit or two: in the hold model
/// at 10^5 pending events of exponential gaps, 2.7 moves per pop instead of 7.9 (8-bit digits
/// gave 2.05, and no faster run: a move spreads its bucket over 256 others instead of 64).
///
/// Beside the buckets, one **run**: a bucket of at most [`RUN_MAX`] entries about to be emptied
/// while no run is left is sorted into it instead ([`RadixHeap::sort_into_run`]). The buckets
/// stay a radix heap relative to the last key popped *from a bucket* (every key pushed is at
/// least that, as it is at least the last key popped from either), and a pop returns the run's
/// next entry when its key is below the buckets' least. The run's entries never move again.
#[derive(Debug)]
struct RadixHeap<P> {
    /// At `level * DIGITS + digit`.
    buckets: Box<[Vec<Entry<P>>]>,
    /// The least key in each bucket (`u128::MAX` when empty).
    mins: Box<[u128]>,
    /// Where in its bucket the least key is (so that the next entry popped is known without a
    /// search: [`RadixHeap::peek`]).
    min_at: Box<[u32]>,
    /// Per level, bit `digit` set when that bucket is not empty.
    occupied: [u64; LEVELS],
    /// Bit `level` set when the level has a non-empty bucket.
    levels: u32,
    /// The last key popped from a bucket (0 before the first pop).
    last: u128,
    /// The entries of one emptied bucket, sorted by key, from `run_at` on not yet popped.
    run: Vec<Entry<P>>,
    run_at: usize,
    /// Pending entries, in the buckets and the run.
    len: usize,
}

impl<P: Copy> RadixHeap<P> {
    fn new() -> Self {
        RadixHeap {
            buckets: (0..LEVELS * DIGITS).map(|_| Vec::new()).collect(),
            mins: vec![u128::MAX; LEVELS * DIGITS].into_boxed_slice(),
            min_at: vec![0; LEVELS * DIGITS].into_boxed_slice(),
            occupied: [0; LEVELS],
            levels: 0,
            last: 0,
            run: Vec::new(),
            run_at: 0,
            len: 0,
        }
    }

    /// Bucket `b`, its least key and the occupancy bits updated for an entry of key `key` about
    /// to be appended to it.
    #[inline(always)]
    fn room(&mut self, b: usize, key: u128) -> &mut Vec<Entry<P>> {
        let bucket = &mut self.buckets[b];
        if key < self.mins[b] {
            self.mins[b] = key;
            self.min_at[b] = bucket.len() as u32;
        }
        let level = b / DIGITS;
        self.occupied[level] |= 1 << (b % DIGITS);
        self.levels |= 1 << level;
        bucket
    }

    /// Appends `e` to bucket `b`.
    #[inline(always)]
    fn put(&mut self, b: usize, e: Entry<P>) {
        append(self.room(b, e.key()), e);
    }

    /// Marks bucket `b`, now empty, as such.
    #[inline(always)]
    fn vacate(&mut self, b: usize) {
        self.mins[b] = u128::MAX;
        let level = b / DIGITS;
        self.occupied[level] &= !(1 << (b % DIGITS));
        if self.occupied[level] == 0 {
            self.levels &= !(1 << level);
        }
    }

    /// Adds `e`, whose key is at least the last popped key.
    #[inline(always)]
    fn push(&mut self, e: Entry<P>) {
        append(self.room_for(e.key()), e);
    }

    /// The bucket an entry of key `key` (at least the last popped key) is to be appended to,
    /// counted as pending.
    #[inline(always)]
    fn room_for(&mut self, key: u128) -> &mut Vec<Entry<P>> {
        debug_assert!(key >= self.last, "the calendar is monotone");
        self.len += 1;
        self.room(bucket_of(key, self.last), key)
    }

    /// The lowest non-empty bucket.
    #[inline(always)]
    fn lowest(&self) -> Option<usize> {
        if self.levels == 0 {
            return None;
        }
        let level = self.levels.trailing_zeros() as usize;
        Some(level * DIGITS + self.occupied[level].trailing_zeros() as usize)
    }

    /// The run's next entry if it is the least pending one.
    #[inline(always)]
    fn run_first(&self, lowest: Option<usize>) -> Option<&Entry<P>> {
        let head = self.run.get(self.run_at)?;
        // (keys are unique: never equal to a bucket's least)
        lowest
            .is_none_or(|b| head.key() < self.mins[b])
            .then_some(head)
    }

    /// The least pending key, without removing it.
    #[inline(always)]
    fn peek_key(&self) -> Option<u128> {
        let b = self.lowest();
        match self.run_first(b) {
            Some(head) => Some(head.key()),
            None => b.map(|b| self.mins[b]),
        }
    }

    /// The entry with the least key, without removing it.
    #[inline(always)]
    fn peek(&self) -> Option<Entry<P>> {
        let b = self.lowest();
        if let Some(head) = self.run_first(b) {
            return Some(*head);
        }
        let b = b?;
        self.buckets[b].get(self.min_at[b] as usize).copied()
    }

    /// Removes and returns the entry with the least key.
    #[inline(always)]
    fn pop(&mut self) -> Option<Entry<P>> {
        let b = self.lowest();
        if let Some(&head) = self.run_first(b) {
            self.run_at += 1;
            self.len -= 1;
            return Some(head);
        }
        let b = b?;
        self.len -= 1;
        let min = self.mins[b];
        self.last = min;
        let n = self.buckets[b].len();
        if n == 1 {
            // no entry to move
            self.vacate(b);
            return self.buckets[b].pop();
        }
        if n <= RUN_MAX && self.run_at == self.run.len() {
            return Some(self.sort_into_run(b));
        }
        Some(self.redistribute(b, min))
    }

    /// Empties bucket `b` (more than one entry, at most [`RUN_MAX`]; its least key is now the
    /// last key) into the run, which is empty, sorted by key; returns the least entry, the
    /// run's first.
    ///
    /// The bucket's entries share every digit from the bucket's level up: a counting pass on
    /// the digit below spreads them over 64 groups in order, and each group (a few entries
    /// where keys are spread) is sorted by the whole key. The run then yields them in turn,
    /// while entries pushed later go to the buckets relative to the bucket's least key and a
    /// pop compares the run's next key with the buckets' least: the run's entries never move
    /// again, where the buckets would have moved them once or twice more.
    #[inline(never)]
    fn sort_into_run(&mut self, b: usize) -> Entry<P> {
        let from = std::mem::take(&mut self.buckets[b]);
        self.vacate(b);
        // at least two distinct keys share the digits from `level` up: level 1 or more
        let shift = (b / DIGITS - 1) as u32 * DIGIT_BITS;
        let digit = |e: &Entry<P>| (e.key() >> shift) as usize & (DIGITS - 1);
        let mut starts = [0_u32; DIGITS + 1];
        for i in 0..from.len() {
            if let Some(ahead) = from.get(i + MOVE_AHEAD) {
                prefetch(ahead);
            }
            starts[digit(&from[i]) + 1] += 1;
        }
        for d in 0..DIGITS {
            starts[d + 1] += starts[d];
        }
        let mut next = starts;
        self.run.clear();
        self.run.resize(from.len(), from[0]);
        for e in &from {
            let d = digit(e);
            self.run[next[d] as usize] = *e;
            next[d] += 1;
        }
        for d in 0..DIGITS {
            let group = &mut self.run[starts[d] as usize..starts[d + 1] as usize];
            if group.len() > 1 {
                group.sort_unstable_by_key(Entry::key);
            }
        }
        self.give_back(b, from);
        self.run_at = 1;
        self.run[0]
    }

    /// Empties bucket `b` (more than one entry, least key `min`, now the last key): every other
    /// entry moves to a lower level relative to `min`; returns the entry of `min`.
    #[inline(never)]
    fn redistribute(&mut self, b: usize, min: u128) -> Entry<P> {
        let from = std::mem::take(&mut self.buckets[b]);
        self.vacate(b);
        let mut found = None;
        for i in 0..from.len() {
            // the bucket too was filled long ago: its entries are loaded a few moves ahead
            if let Some(ahead) = from.get(i + MOVE_AHEAD) {
                prefetch(ahead);
            }
            let e = from[i];
            let key = e.key();
            if key == min {
                found = Some(e);
            } else {
                self.put(bucket_of(key, min), e);
            }
        }
        self.give_back(b, from);
        found.expect("a bucket's minimum is one of its entries")
    }

    /// Gives emptied bucket `b` its buffer `from` back, emptied, to keep its capacity for the
    /// next time it fills, unless it is more than an eighth of the pending entries: a level's 64
    /// buckets fill in turn as time passes (the top level's each hold the events of one span of
    /// time), and each keeping the most it ever held made the heap 20 times the size of its
    /// entries.
    #[inline(always)]
    fn give_back(&mut self, b: usize, mut from: Vec<Entry<P>>) {
        from.clear();
        if from.capacity() <= self.len / 8 + KEPT_CAPACITY {
            self.buckets[b] = from;
        }
    }

    /// Moves every entry to `out` and leaves the heap empty.
    fn drain_into(&mut self, out: &mut Vec<Entry<P>>) {
        for b in self.buckets.iter_mut() {
            out.append(b);
        }
        out.extend_from_slice(&self.run[self.run_at..]);
        self.run.clear();
        self.run_at = 0;
        self.occupied = [0; LEVELS];
        self.levels = 0;
        self.mins.fill(u128::MAX);
        self.len = 0;
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// Where the pending entries are (see [`Queue`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// In the binary heap.
    Small,
    /// In the binary heap, whose top was returned and waits to be replaced or removed.
    Taken,
    /// In the binary heap, which outgrew [`GROW_AT`]: the next pop moves them to the radix heap.
    Outgrown,
    /// In the radix heap.
    Large,
}

/// Pending events above which the calendar's binary heap becomes a radix heap.
pub const GROW_AT: usize = 2048;

/// [`GROW_AT`] for the [`LaneCalendar`] of rank programs, whose heap holds the later events
/// (deliveries, startups, computes, delayed hops) while the lanes hold the near ones.
pub const LANE_GROW_AT: usize = 2048;

/// Pending events below which the calendar's radix heap becomes a binary heap again (a gap, so
/// that a size hovering around one threshold does not move the entries back and forth).
pub const SHRINK_AT: usize = GROW_AT / 8;

/// The pending entries: a binary min-heap while they are few (cheapest there, and in the cache),
/// a radix heap when they are many (flat in their number). Either delivers the same order.
///
/// The binary heap's top, once returned, stays in place until the next push overwrites it and
/// sifts it down once (most events schedule one successor: one sift instead of a pop and a
/// push) or the next pop removes it. The mode and that "taken" flag are one byte, tested once
/// per operation.
#[derive(Debug)]
struct Queue<P = u64> {
    /// Pending events above which the binary heap becomes a radix heap, and a quarter of it
    /// below which it becomes a binary heap again.
    grow_at: usize,
    heap: Vec<Entry<P>>,
    mode: Mode,
    /// The radix heap, once made (kept, empty, while the binary heap serves).
    radix: Option<Box<RadixHeap<P>>>,
}

impl<P: Copy> Queue<P> {
    fn new(grow_at: usize) -> Self {
        Queue {
            grow_at,
            heap: Vec::new(),
            mode: Mode::Small,
            radix: None,
        }
    }

    /// Moves `e` down from the binary heap's root to its place (the root's old entry is
    /// overwritten).
    #[inline(always)]
    fn sift_down_from_root(&mut self, e: Entry<P>) {
        let v = &mut self.heap;
        let n = v.len();
        let key = e.key();
        let mut hole = 0;
        loop {
            let left = 2 * hole + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && v[right].key() < v[left].key() {
                right
            } else {
                left
            };
            if v[child].key() >= key {
                break;
            }
            v[hole] = v[child];
            hole = child;
        }
        v[hole] = e;
    }

    /// Appends `e` to the binary heap and sifts it up.
    #[inline(always)]
    fn sift_up(&mut self, e: Entry<P>) {
        let v = &mut self.heap;
        let key = e.key();
        let mut hole = v.len();
        v.push(e);
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if v[parent].key() <= key {
                break;
            }
            v[hole] = v[parent];
            hole = parent;
        }
        v[hole] = e;
        if v.len() > self.grow_at {
            self.mode = Mode::Outgrown;
        }
    }

    /// Removes the binary heap's returned top.
    #[inline(always)]
    fn remove_taken(&mut self) {
        let last = self.heap.pop().expect("a returned top is an entry");
        if !self.heap.is_empty() {
            self.sift_down_from_root(last);
        }
    }

    // (`if`s rather than a `match`: the common mode first, one comparison each)
    #[inline(always)]
    fn push(&mut self, e: Entry<P>) {
        if self.mode == Mode::Taken {
            self.mode = Mode::Small;
            self.sift_down_from_root(e);
        } else if self.mode != Mode::Large {
            self.sift_up(e);
        } else {
            // the bucket is found out of line from the key alone, and the entry written into it
            // here: passed to a function, the entry would be stored to the stack in the 8-byte
            // words it is built of and loaded back in 16-byte moves, which the processor
            // cannot forward (a stall of a dozen cycles at every push)
            append(self.large_room(e.key()), e);
        }
    }

    /// The entry with the least key.
    #[inline(always)]
    fn pop(&mut self) -> Option<Entry<P>> {
        if self.mode == Mode::Taken {
            self.remove_taken();
            self.mode = Mode::Small;
        } else if self.mode != Mode::Small {
            return self.pop_large();
        }
        let top = self.heap.first().copied();
        if top.is_some() {
            self.mode = Mode::Taken;
        }
        top
    }

    /// The least pending key.
    #[inline(always)]
    fn peek_key(&mut self) -> Option<u128> {
        match self.mode {
            Mode::Taken => {
                self.remove_taken();
                self.mode = Mode::Small;
            }
            Mode::Small | Mode::Outgrown => {}
            Mode::Large => return self.radix.as_ref().and_then(|r| r.peek_key()),
        }
        self.heap.first().map(Entry::key)
    }

    /// The entry the next pop returns while the radix heap serves (`None` while the binary heap,
    /// small enough to stay in the cache, serves).
    #[inline(always)]
    fn peek_cheap(&self) -> Option<Entry<P>> {
        match self.mode {
            Mode::Large => self.radix.as_ref()?.peek(),
            _ => None,
        }
    }

    fn len(&self) -> usize {
        match self.mode {
            Mode::Taken => self.heap.len() - 1,
            Mode::Small | Mode::Outgrown => self.heap.len(),
            Mode::Large => self.radix.as_ref().map_or(0, |r| r.len()),
        }
    }

    /// The radix heap's bucket for an entry of key `key` (see [`RadixHeap::room_for`]).
    #[inline(never)]
    fn large_room(&mut self, key: u128) -> &mut Vec<Entry<P>> {
        self.radix
            .as_mut()
            .expect("the large mode has its radix heap")
            .room_for(key)
    }

    /// A pop from the radix heap, which an outgrown binary heap first moves to (the key just
    /// returned is then the radix heap's last key: nothing pending or scheduled later is below
    /// it); below [`SHRINK_AT`] the entries go back to the binary heap.
    #[inline(never)]
    fn pop_large(&mut self) -> Option<Entry<P>> {
        if self.mode == Mode::Outgrown {
            // the binary heap's least entry is returned; the rest move
            let top = self.heap.first().copied()?;
            self.mode = Mode::Taken;
            self.remove_taken();
            let r = self.radix.get_or_insert_with(|| Box::new(RadixHeap::new()));
            r.last = top.key();
            for e in self.heap.drain(..) {
                r.push(e);
            }
            self.mode = Mode::Large;
            return Some(top);
        }
        let r = self
            .radix
            .as_mut()
            .expect("the large mode has its radix heap");
        let e = r.pop();
        if r.len() < self.grow_at / 8 {
            r.drain_into(&mut self.heap);
            self.heap.sort_unstable_by_key(Entry::key);
            self.mode = Mode::Small;
        }
        e
    }
}

/// Pending events ordered by `(time, scheduling order)`.
#[derive(Debug)]
pub struct Calendar<E: Scheduled, T: CalendarTime = SimTime> {
    queue: Queue<E::Payload>,
    next_seq: u64,
    event: PhantomData<(E, T)>,
}

impl<E: Scheduled, T: CalendarTime> Default for Calendar<E, T> {
    fn default() -> Self {
        Calendar {
            queue: Queue::new(GROW_AT),
            next_seq: 0,
            event: PhantomData,
        }
    }
}

impl<E: Scheduled, T: CalendarTime> Calendar<E, T> {
    /// An empty calendar.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `event` at `time`, which is not before the time of the last event popped (the
    /// calendar is monotone, as a simulation's clock is). `O(1)`.
    #[inline(always)]
    pub fn schedule(&mut self, time: T, event: E) {
        let e = entry(&mut self.next_seq, time, event);
        self.queue.push(e);
    }

    /// Removes and returns the earliest event (the first scheduled among equal times).
    /// `O(1)` amortised.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(T, E)> {
        self.queue.pop().map(open)
    }

    /// Events scheduled since the calendar was made (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A [`Calendar`] of wide (128-bit) times with `LANES` first-in-first-out lanes beside its
/// radix heap, for the rank-program engine, whose events mostly fall a fixed span after the
/// current time (a message's header reaches the next vertex one hop latency after it entered a
/// free link).
///
/// Events scheduled through [`LaneCalendar::schedule_lane`] at times that never decrease within
/// a lane (as `now + constant` with a clock that never goes back) form a lane already sorted by
/// `(time, seq)`, since the sequence numbers grow too; pushing one costs a `VecDeque` append and
/// popping compares the lanes' fronts with the heap's least key, which the radix heap knows
/// without moving anything. All events share one sequence counter, so the delivery order is
/// exactly that of one heap: the earliest time, the first scheduled among equal times. An event
/// that would break a lane's order goes to the heap.
#[derive(Debug)]
pub struct LaneCalendar<E: CalendarEvent, const LANES: usize> {
    queue: Queue,
    lanes: [VecDeque<Entry>; LANES],
    next_seq: u64,
    event: PhantomData<E>,
}

impl<E: CalendarEvent, const LANES: usize> Default for LaneCalendar<E, LANES> {
    fn default() -> Self {
        LaneCalendar {
            queue: Queue::new(LANE_GROW_AT),
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

    /// Adds `event` at `time` (not before the last event popped) to the heap. `O(1)`.
    #[inline(always)]
    pub fn schedule(&mut self, time: u128, event: E) {
        let e = entry(&mut self.next_seq, time, event);
        self.queue.push(e);
    }

    /// Adds `event` at `time` to lane `lane`, or to the heap if `time` is earlier than the
    /// lane's last event. `O(1)`.
    #[inline(always)]
    pub fn schedule_lane(&mut self, lane: usize, time: u128, event: E) {
        let e = entry(&mut self.next_seq, time, event);
        let l = &mut self.lanes[lane];
        match l.back() {
            Some(back) if back.key() > e.key() => self.queue.push(e),
            _ => l.push_back(e),
        }
    }

    /// Adds `event` at `time` to lane `lane` while the heap is a binary heap (whose sift the
    /// lane saves), else to the heap: for a kind of event that may often come out of order,
    /// where a radix heap's cheap push leaves the lane little to save. `O(1)`.
    #[inline(always)]
    pub fn schedule_lane_while_small(&mut self, lane: usize, time: u128, event: E) {
        if self.queue.mode == Mode::Large {
            self.schedule(time, event);
        } else {
            self.schedule_lane(lane, time, event);
        }
    }

    /// Removes and returns the earliest event (the first scheduled among equal times).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u128, E)> {
        // the smallest key among the heap's least and the lanes' fronts (`None`: the heap)
        let mut best = self.queue.peek_key();
        let mut from = None;
        for (i, l) in self.lanes.iter().enumerate() {
            if let Some(f) = l.front()
                && best.is_none_or(|b| f.key() < b)
            {
                best = Some(f.key());
                from = Some(i);
            }
        }
        let e = match from {
            Some(i) => self.lanes[i].pop_front()?,
            None => self.queue.pop()?,
        };
        Some(open(e))
    }

    /// The event `ahead` places behind the front of lane `lane`, if the lane holds that many:
    /// what the caller will soon handle, so that it can load the state that event touches.
    #[inline(always)]
    pub fn lane_ahead(&self, lane: usize, ahead: usize) -> Option<E> {
        let e = *self.lanes[lane].get(ahead)?;
        Some(open::<E, u128>(e).1)
    }

    /// The heap's next event while the heap is a radix heap (see [`LaneCalendar::lane_ahead`]).
    #[inline(always)]
    pub fn heap_next(&self) -> Option<E> {
        Some(open::<E, u128>(self.queue.peek_cheap()?).1)
    }

    /// Events scheduled since the calendar was made (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.queue.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
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
        let mut next = crate::rng::lcg_below(99_u64);
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
    /// xorshift64: the test schedules' randomness.
    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn the_radix_heap_delivers_a_binary_heaps_order_at_every_scale() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // time gaps from none (every event ties) to 2^62 ticks, on both key layouts; up to
        // 50,000 pending events, so every bucket of the radix heap fills and empties
        for spread in [0_u32, 2, 9, 31, 47, 62] {
            let mut x = 0x9e37_79b9_7f4a_7c15 ^ u64::from(spread);
            let mut narrow: Calendar<Event> = Calendar::new();
            let mut wide: Calendar<Event, u128> = Calendar::new();
            // (time, scheduling index): what any exact priority queue delivers
            let mut reference: BinaryHeap<Reverse<(u128, u32)>> = BinaryHeap::new();
            let mut now = 0_u64;
            let mut job = 0_u32;
            for round in 0..200_000 {
                let grow = round < 50_000 && spread > 0;
                let successors = xorshift(&mut x) % if grow { 3 } else { 2 } + u64::from(grow);
                for _ in 0..successors {
                    let gap = if spread == 0 {
                        0
                    } else {
                        xorshift(&mut x) >> (64 - spread)
                    };
                    let at = now.saturating_add(gap).min(u64::MAX >> 1);
                    let ev = Event::Departure { station: 1, job };
                    narrow.schedule(SimTime::from_ticks(at), ev);
                    wide.schedule(u128::from(at) << 20, ev);
                    reference.push(Reverse((u128::from(at), job)));
                    job += 1;
                }
                assert_eq!(narrow.len(), reference.len());
                assert_eq!(wide.len(), reference.len());
                let Some(Reverse((at, id))) = reference.pop() else {
                    assert!(narrow.pop().is_none() && wide.pop().is_none());
                    break;
                };
                let want = Event::Departure {
                    station: 1,
                    job: id,
                };
                assert_eq!(narrow.pop(), Some((SimTime::from_ticks(at as u64), want)));
                assert_eq!(wide.pop(), Some((at << 20, want)), "spread {spread}");
                now = at as u64;
            }
        }
    }

    #[test]
    fn the_events_looked_ahead_at_are_the_ones_popped_next() {
        let mut cal: LaneCalendar<Event, 1> = LaneCalendar::new();
        let mut next = crate::rng::lcg_below(11_u64);
        // the heap alone, past the size at which it becomes a radix heap
        for job in 0..5_000 {
            let at = u128::from(next(1 << 20));
            cal.schedule(at, Event::Departure { station: 0, job });
        }
        let mut seen = 0;
        loop {
            let peeked = cal.heap_next();
            let Some((_, e)) = cal.pop() else { break };
            if let Some(p) = peeked {
                assert_eq!(p, e);
                seen += 1;
            }
        }
        assert!(
            seen >= 4_000,
            "the radix heap's least entry was known ahead {seen} times"
        );
        // a lane alone: the event k places down it is popped k pops later
        for job in 0..100 {
            cal.schedule_lane(
                0,
                10 + u128::from(job / 3),
                Event::Departure { station: 0, job },
            );
        }
        let ahead: Vec<Option<Event>> = (0..100).map(|k| cal.lane_ahead(0, k)).collect();
        assert_eq!(cal.lane_ahead(0, 100), None);
        for a in ahead {
            assert_eq!(a, cal.pop().map(|(_, e)| e));
        }
    }

    #[test]
    fn a_lane_used_only_while_the_heap_is_small_keeps_the_heaps_order() {
        // grow past LANE_GROW_AT (the heap becomes a radix heap and the lane is passed over),
        // then shrink below SHRINK_AT (the lane serves again), against a plain calendar
        let mut plain: Calendar<Event, u128> = Calendar::new();
        let mut laned: LaneCalendar<Event, 2> = LaneCalendar::new();
        let mut next = crate::rng::lcg_below(13_u64);
        let (mut now, mut job) = (0_u128, 0);
        let (mut in_lane, mut in_heap_when_large, mut in_lane_after) = (0, 0, 0);
        let mut schedule = |plain: &mut Calendar<Event, u128>,
                            laned: &mut LaneCalendar<Event, 2>,
                            now: u128,
                            job: u32,
                            span: u64| {
            let ev = Event::Departure { station: 1, job };
            let at = now + u128::from(span);
            plain.schedule(at, ev);
            let large = laned.queue.mode == Mode::Large;
            let before = laned.lanes[1].len();
            laned.schedule_lane_while_small(1, at, ev);
            if laned.lanes[1].len() > before {
                assert!(
                    !large,
                    "the lane took an event while the heap was a radix heap"
                );
                in_lane += 1;
                if in_heap_when_large > 0 {
                    in_lane_after += 1;
                }
            } else if large {
                in_heap_when_large += 1;
            }
        };
        for round in 0..120_000_u32 {
            // pushes outrun pops for the first 10,000 rounds, then fall behind them
            let pushes = if round < 10_000 {
                2
            } else {
                u64::from(next(2) == 0)
            };
            for _ in 0..pushes {
                job += 1;
                // mostly a fixed span (in order), sometimes a shorter one (out of order)
                let span = if next(5) == 0 { next(4) } else { 7 };
                schedule(&mut plain, &mut laned, now, job, span);
            }
            // and events of the heap alone, far ahead, which make it grow
            if round < 10_000 || next(4) == 0 {
                job += 1;
                let (ev, at) = (
                    Event::Departure { station: 2, job },
                    now + 1 + u128::from(next(5000)),
                );
                plain.schedule(at, ev);
                laned.schedule(at, ev);
            }
            let (a, b) = (plain.pop(), laned.pop());
            assert_eq!(a, b, "round {round}");
            match a {
                Some((t, _)) => now = t,
                None => break,
            }
        }
        while let Some(a) = plain.pop() {
            assert_eq!(Some(a), laned.pop());
        }
        assert!(laned.is_empty());
        assert!(
            in_lane > 1000 && in_heap_when_large > 1000 && in_lane_after > 100,
            "{in_lane} {in_heap_when_large} {in_lane_after}"
        );
    }

    #[test]
    fn entries_pushed_below_the_run_are_popped_before_its_rest() {
        use std::collections::BTreeSet;
        let mut heap: RadixHeap<u64> = RadixHeap::new();
        let mut reference = BTreeSet::new();
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut seq = 0_u64;
        let mut push = |heap: &mut RadixHeap<u64>, reference: &mut BTreeSet<u128>, time: u64| {
            let key = (u128::from(time) << 64) | u128::from(seq);
            heap.push(Entry::new(key, seq));
            reference.insert(key);
            seq += 1;
        };
        // 600 times below 2^12: 16 buckets of some 40 entries, the first sorted into a run
        for _ in 0..600 {
            let time = xorshift(&mut x) >> 52;
            push(&mut heap, &mut reference, time);
        }
        let mut from_buckets_during_run = 0;
        let mut runs = 0;
        for round in 0..3_000 {
            let run_before = heap.run_at < heap.run.len();
            let head = heap.run.get(heap.run_at).map(Entry::key);
            let Some(e) = heap.pop() else { break };
            let want = reference.pop_first().expect("as many entries");
            assert_eq!(e.key(), want, "round {round}");
            assert_eq!(e.payload, want as u64);
            if run_before && head != Some(e.key()) {
                from_buckets_during_run += 1;
            }
            if !run_before && heap.run_at < heap.run.len() {
                runs += 1;
            }
            // successors a little later, inside the range of the run being popped
            let now = (want >> 64) as u64;
            for _ in 0..xorshift(&mut x) % 3 {
                push(&mut heap, &mut reference, now + (xorshift(&mut x) >> 58));
            }
            assert_eq!(heap.len(), reference.len());
        }
        assert!(runs > 10, "{runs} runs");
        assert!(
            from_buckets_during_run > 100,
            "{from_buckets_during_run} entries pushed below a run"
        );
    }

    #[test]
    fn lanes_deliver_in_the_heaps_order() {
        // the same random schedule on a plain wide calendar and on one with two lanes (lane 0:
        // now + 3, lane 1: now + a growing-or-not span that sometimes breaks the lane's order)
        let mut plain: Calendar<Event, u128> = Calendar::new();
        let mut laned: LaneCalendar<Event, 2> = LaneCalendar::new();
        let mut next = crate::rng::lcg_below(7_u64);
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
