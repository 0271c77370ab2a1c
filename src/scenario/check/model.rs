//! A model section in its scenario: the model checks its own section
//! (`crate::models::<model>::check`), and its system takes the place of tables the file leaves
//! out: an `[spmd]`'s network or program tables are spliced into the raw scenario ([`spmd`]), a
//! `[pipeline]`'s operations are compiled as the scenario's program ([`pipeline`]).

use std::path::Path;

use toml::Spanned;

use super::program::compile::{self, Sources};
use super::{Checker, tables};
use crate::models::pipeline::Pipeline;
use crate::models::pipeline::raw::RawPipeline;
use crate::models::spmd::Spmd;
use crate::models::tables::Tables;
use crate::models::training::Training;
use crate::models::training::raw::RawTraining;
use crate::problem::Problem;
use crate::program::Program;
use crate::scenario::raw::RawScenario;
use crate::scenario::raw::program::{RawProgram, RawTopology};
use crate::topology::TopologyKind;

/// An `[spmd]` scenario: checks the section and puts the tables it builds
/// ([`Spmd::tables`]) in place of the `[[class]]`, `[[station]]` and `[[route]]` tables, or
/// with `network = ...` or phases in place of `[program]`, `[topology]` and `[[disk]]`; the
/// file must leave those out. `None` when there were problems (added to `ck`).
pub(super) fn spmd(ck: &mut Checker, raw: &mut RawScenario, base: &Path) -> Option<Spmd> {
    for field in [
        "class", "station", "route", "program", "pipeline", "training", "topology", "machine",
        "disk", "loggp",
    ] {
        if raw.has(field) {
            ck.add(
                Some(0),
                field,
                format!("a scenario with [spmd] builds its network from it: leave out [{field}]"),
            );
        }
    }
    // an [spmd] that could not be read has had its shape problems reported
    let section = raw.spmd.as_ref()?;
    let spmd = match crate::models::spmd::check::check(section.get_ref(), section.span().start) {
        Ok(s) if ck.found.is_empty() => s,
        Ok(_) => return None,
        Err(found) => {
            ck.found.extend(found);
            return None;
        }
    };
    let at = section.span().start;
    // a family's trace is read here, so that its problems name the [spmd] field the user
    // wrote, not a station or operation of the tables built from it
    let raw_spmd = section.get_ref();
    let mut families: Vec<(usize, String, &crate::models::spmd::Family)> = Vec::new();
    for (field, f) in [
        ("cpu", &raw_spmd.cpu),
        ("com", &raw_spmd.com),
        ("io_dist", &raw_spmd.io_dist),
    ] {
        if let Some(f) = f {
            families.push((at, format!("spmd.{field}"), f));
        }
    }
    for (i, ph) in raw_spmd.phases.iter().enumerate() {
        let r = ph.get_ref();
        for (field, f) in [("cpu", &r.cpu), ("com", &r.com), ("io_dist", &r.io_dist)] {
            if let Some(f) = f {
                families.push((ph.span().start, format!("spmd.phase[{i}].{field}"), f));
            }
        }
    }
    let mut traces_ok = true;
    for (at, path, family) in families {
        if let crate::models::spmd::Family::Empirical { .. } = family
            && let Err(e) = family.spec(1.0).build(base)
        {
            ck.add(Some(at), format!("{path}.{}", e.field), e.message);
            traces_ok = false;
        }
    }
    if !traces_ok {
        return None;
    }
    match spmd.tables() {
        Tables::Network(t) => tables::put_network(raw, &t, at),
        Tables::Program(t) => tables::put_program(raw, &t, at),
    }
    Some(spmd)
}

/// A `[pipeline]` scenario: checks the section (with the `[topology]`, if any) and compiles the
/// rank program it builds on that topology, or on the one shared link the section describes.
/// The built program's problems are said at `[pipeline]`: its text is not the user's.
pub(super) fn pipeline(
    raw: &Spanned<RawPipeline>,
    topology: Option<&Spanned<RawTopology>>,
    base: &Path,
) -> Result<(Program, Pipeline), Vec<Problem>> {
    let (pipeline, link) = crate::models::pipeline::check::check(raw, topology.is_some(), base)?;
    let generated = link.map(|link| {
        Spanned::new(
            raw.span(),
            RawTopology {
                latency: link.latency,
                ..RawTopology::of_kind(TopologyKind::Bus, link.bandwidth)
            },
        )
    });
    let topology = topology.or(generated.as_ref());
    let ops = crate::models::pipeline::build::ops(&pipeline);
    let program = Spanned::new(
        raw.span(),
        tables::raw_program(
            pipeline.ranks * pipeline.groups,
            None,
            false,
            &ops,
            raw.span().start,
        ),
    );
    let prog = compile_built("pipeline", &program, topology, base)?;
    Ok((prog, pipeline))
}

/// A `[training]` scenario: checks the section and compiles the rank program it builds on the
/// scenario's `[topology]` (two ranks a GPU). The built program's problems are said at
/// `[training]`: its text is not the user's.
pub(super) fn training(
    raw: &Spanned<RawTraining>,
    topology: Option<&Spanned<RawTopology>>,
    base: &Path,
) -> Result<(Program, Training), Vec<Problem>> {
    let training = crate::models::training::check::check(raw, base)?;
    let ops = crate::models::training::build::ops(&training);
    let program = Spanned::new(
        raw.span(),
        tables::raw_program(
            training.ranks(),
            Some(2 * training.gpus_per_node),
            false,
            &ops,
            raw.span().start,
        ),
    );
    let prog = compile_built("training", &program, topology, base)?;
    Ok((prog, training))
}

/// Compiles the program a model built on `topology` (the file's, or one the model made). The
/// built program's paths are in a text the user never wrote: its problems are said at the
/// model's `section` (`pipeline (built program) program.op[3].time`), a topology's at its own
/// fields.
fn compile_built(
    section: &str,
    program: &Spanned<RawProgram>,
    topology: Option<&Spanned<RawTopology>>,
    base: &Path,
) -> Result<Program, Vec<Problem>> {
    let sources = Sources {
        program,
        topology,
        topology_written: topology.is_some(),
        machine: None,
        disks: Vec::new(),
        base,
        endpoints: false,
    };
    compile::compile(&sources)
        .map(|c| c.program)
        .map_err(|found| {
            found
                .into_iter()
                .map(|p| {
                    let path = if p.path.starts_with("topology") {
                        p.path
                    } else {
                        format!("{section} (built program) {}", p.path)
                    };
                    Problem::new(p.at, path, p.message)
                })
                .collect()
        })
}
