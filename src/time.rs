//! Simulated time: integer ticks of a resolution chosen per scenario.
//!
//! [`SimTime`] is an instant on the simulation clock, a whole number of ticks since the start of
//! a run; [`Clock`] says how long a tick is in the scenario's own time unit (whatever unit its
//! times are written in) and converts between the two.
//!
//! **Why integers.** A floating-point clock loses short times once the clock is large: at
//! `t = 10^12` an `f64` cannot tell `t` from `t + 10^-4`, so a service of `10^-9` started late in
//! a run vanishes, and the error grows with the run's length. Integer ticks resolve every instant
//! of the run equally well. The tick is a power of two in the scenario's unit, at most
//! `2^-`[`Clock::RESOLUTION_BITS`] of the scenario's smallest mean time, so a span of that
//! typical size is stored with a relative error below `2^-32` (`2.3·10^-10`) however late it
//! happens. Sums and differences of ticks are exact.
//!
//! **Horizon.** Instants and spans stay below `2^63` ticks, so that converting between ticks and
//! floating point is one instruction each way: `2^32` to `2^33` (4.3·10^9 to 8.6·10^9) times the
//! smallest mean time.
//! A scenario whose run would last longer than [`Clock::horizon`] (its time scales are too far
//! apart for its length) is refused before it runs, with the reason
//! ([`crate::replicate::RunError::Horizon`]), and a run that reaches the end of the clock all the
//! same (a freak sample from a heavy tail) stops with an error instead of wrapping around.
//!
//! The representation was chosen by measurement (`benches/RESULTS.md`): the calendar already
//! ordered events by a 64-bit key, so integer ticks cost the event loop nothing, while a
//! 128-bit clock (which would never need to refuse a scenario) made every calendar comparison
//! and every entry larger.
//!
//! Derived times are never compared with `==` to decide anything in the engine; the calendar
//! orders equal times by scheduling sequence instead (see [`crate::engine::calendar`]).

use std::fmt;

/// An instant of simulated time: whole ticks of the run's [`Clock`] since the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(u64);

impl SimTime {
    /// The origin of the clock.
    pub const ZERO: SimTime = SimTime(0);

    /// The end of the clock (`2^63` ticks): an instant at or past it means the run outlived the
    /// clock.
    pub const END: SimTime = SimTime(1 << 63);

    /// The instant `ticks` ticks after the start.
    #[inline]
    pub const fn from_ticks(ticks: u64) -> SimTime {
        SimTime(ticks)
    }

    /// Ticks since the start.
    #[inline]
    pub const fn ticks(self) -> u64 {
        self.0
    }

    /// This instant advanced by `ticks`, saturating at `u64::MAX`: an instant at or past
    /// [`SimTime::END`] is beyond the clock's horizon, which the engine detects and reports, and
    /// no sum wraps around in the meantime.
    #[inline(always)]
    pub fn after(self, ticks: u64) -> SimTime {
        SimTime(self.0.saturating_add(ticks))
    }

    /// True when this instant lies beyond the clock's horizon.
    #[inline(always)]
    pub fn is_past_end(self) -> bool {
        self >= SimTime::END
    }

    /// Ticks from `earlier` to `self` (`earlier <= self`).
    #[inline(always)]
    pub fn since(self, earlier: SimTime) -> u64 {
        debug_assert!(earlier <= self, "time runs forwards");
        self.0 - earlier.0
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ticks", self.0)
    }
}

/// The resolution of a run's clock: how long one tick is in the scenario's time unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    tick: f64,
    per_tick: f64,
}

impl Default for Clock {
    /// A clock for a scenario whose smallest mean time is 1.
    fn default() -> Clock {
        Clock::for_scale(1.0)
    }
}

impl Clock {
    /// A tick is at most `2^-RESOLUTION_BITS` of the smallest mean time of the scenario, so
    /// rounding a span of that size to the nearest tick errs by at most `2^-32` of it.
    pub const RESOLUTION_BITS: i32 = 31;

    /// The clock for a scenario whose smallest (positive, finite) mean time is `smallest`: the
    /// largest power of two not above `smallest · 2^-RESOLUTION_BITS`. A non-positive or
    /// non-finite `smallest` (a scenario where nothing takes time) gives the clock of scale 1.
    pub fn for_scale(smallest: f64) -> Clock {
        let scale = if smallest.is_finite() && smallest > 0.0 {
            smallest
        } else {
            1.0
        };
        let exponent = (scale.log2().floor() as i32 - Clock::RESOLUTION_BITS).clamp(-1000, 1000);
        let tick = 2f64.powi(exponent);
        Clock {
            tick,
            per_tick: 1.0 / tick,
        }
    }

    /// One tick in the scenario's unit (a power of two).
    pub fn tick(&self) -> f64 {
        self.tick
    }

    /// The longest run the clock can represent, in the scenario's unit (`2^63` ticks).
    pub fn horizon(&self) -> f64 {
        self.tick * 2f64.powi(63)
    }

    /// A span of `span` time units (finite, `>= 0`) as ticks, rounded to the nearest; spans
    /// beyond the clock's horizon saturate at `2^63 - 1` ticks.
    #[inline(always)]
    pub fn ticks(&self, span: f64) -> u64 {
        // through `i64`: one instruction, saturating (NaN, which a validated distribution
        // never yields, maps to 0)
        (span * self.per_tick + 0.5) as i64 as u64
    }

    /// `ticks` ticks (below `2^63`) in the scenario's unit.
    #[inline(always)]
    pub fn span(&self, ticks: u64) -> f64 {
        ticks as i64 as f64 * self.tick
    }

    /// The instant `t` in the scenario's unit.
    #[inline(always)]
    pub fn at(&self, t: SimTime) -> f64 {
        self.span(t.ticks())
    }

    /// A span as 128-bit ticks (rank programs, whose runs outlast 64-bit ticks: see
    /// the program executor), rounded to the nearest, saturating.
    #[inline(always)]
    pub fn wide_ticks(&self, span: f64) -> u128 {
        wide_from_f64(span * self.per_tick + 0.5)
    }

    /// 128-bit ticks in the scenario's unit.
    #[inline(always)]
    pub fn wide_span(&self, ticks: u128) -> f64 {
        wide_to_f64(ticks) * self.tick
    }

    /// The instant `t` time units after the start (saturating).
    pub fn instant(&self, t: f64) -> SimTime {
        SimTime(self.ticks(t))
    }
}

/// `x` (`>= 0`) truncated to a `u128`: one instruction below `2^63`, where `as u128` is a
/// library call.
#[inline(always)]
pub fn wide_from_f64(x: f64) -> u128 {
    if x < 9.223_372_036_854_775e18 {
        x as i64 as u128
    } else {
        wide_from_f64_slow(x)
    }
}

#[cold]
#[inline(never)]
fn wide_from_f64_slow(x: f64) -> u128 {
    x as u128
}

/// `x` (`>= 0`) rounded up to a `u128` (no library call below `2^63`), `u128::MAX` from there
/// up (an infinite `x` included: it does not wrap to 0).
#[inline(always)]
pub fn wide_ceil_from_f64(x: f64) -> u128 {
    let t = wide_from_f64(x);
    if wide_to_f64(t) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

/// `t` as an `f64`: one instruction below `2^63`, where `as f64` is a library call.
#[inline(always)]
pub fn wide_to_f64(t: u128) -> f64 {
    if t >> 63 == 0 {
        t as u64 as i64 as f64
    } else {
        wide_to_f64_slow(t)
    }
}

#[cold]
#[inline(never)]
fn wide_to_f64_slow(t: u128) -> f64 {
    t as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_a_power_of_two_below_the_resolution() {
        for scale in [1e-15, 1e-9, 0.1, 1.0, 3.0, 1e6, 1e156] {
            let c = Clock::for_scale(scale);
            let bits = c.tick().log2();
            assert_eq!(bits, bits.floor(), "power of two for {scale}");
            assert!(c.tick() <= scale * 2f64.powi(-Clock::RESOLUTION_BITS));
            assert!(c.tick() > scale * 2f64.powi(-Clock::RESOLUTION_BITS - 1));
        }
        assert_eq!(Clock::for_scale(0.0), Clock::for_scale(1.0));
        assert_eq!(Clock::for_scale(f64::NAN), Clock::for_scale(1.0));
    }

    #[test]
    fn a_short_span_keeps_its_precision_late_in_a_long_run() {
        // service 1e-9 at a clock of 1e6 time units: lost entirely by an f64 clock of 1e12
        let c = Clock::for_scale(1e-9);
        let late = c.instant(2.0); // 2^61 ticks from the origin, near the end of this clock
        let done = late.after(c.ticks(1e-9));
        let measured = c.span(done.since(late));
        assert!((measured / 1e-9 - 1.0).abs() < 1e-9, "{measured}");
        let scaled = Clock::for_scale(1.0);
        let late = scaled.instant(1e9);
        let done = late.after(scaled.ticks(0.3));
        assert!((scaled.span(done.since(late)) / 0.3 - 1.0).abs() < 1e-9);
    }

    #[test]
    fn wide_conversions_agree_with_the_library_ones() {
        for x in [0.0, 0.4, 1.0, 1e10, 9.2e18, 9.3e18, 1e30, 3.4e38] {
            assert_eq!(wide_from_f64(x), x as u128, "{x}");
        }
        for t in [
            0_u128,
            1,
            1 << 62,
            (1 << 63) - 1,
            1 << 63,
            1 << 100,
            u128::MAX,
        ] {
            assert_eq!(wide_to_f64(t), t as f64, "{t}");
        }
        // rounded up, and saturated rather than wrapped past the last u128 (1e300 bytes over a
        // bandwidth of 1e-30 made a transmission of 0)
        assert_eq!(wide_ceil_from_f64(0.4), 1);
        assert_eq!(wide_ceil_from_f64(2.0), 2);
        for x in [1e39, 1e300, f64::INFINITY] {
            assert_eq!(wide_ceil_from_f64(x), u128::MAX, "{x}");
        }
    }

    #[test]
    fn overflow_saturates_at_the_end_of_the_clock() {
        let c = Clock::default();
        assert_eq!(c.ticks(1e300), (1 << 63) - 1);
        let last = SimTime::from_ticks((1 << 63) - 1);
        assert!(!last.is_past_end() && last.after(c.ticks(1e300)).is_past_end());
        assert!(c.horizon() > 4e9 && c.horizon() < 9e9);
    }
}
