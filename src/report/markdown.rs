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
/// is cut to [`MAX_TEXT_CHARS`], then shown by [`name`] (as it is, or as a
/// code span when it holds markup; cut first, so an escape is never
/// split).
fn escape_text(s: &str) -> String {
    name(&truncate_text(&one_line(s), MAX_TEXT_CHARS), Place::Cell)
}

/// Where Markdown text goes: in a table cell a `|` ends the cell unless
/// escaped as `\|` (also inside a code span, as GitHub reads tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A table cell (or header).
    Cell,
    /// A heading, paragraph or bullet.
    Prose,
}

/// `s` on one line: line breaks become spaces.
fn one_line(s: &str) -> String {
    s.replace("\r\n", " ").replace(['\n', '\r'], " ")
}

/// Whether `s` reads as itself in Markdown: letters, digits and
/// punctuation that opens no inline construct (no emphasis, code, link,
/// image, HTML, entity, autolink, escape or table pipe): a `<` only before
/// what starts no tag or autolink (`kernel<4, 8>`), a `&` only before what
/// starts no entity (`float const&`), and no `_` that could open emphasis
/// before one that could close it, nor such a `*` ([`emphasis`]).
fn is_plain(s: &str) -> bool {
    let plain_char = |c: char| {
        c.is_ascii_alphanumeric()
            || " :.,-/()=+%;?'\"{}^<>&#_*[]!".contains(c)
            || (!c.is_ascii() && (c.is_alphanumeric() || "×µ…".contains(c)))
    };
    let starts_markup = |(c, next): (char, Option<char>)| match c {
        '<' => next.is_none_or(|n| n.is_ascii_alphabetic() || "/!?".contains(n)),
        '&' => next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#'),
        _ => false,
    };
    let mut pairs = s.chars().zip(s.chars().skip(1).map(Some).chain([None]));
    s.chars().all(plain_char)
        && !pairs.any(starts_markup)
        && !emphasis(s)
        && !s.starts_with(' ')
        && !s.ends_with(' ')
        && !["](", "][", "![", "://", "www."]
            .iter()
            .any(|p| s.contains(p))
}

/// Whether some run of `_` or `*` in `s` can open emphasis and a later
/// run of the same character can close it, by CommonMark's flanking rules
/// (`aten::_foreach_add_` renders in italics without its underscores;
/// `fused__to_copy`, inside a word, and `f(char*, int)`, with nothing to
/// open, do not).
fn emphasis(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    let space = |c: Option<&char>| c.is_none_or(|c| c.is_whitespace());
    let punct = |c: Option<&char>| c.is_some_and(|c| !c.is_alphanumeric() && !c.is_whitespace());
    let mut opener = [false; 2];
    let mut i = 0;
    while i < chars.len() {
        let d = chars[i];
        let Some(k) = ['_', '*'].iter().position(|&x| x == d) else {
            i += 1;
            continue;
        };
        let end = i + chars[i..].iter().take_while(|&&c| c == d).count();
        let (before, after) = (i.checked_sub(1).and_then(|j| chars.get(j)), chars.get(end));
        let left = !space(after) && (!punct(after) || space(before) || punct(before));
        let right = !space(before) && (!punct(before) || space(after) || punct(after));
        // `_` inside a word neither opens nor closes; `*` does.
        let (opens, closes) = if d == '_' {
            (
                left && (!right || punct(before)),
                right && (!left || punct(after)),
            )
        } else {
            (left, right)
        };
        if opener[k] && closes {
            return true;
        }
        opener[k] |= opens;
        i = end;
    }
    false
}

/// `s` as a CommonMark code span, shown exactly as it is (line breaks as
/// spaces): the fence is one backtick longer than the longest run of
/// backticks inside, a space pads each side when the text starts or ends
/// with a backtick or with spaces on both sides (CommonMark strips one
/// from each side), and in a table cell `|` is escaped. Empty text stays
/// empty. Every name views put in Markdown as code goes through here.
pub fn code_span(s: &str, place: Place) -> String {
    let one = one_line(s);
    if one.is_empty() {
        return String::new();
    }
    let (mut longest, mut run) = (0, 0);
    for c in one.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = one.starts_with('`')
        || one.ends_with('`')
        || (one.starts_with(' ') && one.ends_with(' ') && one.chars().any(|c| c != ' '));
    let pad = if pad { " " } else { "" };
    let body = match place {
        Place::Cell => one.replace('|', "\\|"),
        Place::Prose => one,
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// A name (an op, kernel, file, tag, GPU, category: any text from a trace
/// or a user) as Markdown that shows it literally: as it is when it holds
/// no markup (ordinary names), else as a [`code_span`].
pub fn name(s: &str, place: Place) -> String {
    let one = one_line(s);
    if is_plain(&one) {
        one
    } else {
        code_span(&one, place)
    }
}

/// A sentence holding names (a gate's reason) shown literally: as it is
/// when it holds no markup, else with each character that could start
/// markup escaped by a backslash (CommonMark's escapes of ASCII
/// punctuation).
pub fn text(s: &str) -> String {
    let one = one_line(s);
    if is_plain(&one) {
        return one;
    }
    let mut out = String::with_capacity(one.len() + 8);
    for c in one.chars() {
        if "\\`*_[]<>&|~$!#".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text for a table cell as inline code: one line, cut to `max_chars`,
/// then a [`code_span`]. Empty text stays empty.
pub fn code(s: &str, max_chars: usize) -> String {
    code_span(&truncate_text(&one_line(s), max_chars), Place::Cell)
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
             | aten::mm | 12 | 1.23 | `a\\|b c` |\n\
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
        // 79 kept characters: 78 x and the `|`, which is then escaped
        // inside a code span.
        let expected = format!("| t |\n| --- |\n| `{}\\|…` |\n", "x".repeat(78));
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
        let body = "## Title\n\na\nb\n\n\n#### T\n\n| | op | ms |\n|---|---|---:|\n|  | ``a\\|b`c`` | 1.000 |\n\n\n- x\n";
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
        assert_eq!(code("", 5), "");
        assert_eq!(code("abcdefgh", 5), "`abcd…`");
    }

    #[test]
    fn code_spans_show_any_text_literally() {
        let cell = |s| code_span(s, Place::Cell);
        assert_eq!(cell("aten::mm"), "`aten::mm`");
        assert_eq!(cell("a`b"), "``a`b``");
        assert_eq!(cell("a``b`"), "``` a``b` ```");
        assert_eq!(cell("`"), "`` ` ``");
        assert_eq!(cell("``"), "``` `` ```");
        assert_eq!(cell(" a "), "`  a  `");
        assert_eq!(cell("   "), "`   `");
        assert_eq!(cell("a|b"), "`a\\|b`");
        assert_eq!(code_span("a|b", Place::Prose), "`a|b`");
        assert_eq!(cell("a\nb\r\nc"), "`a b c`");
        assert_eq!(cell(""), "");
    }

    #[test]
    fn names_are_plain_unless_they_hold_markup() {
        for plain in [
            "aten::addmm",
            "aten::copy_",
            "aten::_to_copy",
            "triton_poi_fused__unsafe_view_mul_silu_2",
            "hipGraphLaunch->triton_poi_fused__to_copy_1 (Synthetic Op)",
            "nn.Module: Linear_0",
            "Memcpy DtoH (Device -> Pinned)",
            "32, 4×16, 16×32",
            "((512,), [1, 2])",
            "t.json",
            "it's \"q\"",
            "void k<4, relu_functor>(int)",
            "f(float const&, int)",
            "k<16, long>(char*, char const*)",
        ] {
            assert_eq!(name(plain, Place::Cell), plain);
        }
        for (markup, shown) in [
            (
                "<img src=x onerror=alert(1)>",
                "`<img src=x onerror=alert(1)>`",
            ),
            ("[x](https://e.com)", "`[x](https://e.com)`"),
            ("a|b", "`a\\|b`"),
            ("a`b", "``a`b``"),
            ("*bold*", "`*bold*`"),
            ("_foo_", "`_foo_`"),
            ("aten::_foreach_add_", "`aten::_foreach_add_`"),
            ("__init__", "`__init__`"),
            ("f(a *b* c)", "`f(a *b* c)`"),
            ("k<float>", "`k<float>`"),
            ("k</b>", "`k</b>`"),
            ("k<!--", "`k<!--`"),
            ("a &#65;", "`a &#65;`"),
            ("a&amp;b", "`a&amp;b`"),
            ("a\\*b", "`a\\*b`"),
            ("x ", "`x `"),
            ("https://e.com", "`https://e.com`"),
            ("~~gone~~", "`~~gone~~`"),
        ] {
            assert_eq!(name(markup, Place::Cell), shown, "{markup}");
        }
        assert_eq!(name("a\nb", Place::Prose), "a b");
    }

    #[test]
    fn sentences_escape_markup_only_when_they_hold_some() {
        let reason = "GPU busy time got slower: 1.000 ms → 2.000 ms (+1.000 ms, +100.0%)";
        assert_eq!(text(reason), reason);
        assert_eq!(text("op <b>|x* got slower"), "op \\<b\\>\\|x\\* got slower");
    }

    #[test]
    fn line_breaks_become_spaces() {
        assert_eq!(escape_text("a\r\nb\rc\nd"), "a b c d");
    }
}
