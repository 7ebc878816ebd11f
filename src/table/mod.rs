//! Tables: named, typed columns with explicit missing values — what every
//! pass produces, every writer renders and `compare` reads back.
//!
//! A [`Table`] is column-major: a name and [`Column`]s of [`Value`]s, all of
//! one length. The pandas rules the reference's output depends on live
//! here once: how cells render ([`Value::csv_text`], [`Value::py_str`]),
//! how keys order and compare ([`Value::key_cmp`]), how a column is typed
//! ([`typing`]), and the group → aggregate → sort → percent steps the
//! sheets share ([`group`], [`agg`]).

pub mod agg;
mod deferred;
pub mod group;
pub mod typing;
mod value;

#[cfg(test)]
pub(crate) use deferred::deferred_copy;
pub use deferred::{CellIter, Cells, RowSource};
pub use value::{Key, Num, SharedTexts, Value, cmp_rows};

/// The type of a column, computed from its values exactly (no widening).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// Every present value is an `Int`.
    Int,
    /// Every present value is a `Float` (NaN included).
    Float,
    /// Every present value is a `Bool`.
    Bool,
    /// Every present value is `Text`.
    Text,
    /// Every present value is a Python repr (`Py`).
    Py,
    /// Present values of more than one kind.
    Object,
    /// No value other than `Null` (or no value at all).
    Empty,
}

impl Dtype {
    /// The type of `values`: the one kind of every non-`Null` value, `Object`
    /// when kinds mix, `Empty` when there is none. A NaN float is a float.
    pub fn of(values: &[Value]) -> Dtype {
        let mut out = Dtype::Empty;
        for v in values {
            let kind = match v {
                Value::Null => continue,
                Value::Int(_) => Dtype::Int,
                Value::Float(_) => Dtype::Float,
                Value::Bool(_) => Dtype::Bool,
                Value::Text(_) => Dtype::Text,
                Value::Py(_) => Dtype::Py,
            };
            if out == Dtype::Empty {
                out = kind;
            } else if out != kind {
                return Dtype::Object;
            }
        }
        out
    }
}

/// One named column.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Column {
    /// Header, e.g. `Kernel Time (µs)_sum`.
    pub name: String,
    /// The cells, top to bottom.
    pub values: Vec<Value>,
}

/// `count` empty columns of cells, each with room for `rows` (not
/// `vec![Vec::with_capacity(rows); count]`: a cloned `Vec` keeps no
/// capacity, so all but one would grow by doubling).
pub fn empty_columns(count: usize, rows: usize) -> Vec<Vec<Value>> {
    (0..count).map(|_| Vec::with_capacity(rows)).collect()
}

impl Column {
    /// A column named `name` holding `values`.
    pub fn new(name: &str, values: Vec<Value>) -> Column {
        Column {
            name: name.to_string(),
            values,
        }
    }

    /// The column's type (see [`Dtype::of`]).
    pub fn dtype(&self) -> Dtype {
        Dtype::of(&self.values)
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the column has no cells.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A named table of equally long columns: one sheet, one CSV file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// Sheet name, e.g. `gpu_timeline`; also the CSV file stem.
    pub name: String,
    /// Columns in output order; all have the same length. A deferred
    /// table's are empty: its rows come from its source
    /// ([`Table::for_each_row`]).
    pub columns: Vec<Column>,
    /// The source of the rows of a deferred table.
    deferred: Option<deferred::Deferred>,
}

/// The first of `tables` named `name` (a report's sheet by name).
pub fn find<'a>(tables: &'a [Table], name: &str) -> Option<&'a Table> {
    tables.iter().find(|t| t.name == name)
}

/// One row of a [`Table`], borrowed: index its cells by position or name,
/// or iterate them left to right.
#[derive(Debug, Clone, Copy)]
pub struct RowRef<'a> {
    table: &'a Table,
    index: usize,
}

impl<'a> RowRef<'a> {
    /// The row's index in its table.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The cell in column `col` (panics when out of range).
    pub fn get(&self, col: usize) -> &'a Value {
        &self.table.columns[col].values[self.index]
    }

    /// The cell in the column named `name`, if there is one.
    pub fn get_named(&self, name: &str) -> Option<&'a Value> {
        self.table.column_index(name).map(|j| self.get(j))
    }

    /// Number of cells (the table's column count).
    pub fn len(&self) -> usize {
        self.table.ncols()
    }

    /// Whether the row has no cells (a table without columns).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cells, left to right.
    pub fn iter(&self) -> impl Iterator<Item = &'a Value> + 'a {
        let (table, i) = (self.table, self.index);
        table.columns.iter().map(move |c| &c.values[i])
    }

    /// The cells, cloned.
    pub fn to_vec(&self) -> Vec<Value> {
        self.iter().cloned().collect()
    }
}

impl<'a> IntoIterator for RowRef<'a> {
    type Item = &'a Value;
    type IntoIter = Box<dyn Iterator<Item = &'a Value> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl Table {
    /// An empty table (no rows) with the given column headers.
    pub fn new(name: &str, columns: &[&str]) -> Table {
        Table {
            name: name.to_string(),
            columns: columns.iter().map(|c| Column::new(c, Vec::new())).collect(),
            deferred: None,
        }
    }

    /// A table of `rows` (each as wide as `columns`) under `columns`.
    pub fn from_rows(name: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> Table {
        let mut t = Table::new(name, columns);
        for r in rows {
            t.push_row(r);
        }
        t
    }

    /// An empty table (no rows) with headers built at run time
    /// (`TB/s_mean`, `rank_3_ts`, …).
    pub fn with_headers(name: &str, columns: Vec<String>) -> Table {
        Table {
            name: name.to_string(),
            columns: columns
                .into_iter()
                .map(|name| Column {
                    name,
                    values: Vec::new(),
                })
                .collect(),
            deferred: None,
        }
    }

    /// A table of ready columns. Panics when their lengths differ.
    pub fn from_columns(name: &str, columns: Vec<Column>) -> Table {
        if let Some(first) = columns.first() {
            let n = first.len();
            if let Some(bad) = columns.iter().find(|c| c.len() != n) {
                panic!(
                    "table {name:?}: column {:?} has {} values, column {:?} has {n}",
                    bad.name,
                    bad.len(),
                    first.name
                );
            }
        }
        Table {
            name: name.to_string(),
            columns,
            deferred: None,
        }
    }

    /// Appends a row. Panics when its width is not the column count.
    pub fn push_row(&mut self, row: Vec<Value>) {
        assert!(
            !self.is_deferred(),
            "table {:?}: rows pushed onto a deferred table",
            self.name
        );
        assert_eq!(
            row.len(),
            self.columns.len(),
            "table {:?}: row width differs from the column count",
            self.name
        );
        for (col, v) in self.columns.iter_mut().zip(row) {
            col.values.push(v);
        }
    }

    /// Appends a column. Panics when its length is not the row count
    /// (any length is fine for a table without columns).
    pub fn push_column(&mut self, column: Column) {
        if !self.columns.is_empty() {
            assert_eq!(
                column.len(),
                self.nrows(),
                "table {:?}: column {:?} length differs from the row count",
                self.name,
                column.name
            );
        }
        self.columns.push(column);
    }

    /// Number of rows (0 for a table without columns).
    pub fn nrows(&self) -> usize {
        match &self.deferred {
            Some(d) => d.0.len(),
            None => self.columns.first().map_or(0, Column::len),
        }
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.columns.len()
    }

    /// The column headers, in order.
    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// Index of the first column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The first column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The first column named `name`, mutably.
    pub fn column_mut(&mut self, name: &str) -> Option<&mut Column> {
        self.columns.iter_mut().find(|c| c.name == name)
    }

    /// The cell at `row`, `col` (panics when out of range).
    pub fn value(&self, row: usize, col: usize) -> &Value {
        &self.columns[col].values[row]
    }

    /// Row `i` (panics when out of range).
    pub fn row(&self, i: usize) -> RowRef<'_> {
        assert!(i < self.nrows(), "table {:?}: no row {i}", self.name);
        RowRef {
            table: self,
            index: i,
        }
    }

    /// Every row, top to bottom.
    pub fn rows(&self) -> impl Iterator<Item = RowRef<'_>> + '_ {
        (0..self.nrows()).map(move |i| RowRef {
            table: self,
            index: i,
        })
    }

    /// A table of rows `idx`, in that order (repeats allowed), same name
    /// and columns.
    pub fn take_rows(&self, idx: &[usize]) -> Table {
        Table {
            name: self.name.clone(),
            columns: self
                .columns
                .iter()
                .map(|c| Column {
                    name: c.name.clone(),
                    values: idx.iter().map(|&i| c.values[i].clone()).collect(),
                })
                .collect(),
            deferred: None,
        }
    }

    /// Keeps columns `idx`, in that order (a repeated index copies the
    /// column).
    pub fn select_columns(&mut self, idx: &[usize]) {
        let mut old: Vec<Option<Column>> = std::mem::take(&mut self.columns)
            .into_iter()
            .map(Some)
            .collect();
        let mut placed: Vec<Option<usize>> = vec![None; old.len()];
        for &j in idx {
            let col = match old[j].take() {
                Some(c) => {
                    placed[j] = Some(self.columns.len());
                    c
                }
                None => self.columns[placed[j].expect("taken columns are placed")].clone(),
            };
            self.columns.push(col);
        }
    }

    /// Removes every column whose name is in `names` (absent names are
    /// ignored).
    pub fn drop_columns(&mut self, names: &[&str]) {
        self.columns.retain(|c| !names.contains(&c.name.as_str()));
    }

    /// Keeps the rows for which `keep` is true, in order.
    pub fn retain_rows(&mut self, mut keep: impl FnMut(RowRef<'_>) -> bool) {
        let mask: Vec<bool> = self.rows().map(&mut keep).collect();
        for col in &mut self.columns {
            let mut it = mask.iter();
            col.values.retain(|_| *it.next().expect("one flag per row"));
        }
    }

    /// Sorts the rows descending by column `col` ([`Value::key_cmp`]),
    /// missing values last; ties keep their order (pandas
    /// `sort_values(ascending=False, kind="stable")`).
    pub fn sort_desc_by(&mut self, col: usize) {
        let c = &self.columns[col].values;
        let mut idx: Vec<usize> = (0..self.nrows()).collect();
        idx.sort_by(|&a, &b| match (c[a].is_missing(), c[b].is_missing()) {
            (false, false) => c[b].key_cmp(&c[a]),
            (x, y) => x.cmp(&y),
        });
        *self = self.take_rows(&idx);
    }
}

#[cfg(test)]
mod tests;
