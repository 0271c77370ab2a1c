//! Where each replication reads a replayed trace (`mode = "replay"`), so that replications stay
//! independent.
//!
//! Replication `r` starts reading a trace at sample `r * stride` (modulo its length). The
//! stride is the larger of what one replication reads (estimated from the traffic equations,
//! with a margin) and the trace's length over the replications planned: a long trace is spread
//! over all of them, a short one is read stretch after stretch. When the trace holds fewer
//! stretches than replications, the later replications read samples the earlier ones read and
//! are not independent: [`ReplayPlan::warnings`] says so before the run.
//!
//! The offsets depend on the run's length and planned replications only, never on threads,
//! shards or the order replications finish in.

use super::Network;
use super::StationKind;
use super::estimates::draws_per_observation;

/// Where a replayed trace is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplaySite {
    /// The inter-arrival law of the source at this station.
    Source(usize),
    /// The service law of a class at a station.
    Service {
        /// The station.
        station: usize,
        /// The class.
        class: usize,
    },
    /// The patience law of a station.
    Patience(usize),
}

/// One replayed trace's stretches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayStretch {
    /// Where it is drawn.
    pub site: ReplaySite,
    /// Samples in the trace.
    pub samples: u64,
    /// About how many samples one replication reads (with a margin of 10% and 10 samples).
    pub need: u64,
    /// How far apart the replications' starting samples are.
    pub stride: u64,
}

/// The stretches of every replayed trace of a network, for runs of a given length and a number
/// of planned replications.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayPlan {
    /// One per replayed trace, sources first, then services by station and class, then
    /// patience laws.
    pub stretches: Vec<ReplayStretch>,
    replications: u64,
}

impl ReplayPlan {
    /// The plan for replications of `observations` observations each (warm-up included),
    /// `replications` of them planned. Empty when no law replays a trace.
    pub fn new(net: &Network, observations: u64, replications: u64) -> ReplayPlan {
        let replications = replications.max(1);
        let sites: Vec<(ReplaySite, u64)> = sites(net).collect();
        if sites.is_empty() {
            return ReplayPlan {
                stretches: Vec::new(),
                replications,
            };
        }
        let draws = draws_per_observation(net);
        let stretches = sites
            .into_iter()
            .map(|(site, samples)| {
                let per_observation = draws.as_ref().map_or(1.0, |d| match site {
                    ReplaySite::Source(s) => d.source[s],
                    ReplaySite::Service { station, class } => d.service[station][class],
                    ReplaySite::Patience(s) => d.arrivals[s],
                });
                let expected = observations as f64 * per_observation;
                let need = if expected.is_finite() {
                    (1.1 * expected + 10.0).ceil().min(u64::MAX as f64) as u64
                } else {
                    u64::MAX
                };
                ReplayStretch {
                    site,
                    samples,
                    need,
                    stride: need.max(samples / replications),
                }
            })
            .collect();
        ReplayPlan {
            stretches,
            replications,
        }
    }

    /// Where replication `replication` starts reading the trace of `stretch`.
    pub fn offset(stretch: &ReplayStretch, replication: u64) -> u64 {
        (u128::from(replication) * u128::from(stretch.stride) % u128::from(stretch.samples)) as u64
    }

    /// One line per trace too short for the planned replications to read disjoint stretches;
    /// `planned` says what the replication count is ("planned", or "the precision rule may
    /// run").
    pub fn warnings(&self, net: &Network, planned: &str) -> Vec<String> {
        self.stretches
            .iter()
            .filter_map(|st| {
                let independent = st.samples / st.need.max(1);
                (independent < self.replications).then(|| {
                    let place = match st.site {
                        ReplaySite::Source(s) => {
                            format!("source {:?} replays a trace", net.stations[s].name)
                        }
                        ReplaySite::Service { station, class } => format!(
                            "station {:?} replays a service trace for class {:?}",
                            net.stations[station].name, net.classes[class].name
                        ),
                        ReplaySite::Patience(s) => {
                            format!("station {:?} replays a patience trace", net.stations[s].name)
                        }
                    };
                    format!(
                        "{place} of {} samples; a replication of this length reads about {} of them, so the trace holds {independent} independent replication(s) of the {} {planned}: the later ones re-read samples of earlier ones, their results are not independent and the intervals are too narrow; give a longer trace, shorten the run (--length) or run fewer replications",
                        st.samples, st.need, self.replications
                    )
                })
            })
            .collect()
    }
}

/// Every law of `net` that replays a trace, with the trace's length.
fn sites(net: &Network) -> impl Iterator<Item = (ReplaySite, u64)> + '_ {
    let len = |d: &crate::dist::Dist| d.replayed_trace().map(|e| e.len() as u64);
    let sources = net.stations.iter().enumerate().filter_map(move |(s, st)| {
        let StationKind::Source { interarrival, .. } = &st.kind else {
            return None;
        };
        Some((ReplaySite::Source(s), len(interarrival)?))
    });
    let services = net.stations.iter().enumerate().flat_map(move |(s, st)| {
        st.kind.service().into_iter().flat_map(move |table| {
            table.iter().enumerate().filter_map(move |(c, d)| {
                Some((
                    ReplaySite::Service {
                        station: s,
                        class: c,
                    },
                    len(d.as_ref()?)?,
                ))
            })
        })
    });
    let patience = net.stations.iter().enumerate().filter_map(move |(s, st)| {
        Some((
            ReplaySite::Patience(s),
            len(st.features.patience.as_ref()?)?,
        ))
    });
    sources.chain(services).chain(patience)
}
