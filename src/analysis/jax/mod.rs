//! The JAX (XLA) report: the reference's `generate_perf_report_jax` sheets
//! over a trace decoded from an XPlane profile.
//!
//! - [`kernels`]: the GPU kernels, their launches and HLO records;
//! - [`hlo_records`]: what the reference reads of each HLO instruction;
//! - [`categories`]: the kernel categories (`JaxOpKeys`);
//! - [`args`]: perf-model selection and the arguments the sheets print;
//! - [`timeline`]: `gpu_timeline`, `gpu_events_averages`;
//! - [`launchers`]: `kernel_launchers` and the sheets built on it;
//! - [`launch_rows`]: the rows of `kernel_launchers` and `df_xla_perf`,
//!   computed as they are written;
//! - [`perf`]: the perf models and the `op_<category>` sheets.

pub mod args;
pub mod categories;
pub mod hlo_records;
pub mod kernels;
pub mod launch_rows;
pub mod launchers;
pub mod perf;
#[cfg(test)]
mod test_support;
pub mod timeline;

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rustc_hash::FxHashMap;

use crate::analysis::common::quality::TraceQuality;
use crate::analysis::common::timeline::Timeline;
use crate::analysis::diagnosis::Diagnosis;
use crate::analysis::diagnosis::device::{self, DeviceTrace};
use crate::analysis::diagnosis::health::GpuEvents;
use crate::analysis::{Pass, PassOutput, Report, ReportOptions, run_passes};
use crate::names::sheet;
use crate::timings;
use crate::trace::{EventId, Trace};
use args::{KernelArgs, kernel_args};
use kernels::JaxTrace;
use launchers::Row;

/// What the JAX report's passes read: the kernels with their arguments
/// and rows, the options, and what passes share or hand back (the XLA
/// kernels' rows, the GPU timeline), set by the first pass that has them.
struct Context<'a> {
    jt: &'a JaxTrace<'a>,
    args: &'a [Arc<KernelArgs>],
    rows: &'a [Row<'a>],
    opts: &'a ReportOptions,
    xla: OnceLock<Vec<Row<'a>>>,
    timeline: OnceLock<Option<Timeline>>,
}

impl<'a> Context<'a> {
    /// The rows of the XLA (uncategorised) kernels, shared by `df_xla_perf`
    /// and `xla_summary`.
    fn xla(&self) -> &[Row<'a>] {
        self.xla.get_or_init(|| launchers::xla_rows(self.rows))
    }
}

/// The passes of the JAX report, in the reference's sheet order. The two
/// sheets of a row per kernel (`kernel_launchers`, `df_xla_perf`) are cheap
/// when deferred (their rows are computed as they are written); held, they
/// are computed on every core.
fn report_passes<'a>() -> [Pass<Context<'a>>; 8] {
    [
        Pass {
            name: "timeline sheets",
            run: timeline_pass,
        },
        Pass {
            name: sheet::KERNEL_LAUNCHERS,
            run: |cx| {
                let deferred = cx.opts.deferred_sheets;
                launchers::launchers_sheet(cx.jt, sheet::KERNEL_LAUNCHERS, cx.rows, deferred).into()
            },
        },
        Pass {
            name: sheet::KERNEL_LAUNCHERS_SUMMARY,
            run: |cx| {
                let name = sheet::KERNEL_LAUNCHERS_SUMMARY;
                let mut summary = launchers::summary_sheet(cx.jt, name, cx.rows, false);
                if let Some(table) = &cx.opts.kernel_categories {
                    table.add_column(&mut summary);
                }
                summary.into()
            },
        },
        Pass {
            name: sheet::KERNEL_LAUNCHERS_SUMMARY_BY_CATEGORY,
            run: |cx| launchers::by_category_sheet(cx.jt, cx.rows).into(),
        },
        Pass {
            name: sheet::KERNEL_LAUNCHERS_UNIQUE_ARGS,
            run: |cx| launchers::unique_args_sheet(cx.jt, cx.rows).into(),
        },
        Pass {
            name: sheet::DF_XLA_PERF,
            run: |cx| {
                let (sheet, warning) =
                    launchers::xla_perf_sheet(cx.jt, cx.xla(), cx.opts.deferred_sheets);
                PassOutput {
                    sheets: vec![sheet],
                    warnings: warning.into_iter().collect(),
                }
            },
        },
        Pass {
            name: sheet::XLA_SUMMARY,
            run: |cx| launchers::summary_sheet(cx.jt, sheet::XLA_SUMMARY, cx.xla(), true).into(),
        },
        Pass {
            name: "op sheets",
            run: |cx| {
                let (sheets, warnings) = perf::op_sheets(cx.jt, cx.args);
                PassOutput { sheets, warnings }
            },
        },
    ]
}

/// `gpu_timeline` and `gpu_events_averages`; the timeline numbers are kept
/// in the context for the report.
fn timeline_pass(cx: &Context) -> PassOutput {
    let (sheets, timeline, warnings) = timeline::sheets(cx.jt);
    let _ = cx.timeline.set(timeline);
    PassOutput { sheets, warnings }
}

/// Every sheet of the JAX report, in the reference's order.
pub fn run_report(trace: &Trace, opts: &ReportOptions) -> Report {
    let start = Instant::now();
    let jt = JaxTrace::new(trace);
    timings::stage(&format!("kernels ({})", jt.kernels.len()), start);
    let start = Instant::now();
    let mut warnings: Vec<String> = trace.warnings().to_vec();
    warnings.extend(jt.warnings.iter().cloned());
    let args = all_args(&jt, &mut warnings);
    let rows: Vec<Row> = jt
        .kernels
        .iter()
        .zip(&args)
        .map(|(kernel, args)| Row { kernel, args })
        .collect();
    timings::stage("kernel arguments", start);
    let cx = Context {
        jt: &jt,
        args: &args,
        rows: &rows,
        opts,
        xla: OnceLock::new(),
        timeline: OnceLock::new(),
    };
    let out = run_passes(&cx, &report_passes());
    warnings.extend(out.warnings);
    let timeline = cx.timeline.get().copied().flatten();
    let gpu_work = kernels::in_gpu_processes(trace, |e| e.cat.is_gpu());
    let gpu_events = gpu_work.len();
    let unlinked = jt.kernels.iter().filter(|k| k.parent.is_none()).count();
    if unlinked > 0 {
        warnings.push(format!(
            "{unlinked} of {} kernels have no host launch in the trace: they are listed without HLO shapes",
            jt.kernels.len()
        ));
    }
    let start = Instant::now();
    let diagnosis = diagnose(&jt, &gpu_work, timeline.as_ref());
    timings::stage("diagnosis", start);
    Report {
        sheets: out.sheets,
        quality: TraceQuality {
            gpu_events,
            busy_us: timeline.map_or(0.0, |t| t.busy),
            warnings,
            ..Default::default()
        },
        timeline,
        diagnosis,
    }
}

/// The health checks and findings of the GPU work (`gpu_work`: the GPU
/// events of GPU processes): each GPU row (pid and tid) is a stream, a
/// kernel's launch is its correlated host event, and its shapes are those
/// of its HLO record.
fn diagnose(jt: &JaxTrace, gpu_work: &[EventId], timeline: Option<&Timeline>) -> Diagnosis {
    let trace = jt.trace;
    let work = gpu_work.iter().map(|&id| {
        let e = trace.event(id);
        (Some((e.pid, e.tid)), e.ts, e.t_end(), Some(id))
    });
    // The kernels are in UID order.
    let launch = |id: EventId| {
        let i = jt.kernels.binary_search_by_key(&id, |k| k.id).ok()?;
        jt.kernels[i].parent
    };
    let shaped = jt.kernels.iter().filter(|k| k.record.is_some()).count();
    device::diagnose(&DeviceTrace {
        format: "JAX",
        trace,
        gpu: GpuEvents::of_keyed(work),
        launch: Some(&launch),
        shapes: Some((shaped, jt.kernels.len())),
        timeline,
    })
}

/// Every kernel's model and arguments; a warning per model that could not
/// read a kernel's record (counted by model and reason).
fn all_args(jt: &JaxTrace, warnings: &mut Vec<String>) -> Vec<Arc<KernelArgs>> {
    let mut failed: indexmap::IndexMap<String, usize> = indexmap::IndexMap::new();
    // The arguments follow from a kernel's record and category alone, and
    // the kernels of one HLO instruction (one per step) share both: each
    // pair is read once and its arguments shared.
    let mut by_record = FxHashMap::default();
    let args = jt
        .kernels
        .iter()
        .map(|k| {
            let (a, err) = by_record.entry((k.record, k.category)).or_insert_with(|| {
                let (a, err) = kernel_args(jt.record(k), jt.module_of(k), k.category);
                (Arc::new(a), err)
            });
            if let Some(e) = err {
                *failed.entry(e.clone()).or_default() += 1;
            }
            a.clone()
        })
        .collect();
    for (e, n) in failed {
        warnings.push(format!("{n} kernel(s) left without a perf model: {e}"));
    }
    args
}
