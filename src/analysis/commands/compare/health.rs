//! Each side's health in a comparison: the checks of a trace's diagnosis,
//! or the `health` sheet of a written report, or nothing (a report
//! written before the sheet existed).

use crate::analysis::diagnosis::health::verdict;
use crate::analysis::diagnosis::sheets::read_health;
use crate::analysis::diagnosis::{Check, Status};
use crate::names::sheet;
use crate::table::Table;

/// Where a side's health comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HealthSource {
    /// The checks were run on the trace.
    Trace,
    /// Read from the report's `health` sheet.
    Sheet,
    /// The report has no `health` sheet: its health cannot be told.
    #[default]
    Missing,
}

impl HealthSource {
    /// The source as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthSource::Trace => "trace",
            HealthSource::Sheet => "health_sheet",
            HealthSource::Missing => "none",
        }
    }
}

/// One side's health checks and where they come from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SideHealth {
    /// Where the checks come from.
    pub source: HealthSource,
    /// The checks (none when [`HealthSource::Missing`]).
    pub checks: Vec<Check>,
    /// A note for people when the health is incomplete or missing.
    pub note: Option<String>,
}

impl SideHealth {
    /// The checks of a trace's diagnosis.
    pub fn of_trace(checks: Vec<Check>) -> SideHealth {
        SideHealth {
            source: HealthSource::Trace,
            checks,
            note: None,
        }
    }

    /// The health of a written report: its `health` sheet read back, or
    /// missing (with a note) when it has none.
    pub fn of_report(sheets: &[Table]) -> SideHealth {
        let read = crate::table::find(sheets, sheet::HEALTH).and_then(read_health);
        match read {
            Some((checks, unknown)) => SideHealth {
                source: HealthSource::Sheet,
                checks,
                note: (!unknown.is_empty()).then(|| {
                    format!(
                        "checks this version does not know left out: {}",
                        unknown.join(", ")
                    )
                }),
            },
            None => SideHealth {
                source: HealthSource::Missing,
                checks: Vec::new(),
                note: Some(
                    "the report has no health sheet (written before the health checks existed, or by the reference): its health cannot be told"
                        .into(),
                ),
            },
        }
    }

    /// The verdict: the worst status among the checks that could tell
    /// ([`verdict`]); `cannot_tell` when the health is missing.
    pub fn verdict(&self) -> Status {
        match self.source {
            HealthSource::Missing => Status::CannotTell,
            _ => verdict(&self.checks),
        }
    }

    /// The check `id`, when this side has it.
    pub fn check(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::diagnosis::col;
    use crate::table::Value;

    #[test]
    fn a_report_without_the_sheet_cannot_tell() {
        let h = SideHealth::of_report(&[]);
        assert_eq!(h.source, HealthSource::Missing);
        assert_eq!(h.verdict(), Status::CannotTell);
        assert!(h.note.unwrap().contains("no health sheet"));
    }

    #[test]
    fn a_report_sheet_gives_its_verdict() {
        let mut t = Table::new(sheet::HEALTH, &[col::ID, col::STATUS]);
        t.push_row(vec![Value::from("health.no_gpu"), Value::from("pass")]);
        t.push_row(vec![Value::from("health.no_shapes"), Value::from("warn")]);
        let h = SideHealth::of_report(&[t]);
        assert_eq!(h.source, HealthSource::Sheet);
        assert_eq!(h.verdict(), Status::Warn);
        assert_eq!(h.check("health.no_shapes").unwrap().status, Status::Warn);
        assert_eq!(h.note, None);
    }
}
