//! Excel workbook writer: one worksheet per [`Sheet`], in order.

use super::csv::write_atomic;
use super::{Cell, Sheet};
use crate::pyfmt::float_repr;
use anyhow::{Context, Result, bail};
use rust_xlsxwriter::{Color, Format, FormatBorder, Workbook, Worksheet};
use std::collections::HashSet;
use std::path::Path;

/// Excel's limit on worksheet name length, in UTF-16 code units.
const MAX_NAME_UNITS: usize = 31;
/// Excel's limit on the text of one cell, in UTF-16 code units.
const MAX_CELL_UNITS: usize = 32_767;
/// Excel's row limit (the header takes one of them).
const MAX_ROWS: usize = 1_048_576;
/// Excel's column limit.
const MAX_COLS: usize = 16_384;
/// Rows sampled for column widths; scanning everything is slow on big sheets.
const WIDTH_SAMPLE_ROWS: usize = 200;
/// Column width bounds, in characters.
const MIN_WIDTH: usize = 8;
const MAX_WIDTH: usize = 60;

/// Writes `sheets` to an `.xlsx` workbook at `path`.
///
/// Each sheet becomes a worksheet with a bold, shaded, underlined header row
/// that is frozen and carries an autofilter. Ints and finite floats are
/// numbers, NaN and infinite floats are blank, bools are booleans and text is
/// a string (cut to Excel's 32767-character cell limit). Column widths follow
/// the longest text among the header and the first rows, clamped to 8..=60
/// characters. Worksheet names are made valid for Excel (see
/// [`worksheet_names`]). The workbook is written to a temporary file beside
/// `path` and renamed into place, so a failure leaves no partial file.
pub fn write_xlsx(sheets: &[Sheet], path: &Path) -> Result<()> {
    let names = worksheet_names(sheets.iter().map(|s| s.name.as_str()));
    let header = Format::new()
        .set_bold()
        .set_background_color(Color::RGB(0xDDEBF7))
        .set_border_bottom(FormatBorder::Thin);
    let mut workbook = Workbook::new();
    for (sheet, name) in sheets.iter().zip(&names) {
        let ws = workbook.add_worksheet();
        fill_worksheet(ws, sheet, name, &header)
            .with_context(|| format!("sheet {:?} of {}", sheet.name, path.display()))?;
    }
    write_atomic(path, |tmp| {
        workbook
            .save(tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))
    })
    .with_context(|| format!("writing {}", path.display()))
}

/// Writes one sheet's header, cells, widths, freeze pane and autofilter.
fn fill_worksheet(ws: &mut Worksheet, sheet: &Sheet, name: &str, header: &Format) -> Result<()> {
    ws.set_name(name)?;
    let width = sheet.columns.len();
    if width > MAX_COLS {
        bail!("{width} columns exceed Excel's limit of {MAX_COLS}");
    }
    if sheet.rows.len() >= MAX_ROWS {
        bail!(
            "{} rows plus the header exceed Excel's limit of {MAX_ROWS}",
            sheet.rows.len()
        );
    }
    if width == 0 {
        return Ok(());
    }
    // Both limits were checked above, so these conversions cannot fail.
    let last_col = u16::try_from(width - 1)?;
    let last_row = u32::try_from(sheet.rows.len())?;

    for (c, title) in sheet.columns.iter().enumerate() {
        ws.write_string_with_format(0, c as u16, clip(title), header)?;
    }
    for (r, row) in sheet.rows.iter().enumerate() {
        let r = r as u32 + 1;
        // Cells beyond the header width have no column to go to.
        for (c, cell) in row.iter().take(width).enumerate() {
            let c = c as u16;
            match cell {
                Cell::Empty => {}
                Cell::Int(i) => {
                    ws.write_number(r, c, *i as f64)?;
                }
                Cell::Float(x) if x.is_finite() => {
                    ws.write_number(r, c, *x)?;
                }
                Cell::Float(_) => {}
                Cell::Bool(b) => {
                    ws.write_boolean(r, c, *b)?;
                }
                Cell::Text(s) => {
                    ws.write_string(r, c, clip(s))?;
                }
            }
        }
    }

    for (c, w) in column_widths(sheet).into_iter().enumerate() {
        ws.set_column_width(c as u16, w as f64)?;
    }
    ws.set_freeze_panes(1, 0)?;
    ws.autofilter(0, 0, last_row, last_col)?;
    Ok(())
}

/// `s` cut to Excel's cell text limit, on a character boundary.
fn clip(s: &str) -> &str {
    // Cheap exit: a string of at most MAX_CELL_UNITS bytes has at most that
    // many UTF-16 units.
    if s.len() <= MAX_CELL_UNITS {
        return s;
    }
    let mut units = 0;
    for (i, ch) in s.char_indices() {
        units += ch.len_utf16();
        if units > MAX_CELL_UNITS {
            return &s[..i];
        }
    }
    s
}

/// Column widths in characters from the header and the first
/// [`WIDTH_SAMPLE_ROWS`] rows, clamped to `MIN_WIDTH..=MAX_WIDTH`.
fn column_widths(sheet: &Sheet) -> Vec<usize> {
    let mut widths: Vec<usize> = sheet
        .columns
        .iter()
        // Room for the autofilter drop-down button beside the title.
        .map(|c| c.chars().count() + 3)
        .collect();
    for row in sheet.rows.iter().take(WIDTH_SAMPLE_ROWS) {
        for (w, cell) in widths.iter_mut().zip(row) {
            let len = match cell {
                Cell::Empty => 0,
                Cell::Int(i) => i.to_string().len(),
                // Excel's General format shows about 11 significant characters.
                Cell::Float(x) => float_repr(*x).len().min(12),
                Cell::Bool(_) => 5,
                // Counting stops at the cap: no need to walk huge strings.
                Cell::Text(s) => s.chars().take(MAX_WIDTH).count(),
            };
            *w = (*w).max(len + 1);
        }
    }
    widths
        .into_iter()
        .map(|w| w.clamp(MIN_WIDTH, MAX_WIDTH))
        .collect()
}

/// Excel-valid, case-insensitively unique worksheet names for `names`.
///
/// A name that is already valid and not taken by an earlier sheet is kept as
/// it is. Otherwise the characters `[]:*?/\` become `_`, leading and trailing
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

/// Whether Excel accepts `name` as a worksheet name as it is.
fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.encode_utf16().count() <= MAX_NAME_UNITS
        && !name.contains(['[', ']', ':', '*', '?', '/', '\\'])
        && !name.starts_with('\'')
        && !name.ends_with('\'')
        && !name.eq_ignore_ascii_case("history")
}

/// Makes `name` valid for Excel (see [`worksheet_names`]).
fn repair_name(name: &str) -> String {
    let replaced: String = name
        .chars()
        .map(|c| match c {
            '[' | ']' | ':' | '*' | '?' | '/' | '\\' => '_',
            c => c,
        })
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
    use std::fs;

    fn sample(name: &str) -> Sheet {
        let mut s = Sheet::new(name, &["op", "count", "time_ms", "ok", "gap"]);
        s.rows.push(vec![
            Cell::Text("aten::mm".into()),
            Cell::Int(3),
            Cell::Float(1.5),
            Cell::Bool(true),
            Cell::Empty,
        ]);
        s.rows.push(vec![
            Cell::Text("x".repeat(40_000)),
            Cell::Int(i64::MAX),
            Cell::Float(f64::NAN),
            Cell::Bool(false),
            Cell::Float(f64::INFINITY),
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
            Sheet::new("empty", &[]),
        ];
        write_xlsx(&sheets, &path).unwrap();
        let bytes = fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"PK"));
        // Only the workbook remains: the temporary file was renamed.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn failure_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing_dir/report.xlsx");
        let err = write_xlsx(&[sample("a")], &path).unwrap_err();
        assert!(format!("{err:#}").contains("report.xlsx"), "{err:#}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn names_valid_kept() {
        let n = worksheet_names(["gpu_timeline", "ops summary", "a'b"]);
        assert_eq!(n, ["gpu_timeline", "ops summary", "a'b"]);
    }

    #[test]
    fn names_repaired() {
        let long = "abcdefghijklmnopqrstuvwxyz0123456789";
        let n = worksheet_names(["a[b]:c*d?e/f\\g", "", "'quoted'", "History", long]);
        assert_eq!(
            n,
            [
                "a_b__c_d_e_f_g",
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
        let mut s = Sheet::new("w", &["a", "a_much_longer_header"]);
        s.rows.push(vec![Cell::Text("y".repeat(500)), Cell::Int(7)]);
        // "a": max(1+3, 500 chars capped at 60, +1) -> 60.
        // header: 20 + 3 = 23.
        assert_eq!(column_widths(&s), vec![60, 23]);
        let s = Sheet::new("w", &["a"]);
        assert_eq!(column_widths(&s), vec![8]);
    }

    #[test]
    fn big_sheet_is_fast_enough() {
        let mut s = Sheet::new("big", &["name", "i", "x", "flag"]);
        for i in 0..50_000 {
            s.rows.push(vec![
                Cell::Text(format!("kernel_{}", i % 977)),
                Cell::Int(i),
                Cell::Float(i as f64 * 0.25),
                Cell::Bool(i % 2 == 0),
            ]);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.xlsx");
        let t = std::time::Instant::now();
        write_xlsx(&[s], &path).unwrap();
        // Generous bound so unoptimised test builds pass too.
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }
}
