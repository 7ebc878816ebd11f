//! Summaries built from the matched collectives: `straggler_summary`
//! (which ranks the others wait for) and our per-type
//! `nccl_summary_by_type`.

use std::collections::HashMap;

use indexmap::IndexMap;

use super::implicit_sync::SyncRow;
use super::long::{LongRow, Nodes};
use super::values::{columns, num_value};
use crate::names::{col, sheet};
use crate::numeric::{kahan_sum, pairwise_sum};
use crate::table::agg::{Agg, asc_nan_last, desc_nan_last, round1, series_sum};
use crate::table::group::group_first_seen;
use crate::table::typing::{dataframe, widen_ints};
use crate::table::{Num, Table, Value};

// ---------------------------------------------------------------------------
// straggler_summary
// ---------------------------------------------------------------------------

/// Per-rank column order: the union over rows, in order of first
/// appearance, of each row's ranks.
fn rank_order(rows: &[&SyncRow]) -> Vec<i64> {
    let mut seen = std::collections::HashSet::new();
    let mut order = Vec::new();
    for r in rows {
        for (rank, ..) in &r.ranks {
            if seen.insert(*rank) {
                order.push(*rank);
            }
        }
    }
    order
}

/// The wait column of each rank of `order` over `rows`, typed as the
/// DataFrame types it.
fn wait_columns(rows: &[&SyncRow], order: &[i64]) -> Vec<Vec<Value>> {
    let column: HashMap<i64, usize> = order.iter().enumerate().map(|(j, &r)| (r, j)).collect();
    let mut cols: Vec<Vec<Value>> = vec![vec![Value::Null; rows.len()]; order.len()];
    for (i, r) in rows.iter().enumerate() {
        for (rank, _, _, wait) in &r.ranks {
            if let Some(&j) = column.get(rank) {
                cols[j][i] = wait.clone();
            }
        }
    }
    for c in cols.iter_mut() {
        widen_ints(c);
    }
    cols
}

/// Per row, the rank that arrived last: the least wait, the first column
/// on ties.
fn last_arrivals(order: &[i64], cols: &[Vec<Value>], nrows: usize) -> Vec<Option<i64>> {
    (0..nrows)
        .map(|i| {
            let mut best: Option<(Num, i64)> = None;
            for (j, &rank) in order.iter().enumerate() {
                if let Some(w) = cols[j][i].num()
                    && best.is_none_or(|(b, _)| w.lt(b))
                {
                    best = Some((w, rank));
                }
            }
            best.map(|b| b.1)
        })
        .collect()
}

/// Each rank's summed collective kernel time: a groupby sum while the
/// `dur` column is all ints, else a Kahan sum of floats.
fn dur_totals(long: &[LongRow]) -> HashMap<i64, Value> {
    let dur_col_is_int = long.iter().all(|r| matches!(r.dur, Value::Int(_)));
    let mut by_rank: HashMap<i64, Vec<&Value>> = HashMap::new();
    for r in long {
        by_rank.entry(r.rank).or_default().push(&r.dur);
    }
    by_rank
        .into_iter()
        .map(|(rank, durs)| {
            let total = if dur_col_is_int {
                Agg::Sum.apply(durs)
            } else {
                let f: Vec<f64> = durs.iter().map(|v| v.to_f64()).collect();
                Value::Float(kahan_sum(&f))
            };
            (rank, total)
        })
        .collect()
}

pub(super) fn straggler_sheet(
    sync: &[SyncRow],
    long: &[LongRow],
    nodes: Option<Nodes>,
) -> Option<Table> {
    let rows: Vec<&SyncRow> = sync.iter().filter(|r| r.straggler).collect();
    if rows.is_empty() {
        return None;
    }
    let order = rank_order(&rows);
    if order.is_empty() {
        return None;
    }
    let cols = wait_columns(&rows, &order);
    let last = last_arrivals(&order, &cols, rows.len());
    let num = rows.len() as i64;
    let mut ranks: Vec<(i64, usize)> = order.iter().copied().zip(0..).collect();
    ranks.sort();
    let dur_totals = dur_totals(long);
    let mut out: Vec<(Vec<Value>, f64)> = ranks
        .iter()
        .map(|&(rank, j)| {
            let waits: Vec<Num> = cols[j].iter().filter_map(Value::num).collect();
            let f: Vec<f64> = waits.iter().map(|n| n.f64()).collect();
            let total = num_value(series_sum(&waits));
            let mean = if f.is_empty() {
                Value::Null
            } else {
                Value::float_or_null(pairwise_sum(&f) / f.len() as f64)
            };
            let times_last = last.iter().filter(|l| **l == Some(rank)).count() as i64;
            let times_first = rows.iter().filter(|r| r.earliest == rank).count() as i64;
            let dur_total = dur_totals.get(&rank).cloned().unwrap_or(Value::Null);
            let total_f = total.to_f64();
            let mut vals = vec![
                Value::Int(rank),
                round1(total),
                round1(mean),
                Value::Int(times_last),
                Value::Int(times_first),
                round1(Value::Float(100.0 * times_last as f64 / num as f64)),
                Value::Int(num),
                round1(dur_total),
            ];
            if let Some(n) = nodes {
                vals.push(n.node_id(rank));
            }
            (vals, total_f)
        })
        .collect();
    // Ascending: the straggler (least waiting) first; stable on ties.
    out.sort_by(|a, b| asc_nan_last(a.1, b.1));
    let mut headers = vec![
        col::RANK,
        col::TOTAL_WAIT_TIME_US,
        col::MEAN_WAIT_TIME_US,
        col::TIMES_ARRIVED_LAST,
        col::TIMES_ARRIVED_FIRST,
        col::PCT_ARRIVED_LAST,
        col::NUM_COLLECTIVES,
        col::TOTAL_NCCL_DUR_US,
    ];
    if nodes.is_some() {
        headers.push(col::NODE_ID);
    }
    Some(dataframe(sheet::STRAGGLER_SUMMARY, columns(&headers, &out)))
}

// ---------------------------------------------------------------------------
// Our per-type summary (for people, and for the Markdown page)
// ---------------------------------------------------------------------------

pub(super) fn by_type_sheet(sync: &[SyncRow]) -> Table {
    let groups = group_first_seen(sync.iter().map(|r| r.kind.as_str()));
    let mean = |g: &[&SyncRow], f: fn(&SyncRow) -> &Value| Agg::Mean.apply(g.iter().map(|r| f(r)));
    let mut out: Vec<(Vec<Value>, f64)> = groups
        .into_iter()
        .map(|(kind, idx)| {
            let g: Vec<&SyncRow> = idx.iter().map(|&i| &sync[i]).collect();
            let lat: Vec<f64> = g.iter().filter_map(|r| r.comm_latency.as_f64()).collect();
            let total = pairwise_sum(&lat) / 1000.0;
            let mut names: Vec<String> = Vec::new();
            for r in &g {
                let n = r.name_shown.py_str();
                if !r.name_shown.is_missing() && !names.contains(&n) {
                    names.push(n);
                }
            }
            let vals = vec![
                Value::from(kind),
                Value::Int(g.len() as i64),
                Value::float_or_null(total),
                mean(&g, |r| &r.comm_latency),
                mean(&g, |r| &r.algo),
                mean(&g, |r| &r.bus),
                mean(&g, |r| &r.skew_start),
                mean(&g, |r| &r.skew_end),
                mean(&g, |r| &r.avg_wait),
                Value::Text(names.join(", ").into()),
                Value::Int(g.iter().filter(|r| r.inferred).count() as i64),
                Value::Text(slowest_ranks(&g).into()),
            ];
            (vals, total)
        })
        .collect();
    out.sort_by(|a, b| desc_nan_last(a.1, b.1));
    let headers = [
        col::COLLECTIVE_TYPE,
        col::COUNT_LC,
        col::TOTAL_COMM_LATENCY_MS,
        col::COMM_LATENCY_MEAN,
        col::ALGO_BW_MEAN,
        col::BUS_BW_MEAN,
        col::SKEW_IN_START_TIME_MEAN,
        col::SKEW_IN_END_TIME_MEAN,
        col::AVG_WAIT_TIME_MEAN,
        col::COLLECTIVE_NAMES,
        col::INFERRED_FROM_KERNEL_NAME,
        col::ARRIVED_LAST_MOST_OFTEN,
    ];
    dataframe(sheet::NCCL_SUMMARY_BY_TYPE, columns(&headers, &out))
}

/// Who arrived last (least wait; lowest rank on ties) in a group's
/// collectives, the three most frequent: `3 (5 of 8), 1 (2 of 8)`.
fn slowest_ranks(g: &[&SyncRow]) -> String {
    let mut last: IndexMap<i64, usize> = IndexMap::new();
    for r in g {
        let pick = r
            .ranks
            .iter()
            .filter_map(|(rank, _, _, w)| w.num().map(|w| (w, *rank)))
            .fold(None, |b: Option<(Num, i64)>, (w, rank)| match b {
                Some((bw, _)) if !w.lt(bw) => b,
                _ => Some((w, rank)),
            });
        if let Some((_, rank)) = pick {
            *last.entry(rank).or_default() += 1;
        }
    }
    let mut last: Vec<(i64, usize)> = last.into_iter().collect();
    last.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    last.iter()
        .take(3)
        .map(|(r, c)| format!("{r} ({c} of {})", g.len()))
        .collect::<Vec<_>>()
        .join(", ")
}
