//! The analysis passes: pure functions of the finished trace and tree that
//! return [`Table`]s. [`REPORT_PASSES`] lists the report's passes in sheet
//! order, each with what it needs the loader to keep; [`run_passes`] runs
//! them in parallel. Data several passes share is computed once: before
//! the passes ([`Prepared`]) or lazily on first use ([`Context`]).

pub mod attribution;
pub mod calculator;
pub mod callstack;
pub mod categories;
pub mod collectives;
pub mod compare;
pub mod diff;
pub mod fleet;
pub mod intervals;
pub mod jax;
pub mod kernel_category;
pub mod kernel_details;
pub mod kernels;
pub mod ops;
pub mod perf_model;
pub mod perf_sheets;
pub mod pseudo;
pub mod quality;
pub mod registry;
pub mod replay;
pub mod rocprof;
pub mod roofline;
pub mod steps;
pub mod timeline;
pub mod treeview;
pub mod unified;

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::names::sheet;
use crate::timings;

use crate::table::{Table, Value};
use crate::trace::tree::Tree;
use crate::trace::{ArgValue, Cat, EventId, IdentId, Needs, Trace, ValueId};
use attribution::{Attribution, CommNames};
use ops::LauncherRow;
use perf_model::{ModelClass, ModelResult};
use pseudo::{OpRef, PseudoOps};
pub use quality::TraceQuality;
use roofline::{INFERENCE_ANNOTATED_OPS, Metrics, PLAIN_ANNOTATED_OPS};
use timeline::Timeline;

/// Options of the `report` pass set (the reference's CLI flags).
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
    /// The inference report's options (the reference's inference script).
    pub inference: InferenceOptions,
    /// Kernel-name categories (`--kernel-categories`): a `kernel_category`
    /// column in the kernel summary and the per-launcher breakdown.
    pub kernel_categories: Option<kernel_category::KernelCategories>,
    /// Leave sheets of one row per GPU dispatch or kernel (rocprofv3's
    /// `kernel_details`, JAX's `kernel_launchers` and `df_xla_perf`)
    /// deferred: their rows are computed as the CSV or Excel writer
    /// writes them instead of being held
    /// ([`crate::table::Table::is_deferred`]). For callers that only write
    /// the report; anything that reads cells must call
    /// [`crate::table::Table::held`] first. Off by default.
    pub deferred_sheets: bool,
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
            inference: InferenceOptions::default(),
            kernel_categories: None,
            deferred_sheets: false,
        }
    }
}

/// Data derived once from the trace before the passes run; a [`Context`]
/// borrows it, so rows built from it can be cached in the context.
pub struct Prepared {
    /// Direct attribution of GPU work to launchers.
    pub attribution: Attribution,
    /// The GPU timeline, when there is GPU activity to count.
    pub timeline: Option<Timeline>,
    /// The pseudo ops (`--pseudo-ops`); empty without the option.
    pub pseudo: PseudoOps,
}

impl Prepared {
    /// Computes the attribution and the timeline (in parallel).
    pub fn new(trace: &Trace, tree: &Tree, opts: &ReportOptions) -> Self {
        let mut comm = CommNames::new(trace);
        let (attribution, timeline) = rayon::join(
            || attribution::attribute(trace, tree, &mut comm),
            || {
                timeline::compute(
                    trace,
                    tree,
                    opts.include_unlinked_kernels,
                    opts.micro_idle_thresh_us,
                )
            },
        );
        let pseudo = if opts.inference.pseudo_ops {
            PseudoOps::detect(trace, tree)
        } else {
            PseudoOps::default()
        };
        Prepared {
            attribution,
            timeline,
            pseudo,
        }
    }
}

/// What every pass may read: the trace, its tree and shared derived tables.
pub struct Context<'a> {
    /// The loaded trace.
    pub trace: &'a Trace,
    /// Its call tree.
    pub tree: &'a Tree,
    /// Options.
    pub opts: &'a ReportOptions,
    /// Direct attribution of GPU work to launchers.
    pub attribution: &'a Attribution,
    /// The GPU timeline, when there is GPU activity to count.
    pub timeline: Option<Timeline>,
    /// True when the trace has no `cpu_op` events (GPU-only mode).
    pub gpu_only: bool,
    /// GPU spec for roofline columns.
    pub arch: Option<&'a crate::gpu_arch::GpuArch>,
    /// The pseudo ops over the tree.
    pub pseudo: &'a PseudoOps,
    /// Interned id of the integer ident 0 (process metadata lives at tid 0).
    tid_zero: Option<IdentId>,
    /// The launcher table, built by the first pass that asks for it.
    launchers: OnceLock<Vec<LauncherRow<'a>>>,
    /// Metrics of the modelled op instances, computed once on both cores
    /// ([`Context::compute_metrics`]) for the passes that share them.
    metrics_table: OnceLock<MetricsTable<ModelResult<Arc<Metrics>>>>,
    /// Model evaluations shared by op instances with equal inputs.
    evaluations: roofline::EvalMemo,
    /// The modelled ops by sheet family, found by the first reader.
    modelled: OnceLock<perf_sheets::ByFamily>,
}

/// An op instance's metrics: the op, its model (by address) and whether the
/// backward kernels time it.
type MetricsKey = (OpRef, usize, bool);

/// Metrics by op instance, sorted by [`MetricsKey`] (a big trace has tens
/// of thousands; a sorted list holds them in half a hash map's memory),
/// with where each run of [`METRICS_RUN`] event ids starts in it: the
/// sheets look each op up several times, and a binary search over the
/// whole list cost about 1% of a big report (a dozen cache misses each).
struct MetricsTable<T> {
    rows: Vec<(MetricsKey, T)>,
    /// `starts[k]`: the first row whose key is at or after event
    /// `k * METRICS_RUN`.
    starts: Vec<u32>,
}

/// Event ids per entry of [`MetricsTable::starts`].
const METRICS_RUN: usize = 64;

impl<T> MetricsTable<T> {
    /// The table of `rows`, sorted here.
    fn new(mut rows: Vec<(MetricsKey, T)>) -> MetricsTable<T> {
        rows.sort_unstable_by_key(|&(key, _)| key);
        let events = rows
            .iter()
            .rev()
            .find_map(|&((op, _, _), _)| match op {
                OpRef::Event(e) => Some(e.index() + 1),
                OpRef::Pseudo(_) => None,
            })
            .unwrap_or(0);
        let mut starts = Vec::with_capacity(events.div_ceil(METRICS_RUN) + 1);
        let mut row = 0;
        for k in 0..=events.div_ceil(METRICS_RUN) {
            let first = OpRef::Event(EventId::new(k * METRICS_RUN));
            while row < rows.len() && rows[row].0.0 < first {
                row += 1;
            }
            starts.push(row as u32);
        }
        MetricsTable { rows, starts }
    }

    /// The metrics of `key`, when the table holds them.
    fn get(&self, key: MetricsKey) -> Option<&T> {
        let rows = match key.0 {
            OpRef::Event(e) => {
                let k = e.index() / METRICS_RUN;
                let (Some(&lo), Some(&hi)) = (self.starts.get(k), self.starts.get(k + 1)) else {
                    return None;
                };
                &self.rows[lo as usize..hi as usize]
            }
            OpRef::Pseudo(_) => &self.rows,
        };
        let i = rows.binary_search_by_key(&key, |&(k, _)| k).ok()?;
        Some(&rows[i].1)
    }
}

/// The table key of `op` under `class`.
fn metrics_key(op: OpRef, class: &ModelClass, bwd: bool) -> MetricsKey {
    (op, std::ptr::from_ref(class) as usize, bwd)
}

impl<'a> Context<'a> {
    /// A context over `prepared`, the trace's derived tables.
    pub fn new(
        trace: &'a Trace,
        tree: &'a Tree,
        opts: &'a ReportOptions,
        prepared: &'a Prepared,
    ) -> Self {
        Context {
            trace,
            tree,
            opts,
            attribution: &prepared.attribution,
            timeline: prepared.timeline,
            gpu_only: !trace.events().any(|(_, e)| e.cat == Cat::CpuOp),
            arch: opts.arch.as_ref(),
            pseudo: &prepared.pseudo,
            tid_zero: trace.int_ident(0),
            launchers: OnceLock::new(),
            metrics_table: OnceLock::new(),
            evaluations: roofline::EvalMemo::default(),
            modelled: OnceLock::new(),
        }
    }

    /// The modelled ops by sheet family ([`perf_sheets::modelled_events`]),
    /// found once and shared by the metrics table and the roofline sheets.
    pub fn modelled_ops(&self) -> &perf_sheets::ByFamily {
        self.modelled
            .get_or_init(|| perf_sheets::modelled_events(self))
    }

    /// Computes, in parallel, the metrics of every modelled op instance the
    /// roofline and unified sheets read (forward, and backward where the
    /// op has linked backward ops), so that the passes share one
    /// evaluation each instead of repeating it.
    pub fn compute_metrics(&self) {
        let mut wanted: Vec<(OpRef, &'static ModelClass, bool)> = Vec::new();
        for &(op, class) in self.modelled_ops().values().flatten() {
            wanted.push((op, class, false));
            if let OpRef::Event(e) = op
                && self.tree.bwd_events.contains_key(&e)
            {
                wanted.push((op, class, true));
            }
        }
        let rows = wanted
            .par_iter()
            .map(|&(op, class, bwd)| {
                let m = self.evaluate_metrics(op, class, bwd).map(Arc::new);
                (metrics_key(op, class, bwd), m)
            })
            .collect();
        let _ = self.metrics_table.set(MetricsTable::new(rows));
    }

    /// The launcher table `L` ([`ops::launcher_rows`]), computed once and
    /// shared by the op sheets.
    pub fn launcher_rows(&self) -> &[LauncherRow<'a>] {
        self.launchers.get_or_init(|| ops::launcher_rows(self))
    }

    /// True when the op sheets have rows to show: the trace has CPU ops and
    /// some of them launch GPU work.
    pub fn has_launchers(&self) -> bool {
        !self.gpu_only && !self.attribution.launchers.is_empty()
    }

    /// The ops whose enclosing annotation the models read (the inference
    /// script annotates more of them).
    pub fn annotated_ops(&self) -> &'static [&'static str] {
        if self.opts.inference.layout {
            INFERENCE_ANNOTATED_OPS
        } else {
            PLAIN_ANNOTATED_OPS
        }
    }

    /// The name of an op.
    pub fn op_name(&self, op: OpRef) -> &'a str {
        match op {
            OpRef::Event(e) => self.trace.name(e),
            OpRef::Pseudo(i) => self.pseudo.ops[i].name,
        }
    }

    /// The UID the sheets print for an op.
    pub fn op_uid(&self, op: OpRef) -> usize {
        match op {
            OpRef::Event(e) => e.index(),
            OpRef::Pseudo(i) => self.pseudo.ops[i].uid,
        }
    }

    /// The event whose recorded arguments an op carries.
    pub fn args_event(&self, op: OpRef) -> EventId {
        match op {
            OpRef::Event(e) => e,
            OpRef::Pseudo(i) => self.pseudo.ops[i].donor,
        }
    }

    /// The event whose pid/tid an op has.
    pub fn proc_event(&self, op: OpRef) -> EventId {
        match op {
            OpRef::Event(e) => e,
            OpRef::Pseudo(i) => self.pseudo.ops[i].parent,
        }
    }

    /// How many op instances [`Context::compute_metrics`] computed.
    pub fn metrics_count(&self) -> usize {
        self.metrics_table.get().map_or(0, |t| t.rows.len())
    }

    /// The perf metrics of an op instance under `class`: from the table of
    /// [`Context::compute_metrics`] when it holds them, else computed now
    /// ([`roofline::compute`]).
    pub fn metrics(&self, op: OpRef, class: &ModelClass, bwd: bool) -> ModelResult<Arc<Metrics>> {
        let key = metrics_key(op, class, bwd);
        if let Some(m) = self.metrics_table.get().and_then(|t| t.get(key)) {
            return m.clone();
        }
        self.evaluate_metrics(op, class, bwd).map(Arc::new)
    }

    fn evaluate_metrics(&self, op: OpRef, class: &ModelClass, bwd: bool) -> ModelResult<Metrics> {
        match op {
            OpRef::Event(e) => roofline::compute(
                self.trace,
                self.tree,
                e,
                class,
                bwd,
                self.arch,
                self.annotated_ops(),
                &self.evaluations,
            ),
            OpRef::Pseudo(i) => {
                roofline::compute_pseudo(self.trace, &self.pseudo.ops[i], class, self.arch)
            }
        }
    }

    /// (process_name, process_label, thread_name) of an event, "Unknown"
    /// where the trace has no metadata.
    pub fn process_names(&self, ev: EventId) -> (String, String, String) {
        let e = self.trace.event(ev);
        self.thread_names(e.pid, e.tid)
    }

    /// [`Context::process_names`] of the thread `tid` of process `pid`.
    pub fn thread_names(&self, pid: IdentId, tid: IdentId) -> (String, String, String) {
        let unknown = || "Unknown".to_string();
        let proc = self.tid_zero.and_then(|z| self.trace.thread_meta(pid, z));
        let thread = self.trace.thread_meta(pid, tid);
        (
            proc.and_then(|m| m.process_name.clone())
                .unwrap_or_else(unknown),
            proc.and_then(|m| m.process_labels.clone())
                .unwrap_or_else(unknown),
            thread
                .and_then(|m| m.thread_name.clone())
                .unwrap_or_else(unknown),
        )
    }
}

/// One analysis pass: a named function of the [`Context`] returning its
/// sheets (none when it has nothing to show), and what it needs the loader
/// to keep.
pub struct Pass {
    /// Name, for messages and timings.
    pub name: &'static str,
    /// What the pass reads of the trace.
    pub needs: Needs,
    /// Computes the pass's sheets.
    pub run: fn(&Context) -> Vec<Table>,
}

/// No report sheet reads python frames or instant (memory) events.
const REPORT_PASS_NEEDS: Needs = Needs::EVENTS;

/// The passes of `tracelens report`, in the order of their sheets.
pub const REPORT_PASSES: &[Pass] = &[
    Pass {
        name: sheet::GPU_TIMELINE,
        needs: REPORT_PASS_NEEDS,
        run: gpu_timeline_pass,
    },
    Pass {
        name: sheet::OPS_SUMMARY_BY_CATEGORY,
        needs: REPORT_PASS_NEEDS,
        run: ops_by_category_pass,
    },
    Pass {
        name: sheet::OPS_SUMMARY,
        needs: REPORT_PASS_NEEDS,
        run: ops_summary_pass,
    },
    Pass {
        name: sheet::OPS_UNIQUE_ARGS,
        needs: REPORT_PASS_NEEDS,
        run: ops_unique_args_pass,
    },
    Pass {
        name: sheet::UNIFIED_PERF_SUMMARY,
        needs: REPORT_PASS_NEEDS,
        run: unified_pass,
    },
    Pass {
        name: "roofline sheets",
        needs: REPORT_PASS_NEEDS,
        run: roofline_pass,
    },
    Pass {
        name: "kernel sheets",
        needs: REPORT_PASS_NEEDS,
        run: kernel_sheets_pass,
    },
    Pass {
        name: sheet::KERNEL_CATEGORY_BY_LAUNCHER,
        needs: REPORT_PASS_NEEDS,
        run: kernel_category_pass,
    },
    Pass {
        name: sheet::COLL_ANALYSIS,
        needs: REPORT_PASS_NEEDS,
        run: coll_analysis_pass,
    },
];

/// What the loader must keep for `passes`: the union of their needs.
pub fn needs_of(passes: &[Pass]) -> Needs {
    passes
        .iter()
        .map(|p| p.needs)
        .reduce(Needs::union)
        // No pass reads anything: the leanest load.
        .unwrap_or(Needs::COLLECTIVES)
}

/// What the loader must keep for [`REPORT_PASSES`].
pub fn report_needs() -> Needs {
    needs_of(REPORT_PASSES)
}

/// Runs `passes` in parallel and concatenates their sheets in list order.
pub fn run_passes(cx: &Context, passes: &[Pass]) -> Vec<Table> {
    let per_pass: Vec<Vec<Table>> = passes
        .par_iter()
        .map(|p| {
            let start = Instant::now();
            let sheets = (p.run)(cx);
            // Passes overlap on the pool: each figure is its own wall time.
            timings::stage(p.name, start);
            sheets
        })
        .collect();
    per_pass.into_iter().flatten().collect()
}

/// `gpu_timeline`, when there is GPU activity.
fn gpu_timeline_pass(cx: &Context) -> Vec<Table> {
    cx.timeline
        .as_ref()
        .map(timeline::sheet)
        .into_iter()
        .collect()
}

/// The sheets `sheets` makes, or none when the trace has no launchers (the
/// op, unified and roofline sheets all show launched work).
fn with_launchers(cx: &Context, sheets: impl FnOnce() -> Vec<Table>) -> Vec<Table> {
    if cx.has_launchers() {
        sheets()
    } else {
        Vec::new()
    }
}

/// One op sheet built on the launcher table.
fn op_sheet(cx: &Context, sheet: fn(&Context, &[LauncherRow]) -> Table) -> Vec<Table> {
    with_launchers(cx, || vec![sheet(cx, cx.launcher_rows())])
}

/// `ops_summary_by_category`.
fn ops_by_category_pass(cx: &Context) -> Vec<Table> {
    op_sheet(cx, ops::summary_by_category)
}

/// `ops_summary`.
fn ops_summary_pass(cx: &Context) -> Vec<Table> {
    op_sheet(cx, ops::summary)
}

/// `ops_unique_args`.
fn ops_unique_args_pass(cx: &Context) -> Vec<Table> {
    op_sheet(cx, ops::unique_args)
}

/// `unified_perf_summary`, shown with the op sheets.
fn unified_pass(cx: &Context) -> Vec<Table> {
    with_launchers(cx, || unified::sheet(cx).into_iter().collect())
}

/// The roofline (perf model) sheets, shown with the op sheets.
fn roofline_pass(cx: &Context) -> Vec<Table> {
    with_launchers(cx, || perf_sheets::sheets(cx))
}

/// `kernel_summary` and the short-kernel sheets; the inference script
/// writes none unless asked, and we have no option to ask.
fn kernel_sheets_pass(cx: &Context) -> Vec<Table> {
    if cx.opts.inference.layout {
        return Vec::new();
    }
    kernels::sheets(cx)
}

/// `kernel_category_by_launcher`, with `--kernel-categories` and launched
/// kernels.
fn kernel_category_pass(cx: &Context) -> Vec<Table> {
    match &cx.opts.kernel_categories {
        Some(table) if cx.has_launchers() => vec![kernel_category::by_launcher_sheet(cx, table)],
        _ => Vec::new(),
    }
}

/// `coll_analysis`; GPU-only traces have no collective ops to attribute.
fn coll_analysis_pass(cx: &Context) -> Vec<Table> {
    if cx.gpu_only || !cx.opts.inference.coll_analysis() {
        return Vec::new();
    }
    collectives::coll_analysis(cx.trace).into_iter().collect()
}

/// A recorded argument as the reference's DataFrames hold it: numbers,
/// strings and booleans as they are (an integer beyond `i64` as a float),
/// lists and maps as Python tuples / dicts; absent or `null` as `None`.
pub fn arg_value(a: Option<&ArgValue>) -> Value {
    match a {
        None | Some(ArgValue::Null) => Value::Null,
        Some(ArgValue::Int(i)) => Value::Int(*i),
        Some(ArgValue::UInt(u)) => Value::float_or_null(*u as f64),
        Some(ArgValue::Float(x)) => Value::float_or_null(*x),
        Some(ArgValue::Bool(b)) => Value::Bool(*b),
        Some(ArgValue::Str(s)) => Value::from(&**s),
        Some(v @ (ArgValue::List(_) | ArgValue::Map(_))) => {
            Value::Py(crate::pyfmt::py_repr(v, true).into())
        }
    }
}

/// Cache of Python reprs of argument values (lists become tuples).
#[derive(Default)]
pub struct ArgReprs(FxHashMap<ValueId, String>);

impl ArgReprs {
    /// The Python repr of the argument behind `id`; None when absent.
    pub fn get(&mut self, trace: &Trace, id: Option<ValueId>) -> Option<String> {
        let id = id?;
        Some(
            self.0
                .entry(id)
                .or_insert_with(|| crate::pyfmt::py_repr(trace.value(id), true))
                .clone(),
        )
    }
}

/// The result of the report passes.
pub struct Report {
    /// Sheets in the reference's order.
    pub sheets: Vec<Table>,
    /// The GPU timeline numbers, when computed.
    pub timeline: Option<Timeline>,
    /// Trace-quality facts.
    pub quality: TraceQuality,
}

/// The report sheets whose row counts are known as soon as the trace is
/// loaded (one row per event of a kind), with those counts, for writers
/// with a row limit (Excel) to refuse before the analysis runs. Only
/// sheets with more than `at_least` rows are listed; the other sheets
/// (summaries, bounded by the events they group) are checked as written.
pub fn rows_known_at_load(trace: &Trace, at_least: usize) -> Vec<(&'static str, usize)> {
    let rows = match trace.info().profiler {
        crate::trace::Profiler::PyTorch => return Vec::new(),
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

/// Runs every pass of `tracelens report`.
pub fn run_report(trace: &Trace, tree: &Tree, opts: &ReportOptions) -> Report {
    let start = Instant::now();
    let prepared = Prepared::new(trace, tree, opts);
    timings::stage("attribution and timeline", start);
    let cx = Context::new(trace, tree, opts, &prepared);
    if cx.has_launchers() {
        let start = Instant::now();
        cx.compute_metrics();
        timings::stage(&format!("op metrics ({})", cx.metrics_count()), start);
    }
    let sheets = run_passes(&cx, REPORT_PASSES);
    let mut quality = TraceQuality::of(trace, tree, opts, prepared.timeline.as_ref());
    quality
        .warnings
        .extend(prepared.pseudo.warnings.iter().cloned());
    Report {
        sheets,
        timeline: prepared.timeline,
        quality,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of the table is found with its value, wherever its event
    /// falls in the runs of event ids (first, last, an empty run between),
    /// pseudo ops too; keys it lacks are not, past its last event either.
    #[test]
    fn the_metrics_table_finds_exactly_its_keys() {
        let ev = |i: usize| OpRef::Event(EventId::new(i));
        let mut keys = vec![
            (ev(0), 1, false),
            (ev(0), 1, true),
            (ev(0), 2, false),
            (ev(63), 1, false),
            (ev(64), 1, false),
            (ev(300), 1, false),
            (ev(1000), 3, true),
            (OpRef::Pseudo(0), 1, false),
            (OpRef::Pseudo(7), 2, false),
        ];
        // Given out of order, as the parallel evaluation collects them.
        keys.reverse();
        let table = MetricsTable::new(keys.iter().map(|&k| (k, format!("{k:?}"))).collect());
        for &k in &keys {
            assert_eq!(table.get(k), Some(&format!("{k:?}")), "{k:?}");
        }
        for k in [
            (ev(0), 2, true),
            (ev(1), 1, false),
            (ev(65), 1, false),
            (ev(200), 1, false),
            (ev(1000), 3, false),
            (ev(1001), 1, false),
            (ev(5000), 1, false),
            (OpRef::Pseudo(1), 1, false),
        ] {
            assert_eq!(table.get(k), None, "{k:?}");
        }
        let empty = MetricsTable::<u8>::new(Vec::new());
        assert_eq!(empty.get((ev(0), 1, false)), None);
    }
}
