//! The check of a rank program: a `[program]` compiled (`compile`) into a
//! [`crate::program::Program`], with where each operation was written.

pub(crate) mod compile;
