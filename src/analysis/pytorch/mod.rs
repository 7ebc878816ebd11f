//! The PyTorch (Kineto) report: the reference's
//! `generate_perf_report_pytorch` sheets over a loaded trace and its call
//! tree.
//!
//! - [`context`]: the derived data every pass reads ([`Context`]);
//! - [`attribution`]: GPU work attributed to the host ops that launched it;
//! - [`ops`]: the op sheets (`ops_summary*`, `ops_unique_args`);
//! - [`kernels`]: `kernel_summary` and the short-kernel sheets;
//! - [`kernel_category_sheet`]: the `kernel_category_by_launcher` sheet;
//! - [`unified`]: the `unified_perf_summary` sheet;
//! - [`perf_sheets`]: the perf-model sheets (one per model family);
//! - [`op_metrics`]: an op instance's kernel time, FLOPs, bytes and
//!   roofline figures;
//! - [`pseudo`]: the pseudo ops of `--pseudo-ops`;
//! - [`callstack`]: module chains and frame chains of the inference options;
//! - [`idle`]: the gaps of each GPU stream, split as HTA splits them;
//! - [`idle_causes`]: why the host was late for each host-wait gap;
//! - [`idle_sheets`]: the idle sheets;
//! - [`critical_path`]: the critical path of a step and its sheets.

pub mod attribution;
pub mod callstack;
pub mod context;
pub mod critical_path;
pub mod idle;
pub mod idle_causes;
pub mod idle_sheets;
pub mod kernel_category_sheet;
pub mod kernels;
pub mod op_metrics;
pub mod ops;
pub mod perf_sheets;
pub mod pseudo;
pub mod unified;

use std::time::Instant;

pub use context::{Context, Prepared};

use super::common::quality::TraceQuality;
use super::common::timeline;
use super::diagnosis;
use super::{Pass, PassOutput, Report, ReportOptions, Schedule, run_scheduled};
use crate::analysis::commands::{collectives, steps};
use crate::names::sheet;
use crate::table::Table;
use crate::timings;
use crate::trace::tree::Tree;
use crate::trace::{Needs, Trace};
use ops::LauncherRow;

/// What the loader must keep for the report: no sheet reads python frames
/// or instant (memory) events.
pub const REPORT_NEEDS: Needs = Needs::EVENTS;

/// The position of the critical-path pass in [`report_passes`].
const CRITICAL_PATH_PASS: usize = 11;

/// The passes of the PyTorch report, in the order of their sheets.
fn report_passes<'a>() -> [Pass<Context<'a>>; 12] {
    [
        Pass {
            name: sheet::GPU_TIMELINE,
            run: gpu_timeline_pass,
        },
        Pass {
            name: sheet::STEP_SUMMARY,
            run: step_summary_pass,
        },
        Pass {
            name: sheet::OPS_SUMMARY_BY_CATEGORY,
            run: ops_by_category_pass,
        },
        Pass {
            name: sheet::OPS_SUMMARY,
            run: ops_summary_pass,
        },
        Pass {
            name: sheet::OPS_UNIQUE_ARGS,
            run: ops_unique_args_pass,
        },
        Pass {
            name: sheet::UNIFIED_PERF_SUMMARY,
            run: unified_pass,
        },
        Pass {
            name: "roofline sheets",
            run: roofline_pass,
        },
        Pass {
            name: "kernel sheets",
            run: kernel_sheets_pass,
        },
        Pass {
            name: sheet::KERNEL_CATEGORY_BY_LAUNCHER,
            run: kernel_category_pass,
        },
        Pass {
            name: sheet::COLL_ANALYSIS,
            run: coll_analysis_pass,
        },
        Pass {
            name: sheet::IDLE_BREAKDOWN,
            run: idle_pass,
        },
        Pass {
            name: sheet::CRITICAL_PATH_SUMMARY,
            run: critical_path_pass,
        },
    ]
}

/// Runs every pass of the PyTorch report.
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
    let passes = report_passes();
    let schedule = if opts.critical_path {
        Schedule::Beside(CRITICAL_PATH_PASS)
    } else {
        Schedule::Shared
    };
    let sheets = run_scheduled(&cx, &passes, schedule).sheets;
    let mut quality = TraceQuality::of(trace, tree, opts, prepared.timeline.as_ref());
    quality
        .warnings
        .extend(prepared.pseudo.warnings.iter().cloned());
    let start = Instant::now();
    let diagnosis = diagnosis::diagnose(&diagnosis::Inputs {
        trace,
        tree,
        sheets: &sheets,
        timeline: prepared.timeline.as_ref(),
        quality: &quality,
        arch: opts.arch.as_ref(),
        idle_gaps: cx.idle_gaps.get().map_or(&[], Vec::as_slice),
    });
    timings::stage("diagnosis", start);
    Report {
        sheets,
        timeline: prepared.timeline,
        quality,
        diagnosis,
    }
}

/// `gpu_timeline`, when there is GPU activity.
fn gpu_timeline_pass(cx: &Context) -> PassOutput {
    cx.timeline.as_ref().map(timeline::sheet).into()
}

/// `step_summary`, when the trace recorded profiler steps (the inference
/// layout writes the reference's sheets only).
fn step_summary_pass(cx: &Context) -> PassOutput {
    if cx.opts.inference.layout {
        return PassOutput::default();
    }
    let rows = steps::step_rows_with(cx.trace, cx.tree, cx.attribution);
    if rows.is_empty() {
        return PassOutput::default();
    }
    steps::steps_table(sheet::STEP_SUMMARY, &rows).into()
}

/// The sheets `sheets` makes, or none when the trace has no launchers (the
/// op, unified and roofline sheets all show launched work).
fn with_launchers(cx: &Context, sheets: impl FnOnce() -> PassOutput) -> PassOutput {
    if cx.has_launchers() {
        sheets()
    } else {
        PassOutput::default()
    }
}

/// One op sheet built on the launcher table.
fn op_sheet(cx: &Context, sheet: fn(&Context, &[LauncherRow]) -> Table) -> PassOutput {
    with_launchers(cx, || sheet(cx, cx.launcher_rows()).into())
}

/// `ops_summary_by_category`.
fn ops_by_category_pass(cx: &Context) -> PassOutput {
    op_sheet(cx, ops::summary_by_category)
}

/// `ops_summary`.
fn ops_summary_pass(cx: &Context) -> PassOutput {
    op_sheet(cx, ops::summary)
}

/// `ops_unique_args`.
fn ops_unique_args_pass(cx: &Context) -> PassOutput {
    op_sheet(cx, ops::unique_args)
}

/// `unified_perf_summary`, shown with the op sheets.
fn unified_pass(cx: &Context) -> PassOutput {
    with_launchers(cx, || unified::sheet(cx).into())
}

/// The roofline (perf model) sheets, shown with the op sheets.
fn roofline_pass(cx: &Context) -> PassOutput {
    with_launchers(cx, || perf_sheets::sheets(cx).into())
}

/// `kernel_summary` and the short-kernel sheets; the inference script
/// writes none unless asked, and we have no option to ask.
fn kernel_sheets_pass(cx: &Context) -> PassOutput {
    if cx.opts.inference.layout {
        return PassOutput::default();
    }
    kernels::sheets(cx).into()
}

/// `kernel_category_by_launcher`, with `--kernel-categories` and launched
/// kernels.
fn kernel_category_pass(cx: &Context) -> PassOutput {
    match &cx.opts.kernel_categories {
        Some(table) if cx.has_launchers() => kernel_category_sheet::sheet(cx, table).into(),
        _ => PassOutput::default(),
    }
}

/// `coll_analysis`; GPU-only traces have no collective ops to attribute.
fn coll_analysis_pass(cx: &Context) -> PassOutput {
    if cx.gpu_only || !cx.opts.inference.coll_analysis() {
        return PassOutput::default();
    }
    collectives::coll_analysis(cx.trace).into()
}

/// The idle sheets, when there are GPU events on streams.
fn idle_pass(cx: &Context) -> PassOutput {
    idle_sheets::sheets(cx).into()
}

/// The critical-path sheets (`--critical-path`) of the longest step; a
/// graph that is not valid gives a warning instead.
fn critical_path_pass(cx: &Context) -> PassOutput {
    if !cx.opts.critical_path {
        return PassOutput::default();
    }
    match critical_path::analyse(cx.trace, critical_path::Span::Auto) {
        Ok(cp) => critical_path::sheets::sheets(cx.trace, &cp, cx.opts.deferred_sheets).into(),
        Err(e) => PassOutput {
            sheets: Vec::new(),
            warnings: vec![format!("critical path: {e}")],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{CRITICAL_PATH_PASS, report_passes};
    use crate::names::sheet;

    #[test]
    fn the_critical_path_pass_is_where_the_schedule_looks() {
        assert_eq!(
            report_passes()[CRITICAL_PATH_PASS].name,
            sheet::CRITICAL_PATH_SUMMARY
        );
    }
}
