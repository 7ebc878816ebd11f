//! The compare verdict as a page (Markdown for a pull-request comment, kept
//! under [`MARKDOWN_LIMIT`] bytes) and as a record (the JSON documented in
//! `docs/compare-json.md`).

use super::findings;
use super::{heading, line};
use crate::analysis::commands::compare::{
    Change, Gate, GateOptions, HealthSource, ItemComparison, Side, SideHealth, TOP_N, TimelineRow,
    Unmatched, VariantGate, Verdict, fmt_pct,
};
use crate::analysis::diagnosis::Status;
use crate::names::row;
use crate::report::markdown::{Place, code, name, page_text, text as md_text};
use crate::report::{Align, Block, Grid, Page, Record};

/// Upper bound on the size of the Markdown of [`page`], in bytes (GitHub
/// refuses comments over 65536 characters).
pub const MARKDOWN_LIMIT: usize = 60_000;

/// Longest text shown in a table cell, in characters.
const MD_TEXT_CHARS: usize = 100;

/// The note that ends a page cut at a line boundary.
const CUT_NOTE: &str = "\n_… cut to fit a pull-request comment; see the JSON output._\n";

/// The verdict page for a pull-request comment: verdict line, then per
/// variant the reasons, the GPU timeline side by side and the top
/// regressions and improvements by op and by op+shape. Tables are shortened
/// (with a note) until the Markdown fits in [`MARKDOWN_LIMIT`] bytes; if
/// even the bare verdicts do not fit, the page is cut at a line boundary.
pub fn page(g: &Gate) -> Page {
    let (mut page, rows, fits) = super::fit_rows(TOP_N, MARKDOWN_LIMIT, |rows| full_page(g, rows));
    if !fits {
        return cut_page(&page_text(&page));
    }
    if rows < TOP_N {
        page.blocks.push(line(format!(
            "_Tables cut to {rows} rows to fit a pull-request comment._"
        )));
    }
    page
}

/// The first lines of `text` that fit in [`MARKDOWN_LIMIT`] with
/// [`CUT_NOTE`], then the note.
fn cut_page(text: &str) -> Page {
    let mut end = MARKDOWN_LIMIT - CUT_NOTE.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').map_or(end, |i| i + 1);
    let kept = &text[..end];
    let kept = kept.strip_suffix('\n').unwrap_or(kept);
    Page {
        blocks: vec![
            Block::Paragraph(kept.split('\n').map(str::to_string).collect()),
            line(CUT_NOTE.trim_matches('\n')),
        ],
        trailing_blank: false,
    }
}

fn verdict_badge(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅ pass",
        Verdict::Regression => "❌ regression",
        Verdict::Inconclusive => "⚠️ inconclusive",
        Verdict::NotGated => "ℹ️ compared (no gate)",
    }
}

/// A report's tag for a table header, shown literally.
fn header_tag(tag: &str) -> String {
    name(tag, Place::Cell)
}

fn opt_ms(x: Option<f64>) -> String {
    x.map_or_else(String::new, |x| format!("{x:.3}"))
}

/// The whole page with tables of at most `rows` rows.
fn full_page(g: &Gate, rows: usize) -> Page {
    let names: Vec<&str> = g
        .comparisons
        .iter()
        .map(|c| c.variant.name.as_str())
        .collect();
    let gate_line = match g.gate.fail_above_pct {
        Some(p) => format!(
            "Gate: fails when GPU busy time, an op or an op shape is more than {p}% slower{}; inconclusive when more than {}% of either side's op kernel time is in ops the other lacks.",
            if g.gate.min_ms > 0.0 {
                format!(" and at least {} ms slower", g.gate.min_ms)
            } else {
                String::new()
            },
            g.gate.max_unmatched_pct
        ),
        None => "No gate (`--fail-above` not given): numbers only.".to_string(),
    };
    let mut blocks = vec![
        heading(
            2,
            format!("tracelens compare: {}", verdict_badge(g.verdict)),
        ),
        Block::Paragraph(vec![
            format!(
                "**Verdict: {}** — baseline **{}** vs **{}**.",
                g.verdict.as_str(),
                name(&g.baseline.name, Place::Prose),
                names
                    .iter()
                    .map(|n| name(n, Place::Prose))
                    .collect::<Vec<_>>()
                    .join("**, **")
            ),
            gate_line,
        ]),
    ];
    blocks.extend(findings_blocks(g));
    for c in &g.comparisons {
        variant_blocks(&mut blocks, c, &g.baseline.name, rows);
    }
    Page {
        blocks,
        trailing_blank: false,
    }
}

/// How a side's health is introduced: `Health of **tag**`.
fn health_label(side: &Side, place: Place) -> String {
    format!("Health of {}", name(&side.name, place))
}

/// The `Findings` section: each side's health, then each variant's change
/// findings and the rules that could not tell.
fn findings_blocks(g: &Gate) -> Vec<Block> {
    let mut p = Page {
        blocks: vec![heading(3, "Findings")],
        trailing_blank: false,
    };
    for (side, h) in &g.health {
        let label = health_label(side, Place::Prose);
        if h.source == HealthSource::Missing {
            let why = h
                .note
                .as_deref()
                .map_or(String::new(), |n| format!(": {}", md_text(n)));
            p.blocks
                .push(line(format!("{label}: **cannot tell**{why}")));
        } else {
            findings::health_blocks(&mut p, &label, &h.checks);
            if let Some(n) = &h.note {
                p.blocks.push(line(format!("_{}_", md_text(n))));
            }
        }
    }
    for c in &g.comparisons {
        if g.comparisons.len() > 1 {
            p.blocks.push(line(format!(
                "Changes in **{}** against **{}**:",
                name(&c.variant.name, Place::Prose),
                name(&g.baseline.name, Place::Prose)
            )));
        }
        findings::findings_blocks(
            &mut p,
            &c.changes.findings,
            &c.changes.abstained,
            "TRACE",
            "No change finding: no op or shape moved by 1% of the baseline's GPU busy time, and the sides' health agrees.",
        );
    }
    p.blocks
}

/// The terminal's lines: each side's health, then each variant's top
/// change findings.
pub fn terminal_lines(g: &Gate) -> Vec<String> {
    let mut out = Vec::new();
    for (side, h) in &g.health {
        let label = format!("Health of {}", side.name);
        if h.source == HealthSource::Missing {
            out.push(format!("{label}: cannot_tell (no health sheet)"));
        } else {
            out.extend(findings::terminal_health(&label, &h.checks));
        }
    }
    for c in &g.comparisons {
        let top = findings::terminal_findings(&c.changes.findings);
        if !top.is_empty() && g.comparisons.len() > 1 {
            out.push(format!("Changes in {}:", c.variant.name));
        }
        out.extend(top);
    }
    out
}

/// Whether a side's health check fails (what `--strict` refuses).
pub fn health_fails(g: &Gate) -> bool {
    g.health.iter().any(|(_, h)| h.verdict() == Status::Fail)
}

/// The section of one variant: its verdict, reasons, timeline and items.
fn variant_blocks(blocks: &mut Vec<Block>, c: &VariantGate, base: &str, rows: usize) {
    let var = c.variant.name.as_str();
    blocks.push(heading(
        3,
        format!(
            "{} vs {}: {}",
            name(var, Place::Prose),
            name(base, Place::Prose),
            verdict_badge(c.verdict)
        ),
    ));
    let mut bullets: Vec<String> = c.reasons.iter().map(|r| md_text(r)).collect();
    if let Some(ops) = &c.ops {
        let u = &ops.unmatched;
        bullets.push(format!(
            "ops compared: {}; only in {}: {} ({:.1}% of its op time), only in {}: {} ({:.1}%)",
            ops.compared,
            name(base, Place::Prose),
            u.baseline_only_count,
            u.baseline_only_pct,
            name(var, Place::Prose),
            u.variant_only_count,
            u.variant_only_pct
        ));
    }
    blocks.push(Block::Bullets(bullets));
    if !c.timeline.is_empty() && rows > 0 {
        blocks.push(heading(4, "GPU timeline"));
        blocks.push(Block::Grid(timeline_grid(c, base, var)));
    }
    let tags = (base, var);
    if let Some(ops) = &c.ops {
        item_blocks(blocks, ops, "op", "op(s)", rows, tags);
    }
    if let Some(shapes) = &c.op_shapes {
        item_blocks(blocks, shapes, "op + shape", "op shape(s)", rows, tags);
    }
    if let Some(m) = &c.where_moved {
        blocks.extend(super::diff::moved_blocks(
            &m.points, &m.totals, base, var, rows, 4,
        ));
    }
}

/// The GPU timeline of a variant beside the baseline's.
fn timeline_grid(c: &VariantGate, base: &str, var: &str) -> Grid {
    let right = Align::Right;
    Grid {
        header: vec![
            "type".into(),
            format!("{} ms", header_tag(base)),
            format!("{} ms", header_tag(var)),
            "Δ ms".into(),
            "Δ %".into(),
        ],
        align: vec![Align::Left, right, right, right, right],
        rows: c
            .timeline
            .iter()
            .map(|r| {
                let mark = if r.kind == row::BUSY_TIME && c.busy_time_over_limit {
                    " ❌"
                } else {
                    ""
                };
                vec![
                    format!("{}{mark}", code(&r.kind, MD_TEXT_CHARS)),
                    opt_ms(r.baseline_ms),
                    opt_ms(r.variant_ms),
                    r.delta_ms.map_or_else(String::new, |d| format!("{d:+.3}")),
                    // A zero baseline has no percentage.
                    match r.delta_pct {
                        Some(p) if p.is_finite() => format!("{p:+.1}%"),
                        _ => String::new(),
                    },
                ]
            })
            .collect(),
    }
}

/// The top regressions and improvements of one item comparison (by `what`,
/// e.g. `op`), and how many over-limit `items` are not shown.
fn item_blocks(
    blocks: &mut Vec<Block>,
    cmp: &ItemComparison,
    what: &str,
    items: &str,
    rows: usize,
    tags: (&str, &str),
) {
    let regressions = format!("Top regressions by {what}");
    item_table(blocks, &regressions, &cmp.top_regressions, rows, tags);
    let improvements = format!("Top improvements by {what}");
    item_table(blocks, &improvements, &cmp.top_improvements, rows, tags);
    let hidden = cmp
        .over_limit
        .iter()
        .filter(|x| !cmp.top_regressions.iter().take(rows).any(|t| t == *x))
        .count();
    if hidden > 0 {
        blocks.push(line(format!(
            "_{hidden} more {items} over the limit are not shown (see the JSON output)._"
        )));
    }
}

/// A table of changed items (with the shape columns when the items have
/// shapes), at most `rows` rows, then how many more there are.
fn item_table(
    blocks: &mut Vec<Block>,
    title: &str,
    items: &[Change],
    rows: usize,
    (base, var): (&str, &str),
) {
    if items.is_empty() || rows == 0 {
        return;
    }
    let shape = items[0].input_dims.is_some();
    let mut header = vec![String::new(), "op".to_string()];
    if shape {
        header.extend(["input dims".to_string(), "input type".to_string()]);
    }
    let text_cols = header.len();
    header.extend([
        format!("{} ms", header_tag(base)),
        format!("{} ms", header_tag(var)),
        "Δ ms".into(),
        "Δ %".into(),
    ]);
    let mut align = vec![Align::Left; text_cols];
    align.extend([Align::Right; 4]);
    let cell = |s: &Option<String>| code(s.as_deref().unwrap_or(""), MD_TEXT_CHARS);
    let body = items.iter().take(rows).map(|c| {
        let mut r = vec![
            if c.over_limit { "❌" } else { "" }.to_string(),
            code(&c.name, MD_TEXT_CHARS),
        ];
        if shape {
            r.extend([cell(&c.input_dims), cell(&c.input_type)]);
        }
        r.extend([
            format!("{:.3}", c.baseline_ms),
            format!("{:.3}", c.variant_ms),
            format!("{:+.3}", c.delta_ms),
            fmt_pct(c.delta_pct),
        ]);
        r
    });
    blocks.push(heading(4, title));
    blocks.push(Block::Grid(Grid {
        header,
        align,
        rows: body.collect(),
    }));
    if items.len() > rows {
        blocks.push(line(format!("_{} more not shown._", items.len() - rows)));
    }
}

// ---------------------------------------------------------------------------
// Record
// ---------------------------------------------------------------------------

fn map(fields: Vec<(&str, Record)>) -> Record {
    Record::Map(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn text(s: &str) -> Record {
    Record::Str(s.to_string())
}

fn list<T>(items: &[T], f: impl Fn(&T) -> Record) -> Record {
    Record::List(items.iter().map(f).collect())
}

/// The gate as the record `--json` writes (`docs/compare-json.md`).
pub fn record(g: &Gate) -> Record {
    map(vec![
        ("schema_version", Record::UInt(g.schema_version.into())),
        ("tool", text(&g.tool)),
        ("tool_version", text(&g.tool_version)),
        ("verdict", text(g.verdict.as_str())),
        ("exit_code", Record::Int(g.exit_code.into())),
        ("gate", gate_options(&g.gate)),
        ("baseline", side(&g.baseline)),
        ("comparisons", list(&g.comparisons, variant)),
        ("kind", text("compare")),
        ("health", list(&g.health, |(s, h)| side_health_record(s, h))),
        ("findings", change_list(g, false)),
        ("cannot_tell", change_list(g, true)),
    ])
}

/// One input's health as a JSON object: its side (`name`, `input`), where
/// the checks come from (`source`), a `note`, the `verdict` and every check.
pub fn side_health_record(s: &Side, h: &SideHealth) -> Record {
    let mut fields = vec![
        ("name".to_string(), text(&s.name)),
        ("input".to_string(), text(&s.input)),
        ("source".to_string(), text(h.source.as_str())),
        (
            "note".to_string(),
            h.note.as_deref().map_or(Record::Null, text),
        ),
    ];
    let mut checks = findings::checks_fields(&h.checks);
    if h.source == HealthSource::Missing {
        checks[0].1 = text(Status::CannotTell.as_str());
    }
    fields.extend(checks);
    Record::Map(fields)
}

/// Every variant's change findings (`abstained`: the rules that could not
/// tell instead), each with the variant's name.
fn change_list(g: &Gate, abstained: bool) -> Record {
    let mut out = Vec::new();
    for c in &g.comparisons {
        let records: Vec<Record> = if abstained {
            c.changes
                .abstained
                .iter()
                .map(findings::abstention_record)
                .collect()
        } else {
            c.changes
                .findings
                .iter()
                .enumerate()
                .map(|(i, f)| findings::finding_record(i + 1, f, "TRACE"))
                .collect()
        };
        for r in records {
            if let Record::Map(mut fields) = r {
                fields.insert(0, ("variant".into(), text(&c.variant.name)));
                out.push(Record::Map(fields));
            }
        }
    }
    Record::List(out)
}

fn gate_options(o: &GateOptions) -> Record {
    map(vec![
        ("fail_above_pct", o.fail_above_pct.into()),
        ("min_ms", Record::Float(o.min_ms)),
        ("max_unmatched_pct", Record::Float(o.max_unmatched_pct)),
    ])
}

fn side(s: &Side) -> Record {
    map(vec![("name", text(&s.name)), ("input", text(&s.input))])
}

fn variant(v: &VariantGate) -> Record {
    let opt = |c: &Option<ItemComparison>| c.as_ref().map_or(Record::Null, items);
    map(vec![
        ("variant", side(&v.variant)),
        ("verdict", text(v.verdict.as_str())),
        ("reasons", list(&v.reasons, |r| text(r))),
        ("timeline", list(&v.timeline, timeline_row)),
        (
            "busy_time",
            v.busy_time.as_ref().map_or(Record::Null, timeline_row),
        ),
        ("busy_time_over_limit", Record::Bool(v.busy_time_over_limit)),
        ("ops", opt(&v.ops)),
        ("op_shapes", opt(&v.op_shapes)),
        (
            "where_moved",
            v.where_moved.as_ref().map_or(Record::Null, |m| {
                super::diff::moved_record(&m.points, &m.totals, TOP_N)
            }),
        ),
    ])
}

fn timeline_row(r: &TimelineRow) -> Record {
    map(vec![
        ("type", text(&r.kind)),
        ("baseline_ms", r.baseline_ms.into()),
        ("variant_ms", r.variant_ms.into()),
        ("delta_ms", r.delta_ms.into()),
        ("delta_pct", r.delta_pct.into()),
    ])
}

fn items(c: &ItemComparison) -> Record {
    map(vec![
        ("compared", Record::UInt(c.compared as u64)),
        ("unmatched", unmatched(&c.unmatched)),
        ("over_limit", list(&c.over_limit, change)),
        ("top_regressions", list(&c.top_regressions, change)),
        ("top_improvements", list(&c.top_improvements, change)),
    ])
}

fn unmatched(u: &Unmatched) -> Record {
    map(vec![
        (
            "baseline_only_count",
            Record::UInt(u.baseline_only_count as u64),
        ),
        ("baseline_only_ms", Record::Float(u.baseline_only_ms)),
        ("baseline_total_ms", Record::Float(u.baseline_total_ms)),
        ("baseline_only_pct", Record::Float(u.baseline_only_pct)),
        (
            "variant_only_count",
            Record::UInt(u.variant_only_count as u64),
        ),
        ("variant_only_ms", Record::Float(u.variant_only_ms)),
        ("variant_total_ms", Record::Float(u.variant_total_ms)),
        ("variant_only_pct", Record::Float(u.variant_only_pct)),
    ])
}

fn change(c: &Change) -> Record {
    let mut fields = vec![("name", text(&c.name))];
    // The shape fields exist for op+shape items only.
    for (key, v) in [
        ("input_type", &c.input_type),
        ("input_dims", &c.input_dims),
        ("input_strides", &c.input_strides),
        ("concrete_inputs", &c.concrete_inputs),
    ] {
        if let Some(v) = v {
            fields.push((key, text(v)));
        }
    }
    fields.extend([
        ("baseline_ms", Record::Float(c.baseline_ms)),
        ("variant_ms", Record::Float(c.variant_ms)),
        ("delta_ms", Record::Float(c.delta_ms)),
        ("delta_pct", c.delta_pct.into()),
        ("over_limit", Record::Bool(c.over_limit)),
    ]);
    map(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::commands::compare::tests::gate_inputs;
    use crate::analysis::commands::compare::{GateOptions, gate};
    use crate::report::json::record_text;

    #[test]
    fn markdown_stays_under_the_limit() {
        // Long op names in many rows, many variants.
        let long = "x".repeat(5000);
        let mut inputs = gate_inputs(1.0, 2.0, &[("mm", 20.0), ("add", 2.0)]);
        for n in 0..200 {
            let mut v = inputs[1].clone();
            v.tag = format!("{long}{n}");
            inputs.push(v);
        }
        let g = gate(
            &inputs,
            &GateOptions {
                fail_above_pct: Some(1.0),
                ..GateOptions::default()
            },
        );
        let md = page_text(&page(&g));
        assert!(md.len() <= MARKDOWN_LIMIT, "{}", md.len());
        assert!(md.contains("cut to fit"));
    }

    #[test]
    fn health_and_change_findings_in_the_record_and_the_page() {
        // mm: 10 -> 20 ms on 11 ms of busy time: a move; the baseline has
        // no health sheet, the variant's health is a trace's.
        let mut inputs = gate_inputs(11.0, 21.0, &[("mm", 20.0), ("add", 1.0)]);
        inputs[1].health = crate::analysis::commands::compare::SideHealth::of_trace(Vec::new());
        let g = gate(&inputs, &GateOptions::default());
        let json = record_text(&record(&g));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["kind"], "compare");
        assert_eq!(v["health"][0]["source"], "none");
        assert_eq!(v["health"][0]["verdict"], "cannot_tell");
        assert_eq!(v["health"][1]["source"], "trace");
        assert_eq!(v["health"][1]["verdict"], "pass");
        assert_eq!(v["findings"][0]["variant"], "new");
        assert_eq!(v["findings"][0]["id"], "change.op_moved");
        assert_eq!(v["findings"][0]["subject"], "mm");
        assert_eq!(v["cannot_tell"][0]["id"], "change.health_differs");
        let md = page_text(&page(&g));
        let f = md.find("### Findings").unwrap();
        let h = md.find("Health of base: **cannot tell**").unwrap();
        let m = md.find("`change.op_moved`").unwrap();
        assert!(f < h && h < m, "{md}");
        assert!(!health_fails(&g));
        let t = terminal_lines(&g);
        assert_eq!(t[0], "Health of base: cannot_tell (no health sheet)");
        assert_eq!(t[1], "Health of new: pass");
    }

    #[test]
    fn record_layout() {
        let inputs = gate_inputs(1.0, 2.0, &[("mm", 20.0), ("add", 2.0)]);
        let g = gate(&inputs, &GateOptions::default());
        let json = record_text(&record(&g));
        assert!(json.starts_with("{\n  \"schema_version\": 1,\n  \"tool\": \"tracelens\","));
        assert!(json.contains("\"gate\": {\n    \"fail_above_pct\": null,\n    \"min_ms\": 0.0,"));
        assert!(json.contains("\"verdict\": \"not_gated\""));
        // Op items carry no shape fields.
        assert!(!json.contains("input_dims"));
    }
}
