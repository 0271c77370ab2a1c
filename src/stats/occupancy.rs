//! Time-weighted averages of a count (jobs present, busy servers).

/// The time integral of a piecewise-constant count since a start instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Occupancy {
    count: u32,
    since: f64,
    area: f64,
    start: f64,
}

impl Occupancy {
    /// Changes the count at time `now` (never earlier than the previous change).
    #[inline]
    pub fn change(&mut self, now: f64, delta: i32) {
        self.area += f64::from(self.count) * (now - self.since);
        self.since = now;
        self.count = self.count.wrapping_add_signed(delta);
    }

    /// The current count.
    #[inline]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Forgets the past: the average is taken from `now` on (end of the warm-up).
    pub fn restart(&mut self, now: f64) {
        self.area = 0.0;
        self.since = now;
        self.start = now;
    }

    /// The time average from the last restart to `now`.
    pub fn mean(&self, now: f64) -> f64 {
        let span = now - self.start;
        let area = self.area + f64::from(self.count) * (now - self.since);
        if span > 0.0 { area / span } else { f64::NAN }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_a_step_function() {
        let mut o = Occupancy::default();
        o.change(0.0, 1);
        o.change(1.0, 1); // 1 on [0,1)
        o.change(3.0, -2); // 2 on [1,3)
        assert_eq!(o.mean(4.0), (1.0 + 4.0) / 4.0);
        o.restart(4.0);
        o.change(5.0, 3);
        assert_eq!(o.mean(6.0), 1.5);
    }
}
