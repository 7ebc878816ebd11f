//! The critical-path sheets: `critical_path_summary` (HTA's columns) and
//! `critical_path` (the path itself, one row per edge).

use std::ops::Range;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::graph::EdgeKind;
use super::{BoundBy, CriticalPath, kind_index};
use crate::names::{col, sheet};
use crate::table::{RowSource, SharedTexts, Table, Value};
use crate::trace::{Ident, IdentId, StrId, Trace};

/// Both sheets of `cp`; `deferred` as for [`path`].
pub fn sheets(trace: &Trace, cp: &CriticalPath, deferred: bool) -> Vec<Table> {
    vec![summary(cp), path(trace, cp, deferred)]
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

/// The columns of `critical_path`.
const PATH_COLUMNS: [&str; 12] = [
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

/// `critical_path`: the path's edges in order. With `deferred` its rows
/// are computed as they are written (the sheet has a row per edge, often
/// more than every other sheet together); else they are held.
pub fn path(trace: &Trace, cp: &CriticalPath, deferred: bool) -> Table {
    let rows = Arc::new(PathRows::of(trace, cp));
    let mut table = Table::deferred(sheet::CRITICAL_PATH, &PATH_COLUMNS, rows);
    if !deferred {
        table.materialize();
    }
    table
}

/// The rows of `critical_path`: per edge its figures and the positions of
/// its texts in `cells`, so that a row costs a few words until written.
struct PathRows {
    /// Every distinct text or id cell of the path.
    cells: Vec<Value>,
    /// One per edge, in path order.
    edges: Vec<PathRow>,
}

/// One edge of [`PathRows`].
struct PathRow {
    /// Cell positions of the edge type, bound-by, event name, pid, tid.
    texts: [u32; 5],
    uid: i64,
    begin_us: f64,
    end_us: f64,
    duration_us: f64,
    stream: i64,
    graph_replay: bool,
}

impl PathRows {
    fn of(trace: &Trace, cp: &CriticalPath) -> PathRows {
        // A path of tens of thousands of edges names a few hundred events
        // and threads: each cell is made once.
        let mut texts = SharedTexts::default();
        let mut cells: Vec<Value> = EdgeKind::ALL.map(|k| texts.text(k.as_str())).into();
        let bounds = cells.len();
        cells.extend(BoundBy::ALL.map(|b| texts.text(b.as_str())));
        let mut names: FxHashMap<Option<StrId>, u32> = FxHashMap::default();
        let mut idents: FxHashMap<IdentId, u32> = FxHashMap::default();
        let mut ident_cell = |id: IdentId, cells: &mut Vec<Value>, texts: &mut SharedTexts| {
            *idents.entry(id).or_insert_with(|| {
                cells.push(ident(trace, id, texts));
                cells.len() as u32 - 1
            })
        };
        let edges = cp
            .edges
            .iter()
            .map(|e| {
                let name = *names.entry(trace.event(e.event).name).or_insert_with(|| {
                    cells.push(texts.text(trace.name(e.event)));
                    cells.len() as u32 - 1
                });
                let pid = ident_cell(e.pid, &mut cells, &mut texts);
                let tid = ident_cell(e.tid, &mut cells, &mut texts);
                PathRow {
                    texts: [
                        kind_index(e.kind) as u32,
                        (bounds + e.bound_by.index()) as u32,
                        name,
                        pid,
                        tid,
                    ],
                    uid: e.event.index() as i64,
                    begin_us: e.begin_us,
                    end_us: e.end_us,
                    duration_us: e.duration_us,
                    stream: e.stream,
                    graph_replay: e.graph_replay,
                }
            })
            .collect();
        PathRows { cells, edges }
    }
}

impl RowSource for PathRows {
    fn len(&self) -> usize {
        self.edges.len()
    }

    fn rows(&self, rows: Range<usize>, each: &mut dyn FnMut(&mut [Value])) {
        let start = rows.start;
        for (i, e) in self.edges[rows].iter().enumerate() {
            let [kind, bound, name, pid, tid] = e.texts.map(|k| self.cells[k as usize].clone());
            each(&mut [
                Value::Int((start + i) as i64),
                kind,
                bound,
                name,
                Value::Int(e.uid),
                Value::Float(e.begin_us),
                Value::Float(e.end_us),
                Value::Float(e.duration_us),
                Value::Int(e.stream),
                pid,
                tid,
                Value::Bool(e.graph_replay),
            ]);
        }
    }
}
