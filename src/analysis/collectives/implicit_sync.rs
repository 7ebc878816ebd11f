//! The `nccl_implicit_sync` table (each collective matched across ranks,
//! with latency, skew, wait and bandwidth) and its summary.

use indexmap::IndexMap;

use super::infer::{CType, ctype_of_val};
use super::long::{LongRow, Mode, Nodes};
use super::values::{
    Agg, N, Val, first_non_null, group_sorted, n_max, n_min, n_sum, normalize_field, sheet_of,
    sort_desc_by,
};
use crate::numeric::pairwise_sum;
use crate::report::Sheet;

// ---------------------------------------------------------------------------
// nccl_implicit_sync and its summary
// ---------------------------------------------------------------------------

/// One collective matched across ranks (a `nccl_implicit_sync` row).
#[derive(Debug, Clone)]
pub(super) struct SyncRow {
    pub(super) cid: String,
    pub(super) pg_name: Val,
    pub(super) pg_ranks: Val,
    /// Shown `Collective name` / `dtype` (inferred where the trace has none).
    pub(super) name_shown: Val,
    pub(super) dtype_shown: Val,
    /// From the trace: group keys of the summary.
    pub(super) name_meta: Val,
    pub(super) dtype_meta: Val,
    pub(super) group_size: Val,
    pub(super) in_nelems: Val,
    pub(super) out_nelems: Val,
    pub(super) in_mb: Val,
    pub(super) out_mb: Val,
    pub(super) full_mb: Val,
    pub(super) comm_latency: Val,
    pub(super) skew_start: Val,
    pub(super) earliest: i64,
    pub(super) avg_wait: Val,
    pub(super) skew_end: Val,
    pub(super) algo: Val,
    pub(super) bus: Val,
    /// (rank, ts, dur, wait), in table order.
    pub(super) ranks: Vec<(i64, Val, Val, Val)>,
    pub(super) provenance: String,
    /// Collective type for people: from the trace, else from the kernel name.
    pub(super) kind: String,
    pub(super) inferred: bool,
    /// Counted in straggler_summary (the reference's implicit-sync types).
    pub(super) straggler: bool,
}

/// Collectives in order of first appearance, each with its rows (one per rank).
pub(super) fn by_collective(rows: &[LongRow]) -> IndexMap<&str, Vec<usize>> {
    let mut m: IndexMap<&str, Vec<usize>> = IndexMap::new();
    for (i, r) in rows.iter().enumerate() {
        m.entry(r.cid.as_str()).or_default().push(i);
    }
    m
}

pub(super) fn check_consistent(
    cid: &str,
    rows: &[LongRow],
    idx: &[usize],
    fields: &[Getter],
) -> Result<(), String> {
    let first = &rows[idx[0]];
    for (field, get) in fields {
        if let Some(&other) = idx[1..].iter().find(|&&i| !get(&rows[i]).same(get(first))) {
            let o = &rows[other];
            return Err(format!(
                "metadata mismatch in '{field}' for collective {cid}: rank {} has {}, rank {} has {} \
                 (collectives are matched by their order within a process group, so every rank must \
                 record the same sequence)",
                first.rank,
                get(first).text(),
                o.rank,
                get(o).text()
            ));
        }
    }
    Ok(())
}

pub(super) type Getter = (&'static str, fn(&LongRow) -> &Val);

const SYNC_FIELDS: [Getter; 9] = [
    ("Process Group Name", |r| &r.pg_name),
    ("Process Group Ranks", |r| &r.pg_ranks),
    ("Collective name", |r| &r.coll_name),
    ("Group size", |r| &r.group_size),
    ("dtype", |r| &r.dtype),
    ("In msg nelems", |r| &r.in_nelems),
    ("Out msg nelems", |r| &r.out_nelems),
    ("In msg size (MB)", |r| &r.in_mb),
    ("Out msg size (MB)", |r| &r.out_mb),
];

pub(super) fn build_sync(rows: &[LongRow], mode: Mode) -> Result<Vec<SyncRow>, String> {
    let mut out = Vec::new();
    for (cid, idx) in by_collective(rows) {
        let first = &rows[idx[0]];
        let ctype = ctype_of_val(&first.coll_name);
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
        let ts: Vec<N> = idx.iter().filter_map(|&i| rows[i].ts.num()).collect();
        let durs: Vec<N> = idx.iter().filter_map(|&i| rows[i].dur.num()).collect();
        let ends: Vec<N> = ts.iter().zip(&durs).map(|(t, d)| t.add(*d)).collect();
        let (Some(latest_start), Some(earliest_end), Some(latest_end), Some(latency)) = (
            n_max(ts.iter().copied()),
            n_min(ends.iter().copied()),
            n_max(ends.iter().copied()),
            n_min(durs.iter().copied()),
        ) else {
            continue;
        };
        let mut per_rank = Vec::with_capacity(idx.len());
        let mut waits = Vec::with_capacity(idx.len());
        for &i in &idx {
            let r = &rows[i];
            let w = r.ts.num().map(|t| latest_start.sub(t));
            if let Some(w) = w {
                waits.push((w, r.rank));
            }
            per_rank.push((
                r.rank,
                r.ts.clone(),
                r.dur.clone(),
                w.map_or(Val::Null, N::val),
            ));
        }
        // Ties go to the larger rank (Python's max over (wait, rank)).
        let (skew, earliest) = waits
            .iter()
            .fold((N::I(i64::MIN), -1), |(bw, br), &(w, r)| {
                if bw.lt(w) || (!w.lt(bw) && r > br) {
                    (w, r)
                } else {
                    (bw, br)
                }
            });
        let avg_wait = n_sum(waits.iter().map(|w| w.0)).f() / waits.len().max(1) as f64;
        let has_size = !first.in_mb.is_null() && !first.out_mb.is_null();
        let (full, algo, bus) = match ctype {
            Some(t) if has_size => {
                let full = if t == CType::AllGather {
                    first.out_mb.f64()
                } else {
                    first.in_mb.f64()
                };
                let lat = latency.f();
                let algo = if lat > 0.0 {
                    (full / 1024.0) / (lat / 1e6)
                } else {
                    f64::NAN
                };
                let bus = match first.group_size.num() {
                    Some(n) => algo * t.bus_factor(n.f()),
                    None => f64::NAN,
                };
                (full, algo, bus)
            }
            _ => (f64::NAN, f64::NAN, f64::NAN),
        };
        let guessed = first.coll_name.is_null() && first.guessed_name.is_some();
        let kind = match ctype {
            Some(t) => t.label().to_string(),
            None => match (&first.coll_name, first.guessed_name) {
                (Val::Null, Some(g)) => CType::of(g).map_or(g.to_string(), |t| t.label().into()),
                (Val::Null, None) => "unknown".into(),
                (v, _) => v.text(),
            },
        };
        out.push(SyncRow {
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
            full_mb: Val::float(full),
            comm_latency: latency.val(),
            skew_start: skew.val(),
            earliest,
            avg_wait: Val::float(avg_wait),
            skew_end: latest_end.sub(earliest_end).val(),
            algo: Val::float(algo),
            bus: Val::float(bus),
            ranks: per_rank,
            provenance: first.provenance(),
            kind,
            inferred: guessed || first.custom_named,
            straggler: ctype.is_none_or(CType::reference_sync),
        });
    }
    // The reference builds a DataFrame of these rows: type each column.
    macro_rules! norm {
        ($($f:ident),*) => { $( normalize_field(&mut out, |r| &mut r.$f); )* };
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

pub(super) fn sync_sheet(rows: &[SyncRow], nodes: Option<Nodes>) -> Sheet {
    if rows.is_empty() {
        return Sheet::new("nccl_implicit_sync", &[]);
    }
    let col = |f: &dyn Fn(&SyncRow) -> Val| rows.iter().map(f).collect::<Vec<Val>>();
    let mut cols: Vec<(String, Vec<Val>)> = vec![
        ("collective_id".into(), col(&|r| Val::Str(r.cid.clone()))),
        ("Process Group Name".into(), col(&|r| r.pg_name.clone())),
        ("Process Group Ranks".into(), col(&|r| r.pg_ranks.clone())),
        ("Collective name".into(), col(&|r| r.name_shown.clone())),
        ("Group size".into(), col(&|r| r.group_size.clone())),
        ("dtype".into(), col(&|r| r.dtype_shown.clone())),
        ("In msg nelems".into(), col(&|r| r.in_nelems.clone())),
        ("Out msg nelems".into(), col(&|r| r.out_nelems.clone())),
        ("In msg size (MB)".into(), col(&|r| r.in_mb.clone())),
        ("Out msg size (MB)".into(), col(&|r| r.out_mb.clone())),
        ("Full msg size (MB)".into(), col(&|r| r.full_mb.clone())),
        ("comm_latency".into(), col(&|r| r.comm_latency.clone())),
        ("skew in start time".into(), col(&|r| r.skew_start.clone())),
        (
            "earliest arrival rank".into(),
            col(&|r| Val::Int(r.earliest)),
        ),
        ("avg_wait_time".into(), col(&|r| r.avg_wait.clone())),
        ("skew in end time".into(), col(&|r| r.skew_end.clone())),
        ("algo bw (GB/s)".into(), col(&|r| r.algo.clone())),
        ("bus bw (GB/s)".into(), col(&|r| r.bus.clone())),
    ];
    // Per-rank columns: each row adds ts/dur of its ranks, then their waits.
    // (rank, 0 ts / 1 dur / 2 wait) -> column, in order of first appearance.
    let mut names: IndexMap<(i64, u8), Vec<Val>> = IndexMap::new();
    for r in rows {
        for (rank, ..) in &r.ranks {
            names.entry((*rank, 0)).or_default();
            names.entry((*rank, 1)).or_default();
        }
        for (rank, ..) in &r.ranks {
            names.entry((*rank, 2)).or_default();
        }
    }
    for c in names.values_mut() {
        *c = vec![Val::Null; rows.len()];
    }
    for (i, r) in rows.iter().enumerate() {
        for (rank, ts, dur, wait) in &r.ranks {
            for (k, v) in [(0u8, ts), (1, dur), (2, wait)] {
                if let Some(c) = names.get_mut(&(*rank, k)) {
                    c[i] = v.clone();
                }
            }
        }
    }
    for ((rank, k), values) in names {
        let what = ["ts", "dur", "wait_time"][k as usize];
        cols.push((format!("rank_{rank}_{what}"), values));
    }
    if let Some(n) = nodes {
        cols.push(("node_span".into(), col(&|r| n.span(&r.pg_ranks))));
    }
    cols.push(("metadata".into(), col(&|r| Val::Str(r.provenance.clone()))));
    sheet_of("nccl_implicit_sync", cols)
}

pub(super) fn summary_sync_sheet(rows: &[SyncRow], aggs: &[Agg]) -> Sheet {
    let name = "nccl_summary_implicit_sync";
    if rows.is_empty() {
        return Sheet::new(name, &[]);
    }
    let unknown = |v: &Val| {
        if v.is_null() {
            Val::Str("Unknown".into())
        } else {
            v.clone()
        }
    };
    let groups = group_sorted(
        rows,
        |r| {
            vec![
                unknown(&r.name_meta),
                unknown(&r.dtype_meta),
                unknown(&r.in_nelems),
            ]
        },
        false,
    );
    type Metric = (&'static str, fn(&SyncRow) -> &Val);
    let mut metrics: Vec<Metric> = vec![
        ("comm_latency", |r| &r.comm_latency),
        ("skew in start time", |r| &r.skew_start),
        ("skew in end time", |r| &r.skew_end),
    ];
    if rows.iter().any(|r| !r.algo.is_null()) {
        metrics.push(("algo bw (GB/s)", |r| &r.algo));
    }
    if rows.iter().any(|r| !r.bus.is_null()) {
        metrics.push(("bus bw (GB/s)", |r| &r.bus));
    }
    let any_inferred = rows.iter().any(|r| r.inferred);
    struct Out {
        vals: Vec<Val>,
        total_ms: f64,
    }
    let mut out: Vec<Out> = groups
        .into_iter()
        .map(|(key, idx)| {
            let g: Vec<&SyncRow> = idx.iter().map(|&i| &rows[i]).collect();
            let mut vals = key;
            vals.push(first_non_null(g.iter().map(|r| &r.pg_name)));
            vals.push(first_non_null(g.iter().map(|r| &r.group_size)));
            vals.push(first_non_null(g.iter().map(|r| &r.full_mb)));
            for (_, get) in &metrics {
                let col: Vec<&Val> = g.iter().map(|r| get(r)).collect();
                for a in aggs {
                    vals.push(a.apply(&col));
                }
            }
            vals.push(Val::Int(g.len() as i64));
            let lat: Vec<N> = g.iter().filter_map(|r| r.comm_latency.num()).collect();
            let total_ms = if lat.iter().all(|n| matches!(n, N::I(_))) {
                n_sum(lat).f() / 1000.0
            } else {
                let f: Vec<f64> = lat.iter().map(|n| n.f()).collect();
                pairwise_sum(&f) / 1000.0
            };
            vals.push(Val::float(total_ms));
            if any_inferred {
                vals.push(Val::Str(inferred_names(&g)));
            }
            Out { vals, total_ms }
        })
        .collect();
    sort_desc_by(&mut out, |o| o.total_ms);
    let mut headers: Vec<String> = [
        "Collective name",
        "dtype",
        "In msg nelems",
        "Process Group Name",
        "Group size",
        "Full msg size (MB)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (m, _) in &metrics {
        for a in aggs {
            headers.push(format!("{m}_{}", a.name()));
        }
    }
    headers.push("count".into());
    headers.push("Total comm latency (ms)".into());
    if any_inferred {
        headers.push("inferred collective names".into());
    }
    let cols = headers
        .into_iter()
        .enumerate()
        .map(|(j, h)| (h, out.iter().map(|o| o.vals[j].clone()).collect()))
        .collect();
    sheet_of(name, cols)
}

/// `allreduce (3), all_to_all (5)`: the inferred names of a group's rows.
fn inferred_names(g: &[&SyncRow]) -> String {
    let mut counts: IndexMap<String, usize> = IndexMap::new();
    for r in g.iter().filter(|r| r.inferred) {
        *counts.entry(r.name_shown.text()).or_default() += 1;
    }
    counts
        .iter()
        .map(|(n, c)| format!("{n} ({c})"))
        .collect::<Vec<_>>()
        .join(", ")
}
