//! The collectives summaries: the Markdown page of the multi-rank report
//! and the lines printed on the terminal.

use super::{heading, line, lines_page, section};
use crate::analysis::collectives::{CollectiveReport, Mode};
use crate::names::{col, sheet};
use crate::report::{Block, Page};
use crate::table::Value;

/// The page of the multi-rank report: per collective type (count,
/// latency, bus bandwidth, skew, slowest ranks) and the stragglers.
pub fn page(report: &CollectiveReport, title: &str) -> Page {
    let mut p = Page {
        blocks: vec![heading(2, format!("tracelens collectives: {title}"))],
        trailing_blank: true,
    };
    let mode = match report.mode {
        Mode::Regular => "by process group and order within it",
        Mode::Simplified => {
            "by order on each rank's stream (the traces have no process-group metadata)"
        }
    };
    p.blocks.push(line(format!(
        "{} ranks, {} collective kernels; {} collectives matched across ranks {mode}.",
        report.ranks, report.kernels, report.matched
    )));
    match report.sheet(sheet::NCCL_SUMMARY_BY_TYPE) {
        Some(s) => {
            let cols = [
                col::COLLECTIVE_TYPE,
                col::COUNT_LC,
                col::TOTAL_COMM_LATENCY_MS,
                col::COMM_LATENCY_MEAN,
                col::BUS_BW_MEAN,
                col::SKEW_IN_START_TIME_MEAN,
                col::ARRIVED_LAST_MOST_OFTEN,
            ];
            section(&mut p, "Per collective type", s, &cols, 30, 3);
            let mut notes = vec![
                "Latency and skew in µs; bus bandwidth in GB/s (empty without message sizes in the traces).".to_string(),
            ];
            if report.inferred > 0 {
                notes.push(format!(
                    "{} of {} collectives had no `Collective name` in the trace; their type was inferred from the kernel name.",
                    report.inferred, report.matched
                ));
            }
            p.blocks.push(Block::Paragraph(notes));
        }
        None => p
            .blocks
            .push(line("No collective was matched across ranks.")),
    }
    if let Some(s) = report.sheet(sheet::STRAGGLER_SUMMARY) {
        let cols = [
            col::RANK,
            col::TOTAL_WAIT_TIME_US,
            col::MEAN_WAIT_TIME_US,
            col::TIMES_ARRIVED_LAST,
            col::PCT_ARRIVED_LAST,
            col::TOTAL_NCCL_DUR_US,
        ];
        let title = "Slowest ranks (least waiting: the others wait for them)";
        section(&mut p, title, s, &cols, 10, 1);
    }
    p
}

/// A few lines for the terminal: ranks, kernels, matches and the slowest
/// rank.
pub fn terminal(r: &CollectiveReport) -> Page {
    let mut out = vec![format!(
        "{} ranks, {} collective kernels, {} collectives matched across ranks ({})",
        r.ranks,
        r.kernels,
        r.matched,
        match r.mode {
            Mode::Regular => "by process group",
            Mode::Simplified => "by stream order: no process-group metadata",
        }
    )];
    if let Some(st) = r.sheet(sheet::STRAGGLER_SUMMARY)
        && st.nrows() > 0
    {
        let get = |c: &str| st.row(0).get_named(c).and_then(Value::as_i64);
        if let (Some(rank), Some(last), Some(num)) = (
            get(col::RANK),
            get(col::TIMES_ARRIVED_LAST),
            get(col::NUM_COLLECTIVES),
        ) {
            out.push(format!(
                "slowest rank (least waiting): {rank}, arrived last in {last} of {num} collectives"
            ));
        }
    }
    lines_page(out)
}
