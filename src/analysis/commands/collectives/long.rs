//! The long table (one row per collective kernel per rank), the matching
//! mode, node columns, and the `nccl_long` / `nccl_summary_long` sheets.

use super::CollectiveKernel;
use super::infer::{CUSTOM_COLLECTIVES, dtype_bytes, infer_from_kernel_name};
use super::values::columns;
use super::values::time_value;
use crate::analysis::common::arg_cells::arg_value;
use crate::names::{col, sheet};
use crate::table::agg::{Agg, desc_nan_last, first_present};
use crate::table::group::{group_first_seen, group_sorted};
use crate::table::typing::{dataframe, widen_ints};
use crate::table::{Column, Num, Table, Value};
use crate::trace::CollectiveArgs;

// ---------------------------------------------------------------------------
// The long table
// ---------------------------------------------------------------------------

/// How collectives were matched across ranks.
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
    pub(super) pg_name: Value,
    pub(super) pg_ranks: Value,
    /// `Collective name` from the trace (or the reference's custom rule).
    pub(super) coll_name: Value,
    pub(super) group_size: Value,
    /// `dtype` from the trace.
    pub(super) dtype: Value,
    pub(super) in_nelems: Value,
    pub(super) in_mb: Value,
    pub(super) out_nelems: Value,
    pub(super) out_mb: Value,
    pub(super) in_split: Value,
    pub(super) out_split: Value,
    pub(super) stream: Value,
    pub(super) ts: Value,
    pub(super) dur: Value,
    pub(super) index_in_group: usize,
    pub(super) cid: String,
    /// Shown where the trace has no `Collective name` / `dtype`.
    pub(super) guessed_name: Option<&'static str>,
    pub(super) guessed_dtype: Option<&'static str>,
    /// The reference's custom rule named the collective.
    pub(super) custom_named: bool,
    pub(super) send_recv: bool,
    /// `Seq`: the process group's sequence number, when the trace has it
    /// (an integer, or a string of one).
    pub(super) seq: Option<i64>,
}

impl LongRow {
    pub(super) fn shown_name(&self) -> Value {
        match (&self.coll_name, self.guessed_name) {
            (Value::Null, Some(g)) => Value::Text(g.into()),
            (v, _) => v.clone(),
        }
    }

    pub(super) fn shown_dtype(&self) -> Value {
        match (&self.dtype, self.guessed_dtype) {
            (Value::Null, Some(g)) => Value::Text(g.into()),
            (v, _) => v.clone(),
        }
    }

    /// The `metadata` column: where `Collective name` and `dtype` came from.
    pub(super) fn provenance(&self) -> String {
        let mut fields = Vec::new();
        if self.custom_named || self.guessed_name.is_some() {
            fields.push(col::COLLECTIVE_NAME);
        }
        if self.guessed_dtype.is_some() {
            fields.push(col::DTYPE);
        }
        if fields.is_empty() {
            return if self.coll_name.is_missing() {
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
    let mut coll_name = arg_value(a.coll_name.as_ref());
    let mut custom_named = false;
    if coll_name.is_missing() {
        let lower = name.to_ascii_lowercase();
        if let Some((_, c)) = CUSTOM_COLLECTIVES.iter().find(|(p, _)| lower.contains(p)) {
            coll_name = Value::from(*c);
            custom_named = true;
        }
    }
    let dtype = arg_value(a.dtype.as_ref());
    let guess = infer_from_kernel_name(name);
    let in_nelems = arg_value(a.in_nelems.as_ref());
    let out_nelems = arg_value(a.out_nelems.as_ref());
    let bytes = dtype.as_str().and_then(dtype_bytes);
    // Sizes only from the trace's own dtype: an inferred dtype must not
    // change numbers the reference computes.
    let mb = |n: &Value| match (bytes, n.num()) {
        (Some(b), Some(Num::Int(i))) => match i.checked_mul(b) {
            Some(p) => Value::float_or_null(p as f64 / 1_048_576.0),
            None => Value::float_or_null(i as f64 * b as f64 / 1_048_576.0),
        },
        (Some(b), Some(Num::Float(x))) => Value::float_or_null(x * b as f64 / 1_048_576.0),
        _ => Value::Null,
    };
    let (in_mb, out_mb) = if bytes.is_some() && !in_nelems.is_missing() {
        (mb(&in_nelems), mb(&out_nelems))
    } else {
        (Value::Null, Value::Null)
    };
    LongRow {
        rank,
        pg_name: arg_value(a.pg_name.as_ref()),
        pg_ranks: arg_value(a.pg_ranks.as_ref()),
        guessed_name: if coll_name.is_missing() {
            guess.collective
        } else {
            None
        },
        guessed_dtype: if dtype.is_missing() {
            guess.dtype
        } else {
            None
        },
        coll_name,
        group_size: arg_value(a.group_size.as_ref()),
        dtype,
        in_nelems,
        in_mb,
        out_nelems,
        out_mb,
        in_split: arg_value(a.in_split.as_ref()),
        out_split: arg_value(a.out_split.as_ref()),
        stream: ev.stream.map_or(Value::Null, Value::Int),
        ts: time_value(ev.ts, ev.ts_is_int),
        dur: time_value(ev.dur, ev.dur_is_int),
        index_in_group: 0,
        cid: String::new(),
        custom_named,
        send_recv: guess.send_recv,
        seq: a.seq_number(),
    }
}

/// Builds the long table: rows in rank order, then file order;
/// columns typed; process groups filled; collectives numbered.
pub(super) fn build_long(ranks: &[Vec<CollectiveKernel>]) -> (Vec<LongRow>, Mode) {
    let mut rows: Vec<LongRow> = Vec::new();
    for (r, kernels) in ranks.iter().enumerate() {
        for ev in kernels {
            rows.push(long_row(r as i64, ev));
        }
    }
    macro_rules! norm {
        ($($f:ident),*) => { $( widen_ints(rows.iter_mut().map(|r| &mut r.$f)); )* };
    }
    norm!(
        pg_name, pg_ranks, coll_name, group_size, dtype, in_nelems, in_mb, out_nelems, out_mb,
        in_split, out_split, stream, ts, dur
    );
    let pg_missing = rows.iter().all(|r| r.pg_name.is_missing())
        || rows
            .iter()
            .all(|r| r.pg_name.is_missing() || r.pg_name.as_str() == Some("Unknown_Group"));
    // At most one distinct stream per rank (one pass over the rows).
    let mut streams: Vec<Option<&Value>> = vec![None; ranks.len()];
    let mut one_stream = true;
    for r in rows.iter().filter(|r| !r.stream.is_missing()) {
        let slot = &mut streams[r.rank as usize];
        match slot {
            None => *slot = Some(&r.stream),
            Some(s) if !s.key_eq(&r.stream) => one_stream = false,
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
            Mode::Simplified => r.pg_name = Value::Text("all".into()),
            Mode::Regular if r.pg_name.is_missing() => {
                r.pg_name = Value::Text("Unknown_Group".into())
            }
            Mode::Regular => {}
        }
    }
    // index_in_group: position by ts within (process group, rank); ties keep
    // table order (pandas rank(method="first")).
    let groups = group_first_seen(rows.iter().map(|r| {
        let key = match mode {
            Mode::Simplified => String::new(),
            Mode::Regular => r.pg_name.py_str(),
        };
        (key, r.rank)
    }));
    for (_, mut idx) in groups {
        idx.sort_by(|&a, &b| rows[a].ts.to_f64().total_cmp(&rows[b].ts.to_f64()));
        for (k, i) in idx.into_iter().enumerate() {
            rows[i].index_in_group = k;
        }
    }
    for r in rows.iter_mut() {
        r.cid = match mode {
            Mode::Simplified => r.index_in_group.to_string(),
            Mode::Regular => format!("{}_{}", r.pg_name.py_str(), r.index_in_group),
        };
    }
    (rows, mode)
}

// ---------------------------------------------------------------------------
// Node columns
// ---------------------------------------------------------------------------

/// Rank → node mapping when GPUs per node are known.
#[derive(Debug, Clone, Copy)]
pub(super) struct Nodes {
    pub(super) gpus_per_node: i64,
    pub(super) world_size: i64,
}

impl Nodes {
    pub(super) fn node_id(&self, rank: i64) -> Value {
        if (0..self.world_size).contains(&rank) {
            Value::Int(rank / self.gpus_per_node)
        } else {
            Value::Null
        }
    }

    pub(super) fn span(&self, pg_ranks: &Value) -> Value {
        let ranks = match pg_ranks {
            Value::Text(s) | Value::Py(s) => parse_rank_list(s),
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
        Value::Text(label.into())
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

pub(super) fn long_sheet(rows: &[LongRow], nodes: Option<Nodes>) -> Table {
    let column =
        |name: &str, f: &dyn Fn(&LongRow) -> Value| Column::new(name, rows.iter().map(f).collect());
    let mut cols: Vec<Column> = vec![
        column(col::COLLECTIVE_ID, &|r| Value::Text(r.cid.as_str().into())),
        column(col::INDEX_IN_GROUP, &|r| {
            Value::Int(r.index_in_group as i64)
        }),
        column(col::RANK, &|r| Value::Int(r.rank)),
        column(col::PROCESS_GROUP_NAME, &|r| r.pg_name.clone()),
        column(col::PROCESS_GROUP_RANKS, &|r| r.pg_ranks.clone()),
        column(col::COLLECTIVE_NAME, &|r| r.shown_name()),
        column(col::GROUP_SIZE, &|r| r.group_size.clone()),
        column(col::DTYPE, &|r| r.shown_dtype()),
        column(col::IN_MSG_NELEMS, &|r| r.in_nelems.clone()),
        column(col::IN_MSG_SIZE_MB, &|r| r.in_mb.clone()),
        column(col::OUT_MSG_NELEMS, &|r| r.out_nelems.clone()),
        column(col::OUT_MSG_SIZE_MB, &|r| r.out_mb.clone()),
        column(col::IN_SPLIT_SIZE, &|r| r.in_split.clone()),
        column(col::OUT_SPLIT_SIZE, &|r| r.out_split.clone()),
        column(col::STREAM, &|r| r.stream.clone()),
        column(col::TS, &|r| r.ts.clone()),
        column(col::DUR, &|r| r.dur.clone()),
    ];
    if let Some(n) = nodes {
        cols.push(column(col::NODE_ID, &|r| n.node_id(r.rank)));
        cols.push(column(col::NODE_SPAN, &|r| n.span(&r.pg_ranks)));
    }
    cols.push(column(col::METADATA, &|r| {
        Value::Text(r.provenance().into())
    }));
    dataframe(sheet::NCCL_LONG, cols)
}

/// The 11 group keys of `nccl_summary_long`.
fn summary_long_key(r: &LongRow) -> Vec<Value> {
    vec![
        Value::Int(r.rank),
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

pub(super) fn summary_long_sheet(name: &str, rows: &[LongRow], nodes: Option<Nodes>) -> Table {
    const KEYS: [&str; 11] = [
        col::RANK,
        col::PROCESS_GROUP_NAME,
        col::PROCESS_GROUP_RANKS,
        col::COLLECTIVE_NAME,
        col::GROUP_SIZE,
        col::DTYPE,
        col::IN_MSG_NELEMS,
        col::OUT_MSG_NELEMS,
        col::IN_SPLIT_SIZE,
        col::OUT_SPLIT_SIZE,
        col::STREAM,
    ];
    const VALUES: [&str; 8] = [
        col::IN_MSG_SIZE_MB_FIRST,
        col::OUT_MSG_SIZE_MB_FIRST,
        col::DUR_SUM,
        col::DUR_MEAN,
        col::DUR_STD,
        col::DUR_MIN,
        col::DUR_MAX,
        col::OPERATION_COUNT,
    ];
    if rows.is_empty() {
        return Table::new(name, &[]);
    }
    let groups = group_sorted(rows.iter().map(summary_long_key), true);
    let mut out: Vec<(Vec<Value>, f64)> = groups
        .into_iter()
        .map(|(mut cells, idx)| {
            let durs = || idx.iter().map(|&i| &rows[i].dur);
            let sum = Agg::Sum.apply(durs());
            let total = sum.to_f64();
            cells.extend([
                first_present(idx.iter().map(|&i| &rows[i].in_mb)),
                first_present(idx.iter().map(|&i| &rows[i].out_mb)),
                sum,
                Agg::Mean.apply(durs()),
                Agg::Std.apply(durs()),
                Agg::Min.apply(durs()),
                Agg::Max.apply(durs()),
                Value::Int(idx.len() as i64),
            ]);
            if let Some(n) = nodes {
                let node = n.node_id(cells[0].to_f64() as i64);
                let span = n.span(&cells[2]);
                cells.extend([node, span]);
            }
            (cells, total)
        })
        .collect();
    out.sort_by(|a, b| desc_nan_last(a.1, b.1));
    let mut headers: Vec<&str> = KEYS.iter().chain(&VALUES).copied().collect();
    if nodes.is_some() {
        headers.extend([col::NODE_ID, col::NODE_SPAN]);
    }
    dataframe(name, columns(&headers, &out))
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
            n.span(&Value::Text("[0, 1]".into())),
            Value::Text("intra_node".into())
        );
        assert_eq!(
            n.span(&Value::Py("(1, 2)".into())),
            Value::Text("inter_node".into())
        );
        assert_eq!(n.span(&Value::Null), Value::Text("unknown".into()));
        assert_eq!(n.node_id(3), Value::Int(1));
        assert_eq!(n.node_id(4), Value::Null);
    }
}
