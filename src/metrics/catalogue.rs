//! What each metric name means: its unit and a sentence, for `parsim metrics` and the guide.
//!
//! Names are patterns of dot-separated segments: a literal segment matches itself, `<...>`
//! matches any one segment (a class, station, path, phase, link or rank; none of them may
//! contain a dot). The high-level models add their own entries beside these
//! (`models::spmd::CATALOGUE`); [`describe`] looks a name up in any list of entries.

use std::fmt;

/// The unit of a metric, in the scenario's own time unit (parsim has none of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// The scenario's time unit (seconds in every bundled scenario).
    Time,
    /// Per unit of the scenario's time.
    PerTime,
    /// A fraction in [0, 1]: of the time (utilisation), or of arrivals (loss, abandonment).
    Fraction,
    /// A mean number of jobs present.
    Jobs,
    /// Visits per job or per cycle.
    Visits,
    /// A count of messages.
    Messages,
    /// A ratio of two times.
    Ratio,
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Unit::Time => "time",
            Unit::PerTime => "1/time",
            Unit::Fraction => "fraction",
            Unit::Jobs => "jobs",
            Unit::Visits => "visits",
            Unit::Messages => "messages",
            Unit::Ratio => "ratio",
        })
    }
}

/// One kind of metric: the pattern of its names, its unit and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Dot-separated segments; `<...>` stands for any one segment.
    pub pattern: &'static str,
    /// The unit of its values.
    pub unit: Unit,
    /// What it measures, in one sentence.
    pub meaning: &'static str,
}

impl Entry {
    /// Whether `name` is a name of this kind.
    pub fn matches(&self, name: &str) -> bool {
        let mut want = self.pattern.split('.');
        let mut got = name.split('.');
        loop {
            match (want.next(), got.next()) {
                (None, None) => return true,
                (Some(w), Some(g)) if w.starts_with('<') || w == g => {}
                _ => return false,
            }
        }
    }
}

const fn entry(pattern: &'static str, unit: Unit, meaning: &'static str) -> Entry {
    Entry {
        pattern,
        unit,
        meaning,
    }
}

/// Every metric a queueing network or a rank program reports.
pub const CORE: &[Entry] = &[
    entry(
        "class.<c>.response",
        Unit::Time,
        "open class: arrival to exit; closed class: the cycle without the time at its reference station, measured from leaving it to coming back",
    ),
    entry(
        "class.<c>.cycle",
        Unit::Time,
        "closed class: time between two arrivals of a job at the reference station",
    ),
    entry(
        "class.<c>.throughput",
        Unit::PerTime,
        "open class: exits per unit time; closed class: cycles per unit time",
    ),
    entry(
        "class.<c>.p50",
        Unit::Time,
        "median of the end-to-end time (an open class's response, a closed class's cycle)",
    ),
    entry(
        "class.<c>.p90",
        Unit::Time,
        "90th percentile of the end-to-end time",
    ),
    entry(
        "class.<c>.p95",
        Unit::Time,
        "95th percentile of the end-to-end time",
    ),
    entry(
        "class.<c>.p99",
        Unit::Time,
        "99th percentile of the end-to-end time",
    ),
    entry(
        "station.<s>.response",
        Unit::Time,
        "mean time per visit, queueing included (a fork: from the fork to the join's release)",
    ),
    entry(
        "station.<s>.wait",
        Unit::Time,
        "FCFS queue: mean time from arrival to the start of service",
    ),
    entry(
        "station.<s>.throughput",
        Unit::PerTime,
        "departures per unit time",
    ),
    entry(
        "station.<s>.number",
        Unit::Jobs,
        "time-averaged number present, in queue and in service",
    ),
    entry(
        "station.<s>.utilisation",
        Unit::Fraction,
        "busy fraction per server (a server holding a job blocked after service is not busy)",
    ),
    entry(
        "station.<s>.visits",
        Unit::Visits,
        "visits per job (open class) or per cycle (closed class)",
    ),
    entry(
        "station.<s>.residence",
        Unit::Time,
        "visits x response: the time a job or cycle spends there",
    ),
    entry(
        "station.<s>.p50",
        Unit::Time,
        "median of the time per visit",
    ),
    entry(
        "station.<s>.p90",
        Unit::Time,
        "90th percentile of the time per visit",
    ),
    entry(
        "station.<s>.p95",
        Unit::Time,
        "95th percentile of the time per visit",
    ),
    entry(
        "station.<s>.p99",
        Unit::Time,
        "99th percentile of the time per visit",
    ),
    entry(
        "station.<s>.loss",
        Unit::Fraction,
        "station whose capacity loses (when_full = \"lose\"): the fraction of its arrivals that found it full and were lost",
    ),
    entry(
        "station.<s>.abandon",
        Unit::Fraction,
        "station with a patience: the fraction of its arrivals that left unserved when their patience ran out",
    ),
    entry(
        "class.<c>.loss",
        Unit::Fraction,
        "open class in a network with capacities: the fraction of its jobs lost to a full station",
    ),
    entry(
        "class.<c>.abandon",
        Unit::Fraction,
        "open class in a network with patience: the fraction of its jobs that left unserved",
    ),
    entry(
        "station.<s>.<c>.response",
        Unit::Time,
        "class c's mean time per visit",
    ),
    entry(
        "station.<s>.<c>.wait",
        Unit::Time,
        "class c's mean time from arrival to the start of service",
    ),
    entry(
        "station.<s>.<c>.throughput",
        Unit::PerTime,
        "class c's departures per unit time",
    ),
    entry(
        "station.<s>.<c>.number",
        Unit::Jobs,
        "class c's time-averaged number present",
    ),
    entry(
        "station.<s>.<c>.visits",
        Unit::Visits,
        "class c's visits per job or per cycle",
    ),
    entry(
        "station.<s>.<c>.residence",
        Unit::Time,
        "class c's visits x response",
    ),
    entry(
        "path.<p>.response",
        Unit::Time,
        "the path's stations' responses summed per job",
    ),
    entry(
        "program.makespan",
        Unit::Time,
        "when the last rank finished",
    ),
    entry(
        "ranks.finish.mean",
        Unit::Time,
        "when a rank finished, mean over the ranks (a program run as a dependency graph)",
    ),
    entry(
        "phase.<name>.mean",
        Unit::Time,
        "time inside the named phase, mean over the ranks",
    ),
    entry(
        "phase.<name>.max",
        Unit::Time,
        "time inside the named phase, most over the ranks",
    ),
    entry(
        "ranks.compute.mean",
        Unit::Time,
        "time a rank held its processor (computes, combines), mean over the ranks",
    ),
    entry(
        "ranks.compute.max",
        Unit::Time,
        "time a rank held its processor, most over the ranks",
    ),
    entry(
        "ranks.communication.mean",
        Unit::Time,
        "time a rank had its own messages under way, mean over the ranks",
    ),
    entry(
        "ranks.communication.max",
        Unit::Time,
        "time a rank had its own messages under way, most over the ranks",
    ),
    entry(
        "ranks.waiting.mean",
        Unit::Time,
        "time a rank was blocked on another rank, mean over the ranks",
    ),
    entry(
        "ranks.waiting.max",
        Unit::Time,
        "time a rank was blocked on another rank, most over the ranks",
    ),
    entry(
        "ranks.io.mean",
        Unit::Time,
        "time a rank spent at a disk, mean over the ranks",
    ),
    entry(
        "ranks.io.max",
        Unit::Time,
        "time a rank spent at a disk, most over the ranks",
    ),
    entry("rank.<r>.finish", Unit::Time, "when rank r finished"),
    entry(
        "rank.<r>.compute",
        Unit::Time,
        "time rank r held its processor",
    ),
    entry(
        "rank.<r>.communication",
        Unit::Time,
        "time rank r had its own messages under way",
    ),
    entry(
        "rank.<r>.waiting",
        Unit::Time,
        "time rank r was blocked on another rank",
    ),
    entry("rank.<r>.io", Unit::Time, "time rank r spent at a disk"),
    entry("messages.count", Unit::Messages, "messages delivered"),
    entry(
        "messages.delay",
        Unit::Time,
        "mean time from a message's injection to its delivery",
    ),
    entry(
        "messages.p99",
        Unit::Time,
        "99th percentile of a message's time from injection to delivery",
    ),
    entry(
        "messages.offered",
        Unit::Fraction,
        "bytes of network traffic (messages no operation receives) sent per node and time unit from the start to the first sender's finish, over a link's bandwidth (the offered load)",
    ),
    entry(
        "messages.accepted",
        Unit::Fraction,
        "bytes of network traffic delivered per node and time unit over the same window, over a link's bandwidth (the accepted throughput)",
    ),
    entry(
        "links.utilisation.mean",
        Unit::Fraction,
        "busy fraction of the links used, mean over them",
    ),
    entry(
        "links.utilisation.max",
        Unit::Fraction,
        "busy fraction of the busiest link",
    ),
    entry(
        "links.delay.mean",
        Unit::Time,
        "mean time from a message's arrival at a link to the end of its transmission there",
    ),
    entry(
        "link.<name>.utilisation",
        Unit::Fraction,
        "busy fraction of the link",
    ),
    entry(
        "link.<name>.messages",
        Unit::Messages,
        "messages that crossed the link",
    ),
    entry(
        "link.<name>.delay",
        Unit::Time,
        "mean time from a message's arrival at the link to the end of its transmission there",
    ),
    entry("link.<name>.p99", Unit::Time, "99th percentile of the same"),
];

/// The first entry of `lists`, in order, whose pattern `name` matches.
pub fn describe<'a>(name: &str, lists: &[&'a [Entry]]) -> Option<&'a Entry> {
    lists
        .iter()
        .flat_map(|l| l.iter())
        .find(|e| e.matches(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_matches_one_segment_per_placeholder() {
        let e = entry("station.<s>.<c>.response", Unit::Time, "");
        assert!(e.matches("station.cpu.a.response"));
        assert!(!e.matches("station.cpu.response"));
        assert!(!e.matches("station.cpu.a.response.x"));
        assert!(!e.matches("station.cpu.a.wait"));
    }

    #[test]
    fn a_unit_pads_to_a_column() {
        assert_eq!(format!("[{:<8}]", Unit::Time), "[time    ]");
    }

    #[test]
    fn a_name_is_described_from_the_lists_in_order() {
        let spmd = [entry("spmd.speedup", Unit::Ratio, "the model's")];
        assert_eq!(
            describe("rank.3.waiting", &[&spmd, CORE]).unwrap().pattern,
            "rank.<r>.waiting"
        );
        assert_eq!(
            describe("spmd.speedup", &[&spmd, CORE]).unwrap().meaning,
            "the model's"
        );
        assert!(describe("nothing.like.this", &[CORE]).is_none());
    }
}
