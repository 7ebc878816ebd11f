//! The long table (one row per collective kernel per rank), the matching
//! mode, node columns, and the `nccl_long` / `nccl_summary_long` sheets.

use indexmap::IndexMap;

use super::infer::{CUSTOM_COLLECTIVES, dtype_bytes, infer_from_kernel_name};
use super::values::{
    Agg, N, Val, first_non_null, group_sorted, normalize_field, sheet_of, sort_desc_by,
};
use super::{CollectiveKernel, collective_kernels};
use crate::report::Sheet;
use crate::trace::{CollectiveArgs, Trace};

// ---------------------------------------------------------------------------
// The long table
// ---------------------------------------------------------------------------

/// How collectives were matched across ranks (spec A3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// By process group and time order within it.
    Regular,
    /// No process-group metadata and one stream per rank: by time order on
    /// each rank.
    Simplified,
}

/// One collective kernel of one rank (a `nccl_long` row).
#[derive(Debug, Clone)]
pub(super) struct LongRow {
    pub(super) rank: i64,
    pub(super) pg_name: Val,
    pub(super) pg_ranks: Val,
    /// `Collective name` from the trace (or the reference's custom rule).
    pub(super) coll_name: Val,
    pub(super) group_size: Val,
    /// `dtype` from the trace.
    pub(super) dtype: Val,
    pub(super) in_nelems: Val,
    pub(super) in_mb: Val,
    pub(super) out_nelems: Val,
    pub(super) out_mb: Val,
    pub(super) in_split: Val,
    pub(super) out_split: Val,
    pub(super) stream: Val,
    pub(super) ts: Val,
    pub(super) dur: Val,
    pub(super) index_in_group: usize,
    pub(super) cid: String,
    /// Shown where the trace has no `Collective name` / `dtype`.
    pub(super) guessed_name: Option<&'static str>,
    pub(super) guessed_dtype: Option<&'static str>,
    /// The reference's custom rule named the collective.
    pub(super) custom_named: bool,
    pub(super) send_recv: bool,
}

impl LongRow {
    pub(super) fn shown_name(&self) -> Val {
        match (&self.coll_name, self.guessed_name) {
            (Val::Null, Some(g)) => Val::Str(g.into()),
            (v, _) => v.clone(),
        }
    }

    pub(super) fn shown_dtype(&self) -> Val {
        match (&self.dtype, self.guessed_dtype) {
            (Val::Null, Some(g)) => Val::Str(g.into()),
            (v, _) => v.clone(),
        }
    }

    /// The `metadata` column: where `Collective name` and `dtype` came from.
    pub(super) fn provenance(&self) -> String {
        let mut fields = Vec::new();
        if self.custom_named || self.guessed_name.is_some() {
            fields.push("Collective name");
        }
        if self.guessed_dtype.is_some() {
            fields.push("dtype");
        }
        if fields.is_empty() {
            return if self.coll_name.is_null() {
                "missing".into()
            } else {
                "trace".into()
            };
        }
        let mut s = format!("inferred from kernel name: {}", fields.join(", "));
        if self.send_recv && self.guessed_name.is_some() {
            s.push_str(" (SendRecv kernel: all_to_all or send/recv)");
        }
        s
    }
}

fn long_row(rank: i64, ev: &CollectiveKernel) -> LongRow {
    let name = ev.name;
    let a: &CollectiveArgs = ev.args;
    let mut coll_name = Val::from_arg(&a.coll_name);
    let mut custom_named = false;
    if coll_name.is_null() {
        let lower = name.to_ascii_lowercase();
        if let Some((_, c)) = CUSTOM_COLLECTIVES.iter().find(|(p, _)| lower.contains(p)) {
            coll_name = Val::Str(c.to_string());
            custom_named = true;
        }
    }
    let dtype = Val::from_arg(&a.dtype);
    let guess = infer_from_kernel_name(name);
    let in_nelems = Val::from_arg(&a.in_nelems);
    let out_nelems = Val::from_arg(&a.out_nelems);
    let bytes = dtype.as_str().and_then(dtype_bytes);
    // Sizes only from the trace's own dtype: an inferred dtype must not
    // change numbers the reference computes.
    let mb = |n: &Val| match (bytes, n.num()) {
        (Some(b), Some(N::I(i))) => match i.checked_mul(b) {
            Some(p) => Val::float(p as f64 / 1_048_576.0),
            None => Val::float(i as f64 * b as f64 / 1_048_576.0),
        },
        (Some(b), Some(N::F(x))) => Val::float(x * b as f64 / 1_048_576.0),
        _ => Val::Null,
    };
    let (in_mb, out_mb) = if bytes.is_some() && !in_nelems.is_null() {
        (mb(&in_nelems), mb(&out_nelems))
    } else {
        (Val::Null, Val::Null)
    };
    LongRow {
        rank,
        pg_name: Val::from_arg(&a.pg_name),
        pg_ranks: Val::from_arg(&a.pg_ranks),
        guessed_name: if coll_name.is_null() {
            guess.collective
        } else {
            None
        },
        guessed_dtype: if dtype.is_null() { guess.dtype } else { None },
        coll_name,
        group_size: Val::from_arg(&a.group_size),
        dtype,
        in_nelems,
        in_mb,
        out_nelems,
        out_mb,
        in_split: Val::from_arg(&a.in_split),
        out_split: Val::from_arg(&a.out_split),
        stream: ev.stream.map_or(Val::Null, Val::Int),
        ts: ev.ts.clone(),
        dur: ev.dur.clone(),
        index_in_group: 0,
        cid: String::new(),
        custom_named,
        send_recv: guess.send_recv,
    }
}

/// Builds the long table (spec A2–A4): rows in rank order, then file order;
/// columns typed; process groups filled; collectives numbered.
pub(super) fn build_long(ranks: &[Trace]) -> (Vec<LongRow>, Mode) {
    let mut rows: Vec<LongRow> = Vec::new();
    for (r, trace) in ranks.iter().enumerate() {
        for ev in collective_kernels(trace) {
            rows.push(long_row(r as i64, &ev));
        }
    }
    macro_rules! norm {
        ($($f:ident),*) => { $( normalize_field(&mut rows, |r| &mut r.$f); )* };
    }
    norm!(
        pg_name, pg_ranks, coll_name, group_size, dtype, in_nelems, in_mb, out_nelems, out_mb,
        in_split, out_split, stream, ts, dur
    );
    let pg_missing = rows.iter().all(|r| r.pg_name.is_null())
        || rows
            .iter()
            .all(|r| r.pg_name.is_null() || r.pg_name.as_str() == Some("Unknown_Group"));
    // At most one distinct stream per rank (one pass over the rows).
    let mut streams: Vec<Option<&Val>> = vec![None; ranks.len()];
    let mut one_stream = true;
    for r in rows.iter().filter(|r| !r.stream.is_null()) {
        let slot = &mut streams[r.rank as usize];
        match slot {
            None => *slot = Some(&r.stream),
            Some(s) if !s.same(&r.stream) => one_stream = false,
            Some(_) => {}
        }
    }
    let mode = if pg_missing && one_stream {
        Mode::Simplified
    } else {
        Mode::Regular
    };
    for r in rows.iter_mut() {
        match mode {
            Mode::Simplified => r.pg_name = Val::Str("all".into()),
            Mode::Regular if r.pg_name.is_null() => r.pg_name = Val::Str("Unknown_Group".into()),
            Mode::Regular => {}
        }
    }
    // index_in_group: position by ts within (process group, rank); ties keep
    // table order (pandas rank(method="first")).
    let mut groups: IndexMap<(String, i64), Vec<usize>> = IndexMap::new();
    for (i, r) in rows.iter().enumerate() {
        let key = match mode {
            Mode::Simplified => String::new(),
            Mode::Regular => r.pg_name.text(),
        };
        groups.entry((key, r.rank)).or_default().push(i);
    }
    for (_, mut idx) in groups {
        idx.sort_by(|&a, &b| rows[a].ts.f64().total_cmp(&rows[b].ts.f64()));
        for (k, i) in idx.into_iter().enumerate() {
            rows[i].index_in_group = k;
        }
    }
    for r in rows.iter_mut() {
        r.cid = match mode {
            Mode::Simplified => r.index_in_group.to_string(),
            Mode::Regular => format!("{}_{}", r.pg_name.text(), r.index_in_group),
        };
    }
    (rows, mode)
}

// ---------------------------------------------------------------------------
// Node columns (spec A10)
// ---------------------------------------------------------------------------

/// Rank → node mapping when GPUs per node are known.
#[derive(Debug, Clone, Copy)]
pub(super) struct Nodes {
    pub(super) gpus_per_node: i64,
    pub(super) world_size: i64,
}

impl Nodes {
    pub(super) fn node_id(&self, rank: i64) -> Val {
        if (0..self.world_size).contains(&rank) {
            Val::Int(rank / self.gpus_per_node)
        } else {
            Val::Null
        }
    }

    pub(super) fn span(&self, pg_ranks: &Val) -> Val {
        let ranks = match pg_ranks {
            Val::Str(s) | Val::Py(s) => parse_rank_list(s),
            _ => Vec::new(),
        };
        let label = match ranks.first() {
            None => "unknown",
            Some(&first) => {
                let node = first.div_euclid(self.gpus_per_node);
                if ranks
                    .iter()
                    .all(|r| r.div_euclid(self.gpus_per_node) == node)
                {
                    "intra_node"
                } else {
                    "inter_node"
                }
            }
        };
        Val::Str(label.into())
    }
}

/// The ranks of a `Process Group Ranks` text: a list/tuple literal of ints,
/// else every run of digits in the text.
fn parse_rank_list(s: &str) -> Vec<i64> {
    let t = s.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .or_else(|| t.strip_prefix('(').and_then(|x| x.strip_suffix(')')));
    if let Some(inner) = inner {
        let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
        let parts: &[&str] = match parts.as_slice() {
            [rest @ .., ""] => rest,
            all => all,
        };
        let parsed: Option<Vec<i64>> = parts.iter().map(|p| p.parse().ok()).collect();
        if let Some(v) = parsed {
            return v;
        }
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in t.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            cur.push(c);
        } else if !cur.is_empty() {
            if let Ok(v) = cur.parse() {
                out.push(v);
            }
            cur.clear();
        }
    }
    out
}

// ---------------------------------------------------------------------------
// nccl_long, nccl_summary_long / coll_analysis
// ---------------------------------------------------------------------------

pub(super) fn long_sheet(rows: &[LongRow], nodes: Option<Nodes>) -> Sheet {
    let col = |f: &dyn Fn(&LongRow) -> Val| rows.iter().map(f).collect::<Vec<Val>>();
    let mut cols: Vec<(String, Vec<Val>)> = vec![
        ("collective_id".into(), col(&|r| Val::Str(r.cid.clone()))),
        (
            "index_in_group".into(),
            col(&|r| Val::Int(r.index_in_group as i64)),
        ),
        ("rank".into(), col(&|r| Val::Int(r.rank))),
        ("Process Group Name".into(), col(&|r| r.pg_name.clone())),
        ("Process Group Ranks".into(), col(&|r| r.pg_ranks.clone())),
        ("Collective name".into(), col(&|r| r.shown_name())),
        ("Group size".into(), col(&|r| r.group_size.clone())),
        ("dtype".into(), col(&|r| r.shown_dtype())),
        ("In msg nelems".into(), col(&|r| r.in_nelems.clone())),
        ("In msg size (MB)".into(), col(&|r| r.in_mb.clone())),
        ("Out msg nelems".into(), col(&|r| r.out_nelems.clone())),
        ("Out msg size (MB)".into(), col(&|r| r.out_mb.clone())),
        ("In split size".into(), col(&|r| r.in_split.clone())),
        ("Out split size".into(), col(&|r| r.out_split.clone())),
        ("stream".into(), col(&|r| r.stream.clone())),
        ("ts".into(), col(&|r| r.ts.clone())),
        ("dur".into(), col(&|r| r.dur.clone())),
    ];
    if let Some(n) = nodes {
        cols.push(("node_id".into(), col(&|r| n.node_id(r.rank))));
        cols.push(("node_span".into(), col(&|r| n.span(&r.pg_ranks))));
    }
    cols.push(("metadata".into(), col(&|r| Val::Str(r.provenance()))));
    sheet_of("nccl_long", cols)
}

/// The 11 group keys of `nccl_summary_long` (spec A5).
fn summary_long_key(r: &LongRow) -> Vec<Val> {
    vec![
        Val::Int(r.rank),
        r.pg_name.clone(),
        r.pg_ranks.clone(),
        r.coll_name.clone(),
        r.group_size.clone(),
        r.dtype.clone(),
        r.in_nelems.clone(),
        r.out_nelems.clone(),
        r.in_split.clone(),
        r.out_split.clone(),
        r.stream.clone(),
    ]
}

pub(super) fn summary_long_sheet(name: &str, rows: &[LongRow], nodes: Option<Nodes>) -> Sheet {
    const KEYS: [&str; 11] = [
        "rank",
        "Process Group Name",
        "Process Group Ranks",
        "Collective name",
        "Group size",
        "dtype",
        "In msg nelems",
        "Out msg nelems",
        "In split size",
        "Out split size",
        "stream",
    ];
    if rows.is_empty() {
        return Sheet::new(name, &[]);
    }
    let groups = group_sorted(rows, summary_long_key, true);
    struct Out {
        key: Vec<Val>,
        vals: Vec<Val>,
        sum: f64,
    }
    let mut out: Vec<Out> = groups
        .into_iter()
        .map(|(key, idx)| {
            let durs: Vec<&Val> = idx.iter().map(|&i| &rows[i].dur).collect();
            let sum = Agg::Sum.apply(&durs);
            let vals = vec![
                first_non_null(idx.iter().map(|&i| &rows[i].in_mb)),
                first_non_null(idx.iter().map(|&i| &rows[i].out_mb)),
                sum.clone(),
                Agg::Mean.apply(&durs),
                Agg::Std.apply(&durs),
                Agg::Min.apply(&durs),
                Agg::Max.apply(&durs),
                Val::Int(idx.len() as i64),
            ];
            Out {
                key,
                vals,
                sum: sum.f64(),
            }
        })
        .collect();
    sort_desc_by(&mut out, |o| o.sum);
    let mut cols: Vec<(String, Vec<Val>)> = KEYS
        .iter()
        .enumerate()
        .map(|(j, h)| {
            (
                h.to_string(),
                out.iter().map(|o| o.key[j].clone()).collect(),
            )
        })
        .collect();
    for (j, h) in [
        "In msg size (MB)_first",
        "Out msg size (MB)_first",
        "dur_sum",
        "dur_mean",
        "dur_std",
        "dur_min",
        "dur_max",
        "operation_count",
    ]
    .iter()
    .enumerate()
    {
        cols.push((
            h.to_string(),
            out.iter().map(|o| o.vals[j].clone()).collect(),
        ));
    }
    if let Some(n) = nodes {
        cols.push((
            "node_id".into(),
            out.iter()
                .map(|o| n.node_id(o.key[0].f64() as i64))
                .collect(),
        ));
        cols.push((
            "node_span".into(),
            out.iter().map(|o| n.span(&o.key[2])).collect(),
        ));
    }
    sheet_of(name, cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lists() {
        assert_eq!(parse_rank_list("[0, 1, 2, 3]"), vec![0, 1, 2, 3]);
        assert_eq!(parse_rank_list("(4, 5,)"), vec![4, 5]);
        assert_eq!(parse_rank_list("[]"), Vec::<i64>::new());
        assert_eq!(parse_rank_list("ranks 2 and 10"), vec![2, 10]);
        let n = Nodes {
            gpus_per_node: 2,
            world_size: 4,
        };
        assert_eq!(
            n.span(&Val::Str("[0, 1]".into())),
            Val::Str("intra_node".into())
        );
        assert_eq!(
            n.span(&Val::Py("(1, 2)".into())),
            Val::Str("inter_node".into())
        );
        assert_eq!(n.span(&Val::Null), Val::Str("unknown".into()));
        assert_eq!(n.node_id(3), Val::Int(1));
        assert_eq!(n.node_id(4), Val::Null);
    }
}
