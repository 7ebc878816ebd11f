//! Excel workbook writer: one worksheet per [`Table`], in order.

mod big_sheet;
mod cells;
mod chart;

use std::collections::HashSet;
use std::io::{Cursor, Seek, Write};
use std::path::{Path, PathBuf};

use rust_xlsxwriter::{Color, Format, FormatBorder, Workbook, Worksheet};

use self::big_sheet::BigSheet;
use self::cells::{Cell, ColumnStyle, cell, clip, column_style};
use self::chart::add_chart_sheet;
use super::staging::Staging;
use super::{Chart as ReportChart, Document, Rendered, WriteError, Writer};
use crate::pyfmt::float_repr;
use crate::table::{Cells, Table, Value};

/// Excel's limit on worksheet name length, in UTF-16 code units.
const MAX_NAME_UNITS: usize = 31;
/// Excel's limit on the text of one cell, in UTF-16 code units.
const MAX_CELL_UNITS: usize = 32_767;
/// Excel's row limit (the header takes one of them).
const MAX_ROWS: usize = 1_048_576;
/// The most data rows one worksheet holds: Excel's limit less the header.
pub const MAX_DATA_ROWS: usize = MAX_ROWS - 1;
/// Excel's column limit.
const MAX_COLS: usize = 16_384;
/// Rows sampled for column widths; scanning everything is slow on big sheets.
const WIDTH_SAMPLE_ROWS: usize = 200;
/// Column width bounds, in characters.
const MIN_WIDTH: usize = 8;
const MAX_WIDTH: usize = 60;

/// Writes a document's tables and charts as one Excel workbook.
///
/// Each table becomes a worksheet with a bold, shaded, underlined header row
/// that is frozen and carries an autofilter. Ints and finite floats are
/// numbers, `Null`, NaN and infinite floats are blank, bools are booleans and
/// text and Python reprs are strings (cut to Excel's 32767-character cell
/// limit), except that numeric text in perf-model parameter columns
/// (`param: M`) is written as a number where that reads back the same (see
/// `cells::text_as_number`). Each column gets a number format
/// from what it measures (see `cells::column_style`): percentages
/// `#,##0.00"%"`, counts `#,##0`, milliseconds `#,##0.000`, microseconds
/// `#,##0.00`, other floats rounded to three significant digits. The
/// values are those of the CSV files; only their display differs. Column
/// widths follow the longest shown text among the header and the first
/// rows, clamped to 8..=60 characters. Worksheet names are made valid for
/// Excel (see [`worksheet_names`]).
///
/// Then each chart gets a worksheet, after the data sheets, holding a
/// scatter chart (markers only, the chart's axis names and scales, one
/// series per [`crate::report::Series`] over the cells it names in the
/// chart's data table, each in its own colour, legend on the right). A
/// chart with roofs also shows each GPU's memory roof (solid) and compute
/// roofs (dashed) as line series, whose end points are listed under the
/// chart, with both axes fixed to whole decades covering points and
/// ridges. A chart whose data table is
/// not among the tables, or whose series point outside that table's
/// columns or rows, is an error. A chart without series gets a worksheet
/// with a note instead of an empty chart.
#[derive(Debug, Clone)]
pub struct Xlsx {
    /// Target file.
    pub path: PathBuf,
}

impl Writer for Xlsx {
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        let bytes = workbook_bytes(&doc.tables, &doc.charts, &self.path, BIG_SHEET_CELLS)?;
        Ok(vec![Rendered {
            name: self.path.clone(),
            bytes,
        }])
    }

    /// [`Xlsx::render`]'s workbook, written into its staged file as it is
    /// made: a workbook with a sheet of a row per kernel is not held whole.
    fn stage_files(
        &self,
        doc: &Document,
        dir: &Path,
        staging: &mut Staging,
    ) -> Result<usize, WriteError> {
        let what = || format!("cannot write {}", self.path.display());
        staging.create_dir_all(dir).map_err(|e| e.at(what()))?;
        let out = std::io::BufWriter::with_capacity(1 << 16, staging.create(&self.path)?);
        write_workbook(&doc.tables, &doc.charts, &self.path, BIG_SHEET_CELLS, out)?
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|mut file| file.flush())
            .map_err(WriteError::io(what()))?;
        Ok(1)
    }
}

/// Writes `sheets` to an `.xlsx` workbook at `path` (see [`Xlsx`]), all or
/// nothing.
pub fn write_xlsx(sheets: &[Table], path: &Path) -> Result<(), WriteError> {
    let doc = Document::of_tables(sheets);
    let mut staging = Staging::new();
    let dir = path.parent().unwrap_or(Path::new(""));
    Xlsx { path: path.into() }.stage_files(&doc, dir, &mut staging)?;
    staging.commit()
}

/// The bytes of the workbook of [`Xlsx`]; `path` names it in errors.
///
/// The workbook library writes everything except the rows of sheets of
/// more than `big_sheet_cells` cells (a row per kernel), which it would
/// write one cell at a time on one core: those are written in pieces on
/// every core and spliced in ([`big_sheet`]).
fn workbook_bytes(
    sheets: &[&Table],
    charts: &[ReportChart],
    path: &Path,
    big_sheet_cells: usize,
) -> Result<Vec<u8>, WriteError> {
    let out = Cursor::new(Vec::new());
    write_workbook(sheets, charts, path, big_sheet_cells, out).map(Cursor::into_inner)
}

/// [`workbook_bytes`] written to `out` (a file, or memory), which is
/// returned.
fn write_workbook<W: Write + Seek + Send>(
    sheets: &[&Table],
    charts: &[ReportChart],
    path: &Path,
    big_sheet_cells: usize,
    mut out: W,
) -> Result<W, WriteError> {
    let names = worksheet_names(
        sheets
            .iter()
            .map(|s| s.name.as_str())
            .chain(charts.iter().map(|c| c.name.as_str())),
    );
    let (data_names, chart_names) = names.split_at(sheets.len());
    let header = header_format();
    let mut workbook = Workbook::new();
    // Deflate's fastest level: the workbook's XML is repetitive enough that
    // it is about 1.3x larger than at the default level 6, in a third of
    // the time (the default was 5% of a report's CPU on a 55 MB trace).
    workbook.set_zip_compression_level(1);
    let mut big = Vec::new();
    for (number, (sheet, name)) in sheets.iter().zip(data_names).enumerate() {
        // Formats and widths follow the first rows only.
        let sample = sheet.head_held(WIDTH_SAMPLE_ROWS);
        let styles: Vec<ColumnStyle> = sample
            .columns
            .iter()
            .map(|col| column_style(col, WIDTH_SAMPLE_ROWS))
            .collect();
        let is_big = sheet.nrows().saturating_mul(sheet.ncols()) > big_sheet_cells;
        fill_worksheet(
            workbook.add_worksheet(),
            sheet,
            &sample,
            name,
            &header,
            &styles,
            !is_big,
        )
        .map_err(|e| e.at(format!("sheet {:?} of {}", sheet.name, path.display())))?;
        if is_big {
            // Worksheets are numbered from 1 in the order they are added.
            big.push(BigSheet {
                number: number + 1,
                table: sheet,
                styles,
            });
        }
    }
    for (chart, name) in charts.iter().zip(chart_names) {
        add_chart_sheet(&mut workbook, chart, name, sheets, data_names)
            .map_err(|e| e.at(format!("chart {:?} of {}", chart.name, path.display())))?;
    }
    let cannot_write = || format!("cannot write {}", path.display());
    let bytes = workbook
        .save_to_buffer()
        .map_err(|e| WriteError::from(e).at(cannot_write()))?;
    if big.is_empty() {
        out.write_all(&bytes)
            .map_err(WriteError::io(cannot_write()))?;
        return Ok(out);
    }
    big_sheet::with_rows(bytes, &big, out).map_err(|e| e.at(cannot_write()))
}

/// The header row's format: bold, shaded, underlined.
fn header_format() -> Format {
    Format::new()
        .set_bold()
        .set_background_color(Color::RGB(0xDDEBF7))
        .set_border_bottom(FormatBorder::Thin)
}

/// Sheets with more cells than this have their rows written by
/// [`big_sheet`].
const BIG_SHEET_CELLS: usize = 100_000;

/// Writes one table's header, widths (from `sample`, the sheet's first
/// rows held), freeze pane and autofilter, and, with `rows`, its cells,
/// each column formatted as `styles` says.
fn fill_worksheet(
    ws: &mut Worksheet,
    sheet: &Table,
    sample: &Table,
    name: &str,
    header: &Format,
    styles: &[ColumnStyle],
    rows: bool,
) -> Result<(), WriteError> {
    ws.set_name(name)?;
    let width = sheet.ncols();
    if width > MAX_COLS {
        return Err(WriteError::Invalid(format!(
            "{width} columns exceed Excel's limit of {MAX_COLS}"
        )));
    }
    if sheet.nrows() >= MAX_ROWS {
        return Err(WriteError::Invalid(format!(
            "{} rows plus the header exceed Excel's limit of {MAX_ROWS}",
            sheet.nrows()
        )));
    }
    if width == 0 {
        return Ok(());
    }
    // Both limits were checked above, so these conversions cannot fail.
    let last_col = u16::try_from(width - 1)?;
    let last_row = u32::try_from(sheet.nrows())?;

    for (c, (col, style)) in sheet.columns.iter().zip(styles).enumerate() {
        let c = c as u16;
        ws.write_string_with_format(0, c, clip(&col.name), header)?;
        if let Some(f) = style.number_format {
            // Cells written without a format take the column's.
            ws.set_column_format(c, &Format::new().set_num_format(f.code()))?;
        }
    }
    if rows {
        let mut r = 0;
        let mut written = Ok(());
        sheet.for_each_row(0..sheet.nrows(), |row| {
            r += 1;
            if written.is_ok() {
                written = write_row(ws, r, row, styles);
            }
        });
        written?;
    }

    for (c, w) in column_widths(sample, styles).into_iter().enumerate() {
        ws.set_column_width(c as u16, w as f64)?;
    }
    ws.set_freeze_panes(1, 0)?;
    ws.autofilter(0, 0, last_row, last_col)?;
    Ok(())
}

/// Writes the cells of one row at worksheet row `r`.
fn write_row(
    ws: &mut Worksheet,
    r: u32,
    row: Cells<'_>,
    styles: &[ColumnStyle],
) -> Result<(), WriteError> {
    for (c, (value, style)) in row.iter().zip(styles).enumerate() {
        let c = c as u16;
        match cell(value, style) {
            Cell::Blank => {}
            Cell::Number(x) => {
                ws.write_number(r, c, x)?;
            }
            Cell::Bool(b) => {
                ws.write_boolean(r, c, b)?;
            }
            Cell::Text(s) => {
                ws.write_string(r, c, s)?;
            }
        }
    }
    Ok(())
}

/// Column widths in characters from the header and the first
/// [`WIDTH_SAMPLE_ROWS`] rows as `styles` show them, clamped to
/// `MIN_WIDTH..=MAX_WIDTH`.
fn column_widths(sheet: &Table, styles: &[ColumnStyle]) -> Vec<usize> {
    let sample = sheet.nrows().min(WIDTH_SAMPLE_ROWS);
    sheet
        .columns
        .iter()
        .zip(styles)
        .map(|(col, style)| {
            // Room for the autofilter drop-down button beside the title.
            let mut w = col.name.chars().count() + 3;
            for cell in &col.values[..sample] {
                let number = match cell {
                    Value::Int(i) => Some(*i as f64),
                    Value::Float(x) => Some(*x),
                    _ => None,
                };
                let len = match (cell, number, style.number_format) {
                    (_, Some(x), Some(f)) => f.shown_len(x),
                    (Value::Int(i), _, None) => i.to_string().len(),
                    // Excel's General format shows about 11 significant characters.
                    (Value::Float(x), _, None) => float_repr(*x).len().min(12),
                    (Value::Bool(_), _, _) => 5,
                    // Counting stops at the cap: no need to walk huge strings.
                    (Value::Text(s) | Value::Py(s), _, _) => s.chars().take(MAX_WIDTH).count(),
                    _ => 0,
                };
                w = w.max(len + 1);
            }
            w.clamp(MIN_WIDTH, MAX_WIDTH)
        })
        .collect()
}

/// Excel-valid, case-insensitively unique worksheet names for `names`.
///
/// A name that is already valid and not taken by an earlier sheet is kept as
/// it is. Otherwise the characters `[]:*?/\`, control characters, U+FFFE
/// and U+FFFF become `_`, leading and trailing
/// apostrophes are dropped, an empty name becomes `Sheet`, the reserved
/// `History` gets a `_` appended, the name is cut to 31 UTF-16 units, and a
/// suffix `_2`, `_3`, ... is added when it clashes with another sheet.
pub fn worksheet_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let names: Vec<&str> = names.into_iter().collect();
    // Pass 1: valid names keep their spelling, first come first served.
    let mut taken: HashSet<String> = HashSet::new();
    let mut out: Vec<Option<String>> = names
        .iter()
        .map(|&n| (is_valid_name(n) && taken.insert(n.to_lowercase())).then(|| n.to_string()))
        .collect();
    // Pass 2: the rest are repaired and de-duplicated against everything.
    for (slot, &name) in out.iter_mut().zip(&names) {
        if slot.is_some() {
            continue;
        }
        let base = repair_name(name);
        let mut candidate = base.clone();
        let mut k = 2u64;
        while !taken.insert(candidate.to_lowercase()) {
            let suffix = format!("_{k}");
            // Cutting can expose an apostrophe; it is harmless before the
            // suffix, but dropping it keeps names tidy.
            let stem = cut_units(&base, MAX_NAME_UNITS.saturating_sub(suffix.len()));
            candidate = format!("{}{suffix}", stem.trim_end_matches('\''));
            k += 1;
        }
        *slot = Some(candidate);
    }
    out.into_iter().map(Option::unwrap_or_default).collect()
}

/// Whether `c` may not be in a worksheet name: Excel's forbidden
/// characters, and those XML 1.0 cannot hold (a sheet name is an XML
/// attribute, which has no `_xHHHH_` escape).
fn is_bad_name_char(c: char) -> bool {
    matches!(
        c,
        '[' | ']' | ':' | '*' | '?' | '/' | '\\' | '\u{fffe}' | '\u{ffff}'
    ) || c.is_control()
}

/// Whether Excel accepts `name` as a worksheet name as it is.
fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.encode_utf16().count() <= MAX_NAME_UNITS
        && !name.contains(is_bad_name_char)
        && !name.starts_with('\'')
        && !name.ends_with('\'')
        && !name.eq_ignore_ascii_case("history")
}

/// Makes `name` valid for Excel (see [`worksheet_names`]).
fn repair_name(name: &str) -> String {
    let replaced: String = name
        .chars()
        .map(|c| if is_bad_name_char(c) { '_' } else { c })
        .collect();
    let mut s = cut_units(replaced.trim_matches('\''), MAX_NAME_UNITS)
        .trim_end_matches('\'')
        .to_string();
    if s.is_empty() {
        s = "Sheet".to_string();
    }
    if s.eq_ignore_ascii_case("history") {
        s.push('_');
    }
    s
}

/// The longest prefix of `s` of at most `max` UTF-16 units.
fn cut_units(s: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, ch) in s.char_indices() {
        units += ch.len_utf16();
        if units > max {
            return &s[..i];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CellRange, ChartAxis, Roof, Scale, Series};
    use std::fs;

    /// Writes `sheets` and `charts` as one workbook at `path`.
    fn write_xlsx_with_charts(
        sheets: &[Table],
        charts: &[ReportChart],
        path: &Path,
    ) -> Result<(), WriteError> {
        let doc = Document {
            tables: sheets.iter().collect(),
            charts: charts.to_vec(),
            ..Document::default()
        };
        let files = Xlsx { path: path.into() }.render(&doc)?;
        let mut staging = Staging::new();
        staging.put(path, &files[0].bytes)?;
        staging.commit()
    }

    fn sample(name: &str) -> Table {
        let mut s = Table::new(name, &["op", "count", "time_ms", "ok", "gap"]);
        s.push_row(vec![
            Value::Text("aten::mm".into()),
            Value::Int(3),
            Value::Float(1.5),
            Value::Bool(true),
            Value::Null,
        ]);
        s.push_row(vec![
            Value::Text("x".repeat(40_000).into()),
            Value::Int(i64::MAX),
            Value::Float(f64::NAN),
            Value::Bool(false),
            Value::Float(f64::INFINITY),
        ]);
        s
    }

    #[test]
    fn writes_a_zip_workbook() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.xlsx");
        let sheets = [
            sample("gpu_timeline"),
            sample("ops/by:name"),
            sample("GPU_TIMELINE"),
            Table::new("empty", &[]),
        ];
        write_xlsx(&sheets, &path).unwrap();
        let bytes = fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"PK"));
        // Only the workbook remains: the temporary file was renamed.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A roofline-like sheet: name, FLOPs/byte, TFLOP/s.
    fn roofline_sheet() -> Table {
        let mut s = Table::new("roofline sheet", &["name", "FLOPs/Byte", "TFLOP/s"]);
        for i in 0..6 {
            let x = 0.5 * 4f64.powi(i);
            s.push_row(vec![
                Value::Text(format!("k{i}").into()),
                Value::Float(x),
                Value::Float((x * 5.3).min(700.0)),
            ]);
        }
        s
    }

    fn chart(series: Vec<Series>) -> ReportChart {
        let log = |name: &str| ChartAxis {
            name: name.into(),
            scale: Scale::Log10,
        };
        ReportChart {
            name: "roofline_chart".into(),
            title: "Roofline".into(),
            x: log("FLOPs/Byte"),
            y: log("TFLOP/s"),
            series,
            roofs: Vec::new(),
            data_table: Some("roofline sheet".into()),
        }
    }

    fn series(name: &str, first_row: usize, last_row: usize) -> Series {
        Series {
            name: name.into(),
            points: Vec::new(),
            cells: Some(CellRange {
                x_col: 1,
                y_col: 2,
                first_row,
                last_row,
            }),
        }
    }

    /// Names of the files inside the zip at `path`.
    fn zip_entries(path: &Path) -> Vec<String> {
        let file = fs::File::open(path).unwrap();
        let zip = zip::ZipArchive::new(file).unwrap();
        zip.file_names().map(|n| n.unwrap().into_owned()).collect()
    }

    fn zip_text(path: &Path, name: &str) -> String {
        use std::io::Read;
        let file = fs::File::open(path).unwrap();
        let mut zip = zip::ZipArchive::new(file).unwrap();
        let mut text = String::new();
        zip.by_name(name)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text
    }

    #[test]
    fn writes_scatter_chart_sheet() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("charts.xlsx");
        let charts = [chart(vec![
            series("gemm", 0, 2),
            series("elementwise", 3, 5),
        ])];
        write_xlsx_with_charts(&[roofline_sheet()], &charts, &path).unwrap();
        assert!(fs::read(&path).unwrap().starts_with(b"PK"));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let entries = zip_entries(&path);
        assert!(
            entries.iter().any(|e| e == "xl/charts/chart1.xml"),
            "{entries:?}"
        );
        let wb = zip_text(&path, "xl/workbook.xml");
        let data = wb.find("name=\"roofline sheet\"").unwrap();
        let chart_sheet = wb.find("name=\"roofline_chart\"").unwrap();
        assert!(data < chart_sheet, "chart sheet comes after the data");
        let xml = zip_text(&path, "xl/charts/chart1.xml");
        assert!(xml.contains("<c:scatterChart>"));
        assert_eq!(xml.matches("<c:ser>").count(), 2);
        assert_eq!(xml.matches("<c:logBase val=\"10\"/>").count(), 2);
        assert!(xml.contains("FLOPs/Byte") && xml.contains("TFLOP/s"));
        assert!(xml.contains("<c:legend>"));
        // Ranges skip the header row and quote the sheet name.
        assert!(xml.contains("'roofline sheet'!$B$2:$B$4"), "{xml}");
        assert!(xml.contains("'roofline sheet'!$C$5:$C$7"), "{xml}");
    }

    #[test]
    fn roofline_chart_draws_roofs_and_colours_series() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roofs.xlsx");
        let mut c = chart(vec![series("gemm", 0, 2), series("elementwise", 3, 5)]);
        let rows = roofline_sheet();
        // The writer reads the points for the axis range.
        for s in &mut c.series {
            let r = s.cells.unwrap();
            for i in r.first_row..=r.last_row {
                s.points.push(crate::report::Point {
                    label: String::new(),
                    x: rows.columns[1].values[i].to_f64(),
                    y: rows.columns[2].values[i].to_f64(),
                    weight: 1.0,
                });
            }
        }
        c.roofs = vec![Roof {
            gpu: "MI300X".into(),
            compute_spec: "matrix_bf16".into(),
            peak_tflops: 708.0,
            mem_bw_gbps: 5300.0,
        }];
        write_xlsx_with_charts(&[rows], &[c], &path).unwrap();
        let xml = zip_text(&path, "xl/charts/chart1.xml");
        // Two category series and two roof lines.
        assert_eq!(xml.matches("<c:ser>").count(), 4, "{xml}");
        for colour in ["1F77B4", "FF7F0E", "D62728"] {
            assert!(
                xml.contains(&format!("<a:srgbClr val=\"{colour}\"/>")),
                "{colour}"
            );
        }
        assert!(xml.contains("<a:prstDash val=\"dash\"/>"), "{xml}");
        assert!(xml.contains("MI300X memory roof 5.3 TB/s"), "{xml}");
        assert!(xml.contains("MI300X matrix_bf16 roof 708 TFLOP/s"), "{xml}");
        // Axes fixed to decades: points 0.5..512 and the ridge 133.6 give
        // 10^-2..10^4 on x; rates 2.65..700 and the peak 10^-1..10^4 on y.
        assert!(xml.contains("<c:max val=\"10000\"/>"), "{xml}");
        assert!(xml.contains("<c:min val=\"0.01\"/>"), "{xml}");
        assert!(xml.contains("<c:min val=\"0.1\"/>"), "{xml}");
        // The roof lines' end points sit on the chart sheet.
        assert!(xml.contains("roofline_chart!$B$36:$B$37"), "{xml}");
        assert!(xml.contains("roofline_chart!$C$38:$C$39"), "{xml}");
    }

    #[test]
    fn chart_errors_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.xlsx");
        let sheets = [roofline_sheet()];
        let mut missing = chart(vec![series("a", 0, 1)]);
        missing.data_table = Some("nope".into());
        let bad_rows = chart(vec![series("a", 2, 6)]);
        let reversed = chart(vec![series("a", 3, 2)]);
        let mut bad_col = chart(vec![series("a", 0, 1)]);
        bad_col.series[0].cells.as_mut().unwrap().y_col = 3;
        let mut no_cells = chart(vec![series("a", 0, 1)]);
        no_cells.series[0].cells = None;
        for c in [missing, bad_rows, reversed, bad_col, no_cells] {
            let err = write_xlsx_with_charts(&sheets, &[c], &path).unwrap_err();
            assert!(err.to_string().contains("roofline_chart"), "{err}");
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }

    #[test]
    fn chart_sheet_names_are_unique_and_empty_charts_get_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dup.xlsx");
        let mut empty = chart(Vec::new());
        empty.name = "roofline sheet".into();
        write_xlsx_with_charts(&[roofline_sheet()], &[empty], &path).unwrap();
        let wb = zip_text(&path, "xl/workbook.xml");
        assert!(wb.contains("name=\"roofline sheet_2\""), "{wb}");
        assert!(
            !zip_entries(&path)
                .iter()
                .any(|e| e.starts_with("xl/charts/"))
        );
    }

    #[test]
    fn failure_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A regular file where the workbook's directory should be.
        let blocker = dir.path().join("blocker");
        fs::write(&blocker, "x").unwrap();
        let path = blocker.join("report.xlsx");
        let err = write_xlsx(&[sample("a")], &path).unwrap_err();
        assert!(err.to_string().contains("report.xlsx"), "{err}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn names_valid_kept() {
        let n = worksheet_names(["gpu_timeline", "ops summary", "a'b"]);
        assert_eq!(n, ["gpu_timeline", "ops summary", "a'b"]);
    }

    #[test]
    fn names_repaired() {
        let long = "abcdefghijklmnopqrstuvwxyz0123456789";
        let n = worksheet_names([
            "a[b]:c*d?e/f\\g\u{1}\u{ffff}\n",
            "",
            "'quoted'",
            "History",
            long,
        ]);
        assert_eq!(
            n,
            [
                "a_b__c_d_e_f_g___",
                "Sheet",
                "quoted",
                "History_",
                "abcdefghijklmnopqrstuvwxyz01234"
            ]
        );
    }

    #[test]
    fn names_deduplicated() {
        // The valid "x_2" keeps its name; the second "x" must avoid it.
        let n = worksheet_names(["x", "X", "x_2", "x"]);
        assert_eq!(n, ["x", "X_3", "x_2", "x_4"]);
        let long = "a".repeat(40);
        let n = worksheet_names([long.as_str(), long.as_str()]);
        assert_eq!(n[0], "a".repeat(31));
        assert_eq!(n[1], format!("{}_2", "a".repeat(29)));
        for name in &n {
            assert!(is_valid_name(name));
        }
    }

    #[test]
    fn clip_respects_limit_and_chars() {
        assert_eq!(clip("short"), "short");
        let s = "é".repeat(40_000);
        let c = clip(&s);
        assert_eq!(c.chars().count(), MAX_CELL_UNITS);
        // A surrogate pair never gets split.
        let s = format!("{}😀", "a".repeat(MAX_CELL_UNITS - 1));
        assert_eq!(clip(&s), "a".repeat(MAX_CELL_UNITS - 1));
    }

    #[test]
    fn widths_clamped() {
        let mut s = Table::new("w", &["a", "a_much_longer_header"]);
        s.push_row(vec![Value::Text("y".repeat(500).into()), Value::Int(7)]);
        // "a": max(1+3, 500 chars capped at 60, +1) -> 60.
        // header: 20 + 3 = 23.
        let styles = |s: &Table| -> Vec<ColumnStyle> {
            s.columns.iter().map(|c| column_style(c, 10)).collect()
        };
        assert_eq!(column_widths(&s, &styles(&s)), vec![60, 23]);
        let s = Table::new("w", &["a"]);
        assert_eq!(column_widths(&s, &styles(&s)), vec![8]);
        // Formatted numbers count as shown: 1,234,567.00 is 12 characters.
        let mut s = Table::new("w", &["t (µs)"]);
        s.push_row(vec![Value::Float(1_234_567.0)]);
        assert_eq!(column_widths(&s, &styles(&s)), vec![13]);
    }

    /// A per-kernel-like sheet of `rows` rows naming `names` kernels.
    fn kernel_rows(rows: i64, names: i64) -> Table {
        let mut s = Table::new("big", &["name", "i", "x", "flag", "none"]);
        for i in 0..rows {
            s.push_row(vec![
                Value::Text(format!("kernel_{}", i % names).into()),
                Value::Int(i),
                Value::Float(i as f64 * 0.25),
                Value::Bool(i % 2 == 0),
                Value::Null,
            ]);
        }
        s
    }

    #[test]
    fn big_sheets_read_back_as_held_ones() {
        // Strings shared between the sheets, before and after the big one.
        let big = kernel_rows(300, 7);
        let (a, b) = (sample("before"), sample("after"));
        let sheets = [&a, &big, &b];
        let dir = tempfile::tempdir().unwrap();
        let read_back = |big_sheet_cells: usize, name: &str| {
            let path = dir.path().join(name);
            fs::write(
                &path,
                workbook_bytes(&sheets, &[], &path, big_sheet_cells).unwrap(),
            )
            .unwrap();
            crate::report::read::read_xlsx(&path).unwrap()
        };
        let held = read_back(usize::MAX, "held.xlsx");
        let spliced = read_back(1_000, "spliced.xlsx");
        assert_eq!(held.len(), 3);
        assert_eq!(held[1].nrows(), 300);
        assert_eq!(held, spliced);
        // The big sheet's rows were written here: its strings are inline.
        let sheet2 = zip_text(&dir.path().join("spliced.xlsx"), "xl/worksheets/sheet2.xml");
        assert!(
            sheet2.contains("<is><t>kernel_6</t></is>"),
            "{}",
            &sheet2[..2000]
        );
        let held2 = zip_text(&dir.path().join("held.xlsx"), "xl/worksheets/sheet2.xml");
        assert!(!held2.contains("inlineStr"));
    }

    #[test]
    fn deferred_sheets_are_written_as_held_ones() {
        let big = kernel_rows(300, 7);
        let deferred = crate::table::deferred_copy(&big);
        let (a, b) = (sample("before"), sample("after"));
        let dir = tempfile::tempdir().unwrap();
        // Through the library (a small sheet) and spliced (a big one).
        for big_sheet_cells in [usize::MAX, 1_000] {
            let mut parts = Vec::new();
            for (name, sheets) in [
                ("held.xlsx", [&a, &big, &b]),
                ("deferred.xlsx", [&a, &deferred, &b]),
            ] {
                let path = dir.path().join(name);
                fs::write(
                    &path,
                    workbook_bytes(&sheets, &[], &path, big_sheet_cells).unwrap(),
                )
                .unwrap();
                let entries = [
                    "xl/worksheets/sheet1.xml",
                    "xl/worksheets/sheet2.xml",
                    "xl/worksheets/sheet3.xml",
                    "xl/styles.xml",
                    "xl/sharedStrings.xml",
                ];
                parts.push(entries.map(|e| zip_text(&path, e)));
            }
            assert!(parts[0][1].contains("<row r=\"301\""), "{big_sheet_cells}");
            assert_eq!(parts[0], parts[1], "{big_sheet_cells}");
        }
    }

    /// A big sheet with every kind of cell: escapes, kept whitespace,
    /// blanks of each sort, numbers that print as integers and ones that do
    /// not, a numeric parameter column, and blank rows at the end.
    fn awkward_rows(rows: usize) -> Table {
        let mut s = Table::new(
            "awkward",
            &["name", "count", "time_ms", "flag", "param: M", "x"],
        );
        let texts = [
            "a & b <c> d",
            " lead",
            "trail\t",
            "",
            "ctl\u{1}\u{1f}\u{b}",
            "tab\tand\nnewline",
            "_x0041_ and _x12G4_ and _x_x00FF_",
            "non-char \u{fffe}\u{ffff} é😀",
            "=HYPERLINK(\"x\")",
        ];
        let floats = [
            0.1,
            -0.0,
            1e22,
            1e-7,
            2.5,
            f64::NAN,
            f64::INFINITY,
            123456789.0,
            9.5e15,
        ];
        for i in 0..rows {
            let last = i + 3 >= rows;
            let row = if last {
                vec![
                    Value::Null,
                    Value::Null,
                    Value::Float(f64::NAN),
                    Value::Null,
                    Value::Text("".into()),
                    Value::Null,
                ]
            } else {
                vec![
                    Value::Text(texts[i % texts.len()].into()),
                    Value::Int(match i % 4 {
                        0 => i as i64,
                        1 => -(i as i64),
                        2 => i64::MAX - i as i64,
                        _ => 1 << 53,
                    }),
                    Value::Float(floats[i % floats.len()] * (i as f64 + 1.0)),
                    if i % 5 == 0 {
                        Value::Null
                    } else {
                        Value::Bool(i % 3 == 0)
                    },
                    Value::Text(["64", "0.5", "1e3", "x", "0.0"][i % 5].into()),
                    Value::Float(i as f64 / 7.0),
                ]
            };
            s.push_row(row);
        }
        s
    }

    /// The worksheet XML of `sheet` written by us and by the library's
    /// constant-memory mode (inline strings, no row spans, one row at a
    /// time), each without its header row (whose strings the library
    /// shares); and the two workbooks' paths, in `dir`.
    fn ours_and_librarys(sheet: &Table, dir: &Path) -> [(String, PathBuf); 2] {
        let styles: Vec<ColumnStyle> = sheet
            .columns
            .iter()
            .map(|c| column_style(c, WIDTH_SAMPLE_ROWS))
            .collect();
        let ours = dir.join("ours.xlsx");
        fs::write(&ours, workbook_bytes(&[sheet], &[], &ours, 0).unwrap()).unwrap();
        let library = dir.join("library.xlsx");
        let header = header_format();
        let mut wb = Workbook::new();
        let ws = wb.add_worksheet_with_constant_memory().unwrap();
        fill_worksheet(ws, sheet, sheet, &sheet.name, &header, &styles, true).unwrap();
        fs::write(&library, wb.save_to_buffer().unwrap()).unwrap();
        [ours, library].map(|path| {
            let xml = zip_text(&path, "xl/worksheets/sheet1.xml");
            let start = xml.find("<row r=\"1\"").unwrap();
            let end = start + xml[start..].find("</row>").unwrap();
            (format!("{}{}", &xml[..start], &xml[end..]), path)
        })
    }

    /// Panics, showing where, unless `ours` is `library`.
    fn assert_same_xml(ours: &str, library: &str) {
        if ours != library {
            let at = ours
                .bytes()
                .zip(library.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(ours.len().min(library.len()));
            panic!(
                "first difference at byte {at}:\n ours    {:?}\n library {:?}",
                &ours[at.saturating_sub(80)..(at + 80).min(ours.len())],
                &library[at.saturating_sub(80)..(at + 80).min(library.len())]
            );
        }
    }

    #[test]
    fn big_sheet_rows_are_the_librarys_own() {
        // Over several waves of pieces.
        let sheet = awkward_rows(130_000);
        let dir = tempfile::tempdir().unwrap();
        let [(ours_xml, ours), (library_xml, _)] = ours_and_librarys(&sheet, dir.path());
        assert!(ours_xml.contains("_x005F_x0041_") && ours_xml.contains("_xFFFE_"));
        assert!(ours_xml.contains("<dimension ref=\"A1:F129998\"/>"));
        assert_same_xml(&ours_xml, &library_xml);
        // And the workbook reads back as the table.
        let back = crate::report::read::read_xlsx(&ours).unwrap();
        let held = dir.path().join("held.xlsx");
        fs::write(
            &held,
            workbook_bytes(&[&sheet], &[], &held, usize::MAX).unwrap(),
        )
        .unwrap();
        assert_eq!(back, crate::report::read::read_xlsx(&held).unwrap());
    }

    #[test]
    fn wide_big_sheet_rows_are_the_librarys_own() {
        // Columns past Z, and runs of columns sharing a format, which the
        // library lists as one `<col min=.. max=..>`.
        let names: Vec<String> = (0..40)
            .map(|c| match c % 4 {
                0 => format!("count_{c}"),
                1 | 2 => format!("time_ms_{c}"),
                _ => format!("x_{c}"),
            })
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut sheet = Table::new("wide", &names);
        for i in 0..2_000i64 {
            sheet.push_row(
                (0..40)
                    .map(|c| match c % 4 {
                        0 => Value::Int(i * c),
                        3 if i % 3 == 0 => Value::Text(format!("t{i}").into()),
                        _ => Value::Float(i as f64 / (c as f64 + 1.0)),
                    })
                    .collect(),
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let [(ours_xml, _), (library_xml, _)] = ours_and_librarys(&sheet, dir.path());
        assert!(ours_xml.contains("<c r=\"AN2001\""), "no column AN");
        assert!(ours_xml.contains("min=\"2\" max=\"3\""), "no shared format");
        assert_same_xml(&ours_xml, &library_xml);
    }

    #[test]
    fn big_sheet_is_fast_enough() {
        let s = kernel_rows(50_000, 977);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.xlsx");
        let t = std::time::Instant::now();
        write_xlsx(&[s], &path).unwrap();
        // Generous bound so unoptimised test builds pass too.
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }
}
