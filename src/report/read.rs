//! Reading reports back: a folder of per-sheet CSVs or an `.xlsx` workbook,
//! written by `tracelens report` or by the reference.
//!
//! The result is the same [`Table`] the passes produce. Cells get the types
//! pandas would give them, because the comparison (`analysis::commands::compare`)
//! reproduces pandas arithmetic and rendering on top: types are inferred per
//! **column**, as `read_csv` / `read_excel` do, by
//! [`crate::table::typing::type_column`] (missing-value spellings, Excel's
//! integral numbers and header repair are described there).

mod workbook_limits;

use crate::error::ReadError;
use crate::load::scan::mib;
use crate::table::typing::{Raw, type_column, unique_headers};
use crate::table::{Column, Table, Value};
use rustc_hash::FxHashMap;
use std::fs;
use std::io::{Read, Seek};
use std::path::Path;
use std::sync::Arc;
use workbook_limits::{Budget, Metered, SharedBudget};
pub use workbook_limits::{MAX_CELL_TEXT, MAX_XLSX_ENV};

/// Builds a table from a header and rows of raw values (rows may be
/// shorter than the header; missing fields are missing values), typing each
/// column as pandas would.
fn build_table(name: &str, header: Vec<String>, rows: Vec<Vec<Raw>>) -> Table {
    let width = header.len();
    let mut columns: Vec<Vec<Raw>> = (0..width).map(|_| Vec::with_capacity(rows.len())).collect();
    for row in rows {
        let mut it = row.into_iter();
        for col in columns.iter_mut() {
            col.push(it.next().unwrap_or(Raw::Missing));
        }
    }
    table_of_columns(name, header, columns)
}

/// Builds a table from a header and one column of raw values per header
/// name, typing each column as pandas would.
fn table_of_columns(name: &str, header: Vec<String>, columns: Vec<Vec<Raw>>) -> Table {
    let columns = unique_headers(header)
        .into_iter()
        .zip(columns)
        .map(|(name, raw)| Column {
            name,
            values: type_column(raw),
        })
        .collect();
    Table::from_columns(name, columns)
}

/// A table named `name` without columns (an empty file).
fn empty_table(name: &str) -> Table {
    Table::new(name, &[])
}

/// Parses CSV text (as pandas `to_csv(index=False)` writes it) into a table
/// named `name`. An empty input is a sheet with no columns. A record with
/// more fields than the header is an error; shorter records are padded with
/// missing values. Text that pandas would refuse or that shows the file
/// was cut is an error: invalid UTF-8, a quoted field never closed, a last
/// line without its line break.
pub fn parse_csv(bytes: &[u8], name: &str) -> Result<Table, ReadError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    check_csv_text(bytes)?;
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
            Err(e) => return Err(ReadError::Csv(e)),
        }
        let fields = record
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned());
        match &header {
            None => header = Some(fields.collect()),
            Some(h) => {
                if record.len() > h.len() {
                    let line = record.position().map_or(0, |p| p.line());
                    return Err(ReadError::Width {
                        line,
                        fields: record.len(),
                        header: h.len(),
                    });
                }
                rows.push(fields.map(Raw::Text).collect());
            }
        }
    }
    match header {
        None => Ok(empty_table(name)),
        // A file holding one empty line is a table with no columns.
        Some(h) if h.len() == 1 && h[0].is_empty() && rows.is_empty() => Ok(empty_table(name)),
        Some(h) => Ok(build_table(name, h, rows)),
    }
}

/// The checks of [`parse_csv`] on the whole text. Quotes are balanced in
/// well-formed CSV: quoted fields open and close, and quotes inside them
/// are doubled.
fn check_csv_text(bytes: &[u8]) -> Result<(), ReadError> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(ReadError::NotUtf8(e.valid_up_to()));
    }
    if bytecount(bytes, b'"') % 2 == 1 {
        return Err(ReadError::UnterminatedQuote);
    }
    if bytes.last().is_some_and(|&b| b != b'\n' && b != b'\r') {
        return Err(ReadError::Truncated);
    }
    Ok(())
}

/// Occurrences of `byte` in `bytes`.
fn bytecount(bytes: &[u8], byte: u8) -> usize {
    bytes.iter().filter(|&&b| b == byte).count()
}

/// Reads one CSV file; the table is named after the file stem.
pub fn read_csv(path: &Path) -> Result<Table, ReadError> {
    let bytes = fs::read(path).map_err(ReadError::io(path))?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    parse_csv(&bytes, &name).map_err(|e| ReadError::InFile {
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

/// Reads every `<sheet>.csv` in `dir`, in the order of their names (as the
/// reference lists a folder's sheets). Other files are ignored.
pub fn read_csv_dir(dir: &Path) -> Result<Vec<Table>, ReadError> {
    let entries = fs::read_dir(dir).map_err(ReadError::io(dir))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(ReadError::io(dir))?;
        let path = entry.path();
        let is_csv = path.extension().is_some_and(|e| e == "csv") && path.is_file();
        if is_csv {
            paths.push(path);
        }
    }
    paths.sort_by(|a, b| a.file_stem().cmp(&b.file_stem()));
    paths.iter().map(|p| read_csv(p)).collect()
}

/// Reads one `<sheet>.parquet` file as written by the Parquet writer
/// ([`crate::report::parquet`]): INT64, DOUBLE, BOOLEAN and UTF8 columns
/// become `Int`, `Float`, `Bool` and `Text` cells, nulls `Null`. The
/// table is named after the file stem.
pub fn read_parquet(path: &Path) -> Result<Table, ReadError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let bad = |e: parquet::errors::ParquetError| ReadError::Parquet {
        path: path.to_path_buf(),
        error: e.to_string(),
    };
    let file = fs::File::open(path).map_err(ReadError::io(path))?;
    let reader = SerializedFileReader::new(file).map_err(bad)?;
    let names: Vec<String> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let mut columns: Vec<Vec<Value>> = vec![Vec::new(); names.len()];
    for row in reader.get_row_iter(None).map_err(bad)? {
        let row = row.map_err(bad)?;
        for (k, (_, field)) in row.get_column_iter().enumerate() {
            let v = match field {
                Field::Null => Value::Null,
                Field::Bool(b) => Value::Bool(*b),
                Field::Long(i) => Value::Int(*i),
                Field::Int(i) => Value::Int(i64::from(*i)),
                Field::Double(x) => Value::Float(*x),
                Field::Float(x) => Value::Float(f64::from(*x)),
                Field::Str(s) => Value::Text(s.as_str().into()),
                other => Value::Text(other.to_string().into()),
            };
            if let Some(col) = columns.get_mut(k) {
                col.push(v);
            }
        }
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let columns = names
        .into_iter()
        .zip(columns)
        .map(|(name, values)| Column { name, values })
        .collect();
    Ok(Table::from_columns(&name, columns))
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
pub fn read_xlsx(path: &Path) -> Result<Vec<Table>, ReadError> {
    read_xlsx_sheets(path, &|_| true)
}

/// Reads the worksheets of an `.xlsx` workbook that `wanted` names, in
/// workbook order; the others are never inflated. The first row of each
/// sheet's used range is the header.
///
/// Reading is bounded by what it reads (`workbook_limits`): every zip
/// member opened and every cell, text and grid kept is charged to one
/// budget (`TRACELENS_MAX_XLSX_MB`), a cell's text may not exceed
/// [`MAX_CELL_TEXT`], and a shared string is held once, however many
/// cells use it. Cells are read one by one, never into a grid sized by
/// the sheet's declared dimension; a sheet whose used range is much larger
/// than the cells it holds (see `MAX_EMPTY_CELLS`) is refused.
pub fn read_xlsx_sheets(
    path: &Path,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<Table>, ReadError> {
    use calamine::Reader as _;
    let limit = |problem: String| ReadError::WorkbookLimit {
        path: path.to_path_buf(),
        problem,
    };
    let budget = Budget::from_env().map_err(limit)?;
    let open = || fs::File::open(path).map_err(ReadError::io(path));
    let book = Metered::new(
        std::io::BufReader::new(open()?),
        std::io::BufReader::new(open()?),
        budget.clone(),
    )
    .and_then(calamine::Xlsx::new);
    let over = |budget: &SharedBudget| budget.borrow().over().map(str::to_string);
    let mut book = match book {
        Ok(book) => book,
        Err(error) => {
            return Err(match over(&budget) {
                Some(problem) => limit(problem),
                None => ReadError::Workbook {
                    path: path.to_path_buf(),
                    error,
                },
            });
        }
    };
    let mut sheets = Vec::new();
    for name in book.sheet_names().into_iter().filter(|n| wanted(n)) {
        let cells = sparse_cells(&mut book, &name, &budget);
        let cells = cells.and_then(|cells| cells_to_table(&name, cells, &budget));
        match cells {
            Ok(table) => sheets.push(table),
            Err(e) => {
                return Err(match (over(&budget), e) {
                    (Some(problem), _) => limit(format!("sheet {name:?}: {problem}")),
                    (None, CellsError::Xlsx(error)) => ReadError::Sheet {
                        path: path.to_path_buf(),
                        sheet: name.clone(),
                        error,
                    },
                    (None, CellsError::Sparse(problem)) => ReadError::SparseSheet {
                        path: path.to_path_buf(),
                        sheet: name.clone(),
                        problem,
                    },
                });
            }
        }
    }
    Ok(sheets)
}

/// How many empty cells a worksheet's used range may hold beyond sixteen
/// per present cell: real reports are dense (empty cells are missing
/// values), so more means a crafted or broken sheet.
const MAX_EMPTY_CELLS: u64 = 1 << 20;

/// Why a worksheet's cells could not be read (a limit hit is kept in the
/// budget).
enum CellsError {
    Xlsx(calamine::XlsxError),
    Sparse(String),
}

/// The non-empty cells of a sheet, with the text of its header row.
struct SheetCells {
    /// (row, column, value) in reading order.
    cells: Vec<(u32, u32, Raw)>,
    /// The topmost row seen and the (column, text) of its cells.
    header: Option<(u32, Vec<(u32, String)>)>,
}

/// The non-empty cells of worksheet `name` (a chart sheet has none), with
/// the used range checked against them. Every cell and text is charged to
/// `budget`; shared strings are held once.
fn sparse_cells<RS: std::io::Read + Seek>(
    book: &mut calamine::Xlsx<RS>,
    name: &str,
    budget: &SharedBudget,
) -> Result<SheetCells, CellsError> {
    let mut reader = match book.worksheet_cells_reader(name) {
        Ok(reader) => reader,
        Err(calamine::XlsxError::NotAWorksheet(_)) => {
            return Ok(SheetCells {
                cells: Vec::new(),
                header: None,
            });
        }
        Err(e) => return Err(CellsError::Xlsx(e)),
    };
    let mut out = SheetCells {
        cells: Vec::new(),
        header: None,
    };
    let mut shared: FxHashMap<(usize, usize), Arc<str>> = FxHashMap::default();
    let over = |problem: String| {
        budget.borrow_mut().fail(problem.clone());
        CellsError::Sparse(problem)
    };
    while let Some(cell) = reader.next_cell().map_err(CellsError::Xlsx)? {
        let value = cell.get_value();
        if *value == calamine::DataRef::Empty {
            continue;
        }
        let (r, c) = cell.get_position();
        if let Some(len) = cell_text_len(value).filter(|&n| n > MAX_CELL_TEXT) {
            return Err(over(format!(
                "cell {} holds {} of text, more than a cell may ({})",
                cell_name(r, c),
                mib(len),
                mib(MAX_CELL_TEXT)
            )));
        }
        let top = out.header.as_ref().is_none_or(|(row, _)| r <= *row);
        if top {
            let text = header_text(value);
            charge(budget, text.len(), || {
                format!("the header of sheet {name:?}")
            })?;
            match &mut out.header {
                Some((row, texts)) if *row == r => texts.push((c, text)),
                header => *header = Some((r, vec![(c, text)])),
            }
        }
        let raw = raw_value(cell.get_value().clone(), &mut shared, budget)?;
        charge(budget, std::mem::size_of::<(u32, u32, Raw)>(), || {
            format!("the cells of sheet {name:?}")
        })?;
        out.cells.push((r, c, raw));
    }
    if let Some((rows, cols)) = used_range(&out.cells).map(|(start, end)| span(start, end)) {
        let area = rows * cols;
        if area > 16 * out.cells.len() as u64 + MAX_EMPTY_CELLS {
            return Err(CellsError::Sparse(format!(
                "its cells span {rows} rows x {cols} columns but only {} are filled: \
                 not a report sheet",
                out.cells.len()
            )));
        }
    }
    Ok(out)
}

/// Takes `bytes` for `what` from the budget.
fn charge(
    budget: &SharedBudget,
    bytes: usize,
    what: impl FnOnce() -> String,
) -> Result<(), CellsError> {
    budget
        .borrow_mut()
        .charge(bytes as u64, what)
        .map_err(CellsError::Sparse)
}

/// The length of a cell's text, for a text cell.
fn cell_text_len(value: &calamine::DataRef) -> Option<usize> {
    use calamine::DataRef;
    match value {
        DataRef::String(s) | DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => Some(s.len()),
        DataRef::SharedString(s) => Some(s.len()),
        _ => None,
    }
}

/// A cell's raw value; a shared string's text is held once in `shared`
/// (keyed by where the workbook reader holds it) and charged once.
fn raw_value(
    value: calamine::DataRef,
    shared: &mut FxHashMap<(usize, usize), Arc<str>>,
    budget: &SharedBudget,
) -> Result<Raw, CellsError> {
    use calamine::{Data, DataRef};
    Ok(match value {
        DataRef::Empty | DataRef::Error(_) => Raw::Missing,
        DataRef::SharedString(s) => {
            let key = (s.as_ptr() as usize, s.len());
            if let Some(text) = shared.get(&key) {
                return Ok(Raw::Shared(text.clone()));
            }
            charge(budget, s.len(), || "shared strings".to_string())?;
            let text: Arc<str> = s.into();
            shared.insert(key, text.clone());
            Raw::Shared(text)
        }
        DataRef::String(s) => {
            charge(budget, s.len(), || "cell text".to_string())?;
            Raw::Text(s)
        }
        DataRef::Float(x) => Raw::Number(x),
        DataRef::Int(i) => Raw::Number(i as f64),
        DataRef::Bool(b) => Raw::Bool(b),
        other => {
            let text = Data::from(other).to_string();
            charge(budget, text.len(), || "cell text".to_string())?;
            Raw::Text(text)
        }
    })
}

/// A header cell's text, as pandas names the column.
fn header_text(value: &calamine::DataRef) -> String {
    match value {
        calamine::DataRef::Float(x) => crate::pyfmt::float_repr(*x),
        other => calamine::Data::from(other.clone()).to_string(),
    }
}

/// The A1-style name of the cell at 0-based (`row`, `col`).
fn cell_name(row: u32, col: u32) -> String {
    let mut letters = Vec::new();
    let mut n = u64::from(col) + 1;
    while n > 0 {
        letters.push(b'A' + ((n - 1) % 26) as u8);
        n = (n - 1) / 26;
    }
    letters.reverse();
    format!(
        "{}{}",
        String::from_utf8_lossy(&letters),
        u64::from(row) + 1
    )
}

/// The first and last (row, column) of the cells' used range.
fn used_range(cells: &[(u32, u32, Raw)]) -> Option<((u32, u32), (u32, u32))> {
    let &(r0, c0, _) = cells.first()?;
    let (mut start, mut end) = ((r0, c0), (r0, c0));
    for &(r, c, _) in cells {
        start = (start.0.min(r), start.1.min(c));
        end = (end.0.max(r), end.1.max(c));
    }
    Some((start, end))
}

/// Rows and columns from `start` to `end`, both included.
fn span(start: (u32, u32), end: (u32, u32)) -> (u64, u64) {
    (
        u64::from(end.0 - start.0) + 1,
        u64::from(end.1 - start.1) + 1,
    )
}

/// Converts the non-empty cells of a sheet (its used range's first row is
/// the header) to a table; the grid is charged to `budget` first.
fn cells_to_table(
    name: &str,
    sheet: SheetCells,
    budget: &SharedBudget,
) -> Result<Table, CellsError> {
    let Some((start, end)) = used_range(&sheet.cells) else {
        return Ok(empty_table(name));
    };
    let (rows, cols) = span(start, end);
    let cell_bytes = (std::mem::size_of::<Raw>() + std::mem::size_of::<Value>()) as u64;
    let grid = rows.saturating_mul(cols).saturating_mul(cell_bytes);
    charge(budget, usize::try_from(grid).unwrap_or(usize::MAX), || {
        format!("the {rows} x {cols} cells of sheet {name:?}")
    })?;
    // Bounded by the check in `sparse_cells` and by the budget.
    let (rows, cols) = (rows as usize, cols as usize);
    let mut columns: Vec<Vec<Raw>> = (0..cols).map(|_| vec![Raw::Missing; rows - 1]).collect();
    let mut header = vec![String::new(); cols];
    for (c, text) in sheet.header.map(|(_, texts)| texts).unwrap_or_default() {
        header[(c - start.1) as usize] = text;
    }
    for (r, c, raw) in sheet.cells {
        if r > start.0 {
            columns[(c - start.1) as usize][(r - start.0) as usize - 1] = raw;
        }
    }
    Ok(table_of_columns(name, header, columns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::csv::table_to_csv;
    use crate::table::Value;

    fn parse(text: &str) -> Table {
        parse_csv(text.as_bytes(), "t").unwrap()
    }

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    #[test]
    fn column_types_like_read_csv() {
        let s = parse(
            "i,f,m,b,bm,t,n\n\
             1,1.5,1,True,True,abc,\n\
             2,2,,False,,1,\n",
        );
        assert_eq!(s.column_names(), vec!["i", "f", "m", "b", "bm", "t", "n"]);
        assert_eq!(
            s.row(0).to_vec(),
            vec![
                Value::Int(1),
                Value::Float(1.5),
                Value::Float(1.0),
                Value::Bool(true),
                Value::Bool(true),
                t("abc"),
                Value::Null,
            ]
        );
        assert_eq!(
            s.row(1).to_vec(),
            vec![
                Value::Int(2),
                Value::Float(2.0),
                Value::Null,
                Value::Bool(false),
                Value::Null,
                // A numeric-looking value in a text column stays text.
                t("1"),
                Value::Null,
            ]
        );
    }

    #[test]
    fn na_spellings_and_quoting() {
        let s = parse("a,b\nNone,\"x, y\"\nnan,\"say \"\"hi\"\"\"\n");
        assert_eq!(s.row(0).to_vec(), vec![Value::Null, t("x, y")]);
        assert_eq!(s.row(1).to_vec(), vec![Value::Null, t("say \"hi\"")]);
    }

    #[test]
    fn float_text_round_trips() {
        // What we write reads back to the same text.
        let text = "x,y,z\n1e-05,0.1,-3\n31.905483154296874,1.5e+16,4\n";
        assert_eq!(table_to_csv(&parse(text)), text);
    }

    #[test]
    fn empty_inputs() {
        assert_eq!(parse("").ncols(), 0);
        assert_eq!(parse("\n").ncols(), 0);
        let s = parse("a,b\n");
        assert_eq!(s.column_names(), vec!["a", "b"]);
        assert_eq!(s.nrows(), 0);
    }

    #[test]
    fn ragged_rows() {
        let s = parse("a,b\n1\n2,3\n");
        assert_eq!(s.row(0).to_vec(), vec![Value::Int(1), Value::Null]);
        assert_eq!(s.row(1).to_vec(), vec![Value::Int(2), Value::Float(3.0)]);
        assert!(parse_csv(b"a\n1,2\n", "t").is_err());
    }

    #[test]
    fn headers_made_unique() {
        let s = parse(",a,a\n1,2,3\n");
        assert_eq!(s.column_names(), vec!["Unnamed: 0", "a", "a.1"]);
    }

    #[test]
    fn xlsx_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.xlsx");
        let mut s = Table::new("gpu_timeline", &["type", "time ms", "n", "ok"]);
        s.push_row(vec![
            t("busy_time"),
            Value::Float(31.905483154296874),
            Value::Int(3),
            Value::Bool(true),
        ]);
        s.push_row(vec![
            t("idle"),
            Value::Null,
            Value::Int(4),
            Value::Bool(false),
        ]);
        crate::report::xlsx::write_xlsx(std::slice::from_ref(&s), &path).unwrap();
        assert!(is_xlsx(&path));
        let back = read_xlsx(&path).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0], s);
        assert!(!is_xlsx(tmp.path()));
    }
}
