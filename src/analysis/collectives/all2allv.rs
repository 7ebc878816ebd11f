//! The all_to_allv sheets (spec A8): `nccl_all2allv`, one row per
//! all_to_allv instance with per-rank columns, and its summary.

use indexmap::IndexMap;

use super::implicit_sync::{Getter, by_collective, check_consistent};
use super::long::{LongRow, Nodes};
use super::values::num_value;
use crate::names::{col, sheet};
use crate::table::agg::{Agg, desc_nan_last, first_present, num_max, num_min, num_sum};
use crate::table::group::group_sorted;
use crate::table::typing::{dataframe, widen_ints};
use crate::table::{Column, Num, Table, Value};

// ---------------------------------------------------------------------------
// all_to_allv (spec A8)
// ---------------------------------------------------------------------------

const A2AV_FIELDS: [Getter; 6] = [
    (col::PROCESS_GROUP_NAME, |r| &r.pg_name),
    (col::PROCESS_GROUP_RANKS, |r| &r.pg_ranks),
    (col::COLLECTIVE_NAME, |r| &r.coll_name),
    (col::GROUP_SIZE, |r| &r.group_size),
    (col::DTYPE, |r| &r.dtype),
    (col::STREAM, |r| &r.stream),
];

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
        let first = &rows[idx[0]];
        if first.coll_name.as_str() != Some("all_to_allv") {
            continue;
        }
        check_consistent(cid, rows, &idx, &A2AV_FIELDS)?;
        let g: Vec<&LongRow> = idx.iter().map(|&i| &rows[i]).collect();
        let ts: Vec<Num> = g.iter().filter_map(|r| r.ts.num()).collect();
        let durs: Vec<Num> = g.iter().filter_map(|r| r.dur.num()).collect();
        let ends: Vec<Num> = ts.iter().zip(&durs).map(|(t, d)| *t + *d).collect();
        let (Some(es), Some(ls), Some(ee), Some(le)) = (
            num_min(ts.iter().copied()),
            num_max(ts.iter().copied()),
            num_min(ends.iter().copied()),
            num_max(ends.iter().copied()),
        ) else {
            continue;
        };
        let mut per_rank = Vec::new();
        for r in &g {
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
        for r in &g {
            let (t, d) = (r.ts.num(), r.dur.num());
            let start = t.map_or(Value::Null, |t| num_value(t - es));
            let end = match (t, d) {
                (Some(t), Some(d)) => num_value(le - (t + d)),
                _ => Value::Null,
            };
            let prefix = format!("{}{}_", col::RANK_PREFIX, r.rank);
            per_rank.push((format!("{prefix}{}", col::SKEW_IN_START_TIME), start));
            per_rank.push((format!("{prefix}{}", col::SKEW_IN_END_TIME), end));
        }
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
        let general = vec![
            Value::Text(cid.to_string()),
            first.pg_name.clone(),
            first.pg_ranks.clone(),
            first.coll_name.clone(),
            first.group_size.clone(),
            first.dtype.clone(),
            first.stream.clone(),
            Value::float_or_null(total_mb),
            total_nelems,
            num_value(wall),
            num_max(durs.iter().copied()).map_or(Value::Null, num_value),
            num_min(durs.iter().copied()).map_or(Value::Null, num_value),
            Value::float_or_null(num_sum(durs.iter().copied()).f64() / durs.len().max(1) as f64),
            Value::float_or_null(throughput),
            rank_tp
                .iter()
                .copied()
                .reduce(f64::max)
                .map_or(Value::Null, Value::float_or_null),
            rank_tp
                .iter()
                .copied()
                .reduce(f64::min)
                .map_or(Value::Null, Value::float_or_null),
            Value::float_or_null(imbalance),
            num_value(ls - es),
            num_value(le - ee),
        ];
        out.push(A2av { general, per_rank });
    }
    out.sort_by(|a, b| desc_nan_last(a.general[7].to_f64(), b.general[7].to_f64()));
    // Type the general columns as the reference's DataFrame does.
    for j in 0..A2AV_GENERAL.len() {
        widen_ints(out.iter_mut().map(|a| &mut a.general[j]));
    }
    Ok(out)
}

pub(super) fn a2av_sheet(items: &[A2av], nodes: Option<Nodes>) -> Table {
    let mut cols: Vec<Column> = A2AV_GENERAL
        .iter()
        .enumerate()
        .map(|(j, h)| Column::new(h, items.iter().map(|a| a.general[j].clone()).collect()))
        .collect();
    let mut names: IndexMap<&str, Vec<Value>> = IndexMap::new();
    for a in items {
        for (n, _) in &a.per_rank {
            names.entry(n.as_str()).or_default();
        }
    }
    for c in names.values_mut() {
        *c = vec![Value::Null; items.len()];
    }
    for (i, a) in items.iter().enumerate() {
        for (n, v) in &a.per_rank {
            if let Some(c) = names.get_mut(n.as_str()) {
                c[i] = v.clone();
            }
        }
    }
    for (n, values) in names {
        cols.push(Column::new(n, values));
    }
    if let Some(n) = nodes {
        let span = items.iter().map(|a| n.span(&a.general[2])).collect();
        cols.push(Column::new(col::NODE_SPAN, span));
    }
    dataframe(sheet::NCCL_ALL2ALLV, cols)
}

pub(super) fn summary_a2av_sheet(
    items: &[A2av],
    aggs: &[Agg],
    nodes: Option<Nodes>,
) -> Option<Table> {
    let g = |name: &str| A2AV_GENERAL.iter().position(|h| *h == name).unwrap_or(0);
    let groups = group_sorted(
        items.iter().map(|a| {
            vec![
                a.general[g(col::PROCESS_GROUP_NAME)].clone(),
                a.general[g(col::DTYPE)].clone(),
            ]
        }),
        true,
    );
    if groups.is_empty() {
        return None;
    }
    let mut headers: Vec<String> = vec![col::PROCESS_GROUP_NAME.into(), col::DTYPE.into()];
    let mut rows: Vec<(Vec<Value>, f64)> = Vec::new();
    let mut first = true;
    for (key, idx) in groups {
        let column = |name: &str| -> Vec<&Value> {
            idx.iter().map(|&i| &items[i].general[g(name)]).collect()
        };
        let mut vals = key;
        let mut push = |h: String, v: Value, vals: &mut Vec<Value>| {
            if first {
                headers.push(h);
            }
            vals.push(v);
        };
        for name in [col::TOTAL_DATA_COMMUNICATED_MB, col::WALL_TIME_US] {
            let c = column(name);
            for a in aggs {
                push(a.column(name), a.apply(c.iter().copied()), &mut vals);
            }
        }
        let total_wall = Agg::Sum.apply(column(col::WALL_TIME_US));
        let total_wall_ms = total_wall.to_f64() / 1000.0;
        push(col::TOTAL_WALL_TIME_US.into(), total_wall, &mut vals);
        let c = column(col::THROUGHPUT);
        for a in aggs {
            push(
                a.column(col::THROUGHPUT),
                a.apply(c.iter().copied()),
                &mut vals,
            );
        }
        for name in [
            col::SIZE_IMBALANCE,
            col::MAX_RANK_DUR_US,
            col::SKEW_IN_START_TIME,
            col::SKEW_IN_END_TIME,
        ] {
            let c = column(name);
            for a in [Agg::Mean, Agg::Max] {
                push(a.column(name), a.apply(c.iter().copied()), &mut vals);
            }
        }
        push(
            col::COUNT_LC.into(),
            Value::Int(idx.len() as i64),
            &mut vals,
        );
        for name in [
            col::PROCESS_GROUP_RANKS,
            col::COLLECTIVE_NAME,
            col::GROUP_SIZE,
        ] {
            push(name.into(), first_present(column(name)), &mut vals);
        }
        push(
            col::TOTAL_WALL_TIME_MS.into(),
            Value::float_or_null(total_wall_ms),
            &mut vals,
        );
        if let Some(n) = nodes {
            let ranks = first_present(column(col::PROCESS_GROUP_RANKS));
            push(col::NODE_SPAN.into(), n.span(&ranks), &mut vals);
        }
        first = false;
        rows.push((vals, total_wall_ms));
    }
    rows.sort_by(|a, b| desc_nan_last(a.1, b.1));
    let cols = headers
        .iter()
        .enumerate()
        .map(|(j, h)| Column::new(h, rows.iter().map(|r| r.0[j].clone()).collect()))
        .collect();
    Some(dataframe(sheet::NCCL_SUMMARY_ALL2ALLV, cols))
}
