//! The report summaries: the Markdown page for pull requests and the short
//! text printed on the terminal after every run.
//!
//! One path for every input format: the views read what the report has.
//! The timeline comes from the report's timeline numbers (PyTorch, JAX: the
//! mean over GPUs) or else its `gpu_timeline` sheet (rocprofv3); the top
//! categories from the first per-category sheet of `CATEGORY_SHEETS` the
//! report holds.

use std::borrow::Cow;

use super::{heading, line, lines_page, section, shown};
use crate::analysis::Report;
use crate::names::{col, row, sheet};
use crate::report::markdown::{Place, code_span, name as md_name};
use crate::report::{Block, Page};
use crate::table::{Column, RowRef, Table, Value};

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

/// The number of GPUs a per-GPU `gpu_timeline` (JAX: a `gpu_pid` column,
/// Perfetto: `GPU ID`) covers; None for a one-timeline report.
fn gpu_count(report: &Report) -> Option<usize> {
    let t = find(report, sheet::GPU_TIMELINE)?;
    let pids = t
        .column(col::GPU_PID)
        .or_else(|| t.column(crate::names::perfetto::GPU_ID))?;
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
/// the roofline view and the trace-quality notes. Numbers are rounded
/// for reading (see [`crate::report::columns::readable`]); the sheets
/// keep them whole.
pub fn page(report: &Report, title: &str) -> Page {
    let mut p = Page::default();
    p.blocks.push(heading(
        2,
        format!("tracelens report: {}", md_name(title, Place::Prose)),
    ));
    super::findings::section(&mut p, &report.diagnosis, title);
    timeline_section(&mut p, report);
    steps_section(&mut p, report);
    if let Some((c, t)) = categories(report) {
        let cols = [
            shown(col::OP_CATEGORY, "Category"),
            shown(col::COUNT, "Count"),
            shown(col::TOTAL_DIRECT_KERNEL_TIME_MS, "Kernel time (ms)"),
            shown(col::PERCENTAGE, "Share"),
        ];
        let title = format!("Top {} categories (GPU kernel time{})", c.what, c.scope);
        section(&mut p, &title, &t, &cols, 10);
        if let Some(n) = c.note {
            p.blocks.push(line(n));
        }
    }
    if let Some(s) = find(report, sheet::OPS_SUMMARY) {
        let cols = [
            shown(col::NAME, "Op"),
            shown(col::COUNT, "Count"),
            shown(col::TOTAL_DIRECT_KERNEL_TIME_MS, "Kernel time (ms)"),
            shown(col::PERCENTAGE, "Share"),
            shown(col::CUMULATIVE_PERCENTAGE, "Cumulative"),
        ];
        section(&mut p, "Top ops by kernel time", s, &cols, 15);
        replay_hint(&mut p, report, title);
    }
    if let Some(s) = find(report, sheet::UNIFIED_PERF_SUMMARY) {
        roofline_section(&mut p, s);
    }
    perfetto_sections(&mut p, report);
    quality_section(&mut p, report);
    p
}

/// The Perfetto report's sections: kernel time per GPU, the top kernels,
/// launch latency, HIP calls and memory copies (agents named as the trace
/// names them, which `memory_copy_by_copy_bytes` cannot do).
fn perfetto_sections(p: &mut Page, report: &Report) {
    use crate::names::perfetto::{self as pf, sheet as pfs};
    let Some(gpus) = find(report, pfs::GPU_AGENTS) else {
        return;
    };
    let cols = [
        shown("agent", "GPU (agent)"),
        shown("compute_ms", "Compute (ms)"),
        shown("comm_ms", "Communication (ms)"),
        shown("comm_not_overlapped_ms", "Not overlapped (ms)"),
    ];
    section(p, "Kernel time per GPU", gpus, &cols, 64);
    p.blocks.push(line(
        "Kernels of at least `--min-event-ns` (5000 ns by default); communication is \
         NCCL/RCCL kernels, and its overlap is counted as the reference counts it.",
    ));
    if let Some(k) = find(report, pfs::KERNEL_SUMMARY) {
        let cols = [
            shown(pf::NAME, "Kernel"),
            shown("Instances", "Count"),
            shown("Total Time", "Total"),
            shown("Avg", "Mean"),
            shown("Time", "Share"),
        ];
        section(p, "Top kernels", k, &cols, 10);
    }
    if let Some(a) = find(report, pfs::API_KERNEL_SUMMARY) {
        let cols = [
            shown("API Name", "API"),
            shown("Kernel Name", "Kernel"),
            shown("Count", "Count"),
            shown("TAvg_ns", "Total (ns)"),
            shown("AAvg_ns", "API (ns)"),
            shown("QAvg_ns", "Queue (ns)"),
            shown("KAvg_ns", "Kernel (ns)"),
        ];
        section(
            p,
            "Launch latency (mean: API + queue + kernel)",
            a,
            &cols,
            10,
        );
    }
    if let Some(h) = find(report, pfs::HIP_SUMMARY) {
        let cols = [
            shown(pf::NAME, "HIP call"),
            shown("Instances", "Count"),
            shown("Total Time", "Total"),
            shown("Time", "Share"),
        ];
        section(p, "Top HIP calls (host time)", h, &cols, 10);
    }
    if let Some(c) = find(report, pfs::MEMORY_COPY_BY_DIRECTION)
        && c.nrows() > 0
    {
        let cols = [
            shown("direction", "Direction"),
            shown("count", "Count"),
            shown("bytes", "Bytes"),
        ];
        section(p, "Memory copies", c, &cols, 20);
    }
    let unknown_gpu = find(report, pfs::MEMORY_COPY_BY_COPY_BYTES)
        .and_then(|t| t.column("direction"))
        .is_some_and(|d| {
            d.values
                .iter()
                .any(|v| v.as_str().is_some_and(|s| s.contains("GPU ?")))
        });
    if unknown_gpu {
        p.blocks.push(line(
            "`memory_copy_by_copy_bytes` says `GPU ?` where the trace names an agent `Agent-N` \
             (rocprofv3 from ROCm 6.4 does), as the reference's sheet does; the table above \
             names the agents.",
        ));
    }
}

/// Ops whose `tracelens replay` command the page lists.
const REPLAY_ROWS: usize = 3;

/// How to reproduce the top ops (the first rows of `ops_unique_args`)
/// without the model: the `tracelens replay` commands.
fn replay_hint(p: &mut Page, report: &Report, title: &str) {
    // Replay needs the trace file.
    if title == "stdin" {
        return;
    }
    let Some(t) = find(report, sheet::OPS_UNIQUE_ARGS) else {
        return;
    };
    let (Some(name), Some(uid), Some(dims)) = (
        t.column_index(col::NAME),
        t.column_index(col::EX_UID),
        t.column_index(col::INPUT_DIMS),
    ) else {
        return;
    };
    let items: Vec<String> = t
        .rows()
        .take(REPLAY_ROWS)
        .filter_map(|r| {
            let uid = r.get(uid).as_f64()?;
            let shape = shape_text(r.get(dims).as_str().unwrap_or(""));
            Some(format!(
                "{}: {} {shape}",
                code_span(
                    &format!("tracelens replay {title} --uid {uid}"),
                    Place::Prose
                ),
                md_name(r.get(name).as_str()?, Place::Prose)
            ))
        })
        .collect();
    if items.is_empty() {
        return;
    }
    p.blocks.push(line(format!(
        "Reproduce the top ops without the model (random inputs of the recorded shapes through the same ATen call): {}, or one op:",
        code_span(&format!("tracelens replay {title} --top 10"), Place::Prose)
    )));
    p.blocks.push(Block::Bullets(items));
}

/// Rows of the roofline table on the page.
const ROOFLINE_ROWS: usize = 15;

/// The page's own column in the roofline table: the op's input shapes.
const SHAPE: &str = "shape";

/// The top rows of `unified_perf_summary`, each op with its input shapes
/// (one op name has a row per shape), and notes on the numbers that need
/// one: empty model cells, and shares of the roofline above 100 %.
fn roofline_section(p: &mut Page, s: &Table) {
    let top = roofline_top(s);
    let has_roofline = top.column(col::PCT_ROOFLINE_MEAN).is_some();
    let mut cols = vec![
        shown(col::NAME, "Op"),
        shown(SHAPE, "Shape"),
        shown(col::OP_CATEGORY, "Category"),
        shown(col::OPERATION_COUNT, "Count"),
        shown(col::KERNEL_TIME_US_SUM, "Kernel time (µs)"),
        shown(col::TFLOPS_S_MEAN, "TFLOPS/s"),
        shown(col::TB_S_MEAN, "TB/s"),
        shown(col::FLOPS_PER_BYTE, "FLOPs/byte"),
    ];
    if has_roofline {
        cols.extend([
            shown(col::ROOFLINE_BOUND, "Bound"),
            shown(col::PCT_ROOFLINE_MEAN, "Of roofline"),
        ]);
    }
    section(
        p,
        "Roofline: top ops by kernel time",
        &top,
        &cols,
        ROOFLINE_ROWS,
    );
    p.blocks
        .push(Block::Bullets(roofline_notes(&top, has_roofline)));
}

/// The first rows of `unified_perf_summary` with a readable shape column
/// and the bound labels as words.
fn roofline_top(s: &Table) -> Table {
    let rows: Vec<usize> = (0..s.nrows().min(ROOFLINE_ROWS)).collect();
    let mut top = s.take_rows(&rows);
    if let Some(dims) = top.column(col::INPUT_DIMS) {
        let shapes = dims
            .values
            .iter()
            .map(|v| Value::Text(shape_text(&v.py_str()).into()))
            .collect();
        top.push_column(Column::new(SHAPE, shapes));
    }
    if let Some(bound) = top.column_mut(col::ROOFLINE_BOUND) {
        for v in &mut bound.values {
            if let Some(word) = v.as_str().and_then(bound_word) {
                *v = Value::Text(word.into());
            }
        }
    }
    top
}

/// The notes under the roofline table: what its columns mean, why rate
/// cells are empty, and the rows above 100 % of roofline.
fn roofline_notes(top: &Table, has_roofline: bool) -> Vec<String> {
    let mut notes = vec![
        "Kernel time summed over the op's calls with these inputs; rates are means over the calls."
            .to_string(),
    ];
    if has_roofline {
        notes.push(
            "Of roofline: the time the roofline allows the op on this GPU (its FLOPs at peak compute or its bytes at peak bandwidth, whichever bounds it) over its kernel time."
                .to_string(),
        );
    }
    let unmodelled = top
        .column(col::TFLOPS_S_MEAN)
        .is_some_and(|c| c.values.iter().any(Value::is_missing));
    if unmodelled {
        notes.push(
            "Empty rate cells: tracelens has no FLOP/byte model for the op (`has_perf_model` is False)."
                .to_string(),
        );
    }
    let above = above_roofline(top);
    if !above.is_empty() {
        notes.push(format!(
            "Above 100% of roofline ({}): the kernels finished faster than the model's minimum time. The model counts every operand byte as memory traffic; caches that served some of it, or a GPU faster than its listed peaks, beat that bound. Treat these rows as at the roofline.",
            above.join(", ")
        ));
    }
    notes
}

/// The rows of `top` above 100 % of roofline, as `` `name` (shape) ``.
fn above_roofline(top: &Table) -> Vec<String> {
    top.rows()
        .filter(|r| {
            r.get_named(col::PCT_ROOFLINE_MEAN)
                .is_some_and(|v| v.to_f64() > 100.0)
        })
        .map(|r| {
            let name = r
                .get_named(col::NAME)
                .map_or(String::new(), Value::csv_text);
            let shape = r.get_named(SHAPE).map_or(String::new(), Value::csv_text);
            let name = code_span(&name, Place::Prose);
            if shape.is_empty() {
                name
            } else {
                format!("{name} ({})", md_name(&shape, Place::Prose))
            }
        })
        .collect()
}

/// `memory` / `compute` for the reference's bound labels.
fn bound_word(label: &str) -> Option<&'static str> {
    match label {
        "MEMORY_BOUND" => Some("memory"),
        "COMPUTE_BOUND" => Some("compute"),
        _ => None,
    }
}

/// Longest shape text shown, in characters.
const SHAPE_CHARS: usize = 48;

/// The input shapes of an `Input Dims` repr, for reading: each tensor's
/// dims joined by `×`, tensors by `, `; scalars (`()`) and other
/// non-tensor inputs are left out, and a tensor list's tensors are listed
/// in turn. `((8944, 1024), (1024, 2816), ())` becomes
/// `8944×1024, 1024×2816`; `((512,),)` becomes `512`.
pub fn shape_text(dims: &str) -> String {
    let mut shapes: Vec<String> = Vec::new();
    let mut depth = 0usize;
    // Start of the innermost open tuple or list, and whether it has an
    // inner one (then it is not a tensor's dims).
    let mut open: Option<usize> = None;
    for (i, c) in dims.char_indices() {
        match c {
            '(' | '[' => {
                depth += 1;
                open = Some(i + 1);
            }
            ')' | ']' => {
                if let Some(start) = open.take() {
                    // The outermost tuple is the list of inputs, not a tensor.
                    if depth > 1 {
                        let inner: Vec<&str> = dims[start..i]
                            .split(',')
                            .map(str::trim)
                            .filter(|d| !d.is_empty())
                            .collect();
                        if !inner.is_empty() {
                            shapes.push(inner.join("×"));
                        }
                    }
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    crate::report::markdown::truncate_text(&shapes.join(", "), SHAPE_CHARS)
}

/// The timeline's row labels as the page words them.
fn timeline_word(label: &str) -> Option<&'static str> {
    Some(match label {
        "computation_time" => "compute",
        "exposed_comm_time" => "exposed communication",
        "exposed_memcpy_time" => "exposed memcpy",
        "busy_time" => "busy",
        "idle_time" | "idle" => "idle",
        "total_time" => "total",
        "total_comm_time" => "all communication",
        "total_memcpy_time" => "all memcpy",
        "kernel" => "kernels",
        "memory" => "memory copies",
        _ => return None,
    })
}

/// The timeline table: the mean over GPUs when the report has one
/// (`gpu_events_averages`), else `gpu_timeline`.
fn timeline_section(p: &mut Page, report: &Report) {
    let cols = [
        shown(col::TYPE, ""),
        shown(col::TIME_MS, "Time (ms)"),
        shown(col::PERCENT, "Share"),
    ];
    let worded = |s: &Table| {
        let mut t = s.clone();
        if let Some(types) = t.column_mut(col::TYPE) {
            for v in &mut types.values {
                if let Some(word) = v.as_str().and_then(timeline_word) {
                    *v = Value::Text(word.into());
                }
            }
        }
        t
    };
    match (find(report, sheet::GPU_EVENTS_AVERAGES), gpu_count(report)) {
        (Some(s), Some(n)) => {
            let title = format!("GPU timeline ({})", gpus_phrase(n));
            section(p, &title, &worded(s), &cols, 20);
            p.blocks.push(line(format!(
                "One timeline per GPU in the `{}` sheet.",
                sheet::GPU_TIMELINE
            )));
        }
        _ => match find(report, sheet::GPU_TIMELINE) {
            Some(s) => section(p, "GPU timeline", &worded(s), &cols, 20),
            // The Perfetto report shows kernel time per GPU instead.
            None if find(report, crate::names::perfetto::sheet::GPU_AGENTS).is_some() => {}
            None => p.blocks.push(line("No GPU activity to put on a timeline.")),
        },
    }
}

/// The profiler steps, when there are several: a step far from the others
/// hides behind the whole-trace figures.
fn steps_section(p: &mut Page, report: &Report) {
    const SHOWN: usize = 20;
    let Some(s) = find(report, sheet::STEP_SUMMARY) else {
        return;
    };
    if s.nrows() < 2 {
        return;
    }
    // Serving iterations carry a batch and phase; profiler steps do not.
    let serving = s
        .column("batch_size")
        .is_some_and(|c| c.values.iter().any(|v| !v.is_missing()));
    let mut cols = vec![
        shown("step", if serving { "Iteration" } else { "Step" }),
        shown("cpu_dur_us", "CPU (µs)"),
        shown("gpu_span_us", "GPU span (µs)"),
        shown("busy_us", "Busy (µs)"),
        shown("idle_us", "Idle (µs)"),
        shown("exposed_comm_us", "Exposed comm (µs)"),
        shown("kernels", "Kernels"),
        shown("top_category", "Top category"),
    ];
    if serving {
        cols.extend([shown("batch_size", "Batch"), shown("phase", "Phase")]);
    }
    let title = if serving {
        "Serving iterations"
    } else {
        "Profiler steps"
    };
    section(p, title, s, &cols, SHOWN);
    if s.nrows() > SHOWN {
        p.blocks.push(line(format!(
            "{} steps; all of them in the `{}` sheet.",
            s.nrows(),
            sheet::STEP_SUMMARY
        )));
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
    if let Some(gpus) = find(report, crate::names::perfetto::sheet::GPU_AGENTS) {
        let ms = |r: &RowRef<'_>, c: &str| r.get_named(c).map_or(f64::NAN, Value::to_f64);
        for r in gpus.rows() {
            out.push(format!(
                "GPU {}: compute {:.3} ms, communication {:.3} ms ({:.3} ms not overlapped)",
                crate::quote::quoted(r.get_named("agent").and_then(Value::as_str).unwrap_or("")),
                ms(&r, "compute_ms"),
                ms(&r, "comm_ms"),
                ms(&r, "comm_not_overlapped_ms"),
            ));
        }
    }
    out.extend(super::findings::terminal_lines(&report.diagnosis));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_of_input_dims() {
        assert_eq!(
            shape_text("((8944, 1024), (1024, 2816), ())"),
            "8944×1024, 1024×2816"
        );
        assert_eq!(shape_text("((512,),)"), "512");
        assert_eq!(shape_text("((), ())"), "");
        assert_eq!(shape_text("()"), "");
        assert_eq!(shape_text(""), "");
        // A tensor list: each of its tensors in turn.
        assert_eq!(shape_text("(((2, 3), (2, 3)), (4,), ())"), "2×3, 2×3, 4");
        // Lists as some traces spell them.
        assert_eq!(shape_text("[[1, 8], [8]]"), "1×8, 8");
        let long = format!("(({}),)", vec!["1024"; 20].join(", "));
        assert_eq!(shape_text(&long).chars().count(), SHAPE_CHARS);
        assert!(shape_text(&long).ends_with('…'));
    }

    #[test]
    fn words_for_labels() {
        assert_eq!(bound_word("MEMORY_BOUND"), Some("memory"));
        assert_eq!(bound_word("COMPUTE_BOUND"), Some("compute"));
        assert_eq!(bound_word("other"), None);
        assert_eq!(timeline_word("computation_time"), Some("compute"));
        assert_eq!(timeline_word("gpu_pid"), None);
    }
}
