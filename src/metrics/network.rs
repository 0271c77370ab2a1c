//! The flat list of named metrics one replication of a queueing network reports.
//!
//! Names are stable and scriptable:
//! - `class.<c>.response` (open classes: end-to-end response time) or `class.<c>.cycle`
//!   (closed classes: cycle time at the reference station), `class.<c>.throughput`, and
//!   `class.<c>.p50|p90|p95|p99`, for every class whose jobs complete observations in it (an
//!   open class whose jobs always leave under another class has none);
//! - `station.<s>.response` (mean time per visit; for a fork, from the fork to the join's
//!   release), `.throughput` (departures per unit time), `.number` (time-averaged jobs present),
//!   `.utilisation` (busy fraction per server, queues only), `.p50|p90|p95|p99`;
//! - with several classes at a station, `station.<s>.<c>.response|throughput|number`;
//! - `station.<s>.wait` (FCFS queues: mean time from arrival to the start of service, `Wq`),
//!   and `station.<s>.<c>.wait` per class where several classes visit;
//! - `station.<s>.visits` and `station.<s>.residence` (visits per job or cycle of the class
//!   that visits the station, and `V R`, the time a job or cycle spends there), or
//!   `station.<s>.<c>.visits|residence` where several classes visit;
//! - `class.<c>.response` for a closed class too: the mean, over its cycles, of the part of the
//!   cycle after the job left its reference (think) station (the cycle without the time `Z`
//!   there, measured cycle by cycle: never negative);
//! - `path.<p>.response` for each `[[path]]`: the sum of its stations' `station.<s>.response`;
//! - `station.<s>.loss` (a station whose capacity loses: lost arrivals over arrivals) and
//!   `station.<s>.abandon` (a station with a patience: arrivals that left unserved over
//!   arrivals); `class.<c>.loss` and `class.<c>.abandon` for every open class of a network
//!   with such stations (the jobs lost or gone while of the class over the class's arrivals
//!   from its sources).
//!
//! Every value is computed per replication, so intervals come from replication values.

use crate::engine::network::{Recorder, RunSummary};
use crate::metrics::name::{Figure, Subject};
use crate::network::{
    ClassId, ClassKind, Discipline, Network, Routing, StationId, StationKind, Target,
};
use crate::time::SimTime;

/// The metric measured for a class end to end: `response` (open) or `cycle` (closed).
pub fn class_metric(net: &Network, class: usize) -> String {
    let figure = match net.classes[class].kind {
        ClassKind::Open => Figure::Response,
        ClassKind::Closed { .. } => Figure::Cycle,
    };
    Subject::Class(&net.classes[class].name).metric(figure)
}

/// The classes with a service time at station `s` (none for a station that serves nobody).
pub fn visiting(net: &Network, s: usize) -> Vec<usize> {
    net.stations[s]
        .kind
        .service()
        .map_or_else(Vec::new, |table| {
            (0..net.classes.len())
                .filter(|&c| table[c].is_some())
                .collect()
        })
}

/// The subject of class `c`'s per-class metrics at station `s`: `station.<s>` when `c` is the
/// only class visiting it, `station.<s>.<c>` when several do.
pub fn station_class_subject(net: &Network, s: usize, c: usize) -> Subject<'_> {
    let name = &net.stations[s].name;
    if visiting(net, s).len() > 1 {
        Subject::StationClass(name, &net.classes[c].name)
    } else {
        Subject::Station(name)
    }
}

/// True when jobs can complete an observation as class `c`: an open class's jobs can exit in
/// it (a route to `exit`, or a sink reached in it), a closed class's jobs can arrive at its
/// reference station in it.
pub fn completes(net: &Network, c: usize) -> bool {
    let class = ClassId(c as u32);
    net.classes.iter().enumerate().any(|(from_class, _)| {
        (0..net.stations.len()).any(|s| {
            let rule = net
                .routing
                .rule(ClassId(from_class as u32), StationId(s as u32));
            Routing::branch_probabilities(rule, &net.groups)
                .iter()
                .any(|&(t, p)| {
                    p > 0.0
                        && match (t, net.classes[c].kind) {
                            (Target::Exit, ClassKind::Open) => from_class == c,
                            (Target::Station(to, tc), ClassKind::Open) => {
                                tc == class && matches!(net.station(to).kind, StationKind::Sink)
                            }
                            (Target::Station(to, tc), ClassKind::Closed { reference, .. }) => {
                                tc == class && to == reference
                            }
                            (Target::Exit, ClassKind::Closed { .. }) => false,
                        }
                })
        })
    })
}

/// Whether some station of `net` loses the jobs that find it full, and whether some station
/// lets jobs leave unserved when their patience runs out.
pub fn turns_away(net: &Network) -> (bool, bool) {
    let has =
        |f: fn(&crate::network::Features) -> bool| net.stations.iter().any(|s| f(&s.features));
    (has(|f| f.loses()), has(|f| f.patience.is_some()))
}

/// The names of the metrics a run of `net` reports, in report order (what [`measure`] returns,
/// without running anything).
pub fn names(net: &Network) -> Vec<String> {
    let nothing = RunSummary {
        warmup_end: SimTime::ZERO,
        end: SimTime::ZERO,
        observed: 0,
        events: 0,
    };
    measure(net, &Recorder::new(net), &nothing)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// The metrics of one finished replication, in a fixed order.
pub fn measure(net: &Network, rec: &Recorder, run: &RunSummary) -> Vec<(String, f64)> {
    let span = net.clock.span(run.end.since(run.warmup_end));
    let ns = net.stations.len();
    let mut out = Vec::new();
    for (c, class) in net.classes.iter().enumerate() {
        if !completes(net, c) {
            continue;
        }
        let r = &rec.classes[c];
        out.push((class_metric(net, c), r.response.mean()));
        out.push((
            Subject::Class(&class.name).metric(Figure::Throughput),
            r.response.count() as f64 / span,
        ));
        for (figure, (_, value)) in Figure::PERCENTILES
            .into_iter()
            .zip(r.percentiles.reported())
        {
            out.push((Subject::Class(&class.name).metric(figure), value));
        }
        if matches!(class.kind, ClassKind::Closed { .. }) {
            out.push((
                Subject::Class(&class.name).metric(Figure::Response),
                r.outside.mean(),
            ));
        }
    }
    let (loses, abandons) = turns_away(net);
    for (c, class) in net.classes.iter().enumerate() {
        if class.kind != ClassKind::Open {
            continue;
        }
        let r = &rec.classes[c];
        if loses {
            out.push((
                Subject::Class(&class.name).metric(Figure::Loss),
                r.lost as f64 / r.arrived as f64,
            ));
        }
        if abandons {
            out.push((
                Subject::Class(&class.name).metric(Figure::Abandon),
                r.abandoned as f64 / r.arrived as f64,
            ));
        }
    }
    for (s, st) in net.stations.iter().enumerate() {
        if matches!(
            st.kind,
            StationKind::Source { .. } | StationKind::Sink | StationKind::Join { .. }
        ) {
            continue;
        }
        let r = &rec.stations[s];
        let name = &st.name;
        out.push((
            Subject::Station(name).metric(Figure::Response),
            r.response.mean(),
        ));
        out.push((
            Subject::Station(name).metric(Figure::Throughput),
            r.response.count() as f64 / span,
        ));
        out.push((
            Subject::Station(name).metric(Figure::Number),
            r.present.mean(run.end),
        ));
        if let StationKind::Queue {
            discipline: Discipline::Fcfs,
            ..
        } = &st.kind
        {
            out.push((
                Subject::Station(name).metric(Figure::Wait),
                r.wait.mean(&net.clock),
            ));
        }
        if let StationKind::Queue { servers, .. } = &st.kind {
            out.push((
                Subject::Station(name).metric(Figure::Utilisation),
                r.busy.mean(run.end) / f64::from(*servers),
            ));
        }
        if st.features.loses() {
            out.push((
                Subject::Station(name).metric(Figure::Loss),
                r.lost as f64 / r.arrived as f64,
            ));
        }
        if st.features.patience.is_some() {
            out.push((
                Subject::Station(name).metric(Figure::Abandon),
                r.abandoned as f64 / r.arrived as f64,
            ));
        }
        for (figure, (_, value)) in Figure::PERCENTILES
            .into_iter()
            .zip(r.percentiles.reported())
        {
            out.push((Subject::Station(name).metric(figure), value));
        }
        let visiting = visiting(net, s);
        for &c in visiting.iter().filter(|&&c| completes(net, c)) {
            let subject = station_class_subject(net, s, c);
            let (visits, response) = if visiting.len() > 1 {
                let sc = &rec.station_classes[c * ns + s];
                (sc.response.count(), sc.response.mean())
            } else {
                (r.response.count(), r.response.mean())
            };
            let v = visits as f64 / rec.classes[c].response.count() as f64;
            out.push((subject.metric(Figure::Visits), v));
            out.push((subject.metric(Figure::Residence), v * response));
        }
        if visiting.len() > 1 {
            for c in visiting {
                let sc = &rec.station_classes[c * ns + s];
                let cname = &net.classes[c].name;
                out.push((
                    Subject::StationClass(name, cname).metric(Figure::Response),
                    sc.response.mean(),
                ));
                out.push((
                    Subject::StationClass(name, cname).metric(Figure::Throughput),
                    sc.response.count() as f64 / span,
                ));
                out.push((
                    Subject::StationClass(name, cname).metric(Figure::Number),
                    sc.present.mean(run.end),
                ));
                if let StationKind::Queue {
                    discipline: Discipline::Fcfs,
                    ..
                } = &st.kind
                {
                    out.push((
                        Subject::StationClass(name, cname).metric(Figure::Wait),
                        sc.wait.mean(&net.clock),
                    ));
                }
            }
        }
    }
    for path in &net.paths {
        let total = path
            .stations
            .iter()
            .map(|s| rec.stations[s.index()].response.mean())
            .sum();
        out.push((Subject::Path(&path.name).metric(Figure::Response), total));
    }
    out
}
