//! Report comparison (`tracelens compare`) and the CI regression gate.
//!
//! [`compare`] reproduces the reference's `compare_perf_reports_pytorch`
//! (spec 04, Part B): for every sheet group it outer-joins one table per
//! report on the group's keys, adds `<col>__<tag>_diff` / `_pct` columns and,
//! for the per-shape sheets, splits the result into `_intersect_`,
//! `_only_baseline_` and `_only_variant_` tables. Cell types follow the
//! pandas rules of spec 04 §0.2: a numeric column that gains a missing value
//! in the join becomes float (`220.0`), differences of two int columns stay
//! ints, percentages are floats and a zero baseline gives an empty
//! percentage.
//!
//! [`gate`] is ours: a verdict for CI from the GPU busy time and the per-op
//! and per-op+shape kernel times of two reports, with a relative threshold,
//! an absolute noise floor and an `inconclusive` outcome for runs that are
//! not comparable. [`markdown`] renders it for a pull-request comment (always
//! under [`MARKDOWN_LIMIT`] bytes); [`Gate`] serialises to the JSON
//! documented in `docs/compare-json.md`.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};
use std::sync::LazyLock;

use indexmap::IndexMap;
use regex::Regex;
use serde::Serialize;

use crate::pyfmt::float_repr;
use crate::report::{Cell, Sheet};

/// Why a comparison could not be made (a missing sheet or column, clashing
/// tags, a join too large to hold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareError(
    /// What went wrong, one line.
    pub String,
);

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CompareError {}

type Result<T> = std::result::Result<T, CompareError>;

fn fail<T>(msg: impl Into<String>) -> Result<T> {
    Err(CompareError(msg.into()))
}

/// One report taking part in a comparison: its tag (the `--names` entry or
/// the file stem) and its sheets.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Tag used in column prefixes (`<tag>::col`) and sheet names.
    pub tag: String,
    /// Where the report came from, for messages.
    pub source: String,
    /// The report's sheets, in the report's order.
    pub sheets: Vec<Sheet>,
}

impl Input {
    /// The sheet named `name`, if the report has it.
    pub fn sheet(&self, name: &str) -> Option<&Sheet> {
        self.sheets.iter().find(|s| s.name == name)
    }
}

/// The sheet groups of `--sheets` (the reference's choices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SheetGroup {
    /// `gpu_timeline`.
    GpuTimeline,
    /// `ops_summary`.
    OpsSummary,
    /// `kernel_summary`.
    KernelSummary,
    /// `ops_unique_args` and `unified_perf_summary` (and the legacy
    /// `ops_all`), split three ways.
    OpsAll,
    /// The roofline sheets (GEMM, SDPA, CONV, elementwise), split three ways.
    Roofline,
    /// Every group.
    All,
}

impl SheetGroup {
    /// The group named `s` on the command line.
    pub fn parse(s: &str) -> Option<SheetGroup> {
        Some(match s {
            "gpu_timeline" => SheetGroup::GpuTimeline,
            "ops_summary" => SheetGroup::OpsSummary,
            "kernel_summary" => SheetGroup::KernelSummary,
            "ops_all" => SheetGroup::OpsAll,
            "roofline" => SheetGroup::Roofline,
            "all" => SheetGroup::All,
            _ => return None,
        })
    }

    /// Every name [`SheetGroup::parse`] accepts.
    pub const NAMES: &'static [&'static str] = &[
        "gpu_timeline",
        "ops_summary",
        "kernel_summary",
        "ops_all",
        "roofline",
        "all",
    ];
}

/// The comparison tables, in the reference's order, and notes for people
/// (groups skipped because the baseline lacks their sheet, roofline sheets
/// skipped because a report's table is empty).
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    /// Output sheets: `gpu_timeline`, `ops_summary`, `kernel_summary`, then
    /// the split tables.
    pub sheets: Vec<Sheet>,
    /// One line per thing left out, and why.
    pub notes: Vec<String>,
}

// ---------------------------------------------------------------------------
// Configuration (spec 04 §B3)
// ---------------------------------------------------------------------------

/// A summary sheet: joined, diffed and sorted, not split.
struct SummaryConfig {
    keys: &'static [&'static str],
    diff: &'static [&'static str],
    delete: &'static [&'static str],
    sort: &'static str,
}

const OPS_SUMMARY: SummaryConfig = SummaryConfig {
    keys: &["name"],
    diff: &["total_direct_kernel_time_ms", "Count"],
    delete: &["total_direct_kernel_time_sum"],
    sort: "total_direct_kernel_time_ms",
};

const KERNEL_SUMMARY: SummaryConfig = SummaryConfig {
    keys: &["Kernel name"],
    diff: &[
        "Kernel duration (µs)_sum",
        "Kernel duration (µs)_mean",
        "Kernel duration (µs)_count",
    ],
    delete: &[
        "Kernel duration (µs)_min",
        "Kernel duration (µs)_max",
        "Parent op category",
    ],
    sort: "Kernel duration (µs)_sum",
};

/// Older reports' kernel_summary (no `Kernel name` column).
const KERNEL_SUMMARY_LEGACY: SummaryConfig = SummaryConfig {
    keys: &["name"],
    diff: &["Total Kernel Time (ms)", "Mean Kernel Time (µs)", "Count"],
    delete: &[
        "Total Kernel Time (µs)",
        "Median Kernel Time (µs)",
        "Std Kernel Time (µs)",
        "Min Kernel Time (µs)",
        "Max Kernel Time (µs)",
        "Category",
    ],
    sort: "Total Kernel Time (ms)",
};

/// Keys of the per-shape op sheets.
const SHAPE_KEYS: &[&str] = &[
    "name",
    "Input type",
    "Input Dims",
    "Input Strides",
    "Concrete Inputs",
];

/// The `ops_all` group: (sheet, diff columns, sort column). The first diff
/// column tells on which side a row exists.
const OPS_ALL_SHEETS: &[(&str, &[&str], &str)] = &[
    (
        "ops_all",
        &[
            "total_direct_kernel_time_sum",
            "total_direct_kernel_time_mean",
            "operation_count",
        ],
        "total_direct_kernel_time_sum",
    ),
    (
        "ops_unique_args",
        &[
            "total_direct_kernel_time_sum",
            "total_direct_kernel_time_mean",
            "operation_count",
        ],
        "total_direct_kernel_time_sum",
    ),
    (
        "unified_perf_summary",
        &[
            "Kernel Time (µs)_sum",
            "Kernel Time (µs)_mean",
            "operation_count",
        ],
        "Kernel Time (µs)_sum",
    ),
];

/// Roofline sheets compared, with their output base names.
const ROOFLINE_SHEETS: &[(&str, &str)] = &[
    ("GEMM", "GEMM"),
    ("SDPA_fwd", "SDPA_fwd"),
    ("SDPA_bwd", "SDPA_bwd"),
    ("CONV_fwd", "CONV_fwd"),
    ("CONV_bwd", "CONV_bwd"),
    ("UnaryElementwise", "un_eltwise"),
    ("BinaryElementwise", "bin_eltwise"),
];

/// Roofline columns dropped from the variants (equal on every side).
const ROOFLINE_VARIANT_DROP: &[&str] = &[
    "GFLOPS_first",
    "Data Moved (MB)_first",
    "FLOPS/Byte_first",
    "Input type_first",
    "Input Dims_first",
    "Input Strides_first",
    "Concrete Inputs_first",
];

const ROOFLINE_DIFF: &[&str] = &[
    "Kernel Time (µs)_sum",
    "Kernel Time (µs)_mean",
    "name_count",
    "TFLOPS/s_mean",
    "TB/s_mean",
];

/// Most rows a join may produce; a many-to-many join of two large tables
/// on a repeated key could otherwise exhaust memory.
const MAX_JOIN_ROWS: usize = 1_000_000;

// ---------------------------------------------------------------------------
// Cells
// ---------------------------------------------------------------------------

/// Missing in pandas' sense: empty, or a NaN float.
fn is_null(c: &Cell) -> bool {
    match c {
        Cell::Empty => true,
        Cell::Float(x) => x.is_nan(),
        _ => false,
    }
}

/// The value of a number cell for arithmetic (bools are not numbers here:
/// numpy refuses to subtract them).
fn arith(c: &Cell) -> Option<f64> {
    match c {
        Cell::Int(i) => Some(*i as f64),
        Cell::Float(x) if !x.is_nan() => Some(*x),
        _ => None,
    }
}

/// The value of a cell for ordering keys: numbers and bools (as 0/1, as
/// Python compares them).
fn order_num(c: &Cell) -> Option<f64> {
    match c {
        Cell::Bool(b) => Some(f64::from(u8::from(*b))),
        c => arith(c),
    }
}

/// Total order of join keys and sort columns: numbers by value, then text
/// by code point, then missing values (which equal each other).
fn cell_cmp(a: &Cell, b: &Cell) -> Ordering {
    match (is_null(a), is_null(b)) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    if let (Cell::Int(x), Cell::Int(y)) = (a, b) {
        return x.cmp(y);
    }
    match (order_num(a), order_num(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => match (a, b) {
            (Cell::Text(x), Cell::Text(y)) => x.cmp(y),
            _ => Ordering::Equal,
        },
    }
}

/// `v - b` as pandas computes it for two numeric columns: int minus int
/// stays int, anything with a float is float, a missing operand is missing.
fn sub(v: &Cell, b: &Cell) -> Cell {
    if let (Cell::Int(x), Cell::Int(y)) = (v, b) {
        return match x.checked_sub(*y) {
            Some(d) => Cell::Int(d),
            None => Cell::Float(*x as f64 - *y as f64),
        };
    }
    match (arith(v), arith(b)) {
        (Some(x), Some(y)) => Cell::Float(x - y),
        _ => Cell::Empty,
    }
}

/// `100 * (diff / base)`, missing when either is missing or base is zero.
fn pct(diff: &Cell, base: &Cell) -> Cell {
    match (arith(diff), arith(base)) {
        (Some(d), Some(b)) if b != 0.0 => Cell::Float(100.0 * (d / b)),
        _ => Cell::Empty,
    }
}

/// Applies the column typing rule of §0.2 after a join: a purely numeric
/// column holding a missing value or a float holds only floats.
fn normalize(col: &mut [Cell]) {
    let mut has_int = false;
    let mut widen = false;
    for c in col.iter() {
        match c {
            Cell::Int(_) => has_int = true,
            Cell::Float(_) | Cell::Empty => widen = true,
            Cell::Bool(_) | Cell::Text(_) => return,
        }
    }
    if has_int && widen {
        for c in col.iter_mut() {
            if let Cell::Int(i) = c {
                *c = Cell::Float(*i as f64);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Column-major frames
// ---------------------------------------------------------------------------

/// A table held by column, for joins and column selection.
#[derive(Debug, Clone, Default)]
struct Frame {
    names: Vec<String>,
    cols: Vec<Vec<Cell>>,
    nrows: usize,
}

impl Frame {
    fn from_sheet(s: &Sheet) -> Frame {
        let nrows = s.rows.len();
        let cols = (0..s.columns.len())
            .map(|j| {
                s.rows
                    .iter()
                    .map(|r| r.get(j).cloned().unwrap_or(Cell::Empty))
                    .collect()
            })
            .collect();
        Frame {
            names: s.columns.clone(),
            cols,
            nrows,
        }
    }

    fn into_sheet(self, name: &str) -> Sheet {
        let mut rows: Vec<Vec<Cell>> = (0..self.nrows)
            .map(|_| Vec::with_capacity(self.cols.len()))
            .collect();
        for col in self.cols {
            for (row, cell) in rows.iter_mut().zip(col) {
                row.push(cell);
            }
        }
        Sheet {
            name: name.to_string(),
            columns: self.names,
            rows,
        }
    }

    fn col(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Removes the named columns that exist.
    fn drop_cols(&mut self, names: &[&str]) {
        let keep: Vec<usize> = (0..self.names.len())
            .filter(|&j| !names.contains(&self.names[j].as_str()))
            .collect();
        self.select_cols(&keep);
    }

    /// Keeps columns `idx`, in that order.
    fn select_cols(&mut self, idx: &[usize]) {
        let mut names = std::mem::take(&mut self.names);
        let mut cols = std::mem::take(&mut self.cols);
        for &j in idx {
            self.names.push(std::mem::take(&mut names[j]));
            self.cols.push(std::mem::take(&mut cols[j]));
        }
    }

    /// A frame of rows `idx` (in that order).
    fn take_rows(&self, idx: &[usize]) -> Frame {
        Frame {
            names: self.names.clone(),
            cols: self
                .cols
                .iter()
                .map(|c| idx.iter().map(|&i| c[i].clone()).collect())
                .collect(),
            nrows: idx.len(),
        }
    }

    /// Rows sorted descending by column `j`, missing values last; ties
    /// keep their order (spec 04 §0.2: a stable sort).
    fn sort_desc(&self, j: usize) -> Frame {
        let col = &self.cols[j];
        let mut idx: Vec<usize> = (0..self.nrows).collect();
        idx.sort_by(|&a, &b| match (is_null(&col[a]), is_null(&col[b])) {
            (false, false) => cell_cmp(&col[b], &col[a]),
            (x, y) => x.cmp(&y),
        });
        self.take_rows(&idx)
    }
}

/// Compares row `a` of `fa` with row `b` of `fb` on key columns `ka`/`kb`.
fn key_cmp(fa: &Frame, ka: &[usize], a: usize, fb: &Frame, kb: &[usize], b: usize) -> Ordering {
    for (&ja, &jb) in ka.iter().zip(kb) {
        match cell_cmp(&fa.cols[ja][a], &fb.cols[jb][b]) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

/// Indices of `keys` in `f`, or an error naming the first one missing.
fn key_indices(f: &Frame, keys: &[String], what: &str) -> Result<Vec<usize>> {
    keys.iter()
        .map(|k| {
            f.col(k)
                .ok_or_else(|| CompareError(format!("{what} has no column {k:?}")))
        })
        .collect()
}

/// pandas `merge(left, right, on=keys, how="outer")` followed by moving the
/// keys first: rows sorted by key (missing keys last, and equal to each
/// other), equal keys paired as a cross product (left order, then right
/// order), unmatched rows with missing values on the other side. Columns:
/// keys, left's other columns, right's other columns.
fn outer_merge(left: &Frame, right: &Frame, keys: &[String], rwhat: &str) -> Result<Frame> {
    let lk = key_indices(left, keys, "the joined table")?;
    let rk = key_indices(right, keys, rwhat)?;
    let mut lo: Vec<usize> = (0..left.nrows).collect();
    lo.sort_by(|&a, &b| key_cmp(left, &lk, a, left, &lk, b));
    let mut ro: Vec<usize> = (0..right.nrows).collect();
    ro.sort_by(|&a, &b| key_cmp(right, &rk, a, right, &rk, b));

    let mut pairs: Vec<(Option<usize>, Option<usize>)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < lo.len() || j < ro.len() {
        let ord = if i == lo.len() {
            Ordering::Greater
        } else if j == ro.len() {
            Ordering::Less
        } else {
            key_cmp(left, &lk, lo[i], right, &rk, ro[j])
        };
        let mut ie = i;
        if ord != Ordering::Greater {
            ie = i + 1;
            while ie < lo.len() && key_cmp(left, &lk, lo[i], left, &lk, lo[ie]) == Ordering::Equal {
                ie += 1;
            }
        }
        let mut je = j;
        if ord != Ordering::Less {
            je = j + 1;
            while je < ro.len() && key_cmp(right, &rk, ro[j], right, &rk, ro[je]) == Ordering::Equal
            {
                je += 1;
            }
        }
        match ord {
            Ordering::Less => pairs.extend(lo[i..ie].iter().map(|&a| (Some(a), None))),
            Ordering::Greater => pairs.extend(ro[j..je].iter().map(|&b| (None, Some(b)))),
            Ordering::Equal => {
                if pairs.len() + (ie - i) * (je - j) > MAX_JOIN_ROWS {
                    return fail(format!(
                        "joining on {keys:?} would produce more than {MAX_JOIN_ROWS} rows"
                    ));
                }
                for &a in &lo[i..ie] {
                    pairs.extend(ro[j..je].iter().map(|&b| (Some(a), Some(b))));
                }
            }
        }
        i = ie;
        j = je;
    }

    let mut out = Frame {
        nrows: pairs.len(),
        ..Frame::default()
    };
    for (key, (&jl, &jr)) in keys.iter().zip(lk.iter().zip(&rk)) {
        out.names.push(key.clone());
        out.cols.push(
            pairs
                .iter()
                .map(|&(a, b)| match (a, b) {
                    (Some(a), _) => left.cols[jl][a].clone(),
                    (None, Some(b)) => right.cols[jr][b].clone(),
                    (None, None) => Cell::Empty,
                })
                .collect(),
        );
    }
    for (jl, name) in left.names.iter().enumerate() {
        if lk.contains(&jl) {
            continue;
        }
        out.names.push(name.clone());
        out.cols.push(
            pairs
                .iter()
                .map(|&(a, _)| a.map_or(Cell::Empty, |a| left.cols[jl][a].clone()))
                .collect(),
        );
    }
    for (jr, name) in right.names.iter().enumerate() {
        if rk.contains(&jr) {
            continue;
        }
        out.names.push(name.clone());
        out.cols.push(
            pairs
                .iter()
                .map(|&(_, b)| b.map_or(Cell::Empty, |b| right.cols[jr][b].clone()))
                .collect(),
        );
    }
    for col in &mut out.cols {
        normalize(col);
    }
    Ok(out)
}

/// `re.match(r".*__.*_diff|.*__.*_pct", col)`: a diff or percentage column.
static DIFF_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:.*__.*_diff|.*__.*_pct)").expect("valid regex"));
/// `re.search(r"__(.+?)_(diff|pct)$", col)`, capturing the variant tag.
static DIFF_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"__(.+?)_(?:diff|pct)$").expect("valid regex"));

/// The reference's `build_df_dff` (spec 04 §B2): prefix, outer-join, diff
/// and percentage columns, then keys, diff columns, the rest.
fn build_diff(
    frames: Vec<Frame>,
    tags: &[&str],
    sheet: &str,
    keys: &[String],
    diff: &[&str],
) -> Result<Frame> {
    let mut prefixed = Vec::with_capacity(frames.len());
    for (mut f, tag) in frames.into_iter().zip(tags) {
        key_indices(&f, keys, &format!("sheet {sheet:?} of report {tag:?}"))?;
        for name in f.names.iter_mut() {
            if !keys.contains(name) {
                *name = format!("{tag}::{name}");
            }
        }
        prefixed.push(f);
    }
    let mut it = prefixed.into_iter();
    let Some(first) = it.next() else {
        return fail("nothing to compare");
    };
    let mut merged = first;
    for (f, tag) in it.zip(&tags[1..]) {
        merged = outer_merge(
            &merged,
            &f,
            keys,
            &format!("sheet {sheet:?} of report {tag:?}"),
        )?;
    }
    let base = tags[0];
    for d in diff {
        let b = merged.col(&format!("{base}::{d}")).ok_or_else(|| {
            CompareError(format!(
                "sheet {sheet:?} of report {base:?} has no column {d:?}"
            ))
        })?;
        for tag in &tags[1..] {
            let v = merged.col(&format!("{tag}::{d}")).ok_or_else(|| {
                CompareError(format!(
                    "sheet {sheet:?} of report {tag:?} has no column {d:?}"
                ))
            })?;
            let mut dcol: Vec<Cell> = merged.cols[v]
                .iter()
                .zip(&merged.cols[b])
                .map(|(v, b)| sub(v, b))
                .collect();
            normalize(&mut dcol);
            let pcol: Vec<Cell> = dcol
                .iter()
                .zip(&merged.cols[b])
                .map(|(d, b)| pct(d, b))
                .collect();
            merged.names.push(format!("{d}__{tag}_diff"));
            merged.cols.push(dcol);
            merged.names.push(format!("{d}__{tag}_pct"));
            merged.cols.push(pcol);
        }
    }
    let key_idx = key_indices(&merged, keys, "the joined table")?;
    let diff_idx: Vec<usize> = (0..merged.names.len())
        .filter(|j| !key_idx.contains(j) && DIFF_NAME.is_match(&merged.names[*j]))
        .collect();
    let rest: Vec<usize> = (0..merged.names.len())
        .filter(|j| !key_idx.contains(j) && !diff_idx.contains(j))
        .collect();
    let order: Vec<usize> = key_idx.into_iter().chain(diff_idx).chain(rest).collect();
    merged.select_cols(&order);
    Ok(merged)
}

/// The reference's `split_df_diff` (spec 04 §B4): for each variant, the rows
/// on both sides, on the baseline only and on the variant only, each sorted
/// and stripped of the other reports' columns and of all-empty columns.
fn split(name: &str, diff: &Frame, tags: &[&str], presence: &str, sort: &str) -> Vec<Sheet> {
    let base = tags[0];
    let present = |tag: &str| -> Vec<bool> {
        match diff.col(&format!("{tag}::{presence}")) {
            Some(j) => diff.cols[j].iter().map(|c| !is_null(c)).collect(),
            None => vec![false; diff.nrows],
        }
    };
    let in_base = present(base);
    let mut out = Vec::new();
    for tag in &tags[1..] {
        let in_var = present(tag);
        let rows = |want_b: bool, want_v: bool| -> Vec<usize> {
            (0..diff.nrows)
                .filter(|&i| in_base[i] == want_b && in_var[i] == want_v)
                .collect()
        };
        let parts = [
            ("intersect", rows(true, true), base, vec![base, *tag]),
            ("only_baseline", rows(true, false), base, vec![base]),
            ("only_variant", rows(false, true), *tag, vec![*tag]),
        ];
        for (kind, idx, sort_tag, kept) in parts {
            let mut f = diff.take_rows(&idx);
            if let Some(j) = f.col(&format!("{sort_tag}::{sort}")) {
                f = f.sort_desc(j);
            }
            strip_other_tags(&mut f, &kept);
            out.push(f.into_sheet(&format!("{name}_{kind}_{tag}")));
        }
    }
    out
}

/// Keeps key columns, columns of the kept tags and diff columns whose tags
/// are all kept; then drops every all-empty column (all of them when there
/// are no rows).
fn strip_other_tags(f: &mut Frame, kept: &[&str]) {
    let keep: Vec<usize> = (0..f.names.len())
        .filter(|&j| {
            let name = &f.names[j];
            let is_diff = DIFF_TAG.is_match(name);
            if !name.contains("::") && !is_diff {
                return true;
            }
            if let Some((tag, _)) = name.split_once("::") {
                return kept.contains(&tag);
            }
            DIFF_TAG
                .captures_iter(name)
                .all(|c| kept.contains(&c.get(1).map_or("", |m| m.as_str())))
        })
        .filter(|&j| f.cols[j].iter().any(|c| !is_null(c)))
        .collect();
    f.select_cols(&keep);
}

// ---------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------

/// Compares `inputs` (the first is the baseline) sheet group by sheet group,
/// as the reference's `compare_perf_reports_pytorch` does.
///
/// Deviations, all in the direction of not failing: when `groups` holds
/// [`SheetGroup::All`] (the default), a group whose sheet the baseline lacks
/// is skipped with a note instead of aborting. A group named explicitly
/// still requires its sheet in the baseline; a sheet the baseline has must
/// be in every report.
pub fn compare(inputs: &[Input], groups: &[SheetGroup]) -> Result<Comparison> {
    if inputs.len() < 2 {
        return fail("need at least two reports to compare");
    }
    let tags: Vec<&str> = inputs.iter().map(|i| i.tag.as_str()).collect();
    for (n, t) in tags.iter().enumerate() {
        if tags[..n].contains(t) {
            return fail(format!(
                "tags must be unique (\"{t}\" repeats): use --names to disambiguate"
            ));
        }
    }
    let all = groups.contains(&SheetGroup::All);
    let wants = |g: SheetGroup| all || groups.contains(&g);
    let base = &inputs[0];
    let mut out = Comparison::default();

    // Loads `sheet` from every report; None (with a note) when the baseline
    // lacks it and the group was only implied by `all`.
    let load = |sheet: &str, explicit: bool, out: &mut Comparison| -> Result<Option<Vec<Frame>>> {
        if base.sheet(sheet).is_none() {
            if explicit {
                return fail(format!("{sheet} sheet not found in {}", base.source));
            }
            out.notes
                .push(format!("{sheet}: not in the baseline report, not compared"));
            return Ok(None);
        }
        let mut frames = Vec::with_capacity(inputs.len());
        for input in inputs {
            match input.sheet(sheet) {
                Some(s) => frames.push(Frame::from_sheet(s)),
                None => {
                    return fail(format!("{} has no sheet {sheet:?}", input.source));
                }
            }
        }
        Ok(Some(frames))
    };

    if wants(SheetGroup::GpuTimeline)
        && let Some(frames) = load(
            "gpu_timeline",
            groups.contains(&SheetGroup::GpuTimeline),
            &mut out,
        )?
    {
        let keys = vec!["type".to_string()];
        let f = build_diff(frames, &tags, "gpu_timeline", &keys, &["time ms"])?;
        out.sheets.push(f.into_sheet("gpu_timeline"));
    }

    for (group, sheet) in [
        (SheetGroup::OpsSummary, "ops_summary"),
        (SheetGroup::KernelSummary, "kernel_summary"),
    ] {
        if !wants(group) {
            continue;
        }
        let Some(mut frames) = load(sheet, groups.contains(&group), &mut out)? else {
            continue;
        };
        let config = match group {
            SheetGroup::KernelSummary if frames[0].col("Kernel name").is_none() => {
                &KERNEL_SUMMARY_LEGACY
            }
            SheetGroup::KernelSummary => &KERNEL_SUMMARY,
            _ => &OPS_SUMMARY,
        };
        for (n, f) in frames.iter_mut().enumerate() {
            f.drop_cols(config.delete);
            if n > 0 {
                f.drop_cols(&["Cumulative Percentage (%)"]);
            }
        }
        let keys: Vec<String> = config.keys.iter().map(|k| k.to_string()).collect();
        let f = build_diff(frames, &tags, sheet, &keys, config.diff)?;
        let f = match f.col(&format!("{}::{}", tags[0], config.sort)) {
            Some(j) => f.sort_desc(j),
            None => f,
        };
        out.sheets.push(f.into_sheet(sheet));
    }

    if wants(SheetGroup::OpsAll) {
        let keys: Vec<String> = SHAPE_KEYS.iter().map(|k| k.to_string()).collect();
        for &(sheet, diff, sort) in OPS_ALL_SHEETS {
            // Each sheet of the group is optional: only those in the baseline.
            if base.sheet(sheet).is_none() {
                continue;
            }
            let Some(frames) = load(sheet, false, &mut out)? else {
                continue;
            };
            let f = build_diff(frames, &tags, sheet, &keys, diff)?;
            out.sheets.extend(split(sheet, &f, &tags, diff[0], sort));
        }
    }

    if wants(SheetGroup::Roofline) {
        for &(sheet, short) in ROOFLINE_SHEETS {
            if base.sheet(sheet).is_none() {
                continue;
            }
            let Some(mut frames) = load(sheet, false, &mut out)? else {
                continue;
            };
            for f in frames.iter_mut().skip(1) {
                f.drop_cols(ROOFLINE_VARIANT_DROP);
            }
            if frames.iter().any(|f| f.nrows == 0 || f.names.is_empty()) {
                out.notes
                    .push(format!("{sheet}: a report's table is empty, not compared"));
                continue;
            }
            // name + the param: columns every report has, in code-point order.
            let mut params: Vec<String> = frames[0]
                .names
                .iter()
                .filter(|n| n.starts_with("param:"))
                .filter(|n| frames[1..].iter().all(|f| f.col(n).is_some()))
                .cloned()
                .collect();
            params.sort();
            params.dedup();
            let keys: Vec<String> = std::iter::once("name".to_string()).chain(params).collect();
            let f = build_diff(frames, &tags, sheet, &keys, ROOFLINE_DIFF)?;
            out.sheets
                .extend(split(short, &f, &tags, ROOFLINE_DIFF[0], ROOFLINE_DIFF[0]));
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// The gate
// ---------------------------------------------------------------------------

/// Thresholds of the CI gate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateOptions {
    /// `--fail-above PCT`: a slowdown by more than this many percent fails.
    /// `None`: no gate; the verdict is informative only.
    pub fail_above_pct: Option<f64>,
    /// `--min-ms MS`: slowdowns smaller than this (in ms) are noise.
    pub min_ms: f64,
    /// Runs are not comparable when more than this share (percent) of
    /// either side's op kernel time is in ops the other side lacks.
    pub max_unmatched_pct: f64,
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions {
            fail_above_pct: None,
            min_ms: 0.0,
            max_unmatched_pct: DEFAULT_MAX_UNMATCHED_PCT,
        }
    }
}

/// The default of [`GateOptions::max_unmatched_pct`]: most of one side's
/// op time unmatched means the runs did different work.
pub const DEFAULT_MAX_UNMATCHED_PCT: f64 = 50.0;

/// Items shown in each top-regressions / top-improvements list.
pub const TOP_N: usize = 10;

/// The outcome of the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No `--fail-above`: numbers only, nothing judged.
    NotGated,
    /// Nothing got slower beyond the thresholds.
    Pass,
    /// The runs cannot be compared meaningfully (see the reasons).
    Inconclusive,
    /// Something got slower beyond the thresholds.
    Regression,
}

impl Verdict {
    /// The word used in Markdown and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::NotGated => "not_gated",
            Verdict::Pass => "pass",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Regression => "regression",
        }
    }
}

/// A report named in the gate output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// Its tag.
    pub name: String,
    /// Where it came from.
    pub input: String,
}

/// One `gpu_timeline` row on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineRow {
    /// The timeline `type` (`busy_time`, `idle_time`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Baseline time, ms (None when the baseline lacks the row).
    pub baseline_ms: Option<f64>,
    /// Variant time, ms.
    pub variant_ms: Option<f64>,
    /// variant − baseline, ms.
    pub delta_ms: Option<f64>,
    /// 100 × delta / baseline (None when the baseline is 0 or missing).
    pub delta_pct: Option<f64>,
}

/// One op (or op+shape) present on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Op name.
    pub name: String,
    /// `Input type` (op+shape items only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// `Input Dims` (op+shape items only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_dims: Option<String>,
    /// `Input Strides` (op+shape items only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_strides: Option<String>,
    /// `Concrete Inputs` (op+shape items only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concrete_inputs: Option<String>,
    /// Baseline kernel time, ms.
    pub baseline_ms: f64,
    /// Variant kernel time, ms.
    pub variant_ms: f64,
    /// variant − baseline, ms.
    pub delta_ms: f64,
    /// 100 × delta / baseline; None when the baseline is 0.
    pub delta_pct: Option<f64>,
    /// Slower beyond both thresholds (always false without a gate).
    pub over_limit: bool,
}

/// Kernel time in items (ops or op+shapes) one side has and the other lacks.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Unmatched {
    /// Baseline items the variant lacks.
    pub baseline_only_count: usize,
    /// Their kernel time, ms.
    pub baseline_only_ms: f64,
    /// All baseline kernel time in this table, ms.
    pub baseline_total_ms: f64,
    /// 100 × baseline_only_ms / baseline_total_ms (0 when the total is 0).
    pub baseline_only_pct: f64,
    /// Variant items the baseline lacks.
    pub variant_only_count: usize,
    /// Their kernel time, ms.
    pub variant_only_ms: f64,
    /// All variant kernel time in this table, ms.
    pub variant_total_ms: f64,
    /// 100 × variant_only_ms / variant_total_ms.
    pub variant_only_pct: f64,
}

/// Per-item comparison of one table (ops by name, or ops by name+shape).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ItemComparison {
    /// Items on both sides.
    pub compared: usize,
    /// Items on one side only.
    pub unmatched: Unmatched,
    /// Every item slower beyond the thresholds, slowest (in ms) first.
    pub over_limit: Vec<Change>,
    /// The [`TOP_N`] largest slowdowns (ms), largest first.
    pub top_regressions: Vec<Change>,
    /// The [`TOP_N`] largest speedups (ms), largest first.
    pub top_improvements: Vec<Change>,
}

/// The gate's result for one variant against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantGate {
    /// The variant.
    pub variant: Side,
    /// Its verdict.
    pub verdict: Verdict,
    /// Why, one sentence each.
    pub reasons: Vec<String>,
    /// Every gpu_timeline row, baseline order, then the variant's extra rows.
    pub timeline: Vec<TimelineRow>,
    /// The busy_time row, when both sides have it.
    pub busy_time: Option<TimelineRow>,
    /// True when busy time got slower beyond the thresholds.
    pub busy_time_over_limit: bool,
    /// Ops by name (`ops_summary` `total_direct_kernel_time_ms`); None when
    /// neither report has the sheet.
    pub ops: Option<ItemComparison>,
    /// Ops by name and shape (`ops_unique_args`
    /// `total_direct_kernel_time_sum`, in ms); None when a report lacks it.
    pub op_shapes: Option<ItemComparison>,
}

/// The gate over all variants: what `--json` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    /// Version of this JSON layout; bumped on incompatible changes.
    pub schema_version: u32,
    /// `tracelens`.
    pub tool: String,
    /// The tracelens version that wrote it.
    pub tool_version: String,
    /// The worst verdict of the variants (regression > inconclusive > pass).
    pub verdict: Verdict,
    /// The process exit code that goes with it.
    pub exit_code: i32,
    /// The thresholds used.
    pub gate: GateOptions,
    /// The baseline report.
    pub baseline: Side,
    /// One entry per variant, in input order.
    pub comparisons: Vec<VariantGate>,
}

/// Version written in [`Gate::schema_version`].
pub const SCHEMA_VERSION: u32 = 1;

/// A key cell as text (numbers the same whether int or float).
fn key_text(c: &Cell) -> String {
    match c {
        Cell::Empty => String::new(),
        Cell::Int(i) => float_repr(*i as f64),
        Cell::Float(x) if x.is_nan() => String::new(),
        Cell::Float(x) => float_repr(*x),
        Cell::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Cell::Text(s) => s.clone(),
    }
}

/// Kernel time (ms) per item key.
type PerKey = IndexMap<Vec<String>, f64>;

/// `value` column summed per key (tuple of `keys` columns), in first-seen
/// order, divided by `divisor` (1000 turns µs into ms). None when a column
/// is missing.
fn per_key(sheet: &Sheet, keys: &[&str], value: &str, divisor: f64) -> Option<PerKey> {
    let kidx: Vec<usize> = keys
        .iter()
        .map(|k| sheet.column(k))
        .collect::<Option<_>>()?;
    let v = sheet.column(value)?;
    let mut out = PerKey::new();
    for row in &sheet.rows {
        let key: Vec<String> = kidx
            .iter()
            .map(|&j| row.get(j).map_or_else(String::new, key_text))
            .collect();
        let x = row.get(v).and_then(arith).unwrap_or(0.0) / divisor;
        *out.entry(key).or_insert(0.0) += x;
    }
    Some(out)
}

/// `type` → `time ms` of a gpu_timeline sheet.
fn timeline_of(input: &Input) -> Option<IndexMap<String, f64>> {
    let s = input.sheet("gpu_timeline")?;
    let t = s.column("type")?;
    let v = s.column("time ms")?;
    let mut out = IndexMap::new();
    for row in &s.rows {
        if let (Some(k), Some(x)) = (row.get(t), row.get(v).and_then(arith)) {
            out.insert(key_text(k), x);
        }
    }
    Some(out)
}

fn delta_pct(base: f64, delta: f64) -> Option<f64> {
    (base != 0.0).then(|| 100.0 * delta / base)
}

/// Whether a slowdown from `base` by `delta` ms is beyond the thresholds.
fn over(opts: &GateOptions, base: f64, delta: f64) -> bool {
    let Some(limit) = opts.fail_above_pct else {
        return false;
    };
    if delta.is_nan() || delta <= 0.0 || delta < opts.min_ms {
        return false;
    }
    match delta_pct(base, delta) {
        Some(p) => p > limit,
        // From nothing to something: an unbounded slowdown.
        None => true,
    }
}

/// Compares two per-key tables.
fn compare_items(
    base: &PerKey,
    var: &PerKey,
    with_shape: bool,
    opts: &GateOptions,
) -> ItemComparison {
    let mut changes = Vec::new();
    let mut un = Unmatched {
        baseline_total_ms: base.values().sum(),
        variant_total_ms: var.values().sum(),
        ..Unmatched::default()
    };
    for (k, &b) in base {
        match var.get(k) {
            Some(&v) => {
                let d = v - b;
                let field = |i: usize| with_shape.then(|| k.get(i).cloned().unwrap_or_default());
                changes.push(Change {
                    name: k.first().cloned().unwrap_or_default(),
                    input_type: field(1),
                    input_dims: field(2),
                    input_strides: field(3),
                    concrete_inputs: field(4),
                    baseline_ms: b,
                    variant_ms: v,
                    delta_ms: d,
                    delta_pct: delta_pct(b, d),
                    over_limit: over(opts, b, d),
                });
            }
            None => {
                un.baseline_only_count += 1;
                un.baseline_only_ms += b;
            }
        }
    }
    for (k, &v) in var {
        if !base.contains_key(k) {
            un.variant_only_count += 1;
            un.variant_only_ms += v;
        }
    }
    let share = |part: f64, total: f64| {
        if total > 0.0 {
            100.0 * part / total
        } else {
            0.0
        }
    };
    un.baseline_only_pct = share(un.baseline_only_ms, un.baseline_total_ms);
    un.variant_only_pct = share(un.variant_only_ms, un.variant_total_ms);

    let mut slower: Vec<&Change> = changes.iter().filter(|c| c.delta_ms > 0.0).collect();
    slower.sort_by(|a, b| b.delta_ms.total_cmp(&a.delta_ms));
    let mut faster: Vec<&Change> = changes.iter().filter(|c| c.delta_ms < 0.0).collect();
    faster.sort_by(|a, b| a.delta_ms.total_cmp(&b.delta_ms));
    ItemComparison {
        compared: changes.len(),
        unmatched: un,
        over_limit: slower
            .iter()
            .filter(|c| c.over_limit)
            .map(|c| (*c).clone())
            .collect(),
        top_regressions: slower.iter().take(TOP_N).map(|c| (*c).clone()).collect(),
        top_improvements: faster.iter().take(TOP_N).map(|c| (*c).clone()).collect(),
    }
}

fn fmt_ms(x: f64) -> String {
    format!("{x:.3} ms")
}

fn fmt_signed_ms(x: f64) -> String {
    format!("{x:+.3} ms")
}

fn fmt_pct(p: Option<f64>) -> String {
    match p {
        Some(p) if p.is_finite() => format!("{p:+.1}%"),
        _ => "new".to_string(),
    }
}

/// Judges one variant against the baseline.
fn gate_one(base: &Input, var: &Input, opts: &GateOptions) -> VariantGate {
    let mut reasons = Vec::new();
    let mut inconclusive = false;
    let gated = opts.fail_above_pct.is_some();

    // GPU timeline.
    let (bt, vt) = (timeline_of(base), timeline_of(var));
    let mut timeline = Vec::new();
    if let (Some(bt), Some(vt)) = (&bt, &vt) {
        let kinds = bt.keys().chain(vt.keys().filter(|k| !bt.contains_key(*k)));
        for k in kinds {
            let (b, v) = (bt.get(k).copied(), vt.get(k).copied());
            let d = b.zip(v).map(|(b, v)| v - b);
            timeline.push(TimelineRow {
                kind: k.clone(),
                baseline_ms: b,
                variant_ms: v,
                delta_ms: d,
                delta_pct: b.zip(d).and_then(|(b, d)| delta_pct(b, d)),
            });
        }
    }
    let busy_time = timeline
        .iter()
        .find(|r| r.kind == "busy_time" && r.baseline_ms.is_some() && r.variant_ms.is_some())
        .cloned();
    let mut busy_time_over_limit = false;
    match &busy_time {
        Some(r) => {
            let (b, d) = (r.baseline_ms.unwrap_or(0.0), r.delta_ms.unwrap_or(0.0));
            busy_time_over_limit = over(opts, b, d);
            if busy_time_over_limit {
                reasons.push(format!(
                    "GPU busy time got slower: {} → {} ({}, {})",
                    fmt_ms(b),
                    fmt_ms(b + d),
                    fmt_signed_ms(d),
                    fmt_pct(r.delta_pct)
                ));
            }
        }
        None => {
            inconclusive = true;
            let who = match (&bt, &vt) {
                (None, _) => &base.tag,
                _ => &var.tag,
            };
            reasons.push(format!(
                "no GPU busy time to compare: report {who:?} has no gpu_timeline busy_time row"
            ));
        }
    }

    // Ops by name.
    let ops_of = |i: &Input| {
        i.sheet("ops_summary")
            .and_then(|s| per_key(s, &["name"], "total_direct_kernel_time_ms", 1.0))
    };
    let ops = match (ops_of(base), ops_of(var)) {
        (Some(b), Some(v)) => {
            let c = compare_items(&b, &v, false, opts);
            let u = &c.unmatched;
            if u.baseline_total_ms <= 0.0 || u.variant_total_ms <= 0.0 {
                inconclusive = true;
                reasons.push("no op kernel time on one side: nothing to compare op by op".into());
            }
            for (side, only, total, p) in [
                (
                    &base.tag,
                    u.baseline_only_ms,
                    u.baseline_total_ms,
                    u.baseline_only_pct,
                ),
                (
                    &var.tag,
                    u.variant_only_ms,
                    u.variant_total_ms,
                    u.variant_only_pct,
                ),
            ] {
                if p > opts.max_unmatched_pct {
                    inconclusive = true;
                    let other = if side == &base.tag {
                        &var.tag
                    } else {
                        &base.tag
                    };
                    reasons.push(format!(
                        "not comparable: {p:.1}% of {side}'s op kernel time ({} of {}) is in ops {other} does not have (limit {}%)",
                        fmt_ms(only),
                        fmt_ms(total),
                        opts.max_unmatched_pct
                    ));
                }
            }
            Some(c)
        }
        (None, None) => {
            reasons.push("neither report has ops_summary: ops not compared".into());
            None
        }
        (b, _) => {
            inconclusive = true;
            let who = if b.is_none() { &base.tag } else { &var.tag };
            reasons.push(format!(
                "report {who:?} has no usable ops_summary: ops cannot be compared"
            ));
            None
        }
    };
    if let Some(c) = &ops
        && !c.over_limit.is_empty()
    {
        let first = &c.over_limit[0];
        reasons.push(format!(
            "{} op(s) got slower beyond the limit, most: {} {} ({})",
            c.over_limit.len(),
            first.name,
            fmt_signed_ms(first.delta_ms),
            fmt_pct(first.delta_pct)
        ));
    }

    // Ops by name and shape.
    let shapes_of = |i: &Input| {
        i.sheet("ops_unique_args")
            .and_then(|s| per_key(s, SHAPE_KEYS, "total_direct_kernel_time_sum", 1000.0))
    };
    let op_shapes = match (shapes_of(base), shapes_of(var)) {
        (Some(b), Some(v)) => Some(compare_items(&b, &v, true, opts)),
        _ => None,
    };
    if let Some(c) = &op_shapes
        && !c.over_limit.is_empty()
    {
        let first = &c.over_limit[0];
        reasons.push(format!(
            "{} op shape(s) got slower beyond the limit, most: {} {} {} ({})",
            c.over_limit.len(),
            first.name,
            first.input_dims.as_deref().unwrap_or(""),
            fmt_signed_ms(first.delta_ms),
            fmt_pct(first.delta_pct)
        ));
    }

    let regressed = busy_time_over_limit
        || ops.as_ref().is_some_and(|c| !c.over_limit.is_empty())
        || op_shapes.as_ref().is_some_and(|c| !c.over_limit.is_empty());
    let verdict = if inconclusive {
        Verdict::Inconclusive
    } else if !gated {
        Verdict::NotGated
    } else if regressed {
        Verdict::Regression
    } else {
        Verdict::Pass
    };
    if verdict == Verdict::Pass {
        reasons.push(format!(
            "nothing got slower by more than {}%{}",
            opts.fail_above_pct.unwrap_or(0.0),
            if opts.min_ms > 0.0 {
                format!(" and {}", fmt_ms(opts.min_ms))
            } else {
                String::new()
            }
        ));
    }
    VariantGate {
        variant: Side {
            name: var.tag.clone(),
            input: var.source.clone(),
        },
        verdict,
        reasons,
        timeline,
        busy_time,
        busy_time_over_limit,
        ops,
        op_shapes,
    }
}

/// Runs the gate for every variant (`inputs[1..]`) against the baseline
/// (`inputs[0]`).
///
/// A variant **regresses** when, with a `fail_above_pct` set, the GPU busy
/// time, an op's kernel time (by name, from `ops_summary`) or an op+shape's
/// kernel time (from `ops_unique_args`) grew by more than that percentage
/// and by at least `min_ms`. It is **inconclusive** when the runs cannot be
/// compared: a report lacks the busy time, one report has `ops_summary` and
/// the other does not, one side has no op time, or more than
/// `max_unmatched_pct` of either side's op kernel time is in ops (by name)
/// the other side lacks. Inconclusive wins over regression. The overall
/// verdict is the worst one; the exit code is 1 for regression or
/// inconclusive when a gate was asked, else 0.
pub fn gate(inputs: &[Input], opts: &GateOptions) -> Gate {
    let comparisons: Vec<VariantGate> = match inputs.split_first() {
        Some((base, vars)) => vars.iter().map(|v| gate_one(base, v, opts)).collect(),
        None => Vec::new(),
    };
    let verdict = comparisons
        .iter()
        .map(|c| c.verdict)
        .max()
        .unwrap_or(Verdict::NotGated);
    let exit_code = match verdict {
        _ if opts.fail_above_pct.is_none() => 0,
        Verdict::Regression | Verdict::Inconclusive => 1,
        _ => 0,
    };
    Gate {
        schema_version: SCHEMA_VERSION,
        tool: "tracelens".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        verdict,
        exit_code,
        gate: *opts,
        baseline: inputs.first().map_or(
            Side {
                name: String::new(),
                input: String::new(),
            },
            |b| Side {
                name: b.tag.clone(),
                input: b.source.clone(),
            },
        ),
        comparisons,
    }
}

// ---------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------

/// Upper bound on the size of [`markdown`]'s output, in bytes (GitHub
/// refuses comments over 65536 characters).
pub const MARKDOWN_LIMIT: usize = 60_000;

/// Longest text shown in a table cell, in characters.
const MD_TEXT_CHARS: usize = 100;

/// Text for a table cell, as inline code: one line, cut, with `|` escaped
/// and backticks replaced (names like `foo<bar>` are not read as HTML).
fn md_code(s: &str) -> String {
    let one = s.replace("\r\n", " ").replace(['\n', '\r'], " ");
    let cut = crate::report::markdown::truncate_text(&one, MD_TEXT_CHARS);
    if cut.is_empty() {
        return String::new();
    }
    format!("`{}`", cut.replace('`', "'").replace('|', "\\|"))
}

/// Text for prose: one line, `|` and markup characters left alone except
/// line breaks.
fn md_plain(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn md_opt_ms(x: Option<f64>) -> String {
    x.map_or_else(String::new, |x| format!("{x:.3}"))
}

fn verdict_badge(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅ pass",
        Verdict::Regression => "❌ regression",
        Verdict::Inconclusive => "⚠️ inconclusive",
        Verdict::NotGated => "ℹ️ compared (no gate)",
    }
}

/// Renders an item table; `shape` adds the shape columns.
fn md_items(out: &mut String, title: &str, items: &[Change], rows: usize, base: &str, var: &str) {
    if items.is_empty() || rows == 0 {
        return;
    }
    let shape = items[0].input_dims.is_some();
    let _ = writeln!(out, "\n#### {title}\n");
    if shape {
        let _ = writeln!(
            out,
            "| | op | input dims | input type | {} ms | {} ms | Δ ms | Δ % |\n|---|---|---|---|---:|---:|---:|---:|",
            md_plain(base).replace('|', "\\|"),
            md_plain(var).replace('|', "\\|")
        );
    } else {
        let _ = writeln!(
            out,
            "| | op | {} ms | {} ms | Δ ms | Δ % |\n|---|---|---:|---:|---:|---:|",
            md_plain(base).replace('|', "\\|"),
            md_plain(var).replace('|', "\\|")
        );
    }
    for c in items.iter().take(rows) {
        let mark = if c.over_limit { "❌" } else { "" };
        let shape_cols = if shape {
            format!(
                " {} | {} |",
                md_code(c.input_dims.as_deref().unwrap_or("")),
                md_code(c.input_type.as_deref().unwrap_or(""))
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "| {mark} | {} |{shape_cols} {:.3} | {:.3} | {:+.3} | {} |",
            md_code(&c.name),
            c.baseline_ms,
            c.variant_ms,
            c.delta_ms,
            fmt_pct(c.delta_pct)
        );
    }
    if items.len() > rows {
        let _ = writeln!(out, "\n_{} more not shown._", items.len() - rows);
    }
}

/// Renders the whole page with tables of at most `rows` rows.
fn render_markdown(g: &Gate, rows: usize) -> String {
    let mut out = String::new();
    let names: Vec<&str> = g
        .comparisons
        .iter()
        .map(|c| c.variant.name.as_str())
        .collect();
    let _ = writeln!(out, "## tracelens compare: {}\n", verdict_badge(g.verdict));
    let _ = writeln!(
        out,
        "**Verdict: {}** — baseline **{}** vs **{}**.",
        g.verdict.as_str(),
        md_plain(&g.baseline.name),
        md_plain(&names.join("**, **"))
    );
    match g.gate.fail_above_pct {
        Some(p) => {
            let _ = writeln!(
                out,
                "Gate: fails when GPU busy time, an op or an op shape is more than {p}% slower{}; inconclusive when more than {}% of either side's op kernel time is in ops the other lacks.",
                if g.gate.min_ms > 0.0 {
                    format!(" and at least {} ms slower", g.gate.min_ms)
                } else {
                    String::new()
                },
                g.gate.max_unmatched_pct
            );
        }
        None => {
            out.push_str("No gate (`--fail-above` not given): numbers only.\n");
        }
    }
    for c in &g.comparisons {
        let base = g.baseline.name.as_str();
        let var = c.variant.name.as_str();
        let _ = writeln!(
            out,
            "\n### {} vs {}: {}\n",
            md_plain(var),
            md_plain(base),
            verdict_badge(c.verdict)
        );
        for r in &c.reasons {
            let _ = writeln!(out, "- {}", md_plain(r));
        }
        if let Some(ops) = &c.ops {
            let u = &ops.unmatched;
            let _ = writeln!(
                out,
                "- ops compared: {}; only in {}: {} ({:.1}% of its op time), only in {}: {} ({:.1}%)",
                ops.compared,
                md_plain(base),
                u.baseline_only_count,
                u.baseline_only_pct,
                md_plain(var),
                u.variant_only_count,
                u.variant_only_pct
            );
        }
        if !c.timeline.is_empty() && rows > 0 {
            let _ = writeln!(
                out,
                "\n#### GPU timeline\n\n| type | {} ms | {} ms | Δ ms | Δ % |\n|---|---:|---:|---:|---:|",
                md_plain(base).replace('|', "\\|"),
                md_plain(var).replace('|', "\\|")
            );
            for r in &c.timeline {
                let mark = if r.kind == "busy_time" && c.busy_time_over_limit {
                    " ❌"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "| {}{mark} | {} | {} | {} | {} |",
                    md_code(&r.kind),
                    md_opt_ms(r.baseline_ms),
                    md_opt_ms(r.variant_ms),
                    r.delta_ms.map_or_else(String::new, |d| format!("{d:+.3}")),
                    // A zero baseline has no percentage.
                    match r.delta_pct {
                        Some(p) if p.is_finite() => format!("{p:+.1}%"),
                        _ => String::new(),
                    }
                );
            }
        }
        if let Some(ops) = &c.ops {
            md_items(
                &mut out,
                "Top regressions by op",
                &ops.top_regressions,
                rows,
                base,
                var,
            );
            md_items(
                &mut out,
                "Top improvements by op",
                &ops.top_improvements,
                rows,
                base,
                var,
            );
            let hidden = ops
                .over_limit
                .iter()
                .filter(|x| !ops.top_regressions.iter().take(rows).any(|t| t == *x))
                .count();
            if hidden > 0 {
                let _ = writeln!(
                    out,
                    "\n_{hidden} more op(s) over the limit are not shown (see the JSON output)._"
                );
            }
        }
        if let Some(shapes) = &c.op_shapes {
            md_items(
                &mut out,
                "Top regressions by op + shape",
                &shapes.top_regressions,
                rows,
                base,
                var,
            );
            md_items(
                &mut out,
                "Top improvements by op + shape",
                &shapes.top_improvements,
                rows,
                base,
                var,
            );
            let hidden = shapes
                .over_limit
                .iter()
                .filter(|x| !shapes.top_regressions.iter().take(rows).any(|t| t == *x))
                .count();
            if hidden > 0 {
                let _ = writeln!(
                    out,
                    "\n_{hidden} more op shape(s) over the limit are not shown (see the JSON output)._"
                );
            }
        }
    }
    out
}

/// The Markdown verdict for a pull-request comment: verdict line, then per
/// variant the reasons, the GPU timeline side by side and the top
/// regressions and improvements by op and by op+shape. Tables are shortened
/// (with a note) until the page fits in [`MARKDOWN_LIMIT`] bytes; if even
/// the bare verdicts do not fit, the page is cut at a line boundary.
pub fn markdown(g: &Gate) -> String {
    let mut rows = TOP_N;
    loop {
        let page = render_markdown(g, rows);
        if page.len() <= MARKDOWN_LIMIT {
            if rows < TOP_N {
                return format!(
                    "{page}\n_Tables cut to {rows} rows to fit a pull-request comment._\n"
                );
            }
            return page;
        }
        if rows == 0 {
            let note = "\n_… cut to fit a pull-request comment; see the JSON output._\n";
            let mut end = MARKDOWN_LIMIT - note.len();
            while !page.is_char_boundary(end) {
                end -= 1;
            }
            let end = page[..end].rfind('\n').map_or(end, |i| i + 1);
            return format!("{}{note}", &page[..end]);
        }
        rows /= 2;
    }
}

/// The gate as pretty-printed JSON (see `docs/compare-json.md`).
pub fn to_json(g: &Gate) -> String {
    // Non-finite floats (none are expected) become null rather than an error.
    serde_json::to_string_pretty(g).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sheet(name: &str, cols: &[&str], rows: Vec<Vec<Cell>>) -> Sheet {
        let mut s = Sheet::new(name, cols);
        s.rows = rows;
        s
    }

    fn t(s: &str) -> Cell {
        Cell::Text(s.into())
    }

    fn input(tag: &str, sheets: Vec<Sheet>) -> Input {
        Input {
            tag: tag.into(),
            source: format!("{tag}.xlsx"),
            sheets,
        }
    }

    #[test]
    fn merge_sorts_keys_pairs_duplicates_and_widens_ints() {
        let a = sheet(
            "ops_summary",
            &["name", "total_direct_kernel_time_ms", "Count"],
            vec![
                vec![t("b"), Cell::Float(2.0), Cell::Int(4)],
                vec![t("a"), Cell::Float(1.0), Cell::Int(2)],
                vec![Cell::Empty, Cell::Float(0.5), Cell::Int(1)],
            ],
        );
        let b = sheet(
            "ops_summary",
            &["name", "total_direct_kernel_time_ms", "Count"],
            vec![
                vec![t("a"), Cell::Float(1.5), Cell::Int(2)],
                vec![t("c"), Cell::Float(3.0), Cell::Int(1)],
                vec![Cell::Empty, Cell::Float(0.25), Cell::Int(1)],
            ],
        );
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::OpsSummary],
        )
        .unwrap();
        let s = &out.sheets[0];
        assert_eq!(
            s.columns,
            vec![
                "name",
                "total_direct_kernel_time_ms__y_diff",
                "total_direct_kernel_time_ms__y_pct",
                "Count__y_diff",
                "Count__y_pct",
                "x::total_direct_kernel_time_ms",
                "x::Count",
                "y::total_direct_kernel_time_ms",
                "y::Count",
            ]
        );
        // Sorted by x's time descending, missing last: b, a, (null), c.
        assert_eq!(s.rows[0][0], t("b"));
        assert_eq!(s.rows[1][0], t("a"));
        assert_eq!(s.rows[2][0], Cell::Empty);
        assert_eq!(s.rows[3][0], t("c"));
        // a: 1.5 - 1.0 = 0.5, 50%; counts became floats (c and b missing).
        assert_eq!(
            s.rows[1][1..],
            [
                Cell::Float(0.5),
                Cell::Float(50.0),
                Cell::Float(0.0),
                Cell::Float(0.0),
                Cell::Float(1.0),
                Cell::Float(2.0),
                Cell::Float(1.5),
                Cell::Float(2.0),
            ]
        );
        // The null keys matched each other: 0.25 - 0.5.
        assert_eq!(s.rows[2][1], Cell::Float(-0.25));
        assert_eq!(s.rows[3][1], Cell::Empty);
    }

    #[test]
    fn int_diffs_stay_int_and_zero_base_gives_empty_pct() {
        let a = sheet(
            "gpu_timeline",
            &["type", "time ms"],
            vec![
                vec![t("busy_time"), Cell::Int(0)],
                vec![t("idle"), Cell::Int(4)],
            ],
        );
        let b = sheet(
            "gpu_timeline",
            &["type", "time ms"],
            vec![
                vec![t("busy_time"), Cell::Int(3)],
                vec![t("idle"), Cell::Int(5)],
            ],
        );
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::GpuTimeline],
        )
        .unwrap();
        let s = &out.sheets[0];
        assert_eq!(s.rows[0][1..3], [Cell::Int(3), Cell::Empty]);
        assert_eq!(s.rows[1][1..3], [Cell::Int(1), Cell::Float(25.0)]);
    }

    #[test]
    fn many_to_many_join_is_a_cross_product() {
        let k = |n: &str, x: f64| vec![t(n), Cell::Float(x), Cell::Float(x), Cell::Int(1)];
        let cols = &[
            "Kernel name",
            "Kernel duration (µs)_sum",
            "Kernel duration (µs)_mean",
            "Kernel duration (µs)_count",
        ];
        let a = sheet("kernel_summary", cols, vec![k("k", 1.0), k("k", 2.0)]);
        let b = sheet("kernel_summary", cols, vec![k("k", 10.0), k("k", 20.0)]);
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::KernelSummary],
        )
        .unwrap();
        let diffs: Vec<Cell> = out.sheets[0].rows.iter().map(|r| r[1].clone()).collect();
        // x=2 pairs first (sorted by x's sum, descending), each with y=10, 20.
        assert_eq!(
            diffs,
            vec![
                Cell::Float(8.0),
                Cell::Float(18.0),
                Cell::Float(9.0),
                Cell::Float(19.0)
            ]
        );
    }

    #[test]
    fn split_strips_tags_and_empty_columns() {
        let cols = &[
            "name",
            "Input type",
            "Input Dims",
            "Input Strides",
            "Concrete Inputs",
            "total_direct_kernel_time_sum",
            "total_direct_kernel_time_mean",
            "operation_count",
        ];
        let row = |n: &str, x: f64| {
            vec![
                t(n),
                t("('float',)"),
                t("((2,),)"),
                t("((1,),)"),
                Cell::Empty,
                Cell::Float(x),
                Cell::Float(x),
                Cell::Int(1),
            ]
        };
        let a = sheet("ops_unique_args", cols, vec![row("a", 1.0), row("b", 2.0)]);
        let b = sheet("ops_unique_args", cols, vec![row("a", 3.0), row("c", 5.0)]);
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::OpsAll],
        )
        .unwrap();
        let names: Vec<&str> = out.sheets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "ops_unique_args_intersect_y",
                "ops_unique_args_only_baseline_y",
                "ops_unique_args_only_variant_y"
            ]
        );
        let i = &out.sheets[0];
        // Concrete Inputs is empty everywhere: dropped.
        assert!(i.column("Concrete Inputs").is_none());
        assert_eq!(i.rows.len(), 1);
        assert_eq!(
            i.rows[0][i.column("total_direct_kernel_time_sum__y_diff").unwrap()],
            Cell::Float(2.0)
        );
        // operation_count widened to float by the join, even in the intersect.
        assert_eq!(
            i.rows[0][i.column("x::operation_count").unwrap()],
            Cell::Float(1.0)
        );
        let ob = &out.sheets[1];
        assert!(
            ob.columns
                .iter()
                .all(|c| !c.starts_with("y::") && !c.contains("_diff"))
        );
        assert_eq!(ob.rows.len(), 1);
        let ov = &out.sheets[2];
        assert!(ov.columns.iter().all(|c| !c.starts_with("x::")));
        assert_eq!(ov.rows[0][0], t("c"));
    }

    #[test]
    fn empty_split_has_no_columns() {
        let mut f = Frame {
            names: vec!["a".into(), "x::b".into()],
            cols: vec![vec![], vec![]],
            nrows: 0,
        };
        strip_other_tags(&mut f, &["x"]);
        assert!(f.names.is_empty());
    }

    #[test]
    fn duplicate_tags_are_refused() {
        let err = compare(
            &[input("a", vec![]), input("a", vec![])],
            &[SheetGroup::All],
        );
        assert!(err.unwrap_err().0.contains("unique"));
    }

    #[test]
    fn missing_sheet_in_variant_is_an_error() {
        let a = sheet("gpu_timeline", &["type", "time ms"], vec![]);
        let err = compare(
            &[input("a", vec![a]), input("b", vec![])],
            &[SheetGroup::GpuTimeline],
        )
        .unwrap_err();
        assert!(err.0.contains("b.xlsx"), "{err}");
    }

    fn gate_inputs(busy_b: f64, busy_v: f64, ops_v: &[(&str, f64)]) -> Vec<Input> {
        let tl = |busy: f64| {
            sheet(
                "gpu_timeline",
                &["type", "time ms"],
                vec![vec![t("busy_time"), Cell::Float(busy)]],
            )
        };
        let ops = |ops: &[(&str, f64)]| {
            sheet(
                "ops_summary",
                &["name", "total_direct_kernel_time_ms"],
                ops.iter()
                    .map(|(n, x)| vec![t(n), Cell::Float(*x)])
                    .collect(),
            )
        };
        vec![
            input("base", vec![tl(busy_b), ops(&[("mm", 10.0), ("add", 1.0)])]),
            input("new", vec![tl(busy_v), ops(ops_v)]),
        ]
    }

    #[test]
    fn gate_thresholds() {
        let opts = |p: f64, m: f64| GateOptions {
            fail_above_pct: Some(p),
            min_ms: m,
            ..GateOptions::default()
        };
        // add: 1.0 -> 1.2 ms is +20% and +0.2 ms.
        let inputs = gate_inputs(11.0, 11.2, &[("mm", 10.0), ("add", 1.2)]);
        let g = gate(&inputs, &opts(10.0, 0.0));
        assert_eq!(g.verdict, Verdict::Regression);
        assert_eq!(g.exit_code, 1);
        let ops = g.comparisons[0].ops.as_ref().unwrap();
        assert_eq!(ops.over_limit.len(), 1);
        assert_eq!(ops.over_limit[0].name, "add");
        assert!((ops.over_limit[0].delta_pct.unwrap() - 20.0).abs() < 1e-9);
        // Busy time +1.8% is within 10%.
        assert!(!g.comparisons[0].busy_time_over_limit);
        // Above the percentage but under the floor: pass.
        assert_eq!(gate(&inputs, &opts(10.0, 0.25)).verdict, Verdict::Pass);
        // Under the percentage: pass.
        assert_eq!(gate(&inputs, &opts(25.0, 0.0)).verdict, Verdict::Pass);
        // No gate: never fails.
        let g = gate(&inputs, &GateOptions::default());
        assert_eq!((g.verdict, g.exit_code), (Verdict::NotGated, 0));
    }

    #[test]
    fn gate_inconclusive_when_ops_do_not_match() {
        // 10 of 11 ms of the baseline's op time is in "mm", absent in new.
        let inputs = gate_inputs(11.0, 11.0, &[("bmm", 10.0), ("add", 1.0)]);
        let g = gate(
            &inputs,
            &GateOptions {
                fail_above_pct: Some(5.0),
                ..GateOptions::default()
            },
        );
        assert_eq!(g.verdict, Verdict::Inconclusive);
        assert_eq!(g.exit_code, 1);
        let reason = g.comparisons[0].reasons.join("\n");
        assert!(reason.contains("90.9%"), "{reason}");
    }

    #[test]
    fn markdown_stays_under_the_limit() {
        // Long op names in many rows, many variants.
        let long = "x".repeat(5000);
        let mut inputs = gate_inputs(1.0, 2.0, &[("mm", 20.0), ("add", 2.0)]);
        for n in 0..200 {
            let mut v = inputs[1].clone();
            v.tag = format!("{long}{n}");
            inputs.push(v);
        }
        let g = gate(
            &inputs,
            &GateOptions {
                fail_above_pct: Some(1.0),
                ..GateOptions::default()
            },
        );
        let md = markdown(&g);
        assert!(md.len() <= MARKDOWN_LIMIT, "{}", md.len());
        assert!(md.contains("cut to fit"));
    }
}
