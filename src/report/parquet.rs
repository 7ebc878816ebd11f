//! Parquet writer: one `<sheet>.parquet` file per table, with typed
//! columns, for pandas/pyarrow, polars, DuckDB and Spark.
//!
//! Written with the `parquet` crate's low-level API (no Arrow: the build
//! stays lean). Each column gets one physical type, decided from all its
//! cells ([`ColumnKind::of`]) so that pandas reads the file with the values
//! and dtypes it reads from the CSV sheet; every column is OPTIONAL:
//! missing cells (`Null`, NaN floats) are Parquet nulls, where the CSV
//! writer leaves the field empty and pandas reads NaN/None. Files are
//! Snappy-compressed, the codec every reader has.

use std::borrow::Cow;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::types::{Type, TypePtr};

use super::csv::sheet_paths;
use super::{Document, Rendered, WriteError, Writer};
use crate::table::typing::{Raw, type_column, unique_headers};
use crate::table::{Dtype, Table, Value};

/// Rows per row group. Report sheets are far smaller; the cap only keeps
/// a reader's unit of work bounded on a huge sheet.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// How a column is stored in Parquet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// INT64: every present cell is an `Int`.
    Int,
    /// DOUBLE: every present cell is a number, at least one a `Float`
    /// (ints are converted, as pandas reads such a CSV column as float64).
    /// Also a column of rows with no present cell, which pandas reads from
    /// the CSV as float64 NaN.
    Double,
    /// BOOLEAN: every present cell is a `Bool`.
    Bool,
    /// BYTE_ARRAY with the String (UTF8) logical type: any other column
    /// (text, Python reprs, bools mixed with numbers, no rows at all); each
    /// cell is its CSV text ([`Value::csv_text`]), verbatim.
    Text,
}

impl ColumnKind {
    /// The kind of a column holding `values`: by the cells' own types, and
    /// for a text column by what pandas' `read_csv` makes of its CSV text.
    pub fn of(values: &[Value]) -> ColumnKind {
        stored(values).0
    }

    /// The kind of a column by its cells' own types; `None` for a text
    /// column.
    fn of_cells(values: &[Value]) -> Option<ColumnKind> {
        match Dtype::of(values) {
            Dtype::Int => Some(ColumnKind::Int),
            Dtype::Float => Some(ColumnKind::Double),
            Dtype::Bool => Some(ColumnKind::Bool),
            // Ints with floats (or with a NaN float) are a float column.
            Dtype::Object
                if values
                    .iter()
                    .all(|v| matches!(v, Value::Null | Value::Int(_) | Value::Float(_))) =>
            {
                Some(ColumnKind::Double)
            }
            Dtype::Empty if !values.is_empty() => Some(ColumnKind::Double),
            Dtype::Text | Dtype::Py | Dtype::Object | Dtype::Empty => None,
        }
    }

    /// The Parquet field of a column named `name` of this kind.
    fn field(self, name: &str) -> Result<TypePtr, ParquetError> {
        let (physical, logical) = match self {
            ColumnKind::Int => (PhysicalType::INT64, None),
            ColumnKind::Double => (PhysicalType::DOUBLE, None),
            ColumnKind::Bool => (PhysicalType::BOOLEAN, None),
            ColumnKind::Text => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
        };
        Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()
            .map(Arc::new)
    }
}

/// A column as stored: its kind and the cells to write.
///
/// Number and bool columns are stored as they are. A text column is typed
/// as pandas' `read_csv` types its CSV text ([`type_column`]): when every
/// present field reads as a number (or every one as a bool) the column is
/// stored as those numbers, so the sheets' numeric text (the `param: M`
/// columns hold `"512"`) gets the dtype it has when read from the CSV.
/// Otherwise the text is kept verbatim, also a `None` or `nan` that
/// `read_csv` would read as missing.
fn stored(values: &[Value]) -> (ColumnKind, Cow<'_, [Value]>) {
    if let Some(kind) = ColumnKind::of_cells(values) {
        return (kind, Cow::Borrowed(values));
    }
    let raw = values
        .iter()
        .map(|v| match v.is_missing() {
            true => Raw::Missing,
            false => Raw::Text(v.csv_text()),
        })
        .collect();
    let typed = type_column(raw);
    // A column of pandas' missing-value words only stays text.
    let any = typed.iter().any(|v| !v.is_missing());
    match ColumnKind::of_cells(&typed) {
        Some(kind) if any => (kind, Cow::Owned(typed)),
        _ => (ColumnKind::Text, Cow::Borrowed(values)),
    }
}

/// Renders `table` as one Parquet file: a field per column (in order,
/// typed by [`ColumnKind::of`]), the rows in row groups of at most 2^20
/// rows. Readers (polars, DuckDB) refuse repeated column names, so names
/// are made unique as pandas' `read_csv` makes them from the CSV sheet
/// (`x`, `x.1`, …; the reference's raw two-level `short_kernels_summary`
/// header has three equal names).
pub fn table_to_parquet(table: &Table) -> Result<Vec<u8>, WriteError> {
    // Columns are stored whole: a deferred table's rows are computed first.
    let table = &*table.held();
    let columns: Vec<(ColumnKind, Cow<[Value]>)> =
        table.columns.iter().map(|c| stored(&c.values)).collect();
    let names = unique_headers(table.columns.iter().map(|c| c.name.clone()).collect());
    let fields = names
        .iter()
        .zip(&columns)
        .map(|(name, (kind, _))| kind.field(name))
        .collect::<Result<Vec<_>, _>>()?;
    let schema = Type::group_type_builder("schema")
        .with_fields(fields)
        .build()?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("tracelens {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut writer = SerializedFileWriter::new(Vec::new(), Arc::new(schema), Arc::new(props))?;
    let nrows = table.nrows();
    for start in (0..nrows).step_by(ROW_GROUP_ROWS) {
        let end = nrows.min(start + ROW_GROUP_ROWS);
        let mut group = writer.next_row_group()?;
        for (kind, cells) in &columns {
            let mut col = group
                .next_column()?
                .ok_or_else(|| ParquetError::General("schema has fewer columns".into()))?;
            write_cells(&mut col, &cells[start..end], *kind)?;
            col.close()?;
        }
        group.close()?;
    }
    Ok(writer.into_inner()?)
}

/// Writes `cells` into `col` as `kind`: a definition level per cell (1
/// present, 0 missing) and the present values.
fn write_cells(
    col: &mut SerializedColumnWriter<'_>,
    cells: &[Value],
    kind: ColumnKind,
) -> Result<(), ParquetError> {
    let def: Vec<i16> = cells.iter().map(|v| i16::from(!v.is_missing())).collect();
    let def = Some(def.as_slice());
    match kind {
        ColumnKind::Int => {
            let v: Vec<i64> = cells.iter().filter_map(Value::as_i64).collect();
            col.typed::<Int64Type>().write_batch(&v, def, None)?;
        }
        ColumnKind::Double => {
            let v: Vec<f64> = cells.iter().filter_map(Value::as_f64).collect();
            col.typed::<DoubleType>().write_batch(&v, def, None)?;
        }
        ColumnKind::Bool => {
            let v: Vec<bool> = cells
                .iter()
                .filter_map(|c| match c {
                    Value::Bool(b) => Some(*b),
                    _ => None,
                })
                .collect();
            col.typed::<BoolType>().write_batch(&v, def, None)?;
        }
        ColumnKind::Text => {
            let v: Vec<ByteArray> = cells
                .iter()
                .filter(|c| !c.is_missing())
                .map(|c| ByteArray::from(c.csv_text().into_bytes()))
                .collect();
            col.typed::<ByteArrayType>().write_batch(&v, def, None)?;
        }
    }
    Ok(())
}

/// Writes each table of a document as `<dir>/<table name>.parquet` (the
/// file stems of the CSV writer). A table without columns (compare's empty
/// `*_only_*` sheets, a blank line as CSV) gets no file: DuckDB refuses a
/// Parquet file without columns.
#[derive(Debug, Clone)]
pub struct Parquet {
    /// The folder the files go to.
    pub dir: std::path::PathBuf,
}

impl Writer for Parquet {
    /// One file per table with columns, in table order; two tables mapping
    /// to the same file name are an error.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        let tables: Vec<&Table> = doc
            .tables
            .iter()
            .filter(|t| t.ncols() > 0)
            .copied()
            .collect();
        let names = sheet_paths(&self.dir, &tables, "parquet")?;
        names
            .into_iter()
            .zip(tables)
            .map(|(name, table)| {
                let bytes = table_to_parquet(table)
                    .map_err(|e| e.at(format!("sheet {:?} as Parquet", table.name)))?;
                Ok(Rendered { name, bytes })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::basic::ConvertedType;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    /// (name, physical type, converted type) of each column of a file.
    type Columns = Vec<(String, PhysicalType, ConvertedType)>;

    /// The file's columns and its rows.
    fn read_back(bytes: Vec<u8>) -> (Columns, Vec<Vec<Field>>) {
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let cols = schema
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), c.physical_type(), c.converted_type()))
            .collect();
        let rows = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| {
                r.unwrap()
                    .get_column_iter()
                    .map(|(_, f)| f.clone())
                    .collect()
            })
            .collect();
        (cols, rows)
    }

    #[test]
    fn kinds_from_cells() {
        use ColumnKind::*;
        let of = |v: Vec<Value>| ColumnKind::of(&v);
        assert_eq!(of(vec![Value::Int(1), Value::Null]), Int);
        assert_eq!(of(vec![Value::Int(1), Value::Float(2.5)]), Double);
        assert_eq!(of(vec![Value::Int(1), Value::Float(f64::NAN)]), Double);
        assert_eq!(of(vec![Value::Float(f64::NAN)]), Double);
        assert_eq!(of(vec![Value::Bool(true), Value::Null]), Bool);
        assert_eq!(of(vec![Value::Bool(true), Value::Int(1)]), Text);
        assert_eq!(of(vec![Value::Int(1), t("x")]), Text);
        assert_eq!(of(vec![Value::Py("(1,)".into())]), Text);
        // No value in any row: float64 NaN, as read_csv reads it.
        assert_eq!(of(vec![Value::Null, Value::Null]), Double);
        assert_eq!(of(vec![]), Text);
        // Numeric text is typed as read_csv types it.
        assert_eq!(of(vec![t("512"), t("-8")]), Int);
        assert_eq!(of(vec![t("512"), Value::Null]), Double);
        assert_eq!(of(vec![t("1"), Value::Int(2), t("2.5")]), Double);
        assert_eq!(of(vec![t("True"), t("False")]), Bool);
        assert_eq!(of(vec![t("True"), t("1")]), Text);
        // pandas' missing-value words alone stay text.
        assert_eq!(of(vec![t("None"), t("nan")]), Text);
    }

    /// A sheet of every cell kind, with missing values in every column:
    /// text, floats (a NaN), ints, booleans, Python reprs, an all-null
    /// column and numeric `param:` text.
    fn mixed_table() -> Table {
        Table::from_rows(
            "s",
            &[
                "name",
                "Kernel Time (µs)",
                "n",
                "ok",
                "shape",
                "none",
                "param: M",
            ],
            vec![
                vec![
                    t("aten::mm"),
                    Value::Float(1.5),
                    Value::Int(-3),
                    Value::Bool(true),
                    Value::Py("((2, 3),)".into()),
                    Value::Null,
                    t("512"),
                ],
                vec![
                    Value::Null,
                    Value::Float(f64::NAN),
                    Value::Null,
                    Value::Null,
                    Value::Int(7),
                    Value::Null,
                    t("None"),
                ],
                vec![
                    t("b"),
                    Value::Int(2),
                    Value::Int(i64::MAX),
                    Value::Bool(false),
                    Value::Float(0.5),
                    Value::Null,
                    t("8"),
                ],
            ],
        )
    }

    #[test]
    fn typed_columns_and_nulls_round_trip() {
        let table = mixed_table();
        let (cols, rows) = read_back(table_to_parquet(&table).unwrap());
        use ConvertedType as C;
        use PhysicalType as P;
        let expect = [
            ("name", P::BYTE_ARRAY, C::UTF8),
            ("Kernel Time (µs)", P::DOUBLE, C::NONE),
            ("n", P::INT64, C::NONE),
            ("ok", P::BOOLEAN, C::NONE),
            ("shape", P::BYTE_ARRAY, C::UTF8),
            ("none", P::DOUBLE, C::NONE),
            ("param: M", P::DOUBLE, C::NONE),
        ];
        let expect: Vec<_> = expect
            .iter()
            .map(|(n, p, c)| (n.to_string(), *p, *c))
            .collect();
        assert_eq!(cols, expect);
        let s = |x: &str| Field::Str(x.into());
        assert_eq!(
            rows,
            vec![
                vec![
                    s("aten::mm"),
                    Field::Double(1.5),
                    Field::Long(-3),
                    Field::Bool(true),
                    s("((2, 3),)"),
                    Field::Null,
                    Field::Double(512.0)
                ],
                vec![
                    Field::Null,
                    Field::Null,
                    Field::Null,
                    Field::Null,
                    s("7"),
                    Field::Null,
                    Field::Null
                ],
                vec![
                    s("b"),
                    Field::Double(2.0),
                    Field::Long(i64::MAX),
                    Field::Bool(false),
                    s("0.5"),
                    Field::Null,
                    Field::Double(8.0)
                ],
            ]
        );
    }

    #[test]
    fn empty_sheet_keeps_its_columns() {
        let table = Table::new("e", &["a", "b c"]);
        let (cols, rows) = read_back(table_to_parquet(&table).unwrap());
        let names: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["a", "b c"]);
        assert!(rows.is_empty());
    }

    #[test]
    fn repeated_column_names_are_numbered_as_pandas_reads_them() {
        let table = Table::from_rows(
            "d",
            &["a", "a", "a"],
            vec![vec![Value::Int(1), Value::Int(2), Value::Int(3)]],
        );
        let (cols, rows) = read_back(table_to_parquet(&table).unwrap());
        let names: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["a", "a.1", "a.2"]);
        assert_eq!(rows.len(), 1);
    }

    #[test]
    fn files_named_like_the_csv_sheets() {
        let a = Table::new("gpu_timeline", &["x"]);
        let b = Table::new("a/b", &["x"]);
        let no_columns = Table::new("GEMM_only_baseline_b", &[]);
        let tables = [a.clone(), no_columns, b];
        let files = Parquet { dir: "out".into() }
            .render(&Document::of_tables(&tables))
            .unwrap();
        let names: Vec<_> = files.iter().map(|f| f.name.clone()).collect();
        assert_eq!(
            names,
            [
                std::path::PathBuf::from("out/gpu_timeline.parquet"),
                "out/a_b.parquet".into()
            ]
        );
        assert!(files.iter().all(|f| f.bytes.starts_with(b"PAR1")));
        let twice = [a.clone(), a];
        let err = Parquet { dir: "out".into() }
            .render(&Document::of_tables(&twice))
            .unwrap_err();
        assert!(err.to_string().contains("gpu_timeline.parquet"), "{err}");
    }
}
