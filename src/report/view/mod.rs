//! Views: what a command's results look like as a [`super::Document`] —
//! the report summary ([`summary`]), the collectives summary
//! ([`collectives`]), the compare verdict ([`verdict`]), the roofline
//! charts ([`roofline`]), the tree outlines ([`tree`]) and the roofline
//! calculator's answer ([`calculator`]). Views decide
//! what is shown; the writers decide how it is spelled.

pub mod calculator;
pub mod collectives;
pub mod diff;
pub mod findings;
pub mod fleet;
pub mod roofline;
pub mod summary;
pub mod tree;
pub mod verdict;

use super::{Block, DataTable, Page, Shown};
use crate::table::Table;

/// A heading block.
fn heading(level: usize, text: impl Into<String>) -> Block {
    Block::Heading {
        level,
        text: text.into(),
    }
}

/// The page `make(rows)` with the most rows — from `rows`, halving — whose
/// Markdown fits in `limit` bytes, with the rows it holds; when even the
/// page without rows does not fit, that page and `fits = false`.
fn fit_rows(rows: usize, limit: usize, make: impl Fn(usize) -> Page) -> (Page, usize, bool) {
    let mut rows = rows;
    loop {
        let page = make(rows);
        if crate::report::markdown::page_text(&page).len() <= limit {
            return (page, rows, true);
        }
        if rows == 0 {
            return (page, 0, false);
        }
        rows /= 2;
    }
}

/// A one-line paragraph.
fn line(text: impl Into<String>) -> Block {
    Block::Paragraph(vec![text.into()])
}

/// A heading over columns `columns` of the first `max_rows` rows of `t`.
fn section(page: &mut Page, title: &str, t: &Table, columns: &[Shown<'_>], max_rows: usize) {
    page.blocks.push(heading(3, title));
    page.blocks
        .push(Block::Data(DataTable::pick(t, columns, max_rows)));
}

/// A column shown as `label`.
const fn shown<'a>(name: &'a str, label: &'a str) -> Shown<'a> {
    Shown { name, label }
}

/// A page of plain lines (the terminal summaries).
fn lines_page(lines: Vec<String>) -> Page {
    Page {
        blocks: vec![Block::Paragraph(lines)],
        trailing_blank: false,
    }
}
