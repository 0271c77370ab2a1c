//! Properties over generated inputs (proptest): the calendar's order, tallies merged from any
//! split, and distributions that return the moments they were built from.

use std::path::Path;

use parsim::dist::DistSpec;
use parsim::engine::calendar::Calendar;
use parsim::engine::network::Event;
use parsim::engine::network::jobs::Job;
use parsim::stats::Tally;
use parsim::time::SimTime;
use proptest::prelude::*;

/// A departure of `job` whose record's fields all depend on `job` (the calendar must return
/// every one of them).
fn departure(job: u32) -> Event {
    Event::Departure {
        job,
        record: Job {
            class: job % 3,
            parent: job.wrapping_mul(2_654_435_761),
            pending: 0,
            station: job % 5,
            born: SimTime::from_ticks(u64::from(job) * 3),
            arrived: SimTime::from_ticks(u64::from(job) << 31),
        },
    }
}

proptest! {
    /// Whatever the interleaving of schedules and pops, every pop returns the pending event with
    /// the earliest time, and among equal times the one scheduled first.
    #[test]
    fn calendar_pops_earliest_then_first_scheduled(
        ops in prop::collection::vec((0_u8..4, 0_u32..8), 1..400)
    ) {
        let mut cal = Calendar::new();
        let mut pending: Vec<(u64, u32)> = Vec::new(); // (ticks, job) in scheduling order
        let mut now = 0;
        for (job, (successors, delay)) in ops.into_iter().enumerate() {
            let job = job as u32;
            // 0 = pop only; otherwise schedule `successors` events at coarse times (ties likely)
            for k in 0..successors {
                let at = now + u64::from((delay + u32::from(k)) % 4);
                cal.schedule(SimTime::from_ticks(at), departure(job * 4 + u32::from(k)));
                pending.push((at, job * 4 + u32::from(k)));
            }
            prop_assert_eq!(cal.len(), pending.len());
            if let Some((time, event)) = cal.pop() {
                let best = (0..pending.len())
                    .min_by_key(|&a| (pending[a].0, a))
                    .unwrap();
                let (at, id) = pending.remove(best);
                prop_assert_eq!(time.ticks(), at);
                prop_assert_eq!(event, departure(id));
                now = at;
            } else {
                prop_assert!(pending.is_empty());
            }
        }
    }

    /// A tally merged from two parts equals the tally of the whole, for any split.
    #[test]
    fn tally_merge_equals_one_pass(
        values in prop::collection::vec(-1e6_f64..1e6, 2..300),
        cut in 0_usize..300,
    ) {
        let cut = cut.min(values.len());
        let (mut whole, mut left, mut right) = (Tally::new(), Tally::new(), Tally::new());
        values.iter().for_each(|&v| whole.add(v));
        values[..cut].iter().for_each(|&v| left.add(v));
        values[cut..].iter().for_each(|&v| right.add(v));
        left.merge(&right);
        prop_assert_eq!(left.count(), whole.count());
        let scale = values.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
        prop_assert!((left.mean() - whole.mean()).abs() <= 1e-9 * scale);
        prop_assert!((left.variance() - whole.variance()).abs() <= 1e-9 * scale * scale);
    }

    /// Distributions given by mean and SCV report that mean and SCV back.
    #[test]
    fn mean_and_scv_round_trip(mean in 1e-3_f64..1e3, scv in 1.0_f64..50.0, k in 1_i64..20) {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        let build = |spec: DistSpec| spec.build(Path::new(".")).expect("valid parameters");
        let h2 = build(DistSpec::H2 { mean, scv });
        prop_assert!(close(h2.mean(), mean) && close(h2.scv(), scv));
        let erlang = build(DistSpec::Erlang { k, mean });
        prop_assert!(close(erlang.mean(), mean) && close(erlang.scv(), 1.0 / k as f64));
        let uniform = build(DistSpec::Uniform { min: None, max: None, mean: Some(mean) });
        prop_assert!(close(uniform.mean(), mean) && close(uniform.scv(), 1.0 / 3.0));
        let lognormal = build(DistSpec::Lognormal { mean: Some(mean), scv: Some(scv), mu: None, sigma: None });
        prop_assert!(close(lognormal.mean(), mean) && close(lognormal.scv(), scv));
    }
}

proptest! {
    // fewer cases: each schedules up to 12,000 events
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The same order on calendars large enough to move from the binary heap to the radix heap
    /// and back (more than `GROW_AT` pending events, then fewer than `SHRINK_AT`), with time
    /// gaps of any size from none (every event ties) to 2^60 ticks, on 64-bit and 128-bit
    /// times alike.
    #[test]
    fn large_calendars_pop_earliest_then_first_scheduled(
        fill in 0_usize..6000,
        gap_bits in 0_u32..61,
        seed in any::<u64>(),
    ) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        use parsim::engine::calendar::{GROW_AT, SHRINK_AT};
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut narrow: Calendar<Event> = Calendar::new();
        let mut wide: Calendar<Event, u128> = Calendar::new();
        let mut reference: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
        let (mut now, mut job, mut peak) = (0_u64, 0_u32, 0);
        // grow to `fill` pending events, hold there, then drain
        for round in 0..3 * fill + 200 {
            let wanted = if round < fill { 2 } else if round < 2 * fill { next() % 2 } else { 0 };
            for _ in 0..wanted {
                let gap = if gap_bits == 0 { 0 } else { next() >> (64 - gap_bits) };
                let at = now + gap;
                let ev = departure(job);
                narrow.schedule(SimTime::from_ticks(at), ev);
                wide.schedule(u128::from(at), ev);
                reference.push(Reverse((at, job)));
                job += 1;
            }
            peak = peak.max(reference.len());
            prop_assert_eq!(narrow.len(), reference.len());
            prop_assert_eq!(wide.len(), reference.len());
            match reference.pop() {
                Some(Reverse((at, id))) => {
                    let want = departure(id);
                    prop_assert_eq!(narrow.pop(), Some((SimTime::from_ticks(at), want)));
                    prop_assert_eq!(wide.pop(), Some((u128::from(at), want)));
                    now = at;
                }
                None => {
                    prop_assert!(narrow.pop().is_none() && wide.pop().is_none());
                    break;
                }
            }
        }
        prop_assert!(fill < GROW_AT || peak > GROW_AT, "peak {}", peak);
        prop_assert!(SHRINK_AT < GROW_AT);
    }
}
