//! The collectives summaries: the Markdown page of the multi-rank report
//! and the lines printed on the terminal.

use super::{findings, heading, line, lines_page, section, shown};
use crate::analysis::commands::collectives::{CollectiveReport, Mode};
use crate::names::{col, sheet};
use crate::report::markdown::{Place, name};
use crate::report::{Block, Page, Record};
use crate::table::Value;

/// What the job's findings' shares are of.
const JOB_BASE: &str = "the span of the matched collectives";

/// The page of the multi-rank report: the job's health and findings, per
/// collective type (count, latency, bus bandwidth, skew, slowest ranks)
/// and the stragglers.
pub fn page(report: &CollectiveReport, title: &str) -> Page {
    let mut p = Page {
        blocks: vec![heading(
            2,
            format!("tracelens collectives: {}", name(title, Place::Prose)),
        )],
        trailing_blank: true,
    };
    findings::section_against(&mut p, &report.diagnosis, title, JOB_BASE);
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
                shown(col::COLLECTIVE_TYPE, "Collective"),
                shown(col::COUNT_LC, "Count"),
                shown(col::TOTAL_COMM_LATENCY_MS, "Total latency (ms)"),
                shown(col::COMM_LATENCY_MEAN, "Mean latency (µs)"),
                shown(col::BUS_BW_MEAN, "Bus bandwidth (GB/s)"),
                shown(col::SKEW_IN_START_TIME_MEAN, "Mean start skew (µs)"),
                shown(
                    col::ARRIVED_LAST_MOST_OFTEN,
                    "Last to arrive most often (rank)",
                ),
            ];
            section(&mut p, "Per collective type", s, &cols, 30);
            let mut notes = vec![
                "Means over the collectives of each type; bus bandwidth is empty without message sizes in the traces.".to_string(),
            ];
            if report.inferred > 0 {
                notes.push(format!(
                    "{} of {} collectives had no `Collective name` in the trace; their type was inferred from the kernel name.",
                    report.inferred, report.matched
                ));
            }
            p.blocks.push(Block::Bullets(notes));
        }
        None => p
            .blocks
            .push(line("No collective was matched across ranks.")),
    }
    if let Some(s) = report.sheet(sheet::STRAGGLER_SUMMARY) {
        let cols = [
            shown(col::RANK, "Rank"),
            shown(col::TOTAL_WAIT_TIME_US, "Total wait (µs)"),
            shown(col::MEAN_WAIT_TIME_US, "Mean wait (µs)"),
            shown(col::TIMES_ARRIVED_LAST, "Times last"),
            shown(col::PCT_ARRIVED_LAST, "Share last"),
            shown(col::TOTAL_NCCL_DUR_US, "Collective time (µs)"),
        ];
        let title = "Slowest ranks (least waiting: the others wait for them)";
        section(&mut p, title, s, &cols, 10);
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
    out.extend(findings::terminal_lines(&r.diagnosis));
    lines_page(out)
}

/// The multi-rank report as one JSON document (`docs/json.md`): the
/// trace folder, ranks, collective kernels, matched collectives and how
/// they were matched, then the job's health, findings and the rules that
/// could not tell.
pub fn collectives_record(r: &CollectiveReport, trace_dir: &str) -> Record {
    let fields = vec![
        ("trace_dir".into(), Record::Str(trace_dir.into())),
        ("ranks".into(), Record::UInt(r.ranks as u64)),
        ("collective_kernels".into(), Record::UInt(r.kernels as u64)),
        ("matched_collectives".into(), Record::UInt(r.matched as u64)),
        (
            "matching".into(),
            Record::Str(
                match r.mode {
                    Mode::Regular => "process_group",
                    Mode::Simplified => "stream_order",
                }
                .into(),
            ),
        ),
    ];
    findings::document_record("collectives", fields, &r.diagnosis, trace_dir)
}
