//! The rows of big worksheets (a row per kernel), written outside the
//! workbook library.
//!
//! The library stores every cell in a map, formats each number through
//! `f64`'s `Display`, looks its column's format up per cell and deflates the
//! sheet at the end, all on one core: 1.7 s for a 700,000-row sheet. Here
//! the library writes the workbook with such a sheet's header row only
//! (its columns' formats, widths, frozen pane and autofilter included), and
//! the sheet's rows are then written as XML in pieces on every core and
//! deflated on a thread of their own while the next pieces are written.
//! The rows are what the library's constant-memory mode writes: one
//! `<row>` per row with a cell, strings inline (`t="inlineStr"`), numbers
//! formatted as `Display` does, each cell carrying its column's format.

use std::io::{Cursor, Read, Seek, Write};
use std::ops::Range;
use std::sync::mpsc::sync_channel;

use rust_xlsxwriter::utility::{cell_range, column_number_to_name};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

use super::cells::{Cell, ColumnStyle, cell};
use crate::report::WriteError;
use crate::report::pieces::{render_in_pieces, rows_per_piece};
use crate::table::Table;

/// A worksheet whose rows are written here.
pub(super) struct BigSheet<'a> {
    /// Its number among the workbook's worksheets, from 1: its XML is
    /// `xl/worksheets/sheet{number}.xml`.
    pub number: usize,
    /// Its cells.
    pub table: &'a Table,
    /// How each column is written (as the library was told).
    pub styles: Vec<ColumnStyle>,
}

/// XML text aimed at per piece of rows, at about 40 bytes a cell. Small
/// pieces keep little text in flight (a wave and the queue, about 1.5 MiB
/// with the spare capacity): 1 MiB pieces, 16 at a time, added 7 MiB to a
/// 33 MiB report's peak, and 64 KiB ones write as fast.
const PIECE_BYTES: usize = 1 << 16;
/// Pieces rendered at a time.
const WAVE: usize = 8;
/// Pieces waiting for the deflater at most.
const QUEUED: usize = 8;
/// Cells from which a sheet's XML may pass 4 GiB, at 256 bytes a cell: its
/// entry is written with zip64 sizes.
const LARGE_FILE_CELLS: usize = 1 << 24;

/// The workbook `zip` as the library wrote it, where each of `big` holds
/// its header row only, with each big sheet's rows written in.
///
/// One thread writes the new archive: the other entries copied as they
/// are, still compressed, and each big sheet's head, rows and tail
/// deflated as they come; the rows are written on the rayon pool
/// meanwhile, a wave of pieces at a time.
/// The archive goes to `out` (a file, or memory), which is returned.
pub(super) fn with_rows<W: Write + Seek + Send>(
    zip: Vec<u8>,
    big: &[BigSheet<'_>],
    out: W,
) -> Result<W, WriteError> {
    let mut archive = ZipArchive::new(Cursor::new(zip))?;
    // The big sheets, each with its head and tail.
    let mut parts = Vec::with_capacity(big.len());
    for sheet in big {
        let name = sheet.entry_name();
        let index = archive.index_for_name(&name).ok_or_else(|| {
            WriteError::Invalid(format!("the workbook has no {name} to write rows into"))
        })?;
        let mut header_only = String::new();
        archive
            .by_index(index)?
            .read_to_string(&mut header_only)
            .map_err(WriteError::io("cannot read back a worksheet"))?;
        parts.push((index, sheet, sheet.head_and_tail(&header_only)?));
    }
    // The writer meets them in the archive's order.
    parts.sort_by_key(|(index, ..)| *index);
    std::thread::scope(|scope| {
        // Pieces of rows, in order; `None` ends a sheet.
        let (pieces, queue) = sync_channel::<Option<Vec<u8>>>(QUEUED);
        let heads_and_tails: Vec<(usize, &SheetXml)> =
            parts.iter().map(|(index, _, xml)| (*index, xml)).collect();
        let writer = scope.spawn(move || -> Result<W, WriteError> {
            let mut out = ZipWriter::new(out);
            let mut next = heads_and_tails.into_iter().peekable();
            for index in 0..archive.len() {
                let file = archive.by_index_raw(index)?;
                let Some((_, xml)) = next.next_if(|(at, ..)| *at == index) else {
                    out.raw_copy_file(file)?;
                    continue;
                };
                let options = SimpleFileOptions::default()
                    .compression_method(CompressionMethod::Deflated)
                    .compression_level(Some(1))
                    .unix_permissions(0o600)
                    .last_modified_time(DateTime::default())
                    .large_file(xml.large_file);
                out.start_file(file.name()?, options)?;
                drop(file);
                let write = |out: &mut ZipWriter<_>, bytes: &[u8]| {
                    out.write_all(bytes)
                        .map_err(WriteError::io("cannot deflate a worksheet"))
                };
                write(&mut out, xml.head.as_bytes())?;
                while let Ok(Some(piece)) = queue.recv() {
                    write(&mut out, &piece)?;
                }
                write(&mut out, xml.tail.as_bytes())?;
            }
            Ok(out.finish()?)
        });
        for (_, sheet, xml) in &parts {
            // A send fails only once the writer has stopped on an error,
            // which joining it returns.
            let _ = render_in_pieces(
                sheet.table.nrows(),
                rows_per_piece(PIECE_BYTES, 40 * sheet.table.ncols().max(1), usize::MAX),
                WAVE,
                |rows| Some(sheet.rows_xml(rows, xml)),
                |piece| pieces.send(piece),
            );
            let _ = pieces.send(None);
        }
        drop(pieces);
        match writer.join() {
            Ok(bytes) => bytes,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// What a big sheet's XML holds besides its rows.
struct SheetXml {
    /// Everything up to the end of the header row.
    head: String,
    /// `</sheetData>` and what follows.
    tail: String,
    /// Each column's name (`A`, `B`, ..).
    columns: Vec<String>,
    /// Each column's format attribute (` s="N"`), empty for none: a cell
    /// written without a format of its own takes its column's.
    styles: Vec<String>,
    /// Whether the XML may pass 4 GiB (zip64 sizes needed).
    large_file: bool,
}

impl BigSheet<'_> {
    /// The sheet's path in the workbook.
    fn entry_name(&self) -> String {
        format!("xl/worksheets/sheet{}.xml", self.number)
    }

    /// The library's `header_only` XML of the sheet cut around where the
    /// rows go, with the sheet's full extent.
    fn head_and_tail(&self, header_only: &str) -> Result<SheetXml, WriteError> {
        let malformed = || WriteError::Invalid(format!("unexpected XML in {}", self.entry_name()));
        let (head, tail) = header_only
            .split_once("</sheetData>")
            .ok_or_else(malformed)?;
        let head = self.with_dimension(head).ok_or_else(malformed)?;
        let styles = column_xf_indices(&head, self.table.ncols())
            .into_iter()
            .map(|s| {
                if s > 0 {
                    format!(" s=\"{s}\"")
                } else {
                    String::new()
                }
            })
            .collect();
        Ok(SheetXml {
            tail: format!("</sheetData>{tail}"),
            columns: (0..self.table.ncols())
                .map(|c| column_number_to_name(c as u16))
                .collect(),
            styles,
            head,
            large_file: self.table.nrows().saturating_mul(self.table.ncols()) > LARGE_FILE_CELLS,
        })
    }

    /// `head` with its `<dimension>` covering the header and the last row
    /// holding a cell, as the library computes it from the cells it wrote.
    fn with_dimension(&self, head: &str) -> Option<String> {
        let start = head.find("<dimension ref=\"")? + "<dimension ref=\"".len();
        let end = start + head[start..].find('"')?;
        let last_row = (0..self.table.nrows())
            .rev()
            .find(|&i| self.row_has_cell(i))
            .map_or(0, |i| i + 1);
        let range = cell_range(0, 0, last_row as u32, self.table.ncols() as u16 - 1);
        Some(format!("{}{range}{}", &head[..start], &head[end..]))
    }

    /// Whether row `i` of the table writes a cell.
    fn row_has_cell(&self, i: usize) -> bool {
        let mut any = false;
        self.table.for_each_row(i..i + 1, |row| {
            any = (row.iter().zip(&self.styles)).any(|(v, style)| cell(v, style) != Cell::Blank);
        });
        any
    }

    /// The XML of table rows `rows` (worksheet rows `rows.start + 2`..),
    /// with the column names and formats of `xml`.
    fn rows_xml(&self, rows: Range<usize>, xml: &SheetXml) -> Vec<u8> {
        let (columns, styles) = (&xml.columns, &xml.styles);
        let mut out = Vec::with_capacity(PIECE_BYTES + PIECE_BYTES / 2);
        let mut row_number = itoa::Buffer::new();
        let mut i = rows.start;
        self.table.for_each_row(rows, |row| {
            let row_start = out.len();
            let r = row_number.format(i + 2).as_bytes();
            i += 1;
            out.extend_from_slice(b"<row r=\"");
            out.extend_from_slice(r);
            out.extend_from_slice(b"\">");
            let cells_start = out.len();
            for (c, (v, style)) in row.iter().zip(&self.styles).enumerate() {
                let value = cell(v, style);
                if value == Cell::Blank {
                    continue;
                }
                out.extend_from_slice(b"<c r=\"");
                out.extend_from_slice(columns[c].as_bytes());
                out.extend_from_slice(r);
                out.push(b'"');
                out.extend_from_slice(styles[c].as_bytes());
                match value {
                    Cell::Blank => {}
                    Cell::Number(x) => {
                        out.extend_from_slice(b"><v>");
                        push_number(&mut out, x);
                        out.extend_from_slice(b"</v></c>");
                    }
                    Cell::Bool(b) => {
                        out.extend_from_slice(if b {
                            b" t=\"b\"><v>1</v></c>"
                        } else {
                            b" t=\"b\"><v>0</v></c>"
                        });
                    }
                    Cell::Text(s) => {
                        out.extend_from_slice(b" t=\"inlineStr\"><is><t");
                        if s.starts_with(['\t', '\n', ' ']) || s.ends_with(['\t', '\n', ' ']) {
                            out.extend_from_slice(b" xml:space=\"preserve\"");
                        }
                        out.push(b'>');
                        push_escaped(&mut out, s);
                        out.extend_from_slice(b"</t></is></c>");
                    }
                }
            }
            if out.len() == cells_start {
                out.truncate(row_start);
            } else {
                out.extend_from_slice(b"</row>");
            }
        });
        out
    }
}

/// Integral values below this magnitude print exactly as integers.
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// Appends `x` as `f64`'s `Display` writes it (what the library writes):
/// integral values through an integer formatter, the rest through
/// [`crate::float_text::push_display`].
fn push_number(out: &mut Vec<u8>, x: f64) {
    if x.fract() == 0.0 && x.abs() < EXACT_INT && x != 0.0 {
        out.extend_from_slice(itoa::Buffer::new().format(x as i64).as_bytes());
    } else {
        crate::float_text::push_display(out, x);
    }
}

/// Appends `s` escaped as the library escapes string cells: `&`, `<`, `>`
/// as entities; control characters other than tab and newline, U+FFFE and
/// U+FFFF as `_xHHHH_`; and a literal `_xHHHH_` in the text with its `_`
/// written `_x005F`, so that it does not read as an escape.
fn push_escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (escape, len): (&[u8], usize) = match b {
            b'&' => (b"&amp;", 1),
            b'<' => (b"&lt;", 1),
            b'>' => (b"&gt;", 1),
            b'_' if is_escape_like(&bytes[i..]) => (b"_x005F_", 1),
            0xEF if bytes[i..].starts_with(&[0xEF, 0xBF, 0xBE]) => (b"_xFFFE_", 3),
            0xEF if bytes[i..].starts_with(&[0xEF, 0xBF, 0xBF]) => (b"_xFFFF_", 3),
            b'\t' | b'\n' => {
                i += 1;
                continue;
            }
            0..0x20 => (&CONTROL_ESCAPES[b as usize], 1),
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[copied..i]);
        out.extend_from_slice(escape);
        i += len;
        copied = i;
    }
    out.extend_from_slice(&bytes[copied..]);
}

/// `_x0000_` to `_x001F_`.
const CONTROL_ESCAPES: [[u8; 7]; 32] = {
    let mut table = [*b"_x0000_"; 32];
    let hex = b"0123456789ABCDEF";
    let mut b = 0;
    while b < 32 {
        table[b][4] = hex[b >> 4];
        table[b][5] = hex[b & 15];
        b += 1;
    }
    table
};

/// Whether `s` starts with `_x`, four hex digits and `_`.
fn is_escape_like(s: &[u8]) -> bool {
    s.len() >= 7 && s[1] == b'x' && s[2..6].iter().all(u8::is_ascii_hexdigit) && s[6] == b'_'
}

/// The format index of each of the first `ncols` columns as the `<cols>`
/// element of `head` gives it (`style="N"`), 0 for none: a cell written
/// without a format of its own takes its column's.
fn column_xf_indices(head: &str, ncols: usize) -> Vec<u32> {
    let mut xf = vec![0; ncols];
    for (at, _) in head.match_indices("<col ") {
        let element = &head[at..at + head[at..].find("/>").unwrap_or(0)];
        let attribute = |name: &str| -> Option<u32> {
            let key = format!(" {name}=\"");
            let start = element.find(&key)? + key.len();
            element[start..start + element[start..].find('"')?]
                .parse()
                .ok()
        };
        let (Some(min), Some(max), Some(style)) =
            (attribute("min"), attribute("max"), attribute("style"))
        else {
            continue;
        };
        for c in min.max(1)..=max.min(ncols as u32) {
            xf[c as usize - 1] = style;
        }
    }
    xf
}
