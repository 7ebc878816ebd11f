//! The gate rendered as Markdown for a pull-request comment, kept under
//! [`MARKDOWN_LIMIT`] bytes.

use std::fmt::Write as _;

use super::gate::fmt_pct;
use super::json::{Change, Gate, TOP_N, Verdict};

/// Upper bound on the size of [`markdown`]'s output, in bytes (GitHub
/// refuses comments over 65536 characters).
pub const MARKDOWN_LIMIT: usize = 60_000;

/// Longest text shown in a table cell, in characters.
const MD_TEXT_CHARS: usize = 100;

/// Text for a table cell, as inline code: one line, cut, with `|` escaped
/// and backticks replaced (names like `foo<bar>` are not read as HTML).
fn md_code(s: &str) -> String {
    let one = s.replace("\r\n", " ").replace(['\n', '\r'], " ");
    let cut = crate::table::markdown::truncate_text(&one, MD_TEXT_CHARS);
    if cut.is_empty() {
        return String::new();
    }
    format!("`{}`", cut.replace('`', "'").replace('|', "\\|"))
}

/// Text for prose: one line, `|` and markup characters left alone except
/// line breaks.
fn md_plain(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn md_opt_ms(x: Option<f64>) -> String {
    x.map_or_else(String::new, |x| format!("{x:.3}"))
}

fn verdict_badge(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅ pass",
        Verdict::Regression => "❌ regression",
        Verdict::Inconclusive => "⚠️ inconclusive",
        Verdict::NotGated => "ℹ️ compared (no gate)",
    }
}

/// Renders an item table; `shape` adds the shape columns.
fn md_items(out: &mut String, title: &str, items: &[Change], rows: usize, base: &str, var: &str) {
    if items.is_empty() || rows == 0 {
        return;
    }
    let shape = items[0].input_dims.is_some();
    let _ = writeln!(out, "\n#### {title}\n");
    if shape {
        let _ = writeln!(
            out,
            "| | op | input dims | input type | {} ms | {} ms | Δ ms | Δ % |\n|---|---|---|---|---:|---:|---:|---:|",
            md_plain(base).replace('|', "\\|"),
            md_plain(var).replace('|', "\\|")
        );
    } else {
        let _ = writeln!(
            out,
            "| | op | {} ms | {} ms | Δ ms | Δ % |\n|---|---|---:|---:|---:|---:|",
            md_plain(base).replace('|', "\\|"),
            md_plain(var).replace('|', "\\|")
        );
    }
    for c in items.iter().take(rows) {
        let mark = if c.over_limit { "❌" } else { "" };
        let shape_cols = if shape {
            format!(
                " {} | {} |",
                md_code(c.input_dims.as_deref().unwrap_or("")),
                md_code(c.input_type.as_deref().unwrap_or(""))
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "| {mark} | {} |{shape_cols} {:.3} | {:.3} | {:+.3} | {} |",
            md_code(&c.name),
            c.baseline_ms,
            c.variant_ms,
            c.delta_ms,
            fmt_pct(c.delta_pct)
        );
    }
    if items.len() > rows {
        let _ = writeln!(out, "\n_{} more not shown._", items.len() - rows);
    }
}

/// Renders the whole page with tables of at most `rows` rows.
fn render_markdown(g: &Gate, rows: usize) -> String {
    let mut out = String::new();
    let names: Vec<&str> = g
        .comparisons
        .iter()
        .map(|c| c.variant.name.as_str())
        .collect();
    let _ = writeln!(out, "## tracelens compare: {}\n", verdict_badge(g.verdict));
    let _ = writeln!(
        out,
        "**Verdict: {}** — baseline **{}** vs **{}**.",
        g.verdict.as_str(),
        md_plain(&g.baseline.name),
        md_plain(&names.join("**, **"))
    );
    match g.gate.fail_above_pct {
        Some(p) => {
            let _ = writeln!(
                out,
                "Gate: fails when GPU busy time, an op or an op shape is more than {p}% slower{}; inconclusive when more than {}% of either side's op kernel time is in ops the other lacks.",
                if g.gate.min_ms > 0.0 {
                    format!(" and at least {} ms slower", g.gate.min_ms)
                } else {
                    String::new()
                },
                g.gate.max_unmatched_pct
            );
        }
        None => {
            out.push_str("No gate (`--fail-above` not given): numbers only.\n");
        }
    }
    for c in &g.comparisons {
        let base = g.baseline.name.as_str();
        let var = c.variant.name.as_str();
        let _ = writeln!(
            out,
            "\n### {} vs {}: {}\n",
            md_plain(var),
            md_plain(base),
            verdict_badge(c.verdict)
        );
        for r in &c.reasons {
            let _ = writeln!(out, "- {}", md_plain(r));
        }
        if let Some(ops) = &c.ops {
            let u = &ops.unmatched;
            let _ = writeln!(
                out,
                "- ops compared: {}; only in {}: {} ({:.1}% of its op time), only in {}: {} ({:.1}%)",
                ops.compared,
                md_plain(base),
                u.baseline_only_count,
                u.baseline_only_pct,
                md_plain(var),
                u.variant_only_count,
                u.variant_only_pct
            );
        }
        if !c.timeline.is_empty() && rows > 0 {
            let _ = writeln!(
                out,
                "\n#### GPU timeline\n\n| type | {} ms | {} ms | Δ ms | Δ % |\n|---|---:|---:|---:|---:|",
                md_plain(base).replace('|', "\\|"),
                md_plain(var).replace('|', "\\|")
            );
            for r in &c.timeline {
                let mark = if r.kind == crate::names::row::BUSY_TIME && c.busy_time_over_limit {
                    " ❌"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "| {}{mark} | {} | {} | {} | {} |",
                    md_code(&r.kind),
                    md_opt_ms(r.baseline_ms),
                    md_opt_ms(r.variant_ms),
                    r.delta_ms.map_or_else(String::new, |d| format!("{d:+.3}")),
                    // A zero baseline has no percentage.
                    match r.delta_pct {
                        Some(p) if p.is_finite() => format!("{p:+.1}%"),
                        _ => String::new(),
                    }
                );
            }
        }
        if let Some(ops) = &c.ops {
            md_items(
                &mut out,
                "Top regressions by op",
                &ops.top_regressions,
                rows,
                base,
                var,
            );
            md_items(
                &mut out,
                "Top improvements by op",
                &ops.top_improvements,
                rows,
                base,
                var,
            );
            let hidden = ops
                .over_limit
                .iter()
                .filter(|x| !ops.top_regressions.iter().take(rows).any(|t| t == *x))
                .count();
            if hidden > 0 {
                let _ = writeln!(
                    out,
                    "\n_{hidden} more op(s) over the limit are not shown (see the JSON output)._"
                );
            }
        }
        if let Some(shapes) = &c.op_shapes {
            md_items(
                &mut out,
                "Top regressions by op + shape",
                &shapes.top_regressions,
                rows,
                base,
                var,
            );
            md_items(
                &mut out,
                "Top improvements by op + shape",
                &shapes.top_improvements,
                rows,
                base,
                var,
            );
            let hidden = shapes
                .over_limit
                .iter()
                .filter(|x| !shapes.top_regressions.iter().take(rows).any(|t| t == *x))
                .count();
            if hidden > 0 {
                let _ = writeln!(
                    out,
                    "\n_{hidden} more op shape(s) over the limit are not shown (see the JSON output)._"
                );
            }
        }
    }
    out
}

/// The Markdown verdict for a pull-request comment: verdict line, then per
/// variant the reasons, the GPU timeline side by side and the top
/// regressions and improvements by op and by op+shape. Tables are shortened
/// (with a note) until the page fits in [`MARKDOWN_LIMIT`] bytes; if even
/// the bare verdicts do not fit, the page is cut at a line boundary.
pub fn markdown(g: &Gate) -> String {
    let mut rows = TOP_N;
    loop {
        let page = render_markdown(g, rows);
        if page.len() <= MARKDOWN_LIMIT {
            if rows < TOP_N {
                return format!(
                    "{page}\n_Tables cut to {rows} rows to fit a pull-request comment._\n"
                );
            }
            return page;
        }
        if rows == 0 {
            let note = "\n_… cut to fit a pull-request comment; see the JSON output._\n";
            let mut end = MARKDOWN_LIMIT - note.len();
            while !page.is_char_boundary(end) {
                end -= 1;
            }
            let end = page[..end].rfind('\n').map_or(end, |i| i + 1);
            return format!("{}{note}", &page[..end]);
        }
        rows /= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::tests::gate_inputs;
    use crate::analysis::compare::{GateOptions, gate};

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
        let md = markdown(&g);
        assert!(md.len() <= MARKDOWN_LIMIT, "{}", md.len());
        assert!(md.contains("cut to fit"));
    }
}
