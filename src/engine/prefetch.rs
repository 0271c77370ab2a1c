//! A hint to the processor to start loading a value's cache line now, for an event loop that
//! knows which records the events after the current one will touch.
//!
//! The loop does not wait for the load: a prefetch has no effect on what the program computes,
//! only on when memory arrives, so the results are the same with or without it (and on targets
//! without one it does nothing).

/// Starts loading the cache line of `value` into every cache level.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    safe_arch::prefetch_t0(value);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = value;
}
