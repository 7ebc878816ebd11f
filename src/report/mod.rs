//! Output: writers behind one [`Writer`] trait, and the [`Document`] they
//! render.
//!
//! A command builds a [`Document`] from its results with the views in
//! [`view`] (summaries, charts, the compare verdict, the tree outline) and
//! hands it to the writers it was asked for: [`csv`], [`xlsx`],
//! [`markdown`], [`json`], [`text`], [`svg`] (roofline charts and
//! heatmaps), [`tracediff`] and [`replay`] ([`columns`] tells them what a
//! column measures). Each writer turns the parts
//! of the document it understands into [`Rendered`] files, in memory;
//! [`staging`] puts them on disk all-or-nothing. [`read`] turns report files
//! back into [`Table`]s. Writers know nothing about traces, passes know
//! nothing about formats.

pub mod columns;
pub mod csv;
pub mod genesis_summary;
pub mod heatmap;
pub mod json;
pub mod markdown;
pub mod parquet;
mod pieces;
pub mod pipe_table;
pub mod read;
pub mod replay;
pub mod roof_geometry;
pub mod staging;
pub mod svg;
pub mod text;
pub mod tracediff;
pub mod view;
pub mod xlsx;

use std::path::{Path, PathBuf};

use crate::analysis::commands::diff::TraceDiff;
use crate::analysis::commands::tree_view::TreeNode;
pub use crate::error::WriteError;
use crate::table::{Table, Value};

/// Turns a [`Document`] into output files.
pub trait Writer {
    /// The files this writer makes of `doc`, in memory.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError>;

    /// Stages the files this writer makes of `doc` in `staging`, in folder
    /// `dir` (created first); how many. By default the files are
    /// [`Writer::render`]ed, then written; a writer of big files writes
    /// them as it makes them instead.
    fn stage_files(
        &self,
        doc: &Document,
        dir: &Path,
        staging: &mut staging::Staging,
    ) -> Result<usize, WriteError> {
        let files = self.render(doc)?;
        staging.put_all(dir, &files)?;
        Ok(files.len())
    }
}

/// One output file: where it goes (as the writer was told, `-` for
/// standard output) and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// Target path of the file.
    pub name: PathBuf,
    /// Its content.
    pub bytes: Vec<u8>,
}

/// What a command produced, for the writers: each writer renders the parts
/// it knows and ignores the others.
#[derive(Debug, Clone, Default)]
pub struct Document<'a> {
    /// Data tables (CSV: one file each; xlsx: one worksheet each),
    /// borrowed from the results.
    pub tables: Vec<&'a Table>,
    /// Charts (xlsx: a chart worksheet each; SVG: one file each).
    pub charts: Vec<Chart>,
    /// Heatmaps (SVG: one file each).
    pub heatmaps: Vec<heatmap::Heatmap>,
    /// The human summary (Markdown; the text writer for the terminal).
    pub page: Option<Page>,
    /// The machine-readable verdict (JSON).
    pub record: Option<Record>,
    /// A tree view (text).
    pub outline: Option<Outline<'a>>,
    /// A merged tree diff ([`tracediff`]: the reference's TraceDiff files).
    pub trace_diff: Option<&'a TraceDiff>,
    /// Reproducer scripts ([`replay`]: one script per op, or a batched
    /// runner and its list of ops).
    pub replay: Option<replay::Scripts<'a>>,
}

impl<'a> Document<'a> {
    /// A document of data tables only.
    pub fn of_tables(tables: &'a [Table]) -> Self {
        Document {
            tables: tables.iter().collect(),
            ..Document::default()
        }
    }

    /// A document holding only `page`.
    pub fn of_page(page: Page) -> Self {
        Document {
            page: Some(page),
            ..Document::default()
        }
    }
}

// ---------------------------------------------------------------------------
// Charts
// ---------------------------------------------------------------------------

/// A scatter chart: axes, series of points and, for rooflines, the roofs.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Name of the chart's worksheet (xlsx) or file stem (SVG).
    pub name: String,
    /// Title shown above the plot.
    pub title: String,
    /// The horizontal axis.
    pub x: ChartAxis,
    /// The vertical axis.
    pub y: ChartAxis,
    /// The series, one legend entry each.
    pub series: Vec<Series>,
    /// Roofline roofs drawn under the points (SVG).
    pub roofs: Vec<Roof>,
    /// The document table whose cells the series point at (xlsx charts
    /// reference their data rather than copying it).
    pub data_table: Option<String>,
}

/// One axis of a [`Chart`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartAxis {
    /// Axis title.
    pub name: String,
    /// How values map to positions.
    pub scale: Scale,
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced decades (base 10).
    Log10,
}

/// One series of a [`Chart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// The points.
    pub points: Vec<Point>,
    /// Where the points sit in [`Chart::data_table`], when they do.
    pub cells: Option<CellRange>,
}

/// One plotted point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Text shown on hover (e.g. op name and parameters).
    pub label: String,
    /// Horizontal value.
    pub x: f64,
    /// Vertical value.
    pub y: f64,
    /// Marker weight (rooflines: total kernel time, µs; sizes the marker).
    pub weight: f64,
}

/// The cells of a series in its chart's data table: an x and a y column
/// over a block of rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellRange {
    /// Column (0-based) of the x values.
    pub x_col: usize,
    /// Column (0-based) of the y values.
    pub y_col: usize,
    /// First data row, 0-based, not counting the header row.
    pub first_row: usize,
    /// Last data row (inclusive), 0-based, not counting the header row.
    pub last_row: usize,
}

/// A roof of a roofline chart: one compute roof of one GPU, with that GPU's
/// memory bandwidth.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    /// GPU name, e.g. `MI300X`.
    pub gpu: String,
    /// Compute Spec of the roof, e.g. `matrix_bf16`.
    pub compute_spec: String,
    /// Peak of the compute roof, TFLOP/s.
    pub peak_tflops: f64,
    /// Peak memory bandwidth, GB/s (10^9 bytes per second).
    pub mem_bw_gbps: f64,
}

// ---------------------------------------------------------------------------
// Page
// ---------------------------------------------------------------------------

/// A human-readable page: blocks in order. Text in blocks is Markdown
/// source; views escape names with the helpers of [`markdown`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    /// The blocks, separated by a blank line in Markdown.
    pub blocks: Vec<Block>,
    /// Whether Markdown ends with a blank line after the last block.
    pub trailing_blank: bool,
}

/// One block of a [`Page`].
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A heading; `level` 2 is `##`.
    Heading {
        /// Nesting level, 1 to 6.
        level: usize,
        /// The heading text.
        text: String,
    },
    /// Lines of one paragraph.
    Paragraph(Vec<String>),
    /// A bullet list, one item each (may be empty).
    Bullets(Vec<String>),
    /// Some rows and columns of a data table, formatted by the writer.
    Data(DataTable),
    /// A table of ready-made cells.
    Grid(Grid),
}

/// A data table shown on a page: cells formatted by the writer from their
/// values and what each column measures ([`columns::readable`]: three
/// significant digits, shares to 0.1 %, counts whole), long text cut,
/// numeric columns right-aligned.
#[derive(Debug, Clone, PartialEq)]
pub struct DataTable {
    /// The rows and columns to show, columns named as the page labels
    /// them.
    pub table: Table,
    /// What each column measures (from its sheet name), in column order.
    pub measures: Vec<columns::Measure>,
}

/// A column a view shows: the sheet's name for it and the label the page
/// gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown<'a> {
    /// The column's name in the sheet.
    pub name: &'a str,
    /// Its header on the page.
    pub label: &'a str,
}

impl DataTable {
    /// Columns `columns` (by sheet name, in that order, renamed to their
    /// labels; unknown names are skipped) of the first `max_rows` rows of
    /// `table`.
    pub fn pick(table: &Table, columns: &[Shown<'_>], max_rows: usize) -> Self {
        let found: Vec<(usize, &Shown<'_>)> = columns
            .iter()
            .filter_map(|c| Some((table.column_index(c.name)?, c)))
            .collect();
        let rows: Vec<usize> = (0..table.nrows().min(max_rows)).collect();
        let mut shown = table.take_rows(&rows);
        shown.select_columns(&found.iter().map(|(i, _)| *i).collect::<Vec<_>>());
        for (column, (_, c)) in shown.columns.iter_mut().zip(&found) {
            column.name = c.label.to_string();
        }
        DataTable {
            table: shown,
            measures: found
                .iter()
                .map(|(_, c)| columns::measure(c.name))
                .collect(),
        }
    }

    /// The text of the cell in row `row`, column `col`, as
    /// [`columns::readable`] spells it.
    pub fn cell_text(&self, row: usize, col: usize) -> String {
        columns::readable(
            &self.table.columns[col].values[row],
            self.measures
                .get(col)
                .copied()
                .unwrap_or(columns::Measure::Other),
        )
    }
}

/// A table whose cells the view already formatted.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Header cells.
    pub header: Vec<String>,
    /// Alignment per column.
    pub align: Vec<Align>,
    /// Rows of cells, as wide as the header.
    pub rows: Vec<Vec<String>>,
}

/// Horizontal alignment of a table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

// ---------------------------------------------------------------------------
// Record
// ---------------------------------------------------------------------------

/// A machine-readable value, shaped like JSON; map entries keep their order.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// No value.
    Null,
    /// A truth value.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float (non-finite floats are written as null).
    Float(f64),
    /// Text.
    Str(String),
    /// A list.
    List(Vec<Record>),
    /// Named fields, in order.
    Map(Vec<(String, Record)>),
}

impl From<Option<f64>> for Record {
    fn from(x: Option<f64>) -> Record {
        x.map_or(Record::Null, Record::Float)
    }
}

impl Record {
    /// A sheet's cell (texts and Python reprs as text).
    pub fn of_cell(v: &Value) -> Record {
        match v {
            Value::Null => Record::Null,
            Value::Int(i) => Record::Int(*i),
            Value::Float(f) => Record::Float(*f),
            Value::Bool(b) => Record::Bool(*b),
            Value::Text(s) | Value::Py(s) => Record::Str(s.to_string()),
        }
    }

    /// A held sheet as a list of maps, one per row, keyed by column name.
    pub fn rows_of(t: &Table) -> Record {
        let names = t.column_names();
        Record::List(
            (0..t.nrows())
                .map(|r| {
                    Record::Map(
                        names
                            .iter()
                            .enumerate()
                            .map(|(c, n)| (n.to_string(), Record::of_cell(t.value(r, c))))
                            .collect(),
                    )
                })
                .collect(),
        )
    }
}

// ---------------------------------------------------------------------------
// Outline
// ---------------------------------------------------------------------------

/// A tree view: nodes with optional GPU times, drawn with box characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline<'a> {
    /// The top-level nodes.
    pub roots: Vec<TreeNode<'a>>,
    /// Where each node's time is shown.
    pub times: TimeLayout,
    /// Whether the roots hang off one trunk (`├──` for all but the last)
    /// rather than each starting fresh (`└──`).
    pub joined_roots: bool,
}

/// Where an [`Outline`] shows node times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeLayout {
    /// After the name, `[12.5 µs]`, as the event recorded it.
    Inline,
    /// Dot-leadered to a common column, `(12.50 µs)`.
    Leader,
}
