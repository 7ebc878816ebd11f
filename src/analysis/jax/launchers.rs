//! The kernel sheets of the JAX report: in JAX a
//! kernel is its own launcher, so `kernel_launchers` lists every kernel
//! with its times, HLO shapes and details; the summaries group them by
//! name and category, `kernel_launchers_unique_args` by name and shapes;
//! `df_xla_perf` and `xla_summary` look at the uncategorised (XLA) kernels.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;
use rustc_hash::{FxHashMap, FxHashSet};

use super::args::KernelArgs;
use super::categories::UNCATEGORIZED;
use super::kernels::{JaxTrace, Kernel, ident_int};
use super::launch_rows::{LaunchRows, ShapeCells, record_entries};
use crate::analysis::common::kernel_stats::{self, KernelStat};
use crate::analysis::common::op_summaries::{
    CategoryTotals, NameTotals, category_summary_of, name_summary_of, stats,
};
use crate::names::{col, sheet};
use crate::numeric::Kahan;
use crate::pyfmt::str_repr;
use crate::table::agg::{Agg, NAN_STATS, order_desc_by, percentages};
use crate::table::group::group_first_seen_text_by;
use crate::table::{Column, Table, Value};
use crate::trace::{EventId, StrId};

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
    // Inserted one by one: collected, the set would reserve a slot per row
    // (9 MiB for 240 k kernels) for the few GPUs there are.
    let mut pids: FxHashSet<Option<i64>> = FxHashSet::default();
    for r in rows {
        pids.insert(ident_int(jt.trace, jt.trace.event(r.kernel.id).pid));
    }
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

/// `kernel_launchers_summary` (or `xla_summary` with digit-free names):
/// the rows totalled by name as they go by, in no list of their own.
pub fn summary_sheet(jt: &JaxTrace, name: &str, rows: &[Row], strip_digits: bool) -> Table {
    let trace = jt.trace;
    /// One name's totals so far.
    #[derive(Default)]
    struct Acc {
        time: Kahan,
        count: usize,
        categories: Vec<&'static str>,
    }
    // Names repeat on every step: each distinct one is looked up (and
    // stripped) once. Stripped, two names can become one text.
    let mut groups: Vec<(Cow<str>, Acc)> = Vec::new();
    let mut by_text: FxHashMap<Cow<str>, usize> = FxHashMap::default();
    let mut by_id: FxHashMap<Option<StrId>, usize> = FxHashMap::default();
    for r in rows {
        let e = trace.event(r.kernel.id);
        let g = *by_id.entry(e.name).or_insert_with(|| {
            let n = trace.name_of(e);
            let text: Cow<str> = if strip_digits {
                n.chars().filter(|c| !c.is_ascii_digit()).collect()
            } else {
                n.into()
            };
            *by_text.entry(text).or_insert_with_key(|text| {
                groups.push((text.clone(), Acc::default()));
                groups.len() - 1
            })
        });
        let acc = &mut groups[g].1;
        acc.time.add(e.dur);
        acc.count += 1;
        if !acc.categories.contains(&r.kernel.category) {
            acc.categories.push(r.kernel.category);
        }
    }
    // Ascending names, as the grouping sorts them.
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    let totals: Vec<NameTotals> = groups
        .iter()
        .map(|(name, acc)| NameTotals {
            name,
            // Direct and subtree times are the same durations.
            direct: acc.time.sum(),
            subtree: acc.time.sum(),
            count: acc.count,
            categories: acc.categories.iter().copied().collect(),
        })
        .collect();
    with_time_per_gpu(name_summary_of(name, &totals), jt, rows)
}

/// `kernel_launchers_summary_by_category`: the rows totalled by category
/// as they go by.
pub fn by_category_sheet(jt: &JaxTrace, rows: &[Row]) -> Table {
    // A handful of categories: a list searched in place.
    let mut groups: Vec<CategoryTotals> = Vec::new();
    let mut times: Vec<Kahan> = Vec::new();
    for r in rows {
        let category = r.kernel.category;
        let g = match groups.iter().position(|g| g.category == category) {
            Some(g) => g,
            None => {
                groups.push(CategoryTotals {
                    category,
                    count: 0,
                    direct: 0.0,
                });
                times.push(Kahan::default());
                groups.len() - 1
            }
        };
        groups[g].count += 1;
        times[g].add(jt.trace.event(r.kernel.id).dur);
    }
    for (g, t) in groups.iter_mut().zip(&times) {
        g.direct = t.sum();
    }
    // Ascending categories, as the grouping sorts them.
    groups.sort_by(|a, b| a.category.cmp(b.category));
    let s = category_summary_of(sheet::KERNEL_LAUNCHERS_SUMMARY_BY_CATEGORY, &groups);
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
    kernel_stats::summary_text_with_head(summarised, |s| {
        let name = str_repr(jt.trace.name(s.kernel));
        // The statistics are of the first row's kernels, first in `kernels`:
        // found at once, where a map of all would cost a slot per row.
        match kernels.iter().find(|k| k.id == s.kernel) {
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
    // A row's key cells follow from its name, category and arguments
    // (shared per record), which repeat on every step: they are built
    // once per distinct triple.
    let ids = rows.iter().map(|r| {
        let name = trace.event(r.kernel.id).name;
        (name, r.kernel.category, std::ptr::from_ref(r.args))
    });
    let groups = group_first_seen_text_by(ids, |i| {
        let r = &rows[i];
        let mut key = vec![
            Value::from(trace.name(r.kernel.id)),
            Value::from(r.kernel.category),
        ];
        key.extend(shapes.of(r.args));
        key
    });
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
        let summarised = kernel_stats::summarise(trace, &lists);
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
    use crate::analysis::common::op_summaries::{TimedRow, category_summary, name_summary};
    use crate::analysis::jax::test_support::kernel_trace;

    /// Totalled as the rows go by, the summaries are those of the rows
    /// listed and grouped (the launcher sheets' way): names repeated out
    /// of order, names that become one without their digits, sums whose
    /// order shows (Kahan in row order), three categories.
    #[test]
    fn running_totals_give_the_grouped_summaries() {
        let named = [
            ("fusion_12", 0.1),
            ("conv_a", 3.0),
            ("fusion_2", 0.2),
            ("fusion_12", 1e16),
            ("nvjet_tn", 2.5),
            ("fusion_12", 0.3),
            ("conv_a", 7.25),
            ("fusion_7", 1.5),
            ("fusion_12", 4.0),
        ];
        let trace = kernel_trace(&named);
        let jt = JaxTrace::new(&trace);
        let args = KernelArgs::empty();
        let rows: Vec<Row> = jt
            .kernels
            .iter()
            .map(|kernel| Row {
                kernel,
                args: &args,
            })
            .collect();
        for strip in [false, true] {
            let names: Vec<String> = named
                .iter()
                .map(|(n, _)| {
                    n.chars()
                        .filter(|c| !strip || !c.is_ascii_digit())
                        .collect()
                })
                .collect();
            let timed: Vec<TimedRow> = rows
                .iter()
                .zip(&names)
                .map(|(r, name)| TimedRow {
                    name,
                    category: r.kernel.category,
                    direct: jt.trace.event(r.kernel.id).dur,
                    subtree: jt.trace.event(r.kernel.id).dur,
                })
                .collect();
            let grouped = with_time_per_gpu(name_summary("s", &timed), &jt, &rows);
            assert_eq!(summary_sheet(&jt, "s", &rows, strip), grouped);
            assert_eq!(grouped.nrows(), if strip { 3 } else { 5 });
            let by_category = with_time_per_gpu(
                category_summary(sheet::KERNEL_LAUNCHERS_SUMMARY_BY_CATEGORY, &timed),
                &jt,
                &rows,
            );
            assert_eq!(by_category_sheet(&jt, &rows), by_category);
            assert_eq!(by_category.nrows(), 3);
        }
    }

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
