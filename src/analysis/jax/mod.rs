//! The JAX (XLA) report: the reference's `generate_perf_report_jax` sheets
//! over a trace decoded from an XPlane profile (spec 05 §1.4–1.9).
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

use std::sync::Arc;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::{Report, ReportOptions, TraceQuality};
use crate::names::sheet;
use crate::timings;
use crate::trace::Trace;
use args::{KernelArgs, kernel_args};
use kernels::JaxTrace;
use launchers::Row;

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
    let start = Instant::now();
    // Four independent groups, on every core: the timeline sheets, the
    // model sheets, the summaries, and the two sheets of a row per kernel
    // (`kernel_launchers`, `df_xla_perf`) with `xla_summary`. Deferred,
    // those two are cheap here (their rows are computed as they are
    // written); held, they are computed on every core. Pushed in the
    // reference's order.
    let deferred = opts.deferred_sheets;
    let ((timeline_sheets, ops), (summaries, (launched, xla_sheets))) = rayon::join(
        || rayon::join(|| timeline::sheets(&jt), || perf::op_sheets(&jt, &args)),
        || {
            rayon::join(
                || {
                    let mut summary = launchers::summary_sheet(
                        &jt,
                        sheet::KERNEL_LAUNCHERS_SUMMARY,
                        &rows,
                        false,
                    );
                    if let Some(table) = &opts.kernel_categories {
                        table.add_column(&mut summary);
                    }
                    let by_category = launchers::by_category_sheet(&jt, &rows);
                    let unique_args = launchers::unique_args_sheet(&jt, &rows);
                    [summary, by_category, unique_args]
                },
                || {
                    let launched =
                        launchers::launchers_sheet(&jt, sheet::KERNEL_LAUNCHERS, &rows, deferred);
                    let xla = launchers::xla_rows(&rows);
                    let perf = launchers::xla_perf_sheet(&jt, &xla, deferred);
                    let summary = launchers::summary_sheet(&jt, sheet::XLA_SUMMARY, &xla, true);
                    (launched, (perf, summary))
                },
            )
        },
    );
    let (mut sheets, timeline, w) = timeline_sheets;
    warnings.extend(w);
    let ((xla_perf, xla_warning), xla_summary) = xla_sheets;
    let (ops, op_warnings) = ops;
    sheets.push(launched);
    sheets.extend(summaries);
    warnings.extend(xla_warning);
    sheets.push(xla_perf);
    sheets.push(xla_summary);
    warnings.extend(op_warnings);
    sheets.extend(ops);
    timings::stage("sheets", start);
    let gpu_events = kernels::count_in_gpu_processes(trace, |e| e.cat.is_gpu());
    let unlinked = jt.kernels.iter().filter(|k| k.parent.is_none()).count();
    if unlinked > 0 {
        warnings.push(format!(
            "{unlinked} of {} kernels have no host launch in the trace: they are listed without HLO shapes",
            jt.kernels.len()
        ));
    }
    Report {
        sheets,
        quality: TraceQuality {
            gpu_events,
            busy_us: timeline.map_or(0.0, |t| t.busy),
            warnings,
            ..Default::default()
        },
        timeline,
    }
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
