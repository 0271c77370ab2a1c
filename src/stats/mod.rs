//! Streaming statistics.
//!
//! Everything is collected while the simulation runs, in memory that does not grow with the run
//! length: [`Tally`] (moments as sums shifted by the first value, mergeable), [`Occupancy`] (time-weighted means of
//! a count), [`Percentiles`] (an HDR histogram with an explicit unit), [`Mser`] (the MSER-5
//! warm-up rule on a bounded series of batch means) and [`ConfidenceInterval`] (Student-t
//! across independent replications).

mod ci;
mod mser;
mod occupancy;
mod percentiles;
mod tally;

pub use ci::ConfidenceInterval;
pub use mser::{Mser, Truncation};
pub use occupancy::Occupancy;
pub use percentiles::{PERCENTILES, Percentiles, RESOLUTION};
pub use tally::Tally;
