//! The output flags, declared once. Every command that writes sheets
//! flattens [`SheetFlags`] (`-o`, `--csv`, `--parquet`, `--md`); `diff`,
//! which writes no workbook and no CSV sheets of its own, flattens
//! [`TableFlags`] (`--parquet`, `--md`). The default output of a command
//! is said in its description; [`super::outputs::check`] checks the paths.

use std::path::{Path, PathBuf};

use clap::Args;

use super::SheetDirs;
use super::outputs::{self, Kind, Output};

/// `--parquet DIR` and `--md FILE|-`.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct TableFlags {
    /// Write one <sheet>.parquet per sheet (typed columns) into DIR.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Write the Markdown summary to FILE (- for stdout).
    #[arg(long, value_name = "FILE", alias = "output_md_path")]
    pub md: Option<PathBuf>,
}

impl TableFlags {
    /// Whether either output is asked for.
    pub fn any(&self) -> bool {
        self.parquet.is_some() || self.md.is_some()
    }

    /// Whether the Markdown goes to stdout (`--md -`).
    pub fn md_to_stdout(&self) -> bool {
        is_stdout(self.md.as_deref())
    }

    /// The outputs, named by their settings, for [`outputs::check`].
    pub fn outputs(&self) -> [Output<'_>; 2] {
        [
            ("parquet", outputs::PARQUET_DIR, self.parquet.as_deref()),
            ("md", Kind::Stream, self.md.as_deref()),
        ]
    }
}

/// `-o FILE.xlsx`, `--csv DIR` and the [`TableFlags`].
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct SheetFlags {
    /// Excel workbook to write.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.xlsx",
        alias = "output_xlsx_path"
    )]
    pub output: Option<PathBuf>,
    /// Write one <sheet>.csv per sheet into DIR.
    #[arg(long, value_name = "DIR", alias = "output_csvs_dir")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub tables: TableFlags,
}

impl SheetFlags {
    /// The `--md` path, if given.
    pub fn md(&self) -> Option<&PathBuf> {
        self.tables.md.as_ref()
    }

    /// Whether the Markdown goes to stdout (`--md -`).
    pub fn md_to_stdout(&self) -> bool {
        self.tables.md_to_stdout()
    }

    /// Whether sheet files are asked for (`-o`, `--csv`, `--parquet`).
    pub fn wants_sheets(&self) -> bool {
        self.output.is_some() || self.csv.is_some() || self.tables.parquet.is_some()
    }

    /// The sheet folders asked for.
    pub fn dirs(&self) -> SheetDirs<'_> {
        SheetDirs {
            csv: self.csv.as_deref(),
            parquet: self.tables.parquet.as_deref(),
        }
    }

    /// Where the workbook goes: `-o`; none when another output is asked
    /// for (these flags, or `other` of the command's own); else
    /// `default()`.
    pub fn workbook(
        &self,
        other: bool,
        default: impl FnOnce() -> Result<PathBuf, String>,
    ) -> Result<Option<PathBuf>, String> {
        let others = other || self.csv.is_some() || self.tables.any();
        outputs::or_default(self.output.as_deref(), others, default)
    }

    /// The outputs, named by their settings, for [`outputs::check`], with the
    /// workbook at `xlsx` (`-o`, or the command's default workbook).
    pub fn outputs<'a>(&'a self, xlsx: Option<&'a Path>) -> Vec<Output<'a>> {
        let xlsx_setting = if self.output.is_some() {
            "output"
        } else {
            "default_workbook"
        };
        let mut all = vec![
            (xlsx_setting, Kind::File, xlsx),
            ("csv", outputs::CSV_DIR, self.csv.as_deref()),
        ];
        all.extend(self.tables.outputs());
        all
    }
}

/// Whether `p` is `-` (standard output).
pub(crate) fn is_stdout(p: Option<&Path>) -> bool {
    p.is_some_and(|p| p.as_os_str() == "-")
}
