//! The analysis passes: pure functions of the finished trace and tree that
//! return [`Table`]s. Independent passes run in parallel.

pub mod attribution;
pub mod calculator;
pub mod categories;
pub mod collectives;
pub mod compare;
pub mod intervals;
pub mod kernel_details;
pub mod kernels;
pub mod ops;
pub mod perf_model;
pub mod perf_sheets;
pub mod registry;
pub mod roofline;
pub mod timeline;
pub mod treeview;
pub mod unified;

use rustc_hash::FxHashMap;

use crate::table::Table;
use crate::trace::tree::{LinkMode, Tree};
use crate::trace::{Cat, EventId, IdentId, Needs, Trace, ValueId};
use attribution::{Attribution, CommNames};
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
    pub attribution: Attribution,
    /// The GPU timeline, when there is GPU activity to count.
    pub timeline: Option<Timeline>,
    /// True when the trace has no `cpu_op` events (GPU-only mode).
    pub gpu_only: bool,
    /// GPU spec for roofline columns.
    pub arch: Option<&'a crate::gpu_arch::GpuArch>,
    /// Interned id of the integer ident 0 (process metadata lives at tid 0).
    tid_zero: Option<IdentId>,
}

impl<'a> Context<'a> {
    /// Prepares the shared tables.
    pub fn new(trace: &'a Trace, tree: &'a Tree, opts: &'a ReportOptions) -> Self {
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
        Context {
            trace,
            tree,
            opts,
            attribution,
            timeline,
            gpu_only: !trace.events().any(|(_, e)| e.cat == Cat::CpuOp),
            arch: opts.arch.as_ref(),
            tid_zero: trace.int_ident(0),
        }
    }

    /// (process_name, process_label, thread_name) of an event, "Unknown"
    /// where the trace has no metadata.
    pub fn process_names(&self, ev: EventId) -> (String, String, String) {
        let e = self.trace.event(ev);
        let unknown = || "Unknown".to_string();
        let proc = self.tid_zero.and_then(|z| self.trace.thread_meta(e.pid, z));
        let thread = self.trace.thread_meta(e.pid, e.tid);
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

/// What the `report` passes need the loader to keep: no sheet reads python
/// frames or instant (memory) events.
pub const REPORT_NEEDS: Needs = Needs::EVENTS;

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

/// Facts about how well the trace could be analysed.
#[derive(Debug, Clone, Default)]
pub struct TraceQuality {
    /// GPU events in the trace.
    pub gpu_events: usize,
    /// GPU events no launch claimed (left out of the timeline and op sheets).
    pub unlinked_gpu_events: usize,
    /// True when launches were linked by correlation because the trace has no flows.
    pub linked_by_correlation: bool,
    /// Loader warnings.
    pub warnings: Vec<String>,
}

impl TraceQuality {
    /// One-line-per-fact note for people; empty when all is well.
    pub fn notes(&self) -> Vec<String> {
        let mut out = self.warnings.clone();
        if self.gpu_events == 0 {
            out.push(
                "the trace has no GPU events (kernels, copies, fills): GPU sheets are empty".into(),
            );
        }
        if self.linked_by_correlation {
            out.push(
                "the trace has no launch flow events (ac2g); launches were linked to GPU work by their correlation id"
                    .into(),
            );
        }
        if self.unlinked_gpu_events > 0 {
            out.push(format!(
                "{} of {} GPU events have no host launch in the trace (launched before profiling started, or CPU side missing); they are left out of gpu_timeline and the op sheets",
                self.unlinked_gpu_events, self.gpu_events
            ));
        }
        out
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

/// Runs every pass of `tracelens report`.
pub fn run_report(trace: &Trace, tree: &Tree, opts: &ReportOptions) -> Report {
    let cx = Context::new(trace, tree, opts);
    let (op_sheets, kernel_sheets) = rayon::join(
        || {
            if cx.gpu_only {
                return Vec::new();
            }
            let rows = ops::launcher_rows(&cx);
            if rows.is_empty() {
                return Vec::new();
            }
            let (((by_cat, summary), unique), (unified, perf)) = rayon::join(
                || {
                    rayon::join(
                        || {
                            rayon::join(
                                || ops::summary_by_category(&rows),
                                || ops::summary(&cx, &rows),
                            )
                        },
                        || ops::unique_args(&cx, &rows),
                    )
                },
                || rayon::join(|| unified::sheet(&cx), || perf_sheets::sheets(&cx)),
            );
            let mut out = vec![by_cat, summary, unique];
            out.extend(unified);
            out.extend(perf);
            out
        },
        || kernels::sheets(&cx),
    );
    let mut sheets = Vec::new();
    if let Some(t) = &cx.timeline {
        sheets.push(timeline::sheet(t));
    }
    sheets.extend(op_sheets);
    sheets.extend(kernel_sheets);
    if !cx.gpu_only
        && let Some(s) = collectives::coll_analysis(trace)
    {
        sheets.push(s);
    }
    let quality = TraceQuality {
        gpu_events: tree.gpu_total,
        unlinked_gpu_events: tree.gpu_unlinked,
        linked_by_correlation: tree.link_mode == LinkMode::CorrelationOnly && tree.gpu_total > 0,
        warnings: trace.warnings().to_vec(),
    };
    Report {
        sheets,
        timeline: cx.timeline,
        quality,
    }
}
