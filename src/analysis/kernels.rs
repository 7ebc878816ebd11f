//! Kernel sheets (spec 01 §4): `kernel_summary`, `short_kernel_histogram`
//! and `short_kernels_summary`, all built on one per-kernel table.

use indexmap::IndexMap;

use super::categories::{categorize, launcher_category};
use super::{ArgReprs, Context};
use crate::numeric::{kahan_sum, pairwise_sum};
use crate::report::{Cell, Sheet};
use crate::trace::{Cat, EventId, StrId};

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
fn dur_cell(v: f64, ints: bool) -> Cell {
    if ints {
        Cell::Int(v as i64)
    } else {
        Cell::Float(v)
    }
}

/// The kernel sheets, in report order: `kernel_summary` (only when there are
/// kernels), `short_kernel_histogram`, `short_kernels_summary`.
pub fn sheets(cx: &Context) -> Vec<Sheet> {
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
    out.push(histogram(&short, cx.opts.histogram_bins));
    out.push(short_summary(cx, &short, all_int));
    out
}

fn total_time_us(cx: &Context) -> f64 {
    cx.timeline
        .map(|t| (t.total / 1e3) * 1e3)
        .unwrap_or(f64::NAN)
}

/// A `kernel_summary` group: category, cpu op ("" = empty), kernel name, stream.
type GroupKey = (String, String, Option<StrId>, Option<i64>);

fn kernel_summary(cx: &Context, rows: &[KernelRow], all_int: bool) -> Sheet {
    let trace = cx.trace;
    let name_text = |id: Option<StrId>| id.map_or("", |s| trace.string(s));
    // A kernel with a cpu_op always has a launcher, so the reference's
    // "fill Parent cpu_op from Launcher" applies exactly when the column exists.
    let has_cpu = rows.iter().any(|r| r.cpu_op.is_some());
    let any_missing_stream = rows.iter().any(|r| r.stream.is_none());
    // Group key: category, [cpu op], kernel name, stream (text; "" = empty).
    let mut groups: IndexMap<GroupKey, Vec<f64>> = IndexMap::new();
    for r in rows {
        let (cpu, cat) = if let Some(op) = r.cpu_op {
            let name = trace.name(op);
            let first = cx.attribution.first_kernel(trace, op);
            (name.to_string(), categorize(name, first).to_string())
        } else if let Some(launcher) = r.launcher {
            let lname = trace.name(launcher);
            let cpu = if has_cpu {
                lname.to_string()
            } else {
                String::new()
            };
            (cpu, launcher_category(lname).to_string())
        } else {
            (String::new(), String::new())
        };
        let name = trace.event(r.uid).name;
        groups
            .entry((cat, cpu, name, r.stream))
            .or_default()
            .push(r.dur);
    }
    let durs: Vec<f64> = rows.iter().map(|r| r.dur).collect();
    let k_total = pairwise_sum(&durs);
    let total_us = total_time_us(cx);
    let keys: Vec<&GroupKey> = groups.keys().collect();
    let sums: Vec<f64> = groups.values().map(|v| kahan_sum(v)).collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    // Ties: group keys ascending, empty values last (pandas' starting order).
    let empty_last = |a: &str, b: &str| match (a.is_empty(), b.is_empty()) {
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.cmp(b),
    };
    order.sort_by(|&a, &b| {
        let (ka, kb) = (keys[a], keys[b]);
        sums[b]
            .total_cmp(&sums[a])
            .then_with(|| empty_last(&ka.0, &kb.0))
            .then_with(|| empty_last(&ka.1, &kb.1))
            .then_with(|| name_text(ka.2).cmp(name_text(kb.2)))
            // Missing streams last.
            .then_with(|| (ka.3.is_none()).cmp(&kb.3.is_none()).then(ka.3.cmp(&kb.3)))
    });
    let mut cols = vec!["Parent op category"];
    if has_cpu {
        cols.push("Parent cpu_op");
    }
    cols.extend([
        "Kernel name",
        "Kernel stream",
        "Kernel duration (µs)_sum",
        "Kernel duration (µs)_count",
        "Kernel duration (µs)_mean",
        "Kernel duration (µs)_min",
        "Kernel duration (µs)_max",
        "Percent of kernels time (%)",
        "Percent of total time (%)",
    ]);
    let mut s = Sheet::new("kernel_summary", &cols);
    let text = |t: &str| {
        if t.is_empty() {
            Cell::Empty
        } else {
            Cell::Text(t.to_string())
        }
    };
    for i in order {
        let (cat, cpu, name, stream) = keys[i];
        let v = &groups[i];
        let sum = sums[i];
        let mut row = vec![text(cat)];
        if has_cpu {
            row.push(text(cpu));
        }
        row.push(Cell::Text(name_text(*name).to_string()));
        row.push(match (*stream, any_missing_stream) {
            (None, _) => Cell::Empty,
            (Some(s), true) => Cell::Float(s as f64),
            (Some(s), false) => Cell::Int(s),
        });
        row.push(dur_cell(sum, all_int));
        row.push(Cell::Int(v.len() as i64));
        row.push(Cell::Float(sum / v.len() as f64));
        row.push(dur_cell(
            v.iter().copied().fold(f64::INFINITY, f64::min),
            all_int,
        ));
        row.push(dur_cell(
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            all_int,
        ));
        row.push(if k_total == 0.0 {
            Cell::Empty
        } else {
            Cell::Float(sum / k_total * 100.0)
        });
        row.push(Cell::Float(sum / total_us * 100.0));
        s.rows.push(row);
    }
    s
}

/// numpy-style equal-width histogram of the short kernels' durations.
fn histogram(short: &[KernelRow], bins: usize) -> Sheet {
    let mut s = Sheet::new("short_kernel_histogram", &["bin_start", "bin_end", "count"]);
    if short.is_empty() || bins == 0 {
        return s;
    }
    let mut lo = short.iter().map(|r| r.dur).fold(f64::INFINITY, f64::min);
    let mut hi = short
        .iter()
        .map(|r| r.dur)
        .fold(f64::NEG_INFINITY, f64::max);
    if lo == hi {
        lo -= 0.5;
        hi += 0.5;
    }
    let step = (hi - lo) / bins as f64;
    let mut edges: Vec<f64> = (0..bins).map(|i| i as f64 * step + lo).collect();
    edges.push(hi);
    let mut counts = vec![0i64; bins];
    let norm = bins as f64 / (hi - lo);
    for r in short {
        let v = r.dur;
        let mut i = (((v - lo) * norm) as usize).min(bins - 1);
        // Correct the float estimate against the actual edges, as numpy does.
        while i > 0 && v < edges[i] {
            i -= 1;
        }
        while i < bins - 1 && v >= edges[i + 1] {
            i += 1;
        }
        counts[i] += 1;
    }
    for i in 0..bins {
        s.rows.push(vec![
            Cell::Float(edges[i]),
            Cell::Float(edges[i + 1]),
            Cell::Int(counts[i]),
        ]);
    }
    s
}

fn short_summary(cx: &Context, short: &[KernelRow], all_int: bool) -> Sheet {
    let trace = cx.trace;
    let gpu_only = cx.gpu_only;
    let mut cols: Vec<&str> = if gpu_only {
        vec!["Kernel name"]
    } else {
        vec![
            "Parent cpu_op",
            "Input dims",
            "Input strides",
            "Concrete Inputs",
            "Kernel name",
        ]
    };
    cols.extend([
        "Short Kernel duration (µs) sum",
        "Short Kernel count",
        "Short Kernel duration (µs) mean",
        "Short Kernel duration (µs) percent of total time",
    ]);
    let mut s = Sheet::new("short_kernels_summary", &cols);
    let mut reprs = ArgReprs::default();
    let mut groups: IndexMap<Vec<String>, Vec<f64>> = IndexMap::new();
    for r in short {
        let kname = trace.name(r.uid).to_string();
        let key = if gpu_only {
            vec![kname]
        } else {
            // Rows with an empty key are dropped, as pandas' groupby does.
            let Some(op) = r.cpu_op else {
                continue;
            };
            let a = trace.args(op).copied().unwrap_or_default();
            let (Some(d), Some(st), Some(c)) = (
                reprs.get(trace, a.input_dims),
                reprs.get(trace, a.input_strides),
                reprs.get(trace, a.concrete_inputs),
            ) else {
                continue;
            };
            vec![trace.name(op).to_string(), d, st, c, kname]
        };
        groups.entry(key).or_default().push(r.dur);
    }
    if groups.is_empty() && !short.is_empty() {
        // The reference's quirk: when every short kernel lacks a key, pandas
        // writes its raw two-level header and nothing else (docs/deviations.md).
        let mut quirk = Sheet::new("short_kernels_summary", &["Kernel duration (µs)"; 3]);
        quirk.rows.push(
            ["sum", "count", "mean"]
                .iter()
                .map(|t| Cell::Text(t.to_string()))
                .collect(),
        );
        return quirk;
    }
    let total_us = total_time_us(cx);
    let mut rows: Vec<(Vec<String>, f64, usize, f64, f64)> = groups
        .into_iter()
        .map(|(k, v)| {
            let sum = kahan_sum(&v);
            let n = v.len();
            (k, sum, n, sum / n as f64, sum / total_us * 100.0)
        })
        .collect();
    rows.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(a.2.cmp(&b.2))
            .then(a.3.total_cmp(&b.3))
            .then(a.4.total_cmp(&b.4))
    });
    if let Some(k) = cx.opts.topk_short_kernels {
        rows.truncate(k);
    }
    for (k, sum, n, mean, pct) in rows {
        let mut row: Vec<Cell> = k.into_iter().map(Cell::Text).collect();
        row.push(dur_cell(sum, all_int));
        row.push(Cell::Int(n as i64));
        row.push(Cell::Float(mean));
        row.push(Cell::Float(pct));
        s.rows.push(row);
    }
    s
}
