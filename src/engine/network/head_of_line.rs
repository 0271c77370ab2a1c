//! FCFS stations whose only feature is head-of-line (non-preemptive) priority: the engine's fast
//! path for them. A service, once started, runs to its end, so it ends by the plain
//! [`super::Event::Departure`] that carries the job's record, as at a plain FCFS station; only
//! the queue differs, one per priority level. Stations with preemption, a capacity, impatience or
//! a load-dependent speed go through [`super::featured`] instead.
//!
//! The order is the featured path's: the head of the most urgent non-empty level is served
//! next, FCFS within a level; so is the sequence of draws and of scheduled events, and a run
//! gives the same figures, bit for bit, by either path.

use std::collections::VecDeque;

use crate::network::Class;

/// The run-time state of an FCFS station with head-of-line priority and no other feature.
#[derive(Debug)]
pub(super) struct HeadOfLine {
    /// Number of servers.
    pub(super) servers: u32,
    /// Servers busy (or holding a job blocked after its service).
    pub(super) busy: u32,
    /// The waiting jobs of each level, most urgent first, each in order of arrival.
    levels: Box<[VecDeque<u32>]>,
    /// The level (position in `levels`) of each class.
    level_of: Box<[u32]>,
}

impl HeadOfLine {
    /// The empty state of a station of `servers` servers serving `classes` by their
    /// priorities.
    pub(super) fn new(servers: u32, classes: &[Class]) -> HeadOfLine {
        let (levels, level_of) = priority_levels(classes);
        HeadOfLine {
            servers,
            busy: 0,
            levels: vec![VecDeque::new(); levels].into_boxed_slice(),
            level_of,
        }
    }

    /// Queues `job` of class `class` behind the jobs of its level.
    #[inline]
    pub(super) fn push(&mut self, job: u32, class: u32) {
        self.levels[self.level_of[class as usize] as usize].push_back(job);
    }

    /// The next job to serve: the head of the most urgent non-empty level.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<u32> {
        self.levels.iter_mut().find_map(VecDeque::pop_front)
    }
}

/// The priority levels of `classes`: how many distinct priorities there are, and each class's
/// level (0 the most urgent: the smallest priority).
pub(super) fn priority_levels(classes: &[Class]) -> (usize, Box<[u32]>) {
    let mut priorities: Vec<i32> = classes.iter().map(|c| c.priority).collect();
    priorities.sort_unstable();
    priorities.dedup();
    let level_of = classes
        .iter()
        .map(|c| {
            priorities
                .binary_search(&c.priority)
                .expect("every class's priority is among them") as u32
        })
        .collect();
    (priorities.len(), level_of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::ClassKind;

    fn class(priority: i32) -> Class {
        Class {
            name: format!("p{priority}"),
            kind: ClassKind::Open,
            priority,
        }
    }

    #[test]
    fn the_most_urgent_level_is_served_first_and_fcfs_within_a_level() {
        let mut q = HeadOfLine::new(1, &[class(5), class(-2), class(5)]);
        q.push(10, 0);
        q.push(11, 2);
        q.push(12, 1);
        q.push(13, 0);
        assert_eq!(
            std::iter::from_fn(|| q.pop()).collect::<Vec<_>>(),
            [12, 10, 11, 13]
        );
    }
}
