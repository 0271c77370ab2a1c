//! `[spmd]` checked into a [`Spmd`]: every parameter of the paper's Table 1, the network form
//! (`network = ...`) and the phases (`[[spmd.phase]]`), every problem reported at once under
//! `spmd.<field>` or `spmd.phase[<i>].<field>`.

use super::program::grid;
use super::raw::RawSpmd;
use super::{Family, Io, MAX_CYCLES, MAX_P, NetworkForm, Phase, Spmd, formulas};
use crate::problem::Problem;
use crate::program::budget::MAX_TIME_RATIO;
use crate::topology::TopologyKind;

/// Checks a raw section at byte offset `at`, reporting every problem under `spmd.<field>`,
/// and its phases (`check_phases`) under `spmd.phase[<i>].<field>`.
///
/// A program form (`network = ...` or phases) is also checked for the span of the times its
/// program is made of ([`clock_span`]), at the field that sets the longest, before the program
/// is built.
pub fn check(raw: &RawSpmd, at: usize) -> Result<Spmd, Vec<Problem>> {
    let mut m = check_one(raw, at, "spmd")?;
    if !raw.phases.is_empty() {
        m.phases = check_phases(raw, &m, at)?;
    }
    if let Some(problem) = clock_span(raw, &m, at) {
        return Err(vec![problem]);
    }
    Ok(m)
}

/// One time of the program an `[spmd]` section builds: its value, what it is, and the field
/// that sets it, as the user wrote it (`spmd.SR_io`, or `spmd.phase[1].SR_io` for a phase
/// that gives its own) with the offset of its section.
struct Timed {
    value: f64,
    what: &'static str,
    path: String,
    at: usize,
}

/// The times of the program a program form of `m` builds (`super::program`), each from the
/// field that sets it, in two lists: those the program compiler counts as the smallest and the
/// largest of the program's times, and those it counts as the largest only (disk requests,
/// whose size is drawn).
fn program_times(raw: &RawSpmd, m: &Spmd, at: usize) -> (Vec<Timed>, Vec<Timed>) {
    let mut both = Vec::new();
    let mut longest_only = Vec::new();
    let models: Vec<(Option<usize>, &Spmd)> = if m.phases.is_empty() {
        vec![(None, m)]
    } else {
        m.phases
            .iter()
            .enumerate()
            .map(|(i, ph)| (Some(i), &ph.model))
            .collect()
    };
    for (phase, mm) in models {
        // the field as written: the phase's own, or the section's it inherits
        let source = |field: &str| -> (String, usize) {
            let own = phase.and_then(|i| raw.phases.get(i)).filter(|ph| {
                let ph = ph.get_ref();
                match field {
                    "S_par" => ph.s_par.is_some(),
                    "S_ser" => ph.s_ser.is_some(),
                    "S0_com" => ph.s0_com.is_some(),
                    "SR_com" => ph.sr_com.is_some(),
                    "S0_io" => ph.s0_io.is_some(),
                    "SR_io" => ph.sr_io.is_some(),
                    _ => false,
                }
            });
            match (phase, own) {
                (Some(i), Some(ph)) => (format!("spmd.phase[{i}].{field}"), ph.span().start),
                _ => (format!("spmd.{field}"), at),
            }
        };
        let time = |list: &mut Vec<Timed>, value: f64, field: &str, what: &'static str| {
            if value > 0.0 {
                let (path, at) = source(field);
                list.push(Timed {
                    value,
                    what,
                    path,
                    at,
                });
            }
        };
        let cpu = if mm.s_par / f64::from(mm.p) >= mm.s_ser {
            "S_par"
        } else {
            "S_ser"
        };
        time(
            &mut both,
            formulas::cpu_mean(mm),
            cpu,
            "a computation burst (S_par / p + S_ser)",
        );
        match &m.network {
            Some(net) => {
                let faces = 2.0 * net.dims.len() as f64;
                time(
                    &mut both,
                    mm.s0_com / faces,
                    "S0_com",
                    "a message's startup (S0_com / (2 r))",
                );
                time(
                    &mut both,
                    mm.g * mm.sr_com / faces,
                    "SR_com",
                    "a face message's transmission (g(p) SR_com / (2 r))",
                );
                time(&mut both, net.latency, "latency", "a hop's latency");
            }
            None => {
                let shared = (1.0 - mm.w) * mm.g * mm.sr_com;
                let com = if mm.s0_com >= shared {
                    "S0_com"
                } else {
                    "SR_com"
                };
                time(
                    &mut both,
                    formulas::com_delay(mm),
                    com,
                    "a communication delay (S0_com + (1 - w) g(p) SR_com)",
                );
                time(
                    &mut longest_only,
                    formulas::com_queue(mm),
                    "SR_com",
                    "a bus service (w g(p) SR_com)",
                );
            }
        }
        let t_io = formulas::t_io(mm);
        let io = if mm.s0_io >= t_io - mm.s0_io {
            "S0_io"
        } else {
            "SR_io"
        };
        time(&mut longest_only, t_io, io, "an I/O burst (T_io of eq. 14)");
    }
    (both, longest_only)
}

/// The refusal of a program form whose times lie further apart than the program's clock can
/// hold ([`MAX_TIME_RATIO`], `2^37`), at the field that sets the longest and naming the one
/// that sets the shortest: the check the program compiler makes on the built program, made
/// here on the fields the user wrote (a program built from them has paths the user never saw).
fn clock_span(raw: &RawSpmd, m: &Spmd, at: usize) -> Option<Problem> {
    if m.network.is_none() && m.phases.is_empty() {
        return None;
    }
    let (both, longest_only) = program_times(raw, m, at);
    let shortest = both.iter().min_by(|a, b| a.value.total_cmp(&b.value))?;
    let longest = both
        .iter()
        .chain(&longest_only)
        .max_by(|a, b| a.value.total_cmp(&b.value))?;
    if longest.value / shortest.value <= MAX_TIME_RATIO {
        return None;
    }
    let field = |path: &str| path.rsplit('.').next().unwrap_or(path).to_owned();
    Some(Problem::new(
        Some(longest.at),
        longest.path.clone(),
        format!(
            "makes {} last {:.3e} time units, {:.3e} times the shortest time of the program \
             [spmd] builds, {} of {:.3e} (from {}): beyond {MAX_TIME_RATIO:.1e} (2^37) the \
             program's clock cannot hold both (it resolves 2^-31 of the shortest time and must \
             hold 2^16 of the longest), so one of them is probably in the wrong unit; bring {} \
             and {} within a factor {MAX_TIME_RATIO:.1e} of each other",
            longest.what,
            longest.value,
            longest.value / shortest.value,
            shortest.what,
            shortest.value,
            shortest.path,
            field(&longest.path),
            field(&shortest.path),
        ),
    ))
}

/// Checks the parameters of one phase, `raw` without its `phases`, reporting every problem
/// at `at` under `<prefix>.<field>`.
fn check_one(raw: &RawSpmd, at: usize, prefix: &str) -> Result<Spmd, Vec<Problem>> {
    let mut found = Vec::new();
    let mut whole = |field: &str, v: i64| {
        if (1..=MAX_P).contains(&v) {
            v as u32
        } else {
            let message = format!("must be a whole number in 1..={MAX_P}, got {v}");
            found.push(Problem::new(Some(at), format!("{prefix}.{field}"), message));
            1
        }
    };
    let p = whole("p", raw.p);
    let d = whole("d", raw.d.unwrap_or(1));
    let c = whole("c", raw.c.unwrap_or(1));
    let mut bad = |field: &str, message: String| {
        found.push(Problem::new(Some(at), format!("{prefix}.{field}"), message));
    };
    if p % c != 0 {
        bad(
            "c",
            format!("must divide p = {p} (p/c groups of c), got {c}"),
        );
    } else if raw.io == Io::CluAio && (p / c) % d != 0 {
        bad(
            "d",
            format!(
                "CLU-AIO needs p/c = {} to be a multiple of d, got {d}",
                p / c
            ),
        );
    }
    if !(0.0..=1.0).contains(&raw.w) {
        bad("w", format!("must lie in [0, 1], got {}", raw.w));
    }
    let times = [
        ("S_par", raw.s_par),
        ("S_ser", raw.s_ser),
        ("S0_com", raw.s0_com),
        ("SR_com", raw.sr_com),
        ("S0_io", raw.s0_io),
        ("SR_io", raw.sr_io),
    ];
    for (field, v) in times {
        if !(v.is_finite() && v >= 0.0) {
            bad(field, format!("must be a finite time >= 0, got {v}"));
        }
    }
    let cpu = raw.s_par + raw.s_ser;
    if cpu.is_nan() || cpu <= 0.0 {
        bad("S_par", "S_par + S_ser must be > 0".into());
    }
    let io = raw.s0_io + raw.sr_io;
    if io.is_nan() || io <= 0.0 {
        bad(
            "SR_io",
            "S0_io + SR_io must be > 0: cycles are counted at the I/O burst".into(),
        );
    }
    if !(raw.n_io.is_finite() && raw.n_io >= 1.0) {
        bad("n_io", format!("must be a number >= 1, got {}", raw.n_io));
    }
    let g = match (raw.r, raw.g) {
        (Some(_), Some(_)) => {
            bad("g", "give r or g, not both".into());
            0.0
        }
        (None, None) => {
            bad(
                "r",
                "give r (dimensions of the data) or g (g(p) at this p)".into(),
            );
            0.0
        }
        (Some(r), None) if !(r.is_finite() && r >= 1.0) => {
            bad("r", format!("must be a number >= 1, got {r}"));
            0.0
        }
        (None, Some(g)) if !(g.is_finite() && g >= 0.0) => {
            bad("g", format!("must be a finite number >= 0, got {g}"));
            0.0
        }
        (Some(r), None) => formulas::g(p, r),
        (None, Some(g)) => {
            if p == 1 {
                0.0
            } else {
                g
            }
        }
    };
    let families = [
        ("cpu", raw.cpu.as_ref()),
        ("com", raw.com.as_ref()),
        ("io_dist", raw.io_dist.as_ref()),
    ];
    for (field, f) in families {
        if let Some(problem) = f.and_then(Family::problem) {
            bad(field, problem);
        }
    }
    let network = check_network(raw, p, at, prefix, &mut found);
    if !found.is_empty() {
        return Err(found);
    }
    let family = |f: &Option<Family>| f.clone().unwrap_or(Family::Exp);
    Ok(Spmd {
        p,
        d,
        c,
        w: raw.w,
        g,
        r: raw.r,
        s_par: raw.s_par,
        s_ser: raw.s_ser,
        s0_com: raw.s0_com,
        sr_com: raw.sr_com,
        s0_io: raw.s0_io,
        sr_io: raw.sr_io,
        n_io: raw.n_io,
        io: raw.io,
        cpu: family(&raw.cpu),
        com: family(&raw.com),
        io_dist: family(&raw.io_dist),
        network,
        phases: Vec::new(),
    })
}

/// Checks the fields of the network form (`network`, `cycles`, `latency`, and what the
/// program needs of `r`, `n_io` and `SR_com`), adding problems to `found`.
fn check_network(
    raw: &RawSpmd,
    p: u32,
    at: usize,
    prefix: &str,
    found: &mut Vec<Problem>,
) -> Option<NetworkForm> {
    let mut bad = |field: &str, message: String| {
        found.push(Problem::new(Some(at), format!("{prefix}.{field}"), message));
    };
    let Some(kind) = raw.network else {
        for (field, given) in [
            ("cycles", raw.cycles.is_some()),
            ("latency", raw.latency.is_some()),
        ] {
            if given {
                bad(
                    field,
                    "belongs to the network form: give network = \"<topology>\" or leave it out"
                        .into(),
                );
            }
        }
        return None;
    };
    let mut ok = true;
    let mut bad = |field: &str, message: String| {
        ok = false;
        found.push(Problem::new(Some(at), format!("{prefix}.{field}"), message));
    };
    if matches!(kind, TopologyKind::Dragonfly | TopologyKind::Hyperx) {
        bad(
            "network",
            format!(
                "the model's network form builds a bus, full, ring, mesh, torus, tree or fat_tree, not a {}: write the program as a [program] with a [topology] of kind = \"{}\"",
                kind.name(),
                kind.name()
            ),
        );
    }
    let r = match raw.r {
        Some(r) if [1.0, 2.0, 3.0].contains(&r) => r as u32,
        Some(r) => {
            bad(
                "r",
                format!(
                    "network = ... decomposes the data into an r-dimensional grid of blocks: r \
                     must be 1, 2 or 3, got {r}"
                ),
            );
            1
        }
        None => {
            bad(
                "r",
                "network = ... needs r (1, 2 or 3), the dimensions of the block decomposition, \
                 not g"
                    .into(),
            );
            1
        }
    };
    if raw.n_io.fract() != 0.0 {
        bad(
            "n_io",
            format!(
                "network = ... runs exactly n_io computation bursts per I/O burst: it must be a \
                 whole number, got {}",
                raw.n_io
            ),
        );
    }
    if !(raw.sr_com.is_finite() && raw.sr_com > 0.0) {
        bad(
            "SR_com",
            format!(
                "network = ... sets the link bandwidth to 2^20 / SR_com bytes per time unit: \
                 SR_com must be > 0, got {}",
                raw.sr_com
            ),
        );
    }
    let cycles = raw.cycles.unwrap_or(20);
    if !(1..=MAX_CYCLES).contains(&cycles) {
        bad(
            "cycles",
            format!("must be a whole number in 1..={MAX_CYCLES}, got {cycles}"),
        );
    }
    // each cycle runs n_io computation bursts (and their messages) on each of p ranks:
    // bounded before the program is built
    if let Some(why) = too_many_bursts(cycles as f64, raw.n_io, p as f64) {
        bad("n_io", why);
    }
    let latency = raw.latency.unwrap_or(0.0);
    if !(latency.is_finite() && latency >= 0.0) {
        bad(
            "latency",
            format!("must be a finite time >= 0, got {latency}"),
        );
    }
    ok.then(|| NetworkForm {
        kind,
        dims: grid(p, r),
        cycles: cycles as u32,
        latency,
    })
}

/// Checks the phases of `raw` (the section at `at`, already checked as `section`): names
/// usable and distinct, cycles in `1..=MAX_CYCLES`, no machine-wide field, and each phase's
/// parameters (the section's with the phase's in their place) checked as a one-phase section,
/// every problem at the phase's offset under `spmd.phase[<i>].<field>`.
fn check_phases(raw: &RawSpmd, section: &Spmd, at: usize) -> Result<Vec<Phase>, Vec<Problem>> {
    let mut found = Vec::new();
    if let Some(cycles) = raw.cycles {
        found.push(Problem::new(
            Some(at),
            "spmd.cycles",
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
            found.push(Problem::new(Some(at), format!("{prefix}.{field}"), message));
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
        // each cycle runs n_io computation bursts (and their messages) on each of p ranks:
        // bounded before the program is built
        if let Some(why) = too_many_bursts(ph.cycles as f64, n_io, raw.p as f64) {
            bad(if ph.n_io.is_some() { "n_io" } else { "cycles" }, why);
        }
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
        match check_one(&merged, at, &prefix) {
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

/// The refusal of `cycles` cycles of `n_io` computation bursts (and their messages) on each of
/// `p` ranks, when they make more rank operations than a run may execute: bounded before the
/// program is built.
fn too_many_bursts(cycles: f64, n_io: f64, p: f64) -> Option<String> {
    crate::program::budget::operations_beyond_limit(
        &format!("{cycles} cycles of n_io = {n_io} computation bursts on p = {p} ranks"),
        2.0 * cycles.max(1.0) * n_io * p.max(1.0),
        "use a smaller n_io, fewer cycles or fewer ranks",
    )
}
