//! The per-category roofline sheets (`GEMM`, `SDPA_fwd`, `CONV_fwd`,
//! `UnaryElementwise`, `Normalization`, `Reduce_fwd`, …): one row
//! per distinct (op, model parameters), with FLOPs, bytes, achieved rates and
//! kernel-time statistics over the instances.

use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use rayon::prelude::*;

use crate::analysis::common::kernel_stats;
use crate::analysis::common::perf_cells::{
    head_columns, param_cells, rate_cells, tail_cells, tail_columns,
};
use crate::analysis::perf_model::{self, Family, ModelClass, ModelError, table::CLASSES};
use crate::analysis::pytorch::Context;
use crate::analysis::pytorch::op_metrics::{Metrics, is_host_op};
use crate::analysis::pytorch::pseudo::OpRef;
use crate::names::{col, sheet};
use crate::pyfmt::py_repr;
use crate::table::agg::{NAN_STATS, agg_columns, nan_stats, order_desc_by};
use crate::table::group::{expand_groups, group_first_seen_values, rows_by_identity};
use crate::table::{Column, RowRef, Table, Value};
use crate::trace::{ArgValue, EventId, StrId};

/// One modelled op instance (a raw row of the reference's table).
struct RawRow {
    op: OpRef,
    metrics: Arc<Metrics>,
}

/// The cells of param column `key` over `rows` ([`param_cells`]).
fn param_column(rows: &[&RawRow], key: &str) -> Vec<Value> {
    param_cells(rows.iter().map(|r| r.metrics.eval.params.as_slice()), key)
}

/// A recorded argument as Python prints the list (`[[512], [141, 512]]`).
fn raw_arg_text(v: Option<&ArgValue>) -> Value {
    v.map_or(Value::Null, |v| Value::Text(py_repr(v, false).into()))
}

/// The columns of a roofline sheet with param columns `pcols` (and the
/// `num_kernels` key after them with `num_kernels`).
fn columns(pcols: &[&str], num_kernels: bool, has_roofline: bool) -> Vec<String> {
    let mut cols = head_columns(pcols, num_kernels);
    cols.push(col::COMPUTE_SPEC.into());
    if has_roofline {
        cols.push(col::ROOFLINE_TIME_US_FIRST.into());
        cols.push(col::ROOFLINE_BOUND_FIRST.into());
        cols.extend(agg_columns(col::PCT_ROOFLINE, &NAN_STATS));
    }
    cols.extend(
        [
            col::KERNEL_DETAILS_SUMMARIZE,
            col::TRUNC_KERNEL_DETAILS,
            col::INPUT_DIMS_FIRST,
            col::INPUT_TYPE_FIRST,
            col::INPUT_STRIDES_FIRST,
            col::CONCRETE_INPUTS_FIRST,
        ]
        .map(String::from),
    );
    cols.extend(tail_columns());
    cols
}

/// One group's cells after its key cells, and its kernel time sum.
fn group_cells(cx: &Context, g: &[&RawRow], has_roofline: bool) -> (Vec<Value>, f64) {
    let m = |f: fn(&Metrics) -> f64| -> Vec<f64> { g.iter().map(|r| f(&r.metrics)).collect() };
    let mut row = rate_cells([
        m(|x| x.gflops()),
        m(|x| x.data_moved_mb()),
        m(|x| x.flops_per_byte()),
        m(|x| x.tb_s()),
        m(|x| x.tflops_s()),
    ]);
    let (pname, plabel, tname) = cx.process_names(cx.proc_event(g[0].op));
    row.extend([pname, plabel, tname].map(Value::from));
    row.push(Value::Text(g[0].metrics.compute_spec().into()));
    if has_roofline {
        let rl = g.iter().find_map(|r| r.metrics.roofline);
        row.push(rl.map_or(Value::Null, |r| Value::Float(r.time_us)));
        row.push(rl.map_or(Value::Null, |r| Value::from(r.bound_text())));
        let pct: Vec<f64> = g
            .iter()
            .map(|r| r.metrics.roofline.map_or(f64::NAN, |x| x.pct))
            .collect();
        row.extend(nan_stats(&pct).map(Value::Float));
    }
    let lists: Vec<&[EventId]> = g.iter().map(|r| &r.metrics.kernels[..]).collect();
    let ks = kernel_stats::summarise(cx.trace, &lists);
    row.push(Value::Text(kernel_stats::summary_text(&ks).into()));
    row.push(kernel_stats::trunc_text(&ks).map_or(Value::Null, Value::from));
    row.extend(
        cx.trace
            .op_args(cx.args_event(g[0].op))
            .all()
            .map(raw_arg_text),
    );
    let (tail, sum) = tail_cells(&m(|x| x.kernel_time), cx.op_uid(g[0].op));
    row.extend(tail);
    (row, sum)
}

/// Groups raw rows by (name, params) and aggregates them into a sheet.
fn summarise(cx: &Context, name: &str, rows: &[RawRow]) -> Table {
    let num_kernels = cx.opts.inference.group_by_num_kernels;
    // A row's key is a function of its op's name, its model evaluation
    // (shared by the instances with equal inputs) and, with `num_kernels`,
    // its kernel count: the key cells are built once per distinct triple.
    let by_id = rows_by_identity(rows.iter().map(|r| {
        let kernels = if num_kernels {
            r.metrics.kernels.len()
        } else {
            0
        };
        (cx.op_name(r.op), Arc::as_ptr(&r.metrics.eval), kernels)
    }));
    let firsts: Vec<&RawRow> = by_id.iter().map(|ids| &rows[ids[0]]).collect();
    // Param columns in first-appearance order across rows.
    let mut pcols: Vec<&'static str> = Vec::new();
    for r in &firsts {
        for (k, _) in &r.metrics.eval.params {
            if !pcols.contains(k) {
                pcols.push(k);
            }
        }
    }
    // Typed over the distinct rows: the typing looks only at which kinds
    // of value a column holds, which the distinct rows show as all do.
    let mut params: Vec<Vec<Value>> = pcols.iter().map(|k| param_column(&firsts, k)).collect();
    // The subtree kernel count, a string key like the params.
    if num_kernels {
        params.push(
            firsts
                .iter()
                .map(|r| Value::Text(r.metrics.kernels.len().to_string().into()))
                .collect(),
        );
    }
    let keys = (0..firsts.len()).map(|d| {
        let mut key = vec![Value::from(cx.op_name(firsts[d].op))];
        key.extend(params.iter().map(|col| col[d].clone()));
        key
    });
    let groups = expand_groups(group_first_seen_values(keys), by_id);
    let has_roofline = rows.iter().any(|r| r.metrics.roofline.is_some());
    let (cells, sums): (Vec<Vec<Value>>, Vec<f64>) = groups
        .iter()
        .map(|(_, idx)| {
            let g: Vec<&RawRow> = idx.iter().map(|&i| &rows[i]).collect();
            group_cells(cx, &g, has_roofline)
        })
        .unzip();
    let uid = |i: usize| cx.op_uid(rows[groups[i].1[0]].op);
    let order = order_desc_by(&sums, |a, b| uid(a).cmp(&uid(b)));
    let mut s = Table::with_headers(name, columns(&pcols, num_kernels, has_roofline));
    for i in order {
        let mut row = groups[i].0.clone();
        row.extend(cells[i].iter().cloned());
        s.push_row(row);
    }
    s
}

/// Rows of the forward pass that belong on the `_bwd` sheet.
const MOVED_TO_BWD: [&str; 4] = [
    "flash_attn::_flash_attn_varlen_backward",
    "aten::convolution_backward",
    "ConvBias_Backward",
    "ConvBiasReLU_Backward",
];

/// Rows the inference script drops from a `_fwd` sheet (it writes no
/// `_bwd` sheet).
const DROPPED_FROM_FWD: [&str; 2] = [
    "flash_attn::_flash_attn_varlen_backward",
    "aten::convolution_backward",
];

/// Forward ops removed from the `_bwd` sheet.
const NOT_ON_BWD: [&str; 5] = [
    "aten::convolution",
    "aten::miopen_convolution",
    "aten::cudnn_convolution",
    "ConvBias_",
    "ConvBiasReLU_",
];

/// Modelled ops by sheet family.
pub(crate) type ByFamily = HashMap<Family, Vec<(OpRef, &'static ModelClass)>>;

/// Modelled ops by sheet family: host events with a model in UID order,
/// then the pseudo ops with one (computed once per context, see
/// [`Context::modelled_ops`]).
pub(crate) fn modelled_events(cx: &Context) -> ByFamily {
    let trace = cx.trace;
    // Model lookups are per name; names repeat a lot.
    let mut class_of: HashMap<Option<StrId>, Option<&'static ModelClass>> = HashMap::default();
    let mut out = ByFamily::default();
    for (i, e) in trace.events() {
        if !is_host_op(e.cat) {
            continue;
        }
        let class = *class_of
            .entry(e.name)
            .or_insert_with(|| perf_model::lookup(trace.name_of(e)));
        if let Some(c) = class {
            out.entry(c.family).or_default().push((OpRef::Event(i), c));
        }
    }
    for (i, p) in cx.pseudo.ops.iter().enumerate() {
        if let Some(c) = perf_model::lookup(p.name) {
            out.entry(c.family).or_default().push((OpRef::Pseudo(i), c));
        }
    }
    out
}

fn raw_rows(cx: &Context, events: &[(OpRef, &'static ModelClass)], bwd: bool) -> Vec<RawRow> {
    let tree = cx.tree;
    let mut rows = Vec::new();
    for &(op, class) in events {
        if bwd {
            let OpRef::Event(uid) = op else { continue };
            if cx.trace.name(uid) == "vllm::unified_attention_with_output"
                || !tree.bwd_events.contains_key(&uid)
            {
                continue;
            }
        }
        match cx.metrics(op, class, bwd) {
            Ok(metrics) => rows.push(RawRow { op, metrics }),
            Err(ModelError::NotImplemented) | Err(ModelError::Invalid(_)) => {}
        }
    }
    rows
}

/// Removes the rows whose name is one of `names` and returns them.
fn drop_rows(sheet: &mut Table, names: &[&str]) -> Table {
    let gone = |r: RowRef<'_>| r.get(0).as_str().is_some_and(|n| names.contains(&n));
    let idx: Vec<usize> = sheet
        .rows()
        .filter(|&r| gone(r))
        .map(|r| r.index())
        .collect();
    let removed = sheet.take_rows(&idx);
    sheet.retain_rows(|r| !gone(r));
    removed
}

/// Appends the rows of `other`, aligning columns by name (pandas concat):
/// columns only `other` has are added, filled with `Null` above. A name
/// lands in the first column of `sheet` with that name (the last of
/// `other`'s columns with that name wins); columns nothing lands in get
/// `Null`s.
fn append_rows(sheet: &mut Table, other: &Table) {
    for c in &other.columns {
        if sheet.column_index(&c.name).is_none() {
            let blank = vec![Value::Null; sheet.nrows()];
            sheet.push_column(Column::new(&c.name, blank));
        }
    }
    // Column by column: looking each name up once, not once per row.
    let mut source: Vec<Option<&Column>> = vec![None; sheet.ncols()];
    for c in &other.columns {
        if let Some(j) = sheet.column_index(&c.name) {
            source[j] = Some(c);
        }
    }
    let n = other.nrows();
    for (col, src) in sheet.columns.iter_mut().zip(source) {
        match src {
            Some(c) => col.values.extend_from_slice(&c.values),
            None => col.values.resize(col.values.len() + n, Value::Null),
        }
    }
}

/// All roofline sheets, in the reference's family order; empty sheets are left out.
pub fn sheets(cx: &Context) -> Vec<Table> {
    let mut families: Vec<Family> = Vec::new();
    for c in CLASSES {
        if !families.contains(&c.family) {
            families.push(c.family);
        }
    }
    let events = cx.modelled_ops();
    let per_family: Vec<Vec<Table>> = families
        .par_iter()
        .map(|fam| match events.get(fam) {
            Some(ev) => family_sheets(cx, fam.name(), ev),
            None => Vec::new(),
        })
        .collect();
    per_family.into_iter().flatten().collect()
}

/// The sheet (or `_fwd`/`_bwd` pair) of one family.
fn family_sheets(cx: &Context, fam: &str, events: &[(OpRef, &'static ModelClass)]) -> Vec<Table> {
    if cx.opts.inference.layout {
        return inference_family_sheets(cx, fam, events);
    }
    let mut out = Vec::new();
    if events[0].1.single_sheet() {
        let s = summarise(cx, fam, &raw_rows(cx, events, false));
        if s.nrows() > 0 {
            out.push(s);
        }
        return out;
    }
    let fwd_name = format!("{fam}{}", sheet::FWD_SUFFIX);
    let mut fwd = summarise(cx, &fwd_name, &raw_rows(cx, events, false));
    let moved = drop_rows(&mut fwd, &MOVED_TO_BWD);
    let bwd_name = format!("{fam}{}", sheet::BWD_SUFFIX);
    let mut bwd = summarise(cx, &bwd_name, &raw_rows(cx, events, true));
    if moved.nrows() > 0 {
        if bwd.nrows() == 0 {
            bwd = Table::with_headers(
                &bwd_name,
                fwd.column_names().iter().map(|c| c.to_string()).collect(),
            );
        }
        append_rows(&mut bwd, &moved);
    }
    drop_rows(&mut bwd, &NOT_ON_BWD);
    for s in [fwd, bwd] {
        if s.nrows() > 0 {
            out.push(s);
        }
    }
    out
}

/// The inference script's sheets of one family: GEMM and the elementwise
/// families as one sheet, every other family as its `_fwd` sheet alone,
/// without the backward ops the plain report moves to `_bwd`.
fn inference_family_sheets(
    cx: &Context,
    fam: &str,
    events: &[(OpRef, &'static ModelClass)],
) -> Vec<Table> {
    let single = [
        sheet::GEMM,
        sheet::UNARY_ELEMENTWISE,
        sheet::BINARY_ELEMENTWISE,
    ]
    .contains(&fam);
    let name = if single {
        fam.to_string()
    } else {
        format!("{fam}{}", sheet::FWD_SUFFIX)
    };
    let mut s = summarise(cx, &name, &raw_rows(cx, events, false));
    if !single {
        drop_rows(&mut s, &DROPPED_FROM_FWD);
    }
    if s.nrows() > 0 { vec![s] } else { Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of int columns, `cols` naming them and `rows` giving cells.
    fn table(cols: &[&str], rows: &[&[i64]]) -> Table {
        let mut t = Table::with_headers("t", cols.iter().map(|c| c.to_string()).collect());
        for r in rows {
            t.push_row(r.iter().map(|&v| Value::Int(v)).collect());
        }
        t
    }

    #[test]
    fn append_rows_aligns_columns_by_name_as_pandas_concat() {
        // `sheet` repeats "a": only its first "a" receives `other`'s; `other`
        // repeats "b": its last "b" wins; "c" is new; "d" gets nothing.
        let mut sheet = table(&["a", "b", "a", "d"], &[&[1, 2, 3, 4]]);
        let other = table(
            &["b", "c", "a", "b"],
            &[&[10, 11, 12, 13], &[20, 21, 22, 23]],
        );
        append_rows(&mut sheet, &other);
        let names: Vec<&str> = sheet.column_names();
        assert_eq!(names, ["a", "b", "a", "d", "c"]);
        let i = |v: i64| Value::Int(v);
        let n = Value::Null;
        let rows: Vec<Vec<Value>> = sheet.rows().map(|r| r.iter().cloned().collect()).collect();
        assert_eq!(
            rows,
            [
                vec![i(1), i(2), i(3), i(4), n.clone()],
                vec![i(12), i(13), n.clone(), n.clone(), i(11)],
                vec![i(22), i(23), n.clone(), n.clone(), i(21)],
            ]
        );
    }
}
