//! GitHub-flavoured Markdown tables of [`Table`]s, for the human summaries
//! (report, collectives, compare).

use super::{Table, Value};

/// Longest text cell shown, in characters (longer ones end with `…`).
const MAX_TEXT_CHARS: usize = 80;

/// A Markdown table of `columns` (by name; unknown names are skipped) over
/// the first `max_rows` rows of `table`.
///
/// Floats are shown with `float_digits` decimals (NaN as an empty cell),
/// ints plainly, bools as `True` / `False`. Text and Python reprs have line
/// breaks turned into spaces, are cut to 80 characters with `…`, and have
/// `|` escaped. Columns whose shown cells are all numbers (ignoring `Null`
/// cells, counting a NaN float as a number, and with at least one number)
/// are right-aligned. Returns an empty string when none of the columns
/// exist.
pub fn table(table: &Table, columns: &[&str], max_rows: usize, float_digits: usize) -> String {
    let picked: Vec<(usize, &str)> = columns
        .iter()
        .filter_map(|&name| table.column_index(name).map(|i| (i, name)))
        .collect();
    if picked.is_empty() {
        return String::new();
    }
    let nrows = table.nrows().min(max_rows);

    let mut out = String::new();
    push_row(&mut out, picked.iter().map(|&(_, name)| escape_text(name)));
    push_row(
        &mut out,
        picked.iter().map(|&(i, _)| {
            let shown = &table.columns[i].values[..nrows];
            if is_numeric(shown) { "---:" } else { "---" }.to_string()
        }),
    );
    for r in 0..nrows {
        push_row(
            &mut out,
            picked
                .iter()
                .map(|&(i, _)| cell_text(table.value(r, i), float_digits)),
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

/// The Markdown text of one cell.
fn cell_text(cell: &Value, float_digits: usize) -> String {
    match cell {
        Value::Float(x) if x.is_nan() => String::new(),
        Value::Float(x) => format!("{x:.float_digits$}"),
        Value::Text(s) | Value::Py(s) => escape_text(s),
        other => other.csv_text(),
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
        let md = table(&sample(), &["name", "missing", "count", "ms", "note"], 2, 2);
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
        let md = table(&sample(), &["flag", "ms"], 10, 0);
        assert_eq!(
            md,
            "| flag | ms |\n| --- | ---: |\n| True | 1 |\n| False |  |\n| False | 2 |\n"
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
            table(&s, &["nan", "null", "repr"], 5, 1),
            "| nan | null | repr |\n| ---: | --- | --- |\n|  |  | (1, 2) |\n"
        );
    }

    #[test]
    fn no_columns_or_rows() {
        assert_eq!(table(&sample(), &["nope"], 5, 2), "");
        assert_eq!(table(&sample(), &[], 5, 2), "");
        // No rows shown: nothing proves the column numeric, so left-aligned.
        assert_eq!(table(&sample(), &["count"], 0, 2), "| count |\n| --- |\n");
    }

    #[test]
    fn long_text_is_cut() {
        let mut s = Table::new("r", &["t"]);
        s.push_row(vec![t(&format!("{}|tail", "x".repeat(78)))]);
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
