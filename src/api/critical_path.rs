//! `tracelens critical-path`: the critical path of one window of a trace.

use std::path::Path;

use super::report::load_trace;
use crate::analysis::pytorch::critical_path::{self, CriticalPath, NEEDS, Span, sheets};
use crate::error::Error;
use crate::report::Record;
use crate::table::Table;

/// A trace's critical path and its sheets.
pub struct CriticalPathRun {
    /// The path and the graph's figures.
    pub path: CriticalPath,
    /// `critical_path_summary` and `critical_path`.
    pub sheets: Vec<Table>,
}

impl CriticalPathRun {
    /// The same as one JSON-shaped record (built only when asked for: the
    /// path can have tens of thousands of rows).
    pub fn record(&self) -> Record {
        record(&self.path, &self.sheets)
    }
}

/// The critical path of `span` in the trace at `path` (`-` for stdin).
pub fn critical_path(path: &Path, span: Span) -> Result<CriticalPathRun, Error> {
    let trace = load_trace(path, NEEDS)?;
    let cp = critical_path::analyse(&trace, span)?;
    let sheets = sheets::sheets(&trace, &cp, false);
    Ok(CriticalPathRun { path: cp, sheets })
}

/// The critical path as one record: the window, the graph's size, the
/// summary and the path.
pub fn record(cp: &CriticalPath, sheets: &[Table]) -> Record {
    let map = |fields: Vec<(&str, Record)>| {
        Record::Map(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    };
    let edges = critical_path::graph::EdgeKind::ALL
        .iter()
        .zip(cp.graph_edges)
        .map(|(k, n)| (k.as_str(), Record::UInt(n as u64)))
        .collect();
    let sheet = |i: usize| sheets.get(i).map_or(Record::Null, Record::rows_of);
    map(vec![
        (
            "window",
            map(vec![
                ("label", Record::Str(cp.label.clone())),
                ("begin_us", Record::Float(cp.window.0)),
                ("end_us", Record::Float(cp.window.1)),
            ]),
        ),
        (
            "graph",
            map(vec![
                ("nodes", Record::UInt(cp.graph_nodes as u64)),
                ("edges", map(edges)),
                (
                    "kernels_without_incoming_edge",
                    Record::UInt(cp.unlinked_kernels as u64),
                ),
            ]),
        ),
        ("critical_path_summary", sheet(0)),
        ("critical_path", sheet(1)),
    ])
}
