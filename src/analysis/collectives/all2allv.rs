//! The all_to_allv sheets (spec A8): `nccl_all2allv`, one row per
//! all_to_allv instance with per-rank columns, and its summary.

use indexmap::IndexMap;

use super::implicit_sync::{Getter, by_collective, check_consistent};
use super::long::{LongRow, Nodes};
use super::values::{
    Agg, N, Val, first_non_null, group_sorted, n_max, n_min, n_sum, normalize, sheet_of,
    sort_desc_by,
};
use crate::report::Sheet;

// ---------------------------------------------------------------------------
// all_to_allv (spec A8)
// ---------------------------------------------------------------------------

const A2AV_FIELDS: [Getter; 6] = [
    ("Process Group Name", |r| &r.pg_name),
    ("Process Group Ranks", |r| &r.pg_ranks),
    ("Collective name", |r| &r.coll_name),
    ("Group size", |r| &r.group_size),
    ("dtype", |r| &r.dtype),
    ("stream", |r| &r.stream),
];

const A2AV_RANK_COLS: [&str; 8] = [
    "ts",
    "dur",
    "In msg nelems",
    "Out msg nelems",
    "In msg size (MB)",
    "Out msg size (MB)",
    "In split size",
    "Out split size",
];

const A2AV_GENERAL: [&str; 19] = [
    "collective_id",
    "Process Group Name",
    "Process Group Ranks",
    "Collective name",
    "Group size",
    "dtype",
    "stream",
    "total data communicated (MB)",
    "total nelems communicated",
    "wall_time (us)",
    "max_rank_dur (us)",
    "min_rank_dur (us)",
    "avg_rank_dur (us)",
    "throughput (GB/s)",
    "max_rank_throughput (GB/s)",
    "min_rank_throughput (GB/s)",
    "size_imbalance",
    "skew in start time",
    "skew in end time",
];

/// One all_to_allv instance: general values (in [`A2AV_GENERAL`] order) and
/// named per-rank values.
pub(super) struct A2av {
    general: Vec<Val>,
    per_rank: Vec<(String, Val)>,
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
        let ts: Vec<N> = g.iter().filter_map(|r| r.ts.num()).collect();
        let durs: Vec<N> = g.iter().filter_map(|r| r.dur.num()).collect();
        let ends: Vec<N> = ts.iter().zip(&durs).map(|(t, d)| t.add(*d)).collect();
        let (Some(es), Some(ls), Some(ee), Some(le)) = (
            n_min(ts.iter().copied()),
            n_max(ts.iter().copied()),
            n_min(ends.iter().copied()),
            n_max(ends.iter().copied()),
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
                per_rank.push((format!("rank_{}_{c}", r.rank), v.clone()));
            }
        }
        for r in &g {
            let (t, d) = (r.ts.num(), r.dur.num());
            let start = t.map_or(Val::Null, |t| t.sub(es).val());
            let end = match (t, d) {
                (Some(t), Some(d)) => le.sub(t.add(d)).val(),
                _ => Val::Null,
            };
            per_rank.push((format!("rank_{}_skew in start time", r.rank), start));
            per_rank.push((format!("rank_{}_skew in end time", r.rank), end));
        }
        // A missing size makes the totals NaN (the reference would crash).
        let sizes: Vec<f64> = g.iter().map(|r| r.in_mb.f64()).collect();
        let total_mb = sizes.iter().fold(0.0, |a, b| a + b);
        let nelems: Option<Vec<N>> = g.iter().map(|r| r.in_nelems.num()).collect();
        let total_nelems = nelems.map_or(Val::Null, |v| n_sum(v).val());
        let wall = le.sub(es);
        let throughput = if wall.f() > 0.0 {
            (total_mb / 1024.0) / (wall.f() / 1e6)
        } else {
            f64::NAN
        };
        let rank_tp: Vec<f64> = g
            .iter()
            .filter_map(|r| {
                let (s, d) = (r.in_mb.f64(), r.dur.f64());
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
            Val::Str(cid.to_string()),
            first.pg_name.clone(),
            first.pg_ranks.clone(),
            first.coll_name.clone(),
            first.group_size.clone(),
            first.dtype.clone(),
            first.stream.clone(),
            Val::float(total_mb),
            total_nelems,
            wall.val(),
            n_max(durs.iter().copied()).map_or(Val::Null, N::val),
            n_min(durs.iter().copied()).map_or(Val::Null, N::val),
            Val::float(n_sum(durs.iter().copied()).f() / durs.len().max(1) as f64),
            Val::float(throughput),
            rank_tp
                .iter()
                .copied()
                .reduce(f64::max)
                .map_or(Val::Null, Val::float),
            rank_tp
                .iter()
                .copied()
                .reduce(f64::min)
                .map_or(Val::Null, Val::float),
            Val::float(imbalance),
            ls.sub(es).val(),
            le.sub(ee).val(),
        ];
        out.push(A2av { general, per_rank });
    }
    sort_desc_by(&mut out, |a| a.general[7].f64());
    // Type the general columns as the reference's DataFrame does.
    for j in 0..A2AV_GENERAL.len() {
        let mut col: Vec<&mut Val> = out.iter_mut().map(|a| &mut a.general[j]).collect();
        normalize(&mut col);
    }
    Ok(out)
}

pub(super) fn a2av_sheet(items: &[A2av], nodes: Option<Nodes>) -> Sheet {
    let mut cols: Vec<(String, Vec<Val>)> = A2AV_GENERAL
        .iter()
        .enumerate()
        .map(|(j, h)| {
            (
                h.to_string(),
                items.iter().map(|a| a.general[j].clone()).collect(),
            )
        })
        .collect();
    let mut names: IndexMap<&str, Vec<Val>> = IndexMap::new();
    for a in items {
        for (n, _) in &a.per_rank {
            names.entry(n.as_str()).or_default();
        }
    }
    for c in names.values_mut() {
        *c = vec![Val::Null; items.len()];
    }
    for (i, a) in items.iter().enumerate() {
        for (n, v) in &a.per_rank {
            if let Some(c) = names.get_mut(n.as_str()) {
                c[i] = v.clone();
            }
        }
    }
    for (n, values) in names {
        cols.push((n.to_string(), values));
    }
    if let Some(n) = nodes {
        cols.push((
            "node_span".into(),
            items.iter().map(|a| n.span(&a.general[2])).collect(),
        ));
    }
    sheet_of("nccl_all2allv", cols)
}

pub(super) fn summary_a2av_sheet(
    items: &[A2av],
    aggs: &[Agg],
    nodes: Option<Nodes>,
) -> Option<Sheet> {
    let g = |name: &str| A2AV_GENERAL.iter().position(|h| *h == name).unwrap_or(0);
    let groups = group_sorted(
        items,
        |a| {
            vec![
                a.general[g("Process Group Name")].clone(),
                a.general[g("dtype")].clone(),
            ]
        },
        true,
    );
    if groups.is_empty() {
        return None;
    }
    let mut headers: Vec<String> = vec!["Process Group Name".into(), "dtype".into()];
    let mut rows: Vec<(Vec<Val>, f64)> = Vec::new();
    let mut first = true;
    for (key, idx) in groups {
        let col =
            |name: &str| -> Vec<&Val> { idx.iter().map(|&i| &items[i].general[g(name)]).collect() };
        let mut vals = key;
        let mut push = |h: String, v: Val, vals: &mut Vec<Val>| {
            if first {
                headers.push(h);
            }
            vals.push(v);
        };
        let c = col("total data communicated (MB)");
        for a in aggs {
            push(
                format!("total data communicated (MB)_{}", a.name()),
                a.apply(&c),
                &mut vals,
            );
        }
        let c = col("wall_time (us)");
        for a in aggs {
            push(
                format!("wall_time (us)_{}", a.name()),
                a.apply(&c),
                &mut vals,
            );
        }
        let total_wall = Agg::Sum.apply(&c);
        let total_wall_ms = total_wall.f64() / 1000.0;
        push("Total wall_time (us)".into(), total_wall, &mut vals);
        let c = col("throughput (GB/s)");
        for a in aggs {
            push(
                format!("throughput (GB/s)_{}", a.name()),
                a.apply(&c),
                &mut vals,
            );
        }
        for name in [
            "size_imbalance",
            "max_rank_dur (us)",
            "skew in start time",
            "skew in end time",
        ] {
            let c = col(name);
            for a in [Agg::Mean, Agg::Max] {
                push(format!("{name}_{}", a.name()), a.apply(&c), &mut vals);
            }
        }
        push("count".into(), Val::Int(idx.len() as i64), &mut vals);
        for name in ["Process Group Ranks", "Collective name", "Group size"] {
            push(name.into(), first_non_null(col(name)), &mut vals);
        }
        push(
            "Total wall_time (ms)".into(),
            Val::float(total_wall_ms),
            &mut vals,
        );
        if let Some(n) = nodes {
            let ranks = first_non_null(col("Process Group Ranks"));
            push("node_span".into(), n.span(&ranks), &mut vals);
        }
        first = false;
        rows.push((vals, total_wall_ms));
    }
    sort_desc_by(&mut rows, |r| r.1);
    let cols = headers
        .into_iter()
        .enumerate()
        .map(|(j, h)| (h, rows.iter().map(|r| r.0[j].clone()).collect()))
        .collect();
    Some(sheet_of("nccl_summary_all2allv", cols))
}
