//! `[[path]]` elements: named lists of stations whose responses are summed into one metric.

use std::collections::HashMap;

use super::{Checker, lookup, names};
use crate::network::{Network, Path, StationId, StationKind};
use crate::scenario::raw::Element;
use crate::scenario::raw::RawPath;

/// The paths of the scenario, each station resolved; a station that reports no response
/// (source, sink, join) or a path with no stations is a problem.
pub(super) fn paths(
    ck: &mut Checker,
    raw: &[Element<RawPath>],
    stations: &HashMap<String, u32>,
    net: &Network,
) -> Vec<Path> {
    names(ck, raw, "path");
    let mut out = Vec::new();
    for (i, e) in raw.iter().enumerate() {
        let Some(p) = &e.value else { continue };
        let at = e.field_at("stations");
        if p.stations.is_empty() {
            ck.add(Some(at), format!("path[{i}].stations"), "names no station");
            continue;
        }
        let mut ids = Vec::with_capacity(p.stations.len());
        for (k, name) in p.stations.iter().enumerate() {
            let field = format!("path[{i}].stations[{k}]");
            let Some(id) = lookup(ck, stations, name, at, &field, "station", StationId) else {
                continue;
            };
            let Some(st) = net.stations.get(id.index()) else {
                continue;
            };
            if matches!(
                st.kind,
                StationKind::Source { .. } | StationKind::Sink | StationKind::Join { .. }
            ) {
                ck.add(
                    Some(at),
                    field,
                    format!(
                        "station {name:?} is a {}, which has no response to sum",
                        st.kind.label()
                    ),
                );
                continue;
            }
            ids.push(id);
        }
        if ids.len() == p.stations.len() {
            out.push(Path {
                name: p.name.clone(),
                stations: ids,
            });
        }
    }
    out
}
