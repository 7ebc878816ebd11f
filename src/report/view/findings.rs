//! The diagnosis as people and scripts see it: the `Findings` section at
//! the top of the Markdown page (the health verdict, then the ranked
//! findings with their evidence and commands), the terminal summary's top
//! three, and the `health` and `findings` parts of the JSON document.

use super::{heading, line};
use crate::analysis::diagnosis::sheets::{evidence_text, number_text};
use crate::analysis::diagnosis::{Check, Diagnosis, Evidence, Finding, Status};
use crate::report::markdown::{Place, code_span, text as md_text};
use crate::report::{Align, Block, Grid, Page, Record};

/// How commands name a trace called `title` on the page: by its file
/// name, or `TRACE` for a trace read from stdin (there is no file to
/// name).
fn command_trace(title: &str) -> &str {
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
    let trace = command_trace(trace);
    p.blocks.push(heading(3, "Findings"));
    p.blocks.push(line(format!(
        "Trace health: **{}**",
        verdict_words(d.verdict())
    )));
    let flagged: Vec<String> = d
        .checks
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
    if d.findings.is_empty() {
        p.blocks.push(line(format!(
            "No finding: nothing worth 1% of {base} was found."
        )));
    } else {
        p.blocks.push(Block::Grid(findings_grid(d)));
        p.blocks.push(line("Next steps:"));
        p.blocks.push(Block::Bullets(
            d.findings
                .iter()
                .take(PAGE_FINDINGS)
                .enumerate()
                .filter_map(|(i, f)| next_steps(i + 1, f, trace))
                .collect(),
        ));
    }
    if !d.abstained.is_empty() {
        let items: Vec<String> = d
            .abstained
            .iter()
            .map(|a| format!("{} ({})", code_span(a.id, Place::Prose), md_text(&a.reason)))
            .collect();
        p.blocks
            .push(line(format!("Cannot tell: {}.", items.join(", "))));
    }
}

/// The ranked findings as a table.
fn findings_grid(d: &Diagnosis) -> Grid {
    let rows = d
        .findings
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
    let mut out = vec![format!("Trace health: {}", d.verdict().as_str())];
    for c in d.checks.iter().filter(|c| c.status == Status::Fail) {
        out.push(format!("  {} fail: {}", c.id, c.summary));
    }
    let top: Vec<&Finding> = d.findings.iter().take(TERMINAL_FINDINGS).collect();
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
                    ("name".into(), Record::Str(e.name.into())),
                    ("value".into(), Record::Float(e.value)),
                    ("unit".into(), Record::Str(e.unit.into())),
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

/// A finding as a JSON object.
fn finding_record(rank: usize, f: &Finding, trace: &str) -> Record {
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
    Record::Map(vec![
        ("verdict".into(), Record::Str(d.verdict().as_str().into())),
        (
            "checks".into(),
            Record::List(d.checks.iter().map(check_record).collect()),
        ),
    ])
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
    Record::List(
        d.abstained
            .iter()
            .map(|a| {
                Record::Map(vec![
                    ("id".into(), Record::Str(a.id.into())),
                    ("reason".into(), Record::Str(a.reason.clone())),
                ])
            })
            .collect(),
    )
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
    document_record("report", fields, report.diagnosis.as_ref(), trace)
}

/// A diagnosis as one JSON document of `kind` (`report`, `collectives`):
/// the schema version, the tool and its version, the kind, then `fields`,
/// then `health`, `findings` and `cannot_tell` (a null health and empty
/// lists without a diagnosis). `trace` is how the findings' commands
/// name the trace.
pub fn document_record(
    kind: &str,
    fields: Vec<(String, Record)>,
    d: Option<&Diagnosis>,
    trace: &str,
) -> Record {
    let mut all: Vec<(String, Record)> = vec![
        ("schema_version".into(), Record::UInt(REPORT_SCHEMA_VERSION)),
        ("tool".into(), Record::Str("tracelens".into())),
        (
            "tool_version".into(),
            Record::Str(env!("CARGO_PKG_VERSION").into()),
        ),
        ("kind".into(), Record::Str(kind.into())),
    ];
    all.extend(fields);
    match d {
        Some(d) => all.extend([
            ("health".into(), health_record(d)),
            ("findings".into(), findings_record(d, trace)),
            ("cannot_tell".into(), abstained_record(d)),
        ]),
        None => all.extend([
            ("health".into(), Record::Null),
            ("findings".into(), Record::List(Vec::new())),
            ("cannot_tell".into(), Record::List(Vec::new())),
        ]),
    }
    Record::Map(all)
}
