//! A table as Markdown in the layout pandas' `DataFrame.to_markdown(index=False)`
//! gives it (tabulate's `pipe` format), so that a page the reference writes
//! with it can be written byte for byte.
//!
//! Each column gets a type (the most general of its cells': bool < int <
//! float < text, empty cells counting as none, text that reads as a number
//! counting as that number), numbers are written as ints or with `%g`,
//! numeric columns are aligned on the decimal point and to the right, text
//! to the left, every column at least two wider than its header. Text cells
//! and headers go through [`markdown::name`], which leaves ordinary names as
//! they are.

use crate::pyfmt::float_g;
use crate::report::markdown::{self, Place};
use crate::table::{Table, Value};

/// A column's type, least general first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Empty,
    Bool,
    Int,
    Float,
    Text,
}

/// Whether Python's `int()` reads `s` (whitespace around, a sign, `_`
/// between digits).
fn reads_as_int(s: &str) -> bool {
    crate::numeric::py_int(s).is_some()
}

/// Python's `float()` of `s`, for the text tabulate takes as a number.
fn read_float(s: &str) -> Option<f64> {
    let t = s.trim();
    let clean: String = t.chars().filter(|&c| c != '_').collect();
    if t.contains("__") || t.starts_with('_') || t.ends_with('_') {
        return None;
    }
    clean.parse().ok()
}

/// Whether tabulate takes text `s` for a number: `float()` reads it, and
/// it does not overflow to infinity (the words `inf`, `-inf`, `nan` do
/// count).
fn reads_as_number(s: &str) -> bool {
    match read_float(s) {
        Some(x) if x.is_finite() => true,
        Some(_) => ["inf", "-inf", "nan"].contains(&s.to_lowercase().as_str()),
        None => false,
    }
}

/// `1,234` or `1,234.5`: digits in groups of three.
fn has_thousands(s: &str) -> bool {
    let t = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let groups: Vec<&str> = int.split(',').collect();
    groups.len() > 1
        && (1..=3).contains(&groups[0].len())
        && groups[1..].iter().all(|g| g.len() == 3)
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()))
        && frac.bytes().all(|b| b.is_ascii_digit())
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Empty,
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::Text(s) | Value::Py(s) => text_kind(s),
    }
}

fn text_kind(s: &str) -> Kind {
    if s.is_empty() {
        Kind::Empty
    } else if s == "True" || s == "False" {
        Kind::Bool
    } else if reads_as_int(s) || (has_thousands(s) && !s.contains('.')) {
        Kind::Int
    } else if reads_as_number(s) || has_thousands(s) {
        Kind::Float
    } else {
        Kind::Text
    }
}

/// A cell's text in a column of type `k`.
fn cell_text(v: &Value, k: Kind) -> String {
    match v {
        Value::Null => String::new(),
        Value::Text(s) | Value::Py(s) if s.is_empty() => String::new(),
        Value::Float(x) if k == Kind::Float => float_g(*x),
        Value::Int(i) if k == Kind::Float => float_g(*i as f64),
        Value::Text(s) | Value::Py(s) if k == Kind::Float => {
            match read_float(&s.replace(',', "")) {
                Some(x) => float_g(x),
                None => s.to_string(),
            }
        }
        Value::Float(x) => crate::pyfmt::float_repr(*x),
        other => other.py_str(),
    }
}

/// Digits after the decimal point (or the exponent mark) of a number's
/// text, -1 for an integer or a non-number.
fn after_point(s: &str) -> i64 {
    if !(reads_as_number(s) || has_thousands(s)) || reads_as_int(s) {
        return -1;
    }
    let pos = s.rfind('.').or_else(|| s.to_lowercase().rfind('e'));
    pos.map_or(-1, |p| (s[p..].chars().count() - 1) as i64)
}

fn width(s: &str) -> usize {
    s.chars().count()
}

/// `t` as pandas' `to_markdown(index=False)` writes it (no final newline).
pub fn pandas_markdown(t: &Table) -> String {
    let mut headers = Vec::new();
    let mut columns: Vec<Vec<String>> = Vec::new();
    let mut numeric = Vec::new();
    for c in &t.columns {
        let k = c.values.iter().map(kind).fold(Kind::Bool, Ord::max);
        let is_num = matches!(k, Kind::Int | Kind::Float);
        let mut cells: Vec<String> = c.values.iter().map(|v| cell_text(v, k)).collect();
        if is_num {
            let decimals: Vec<i64> = cells.iter().map(|s| after_point(s)).collect();
            let most = decimals.iter().copied().max().unwrap_or(-1);
            for (s, d) in cells.iter_mut().zip(decimals) {
                s.push_str(&" ".repeat((most - d) as usize));
            }
        } else {
            for s in &mut cells {
                *s = markdown::name(s.trim(), Place::Cell);
            }
        }
        let header = markdown::name(&c.name, Place::Cell);
        headers.push(header);
        columns.push(cells);
        numeric.push(is_num);
    }
    let pad = |s: &str, w: usize, right: bool| {
        let fill = " ".repeat(w.saturating_sub(width(s)));
        if right {
            format!("{fill}{s}")
        } else {
            format!("{s}{fill}")
        }
    };
    let widths: Vec<usize> = headers
        .iter()
        .zip(&columns)
        .map(|(h, c)| {
            c.iter()
                .map(|s| width(s))
                .chain([width(h) + 2])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
    let mut out = vec![line(
        headers
            .iter()
            .zip(&widths)
            .zip(&numeric)
            .map(|((h, &w), &r)| pad(h, w, r))
            .collect(),
    )];
    let rule: Vec<String> = widths
        .iter()
        .zip(&numeric)
        .map(|(&w, &r)| {
            let dashes = "-".repeat(w + 1);
            if r {
                format!("{dashes}:")
            } else {
                format!(":{dashes}")
            }
        })
        .collect();
    out.push(format!("|{}|", rule.join("|")));
    for i in 0..t.nrows() {
        out.push(line(
            columns
                .iter()
                .zip(&widths)
                .zip(&numeric)
                .map(|((c, &w), &r)| pad(&c[i], w, r))
                .collect(),
        ));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_align_on_the_point_and_text_to_the_left() {
        let t = Table::from_rows(
            "t",
            &["name", "Count", "ms"],
            vec![
                vec![
                    "Broadphase Collision".into(),
                    Value::Int(20),
                    Value::Float(0.2),
                ],
                vec!["Other".into(), Value::Int(1), Value::Float(100.0)],
                vec!["x".into(), Value::Int(300), Value::Float(0.005)],
            ],
        );
        // Written by pandas 3.1 with tabulate 0.10 from the same frame.
        let want = "\
| name                 |   Count |      ms |
|:---------------------|--------:|--------:|
| Broadphase Collision |      20 |   0.2   |
| Other                |       1 | 100     |
| x                    |     300 |   0.005 |";
        assert_eq!(pandas_markdown(&t), want);
    }

    #[test]
    fn text_that_reads_as_a_number_is_one() {
        assert_eq!(text_kind("1_000"), Kind::Int);
        assert_eq!(text_kind("1,000"), Kind::Int);
        assert_eq!(text_kind("1e5"), Kind::Float);
        assert_eq!(text_kind("nan"), Kind::Float);
        assert_eq!(text_kind("1e999"), Kind::Text);
        assert_eq!(text_kind("46.0%"), Kind::Text);
        assert_eq!(text_kind("True"), Kind::Bool);
        assert_eq!(after_point("1.23457e+06"), 9);
        assert_eq!(after_point("1e+06"), 3);
        assert_eq!(after_point("100"), -1);
    }

    #[test]
    fn markup_in_names_is_shown_literally() {
        let t = Table::from_rows("t", &["Name"], vec![vec!["a|b*c*".into()]]);
        let md = pandas_markdown(&t);
        assert!(md.contains("`a\\|b*c*`"), "{md}");
    }
}
