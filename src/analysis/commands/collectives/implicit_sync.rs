//! The `nccl_implicit_sync` table (each collective matched across ranks,
//! with latency, skew, wait and bandwidth) and its summary.

use indexmap::IndexMap;

use super::infer::{CType, ctype_of_val};
use super::long::{LongRow, Mode, Nodes};
use super::values::{columns, num_value, record_columns};
use crate::names::{col, sheet};
use crate::table::agg::{
    Agg, agg_columns, desc_nan_last, first_present, num_max, num_min, num_sum, series_sum,
};
use crate::table::group::{Group, group_first_seen, group_sorted};
use crate::table::typing::{dataframe, widen_ints};
use crate::table::{Column, Num, Table, Value};

// ---------------------------------------------------------------------------
// nccl_implicit_sync and its summary
// ---------------------------------------------------------------------------

/// One collective matched across ranks (a `nccl_implicit_sync` row).
#[derive(Debug, Clone)]
pub(super) struct SyncRow {
    pub(super) cid: String,
    pub(super) pg_name: Value,
    pub(super) pg_ranks: Value,
    /// Shown `Collective name` / `dtype` (inferred where the trace has none).
    pub(super) name_shown: Value,
    pub(super) dtype_shown: Value,
    /// From the trace: group keys of the summary.
    pub(super) name_meta: Value,
    pub(super) dtype_meta: Value,
    pub(super) group_size: Value,
    pub(super) in_nelems: Value,
    pub(super) out_nelems: Value,
    pub(super) in_mb: Value,
    pub(super) out_mb: Value,
    pub(super) full_mb: Value,
    pub(super) comm_latency: Value,
    pub(super) skew_start: Value,
    pub(super) earliest: i64,
    pub(super) avg_wait: Value,
    pub(super) skew_end: Value,
    pub(super) algo: Value,
    pub(super) bus: Value,
    /// (rank, ts, dur, wait), in table order.
    pub(super) ranks: Vec<(i64, Value, Value, Value)>,
    pub(super) provenance: String,
    /// Collective type for people: from the trace, else from the kernel name.
    pub(super) kind: String,
    pub(super) inferred: bool,
    /// Counted in straggler_summary (the reference's implicit-sync types).
    pub(super) straggler: bool,
}

/// Collectives in order of first appearance, each with its rows (one per rank).
pub(super) fn by_collective(rows: &[LongRow]) -> Vec<Group<&str>> {
    group_first_seen(rows.iter().map(|r| r.cid.as_str()))
}

/// The kernel times of one collective across its ranks, as Python numbers:
/// the present starts, the present durations, and their pairwise sums
/// (`ts + dur`, in table order).
pub(super) struct Timing {
    pub(super) ts: Vec<Num>,
    pub(super) durs: Vec<Num>,
    pub(super) ends: Vec<Num>,
}

impl Timing {
    /// The timing of the collective's rows `rows`.
    pub(super) fn of<'a>(rows: impl Iterator<Item = &'a LongRow> + Clone) -> Timing {
        let ts: Vec<Num> = rows.clone().filter_map(|r| r.ts.num()).collect();
        let durs: Vec<Num> = rows.filter_map(|r| r.dur.num()).collect();
        let ends = ts.iter().zip(&durs).map(|(t, d)| *t + *d).collect();
        Timing { ts, durs, ends }
    }

    /// The earliest and the latest start.
    pub(super) fn starts(&self) -> Option<(Num, Num)> {
        Some((
            num_min(self.ts.iter().copied())?,
            num_max(self.ts.iter().copied())?,
        ))
    }

    /// The earliest and the latest end.
    pub(super) fn ends(&self) -> Option<(Num, Num)> {
        Some((
            num_min(self.ends.iter().copied())?,
            num_max(self.ends.iter().copied())?,
        ))
    }
}

/// Checks that every rank of collective `cid` (rows `idx`) records the
/// same `fields`, the shared [`GROUP_FIELDS`] first; the first mismatch is
/// the error.
pub(super) fn check_consistent(
    cid: &str,
    rows: &[LongRow],
    idx: &[usize],
    fields: &[Getter],
) -> Result<(), String> {
    let first = &rows[idx[0]];
    for (field, get) in GROUP_FIELDS.iter().chain(fields) {
        if let Some(&other) = idx[1..]
            .iter()
            .find(|&&i| !get(&rows[i]).key_eq(get(first)))
        {
            let o = &rows[other];
            return Err(format!(
                "metadata mismatch in '{field}' for collective {cid}: rank {} has {}, rank {} has {} \
                 (collectives are matched by their order within a process group, so every rank must \
                 record the same sequence)",
                first.rank,
                get(first).py_str(),
                o.rank,
                get(o).py_str()
            ));
        }
    }
    Ok(())
}

/// A field every rank of a collective must record alike: its column and
/// its cell.
pub(super) type Getter = (&'static str, fn(&LongRow) -> &Value);

/// What the ranks of any matched collective must agree on.
const GROUP_FIELDS: [Getter; 5] = [
    (col::PROCESS_GROUP_NAME, |r| &r.pg_name),
    (col::PROCESS_GROUP_RANKS, |r| &r.pg_ranks),
    (col::COLLECTIVE_NAME, |r| &r.coll_name),
    (col::GROUP_SIZE, |r| &r.group_size),
    (col::DTYPE, |r| &r.dtype),
];

/// What the ranks of a synchronising collective must also agree on.
const SYNC_FIELDS: [Getter; 4] = [
    (col::IN_MSG_NELEMS, |r| &r.in_nelems),
    (col::OUT_MSG_NELEMS, |r| &r.out_nelems),
    (col::IN_MSG_SIZE_MB, |r| &r.in_mb),
    (col::OUT_MSG_SIZE_MB, |r| &r.out_mb),
];

pub(super) fn build_sync(
    rows: &[LongRow],
    mode: Mode,
    partial: &std::collections::BTreeSet<String>,
) -> Result<Vec<SyncRow>, String> {
    let mut out = Vec::new();
    for (cid, idx) in by_collective(rows) {
        // Seen on only some ranks of its group: no cross-rank timing.
        if partial.contains(cid) {
            continue;
        }
        let ctype = ctype_of_val(&rows[idx[0]].coll_name);
        let keep = match mode {
            Mode::Regular => ctype.is_some_and(CType::in_sync_table),
            Mode::Simplified => ctype.is_none_or(CType::in_sync_table),
        };
        if !keep {
            continue;
        }
        if mode == Mode::Regular {
            check_consistent(cid, rows, &idx, &SYNC_FIELDS)?;
        }
        let g: Vec<&LongRow> = idx.iter().map(|&i| &rows[i]).collect();
        if let Some(r) = sync_row(cid, &g, ctype) {
            out.push(r);
        }
    }
    // The reference builds a DataFrame of these rows: type each column.
    macro_rules! norm {
        ($($f:ident),*) => { $( widen_ints(out.iter_mut().map(|r| &mut r.$f)); )* };
    }
    norm!(
        pg_name,
        pg_ranks,
        name_shown,
        dtype_shown,
        name_meta,
        dtype_meta,
        group_size,
        in_nelems,
        out_nelems,
        in_mb,
        out_mb,
        full_mb,
        comm_latency,
        skew_start,
        avg_wait,
        skew_end,
        algo,
        bus
    );
    Ok(out)
}

/// The row of collective `cid` (its rows `g`, one per rank); None when no
/// rank has a start and a duration.
fn sync_row(cid: &str, g: &[&LongRow], ctype: Option<CType>) -> Option<SyncRow> {
    let first = g[0];
    let t = Timing::of(g.iter().copied());
    let (_, latest_start) = t.starts()?;
    let (earliest_end, latest_end) = t.ends()?;
    let latency = num_min(t.durs.iter().copied())?;
    let mut per_rank = Vec::with_capacity(g.len());
    let mut waits = Vec::with_capacity(g.len());
    for r in g {
        let w = r.ts.num().map(|t| latest_start - t);
        if let Some(w) = w {
            waits.push((w, r.rank));
        }
        let wait = w.map_or(Value::Null, num_value);
        per_rank.push((r.rank, r.ts.clone(), r.dur.clone(), wait));
    }
    // Ties go to the larger rank (Python's max over (wait, rank)).
    let (skew, earliest) = waits
        .iter()
        .fold((Num::Int(i64::MIN), -1), |(bw, br), &(w, r)| {
            if bw.lt(w) || (!w.lt(bw) && r > br) {
                (w, r)
            } else {
                (bw, br)
            }
        });
    let avg_wait = num_sum(waits.iter().map(|w| w.0)).f64() / waits.len().max(1) as f64;
    let (full, algo, bus) = bandwidths(first, ctype, latency);
    let guessed = first.coll_name.is_missing() && first.guessed_name.is_some();
    Some(SyncRow {
        cid: cid.to_string(),
        pg_name: first.pg_name.clone(),
        pg_ranks: first.pg_ranks.clone(),
        name_shown: first.shown_name(),
        dtype_shown: first.shown_dtype(),
        name_meta: first.coll_name.clone(),
        dtype_meta: first.dtype.clone(),
        group_size: first.group_size.clone(),
        in_nelems: first.in_nelems.clone(),
        out_nelems: first.out_nelems.clone(),
        in_mb: first.in_mb.clone(),
        out_mb: first.out_mb.clone(),
        full_mb: Value::float_or_null(full),
        comm_latency: num_value(latency),
        skew_start: num_value(skew),
        earliest,
        avg_wait: Value::float_or_null(avg_wait),
        skew_end: num_value(latest_end - earliest_end),
        algo: Value::float_or_null(algo),
        bus: Value::float_or_null(bus),
        ranks: per_rank,
        provenance: first.provenance(),
        kind: kind_of(first, ctype),
        inferred: guessed || first.custom_named,
        straggler: ctype.is_none_or(CType::reference_sync),
    })
}

/// Full message size (MB), algorithm and bus bandwidth (GB/s) of a
/// collective of type `ctype` taking `latency` µs; NaN without sizes.
fn bandwidths(first: &LongRow, ctype: Option<CType>, latency: Num) -> (f64, f64, f64) {
    let has_size = !first.in_mb.is_missing() && !first.out_mb.is_missing();
    let Some(t) = ctype.filter(|_| has_size) else {
        return (f64::NAN, f64::NAN, f64::NAN);
    };
    let full = if t == CType::AllGather {
        first.out_mb.to_f64()
    } else {
        first.in_mb.to_f64()
    };
    let lat = latency.f64();
    let algo = if lat > 0.0 {
        (full / 1024.0) / (lat / 1e6)
    } else {
        f64::NAN
    };
    let bus = match first.group_size.num() {
        Some(n) => algo * t.bus_factor(n.f64()),
        None => f64::NAN,
    };
    (full, algo, bus)
}

/// The collective type shown to people: from the trace, else from the
/// kernel name, else `unknown`.
fn kind_of(first: &LongRow, ctype: Option<CType>) -> String {
    match ctype {
        Some(t) => t.label().to_string(),
        None => match (&first.coll_name, first.guessed_name) {
            (Value::Null, Some(g)) => CType::of(g).map_or(g.to_string(), |t| t.label().into()),
            (Value::Null, None) => "unknown".into(),
            (v, _) => v.py_str(),
        },
    }
}

pub(super) fn sync_sheet(rows: &[SyncRow], nodes: Option<Nodes>) -> Table {
    if rows.is_empty() {
        return Table::new(sheet::NCCL_IMPLICIT_SYNC, &[]);
    }
    let column =
        |name: &str, f: &dyn Fn(&SyncRow) -> Value| Column::new(name, rows.iter().map(f).collect());
    let mut cols: Vec<Column> = vec![
        column(col::COLLECTIVE_ID, &|r| Value::Text(r.cid.as_str().into())),
        column(col::PROCESS_GROUP_NAME, &|r| r.pg_name.clone()),
        column(col::PROCESS_GROUP_RANKS, &|r| r.pg_ranks.clone()),
        column(col::COLLECTIVE_NAME, &|r| r.name_shown.clone()),
        column(col::GROUP_SIZE, &|r| r.group_size.clone()),
        column(col::DTYPE, &|r| r.dtype_shown.clone()),
        column(col::IN_MSG_NELEMS, &|r| r.in_nelems.clone()),
        column(col::OUT_MSG_NELEMS, &|r| r.out_nelems.clone()),
        column(col::IN_MSG_SIZE_MB, &|r| r.in_mb.clone()),
        column(col::OUT_MSG_SIZE_MB, &|r| r.out_mb.clone()),
        column(col::FULL_MSG_SIZE_MB, &|r| r.full_mb.clone()),
        column(col::COMM_LATENCY, &|r| r.comm_latency.clone()),
        column(col::SKEW_IN_START_TIME, &|r| r.skew_start.clone()),
        column(col::EARLIEST_ARRIVAL_RANK, &|r| Value::Int(r.earliest)),
        column(col::AVG_WAIT_TIME, &|r| r.avg_wait.clone()),
        column(col::SKEW_IN_END_TIME, &|r| r.skew_end.clone()),
        column(col::ALGO_BW, &|r| r.algo.clone()),
        column(col::BUS_BW, &|r| r.bus.clone()),
    ];
    // Per-rank columns: each row adds ts/dur of its ranks, then their waits.
    let rank_col = |rank: i64, what: &str| format!("{}{rank}_{what}", col::RANK_PREFIX);
    let records = rows.iter().map(|r| {
        let mut cells = Vec::with_capacity(3 * r.ranks.len());
        for (rank, ts, dur, _) in &r.ranks {
            cells.push((rank_col(*rank, col::TS), ts.clone()));
            cells.push((rank_col(*rank, col::DUR), dur.clone()));
        }
        for (rank, _, _, wait) in &r.ranks {
            cells.push((rank_col(*rank, col::WAIT_TIME), wait.clone()));
        }
        cells
    });
    cols.extend(record_columns(records, rows.len()));
    if let Some(n) = nodes {
        cols.push(column(col::NODE_SPAN, &|r| n.span(&r.pg_ranks)));
    }
    cols.push(column(col::METADATA, &|r| {
        Value::Text(r.provenance.as_str().into())
    }));
    dataframe(sheet::NCCL_IMPLICIT_SYNC, cols)
}

/// A metric of `nccl_summary_implicit_sync`: its column and its cells.
type Metric = (&'static str, fn(&SyncRow) -> &Value);

/// The metrics summarised: latency and skews, and each bandwidth that some
/// row has.
fn sync_metrics(rows: &[SyncRow]) -> Vec<Metric> {
    let mut metrics: Vec<Metric> = vec![
        (col::COMM_LATENCY, |r| &r.comm_latency),
        (col::SKEW_IN_START_TIME, |r| &r.skew_start),
        (col::SKEW_IN_END_TIME, |r| &r.skew_end),
    ];
    if rows.iter().any(|r| !r.algo.is_missing()) {
        metrics.push((col::ALGO_BW, |r| &r.algo));
    }
    if rows.iter().any(|r| !r.bus.is_missing()) {
        metrics.push((col::BUS_BW, |r| &r.bus));
    }
    metrics
}

/// The headers of `nccl_summary_implicit_sync`.
fn summary_sync_headers(metrics: &[Metric], aggs: &[Agg], any_inferred: bool) -> Vec<String> {
    let mut headers: Vec<String> = [
        col::COLLECTIVE_NAME,
        col::DTYPE,
        col::IN_MSG_NELEMS,
        col::PROCESS_GROUP_NAME,
        col::GROUP_SIZE,
        col::FULL_MSG_SIZE_MB,
    ]
    .map(String::from)
    .to_vec();
    for (m, _) in metrics {
        headers.extend(agg_columns(m, aggs));
    }
    headers.push(col::COUNT_LC.into());
    headers.push(col::TOTAL_COMM_LATENCY_MS.into());
    if any_inferred {
        headers.push(col::INFERRED_COLLECTIVE_NAMES.into());
    }
    headers
}

/// One group's cells after its key, and its total latency in ms.
fn summary_sync_cells(
    g: &[&SyncRow],
    metrics: &[Metric],
    aggs: &[Agg],
    any_inferred: bool,
) -> (Vec<Value>, f64) {
    let mut vals = vec![
        first_present(g.iter().map(|r| &r.pg_name)),
        first_present(g.iter().map(|r| &r.group_size)),
        first_present(g.iter().map(|r| &r.full_mb)),
    ];
    for (_, get) in metrics {
        for a in aggs {
            vals.push(a.apply(g.iter().map(|r| get(r))));
        }
    }
    vals.push(Value::Int(g.len() as i64));
    let lat: Vec<Num> = g.iter().filter_map(|r| r.comm_latency.num()).collect();
    let total_ms = series_sum(&lat).f64() / 1000.0;
    vals.push(Value::float_or_null(total_ms));
    if any_inferred {
        vals.push(Value::Text(inferred_names(g).into()));
    }
    (vals, total_ms)
}

pub(super) fn summary_sync_sheet(rows: &[SyncRow], aggs: &[Agg]) -> Table {
    let name = sheet::NCCL_SUMMARY_IMPLICIT_SYNC;
    if rows.is_empty() {
        return Table::new(name, &[]);
    }
    let unknown = |v: &Value| {
        if v.is_missing() {
            Value::Text("Unknown".into())
        } else {
            v.clone()
        }
    };
    let keys = rows.iter().map(|r| {
        vec![
            unknown(&r.name_meta),
            unknown(&r.dtype_meta),
            unknown(&r.in_nelems),
        ]
    });
    let metrics = sync_metrics(rows);
    let any_inferred = rows.iter().any(|r| r.inferred);
    let mut out: Vec<(Vec<Value>, f64)> = group_sorted(keys, false)
        .into_iter()
        .map(|(mut key, idx)| {
            let g: Vec<&SyncRow> = idx.iter().map(|&i| &rows[i]).collect();
            let (cells, total_ms) = summary_sync_cells(&g, &metrics, aggs, any_inferred);
            key.extend(cells);
            (key, total_ms)
        })
        .collect();
    out.sort_by(|a, b| desc_nan_last(a.1, b.1));
    let headers = summary_sync_headers(&metrics, aggs, any_inferred);
    dataframe(name, columns(&headers, &out))
}

/// `allreduce (3), all_to_all (5)`: the inferred names of a group's rows.
fn inferred_names(g: &[&SyncRow]) -> String {
    let mut counts: IndexMap<String, usize> = IndexMap::new();
    for r in g.iter().filter(|r| r.inferred) {
        *counts.entry(r.name_shown.py_str()).or_default() += 1;
    }
    counts
        .iter()
        .map(|(n, c)| format!("{n} ({c})"))
        .collect::<Vec<_>>()
        .join(", ")
}
