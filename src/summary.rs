//! Human summaries of a report: the Markdown page for pull requests and the
//! short text printed on the terminal after every run.

use std::fmt::Write;

use crate::analysis::Report;
use crate::report::markdown::table;
use crate::report::{Cell, Sheet};

fn sheet<'a>(r: &'a Report, name: &str) -> Option<&'a Sheet> {
    r.sheets.iter().find(|s| s.name == name)
}

/// The Markdown summary: GPU timeline, top categories, top ops by kernel
/// time and the trace-quality note.
pub fn markdown(report: &Report, title: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## tracelens report: {title}\n");
    match sheet(report, "gpu_timeline") {
        Some(s) => {
            let _ = writeln!(
                md,
                "### GPU timeline\n\n{}",
                table(s, &["type", "time ms", "percent"], 20, 4)
            );
        }
        None => md.push_str("No GPU activity to put on a timeline.\n\n"),
    }
    if let Some(s) = sheet(report, "ops_summary_by_category") {
        let _ = writeln!(
            md,
            "### Top op categories (GPU kernel time)\n\n{}",
            table(
                s,
                &[
                    "op category",
                    "Count",
                    "total_direct_kernel_time_ms",
                    "Percentage (%)"
                ],
                10,
                4
            )
        );
    }
    if let Some(s) = sheet(report, "ops_summary") {
        let _ = writeln!(
            md,
            "### Top ops by kernel time\n\n{}",
            table(
                s,
                &[
                    "name",
                    "Count",
                    "total_direct_kernel_time_ms",
                    "Percentage (%)",
                    "Cumulative Percentage (%)"
                ],
                15,
                4
            )
        );
    }
    if let Some(s) = sheet(report, "unified_perf_summary") {
        let mut cols = vec![
            "name",
            "op category",
            "operation_count",
            "Kernel Time (µs)_sum",
            "TFLOPS/s_mean",
            "TB/s_mean",
            "FLOPS/Byte",
        ];
        if s.column("Pct Roofline_mean").is_some() {
            cols.extend(["Roofline Bound", "Pct Roofline_mean"]);
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

fn float(c: &Cell) -> f64 {
    match c {
        Cell::Float(f) => *f,
        Cell::Int(i) => *i as f64,
        _ => f64::NAN,
    }
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
    if let Some(s) = sheet(report, "ops_summary_by_category") {
        let _ = writeln!(out, "Top categories by GPU kernel time:");
        for row in s.rows.iter().take(5) {
            let name = match &row[0] {
                Cell::Text(t) => t.as_str(),
                _ => "",
            };
            let _ = writeln!(
                out,
                "  {:<28} {:>10.3} ms  {:>5.1}%",
                name,
                float(&row[2]),
                float(&row[3])
            );
        }
    }
    out
}
