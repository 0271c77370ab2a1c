//! The rank program of a training step (see the module documentation of [`super`]), as
//! scenario tables: a compute rank and a communication rank for each GPU.

use super::Training;
use crate::dist::DistSpec;
use crate::models::tables::OpTable;

/// Which ranks compute (`rank % 2 == 0`) and which communicate.
pub const COMPUTE: &str = "rank % 2 == 0";
/// The communication ranks.
pub const COMMUNICATE: &str = "rank % 2 == 1";
/// The allreduces' groups: the communication ranks are group 1.
pub const STREAMS: &str = "rank % 2";

/// The operations of the training step's rank program, for `t.ranks()` ranks.
pub fn ops(t: &Training) -> Vec<OpTable> {
    let buckets = t.buckets();
    let passes = |spec: &DistSpec, n: u32| {
        let pass = OpTable::Compute {
            when: None,
            time: spec.clone(),
        };
        if n == 1 {
            pass
        } else {
            OpTable::Repeat {
                when: None,
                times: n.to_string(),
                body: vec![pass],
            }
        }
    };
    let ready = || OpTable::Isend {
        when: None,
        to: "rank + 1".to_owned(),
        bytes: DistSpec::det(0.0),
    };
    let mut compute: Vec<OpTable> = t
        .layers
        .iter()
        .map(|l| passes(&l.forward_spec, l.count))
        .collect();
    for b in &buckets {
        compute.extend(
            b.runs
                .iter()
                .map(|&(l, n)| passes(&t.layers[l].backward_spec, n)),
        );
        if t.overlap {
            compute.push(ready());
        }
    }
    if !t.overlap {
        compute.extend(buckets.iter().map(|_| ready()));
    }
    compute.push(OpTable::Recv {
        when: None,
        from: "rank + 1".to_owned(),
        tag: None,
    });
    let mut communicate = Vec::new();
    for b in &buckets {
        communicate.push(OpTable::Recv {
            when: None,
            from: "rank - 1".to_owned(),
            tag: None,
        });
        communicate.push(OpTable::Allreduce {
            bytes: b.bytes.to_string(),
            algorithm: t.algorithm.name().to_owned(),
            segments: t.segments,
            combine_per_byte: t.combine_per_byte,
            group: Some(STREAMS.to_owned()),
        });
    }
    communicate.push(OpTable::Send {
        when: None,
        to: "rank - 1".to_owned(),
        bytes: DistSpec::det(0.0),
        tag: None,
    });
    let steps = t.steps.to_string();
    vec![
        OpTable::Repeat {
            when: Some(COMPUTE.to_owned()),
            times: steps.clone(),
            body: compute,
        },
        OpTable::Repeat {
            when: Some(COMMUNICATE.to_owned()),
            times: steps,
            body: communicate,
        },
    ]
}
