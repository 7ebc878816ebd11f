//! Staging a command's outputs: sheets (CSV and Parquet folders, the
//! workbook), the Markdown page and the files of any writer, all through
//! one [`Staging`] so a run's files appear together or not at all.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use tracelens::report::csv::Csv;
use tracelens::report::markdown::Markdown;
use tracelens::report::parquet::Parquet;
use tracelens::report::staging::Staging;
use tracelens::report::xlsx::Xlsx;
use tracelens::report::{Document, Page, Writer};

/// Renders the Markdown page `page()` when `--md` asks for one and stages it
/// unless it goes to stdout (`-`); returns its text for printing.
pub(crate) fn stage_markdown(
    staging: &mut Staging,
    md: Option<&PathBuf>,
    written: &mut Vec<String>,
    page: impl FnOnce() -> Page,
) -> Result<Option<String>> {
    let Some(md) = md else { return Ok(None) };
    let text = super::render_text(&Markdown { path: md.clone() }, &Document::of_page(page()))?;
    if md.as_os_str() != "-" {
        staging.put(md, text.as_bytes())?;
        written.push(md.display().to_string());
    }
    Ok(Some(text))
}

/// Stages the files `writer` makes of `doc`, one by one (each creating its
/// directory).
pub(crate) fn stage_with(staging: &mut Staging, writer: &dyn Writer, doc: &Document) -> Result<()> {
    for f in writer.render(doc)? {
        staging.put(&f.name, &f.bytes)?;
    }
    Ok(())
}

/// The folders of per-sheet files a command was asked for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SheetDirs<'a> {
    /// `--csv DIR`.
    pub csv: Option<&'a Path>,
    /// `--parquet DIR`.
    pub parquet: Option<&'a Path>,
}

/// Stages `sheets`' tables as one file per table in each folder of `dirs`
/// (CSV, Parquet) and `book` as a workbook at `xlsx_path`, each when asked
/// for; returns the "wrote …" lines for the terminal.
pub(crate) fn stage_sheets(
    staging: &mut Staging,
    dirs: SheetDirs,
    sheets: &Document,
    xlsx_path: Option<&Path>,
    book: &Document,
) -> Result<Vec<String>> {
    let mut written = Vec::new();
    if let Some(dir) = dirs.csv {
        let csv = Csv { dir: dir.into() };
        written.push(stage_sheet_dir(staging, &csv, dir, "csv", "CSV", sheets)?);
    }
    if let Some(dir) = dirs.parquet {
        let pq = Parquet { dir: dir.into() };
        written.push(stage_sheet_dir(
            staging, &pq, dir, "parquet", "Parquet", sheets,
        )?);
    }
    if let Some(x) = xlsx_path {
        let dir = x.parent().unwrap_or(Path::new(""));
        Xlsx { path: x.into() }.stage_files(book, dir, staging)?;
        written.push(x.display().to_string());
    }
    Ok(written)
}

/// Stages the files `writer` makes of `doc`'s tables (one per table, all
/// in `dir`), making this run own the folder's `*.ext` files; returns the
/// "wrote …" line, naming the files `what` sheets.
pub(crate) fn stage_sheet_dir(
    staging: &mut Staging,
    writer: &dyn Writer,
    dir: &Path,
    ext: &str,
    what: &str,
    doc: &Document,
) -> Result<String> {
    let n = writer.stage_files(doc, dir, staging).with_context(|| {
        format!(
            "cannot write {what} sheets to {}",
            tracelens::quote::quoted(dir)
        )
    })?;
    // The folder's sheets are replaced as a unit: an earlier run's sheets
    // that this run does not write go too.
    staging.replace_all(dir, ext);
    Ok(format!("{} ({n} {what} sheets)", folder_text(dir)))
}

/// A folder's path as the terminal shows it: with one trailing `/`, however
/// the user typed it (`out`, `out/`).
fn folder_text(dir: &Path) -> String {
    let text = dir.display().to_string();
    format!("{}/", text.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::folder_text;
    use std::path::Path;

    #[test]
    fn a_folder_shows_one_trailing_slash() {
        assert_eq!(folder_text(Path::new("out")), "out/");
        assert_eq!(folder_text(Path::new("out/")), "out/");
        assert_eq!(folder_text(Path::new("a/out//")), "a/out/");
        assert_eq!(folder_text(Path::new("/")), "/");
    }
}
