//! The comparison's `health` and `findings` sheets: each input's health
//! checks, and each variant's change findings, for `-o`, `--csv` and
//! `--parquet`.

use super::{Gate, HealthSource};
use crate::analysis::diagnosis::sheets::{findings_by_side, health_by_side};
use crate::analysis::diagnosis::{Check, Status};
use crate::table::Table;

/// How the sheets' commands name the trace: the variant's, to be filled
/// in by whoever runs them.
const COMMAND_TRACE: &str = "TRACE";

/// `health` (one block of rows per input, baseline first: `side` is its
/// tag, `trace` the input) and `findings` (one block per variant: its
/// change findings, ranked, then the rules that could not tell).
pub fn diagnosis_sheets(g: &Gate) -> [Table; 2] {
    // A side whose health is unknown (a report without the sheet) gets one
    // row saying so, rather than vanishing from the sheet.
    let missing: Vec<Vec<Check>> = g
        .health
        .iter()
        .map(|(_, h)| match h.source {
            HealthSource::Missing => vec![Check {
                id: "health",
                status: Status::CannotTell,
                summary: h.note.clone().unwrap_or_default(),
                evidence: Vec::new(),
                events: Vec::new(),
                invalidates: Vec::new(),
            }],
            _ => Vec::new(),
        })
        .collect();
    let health: Vec<(&str, &str, &[Check])> = g
        .health
        .iter()
        .zip(&missing)
        .map(|((side, h), m)| {
            let checks = if m.is_empty() { &h.checks[..] } else { &m[..] };
            (side.name.as_str(), side.input.as_str(), checks)
        })
        .collect();
    let findings: Vec<_> = g
        .comparisons
        .iter()
        .map(|c| {
            (
                c.variant.name.as_str(),
                c.variant.input.as_str(),
                &c.changes.findings[..],
                &c.changes.abstained[..],
            )
        })
        .collect();
    [
        health_by_side(&health),
        findings_by_side(&findings, COMMAND_TRACE),
    ]
}
