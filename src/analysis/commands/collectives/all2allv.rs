//! The all_to_allv sheets: `nccl_all2allv`, one row per
//! all_to_allv instance with per-rank columns, and its summary.

use super::implicit_sync::{Getter, Timing, by_collective, check_consistent};
use super::long::{LongRow, Nodes};
use super::values::{columns, num_value, record_columns};
use crate::names::{col, sheet};
use crate::table::agg::{Agg, desc_nan_last, first_present, num_max, num_min, num_sum};
use crate::table::group::group_sorted;
use crate::table::typing::{dataframe, widen_ints};
use crate::table::{Column, Num, Table, Value};

// ---------------------------------------------------------------------------
// all_to_allv
// ---------------------------------------------------------------------------

/// What the ranks of an all_to_allv must also agree on.
const A2AV_FIELDS: [Getter; 1] = [(col::STREAM, |r| &r.stream)];

const A2AV_RANK_COLS: [&str; 8] = [
    col::TS,
    col::DUR,
    col::IN_MSG_NELEMS,
    col::OUT_MSG_NELEMS,
    col::IN_MSG_SIZE_MB,
    col::OUT_MSG_SIZE_MB,
    col::IN_SPLIT_SIZE,
    col::OUT_SPLIT_SIZE,
];

const A2AV_GENERAL: [&str; 19] = [
    col::COLLECTIVE_ID,
    col::PROCESS_GROUP_NAME,
    col::PROCESS_GROUP_RANKS,
    col::COLLECTIVE_NAME,
    col::GROUP_SIZE,
    col::DTYPE,
    col::STREAM,
    col::TOTAL_DATA_COMMUNICATED_MB,
    col::TOTAL_NELEMS_COMMUNICATED,
    col::WALL_TIME_US,
    col::MAX_RANK_DUR_US,
    col::MIN_RANK_DUR_US,
    col::AVG_RANK_DUR_US,
    col::THROUGHPUT,
    col::MAX_RANK_THROUGHPUT,
    col::MIN_RANK_THROUGHPUT,
    col::SIZE_IMBALANCE,
    col::SKEW_IN_START_TIME,
    col::SKEW_IN_END_TIME,
];

/// One all_to_allv instance: general values (in [`A2AV_GENERAL`] order) and
/// named per-rank values.
pub(super) struct A2av {
    general: Vec<Value>,
    per_rank: Vec<(String, Value)>,
}

pub(super) fn build_a2av(rows: &[LongRow]) -> Result<Vec<A2av>, String> {
    let mut out = Vec::new();
    for (cid, idx) in by_collective(rows) {
        if rows[idx[0]].coll_name.as_str() != Some("all_to_allv") {
            continue;
        }
        check_consistent(cid, rows, &idx, &A2AV_FIELDS)?;
        let g: Vec<&LongRow> = idx.iter().map(|&i| &rows[i]).collect();
        if let Some(item) = a2av_item(cid, &g) {
            out.push(item);
        }
    }
    out.sort_by(|a, b| desc_nan_last(a.general[7].to_f64(), b.general[7].to_f64()));
    // Type the general columns as the reference's DataFrame does.
    for j in 0..A2AV_GENERAL.len() {
        widen_ints(out.iter_mut().map(|a| &mut a.general[j]));
    }
    Ok(out)
}

/// The per-rank cells of an all_to_allv (its rows `g`) that started at
/// `first_start` and ended at `last_end`: each rank's values, then each
/// rank's start and end skews.
fn a2av_rank_cells(g: &[&LongRow], first_start: Num, last_end: Num) -> Vec<(String, Value)> {
    let mut per_rank = Vec::new();
    for r in g {
        let vals = [
            &r.ts,
            &r.dur,
            &r.in_nelems,
            &r.out_nelems,
            &r.in_mb,
            &r.out_mb,
            &r.in_split,
            &r.out_split,
        ];
        for (c, v) in A2AV_RANK_COLS.iter().zip(vals) {
            per_rank.push((format!("{}{}_{c}", col::RANK_PREFIX, r.rank), v.clone()));
        }
    }
    for r in g {
        let (t, d) = (r.ts.num(), r.dur.num());
        let start = t.map_or(Value::Null, |t| num_value(t - first_start));
        let end = match (t, d) {
            (Some(t), Some(d)) => num_value(last_end - (t + d)),
            _ => Value::Null,
        };
        let prefix = format!("{}{}_", col::RANK_PREFIX, r.rank);
        per_rank.push((format!("{prefix}{}", col::SKEW_IN_START_TIME), start));
        per_rank.push((format!("{prefix}{}", col::SKEW_IN_END_TIME), end));
    }
    per_rank
}

/// The all_to_allv `cid` (its rows `g`, one per rank); None when no rank
/// has a start and a duration.
fn a2av_item(cid: &str, g: &[&LongRow]) -> Option<A2av> {
    let first = g[0];
    let t = Timing::of(g.iter().copied());
    let ((es, ls), (ee, le)) = (t.starts()?, t.ends()?);
    // A missing size makes the totals NaN (the reference would crash).
    let sizes: Vec<f64> = g.iter().map(|r| r.in_mb.to_f64()).collect();
    let total_mb = sizes.iter().fold(0.0, |a, b| a + b);
    let nelems: Option<Vec<Num>> = g.iter().map(|r| r.in_nelems.num()).collect();
    let total_nelems = nelems.map_or(Value::Null, |v| num_value(num_sum(v)));
    let wall = le - es;
    let throughput = if wall.f64() > 0.0 {
        (total_mb / 1024.0) / (wall.f64() / 1e6)
    } else {
        f64::NAN
    };
    let rank_tp: Vec<f64> = g
        .iter()
        .filter_map(|r| {
            let (s, d) = (r.in_mb.to_f64(), r.dur.to_f64());
            (s > 0.0 && d > 0.0).then(|| (s / 1024.0) / (d / 1e6))
        })
        .collect();
    let mean_size = total_mb / sizes.len() as f64;
    let imbalance = if mean_size > 0.0 {
        sizes.iter().copied().fold(f64::NEG_INFINITY, f64::max) / mean_size
    } else {
        f64::NAN
    };
    let durs = || t.durs.iter().copied();
    let tp = |f: fn(f64, f64) -> f64| {
        rank_tp
            .iter()
            .copied()
            .reduce(f)
            .map_or(Value::Null, Value::float_or_null)
    };
    let general = vec![
        Value::Text(cid.into()),
        first.pg_name.clone(),
        first.pg_ranks.clone(),
        first.coll_name.clone(),
        first.group_size.clone(),
        first.dtype.clone(),
        first.stream.clone(),
        Value::float_or_null(total_mb),
        total_nelems,
        num_value(wall),
        num_max(durs()).map_or(Value::Null, num_value),
        num_min(durs()).map_or(Value::Null, num_value),
        Value::float_or_null(num_sum(durs()).f64() / t.durs.len().max(1) as f64),
        Value::float_or_null(throughput),
        tp(f64::max),
        tp(f64::min),
        Value::float_or_null(imbalance),
        num_value(ls - es),
        num_value(le - ee),
    ];
    let per_rank = a2av_rank_cells(g, es, le);
    Some(A2av { general, per_rank })
}

pub(super) fn a2av_sheet(items: &[A2av], nodes: Option<Nodes>) -> Table {
    let mut cols: Vec<Column> = A2AV_GENERAL
        .iter()
        .enumerate()
        .map(|(j, h)| Column::new(h, items.iter().map(|a| a.general[j].clone()).collect()))
        .collect();
    let records = items.iter().map(|a| a.per_rank.clone());
    cols.extend(record_columns(records, items.len()));
    if let Some(n) = nodes {
        let span = items.iter().map(|a| n.span(&a.general[2])).collect();
        cols.push(Column::new(col::NODE_SPAN, span));
    }
    dataframe(sheet::NCCL_ALL2ALLV, cols)
}

/// Index of general column `name` in [`A2AV_GENERAL`].
fn general(name: &str) -> usize {
    A2AV_GENERAL.iter().position(|h| *h == name).unwrap_or(0)
}

/// One group's cells of `nccl_summary_all2allv` after its key, each with
/// its header, and its total wall time in ms.
fn summary_a2av_cells(
    items: &[A2av],
    idx: &[usize],
    aggs: &[Agg],
    nodes: Option<Nodes>,
) -> (Vec<(String, Value)>, f64) {
    let column = |name: &str| -> Vec<&Value> {
        idx.iter()
            .map(|&i| &items[i].general[general(name)])
            .collect()
    };
    let mut cells: Vec<(String, Value)> = Vec::new();
    let aggregate = |name: &str, aggs: &[Agg], cells: &mut Vec<(String, Value)>| {
        let c = column(name);
        cells.extend(
            aggs.iter()
                .map(|a| (a.column(name), a.apply(c.iter().copied()))),
        );
    };
    aggregate(col::TOTAL_DATA_COMMUNICATED_MB, aggs, &mut cells);
    aggregate(col::WALL_TIME_US, aggs, &mut cells);
    let total_wall = Agg::Sum.apply(column(col::WALL_TIME_US));
    let total_wall_ms = total_wall.to_f64() / 1000.0;
    cells.push((col::TOTAL_WALL_TIME_US.into(), total_wall));
    aggregate(col::THROUGHPUT, aggs, &mut cells);
    for name in [
        col::SIZE_IMBALANCE,
        col::MAX_RANK_DUR_US,
        col::SKEW_IN_START_TIME,
        col::SKEW_IN_END_TIME,
    ] {
        aggregate(name, &[Agg::Mean, Agg::Max], &mut cells);
    }
    cells.push((col::COUNT_LC.into(), Value::Int(idx.len() as i64)));
    for name in [
        col::PROCESS_GROUP_RANKS,
        col::COLLECTIVE_NAME,
        col::GROUP_SIZE,
    ] {
        cells.push((name.into(), first_present(column(name))));
    }
    let ms = Value::float_or_null(total_wall_ms);
    cells.push((col::TOTAL_WALL_TIME_MS.into(), ms));
    if let Some(n) = nodes {
        let ranks = first_present(column(col::PROCESS_GROUP_RANKS));
        cells.push((col::NODE_SPAN.into(), n.span(&ranks)));
    }
    (cells, total_wall_ms)
}

pub(super) fn summary_a2av_sheet(
    items: &[A2av],
    aggs: &[Agg],
    nodes: Option<Nodes>,
) -> Option<Table> {
    let groups = group_sorted(
        items.iter().map(|a| {
            vec![
                a.general[general(col::PROCESS_GROUP_NAME)].clone(),
                a.general[general(col::DTYPE)].clone(),
            ]
        }),
        true,
    );
    let mut headers: Vec<String> = vec![col::PROCESS_GROUP_NAME.into(), col::DTYPE.into()];
    let mut rows: Vec<(Vec<Value>, f64)> = Vec::new();
    for (mut key, idx) in groups {
        let (cells, total_wall_ms) = summary_a2av_cells(items, &idx, aggs, nodes);
        if rows.is_empty() {
            headers.extend(cells.iter().map(|(h, _)| h.clone()));
        }
        key.extend(cells.into_iter().map(|(_, v)| v));
        rows.push((key, total_wall_ms));
    }
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| desc_nan_last(a.1, b.1));
    Some(dataframe(
        sheet::NCCL_SUMMARY_ALL2ALLV,
        columns(&headers, &rows),
    ))
}
