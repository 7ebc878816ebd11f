//! Kernel sheets: `kernel_summary`, `short_kernel_histogram`
//! and `short_kernels_summary`, all built on one per-kernel table.

use std::cmp::Ordering;

use crate::analysis::common::kernel_stats::histogram;
use crate::analysis::common::op_categories::{categorize_with, launcher_category};
use crate::analysis::{common::arg_cells::ArgReprs, pytorch::Context};
use crate::names::{col, sheet};
use crate::numeric::{kahan_sum, pairwise_sum};
use crate::table::agg::desc_nan_last;
use crate::table::group::{expand_groups, group_first_seen, rows_by_identity};
use crate::table::typing::widen_ints;
use crate::table::{Table, Value};
use crate::trace::{Cat, EventId, StrId, Trace, ValueId};

/// One kernel of the per-kernel table.
#[derive(Debug, Clone, Copy)]
struct KernelRow {
    uid: EventId,
    dur: f64,
    stream: Option<i64>,
    launcher: Option<EventId>,
    cpu_op: Option<EventId>,
}

fn kernel_rows(cx: &Context) -> Vec<KernelRow> {
    let (trace, tree) = (cx.trace, cx.tree);
    trace
        .events()
        .filter(|(_, e)| e.cat == Cat::Kernel)
        .map(|(uid, e)| {
            let launcher = tree.parent(uid);
            let cpu_op = launcher.and_then(|l| {
                tree.ancestors(l)
                    .find(|&a| trace.event(a).cat == Cat::CpuOp)
            });
            KernelRow {
                uid,
                dur: e.dur,
                stream: trace.args(uid).and_then(|a| a.stream()),
                launcher,
                cpu_op,
            }
        })
        .collect()
}

/// A duration value: integer cells when every duration was a JSON integer
/// (pandas keeps the int64 dtype then).
fn dur_cell(v: f64, ints: bool) -> Value {
    if ints {
        Value::Int(v as i64)
    } else {
        Value::Float(v)
    }
}

/// The kernel sheets, in report order: `kernel_summary` (only when there are
/// kernels), `short_kernel_histogram`, `short_kernels_summary`.
pub fn sheets(cx: &Context) -> Vec<Table> {
    let rows = kernel_rows(cx);
    let all_int = rows.iter().all(|r| cx.trace.event(r.uid).dur_is_int);
    let mut out = Vec::new();
    if !rows.is_empty() {
        out.push(kernel_summary(cx, &rows, all_int));
    }
    let short: Vec<KernelRow> = rows
        .iter()
        .copied()
        .filter(|r| r.dur < cx.opts.short_kernel_threshold_us)
        .collect();
    let short_durs: Vec<f64> = short.iter().map(|r| r.dur).collect();
    out.push(histogram(&short_durs, cx.opts.histogram_bins));
    out.push(short_summary(cx, &short, all_int));
    out
}

fn total_time_us(cx: &Context) -> f64 {
    cx.timeline
        .map(|t| (t.total / 1e3) * 1e3)
        .unwrap_or(f64::NAN)
}

/// A `kernel_summary` group: category, cpu op ("" = empty), kernel name,
/// stream; the texts borrowed (a key per kernel, grouped by hashing).
type GroupKey<'t> = (&'static str, &'t str, Option<StrId>, Option<i64>);

/// The group key of a kernel row (see [`GroupKey`]). A kernel with a cpu_op
/// always has a launcher, so the reference's "fill Parent cpu_op from
/// Launcher" applies exactly when the column exists (`has_cpu`).
fn kernel_key<'t>(cx: &Context<'t>, r: &KernelRow, has_cpu: bool) -> GroupKey<'t> {
    let trace = cx.trace;
    let (cpu, cat) = if let Some(op) = r.cpu_op {
        let name = trace.name(op);
        (
            name,
            categorize_with(name, || cx.attribution.first_kernel(trace, op)),
        )
    } else if let Some(launcher) = r.launcher {
        let lname = trace.name(launcher);
        let cpu = if has_cpu { lname } else { "" };
        (cpu, launcher_category(lname))
    } else {
        ("", "")
    };
    (cat, cpu, trace.event(r.uid).name, r.stream)
}

/// Order of two text keys with empty values last (pandas' starting order
/// for ties).
fn empty_last(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.cmp(b),
    }
}

/// The `kernel_summary` columns (the cpu op column only when some kernel
/// has one).
fn summary_columns(has_cpu: bool) -> Vec<&'static str> {
    let mut cols = vec![col::PARENT_OP_CATEGORY];
    if has_cpu {
        cols.push(col::PARENT_CPU_OP);
    }
    cols.extend([
        col::KERNEL_NAME,
        col::KERNEL_STREAM,
        col::KERNEL_DURATION_US_SUM,
        col::KERNEL_DURATION_US_COUNT,
        col::KERNEL_DURATION_US_MEAN,
        col::KERNEL_DURATION_US_MIN,
        col::KERNEL_DURATION_US_MAX,
        col::PERCENT_OF_KERNELS_TIME,
        col::PERCENT_OF_TOTAL_TIME,
    ]);
    cols
}

/// The group order: total duration descending; ties by group keys
/// ascending, empty values last, missing streams last.
fn summary_order(trace: &Trace, groups: &[(GroupKey, Vec<usize>)], sums: &[f64]) -> Vec<usize> {
    let name_text = |id: Option<StrId>| id.map_or("", |s| trace.string(s));
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (&groups[a].0, &groups[b].0);
        desc_nan_last(sums[a], sums[b])
            .then_with(|| empty_last(ka.0, kb.0))
            .then_with(|| empty_last(ka.1, kb.1))
            .then_with(|| name_text(ka.2).cmp(name_text(kb.2)))
            .then_with(|| (ka.3.is_none()).cmp(&kb.3.is_none()).then(ka.3.cmp(&kb.3)))
    });
    order
}

fn kernel_summary(cx: &Context, rows: &[KernelRow], all_int: bool) -> Table {
    let trace = cx.trace;
    let has_cpu = rows.iter().any(|r| r.cpu_op.is_some());
    let groups = group_first_seen(rows.iter().map(|r| kernel_key(cx, r, has_cpu)));
    let durs: Vec<f64> = rows.iter().map(|r| r.dur).collect();
    let k_total = pairwise_sum(&durs);
    let total_us = total_time_us(cx);
    let group_durs: Vec<Vec<f64>> = groups
        .iter()
        .map(|(_, idx)| idx.iter().map(|&i| rows[i].dur).collect())
        .collect();
    let sums: Vec<f64> = group_durs.iter().map(|v| kahan_sum(v)).collect();
    let mut s = Table::new(sheet::KERNEL_SUMMARY, &summary_columns(has_cpu));
    let text = |t: &str| {
        if t.is_empty() {
            Value::Null
        } else {
            Value::from(t)
        }
    };
    for i in summary_order(trace, &groups, &sums) {
        let (cat, cpu, name, stream) = &groups[i].0;
        let v = &group_durs[i];
        let sum = sums[i];
        let mut row = vec![text(cat)];
        if has_cpu {
            row.push(text(cpu));
        }
        row.push(Value::from(name.map_or("", |s| trace.string(s))));
        row.push(stream.map_or(Value::Null, Value::Int));
        row.push(dur_cell(sum, all_int));
        row.push(Value::Int(v.len() as i64));
        row.push(Value::Float(sum / v.len() as f64));
        row.push(dur_cell(
            v.iter().copied().fold(f64::INFINITY, f64::min),
            all_int,
        ));
        row.push(dur_cell(
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            all_int,
        ));
        row.push(if k_total == 0.0 {
            Value::Null
        } else {
            Value::Float(sum / k_total * 100.0)
        });
        row.push(Value::Float(sum / total_us * 100.0));
        s.push_row(row);
    }
    // A stream column with a missing value is a float column.
    if let Some(c) = s.column_mut(col::KERNEL_STREAM) {
        widen_ints(&mut c.values);
    }
    if let Some(table) = &cx.opts.kernel_categories {
        table.add_column(&mut s);
    }
    s
}

/// What a short kernel's group key is a function of: its name and, unless
/// in GPU-only mode, its parent op's name and argument handles (dims,
/// strides, concrete inputs).
type ShortIdentity = (Option<StrId>, Option<(Option<StrId>, [ValueId; 3])>);

/// The [`ShortIdentity`] of a short kernel; None when a key cell would be
/// missing (pandas' groupby drops the row).
fn short_identity(cx: &Context, r: &KernelRow) -> Option<ShortIdentity> {
    let trace = cx.trace;
    let kernel = trace.event(r.uid).name;
    if cx.gpu_only {
        return Some((kernel, None));
    }
    let op = r.cpu_op?;
    let a = trace.args(op).unwrap_or_default();
    let values = [a.input_dims?, a.input_strides?, a.concrete_inputs?];
    Some((kernel, Some((trace.event(op).name, values))))
}

/// The group key of a short kernel from its identity: the kernel name
/// alone in GPU-only mode, else the parent op, its argument reprs and the
/// kernel name.
fn short_key(cx: &Context, reprs: &mut ArgReprs, id: &ShortIdentity) -> Vec<String> {
    let trace = cx.trace;
    let text = |s: Option<StrId>| s.map_or("", |s| trace.string(s)).to_string();
    let mut key = Vec::with_capacity(5);
    if let Some((op, values)) = id.1 {
        key.push(text(op));
        for v in values {
            key.extend(reprs.get(trace, Some(v)));
        }
    }
    key.push(text(id.0));
    key
}

fn short_summary(cx: &Context, short: &[KernelRow], all_int: bool) -> Table {
    let mut cols: Vec<&str> = if cx.gpu_only {
        vec![col::KERNEL_NAME]
    } else {
        vec![
            col::PARENT_CPU_OP,
            col::INPUT_DIMS_LC,
            col::INPUT_STRIDES_LC,
            col::CONCRETE_INPUTS,
            col::KERNEL_NAME,
        ]
    };
    cols.extend([
        col::SHORT_KERNEL_DURATION_SUM,
        col::SHORT_KERNEL_COUNT,
        col::SHORT_KERNEL_DURATION_MEAN,
        col::SHORT_KERNEL_DURATION_PCT_TOTAL,
    ]);
    let mut s = Table::new(sheet::SHORT_KERNELS_SUMMARY, &cols);
    let keyed: Vec<(ShortIdentity, f64)> = short
        .iter()
        .filter_map(|r| short_identity(cx, r).map(|id| (id, r.dur)))
        .collect();
    if keyed.is_empty() && !short.is_empty() {
        // The reference's quirk: when every short kernel lacks a key, pandas
        // writes its raw two-level header and nothing else (docs/deviations.md).
        let mut quirk = Table::new(sheet::SHORT_KERNELS_SUMMARY, &[col::KERNEL_DURATION_US; 3]);
        quirk.push_row(["sum", "count", "mean"].map(Value::from).to_vec());
        return quirk;
    }
    let total_us = total_time_us(cx);
    // Each distinct identity's key is rendered once, then grouped as text.
    let by_id = rows_by_identity(keyed.iter().map(|(id, _)| id));
    let mut reprs = ArgReprs::default();
    let keys: Vec<Vec<String>> = by_id
        .iter()
        .map(|rows| short_key(cx, &mut reprs, &keyed[rows[0]].0))
        .collect();
    let groups = expand_groups(group_first_seen(keys), by_id);
    let mut rows: Vec<(Vec<String>, f64, usize, f64, f64)> = groups
        .into_iter()
        .map(|(k, idx)| {
            let v: Vec<f64> = idx.iter().map(|&i| keyed[i].1).collect();
            let sum = kahan_sum(&v);
            let n = v.len();
            (k, sum, n, sum / n as f64, sum / total_us * 100.0)
        })
        .collect();
    rows.sort_by(|a, b| {
        desc_nan_last(a.1, b.1)
            .then(a.2.cmp(&b.2))
            .then(a.3.total_cmp(&b.3))
            .then(a.4.total_cmp(&b.4))
    });
    if let Some(k) = cx.opts.topk_short_kernels {
        rows.truncate(k);
    }
    for (k, sum, n, mean, pct) in rows {
        let mut row: Vec<Value> = k.iter().map(|t| Value::from(t.as_str())).collect();
        row.push(dur_cell(sum, all_int));
        row.push(Value::Int(n as i64));
        row.push(Value::Float(mean));
        row.push(Value::Float(pct));
        s.push_row(row);
    }
    s
}
