//! The critical-path sheets: `critical_path_summary` (HTA's columns) and
//! `critical_path` (the path itself, one row per edge).

use super::CriticalPath;
use crate::names::{col, sheet};
use crate::table::{Table, Value};
use crate::trace::{Ident, Trace};

/// Both sheets of `cp`.
pub fn sheets(trace: &Trace, cp: &CriticalPath) -> Vec<Table> {
    vec![summary(cp), path(trace, cp)]
}

/// `critical_path_summary`: per category, the µs on the path and its
/// share of the path's time.
pub fn summary(cp: &CriticalPath) -> Table {
    let mut out = Table::new(
        sheet::CRITICAL_PATH_SUMMARY,
        &[
            col::BOUND_BY,
            col::CP_DURATION_US,
            col::PCT_OF_PATH_DURATION,
        ],
    );
    for (b, us, pct) in cp.summary() {
        out.push_row(vec![
            Value::from(b.as_str()),
            Value::Float(us),
            Value::Float(pct),
        ]);
    }
    out
}

/// An id as a cell.
fn ident(trace: &Trace, id: crate::trace::IdentId) -> Value {
    match trace.ident(id) {
        Ident::Null => Value::Null,
        Ident::Int(v) => Value::Int(*v),
        Ident::Str(s) => Value::from(&**s),
    }
}

/// `critical_path`: the path's edges in order.
pub fn path(trace: &Trace, cp: &CriticalPath) -> Table {
    let mut out = Table::new(
        sheet::CRITICAL_PATH,
        &[
            col::CP_POSITION,
            col::CP_EDGE_TYPE,
            col::BOUND_BY,
            col::CP_EVENT,
            col::UID,
            col::CP_BEGIN_US,
            col::CP_END_US,
            col::CP_DURATION_US,
            col::STREAM,
            col::PID,
            col::TID,
            col::CP_GRAPH_REPLAY,
        ],
    );
    for (i, e) in cp.edges.iter().enumerate() {
        out.push_row(vec![
            Value::Int(i as i64),
            Value::from(e.kind.as_str()),
            Value::from(e.bound_by.as_str()),
            Value::from(trace.name(e.event)),
            Value::Int(e.event.index() as i64),
            Value::Float(e.begin_us),
            Value::Float(e.end_us),
            Value::Float(e.duration_us),
            Value::Int(e.stream),
            ident(trace, e.pid),
            ident(trace, e.tid),
            Value::Bool(e.graph_replay),
        ]);
    }
    out
}
