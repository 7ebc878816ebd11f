//! `tracelens critical-path`: the critical path of one window of a trace.

use std::path::Path;

use super::report::load_trace;
use crate::analysis::pytorch::critical_path::{self, CriticalPath, NEEDS, Span, sheets};
use crate::error::Error;
use crate::table::{Table, Value};

/// A trace's critical path and its sheets.
pub struct CriticalPathRun {
    /// The path and the graph's figures.
    pub path: CriticalPath,
    /// `critical_path_summary` and `critical_path`.
    pub sheets: Vec<Table>,
}

impl CriticalPathRun {
    /// The same as a JSON document (built only when asked for: the path
    /// can have tens of thousands of rows).
    pub fn json(&self) -> serde_json::Value {
        json(&self.path, &self.sheets)
    }
}

/// The critical path of `span` in the trace at `path` (`-` for stdin).
pub fn critical_path(path: &Path, span: Span) -> Result<CriticalPathRun, Error> {
    let trace = load_trace(path, NEEDS)?;
    let cp = critical_path::analyse(&trace, span)?;
    let sheets = sheets::sheets(&trace, &cp);
    Ok(CriticalPathRun { path: cp, sheets })
}

/// A cell as JSON (non-finite floats as null).
fn cell(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Int(i) => (*i).into(),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
        }
        Value::Bool(b) => (*b).into(),
        Value::Text(s) | Value::Py(s) => serde_json::Value::String(s.to_string()),
    }
}

/// A table as a list of objects, one per row.
fn rows(t: &Table) -> serde_json::Value {
    let names = t.column_names();
    (0..t.nrows())
        .map(|r| {
            let obj: serde_json::Map<String, serde_json::Value> = names
                .iter()
                .enumerate()
                .map(|(c, n)| (n.to_string(), cell(t.value(r, c))))
                .collect();
            serde_json::Value::Object(obj)
        })
        .collect()
}

/// The critical path as one JSON document: the window, the graph's size,
/// the summary and the path.
pub fn json(cp: &CriticalPath, sheets: &[Table]) -> serde_json::Value {
    let finite =
        |x: f64| serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, Into::into);
    let mut edges = serde_json::Map::new();
    for (k, n) in critical_path::graph::EdgeKind::ALL
        .iter()
        .zip(cp.graph_edges)
    {
        edges.insert(k.as_str().to_string(), n.into());
    }
    serde_json::json!({
        "window": {"label": cp.label, "begin_us": finite(cp.window.0), "end_us": finite(cp.window.1)},
        "graph": {"nodes": cp.graph_nodes, "edges": edges, "kernels_without_incoming_edge": cp.unlinked_kernels},
        "critical_path_summary": sheets.first().map(rows),
        "critical_path": sheets.get(1).map(rows),
    })
}
