//! Simulated time.
//!
//! [`SimTime`] is an instant on the simulation clock, in the scenario's own time unit (whatever
//! unit the service-time means are written in). It wraps an `f64` that is always finite and
//! non-negative, which makes its IEEE bit pattern monotonic in its value: ordering compares the
//! bits as integers, a total order that costs one integer comparison in the calendar.
//!
//! Derived times are never compared with `==` to decide anything in the engine; the calendar
//! orders equal times by scheduling sequence instead (see [`crate::engine::calendar`]).

use std::cmp::Ordering;
use std::fmt;

/// An instant of simulated time: finite and `>= 0` (never `-0.0`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SimTime(f64);

impl SimTime {
    /// The origin of the clock.
    pub const ZERO: SimTime = SimTime(0.0);

    /// Makes a time from a value; `None` when it is negative, NaN or infinite.
    pub fn new(value: f64) -> Option<SimTime> {
        (value.is_finite() && value >= 0.0).then_some(SimTime(value + 0.0))
    }

    /// The time as a plain number in the scenario's unit.
    #[inline]
    pub fn as_f64(self) -> f64 {
        self.0
    }

    /// This time advanced by a non-negative, finite span.
    ///
    /// The span comes from a validated distribution, so it is finite and `>= 0`; this is checked
    /// in debug builds.
    #[inline]
    pub fn after(self, span: f64) -> SimTime {
        debug_assert!(span.is_finite() && span >= 0.0, "bad span {span}");
        SimTime(self.0 + span)
    }

    /// The span from `earlier` to `self` (`>= 0` when `earlier <= self`).
    #[inline]
    pub fn since(self, earlier: SimTime) -> f64 {
        self.0 - earlier.0
    }

    /// The time whose [`SimTime::key`] is `key` (trusted: keys only come from valid times).
    #[inline]
    pub(crate) fn from_key(key: u64) -> SimTime {
        SimTime(f64::from_bits(key))
    }

    /// The integer key used for ordering: the bit pattern, monotonic for non-negative floats.
    #[inline]
    pub(crate) fn key(self) -> u64 {
        self.0.to_bits()
    }
}

impl PartialEq for SimTime {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for SimTime {}

impl PartialOrd for SimTime {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SimTime {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_negative_and_non_finite() {
        assert!(SimTime::new(-1.0).is_none());
        assert!(SimTime::new(f64::NAN).is_none());
        assert!(SimTime::new(f64::INFINITY).is_none());
        assert_eq!(SimTime::new(-0.0).unwrap().as_f64().to_bits(), 0);
    }

    #[test]
    fn order_matches_value_order() {
        let values = [0.0, 1e-300, 0.5, 1.0, 1.0 + f64::EPSILON, 3.0e10];
        for w in values.windows(2) {
            let (a, b) = (SimTime::new(w[0]).unwrap(), SimTime::new(w[1]).unwrap());
            assert!(a < b, "{a} < {b}");
        }
    }
}
