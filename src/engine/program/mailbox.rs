//! Messages delivered and not yet received, counted by (destination, source, tag). Only the
//! count matters: messages of one (source, tag) are received in FIFO order and carry nothing
//! else.
//!
//! Each rank has one slot in an array, holding the count of one (source, tag); a further
//! (source, tag) waiting at the same rank goes to a hash map. A delivery and a
//! receive that find their slot touch one rank's entry in an array that stays in cache far
//! longer than the hash map's random buckets (at 4,096 ranks 64 KiB): on a bus, where the
//! link serialises the messages, that is most of them; a binomial reduce on a torus, whose
//! leaves run dozens of collectives ahead of the root, leaves most kinds in the map. The
//! counts of one key may be split between a slot and the map; only their sum is read.

use rustc_hash::FxHashMap;

/// `count` messages from `src` with `tag` (none when `count` is zero).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    src: u32,
    count: u32,
    tag: u64,
}

impl Slot {
    /// Whether it holds messages from `src` with `tag`.
    #[inline(always)]
    fn holds(&self, src: u32, tag: u64) -> bool {
        self.count > 0 && self.src == src && self.tag == tag
    }
}

/// The waiting messages of every rank.
#[derive(Debug)]
pub struct Mailbox {
    slots: Vec<Slot>,
    /// The rest, by (destination, source, tag).
    more: FxHashMap<(u32, u32, u64), u32>,
}

impl Mailbox {
    /// An empty mailbox for `ranks` ranks.
    pub fn new(ranks: u32) -> Self {
        Mailbox {
            slots: vec![Slot::default(); ranks as usize],
            more: FxHashMap::default(),
        }
    }

    /// A message from `src` with `tag` waits at `dst`.
    #[inline(always)]
    pub fn put(&mut self, dst: u32, src: u32, tag: u64) {
        let s = &mut self.slots[dst as usize];
        if s.holds(src, tag) {
            s.count += 1;
        } else if s.count == 0 {
            *s = Slot { src, count: 1, tag };
        } else {
            *self.more.entry((dst, src, tag)).or_insert(0) += 1;
        }
    }

    /// Takes a message from `src` with `tag` waiting at `dst`, if there is one.
    #[inline(always)]
    pub fn take(&mut self, dst: u32, src: u32, tag: u64) -> bool {
        let s = &mut self.slots[dst as usize];
        if s.holds(src, tag) {
            s.count -= 1;
            return true;
        }
        if self.more.is_empty() {
            return false;
        }
        match self.more.get_mut(&(dst, src, tag)) {
            Some(n) if *n > 1 => {
                *n -= 1;
                true
            }
            Some(_) => {
                self.more.remove(&(dst, src, tag));
                true
            }
            None => false,
        }
    }

    /// How many messages wait.
    pub fn total(&self) -> u64 {
        let slots: u64 = self.slots.iter().map(|s| u64::from(s.count)).sum();
        slots + self.more.values().map(|&n| u64::from(n)).sum::<u64>()
    }

    /// The least (destination, source, tag) with a message waiting, and how many wait with it.
    pub fn first(&self) -> Option<((u32, u32, u64), u64)> {
        let in_slots = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.count > 0)
            .map(|(d, s)| (d as u32, s.src, s.tag));
        let key = in_slots.chain(self.more.keys().copied()).min()?;
        let (dst, src, tag) = key;
        let s = self.slots[dst as usize];
        let in_slot = if s.holds(src, tag) { s.count } else { 0 };
        let n = u64::from(in_slot) + self.more.get(&key).map_or(0, |&n| u64::from(n));
        Some((key, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Against a map of counts: every take answers as the map does, and what is left (the
    /// total, the least key and its count) agrees, with keys split between slot and map.
    #[test]
    fn counts_as_one_map_of_counts_does() {
        let mut next = crate::rng::xorshift(2024_u64);
        let mut spilled = 0;
        for round in 0..50 {
            let ranks = 1 + (next() % 6) as u32;
            // one kind of message a rank (it fits the slot), or several
            let kinds = [1, 4][round % 2];
            let mut m = Mailbox::new(ranks);
            let mut model: BTreeMap<(u32, u32, u64), u64> = BTreeMap::new();
            let (mut puts, mut hits) = (0, 0);
            for _ in 0..2000 {
                let mut key = (
                    (next() % u64::from(ranks)) as u32,
                    (next() % kinds) as u32,
                    next() % 2,
                );
                let take = next().is_multiple_of(2);
                if take && !model.is_empty() && next().is_multiple_of(2) {
                    // one that waits
                    key = *model
                        .keys()
                        .nth(next() as usize % model.len())
                        .expect("a key");
                }
                if !take {
                    m.put(key.0, key.1, key.2);
                    *model.entry(key).or_insert(0) += 1;
                    puts += 1;
                } else {
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
                }
                assert_eq!(m.total(), model.values().sum::<u64>());
                assert_eq!(m.first(), model.iter().next().map(|(&k, &n)| (k, n)));
                spilled += usize::from(!m.more.is_empty());
            }
            assert!(puts > 800 && hits > 300, "{puts} {hits}");
        }
        assert!(spilled > 1000, "{spilled}");
        // a key split between the slot and the map: a rank with two kinds waiting
        let mut m = Mailbox::new(1);
        let over = 1;
        m.put(0, 0, 7);
        m.put(0, over, 7);
        m.put(0, over, 7);
        assert_eq!(m.more.len(), 1);
        assert_eq!(m.first(), Some(((0, 0, 7), 1)));
        assert!(m.take(0, 0, 7));
        m.put(0, over, 7); // into the slot just freed
        assert_eq!(m.first(), Some(((0, over, 7), 3)));
        assert_eq!(m.total(), 3);
        for _ in 0..3 {
            assert!(m.take(0, over, 7));
        }
        assert!(!m.take(0, over, 7));
        assert_eq!((m.first(), m.total()), (None, 0));
    }
}
