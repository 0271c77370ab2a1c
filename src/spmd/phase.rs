//! Multi-phase SPMD programs (`[[spmd.phase]]`): the paper's program is "a sequence of
//! phases, each of `N` statistically identical cycles" (DESIGN 2.1); each phase gives its
//! name, its cycles and the parameters in which it differs from the section.
//!
//! **Which parameters a phase may set.** The program's: `S_par`, `S_ser`, `S0_com`, `SR_com`,
//! `S0_io`, `SR_io`, `n_io`, `w`, `r` or `g`, and the burst families `cpu`, `com`, `io_dist`;
//! every one it leaves out is the section's. The machine's stay the section's: `p`, `d`, `c`,
//! `io`, `network`, `latency`; with `network = ...` also `S0_com` and `SR_com` (the links'
//! startup and bandwidth) and `r` (the decomposition that sets the grid), so a phase of the
//! network form varies its communication only through the `com` family.
//!
//! **How phases run.** A queueing network is observed in steady state and cannot run one
//! population of cycles after another, so a multi-phase section is built as a rank program
//! ([`super::program`]), the form `network = ...` already uses: each phase is a named `phase`
//! of its cycles, then an ideal (zero-cost) barrier of all ranks, so phases never overlap and
//! the program reports `phase.<name>.mean` and `.max` per phase and `program.makespan` in total.
//! Without `network = ...` the communication burst is the paper's `w` submodel written as
//! program operations (a delay, then one FCFS `bus` unit shared by all groups). As in the
//! network form, a cycle runs exactly `n_io` computation bursts (a whole number), where the
//! paper's network draws them geometrically.

use super::{Found, MAX_CYCLES, RawSpmd, Spmd};

/// One checked phase: its name, its cycles and the model of its cycles (the section's
/// parameters with the phase's in their place).
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Its name, in metric names.
    pub name: String,
    /// Cycles it runs.
    pub cycles: u32,
    /// The parameters of its cycles, checked as a one-phase section.
    pub model: Spmd,
}

/// Checks the phases of `raw` (the section at `at`, already checked as `section`): names
/// usable and distinct, cycles in `1..=MAX_CYCLES`, no machine-wide field, and each phase's
/// parameters (the section's with the phase's in their place) checked as a one-phase section,
/// every problem at the phase's offset under `spmd.phase[<i>].<field>`.
pub fn check(raw: &RawSpmd, section: &Spmd, at: usize) -> Result<Vec<Phase>, Found> {
    let mut found = Found::new();
    if let Some(cycles) = raw.cycles {
        found.push((
            Some(at),
            "spmd.cycles".into(),
            format!(
                "with [[spmd.phase]] each phase gives its own cycles: leave out cycles = {cycles}"
            ),
        ));
    }
    let mut phases = Vec::new();
    for (i, spanned) in raw.phases.iter().enumerate() {
        let ph = spanned.get_ref();
        let at = spanned.span().start;
        let prefix = format!("spmd.phase[{i}]");
        let mut bad = |field: &str, message: String| {
            found.push((Some(at), format!("{prefix}.{field}"), message));
        };
        if let Some(problem) = crate::metrics::name_problem(&ph.name) {
            bad(
                "name",
                format!("{:?} is not a usable name: it {problem}", ph.name),
            );
        } else if raw.phases[..i].iter().any(|o| o.get_ref().name == ph.name) {
            bad(
                "name",
                format!("{:?} names an earlier phase: names must differ", ph.name),
            );
        }
        if !(1..=MAX_CYCLES).contains(&ph.cycles) {
            bad(
                "cycles",
                format!(
                    "must be a whole number in 1..={MAX_CYCLES}, got {}",
                    ph.cycles
                ),
            );
        }
        for field in ph.machine_wide() {
            bad(
                field,
                "is machine-wide: set it in [spmd], not in a phase".into(),
            );
        }
        if raw.network.is_some() {
            for (field, given) in [
                ("S0_com", ph.s0_com.is_some()),
                ("SR_com", ph.sr_com.is_some()),
                ("r", ph.r.is_some()),
                ("g", ph.g.is_some()),
            ] {
                if given {
                    bad(
                        field,
                        "is machine-wide with network = ...: S0_com and SR_com set the links' \
                         startup and bandwidth, r the decomposition; set it in [spmd]"
                            .into(),
                    );
                }
            }
        }
        let n_io = ph.n_io.unwrap_or(raw.n_io);
        if raw.network.is_none() && n_io.fract() != 0.0 {
            bad(
                "n_io",
                format!(
                    "a multi-phase program runs exactly n_io computation bursts per I/O burst: \
                     it must be a whole number, got {n_io}"
                ),
            );
        }
        let (r, g) = if ph.r.is_some() || ph.g.is_some() {
            (ph.r, ph.g)
        } else {
            (raw.r, raw.g)
        };
        let merged = RawSpmd {
            p: raw.p,
            d: raw.d,
            c: raw.c,
            w: ph.w.unwrap_or(raw.w),
            r,
            g,
            s_par: ph.s_par.unwrap_or(raw.s_par),
            s_ser: ph.s_ser.unwrap_or(raw.s_ser),
            s0_com: ph.s0_com.unwrap_or(raw.s0_com),
            sr_com: ph.sr_com.unwrap_or(raw.sr_com),
            s0_io: ph.s0_io.unwrap_or(raw.s0_io),
            sr_io: ph.sr_io.unwrap_or(raw.sr_io),
            n_io,
            io: raw.io,
            cpu: ph.cpu.clone().or_else(|| raw.cpu.clone()),
            com: ph.com.clone().or_else(|| raw.com.clone()),
            io_dist: ph.io_dist.clone().or_else(|| raw.io_dist.clone()),
            network: raw.network,
            cycles: None,
            latency: raw.latency,
            phases: Vec::new(),
        };
        match Spmd::check_one(&merged, at, &prefix) {
            Ok(model) => phases.push(Phase {
                name: ph.name.clone(),
                cycles: ph.cycles.clamp(1, MAX_CYCLES) as u32,
                model: Spmd {
                    network: section.network.clone(),
                    ..model
                },
            }),
            Err(problems) => found.extend(problems),
        }
    }
    if found.is_empty() {
        Ok(phases)
    } else {
        Err(found)
    }
}
