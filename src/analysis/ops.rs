//! The op sheets built on the launcher table (spec 02 §5):
//! `ops_summary_by_category`, `ops_summary` and `ops_unique_args`.

use indexmap::IndexMap;

use super::intervals::events_busy_time;
use super::kernel_details;
use super::perf_sheets::nan_stats;
use super::{ArgReprs, Context};
use crate::numeric::{kahan_sum, pairwise_sum};
use crate::pyfmt::str_repr;
use crate::report::{Cell, Sheet};
use crate::trace::{EventId, StrId};

/// One row of the launcher table `L`.
#[derive(Debug, Clone)]
pub struct LauncherRow<'a> {
    /// Launcher event.
    pub uid: EventId,
    /// Launcher name.
    pub name: Option<StrId>,
    /// Busy time of its directly attributed kernels.
    pub direct: f64,
    /// Busy time of every GPU event below it.
    pub subtree: f64,
    /// Op category.
    pub category: &'static str,
    /// Its kernels, by start time.
    pub kernels: &'a [EventId],
}

/// Builds `L` in launcher order.
pub fn launcher_rows<'a>(cx: &'a Context) -> Vec<LauncherRow<'a>> {
    let (trace, tree) = (cx.trace, cx.tree);
    cx.attribution
        .launchers
        .iter()
        .map(|l| {
            let e = trace.event(l.uid);
            let first = l.kernels.first().map(|&k| trace.name(k));
            LauncherRow {
                uid: l.uid,
                name: e.name,
                direct: events_busy_time(trace, &l.kernels),
                subtree: events_busy_time(trace, &tree.gpu_events(trace, l.uid)),
                category: super::categories::categorize(trace.name_of(e), first),
                kernels: &l.kernels,
            }
        })
        .collect()
}

/// Percentages of `values` against their pairwise total, and the running sum.
fn percentages(values: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let total = pairwise_sum(values);
    let pct: Vec<f64> = values.iter().map(|v| (v / total) * 100.0).collect();
    let mut run = 0.0;
    let cum = pct
        .iter()
        .map(|p| {
            run += p;
            run
        })
        .collect();
    (pct, cum)
}

/// Sorts group indices by `key` descending, stable.
fn sort_desc(order: &mut [usize], key: &[f64]) {
    order.sort_by(|&a, &b| key[b].total_cmp(&key[a]));
}

/// `ops_summary_by_category`.
pub fn summary_by_category(rows: &[LauncherRow]) -> Sheet {
    let mut groups: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    for r in rows {
        groups.entry(r.category).or_default().push(r.direct);
    }
    let keys: Vec<&str> = groups.keys().copied().collect();
    let sums: Vec<f64> = groups.values().map(|v| kahan_sum(v)).collect();
    let counts: Vec<usize> = groups.values().map(|v| v.len()).collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    sort_desc(&mut order, &sums);
    let ms: Vec<f64> = order.iter().map(|&i| sums[i] / 1000.0).collect();
    let (pct, cum) = percentages(&ms);
    let mut s = Sheet::new(
        "ops_summary_by_category",
        &[
            "op category",
            "Count",
            "total_direct_kernel_time_ms",
            "Percentage (%)",
            "Cumulative Percentage (%)",
        ],
    );
    for (j, &i) in order.iter().enumerate() {
        s.rows.push(vec![
            Cell::Text(keys[i].to_string()),
            Cell::Int(counts[i] as i64),
            Cell::Float(ms[j]),
            Cell::Float(pct[j]),
            Cell::Float(cum[j]),
        ]);
    }
    s
}

/// `ops_summary`.
pub fn summary(cx: &Context, rows: &[LauncherRow]) -> Sheet {
    struct G {
        direct: Vec<f64>,
        subtree: Vec<f64>,
        cats: std::collections::BTreeSet<&'static str>,
    }
    let mut groups: std::collections::BTreeMap<&str, G> = Default::default();
    for r in rows {
        let g = groups.entry(cx.trace.name(r.uid)).or_insert_with(|| G {
            direct: Vec::new(),
            subtree: Vec::new(),
            cats: Default::default(),
        });
        g.direct.push(r.direct);
        g.subtree.push(r.subtree);
        g.cats.insert(r.category);
    }
    let keys: Vec<&str> = groups.keys().copied().collect();
    let gs: Vec<&G> = groups.values().collect();
    let dsum: Vec<f64> = gs.iter().map(|g| kahan_sum(&g.direct)).collect();
    let ssum: Vec<f64> = gs.iter().map(|g| kahan_sum(&g.subtree)).collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    sort_desc(&mut order, &dsum);
    let ms: Vec<f64> = order.iter().map(|&i| dsum[i] / 1000.0).collect();
    let (pct, cum) = percentages(&ms);
    let mut s = Sheet::new(
        "ops_summary",
        &[
            "name",
            "total_direct_kernel_time_sum",
            "total_subtree_kernel_time_sum",
            "total_direct_kernel_time_ms",
            "total_subtree_kernel_time_ms",
            "Count",
            "Categories",
            "Percentage (%)",
            "Cumulative Percentage (%)",
        ],
    );
    for (j, &i) in order.iter().enumerate() {
        let cats: Vec<String> = gs[i].cats.iter().map(|c| str_repr(c)).collect();
        s.rows.push(vec![
            Cell::Text(keys[i].to_string()),
            Cell::Float(dsum[i]),
            Cell::Float(ssum[i]),
            Cell::Float(ms[j]),
            Cell::Float(ssum[i] / 1000.0),
            Cell::Int(gs[i].direct.len() as i64),
            Cell::Text(format!("[{}]", cats.join(", "))),
            Cell::Float(pct[j]),
            Cell::Float(cum[j]),
        ]);
    }
    s
}

/// Mean, median, sample std, min, max and sum of a group's values, pandas style.
pub fn stats(v: &[f64]) -> [Cell; 6] {
    // A NaN std (one value) is written as an empty cell, as pandas does.
    let [mean, median, std, min, max] = nan_stats(v);
    [mean, median, std, min, max, kahan_sum(v)].map(Cell::Float)
}

/// The grouping key columns shared by `ops_unique_args` and
/// `unified_perf_summary`, after `name` and `op category`.
pub const ARG_KEYS: [&str; 7] = [
    "process_name",
    "process_label",
    "thread_name",
    "Input Dims",
    "Input type",
    "Input Strides",
    "Concrete Inputs",
];

/// The key cells (as Python `str()` texts) of an op event for the columns of
/// [`ARG_KEYS`]; absent arguments are `None`.
pub fn arg_key_texts(cx: &Context, reprs: &mut ArgReprs, uid: EventId) -> [Option<String>; 7] {
    let (pname, plabel, tname) = cx.process_names(uid);
    let a = cx.trace.args(uid).copied().unwrap_or_default();
    [
        Some(pname),
        Some(plabel),
        Some(tname),
        reprs.get(cx.trace, a.input_dims),
        reprs.get(cx.trace, a.input_type),
        reprs.get(cx.trace, a.input_strides),
        reprs.get(cx.trace, a.concrete_inputs),
    ]
}

/// `ops_unique_args`.
pub fn unique_args(cx: &Context, rows: &[LauncherRow]) -> Sheet {
    struct G {
        keys: Vec<Option<String>>,
        rows: Vec<usize>,
    }
    let mut reprs = ArgReprs::default();
    let mut groups: IndexMap<Vec<String>, G> = IndexMap::new();
    for (ri, r) in rows.iter().enumerate() {
        let mut keys: Vec<Option<String>> = vec![
            Some(cx.trace.name(r.uid).to_string()),
            Some(r.category.to_string()),
        ];
        keys.extend(arg_key_texts(cx, &mut reprs, r.uid));
        let text: Vec<String> = keys
            .iter()
            .map(|k| k.clone().unwrap_or_else(|| "None".to_string()))
            .collect();
        let g = groups.entry(text).or_insert_with(|| G {
            keys: keys.clone(),
            rows: Vec::new(),
        });
        // Key cells show the first non-null value of the group.
        for (slot, k) in g.keys.iter_mut().zip(keys) {
            if slot.is_none() {
                *slot = k;
            }
        }
        g.rows.push(ri);
    }
    let gs: Vec<&G> = groups.values().collect();
    let sums: Vec<f64> = gs
        .iter()
        .map(|g| kahan_sum(&g.rows.iter().map(|&i| rows[i].direct).collect::<Vec<_>>()))
        .collect();
    let ex_uid: Vec<EventId> = gs.iter().map(|g| rows[g.rows[0]].uid).collect();
    let mut order: Vec<usize> = (0..gs.len()).collect();
    order.sort_by(|&a, &b| sums[b].total_cmp(&sums[a]).then(ex_uid[a].cmp(&ex_uid[b])));
    let sorted_sums: Vec<f64> = order.iter().map(|&i| sums[i]).collect();
    let (pct, cum) = percentages(&sorted_sums);

    let mut cols: Vec<String> = ["name", "op category"]
        .iter()
        .chain(ARG_KEYS.iter())
        .chain(["operation_count"].iter())
        .map(|c| c.to_string())
        .collect();
    for stat in ["mean", "median", "std", "min", "max", "sum"] {
        for which in ["direct", "subtree"] {
            cols.push(format!("total_{which}_kernel_time_{stat}"));
        }
    }
    for c in [
        "ex_UID",
        "kernel_details_summary",
        "trunc_kernel_details",
        "Percentage (%)",
        "Cumulative Percentage (%)",
    ] {
        cols.push(c.to_string());
    }
    let mut s = Sheet {
        name: "ops_unique_args".to_string(),
        columns: cols,
        rows: Vec::new(),
    };
    for (j, &i) in order.iter().enumerate() {
        let g = gs[i];
        let mut row: Vec<Cell> = g
            .keys
            .iter()
            .map(|k| k.clone().map(Cell::Text).unwrap_or(Cell::Empty))
            .collect();
        row.push(Cell::Int(g.rows.len() as i64));
        let direct: Vec<f64> = g.rows.iter().map(|&r| rows[r].direct).collect();
        let subtree: Vec<f64> = g.rows.iter().map(|&r| rows[r].subtree).collect();
        for (d, t) in stats(&direct).into_iter().zip(stats(&subtree)) {
            row.push(d);
            row.push(t);
        }
        row.push(Cell::Int(ex_uid[i].index() as i64));
        let lists: Vec<&[EventId]> = g.rows.iter().map(|&r| rows[r].kernels).collect();
        let ks = kernel_details::summarise(cx.trace, &lists);
        row.push(Cell::Text(kernel_details::summary_text(&ks)));
        row.push(
            kernel_details::trunc_text(&ks)
                .map(Cell::Text)
                .unwrap_or(Cell::Empty),
        );
        row.push(Cell::Float(pct[j]));
        row.push(Cell::Float(cum[j]));
        s.rows.push(row);
    }
    s
}
