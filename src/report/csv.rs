//! CSV writer matching pandas `DataFrame.to_csv(index=False)`.
//!
//! pandas hands rows to Python's `csv` writer with `QUOTE_MINIMAL`, `,` as
//! separator and `\n` line ends, after turning floats into their `repr`.

use std::collections::HashSet;
use std::convert::Infallible;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::pieces::{render_in_pieces, rows_per_piece};
use super::staging::Staging;
use super::{Document, Rendered, WriteError, Writer};
use crate::table::Table;

/// Renders `table` as pandas `to_csv(index=False)` would: a header line,
/// then one line per row.
///
/// Cells are written as [`crate::table::Value::csv_text`] gives them: `Null`
/// and NaN floats are empty fields, ints are decimal, floats use Python
/// `repr`, bools are `True` / `False`, text and reprs are verbatim. Fields
/// containing `,`, `"`, `\n` or `\r` are quoted with inner quotes doubled.
/// A line holding a single empty field is written `""`, as Python's `csv`
/// module does, so the line is not mistaken for a blank one.
pub fn table_to_csv(table: &Table) -> String {
    let mut out = String::new();
    // The first piece, with the header, becomes the text the others join.
    let written = csv_pieces::<Infallible>(table, |text| {
        if out.is_empty() {
            out = text;
        } else {
            out.push_str(&text);
        }
        Ok(())
    });
    let Ok(()) = written;
    out
}

/// Hands the text of `table` as CSV ([`table_to_csv`]) to `sink` in
/// pieces, in order: the header line and the first rows, then the next
/// rows. Big sheets (a row per kernel) are written in pieces of rows on
/// every core, a few pieces at a time so that little text is held at once.
fn csv_pieces<E>(table: &Table, sink: impl FnMut(String) -> Result<(), E>) -> Result<(), E> {
    let row_bytes = row_bytes(table);
    render_in_pieces(
        table.nrows(),
        rows_per_piece(CSV_PIECE_BYTES, row_bytes, CSV_CHUNK_ROWS),
        CSV_WAVE_CHUNKS,
        |range| {
            // A piece's text, with room for rows a little longer than the
            // sampled ones, is allocated once.
            let mut text = String::with_capacity(row_bytes * (range.len() + 1) * 9 / 8);
            if range.start == 0 {
                push_line(&mut text, table.columns.iter(), |f, c| f.push_str(&c.name));
            }
            push_rows(&mut text, table, range);
            text
        },
        sink,
    )
}

/// About the text of a row of `table`, so that a piece of rows comes to
/// about [`CSV_PIECE_BYTES`]: the mean of runs of rows spread over the
/// sheet, or [`CSV_CELL_BYTES`] a cell (64 bytes at least) for a sheet
/// too small to sample.
fn row_bytes(table: &Table) -> usize {
    let rows = table.nrows();
    if rows < CSV_SAMPLE_ROWS {
        return (CSV_CELL_BYTES * table.ncols()).max(64);
    }
    let mut text = String::new();
    let runs = CSV_SAMPLE_ROWS / CSV_SAMPLE_RUN;
    for run in 0..runs {
        let first = run * (rows - CSV_SAMPLE_RUN) / (runs - 1);
        push_rows(&mut text, table, first..first + CSV_SAMPLE_RUN);
    }
    (text.len() / CSV_SAMPLE_ROWS).max(1)
}

/// Rows of a sheet written in one piece at most; bigger sheets are split
/// into pieces of this many rows (fewer for wide rows, see
/// [`CSV_PIECE_BYTES`]), written in parallel.
const CSV_CHUNK_ROWS: usize = 16_384;

/// Text aimed at per piece: a sheet of narrow rows keeps pieces of
/// [`CSV_CHUNK_ROWS`]; a wide one (the JAX `kernel_launchers`, about 530
/// bytes a row) gets fewer rows a piece. A piece stays under the 1 MiB
/// from which the binary's allocator maps a block of its own
/// (`large_alloc`): pieces aimed at 1 MiB at 16 bytes a cell came to
/// 2.5 MiB, each a fresh mapping whose pages faulted in again.
const CSV_PIECE_BYTES: usize = 512 << 10;

/// Rows whose text sizes a big sheet's pieces ([`row_bytes`]) ...
const CSV_SAMPLE_ROWS: usize = 128;

/// ... taken in runs of this many neighbours, spread over the sheet.
const CSV_SAMPLE_RUN: usize = 8;

/// About the text of a cell with its comma, for a sheet too small to
/// sample.
const CSV_CELL_BYTES: usize = 16;

/// Pieces rendered at a time (about 512 KiB of text each for a sheet of a
/// row per kernel), written while the next are rendered: two a core keep
/// both busy, and sixteen held 10 MiB more at the rocprof x16 peak for no
/// speed.
const CSV_WAVE_CHUNKS: usize = 4;

/// Appends the lines of `rows` of `table`.
fn push_rows(out: &mut String, table: &Table, rows: Range<usize>) {
    table.for_each_row(rows, |cells| {
        push_line(out, cells.iter(), |f, v| v.push_csv_text(f));
    });
}

/// Appends one record of `cells`, each written by `text`, quoting fields
/// minimally, and the line end.
fn push_line<T>(out: &mut String, cells: impl Iterator<Item = T>, text: impl Fn(&mut String, T)) {
    let start = out.len();
    let mut count = 0;
    for cell in cells {
        if count > 0 {
            out.push(',');
        }
        count += 1;
        // The field is written in place and quoted afterwards in the rare
        // case it needs it: most fields are numbers and plain names.
        let at = out.len();
        text(out, cell);
        if needs_quotes(&out.as_bytes()[at..]) {
            let field = out.split_off(at);
            out.push('"');
            out.push_str(&field.replace('"', "\"\""));
            out.push('"');
        }
    }
    // A record of one empty field would read as a blank line.
    if count == 1 && out.len() == start {
        out.push_str("\"\"");
    }
    out.push('\n');
}

/// Whether a field holds a separator, a quote or a line break. The bytes
/// are ASCII, so a byte scan of UTF-8 text finds exactly those characters.
fn needs_quotes(field: &[u8]) -> bool {
    field
        .iter()
        .any(|&b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
}

/// File stem for a sheet: its name, with path separators and NUL replaced
/// so a name can never address a file outside `dir`.
fn file_stem(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | '\0') {
                '_'
            } else {
                c
            }
        })
        .collect();
    if stem.is_empty() || stem == "." || stem == ".." {
        format!("_{stem}")
    } else {
        stem
    }
}

/// Writes each table of a document as `<dir>/<table name>.csv`.
#[derive(Debug, Clone)]
pub struct Csv {
    /// The folder the files go to.
    pub dir: PathBuf,
}

/// The file of each table in a folder of sheets: `<dir>/<stem>.<ext>`, in
/// table order, the stem being the sheet name made safe for a file name.
/// Two tables mapping to the same file are an error rather than a silent
/// overwrite. Shared by the per-sheet writers (CSV, Parquet) so their
/// folders name the sheets alike.
pub(crate) fn sheet_paths(
    dir: &Path,
    tables: &[&Table],
    ext: &str,
) -> Result<Vec<PathBuf>, WriteError> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(tables.len());
    for table in tables {
        let name = dir.join(format!("{}.{ext}", file_stem(&table.name)));
        if !seen.insert(name.clone()) {
            return Err(WriteError::Invalid(format!(
                "two sheets would both be written to {} (sheet name {:?})",
                name.display(),
                table.name
            )));
        }
        out.push(name);
    }
    Ok(out)
}

impl Writer for Csv {
    /// One file per table, in table order. Two tables mapping to the same
    /// file name are an error rather than a silent overwrite.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        let names = sheet_paths(&self.dir, &doc.tables, "csv")?;
        Ok(names
            .into_iter()
            .zip(&doc.tables)
            .map(|(name, table)| Rendered {
                name,
                bytes: table_to_csv(table).into_bytes(),
            })
            .collect())
    }

    /// [`Csv::render`]'s files, each written piece by piece as it is
    /// rendered: a sheet of a row per kernel is never held whole as text.
    fn stage_files(
        &self,
        doc: &Document,
        dir: &Path,
        staging: &mut Staging,
    ) -> Result<usize, WriteError> {
        let names = sheet_paths(&self.dir, &doc.tables, "csv")?;
        staging.create_dir_all(dir)?;
        for (name, table) in names.iter().zip(&doc.tables) {
            let mut file = staging.create(name)?;
            csv_pieces(table, |text| file.write_all(text.as_bytes()))
                .and_then(|()| file.flush())
                .map_err(WriteError::io(format!("cannot write {}", name.display())))?;
        }
        Ok(names.len())
    }
}

/// Writes one `<name>.csv` per table into `dir` (created with its parents
/// if missing), all or nothing; returns the paths written, in table order.
/// The `*.csv` sheets an earlier run wrote in `dir` (as the folder's
/// manifest lists them) that are not among these are removed in the same
/// step; every other file stays.
pub fn write_csv_dir(sheets: &[Table], dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let doc = Document::of_tables(sheets);
    let csv = Csv { dir: dir.into() };
    let mut staging = Staging::new();
    csv.stage_files(&doc, dir, &mut staging)?;
    staging.replace_all(dir, "csv");
    staging.commit()?;
    sheet_paths(dir, &doc.tables, "csv")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Value;
    use std::fs;

    fn sheet(columns: &[&str], rows: Vec<Vec<Value>>) -> Table {
        Table::from_rows("t", columns, rows)
    }

    #[test]
    fn deferred_tables_and_staged_files_are_the_rendered_text() {
        // Enough rows for several pieces, with cells that need quoting.
        let rows: Vec<Vec<Value>> = (0..3 * CSV_CHUNK_ROWS as i64 + 7)
            .map(|i| vec![Value::Int(i), t(if i % 5 == 0 { "a,\"b\"" } else { "k" })])
            .collect();
        let held = sheet(&["i", "name"], rows);
        let text = table_to_csv(&held);
        assert!(text.starts_with("i,name\n0,\"a,\"\"b\"\"\"\n1,k\n"));
        let deferred = crate::table::deferred_copy(&held);
        assert_eq!(table_to_csv(&deferred), text);
        let dir = tempfile::tempdir().unwrap();
        let mut small = sheet(&["x"], vec![vec![Value::Null]]);
        small.name = "small".to_string();
        let paths = write_csv_dir(&[deferred, small], dir.path()).unwrap();
        assert_eq!(fs::read_to_string(&paths[0]).unwrap(), text);
        assert_eq!(fs::read_to_string(&paths[1]).unwrap(), "x\n\"\"\n");
    }

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    #[test]
    fn big_sheets_written_in_parallel_pieces_read_as_row_by_row() {
        // More than two waves of pieces, the last one short, with cells
        // that need quoting and an empty one.
        let rows = CSV_CHUNK_ROWS * (2 * CSV_WAVE_CHUNKS + 3) + 17;
        let cells = |i: usize| {
            vec![
                t(&format!("k{i},\"x\"")),
                Value::Int(i as i64 * 7 - 3),
                Value::Float(i as f64 / 8.0),
                if i.is_multiple_of(5) {
                    Value::Null
                } else {
                    Value::Bool(i.is_multiple_of(2))
                },
            ]
        };
        let columns = ["name", "n", "x", "ok"];
        let big = sheet(&columns, (0..rows).map(cells).collect());
        let text = table_to_csv(&big);
        // Each row alone, through the one-piece path.
        let mut expected = String::from("name,n,x,ok\n");
        for i in [0, 1, CSV_CHUNK_ROWS - 1, CSV_CHUNK_ROWS, rows - 1] {
            let one = table_to_csv(&sheet(&columns, vec![cells(i)]));
            let line = one.split_once('\n').unwrap().1;
            assert_eq!(text.lines().nth(i + 1), Some(line.trim_end()), "row {i}");
        }
        for i in 0..rows {
            let one = table_to_csv(&sheet(&columns, vec![cells(i)]));
            expected.push_str(one.split_once('\n').unwrap().1);
        }
        assert_eq!(text.len(), expected.len());
        assert!(text == expected);
    }

    #[test]
    fn pieces_of_wide_rows_are_sized_from_a_sample_of_their_text() {
        // Rows of about 530 bytes in 14 cells, as in JAX's
        // kernel_launchers, where 16 bytes a cell guessed 224.
        let cells = |i: usize| {
            (0..14)
                .map(|c| t(&format!("{c}:{}", "x".repeat(30 + (i * 7 + c) % 11))))
                .collect::<Vec<_>>()
        };
        let table = sheet(&["c"; 14], (0..5_000).map(cells).collect());
        let mean = table_to_csv(&table).len() / 5_000;
        let sampled = row_bytes(&table);
        assert!(
            mean > 500 && sampled.abs_diff(mean) * 20 < mean,
            "{sampled} vs {mean}"
        );
        // So a piece's text, as allocated, stays under 1 MiB.
        let piece_rows = rows_per_piece(CSV_PIECE_BYTES, sampled, CSV_CHUNK_ROWS);
        assert!(sampled * (piece_rows + 1) * 9 / 8 < 1 << 20);
        assert!(mean * piece_rows < 1 << 20);
        // A sheet too small to sample takes the guess.
        let small = sheet(
            &["a", "b"],
            (0..10).map(|i| cells(i)[..2].to_vec()).collect(),
        );
        assert_eq!(row_bytes(&small), 64);
    }

    #[test]
    fn cells_like_pandas() {
        let s = sheet(
            &["name", "n", "x", "ok", "gone", "repr"],
            vec![
                vec![
                    t("aten::mm"),
                    Value::Int(-3),
                    Value::Float(1e-5),
                    Value::Bool(true),
                    Value::Null,
                    Value::Py("(1,)".into()),
                ],
                vec![
                    t("b"),
                    Value::Int(0),
                    Value::Float(5.0),
                    Value::Bool(false),
                    Value::Float(f64::NAN),
                    Value::Null,
                ],
            ],
        );
        assert_eq!(
            table_to_csv(&s),
            "name,n,x,ok,gone,repr\naten::mm,-3,1e-05,True,,\"(1,)\"\nb,0,5.0,False,,\n"
        );
    }

    #[test]
    fn infinities_and_big_floats() {
        let s = sheet(
            &["x"],
            vec![
                vec![Value::Float(f64::INFINITY)],
                vec![Value::Float(f64::NEG_INFINITY)],
                vec![Value::Float(1e16)],
            ],
        );
        assert_eq!(table_to_csv(&s), "x\ninf\n-inf\n1e+16\n");
    }

    #[test]
    fn minimal_quoting() {
        let s = sheet(
            &["a,b", "q"],
            vec![
                vec![t("((1, 2), ())"), t("say \"hi\"")],
                vec![t("line\nbreak"), t("cr\rx")],
                vec![t("it's; fine"), t(" sp ")],
            ],
        );
        assert_eq!(
            table_to_csv(&s),
            "\"a,b\",q\n\
             \"((1, 2), ())\",\"say \"\"hi\"\"\"\n\
             \"line\nbreak\",\"cr\rx\"\n\
             it's; fine, sp \n"
        );
    }

    #[test]
    fn quoting_of_text_beyond_ascii() {
        // Quoted fields are rewritten in place after the fields before
        // them on the line; multi-byte characters around a quote survive.
        let s = sheet(
            &["µs", "n"],
            vec![
                vec![t("ü\"é"), t("naïve")],
                vec![Value::Float(1419116105088.0), t("日本,語")],
            ],
        );
        assert_eq!(
            table_to_csv(&s),
            "µs,n\n\"ü\"\"é\",naïve\n1419116105088.0,\"日本,語\"\n"
        );
    }

    #[test]
    fn single_empty_field_is_quoted() {
        // Python's csv writer emits `""` for a record of one empty field.
        let s = sheet(
            &["x"],
            vec![
                vec![Value::Null],
                vec![Value::Int(1)],
                vec![Value::Float(f64::NAN)],
            ],
        );
        assert_eq!(table_to_csv(&s), "x\n\"\"\n1\n\"\"\n");
        let s = sheet(&["a", "b"], vec![vec![Value::Null, Value::Null]]);
        assert_eq!(table_to_csv(&s), "a,b\n,\n");
    }

    #[test]
    fn no_columns() {
        assert_eq!(table_to_csv(&Table::default()), "\n");
    }

    #[test]
    fn writes_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("nested/out");
        let a = sheet(&["a"], vec![vec![Value::Int(1)]]);
        let mut b = sheet(&["b"], vec![vec![t("x")]]);
        b.name = "other".into();
        let mut c = Table::new("../evil/x", &["c"]);
        c.push_row(vec![Value::Bool(true)]);
        let paths = write_csv_dir(&[a, b, c], &dir).unwrap();
        assert_eq!(
            paths,
            vec![
                dir.join("t.csv"),
                dir.join("other.csv"),
                dir.join(".._evil_x.csv")
            ]
        );
        assert_eq!(fs::read_to_string(&paths[0]).unwrap(), "a\n1\n");
        assert_eq!(fs::read_to_string(&paths[1]).unwrap(), "b\nx\n");
        assert_eq!(fs::read_to_string(&paths[2]).unwrap(), "c\nTrue\n");
        // Nothing but the three CSVs and the folder's manifest is left
        // behind.
        let mut names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        let manifest = crate::report::staging::MANIFEST_NAME;
        assert_eq!(names, [".._evil_x.csv", manifest, "other.csv", "t.csv"]);
    }

    #[test]
    fn duplicate_names_are_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let a = Table::new("same", &["a"]);
        let err = write_csv_dir(&[a.clone(), a], tmp.path()).unwrap_err();
        assert!(err.to_string().contains("same.csv"), "{err}");
    }

    #[test]
    fn error_names_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        // A regular file where the directory should be.
        let blocker = tmp.path().join("file");
        fs::write(&blocker, "x").unwrap();
        let err = write_csv_dir(&[Table::new("a", &["a"])], &blocker.join("sub")).unwrap_err();
        assert!(err.to_string().contains("file/sub"), "{err}");
    }

    #[test]
    fn stems() {
        assert_eq!(file_stem("gpu_timeline"), "gpu_timeline");
        assert_eq!(file_stem(""), "_");
        assert_eq!(file_stem("."), "_.");
        assert_eq!(file_stem(".."), "_..");
        assert_eq!(file_stem("a/b\\c"), "a_b_c");
    }
}
