//! Time-weighted averages of a count (jobs present, busy servers).

use crate::time::SimTime;

/// The time integral of a piecewise-constant count since a start instant, kept exactly: the
/// area is an integer number of count-ticks, so no precision is lost however long the run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Occupancy {
    count: u32,
    since: SimTime,
    area: u128,
    start: SimTime,
}

impl Occupancy {
    /// Changes the count at time `now` (never earlier than the previous change).
    #[inline]
    pub fn change(&mut self, now: SimTime, delta: i32) {
        self.area += u128::from(self.count) * u128::from(now.since(self.since));
        self.since = now;
        self.count = self.count.wrapping_add_signed(delta);
    }

    /// The current count.
    #[inline]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Forgets the past: the average is taken from `now` on (end of the warm-up).
    pub fn restart(&mut self, now: SimTime) {
        self.area = 0;
        self.since = now;
        self.start = now;
    }

    /// The time average from the last restart to `now` (NaN over an empty span).
    pub fn mean(&self, now: SimTime) -> f64 {
        let span = now.since(self.start);
        let area = self.area + u128::from(self.count) * u128::from(now.since(self.since));
        if span > 0 {
            area as f64 / span as f64
        } else {
            f64::NAN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ticks: u64) -> SimTime {
        SimTime::from_ticks(ticks)
    }

    #[test]
    fn averages_a_step_function() {
        let mut o = Occupancy::default();
        o.change(t(0), 1);
        o.change(t(1), 1); // 1 on [0,1)
        o.change(t(3), -2); // 2 on [1,3)
        assert_eq!(o.mean(t(4)), (1.0 + 4.0) / 4.0);
        o.restart(t(4));
        o.change(t(5), 3);
        assert_eq!(o.mean(t(6)), 1.5);
    }

    #[test]
    fn stays_exact_over_a_long_run() {
        let mut o = Occupancy::default();
        o.change(t(0), 3);
        o.change(t(u64::MAX / 2), -1);
        assert_eq!(o.mean(t(u64::MAX / 2 * 2)), 2.5);
    }
}
