//! The diagnosis as people and scripts see it: the `Findings` section at
//! the top of the Markdown page (the health verdict, then the ranked
//! findings with their evidence and commands), the terminal summary's top
//! three, and the `health` and `findings` parts of the JSON document.

use super::{heading, line};
use crate::analysis::diagnosis::health::verdict;
use crate::analysis::diagnosis::sheets::{evidence_text, number_text};
use crate::analysis::diagnosis::{Abstention, Check, Diagnosis, Evidence, Finding, Status};
use crate::report::markdown::{Place, code_span, text as md_text};
use crate::report::{Align, Block, Grid, Page, Record};

/// How commands name a trace called `title` on the page: by its file
/// name, or `TRACE` for a trace read from stdin (there is no file to
/// name).
pub fn command_trace(title: &str) -> &str {
    if title == "stdin" { "TRACE" } else { title }
}

/// Findings the Markdown table lists.
pub const PAGE_FINDINGS: usize = 10;

/// Findings the terminal summary lists.
pub const TERMINAL_FINDINGS: usize = 3;

/// The verdict in words.
fn verdict_words(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass: no check found a problem",
        Status::Warn => "warn: the figures stand, with the caveats below",
        Status::CannotTell => "cannot tell: the trace lacks what some checks need",
        Status::Fail => "fail: some figures are wrong or meaningless (below)",
    }
}

/// The mid impact as `1.23 ms (4.5%)`, or `info`.
fn impact_text(f: &Finding) -> String {
    if f.impact.high_ms <= 0.0 {
        return "info".into();
    }
    format!(
        "{} ms ({:.1}%)",
        number_text(round3(f.impact.mid_ms)),
        f.impact.share_pct(f.impact.mid_ms)
    )
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// The `Findings` section: the health verdict and the checks that did not
/// pass, the ranked findings, each with its commands, and the rules that
/// could not tell. `trace` names the trace in commands.
pub fn section(p: &mut Page, d: &Diagnosis, trace: &str) {
    section_against(p, d, trace, "the GPU span");
}

/// [`section`] for findings whose shares are of `base` (e.g. `the span
/// of the matched collectives`).
pub fn section_against(p: &mut Page, d: &Diagnosis, trace: &str, base: &str) {
    p.blocks.push(heading(3, "Findings"));
    health_blocks(p, "Trace health", &d.checks);
    findings_blocks(
        p,
        &d.findings,
        &d.abstained,
        command_trace(trace),
        &format!("No finding: nothing worth 1% of {base} was found."),
    );
}

/// `label: **verdict**`, then a bullet per check that did not pass.
pub fn health_blocks(p: &mut Page, label: &str, checks: &[Check]) {
    let v = verdict(checks);
    let unread = checks
        .iter()
        .filter(|c| c.status == Status::CannotTell)
        .count();
    // A verdict read from a few checks says so.
    let of = if unread > 0 && v != Status::CannotTell {
        format!(" ({unread} of {} checks could not tell)", checks.len())
    } else {
        String::new()
    };
    p.blocks
        .push(line(format!("{label}: **{}**{of}", verdict_words(v))));
    let flagged: Vec<String> = checks
        .iter()
        .filter(|c| c.status != Status::Pass)
        .map(|c| {
            format!(
                "{} {}: {}",
                code_span(c.id, Place::Prose),
                c.status.as_str(),
                md_text(&c.summary)
            )
        })
        .collect();
    if !flagged.is_empty() {
        p.blocks.push(Block::Bullets(flagged));
    }
}

/// The ranked `findings` as a table with their next steps (`none`, a
/// sentence, when there are none), then the rules that could not tell.
/// `trace` names the trace in commands that have one.
pub fn findings_blocks(
    p: &mut Page,
    findings: &[Finding],
    abstained: &[Abstention],
    trace: &str,
    none: &str,
) {
    if findings.is_empty() {
        p.blocks.push(line(none));
    } else {
        p.blocks.push(Block::Grid(findings_grid(findings)));
        p.blocks.push(line("Next steps:"));
        p.blocks.push(Block::Bullets(
            findings
                .iter()
                .take(PAGE_FINDINGS)
                .enumerate()
                .filter_map(|(i, f)| next_steps(i + 1, f, trace))
                .collect(),
        ));
    }
    if !abstained.is_empty() {
        p.blocks
            .push(line(format!("Cannot tell: {}.", abstained_text(abstained))));
    }
}

/// The rules that could not tell, those of one reason together (in the
/// order the reasons first appear): `` `a`, `b` (why); `c` (why) ``.
fn abstained_text(abstained: &[Abstention]) -> String {
    let mut by_reason: indexmap::IndexMap<&str, Vec<String>> = indexmap::IndexMap::new();
    for a in abstained {
        by_reason
            .entry(a.reason.as_str())
            .or_default()
            .push(code_span(a.id, Place::Prose));
    }
    let groups: Vec<String> = by_reason
        .iter()
        .map(|(reason, ids)| format!("{} ({})", ids.join(", "), md_text(reason)))
        .collect();
    groups.join("; ")
}

/// The ranked findings as a table.
fn findings_grid(findings: &[Finding]) -> Grid {
    let rows = findings
        .iter()
        .take(PAGE_FINDINGS)
        .enumerate()
        .map(|(i, f)| {
            vec![
                (i + 1).to_string(),
                code_span(f.id, Place::Cell),
                f.severity.as_str().into(),
                impact_text(f),
                f.confidence.as_str().into(),
                md_text(&f.summary),
            ]
        })
        .collect();
    Grid {
        header: [
            "#",
            "Finding",
            "Severity",
            "Gain (mid)",
            "Confidence",
            "Evidence",
        ]
        .map(String::from)
        .to_vec(),
        align: vec![
            Align::Right,
            Align::Left,
            Align::Left,
            Align::Right,
            Align::Left,
            Align::Left,
        ],
        rows,
    }
}

/// A finding's first action and commands, as one bullet.
fn next_steps(rank: usize, f: &Finding, trace: &str) -> Option<String> {
    let action = f.actions.first()?;
    let mut s = format!(
        "{} (#{rank}): {}",
        code_span(f.id, Place::Prose),
        md_text(action)
    );
    if !f.commands.is_empty() {
        let cmds: Vec<String> = f
            .commands
            .iter()
            .map(|c| code_span(&c.line(trace), Place::Prose))
            .collect();
        s.push_str(&format!(" — {}", cmds.join(", ")));
    }
    Some(s)
}

/// The terminal summary's lines: the verdict and the top findings.
pub fn terminal_lines(d: &Diagnosis) -> Vec<String> {
    let mut out = terminal_health("Trace health", &d.checks);
    out.extend(terminal_findings(&d.findings));
    out
}

/// `label: verdict` and a line per failed check, for the terminal.
pub fn terminal_health(label: &str, checks: &[Check]) -> Vec<String> {
    let mut out = vec![format!("{label}: {}", verdict(checks).as_str())];
    for c in checks.iter().filter(|c| c.status == Status::Fail) {
        out.push(format!("  {} fail: {}", c.id, c.summary));
    }
    out
}

/// The top [`TERMINAL_FINDINGS`] findings, for the terminal.
pub fn terminal_findings(findings: &[Finding]) -> Vec<String> {
    let mut out = Vec::new();
    let top: Vec<&Finding> = findings.iter().take(TERMINAL_FINDINGS).collect();
    if !top.is_empty() {
        out.push("Top findings (gain if fixed, mid estimate):".into());
    }
    for (i, f) in top.iter().enumerate() {
        out.push(format!(
            "  {}. {} [{}] {}: {}",
            i + 1,
            f.id,
            f.severity.as_str(),
            impact_text(f),
            f.summary
        ));
    }
    out
}

fn evidence_record(e: &[Evidence]) -> Record {
    Record::List(
        e.iter()
            .map(|e| {
                Record::Map(vec![
                    ("name".into(), Record::Str(e.name.to_string())),
                    ("value".into(), Record::Float(e.value)),
                    ("unit".into(), Record::Str(e.unit.to_string())),
                ])
            })
            .collect(),
    )
}

fn strs<'a>(items: impl IntoIterator<Item = &'a str>) -> Record {
    Record::List(items.into_iter().map(|s| Record::Str(s.into())).collect())
}

fn uids(events: &[crate::trace::EventId]) -> Record {
    Record::List(
        events
            .iter()
            .map(|e| Record::UInt(e.index() as u64))
            .collect(),
    )
}

fn opt(s: &Option<String>) -> Record {
    s.as_ref().map_or(Record::Null, |s| Record::Str(s.clone()))
}

/// A check as a JSON object.
fn check_record(c: &Check) -> Record {
    Record::Map(vec![
        ("id".into(), Record::Str(c.id.into())),
        ("status".into(), Record::Str(c.status.as_str().into())),
        ("summary".into(), Record::Str(c.summary.clone())),
        ("evidence".into(), evidence_record(&c.evidence)),
        ("uids".into(), uids(&c.events)),
        (
            "invalidates".into(),
            strs(c.invalidates.iter().map(|f| f.as_str())),
        ),
    ])
}

/// A finding as a JSON object; `trace` names the trace in its commands.
pub fn finding_record(rank: usize, f: &Finding, trace: &str) -> Record {
    let i = &f.impact;
    Record::Map(vec![
        ("rank".into(), Record::UInt(rank as u64)),
        ("id".into(), Record::Str(f.id.into())),
        ("severity".into(), Record::Str(f.severity.as_str().into())),
        (
            "confidence".into(),
            Record::Str(f.confidence.as_str().into()),
        ),
        ("summary".into(), Record::Str(f.summary.clone())),
        ("subject".into(), opt(&f.subject)),
        ("shape".into(), opt(&f.shape)),
        (
            "impact".into(),
            Record::Map(vec![
                ("low_ms".into(), Record::Float(i.low_ms)),
                ("mid_ms".into(), Record::Float(i.mid_ms)),
                ("high_ms".into(), Record::Float(i.high_ms)),
                ("mid_pct".into(), Record::Float(i.share_pct(i.mid_ms))),
                ("base_ms".into(), Record::Float(i.base_ms)),
            ]),
        ),
        ("evidence".into(), evidence_record(&f.evidence)),
        (
            "evidence_text".into(),
            Record::Str(evidence_text(&f.evidence)),
        ),
        ("uids".into(), uids(&f.events)),
        ("actions".into(), strs(f.actions.iter().copied())),
        (
            "commands".into(),
            Record::List(
                f.commands
                    .iter()
                    .map(|c| Record::Str(c.line(trace)))
                    .collect(),
            ),
        ),
    ])
}

/// The `health` object of the JSON document: the verdict and every check.
pub fn health_record(d: &Diagnosis) -> Record {
    Record::Map(checks_fields(&d.checks))
}

/// The fields of a `health` object: `verdict` and `checks`.
pub fn checks_fields(checks: &[Check]) -> Vec<(String, Record)> {
    vec![
        (
            "verdict".into(),
            Record::Str(verdict(checks).as_str().into()),
        ),
        (
            "checks".into(),
            Record::List(checks.iter().map(check_record).collect()),
        ),
    ]
}

/// The `findings` list of the JSON document, ranked.
pub fn findings_record(d: &Diagnosis, trace: &str) -> Record {
    let trace = command_trace(trace);
    Record::List(
        d.findings
            .iter()
            .enumerate()
            .map(|(i, f)| finding_record(i + 1, f, trace))
            .collect(),
    )
}

/// The `cannot_tell` list of the JSON document: the rules that abstained.
pub fn abstained_record(d: &Diagnosis) -> Record {
    abstentions_record(&d.abstained)
}

/// A rule that abstained, as a JSON object `{id, reason}`.
pub fn abstention_record(a: &Abstention) -> Record {
    Record::Map(vec![
        ("id".into(), Record::Str(a.id.into())),
        ("reason".into(), Record::Str(a.reason.clone())),
    ])
}

fn abstentions_record(abstained: &[Abstention]) -> Record {
    Record::List(abstained.iter().map(abstention_record).collect())
}

/// The version of the report's JSON document (`docs/json.md`): it changes
/// only when a field is removed, renamed or changes meaning.
pub const REPORT_SCHEMA_VERSION: u64 = 1;

/// The timeline object of the JSON document, ms.
fn timeline_record(t: &crate::analysis::common::timeline::Timeline) -> Record {
    let ms = |us: f64| Record::Float(us / 1e3);
    Record::Map(vec![
        ("total_ms".into(), ms(t.total)),
        ("busy_ms".into(), ms(t.busy)),
        ("idle_ms".into(), ms(t.idle)),
        ("computation_ms".into(), ms(t.computation)),
        ("exposed_comm_ms".into(), ms(t.exposed_comm)),
        ("exposed_memcpy_ms".into(), ms(t.exposed_memcpy)),
    ])
}

/// The report as one JSON document: the trace, the GPU spec used, the
/// timeline, the health verdict and checks, the ranked findings and the
/// rules that could not tell (`docs/json.md`).
pub fn report_record(report: &crate::analysis::Report, trace: &str) -> Record {
    let gpu = report.quality.gpu.as_ref();
    let fields: Vec<(String, Record)> = vec![
        ("trace".into(), Record::Str(trace.into())),
        (
            "gpu_name".into(),
            gpu.and_then(|g| g.device_name.clone())
                .map_or(Record::Null, Record::Str),
        ),
        (
            "gpu_spec".into(),
            gpu.and_then(|g| g.spec.clone())
                .map_or(Record::Null, Record::Str),
        ),
        (
            "timeline".into(),
            report
                .timeline
                .as_ref()
                .map_or(Record::Null, timeline_record),
        ),
    ];
    document_record("report", fields, &report.diagnosis, trace)
}

/// The first fields of every JSON document: the schema version, the tool
/// and its version, and the document's `kind`.
pub fn document_header(kind: &str) -> Vec<(String, Record)> {
    vec![
        ("schema_version".into(), Record::UInt(REPORT_SCHEMA_VERSION)),
        ("tool".into(), Record::Str("tracelens".into())),
        (
            "tool_version".into(),
            Record::Str(env!("CARGO_PKG_VERSION").into()),
        ),
        ("kind".into(), Record::Str(kind.into())),
    ]
}

/// A diagnosis as one JSON document of `kind` (`report`, `collectives`):
/// the schema version, the tool and its version, the kind, then `fields`,
/// then `health`, `findings` and `cannot_tell`. `trace` is how the
/// findings' commands name the trace.
pub fn document_record(
    kind: &str,
    fields: Vec<(String, Record)>,
    d: &Diagnosis,
    trace: &str,
) -> Record {
    let mut all = document_header(kind);
    all.extend(fields);
    all.extend([
        ("health".into(), health_record(d)),
        ("findings".into(), findings_record(d, trace)),
        ("cannot_tell".into(), abstained_record(d)),
    ]);
    Record::Map(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_of_one_reason_are_listed_together() {
        let a = |id, reason: &str| Abstention {
            id,
            reason: reason.into(),
        };
        let text = abstained_text(&[
            a("comm.exposed", "no timeline"),
            a("idle.sync", "no tree"),
            a("op.variance", "no tree"),
            a("op.dominant", "a|b"),
        ]);
        assert_eq!(
            text,
            "`comm.exposed` (no timeline); `idle.sync`, `op.variance` (no tree); `op.dominant` (a\\|b)"
        );
    }
}
