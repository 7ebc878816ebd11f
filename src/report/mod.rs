//! The sheet model shared by every analysis pass and every output writer.
//!
//! Passes build [`Sheet`]s; writers (`csv`, `xlsx`, `markdown`) turn them into
//! files. Writers know nothing about traces, passes know nothing about formats.

pub mod csv;
pub mod markdown;
pub mod read;
pub mod staging;
pub mod svg;
pub mod xlsx;

/// One cell of a sheet.
///
/// Text cells hold text exactly as it must appear (Python reprs of tuples and
/// dicts are produced by the pass, see [`crate::pyfmt`]). Floats are written in
/// Python `repr` style by the CSV writer and as numbers in Excel.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Missing value (pandas NaN/None): an empty CSV field, a blank Excel cell.
    Empty,
    /// An integer column value.
    Int(i64),
    /// A float column value (NaN is written like [`Cell::Empty`]).
    Float(f64),
    /// A boolean, written `True` / `False`.
    Bool(bool),
    /// Text, written verbatim.
    Text(String),
}

/// A named table: the unit every writer emits (one CSV file, one worksheet).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sheet {
    /// Sheet name, e.g. `gpu_timeline`; also the CSV file stem.
    pub name: String,
    /// Column headers, in output order.
    pub columns: Vec<String>,
    /// Rows; each row has exactly `columns.len()` cells.
    pub rows: Vec<Vec<Cell>>,
}

impl Sheet {
    /// An empty sheet with the given name and column headers.
    pub fn new(name: &str, columns: &[&str]) -> Sheet {
        Sheet {
            name: name.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Index of the column named `name`, if present.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}
