//! The analytic model of a built pipeline: eq. 6 with each `T_comm`, the message delay by
//! M/M/1 and Pollaczek-Khinchine, and the published figures.

use super::Pipeline;
use crate::analytic::mg1;
use crate::metrics::name::{Figure, Subject};
use crate::predict::{Prediction, Refusal};
use crate::program::{Program, Switching};
use crate::topology::Shape;

/// The analytic model of a built pipeline: eq. 6 with each `T_comm`, the message delay by M/M/1
/// and Pollaczek-Khinchine, and the published figures; predictions of `program.makespan` and
/// `messages.delay`.
pub fn predictions(prog: &Program, p: &Pipeline) -> (Vec<Prediction>, Vec<Refusal>) {
    let net = &prog.interconnect;
    let mut out = Vec::new();
    let mut refused = Vec::new();
    let transmit = p.message.mean() / net.bandwidth;
    // one hop on the shared link; on another topology the route between a child and its parent
    // (the longest route's hops, and what global links of a latency of their own add)
    let (hops, extra) = (0..prog.ranks)
        .filter(|r| r % p.ranks != 0)
        .map(|r| {
            let local = r % p.ranks;
            let parent = r - local + local / 2;
            let route = net.topology.route(r, parent);
            let extra: f64 = route
                .iter()
                .map(|h| net.hop_latency(h.link) - net.latency)
                .sum();
            (route.len() as f64, extra)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)))
        .unwrap_or((1.0, 0.0));
    let tau = net.startup
        + extra
        + match net.switching {
            Switching::StoreAndForward => hops * (net.latency + transmit) - transmit,
            Switching::CutThrough => hops * net.latency,
        };
    let idle = transmit + tau;
    let lg = p.depth();
    let n = p.steps();
    let mut put = |metric: &str, value: f64, method: String, breaks: Vec<String>| {
        let exact = breaks.is_empty();
        let method = if exact {
            method
        } else {
            format!("{method}; approximation: {}", breaks.join("; "))
        };
        out.push(Prediction {
            metric: metric.to_owned(),
            value,
            method,
            exact,
            measured: None,
            recommended: false,
        });
    };
    let eq6 = format!(
        "eq. 6, n = (N-P)/(P/2) = {n} steps, lg P = {lg}: (n+1) T_comp + n T_comm + lg P (T_merge + T_comm)"
    );
    let no_drain =
        format!("eq. 6 without drain (as the report's tables), n = {n}: (n+1) T_comp + n T_comm");
    // 1. contention-free
    let mut breaks = Vec::new();
    for (what, d) in [
        ("task times", &p.task),
        ("merge times", &p.merge),
        ("message lengths", &p.message),
    ] {
        if d.scv() > 0.0 {
            breaks.push(format!(
                "{what} are random (eq. 6 uses their mean; each merge waits for its slower child)"
            ));
        }
    }
    if p.merge.mean() > p.task.mean() {
        breaks.push("T_merge > T_comp: the merges, not the tasks, set the pace".to_owned());
    }
    // a link per pair of ranks: each link carries one sender's messages, one at a time
    let contention: Vec<String> = (net.topology.shape() != &Shape::Full)
        .then(|| {
            format!(
                "messages queue on the shared links of a {} (up to {} leaves send at once)",
                net.topology.shape(),
                p.ranks / 2 * p.groups
            )
        })
        .into_iter()
        .collect();
    breaks.extend(contention.iter().cloned());
    put(
        &Subject::Program.metric(Figure::Makespan),
        p.eq6(idle, true),
        format!("{eq6}; T_comm = idle-network message time {idle:.6e}"),
        breaks,
    );
    put(
        &Subject::Messages.metric(Figure::Delay),
        idle,
        "idle-network message time E[L]/C + τ".to_owned(),
        contention,
    );
    // 2. the report's T_comm: one channel, λ = P / T_comp
    let lambda = f64::from(p.ranks) / p.task.mean();
    let report = "one channel, λ = P / T_comp (the report's rate, one group)";
    for (name, scv, assumes) in [
        (
            "M/M/1 (L/C)/(1-ρ)",
            1.0,
            "Poisson messages with exponential lengths",
        ),
        (
            "M/D/1 L/C + ρ (L/C) / (2(1-ρ)), the report's \"M/G/1\"",
            0.0,
            "Poisson messages of one fixed length",
        ),
    ] {
        match mg1(lambda, transmit, scv) {
            Ok(m) => {
                let t = m.mean_response + tau;
                let rho = lambda * transmit;
                let why = vec![format!(
                    "T_comm assumes {assumes} on {report}; the program's messages come in steps"
                )];
                let detail = format!(
                    "T_comm {name} = {t:.6e} with L/C = {transmit:.6e}, λ = {lambda:.6}, ρ = {rho:.6}"
                );
                put(
                    &Subject::Program.metric(Figure::Makespan),
                    p.eq6(t, true),
                    format!("{eq6}; {detail}"),
                    why.clone(),
                );
                put(
                    &Subject::Program.metric(Figure::Makespan),
                    p.eq6(t, false),
                    format!("{no_drain}; {detail}"),
                    why,
                );
            }
            Err(e) => refused.push(Refusal {
                method: format!("eq. 6 with {name}"),
                reason: e.to_string(),
            }),
        }
    }
    // 3. Pollaczek-Khinchine at the rate the program offers its shared link
    if net.topology.shape() == &Shape::Bus {
        let per_step = f64::from(p.groups * (p.ranks - 1));
        let scv = p.message.scv();
        let pace = p.task.mean().max(p.merge.mean());
        let mut t = idle;
        let mut solved = None;
        for _ in 0..200 {
            match mg1(per_step / (pace + t), transmit, scv) {
                Ok(m) => {
                    let next = m.mean_response + tau;
                    let done = (next - t).abs() <= 1e-12 * next;
                    t = next;
                    if done {
                        solved = Some(t);
                        break;
                    }
                }
                Err(e) => {
                    refused.push(Refusal {
                        method: "Pollaczek-Khinchine T_comm".to_owned(),
                        reason: e.to_string(),
                    });
                    break;
                }
            }
        }
        if let Some(t) = solved {
            let lambda = per_step / (pace + t);
            let detail = format!(
                "T_comm Pollaczek-Khinchine E[S](1 + ρ(1+cs²)/(2(1-ρ))) = {t:.6e} with E[S] = {transmit:.6e}, cs² = {scv}, λ = G(P-1)/(max(T_comp, T_merge) + T_comm) = {lambda:.6}, ρ = {:.6}",
                lambda * transmit
            );
            let why = vec![
                "T_comm assumes Poisson messages; the program's come in steps from blocked senders"
                    .to_owned(),
            ];
            put(
                &Subject::Program.metric(Figure::Makespan),
                p.eq6(t, true),
                format!("{eq6}; {detail}"),
                why.clone(),
            );
            put(
                &Subject::Messages.metric(Figure::Delay),
                t,
                format!(
                    "Pollaczek-Khinchine mean delay on the shared link, λ = {lambda:.6}, cs² = {scv}"
                ),
                why,
            );
        }
    } else {
        refused.push(Refusal {
            method: "Pollaczek-Khinchine T_comm at the program's rate".to_owned(),
            reason: format!(
                "it models one shared channel; a {} has many links",
                net.topology.shape()
            ),
        });
    }
    for pb in &p.published {
        put(
            &Subject::Program.metric(Figure::Makespan),
            pb.makespan,
            format!("{} (as printed)", pb.source),
            vec!["a printed figure, not computed here".to_owned()],
        );
    }
    (out, refused)
}
