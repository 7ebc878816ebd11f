//! The Markdown writer: a [`Page`] as GitHub-flavoured Markdown (the
//! report, collectives and compare summaries), and the inline helpers views
//! use to put names into Markdown safely.

use std::path::PathBuf;

use super::{Align, Block, DataTable, Document, Grid, Page, Rendered, WriteError, Writer};
use crate::table::Value;

/// Longest text cell of a data table shown, in characters (longer ones end
/// with `…`).
const MAX_TEXT_CHARS: usize = 80;

/// Writes a document's page as Markdown to `path`.
#[derive(Debug, Clone)]
pub struct Markdown {
    /// Target file (`-`: standard output, printed by the caller).
    pub path: PathBuf,
}

impl Writer for Markdown {
    /// One file when the document has a page, none otherwise.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        Ok(doc
            .page
            .iter()
            .map(|p| Rendered {
                name: self.path.clone(),
                bytes: page_text(p).into_bytes(),
            })
            .collect())
    }
}

/// The Markdown text of `page`: blocks separated by one blank line, each
/// line ending with a newline.
pub fn page_text(page: &Page) -> String {
    let mut out = String::new();
    for (i, block) in page.blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match block {
            Block::Heading { level, text } => {
                out.push_str(&"#".repeat(*level));
                out.push(' ');
                out.push_str(text);
                out.push('\n');
            }
            Block::Paragraph(lines) => push_lines(&mut out, lines, ""),
            Block::Bullets(items) => push_lines(&mut out, items, "- "),
            Block::Data(d) => out.push_str(&data_table(d)),
            Block::Grid(g) => out.push_str(&grid(g)),
        }
    }
    if page.trailing_blank {
        out.push('\n');
    }
    out
}

/// Appends each line after `prefix`, with a newline.
fn push_lines(out: &mut String, lines: &[String], prefix: &str) {
    for l in lines {
        out.push_str(prefix);
        out.push_str(l);
        out.push('\n');
    }
}

/// A Markdown table of a [`DataTable`]: `| --- |` rules, every column.
///
/// Cells are spelled by [`DataTable::cell_text`] (rounded by what the
/// column measures; NaN as an empty cell). Text and Python reprs have line
/// breaks turned into spaces, are cut to 80 characters with `…`, and have
/// `|` escaped. Columns whose cells are all numbers (ignoring `Null`
/// cells, counting a NaN float as a number, and with at least one number)
/// are right-aligned. Empty when the table has no columns.
fn data_table(d: &DataTable) -> String {
    let t = &d.table;
    if t.ncols() == 0 {
        return String::new();
    }
    let mut out = String::new();
    push_row(&mut out, t.columns.iter().map(|c| escape_text(&c.name)));
    push_row(
        &mut out,
        t.columns
            .iter()
            .map(|c| if is_numeric(&c.values) { "---:" } else { "---" }.to_string()),
    );
    for row in 0..t.nrows() {
        push_row(
            &mut out,
            (0..t.ncols()).map(|col| escape_text(&d.cell_text(row, col))),
        );
    }
    out
}

/// A Markdown table of ready-made cells: `|---|` rules; an empty header
/// cell is written `| |`.
fn grid(g: &Grid) -> String {
    let mut out = String::from("|");
    for h in &g.header {
        if !h.is_empty() {
            out.push(' ');
            out.push_str(h);
        }
        out.push_str(" |");
    }
    out.push_str("\n|");
    for a in &g.align {
        out.push_str(match a {
            Align::Left => "---|",
            Align::Right => "---:|",
        });
    }
    out.push('\n');
    for r in &g.rows {
        push_row(&mut out, r.iter().cloned());
    }
    out
}

/// Appends `| a | b |` and a newline.
fn push_row(out: &mut String, cells: impl Iterator<Item = String>) {
    out.push('|');
    for cell in cells {
        out.push(' ');
        out.push_str(&cell);
        out.push_str(" |");
    }
    out.push('\n');
}

/// Whether `cells` hold only numbers (and at least one); `Null` is skipped.
fn is_numeric(cells: &[Value]) -> bool {
    let mut any = false;
    for cell in cells {
        match cell {
            Value::Int(_) | Value::Float(_) => any = true,
            Value::Null => {}
            Value::Bool(_) | Value::Text(_) | Value::Py(_) => return false,
        }
    }
    any
}

/// Text made safe for a table cell: line breaks become spaces, the result
/// is cut to [`MAX_TEXT_CHARS`], then `|` is escaped (after cutting, so an
/// escape is never split).
fn escape_text(s: &str) -> String {
    let one_line = s.replace("\r\n", " ").replace(['\n', '\r'], " ");
    truncate_text(&one_line, MAX_TEXT_CHARS).replace('|', "\\|")
}

/// Text for prose: line breaks become spaces, nothing else changes.
pub fn plain(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// Text for a table cell as inline code: one line, cut to `max_chars`,
/// with `|` escaped and backticks replaced (names like `foo<bar>` are not
/// read as HTML). Empty text stays empty.
pub fn code(s: &str, max_chars: usize) -> String {
    let one = s.replace("\r\n", " ").replace(['\n', '\r'], " ");
    let cut = truncate_text(&one, max_chars);
    if cut.is_empty() {
        return String::new();
    }
    format!("`{}`", cut.replace('`', "'").replace('|', "\\|"))
}

/// `s` limited to `max_chars` characters: longer text keeps its first
/// `max_chars - 1` characters followed by `…`. Never splits a character.
pub fn truncate_text(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        None => s.to_string(),
        Some(_) if max_chars == 0 => String::new(),
        Some(_) => {
            let keep = s
                .char_indices()
                .nth(max_chars - 1)
                .map_or(s.len(), |(i, _)| i);
            format!("{}…", &s[..keep])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Shown;
    use crate::table::Table;

    /// The Markdown of `columns` (labelled by their names) over the first
    /// `max_rows` rows of `t`.
    fn table(t: &Table, columns: &[&str], max_rows: usize) -> String {
        data_table(&picked(t, columns, max_rows))
    }

    fn picked(t: &Table, columns: &[&str], max_rows: usize) -> DataTable {
        let shown: Vec<Shown<'_>> = columns
            .iter()
            .map(|&name| Shown { name, label: name })
            .collect();
        DataTable::pick(t, &shown, max_rows)
    }

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn sample() -> Table {
        let mut s = Table::new("ops", &["name", "count", "ms", "flag", "note"]);
        s.push_row(vec![
            t("aten::mm"),
            Value::Int(12),
            Value::Float(1.23456),
            Value::Bool(true),
            t("a|b\nc"),
        ]);
        s.push_row(vec![
            t("aten::add"),
            Value::Null,
            Value::Float(f64::NAN),
            Value::Bool(false),
            Value::Null,
        ]);
        s.push_row(vec![
            t("hidden"),
            Value::Int(1),
            Value::Float(2.0),
            Value::Bool(false),
            Value::Null,
        ]);
        s
    }

    #[test]
    fn basic_table() {
        let md = table(&sample(), &["name", "missing", "count", "ms", "note"], 2);
        assert_eq!(
            md,
            "| name | count | ms | note |\n\
             | --- | ---: | ---: | --- |\n\
             | aten::mm | 12 | 1.23 | a\\|b c |\n\
             | aten::add |  |  |  |\n"
        );
    }

    #[test]
    fn bools_are_text_and_rounding() {
        let md = table(&sample(), &["flag", "ms"], 10);
        assert_eq!(
            md,
            "| flag | ms |\n| --- | ---: |\n| True | 1.23 |\n| False |  |\n| False | 2.00 |\n"
        );
    }

    #[test]
    fn labels_replace_sheet_names_and_measures_follow_the_sheet() {
        let mut s = Table::new("t", &["Percentage (%)", "operation_count"]);
        s.push_row(vec![Value::Float(12.345), Value::Int(71920)]);
        let d = DataTable::pick(
            &s,
            &[
                Shown {
                    name: "Percentage (%)",
                    label: "Share",
                },
                Shown {
                    name: "operation_count",
                    label: "Count",
                },
            ],
            5,
        );
        assert_eq!(
            data_table(&d),
            "| Share | Count |\n| ---: | ---: |\n| 12.3% | 71,920 |\n"
        );
    }

    #[test]
    fn nan_floats_count_as_numbers_nulls_do_not() {
        let mut s = Table::new("n", &["nan", "null", "repr"]);
        s.push_row(vec![
            Value::Float(f64::NAN),
            Value::Null,
            Value::Py("(1, 2)".into()),
        ]);
        assert_eq!(
            table(&s, &["nan", "null", "repr"], 5),
            "| nan | null | repr |\n| ---: | --- | --- |\n|  |  | (1, 2) |\n"
        );
    }

    #[test]
    fn no_columns_or_rows() {
        assert_eq!(table(&sample(), &["nope"], 5), "");
        assert_eq!(table(&sample(), &[], 5), "");
        // No rows shown: nothing proves the column numeric, so left-aligned.
        assert_eq!(table(&sample(), &["count"], 0), "| count |\n| --- |\n");
    }

    #[test]
    fn long_text_is_cut() {
        let mut s = Table::new("r", &["t"]);
        s.push_row(vec![t(&format!("{}|tail", "x".repeat(78)))]);
        // 79 kept characters: 78 x and the `|`, which is then escaped.
        let expected = format!("| t |\n| --- |\n| {}\\|… |\n", "x".repeat(78));
        assert_eq!(table(&s, &["t"], 5), expected);
    }

    #[test]
    fn truncation() {
        assert_eq!(truncate_text("hello", 5), "hello");
        assert_eq!(truncate_text("hello", 10), "hello");
        assert_eq!(truncate_text("hello!", 5), "hell…");
        assert_eq!(truncate_text("héllo wörld", 4), "hél…");
        assert_eq!(truncate_text("ab", 1), "…");
        assert_eq!(truncate_text("ab", 0), "");
        assert_eq!(truncate_text("", 0), "");
        assert_eq!(truncate_text("😀😀😀", 2), "😀…");
    }

    #[test]
    fn page_blocks_and_blank_lines() {
        let heading = |level, text: &str| Block::Heading {
            level,
            text: text.into(),
        };
        let mut page = Page {
            blocks: vec![
                heading(2, "Title"),
                Block::Paragraph(vec!["a".into(), "b".into()]),
                Block::Bullets(Vec::new()),
                heading(4, "T"),
                Block::Grid(Grid {
                    header: vec![String::new(), "op".into(), "ms".into()],
                    align: vec![Align::Left, Align::Left, Align::Right],
                    rows: vec![vec![String::new(), code("a|b`c", 100), "1.000".into()]],
                }),
                Block::Data(picked(&sample(), &["nope"], 5)),
                Block::Bullets(vec!["x".into()]),
            ],
            trailing_blank: false,
        };
        let body = "## Title\n\na\nb\n\n\n#### T\n\n| | op | ms |\n|---|---|---:|\n|  | `a\\|b'c` | 1.000 |\n\n\n- x\n";
        assert_eq!(page_text(&page), body);
        page.trailing_blank = true;
        assert_eq!(page_text(&page), format!("{body}\n"));
        let doc = Document::of_page(page);
        let files = Markdown {
            path: "s.md".into(),
        }
        .render(&doc)
        .unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].name, PathBuf::from("s.md"));
        assert!(
            Markdown { path: "-".into() }
                .render(&Document::default())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn inline_helpers() {
        assert_eq!(plain("a\r\nb|c"), "a  b|c");
        assert_eq!(code("", 5), "");
        assert_eq!(code("abcdefgh", 5), "`abcd…`");
    }

    #[test]
    fn line_breaks_become_spaces() {
        assert_eq!(escape_text("a\r\nb\rc\nd"), "a b c d");
    }
}
