//! The rank program of a pipeline (see the module documentation of [`super`]), as scenario
//! tables: the operations every rank runs.

use super::Pipeline;
use crate::models::tables::OpTable;

/// The operations of the pipeline's rank program, for `p.ranks * p.groups` ranks.
pub fn ops(p: &Pipeline) -> Vec<OpTable> {
    let g = p.ranks;
    let half = g / 2;
    let local = format!("rank % {g}");
    let parent = format!("rank - {local} + {local} / 2");
    let steps = (p.steps() + 1).to_string();
    let task = |when: Option<String>| OpTable::Compute {
        when,
        time: p.task_spec.clone(),
    };
    let merge = || OpTable::Compute {
        when: None,
        time: p.merge_spec.clone(),
    };
    let send = || OpTable::Send {
        when: None,
        to: parent.clone(),
        bytes: p.message_spec.clone(),
        tag: None,
    };
    let recv = |from: String| OpTable::Recv {
        when: None,
        from,
        tag: None,
    };
    let repeat = |when: String, body: Vec<OpTable>| OpTable::Repeat {
        when: Some(when),
        times: steps.clone(),
        body,
    };
    vec![
        // step 0: the mergers' own items (folded into their first merge)
        task(Some(format!("{local} < {half}"))),
        // leaves
        repeat(format!("{local} >= {half}"), vec![task(None), send()]),
        // inner nodes of the heap-ordered tree: children 2h and 2h + 1
        repeat(
            format!("{local} >= 1 && {local} < {half}"),
            vec![
                recv(format!("rank + {local}")),
                recv(format!("rank + {local} + 1")),
                merge(),
                send(),
            ],
        ),
        // the accumulator: the tree's output into the running result
        repeat(
            format!("{local} == 0"),
            vec![recv("rank + 1".to_owned()), merge()],
        ),
    ]
}
