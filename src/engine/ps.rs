//! Processor sharing on one server, by virtual time.
//!
//! With `n` jobs present each is served at rate `1/n`. The virtual time `V` advances at rate
//! `1/n`; a job arriving at `V_a` with work `s` finishes when `V` reaches its tag `V_a + s`, so
//! the next departure is the job with the least tag, due at `now + (tag - V) n`. Any arrival or
//! departure changes `n`, so the station's pending departure event is superseded: a generation
//! counter marks the current one and stale events are ignored when they come up.
//!
//! Times are 128-bit clock ticks (the queueing engine's 64-bit ticks widen losslessly; rank
//! programs use 128 bits). Virtual time is fixed point, ticks with `FRACTION_BITS` binary
//! places, so it keeps its precision however long the run (an `f64` virtual time of `10^21`
//! ticks would resolve only to `10^5` ticks); runs up to `2^95` ticks fit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Binary places of the virtual time below one tick: each advance rounds by at most
/// `2^-32` tick, so `10^10` events move a departure by under three ticks.
const FRACTION_BITS: u32 = 32;

/// The state of a processor-sharing station (or of a fair-shared link).
#[derive(Debug, Default)]
pub struct PsQueue {
    vtime: u128,
    last: u128,
    jobs: BinaryHeap<Reverse<(u128, u32)>>,
    generation: u32,
    /// The server's speed with 1, 2, ... jobs present (the last for more); none: speed 1.
    speeds: Option<Box<[f64]>>,
}

impl PsQueue {
    /// An empty queue whose server runs at `speeds[n - 1]` times its rate with `n` jobs
    /// present (the last entry for every larger `n`), or at its rate without `speeds`. Rounding
    /// a speed's product to a fixed-point step costs at most one unit of `2^-32` tick per
    /// event.
    pub fn with_speeds(speeds: Option<&[f64]>) -> PsQueue {
        PsQueue {
            speeds: speeds.map(Box::from),
            ..PsQueue::default()
        }
    }

    /// The speed with the jobs present.
    fn speed(&self) -> Option<f64> {
        let r = self.speeds.as_deref()?;
        Some(crate::network::rate_multiple(r, self.jobs.len()))
    }

    fn advance(&mut self, now: u128) {
        let n = self.jobs.len() as u128;
        let elapsed = (now - self.last) << FRACTION_BITS;
        match self.speed() {
            None => {
                if let Some(step) = elapsed.checked_div(n) {
                    self.vtime += step;
                }
            }
            Some(speed) if n > 0 => self.vtime += (elapsed as f64 * speed / n as f64) as u128,
            Some(_) => {}
        }
        self.last = now;
    }

    /// The jobs present.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// A job arrives with `work` ticks; returns the new generation and the time of the next
    /// departure.
    pub fn arrive(&mut self, now: u128, job: u32, work: u128) -> (u32, u128) {
        self.advance(now);
        let tag = self.vtime + (work << FRACTION_BITS);
        self.jobs.push(Reverse((tag, job)));
        self.next(now)
    }

    /// True when `generation` is the current one (the event is not stale).
    pub fn is_current(&self, generation: u32) -> bool {
        generation == self.generation
    }

    /// The least-tag job departs; returns it and, if jobs remain, the next generation and due time.
    pub fn depart(&mut self, now: u128) -> (u32, Option<(u32, u128)>) {
        self.advance(now);
        let Reverse((tag, job)) = self.jobs.pop().expect("a current PS departure has a job");
        self.vtime = tag;
        let next = (!self.jobs.is_empty()).then(|| self.next(now));
        (job, next)
    }

    fn next(&mut self, now: u128) -> (u32, u128) {
        self.generation = self.generation.wrapping_add(1);
        let Reverse((tag, _)) = *self.jobs.peek().expect("called with jobs present");
        let mut left = tag.saturating_sub(self.vtime) * self.jobs.len() as u128;
        if let Some(speed) = self.speed() {
            left = (left as f64 / speed).ceil() as u128;
        }
        // round up: the departure never comes before the job's work is done
        let ticks = left.div_ceil(1 << FRACTION_BITS);
        (self.generation, now.saturating_add(ticks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ticks: u128) -> u128 {
        ticks
    }

    #[test]
    fn two_jobs_share_the_server() {
        let mut ps = PsQueue::default();
        let (g1, due) = ps.arrive(t(0), 1, 2000);
        assert_eq!(due, t(2000));
        // a second job of work 1000 at t=1000: job 1 has 1000 left, both at rate 1/2
        let (g2, due) = ps.arrive(t(1000), 2, 1000);
        assert!(!ps.is_current(g1) && ps.is_current(g2));
        assert_eq!(due, t(3000));
        let (first, next) = ps.depart(due);
        assert_eq!(first, 1); // tie on tags: both finish at t=3000, lower job first
        let (_, due) = next.unwrap();
        assert_eq!(due, t(3000));
        let (second, next) = ps.depart(due);
        assert_eq!(second, 2);
        assert!(next.is_none());
    }

    #[test]
    fn three_way_sharing_is_exact_to_the_tick() {
        let mut ps = PsQueue::default();
        ps.arrive(t(0), 0, 3);
        ps.arrive(t(0), 1, 3);
        let (_, due) = ps.arrive(t(0), 2, 3);
        assert_eq!(due, t(9));
    }
}
