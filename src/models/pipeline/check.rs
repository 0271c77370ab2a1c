//! `[pipeline]` checked into a [`Pipeline`]: the tree's shape, the laws of its tasks, merges
//! and messages, its one shared link (or none, when the scenario gives a `[topology]`), every
//! problem reported at once under `pipeline.<field>`.

use std::path::Path;

use toml::Spanned;

use super::raw::RawPipeline;
use super::{MAX_GROUP, Pipeline, Published};
use crate::dist::DistSpec;
use crate::problem::Problem;
use crate::program::MAX_RANKS;

/// The one shared link a `[pipeline]` describes when its scenario has no `[topology]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SharedLink {
    /// Bytes per time unit.
    pub bandwidth: f64,
    /// Per-message latency, if given.
    pub latency: Option<f64>,
}

/// Checks `[pipeline]`, every problem at once under `pipeline.<field>`. `topology_given`: the
/// scenario has a `[topology]`, which then gives the links (and the section must not give a
/// bandwidth or a latency); without one, the section's `bandwidth` (and `latency`) describe
/// the one shared link, returned beside the pipeline.
pub fn check(
    raw: &Spanned<RawPipeline>,
    topology_given: bool,
    base: &Path,
) -> Result<(Pipeline, Option<SharedLink>), Vec<Problem>> {
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
    let too_many = groups.checked_mul(r.ranks).is_none_or(|n| n > MAX_RANKS);
    if groups < 1 || (ranks_ok && too_many) {
        add(
            "pipeline.groups",
            format!(
                "must be a whole number >= 1 with groups x ranks <= {}, got {groups}",
                MAX_RANKS
            ),
        );
    }
    let mut dist = |spec: &Spanned<DistSpec>, path: &str| {
        crate::models::model_dist(spec, path, "eq. 6", base, &mut found)
    };
    let task = dist(&r.task, "pipeline.task");
    let merge = match &r.merge {
        Some(m) => dist(m, "pipeline.merge"),
        None => task.clone(),
    };
    let message = dist(&r.message, "pipeline.message");
    let link = match (topology_given, r.bandwidth) {
        (true, None) => {
            if r.latency.is_some() {
                found.push(Problem::new(
                    Some(at),
                    "pipeline.latency".to_owned(),
                    "the [topology] has its own latency: leave this out".to_owned(),
                ));
            }
            None
        }
        (true, Some(_)) => {
            found.push(Problem::new(
                Some(at),
                "pipeline.bandwidth".to_owned(),
                "the [topology] has its own bandwidth: leave this out".to_owned(),
            ));
            return Err(found);
        }
        (false, None) => {
            found.push(Problem::new(
                Some(at),
                "pipeline.bandwidth".to_owned(),
                "is missing: the bytes per time unit of the shared link (or give a [topology])"
                    .to_owned(),
            ));
            return Err(found);
        }
        (false, Some(bandwidth)) => Some(SharedLink {
            bandwidth,
            latency: r.latency,
        }),
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
    Ok((pipeline, link))
}
