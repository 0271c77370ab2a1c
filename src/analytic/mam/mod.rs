//! Matrix-analytic methods: exact solutions of queues with Markovian arrival processes and
//! phase-type laws (Neuts, *Matrix-Geometric Solutions in Stochastic Models*, 1981; Latouche
//! and Ramaswami, *Introduction to Matrix Analytic Methods in Stochastic Modeling*, 1999).
//!
//! The module takes plain numbers and matrices (rows of `f64`):
//!
//! - [`Ph`]: a phase-type law `PH(alpha, T)`: moments, Laplace-Stieltjes transform, CDF and
//!   quantiles.
//! - [`Map`]: a Markovian arrival process `MAP(D0, D1)`: rate, inter-arrival moments, SCV,
//!   lag-`k` autocorrelations; MMPP(2), Poisson and renewal (PH) constructors.
//! - [`gim1`]: GI/M/c for any renewal arrivals given by their transform.
//! - [`qbd`]: a level-independent quasi-birth-death process with boundary levels, `R` by
//!   logarithmic reduction.
//! - [`map_ph1`], [`phph1`], [`map_mc`]: MAP/PH/1, PH/PH/1 and MAP/M/c means through [`qbd`];
//!   [`map_ph1_wait`]: the MAP/PH/1 FCFS waiting-time law (phase type).
//! - Fitting to a measured sample of times: [`SampleStats`] (moments, autocorrelations and
//!   their decay); [`ph_from_two_moments`], [`ph_from_three_moments`] (a [`Ph`] matching two
//!   or three moments) and [`ks_distance`] (its Kolmogorov-Smirnov distance to the sample);
//!   [`fit_mmpp2`] (an MMPP(2) matching three moments and the autocorrelations) and
//!   [`map2_from_moments`] (a MAP(2) matching three moments and the lag-1 autocorrelation).
//!
//! Matrices are dense; every law and process has at most [`MAX_PHASES`] phases, and a QBD is
//! refused with `TooCostly` when `m^3` times some 200 (its `m` phases per level) is over the
//! budget.

mod dense;
mod fit;
mod gim;
mod map;
mod map_mc;
mod map_ph1;
mod ph;
mod qbd;
mod wait;

#[cfg(test)]
mod tests;

pub use fit::{
    Correlation, KS_POINTS, KsDistance, Map2Fit, Mmpp2Fit, Mmpp2Method, Mmpp2Targets, PhFit,
    PhForm, ProcessStats, SampleStats, fit_mmpp2, ks_distance, map2_from_moments,
    ph_from_three_moments, ph_from_two_moments,
};
pub use gim::{GIM_MAX_SERVERS, GiMcResult, gim1};
pub use map::Map;
pub use map_mc::map_mc;
pub use map_ph1::{MapQueueResult, map_ph1, phph1};
pub use ph::Ph;
pub use qbd::{QBD_MAX_ITERATIONS, QBD_TOLERANCE, Qbd, QbdLevel, QbdSolution, qbd};
pub use wait::{FcfsWait, WAIT_MAX_PHASES, map_ph1_wait};

/// The most phases a [`Ph`] or a [`Map`] may have.
pub const MAX_PHASES: usize = 64;
