//! The kernel sheets of the JAX report (spec 05 §1.8.3–1.8.6): in JAX a
//! kernel is its own launcher, so `kernel_launchers` lists every kernel
//! with its times, HLO shapes and details; the summaries group them by
//! name and category, `kernel_launchers_unique_args` by name and shapes;
//! `df_xla_perf` and `xla_summary` look at the uncategorised (XLA) kernels.

use std::sync::OnceLock;

use regex::Regex;
use rustc_hash::{FxHashMap, FxHashSet};

use super::args::KernelArgs;
use super::categories::UNCATEGORIZED;
use super::kernels::{JaxTrace, Kernel, ident_int};
use super::launch_rows::{LaunchRows, ShapeCells, record_entries};
use crate::analysis::kernel_details::{self, KernelStat};
use crate::analysis::ops::{TimedRow, category_summary, name_summary, stats};
use crate::names::{col, sheet};
use crate::pyfmt::str_repr;
use crate::table::agg::{Agg, NAN_STATS, order_desc_by, percentages};
use crate::table::group::group_first_seen_text;
use crate::table::{Column, Table, Value};
use crate::trace::EventId;

/// A kernel with its arguments: one row of `kernel_launchers`.
pub struct Row<'a> {
    /// The kernel.
    pub kernel: &'a Kernel,
    /// Its arguments.
    pub args: &'a KernelArgs,
}

/// `kernel_launchers` (or, for `df_xla_perf`, the rows given): deferred,
/// or held ([`LaunchRows`]).
pub fn launchers_sheet(jt: &JaxTrace, name: &str, rows: &[Row], deferred: bool) -> Table {
    LaunchRows::new(jt, rows, None).sheet(name, deferred)
}

/// Appends `time ms per gpu`: the summary's milliseconds over the number
/// of distinct pids among `rows`.
fn with_time_per_gpu(mut s: Table, jt: &JaxTrace, rows: &[Row]) -> Table {
    let pids: FxHashSet<Option<i64>> = rows
        .iter()
        .map(|r| ident_int(jt.trace, jt.trace.event(r.kernel.id).pid))
        .collect();
    let n = pids.len() as f64;
    let ms: Vec<Value> = s
        .column(col::TOTAL_DIRECT_KERNEL_TIME_MS)
        .map(|c| {
            c.values
                .iter()
                .map(|v| Value::Float(v.to_f64() / n))
                .collect()
        })
        .unwrap_or_default();
    s.push_column(Column::new(col::TIME_MS_PER_GPU, ms));
    s
}

/// The summary sheets' view of rows, with names mapped by `rename`.
fn timed<'a>(jt: &JaxTrace<'a>, rows: &[Row], names: &'a [String]) -> Vec<TimedRow<'a>> {
    rows.iter()
        .zip(names)
        .map(|(r, name)| {
            let dur = jt.trace.event(r.kernel.id).dur;
            TimedRow {
                name,
                category: r.kernel.category,
                direct: dur,
                subtree: dur,
            }
        })
        .collect()
}

/// `kernel_launchers_summary` (or `xla_summary` with digit-free names).
pub fn summary_sheet(jt: &JaxTrace, name: &str, rows: &[Row], strip_digits: bool) -> Table {
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            let n = jt.trace.name(r.kernel.id);
            if strip_digits {
                n.chars().filter(|c| !c.is_ascii_digit()).collect()
            } else {
                n.to_string()
            }
        })
        .collect();
    let s = name_summary(name, &timed(jt, rows, &names));
    with_time_per_gpu(s, jt, rows)
}

/// `kernel_launchers_summary_by_category`.
pub fn by_category_sheet(jt: &JaxTrace, rows: &[Row]) -> Table {
    let names: Vec<String> = vec![String::new(); rows.len()];
    let s = category_summary(
        sheet::KERNEL_LAUNCHERS_SUMMARY_BY_CATEGORY,
        &timed(jt, rows, &names),
    );
    with_time_per_gpu(s, jt, rows)
}

/// The columns of `kernel_launchers_unique_args`.
fn unique_args_columns() -> Vec<String> {
    let mut cols: Vec<String> = [
        col::NAME,
        col::OP_CATEGORY,
        col::INPUT_DIMS,
        col::INPUT_TYPE,
        col::INPUT_STRIDES,
        col::CONCRETE_INPUTS,
        col::OPERATION_COUNT,
    ]
    .map(String::from)
    .to_vec();
    for stat in NAN_STATS.into_iter().chain([Agg::Sum]) {
        for base in [
            col::TOTAL_DIRECT_KERNEL_TIME,
            col::TOTAL_SUBTREE_KERNEL_TIME,
        ] {
            cols.push(stat.column(base));
        }
    }
    cols.extend(
        [
            col::EX_UID,
            col::KERNEL_DETAILS_SUMMARY,
            col::PERCENTAGE,
            col::CUMULATIVE_PERCENTAGE,
        ]
        .map(String::from),
    );
    cols
}

/// `kernel_details_summary` of a group: its first row's details (less
/// `dur`) with duration statistics.
pub fn details_summary(jt: &JaxTrace, kernels: &[&Kernel], summarised: &[KernelStat]) -> String {
    let by_id: FxHashMap<EventId, &Kernel> = kernels.iter().map(|k| (k.id, *k)).collect();
    kernel_details::summary_text_with_head(summarised, |s| {
        let name = str_repr(jt.trace.name(s.kernel));
        match by_id.get(&s.kernel) {
            Some(k) => format!("'name': {name}, {}", record_entries(jt, k)),
            None => format!("'name': {name}"),
        }
    })
}

/// `kernel_launchers_unique_args`: rows grouped by name, category and the
/// text of their arguments, ranked by summed time.
pub fn unique_args_sheet(jt: &JaxTrace, rows: &[Row]) -> Table {
    let trace = jt.trace;
    let mut shapes = ShapeCells::default();
    let keys = rows.iter().map(|r| {
        let mut key = vec![
            Value::from(trace.name(r.kernel.id)),
            Value::from(r.kernel.category),
        ];
        key.extend(shapes.of(r.args));
        key
    });
    let groups = group_first_seen_text(keys);
    let durs = |idx: &[usize]| -> Vec<f64> {
        idx.iter()
            .map(|&i| trace.event(rows[i].kernel.id).dur)
            .collect()
    };
    let sums: Vec<f64> = groups
        .iter()
        .map(|(_, idx)| crate::numeric::kahan_sum(&durs(idx)))
        .collect();
    let ex_uid: Vec<EventId> = groups
        .iter()
        .map(|(_, idx)| rows[idx[0]].kernel.id)
        .collect();
    let order = order_desc_by(&sums, |a, b| ex_uid[a].cmp(&ex_uid[b]));
    let sorted: Vec<f64> = order.iter().map(|&i| sums[i]).collect();
    let (pct, cum) = percentages(&sorted);
    let mut s = Table::with_headers(sheet::KERNEL_LAUNCHERS_UNIQUE_ARGS, unique_args_columns());
    for (j, &i) in order.iter().enumerate() {
        let (key, idx) = &groups[i];
        let mut row = key.clone();
        row.push(Value::Int(idx.len() as i64));
        let st = stats(&durs(idx));
        for v in st {
            // Direct and subtree times are the same durations.
            row.push(v.clone());
            row.push(v);
        }
        row.push(Value::Int(ex_uid[i].index() as i64));
        let kernels: Vec<&Kernel> = idx.iter().map(|&r| rows[r].kernel).collect();
        let lists: Vec<[EventId; 1]> = kernels.iter().map(|k| [k.id]).collect();
        let lists: Vec<&[EventId]> = lists.iter().map(|l| l.as_slice()).collect();
        let summarised = kernel_details::summarise(trace, &lists);
        row.push(Value::Py(details_summary(jt, &kernels, &summarised).into()));
        row.push(Value::Float(pct[j]));
        row.push(Value::Float(cum[j]));
        s.push_row(row);
    }
    s
}

/// Bytes per element of the dtypes `df_xla_perf` knows.
fn dtype_bytes(dtype: &str) -> Option<i64> {
    Some(match dtype {
        "f32" | "s32" | "u32" => 4,
        "bf16" | "fp16" | "f16" => 2,
        "u64" => 8,
        "f8e4m3fn" | "f8e4m3fnuz" | "f8e5m2" | "f8e5m2fnuz" | "pred" => 1,
        d if d.starts_with("f8") || d.starts_with("s8") => 1,
        _ => return None,
    })
}

/// `total_input_bytes` of a kernel: the sum over its operands of elements
/// times element size; scalars count nothing, unknown dtypes are skipped
/// (and returned).
pub fn input_bytes(operands: &[String], unknown: &mut FxHashSet<String>) -> i64 {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"^(\w+)\[([0-9,]*)\]").expect("valid regex"));
    let mut total: i64 = 0;
    for o in operands {
        let Some(c) = re.captures(o) else { continue };
        let shape: Vec<i64> = c[2]
            .split(',')
            .filter(|d| !d.is_empty())
            .filter_map(|d| d.parse().ok())
            .collect();
        if shape.is_empty() {
            continue;
        }
        match dtype_bytes(&c[1]) {
            Some(b) => {
                let n = shape.iter().fold(1i64, |a, &d| a.wrapping_mul(d));
                total = total.wrapping_add(n.wrapping_mul(b));
            }
            None => {
                unknown.insert(c[1].to_string());
            }
        }
    }
    total
}

/// `df_xla_perf`: the XLA kernels' rows of `kernel_launchers` with their
/// `total_input_bytes`, deferred or held; a warning naming the dtypes left
/// uncounted.
pub fn xla_perf_sheet(jt: &JaxTrace, rows: &[Row], deferred: bool) -> (Table, Option<String>) {
    let mut unknown = FxHashSet::default();
    let s = LaunchRows::new(jt, rows, Some(&mut unknown)).sheet(sheet::DF_XLA_PERF, deferred);
    let warning = (!unknown.is_empty()).then(|| {
        let mut u: Vec<String> = unknown.into_iter().collect();
        u.sort();
        format!(
            "df_xla_perf: operands of unknown size left out of total_input_bytes: {}",
            u.join(", ")
        )
    });
    (s, warning)
}

/// The rows of the XLA (uncategorised) kernels.
pub fn xla_rows<'a>(rows: &'a [Row<'a>]) -> Vec<Row<'a>> {
    rows.iter()
        .filter(|r| r.kernel.category == UNCATEGORIZED)
        .map(|r| Row {
            kernel: r.kernel,
            args: r.args,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_bytes_by_dtype() {
        // Worked by hand: 1·5120·34·31·53 bf16 = 286 013 440 · 2 bytes;
        // scalars, tuples and references count nothing; u8 is unknown.
        let ops: Vec<String> = [
            "bf16[1,5120,34,31,53]{4,3,2,1,0}",
            "f32[]",
            "s32[3]{0}",
            "pred[2]",
            "f8e4m3b11fnuz[4]{0}",
            "(bf16[2]{0},u8[4]{0})",
            "/*index=5*/%x",
            "u8[100]{0}",
            "NA",
        ]
        .map(String::from)
        .to_vec();
        let mut unknown = FxHashSet::default();
        assert_eq!(input_bytes(&ops, &mut unknown), 572_026_880 + 12 + 2 + 4);
        assert_eq!(
            unknown.into_iter().collect::<Vec<_>>(),
            vec!["u8".to_string()]
        );
    }
}
