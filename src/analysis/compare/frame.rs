//! Cells and column-major frames: pandas' missing-value, ordering and
//! arithmetic rules for report cells (spec 04 §0.2), and the [`Frame`] that
//! joins and splits work on.

use std::cmp::Ordering;

use crate::report::{Cell, Sheet};

// ---------------------------------------------------------------------------
// Cells
// ---------------------------------------------------------------------------

/// Missing in pandas' sense: empty, or a NaN float.
pub(super) fn is_null(c: &Cell) -> bool {
    match c {
        Cell::Empty => true,
        Cell::Float(x) => x.is_nan(),
        _ => false,
    }
}

/// The value of a number cell for arithmetic (bools are not numbers here:
/// numpy refuses to subtract them).
pub(super) fn arith(c: &Cell) -> Option<f64> {
    match c {
        Cell::Int(i) => Some(*i as f64),
        Cell::Float(x) if !x.is_nan() => Some(*x),
        _ => None,
    }
}

/// The value of a cell for ordering keys: numbers and bools (as 0/1, as
/// Python compares them).
fn order_num(c: &Cell) -> Option<f64> {
    match c {
        Cell::Bool(b) => Some(f64::from(u8::from(*b))),
        c => arith(c),
    }
}

/// Total order of join keys and sort columns: numbers by value, then text
/// by code point, then missing values (which equal each other).
pub(super) fn cell_cmp(a: &Cell, b: &Cell) -> Ordering {
    match (is_null(a), is_null(b)) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    if let (Cell::Int(x), Cell::Int(y)) = (a, b) {
        return x.cmp(y);
    }
    match (order_num(a), order_num(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => match (a, b) {
            (Cell::Text(x), Cell::Text(y)) => x.cmp(y),
            _ => Ordering::Equal,
        },
    }
}

/// `v - b` as pandas computes it for two numeric columns: int minus int
/// stays int, anything with a float is float, a missing operand is missing.
pub(super) fn sub(v: &Cell, b: &Cell) -> Cell {
    if let (Cell::Int(x), Cell::Int(y)) = (v, b) {
        return match x.checked_sub(*y) {
            Some(d) => Cell::Int(d),
            None => Cell::Float(*x as f64 - *y as f64),
        };
    }
    match (arith(v), arith(b)) {
        (Some(x), Some(y)) => Cell::Float(x - y),
        _ => Cell::Empty,
    }
}

/// `100 * (diff / base)`, missing when either is missing or base is zero.
pub(super) fn pct(diff: &Cell, base: &Cell) -> Cell {
    match (arith(diff), arith(base)) {
        (Some(d), Some(b)) if b != 0.0 => Cell::Float(100.0 * (d / b)),
        _ => Cell::Empty,
    }
}

/// Applies the column typing rule of §0.2 after a join: a purely numeric
/// column holding a missing value or a float holds only floats.
pub(super) fn normalize(col: &mut [Cell]) {
    let mut has_int = false;
    let mut widen = false;
    for c in col.iter() {
        match c {
            Cell::Int(_) => has_int = true,
            Cell::Float(_) | Cell::Empty => widen = true,
            Cell::Bool(_) | Cell::Text(_) => return,
        }
    }
    if has_int && widen {
        for c in col.iter_mut() {
            if let Cell::Int(i) = c {
                *c = Cell::Float(*i as f64);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Column-major frames
// ---------------------------------------------------------------------------

/// A table held by column, for joins and column selection.
#[derive(Debug, Clone, Default)]
pub(super) struct Frame {
    pub(super) names: Vec<String>,
    pub(super) cols: Vec<Vec<Cell>>,
    pub(super) nrows: usize,
}

impl Frame {
    pub(super) fn from_sheet(s: &Sheet) -> Frame {
        let nrows = s.rows.len();
        let cols = (0..s.columns.len())
            .map(|j| {
                s.rows
                    .iter()
                    .map(|r| r.get(j).cloned().unwrap_or(Cell::Empty))
                    .collect()
            })
            .collect();
        Frame {
            names: s.columns.clone(),
            cols,
            nrows,
        }
    }

    pub(super) fn into_sheet(self, name: &str) -> Sheet {
        let mut rows: Vec<Vec<Cell>> = (0..self.nrows)
            .map(|_| Vec::with_capacity(self.cols.len()))
            .collect();
        for col in self.cols {
            for (row, cell) in rows.iter_mut().zip(col) {
                row.push(cell);
            }
        }
        Sheet {
            name: name.to_string(),
            columns: self.names,
            rows,
        }
    }

    pub(super) fn col(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Removes the named columns that exist.
    pub(super) fn drop_cols(&mut self, names: &[&str]) {
        let keep: Vec<usize> = (0..self.names.len())
            .filter(|&j| !names.contains(&self.names[j].as_str()))
            .collect();
        self.select_cols(&keep);
    }

    /// Keeps columns `idx`, in that order.
    pub(super) fn select_cols(&mut self, idx: &[usize]) {
        let mut names = std::mem::take(&mut self.names);
        let mut cols = std::mem::take(&mut self.cols);
        for &j in idx {
            self.names.push(std::mem::take(&mut names[j]));
            self.cols.push(std::mem::take(&mut cols[j]));
        }
    }

    /// A frame of rows `idx` (in that order).
    pub(super) fn take_rows(&self, idx: &[usize]) -> Frame {
        Frame {
            names: self.names.clone(),
            cols: self
                .cols
                .iter()
                .map(|c| idx.iter().map(|&i| c[i].clone()).collect())
                .collect(),
            nrows: idx.len(),
        }
    }

    /// Rows sorted descending by column `j`, missing values last; ties
    /// keep their order (spec 04 §0.2: a stable sort).
    pub(super) fn sort_desc(&self, j: usize) -> Frame {
        let col = &self.cols[j];
        let mut idx: Vec<usize> = (0..self.nrows).collect();
        idx.sort_by(|&a, &b| match (is_null(&col[a]), is_null(&col[b])) {
            (false, false) => cell_cmp(&col[b], &col[a]),
            (x, y) => x.cmp(&y),
        });
        self.take_rows(&idx)
    }
}
