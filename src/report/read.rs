//! Reading reports back: a folder of per-sheet CSVs or an `.xlsx` workbook,
//! written by `tracelens report` or by the reference.
//!
//! Cells get the types pandas would give them, because the comparison
//! (`analysis::compare`) reproduces pandas arithmetic and rendering on top:
//! types are inferred per **column**, as `read_csv` does. A column is
//! [`Cell::Int`] when every value is an integer and none is missing,
//! [`Cell::Float`] when every value is a number (missing ones allowed,
//! integers then become floats), [`Cell::Bool`] when every value is
//! `True`/`False`, and text otherwise. pandas' default missing-value spellings
//! (empty, `nan`, `NaN`, `None`, `NULL`, `N/A`, …) are [`Cell::Empty`] in
//! every column.
//!
//! Excel has no integer type, so (as pandas' `read_excel` does) a number
//! cell with an integral value counts as an integer; a column of integral
//! floats therefore reads back as ints from a workbook but as floats from a
//! CSV (`0.0`).

use super::{Cell, Sheet};
use anyhow::{Context, Result, bail};
use std::fs;
use std::io::{Read, Seek};
use std::path::Path;

/// pandas' default strings for a missing value (`read_csv` `na_values`).
const NA_STRINGS: &[&str] = &[
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// One value as read, before the column's type is decided.
#[derive(Debug, Clone, PartialEq)]
enum Raw {
    /// Missing (empty field, empty cell, an NA spelling).
    Missing,
    /// Text to be typed (every CSV field; Excel string cells).
    Text(String),
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

/// Types one column of raw values (see the module documentation).
fn type_column(raw: Vec<Raw>) -> Vec<Cell> {
    let raw: Vec<Raw> = raw
        .into_iter()
        .map(|r| match r {
            Raw::Text(s) if NA_STRINGS.contains(&s.as_str()) => Raw::Missing,
            Raw::Number(x) if x.is_nan() => Raw::Missing,
            r => r,
        })
        .collect();
    let any_missing = raw.contains(&Raw::Missing);

    // Numbers: every present value is a number.
    let mut numbers: Vec<Option<Cell>> = Vec::with_capacity(raw.len());
    let mut all_int = true;
    let mut numeric = true;
    for r in &raw {
        let cell = match r {
            Raw::Missing => None,
            Raw::Number(x) => Some(excel_number(*x)),
            Raw::Text(s) => match token(s) {
                Token::Int(i) => Some(Cell::Int(i)),
                Token::Float(x) => Some(Cell::Float(x)),
                _ => {
                    numeric = false;
                    break;
                }
            },
            Raw::Bool(_) => {
                numeric = false;
                break;
            }
        };
        if matches!(cell, Some(Cell::Float(_))) {
            all_int = false;
        }
        numbers.push(cell);
    }
    if numeric {
        let as_int = all_int && !any_missing;
        return numbers
            .into_iter()
            .map(|c| match c {
                None => Cell::Empty,
                Some(Cell::Int(i)) if !as_int => Cell::Float(i as f64),
                Some(c) => c,
            })
            .collect();
    }

    // Booleans: every present value is True/False.
    let bools: Option<Vec<Cell>> = raw
        .iter()
        .map(|r| match r {
            Raw::Missing => Some(Cell::Empty),
            Raw::Bool(b) => Some(Cell::Bool(*b)),
            Raw::Text(s) => match token(s) {
                Token::Bool(b) => Some(Cell::Bool(b)),
                _ => None,
            },
            Raw::Number(_) => None,
        })
        .collect();
    if let Some(cells) = bools {
        return cells;
    }

    // Text (an object column): text stays verbatim; typed Excel cells keep
    // their type, as pandas keeps the Python objects.
    raw.into_iter()
        .map(|r| match r {
            Raw::Missing => Cell::Empty,
            Raw::Text(s) => Cell::Text(s),
            Raw::Number(x) => excel_number(x),
            Raw::Bool(b) => Cell::Bool(b),
        })
        .collect()
}

/// An Excel number as pandas reads it: integral values become ints.
fn excel_number(x: f64) -> Cell {
    // Beyond ±2^63 an f64 has no i64 equivalent; keep the float.
    if x.fract() == 0.0 && x.abs() < 9.2e18 {
        Cell::Int(x as i64)
    } else {
        Cell::Float(x)
    }
}

/// Makes header names unique and non-empty the way pandas does: an empty
/// name at position i is `Unnamed: i`, a repeated name `x` becomes `x.1`,
/// `x.2`, …
fn fix_headers(names: Vec<String>) -> Vec<String> {
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

/// Builds a sheet from a header and rows of raw values (rows may be
/// shorter than the header; missing fields are missing values).
fn build_sheet(name: &str, header: Vec<String>, rows: Vec<Vec<Raw>>) -> Sheet {
    let width = header.len();
    let mut columns: Vec<Vec<Raw>> = (0..width).map(|_| Vec::with_capacity(rows.len())).collect();
    for row in rows {
        let mut it = row.into_iter();
        for col in columns.iter_mut() {
            col.push(it.next().unwrap_or(Raw::Missing));
        }
    }
    let typed: Vec<Vec<Cell>> = columns.into_iter().map(type_column).collect();
    let nrows = typed.first().map_or(0, Vec::len);
    let mut out_rows: Vec<Vec<Cell>> = (0..nrows).map(|_| Vec::with_capacity(width)).collect();
    for col in typed {
        for (row, cell) in out_rows.iter_mut().zip(col) {
            row.push(cell);
        }
    }
    Sheet {
        name: name.to_string(),
        columns: fix_headers(header),
        rows: out_rows,
    }
}

/// Parses CSV text (as pandas `to_csv(index=False)` writes it) into a sheet
/// named `name`. An empty input is a sheet with no columns. A record with
/// more fields than the header is an error; shorter records are padded with
/// missing values. Invalid UTF-8 is replaced, not refused.
pub fn parse_csv(bytes: &[u8], name: &str) -> Result<Sheet> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut header: Option<Vec<String>> = None;
    let mut rows: Vec<Vec<Raw>> = Vec::new();
    let mut record = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => bail!("not a valid CSV file: {e}"),
        }
        let fields = record
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned());
        match &header {
            None => header = Some(fields.collect()),
            Some(h) => {
                if record.len() > h.len() {
                    let line = record.position().map_or(0, |p| p.line());
                    bail!(
                        "line {line} has {} fields, the header has {}",
                        record.len(),
                        h.len()
                    );
                }
                rows.push(fields.map(Raw::Text).collect());
            }
        }
    }
    match header {
        None => Ok(Sheet {
            name: name.to_string(),
            ..Sheet::default()
        }),
        // A file holding one empty line is a table with no columns.
        Some(h) if h.len() == 1 && h[0].is_empty() && rows.is_empty() => Ok(Sheet {
            name: name.to_string(),
            ..Sheet::default()
        }),
        Some(h) => Ok(build_sheet(name, h, rows)),
    }
}

/// Reads one CSV file; the sheet is named after the file stem.
pub fn read_csv(path: &Path) -> Result<Sheet> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    parse_csv(&bytes, &name).with_context(|| format!("{}", path.display()))
}

/// Reads every `<sheet>.csv` in `dir`, in the order of their names (as the
/// reference lists a folder's sheets). Other files are ignored.
pub fn read_csv_dir(dir: &Path) -> Result<Vec<Sheet>> {
    let entries = fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let path = entry.path();
        let is_csv = path.extension().is_some_and(|e| e == "csv") && path.is_file();
        if is_csv {
            paths.push(path);
        }
    }
    paths.sort_by(|a, b| a.file_stem().cmp(&b.file_stem()));
    paths.iter().map(|p| read_csv(p)).collect()
}

/// Whether `path` is a zip archive holding `xl/workbook.xml` (an Excel
/// workbook rather than a zipped trace).
pub fn is_xlsx(path: &Path) -> bool {
    let Ok(mut file) = fs::File::open(path) else {
        return false;
    };
    let mut magic = [0u8; 4];
    if file.read_exact(&mut magic).is_err() || &magic != b"PK\x03\x04" {
        return false;
    }
    if file.rewind().is_err() {
        return false;
    }
    match zip::ZipArchive::new(std::io::BufReader::new(file)) {
        Ok(archive) => archive.index_for_name("xl/workbook.xml").is_some(),
        Err(_) => false,
    }
}

/// Reads every worksheet of an `.xlsx` workbook, in workbook order. The
/// first row of each sheet's used range is the header.
pub fn read_xlsx(path: &Path) -> Result<Vec<Sheet>> {
    use calamine::Reader as _;
    let file = fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut book: calamine::Xlsx<_> = calamine::Xlsx::new(std::io::BufReader::new(file))
        .map_err(|e| anyhow::anyhow!("{}: not a readable workbook: {e}", path.display()))?;
    let mut sheets = Vec::new();
    for name in book.sheet_names() {
        let range = book
            .worksheet_range(&name)
            .map_err(|e| anyhow::anyhow!("{}: sheet {name:?}: {e}", path.display()))?;
        sheets.push(range_to_sheet(&name, &range));
    }
    Ok(sheets)
}

/// Converts a calamine cell range (header row first) to a sheet.
fn range_to_sheet(name: &str, range: &calamine::Range<calamine::Data>) -> Sheet {
    use calamine::Data;
    let mut rows = range.rows();
    let Some(head) = rows.next() else {
        return Sheet {
            name: name.to_string(),
            ..Sheet::default()
        };
    };
    let header: Vec<String> = head
        .iter()
        .map(|c| match c {
            Data::Empty => String::new(),
            Data::Float(x) => crate::pyfmt::float_repr(*x),
            other => other.to_string(),
        })
        .collect();
    let body: Vec<Vec<Raw>> = rows
        .map(|r| {
            r.iter()
                .map(|c| match c {
                    Data::Empty => Raw::Missing,
                    Data::String(s) => Raw::Text(s.clone()),
                    Data::Float(x) => Raw::Number(*x),
                    Data::Int(i) => Raw::Number(*i as f64),
                    Data::Bool(b) => Raw::Bool(*b),
                    Data::Error(_) => Raw::Missing,
                    other => Raw::Text(other.to_string()),
                })
                .collect()
        })
        .collect();
    build_sheet(name, header, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::csv::sheet_to_csv;

    fn parse(text: &str) -> Sheet {
        parse_csv(text.as_bytes(), "t").unwrap()
    }

    #[test]
    fn column_types_like_read_csv() {
        let s = parse(
            "i,f,m,b,bm,t,n\n\
             1,1.5,1,True,True,abc,\n\
             2,2,,False,,1,\n",
        );
        assert_eq!(s.columns, vec!["i", "f", "m", "b", "bm", "t", "n"]);
        assert_eq!(
            s.rows[0],
            vec![
                Cell::Int(1),
                Cell::Float(1.5),
                Cell::Float(1.0),
                Cell::Bool(true),
                Cell::Bool(true),
                Cell::Text("abc".into()),
                Cell::Empty,
            ]
        );
        assert_eq!(
            s.rows[1],
            vec![
                Cell::Int(2),
                Cell::Float(2.0),
                Cell::Empty,
                Cell::Bool(false),
                Cell::Empty,
                // A numeric-looking value in a text column stays text.
                Cell::Text("1".into()),
                Cell::Empty,
            ]
        );
    }

    #[test]
    fn na_spellings_and_quoting() {
        let s = parse("a,b\nNone,\"x, y\"\nnan,\"say \"\"hi\"\"\"\n");
        assert_eq!(s.rows[0], vec![Cell::Empty, Cell::Text("x, y".into())]);
        assert_eq!(
            s.rows[1],
            vec![Cell::Empty, Cell::Text("say \"hi\"".into())]
        );
    }

    #[test]
    fn float_text_round_trips() {
        // What we write reads back to the same text.
        let text = "x,y,z\n1e-05,0.1,-3\n31.905483154296874,1.5e+16,4\n";
        assert_eq!(sheet_to_csv(&parse(text)), text);
    }

    #[test]
    fn empty_inputs() {
        assert_eq!(parse("").columns.len(), 0);
        assert_eq!(parse("\n").columns.len(), 0);
        let s = parse("a,b\n");
        assert_eq!(s.columns, vec!["a", "b"]);
        assert!(s.rows.is_empty());
    }

    #[test]
    fn ragged_rows() {
        let s = parse("a,b\n1\n2,3\n");
        assert_eq!(s.rows[0], vec![Cell::Int(1), Cell::Empty]);
        assert_eq!(s.rows[1], vec![Cell::Int(2), Cell::Float(3.0)]);
        assert!(parse_csv(b"a\n1,2\n", "t").is_err());
    }

    #[test]
    fn headers_made_unique() {
        let s = parse(",a,a\n1,2,3\n");
        assert_eq!(s.columns, vec!["Unnamed: 0", "a", "a.1"]);
    }

    #[test]
    fn excel_numbers() {
        let col = type_column(vec![Raw::Number(3.0), Raw::Number(4.0)]);
        assert_eq!(col, vec![Cell::Int(3), Cell::Int(4)]);
        let col = type_column(vec![Raw::Number(3.0), Raw::Missing]);
        assert_eq!(col, vec![Cell::Float(3.0), Cell::Empty]);
        let col = type_column(vec![Raw::Number(3.0), Raw::Text("x".into())]);
        assert_eq!(col, vec![Cell::Int(3), Cell::Text("x".into())]);
    }

    #[test]
    fn xlsx_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.xlsx");
        let mut s = Sheet::new("gpu_timeline", &["type", "time ms", "n", "ok"]);
        s.rows.push(vec![
            Cell::Text("busy_time".into()),
            Cell::Float(31.905483154296874),
            Cell::Int(3),
            Cell::Bool(true),
        ]);
        s.rows.push(vec![
            Cell::Text("idle".into()),
            Cell::Empty,
            Cell::Int(4),
            Cell::Bool(false),
        ]);
        crate::report::xlsx::write_xlsx(&[s.clone()], &path).unwrap();
        assert!(is_xlsx(&path));
        let back = read_xlsx(&path).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0], s);
        assert!(!is_xlsx(tmp.path()));
    }
}
