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

mod frame;
mod gate;
mod join;
mod json;
mod markdown;
mod split;

use std::fmt;

use crate::report::Sheet;
use frame::Frame;
use join::build_diff;
use split::split;

pub use gate::gate;
pub use json::{
    Change, DEFAULT_MAX_UNMATCHED_PCT, Gate, GateOptions, ItemComparison, SCHEMA_VERSION, Side,
    TOP_N, TimelineRow, Unmatched, VariantGate, Verdict, to_json,
};
pub use markdown::{MARKDOWN_LIMIT, markdown};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Cell;

    pub(super) fn sheet(name: &str, cols: &[&str], rows: Vec<Vec<Cell>>) -> Sheet {
        let mut s = Sheet::new(name, cols);
        s.rows = rows;
        s
    }

    pub(super) fn t(s: &str) -> Cell {
        Cell::Text(s.into())
    }

    pub(super) fn input(tag: &str, sheets: Vec<Sheet>) -> Input {
        Input {
            tag: tag.into(),
            source: format!("{tag}.xlsx"),
            sheets,
        }
    }

    pub(super) fn gate_inputs(busy_b: f64, busy_v: f64, ops_v: &[(&str, f64)]) -> Vec<Input> {
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
}
