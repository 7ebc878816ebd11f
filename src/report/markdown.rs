//! GitHub-flavoured Markdown tables for human-readable summaries.

use super::{Cell, Sheet};

/// Longest text cell shown, in characters (longer ones end with `…`).
const MAX_TEXT_CHARS: usize = 80;

/// A Markdown table of `columns` (by name; unknown names are skipped) over
/// the first `max_rows` rows of `sheet`.
///
/// Floats are shown with `float_digits` decimals (NaN as an empty cell),
/// ints plainly, bools as `True` / `False`. Text has line breaks turned into
/// spaces, is cut to 80 characters with `…`, and has `|` escaped. Columns
/// whose shown cells are all numbers (ignoring empty ones, and with at least
/// one number) are right-aligned. Returns an empty string when none of the
/// columns exist.
pub fn table(sheet: &Sheet, columns: &[&str], max_rows: usize, float_digits: usize) -> String {
    let picked: Vec<(usize, &str)> = columns
        .iter()
        .filter_map(|&name| sheet.column(name).map(|i| (i, name)))
        .collect();
    if picked.is_empty() {
        return String::new();
    }
    let rows = &sheet.rows[..sheet.rows.len().min(max_rows)];

    let mut out = String::new();
    push_row(&mut out, picked.iter().map(|&(_, name)| escape_text(name)));
    push_row(
        &mut out,
        picked
            .iter()
            .map(|&(i, _)| if is_numeric(rows, i) { "---:" } else { "---" }.to_string()),
    );
    for row in rows {
        push_row(
            &mut out,
            picked.iter().map(|&(i, _)| {
                row.get(i)
                    .map_or_else(String::new, |c| cell_text(c, float_digits))
            }),
        );
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

/// Whether column `i` holds only numbers (and at least one) in `rows`.
fn is_numeric(rows: &[Vec<Cell>], i: usize) -> bool {
    let mut any = false;
    for cell in rows.iter().filter_map(|r| r.get(i)) {
        match cell {
            Cell::Int(_) | Cell::Float(_) => any = true,
            Cell::Empty => {}
            Cell::Bool(_) | Cell::Text(_) => return false,
        }
    }
    any
}

/// The Markdown text of one cell.
fn cell_text(cell: &Cell, float_digits: usize) -> String {
    match cell {
        Cell::Empty => String::new(),
        Cell::Int(i) => i.to_string(),
        Cell::Float(x) if x.is_nan() => String::new(),
        Cell::Float(x) => format!("{x:.float_digits$}"),
        Cell::Bool(true) => "True".to_string(),
        Cell::Bool(false) => "False".to_string(),
        Cell::Text(s) => escape_text(s),
    }
}

/// Text made safe for a table cell: line breaks become spaces, the result
/// is cut to [`MAX_TEXT_CHARS`], then `|` is escaped (after cutting, so an
/// escape is never split).
fn escape_text(s: &str) -> String {
    let one_line = s.replace("\r\n", " ").replace(['\n', '\r'], " ");
    truncate_text(&one_line, MAX_TEXT_CHARS).replace('|', "\\|")
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

    fn sheet() -> Sheet {
        let mut s = Sheet::new("ops", &["name", "count", "ms", "flag", "note"]);
        s.rows.push(vec![
            Cell::Text("aten::mm".into()),
            Cell::Int(12),
            Cell::Float(1.23456),
            Cell::Bool(true),
            Cell::Text("a|b\nc".into()),
        ]);
        s.rows.push(vec![
            Cell::Text("aten::add".into()),
            Cell::Empty,
            Cell::Float(f64::NAN),
            Cell::Bool(false),
            Cell::Empty,
        ]);
        s.rows.push(vec![
            Cell::Text("hidden".into()),
            Cell::Int(1),
            Cell::Float(2.0),
            Cell::Bool(false),
            Cell::Empty,
        ]);
        s
    }

    #[test]
    fn basic_table() {
        let t = table(&sheet(), &["name", "missing", "count", "ms", "note"], 2, 2);
        assert_eq!(
            t,
            "| name | count | ms | note |\n\
             | --- | ---: | ---: | --- |\n\
             | aten::mm | 12 | 1.23 | a\\|b c |\n\
             | aten::add |  |  |  |\n"
        );
    }

    #[test]
    fn bools_are_text_and_rounding() {
        let t = table(&sheet(), &["flag", "ms"], 10, 0);
        assert_eq!(
            t,
            "| flag | ms |\n| --- | ---: |\n| True | 1 |\n| False |  |\n| False | 2 |\n"
        );
    }

    #[test]
    fn no_columns_or_rows() {
        assert_eq!(table(&sheet(), &["nope"], 5, 2), "");
        assert_eq!(table(&sheet(), &[], 5, 2), "");
        // No rows shown: nothing proves the column numeric, so left-aligned.
        assert_eq!(table(&sheet(), &["count"], 0, 2), "| count |\n| --- |\n");
    }

    #[test]
    fn ragged_rows_do_not_panic() {
        let mut s = Sheet::new("r", &["a", "b"]);
        s.rows.push(vec![Cell::Int(1)]);
        assert_eq!(
            table(&s, &["a", "b"], 5, 1),
            "| a | b |\n| ---: | --- |\n| 1 |  |\n"
        );
    }

    #[test]
    fn long_text_is_cut() {
        let mut s = Sheet::new("r", &["t"]);
        s.rows
            .push(vec![Cell::Text(format!("{}|tail", "x".repeat(78)))]);
        // 79 kept characters: 78 x and the `|`, which is then escaped.
        let expected = format!("| t |\n| --- |\n| {}\\|… |\n", "x".repeat(78));
        assert_eq!(table(&s, &["t"], 5, 1), expected);
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
    fn line_breaks_become_spaces() {
        assert_eq!(escape_text("a\r\nb\rc\nd"), "a b c d");
    }
}
