//! The analysis passes: pure functions of a loaded trace that return
//! [`Table`]s. The layout follows what each part serves:
//!
//! - one folder per report family: [`pytorch`] (Kineto traces), [`jax`]
//!   (XPlane profiles), [`rocprof`] (rocprofv3 dispatch records); each
//!   lists its passes and runs them through [`run_passes`];
//! - [`common`]: data and sheet pieces the families share (intervals, the
//!   GPU timeline, op and kernel categories, kernel statistics, trace
//!   quality);
//! - [`perf_model`]: the FLOP and byte models of ops, one table row per
//!   model class;
//! - [`commands`]: the analyses of the other commands (compare, diff,
//!   collectives, fleet, replay, steps, the tree view, the roofline
//!   calculator).

pub mod commands;
pub mod common;
pub mod diagnosis;
pub mod genesis;
pub mod jax;
pub mod perf_model;
pub mod perfetto;
pub mod pytorch;
pub mod rocprof;

use std::time::Instant;

use rayon::prelude::*;

use crate::names::sheet;
use crate::table::Table;
use crate::timings;
use crate::trace::Trace;
use common::kernel_categories;
use common::quality::TraceQuality;
use common::timeline::Timeline;

#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Kernels shorter than this (strictly) are "short". Default 10 µs.
    pub short_kernel_threshold_us: f64,
    /// Bins of the short-kernel histogram. Default 100.
    pub histogram_bins: usize,
    /// Keep only the first k rows of `short_kernels_summary`.
    pub topk_short_kernels: Option<usize>,
    /// Split idle time into micro/macro idle at this gap length.
    pub micro_idle_thresh_us: Option<f64>,
    /// Count GPU events without a launcher in the timeline too.
    pub include_unlinked_kernels: bool,
    /// GPU spec for roofline columns (`--gpu-arch`).
    pub arch: Option<crate::gpu_arch::GpuArch>,
    /// Without `arch`, pick the spec from the trace's device name
    /// ([`crate::gpu_arch::GpuArch::for_device`]) when [`crate::analyze`]
    /// runs. Off by default; `tracelens report` turns it on unless
    /// `--gpu-arch` is given.
    pub detect_arch: bool,
    /// The inference report's options (the reference's inference script).
    pub inference: InferenceOptions,
    /// Kernel-name categories (`--kernel-categories`): a `kernel_category`
    /// column in the kernel summary and the per-launcher breakdown.
    pub kernel_categories: Option<kernel_categories::KernelCategories>,
    /// Leave sheets of one row per GPU dispatch or kernel (rocprofv3's
    /// `kernel_details`, JAX's `kernel_launchers` and `df_xla_perf`)
    /// deferred: their rows are computed as the CSV or Excel writer
    /// writes them instead of being held
    /// ([`crate::table::Table::is_deferred`]). For callers that only write
    /// the report; anything that reads cells must call
    /// [`crate::table::Table::held`] first. Off by default.
    pub deferred_sheets: bool,
    /// Add `idle_gaps`, one row per gap between a stream's GPU events
    /// (`--idle-details`); the trace is then loaded with its Python frames
    /// for the gap rows' `python_frame`. Off by default.
    pub idle_details: bool,
    /// Add the critical-path sheets of the longest profiler step (the
    /// whole trace without steps); the trace is then loaded with its GPU
    /// synchronisation records. Off by default.
    pub critical_path: bool,
    /// The Perfetto report's options (rocprofv3 `.pftrace` traces).
    pub perfetto: perfetto::PerfettoOptions,
}

/// Options of the reference's inference report
/// (`TraceLens_generate_perf_report_pytorch_inference`); all off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InferenceOptions {
    /// The inference script's sheet layout (`ops_summary` by module variants,
    /// `_fwd` perf sheets only, no kernel summaries unless asked, the
    /// inference ops' annotations).
    pub layout: bool,
    /// Inject pseudo ops (e.g. the GEMMs of an unfused MoE) under the ops
    /// whose kernels they split (`--pseudo-ops`).
    pub pseudo_ops: bool,
    /// Group op sheets by the op's parent nn.Module (`--group-by-parent-module`).
    pub group_by_parent_module: bool,
    /// Group op sheets by the number of kernels an op launches
    /// (`--group-by-num-kernels`).
    pub group_by_num_kernels: bool,
    /// Add `entry_point` and `call_stack_full` to `unified_perf_summary`
    /// (`--include-call-stack`).
    pub include_call_stack: bool,
    /// Leave out `coll_analysis` (`--no-coll-analysis`).
    pub no_coll_analysis: bool,
}

impl InferenceOptions {
    /// Everything the reference's inference script turns on for the corpus
    /// (`--inference`).
    pub const ALL: InferenceOptions = InferenceOptions {
        layout: true,
        pseudo_ops: true,
        group_by_parent_module: true,
        group_by_num_kernels: true,
        include_call_stack: true,
        no_coll_analysis: true,
    };

    /// Whether the tree must hold python frames (module and call-stack
    /// columns read them).
    pub fn needs_python_frames(&self) -> bool {
        self.group_by_parent_module || self.include_call_stack
    }

    /// Whether `ops_summary` and `ops_summary_by_category` are the module
    /// variants (the inference layout's, and the only ones with a
    /// `parent_module` column).
    pub fn module_summaries(&self) -> bool {
        self.layout || self.group_by_parent_module
    }

    /// Whether `coll_analysis` is written (the inference script never
    /// writes it).
    pub fn coll_analysis(&self) -> bool {
        !(self.layout || self.no_coll_analysis)
    }
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            short_kernel_threshold_us: 10.0,
            histogram_bins: 100,
            topk_short_kernels: None,
            micro_idle_thresh_us: None,
            include_unlinked_kernels: false,
            arch: None,
            detect_arch: false,
            inference: InferenceOptions::default(),
            kernel_categories: None,
            deferred_sheets: false,
            idle_details: false,
            critical_path: false,
            perfetto: perfetto::PerfettoOptions::default(),
        }
    }
}

/// One analysis pass of a report: a named function of the report's
/// context `C` returning its sheets.
pub struct Pass<C> {
    /// Name, for messages and timings.
    pub name: &'static str,
    /// Computes the pass's sheets and warnings.
    pub run: fn(&C) -> PassOutput,
}

/// What a pass gives: its sheets (none when it has nothing to show) and
/// warnings for the user, each in the order they are shown.
#[derive(Default)]
pub struct PassOutput {
    /// The sheets, in the report's order.
    pub sheets: Vec<Table>,
    /// Warnings, in the order they are printed.
    pub warnings: Vec<String>,
}

impl From<Vec<Table>> for PassOutput {
    fn from(sheets: Vec<Table>) -> Self {
        PassOutput {
            sheets,
            warnings: Vec::new(),
        }
    }
}

impl From<Table> for PassOutput {
    fn from(sheet: Table) -> Self {
        vec![sheet].into()
    }
}

impl From<Option<Table>> for PassOutput {
    fn from(sheet: Option<Table>) -> Self {
        sheet.into_iter().collect::<Vec<_>>().into()
    }
}

impl PassOutput {
    /// Appends `other`'s sheets and warnings after this output's.
    fn extend(&mut self, other: PassOutput) {
        self.sheets.extend(other.sheets);
        self.warnings.extend(other.warnings);
    }
}

/// Runs `passes` in parallel and concatenates their sheets and warnings
/// in list order.
pub fn run_passes<C: Sync>(cx: &C, passes: &[Pass<C>]) -> PassOutput {
    run_scheduled(cx, passes, Schedule::Shared)
}

/// How [`run_scheduled`] places one pass among the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Every pass shares the pool.
    Shared,
    /// This pass runs alone before the others (a pass whose working
    /// memory should be freed before the others build theirs).
    First(usize),
    /// This pass (the longest by far) starts at once on a thread of its
    /// own while the others share the rest of the pool: left to list
    /// order it would start last and the report would wait for it alone.
    Beside(usize),
}

/// Runs `passes` as `schedule` says; the output keeps list order.
pub fn run_scheduled<C: Sync>(cx: &C, passes: &[Pass<C>], schedule: Schedule) -> PassOutput {
    let timed = |p: &Pass<C>| {
        let start = Instant::now();
        let out = (p.run)(cx);
        // Passes overlap on the pool: each figure is its own wall time.
        timings::stage(p.name, start);
        out
    };
    let apart = match schedule {
        Schedule::Shared => None,
        Schedule::First(i) | Schedule::Beside(i) => Some(i),
    };
    let rest = || -> Vec<Option<PassOutput>> {
        passes
            .par_iter()
            .enumerate()
            .map(|(i, p)| (Some(i) != apart).then(|| timed(p)))
            .collect()
    };
    let (alone, mut outputs) = match schedule {
        Schedule::Shared => (None, rest()),
        Schedule::First(i) => {
            let out = timed(&passes[i]);
            (Some((i, out)), rest())
        }
        Schedule::Beside(i) => {
            let (out, others) = rayon::join(|| timed(&passes[i]), rest);
            (Some((i, out)), others)
        }
    };
    if let Some((i, out)) = alone {
        outputs[i] = Some(out);
    }
    let mut all = PassOutput::default();
    for out in outputs.into_iter().flatten() {
        all.extend(out);
    }
    all
}

/// The result of the report passes.
pub struct Report {
    /// Sheets in the reference's order.
    pub sheets: Vec<Table>,
    /// The GPU timeline numbers, when computed.
    pub timeline: Option<Timeline>,
    /// Trace-quality facts.
    pub quality: TraceQuality,
    /// The health checks and findings.
    pub diagnosis: diagnosis::Diagnosis,
}

impl Report {
    /// Appends the `health` and `findings` sheets of the diagnosis. The
    /// sheets' commands name the trace `TRACE`, so that a trace gives the
    /// same sheets under any file name.
    pub fn push_diagnosis_sheets(&mut self) {
        let sheets = [
            diagnosis::sheets::health(&self.diagnosis),
            diagnosis::sheets::findings(&self.diagnosis, "TRACE"),
        ];
        self.sheets.extend(sheets);
    }
}

/// The report sheets whose row counts are known as soon as the trace is
/// loaded (one row per event of a kind), with those counts, for writers
/// with a row limit (Excel) to refuse before the analysis runs. Only
/// sheets with more than `at_least` rows are listed; the other sheets
/// (summaries, bounded by the events they group) are checked as written.
pub fn rows_known_at_load(trace: &Trace, at_least: usize) -> Vec<(&'static str, usize)> {
    let rows = match trace.info().profiler {
        crate::trace::Profiler::PyTorch | crate::trace::Profiler::Perfetto => return Vec::new(),
        crate::trace::Profiler::Rocprof => {
            let kernels = trace.dispatches().map_or(0, |d| d.kernels.len());
            vec![(sheet::KERNEL_DETAILS, kernels)]
        }
        // Every kernel row comes from one event: small traces need no scan.
        crate::trace::Profiler::Jax if trace.len() <= at_least => return Vec::new(),
        crate::trace::Profiler::Jax => {
            let kernels = jax::kernels::count_kernels(trace);
            vec![(sheet::KERNEL_LAUNCHERS, kernels)]
        }
    };
    rows.into_iter().filter(|&(_, n)| n > at_least).collect()
}
