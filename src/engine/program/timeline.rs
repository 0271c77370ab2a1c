//! A timeline of one execution: what each rank did when, the phases it was in, and how many
//! messages each link held, for a trace viewer or a Gantt chart (`crate::timeline` writes them).
//!
//! The executor keeps a recorder only when a timeline is asked for
//! ([`Execution::run_with_timeline`](super::Execution::run_with_timeline)); otherwise its only
//! cost is a `None` test where a rank changes category, enters or leaves a phase, or a message
//! enters or leaves a link. The recorder counts what it holds and stops at its limit (the run
//! then stops too, with [`TimelineError::TooLarge`]): its memory never grows past the limit.
//!
//! Every moment of a rank's run, from 0 to its finish, is in exactly one [`Span`]: the spans
//! are cut where the executor switches the rank's [`Category`] (and where the rank enters or
//! leaves a phase, so that each phase's span contains whole category spans), so a rank's
//! spans of one category add up to the time the run reports in that category.

use super::Ticks;
use crate::program::{Category, ProgramFault};
use crate::time::Clock;

/// A rank's time in one category, from `start` to `end` (time units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    /// The rank.
    pub rank: u32,
    /// What the rank did.
    pub category: Category,
    /// When it began.
    pub start: f64,
    /// When it ended.
    pub end: f64,
}

/// A rank's stay in a phase, from its outermost start to its outermost end (time units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseSpan {
    /// The rank.
    pub rank: u32,
    /// The phase's index in [`Timeline::phase_names`].
    pub phase: u16,
    /// When the rank entered it.
    pub start: f64,
    /// When it left it.
    pub end: f64,
}

/// The number of messages at one link (queued or being transmitted) over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkTrack {
    /// The link's name ([`crate::topology::Topology::link_name`]).
    pub name: String,
    /// (time, messages at the link from then on), in time order, one entry per instant at which
    /// the number changed; it starts above 0 and ends at 0.
    pub counts: Vec<(f64, u32)>,
}

/// What a run recorded: every rank's spans, its phases and the occupancy of every link used.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// The spans, by rank, each rank's in time order, tiling `0..finish[rank]`.
    pub spans: Vec<Span>,
    /// The phases' spans, by rank, each rank's in order of their start.
    pub phases: Vec<PhaseSpan>,
    /// The names of the program's phases, by index.
    pub phase_names: Vec<String>,
    /// The links messages crossed, by link id.
    pub links: Vec<LinkTrack>,
    /// Per rank: when it finished.
    pub finish: Vec<f64>,
    /// When the last rank finished.
    pub makespan: f64,
}

impl Timeline {
    /// The events the timeline holds: spans, phase spans and changes of a link's occupancy.
    pub fn events(&self) -> usize {
        self.spans.len()
            + self.phases.len()
            + self.links.iter().map(|l| l.counts.len()).sum::<usize>()
    }
}

/// Why a run with a timeline gave none.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TimelineError {
    /// The run itself failed.
    #[error(transparent)]
    Fault(#[from] ProgramFault),
    /// The timeline would have held more than `limit` events; the run stopped there.
    #[error(
        "the timeline would hold more than {limit} events (spans, phase spans and link changes): the run was stopped at time {time:.6e} with {finished} of {ranks} ranks finished"
    )]
    TooLarge {
        /// The most events allowed.
        limit: u64,
        /// When the run stopped.
        time: f64,
        /// Ranks finished by then.
        finished: u32,
        /// All ranks.
        ranks: u32,
    },
}

/// What the executor records as it runs, in clock ticks (turned into a [`Timeline`] at the end).
#[derive(Debug)]
pub(super) struct Recorder {
    limit: u64,
    held: u64,
    /// The limit was reached: nothing more is recorded.
    pub(super) full: bool,
    /// (start, end, rank, category), in the order they closed.
    spans: Vec<(Ticks, Ticks, u32, Category)>,
    /// (start, end, rank, phase); the end is `Ticks::MAX` while the phase is open.
    phases: Vec<(Ticks, Ticks, u32, u16)>,
    /// Per (rank, phase): the index in `phases` of its open outermost span.
    open: Vec<u32>,
    /// Phases of the program: the per-rank stride of `open`.
    stride: usize,
    /// (time, slot, +1 entering / -1 leaving): a message at a link.
    link_changes: Vec<(Ticks, u32, i8)>,
}

impl Recorder {
    /// Records a run of `ranks` ranks and `phases` phases, up to `limit` events.
    pub(super) fn new(limit: u64, ranks: u32, phases: usize) -> Recorder {
        Recorder {
            limit,
            held: 0,
            full: false,
            spans: Vec::new(),
            phases: Vec::new(),
            open: vec![u32::MAX; ranks as usize * phases],
            stride: phases,
            link_changes: Vec::new(),
        }
    }

    /// Room for one more event: false (and full from now on) at the limit.
    #[inline]
    fn room(&mut self) -> bool {
        if self.held >= self.limit {
            self.full = true;
            return false;
        }
        self.held += 1;
        true
    }

    /// The rank spent `start..end` in `category` (nothing is kept of an empty span).
    #[inline]
    pub(super) fn span(&mut self, rank: u32, category: Category, start: Ticks, end: Ticks) {
        if end > start && self.room() {
            self.spans.push((start, end, rank, category));
        }
    }

    /// The rank entered `phase` (its outermost start) at `now`.
    pub(super) fn phase_start(&mut self, rank: u32, phase: u16, now: Ticks) {
        if self.room() {
            self.open[rank as usize * self.stride + usize::from(phase)] = self.phases.len() as u32;
            self.phases.push((now, Ticks::MAX, rank, phase));
        }
    }

    /// The rank left `phase` (its outermost end) at `now`.
    pub(super) fn phase_end(&mut self, rank: u32, phase: u16, now: Ticks) {
        let k = rank as usize * self.stride + usize::from(phase);
        if let Some(p) = self.phases.get_mut(self.open[k] as usize) {
            p.1 = now;
        }
        self.open[k] = u32::MAX;
    }

    /// A message entered the link of `slot` at `time`, or (`enter` false) left it.
    #[inline]
    pub(super) fn link(&mut self, slot: u32, time: Ticks, enter: bool) {
        if self.room() {
            self.link_changes
                .push((time, slot, if enter { 1 } else { -1 }));
        }
    }

    /// The timeline in time units: `finish` per rank in ticks, the phases' names, and the link
    /// of each slot (its id and name).
    pub(super) fn timeline(
        mut self,
        clock: &Clock,
        finish: &[Ticks],
        phase_names: &[String],
        link_name: impl Fn(u32) -> (u64, String),
    ) -> Timeline {
        let t = |ticks: Ticks| clock.wide_span(ticks);
        // by rank, each rank's in time order (they closed in time order)
        self.spans.sort_by_key(|s| s.2);
        self.phases.sort_by_key(|p| (p.2, p.0));
        self.link_changes.sort_by_key(|c| (c.1, c.0));
        let mut links: Vec<(u64, LinkTrack)> = Vec::new();
        let mut i = 0;
        while i < self.link_changes.len() {
            let slot = self.link_changes[i].1;
            let mut counts: Vec<(f64, u32)> = Vec::new();
            let mut at = 0i64;
            while i < self.link_changes.len() && self.link_changes[i].1 == slot {
                let time = self.link_changes[i].0;
                while i < self.link_changes.len()
                    && self.link_changes[i].1 == slot
                    && self.link_changes[i].0 == time
                {
                    at += i64::from(self.link_changes[i].2);
                    i += 1;
                }
                let now = t(time);
                let n = at.max(0) as u32;
                match counts.last_mut() {
                    Some(last) if last.1 == n => {}
                    _ => counts.push((now, n)),
                }
            }
            let (id, name) = link_name(slot);
            links.push((id, LinkTrack { name, counts }));
        }
        links.sort_by_key(|(id, _)| *id);
        let finish_ticks = finish;
        let finish: Vec<f64> = finish.iter().map(|&f| t(f)).collect();
        Timeline {
            spans: self
                .spans
                .iter()
                .map(|&(start, end, rank, category)| Span {
                    rank,
                    category,
                    start: t(start),
                    end: t(end),
                })
                .collect(),
            phases: self
                .phases
                .iter()
                .map(|&(start, end, rank, phase)| PhaseSpan {
                    rank,
                    phase,
                    start: t(start),
                    // (phases are blocks a rank leaves before it finishes: none is open)
                    end: t(end.min(finish_ticks[rank as usize])),
                })
                .collect(),
            phase_names: phase_names.to_vec(),
            links: links.into_iter().map(|(_, l)| l).collect(),
            makespan: finish.iter().copied().fold(0.0, f64::max),
            finish,
        }
    }
}
