//! Per operation, how many of its dependencies are still to be satisfied: one byte each, the
//! rare count above [`SMALL_MAX`] in a side table.
//!
//! The counter behaves as LogGOPSim's (an integer that is decremented at each dependency
//! satisfied, the operation ready when it reaches zero, and decremented past zero when a
//! dependency is satisfied twice, which a rendezvous send finished again does): a byte that
//! reaches zero and is decremented again becomes [`SPENT`] and stays so, as a wrapped 32-bit
//! counter never reaches zero again; a large count keeps LogGOPSim's wrapping 32-bit form in the
//! side table.

use rustc_hash::FxHashMap;

use crate::engine::prefetch::prefetch;
use crate::schedule::dag::Dag;

/// The largest count kept in the byte.
const SMALL_MAX: u8 = 253;
/// The byte of a counter decremented past zero.
const SPENT: u8 = 254;
/// The byte of a counter kept in the side table.
const LARGE: u8 = 255;

/// The counters of a schedule's operations.
#[derive(Debug)]
pub struct Counters {
    small: Vec<u8>,
    /// Operation to (count, dependencies) for counts above [`SMALL_MAX`].
    large: FxHashMap<u32, (u32, u32)>,
}

impl Counters {
    /// Every operation's count of dependencies (its `requires` and `irequires`).
    pub fn new(dag: &Dag) -> Counters {
        let mut small = vec![0u8; dag.len()];
        let mut large = FxHashMap::default();
        for &e in dag.raw_edges() {
            let a = Dag::edge_target(e);
            let c = &mut small[a as usize];
            if *c < SMALL_MAX {
                *c += 1;
            } else {
                if *c == SMALL_MAX {
                    large.insert(a, (u32::from(SMALL_MAX), 0));
                    *c = LARGE;
                }
                large.get_mut(&a).expect("inserted").0 += 1;
            }
        }
        for (count, deps) in large.values_mut() {
            *deps = *count;
        }
        Counters { small, large }
    }

    /// Starts loading operation `i`'s counter (and its neighbours', those of its dependents).
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        if let Some(c) = self.small.get(i as usize) {
            prefetch(c);
        }
    }

    /// Whether operation `i` waits for nothing.
    pub fn is_free(&self, i: u32) -> bool {
        self.small[i as usize] == 0
    }

    /// One dependency of operation `i` is satisfied; true when that makes it ready.
    #[inline(always)]
    pub fn satisfy(&mut self, i: u32) -> bool {
        let c = &mut self.small[i as usize];
        match *c {
            1..=SMALL_MAX => {
                *c -= 1;
                *c == 0
            }
            0 => {
                *c = SPENT;
                false
            }
            SPENT => false,
            LARGE => {
                let (count, _) = self.large.get_mut(&i).expect("a large counter");
                *count = count.wrapping_sub(1);
                *count == 0
            }
        }
    }

    /// The operations that never became ready: their count is above zero and no more than
    /// their dependencies (not decremented past zero).
    pub fn never_ready(&self) -> impl Iterator<Item = u32> + '_ {
        self.small
            .iter()
            .enumerate()
            .filter(|&(i, &c)| match c {
                1..=SMALL_MAX => true,
                LARGE => {
                    let (count, deps) = self.large[&(i as u32)];
                    count > 0 && count <= deps
                }
                _ => false,
            })
            .map(|(i, _)| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::marks::Dependency;
    use crate::schedule::dag::DagBuilder;

    /// One calc waited for by 300 others (a large count), each of those by one.
    #[test]
    fn counts_large_and_small_and_past_zero() {
        let mut b = DagBuilder::new(1).unwrap();
        b.begin_rank().unwrap();
        let sink = b.calc(1, 0).unwrap();
        for _ in 0..300 {
            let a = b.calc(1, 0).unwrap();
            b.depend(sink, a, Dependency::Requires).unwrap();
        }
        let last = b.calc(1, 0).unwrap();
        b.depend(last, 1, Dependency::Requires).unwrap();
        b.end_rank().unwrap();
        let dag = b.finish().unwrap();
        let mut c = Counters::new(&dag);
        assert!(!c.is_free(sink) && c.is_free(1) && !c.is_free(last));
        assert_eq!(c.never_ready().collect::<Vec<_>>(), [sink, last]);
        for k in 0..299 {
            assert!(!c.satisfy(sink), "{k}");
        }
        assert!(c.satisfy(sink));
        assert!(c.satisfy(last));
        assert!(c.never_ready().next().is_none());
        // satisfied once more: past zero, never ready again and not counted as never ready
        for i in [sink, last] {
            assert!(!c.satisfy(i) && !c.satisfy(i));
        }
        assert!(c.never_ready().next().is_none());
    }
}
