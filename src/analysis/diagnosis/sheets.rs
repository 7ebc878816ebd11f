//! The `health` and `findings` sheets: one row per check, one row per
//! finding (ranked) and per rule that could not tell.

use super::{Diagnosis, Evidence};
use crate::names::diagnosis::col;
use crate::names::sheet;
use crate::table::{Table, Value};
use crate::trace::EventId;

/// `health`: one row per check, in the checks' order.
pub fn health(d: &Diagnosis) -> Table {
    let mut t = Table::new(
        sheet::HEALTH,
        &[
            col::ID,
            col::STATUS,
            col::SUMMARY,
            col::EVIDENCE,
            col::UIDS,
            col::INVALIDATES,
        ],
    );
    for c in &d.checks {
        let invalidates: Vec<&str> = c.invalidates.iter().map(|f| f.as_str()).collect();
        t.push_row(vec![
            Value::from(c.id),
            Value::from(c.status.as_str()),
            Value::from(c.summary.as_str()),
            cell(&evidence_text(&c.evidence)),
            cell(&uids_text(&c.events)),
            cell(&invalidates.join("; ")),
        ]);
    }
    t
}

/// `findings`: the ranked findings, then the rules that abstained
/// (severity `cannot_tell`, the reason as summary). `trace` is how the
/// commands name the trace.
pub fn findings(d: &Diagnosis, trace: &str) -> Table {
    let mut t = Table::new(
        sheet::FINDINGS,
        &[
            col::RANK,
            col::ID,
            col::SEVERITY,
            col::CONFIDENCE,
            col::SUMMARY,
            col::SUBJECT,
            col::SHAPE,
            col::IMPACT_LOW_MS,
            col::IMPACT_MID_MS,
            col::IMPACT_HIGH_MS,
            col::IMPACT_MID_PCT,
            col::EVIDENCE,
            col::UIDS,
            col::ACTIONS,
            col::COMMANDS,
        ],
    );
    let text = |s: Option<&str>| s.map_or(Value::Null, Value::from);
    for (i, f) in d.findings.iter().enumerate() {
        let commands: Vec<String> = f.commands.iter().map(|c| c.line(trace)).collect();
        t.push_row(vec![
            Value::Int(i as i64 + 1),
            Value::from(f.id),
            Value::from(f.severity.as_str()),
            Value::from(f.confidence.as_str()),
            Value::from(f.summary.as_str()),
            text(f.subject.as_deref()),
            text(f.shape.as_deref()),
            Value::Float(f.impact.low_ms),
            Value::Float(f.impact.mid_ms),
            Value::Float(f.impact.high_ms),
            Value::Float(f.impact.share_pct(f.impact.mid_ms)),
            cell(&evidence_text(&f.evidence)),
            cell(&uids_text(&f.events)),
            cell(&f.actions.join("; ")),
            cell(&commands.join("; ")),
        ]);
    }
    for a in &d.abstained {
        let mut row = vec![Value::Null; t.columns.len()];
        row[1] = Value::from(a.id);
        row[2] = Value::from("cannot_tell");
        row[4] = Value::from(format!("cannot tell: {}", a.reason).as_str());
        t.push_row(row);
    }
    t
}

/// A text cell; empty text is an empty cell (as pandas reads an empty
/// CSV field).
fn cell(text: &str) -> Value {
    if text.is_empty() {
        Value::Null
    } else {
        Value::from(text)
    }
}

/// Evidence as `name=value unit; …` (values to at most 4 decimals).
pub fn evidence_text(evidence: &[Evidence]) -> String {
    evidence
        .iter()
        .map(|e| format!("{}={} {}", e.name, number_text(e.value), e.unit))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `x` with at most 4 decimals, trailing zeros dropped.
pub fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// UIDs as a list, `[12, 40]` (empty: no list); never read back as a
/// number.
fn uids_text(events: &[EventId]) -> String {
    if events.is_empty() {
        return String::new();
    }
    let ids: Vec<String> = events.iter().map(|e| e.index().to_string()).collect();
    format!("[{}]", ids.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_exact_where_whole() {
        assert_eq!(number_text(3.0), "3");
        assert_eq!(number_text(2.5), "2.5");
        assert_eq!(number_text(1.0 / 3.0), "0.3333");
        assert_eq!(number_text(-0.00001), "0");
    }
}
