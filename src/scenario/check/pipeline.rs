//! `[pipeline]` checked into a [`Pipeline`], and the rank program it builds, compiled with the
//! `[topology]` (or the one shared link the section describes) by the program checker.

use toml::Spanned;

use super::program::compile::Sources;
use crate::dist::DistSpec;
use crate::models::pipeline::{MAX_GROUP, Pipeline, Published};
use crate::program::Program;
use crate::scenario::Problem;
use crate::scenario::raw::pipeline::RawPipeline;
use crate::scenario::raw::program::RawTopology;
use crate::topology::TopologyKind;

/// Checks `[pipeline]` (and the `[topology]`, if any) and builds its program.
pub fn build(
    raw: &Spanned<RawPipeline>,
    topology: Option<&Spanned<RawTopology>>,
    base: &std::path::Path,
) -> Result<(Program, Pipeline), Vec<Problem>> {
    let at = raw.span().start;
    let r = raw.get_ref();
    let mut found = Vec::new();
    let mut add =
        |path: &str, message: String| found.push(Problem::new(Some(at), path.to_owned(), message));
    let ranks_ok = (2..=MAX_GROUP).contains(&r.ranks) && (r.ranks as u64).is_power_of_two();
    if !ranks_ok {
        add(
            "pipeline.ranks",
            format!(
                "must be a power of two from 2 to {MAX_GROUP} (the leaves of a binary tree), got {}",
                r.ranks
            ),
        );
    }
    if ranks_ok && (r.items < r.ranks || (r.items - r.ranks) % (r.ranks / 2) != 0) {
        add(
            "pipeline.items",
            format!(
                "must be at least P = {p} with N - P a multiple of P/2 = {h} (whole steps of P/2 items), got {}",
                r.items,
                p = r.ranks,
                h = r.ranks / 2
            ),
        );
    }
    // each group's ranks run about two operations per item (a task and a send), each group
    // the same: bounded before the program is built
    let groups = r.groups.unwrap_or(1).max(1) as f64;
    let what = format!("{} items in each of {groups} groups", r.items);
    if let Some(why) = crate::program::budget::operations_beyond_limit(
        &what,
        2.0 * r.items as f64 * groups,
        "use fewer items or groups",
    ) {
        add("pipeline.items", why);
    }
    if let Some(b) = r.bandwidth
        && !(b.is_finite() && b > 0.0)
    {
        add(
            "pipeline.bandwidth",
            format!("must be a finite number > 0 (bytes per time unit), got {b}"),
        );
    }
    if let Some(t) = r.latency
        && !(t.is_finite() && t >= 0.0)
    {
        add(
            "pipeline.latency",
            format!("must be a finite time >= 0, got {t}"),
        );
    }
    for (i, pb) in r.published.iter().enumerate() {
        if !(pb.makespan.is_finite() && pb.makespan > 0.0) {
            add(
                &format!("pipeline.published[{i}].makespan"),
                format!("must be a finite time > 0, got {}", pb.makespan),
            );
        }
    }
    let groups = r.groups.unwrap_or(1);
    let too_many = groups
        .checked_mul(r.ranks)
        .is_none_or(|n| n > super::program::compile::MAX_RANKS);
    if groups < 1 || (ranks_ok && too_many) {
        add(
            "pipeline.groups",
            format!(
                "must be a whole number >= 1 with groups x ranks <= {}, got {groups}",
                super::program::compile::MAX_RANKS
            ),
        );
    }
    let mut dist = |spec: &Spanned<DistSpec>, path: &str| match spec.get_ref().build(base) {
        Ok(d) if d.is_replay() => {
            found.push(Problem::new(
                Some(spec.span().start),
                path.to_owned(),
                "a trace has no fixed mean for eq. 6: use a distribution".to_owned(),
            ));
            None
        }
        Ok(d) => Some(d),
        Err(e) => {
            found.push(Problem::new(
                Some(spec.span().start),
                format!("{path}.{}", e.field),
                e.message,
            ));
            None
        }
    };
    let task = dist(&r.task, "pipeline.task");
    let merge = match &r.merge {
        Some(m) => dist(m, "pipeline.merge"),
        None => task.clone(),
    };
    let message = dist(&r.message, "pipeline.message");
    let generated;
    let topology = match (topology, r.bandwidth) {
        (Some(t), None) => {
            if r.latency.is_some() {
                found.push(Problem::new(
                    Some(at),
                    "pipeline.latency".to_owned(),
                    "the [topology] has its own latency: leave this out".to_owned(),
                ));
            }
            t
        }
        (Some(_), Some(_)) => {
            found.push(Problem::new(
                Some(at),
                "pipeline.bandwidth".to_owned(),
                "the [topology] has its own bandwidth: leave this out".to_owned(),
            ));
            return Err(found);
        }
        (None, bandwidth) => {
            let Some(bandwidth) = bandwidth else {
                found.push(Problem::new(
                    Some(at),
                    "pipeline.bandwidth".to_owned(),
                    "is missing: the bytes per time unit of the shared link (or give a [topology])"
                        .to_owned(),
                ));
                return Err(found);
            };
            generated = Spanned::new(
                raw.span(),
                RawTopology {
                    kind: TopologyKind::Bus,
                    dims: None,
                    arity: None,
                    bandwidth,
                    latency: r.latency,
                    startup: None,
                    switching: None,
                    sharing: None,
                },
            );
            &generated
        }
    };
    let (Some(task), Some(merge), Some(message)) = (task, merge, message) else {
        return Err(found);
    };
    if !found.is_empty() {
        return Err(found);
    }
    let pipeline = Pipeline {
        ranks: r.ranks as u32,
        items: r.items as u64,
        groups: groups as u32,
        task,
        merge,
        message,
        task_spec: r.task.get_ref().clone(),
        merge_spec: r.merge.as_ref().unwrap_or(&r.task).get_ref().clone(),
        message_spec: r.message.get_ref().clone(),
        published: r
            .published
            .iter()
            .map(|pb| Published {
                source: pb.source.clone(),
                makespan: pb.makespan,
            })
            .collect(),
    };
    let ops = crate::models::pipeline::build::ops(&pipeline);
    let program = Spanned::new(
        raw.span(),
        super::tables::raw_program(
            pipeline.ranks * pipeline.groups,
            false,
            &ops,
            raw.span().start,
        ),
    );
    let sources = Sources {
        program: &program,
        topology: Some(topology),
        topology_written: true,
        machine: None,
        disks: Vec::new(),
        base,
        endpoints: false,
    };
    // the built program's paths are in a text the user never wrote: say so, at [pipeline]
    let prog = super::program::compile::compile(&sources).map_err(|found| {
        found
            .into_iter()
            .map(|p| {
                Problem::new(
                    p.at,
                    format!("pipeline (built program) {}", p.path),
                    p.message,
                )
            })
            .collect::<Vec<_>>()
    })?;
    Ok((prog, pipeline))
}
