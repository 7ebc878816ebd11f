//! `tracelens critical-path`: the critical path of one window of a trace.

use std::path::Path;

use super::report::load_trace;
use crate::analysis::pytorch::critical_path::{self, CriticalPath, NEEDS, Span, sheets};
use crate::error::Error;
use crate::table::Table;

/// A trace's critical path and its sheets.
pub struct CriticalPathRun {
    /// The path and the graph's figures.
    pub path: CriticalPath,
    /// `critical_path_summary` and `critical_path`.
    pub sheets: Vec<Table>,
    /// The same as a JSON document.
    pub json: serde_json::Value,
}

/// The critical path of `span` in the trace at `path` (`-` for stdin).
pub fn critical_path(path: &Path, span: Span) -> Result<CriticalPathRun, Error> {
    let trace = load_trace(path, NEEDS)?;
    let cp = critical_path::analyse(&trace, span)?;
    let sheets = sheets::sheets(&trace, &cp);
    let json = sheets::json(&cp, &sheets);
    Ok(CriticalPathRun {
        path: cp,
        sheets,
        json,
    })
}
