//! Summaries built from the matched collectives: `straggler_summary`
//! (which ranks the others wait for) and our per-type
//! `nccl_summary_by_type`.

use indexmap::IndexMap;

use super::implicit_sync::SyncRow;
use super::long::{LongRow, Nodes};
use super::values::{Agg, N, Val, n_sum, normalize, round1, sheet_of, sort_desc_by};
use crate::numeric::{kahan_sum, pairwise_sum};
use crate::report::Sheet;

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

pub(super) fn straggler_sheet(
    sync: &[SyncRow],
    long: &[LongRow],
    nodes: Option<Nodes>,
) -> Option<Sheet> {
    let rows: Vec<&SyncRow> = sync.iter().filter(|r| r.straggler).collect();
    if rows.is_empty() {
        return None;
    }
    let order = rank_order(&rows);
    if order.is_empty() {
        return None;
    }
    let column: std::collections::HashMap<i64, usize> =
        order.iter().enumerate().map(|(j, &r)| (r, j)).collect();
    // Wait columns as the DataFrame types them.
    let mut cols: Vec<Vec<Val>> = vec![vec![Val::Null; rows.len()]; order.len()];
    for (i, r) in rows.iter().enumerate() {
        for (rank, _, _, wait) in &r.ranks {
            if let Some(&j) = column.get(rank) {
                cols[j][i] = wait.clone();
            }
        }
    }
    for c in cols.iter_mut() {
        let mut refs: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut refs);
    }
    // Last arrival per row: the minimum wait, first column on ties.
    let last: Vec<Option<i64>> = (0..rows.len())
        .map(|i| {
            let mut best: Option<(N, i64)> = None;
            for (j, &rank) in order.iter().enumerate() {
                if let Some(w) = cols[j][i].num()
                    && best.is_none_or(|(b, _)| w.lt(b))
                {
                    best = Some((w, rank));
                }
            }
            best.map(|b| b.1)
        })
        .collect();
    let num = rows.len() as i64;
    let mut ranks: Vec<(i64, usize)> = order.iter().copied().zip(0..).collect();
    ranks.sort();
    let dur_col_is_int = long.iter().all(|r| matches!(r.dur, Val::Int(_)));
    let mut dur_by_rank: std::collections::HashMap<i64, Vec<&Val>> = Default::default();
    for r in long {
        dur_by_rank.entry(r.rank).or_default().push(&r.dur);
    }
    struct Out {
        vals: Vec<Val>,
        total: f64,
    }
    let mut out: Vec<Out> = ranks
        .iter()
        .map(|&(rank, j)| {
            let waits: Vec<N> = cols[j].iter().filter_map(Val::num).collect();
            let total = if waits.iter().all(|n| matches!(n, N::I(_))) {
                n_sum(waits.iter().copied()).val()
            } else {
                let f: Vec<f64> = waits.iter().map(|n| n.f()).collect();
                Val::float(pairwise_sum(&f))
            };
            let f: Vec<f64> = waits.iter().map(|n| n.f()).collect();
            let mean = if f.is_empty() {
                Val::Null
            } else {
                Val::float(pairwise_sum(&f) / f.len() as f64)
            };
            let times_last = last.iter().filter(|l| **l == Some(rank)).count() as i64;
            let times_first = rows.iter().filter(|r| r.earliest == rank).count() as i64;
            let dur_total = match dur_by_rank.get(&rank) {
                None => Val::Null,
                Some(durs) if dur_col_is_int => Agg::Sum.apply(durs),
                Some(durs) => {
                    let f: Vec<f64> = durs.iter().map(|v| v.f64()).collect();
                    Val::Float(kahan_sum(&f))
                }
            };
            let total_f = total.f64();
            let mut vals = vec![
                Val::Int(rank),
                round1(total),
                round1(mean),
                Val::Int(times_last),
                Val::Int(times_first),
                round1(Val::Float(100.0 * times_last as f64 / num as f64)),
                Val::Int(num),
                round1(dur_total),
            ];
            if let Some(n) = nodes {
                vals.push(n.node_id(rank));
            }
            Out {
                vals,
                total: total_f,
            }
        })
        .collect();
    // Ascending: the straggler (least waiting) first; stable on ties.
    out.sort_by(|a, b| match (a.total.is_nan(), b.total.is_nan()) {
        (false, false) => a.total.total_cmp(&b.total),
        (x, y) => x.cmp(&y),
    });
    let mut headers = vec![
        "rank",
        "total_wait_time_us",
        "mean_wait_time_us",
        "times_arrived_last",
        "times_arrived_first",
        "pct_arrived_last",
        "num_collectives",
        "total_nccl_dur_us",
    ];
    if nodes.is_some() {
        headers.push("node_id");
    }
    let cols = headers
        .iter()
        .enumerate()
        .map(|(j, h)| {
            (
                h.to_string(),
                out.iter().map(|o| o.vals[j].clone()).collect(),
            )
        })
        .collect();
    Some(sheet_of("straggler_summary", cols))
}

// ---------------------------------------------------------------------------
// Our per-type summary (for people, and for the Markdown page)
// ---------------------------------------------------------------------------

pub(super) fn by_type_sheet(sync: &[SyncRow]) -> Sheet {
    let mut groups: IndexMap<&str, Vec<&SyncRow>> = IndexMap::new();
    for r in sync {
        groups.entry(r.kind.as_str()).or_default().push(r);
    }
    struct Out {
        vals: Vec<Val>,
        total: f64,
    }
    let mean = |g: &[&SyncRow], f: fn(&SyncRow) -> &Val| {
        let v: Vec<&Val> = g.iter().map(|r| f(r)).collect();
        Agg::Mean.apply(&v)
    };
    let mut out: Vec<Out> = groups
        .into_iter()
        .map(|(kind, g)| {
            let lat: Vec<f64> = g
                .iter()
                .filter_map(|r| r.comm_latency.num())
                .map(N::f)
                .collect();
            let total = pairwise_sum(&lat) / 1000.0;
            let mut names: Vec<String> = Vec::new();
            for r in &g {
                let n = r.name_shown.text();
                if !r.name_shown.is_null() && !names.contains(&n) {
                    names.push(n);
                }
            }
            // Who arrived last (least wait; lowest rank on ties), how often.
            let mut last: IndexMap<i64, usize> = IndexMap::new();
            for r in &g {
                let pick = r
                    .ranks
                    .iter()
                    .filter_map(|(rank, _, _, w)| w.num().map(|w| (w, *rank)))
                    .fold(None, |b: Option<(N, i64)>, (w, rank)| match b {
                        Some((bw, _)) if !w.lt(bw) => b,
                        _ => Some((w, rank)),
                    });
                if let Some((_, rank)) = pick {
                    *last.entry(rank).or_default() += 1;
                }
            }
            let mut last: Vec<(i64, usize)> = last.into_iter().collect();
            last.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let slowest = last
                .iter()
                .take(3)
                .map(|(r, c)| format!("{r} ({c} of {})", g.len()))
                .collect::<Vec<_>>()
                .join(", ");
            let vals = vec![
                Val::Str(kind.to_string()),
                Val::Int(g.len() as i64),
                Val::float(total),
                mean(&g, |r| &r.comm_latency),
                mean(&g, |r| &r.algo),
                mean(&g, |r| &r.bus),
                mean(&g, |r| &r.skew_start),
                mean(&g, |r| &r.skew_end),
                mean(&g, |r| &r.avg_wait),
                Val::Str(names.join(", ")),
                Val::Int(g.iter().filter(|r| r.inferred).count() as i64),
                Val::Str(slowest),
            ];
            Out { vals, total }
        })
        .collect();
    sort_desc_by(&mut out, |o| o.total);
    let headers = [
        "collective type",
        "count",
        "Total comm latency (ms)",
        "comm_latency_mean",
        "algo bw (GB/s)_mean",
        "bus bw (GB/s)_mean",
        "skew in start time_mean",
        "skew in end time_mean",
        "avg_wait_time_mean",
        "Collective names",
        "inferred from kernel name",
        "arrived last most often (rank)",
    ];
    let cols = headers
        .iter()
        .enumerate()
        .map(|(j, h)| {
            (
                h.to_string(),
                out.iter().map(|o| o.vals[j].clone()).collect(),
            )
        })
        .collect();
    sheet_of("nccl_summary_by_type", cols)
}
