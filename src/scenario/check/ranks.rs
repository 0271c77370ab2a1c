//! A scenario of ranks: a `[program]` (with `[topology]`, `[machine]` and `[[disk]]`) or a
//! `[pipeline]` that builds one, and which form it runs in. A GOAL file is a schedule; a
//! program compiled by the program check (`program`) runs as a rank program, or as a schedule
//! when it is on `[loggp]` endpoints or written as a graph (labels, `requires`): the schedule
//! check (`schedule`) then checks that it fits a dependency graph and lowers it.

use std::path::Path;

use super::program::compile::{Compiled, Sources, compile};
use super::{Built, Checker, model, schedule};
use crate::models::Model;
use crate::models::spmd::Spmd;
use crate::problem::Problem;
use crate::program::Program;
use crate::scenario::raw::RawScenario;
use crate::scenario::{RunConfig, ValidateConfig, Workload};

/// A program scenario: a `[program]` (with `[topology]` and `[[disk]]`), a `[pipeline]` (with
/// an optional `[topology]`) or a `[training]` step (with its `[topology]`), and no network
/// sections.
pub(super) fn build(
    mut ck: Checker,
    raw: RawScenario,
    base: &Path,
    run: RunConfig,
    validate: ValidateConfig,
    spmd: Option<Spmd>,
) -> Result<Built, Vec<Problem>> {
    let at = [
        raw.program.as_ref().map(|p| p.span().start),
        raw.pipeline.as_ref().map(|p| p.span().start),
        raw.training.as_ref().map(|p| p.span().start),
    ]
    .into_iter()
    .flatten()
    .next()
    .unwrap_or(0);
    for (field, n) in [
        ("class", raw.classes.len()),
        ("station", raw.stations.len()),
        ("route", raw.routes.len()),
    ] {
        if n > 0 {
            ck.add(
                Some(at),
                field,
                format!(
                    "a scenario with a [program] or [pipeline] builds its stations from it: leave out [[{field}]]"
                ),
            );
        }
    }
    let mut model = spmd.map(|m| Model::Spmd(Box::new(m)));
    if raw.loggp.is_some() && !raw.has("program") {
        ck.add(
            raw.loggp.as_ref().map(|l| l.span().start),
            "loggp",
            "[loggp] gives the endpoints of a [program]; a [pipeline] or a [training] step builds its own",
        );
    }
    if let Some(program) = raw.program.as_ref().filter(|p| p.get_ref().goal.is_some()) {
        let written = raw.has("loggp") || raw.has("topology");
        for (field, given, why) in [
            (
                "machine",
                raw.has("machine"),
                "a machine profile prices the primitives of a rank program; a GOAL schedule runs on [loggp] endpoints and/or the links of a [topology]: leave out [machine]",
            ),
            (
                "disk",
                raw.has("disk"),
                "a GOAL schedule has no io operations: leave out [[disk]]",
            ),
        ] {
            if given {
                ck.add(Some(at), field, why);
            }
        }
        let sched = schedule::goal(
            program,
            raw.loggp.as_ref(),
            raw.topology.as_ref(),
            written,
            base,
            raw.goal_path.as_deref(),
        );
        return match sched {
            Ok(s) if ck.found.is_empty() && raw.shape_problems == 0 => {
                let workload = Workload::Schedule(Box::new(s));
                super::finish(ck, &raw, run, validate, workload, model)
            }
            Ok(_) => Err(ck.found),
            Err(found) => {
                ck.found.extend(found);
                ck.found.sort_by_key(|p| p.at);
                Err(ck.found)
            }
        };
    }
    let built = match (&raw.program, &raw.pipeline, &raw.training) {
        (Some(program), None, None) => {
            let disks: Vec<_> = raw
                .disks
                .iter()
                .filter_map(|e| e.value.as_ref().map(|d| (e.at(), d)))
                .collect();
            compile(&Sources {
                program,
                topology: raw.topology.as_ref(),
                topology_written: raw.has("topology") || raw.has("machine"),
                machine: raw.machine.as_ref(),
                disks,
                base,
                endpoints: raw.loggp.is_some(),
            })
        }
        (None, Some(pipeline), None) => built_by_model(
            &mut ck,
            &mut model,
            (at, "a [pipeline]", !raw.disks.is_empty()),
            model::pipeline(pipeline, raw.topology.as_ref(), base)
                .map(|(program, p)| (program, Model::Pipeline(Box::new(p)))),
        ),
        (None, None, Some(training)) => built_by_model(
            &mut ck,
            &mut model,
            (at, "a [training] step", !raw.disks.is_empty()),
            model::training(training, raw.topology.as_ref(), base)
                .map(|(program, t)| (program, Model::Training(Box::new(t)))),
        ),
        // a [program], [pipeline] or [training] that could not be read has had its shape
        // problems reported
        (None, None, None) => return Err(ck.found),
        _ => {
            let second = if raw.pipeline.is_some() && raw.program.is_some() {
                "pipeline"
            } else {
                "training"
            };
            ck.add(
                Some(at),
                second,
                "a scenario has one of [program], [pipeline] or [training] (which build their own programs), not two",
            );
            return Err(ck.found);
        }
    };
    match built {
        Ok(compiled) if ck.found.is_empty() && raw.shape_problems == 0 => {
            if raw.loggp.is_some() || compiled.program.marks.is_some() {
                let lowered = schedule::fits(&compiled, at).and_then(|()| {
                    schedule::lowered(compiled.program, raw.loggp.as_ref(), raw.topology.as_ref())
                });
                return match lowered {
                    Ok(s) => {
                        let workload = Workload::Schedule(Box::new(s));
                        super::finish(ck, &raw, run, validate, workload, model)
                    }
                    Err(found) => {
                        ck.found.extend(found);
                        Err(ck.found)
                    }
                };
            }
            let workload = Workload::Program(Box::new(compiled.program));
            super::finish(ck, &raw, run, validate, workload, model)
        }
        Ok(_) => Err(ck.found),
        Err(found) => {
            // a program built from [spmd] has offsets in a text the user never wrote: point
            // at the [spmd] section instead
            let spmd_at = matches!(model, Some(Model::Spmd(_)))
                .then(|| raw.spmd.as_ref().map(|s| s.span().start));
            ck.found.extend(found.into_iter().map(|p| match spmd_at {
                Some(spmd_at) => Problem::new(
                    spmd_at,
                    format!("spmd (built program) {}", p.path),
                    p.message,
                ),
                None => p,
            }));
            ck.found.sort_by_key(|p| p.at);
            Err(ck.found)
        }
    }
}

/// The program a model section built, with the model kept in `model`: `(at, what, disks)` say
/// where the section is, what it is, and whether the file gives disks (a model has none). No
/// operation of a built program is refused by its offset (the user never wrote its text).
fn built_by_model(
    ck: &mut Checker,
    model: &mut Option<Model>,
    (at, what, disks): (usize, &str, bool),
    built: Result<(Program, Model), Vec<Problem>>,
) -> Result<Compiled, Vec<Problem>> {
    if disks {
        ck.add(
            Some(at),
            "disk",
            format!("{what} has no disks: leave out [[disk]]"),
        );
    }
    built.map(|(program, m)| {
        *model = Some(m);
        Compiled {
            program,
            offsets: Vec::new(),
        }
    })
}
