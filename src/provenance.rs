//! What identifies a result: parsim's version, a hash of the scenario text, a run id that
//! depends on the scenario and the options but not on the threads, and the date.

use serde::Serialize;

use crate::hash::fnv1a;
use crate::replicate::Options;
use crate::scenario::Warmup;

/// Where a result came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    /// The parsim version that produced it.
    pub parsim_version: &'static str,
    /// [`crate::hash::text_hash`] of the scenario file's text.
    pub scenario_hash: String,
    /// A hash of the scenario hash, the seed and the options that change results (replications,
    /// length, warm-up, precision rule); the worker threads are left out, since results do not
    /// depend on them.
    pub run_id: String,
    /// The UTC date of the run, `YYYY-MM-DD`.
    pub date: String,
}

impl Provenance {
    /// The provenance of a run of the scenario hashed `scenario_hash` under `opt`, today.
    pub fn new(scenario_hash: &str, opt: &Options) -> Provenance {
        let warmup = match opt.warmup {
            Warmup::Fixed(n) => format!("fixed {n}"),
            Warmup::Mser5 => "mser5".to_owned(),
        };
        let key = format!(
            "{scenario_hash} seed {} replications {} length {} warmup {warmup} precision {:?} level {} metrics {:?} max {}",
            opt.seed,
            opt.replications,
            opt.length,
            opt.precision,
            opt.level,
            opt.metrics,
            opt.max_replications
        );
        Provenance {
            parsim_version: env!("CARGO_PKG_VERSION"),
            scenario_hash: scenario_hash.to_owned(),
            run_id: format!("{:016x}", fnv1a(key.as_bytes())),
            date: utc_date(std::time::SystemTime::now()),
        }
    }
}

/// The UTC calendar date of `t` (`YYYY-MM-DD`), by Howard Hinnant's days-to-civil algorithm.
pub fn utc_date(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn dates_are_fixed_by_definition() {
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(utc_date(leap), "2000-02-29");
        assert_eq!(
            utc_date(UNIX_EPOCH + Duration::from_secs(1_795_392_000)),
            "2026-11-23"
        );
    }
}
