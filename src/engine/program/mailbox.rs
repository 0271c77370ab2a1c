//! Messages delivered and not yet received, counted by (destination, source, tag). Only the
//! count matters: messages of one (source, tag) are received in FIFO order and carry nothing
//! else.
//!
//! The messages from one source to one rank are kept as a [`Run`]: some with one tag, then one
//! each with the tags after it. That is how a collective's steps arrive from a partner that
//! runs ahead: a binomial reduce on a 4,096-rank torus, whose leaves run dozens of collectives
//! ahead of the root, keeps some 56,000 (destination, source, tag) kinds waiting at once, and
//! only 4,095 (destination, source) pairs. Each rank has one run in an array (a delivery and a
//! receive that find it touch one entry that stays in cache); a message that the rank's run
//! cannot hold (another source's, or its own source's out of sequence) goes to a run in a map
//! by (destination, source), small enough to stay in cache as well; one that extends no run
//! goes to a map by (destination, source, tag). The count of one key may be split between the
//! three; only the sum is read.

use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// Waiting messages from one source: `count` with `tag`, then one with each of the `after`
/// tags that follow it. An empty run (a free slot) has `count` and `after` zero; a run in the
/// map by pair is never empty.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Run {
    /// The first tag.
    tag: u64,
    /// Messages with the first tag.
    count: u32,
    /// Tags after the first, one message each.
    after: u32,
}

/// Where a tag is in a run.
enum Place {
    /// Its first tag: taken from the front.
    Front,
    /// One of the tags after the first: the run breaks to take it.
    Inside,
    /// Not in the run.
    Absent,
}

impl Run {
    /// One message with `tag`.
    fn one(tag: u64) -> Run {
        Run {
            tag,
            count: 1,
            after: 0,
        }
    }

    /// Adds a message with `tag` to a run that is not empty if it can hold it: another with
    /// its only tag, or one with the tag after its last.
    #[inline(always)]
    fn extend(&mut self, tag: u64) -> bool {
        if self.after == 0 && tag == self.tag && self.count < u32::MAX {
            self.count += 1;
            true
        } else if self.after < u32::MAX
            && self.tag.checked_add(u64::from(self.after) + 1) == Some(tag)
        {
            self.after += 1;
            true
        } else {
            false
        }
    }

    /// Where `tag` is in the run.
    #[inline(always)]
    fn find(&self, tag: u64) -> Place {
        if self.count == 0 {
            Place::Absent
        } else if tag == self.tag {
            Place::Front
        } else if tag > self.tag && tag - self.tag <= u64::from(self.after) {
            Place::Inside
        } else {
            Place::Absent
        }
    }

    /// Takes a message with the first tag; the run must hold one.
    #[inline(always)]
    fn take_front(&mut self) {
        self.count -= 1;
        if self.count == 0 && self.after > 0 {
            self.tag += 1;
            self.count = 1;
            self.after -= 1;
        }
    }

    /// How many messages wait with `tag` if it is the run's first tag, else none (the least
    /// waiting key is never inside a run: the run's first tag is less).
    fn at_front(&self, tag: u64) -> u32 {
        if self.count > 0 && self.tag == tag {
            self.count
        } else {
            0
        }
    }

    /// How many messages the run holds.
    fn len(&self) -> u64 {
        u64::from(self.count) + u64::from(self.after)
    }

    /// Each tag of a run that is not empty, with its count.
    fn parts(self) -> impl Iterator<Item = (u64, u32)> {
        std::iter::once((self.tag, self.count))
            .chain((1..=u64::from(self.after)).map(move |k| (self.tag + k, 1)))
    }
}

/// A rank's own run: the messages waiting from `src`.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// The source of the run's messages (stale when the run is empty).
    src: u32,
    /// The messages.
    run: Run,
}

/// The waiting messages of every rank.
#[derive(Debug)]
pub struct Mailbox {
    slots: Vec<Slot>,
    /// A run by (destination, source) beside the slot's.
    runs: FxHashMap<(u32, u32), Run>,
    /// The messages no run could hold, by (destination, source, tag).
    rest: FxHashMap<(u32, u32, u64), u64>,
}

impl Mailbox {
    /// An empty mailbox for `ranks` ranks.
    pub fn new(ranks: u32) -> Self {
        Mailbox {
            slots: vec![Slot::default(); ranks as usize],
            runs: FxHashMap::default(),
            rest: FxHashMap::default(),
        }
    }

    /// A message from `src` with `tag` waits at `dst`.
    #[inline(always)]
    pub fn put(&mut self, dst: u32, src: u32, tag: u64) {
        let s = &mut self.slots[dst as usize];
        if s.run.count == 0 {
            *s = Slot {
                src,
                run: Run::one(tag),
            };
            return;
        }
        if s.src == src && s.run.extend(tag) {
            return;
        }
        let fits = match self.runs.entry((dst, src)) {
            Entry::Vacant(v) => {
                v.insert(Run::one(tag));
                true
            }
            Entry::Occupied(mut o) => o.get_mut().extend(tag),
        };
        if !fits {
            *self.rest.entry((dst, src, tag)).or_insert(0) += 1;
        }
    }

    /// Takes a message from `src` with `tag` waiting at `dst`, if there is one: from the front
    /// of a run or from the map by tag, and only when neither holds one, by breaking a run
    /// that holds the tag after its first.
    #[inline(always)]
    pub fn take(&mut self, dst: u32, src: u32, tag: u64) -> bool {
        let s = &mut self.slots[dst as usize];
        let in_slot = if s.src == src {
            s.run.find(tag)
        } else {
            Place::Absent
        };
        match in_slot {
            Place::Front => {
                s.run.take_front();
                return true;
            }
            Place::Absent if self.runs.is_empty() && self.rest.is_empty() => return false,
            _ => {}
        }
        let in_pair = match self.runs.get_mut(&(dst, src)) {
            None => Place::Absent,
            Some(run) => match run.find(tag) {
                Place::Front => {
                    run.take_front();
                    if run.count == 0 {
                        self.runs.remove(&(dst, src));
                    }
                    return true;
                }
                place => place,
            },
        };
        if self.take_from_rest(dst, src, tag) {
            return true;
        }
        let run = match (in_slot, in_pair) {
            (Place::Inside, _) => std::mem::take(&mut self.slots[dst as usize].run),
            (_, Place::Inside) => self
                .runs
                .remove(&(dst, src))
                .expect("the run found inside the map"),
            _ => return false,
        };
        self.spill(dst, src, run);
        self.take_from_rest(dst, src, tag)
    }

    /// Takes a message from `src` with `tag` waiting at `dst` from the map by tag, if it holds
    /// one.
    #[inline(always)]
    fn take_from_rest(&mut self, dst: u32, src: u32, tag: u64) -> bool {
        if self.rest.is_empty() {
            return false;
        }
        match self.rest.entry((dst, src, tag)) {
            Entry::Occupied(mut n) if *n.get() > 1 => {
                *n.get_mut() -= 1;
                true
            }
            Entry::Occupied(n) => {
                n.remove();
                true
            }
            Entry::Vacant(_) => false,
        }
    }

    /// Moves the messages of a run that breaks (a tag after its first is received) to the
    /// map by tag. Each message moves at most once, so a program that receives out of order
    /// pays for it once.
    #[cold]
    #[inline(never)]
    fn spill(&mut self, dst: u32, src: u32, run: Run) {
        for (tag, n) in run.parts() {
            *self.rest.entry((dst, src, tag)).or_insert(0) += u64::from(n);
        }
    }

    /// How many messages wait.
    pub fn total(&self) -> u64 {
        let slots: u64 = self.slots.iter().map(|s| s.run.len()).sum();
        let runs: u64 = self.runs.values().map(Run::len).sum();
        slots + runs + self.rest.values().sum::<u64>()
    }

    /// The least (destination, source, tag) with a message waiting, and how many wait with it.
    pub fn first(&self) -> Option<((u32, u32, u64), u64)> {
        let in_slots = (self.slots.iter().enumerate())
            .filter(|(_, s)| s.run.count > 0)
            .map(|(d, s)| (d as u32, s.src, s.run.tag));
        let in_runs = (self.runs.iter()).map(|(&(d, s), r)| (d, s, r.tag));
        let key = (in_slots.chain(in_runs))
            .chain(self.rest.keys().copied())
            .min()?;
        let (dst, src, tag) = key;
        let s = self.slots[dst as usize];
        let in_slot = if s.src == src { s.run.at_front(tag) } else { 0 };
        let in_run = self.runs.get(&(dst, src)).map_or(0, |r| r.at_front(tag));
        let n = u64::from(in_slot) + u64::from(in_run) + self.rest.get(&key).copied().unwrap_or(0);
        Some((key, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Against a map of counts: every take answers as the map does, and what is left (the
    /// total, the least key and its count) agrees. The puts follow a source's last tag often
    /// enough to build runs in the slots and in the map by pair, and the takes pick keys
    /// inside runs, so that runs break and spill.
    #[test]
    fn counts_as_one_map_of_counts_does() {
        let mut next = crate::rng::xorshift(2024_u64);
        let (mut in_runs, mut in_rest, mut spills) = (0, 0, 0);
        for round in 0..60 {
            let ranks = 1 + (next() % 6) as u32;
            // one source a rank (its slot), or several
            let sources = [1, 4][round % 2];
            let mut m = Mailbox::new(ranks);
            let mut model: BTreeMap<(u32, u32, u64), u64> = BTreeMap::new();
            let mut last: BTreeMap<(u32, u32), u64> = BTreeMap::new();
            let (mut puts, mut hits) = (0, 0);
            for _ in 0..2000 {
                let dst = (next() % u64::from(ranks)) as u32;
                let src = (next() % sources) as u32;
                let follow = last.get(&(dst, src)).copied().unwrap_or(0);
                let mut key = match next() % 4 {
                    0 | 1 => (dst, src, follow + 1),
                    2 => (dst, src, follow),
                    _ => (dst, src, next() % 8),
                };
                let take = next().is_multiple_of(2);
                if take && !model.is_empty() && next().is_multiple_of(2) {
                    // one that waits, often inside a run
                    key = *model
                        .keys()
                        .nth(next() as usize % model.len())
                        .expect("a key");
                }
                if !take {
                    m.put(key.0, key.1, key.2);
                    *model.entry(key).or_insert(0) += 1;
                    last.insert((key.0, key.1), key.2);
                    puts += 1;
                } else {
                    let rest = m.rest.len();
                    let expected = match model.get_mut(&key) {
                        Some(n) => {
                            *n -= 1;
                            if *n == 0 {
                                model.remove(&key);
                            }
                            true
                        }
                        None => false,
                    };
                    assert_eq!(m.take(key.0, key.1, key.2), expected, "round {round}");
                    hits += u32::from(expected);
                    spills += usize::from(m.rest.len() > rest);
                }
                assert_eq!(m.total(), model.values().sum::<u64>());
                if model.is_empty() {
                    assert!(m.runs.is_empty() && m.rest.is_empty(), "round {round}");
                }
                assert_eq!(m.first(), model.iter().next().map(|(&k, &n)| (k, n)));
                in_runs += usize::from(m.runs.values().any(|r| r.after > 0));
                in_rest += usize::from(!m.rest.is_empty());
            }
            assert!(puts > 800 && hits > 300, "{puts} {hits}");
        }
        assert!(
            in_runs > 1000 && in_rest > 1000 && spills > 100,
            "{in_runs} {in_rest} {spills}"
        );
    }

    /// A collective's steps from two partners that run ahead: each partner's tags form one
    /// run, one in the slot and one in the map by pair, and nothing goes to the map by tag;
    /// so do repeats of one tag.
    #[test]
    fn partners_running_ahead_keep_one_run_each() {
        let mut m = Mailbox::new(2);
        for step in 0..50 {
            m.put(0, 1, 100 + step);
            m.put(0, 2, 100 + step);
        }
        assert_eq!(
            m.slots[0].run,
            Run {
                tag: 100,
                count: 1,
                after: 49
            }
        );
        assert_eq!(m.runs.len(), 1);
        assert!(m.rest.is_empty());
        for step in 0..50 {
            assert!(m.take(0, 2, 100 + step));
            assert!(m.take(0, 1, 100 + step));
        }
        assert!(!m.take(0, 1, 150));
        assert!(m.runs.is_empty() && m.rest.is_empty());
        assert_eq!(m.total(), 0);
        // point-to-point messages of one tag, then the next tag: one run as well
        for tag in [7, 7, 7, 8] {
            m.put(1, 0, tag);
        }
        assert_eq!(
            m.slots[1].run,
            Run {
                tag: 7,
                count: 3,
                after: 1
            }
        );
        assert!(m.runs.is_empty() && m.rest.is_empty());
    }

    /// At the ends of the counters: the tag after `u64::MAX` does not wrap to 0 in a run, and a
    /// run full of one tag, or of tags after it, sends the next message to the map by pair.
    #[test]
    fn runs_stop_at_the_ends_of_their_counters() {
        let mut m = Mailbox::new(1);
        m.put(0, 0, u64::MAX);
        m.put(0, 0, 0);
        assert_eq!(m.slots[0].run, Run::one(u64::MAX));
        assert_eq!(m.first(), Some(((0, 0, 0), 1)));
        assert!(m.take(0, 0, 0));
        assert_eq!(m.first(), Some(((0, 0, u64::MAX), 1)));
        assert!(m.take(0, 0, u64::MAX) && !m.take(0, 0, u64::MAX));

        let full = u64::from(u32::MAX);
        // one tag, u32::MAX - 1 times, then twice more
        let mut m = Mailbox::new(1);
        m.slots[0].run = Run {
            tag: 5,
            count: u32::MAX - 1,
            after: 0,
        };
        m.put(0, 0, 5);
        m.put(0, 0, 5);
        assert_eq!((m.slots[0].run.count, m.runs.len()), (u32::MAX, 1));
        assert_eq!(m.first(), Some(((0, 0, 5), full + 1)));
        // one tag, then u32::MAX - 1 after it, then the next two
        let mut m = Mailbox::new(1);
        m.slots[0].run = Run {
            tag: 5,
            count: 1,
            after: u32::MAX - 1,
        };
        m.put(0, 0, 5 + full);
        m.put(0, 0, 6 + full);
        assert_eq!((m.slots[0].run.after, m.runs.len()), (u32::MAX, 1));
        assert_eq!(m.total(), full + 2);
        assert!(m.take(0, 0, 6 + full) && m.runs.is_empty());
        assert_eq!(m.total(), full + 1);
    }
}
