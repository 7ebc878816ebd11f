//! `diff_stats`: every GPU event under a cpu_op, attributed to
//! the lowest common ancestor (LCA) of the merged tree that explains it,
//! and `diff_stats_unique_args_summary`.

use std::cmp::Ordering;

use rustc_hash::{FxHashMap, FxHashSet};

use super::names::strip_counts;
use super::side::{Side, Which};
use super::{MergedKind, MergedTree};
use crate::analysis::common::arg_cells::arg_value;
use crate::analysis::common::intervals::events_busy_time;
use crate::names::diff::{col, sheet};
use crate::numeric::np_round;
use crate::table::agg::Agg;
use crate::table::typing::dataframe;
use crate::table::{Column, Table, Value};
use crate::trace::{ArgValue, EventId};

/// One row of `diff_stats` before it is rendered.
#[derive(Debug, Clone)]
pub struct StatRow {
    /// The GPU event.
    pub gpu: EventId,
    /// Its nearest enclosing cpu_op.
    pub op: EventId,
    /// Which trace it belongs to.
    pub which: Which,
    /// Union of the GPU time of this side under the LCA (µs, rounded to
    /// 3 decimals; an int when every time in the trace was one).
    pub busy: Value,
    /// The LCA's name (`a | b` when the sides differ); `None` at root level.
    pub lca_name: Option<String>,
    /// The LCA's merged id; `None` at root level.
    pub lca_id: Option<u32>,
}

/// Walks the merged tree and attributes every GPU event.
pub fn collect_rows(m: &MergedTree, s1: &Side, s2: &Side) -> Vec<StatRow> {
    let mut w = Walk {
        m,
        s1,
        s2,
        visited: FxHashSet::default(),
        rows: Vec::new(),
    };
    for &r in &m.roots {
        w.visit(r, None);
    }
    w.rows
}

struct Walk<'m, 'a> {
    m: &'m MergedTree,
    s1: &'m Side<'a>,
    s2: &'m Side<'a>,
    visited: FxHashSet<u32>,
    rows: Vec<StatRow>,
}

impl<'m, 'a> Walk<'m, 'a> {
    fn side(&self, w: Which) -> &'m Side<'a> {
        w.pick(self.s1, self.s2)
    }

    fn visit(&mut self, id: u32, combined_parent: Option<u32>) {
        if self.visited.contains(&id) {
            return;
        }
        let node = &self.m.nodes[id as usize];
        match node.kind {
            MergedKind::Combined => {
                let (e1, e2) = (node.uid1.expect("combined"), node.uid2.expect("combined"));
                let (g1, g2) = (self.s1.on_gpu_path(e1), self.s2.on_gpu_path(e2));
                if g1 && g2 {
                    self.lca(id, e1, e2);
                }
                if g1 || g2 {
                    for &c in &node.children {
                        self.visit(c, Some(id));
                    }
                }
            }
            MergedKind::Base | MergedKind::Variant => {
                let which = node.only_side().expect("one-sided");
                let uid = node.uid(which).expect("one-sided node has its side");
                let side = self.side(which);
                if side.on_gpu_path(uid) {
                    let gpu = side.tree.gpu_events(side.trace, uid);
                    let (name, lca_id) = match combined_parent {
                        Some(p) => {
                            let at = self.m.nodes[p as usize]
                                .uid(which)
                                .expect("combined parent");
                            (Some(strip_counts(&side.op_name(at))), Some(p))
                        }
                        None => (None, None),
                    };
                    self.emit(which, &gpu, name, lca_id);
                }
                self.visited.insert(id);
            }
        }
    }

    /// A combined node on both GPU paths: an LCA when it has one-sided
    /// children on a GPU path, or when both sides are kernels.
    fn lca(&mut self, id: u32, e1: EventId, e2: EventId) {
        let node = &self.m.nodes[id as usize];
        let mut group1 = Vec::new();
        let mut group2 = Vec::new();
        for &c in &node.children {
            let cn = &self.m.nodes[c as usize];
            if cn.kind == MergedKind::Combined {
                continue;
            }
            if cn.uid1.is_some_and(|u| self.s1.on_gpu_path(u)) {
                group1.push(c);
            }
            if cn.uid2.is_some_and(|u| self.s2.on_gpu_path(u)) {
                group2.push(c);
            }
        }
        let kernels = self.s1.is_kernel_like(e1) && self.s2.is_kernel_like(e2);
        if group1.is_empty() && group2.is_empty() && !kernels {
            return;
        }
        let n1 = strip_counts(&self.s1.op_name(e1));
        let n2 = strip_counts(&self.s2.op_name(e2));
        let name = if n1 == n2 { n1 } else { format!("{n1} | {n2}") };
        let ev1 = self.lca_events(Which::Base, &group1, e1);
        let ev2 = self.lca_events(Which::Variant, &group2, e2);
        self.emit(Which::Base, &ev1, Some(name.clone()), Some(id));
        self.emit(Which::Variant, &ev2, Some(name), Some(id));
        self.visited.insert(id);
        self.visited.extend(group1.iter().chain(&group2).copied());
    }

    /// The GPU events of one side of an LCA: those below its one-sided
    /// children (the children themselves when kernels), then its own
    /// event when it is a kernel.
    fn lca_events(&self, which: Which, group: &[u32], own: EventId) -> Vec<EventId> {
        let side = self.side(which);
        let mut out = Vec::new();
        for &c in group {
            let uid = self.m.nodes[c as usize]
                .uid(which)
                .expect("grouped by side");
            out.extend(side.tree.gpu_events(side.trace, uid));
            if side.is_kernel_like(uid) {
                out.push(uid);
            }
        }
        if side.is_kernel_like(own) {
            out.push(own);
        }
        out
    }

    fn emit(
        &mut self,
        which: Which,
        gpu: &[EventId],
        lca_name: Option<String>,
        lca_id: Option<u32>,
    ) {
        let side = self.side(which);
        let busy = busy_value(side, gpu);
        for &g in gpu {
            let Some(op) = side.enclosing_op(g) else {
                continue;
            };
            self.rows.push(StatRow {
                gpu: g,
                op,
                which,
                busy: busy.clone(),
                lca_name: lca_name.clone(),
                lca_id,
            });
        }
    }
}

/// The union length of the events' intervals: an int when every time is
/// one (Python int arithmetic), else a float rounded to 3 decimals.
fn busy_value(side: &Side, gpu: &[EventId]) -> Value {
    if gpu.is_empty() {
        return Value::Float(0.0);
    }
    let x = events_busy_time(side.trace, gpu);
    let ints = gpu.iter().all(|&g| {
        let e = side.trace.event(g);
        e.ts_is_int && e.dur_is_int
    });
    if ints {
        Value::Int(x as i64)
    } else {
        Value::Float(np_round(x, 3))
    }
}

/// An op argument cell as the reference's `_get_node_arg` gives it:
/// `""` when absent, otherwise the shared argument cell.
fn arg_cell(v: Option<&ArgValue>) -> Value {
    match v {
        None | Some(ArgValue::Null) => Value::Text(String::new().into()),
        v => arg_value(v),
    }
}

/// The `diff_stats` table of the rows (before the identical-traces rule).
pub fn stats_table(rows: &[StatRow], s1: &Side, s2: &Side) -> Table {
    let names = col::STATS;
    let mut cols: Vec<Vec<Value>> = crate::table::empty_columns(names.len(), rows.len());
    for r in rows {
        let side = r.which.pick(s1, s2);
        let e = side.trace.event(r.gpu);
        let kernel_time = if e.dur.is_nan() {
            Value::Int(0)
        } else if e.dur_is_int {
            Value::Int(e.dur as i64)
        } else {
            Value::Float(e.dur)
        };
        let args = side.trace.op_args(r.op);
        let cells = [
            Value::Text(side.trace.name(r.gpu).into()),
            Value::Text(side.op_name(r.op).into()),
            Value::Int(r.op.index() as i64),
            Value::Text(r.which.label().into()),
            arg_cell(args.dims),
            arg_cell(args.strides),
            arg_cell(args.types),
            arg_cell(args.concrete),
            kernel_time,
            r.busy.clone(),
            r.lca_name.clone().map_or(Value::Null, Value::from),
            r.lca_id.map_or(Value::Null, |i| Value::Int(i64::from(i))),
            Value::Int(r.gpu.index() as i64),
            // Without python frames every op's module stack is ["root"].
            Value::Text("root".into()),
            Value::Text("root".into()),
        ];
        for (c, v) in cols.iter_mut().zip(cells) {
            c.push(v);
        }
    }
    dataframe(
        sheet::DIFF_STATS,
        names
            .iter()
            .zip(cols)
            .map(|(n, v)| Column::new(n, v))
            .collect(),
    )
}

/// True when the baseline's rows equal the variant's, `source` aside
/// (the reference then writes the baseline's rows only).
pub fn sides_identical(stats: &Table) -> bool {
    let Some(src) = stats.column_index(col::SOURCE) else {
        return false;
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (k, v) in stats.columns[src].values.iter().enumerate() {
        if v.as_str() == Some("trace1") {
            a.push(k);
        } else {
            b.push(k);
        }
    }
    a.len() == b.len()
        && a.iter().zip(&b).all(|(&x, &y)| {
            stats
                .columns
                .iter()
                .enumerate()
                .all(|(c, col)| c == src || col.values[x] == col.values[y])
        })
}

/// `diff_stats_unique_args_summary`: rows grouped on every
/// column but the kernel time, LCA id and GPU UID; count, mean and sum of
/// kernel time; sorted by the sum (descending), ties by the text of the
/// other columns.
pub fn summary_table(stats: &Table) -> Table {
    let key_cols: Vec<&Column> = col::SUMMARY_KEYS
        .iter()
        .map(|n| stats.column(n).expect("diff_stats has every key column"))
        .collect();
    let kt = stats.column(col::KERNEL_TIME).expect("kernel_time");
    let groups = group_rows(&key_cols, stats.nrows());
    // One row per group: its key (the first member's cells), count, mean, sum.
    let last = col::SUMMARY.len() - 1;
    let mut rows: Vec<(Vec<Value>, String)> = groups
        .into_iter()
        .map(|members| {
            let first = members[0];
            let times = members.iter().map(|&r| &kt.values[r]);
            let mut row = Vec::with_capacity(col::SUMMARY.len());
            row.push(key_cols[0].values[first].clone());
            row.push(Value::Int(members.len() as i64));
            row.extend(key_cols[1..].iter().map(|c| c.values[first].clone()));
            row.push(Agg::Mean.apply(times.clone()));
            row.push(Agg::Sum.apply(times));
            // The text of every column but the sum, joined by NUL (below any
            // other character): comparing the joined texts compares the
            // columns one after the other.
            let mut text = String::new();
            for v in &row[..last] {
                text.push_str(&v.py_str());
                text.push('\0');
            }
            (row, text)
        })
        .collect();
    // By the sum, descending; ties by the text of the other columns (the
    // reference: a stable sort by text, then a stable sort by the sum).
    rows.sort_by(|(a, ta), (b, tb)| {
        let (x, y) = (a[last].to_f64(), b[last].to_f64());
        y.partial_cmp(&x)
            .unwrap_or(Ordering::Equal)
            .then_with(|| ta.cmp(tb))
    });
    let mut cols: Vec<Vec<Value>> = crate::table::empty_columns(col::SUMMARY.len(), rows.len());
    for (row, _) in rows {
        for (c, v) in cols.iter_mut().zip(row) {
            c.push(v);
        }
    }
    dataframe(
        sheet::DIFF_STATS_SUMMARY,
        col::SUMMARY
            .iter()
            .zip(cols)
            .map(|(n, v)| Column::new(n, v))
            .collect(),
    )
}

/// The rows of `n` grouped on the cells of `cols` (pandas `groupby` with
/// `dropna=False`: missing values group together), groups in first-seen
/// order, without copying a cell.
fn group_rows(cols: &[&Column], n: usize) -> Vec<Vec<usize>> {
    use std::hash::Hasher;
    let mut by_hash: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for r in 0..n {
        let mut h = rustc_hash::FxHasher::default();
        for c in cols {
            c.values[r].key_hash(&mut h);
        }
        let same = |g: &Vec<usize>| cols.iter().all(|c| c.values[g[0]].key_eq(&c.values[r]));
        let slot = by_hash.entry(h.finish()).or_default();
        match slot.iter().find(|&&g| same(&groups[g])) {
            Some(&g) => groups[g].push(r),
            None => {
                slot.push(groups.len());
                groups.push(vec![r]);
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_in_parentheses_are_removed() {
        assert_eq!(strip_counts("aten::mm(12)"), "aten::mm");
        assert_eq!(strip_counts("f(a)(3) g(45)x"), "f(a) gx");
        assert_eq!(strip_counts("()(x"), "()(x");
        assert_eq!(strip_counts("é(1)"), "é");
    }
}
