//! Human summaries of a report: the Markdown page for pull requests and the
//! short text printed on the terminal after every run.

use std::fmt::Write;

use crate::analysis::Report;
use crate::names::{col, sheet};
use crate::table::markdown::table;
use crate::table::{RowRef, Table, Value};

fn find<'a>(r: &'a Report, name: &str) -> Option<&'a Table> {
    crate::table::find(&r.sheets, name)
}

/// The Markdown summary: GPU timeline, top categories, top ops by kernel
/// time and the trace-quality note.
pub fn markdown(report: &Report, title: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## tracelens report: {title}\n");
    match find(report, sheet::GPU_TIMELINE) {
        Some(s) => {
            let _ = writeln!(
                md,
                "### GPU timeline\n\n{}",
                table(s, &[col::TYPE, col::TIME_MS, col::PERCENT], 20, 4)
            );
        }
        None => md.push_str("No GPU activity to put on a timeline.\n\n"),
    }
    if let Some(s) = find(report, sheet::OPS_SUMMARY_BY_CATEGORY) {
        let _ = writeln!(
            md,
            "### Top op categories (GPU kernel time)\n\n{}",
            table(
                s,
                &[
                    col::OP_CATEGORY,
                    col::COUNT,
                    col::TOTAL_DIRECT_KERNEL_TIME_MS,
                    col::PERCENTAGE
                ],
                10,
                4
            )
        );
    }
    if let Some(s) = find(report, sheet::OPS_SUMMARY) {
        let _ = writeln!(
            md,
            "### Top ops by kernel time\n\n{}",
            table(
                s,
                &[
                    col::NAME,
                    col::COUNT,
                    col::TOTAL_DIRECT_KERNEL_TIME_MS,
                    col::PERCENTAGE,
                    col::CUMULATIVE_PERCENTAGE
                ],
                15,
                4
            )
        );
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
        let _ = writeln!(
            md,
            "### Roofline: top ops by kernel time\n\n{}",
            table(s, &cols, 15, 4)
        );
    }
    let notes = report.quality.notes();
    md.push_str("### Trace quality\n\n");
    if notes.is_empty() {
        md.push_str("All GPU events are linked to their host launch.\n");
    } else {
        for n in notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    md
}

/// The few lines printed on the terminal after a run.
pub fn terminal(report: &Report) -> String {
    let mut out = String::new();
    if let Some(t) = &report.timeline {
        let pct = |v: f64| v / t.total * 100.0;
        let _ = writeln!(
            out,
            "GPU time {:.3} ms: busy {:.3} ms ({:.1}%), idle {:.3} ms ({:.1}%); compute {:.1}%, exposed comm {:.1}%, exposed memcpy {:.1}%",
            t.total / 1e3,
            t.busy / 1e3,
            pct(t.busy),
            t.idle / 1e3,
            pct(t.idle),
            pct(t.computation),
            pct(t.exposed_comm),
            pct(t.exposed_memcpy)
        );
    }
    if let Some(s) = find(report, sheet::OPS_SUMMARY_BY_CATEGORY) {
        let _ = writeln!(out, "Top categories by GPU kernel time:");
        let float = |r: &RowRef<'_>, c: &str| r.get_named(c).map_or(f64::NAN, Value::to_f64);
        for r in s.rows().take(5) {
            let name = r.get_named(col::OP_CATEGORY).and_then(Value::as_str);
            let _ = writeln!(
                out,
                "  {:<28} {:>10.3} ms  {:>5.1}%",
                name.unwrap_or(""),
                float(&r, col::TOTAL_DIRECT_KERNEL_TIME_MS),
                float(&r, col::PERCENTAGE)
            );
        }
    }
    out
}
