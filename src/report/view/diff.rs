//! The tree diff as a page for a pull request: where the GPU time moved
//! (the divergence points ranked by |Δ|), and as the record the compare
//! gate's JSON carries.

use super::verdict::MARKDOWN_LIMIT;
use super::{heading, line};
use crate::analysis::commands::compare::{Side, SideHealth};
use crate::analysis::commands::diff::{DivergencePoint, MergedKind, PointTotals, TraceDiff};
use crate::report::markdown::{Place, code, name};
use crate::report::{Align, Block, Grid, Page, Record};

/// Default number of points listed.
pub const DEFAULT_TOP: usize = 15;

/// Longest kernel or op name shown in a cell, in characters.
const NAME_CHARS: usize = 80;

/// At most this many ops and kernels are named per side of a point.
const NAMES_PER_CELL: usize = 3;

/// The diff page: counts of the merged tree, the top `top` divergence
/// points and the share of the change they explain. Rows are halved until
/// the Markdown fits a pull-request comment.
pub fn page(d: &TraceDiff, base: &str, variant: &str, top: usize) -> Page {
    super::fit_rows(top, MARKDOWN_LIMIT, |rows| {
        full_page(d, base, variant, rows)
    })
    .0
}

fn full_page(d: &TraceDiff, base: &str, variant: &str, top: usize) -> Page {
    let (mut both, mut only1, mut only2) = (0usize, 0usize, 0usize);
    for n in &d.merged.nodes {
        match n.kind {
            crate::analysis::commands::diff::MergedKind::Combined => both += 1,
            crate::analysis::commands::diff::MergedKind::Base => only1 += 1,
            crate::analysis::commands::diff::MergedKind::Variant => only2 += 1,
        }
    }
    let mut blocks = vec![
        heading(
            2,
            format!(
                "tracelens diff: {} vs {}",
                name(base, Place::Prose),
                name(variant, Place::Prose)
            ),
        ),
        line(format!(
            "Merged call tree: {} nodes — {both} matched, {only1} in **{}** only, {only2} in **{}** only.",
            d.merged.nodes.len(),
            name(base, Place::Prose),
            name(variant, Place::Prose)
        )),
    ];
    if d.identical {
        blocks.push(line(
            "Both traces give the same GPU events under the same ops: nothing moved.",
        ));
    }
    blocks.extend(moved_blocks(&d.points, &d.totals, base, variant, top, 3));
    Page {
        blocks,
        trailing_blank: false,
    }
}

/// "Where the GPU time moved": a heading at `level`, the top `top` points
/// as a table and a sentence on how much of the change they explain.
/// Shared by `diff --md` and the compare verdict.
pub fn moved_blocks(
    points: &[DivergencePoint],
    totals: &PointTotals,
    base: &str,
    variant: &str,
    top: usize,
    level: usize,
) -> Vec<Block> {
    let mut out = vec![heading(level, "Where the GPU time moved")];
    if points.is_empty() {
        out.push(line("No GPU event sits under a CPU op in either trace."));
        return out;
    }
    let shown = &points[..top.min(points.len())];
    out.push(Block::Grid(points_grid(shown, base, variant)));
    out.push(Block::Paragraph(moved_lines(shown, totals)));
    out
}

/// The table of the points `shown`, one row each.
fn points_grid(shown: &[DivergencePoint], base: &str, variant: &str) -> Grid {
    let rows = shown
        .iter()
        .enumerate()
        .map(|(k, p)| {
            vec![
                (k + 1).to_string(),
                format!(
                    "{}{}",
                    code(&p.name, NAME_CHARS),
                    if p.matched { " (kernel)" } else { "" }
                ),
                p.occurrences.to_string(),
                ms(p.base.busy_us),
                ms(p.variant.busy_us),
                signed_ms(p.delta_us()),
                side_cell(&p.base),
                side_cell(&p.variant),
            ]
        })
        .collect();
    let b = name(base, Place::Cell);
    let v = name(variant, Place::Cell);
    Grid {
        header: vec![
            "#".into(),
            "point (LCA)".into(),
            "×".into(),
            format!("{b} ms"),
            format!("{v} ms"),
            "Δ ms".into(),
            format!("{b}: ops → kernels"),
            format!("{v}: ops → kernels"),
        ],
        align: vec![
            Align::Right,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
            Align::Left,
        ],
        rows,
    }
}

/// The sentences under the table: the change under all points, the share
/// the listed ones explain, and what a point is.
fn moved_lines(shown: &[DivergencePoint], totals: &PointTotals) -> Vec<String> {
    let listed: f64 = shown.iter().map(|p| p.delta_us()).sum();
    let listed_abs: f64 = shown.iter().map(|p| p.delta_us().abs()).sum();
    let net = totals.delta_us();
    let mut lines = vec![format!(
        "GPU time under all {} points: {} ms → {} ms (Δ {} ms{}).",
        totals.points,
        ms(totals.base_us),
        ms(totals.variant_us),
        signed_ms(net),
        pct(net, totals.base_us).map_or(String::new(), |p| format!(", {p}")),
    )];
    lines.push(format!(
        "The {} listed points account for Δ {} ms{} and {} of all time that moved (Σ|Δ| = {} ms).",
        shown.len(),
        signed_ms(listed),
        share(listed, net).map_or(String::new(), |s| format!(" ({s} of the net change)")),
        share(listed_abs, totals.abs_delta_us).unwrap_or_else(|| "all".into()),
        ms(totals.abs_delta_us),
    ));
    lines.push(
        "A point is the lowest common ancestor of the two call trees above GPU work that differs \
         (or a matched kernel pair, marked `(kernel)`); `×` counts where it occurs."
            .to_string(),
    );
    lines
}

/// The `Trace health` section of the diff page: each side's verdict and
/// the checks that did not pass.
pub fn health_section(p: &mut Page, sides: &[(Side, SideHealth)]) {
    p.blocks.push(heading(3, "Trace health"));
    for (s, h) in sides {
        let label = format!("Health of {}", name(&s.name, Place::Prose));
        super::findings::health_blocks(p, &label, &h.checks);
    }
}

/// Points `--json` lists in its `where_moved`.
pub const JSON_POINTS: usize = 10;

/// The diff as one JSON document (`docs/json.md`, `kind: "diff"`): the
/// sides, their health, the merged tree's counts and where the GPU time
/// moved.
pub fn diff_record(d: &TraceDiff, sides: &[(Side, SideHealth); 2]) -> Record {
    let count = |k: MergedKind| d.merged.nodes.iter().filter(|n| n.kind == k).count() as u64;
    let side = |s: &Side| {
        Record::Map(vec![
            ("name".into(), Record::Str(s.name.clone())),
            ("input".into(), Record::Str(s.input.clone())),
        ])
    };
    let t = &d.totals;
    let ms = |us: f64| Record::Float(us / 1000.0);
    Record::Map(vec![
        (
            "schema_version".into(),
            Record::UInt(super::findings::REPORT_SCHEMA_VERSION),
        ),
        ("tool".into(), Record::Str("tracelens".into())),
        (
            "tool_version".into(),
            Record::Str(env!("CARGO_PKG_VERSION").into()),
        ),
        ("kind".into(), Record::Str("diff".into())),
        ("baseline".into(), side(&sides[0].0)),
        ("variant".into(), side(&sides[1].0)),
        (
            "health".into(),
            Record::List(
                sides
                    .iter()
                    .map(|(s, h)| super::verdict::side_health_record(s, h))
                    .collect(),
            ),
        ),
        (
            "summary".into(),
            Record::Map(vec![
                (
                    "merged_nodes".into(),
                    Record::UInt(d.merged.nodes.len() as u64),
                ),
                (
                    "matched_nodes".into(),
                    Record::UInt(count(MergedKind::Combined)),
                ),
                (
                    "baseline_only_nodes".into(),
                    Record::UInt(count(MergedKind::Base)),
                ),
                (
                    "variant_only_nodes".into(),
                    Record::UInt(count(MergedKind::Variant)),
                ),
                ("points".into(), Record::UInt(t.points as u64)),
                ("baseline_ms".into(), ms(t.base_us)),
                ("variant_ms".into(), ms(t.variant_us)),
                ("delta_ms".into(), ms(t.delta_us())),
                ("abs_delta_ms".into(), ms(t.abs_delta_us)),
            ]),
        ),
        (
            "where_moved".into(),
            moved_record(&d.points, &d.totals, JSON_POINTS),
        ),
    ])
}

/// The points as the compare gate's JSON carries them.
pub fn moved_record(points: &[DivergencePoint], totals: &PointTotals, top: usize) -> Record {
    let f = |x: f64| Record::Float(x / 1000.0);
    let list = |v: &[String]| Record::List(v.iter().map(|s| Record::Str(s.clone())).collect());
    let shown = &points[..top.min(points.len())];
    Record::Map(vec![
        ("baseline_ms".into(), f(totals.base_us)),
        ("variant_ms".into(), f(totals.variant_us)),
        ("delta_ms".into(), f(totals.delta_us())),
        ("abs_delta_ms".into(), f(totals.abs_delta_us)),
        ("points".into(), Record::UInt(totals.points as u64)),
        (
            "top".into(),
            Record::List(
                shown
                    .iter()
                    .map(|p| {
                        Record::Map(vec![
                            ("name".into(), Record::Str(p.name.clone())),
                            ("matched_kernels".into(), Record::Bool(p.matched)),
                            ("occurrences".into(), Record::UInt(p.occurrences as u64)),
                            ("baseline_ms".into(), f(p.base.busy_us)),
                            ("variant_ms".into(), f(p.variant.busy_us)),
                            ("delta_ms".into(), f(p.delta_us())),
                            ("baseline_ops".into(), list(&p.base.ops)),
                            ("variant_ops".into(), list(&p.variant.ops)),
                            ("baseline_kernels".into(), list(&p.base.kernel_names)),
                            ("variant_kernels".into(), list(&p.variant.kernel_names)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}

/// A side of a point: its ops, an arrow, its kernels (a few of each).
fn side_cell(s: &crate::analysis::commands::diff::points::PointSide) -> String {
    if s.kernels == 0 {
        return "—".to_string();
    }
    let names = |v: &[String]| {
        let mut t: Vec<String> = v
            .iter()
            .take(NAMES_PER_CELL)
            .map(|n| code(&short_name(n), NAME_CHARS))
            .collect();
        if v.len() > NAMES_PER_CELL {
            t.push(format!("+{} more", v.len() - NAMES_PER_CELL));
        }
        t.join(", ")
    };
    format!("{} → {}", names(&s.ops), names(&s.kernel_names))
}

/// A kernel or op name shortened for a table cell: no leading `void `,
/// no trailing parameter list, template arguments nested below the first
/// level shown as `…`.
fn short_name(name: &str) -> String {
    let s = name.strip_prefix("void ").unwrap_or(name);
    // Drop a trailing top-level `(...)` (the parameter list).
    let s = match s.strip_suffix(')') {
        Some(_) => {
            let (mut depth, mut cut) = (0i32, None);
            for (i, c) in s.char_indices().rev() {
                match c {
                    ')' => depth += 1,
                    '(' => {
                        depth -= 1;
                        if depth == 0 {
                            cut = Some(i);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            // `f(int)` is a signature; `Memset (Device)` is a label.
            match cut {
                Some(i) if i > 0 && !s[..i].ends_with(' ') => &s[..i],
                _ => s,
            }
        }
        None => s,
    };
    let mut out = String::with_capacity(s.len());
    let (mut depth, mut parens) = (0, 0);
    for c in s.chars() {
        // Inside template arguments, a parenthesised group shows as `(…)`.
        if depth >= 1 && (parens > 0 || c == '(') {
            match c {
                '(' => {
                    if parens == 0 && depth < 2 {
                        out.push_str("(…)");
                    }
                    parens += 1;
                }
                ')' => parens -= 1,
                _ => {}
            }
            continue;
        }
        match c {
            '<' => {
                depth += 1;
                if depth == 2 {
                    out.push_str("<…");
                } else if depth < 2 {
                    out.push(c);
                }
            }
            '>' => {
                if depth <= 2 {
                    out.push(c);
                }
                depth -= 1;
            }
            _ if depth < 2 => out.push(c),
            _ => {}
        }
    }
    out
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

fn signed_ms(us: f64) -> String {
    format!("{:+.3}", us / 1000.0)
}

fn pct(delta: f64, base: f64) -> Option<String> {
    (base > 0.0).then(|| format!("{:+.1}%", delta / base * 100.0))
}

fn share(part: f64, whole: f64) -> Option<String> {
    (whole.abs() > 0.0).then(|| format!("{:.0}%", part / whole * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_shortened() {
        assert_eq!(
            short_name(
                "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float> >(at::TensorIteratorBase&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<float>)"
            ),
            "at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<…>(…)::{lambda(…)#1}>"
        );
        assert_eq!(short_name("attn_fwd"), "attn_fwd");
        assert_eq!(short_name("Memset (Device)"), "Memset (Device)");
        assert_eq!(short_name("f(x"), "f(x");
    }
}
