//! CSV writer matching pandas `DataFrame.to_csv(index=False)`.
//!
//! pandas hands rows to Python's `csv` writer with `QUOTE_MINIMAL`, `,` as
//! separator and `\n` line ends, after turning floats into their `repr`.

use super::staging::Staging;
use super::{Cell, Sheet};
use crate::pyfmt::float_repr;
use anyhow::{Context, Result, bail};
use std::collections::HashSet;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Renders `sheet` as pandas `to_csv(index=False)` would: a header line, then
/// one line per row.
///
/// Cells: [`Cell::Empty`] and NaN floats are empty fields, ints are decimal,
/// floats use Python `repr`, bools are `True` / `False`, text is verbatim.
/// Fields containing `,`, `"`, `\n` or `\r` are quoted with inner quotes
/// doubled. A line holding a single empty field is written `""`, as Python's
/// `csv` module does, so the line is not mistaken for a blank one. Rows
/// shorter than the header are padded with empty fields; cells beyond the
/// header width are dropped.
pub fn sheet_to_csv(sheet: &Sheet) -> String {
    let width = sheet.columns.len();
    let mut out = String::with_capacity(64 * (sheet.rows.len() + 1));
    let mut fields: Vec<String> = Vec::with_capacity(width);
    fields.extend(sheet.columns.iter().cloned());
    push_line(&mut out, &fields);
    for row in &sheet.rows {
        fields.clear();
        fields.extend((0..width).map(|i| row.get(i).map_or_else(String::new, cell_text)));
        push_line(&mut out, &fields);
    }
    out
}

/// The unquoted CSV text of one cell.
fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Empty => String::new(),
        Cell::Int(i) => i.to_string(),
        Cell::Float(x) if x.is_nan() => String::new(),
        Cell::Float(x) => float_repr(*x),
        Cell::Bool(true) => "True".to_string(),
        Cell::Bool(false) => "False".to_string(),
        Cell::Text(s) => s.clone(),
    }
}

/// Appends one record, quoting fields minimally, and the line end.
fn push_line(out: &mut String, fields: &[String]) {
    if let [only] = fields
        && only.is_empty()
    {
        out.push_str("\"\"\n");
        return;
    }
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if f.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push('\n');
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

/// Writes one `<name>.csv` per sheet into `dir` (created with its parents if
/// missing) and returns the paths written, in sheet order. All files appear
/// together or none does.
pub fn write_csv_dir(sheets: &[Sheet], dir: &Path) -> Result<Vec<PathBuf>> {
    let mut staging = Staging::new();
    let written = stage_csv_dir(sheets, dir, &mut staging)?;
    staging.commit()?;
    Ok(written)
}

/// Stages one `<name>.csv` per sheet into `dir` (see [`Staging`]) and
/// returns the target paths, in sheet order. Two sheets mapping to the same
/// file name are an error rather than a silent overwrite.
pub fn stage_csv_dir(sheets: &[Sheet], dir: &Path, staging: &mut Staging) -> Result<Vec<PathBuf>> {
    staging.create_dir_all(dir)?;
    let mut seen = HashSet::new();
    let mut written = Vec::with_capacity(sheets.len());
    for sheet in sheets {
        let path = dir.join(format!("{}.csv", file_stem(&sheet.name)));
        if !seen.insert(path.clone()) {
            bail!(
                "two sheets would both be written to {} (sheet name {:?})",
                path.display(),
                sheet.name
            );
        }
        let tmp = staging.stage(&path);
        let file =
            fs::File::create(&tmp).with_context(|| format!("cannot create {}", path.display()))?;
        let mut w = BufWriter::new(file);
        w.write_all(sheet_to_csv(sheet).as_bytes())
            .and_then(|()| w.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sheet(columns: &[&str], rows: Vec<Vec<Cell>>) -> Sheet {
        let mut s = Sheet::new("t", columns);
        s.rows = rows;
        s
    }

    #[test]
    fn cells_like_pandas() {
        let s = sheet(
            &["name", "n", "x", "ok", "gone"],
            vec![
                vec![
                    Cell::Text("aten::mm".into()),
                    Cell::Int(-3),
                    Cell::Float(1e-5),
                    Cell::Bool(true),
                    Cell::Empty,
                ],
                vec![
                    Cell::Text("b".into()),
                    Cell::Int(0),
                    Cell::Float(5.0),
                    Cell::Bool(false),
                    Cell::Float(f64::NAN),
                ],
            ],
        );
        assert_eq!(
            sheet_to_csv(&s),
            "name,n,x,ok,gone\naten::mm,-3,1e-05,True,\nb,0,5.0,False,\n"
        );
    }

    #[test]
    fn infinities_and_big_floats() {
        let s = sheet(
            &["x"],
            vec![
                vec![Cell::Float(f64::INFINITY)],
                vec![Cell::Float(f64::NEG_INFINITY)],
                vec![Cell::Float(1e16)],
            ],
        );
        assert_eq!(sheet_to_csv(&s), "x\ninf\n-inf\n1e+16\n");
    }

    #[test]
    fn minimal_quoting() {
        let s = sheet(
            &["a,b", "q"],
            vec![
                vec![
                    Cell::Text("((1, 2), ())".into()),
                    Cell::Text("say \"hi\"".into()),
                ],
                vec![Cell::Text("line\nbreak".into()), Cell::Text("cr\rx".into())],
                vec![Cell::Text("it's; fine".into()), Cell::Text(" sp ".into())],
            ],
        );
        assert_eq!(
            sheet_to_csv(&s),
            "\"a,b\",q\n\
             \"((1, 2), ())\",\"say \"\"hi\"\"\"\n\
             \"line\nbreak\",\"cr\rx\"\n\
             it's; fine, sp \n"
        );
    }

    #[test]
    fn single_empty_field_is_quoted() {
        // Python's csv writer emits `""` for a record of one empty field.
        let s = sheet(
            &["x"],
            vec![
                vec![Cell::Empty],
                vec![Cell::Int(1)],
                vec![Cell::Float(f64::NAN)],
            ],
        );
        assert_eq!(sheet_to_csv(&s), "x\n\"\"\n1\n\"\"\n");
        let s = sheet(&["a", "b"], vec![vec![Cell::Empty, Cell::Empty]]);
        assert_eq!(sheet_to_csv(&s), "a,b\n,\n");
    }

    #[test]
    fn ragged_rows_do_not_panic() {
        let s = sheet(
            &["a", "b"],
            vec![
                vec![Cell::Int(1)],
                vec![Cell::Int(1), Cell::Int(2), Cell::Int(3)],
            ],
        );
        assert_eq!(sheet_to_csv(&s), "a,b\n1,\n1,2\n");
        assert_eq!(sheet_to_csv(&Sheet::default()), "\n");
    }

    #[test]
    fn writes_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("nested/out");
        let a = sheet(&["a"], vec![vec![Cell::Int(1)]]);
        let mut b = sheet(&["b"], vec![vec![Cell::Text("x".into())]]);
        b.name = "other".into();
        let mut c = Sheet::new("../evil/x", &["c"]);
        c.rows.push(vec![Cell::Bool(true)]);
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
        // Nothing but the three CSVs is left behind.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 3);
    }

    #[test]
    fn duplicate_names_are_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let a = Sheet::new("same", &["a"]);
        let err = write_csv_dir(&[a.clone(), a], tmp.path()).unwrap_err();
        assert!(format!("{err:#}").contains("same.csv"));
    }

    #[test]
    fn error_names_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        // A regular file where the directory should be.
        let blocker = tmp.path().join("file");
        fs::write(&blocker, "x").unwrap();
        let err = write_csv_dir(&[Sheet::new("a", &["a"])], &blocker.join("sub")).unwrap_err();
        assert!(format!("{err:#}").contains("file/sub"), "{err:#}");
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
