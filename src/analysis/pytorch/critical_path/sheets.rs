//! The critical-path sheets: `critical_path_summary` (HTA's columns) and
//! `critical_path` (the path itself, one row per edge).

use super::CriticalPath;
use crate::names::{col, sheet};
use crate::table::{Column, SharedTexts, Table, Value, empty_columns};
use crate::trace::{Ident, IdentId, Trace};

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
fn ident(trace: &Trace, id: IdentId, texts: &mut SharedTexts) -> Value {
    match trace.ident(id) {
        Ident::Null => Value::Null,
        Ident::Int(v) => Value::Int(*v),
        Ident::Str(s) => texts.text(s),
    }
}

/// `critical_path`: the path's edges in order.
pub fn path(trace: &Trace, cp: &CriticalPath) -> Table {
    const NAMES: [&str; 12] = [
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
    ];
    let mut cols = empty_columns(NAMES.len(), cp.edges.len());
    // A path of tens of thousands of edges names a few hundred events:
    // each text is allocated once.
    let mut texts = SharedTexts::default();
    for (i, e) in cp.edges.iter().enumerate() {
        let row = [
            Value::Int(i as i64),
            texts.text(e.kind.as_str()),
            texts.text(e.bound_by.as_str()),
            texts.text(trace.name(e.event)),
            Value::Int(e.event.index() as i64),
            Value::Float(e.begin_us),
            Value::Float(e.end_us),
            Value::Float(e.duration_us),
            Value::Int(e.stream),
            ident(trace, e.pid, &mut texts),
            ident(trace, e.tid, &mut texts),
            Value::Bool(e.graph_replay),
        ];
        for (c, v) in cols.iter_mut().zip(row) {
            c.push(v);
        }
    }
    let columns = NAMES
        .iter()
        .zip(cols)
        .map(|(n, v)| Column::new(n, v))
        .collect();
    Table::from_columns(sheet::CRITICAL_PATH, columns)
}
