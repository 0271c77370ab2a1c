//! Why a program run stopped before every rank finished.

/// Operations a rank may execute without time passing before it is declared stuck.
pub const MAX_INSTANT_OPS: u64 = 100_000_000;

/// Why a program run stopped before every rank finished. Every variant is fatal for the run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgramFault {
    /// Nothing is left to happen, and these ranks still wait.
    #[error("deadlock at time {time:.6e}: {finished} of {ranks} ranks finished; nothing is left to happen and {} ranks wait.{} Waiting: {}{}", ranks - finished, collectives.iter().map(|c| format!(" {c}.")).collect::<String>(), waiting.join("; "), if (ranks - finished) as usize > waiting.len() { "; ..." } else { "" })]
    Deadlock {
        /// When it was found.
        time: f64,
        /// Ranks that finished.
        finished: u32,
        /// All ranks.
        ranks: u32,
        /// For each collective some rank waits inside: the collective, its ranks that wait in
        /// it, and where its other ranks are (those that never arrived, and what holds them).
        collectives: Vec<String>,
        /// For the first waiting ranks (at most 8): who it is and what it waits for.
        waiting: Vec<String>,
    },
    /// An expression could not be evaluated, or gave an impossible value.
    #[error("rank {rank}, {path}: {message}")]
    Eval {
        /// The rank.
        rank: u32,
        /// The operation's path in the scenario.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The run outgrew the engine's limits: `2^84` clock ticks (`2^53` times the program's
    /// smallest time) or `2^41` events.
    #[error(
        "the run outgrew the engine's limits at time {time:.6e} after {events} events (2^84 ticks of the clock, i.e. 2^53 times the smallest time of the program, or 2^41 events)"
    )]
    Horizon {
        /// When.
        time: f64,
        /// Events scheduled.
        events: u64,
    },
    /// The execution scheduled more events than a run may
    /// ([`crate::program::budget::MAX_EVENTS`]): work whose size was only known while it ran
    /// (counts that read loop counters) grew past the budget.
    #[error(
        "the run scheduled {events} events by time {time:.6e} (with {finished} of {ranks} ranks finished), beyond the budget of {limit} events (2^34) a replication may take: the program's loops do more work than parsim can simulate in reasonable time (their counts read loop counters, so it could not be bounded before the run); reduce the iterations"
    )]
    Budget {
        /// When it stopped.
        time: f64,
        /// Events scheduled.
        events: u64,
        /// The budget.
        limit: u64,
        /// Ranks that finished.
        finished: u32,
        /// All ranks.
        ranks: u32,
    },
    /// Every rank finished, and messages sent to them were never received (a send without
    /// its receive: the program is wrong, and its times would be).
    #[error(
        "every rank finished, but {count} messages sent were never received (e.g. {example}): every send needs its receive"
    )]
    Unreceived {
        /// Messages left in mailboxes.
        count: u64,
        /// One of them.
        example: String,
    },
    /// A rank ran 10^8 operations without time passing (a loop that does nothing, forever).
    #[error(
        "rank {rank} executed {MAX_INSTANT_OPS} operations at {path} without time passing (a loop that never takes time)"
    )]
    Stuck {
        /// The rank.
        rank: u32,
        /// Where it was.
        path: String,
    },
}
