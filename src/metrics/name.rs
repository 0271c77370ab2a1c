//! Metric names, built one way: a [`Subject`] (what the metric is about: a class, a station, a
//! rank, ...) and a [`Figure`] (what it measures). The executors' measurements
//! ([`super::network`], [`super::program`], [`super::schedule`]), the analysers' predictions and
//! the models' derived metrics all spell a name through [`Subject::metric`], so a prediction
//! meets its measurement by construction; [`super::catalogue`] says what each name means.

use std::fmt;

use crate::program::Category;

/// What a metric is about: the segments of its name before the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject<'a> {
    /// A job class: `class.<c>`.
    Class(&'a str),
    /// A station: `station.<s>`.
    Station(&'a str),
    /// One class at a station: `station.<s>.<c>`.
    StationClass(&'a str, &'a str),
    /// A declared path of stations: `path.<p>`.
    Path(&'a str),
    /// A program as a whole: `program`.
    Program,
    /// A named phase of a program: `phase.<name>`.
    Phase(&'a str),
    /// One rank of a program: `rank.<r>`.
    Rank(usize),
    /// A per-rank figure (a time category, or the finish) summarised over the ranks:
    /// `ranks.<figure>` (`ranks.compute` with [`Figure::Mean`] or [`Figure::Max`]).
    Ranks(Figure),
    /// A program's messages: `messages`.
    Messages,
    /// A link of a program's interconnect: `link.<name>`.
    Link(&'a str),
    /// A figure of every link used, summarised over them: `links.<figure>` (`links.delay` with
    /// [`Figure::Mean`]).
    Links(Figure),
}

/// What a metric measures: the last segment of its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// `response`: the mean time from arrival to departure.
    Response,
    /// `wait`: the mean time queued before service.
    Wait,
    /// `cycle`: a closed class's mean time between returns to its reference station.
    Cycle,
    /// `throughput`: completions per unit of time.
    Throughput,
    /// `number`: the mean number present.
    Number,
    /// `utilisation`: the busy fraction per server (or link).
    Utilisation,
    /// `visits`: visits per job.
    Visits,
    /// `residence`: visits times response.
    Residence,
    /// `p50`: the median.
    P50,
    /// `p90`: the 90th percentile.
    P90,
    /// `p95`: the 95th percentile.
    P95,
    /// `p99`: the 99th percentile.
    P99,
    /// `makespan`: the time of the last rank's finish.
    Makespan,
    /// `mean`: the mean over the ranks.
    Mean,
    /// `max`: the largest over the ranks.
    Max,
    /// `finish`: when a rank finished.
    Finish,
    /// `compute`: time spent computing.
    Compute,
    /// `communication`: time spent sending and receiving.
    Communication,
    /// `waiting`: time spent waiting for messages, barriers and processors.
    Waiting,
    /// `io`: time spent in disk requests.
    Io,
    /// `count`: how many.
    Count,
    /// `delay`: the mean time a message takes.
    Delay,
    /// `messages`: how many messages crossed.
    Messages,
    /// `loss`: the fraction of arrivals lost to a full station.
    Loss,
    /// `abandon`: the fraction of arrivals that left unserved when their patience ran out.
    Abandon,
    /// `offered`: the bytes offered to a network per node and time unit, over a link's
    /// bandwidth.
    Offered,
    /// `accepted`: the bytes a network delivered per node and time unit, over a link's
    /// bandwidth.
    Accepted,
}

/// The summaries over the links a run's messages crossed, as (the links' figure, its summary):
/// `links.utilisation.mean`, `links.utilisation.max`, `links.delay.mean`.
pub const LINK_SUMMARIES: [(Figure, Figure); 3] = [
    (Figure::Utilisation, Figure::Mean),
    (Figure::Utilisation, Figure::Max),
    (Figure::Delay, Figure::Mean),
];

impl Figure {
    /// The percentiles every response-time distribution is reported at, in order.
    pub const PERCENTILES: [Figure; 4] = [Figure::P50, Figure::P90, Figure::P95, Figure::P99];

    /// The name's last segment.
    pub fn segment(self) -> &'static str {
        match self {
            Figure::Response => "response",
            Figure::Wait => "wait",
            Figure::Cycle => "cycle",
            Figure::Throughput => "throughput",
            Figure::Number => "number",
            Figure::Utilisation => "utilisation",
            Figure::Visits => "visits",
            Figure::Residence => "residence",
            Figure::P50 => "p50",
            Figure::P90 => "p90",
            Figure::P95 => "p95",
            Figure::P99 => "p99",
            Figure::Makespan => "makespan",
            Figure::Mean => "mean",
            Figure::Max => "max",
            Figure::Finish => "finish",
            Figure::Compute => "compute",
            Figure::Communication => "communication",
            Figure::Waiting => "waiting",
            Figure::Io => "io",
            Figure::Count => "count",
            Figure::Delay => "delay",
            Figure::Messages => "messages",
            Figure::Loss => "loss",
            Figure::Abandon => "abandon",
            Figure::Offered => "offered",
            Figure::Accepted => "accepted",
        }
    }
}

impl From<Category> for Figure {
    /// The figure of a rank's time category (`compute`, `communication`, `waiting`, `io`).
    fn from(c: Category) -> Figure {
        match c {
            Category::Compute => Figure::Compute,
            Category::Communication => Figure::Communication,
            Category::Waiting => Figure::Waiting,
            Category::Io => Figure::Io,
        }
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.segment())
    }
}

impl Subject<'_> {
    /// The name of the metric of this subject measuring `figure`, e.g.
    /// `station.cpu.response`.
    pub fn metric(self, figure: Figure) -> String {
        format!("{self}.{figure}")
    }
}

impl fmt::Display for Subject<'_> {
    /// The name's segments before the figure (the prefix every metric of the subject shares).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Class(c) => write!(f, "class.{c}"),
            Subject::Station(s) => write!(f, "station.{s}"),
            Subject::StationClass(s, c) => write!(f, "station.{s}.{c}"),
            Subject::Path(p) => write!(f, "path.{p}"),
            Subject::Program => f.write_str("program"),
            Subject::Phase(p) => write!(f, "phase.{p}"),
            Subject::Rank(r) => write!(f, "rank.{r}"),
            Subject::Ranks(category) => write!(f, "ranks.{category}"),
            Subject::Messages => f.write_str("messages"),
            Subject::Link(l) => write!(f, "link.{l}"),
            Subject::Links(figure) => write!(f, "links.{figure}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::catalogue::{CORE, describe};

    #[test]
    fn names_read_as_the_catalogue_describes_them() {
        let cases = [
            (
                Subject::Class("jobs"),
                Figure::Response,
                "class.jobs.response",
            ),
            (Subject::Station("cpu"), Figure::P99, "station.cpu.p99"),
            (
                Subject::StationClass("cpu", "jobs"),
                Figure::Wait,
                "station.cpu.jobs.wait",
            ),
            (Subject::Path("io"), Figure::Response, "path.io.response"),
            (Subject::Program, Figure::Makespan, "program.makespan"),
            (Subject::Phase("solve"), Figure::Max, "phase.solve.max"),
            (Subject::Rank(3), Figure::Finish, "rank.3.finish"),
            (Subject::Messages, Figure::Delay, "messages.delay"),
            (
                Subject::Link("n0-n1"),
                Figure::Utilisation,
                "link.n0-n1.utilisation",
            ),
            (Subject::Ranks(Figure::Io), Figure::Max, "ranks.io.max"),
            (
                Subject::Links(Figure::Delay),
                Figure::Mean,
                "links.delay.mean",
            ),
        ];
        for (subject, figure, name) in cases {
            assert_eq!(subject.metric(figure), name);
            assert!(
                describe(name, &[CORE]).is_some(),
                "{name} is in the catalogue"
            );
        }
        assert_eq!(Subject::Station("cpu").to_string(), "station.cpu");
        // the percentiles a histogram reports are these figures, in order
        let reported = crate::stats::PERCENTILES;
        assert_eq!(
            Figure::PERCENTILES.map(Figure::segment),
            reported.map(|(label, _)| label)
        );
        for c in Category::ALL {
            assert_eq!(Figure::from(c).segment(), c.name());
        }
    }
}
