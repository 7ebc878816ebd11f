//! What the collectives tables add to [`crate::table`]: how a kernel time
//! becomes a cell, the NaN-as-None rule of their numbers, and the default
//! aggregations of the reference's CLI.
//!
//! Recorded arguments become cells through [`crate::analysis::common::arg_cells::arg_value`];
//! grouping, aggregation, ordering and column typing are the shared ones
//! ([`crate::table::group`], [`crate::table::agg`],
//! [`crate::table::typing`]).

use indexmap::IndexMap;

use crate::table::agg::Agg;
use crate::table::{Column, Num, Value};

/// A time as written: integers stay integers (as in the reference's
/// DataFrames) while they are exact in an `f64`.
pub(super) fn time_value(value: f64, is_int: bool) -> Value {
    if is_int && value.abs() < 9.0e15 {
        Value::Int(value as i64)
    } else {
        Value::float_or_null(value)
    }
}

/// A computed number as a cell of these tables, which hold `None` where
/// pandas would have NaN ([`Value::float_or_null`]).
pub(super) fn num_value(n: Num) -> Value {
    match n {
        Num::Int(i) => Value::Int(i),
        Num::Float(x) => Value::float_or_null(x),
    }
}

/// Columns named `headers` from rows of cells (the `.0` of each row; the
/// `.1` is what the rows were sorted by).
pub(super) fn columns<S: AsRef<str>, T>(headers: &[S], rows: &[(Vec<Value>, T)]) -> Vec<Column> {
    headers
        .iter()
        .enumerate()
        .map(|(j, h)| Column::new(h.as_ref(), rows.iter().map(|r| r.0[j].clone()).collect()))
        .collect()
}

/// Columns from each row's named cells, as pandas builds a frame from a
/// list of dicts: one column per name in order of first appearance, `Null`
/// where a row lacks the name. `nrows` is the number of records.
pub(super) fn record_columns(
    records: impl IntoIterator<Item = Vec<(String, Value)>>,
    nrows: usize,
) -> Vec<Column> {
    let mut cols: IndexMap<String, Vec<Value>> = IndexMap::new();
    for (i, record) in records.into_iter().enumerate() {
        for (name, v) in record {
            cols.entry(name).or_insert_with(|| vec![Value::Null; nrows])[i] = v;
        }
    }
    cols.into_iter()
        .map(|(name, values)| Column { name, values })
        .collect()
}

/// The reference CLI's `--agg_metrics` default.
pub const DEFAULT_AGG_METRICS: [Agg; 4] = [Agg::Mean, Agg::Median, Agg::Min, Agg::Max];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::common::arg_cells::arg_value;
    use crate::trace::ArgValue;

    #[test]
    fn cells_of_arguments_and_times() {
        assert_eq!(arg_value(None), Value::Null);
        assert_eq!(arg_value(Some(&ArgValue::Int(8))), Value::Int(8));
        assert_eq!(arg_value(Some(&ArgValue::Float(f64::NAN))), Value::Null);
        assert_eq!(
            arg_value(Some(&ArgValue::UInt(u64::MAX))),
            Value::Float(u64::MAX as f64)
        );
        let list = ArgValue::List(vec![ArgValue::Int(0), ArgValue::Int(1)].into());
        assert_eq!(arg_value(Some(&list)), Value::Py("(0, 1)".into()));
        assert_eq!(time_value(12.0, true), Value::Int(12));
        assert_eq!(time_value(12.5, false), Value::Float(12.5));
        assert_eq!(time_value(f64::NAN, false), Value::Null);
        assert_eq!(num_value(Num::Float(f64::NAN)), Value::Null);
        assert_eq!(num_value(Num::Int(3)), Value::Int(3));
    }

    #[test]
    fn records_become_columns() {
        let cell = |n: &str, v: i64| (n.to_string(), Value::Int(v));
        let cols = record_columns(
            vec![vec![cell("b", 1)], vec![cell("a", 2), cell("b", 3)]],
            2,
        );
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(cols[1].values, [Value::Null, Value::Int(2)]);
        assert_eq!(cols[0].values, [Value::Int(1), Value::Int(3)]);
    }
}
