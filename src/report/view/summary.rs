//! The report summaries: the Markdown page for pull requests and the short
//! text printed on the terminal after every run.

use super::{heading, line, lines_page, section};
use crate::analysis::Report;
use crate::names::{col, sheet};
use crate::report::{Block, Page};
use crate::table::{RowRef, Table, Value};

fn find<'a>(r: &'a Report, name: &str) -> Option<&'a Table> {
    crate::table::find(&r.sheets, name)
}

/// The summary page: GPU timeline, top categories, top ops by kernel time,
/// the roofline view and the trace-quality notes.
pub fn page(report: &Report, title: &str) -> Page {
    let mut p = Page::default();
    p.blocks
        .push(heading(2, format!("tracelens report: {title}")));
    match find(report, sheet::GPU_TIMELINE) {
        Some(s) => section(
            &mut p,
            "GPU timeline",
            s,
            &[col::TYPE, col::TIME_MS, col::PERCENT],
            20,
            4,
        ),
        None => p.blocks.push(line("No GPU activity to put on a timeline.")),
    }
    if let Some(s) = find(report, sheet::OPS_SUMMARY_BY_CATEGORY) {
        let cols = [
            col::OP_CATEGORY,
            col::COUNT,
            col::TOTAL_DIRECT_KERNEL_TIME_MS,
            col::PERCENTAGE,
        ];
        section(
            &mut p,
            "Top op categories (GPU kernel time)",
            s,
            &cols,
            10,
            4,
        );
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
    let notes = report.quality.notes();
    p.blocks.push(heading(3, "Trace quality"));
    if notes.is_empty() {
        p.blocks
            .push(line("All GPU events are linked to their host launch."));
    } else {
        p.blocks.push(Block::Bullets(notes));
    }
    p
}

/// The few lines printed on the terminal after a run.
pub fn terminal(report: &Report) -> Page {
    let mut out = Vec::new();
    if let Some(t) = &report.timeline {
        let pct = |v: f64| v / t.total * 100.0;
        out.push(format!(
            "GPU time {:.3} ms: busy {:.3} ms ({:.1}%), idle {:.3} ms ({:.1}%); compute {:.1}%, exposed comm {:.1}%, exposed memcpy {:.1}%",
            t.total / 1e3,
            t.busy / 1e3,
            pct(t.busy),
            t.idle / 1e3,
            pct(t.idle),
            pct(t.computation),
            pct(t.exposed_comm),
            pct(t.exposed_memcpy)
        ));
    }
    if let Some(s) = find(report, sheet::OPS_SUMMARY_BY_CATEGORY) {
        out.push("Top categories by GPU kernel time:".to_string());
        let float = |r: &RowRef<'_>, c: &str| r.get_named(c).map_or(f64::NAN, Value::to_f64);
        for r in s.rows().take(5) {
            let name = r.get_named(col::OP_CATEGORY).and_then(Value::as_str);
            out.push(format!(
                "  {:<28} {:>10.3} ms  {:>5.1}%",
                name.unwrap_or(""),
                float(&r, col::TOTAL_DIRECT_KERNEL_TIME_MS),
                float(&r, col::PERCENTAGE)
            ));
        }
    }
    lines_page(out)
}
