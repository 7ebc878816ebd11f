//! The `health` and `findings` sheets: one row per check, one row per
//! finding (ranked) and per rule that could not tell.

use super::health::CHECK_IDS;
use super::{Abstention, Check, Diagnosis, Evidence, Finding, Status};
use crate::names::diagnosis::col;
use crate::names::sheet;
use crate::table::{Table, Value};
use crate::trace::EventId;

/// `health`: one row per check, in the checks' order.
pub fn health(d: &Diagnosis) -> Table {
    health_of(&d.checks)
}

/// `health` with a `side` and a `trace` column first: one block of rows
/// per side (e.g. `baseline`, then `variant`), each side's checks in
/// their order. `sides`: (side, trace, checks).
pub fn health_by_side(sides: &[(&str, &str, &[Check])]) -> Table {
    by_side(
        health_of(&[]),
        sides
            .iter()
            .map(|&(side, trace, checks)| (side, trace, health_of(checks))),
    )
}

/// `findings` with a `side` and a `trace` column first: one block of rows
/// per side, each ranked on its own, then its rules that could not tell.
/// `sides`: (side, trace, findings, abstentions); `command_trace` names
/// the trace in commands.
pub fn findings_by_side(
    sides: &[(&str, &str, &[Finding], &[Abstention])],
    command_trace: &str,
) -> Table {
    by_side(
        findings_of(&[], &[], command_trace),
        sides.iter().map(|&(side, trace, found, abstained)| {
            (side, trace, findings_of(found, abstained, command_trace))
        }),
    )
}

/// One table of `parts` (side, trace, a sheet shaped like `empty`), each
/// row led by its side and trace.
fn by_side<'a>(empty: Table, parts: impl Iterator<Item = (&'a str, &'a str, Table)>) -> Table {
    let mut names = vec![col::SIDE, col::TRACE];
    names.extend(empty.columns.iter().map(|c| c.name.as_str()));
    let mut t = Table::new(&empty.name, &names);
    for (side, trace, part) in parts {
        for r in part.rows() {
            let mut row = vec![Value::from(side), Value::from(trace)];
            row.extend(r.to_vec());
            t.push_row(row);
        }
    }
    t
}

fn health_of(checks: &[Check]) -> Table {
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
    for c in checks {
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
    findings_of(&d.findings, &d.abstained, trace)
}

fn findings_of(found: &[Finding], abstained: &[Abstention], trace: &str) -> Table {
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
    for (i, f) in found.iter().enumerate() {
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
    for a in abstained {
        let mut row = vec![Value::Null; t.columns.len()];
        row[1] = Value::from(a.id);
        row[2] = Value::from("cannot_tell");
        row[4] = Value::from(format!("cannot tell: {}", a.reason).as_str());
        t.push_row(row);
    }
    t
}

/// The checks of a `health` sheet written by [`health`] (read back from a
/// report's files): id, status, summary and evidence; the events and the
/// figures invalidated are not read back. Rows whose id is not a check
/// this version makes, or whose status is not one, are left out and
/// their ids returned. `None` when the sheet lacks the id or status
/// column.
pub fn read_health(t: &Table) -> Option<(Vec<Check>, Vec<String>)> {
    let (id, status) = (t.column_index(col::ID)?, t.column_index(col::STATUS)?);
    let summary = t.column_index(col::SUMMARY);
    let evidence = t.column_index(col::EVIDENCE);
    let text = |r: &crate::table::RowRef<'_>, c: Option<usize>| {
        c.map_or(String::new(), |c| match r.get(c) {
            Value::Null => String::new(),
            v => v.as_str().map_or_else(|| v.csv_text(), str::to_string),
        })
    };
    let (mut checks, mut unknown) = (Vec::new(), Vec::new());
    for r in t.rows() {
        let name = text(&r, Some(id));
        let known = CHECK_IDS.iter().find(|&&k| k == name);
        let parsed = Status::parse(&text(&r, Some(status)));
        match (known, parsed) {
            (Some(&id), Some(status)) => checks.push(Check {
                id,
                status,
                summary: text(&r, summary),
                evidence: parse_evidence(&text(&r, evidence)),
                events: Vec::new(),
                invalidates: Vec::new(),
            }),
            _ => unknown.push(name),
        }
    }
    Some((checks, unknown))
}

/// Evidence written by [`evidence_text`] (`name=value unit; …`), read
/// back; items that do not parse are left out.
pub fn parse_evidence(text: &str) -> Vec<Evidence> {
    text.split("; ")
        .filter_map(|item| {
            let (name, rest) = item.split_once('=')?;
            let (value, unit) = rest.split_once(' ').unwrap_or((rest, ""));
            let value: f64 = value.parse().ok()?;
            Some(Evidence::read(name.to_string(), value, unit.to_string()))
        })
        .collect()
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
    fn health_reads_back() {
        let mut t = Table::new(
            sheet::HEALTH,
            &[col::ID, col::STATUS, col::SUMMARY, col::EVIDENCE],
        );
        t.push_row(vec![
            Value::from("health.no_gpu"),
            Value::from("pass"),
            Value::from("534 GPU events"),
            Value::from("gpu_events=534 count"),
        ]);
        t.push_row(vec![
            Value::from("health.truncated"),
            Value::from("fail"),
            Value::Null,
            Value::from("cut_steps=1 count; share=2.5 %; bad"),
        ]);
        t.push_row(vec![
            Value::from("health.from_the_future"),
            Value::from("pass"),
            Value::Null,
            Value::Null,
        ]);
        let (checks, unknown) = read_health(&t).unwrap();
        assert_eq!(unknown, ["health.from_the_future"]);
        assert_eq!(checks.len(), 2);
        assert_eq!(checks[0].id, "health.no_gpu");
        assert_eq!(checks[0].summary, "534 GPU events");
        assert_eq!(
            checks[0].evidence,
            [Evidence::new("gpu_events", 534.0, "count")]
        );
        assert_eq!(checks[1].status, Status::Fail);
        assert_eq!(
            checks[1].evidence,
            [
                Evidence::new("cut_steps", 1.0, "count"),
                Evidence::new("share", 2.5, "%")
            ]
        );
        let no_status = Table::new(sheet::HEALTH, &[col::ID]);
        assert!(read_health(&no_status).is_none());
    }

    #[test]
    fn numbers_are_short_and_exact_where_whole() {
        assert_eq!(number_text(3.0), "3");
        assert_eq!(number_text(2.5), "2.5");
        assert_eq!(number_text(1.0 / 3.0), "0.3333");
        assert_eq!(number_text(-0.00001), "0");
    }
}
