//! The op summary sheets the PyTorch and JAX reports share: time by op
//! category and by op name over launchers (a JAX kernel is its own
//! launcher), ranked, with percentages and kernel-time statistics.

use std::collections::BTreeSet;

use crate::names::col;
use crate::numeric::kahan_sum;
use crate::pyfmt::str_repr;
use crate::table::agg::{nan_stats, order_desc, percentages};
use crate::table::group::{Group, group_sorted_by};
use crate::table::{Table, Value};

/// The `field` of the rows `idx`, in that order.
pub(crate) fn pick<T>(rows: &[T], idx: &[usize], field: fn(&T) -> f64) -> Vec<f64> {
    idx.iter().map(|&i| field(&rows[i])).collect()
}

/// The Kahan sum of `field` over each group's rows.
pub(crate) fn group_sums<T, K>(rows: &[T], groups: &[Group<K>], field: fn(&T) -> f64) -> Vec<f64> {
    groups
        .iter()
        .map(|(_, idx)| kahan_sum(&pick(rows, idx, field)))
        .collect()
}

/// Groups ranked by their summed direct kernel time (µs): the order
/// (descending), and per rank the time in ms and its percentages.
pub(crate) struct RankedMs {
    pub(crate) order: Vec<usize>,
    pub(crate) ms: Vec<f64>,
    pub(crate) pct: Vec<f64>,
    pub(crate) cum: Vec<f64>,
}

/// [`RankedMs`] of the groups whose summed times (µs) are `sums_us`.
pub(crate) fn rank_ms(sums_us: &[f64]) -> RankedMs {
    let order = order_desc(sums_us);
    let ms: Vec<f64> = order.iter().map(|&i| sums_us[i] / 1000.0).collect();
    let (pct, cum) = percentages(&ms);
    RankedMs {
        order,
        ms,
        pct,
        cum,
    }
}

/// One launcher as the summary sheets see it: its name, category and
/// kernel times (µs). The JAX report's kernels are their own launchers.
#[derive(Debug, Clone, Copy)]
pub struct TimedRow<'s> {
    /// Launcher name.
    pub name: &'s str,
    /// Op category.
    pub category: &'s str,
    /// Busy time of its direct kernels.
    pub direct: f64,
    /// Busy time of every GPU event below it.
    pub subtree: f64,
}

/// The by-category summary sheet `name` (`ops_summary_by_category`,
/// `kernel_launchers_summary_by_category`): rows grouped by category,
/// ranked by summed direct time.
pub fn category_summary(name: &str, rows: &[TimedRow]) -> Table {
    let groups = group_sorted_by(rows.iter().map(|r| r.category).enumerate(), Ord::cmp);
    let totals: Vec<CategoryTotals> = groups
        .iter()
        .map(|(category, idx)| CategoryTotals {
            category,
            count: idx.len(),
            direct: kahan_sum(&pick(rows, idx, |r| r.direct)),
        })
        .collect();
    category_summary_of(name, &totals)
}

/// One group of a by-category summary: its category, row count and
/// summed direct time (µs, Kahan in row order).
#[derive(Debug, Clone, Copy)]
pub struct CategoryTotals<'s> {
    /// The category.
    pub category: &'s str,
    /// Rows in the group.
    pub count: usize,
    /// Their summed direct kernel time.
    pub direct: f64,
}

/// [`category_summary`] of groups already totalled, in ascending category
/// order: a sheet whose rows are many and categories few can total them
/// as they go by instead of listing them.
pub fn category_summary_of(name: &str, groups: &[CategoryTotals]) -> Table {
    let sums: Vec<f64> = groups.iter().map(|g| g.direct).collect();
    let r = rank_ms(&sums);
    let mut s = Table::new(
        name,
        &[
            col::OP_CATEGORY,
            col::COUNT,
            col::TOTAL_DIRECT_KERNEL_TIME_MS,
            col::PERCENTAGE,
            col::CUMULATIVE_PERCENTAGE,
        ],
    );
    for (j, &i) in r.order.iter().enumerate() {
        let g = &groups[i];
        s.push_row(vec![
            Value::from(g.category),
            Value::Int(g.count as i64),
            Value::Float(r.ms[j]),
            Value::Float(r.pct[j]),
            Value::Float(r.cum[j]),
        ]);
    }
    s
}

/// The by-name summary sheet `name` (`ops_summary`,
/// `kernel_launchers_summary`): rows grouped by name, ranked by summed
/// direct time, with their sorted categories.
pub fn name_summary(name: &str, rows: &[TimedRow]) -> Table {
    let groups = group_sorted_by(rows.iter().map(|r| r.name).enumerate(), Ord::cmp);
    let totals: Vec<NameTotals> = groups
        .iter()
        .map(|(key, idx)| NameTotals {
            name: key,
            direct: kahan_sum(&pick(rows, idx, |r| r.direct)),
            subtree: kahan_sum(&pick(rows, idx, |r| r.subtree)),
            count: idx.len(),
            categories: idx.iter().map(|&k| rows[k].category).collect(),
        })
        .collect();
    name_summary_of(name, &totals)
}

/// One group of a by-name summary: its name, its rows' summed direct and
/// subtree times (µs, Kahan in row order), their count and categories.
#[derive(Debug, Clone)]
pub struct NameTotals<'s> {
    /// The name.
    pub name: &'s str,
    /// Summed direct kernel time.
    pub direct: f64,
    /// Summed subtree kernel time.
    pub subtree: f64,
    /// Rows in the group.
    pub count: usize,
    /// Their distinct categories.
    pub categories: BTreeSet<&'s str>,
}

/// [`name_summary`] of groups already totalled, in ascending name order
/// (see [`category_summary_of`]).
pub fn name_summary_of(name: &str, groups: &[NameTotals]) -> Table {
    let dsum: Vec<f64> = groups.iter().map(|g| g.direct).collect();
    let r = rank_ms(&dsum);
    let mut s = Table::new(
        name,
        &[
            col::NAME,
            col::TOTAL_DIRECT_KERNEL_TIME_SUM,
            col::TOTAL_SUBTREE_KERNEL_TIME_SUM,
            col::TOTAL_DIRECT_KERNEL_TIME_MS,
            col::TOTAL_SUBTREE_KERNEL_TIME_MS,
            col::COUNT,
            col::CATEGORIES,
            col::PERCENTAGE,
            col::CUMULATIVE_PERCENTAGE,
        ],
    );
    for (j, &i) in r.order.iter().enumerate() {
        let g = &groups[i];
        s.push_row(vec![
            Value::from(g.name),
            Value::Float(g.direct),
            Value::Float(g.subtree),
            Value::Float(r.ms[j]),
            Value::Float(g.subtree / 1000.0),
            Value::Int(g.count as i64),
            Value::Text(list_text(&g.categories).into()),
            Value::Float(r.pct[j]),
            Value::Float(r.cum[j]),
        ]);
    }
    s
}

/// Mean, median, sample std, min, max and sum of a group's values, pandas
/// style (a NaN std, of one value, is written as an empty cell).
pub fn stats(v: &[f64]) -> [Value; 6] {
    let [mean, median, std, min, max] = nan_stats(v);
    [mean, median, std, min, max, kahan_sum(v)].map(Value::Float)
}

/// Texts, in the set's (sorted) order, as a Python list (`['a', 'b']`).
pub(crate) fn list_text(set: &BTreeSet<&str>) -> String {
    let items: Vec<String> = set.iter().map(|c| str_repr(c)).collect();
    format!("[{}]", items.join(", "))
}
