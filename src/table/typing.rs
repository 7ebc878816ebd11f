//! pandas' column typing rules, in one place.
//!
//! Two directions:
//!
//! - building a column from Python objects ([`widen_ints`]): pandas infers
//!   a dtype for the whole column, and a purely numeric column holding a
//!   missing value or a float is float64, so its ints print as floats
//!   (`8` becomes `8.0`);
//! - reading a report back ([`type_column`]): values read from a CSV field
//!   or an Excel cell get the type `read_csv` / `read_excel` would give
//!   them, decided per column. A column is `Int` when every value is an
//!   integer and none is missing, `Float` when every value is a number
//!   (missing ones allowed; integers then become floats), `Bool` when every
//!   value is `True`/`False`, and text otherwise. pandas' default
//!   missing-value spellings ([`NA_STRINGS`]) are missing in every column.
//!
//! Excel has no integer type, so (as `read_excel` does) a number cell with
//! an integral value counts as an integer ([`excel_number`]): a column of
//! integral floats reads back as ints from a workbook but as floats from a
//! CSV (`0.0`).

use super::{Column, Table, Value};

/// pandas' inference for a column built from Python objects: when every
/// present value is a number (`Int` or `Float`; bools are not) and any
/// value is missing or a float, the column is float64 and its ints become
/// floats. Any other column is left as it is. `values` is the column's
/// cells, top to bottom (a slice, or a field picked from each row).
pub fn widen_ints<'a>(values: impl IntoIterator<Item = &'a mut Value>) {
    let mut values: Vec<&mut Value> = values.into_iter().collect();
    let (mut has_int, mut widen) = (false, false);
    for v in values.iter() {
        match v {
            Value::Int(_) => has_int = true,
            Value::Float(_) | Value::Null => widen = true,
            Value::Bool(_) | Value::Text(_) | Value::Py(_) => return,
        }
    }
    if has_int && widen {
        for v in values.iter_mut() {
            if let Value::Int(i) = **v {
                **v = Value::Float(i as f64);
            }
        }
    }
}

/// A table built the way `pd.DataFrame` builds one from columns of Python
/// objects: each column typed by [`widen_ints`].
pub fn dataframe(name: &str, mut columns: Vec<Column>) -> Table {
    for c in &mut columns {
        widen_ints(&mut c.values);
    }
    Table::from_columns(name, columns)
}

/// pandas' default strings for a missing value (`read_csv` `na_values`).
pub const NA_STRINGS: &[&str] = &[
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// One value as read from a report, before its column's type is decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// Missing (a field past the end of a short record, an empty or error
    /// Excel cell).
    Missing,
    /// Text to be typed (every CSV field; Excel string cells).
    Text(String),
    /// Text held once and shared by every cell that repeats it (an Excel
    /// shared string): typed as [`Raw::Text`], never copied.
    Shared(std::sync::Arc<str>),
    /// An Excel number cell.
    Number(f64),
    /// An Excel boolean cell.
    Bool(bool),
}

/// What a text value reads as, if it is not plain text.
enum Token {
    Int(i64),
    Float(f64),
    Bool(bool),
    Other,
}

/// Classifies `s` as pandas' C parser does for a column it types.
fn token(s: &str) -> Token {
    match s {
        "True" | "TRUE" | "true" => return Token::Bool(true),
        "False" | "FALSE" | "false" => return Token::Bool(false),
        _ => {}
    }
    let t = s.trim();
    if t.is_empty() {
        return Token::Other;
    }
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(i) = t.parse::<i64>()
    {
        return Token::Int(i);
    }
    // Rust accepts a few spellings pandas does not ("infinity" with other
    // casings are also pandas floats, so only the NaN words need care; they
    // are missing values and never reach here).
    match t.parse::<f64>() {
        Ok(x) if !x.is_nan() => Token::Float(x),
        _ => Token::Other,
    }
}

/// An Excel number as pandas reads it: integral values become ints.
pub fn excel_number(x: f64) -> Value {
    // Beyond ±2^63 an f64 has no i64 equivalent; keep the float.
    if x.fract() == 0.0 && x.abs() < 9.2e18 {
        Value::Int(x as i64)
    } else {
        Value::Float(x)
    }
}

/// Types one column of values read from a report (see the module
/// documentation). Missing values are `Null`.
pub fn type_column(raw: Vec<Raw>) -> Vec<Value> {
    let raw: Vec<Raw> = raw
        .into_iter()
        .map(|r| match r {
            Raw::Text(s) if NA_STRINGS.contains(&s.as_str()) => Raw::Missing,
            Raw::Shared(s) if NA_STRINGS.contains(&&*s) => Raw::Missing,
            Raw::Number(x) if x.is_nan() => Raw::Missing,
            r => r,
        })
        .collect();
    if let Some(numbers) = as_numbers(&raw) {
        return numbers;
    }
    if let Some(bools) = as_bools(&raw) {
        return bools;
    }
    // Text (an object column): text stays verbatim; typed Excel cells keep
    // their type, as pandas keeps the Python objects.
    raw.into_iter()
        .map(|r| match r {
            Raw::Missing => Value::Null,
            Raw::Text(s) => Value::Text(s.into()),
            Raw::Shared(s) => Value::Text(s),
            Raw::Number(x) => excel_number(x),
            Raw::Bool(b) => Value::Bool(b),
        })
        .collect()
}

/// The column as numbers, when every present value is one: ints when all
/// are integers and none is missing, floats otherwise.
fn as_numbers(raw: &[Raw]) -> Option<Vec<Value>> {
    let mut out: Vec<Value> = Vec::with_capacity(raw.len());
    let (mut all_int, mut any_missing) = (true, false);
    for r in raw {
        let v = match r {
            Raw::Missing => {
                any_missing = true;
                Value::Null
            }
            Raw::Number(x) => excel_number(*x),
            Raw::Text(_) | Raw::Shared(_) => match token(raw_text(r)) {
                Token::Int(i) => Value::Int(i),
                Token::Float(x) => Value::Float(x),
                Token::Bool(_) | Token::Other => return None,
            },
            Raw::Bool(_) => return None,
        };
        all_int &= !matches!(v, Value::Float(_));
        out.push(v);
    }
    // Ints only when every value is an int and none is missing.
    if !all_int || any_missing {
        for v in out.iter_mut() {
            if let Value::Int(i) = *v {
                *v = Value::Float(i as f64);
            }
        }
    }
    Some(out)
}

/// The text of a [`Raw::Text`] or [`Raw::Shared`] value ("" otherwise).
fn raw_text(r: &Raw) -> &str {
    match r {
        Raw::Text(s) => s,
        Raw::Shared(s) => s,
        _ => "",
    }
}

/// The column as booleans, when every present value is `True`/`False`.
fn as_bools(raw: &[Raw]) -> Option<Vec<Value>> {
    raw.iter()
        .map(|r| match r {
            Raw::Missing => Some(Value::Null),
            Raw::Bool(b) => Some(Value::Bool(*b)),
            Raw::Text(_) | Raw::Shared(_) => match token(raw_text(r)) {
                Token::Bool(b) => Some(Value::Bool(b)),
                _ => None,
            },
            Raw::Number(_) => None,
        })
        .collect()
}

/// Makes header names unique and non-empty the way pandas does: an empty
/// name at position i is `Unnamed: i`, a repeated name `x` becomes `x.1`,
/// `x.2`, … (renaming left to right: where a made-up name collides with a
/// later header, pandas 3 numbers differently; see the tests).
pub fn unique_headers(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (i, n) in names.into_iter().enumerate() {
        let base = if n.is_empty() {
            format!("Unnamed: {i}")
        } else {
            n
        };
        let mut name = base.clone();
        let mut k = 1;
        while out.contains(&name) {
            name = format!("{base}.{k}");
            k += 1;
        }
        out.push(name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn raw(fields: &[&str]) -> Vec<Raw> {
        fields.iter().map(|f| Raw::Text(f.to_string())).collect()
    }

    fn widened(mut v: Vec<Value>) -> Vec<Value> {
        widen_ints(&mut v);
        v
    }

    #[test]
    fn widen_like_pandas() {
        // From collectives/values.rs: pd.Series([8, None]) is float64.
        assert_eq!(
            widened(vec![Value::Int(8), Value::Null]),
            [Value::Float(8.0), Value::Null]
        );
        // pd.Series([8, "x", None]) is object: the int stays.
        assert_eq!(
            widened(vec![Value::Int(8), t("x"), Value::Null]),
            [Value::Int(8), t("x"), Value::Null]
        );
        // pd.Series([8, 9]) is int64.
        assert_eq!(
            widened(vec![Value::Int(8), Value::Int(9)]),
            [Value::Int(8), Value::Int(9)]
        );
        // pd.Series([8, 2.5]) is float64.
        assert_eq!(
            widened(vec![Value::Int(8), Value::Float(2.5)]),
            [Value::Float(8.0), Value::Float(2.5)]
        );
        // A NaN float is both missing and a float.
        assert_eq!(
            widened(vec![Value::Int(1), Value::Float(f64::NAN)]),
            [Value::Float(1.0), Value::Float(f64::NAN)]
        );
    }

    #[test]
    fn widen_leaves_object_columns() {
        // pd.Series([True, 1, None]) is object: bools are not numbers here.
        assert_eq!(
            widened(vec![Value::Bool(true), Value::Int(1), Value::Null]),
            [Value::Bool(true), Value::Int(1), Value::Null]
        );
        // Tuples (reprs) make an object column too.
        assert_eq!(
            widened(vec![Value::Py("(1,)".into()), Value::Int(1), Value::Null]),
            [Value::Py("(1,)".into()), Value::Int(1), Value::Null]
        );
        // No ints: nothing to do; all missing stays missing.
        assert_eq!(
            widened(vec![Value::Null, Value::Float(1.0)]),
            [Value::Null, Value::Float(1.0)]
        );
        assert_eq!(widened(vec![Value::Null]), [Value::Null]);
        assert_eq!(widened(vec![]), Vec::<Value>::new());
    }

    #[test]
    fn widen_a_field_of_rows() {
        let mut rows = [(1, Value::Int(8)), (2, Value::Null)];
        widen_ints(rows.iter_mut().map(|r| &mut r.1));
        assert_eq!(rows[0].1, Value::Float(8.0));
        let tb = dataframe(
            "d",
            vec![
                Column::new("a", vec![Value::Int(1), Value::Float(0.5)]),
                Column::new("b", vec![Value::Int(1), t("x")]),
            ],
        );
        assert_eq!(tb.columns[0].values, [Value::Float(1.0), Value::Float(0.5)]);
        assert_eq!(tb.columns[1].values, [Value::Int(1), t("x")]);
    }

    #[test]
    fn column_types_like_read_csv() {
        // From report/read.rs: i,f,m,b,bm,t,n over two rows.
        let cols = [
            (["1", "2"], [Value::Int(1), Value::Int(2)]),
            (["1.5", "2"], [Value::Float(1.5), Value::Float(2.0)]),
            (["1", ""], [Value::Float(1.0), Value::Null]),
            (["True", "False"], [Value::Bool(true), Value::Bool(false)]),
            (["True", ""], [Value::Bool(true), Value::Null]),
            // A numeric-looking value in a text column stays text.
            (["abc", "1"], [t("abc"), t("1")]),
            (["", ""], [Value::Null, Value::Null]),
        ];
        for (fields, want) in cols {
            assert_eq!(type_column(raw(&fields)), want, "{fields:?}");
        }
    }

    #[test]
    fn na_spellings_are_missing_everywhere() {
        for na in NA_STRINGS {
            assert_eq!(
                type_column(raw(&[na, "x"])),
                [Value::Null, t("x")],
                "{na:?}"
            );
            assert_eq!(
                type_column(raw(&[na, "3"])),
                [Value::Null, Value::Float(3.0)],
                "{na:?}"
            );
        }
        // Other casings are text ("NONE" is not an NA spelling).
        assert_eq!(type_column(raw(&["NONE"])), [t("NONE")]);
    }

    #[test]
    fn number_tokens() {
        // pandas' C parser: signs, exponents and surrounding spaces.
        assert_eq!(
            type_column(raw(&["+3", "-4", " 5 "])),
            [Value::Int(3), Value::Int(-4), Value::Int(5)]
        );
        assert_eq!(
            type_column(raw(&["1e-05", "1.5e+16", "-3"])),
            [Value::Float(1e-5), Value::Float(1.5e16), Value::Float(-3.0)]
        );
        assert_eq!(
            type_column(raw(&["inf", "-inf"])),
            [Value::Float(f64::INFINITY), Value::Float(f64::NEG_INFINITY)]
        );
        // Too big for int64: today's reader makes it a float (pandas 3.1
        // keeps a Python int in an object column; kept as it was).
        assert_eq!(
            type_column(raw(&["99999999999999999999"])),
            [Value::Float(1e20)]
        );
        // Bool spellings pandas accepts, in every casing it accepts.
        assert_eq!(
            type_column(raw(&["TRUE", "false", "true", "FALSE"])),
            [
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false)
            ]
        );
        // A bool among numbers makes the column text.
        assert_eq!(type_column(raw(&["True", "1"])), [t("True"), t("1")]);
        assert_eq!(type_column(raw(&["-", "+"])), [t("-"), t("+")]);
    }

    #[test]
    fn excel_numbers() {
        // From report/read.rs.
        let col = type_column(vec![Raw::Number(3.0), Raw::Number(4.0)]);
        assert_eq!(col, [Value::Int(3), Value::Int(4)]);
        let col = type_column(vec![Raw::Number(3.0), Raw::Missing]);
        assert_eq!(col, [Value::Float(3.0), Value::Null]);
        let col = type_column(vec![Raw::Number(3.0), Raw::Text("x".into())]);
        assert_eq!(col, [Value::Int(3), t("x")]);
        let col = type_column(vec![Raw::Number(2.5), Raw::Number(f64::NAN)]);
        assert_eq!(col, [Value::Float(2.5), Value::Null]);
        let col = type_column(vec![Raw::Bool(true), Raw::Text("False".into())]);
        assert_eq!(col, [Value::Bool(true), Value::Bool(false)]);
        let col = type_column(vec![Raw::Bool(true), Raw::Number(1.0)]);
        assert_eq!(col, [Value::Bool(true), Value::Int(1)]);
        assert_eq!(excel_number(-0.0), Value::Int(0));
        assert_eq!(excel_number(1e19), Value::Float(1e19));
        assert_eq!(excel_number(f64::INFINITY), Value::Float(f64::INFINITY));
    }

    #[test]
    fn headers_made_unique() {
        // From report/read.rs: ",a,a" reads as Unnamed: 0, a, a.1.
        let h = |v: &[&str]| unique_headers(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(h(&["", "a", "a"]), ["Unnamed: 0", "a", "a.1"]);
        // A name colliding with a made-up one: today's reader renames in one
        // pass (pandas 3.1 gives a, a.2, a.1, a.3; kept as it was).
        assert_eq!(h(&["a", "a", "a.1", "a"]), ["a", "a.1", "a.1.1", "a.2"]);
        assert_eq!(h(&["x", ""]), ["x", "Unnamed: 1"]);
    }
}
