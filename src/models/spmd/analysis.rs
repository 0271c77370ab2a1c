//! The paper's methods for an `[spmd]` scenario, under the simulator's metric names: each
//! method's cycle time (`class.<c>.cycle`) with the speedup, efficiency, cost and overhead it
//! implies, Amdahl's and Gustafson's laws beside them, and the model's terms (`T1`, `h(c)`,
//! `g(p)`, `z`, `T_io`) for the arithmetic.

use super::formulas::{
    self, amdahl, bus_aio, clu_aio, com_queue, gustafson, r1, sio_draining, sio_full_population,
    t_io, z,
};
use super::{Family, Io, Spmd, derived};
use crate::analytic::{self, Center, CenterKind};
use crate::metrics::name::{Figure, Subject};
use crate::predict::{Analysis, Prediction};

/// The paper's `h(c)` for the scenario's CPU family, or `H_c` as the paper assumes where the
/// family has no closed form; with its label.
fn cpu_h(m: &Spmd) -> (f64, &'static str) {
    match formulas::h(&m.cpu, m.c) {
        Some(v) => (v, "h(c) of the CPU family"),
        None => (
            formulas::h(&Family::Exp, m.c).unwrap_or(f64::NAN),
            "h(c) = H_c, the paper's exponential assumption",
        ),
    }
}

/// Adds the spmd methods for `m` to `a`; `cycle` is the name of the cycle-time metric.
pub fn analyze(m: &Spmd, cycle: &str, a: &mut Analysis) {
    let term = |metric: &str, value: f64, method: &str| Prediction {
        metric: metric.into(),
        value,
        method: method.into(),
        exact: true,
        measured: None,
        recommended: false,
    };
    a.terms.push(term(
        "spmd.T1",
        m.t1(),
        "eq. 1: (S_par + S_ser) n_io + S0_io + SR_io",
    ));
    a.terms
        .push(term("spmd.g", m.g, "eq. 7: g(p) (0 at p = 1)"));
    let hc_exp = formulas::h(&Family::Exp, m.c).unwrap_or(f64::NAN);
    let hc_uni = formulas::h(&Family::Uniform, m.c).unwrap_or(f64::NAN);
    a.terms
        .push(term("spmd.h", hc_exp, "eq. 6: h(c) = H_c (exponential)"));
    a.terms
        .push(term("spmd.h", hc_uni, "h(c) = 2c/(c+1) (uniform)"));
    let (hc, h_label) = cpu_h(m);
    let z = z(m, hc);
    a.terms
        .push(term("spmd.z", z, &format!("eq. 15 with {h_label}")));
    a.terms.push(term("spmd.T_io", t_io(m), "eq. 14"));
    // the model is exact for the network when the queues are exponential and h(c) is exact
    let exact =
        m.com == Family::Exp && m.io_dist == Family::Exp && formulas::h(&m.cpu, m.c).is_some();
    let method =
        |name: String, value: analytic::Result<f64>, exact: bool, a: &mut Analysis| match value {
            Ok(t) => {
                a.predictions.push(Prediction {
                    metric: cycle.into(),
                    value: t,
                    method: name.clone(),
                    exact,
                    measured: None,
                    recommended: false,
                });
                for (metric, v) in derived(m, t) {
                    a.predictions.push(Prediction {
                        metric,
                        value: v,
                        method: name.clone(),
                        exact,
                        measured: None,
                        recommended: false,
                    });
                }
            }
            Err(e) => a.refusals.push(crate::predict::Refusal {
                method: name,
                reason: e.to_string(),
            }),
        };
    match m.io {
        Io::Sio => {
            let x = com_queue(m);
            let mva_r = analytic::mva(
                &[
                    Center {
                        kind: CenterKind::Delay,
                        demand: z,
                    },
                    Center {
                        kind: CenterKind::Queue,
                        demand: x,
                    },
                ],
                m.groups(),
            );
            if let Ok(sol) = mva_r {
                a.terms.push(term(
                    "spmd.R1",
                    r1(m.groups(), z, x),
                    "eq. 17, corrected index e1 + e2 = i - 1, at i = p/c",
                ));
                a.terms.push(term(
                    "spmd.R1",
                    sol.full().residence[1],
                    "exact MVA residence at the bus, population p/c (R1 must equal it)",
                ));
            }
            method(
                format!("SIO eq. 16 reading (a), full population, no join cost; {h_label}"),
                Ok(sio_full_population(m, hc)),
                false,
                a,
            );
            // R1(i) sums i terms of an exponential and a logarithm: the sum over i is
            // quadratic in p/c
            let groups = f64::from(m.groups());
            let draining = analytic::within_budget(
                groups * groups / 2.0 * (2.0 * analytic::TRANSCENDENTAL + 5.0),
                || {
                    format!(
                        "reading (b) sums R1(i) over i = 1..{}, each a sum of i terms",
                        m.groups()
                    )
                },
            )
            .map(|()| sio_draining(m, hc));
            method(
                format!("SIO eq. 16 reading (b), draining sum over i = 1..p/c; {h_label}"),
                draining,
                false,
                a,
            );
        }
        Io::BusAio => method(
            format!("BUS-AIO exact MVA, population p/c (eqs. 19-21); {h_label}"),
            bus_aio(m, hc),
            exact,
            a,
        ),
        Io::CluAio => method(
            format!("CLU-AIO exact multiclass MVA, d classes of p/(c d); {h_label}"),
            clu_aio(m, hc),
            exact,
            a,
        ),
    }
    a.terms.push(term(
        "spmd.speedup",
        amdahl(m),
        "Amdahl's law, f = 1 - S_par n_io / T1",
    ));
    a.terms.push(term(
        "spmd.speedup",
        gustafson(m),
        "Gustafson's law, f = 1 - S_par n_io / T1",
    ));
}

/// The paper's methods beside a network-form program (`network = ...`), as terms under
/// `spmd.cycle` and the speedup metrics, never compared with the simulation: the program
/// replaces the `w` submodel, so no method is exact for it; each label gives the `w` used.
pub fn closed_form_terms(m: &Spmd, a: &mut Analysis) {
    let mut closed = Analysis::default();
    analyze(m, "spmd.cycle", &mut closed);
    let note = format!(
        " [closed form at w = {}; the program replaces the w submodel: shown, not compared]",
        m.w
    );
    a.terms.extend(closed.terms);
    a.terms.extend(closed.predictions.into_iter().map(|mut p| {
        p.method.push_str(&note);
        p.exact = false;
        p
    }));
    a.refusals.extend(closed.refusals);
}

/// The paper's methods for a program built from `[spmd]` (the network form, or phases), added
/// to `a` as labelled approximations: each phase's cycle time `c` by the one-phase methods
/// ([`analyze`]), and per method the program's total `sum_k cycles_k c_k` (`program.makespan`)
/// with the speedup, efficiency, cost and overhead it implies (of the whole program, `T1` of
/// [`Spmd::t1_total`]; of one cycle for a one-phase network form, as its run reports them).
/// Each phase gives `phase.<name>.mean` (a rank's time in it), `phase.<name>.max` (its
/// duration, with the wait for the last group at its end), `spmd.<name>.cycle`,
/// `spmd.<name>.speedup`, and its terms under `spmd.<name>.<term>`. On an explicit
/// interconnect the closed form is taken at `w = 0`, the links' idle-network time the builder
/// is calibrated to (and, for one phase, also shown at the scenario's `w` as terms,
/// [`closed_form_terms`]).
/// Never exact: the program runs exactly `n_io` bursts a cycle (the paper's count is
/// geometric), starts each phase with every rank in step, and ends it at a barrier.
pub fn analyze_program(m: &Spmd, a: &mut Analysis) {
    let free = m.network.is_some();
    if free && m.phases.is_empty() {
        closed_form_terms(m, a);
    }
    let at = |x: &Spmd| {
        if free {
            Spmd {
                w: 0.0,
                ..x.clone()
            }
        } else {
            x.clone()
        }
    };
    let parts: Vec<(Option<&str>, u32, Spmd)> = if m.phases.is_empty() {
        let cycles = m.network.as_ref().map_or(1, |net| net.cycles);
        vec![(None, cycles, at(m))]
    } else {
        m.phases
            .iter()
            .map(|ph| (Some(ph.name.as_str()), ph.cycles, at(&ph.model)))
            .collect()
    };
    let note = if free {
        " [closed form at w = 0: the links' idle-network time, no contention, no wait for \
         neighbours; exactly n_io bursts a cycle: an approximation]"
    } else {
        " [per phase, cycles x the steady-state cycle; the program runs exactly n_io bursts a \
         cycle, starts each phase in step and ends it at a barrier: an approximation]"
    };
    // per method (in the order analyze gives them): its labels, the total so far and the
    // phases it solved (a total needs every phase)
    let mut totals: Vec<(Vec<String>, f64, usize)> = Vec::new();
    for (k, (name, cycles, model)) in parts.iter().enumerate() {
        let mut one = Analysis::default();
        analyze(model, "spmd.cycle", &mut one);
        if model.io == Io::Sio {
            // the program's count of bursts is fixed, not geometric
            let (hc, h_label) = cpu_h(model);
            let method = format!(
                "SIO, exactly n_io bursts a cycle: E[max over p/c groups of Erlang-n_io sums of \
                 bursts of mean z + R1(p/c, z, x)] + T_io; {h_label}"
            );
            match formulas::sio_fixed_count(model, hc) {
                Ok(t) => one.predictions.push(Prediction {
                    metric: "spmd.cycle".into(),
                    value: t,
                    method,
                    exact: false,
                    measured: None,
                    recommended: false,
                }),
                Err(e) => one.refusals.push(crate::predict::Refusal {
                    method,
                    reason: e.to_string(),
                }),
            }
        }
        if let Some(name) = name {
            a.terms.extend(one.terms.into_iter().map(|mut t| {
                t.metric = t.metric.replacen("spmd.", &format!("spmd.{name}."), 1);
                t
            }));
        }
        a.refusals.extend(one.refusals.into_iter().map(|mut r| {
            if let Some(name) = name {
                r.method = format!("phase {name}: {}", r.method);
            }
            r
        }));
        let cycle_times = one.predictions.iter().filter(|p| p.metric == "spmd.cycle");
        for (j, p) in cycle_times.enumerate() {
            let c = p.value;
            let mut push = |metric: String, value: f64| {
                a.predictions.push(Prediction {
                    metric,
                    value,
                    method: format!("{}{note}", p.method),
                    exact: false,
                    measured: None,
                    recommended: false,
                });
            };
            if let Some(name) = name {
                push(
                    Subject::Phase(name).metric(Figure::Mean),
                    f64::from(*cycles) * c,
                );
                push(
                    Subject::Phase(name).metric(Figure::Max),
                    f64::from(*cycles) * c,
                );
                push(super::phase_cycle_metric(name), c);
                push(super::phase_speedup_metric(name), model.t1() / c);
            }
            if k == 0 {
                totals.push((Vec::new(), 0.0, 0));
            }
            if let Some(total) = totals.get_mut(j) {
                if !total.0.contains(&p.method) {
                    total.0.push(p.method.clone());
                }
                total.1 += f64::from(*cycles) * c;
                total.2 += 1;
            }
        }
    }
    for (methods, total, solved) in totals {
        if solved < parts.len() {
            continue;
        }
        let method = format!("{}{note}", methods.join(" / "));
        let cycles = parts.first().map_or(1, |p| p.1);
        let laws = if m.phases.is_empty() {
            derived(m, total / f64::from(cycles))
        } else {
            super::laws(m.t1_total(), m.p, total)
        };
        let mut push = |metric: String, value: f64| {
            a.predictions.push(Prediction {
                metric,
                value,
                method: method.clone(),
                exact: false,
                measured: None,
                recommended: false,
            });
        };
        push(Subject::Program.metric(Figure::Makespan), total);
        for (metric, value) in laws {
            push(metric, value);
        }
    }
}
