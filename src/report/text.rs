//! The text writer: what goes to the terminal — a tree [`Outline`] drawn
//! with box characters, and a [`Page`] as plain lines (the short summaries
//! printed after a run).

use std::fmt::Write as _;
use std::path::PathBuf;

use super::{Block, Document, Outline, Page, Rendered, TimeLayout, WriteError, Writer};
use crate::analysis::commands::tree_view::TreeNode;
use crate::pyfmt::float_repr;

/// Longest name shown in an outline, in characters (longer ones end with
/// `..`).
const NAME_CHARS: usize = 64;

/// Writes a document's outline, then its page, as plain text to `path`.
#[derive(Debug, Clone)]
pub struct Text {
    /// Target file (`-`: standard output, printed by the caller).
    pub path: PathBuf,
}

impl Writer for Text {
    /// One file when the document has an outline or a page, none otherwise.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        if doc.outline.is_none() && doc.page.is_none() {
            return Ok(Vec::new());
        }
        let mut text = doc.outline.as_ref().map(outline_text).unwrap_or_default();
        if let Some(p) = &doc.page {
            text.push_str(&page_text(p));
        }
        Ok(vec![Rendered {
            name: self.path.clone(),
            bytes: text.into_bytes(),
        }])
    }
}

/// `outline` as box-drawing text, one line per node: `├── (cpu) name`,
/// with the node's time after its name (`[12.5 µs]`) or dot-leadered to a
/// common column (`.... (12.50 µs)`), as the outline asks.
pub fn outline_text(outline: &Outline) -> String {
    let mut lines: Vec<(String, Option<f64>)> = Vec::new();
    let n = outline.roots.len();
    for (i, r) in outline.roots.iter().enumerate() {
        let last = !outline.joined_roots || i + 1 == n;
        collect_lines(r, "", last, &mut lines);
    }
    let mut out = String::new();
    match outline.times {
        TimeLayout::Inline => {
            for (l, t) in lines {
                out.push_str(&l);
                if let Some(t) = t {
                    let _ = write!(out, " [{} µs]", float_repr(t));
                }
                out.push('\n');
            }
        }
        TimeLayout::Leader => {
            let width = lines.iter().map(|(l, _)| l.chars().count()).max();
            let width = width.unwrap_or(0) + 4;
            for (l, t) in lines {
                let pad = width.saturating_sub(l.chars().count());
                let _ = match t {
                    Some(t) => writeln!(out, "{l} {} ({t:.2} µs)", ".".repeat(pad)),
                    None => writeln!(out, "{l}"),
                };
            }
        }
    }
    out
}

/// Appends the line of `node` and those of its subtree.
fn collect_lines(
    node: &TreeNode<'_>,
    prefix: &str,
    last: bool,
    lines: &mut Vec<(String, Option<f64>)>,
) {
    if node.hidden {
        return;
    }
    let conn = if last { "└── " } else { "├── " };
    let mut line = format!("{prefix}{conn}");
    if let Some(kind) = node.kind {
        let _ = write!(line, "({kind}) ");
    }
    line.push_str(&short_name(node.name));
    lines.push((line, node.time_us));
    let child_prefix = format!("{prefix}{}", if last { "    " } else { "│   " });
    let n = node.children.len();
    for (i, c) in node.children.iter().enumerate() {
        collect_lines(c, &child_prefix, i + 1 == n, lines);
    }
}

/// `name` cut to [`NAME_CHARS`] characters, marked with `..` when cut.
fn short_name(name: &str) -> String {
    if name.chars().count() > NAME_CHARS {
        let cut: String = name.chars().take(NAME_CHARS).collect();
        format!("{cut}..")
    } else {
        name.to_string()
    }
}

/// `page` as plain text: headings and paragraph lines as they are, bullets
/// after `- `, tables as space-aligned columns; blocks are separated by a
/// blank line.
pub fn page_text(page: &Page) -> String {
    let mut out = String::new();
    for (i, block) in page.blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let lines: Vec<String> = match block {
            Block::Heading { text, .. } => vec![text.clone()],
            Block::Paragraph(lines) => lines.clone(),
            Block::Bullets(items) => items.iter().map(|t| format!("- {t}")).collect(),
            Block::Data(d) => {
                let t = &d.table;
                let header = t.columns.iter().map(|c| c.name.clone()).collect();
                let rows =
                    (0..t.nrows()).map(|row| (0..t.ncols()).map(|c| d.cell_text(row, c)).collect());
                aligned(std::iter::once(header).chain(rows).collect())
            }
            Block::Grid(g) => aligned(
                std::iter::once(g.header.clone())
                    .chain(g.rows.clone())
                    .collect(),
            ),
        };
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

/// Rows of cells as lines, each column padded to its widest cell and
/// columns separated by two spaces.
fn aligned(rows: Vec<Vec<String>>) -> Vec<String> {
    let mut widths: Vec<usize> = Vec::new();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            let w = c.chars().count();
            match widths.get_mut(i) {
                Some(x) => *x = (*x).max(w),
                None => widths.push(w),
            }
        }
    }
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, &w)| format!("{c:<w$}"))
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::columns::{Measure, TimeUnit};
    use crate::report::{DataTable, Grid};
    use crate::table::{Table, Value};

    fn node<'a>(kind: Option<&'static str>, name: &'a str, t: Option<f64>) -> TreeNode<'a> {
        TreeNode {
            kind,
            name,
            time_us: t,
            children: Vec::new(),
            hidden: false,
        }
    }

    #[test]
    fn inline_outline() {
        let long_name = "k".repeat(70);
        let mut root = node(Some("cpu"), "aten::mm", None);
        root.children.push(node(Some("kernel"), "gemm", Some(12.5)));
        root.children
            .push(node(Some("kernel"), &long_name, Some(1.0)));
        let o = Outline {
            roots: vec![root, node(Some("python"), "f", None)],
            times: TimeLayout::Inline,
            joined_roots: false,
        };
        let long = format!("{}..", "k".repeat(64));
        assert_eq!(
            outline_text(&o),
            format!(
                "└── (cpu) aten::mm\n    ├── (kernel) gemm [12.5 µs]\n    └── (kernel) {long} [1.0 µs]\n└── (python) f\n"
            )
        );
    }

    #[test]
    fn leader_outline() {
        let mut root = node(None, "nn.Module: A", Some(3.0));
        root.children.push(node(None, "nn.Module: B", Some(1.0)));
        // A hidden sibling draws nothing but still makes B a middle child.
        let mut hidden = node(None, "nn.Module: hidden", Some(0.0));
        hidden.hidden = true;
        root.children.push(hidden);
        let o = Outline {
            roots: vec![root, node(None, "nn.Module: C", Some(0.5))],
            times: TimeLayout::Leader,
            joined_roots: true,
        };
        assert_eq!(
            outline_text(&o),
            "├── nn.Module: A ........ (3.00 µs)\n│   ├── nn.Module: B .... (1.00 µs)\n└── nn.Module: C ........ (0.50 µs)\n"
        );
    }

    #[test]
    fn page_as_text() {
        let mut t = Table::new("t", &["name", "ms"]);
        t.push_row(vec![Value::Text("mm".into()), Value::Float(1.5)]);
        let page = Page {
            blocks: vec![
                Block::Heading {
                    level: 2,
                    text: "Title".into(),
                },
                Block::Paragraph(vec!["a".into(), "b".into()]),
                Block::Bullets(vec!["x".into()]),
                Block::Data(DataTable {
                    table: t,
                    measures: vec![Measure::Other, Measure::Time(TimeUnit::Ms)],
                }),
                Block::Grid(Grid {
                    header: vec!["k".into(), "value".into()],
                    align: vec![],
                    rows: vec![vec!["long key".into(), "1".into()]],
                }),
            ],
            trailing_blank: true,
        };
        assert_eq!(
            page_text(&page),
            "Title\n\na\nb\n\n- x\n\nname  ms\nmm    1.50\n\nk         value\nlong key  1\n"
        );
    }
}
