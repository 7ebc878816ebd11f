//! The report summaries: the Markdown page for pull requests and the short
//! text printed on the terminal after every run.
//!
//! One path for every input format: the views read what the report has.
//! The timeline comes from the report's timeline numbers (PyTorch, JAX: the
//! mean over GPUs) or else its `gpu_timeline` sheet (rocprofv3); the top
//! categories from the first per-category sheet of [`CATEGORY_SHEETS`] the
//! report holds.

use std::borrow::Cow;

use super::{heading, line, lines_page, section};
use crate::analysis::Report;
use crate::names::{col, row, sheet};
use crate::report::{Block, Page};
use crate::table::{RowRef, Table, Value};

fn find<'a>(r: &'a Report, name: &str) -> Option<&'a Table> {
    crate::table::find(&r.sheets, name)
}

/// A per-category kernel-time sheet the summaries show: its rows hold
/// [`col::OP_CATEGORY`], [`col::COUNT`],
/// [`col::TOTAL_DIRECT_KERNEL_TIME_MS`] and [`col::PERCENTAGE`].
struct CategorySheet {
    /// The sheet.
    sheet: &'static str,
    /// What is categorised (`op`, `kernel`).
    what: &'static str,
    /// Whose kernel time it is, after the title (JAX: all GPUs').
    scope: &'static str,
    /// Factor turning the sheet's time column into milliseconds.
    to_ms: f64,
    /// A line the page adds under the table.
    note: Option<&'static str>,
}

/// The per-category sheets, one per report kind.
const CATEGORY_SHEETS: [CategorySheet; 3] = [
    // PyTorch: kernel time booked to the host ops that launched it.
    CategorySheet {
        sheet: sheet::OPS_SUMMARY_BY_CATEGORY,
        what: "op",
        scope: "",
        to_ms: 1.0,
        note: None,
    },
    // JAX: summed over all GPUs, as the sheet has it.
    CategorySheet {
        sheet: sheet::KERNEL_LAUNCHERS_SUMMARY_BY_CATEGORY,
        what: "kernel",
        scope: ", all GPUs",
        to_ms: 1.0,
        note: Some(JAX_PER_GPU),
    },
    // rocprofv3: the reference never converts rocprof's nanoseconds, so
    // this sheet's "ms" column holds microseconds.
    CategorySheet {
        sheet: sheet::KERNEL_SUMMARY_BY_CATEGORY,
        what: "kernel",
        scope: "",
        to_ms: 1e-3,
        note: Some(ROCPROF_UNITS),
    },
];

/// The JAX page's word on the per-GPU time.
const JAX_PER_GPU: &str = "Kernel time summed over all GPUs; the `time ms per gpu` column of the \
     sheets divides it by the number of GPUs.";

/// The rocprof page's word on units.
const ROCPROF_UNITS: &str = "Times on this page are in ms. As in the reference, the rocprof sheets keep \
     rocprof's nanoseconds: `gpu_timeline` is in ms, but columns labelled `(µs)` hold ns, and \
     `Total Kernel Time (ms)` and `total_direct_kernel_time_ms` hold µs.";

/// The report's per-category sheet, with its time column in ms.
fn categories(report: &Report) -> Option<(&'static CategorySheet, Cow<'_, Table>)> {
    CATEGORY_SHEETS.iter().find_map(|c| {
        let t = find(report, c.sheet)?;
        if c.to_ms == 1.0 {
            return Some((c, Cow::Borrowed(t)));
        }
        let mut t = t.clone();
        if let Some(ms) = t.column_mut(col::TOTAL_DIRECT_KERNEL_TIME_MS) {
            for v in &mut ms.values {
                *v = Value::Float(v.to_f64() * c.to_ms);
            }
        }
        Some((c, Cow::Owned(t)))
    })
}

/// The number of GPUs a per-GPU `gpu_timeline` (JAX: a `gpu_pid` column)
/// covers; None for a one-timeline report.
fn gpu_count(report: &Report) -> Option<usize> {
    let pids = find(report, sheet::GPU_TIMELINE)?.column(col::GPU_PID)?;
    let mut seen: Vec<&Value> = Vec::new();
    for v in &pids.values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    Some(seen.len())
}

/// What a per-GPU report's timeline covers: "mean of N GPUs" (one GPU:
/// "1 GPU").
fn gpus_phrase(n: usize) -> String {
    if n == 1 {
        "1 GPU".to_string()
    } else {
        format!("mean of {n} GPUs")
    }
}

/// The summary page: GPU timeline, top categories, top ops by kernel time,
/// the roofline view and the trace-quality notes.
pub fn page(report: &Report, title: &str) -> Page {
    let mut p = Page::default();
    p.blocks
        .push(heading(2, format!("tracelens report: {title}")));
    timeline_section(&mut p, report);
    if let Some((c, t)) = categories(report) {
        let cols = [
            col::OP_CATEGORY,
            col::COUNT,
            col::TOTAL_DIRECT_KERNEL_TIME_MS,
            col::PERCENTAGE,
        ];
        let title = format!("Top {} categories (GPU kernel time{})", c.what, c.scope);
        section(&mut p, &title, &t, &cols, 10, 4);
        if let Some(n) = c.note {
            p.blocks.push(line(n));
        }
    }
    if let Some(s) = find(report, sheet::OPS_SUMMARY) {
        let cols = [
            col::NAME,
            col::COUNT,
            col::TOTAL_DIRECT_KERNEL_TIME_MS,
            col::PERCENTAGE,
            col::CUMULATIVE_PERCENTAGE,
        ];
        section(&mut p, "Top ops by kernel time", s, &cols, 15, 4);
    }
    if let Some(s) = find(report, sheet::UNIFIED_PERF_SUMMARY) {
        let mut cols = vec![
            col::NAME,
            col::OP_CATEGORY,
            col::OPERATION_COUNT,
            col::KERNEL_TIME_US_SUM,
            col::TFLOPS_S_MEAN,
            col::TB_S_MEAN,
            col::FLOPS_PER_BYTE,
        ];
        if s.column(col::PCT_ROOFLINE_MEAN).is_some() {
            cols.extend([col::ROOFLINE_BOUND, col::PCT_ROOFLINE_MEAN]);
        }
        section(&mut p, "Roofline: top ops by kernel time", s, &cols, 15, 4);
    }
    quality_section(&mut p, report);
    p
}

/// The timeline table: the mean over GPUs when the report has one
/// (`gpu_events_averages`), else `gpu_timeline`.
fn timeline_section(p: &mut Page, report: &Report) {
    let cols = [col::TYPE, col::TIME_MS, col::PERCENT];
    match (find(report, sheet::GPU_EVENTS_AVERAGES), gpu_count(report)) {
        (Some(s), Some(n)) => {
            let title = format!("GPU timeline ({})", gpus_phrase(n));
            section(p, &title, s, &cols, 20, 4);
            p.blocks.push(line(format!(
                "One timeline per GPU in the `{}` sheet.",
                sheet::GPU_TIMELINE
            )));
        }
        _ => match find(report, sheet::GPU_TIMELINE) {
            Some(s) => section(p, "GPU timeline", s, &cols, 20, 4),
            None => p.blocks.push(line("No GPU activity to put on a timeline.")),
        },
    }
}

/// The trace-quality notes. Only the PyTorch report books GPU work to host
/// launches (its op sheets), so only it can vouch that all of it was.
fn quality_section(p: &mut Page, report: &Report) {
    let notes = report.quality.notes();
    p.blocks.push(heading(3, "Trace quality"));
    if !notes.is_empty() {
        p.blocks.push(Block::Bullets(notes));
    } else if find(report, sheet::OPS_SUMMARY).is_some() {
        p.blocks
            .push(line("All GPU events are linked to their host launch."));
    } else {
        p.blocks.push(line("No warnings."));
    }
}

/// The few lines printed on the terminal after a run.
pub fn terminal(report: &Report) -> Page {
    let mut out: Vec<String> = timeline_line(report).into_iter().collect();
    if let Some((c, t)) = categories(report) {
        out.push(format!(
            "Top {} categories by GPU kernel time{} (count, ms, %):",
            c.what, c.scope
        ));
        let float = |r: &RowRef<'_>, c: &str| r.get_named(c).map_or(f64::NAN, Value::to_f64);
        for r in t.rows().take(5) {
            let name = r.get_named(col::OP_CATEGORY).and_then(Value::as_str);
            let count = r
                .get_named(col::COUNT)
                .map_or(String::new(), Value::csv_text);
            out.push(format!(
                "  {:<28} {:>8} {:>10.3} ms  {:>5.1}%",
                name.unwrap_or(""),
                count,
                float(&r, col::TOTAL_DIRECT_KERNEL_TIME_MS),
                float(&r, col::PERCENTAGE)
            ));
        }
    }
    lines_page(out)
}

/// The busy/idle line: from the report's timeline numbers (a mean over
/// GPUs when it has several), else from its `gpu_timeline` rows.
fn timeline_line(report: &Report) -> Option<String> {
    let Some(t) = &report.timeline else {
        return sheet_timeline_line(find(report, sheet::GPU_TIMELINE)?);
    };
    let pct = |v: f64| v / t.total * 100.0;
    let scope = gpu_count(report).map_or(String::new(), |n| format!(" ({})", gpus_phrase(n)));
    Some(format!(
        "GPU time {:.3} ms{scope}: busy {:.3} ms ({:.1}%), idle {:.3} ms ({:.1}%); compute {:.1}%, exposed comm {:.1}%, exposed memcpy {:.1}%",
        t.total / 1e3,
        t.busy / 1e3,
        pct(t.busy),
        t.idle / 1e3,
        pct(t.idle),
        pct(t.computation),
        pct(t.exposed_comm),
        pct(t.exposed_memcpy)
    ))
}

/// The busy/idle line of a rocprof `gpu_timeline` (rows `total_time`,
/// `kernel`, `memory`, `busy_time`, `idle`, in ms); None without them.
fn sheet_timeline_line(s: &Table) -> Option<String> {
    let ms = |label: &str| {
        s.rows()
            .find(|r| r.get_named(col::TYPE).and_then(Value::as_str) == Some(label))
            .and_then(|r| r.get_named(col::TIME_MS).map(Value::to_f64))
    };
    let total = ms(row::TOTAL_TIME)?;
    let busy = ms(row::BUSY_TIME)?;
    let idle = ms(row::IDLE)?;
    let pct = |v: f64| if total > 0.0 { v / total * 100.0 } else { 0.0 };
    Some(format!(
        "GPU time {total:.3} ms: busy {busy:.3} ms ({:.1}%), idle {idle:.3} ms ({:.1}%); kernels {:.1}%, memory copies {:.1}%",
        pct(busy),
        pct(idle),
        pct(ms(row::KERNEL).unwrap_or(0.0)),
        pct(ms(row::MEMORY).unwrap_or(0.0)),
    ))
}
