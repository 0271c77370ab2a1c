//! The walker's two lookups on every message: a link's accumulator slot, and the messages
//! posted to a (destination, source, tag) not yet received. Both are kept out of the way of
//! the allocator and of a hash where they can be: a topology of a few links per node indexes
//! its slots by link id, and a mailbox holds its first message inline (a program's mailboxes
//! hold one message almost always), so posting and taking it allocate nothing.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

/// Links per node (or rank) up to which the slots are a table indexed by link id: 4 bytes per
/// link of the topology, against a hash lookup per hop (a torus has 2 per dimension, a
/// fat tree 2 per switch port).
const DENSE_PER_NODE: u64 = 16;

/// No slot yet.
const FREE: u32 = u32::MAX;

/// Each crossed link's slot in the walker's accumulators, by link id.
#[derive(Debug)]
pub(super) enum LinkSlots {
    /// By link id, [`FREE`] where the link has not been crossed yet.
    Dense(Vec<u32>),
    /// For topologies with many links per node (a full mesh): only the links crossed.
    Sparse(FxHashMap<u64, u32>),
}

impl LinkSlots {
    /// The slots of a topology of `links` link ids and `nodes` nodes.
    pub(super) fn new(links: u64, nodes: u64) -> LinkSlots {
        if links <= DENSE_PER_NODE * nodes.max(1) {
            LinkSlots::Dense(vec![FREE; links as usize])
        } else {
            LinkSlots::Sparse(FxHashMap::default())
        }
    }

    /// `link`'s slot, if it has one.
    #[inline]
    pub(super) fn get(&self, link: u64) -> Option<u32> {
        match self {
            LinkSlots::Dense(v) => v.get(link as usize).copied().filter(|&s| s != FREE),
            LinkSlots::Sparse(m) => m.get(&link).copied(),
        }
    }

    /// Gives `link` the slot `slot`.
    pub(super) fn insert(&mut self, link: u64, slot: u32) {
        match self {
            LinkSlots::Dense(v) => match v.get_mut(link as usize) {
                Some(s) => *s = slot,
                // (an id beyond the topology's count: kept all the same)
                None => {
                    let mut m: FxHashMap<u64, u32> = v
                        .iter()
                        .enumerate()
                        .filter(|&(_, &s)| s != FREE)
                        .map(|(l, &s)| (l as u64, s))
                        .collect();
                    m.insert(link, slot);
                    *self = LinkSlots::Sparse(m);
                }
            },
            LinkSlots::Sparse(m) => {
                m.insert(link, slot);
            }
        }
    }
}

/// The messages posted to one (destination, source, tag) and not yet received, in send order:
/// the first inline, the rest behind it.
#[derive(Debug)]
struct Queue<T> {
    first: T,
    rest: VecDeque<T>,
}

/// The messages not yet received, by (destination, source, tag), each key's in send order.
#[derive(Debug)]
pub(super) struct Mailbox<T> {
    queues: FxHashMap<(u32, u32, u64), Queue<T>>,
}

impl<T> Default for Mailbox<T> {
    fn default() -> Mailbox<T> {
        Mailbox {
            queues: FxHashMap::default(),
        }
    }
}

impl<T> Mailbox<T> {
    /// Posts `message` behind those already posted to `key`.
    #[inline]
    pub(super) fn post(&mut self, key: (u32, u32, u64), message: T) {
        use std::collections::hash_map::Entry;
        match self.queues.entry(key) {
            Entry::Occupied(mut q) => q.get_mut().rest.push_back(message),
            Entry::Vacant(v) => {
                v.insert(Queue {
                    first: message,
                    rest: VecDeque::new(),
                });
            }
        }
    }

    /// Takes the first message posted to `key`, if any.
    #[inline]
    pub(super) fn take(&mut self, key: (u32, u32, u64)) -> Option<T> {
        let q = self.queues.get_mut(&key)?;
        match q.rest.pop_front() {
            Some(next) => Some(std::mem::replace(&mut q.first, next)),
            None => self.queues.remove(&key).map(|q| q.first),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mailbox_gives_each_key_its_messages_in_send_order() {
        let mut m = Mailbox::default();
        m.post((1, 2, 0), 'a');
        m.post((1, 3, 0), 'x');
        m.post((1, 2, 0), 'b');
        m.post((1, 2, 0), 'c');
        assert_eq!(m.take((1, 2, 0)), Some('a'));
        m.post((1, 2, 0), 'd');
        assert_eq!(m.take((1, 2, 0)), Some('b'));
        assert_eq!(m.take((1, 2, 0)), Some('c'));
        assert_eq!(m.take((1, 2, 0)), Some('d'));
        assert_eq!(m.take((1, 2, 0)), None);
        assert_eq!(m.take((1, 3, 0)), Some('x'));
        assert_eq!(m.take((1, 3, 0)), None);
        assert!(m.queues.is_empty());
    }

    #[test]
    fn link_slots_are_found_dense_or_sparse() {
        for mut s in [LinkSlots::new(8, 4), LinkSlots::new(1000, 4)] {
            assert_eq!(s.get(5), None);
            s.insert(5, 0);
            s.insert(2, 1);
            assert_eq!((s.get(5), s.get(2), s.get(3)), (Some(0), Some(1), None));
            // an id beyond the count
            s.insert(4000, 2);
            assert_eq!(
                (s.get(4000), s.get(5), s.get(2)),
                (Some(2), Some(0), Some(1))
            );
        }
    }
}
