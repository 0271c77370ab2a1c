//! parsim's integration tests: one test binary, one module per topic.

/// The command line: exit codes and error messages for bad input.
mod cli;
/// Same seed, same bytes, on 1 thread or 4.
mod determinism;
/// Every bundled scenario parses and runs.
mod scenarios;
/// Simulation against closed-form results, with fixed seeds and stated tolerances.
mod statistics;
/// Shared helpers.
mod util;
