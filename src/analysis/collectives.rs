//! Collective (NCCL/RCCL) analysis across ranks (spec 04 Part A): the long
//! table of collective kernels, matching of the same collective across
//! ranks, implicit-sync metrics (latency, skew, wait, bandwidth), the
//! straggler summary, all_to_allv sheets, and the single-trace
//! `coll_analysis` sheet.
//!
//! Values are kept as [`Val`]s that follow pandas' typing: a column of
//! numbers with any missing value, or any float, is a float column (ints
//! print as `8.0`); other columns keep each value's own type. Every table is
//! typed column by column exactly where the reference builds a DataFrame.

use std::cmp::Ordering;
use std::fmt::Write as _;

use indexmap::IndexMap;

use crate::load::collectives::{
    ArgValue, CollectiveArgs, CollectiveEvent, Num, RankCollectives, is_collective_name,
};
use crate::numeric::{kahan_sum, median, pairwise_sum, welford_std};
use crate::pyfmt::{float_repr, json_to_py};
use crate::report::markdown::table;
use crate::report::{Cell, Sheet};
use crate::trace::{Cat, NO_INT, Trace};

// ---------------------------------------------------------------------------
// Values with pandas typing
// ---------------------------------------------------------------------------

/// A cell value of a reference DataFrame.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    /// None / NaN.
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A Python string.
    Str(String),
    /// A tuple or dict, as its Python repr.
    Py(String),
}

impl Val {
    fn from_arg(a: &Option<ArgValue>) -> Val {
        match a {
            None => Val::Null,
            Some(ArgValue::Int(i)) => Val::Int(*i),
            Some(ArgValue::Float(x)) => Val::float(*x),
            Some(ArgValue::Bool(b)) => Val::Bool(*b),
            Some(ArgValue::Str(s)) => Val::Str(s.clone()),
            Some(ArgValue::Json(v)) => Val::Py(json_to_py(v, true)),
        }
    }

    fn from_num(n: Num) -> Val {
        match n {
            Num::Int(i) => Val::Int(i),
            Num::Float(x) => Val::float(x),
        }
    }

    /// A float; NaN is pandas' missing value.
    fn float(x: f64) -> Val {
        if x.is_nan() { Val::Null } else { Val::Float(x) }
    }

    fn is_null(&self) -> bool {
        matches!(self, Val::Null)
    }

    fn num(&self) -> Option<N> {
        match self {
            Val::Int(i) => Some(N::I(*i)),
            Val::Float(x) => Some(N::F(*x)),
            _ => None,
        }
    }

    fn f64(&self) -> f64 {
        self.num().map_or(f64::NAN, N::f)
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python `str()` of the value (used to build ids and labels).
    fn text(&self) -> String {
        match self {
            Val::Null => "None".into(),
            Val::Int(i) => i.to_string(),
            Val::Float(x) => float_repr(*x),
            Val::Bool(true) => "True".into(),
            Val::Bool(false) => "False".into(),
            Val::Str(s) | Val::Py(s) => s.clone(),
        }
    }

    fn cell(&self) -> Cell {
        match self {
            Val::Null => Cell::Empty,
            Val::Int(i) => Cell::Int(*i),
            Val::Float(x) => Cell::Float(*x),
            Val::Bool(b) => Cell::Bool(*b),
            Val::Str(s) | Val::Py(s) => Cell::Text(s.clone()),
        }
    }

    /// Python equality for group keys and consistency checks (`2 == 2.0`;
    /// null equals null).
    fn same(&self, o: &Val) -> bool {
        match (self.num(), o.num()) {
            (Some(a), Some(b)) => a.f() == b.f(),
            _ => self == o,
        }
    }

    /// Sort order of group keys: numbers, then strings, then tuples, then
    /// nulls (pandas sorts numbers before strings in a mixed key column).
    fn cmp_key(&self, o: &Val) -> Ordering {
        fn class(v: &Val) -> u8 {
            match v {
                Val::Int(_) | Val::Float(_) | Val::Bool(_) => 0,
                Val::Str(_) => 1,
                Val::Py(_) => 2,
                Val::Null => 3,
            }
        }
        fn numeric(v: &Val) -> f64 {
            match v {
                Val::Bool(b) => *b as u8 as f64,
                other => other.f64(),
            }
        }
        match class(self).cmp(&class(o)) {
            Ordering::Equal => match (self, o) {
                (Val::Str(a), Val::Str(b)) | (Val::Py(a), Val::Py(b)) => a.cmp(b),
                (Val::Null, Val::Null) => Ordering::Equal,
                _ => numeric(self).total_cmp(&numeric(o)),
            },
            c => c,
        }
    }
}

/// A number that remembers whether it is an integer, so that arithmetic on
/// integer timestamps stays integer as in the reference.
#[derive(Debug, Clone, Copy)]
enum N {
    I(i64),
    F(f64),
}

impl N {
    fn f(self) -> f64 {
        match self {
            N::I(i) => i as f64,
            N::F(x) => x,
        }
    }

    fn add(self, o: N) -> N {
        match (self, o) {
            (N::I(a), N::I(b)) => a.checked_add(b).map_or(N::F(a as f64 + b as f64), N::I),
            _ => N::F(self.f() + o.f()),
        }
    }

    fn sub(self, o: N) -> N {
        match (self, o) {
            (N::I(a), N::I(b)) => a.checked_sub(b).map_or(N::F(a as f64 - b as f64), N::I),
            _ => N::F(self.f() - o.f()),
        }
    }

    fn lt(self, o: N) -> bool {
        match (self, o) {
            (N::I(a), N::I(b)) => a < b,
            _ => self.f() < o.f(),
        }
    }

    fn val(self) -> Val {
        match self {
            N::I(i) => Val::Int(i),
            N::F(x) => Val::float(x),
        }
    }
}

fn n_max(v: impl IntoIterator<Item = N>) -> Option<N> {
    v.into_iter().fold(None, |m, x| {
        Some(m.map_or(x, |m: N| if m.lt(x) { x } else { m }))
    })
}

fn n_min(v: impl IntoIterator<Item = N>) -> Option<N> {
    v.into_iter().fold(None, |m, x| {
        Some(m.map_or(x, |m: N| if x.lt(m) { x } else { m }))
    })
}

/// Python `sum()` from 0 over the values, left to right.
fn n_sum(v: impl IntoIterator<Item = N>) -> N {
    v.into_iter().fold(N::I(0), N::add)
}

/// pandas' dtype inference for one column built from Python objects: when
/// every non-missing value is a number and any is missing or a float, the
/// column is float64 (ints become floats).
fn normalize(col: &mut [&mut Val]) {
    let (mut num, mut other, mut null, mut float) = (false, false, false, false);
    for v in col.iter() {
        match **v {
            Val::Null => null = true,
            Val::Int(_) => num = true,
            Val::Float(_) => {
                num = true;
                float = true
            }
            _ => other = true,
        }
    }
    if num && !other && (null || float) {
        for v in col.iter_mut() {
            if let Val::Int(i) = **v {
                **v = Val::Float(i as f64);
            }
        }
    }
}

/// Normalizes the field picked by `get` across `rows`.
fn normalize_field<T>(rows: &mut [T], get: impl Fn(&mut T) -> &mut Val) {
    let mut col: Vec<&mut Val> = rows.iter_mut().map(get).collect();
    normalize(&mut col);
}

/// Builds a sheet from named columns of values, typing each column.
fn sheet_of(name: &str, mut cols: Vec<(String, Vec<Val>)>) -> Sheet {
    for (_, c) in cols.iter_mut() {
        let mut refs: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut refs);
    }
    let n = cols.first().map_or(0, |(_, c)| c.len());
    Sheet {
        name: name.to_string(),
        columns: cols.iter().map(|(h, _)| h.clone()).collect(),
        rows: (0..n)
            .map(|i| cols.iter().map(|(_, c)| c[i].cell()).collect())
            .collect(),
    }
}

// ---------------------------------------------------------------------------
// Aggregations
// ---------------------------------------------------------------------------

/// A pandas aggregation of a column of numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agg {
    /// `mean`.
    Mean,
    /// `median`.
    Median,
    /// `min`.
    Min,
    /// `max`.
    Max,
    /// `std` (sample, ddof = 1).
    Std,
    /// `sum`.
    Sum,
}

impl Agg {
    /// The pandas name, used in column headers (`comm_latency_mean`).
    pub fn name(self) -> &'static str {
        match self {
            Agg::Mean => "mean",
            Agg::Median => "median",
            Agg::Min => "min",
            Agg::Max => "max",
            Agg::Std => "std",
            Agg::Sum => "sum",
        }
    }

    /// Parses a pandas aggregation name.
    pub fn parse(s: &str) -> Option<Agg> {
        [
            Agg::Mean,
            Agg::Median,
            Agg::Min,
            Agg::Max,
            Agg::Std,
            Agg::Sum,
        ]
        .into_iter()
        .find(|a| a.name() == s)
    }

    /// The groupby aggregation of `vals` (missing values skipped).
    fn apply(self, vals: &[&Val]) -> Val {
        let nums: Vec<N> = vals.iter().filter_map(|v| v.num()).collect();
        let floats: Vec<f64> = nums.iter().map(|n| n.f()).collect();
        let all_int = nums.iter().all(|n| matches!(n, N::I(_)));
        match self {
            Agg::Mean if nums.is_empty() => Val::Null,
            Agg::Mean => Val::float(kahan_sum(&floats) / floats.len() as f64),
            Agg::Median => Val::float(median(&floats)),
            Agg::Min => n_min(nums).map_or(Val::Null, N::val),
            Agg::Max => n_max(nums).map_or(Val::Null, N::val),
            Agg::Std => welford_std(&floats).map_or(Val::Null, Val::float),
            Agg::Sum if all_int && !nums.is_empty() => n_sum(nums).val(),
            Agg::Sum => Val::Float(kahan_sum(&floats)),
        }
    }
}

/// The reference CLI's `--agg_metrics` default.
pub const DEFAULT_AGG_METRICS: [Agg; 4] = [Agg::Mean, Agg::Median, Agg::Min, Agg::Max];

fn first_non_null<'a>(vals: impl IntoIterator<Item = &'a Val>) -> Val {
    vals.into_iter()
        .find(|v| !v.is_null())
        .cloned()
        .unwrap_or(Val::Null)
}

/// numpy's `round(x, 1)`: `rint(x * 10) / 10`; integers stay integers.
fn round1(v: Val) -> Val {
    match v {
        Val::Float(x) => Val::Float((x * 10.0).round_ties_even() / 10.0),
        other => other,
    }
}

// ---------------------------------------------------------------------------
// Collective types and kernel-name inference
// ---------------------------------------------------------------------------

/// Collective type of a `Collective name` (spec A6), plus broadcast and
/// reduce, which the reference leaves untyped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CType {
    AllReduce,
    ReduceScatter,
    AllGather,
    AllToAll,
    AllToAllV,
    Broadcast,
    Reduce,
}

impl CType {
    fn of(name: &str) -> Option<CType> {
        Some(match name {
            "allreduce" | "allreduce_coalesced" => CType::AllReduce,
            "reducescatter" | "_reduce_scatter_base" | "reduce_scatter_tensor_coalesced" => {
                CType::ReduceScatter
            }
            "allgather"
            | "all_gather"
            | "_allgather_base"
            | "all_gather_into_tensor_coalesced"
            | "allgather_into_tensor_coalesced" => CType::AllGather,
            "all_to_all" => CType::AllToAll,
            "all_to_allv" => CType::AllToAllV,
            "broadcast" | "_broadcast_oop" => CType::Broadcast,
            "reduce" | "_reduce_oop" => CType::Reduce,
            _ => return None,
        })
    }

    fn label(self) -> &'static str {
        match self {
            CType::AllReduce => "allreduce",
            CType::ReduceScatter => "reducescatter",
            CType::AllGather => "allgather",
            CType::AllToAll => "alltoall",
            CType::AllToAllV => "alltoallv",
            CType::Broadcast => "broadcast",
            CType::Reduce => "reduce",
        }
    }

    /// Types with a row in `nccl_implicit_sync`.
    fn in_sync_table(self) -> bool {
        self != CType::AllToAllV
    }

    /// The reference's implicit-sync types, where every rank waits for the
    /// last one; only these count in `straggler_summary`.
    fn reference_sync(self) -> bool {
        matches!(
            self,
            CType::AllReduce | CType::ReduceScatter | CType::AllGather | CType::AllToAll
        )
    }

    /// Bus bandwidth / algorithm bandwidth for a group of `n` ranks: the
    /// reference's factors, and 1 for broadcast and reduce (as NCCL's own
    /// performance tests define bus bandwidth).
    fn bus_factor(self, n: f64) -> f64 {
        match self {
            CType::AllReduce => 2.0 * (n - 1.0) / n,
            CType::ReduceScatter | CType::AllGather | CType::AllToAll => (n - 1.0) / n,
            CType::Broadcast | CType::Reduce => 1.0,
            CType::AllToAllV => f64::NAN,
        }
    }
}

fn ctype_of_val(v: &Val) -> Option<CType> {
    v.as_str().and_then(CType::of)
}

/// What a collective kernel's name says about the collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelGuess {
    /// A `Collective name` as PyTorch writes it (`allreduce`, `all_to_all`, …).
    pub collective: Option<&'static str>,
    /// A PyTorch dtype name (`Float`, `BFloat16`, …), only for kernels that
    /// reduce: data-moving kernels (all-gather, broadcast, send/recv) are
    /// compiled for bytes whatever the tensor's type.
    pub dtype: Option<&'static str>,
    /// The kernel is NCCL's SendRecv, which serves all-to-all as well as
    /// point-to-point send/recv.
    pub send_recv: bool,
}

/// The reference's custom collectives: kernels whose name matches get this
/// `Collective name` when the trace has none (spec A2).
const CUSTOM_COLLECTIVES: [(&str, &str); 1] = [("cross_device_reduce", "allreduce")];

/// Infers the collective and dtype from a kernel name such as
/// `ncclKernel_AllReduce_RING_LL_Sum_float`,
/// `ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL`,
/// `ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t` or
/// `void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>`.
pub fn infer_from_kernel_name(name: &str) -> KernelGuess {
    // The parameter list says nothing about the collective.
    let base = name.split('(').next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    let has = |pats: &[&str]| pats.iter().any(|p| lower.contains(p));
    let (collective, reduces, send_recv) = if has(&["cross_device_reduce", "allreduce"]) {
        (Some("allreduce"), true, false)
    } else if has(&["reducescatter", "reduce_scatter"]) {
        (Some("reducescatter"), true, false)
    } else if has(&["allgather", "all_gather"]) {
        (Some("allgather"), false, false)
    } else if has(&["alltoall", "all_to_all"]) {
        (Some("all_to_all"), false, false)
    } else if has(&["sendrecv", "send_recv"]) {
        (Some("all_to_all"), false, true)
    } else if has(&["broadcast"]) {
        (Some("broadcast"), false, false)
    } else if has(&["reduce"]) {
        (Some("reduce"), true, false)
    } else {
        (None, false, false)
    };
    let dtype = if reduces {
        lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find_map(dtype_token)
    } else {
        None
    };
    KernelGuess {
        collective,
        dtype,
        send_recv,
    }
}

/// PyTorch's dtype name for a type token of a kernel name.
fn dtype_token(t: &str) -> Option<&'static str> {
    Some(match t {
        "float" | "f32" | "fp32" => "Float",
        "half" | "f16" | "fp16" => "Half",
        "bf16" | "bfloat16" => "BFloat16",
        "double" | "f64" | "fp64" => "Double",
        "int8" | "i8" => "Char",
        "uint8" | "u8" => "Byte",
        "int32" | "i32" => "Int",
        "uint32" | "u32" => "UInt32",
        "int64" | "i64" => "Long",
        "uint64" | "u64" => "UInt64",
        "f8e4m3" | "fp8e4m3" | "e4m3" => "Float8_e4m3fn",
        "f8e5m2" | "fp8e5m2" | "e5m2" => "Float8_e5m2",
        _ => return None,
    })
}

/// Bytes per element of a PyTorch dtype name (spec A2).
fn dtype_bytes(dtype: &str) -> Option<i64> {
    Some(match dtype {
        "Float" | "Int" => 4,
        "Long" | "Double" => 8,
        "BFloat16" | "Half" | "Short" => 2,
        "Bool" | "Byte" => 1,
        _ => return None,
    })
}

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
struct LongRow {
    rank: i64,
    pg_name: Val,
    pg_ranks: Val,
    /// `Collective name` from the trace (or the reference's custom rule).
    coll_name: Val,
    group_size: Val,
    /// `dtype` from the trace.
    dtype: Val,
    in_nelems: Val,
    in_mb: Val,
    out_nelems: Val,
    out_mb: Val,
    in_split: Val,
    out_split: Val,
    stream: Val,
    ts: Val,
    dur: Val,
    index_in_group: usize,
    cid: String,
    /// Shown where the trace has no `Collective name` / `dtype`.
    guessed_name: Option<&'static str>,
    guessed_dtype: Option<&'static str>,
    /// The reference's custom rule named the collective.
    custom_named: bool,
    send_recv: bool,
}

impl LongRow {
    fn shown_name(&self) -> Val {
        match (&self.coll_name, self.guessed_name) {
            (Val::Null, Some(g)) => Val::Str(g.into()),
            (v, _) => v.clone(),
        }
    }

    fn shown_dtype(&self) -> Val {
        match (&self.dtype, self.guessed_dtype) {
            (Val::Null, Some(g)) => Val::Str(g.into()),
            (v, _) => v.clone(),
        }
    }

    /// The `metadata` column: where `Collective name` and `dtype` came from.
    fn provenance(&self) -> String {
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

fn long_row(rank: i64, name: &str, ev: &CollectiveEvent) -> LongRow {
    let a: &CollectiveArgs = &ev.args;
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
        stream: Val::from_arg(&ev.stream),
        ts: Val::from_num(ev.ts),
        dur: Val::from_num(ev.dur),
        index_in_group: 0,
        cid: String::new(),
        custom_named,
        send_recv: guess.send_recv,
    }
}

/// Builds the long table (spec A2–A4): rows in rank order, then file order;
/// columns typed; process groups filled; collectives numbered.
fn build_long(ranks: &[RankCollectives]) -> (Vec<LongRow>, Mode) {
    let mut rows: Vec<LongRow> = Vec::new();
    for (r, rc) in ranks.iter().enumerate() {
        for ev in &rc.events {
            rows.push(long_row(r as i64, rc.name(ev), ev));
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
struct Nodes {
    gpus_per_node: i64,
    world_size: i64,
}

impl Nodes {
    fn node_id(&self, rank: i64) -> Val {
        if (0..self.world_size).contains(&rank) {
            Val::Int(rank / self.gpus_per_node)
        } else {
            Val::Null
        }
    }

    fn span(&self, pg_ranks: &Val) -> Val {
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

fn long_sheet(rows: &[LongRow], nodes: Option<Nodes>) -> Sheet {
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

fn cmp_keys(a: &[Val], b: &[Val]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.cmp_key(y))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn same_keys(a: &[Val], b: &[Val]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.same(y))
}

/// Groups `items` by `key` (rows with a null key are dropped when
/// `drop_null`), in ascending key order; each group keeps table order.
fn group_sorted<T>(
    items: &[T],
    key: impl Fn(&T) -> Vec<Val>,
    drop_null: bool,
) -> Vec<(Vec<Val>, Vec<usize>)> {
    let mut keyed: Vec<(Vec<Val>, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, t)| (key(t), i))
        .filter(|(k, _)| !drop_null || k.iter().all(|v| !v.is_null()))
        .collect();
    // Stable: equal keys keep table order.
    keyed.sort_by(|a, b| cmp_keys(&a.0, &b.0));
    let mut out: Vec<(Vec<Val>, Vec<usize>)> = Vec::new();
    for (k, i) in keyed {
        match out.last_mut() {
            Some((lk, idx)) if same_keys(lk, &k) => idx.push(i),
            _ => out.push((k, vec![i])),
        }
    }
    out
}

/// Stable descending sort by a numeric column; missing values last.
fn sort_desc_by<T>(rows: &mut [T], key: impl Fn(&T) -> f64) {
    rows.sort_by(|a, b| {
        let (x, y) = (key(a), key(b));
        match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => y.total_cmp(&x),
        }
    });
}

fn summary_long_sheet(name: &str, rows: &[LongRow], nodes: Option<Nodes>) -> Sheet {
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

// ---------------------------------------------------------------------------
// nccl_implicit_sync and its summary
// ---------------------------------------------------------------------------

/// One collective matched across ranks (a `nccl_implicit_sync` row).
#[derive(Debug, Clone)]
struct SyncRow {
    cid: String,
    pg_name: Val,
    pg_ranks: Val,
    /// Shown `Collective name` / `dtype` (inferred where the trace has none).
    name_shown: Val,
    dtype_shown: Val,
    /// From the trace: group keys of the summary.
    name_meta: Val,
    dtype_meta: Val,
    group_size: Val,
    in_nelems: Val,
    out_nelems: Val,
    in_mb: Val,
    out_mb: Val,
    full_mb: Val,
    comm_latency: Val,
    skew_start: Val,
    earliest: i64,
    avg_wait: Val,
    skew_end: Val,
    algo: Val,
    bus: Val,
    /// (rank, ts, dur, wait), in table order.
    ranks: Vec<(i64, Val, Val, Val)>,
    provenance: String,
    /// Collective type for people: from the trace, else from the kernel name.
    kind: String,
    inferred: bool,
    /// Counted in straggler_summary (the reference's implicit-sync types).
    straggler: bool,
}

/// Collectives in order of first appearance, each with its rows (one per rank).
fn by_collective(rows: &[LongRow]) -> IndexMap<&str, Vec<usize>> {
    let mut m: IndexMap<&str, Vec<usize>> = IndexMap::new();
    for (i, r) in rows.iter().enumerate() {
        m.entry(r.cid.as_str()).or_default().push(i);
    }
    m
}

fn check_consistent(
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

type Getter = (&'static str, fn(&LongRow) -> &Val);

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

fn build_sync(rows: &[LongRow], mode: Mode) -> Result<Vec<SyncRow>, String> {
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

fn sync_sheet(rows: &[SyncRow], nodes: Option<Nodes>) -> Sheet {
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

fn summary_sync_sheet(rows: &[SyncRow], aggs: &[Agg]) -> Sheet {
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

// ---------------------------------------------------------------------------
// straggler_summary
// ---------------------------------------------------------------------------

fn straggler_sheet(sync: &[SyncRow], long: &[LongRow], nodes: Option<Nodes>) -> Option<Sheet> {
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
struct A2av {
    general: Vec<Val>,
    per_rank: Vec<(String, Val)>,
}

fn build_a2av(rows: &[LongRow]) -> Result<Vec<A2av>, String> {
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

fn a2av_sheet(items: &[A2av], nodes: Option<Nodes>) -> Sheet {
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

fn summary_a2av_sheet(items: &[A2av], aggs: &[Agg], nodes: Option<Nodes>) -> Option<Sheet> {
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

// ---------------------------------------------------------------------------
// Our per-type summary (for people, and for the Markdown page)
// ---------------------------------------------------------------------------

fn by_type_sheet(sync: &[SyncRow]) -> Sheet {
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

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/// Options of the multi-rank collective report.
#[derive(Debug, Clone)]
pub struct CollectiveOptions {
    /// Number of ranks of the job.
    pub world_size: usize,
    /// GPUs per node for `node_id` / `node_span`; `None`: from the first
    /// trace's `deviceProperties`, if it has any.
    pub gpus_per_node: Option<usize>,
    /// Aggregations of `nccl_summary_implicit_sync` and
    /// `nccl_summary_all2allv`.
    pub agg_metrics: Vec<Agg>,
}

impl Default for CollectiveOptions {
    fn default() -> Self {
        CollectiveOptions {
            world_size: 1,
            gpus_per_node: None,
            agg_metrics: DEFAULT_AGG_METRICS.to_vec(),
        }
    }
}

/// The multi-rank collective report.
#[derive(Debug, Clone)]
pub struct CollectiveReport {
    /// Sheets in the reference's write order, then `nccl_summary_by_type`.
    pub sheets: Vec<Sheet>,
    /// How collectives were matched across ranks.
    pub mode: Mode,
    /// Collective kernels over all ranks.
    pub kernels: usize,
    /// Ranks analysed.
    pub ranks: usize,
    /// Collectives matched across ranks with a `nccl_implicit_sync` row.
    pub matched: usize,
    /// Of those, how many were named from the kernel name.
    pub inferred: usize,
    /// GPUs per node used for the node columns.
    pub gpus_per_node: Option<usize>,
}

impl CollectiveReport {
    /// The sheet named `name`, if written.
    pub fn sheet(&self, name: &str) -> Option<&Sheet> {
        self.sheets.iter().find(|s| s.name == name)
    }
}

/// Runs the multi-rank analysis over `ranks` (index = rank). Fails on a
/// metadata mismatch between ranks (the reference's strict check).
pub fn analyze(
    ranks: &[RankCollectives],
    opts: &CollectiveOptions,
) -> Result<CollectiveReport, String> {
    let gpn = opts
        .gpus_per_node
        .or_else(|| ranks.first().map(|r| r.device_count).filter(|&n| n > 0));
    let nodes = gpn.map(|g| Nodes {
        gpus_per_node: g as i64,
        world_size: opts.world_size as i64,
    });
    let (long, mode) = build_long(ranks);
    let kernels = long.len();
    let mut sheets = Vec::new();
    if long.is_empty() {
        // The reference crashes here; we write the empty summaries.
        sheets.push(Sheet::new("nccl_summary_implicit_sync", &[]));
        sheets.push(Sheet::new("nccl_summary_long", &[]));
        return Ok(CollectiveReport {
            sheets,
            mode,
            kernels,
            ranks: ranks.len(),
            matched: 0,
            inferred: 0,
            gpus_per_node: gpn,
        });
    }
    let sync = build_sync(&long, mode)?;
    let a2av = build_a2av(&long)?;
    sheets.push(summary_sync_sheet(&sync, &opts.agg_metrics));
    sheets.push(summary_long_sheet("nccl_summary_long", &long, nodes));
    if !a2av.is_empty()
        && let Some(s) = summary_a2av_sheet(&a2av, &opts.agg_metrics, nodes)
    {
        sheets.push(s);
    }
    sheets.push(long_sheet(&long, nodes));
    sheets.push(sync_sheet(&sync, nodes));
    if !a2av.is_empty() {
        sheets.push(a2av_sheet(&a2av, nodes));
    }
    if let Some(s) = straggler_sheet(&sync, &long, nodes) {
        sheets.push(s);
    }
    if !sync.is_empty() {
        sheets.push(by_type_sheet(&sync));
    }
    Ok(CollectiveReport {
        sheets,
        mode,
        kernels,
        ranks: ranks.len(),
        matched: sync.len(),
        inferred: sync.iter().filter(|r| r.inferred).count(),
        gpus_per_node: gpn,
    })
}

/// The collective kernels of a loaded trace, as the multi-rank loader would
/// have kept them (spec A1).
pub fn rank_collectives(trace: &Trace) -> RankCollectives {
    let mut out = RankCollectives::default();
    let mut index = Default::default();
    for (uid, e) in trace.events.iter().enumerate() {
        if e.cat != Cat::Kernel || e.ts.is_nan() {
            continue;
        }
        let name = trace.strings.get(e.name);
        if !is_collective_name(name) {
            continue;
        }
        let Some(a) = trace.args_of(uid as u32) else {
            continue;
        };
        if a.correlation == NO_INT && a.external_id == NO_INT {
            continue;
        }
        let dur = if e.dur_is_int && e.dur.abs() < 9.0e15 {
            Num::Int(e.dur as i64)
        } else {
            Num::Float(if e.dur.is_nan() { 0.0 } else { e.dur })
        };
        let ev = CollectiveEvent {
            name: 0,
            ts: Num::Float(e.ts),
            dur,
            stream: (a.stream != NO_INT).then_some(ArgValue::Int(a.stream)),
            args: trace
                .collective_args
                .get(&(uid as u32))
                .cloned()
                .unwrap_or_default(),
        };
        out.push(name, ev, &mut index);
    }
    out
}

/// The single-trace report's `coll_analysis` sheet (spec A5): the
/// `nccl_summary_long` table of the trace as rank 0, without node columns.
/// `None` when it has no rows.
pub fn coll_analysis(trace: &Trace) -> Option<Sheet> {
    if trace.collective_args.is_empty() {
        // Without metadata every row drops out of the group-by.
        return None;
    }
    let rc = rank_collectives(trace);
    let (long, _) = build_long(std::slice::from_ref(&rc));
    let s = summary_long_sheet("coll_analysis", &long, None);
    (!s.rows.is_empty()).then_some(s)
}

/// The Markdown page of the multi-rank report: per collective type (count,
/// latency, bus bandwidth, skew, slowest ranks) and the stragglers.
pub fn markdown(report: &CollectiveReport, title: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## tracelens collectives: {title}\n");
    let mode = match report.mode {
        Mode::Regular => "by process group and order within it",
        Mode::Simplified => {
            "by order on each rank's stream (the traces have no process-group metadata)"
        }
    };
    let _ = writeln!(
        md,
        "{} ranks, {} collective kernels; {} collectives matched across ranks {mode}.\n",
        report.ranks, report.kernels, report.matched
    );
    match report.sheet("nccl_summary_by_type") {
        Some(s) => {
            let _ = writeln!(
                md,
                "### Per collective type\n\n{}",
                table(
                    s,
                    &[
                        "collective type",
                        "count",
                        "Total comm latency (ms)",
                        "comm_latency_mean",
                        "bus bw (GB/s)_mean",
                        "skew in start time_mean",
                        "arrived last most often (rank)",
                    ],
                    30,
                    3,
                )
            );
            let _ = writeln!(
                md,
                "Latency and skew in µs; bus bandwidth in GB/s (empty without message sizes in the traces)."
            );
            if report.inferred > 0 {
                let _ = writeln!(
                    md,
                    "{} of {} collectives had no `Collective name` in the trace; their type was inferred from the kernel name.",
                    report.inferred, report.matched
                );
            }
            md.push('\n');
        }
        None => md.push_str("No collective was matched across ranks.\n\n"),
    }
    if let Some(s) = report.sheet("straggler_summary") {
        let _ = writeln!(
            md,
            "### Slowest ranks (least waiting: the others wait for them)\n\n{}",
            table(
                s,
                &[
                    "rank",
                    "total_wait_time_us",
                    "mean_wait_time_us",
                    "times_arrived_last",
                    "pct_arrived_last",
                    "total_nccl_dur_us",
                ],
                10,
                1,
            )
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names() {
        let g = infer_from_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)");
        assert_eq!(g.collective, Some("allreduce"));
        assert_eq!(g.dtype, Some("Float"));
        let g = infer_from_kernel_name("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgs)");
        assert_eq!((g.collective, g.dtype), (Some("allgather"), None));
        let g = infer_from_kernel_name("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL");
        assert_eq!(
            (g.collective, g.dtype),
            (Some("reducescatter"), Some("BFloat16"))
        );
        let g = infer_from_kernel_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)");
        assert_eq!(
            (g.collective, g.dtype, g.send_recv),
            (Some("all_to_all"), None, true)
        );
        let g = infer_from_kernel_name("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>");
        assert_eq!(
            (g.collective, g.dtype),
            (Some("allreduce"), Some("BFloat16"))
        );
        let g = infer_from_kernel_name("ncclAllReduceRingLLKernel_sum_f16(CollectiveArgs)");
        assert_eq!((g.collective, g.dtype), (Some("allreduce"), Some("Half")));
        let g = infer_from_kernel_name("ncclKernel_Broadcast_RING_LL_Sum_int8_t");
        assert_eq!((g.collective, g.dtype), (Some("broadcast"), None));
        let g = infer_from_kernel_name("ncclKernel_Reduce_RING_LL_Sum_int64_t");
        assert_eq!((g.collective, g.dtype), (Some("reduce"), Some("Long")));
        assert_eq!(
            infer_from_kernel_name("ncclDevKernel_Generic_4"),
            KernelGuess::default()
        );
    }

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

    #[test]
    fn pandas_column_typing() {
        let mut c = [Val::Int(8), Val::Null];
        let mut r: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut r);
        assert_eq!(c, [Val::Float(8.0), Val::Null]);
        let mut c = [Val::Int(8), Val::Str("x".into()), Val::Null];
        let mut r: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut r);
        assert_eq!(c[0], Val::Int(8));
        let mut c = [Val::Int(8), Val::Int(9)];
        let mut r: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut r);
        assert_eq!(c, [Val::Int(8), Val::Int(9)]);
    }

    #[test]
    fn aggregations_keep_int_type() {
        let v = [Val::Int(7), Val::Int(86), Val::Int(10), Val::Int(8)];
        let r: Vec<&Val> = v.iter().collect();
        assert_eq!(Agg::Min.apply(&r), Val::Int(7));
        assert_eq!(Agg::Max.apply(&r), Val::Int(86));
        assert_eq!(Agg::Median.apply(&r), Val::Float(9.0));
        assert_eq!(Agg::Mean.apply(&r), Val::Float(27.75));
        assert_eq!(Agg::Sum.apply(&r), Val::Int(111));
        assert_eq!(round1(Val::Float(3.25)), Val::Float(3.2));
        assert_eq!(round1(Val::Int(10)), Val::Int(10));
    }

    #[test]
    fn key_order_numbers_before_strings() {
        let mut v = [Val::Str("Unknown".into()), Val::Float(3.0), Val::Int(1)];
        v.sort_by(|a, b| a.cmp_key(b));
        assert_eq!(v[0], Val::Int(1));
        assert_eq!(v[2], Val::Str("Unknown".into()));
        assert!(Val::Int(2).same(&Val::Float(2.0)));
        assert!(!Val::Str("(0, 1)".into()).same(&Val::Py("(0, 1)".into())));
    }
}
