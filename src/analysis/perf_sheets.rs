//! The per-category roofline sheets (`GEMM`, `SDPA_fwd`, `CONV_fwd`,
//! `UnaryElementwise`, `Normalization`, `Reduce_fwd`, …), spec 03 §5: one row
//! per distinct (op, model parameters), with FLOPs, bytes, achieved rates and
//! kernel-time statistics over the instances.

use rustc_hash::FxHashMap as HashMap;

use indexmap::IndexMap;
use rayon::prelude::*;

use super::Context;
use super::kernel_details;
use super::perf_model::{self, ModelClass, ModelError, Py, table::CLASSES};
use super::roofline::{self, Metrics, is_host_op};
use crate::numeric::{kahan_sum, median, welford_std};
use crate::pyfmt::py_repr;
use crate::report::{Cell, Sheet};
use crate::trace::{ArgValue, EventId, StrId};

/// One modelled op instance (a raw row of the reference's table).
struct RawRow {
    uid: EventId,
    metrics: Metrics,
}

/// mean, median, sample std, min, max of the non-NaN values (NaN when none).
pub fn nan_stats(values: &[f64]) -> [f64; 5] {
    let v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return [f64::NAN; 5];
    }
    [
        kahan_sum(&v) / v.len() as f64,
        median(&v),
        welford_std(&v).unwrap_or(f64::NAN),
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ]
}

/// First non-NaN value.
fn first(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().find(|v| !v.is_nan()).unwrap_or(f64::NAN)
}

/// How pandas holds a param column, which decides how its cells print.
fn render_param_column(values: &[Option<&Py>]) -> Vec<Option<String>> {
    let present: Vec<&Py> = values
        .iter()
        .flatten()
        .copied()
        .filter(|p| **p != Py::None)
        .collect();
    let all_numeric = !present.is_empty() && present.iter().all(|p| p.is_number());
    let any_float = present.iter().any(|p| matches!(p, Py::Float(_)));
    let any_missing = present.len() < values.len();
    let as_float = all_numeric && (any_float || any_missing);
    values
        .iter()
        .map(|v| match v {
            None | Some(Py::None) => None,
            Some(Py::Int(i)) if as_float => Some(Py::Float(*i as f64).to_str()),
            Some(p) => Some(p.to_str()),
        })
        .collect()
}

/// A recorded argument as Python prints the list (`[[512], [141, 512]]`).
fn raw_arg_text(v: Option<&ArgValue>) -> Option<String> {
    v.map(|v| py_repr(v, false))
}

/// Groups raw rows by (name, params) and aggregates them into a sheet.
fn summarise(cx: &Context, name: &str, rows: &[RawRow]) -> Sheet {
    let trace = cx.trace;
    // Param columns in first-appearance order across rows.
    let mut pcols: Vec<&'static str> = Vec::new();
    for r in rows {
        for (k, _) in &r.metrics.eval.params {
            if !pcols.contains(k) {
                pcols.push(k);
            }
        }
    }
    let rendered: Vec<Vec<Option<String>>> = pcols
        .iter()
        .map(|k| {
            let vals: Vec<Option<&Py>> = rows
                .iter()
                .map(|r| {
                    r.metrics
                        .eval
                        .params
                        .iter()
                        .find(|(pk, _)| pk == k)
                        .map(|(_, v)| v)
                })
                .collect();
            render_param_column(&vals)
        })
        .collect();
    let mut groups: IndexMap<Vec<Option<String>>, Vec<usize>> = IndexMap::new();
    for (i, r) in rows.iter().enumerate() {
        let mut key = vec![Some(trace.name(r.uid).to_string())];
        key.extend(rendered.iter().map(|col| col[i].clone()));
        groups.entry(key).or_default().push(i);
    }
    let has_roofline = rows.iter().any(|r| r.metrics.roofline.is_some());
    let mut cols: Vec<String> = vec!["name".into()];
    cols.extend(pcols.iter().map(|k| format!("param: {k}")));
    let stat_names = ["mean", "median", "std", "min", "max"];
    for c in ["GFLOPS_first", "Data Moved (MB)_first", "FLOPS/Byte_first"] {
        cols.push(c.into());
    }
    for m in ["TB/s", "TFLOPS/s"] {
        cols.extend(stat_names.iter().map(|s| format!("{m}_{s}")));
    }
    for c in [
        "process_name_first",
        "process_label_first",
        "thread_name_first",
        "Compute Spec",
    ] {
        cols.push(c.into());
    }
    if has_roofline {
        cols.push("Roofline Time (µs)_first".into());
        cols.push("Roofline Bound_first".into());
        cols.extend(stat_names.iter().map(|s| format!("Pct Roofline_{s}")));
    }
    for c in [
        "kernel_details__summarize_kernel_stats",
        "trunc_kernel_details",
        "Input Dims_first",
        "Input type_first",
        "Input Strides_first",
        "Concrete Inputs_first",
    ] {
        cols.push(c.into());
    }
    cols.extend(stat_names.iter().map(|s| format!("Kernel Time (µs)_{s}")));
    cols.extend([
        "Kernel Time (µs)_sum".into(),
        "name_count".into(),
        "UID_first".into(),
    ]);

    let text = |s: Option<String>| s.map(Cell::Text).unwrap_or(Cell::Empty);
    let mut out: Vec<(f64, EventId, Vec<Cell>)> = Vec::new();
    for (key, idx) in &groups {
        let g: Vec<&RawRow> = idx.iter().map(|&i| &rows[i]).collect();
        let m = |f: fn(&Metrics) -> f64| -> Vec<f64> { g.iter().map(|r| f(&r.metrics)).collect() };
        let mut row: Vec<Cell> = key.iter().cloned().map(text).collect();
        row.push(Cell::Float(first(m(|x| x.gflops))));
        row.push(Cell::Float(first(m(|x| x.data_moved_mb))));
        row.push(Cell::Float(first(m(|x| x.flops_per_byte))));
        for f in [
            (|x: &Metrics| x.tb_s) as fn(&Metrics) -> f64,
            |x: &Metrics| x.tflops_s,
        ] {
            row.extend(nan_stats(&m(f)).map(Cell::Float));
        }
        let (pname, plabel, tname) = cx.process_names(g[0].uid);
        row.extend([Cell::Text(pname), Cell::Text(plabel), Cell::Text(tname)]);
        row.push(Cell::Text(g[0].metrics.compute_spec.clone()));
        if has_roofline {
            let rl: Vec<_> = g.iter().filter_map(|r| r.metrics.roofline).collect();
            row.push(
                rl.first()
                    .map(|r| Cell::Float(r.time_us))
                    .unwrap_or(Cell::Empty),
            );
            row.push(
                rl.first()
                    .map(|r| Cell::Text(r.bound_text().into()))
                    .unwrap_or(Cell::Empty),
            );
            let pct: Vec<f64> = g
                .iter()
                .map(|r| r.metrics.roofline.map(|x| x.pct).unwrap_or(f64::NAN))
                .collect();
            row.extend(nan_stats(&pct).map(Cell::Float));
        }
        let lists: Vec<&[EventId]> = g.iter().map(|r| r.metrics.kernels.as_slice()).collect();
        let ks = kernel_details::summarise(trace, &lists);
        row.push(Cell::Text(kernel_details::summary_text(&ks)));
        row.push(text(kernel_details::trunc_text(&ks)));
        for v in cx.trace.op_args(g[0].uid).all() {
            row.push(text(raw_arg_text(v)));
        }
        let kt = m(|x| x.kernel_time);
        row.extend(nan_stats(&kt).map(Cell::Float));
        let sum = kahan_sum(&kt);
        row.push(Cell::Float(sum));
        row.push(Cell::Int(g.len() as i64));
        row.push(Cell::Int(g[0].uid.index() as i64));
        out.push((sum, g[0].uid, row));
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    Sheet {
        name: name.to_string(),
        columns: cols,
        rows: out.into_iter().map(|(_, _, r)| r).collect(),
    }
}

/// Rows of the forward pass that belong on the `_bwd` sheet.
const MOVED_TO_BWD: [&str; 4] = [
    "flash_attn::_flash_attn_varlen_backward",
    "aten::convolution_backward",
    "ConvBias_Backward",
    "ConvBiasReLU_Backward",
];

/// Forward ops removed from the `_bwd` sheet.
const NOT_ON_BWD: [&str; 5] = [
    "aten::convolution",
    "aten::miopen_convolution",
    "aten::cudnn_convolution",
    "ConvBias_",
    "ConvBiasReLU_",
];

/// Host events with a model, in UID order, grouped by sheet family.
fn modelled_events(cx: &Context) -> HashMap<&'static str, Vec<(EventId, &'static ModelClass)>> {
    let trace = cx.trace;
    // Model lookups are per name; names repeat a lot.
    let mut class_of: HashMap<Option<StrId>, Option<&'static ModelClass>> = HashMap::default();
    let mut out: HashMap<&'static str, Vec<(EventId, &'static ModelClass)>> = HashMap::default();
    for (i, e) in trace.events() {
        if !is_host_op(e.cat) {
            continue;
        }
        let class = *class_of
            .entry(e.name)
            .or_insert_with(|| perf_model::lookup(trace.name_of(e)));
        if let Some(c) = class {
            out.entry(c.family).or_default().push((i, c));
        }
    }
    out
}

fn raw_rows(cx: &Context, events: &[(EventId, &'static ModelClass)], bwd: bool) -> Vec<RawRow> {
    let (trace, tree) = (cx.trace, cx.tree);
    let mut rows = Vec::new();
    for &(uid, class) in events {
        let name = trace.name(uid);
        if bwd
            && (name == "vllm::unified_attention_with_output"
                || !tree.bwd_events.contains_key(&uid))
        {
            continue;
        }
        match roofline::compute(trace, tree, uid, class, bwd, cx.arch) {
            Ok(metrics) => rows.push(RawRow { uid, metrics }),
            Err(ModelError::NotImplemented) | Err(ModelError::Invalid(_)) => {}
        }
    }
    rows
}

fn drop_rows(sheet: &mut Sheet, names: &[&str]) -> Vec<Vec<Cell>> {
    let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut sheet.rows)
        .into_iter()
        .partition(|r| matches!(&r[0], Cell::Text(n) if names.contains(&n.as_str())));
    sheet.rows = kept;
    gone
}

/// Appends rows of another sheet, aligning columns by name (pandas concat).
fn append_rows(sheet: &mut Sheet, columns: &[String], rows: Vec<Vec<Cell>>) {
    for c in columns {
        if !sheet.columns.contains(c) {
            sheet.columns.push(c.clone());
            for r in &mut sheet.rows {
                r.push(Cell::Empty);
            }
        }
    }
    for r in rows {
        let mut full = vec![Cell::Empty; sheet.columns.len()];
        for (c, v) in columns.iter().zip(r) {
            if let Some(j) = sheet.column(c) {
                full[j] = v;
            }
        }
        sheet.rows.push(full);
    }
}

/// All roofline sheets, in the reference's family order; empty sheets are left out.
pub fn sheets(cx: &Context) -> Vec<Sheet> {
    let mut families: Vec<&str> = Vec::new();
    for c in CLASSES {
        if !families.contains(&c.family) {
            families.push(c.family);
        }
    }
    let events = modelled_events(cx);
    let per_family: Vec<Vec<Sheet>> = families
        .par_iter()
        .map(|fam| match events.get(fam) {
            Some(ev) => family_sheets(cx, fam, ev),
            None => Vec::new(),
        })
        .collect();
    per_family.into_iter().flatten().collect()
}

/// The sheet (or `_fwd`/`_bwd` pair) of one family.
fn family_sheets(cx: &Context, fam: &str, events: &[(EventId, &'static ModelClass)]) -> Vec<Sheet> {
    let mut out = Vec::new();
    {
        if events[0].1.single_sheet() {
            let s = summarise(cx, fam, &raw_rows(cx, events, false));
            if !s.rows.is_empty() {
                out.push(s);
            }
            return out;
        }
        let mut fwd = summarise(cx, &format!("{fam}_fwd"), &raw_rows(cx, events, false));
        let moved = drop_rows(&mut fwd, &MOVED_TO_BWD);
        let mut bwd = summarise(cx, &format!("{fam}_bwd"), &raw_rows(cx, events, true));
        if !moved.is_empty() {
            let cols = fwd.columns.clone();
            if bwd.rows.is_empty() {
                bwd.columns = cols.clone();
            }
            append_rows(&mut bwd, &cols, moved);
        }
        drop_rows(&mut bwd, &NOT_ON_BWD);
        for s in [fwd, bwd] {
            if !s.rows.is_empty() {
                out.push(s);
            }
        }
    }
    out
}

/// One plotted point of a roofline sheet row.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotPoint {
    /// Op name and its distinguishing parameters.
    pub label: String,
    /// FLOPs per byte.
    pub intensity: f64,
    /// Mean achieved TFLOP/s.
    pub tflops_s: f64,
    /// Total kernel time of the row, µs.
    pub kernel_time_us: f64,
    /// The row's Compute Spec (selects the compute roof).
    pub compute_spec: String,
}

/// The plottable points of a roofline sheet: rows with a positive, finite
/// intensity and achieved rate.
pub fn plot_points(sheet: &Sheet) -> Vec<PlotPoint> {
    let col = |n: &str| sheet.column(n);
    let (Some(fb), Some(tf), Some(kt)) = (
        col("FLOPS/Byte_first"),
        col("TFLOPS/s_mean"),
        col("Kernel Time (µs)_sum"),
    ) else {
        return Vec::new();
    };
    let spec = col("Compute Spec");
    let params: Vec<usize> = (0..sheet.columns.len())
        .filter(|&i| sheet.columns[i].starts_with("param: "))
        .collect();
    let num = |c: &Cell| match c {
        Cell::Float(f) => *f,
        Cell::Int(i) => *i as f64,
        _ => f64::NAN,
    };
    let txt = |c: &Cell| match c {
        Cell::Text(t) => t.clone(),
        Cell::Int(i) => i.to_string(),
        Cell::Float(f) => crate::pyfmt::float_repr(*f),
        Cell::Bool(b) => b.to_string(),
        Cell::Empty => String::new(),
    };
    sheet
        .rows
        .iter()
        .filter_map(|r| {
            let (x, y) = (num(&r[fb]), num(&r[tf]));
            if !(x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0) {
                return None;
            }
            let p: Vec<String> = params
                .iter()
                .filter(|&&i| !matches!(r[i], Cell::Empty))
                .map(|&i| format!("{}={}", &sheet.columns[i][7..], txt(&r[i])))
                .collect();
            Some(PlotPoint {
                label: format!("{} {}", txt(&r[0]), p.join(" ")),
                intensity: x,
                tflops_s: y,
                kernel_time_us: num(&r[kt]),
                compute_spec: spec.map(|s| txt(&r[s])).unwrap_or_default(),
            })
        })
        .collect()
}
