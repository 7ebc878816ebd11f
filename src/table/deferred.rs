//! Tables whose rows are computed as they are written.
//!
//! A sheet of one row per GPU dispatch (rocprofv3's `kernel_details`) held
//! as cells costs 12 cells of 24 bytes a row, more than the dispatch it
//! describes. Such a sheet can instead be a [`RowSource`]: the table keeps
//! its column names and the source, and the CSV and Excel writers ask the
//! source for rows piece by piece ([`Table::for_each_row`]). Everything else
//! reads held cells: [`Table::held`] or [`Table::materialize`] turn a
//! deferred table into an ordinary one. Only callers that hand the report
//! straight to those writers ask for deferred sheets
//! (`ReportOptions::deferred_sheets`).

use std::borrow::Cow;
use std::fmt;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use super::{RowRef, Table, Value};

/// Rows computed on demand, each as wide as the table's columns.
pub trait RowSource: Send + Sync {
    /// How many rows there are.
    fn len(&self) -> usize;

    /// True when there is no row.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `each` with the cells of every row of `rows` (within
    /// `0..len()`), in order, one call per row; the cells are the
    /// caller's to take.
    fn rows(&self, rows: Range<usize>, each: &mut dyn FnMut(&mut [Value]));
}

/// A table's row source (compared by identity).
#[derive(Clone)]
pub(super) struct Deferred(pub(super) Arc<dyn RowSource>);

impl fmt::Debug for Deferred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Deferred({} rows)", self.0.len())
    }
}

impl PartialEq for Deferred {
    fn eq(&self, other: &Self) -> bool {
        // The data pointers only: two vtables of one type may differ.
        std::ptr::eq(
            Arc::as_ptr(&self.0).cast::<()>(),
            Arc::as_ptr(&other.0).cast::<()>(),
        )
    }
}

/// The cells of one row as a writer reads them: a held table's row, or a
/// row its source computed.
pub enum Cells<'a> {
    /// A row of held cells.
    Held(RowRef<'a>),
    /// A computed row.
    Computed(&'a [Value]),
}

impl<'a> Cells<'a> {
    /// The cells, left to right.
    pub fn iter(&self) -> CellIter<'a> {
        match self {
            Cells::Held(r) => CellIter::Held(r.table.columns.iter(), r.index),
            Cells::Computed(c) => CellIter::Computed(c.iter()),
        }
    }
}

/// The cells of a [`Cells`] row, left to right.
pub enum CellIter<'a> {
    /// The remaining columns of a held table, and the row.
    Held(std::slice::Iter<'a, super::Column>, usize),
    /// The remaining cells of a computed row.
    Computed(std::slice::Iter<'a, Value>),
}

impl<'a> Iterator for CellIter<'a> {
    type Item = &'a Value;

    #[inline]
    fn next(&mut self) -> Option<&'a Value> {
        match self {
            CellIter::Held(columns, i) => columns.next().map(|c| &c.values[*i]),
            CellIter::Computed(cells) => cells.next(),
        }
    }
}

/// Rows [`Table::materialize`] computes together on one thread.
const PIECE_ROWS: usize = 16_384;

impl Table {
    /// A table of `columns` whose rows `source` computes when they are
    /// written (see the module docs).
    pub fn deferred(name: &str, columns: &[&str], source: Arc<dyn RowSource>) -> Table {
        let mut t = Table::new(name, columns);
        t.deferred = Some(Deferred(source));
        t
    }

    /// True when the rows are computed when written, not held.
    pub fn is_deferred(&self) -> bool {
        self.deferred.is_some()
    }

    /// Calls `each` with the cells of every row of `rows`, in order, held
    /// or computed.
    pub fn for_each_row(&self, rows: Range<usize>, mut each: impl FnMut(Cells<'_>)) {
        match &self.deferred {
            Some(Deferred(source)) => source.rows(rows, &mut |cells| each(Cells::Computed(cells))),
            None => {
                for i in rows {
                    each(Cells::Held(self.row(i)));
                }
            }
        }
    }

    /// The table with its rows held: itself, or for a deferred table a
    /// materialized copy.
    pub fn held(&self) -> Cow<'_, Table> {
        if self.is_deferred() {
            let mut t = self.clone();
            t.materialize();
            Cow::Owned(t)
        } else {
            Cow::Borrowed(self)
        }
    }

    /// A held table with at least the first `rows` rows (all when fewer):
    /// a held table itself, a deferred one's first rows computed. For a
    /// sample of the rows without computing them all.
    pub fn head_held(&self, rows: usize) -> Cow<'_, Table> {
        let Some(Deferred(source)) = &self.deferred else {
            return Cow::Borrowed(self);
        };
        let mut t = Table::with_headers(
            &self.name,
            self.columns.iter().map(|c| c.name.clone()).collect(),
        );
        source.rows(0..rows.min(source.len()), &mut |cells| {
            for (col, v) in t.columns.iter_mut().zip(cells) {
                col.values.push(std::mem::replace(v, Value::Null));
            }
        });
        Cow::Owned(t)
    }

    /// Computes a deferred table's rows into held cells, on every core;
    /// nothing for a held table.
    ///
    /// Panics when the source gives a row of another width or another
    /// number of rows than it said.
    #[allow(unsafe_code)]
    pub fn materialize(&mut self) {
        let Some(Deferred(source)) = self.deferred.take() else {
            return;
        };
        let n = source.len();
        let width = self.columns.len();
        // Rows are written straight into the columns' spare capacity,
        // piece by piece on every core: no second copy of the cells.
        let mut pieces: Vec<Vec<&mut [MaybeUninit<Value>]>> = (0..n.div_ceil(PIECE_ROWS))
            .map(|_| Vec::with_capacity(width))
            .collect();
        for col in &mut self.columns {
            col.values.reserve_exact(n);
            let slots = &mut col.values.spare_capacity_mut()[..n];
            for (piece, part) in pieces.iter_mut().zip(slots.chunks_mut(PIECE_ROWS)) {
                piece.push(part);
            }
        }
        let complete = pieces.into_par_iter().enumerate().all(|(p, mut parts)| {
            let start = p * PIECE_ROWS;
            let rows = start..(start + PIECE_ROWS).min(n);
            let expected = rows.len();
            let mut written = 0;
            let mut whole = true;
            source.rows(rows, &mut |cells| {
                if cells.len() != width || written == expected {
                    whole = false;
                    return;
                }
                for (part, v) in parts.iter_mut().zip(cells.iter_mut()) {
                    part[written].write(std::mem::replace(v, Value::Null));
                }
                written += 1;
            });
            whole && written == expected
        });
        // Without every slot written the lengths stay as they are (the
        // written cells leak, which is safe).
        assert!(
            complete,
            "table {:?}: its row source gave rows of another width or number than it said",
            self.name
        );
        for col in &mut self.columns {
            // SAFETY: every piece wrote its `expected` rows (checked just
            // above), one cell of every column each, and the pieces cover
            // the slots `0..n` of every column once; `n` is within the
            // capacity reserved.
            unsafe { col.values.set_len(n) };
        }
    }
}

/// A held table served as a row source, and `table` deferred over one:
/// writers' tests compare what they write of both.
#[cfg(test)]
pub(crate) fn deferred_copy(table: &Table) -> Table {
    struct Rows(Table);

    impl RowSource for Rows {
        fn len(&self) -> usize {
            self.0.nrows()
        }

        fn rows(&self, rows: Range<usize>, each: &mut dyn FnMut(&mut [Value])) {
            for i in rows {
                each(&mut self.0.row(i).to_vec());
            }
        }
    }

    let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
    Table::deferred(&table.name, &names, Arc::new(Rows(table.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row `i`: `[i, "k{i % 3}", i * 0.5]`, with Null for a multiple of 7.
    struct Squares {
        rows: usize,
    }

    impl RowSource for Squares {
        fn len(&self) -> usize {
            self.rows
        }

        fn rows(&self, rows: Range<usize>, each: &mut dyn FnMut(&mut [Value])) {
            for i in rows {
                let mut cells = [
                    Value::Int(i as i64),
                    Value::from(format!("k{}", i % 3).as_str()),
                    if i % 7 == 0 {
                        Value::Null
                    } else {
                        Value::Float(i as f64 * 0.5)
                    },
                ];
                each(&mut cells);
            }
        }
    }

    fn held_squares(rows: usize) -> Table {
        let mut t = Table::new("sq", &["i", "name", "half"]);
        Squares { rows }.rows(0..rows, &mut |cells| t.push_row(cells.to_vec()));
        t
    }

    #[test]
    fn a_deferred_table_reads_as_the_held_one() {
        let rows = 3 * PIECE_ROWS + 5;
        let source = Arc::new(Squares { rows });
        let deferred = Table::deferred("sq", &["i", "name", "half"], source);
        let held = held_squares(rows);
        assert!(deferred.is_deferred());
        assert_eq!(deferred.nrows(), rows);
        assert_eq!(*deferred.held(), held);
        let first: Vec<usize> = (0..10).collect();
        assert_eq!(*deferred.head_held(10), held.take_rows(&first));
        assert_eq!(held.head_held(10).nrows(), rows, "a held table is itself");
        let mut seen = Vec::new();
        deferred.for_each_row(PIECE_ROWS - 2..PIECE_ROWS + 2, |c| {
            seen.push(c.iter().cloned().collect::<Vec<_>>())
        });
        let mut want = Vec::new();
        held.for_each_row(PIECE_ROWS - 2..PIECE_ROWS + 2, |c| {
            want.push(c.iter().cloned().collect::<Vec<_>>())
        });
        assert_eq!(seen, want);
        let mut m = deferred.clone();
        m.materialize();
        assert!(!m.is_deferred());
        assert_eq!(m, held);
    }

    /// A source that says one row more than it gives.
    struct Short;

    impl RowSource for Short {
        fn len(&self) -> usize {
            2
        }

        fn rows(&self, rows: Range<usize>, each: &mut dyn FnMut(&mut [Value])) {
            for i in rows.take(1) {
                each(&mut [Value::Int(i as i64)]);
            }
        }
    }

    #[test]
    #[should_panic(expected = "another width or number")]
    fn a_source_short_of_rows_is_refused() {
        Table::deferred("short", &["i"], Arc::new(Short)).materialize();
    }
}
