//! Networks whose stations have features (priorities, capacities, impatience, load-dependent
//! speed, batch arrivals): the exact formulas of one open station fed by Poisson sources, and
//! exact load-dependent MVA for closed product-form networks; the product-form and
//! decomposition methods for plain networks are refused with the feature that breaks them.

use super::{Analysis, Bound, service_stations, short};
use crate::analytic::{
    self, BatchSize, FiniteMetrics, LdCenter, PatienceLaw, PriorityClass, PriorityMetrics,
    StationMetrics, erlang_a, load_dependent_station, mg1_priority_nonpreemptive,
    mg1_priority_preemptive, mg1k, mgcc, mmc_general_patience, mmc_priority_nonpreemptive, mmck,
    mva_load_dependent, mxg1,
};
use crate::dist::{Dist, Law};
use crate::metrics::name::{Figure, Subject};
use crate::metrics::network::{class_metric, station_class_subject};
use crate::network::estimates::arrival_rate;
use crate::network::{
    Batch, ClassKind, Discipline, Features, Network, Preemption, Station, StationKind,
};
use crate::stats::PERCENTILES;

/// What each feature of a station is called in a refusal.
fn named(f: &Features) -> Vec<&'static str> {
    [
        (f.priority.is_some(), "priority levels"),
        (f.loses(), "a capacity that loses"),
        (f.capacity.is_some() && !f.loses(), "a capacity that blocks"),
        (f.patience.is_some(), "a patience"),
        (f.rate_by_jobs.is_some(), "a load-dependent speed"),
        (f.batch.is_some(), "batch arrivals"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect()
}

/// The first station with features, as the reason the network methods do not apply.
pub(super) fn problem(net: &Network) -> Option<String> {
    net.stations
        .iter()
        .find(|s| !s.features.is_plain())
        .map(|s| {
            format!(
                "station {:?} has {}, which the product-form and decomposition methods do not model",
                s.name,
                named(&s.features).join(" and ")
            )
        })
}

/// The label of the formulas of this module when none applies.
const FEATURE_FORMULAS: &str = "formulas for stations with features";

/// Analyses a network with features (`v` from the traffic equations): the exact formula where
/// one exists, the refusal of the plain-network methods with `reason`.
pub(super) fn analyze(net: &Network, v: &[Vec<f64>], reason: &str, a: &mut Analysis) {
    a.refuse("MVA / Jackson / QNA", reason);
    let served: Vec<usize> = service_stations(net).map(|(s, _)| s).collect();
    let open = net.classes.iter().all(|c| c.kind == ClassKind::Open);
    let closed = net.classes.iter().all(|c| c.kind != ClassKind::Open);
    if open && served.len() == 1 {
        if let Err(why) = open_station(net, served[0], v, a) {
            a.refuse(FEATURE_FORMULAS, why);
        }
    } else if super::loss_network::applies(net) {
        if let Err(why) = super::loss_network::open_loss(net, v, a) {
            a.refuse(super::loss_network::METHOD, why);
        }
    } else if super::shadow::applies(net) {
        if let Err(why) = super::shadow::closed_priorities(net, v, a) {
            a.refuse("Sevcik's shadow servers", why);
        }
    } else if super::open_priority::applies(net) {
        if let Err(why) = super::open_priority::open_priorities(net, v, a) {
            a.refuse(super::open_priority::METHOD, why);
        }
    } else if closed && net.classes.len() == 1 && super::blocking::blocks(net) {
        if let Err(why) = super::blocking::closed_blocking(net, v, a) {
            a.refuse(super::blocking::METHOD, why);
        }
    } else if closed && net.classes.len() == 1 {
        if let Err(why) = closed_load_dependent(net, v, a) {
            a.refuse(FEATURE_FORMULAS, why);
        }
    } else {
        a.refuse(
            FEATURE_FORMULAS,
            "they cover one open station fed by Poisson sources, closed single-class networks with load-dependent stations, and closed single-class networks whose one-server FCFS stations block when full (MVABLO), closed multiclass networks with priority stations (shadow servers), open networks whose only features are priorities (Poisson decomposition), one-class open networks whose stations lose (loss decomposition); this network is none of these (simulate it)",
        );
    }
}

/// The one service station `s` of an open network, fed by Poisson sources (of single jobs or
/// of batches), each job visiting once: the exact formula for its feature. A BMAP of several
/// phases gets M^X/G/1 as an approximation, its epochs taken as Poisson.
fn open_station(net: &Network, s: usize, v: &[Vec<f64>], a: &mut Analysis) -> Result<(), String> {
    let st = &net.stations[s];
    let mut batches = None;
    let mut breaks = Vec::new();
    for src in &net.stations {
        if let StationKind::Source { interarrival, .. } = &src.kind {
            // a one-phase MAP (a BMAP's epochs, say) is Poisson
            let process = interarrival.arrival_process();
            let poisson =
                interarrival.is_exponential() || process.is_some_and(|m| m.map().phases() == 1);
            if let (false, Some(m), Some(Batch::Markovian { .. })) =
                (poisson, process, src.features.batch)
            {
                breaks.push(format!(
                    "source {:?} is a BMAP of {} phases (epochs' SCV {}, lag-1 correlation {}), its epochs taken as Poisson and its sizes as independent",
                    src.name,
                    m.map().phases(),
                    short(interarrival.scv()),
                    short(m.lag_correlation(1))
                ));
            } else if !poisson {
                return Err(format!(
                    "source {:?} is not Poisson (inter-arrival SCV {}): the exact formulas need Poisson arrivals",
                    src.name,
                    short(interarrival.scv())
                ));
            }
            if let Some(b) = src.features.batch {
                batches = Some((b, 1.0 / interarrival.mean()));
            }
        }
    }
    for (c, class) in net.classes.iter().enumerate() {
        let rate = arrival_rate(net, c);
        if rate > 0.0 && (v[c][s] / rate - 1.0).abs() > 1e-9 {
            return Err(format!(
                "class {:?} visits station {:?} {} times per job: the formulas take one visit",
                class.name,
                st.name,
                short(v[c][s] / rate)
            ));
        }
    }
    let f = &st.features;
    let visiting: Vec<usize> = (0..net.classes.len())
        .filter(|&c| service(st, c).is_some())
        .collect();
    let features = named(f).len() + usize::from(batches.is_some());
    if features != 1 {
        return Err(format!(
            "station {:?} has {}: no formula takes them together (simulate it)",
            st.name,
            named(f)
                .into_iter()
                .chain(batches.map(|_| "batch arrivals"))
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    if let Some(preemption) = f.priority {
        return priority(net, s, &visiting, preemption, a);
    }
    let [c] = visiting[..] else {
        return Err(format!(
            "{} classes visit station {:?}: the formulas for {} take one",
            visiting.len(),
            st.name,
            named(f).join(" and ")
        ));
    };
    let d = service(st, c).expect("a visiting class has a service time");
    let lambda = arrival_rate(net, c);
    if let Some(capacity) = f.capacity {
        let (method, r) = finite(st, d, lambda, capacity.jobs)?;
        let m = r.map_err(|e| format!("{method}: {e}"))?;
        single(net, s, c, &Single::finite(&m), &method, true, a);
        add(
            a,
            Subject::Station(&st.name).metric(Figure::Loss),
            m.loss_probability,
            &method,
        );
        add(
            a,
            Subject::Class(&net.classes[c].name).metric(Figure::Loss),
            m.loss_probability,
            &method,
        );
    } else if let Some(patience) = &f.patience {
        let servers = queue_servers(st).ok_or("a patience is on an FCFS queue")?;
        if !d.is_exponential() {
            return Err(format!(
                "M/M/c+G needs exponential service (station {:?}: service SCV {}); no exact formula for other service laws with impatience (simulate it)",
                st.name,
                short(d.scv())
            ));
        }
        let (method, m) = if patience.is_exponential() {
            let method = "M/M/c+M (Erlang-A, birth-death chain)";
            let m = erlang_a(lambda, d.mean(), servers, patience.mean())
                .map_err(|e| format!("{method}: {e}"))?;
            (method, m)
        } else {
            let method = "M/M/c+G (Baccelli-Hebuterne offered-wait density, numerical integrals)";
            let cdf = |x: f64| patience.cdf(x);
            let quantile = |q: f64| patience.quantile(q);
            let law = PatienceLaw {
                mean: patience.mean(),
                cdf: &cdf,
                quantile: &quantile,
            };
            let m = mmc_general_patience(lambda, d.mean(), servers, &law)
                .map_err(|e| format!("{method}: {e}"))?;
            (method, m)
        };
        let one = Single {
            response: m.mean_response_served,
            wait: Some(m.mean_wait_served),
            number: m.mean_number,
            throughput: m.throughput,
            utilisation: Some(m.utilisation),
        };
        single(net, s, c, &one, method, true, a);
        add(
            a,
            Subject::Station(&st.name).metric(Figure::Abandon),
            m.abandon_probability,
            method,
        );
        add(
            a,
            Subject::Class(&net.classes[c].name).metric(Figure::Abandon),
            m.abandon_probability,
            method,
        );
    } else if let Some(rates) = &f.rate_by_jobs {
        let method = "load-dependent server (birth-death chain)";
        let exponential = d.is_exponential() || is_ps(st);
        if !exponential {
            return Err(format!(
                "{method} at an FCFS station needs exponential service (station {:?} has SCV {}); at a PS station any law",
                st.name,
                short(d.scv())
            ));
        }
        let m = load_dependent_station(lambda, d.mean(), rates)
            .map_err(|e| format!("{method}: {e}"))?;
        let one = Single {
            response: m.mean_response,
            // Little's law on the queue before the server: L_q = L - P(busy)
            wait: Some((m.mean_number - m.utilisation) / m.throughput),
            number: m.mean_number,
            throughput: m.throughput,
            utilisation: Some(m.utilisation),
        };
        single(net, s, c, &one, method, true, a);
    } else if let Some((batch, batch_rate)) = batches {
        let method = "M^X/G/1 (Poisson batches)";
        if queue_servers(st) != Some(1) || is_ps(st) {
            return Err(format!(
                "{method} takes one FCFS server; station {:?} is not one",
                st.name
            ));
        }
        let size = match batch {
            Batch::Fixed(k) => BatchSize::fixed(k),
            Batch::Geometric { mean } => BatchSize::geometric(mean),
            // the epochs are Poisson (checked above): sizes independent, of these moments
            Batch::Markovian {
                mean,
                second_moment,
            } => Ok(BatchSize {
                mean,
                second_moment,
            }),
        }
        .map_err(|e| e.to_string())?;
        let m = mxg1(batch_rate, size, d.mean(), d.scv()).map_err(|e| format!("{method}: {e}"))?;
        let (label, exact) = crate::predict::approximation(method, &breaks);
        single(net, s, c, &Single::station(&m), &label, exact, a);
    }
    Ok(())
}

/// The exact formula for a single-class station with a capacity of `k` jobs, by kind and law.
pub(super) fn finite(
    st: &Station,
    d: &Dist,
    lambda: f64,
    k: u32,
) -> Result<(String, analytic::Result<FiniteMetrics>), String> {
    let mean = d.mean();
    Ok(match &st.kind {
        StationKind::Delay { .. } => (
            "M/G/c/c (Erlang B, any service law)".to_owned(),
            mgcc(lambda, mean, k),
        ),
        StationKind::Queue {
            discipline: Discipline::Ps,
            ..
        } => (
            "M/G/1/K-PS (insensitive: the M/M/1/K birth-death chain)".to_owned(),
            mmck(lambda, mean, 1, k),
        ),
        StationKind::Queue { servers, .. } if d.is_exponential() => (
            "M/M/c/K (birth-death chain)".to_owned(),
            mmck(lambda, mean, *servers, k),
        ),
        StationKind::Queue { servers: 1, .. } => {
            let count = k as usize;
            let a = match d.law() {
                Law::Deterministic { value } => {
                    analytic::arrivals_deterministic(lambda, *value, count)
                }
                Law::Uniform { min, max } => analytic::arrivals_uniform(lambda, *min, *max, count),
                Law::Erlang { k: phases, mean } => {
                    analytic::arrivals_gamma(lambda, *mean, f64::from(*phases), count)
                }
                Law::Gamma(_, p) => {
                    analytic::arrivals_gamma(lambda, p.shape * p.scale, p.shape, count)
                }
                Law::HyperExp { p1, mean1, mean2 } => analytic::arrivals_hyperexponential(
                    lambda,
                    &[*p1, 1.0 - p1],
                    &[*mean1, *mean2],
                    count,
                ),
                Law::LogNormal(..) => analytic::arrivals_lognormal(lambda, mean, d.scv(), count),
                _ => {
                    return Err(format!(
                        "M/G/1/K needs the number of arrivals during a service, computed here for exponential, deterministic, uniform, Erlang, gamma, hyperexponential and lognormal service; station {:?}'s law (SCV {}) is none of them (simulate it)",
                        st.name,
                        short(d.scv())
                    ));
                }
            };
            let method = "M/G/1/K (embedded Markov chain)".to_owned();
            let r = a.and_then(|a| mg1k(lambda, mean, k, &a));
            (method, r)
        }
        StationKind::Queue { .. } => {
            return Err(format!(
                "station {:?} has several servers and service SCV {}: no exact formula for M/G/c/K (simulate it)",
                st.name,
                short(d.scv())
            ));
        }
        _ => return Err("a capacity is on a delay, FCFS or PS station".to_owned()),
    })
}

/// An FCFS station solved alone: its method, its discipline, the visiting classes in level
/// order with the formula's inputs, and the formula's results.
pub(super) struct SolvedFcfs {
    /// The formula's name.
    pub method: &'static str,
    /// How a level takes the server from the levels below (no priorities: non-preemptive,
    /// every class at one level).
    pub preemption: Preemption,
    /// The visiting classes, sorted by level.
    pub order: Vec<usize>,
    /// The formula's inputs, in `order`.
    pub classes: Vec<PriorityClass>,
    /// The formula's results, in `order`.
    pub m: PriorityMetrics,
}

/// Solves FCFS station `s` for the `visiting` classes arriving at `rate(c)`, as Poisson
/// streams: Cobham's formulas (one server, any law; without priorities every class at one
/// level, the Pollaczek-Khinchine mean for several classes) or M/M/c (non-preemptive, equal
/// exponential services). `preemption` is the station's priority discipline, `None` without
/// priorities.
pub(super) fn solve_fcfs(
    net: &Network,
    s: usize,
    visiting: &[usize],
    preemption: Option<Preemption>,
    rate: &dyn Fn(usize) -> f64,
) -> Result<SolvedFcfs, String> {
    let st = &net.stations[s];
    let priority = |c: usize| preemption.map_or(0, |_| net.classes[c].priority);
    let mut levels: Vec<i32> = visiting.iter().map(|&c| priority(c)).collect();
    levels.sort_unstable();
    levels.dedup();
    let mut order: Vec<usize> = visiting.to_vec();
    order.sort_by_key(|&c| priority(c));
    let classes: Vec<PriorityClass> = order
        .iter()
        .map(|&c| {
            let d = service(st, c).expect("a visiting class has a service time");
            PriorityClass {
                lambda: rate(c),
                mean_service: d.mean(),
                scv: d.scv(),
                level: levels
                    .binary_search(&priority(c))
                    .map_or(0, |l| l as u32 + 1),
            }
        })
        .collect();
    let servers = queue_servers(st).ok_or("priorities are on an FCFS queue")?;
    let (method, r) = match (preemption, servers) {
        (None, 1) => (
            "M/G/1 FCFS (Pollaczek-Khinchine, several classes)",
            mg1_priority_nonpreemptive(&classes),
        ),
        (None, c) => (
            "M/M/c FCFS (equal service rates)",
            mmc_priority_nonpreemptive(&classes, c),
        ),
        (Some(Preemption::NonPreemptive), 1) => (
            "M/G/1 non-preemptive priority (Cobham)",
            mg1_priority_nonpreemptive(&classes),
        ),
        (Some(Preemption::PreemptiveResume), 1) => (
            "M/G/1 preemptive-resume priority",
            mg1_priority_preemptive(&classes),
        ),
        (Some(Preemption::NonPreemptive), c) => (
            "M/M/c non-preemptive priority (equal service rates)",
            mmc_priority_nonpreemptive(&classes, c),
        ),
        (Some(Preemption::PreemptiveResume), c) => {
            return Err(format!(
                "station {:?} has {c} servers: no exact formula for preemptive priority on several servers (simulate it)",
                st.name
            ));
        }
    };
    let m = r.map_err(|e| format!("station {:?}: {method}: {e}", st.name))?;
    Ok(SolvedFcfs {
        method,
        preemption: preemption.unwrap_or(Preemption::NonPreemptive),
        order,
        classes,
        m,
    })
}

/// One class's means at a station solved alone: (class, arrival rate, visits per job, time per
/// visit, wait to the first start of service).
pub(super) type ClassAtStation = (usize, f64, f64, f64, f64);

impl SolvedFcfs {
    /// Each visiting class's means, visiting `visits(c)` times per job.
    pub fn per_class(&self, visits: &dyn Fn(usize) -> f64) -> Vec<ClassAtStation> {
        self.order
            .iter()
            .zip(&self.m.classes)
            .enumerate()
            .map(|(k, (&c, cm))| {
                let wait = first_start(self.preemption, &self.classes, k, cm);
                (c, cm.throughput, visits(c), cm.mean_response, wait)
            })
            .collect()
    }
}

/// Adds the figures of station `s` and of each class there, from `per_class` (the station's
/// number, throughput, time per visit and wait mix the classes by Little's law), and its
/// `utilisation` per server, under `method`.
pub(super) fn add_station(
    net: &Network,
    s: usize,
    per_class: &[ClassAtStation],
    utilisation: f64,
    method: &str,
    exact: bool,
    a: &mut Analysis,
) {
    let (mut number, mut throughput, mut waiting) = (0.0, 0.0, 0.0);
    for &(c, rate, visits, response, wait) in per_class {
        let subject = station_class_subject(net, s, c);
        let figures = [
            (Figure::Response, response),
            (Figure::Throughput, rate),
            (Figure::Visits, visits),
            (Figure::Residence, visits * response),
            (Figure::Wait, wait),
            (Figure::Number, rate * response),
        ];
        for (figure, value) in figures {
            a.add(subject.metric(figure), value, method, exact);
        }
        number += rate * response;
        throughput += rate;
        waiting += rate * wait;
    }
    let name = Subject::Station(&net.stations[s].name);
    let figures = [
        (Figure::Wait, waiting / throughput),
        (Figure::Response, number / throughput),
        (Figure::Number, number),
        (Figure::Utilisation, utilisation),
        (Figure::Throughput, throughput),
    ];
    for (figure, value) in figures {
        a.add(name.metric(figure), value, method, exact);
    }
}

/// A priority station serving `visiting` classes, the only station of an open network fed by
/// Poisson sources: [`solve_fcfs`]'s formulas, exact.
fn priority(
    net: &Network,
    s: usize,
    visiting: &[usize],
    preemption: Preemption,
    a: &mut Analysis,
) -> Result<(), String> {
    let st = &net.stations[s];
    let solved = solve_fcfs(net, s, visiting, Some(preemption), &|c| {
        arrival_rate(net, c)
    })?;
    let method = solved.method;
    let per_class = solved.per_class(&|_| 1.0);
    add_station(net, s, &per_class, solved.m.utilisation, method, true, a);
    for &(c, rate, _, response, _) in &per_class {
        add(a, class_metric(net, c), response, method);
        let cname = &net.classes[c].name;
        add(
            a,
            Subject::Class(cname).metric(Figure::Throughput),
            rate,
            method,
        );
        let d = service(st, c).expect("a visiting class has a service time");
        let floor = |q: f64| d.quantile(q).unwrap_or(0.0);
        percentile_bounds(a, Subject::Class(cname), response, &floor);
    }
    // the station's quantiles are at least the smallest of the classes' service quantiles
    let floor = |q: f64| {
        solved
            .order
            .iter()
            .filter_map(|&c| service(st, c)?.quantile(q).ok())
            .fold(f64::INFINITY, f64::min)
    };
    let response = solved.m.mean_number / solved.m.throughput;
    percentile_bounds(a, Subject::Station(&st.name), response, &floor);
    Ok(())
}

/// The mean time from arrival to the first start of service of class `k` (of `classes`,
/// sorted by level) whose means are `m`: the formula's wait without preemption; with
/// preemption (one server) the response less the service stretched by the interruptions of
/// the levels above, `E[S_k] / (1 - sigma_(k-1))` (Harchol-Balter, *Performance Modeling and
/// Design of Computer Systems*, 32.3), which leaves the work of the levels up to its own found
/// at arrival and the urgent work arriving meanwhile.
fn first_start(
    preemption: Preemption,
    classes: &[PriorityClass],
    k: usize,
    m: &StationMetrics,
) -> f64 {
    match preemption {
        Preemption::NonPreemptive => m.mean_wait,
        Preemption::PreemptiveResume => {
            let above: f64 = classes
                .iter()
                .filter(|c| c.level < classes[k].level)
                .map(|c| c.lambda * c.mean_service)
                .sum();
            m.mean_response - classes[k].mean_service / (1.0 - above)
        }
    }
}

/// A closed single-class network whose only features are load-dependent speeds, every other
/// station product form: exact load-dependent MVA.
fn closed_load_dependent(net: &Network, v: &[Vec<f64>], a: &mut Analysis) -> Result<(), String> {
    let method = "exact load-dependent MVA (Reiser-Lavenberg)";
    let ClassKind::Closed { population, .. } = net.classes[0].kind else {
        return Err("the class is closed".to_owned());
    };
    let mut centers = Vec::new();
    let mut names = Vec::new();
    for (s, st) in service_stations(net) {
        let Some(d) = service(st, 0) else { continue };
        let f = &st.features;
        if !(f.priority.is_none() && f.capacity.is_none() && f.patience.is_none()) {
            return Err(format!(
                "{method} takes load-dependent stations; station {:?} has {}",
                st.name,
                named(f).join(" and ")
            ));
        }
        let demand = v[0][s] * d.mean();
        let fcfs_general = !is_ps(st) && queue_servers(st).is_some() && !d.is_exponential();
        if fcfs_general {
            return Err(format!(
                "{method} needs exponential service at FCFS stations (station {:?} has SCV {})",
                st.name,
                short(d.scv())
            ));
        }
        centers.push(match (&st.kind, &f.rate_by_jobs) {
            (StationKind::Delay { .. }, _) => LdCenter::Delay { demand },
            (_, Some(rates)) => LdCenter::LoadDependent {
                demand,
                rates: rates.clone(),
            },
            (StationKind::Queue { servers, .. }, None) if *servers > 1 => LdCenter::LoadDependent {
                demand,
                rates: (1..=*servers).map(f64::from).collect(),
            },
            _ => LdCenter::Queue { demand },
        });
        names.push((s, v[0][s]));
    }
    let solution =
        mva_load_dependent(&centers, population).map_err(|e| format!("{method}: {e}"))?;
    let sol = solution.full();
    add(a, class_metric(net, 0), sol.response_time, method);
    add(
        a,
        Subject::Class(&net.classes[0].name).metric(Figure::Throughput),
        sol.throughput,
        method,
    );
    let ClassKind::Closed { reference, .. } = net.classes[0].kind else {
        unreachable!("checked above")
    };
    let cname = &net.classes[0].name;
    let reference_floor = |q: f64| {
        let st = &net.stations[reference.index()];
        service(st, 0)
            .and_then(|d| d.quantile(q).ok())
            .map_or(0.0, |x| x / fastest(st))
    };
    percentile_bounds(
        a,
        Subject::Class(cname),
        sol.response_time,
        &reference_floor,
    );
    for (k, &(s, visits)) in names.iter().enumerate() {
        let st = &net.stations[s];
        let name = &st.name;
        let per_visit = sol.residence[k] / visits;
        if s == reference.index() {
            let response = sol.response_time - sol.residence[k];
            add(
                a,
                Subject::Class(cname).metric(Figure::Response),
                response,
                method,
            );
        }
        let subject = station_class_subject(net, s, 0);
        add(a, subject.metric(Figure::Visits), visits, method);
        add(
            a,
            subject.metric(Figure::Residence),
            sol.residence[k],
            method,
        );
        let throughput = sol.throughput * visits;
        add(
            a,
            Subject::Station(name).metric(Figure::Throughput),
            throughput,
            method,
        );
        let d = service(st, 0).expect("a visited station has a service time");
        let floor = |q: f64| d.quantile(q).map_or(0.0, |x| x / fastest(st));
        if matches!(st.kind, StationKind::Delay { .. }) {
            service_quantiles(a, Subject::Station(name), d);
        } else {
            percentile_bounds(a, Subject::Station(name), per_visit, &floor);
        }
        if let (Some(1), false, Some(busy)) = (queue_servers(st), is_ps(st), sol.utilisation[k]) {
            // one FCFS server: Little's law on the queue before it, L_q = Q - P(busy)
            let wait = (sol.queue_length[k] - busy) / throughput;
            add(a, Subject::Station(name).metric(Figure::Wait), wait, method);
        }
        add(
            a,
            Subject::Station(name).metric(Figure::Response),
            per_visit,
            method,
        );
        add(
            a,
            Subject::Station(name).metric(Figure::Number),
            sol.queue_length[k],
            method,
        );
        // (a multi-server queue solved as load-dependent has its busy probability, not the
        // busy fraction per server, as its utilisation: left out)
        let multi_server = queue_servers(&net.stations[s]).is_some_and(|c| c > 1);
        if let (Some(u), false) = (sol.utilisation[k], multi_server) {
            add(
                a,
                Subject::Station(name).metric(Figure::Utilisation),
                u,
                method,
            );
        }
    }
    Ok(())
}

/// The means of one single-class station that its predictions are made of.
struct Single {
    response: f64,
    /// The mean wait before service (FCFS queues; `None` where the formula gives none).
    wait: Option<f64>,
    number: f64,
    throughput: f64,
    /// Busy fraction per server (`None` for a delay).
    utilisation: Option<f64>,
}

impl Single {
    fn finite(m: &FiniteMetrics) -> Single {
        Single {
            response: m.mean_response,
            wait: Some(m.mean_wait),
            number: m.mean_number,
            throughput: m.throughput,
            utilisation: Some(m.utilisation),
        }
    }

    fn station(m: &StationMetrics) -> Single {
        Single {
            response: m.mean_response,
            wait: Some(m.mean_wait),
            number: m.mean_number,
            throughput: m.throughput,
            utilisation: m.utilisation,
        }
    }
}

/// The predictions of class `c` at its one station `s`, visited once per job.
fn single(
    net: &Network,
    s: usize,
    c: usize,
    m: &Single,
    method: &str,
    exact: bool,
    a: &mut Analysis,
) {
    let st = &net.stations[s];
    let name = &st.name;
    let add = |a: &mut Analysis, metric: String, value: f64, method: &str| {
        a.add(metric, value, method, exact);
    };
    let add_figures =
        |a: &mut Analysis, subject: Subject<'_>, figures: &[(Figure, f64)], method: &str| {
            for &(figure, value) in figures {
                a.add(subject.metric(figure), value, method, exact);
            }
        };
    add(a, class_metric(net, c), m.response, method);
    let class = Subject::Class(&net.classes[c].name);
    add_figures(a, class, &[(Figure::Throughput, m.throughput)], method);
    let station = Subject::Station(name);
    let mut figures = vec![
        (Figure::Response, m.response),
        (Figure::Number, m.number),
        (Figure::Throughput, m.throughput),
    ];
    if let (Some(w), Some(_)) = (m.wait, queue_servers(st).filter(|_| !is_ps(st))) {
        figures.push((Figure::Wait, w));
    }
    if let (Some(u), Some(_)) = (m.utilisation, queue_servers(st)) {
        figures.push((Figure::Utilisation, u));
    }
    add_figures(a, station, &figures, method);
    let subject = station_class_subject(net, s, c);
    add(a, subject.metric(Figure::Visits), 1.0, method);
    add(a, subject.metric(Figure::Residence), m.response, method);
    let d = service(st, c).expect("a visiting class has a service time");
    if matches!(st.kind, StationKind::Delay { .. }) {
        service_quantiles(a, Subject::Station(name), d);
        service_quantiles(a, Subject::Class(&net.classes[c].name), d);
        return;
    }
    if !exact {
        // the bounds hold around the true mean, which an approximation does not give
        return;
    }
    let fastest = fastest(st);
    let floor = |q: f64| d.quantile(q).map_or(0.0, |x| x / fastest);
    percentile_bounds(a, Subject::Station(name), m.response, &floor);
    percentile_bounds(a, Subject::Class(&net.classes[c].name), m.response, &floor);
}

/// The percentiles of the time at a delay station, exactly its service time's quantiles: a
/// job it admits is served at once.
fn service_quantiles(a: &mut Analysis, subject: Subject<'_>, d: &Dist) {
    let method = "service-time quantile (a delay serves every job it admits at once)";
    for (figure, (_, q)) in Figure::PERCENTILES.into_iter().zip(PERCENTILES) {
        if let Ok(x) = d.quantile(q) {
            add(a, subject.metric(figure), x, method);
        }
    }
}

/// The label of [`percentile_bounds`].
const PERCENTILE_BOUNDS: &str = "percentile bounds (below: the service time's quantile; above: Markov's inequality, E[T] / (1 - p))";

/// Bounds on the percentiles of a time `T` of mean `mean` that is never shorter than a time
/// whose `p`-quantile is `floor(p)`: below, that quantile; above, Markov's inequality
/// `P(T > t) <= E[T] / t`, so the `p`-quantile is at most `E[T] / (1 - p)`. Both hold for any
/// law; they bracket, they do not estimate.
fn percentile_bounds(
    a: &mut Analysis,
    subject: Subject<'_>,
    mean: f64,
    floor: &dyn Fn(f64) -> f64,
) {
    for (figure, (_, p)) in Figure::PERCENTILES.into_iter().zip(PERCENTILES) {
        let upper = mean / (1.0 - p);
        let lower = floor(p).min(upper);
        if lower.is_finite() && upper.is_finite() {
            a.bounds.push(Bound {
                metric: subject.metric(figure),
                lower,
                upper,
                method: PERCENTILE_BOUNDS.to_owned(),
            });
        }
    }
}

/// The largest multiple of a station's rate (1 without `rate_by_jobs`): a job's time there is
/// at least its service time over it.
fn fastest(st: &Station) -> f64 {
    st.features
        .rate_by_jobs
        .as_ref()
        .map_or(1.0, |r| r.iter().copied().fold(1.0, f64::max))
}

/// Adds an exact prediction.
fn add(a: &mut Analysis, metric: String, value: f64, method: &str) {
    a.add(metric, value, method, true);
}

/// The service time of class `c` at `st`, if it is served there.
pub(super) fn service(st: &Station, c: usize) -> Option<&Dist> {
    st.kind.service().and_then(|t| t[c].as_ref())
}

fn queue_servers(st: &Station) -> Option<u32> {
    match st.kind {
        StationKind::Queue { servers, .. } => Some(servers),
        _ => None,
    }
}

fn is_ps(st: &Station) -> bool {
    matches!(
        st.kind,
        StationKind::Queue {
            discipline: Discipline::Ps,
            ..
        }
    )
}
