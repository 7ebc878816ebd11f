//! Report comparison (`tracelens compare`) and the CI regression gate.
//!
//! [`compare`] reproduces the reference's `compare_perf_reports_pytorch`
//!: for every sheet group it outer-joins one table per
//! report on the group's keys, adds `<col>__<tag>_diff` / `_pct` columns and,
//! for the per-shape sheets, splits the result into `_intersect_`,
//! `_only_baseline_` and `_only_variant_` tables. Cell types follow the
//! pandas rules: a numeric column that gains a missing value
//! in the join becomes float (`220.0`), differences of two int columns stay
//! ints, percentages are floats and a zero baseline gives an empty
//! percentage.
//!
//! [`gate`] is ours: a verdict for CI from the GPU busy time and the per-op
//! and per-op+shape kernel times of two reports, with a relative threshold,
//! an absolute noise floor and an `inconclusive` outcome for runs that are
//! not comparable. `report::view::verdict` shows the [`Gate`] as Markdown
//! for a pull-request comment and as the JSON documented in
//! `docs/compare-json.md`. [`health`] gives each side's health (a trace's
//! checks, or a written report's `health` sheet) and [`change`] the
//! findings about what changed between the sides.

pub mod change;
mod gate;
pub mod health;
mod join;
mod sheets;
mod split;
mod validate;
mod verdict;

use std::fmt;

use crate::names::{col, sheet};
use crate::table::Table;
use join::{build_diff, tagged};
use split::split;

pub use change::Changes;
pub use gate::{find_changes, fmt_pct, gate};
pub use health::{HealthSource, SideHealth};
pub use sheets::diagnosis_sheets;
pub use validate::{SheetProblem, check_report_sheets};
pub use verdict::{
    Change, DEFAULT_MAX_UNMATCHED_PCT, Gate, GateOptions, ItemComparison, SCHEMA_VERSION, Side,
    TOP_N, TimelineRow, Unmatched, VariantGate, Verdict,
};

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
    pub sheets: Vec<Table>,
    /// Its health: the trace's checks, or the report's `health` sheet.
    pub health: SideHealth,
}

impl Input {
    /// The sheet named `name`, if the report has it.
    pub fn sheet(&self, name: &str) -> Option<&Table> {
        crate::table::find(&self.sheets, name)
    }
}

/// A report's sheets as `compare` reads them. The rocprofv3 report's
/// `gpu_timeline` and `kernel_summary` already have the columns compare
/// reads (its kernel summary is the older reports' layout). The JAX report
/// has one `gpu_timeline` block per GPU (a `gpu_pid` column) and names its
/// per-kernel summary `kernel_launchers_summary`: compare reads its
/// `gpu_events_averages` (the mean over GPUs, same columns) as the
/// timeline and its launcher summary (where each kernel is its own
/// launcher, with the ops summary's columns) as `ops_summary`.
pub fn comparable_sheets(mut sheets: Vec<Table>) -> Vec<Table> {
    let [(averages, timeline), (launchers, ops)] = STAND_INS;
    let per_gpu =
        crate::table::find(&sheets, timeline).is_some_and(|t| t.column(col::GPU_PID).is_some());
    if per_gpu && let Some(avg) = crate::table::find(&sheets, averages).cloned() {
        sheets.retain(|t| t.name != timeline);
        sheets.insert(0, renamed(avg, timeline));
    }
    if crate::table::find(&sheets, ops).is_none()
        && let Some(launch) = crate::table::find(&sheets, launchers).cloned()
    {
        sheets.push(renamed(launch, ops));
    }
    sheets
}

/// The sheets [`comparable_sheets`] reads in place of a compared sheet:
/// (the sheet read, the sheet it stands in for).
const STAND_INS: [(&str, &str); 2] = [
    (sheet::GPU_EVENTS_AVERAGES, sheet::GPU_TIMELINE),
    (sheet::KERNEL_LAUNCHERS_SUMMARY, sheet::OPS_SUMMARY),
];

/// `table` under the name `name`.
fn renamed(mut table: Table, name: &str) -> Table {
    table.name = name.to_string();
    table
}

/// Whether `compare` reads sheet `name` of a report: the sheets of its
/// groups and the ones [`comparable_sheets`] reads in their place (the
/// gate reads `gpu_timeline`). A workbook's other sheets are never read.
pub fn reads_sheet(name: &str) -> bool {
    SheetGroup::All.reads(name) || STAND_INS.iter().any(|(s, _)| *s == name)
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
            sheet::GPU_TIMELINE => SheetGroup::GpuTimeline,
            sheet::OPS_SUMMARY => SheetGroup::OpsSummary,
            sheet::KERNEL_SUMMARY => SheetGroup::KernelSummary,
            sheet::OPS_ALL => SheetGroup::OpsAll,
            "roofline" => SheetGroup::Roofline,
            "all" => SheetGroup::All,
            _ => return None,
        })
    }

    /// Whether the group compares sheet `name`.
    fn reads(self, name: &str) -> bool {
        match self {
            SheetGroup::GpuTimeline => name == sheet::GPU_TIMELINE,
            SheetGroup::OpsSummary | SheetGroup::KernelSummary => name == self.summary_sheet(),
            SheetGroup::OpsAll => OPS_ALL_SHEETS.iter().any(|(s, _, _)| *s == name),
            SheetGroup::Roofline => ROOFLINE_SHEETS.iter().any(|(s, _)| *s == name),
            SheetGroup::All => [
                SheetGroup::GpuTimeline,
                SheetGroup::OpsSummary,
                SheetGroup::KernelSummary,
                SheetGroup::OpsAll,
                SheetGroup::Roofline,
            ]
            .iter()
            .any(|g| g.reads(name)),
        }
    }

    /// The sheet of a summary group (`ops_summary`, `kernel_summary`).
    fn summary_sheet(self) -> &'static str {
        match self {
            SheetGroup::KernelSummary => sheet::KERNEL_SUMMARY,
            _ => sheet::OPS_SUMMARY,
        }
    }

    /// Every name [`SheetGroup::parse`] accepts.
    pub const NAMES: &'static [&'static str] = &[
        sheet::GPU_TIMELINE,
        sheet::OPS_SUMMARY,
        sheet::KERNEL_SUMMARY,
        sheet::OPS_ALL,
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
    pub sheets: Vec<Table>,
    /// One line per thing left out, and why.
    pub notes: Vec<String>,
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

/// A summary sheet: joined, diffed and sorted, not split.
struct SummaryConfig {
    keys: &'static [&'static str],
    diff: &'static [&'static str],
    delete: &'static [&'static str],
    sort: &'static str,
}

const OPS_SUMMARY: SummaryConfig = SummaryConfig {
    keys: &[col::NAME],
    diff: &[col::TOTAL_DIRECT_KERNEL_TIME_MS, col::COUNT],
    delete: &[col::TOTAL_DIRECT_KERNEL_TIME_SUM],
    sort: col::TOTAL_DIRECT_KERNEL_TIME_MS,
};

const KERNEL_SUMMARY: SummaryConfig = SummaryConfig {
    keys: &[col::KERNEL_NAME],
    diff: &[
        col::KERNEL_DURATION_US_SUM,
        col::KERNEL_DURATION_US_MEAN,
        col::KERNEL_DURATION_US_COUNT,
    ],
    delete: &[
        col::KERNEL_DURATION_US_MIN,
        col::KERNEL_DURATION_US_MAX,
        col::PARENT_OP_CATEGORY,
    ],
    sort: col::KERNEL_DURATION_US_SUM,
};

/// Older reports' kernel_summary (no `Kernel name` column).
const KERNEL_SUMMARY_LEGACY: SummaryConfig = SummaryConfig {
    keys: &[col::NAME],
    diff: &[
        col::TOTAL_KERNEL_TIME_MS,
        col::MEAN_KERNEL_TIME_US,
        col::COUNT,
    ],
    delete: &[
        col::TOTAL_KERNEL_TIME_US,
        col::MEDIAN_KERNEL_TIME_US,
        col::STD_KERNEL_TIME_US,
        col::MIN_KERNEL_TIME_US,
        col::MAX_KERNEL_TIME_US,
        col::CATEGORY,
    ],
    sort: col::TOTAL_KERNEL_TIME_MS,
};

/// Keys of the per-shape op sheets.
const SHAPE_KEYS: &[&str] = &[
    col::NAME,
    col::INPUT_TYPE,
    col::INPUT_DIMS,
    col::INPUT_STRIDES,
    col::CONCRETE_INPUTS,
];

/// The `ops_all` group: (sheet, diff columns, sort column). The first diff
/// column tells on which side a row exists.
const OPS_ALL_SHEETS: &[(&str, &[&str], &str)] = &[
    (
        sheet::OPS_ALL,
        &[
            col::TOTAL_DIRECT_KERNEL_TIME_SUM,
            col::TOTAL_DIRECT_KERNEL_TIME_MEAN,
            col::OPERATION_COUNT,
        ],
        col::TOTAL_DIRECT_KERNEL_TIME_SUM,
    ),
    (
        sheet::OPS_UNIQUE_ARGS,
        &[
            col::TOTAL_DIRECT_KERNEL_TIME_SUM,
            col::TOTAL_DIRECT_KERNEL_TIME_MEAN,
            col::OPERATION_COUNT,
        ],
        col::TOTAL_DIRECT_KERNEL_TIME_SUM,
    ),
    (
        sheet::UNIFIED_PERF_SUMMARY,
        &[
            col::KERNEL_TIME_US_SUM,
            col::KERNEL_TIME_US_MEAN,
            col::OPERATION_COUNT,
        ],
        col::KERNEL_TIME_US_SUM,
    ),
];

/// Roofline sheets compared, with their output base names.
const ROOFLINE_SHEETS: &[(&str, &str)] = &[
    (sheet::GEMM, sheet::GEMM),
    (sheet::SDPA_FWD, sheet::SDPA_FWD),
    (sheet::SDPA_BWD, sheet::SDPA_BWD),
    (sheet::CONV_FWD, sheet::CONV_FWD),
    (sheet::CONV_BWD, sheet::CONV_BWD),
    (sheet::UNARY_ELEMENTWISE, sheet::UN_ELTWISE),
    (sheet::BINARY_ELEMENTWISE, sheet::BIN_ELTWISE),
];

/// Roofline columns dropped from the variants (equal on every side).
const ROOFLINE_VARIANT_DROP: &[&str] = &[
    col::GFLOPS_FIRST,
    col::DATA_MOVED_MB_FIRST,
    col::FLOPS_PER_BYTE_FIRST,
    col::INPUT_TYPE_FIRST,
    col::INPUT_DIMS_FIRST,
    col::INPUT_STRIDES_FIRST,
    col::CONCRETE_INPUTS_FIRST,
];

const ROOFLINE_DIFF: &[&str] = &[
    col::KERNEL_TIME_US_SUM,
    col::KERNEL_TIME_US_MEAN,
    col::NAME_COUNT,
    col::TFLOPS_S_MEAN,
    col::TB_S_MEAN,
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
                "tags must be unique (\"{t}\" repeats): give each input its own tag"
            ));
        }
    }
    let all = groups.contains(&SheetGroup::All);
    let wants = |g: SheetGroup| all || groups.contains(&g);
    let mut run = Run {
        inputs,
        tags,
        out: Comparison::default(),
    };
    if wants(SheetGroup::GpuTimeline) {
        run.timeline(groups.contains(&SheetGroup::GpuTimeline))?;
    }
    for group in [SheetGroup::OpsSummary, SheetGroup::KernelSummary] {
        if wants(group) {
            run.summary(group, groups.contains(&group))?;
        }
    }
    if wants(SheetGroup::OpsAll) {
        run.ops_all()?;
    }
    if wants(SheetGroup::Roofline) {
        run.roofline()?;
    }
    Ok(run.out)
}

/// One comparison in progress: the reports, their tags and what has been
/// produced so far.
struct Run<'a> {
    inputs: &'a [Input],
    tags: Vec<&'a str>,
    out: Comparison,
}

impl Run<'_> {
    /// Whether the baseline has sheet `name`.
    fn in_base(&self, name: &str) -> bool {
        self.inputs[0].sheet(name).is_some()
    }

    /// Sheet `sheet` of every report; None (with a note) when the baseline
    /// lacks it and the group was only implied by `all`.
    fn load(&mut self, sheet: &str, explicit: bool) -> Result<Option<Vec<Table>>> {
        let base = &self.inputs[0];
        if !self.in_base(sheet) {
            if explicit {
                return fail(format!("{sheet} sheet not found in {}", base.source));
            }
            self.out
                .notes
                .push(format!("{sheet}: not in the baseline report, not compared"));
            return Ok(None);
        }
        let mut tables = Vec::with_capacity(self.inputs.len());
        for input in self.inputs {
            match input.sheet(sheet) {
                Some(s) => tables.push(s.clone()),
                None => return fail(format!("{} has no sheet {sheet:?}", input.source)),
            }
        }
        Ok(Some(tables))
    }

    /// The `gpu_timeline` group.
    fn timeline(&mut self, explicit: bool) -> Result<()> {
        let Some(tables) = self.load(sheet::GPU_TIMELINE, explicit)? else {
            return Ok(());
        };
        let keys = vec![col::TYPE.to_string()];
        let mut t = build_diff(
            tables,
            &self.tags,
            sheet::GPU_TIMELINE,
            &keys,
            &[col::TIME_MS],
        )?;
        t.name = sheet::GPU_TIMELINE.into();
        self.out.sheets.push(t);
        Ok(())
    }

    /// The `ops_summary` or `kernel_summary` group: joined, diffed, sorted.
    fn summary(&mut self, group: SheetGroup, explicit: bool) -> Result<()> {
        let sheet = group.summary_sheet();
        let Some(mut tables) = self.load(sheet, explicit)? else {
            return Ok(());
        };
        let config = match group {
            SheetGroup::KernelSummary if tables[0].column(col::KERNEL_NAME).is_none() => {
                &KERNEL_SUMMARY_LEGACY
            }
            SheetGroup::KernelSummary => &KERNEL_SUMMARY,
            _ => &OPS_SUMMARY,
        };
        for (n, t) in tables.iter_mut().enumerate() {
            t.drop_columns(config.delete);
            if n > 0 {
                t.drop_columns(&[col::CUMULATIVE_PERCENTAGE]);
            }
        }
        let keys: Vec<String> = config.keys.iter().map(|k| k.to_string()).collect();
        let mut t = build_diff(tables, &self.tags, sheet, &keys, config.diff)?;
        if let Some(j) = t.column_index(&tagged(self.tags[0], config.sort)) {
            t.sort_desc_by(j);
        }
        t.name = sheet.into();
        self.out.sheets.push(t);
        Ok(())
    }

    /// The `ops_all` group: each of its sheets the baseline has, split.
    fn ops_all(&mut self) -> Result<()> {
        let keys: Vec<String> = SHAPE_KEYS.iter().map(|k| k.to_string()).collect();
        for &(sheet, diff, sort) in OPS_ALL_SHEETS {
            if !self.in_base(sheet) {
                continue;
            }
            let Some(tables) = self.load(sheet, false)? else {
                continue;
            };
            let t = build_diff(tables, &self.tags, sheet, &keys, diff)?;
            let parts = split(sheet, &t, &self.tags, diff[0], sort);
            self.out.sheets.extend(parts);
        }
        Ok(())
    }

    /// The roofline group: each roofline sheet the baseline has, keyed by
    /// name and the param columns every report has, split.
    fn roofline(&mut self) -> Result<()> {
        for &(sheet, short) in ROOFLINE_SHEETS {
            if !self.in_base(sheet) {
                continue;
            }
            let Some(mut tables) = self.load(sheet, false)? else {
                continue;
            };
            for t in tables.iter_mut().skip(1) {
                t.drop_columns(ROOFLINE_VARIANT_DROP);
            }
            if tables.iter().any(|t| t.nrows() == 0 || t.ncols() == 0) {
                self.out
                    .notes
                    .push(format!("{sheet}: a report's table is empty, not compared"));
                continue;
            }
            // name + the param: columns every report has, in code-point order.
            let mut params: Vec<String> = tables[0]
                .column_names()
                .into_iter()
                // `param:` without the space: other writers' spellings too.
                .filter(|n| n.starts_with(col::PARAM_PREFIX.trim_end()))
                .filter(|n| tables[1..].iter().all(|t| t.column(n).is_some()))
                .map(String::from)
                .collect();
            params.sort();
            params.dedup();
            let keys: Vec<String> = std::iter::once(col::NAME.to_string())
                .chain(params)
                .collect();
            let t = build_diff(tables, &self.tags, sheet, &keys, ROOFLINE_DIFF)?;
            let parts = split(short, &t, &self.tags, ROOFLINE_DIFF[0], ROOFLINE_DIFF[0]);
            self.out.sheets.extend(parts);
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::table::Value;

    pub(crate) fn sheet(name: &str, cols: &[&str], rows: Vec<Vec<Value>>) -> Table {
        Table::from_rows(name, cols, rows)
    }

    pub(crate) fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    pub(crate) fn input(tag: &str, sheets: Vec<Table>) -> Input {
        Input {
            tag: tag.into(),
            source: format!("{tag}.xlsx"),
            sheets,
            health: SideHealth::default(),
        }
    }

    pub(crate) fn gate_inputs(busy_b: f64, busy_v: f64, ops_v: &[(&str, f64)]) -> Vec<Input> {
        let tl = |busy: f64| {
            sheet(
                "gpu_timeline",
                &["type", "time ms"],
                vec![vec![t("busy_time"), Value::Float(busy)]],
            )
        };
        let ops = |ops: &[(&str, f64)]| {
            sheet(
                "ops_summary",
                &["name", "total_direct_kernel_time_ms"],
                ops.iter()
                    .map(|(n, x)| vec![t(n), Value::Float(*x)])
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

    /// The sheets a workbook is read for: every compared sheet and the two
    /// stand-ins, nothing else.
    #[test]
    fn reads_exactly_the_compared_sheets_and_their_stand_ins() {
        let read = [
            sheet::GPU_TIMELINE,
            sheet::GPU_EVENTS_AVERAGES,
            sheet::OPS_SUMMARY,
            sheet::KERNEL_LAUNCHERS_SUMMARY,
            sheet::KERNEL_SUMMARY,
            sheet::OPS_ALL,
            sheet::OPS_UNIQUE_ARGS,
            sheet::UNIFIED_PERF_SUMMARY,
            sheet::GEMM,
            sheet::SDPA_FWD,
            sheet::SDPA_BWD,
            sheet::CONV_FWD,
            sheet::CONV_BWD,
            sheet::UNARY_ELEMENTWISE,
            sheet::BINARY_ELEMENTWISE,
        ];
        for name in read {
            assert!(reads_sheet(name), "{name}");
        }
        for name in [
            sheet::SHORT_KERNEL_HISTOGRAM,
            sheet::COLL_ANALYSIS,
            sheet::OPS_SUMMARY_BY_CATEGORY,
            sheet::UN_ELTWISE,
            "",
        ] {
            assert!(!reads_sheet(name), "{name}");
        }
    }

    /// A JAX report: the per-GPU timeline gives way to the averages, and
    /// the launcher summary is also read as `ops_summary`.
    #[test]
    fn jax_sheets_are_read_under_the_compared_names() {
        let per_gpu = sheet(
            sheet::GPU_TIMELINE,
            &[col::TYPE, col::TIME_MS, "percent", col::GPU_PID],
            vec![vec![
                t("busy_time"),
                Value::Float(2.0),
                Value::Float(50.0),
                Value::Int(1),
            ]],
        );
        let avg = sheet(
            sheet::GPU_EVENTS_AVERAGES,
            &[col::TYPE, col::TIME_MS, "percent"],
            vec![vec![t("busy_time"), Value::Float(1.5), Value::Float(40.0)]],
        );
        let launchers = sheet(
            sheet::KERNEL_LAUNCHERS_SUMMARY,
            &[col::NAME, col::TOTAL_DIRECT_KERNEL_TIME_MS, col::COUNT],
            vec![vec![t("fusion.kd"), Value::Float(0.5), Value::Int(2)]],
        );
        let out = comparable_sheets(vec![per_gpu, avg.clone(), launchers.clone()]);
        let names: Vec<&str> = out.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                sheet::GPU_TIMELINE,
                sheet::GPU_EVENTS_AVERAGES,
                sheet::KERNEL_LAUNCHERS_SUMMARY,
                sheet::OPS_SUMMARY
            ]
        );
        assert_eq!(out[0].columns, avg.columns);
        assert_eq!(out[3].columns, launchers.columns);
    }

    /// A PyTorch or rocprof report is read as it is.
    #[test]
    fn other_reports_are_read_unchanged() {
        let timeline = sheet(
            sheet::GPU_TIMELINE,
            &[col::TYPE, col::TIME_MS, "percent"],
            vec![vec![t("busy_time"), Value::Float(2.0), Value::Float(50.0)]],
        );
        let ops = sheet(
            sheet::OPS_SUMMARY,
            &[col::NAME, col::TOTAL_DIRECT_KERNEL_TIME_MS, col::COUNT],
            vec![vec![t("aten::mm"), Value::Float(0.5), Value::Int(2)]],
        );
        let sheets = vec![timeline, ops];
        assert_eq!(comparable_sheets(sheets.clone()), sheets);
    }
}
