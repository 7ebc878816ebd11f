//! The gate's options and result types. `report::view::verdict` shows them
//! as Markdown and as the JSON documented in `docs/compare-json.md`.

/// Thresholds of the CI gate.
#[derive(Debug, Clone, Copy, PartialEq)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// Its tag.
    pub name: String,
    /// Where it came from.
    pub input: String,
}

/// One `gpu_timeline` row on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRow {
    /// The timeline `type` (`busy_time`, `idle_time`, …).
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
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Op name.
    pub name: String,
    /// `Input type` (op+shape items only).
    pub input_type: Option<String>,
    /// `Input Dims` (op+shape items only).
    pub input_dims: Option<String>,
    /// `Input Strides` (op+shape items only).
    pub input_strides: Option<String>,
    /// `Concrete Inputs` (op+shape items only).
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
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq)]
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
    /// Where the GPU time moved, from the tree diff of the two traces;
    /// None unless both inputs are PyTorch traces.
    pub where_moved: Option<crate::analysis::commands::diff::WhereMoved>,
    /// The change findings against the baseline
    /// ([`super::change::changes`]).
    pub changes: super::Changes,
}

/// The gate over all variants: what `--json` writes.
#[derive(Debug, Clone, PartialEq)]
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
    /// Each input's health, baseline first, in input order.
    pub health: Vec<(Side, super::SideHealth)>,
}

/// Version written in [`Gate::schema_version`].
pub const SCHEMA_VERSION: u32 = 1;
