//! `kernel_category_by_launcher` (`--kernel-categories`): for each host
//! launcher, its kernels' time by kernel-name category.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::Context;
use super::attribution::launcher_of;
use crate::analysis::common::kernel_categories::KernelCategories;
use crate::names::{col, sheet};
use crate::numeric::kahan_sum;
use crate::table::agg::desc_nan_last;
use crate::table::group::group_first_seen;
use crate::table::{Table, Value};

/// `kernel_category_by_launcher`: for each launcher name (the op the
/// kernels are attributed to, or the launch call itself, e.g.
/// `cudaGraphLaunch`), the kernel time per kernel category and its share
/// of the launcher's kernel time. Unlike the op sheets it counts
/// communication kernels too: a graph replay's all-reduce is part of what
/// the launch costs. Launchers by kernel time, largest first; within one,
/// categories by time.
pub fn sheet(cx: &Context, table: &KernelCategories) -> Table {
    let (trace, tree) = (cx.trace, cx.tree);
    let mut cache: FxHashMap<Option<crate::trace::StrId>, Arc<str>> = FxHashMap::default();
    let mut rows: Vec<(&str, Arc<str>, f64)> = Vec::new();
    for (k, e) in trace.events() {
        if !e.cat.is_gpu() {
            continue;
        }
        let Some(l) = launcher_of(trace, tree, k) else {
            continue;
        };
        let cat = cache
            .entry(e.name)
            .or_insert_with(|| Arc::from(table.categorize(trace.name_of(e))))
            .clone();
        rows.push((trace.name(l), cat, e.dur));
    }
    let launchers = group_first_seen(rows.iter().map(|r| r.0));
    let mut out = Table::new(
        sheet::KERNEL_CATEGORY_BY_LAUNCHER,
        &[
            col::NAME,
            col::KERNEL_CATEGORY,
            col::KERNEL_COUNT,
            col::KERNEL_TIME_MS,
            col::PERCENT_OF_LAUNCHER_TIME,
        ],
    );
    let mut blocks: Vec<(f64, Vec<Vec<Value>>)> = Vec::new();
    for (name, idx) in launchers {
        let durs: Vec<f64> = idx.iter().map(|&i| rows[i].2).collect();
        let total = kahan_sum(&durs);
        let cats = group_first_seen(idx.iter().map(|&i| rows[i].1.clone()));
        let mut block: Vec<(f64, Vec<Value>)> = cats
            .into_iter()
            .map(|(cat, ci)| {
                let d: Vec<f64> = ci.iter().map(|&j| rows[idx[j]].2).collect();
                let t = kahan_sum(&d);
                let share = if total > 0.0 {
                    t / total * 100.0
                } else {
                    f64::NAN
                };
                let row = vec![
                    Value::from(name),
                    Value::from(&*cat),
                    Value::Int(ci.len() as i64),
                    Value::Float(t / 1e3),
                    Value::Float(share),
                ];
                (t, row)
            })
            .collect();
        block.sort_by(|a, b| desc_nan_last(a.0, b.0));
        blocks.push((total, block.into_iter().map(|(_, r)| r).collect()));
    }
    blocks.sort_by(|a, b| desc_nan_last(a.0, b.0));
    for (_, block) in blocks {
        for row in block {
            out.push_row(row);
        }
    }
    out
}
