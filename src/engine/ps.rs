//! Processor sharing on one server, by virtual time.
//!
//! With `n` jobs present each is served at rate `1/n`. The virtual time `V` advances at rate
//! `1/n`; a job arriving at `V_a` with work `s` finishes when `V` reaches its tag `V_a + s`, so
//! the next departure is the job with the least tag, due at `now + (tag - V) n`. Any arrival or
//! departure changes `n`, so the station's pending departure event is superseded: a generation
//! counter marks the current one and stale events are ignored when they come up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The state of a processor-sharing station.
#[derive(Debug, Default)]
pub struct PsQueue {
    vtime: f64,
    last: f64,
    jobs: BinaryHeap<Reverse<(u64, u32)>>,
    generation: u32,
}

impl PsQueue {
    fn advance(&mut self, now: f64) {
        let n = self.jobs.len();
        if n > 0 {
            self.vtime += (now - self.last) / n as f64;
        }
        self.last = now;
    }

    /// A job arrives with `work`; returns the new generation and the time of the next departure.
    pub fn arrive(&mut self, now: f64, job: u32, work: f64) -> (u32, f64) {
        self.advance(now);
        let tag = self.vtime + work;
        self.jobs.push(Reverse((tag.to_bits(), job)));
        self.next(now)
    }

    /// True when `generation` is the current one (the event is not stale).
    pub fn is_current(&self, generation: u32) -> bool {
        generation == self.generation
    }

    /// The least-tag job departs; returns it and, if jobs remain, the next generation and due time.
    pub fn depart(&mut self, now: f64) -> (u32, Option<(u32, f64)>) {
        self.advance(now);
        let Reverse((tag, job)) = self.jobs.pop().expect("a current PS departure has a job");
        self.vtime = f64::from_bits(tag);
        let next = (!self.jobs.is_empty()).then(|| self.next(now));
        (job, next)
    }

    fn next(&mut self, now: f64) -> (u32, f64) {
        self.generation = self.generation.wrapping_add(1);
        let Reverse((tag, _)) = *self.jobs.peek().expect("called with jobs present");
        let due = now + ((f64::from_bits(tag) - self.vtime) * self.jobs.len() as f64).max(0.0);
        (self.generation, due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_jobs_share_the_server() {
        let mut ps = PsQueue::default();
        let (g1, due) = ps.arrive(0.0, 1, 2.0);
        assert_eq!(due, 2.0);
        // a second job of work 1 at t=1: job 1 has 1 left, both at rate 1/2
        let (g2, due) = ps.arrive(1.0, 2, 1.0);
        assert!(!ps.is_current(g1) && ps.is_current(g2));
        assert!((due - 3.0).abs() < 1e-12, "{due}");
        let (first, next) = ps.depart(due);
        assert_eq!(first, 1); // tie on tags: both finish at t=3, lower tag bits first
        let (_, due) = next.unwrap();
        assert!((due - 3.0).abs() < 1e-12);
        let (second, next) = ps.depart(due);
        assert_eq!(second, 2);
        assert!(next.is_none());
    }
}
