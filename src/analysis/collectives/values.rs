//! Cell values with pandas' typing ([`Val`], [`N`]), column typing,
//! pandas aggregations ([`Agg`]) and the group-by / sort helpers the
//! summary tables share.

use std::cmp::Ordering;

use crate::numeric::{kahan_sum, median, welford_std};
use crate::pyfmt::{float_repr, py_repr};
use crate::report::{Cell, Sheet};
use crate::trace::ArgValue;

// ---------------------------------------------------------------------------
// Values with pandas typing
// ---------------------------------------------------------------------------

/// A cell value of a reference DataFrame.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Val {
    /// None / NaN.
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A Python string.
    Str(String),
    /// A tuple or dict, as its Python repr.
    Py(String),
}

impl Val {
    /// A recorded argument as the reference's DataFrame holds it: numbers,
    /// strings and booleans as they are (an integer beyond `i64` as a
    /// float), lists and maps as Python tuples / dicts.
    pub(super) fn from_arg(a: &Option<ArgValue>) -> Val {
        match a {
            None | Some(ArgValue::Null) => Val::Null,
            Some(ArgValue::Int(i)) => Val::Int(*i),
            Some(ArgValue::UInt(u)) => Val::float(*u as f64),
            Some(ArgValue::Float(x)) => Val::float(*x),
            Some(ArgValue::Bool(b)) => Val::Bool(*b),
            Some(ArgValue::Str(s)) => Val::Str(s.to_string()),
            Some(v @ (ArgValue::List(_) | ArgValue::Map(_))) => Val::Py(py_repr(v, true)),
        }
    }

    /// A time as written: integers stay integers (as in the reference's
    /// DataFrames) while they are exact in an `f64`.
    pub(super) fn from_time(value: f64, is_int: bool) -> Val {
        if is_int && value.abs() < 9.0e15 {
            Val::Int(value as i64)
        } else {
            Val::float(value)
        }
    }

    /// A float; NaN is pandas' missing value.
    pub(super) fn float(x: f64) -> Val {
        if x.is_nan() { Val::Null } else { Val::Float(x) }
    }

    pub(super) fn is_null(&self) -> bool {
        matches!(self, Val::Null)
    }

    pub(super) fn num(&self) -> Option<N> {
        match self {
            Val::Int(i) => Some(N::I(*i)),
            Val::Float(x) => Some(N::F(*x)),
            _ => None,
        }
    }

    pub(super) fn f64(&self) -> f64 {
        self.num().map_or(f64::NAN, N::f)
    }

    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python `str()` of the value (used to build ids and labels).
    pub(super) fn text(&self) -> String {
        match self {
            Val::Null => "None".into(),
            Val::Int(i) => i.to_string(),
            Val::Float(x) => float_repr(*x),
            Val::Bool(true) => "True".into(),
            Val::Bool(false) => "False".into(),
            Val::Str(s) | Val::Py(s) => s.clone(),
        }
    }

    fn cell(&self) -> Cell {
        match self {
            Val::Null => Cell::Empty,
            Val::Int(i) => Cell::Int(*i),
            Val::Float(x) => Cell::Float(*x),
            Val::Bool(b) => Cell::Bool(*b),
            Val::Str(s) | Val::Py(s) => Cell::Text(s.clone()),
        }
    }

    /// Python equality for group keys and consistency checks (`2 == 2.0`;
    /// null equals null).
    pub(super) fn same(&self, o: &Val) -> bool {
        match (self.num(), o.num()) {
            (Some(a), Some(b)) => a.f() == b.f(),
            _ => self == o,
        }
    }

    /// Sort order of group keys: numbers, then strings, then tuples, then
    /// nulls (pandas sorts numbers before strings in a mixed key column).
    fn cmp_key(&self, o: &Val) -> Ordering {
        fn class(v: &Val) -> u8 {
            match v {
                Val::Int(_) | Val::Float(_) | Val::Bool(_) => 0,
                Val::Str(_) => 1,
                Val::Py(_) => 2,
                Val::Null => 3,
            }
        }
        fn numeric(v: &Val) -> f64 {
            match v {
                Val::Bool(b) => *b as u8 as f64,
                other => other.f64(),
            }
        }
        match class(self).cmp(&class(o)) {
            Ordering::Equal => match (self, o) {
                (Val::Str(a), Val::Str(b)) | (Val::Py(a), Val::Py(b)) => a.cmp(b),
                (Val::Null, Val::Null) => Ordering::Equal,
                _ => numeric(self).total_cmp(&numeric(o)),
            },
            c => c,
        }
    }
}

/// A number that remembers whether it is an integer, so that arithmetic on
/// integer timestamps stays integer as in the reference.
#[derive(Debug, Clone, Copy)]
pub(super) enum N {
    I(i64),
    F(f64),
}

impl N {
    pub(super) fn f(self) -> f64 {
        match self {
            N::I(i) => i as f64,
            N::F(x) => x,
        }
    }

    pub(super) fn add(self, o: N) -> N {
        match (self, o) {
            (N::I(a), N::I(b)) => a.checked_add(b).map_or(N::F(a as f64 + b as f64), N::I),
            _ => N::F(self.f() + o.f()),
        }
    }

    pub(super) fn sub(self, o: N) -> N {
        match (self, o) {
            (N::I(a), N::I(b)) => a.checked_sub(b).map_or(N::F(a as f64 - b as f64), N::I),
            _ => N::F(self.f() - o.f()),
        }
    }

    pub(super) fn lt(self, o: N) -> bool {
        match (self, o) {
            (N::I(a), N::I(b)) => a < b,
            _ => self.f() < o.f(),
        }
    }

    pub(super) fn val(self) -> Val {
        match self {
            N::I(i) => Val::Int(i),
            N::F(x) => Val::float(x),
        }
    }
}

pub(super) fn n_max(v: impl IntoIterator<Item = N>) -> Option<N> {
    v.into_iter().fold(None, |m, x| {
        Some(m.map_or(x, |m: N| if m.lt(x) { x } else { m }))
    })
}

pub(super) fn n_min(v: impl IntoIterator<Item = N>) -> Option<N> {
    v.into_iter().fold(None, |m, x| {
        Some(m.map_or(x, |m: N| if x.lt(m) { x } else { m }))
    })
}

/// Python `sum()` from 0 over the values, left to right.
pub(super) fn n_sum(v: impl IntoIterator<Item = N>) -> N {
    v.into_iter().fold(N::I(0), N::add)
}

/// pandas' dtype inference for one column built from Python objects: when
/// every non-missing value is a number and any is missing or a float, the
/// column is float64 (ints become floats).
pub(super) fn normalize(col: &mut [&mut Val]) {
    let (mut num, mut other, mut null, mut float) = (false, false, false, false);
    for v in col.iter() {
        match **v {
            Val::Null => null = true,
            Val::Int(_) => num = true,
            Val::Float(_) => {
                num = true;
                float = true
            }
            _ => other = true,
        }
    }
    if num && !other && (null || float) {
        for v in col.iter_mut() {
            if let Val::Int(i) = **v {
                **v = Val::Float(i as f64);
            }
        }
    }
}

/// Normalizes the field picked by `get` across `rows`.
pub(super) fn normalize_field<T>(rows: &mut [T], get: impl Fn(&mut T) -> &mut Val) {
    let mut col: Vec<&mut Val> = rows.iter_mut().map(get).collect();
    normalize(&mut col);
}

/// Builds a sheet from named columns of values, typing each column.
pub(super) fn sheet_of(name: &str, mut cols: Vec<(String, Vec<Val>)>) -> Sheet {
    for (_, c) in cols.iter_mut() {
        let mut refs: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut refs);
    }
    let n = cols.first().map_or(0, |(_, c)| c.len());
    Sheet {
        name: name.to_string(),
        columns: cols.iter().map(|(h, _)| h.clone()).collect(),
        rows: (0..n)
            .map(|i| cols.iter().map(|(_, c)| c[i].cell()).collect())
            .collect(),
    }
}

// ---------------------------------------------------------------------------
// Aggregations
// ---------------------------------------------------------------------------

/// A pandas aggregation of a column of numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agg {
    /// `mean`.
    Mean,
    /// `median`.
    Median,
    /// `min`.
    Min,
    /// `max`.
    Max,
    /// `std` (sample, ddof = 1).
    Std,
    /// `sum`.
    Sum,
}

impl Agg {
    /// The pandas name, used in column headers (`comm_latency_mean`).
    pub fn name(self) -> &'static str {
        match self {
            Agg::Mean => "mean",
            Agg::Median => "median",
            Agg::Min => "min",
            Agg::Max => "max",
            Agg::Std => "std",
            Agg::Sum => "sum",
        }
    }

    /// Parses a pandas aggregation name.
    pub fn parse(s: &str) -> Option<Agg> {
        [
            Agg::Mean,
            Agg::Median,
            Agg::Min,
            Agg::Max,
            Agg::Std,
            Agg::Sum,
        ]
        .into_iter()
        .find(|a| a.name() == s)
    }

    /// The groupby aggregation of `vals` (missing values skipped).
    pub(super) fn apply(self, vals: &[&Val]) -> Val {
        let nums: Vec<N> = vals.iter().filter_map(|v| v.num()).collect();
        let floats: Vec<f64> = nums.iter().map(|n| n.f()).collect();
        let all_int = nums.iter().all(|n| matches!(n, N::I(_)));
        match self {
            Agg::Mean if nums.is_empty() => Val::Null,
            Agg::Mean => Val::float(kahan_sum(&floats) / floats.len() as f64),
            Agg::Median => Val::float(median(&floats)),
            Agg::Min => n_min(nums).map_or(Val::Null, N::val),
            Agg::Max => n_max(nums).map_or(Val::Null, N::val),
            Agg::Std => welford_std(&floats).map_or(Val::Null, Val::float),
            Agg::Sum if all_int && !nums.is_empty() => n_sum(nums).val(),
            Agg::Sum => Val::Float(kahan_sum(&floats)),
        }
    }
}

/// The reference CLI's `--agg_metrics` default.
pub const DEFAULT_AGG_METRICS: [Agg; 4] = [Agg::Mean, Agg::Median, Agg::Min, Agg::Max];

pub(super) fn first_non_null<'a>(vals: impl IntoIterator<Item = &'a Val>) -> Val {
    vals.into_iter()
        .find(|v| !v.is_null())
        .cloned()
        .unwrap_or(Val::Null)
}

/// numpy's `round(x, 1)`: `rint(x * 10) / 10`; integers stay integers.
pub(super) fn round1(v: Val) -> Val {
    match v {
        Val::Float(x) => Val::Float((x * 10.0).round_ties_even() / 10.0),
        other => other,
    }
}

// ---------------------------------------------------------------------------
// Grouping and sorting
// ---------------------------------------------------------------------------

fn cmp_keys(a: &[Val], b: &[Val]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.cmp_key(y))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn same_keys(a: &[Val], b: &[Val]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.same(y))
}

/// Groups `items` by `key` (rows with a null key are dropped when
/// `drop_null`), in ascending key order; each group keeps table order.
pub(super) fn group_sorted<T>(
    items: &[T],
    key: impl Fn(&T) -> Vec<Val>,
    drop_null: bool,
) -> Vec<(Vec<Val>, Vec<usize>)> {
    let mut keyed: Vec<(Vec<Val>, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, t)| (key(t), i))
        .filter(|(k, _)| !drop_null || k.iter().all(|v| !v.is_null()))
        .collect();
    // Stable: equal keys keep table order.
    keyed.sort_by(|a, b| cmp_keys(&a.0, &b.0));
    let mut out: Vec<(Vec<Val>, Vec<usize>)> = Vec::new();
    for (k, i) in keyed {
        match out.last_mut() {
            Some((lk, idx)) if same_keys(lk, &k) => idx.push(i),
            _ => out.push((k, vec![i])),
        }
    }
    out
}

/// Stable descending sort by a numeric column; missing values last.
pub(super) fn sort_desc_by<T>(rows: &mut [T], key: impl Fn(&T) -> f64) {
    rows.sort_by(|a, b| {
        let (x, y) = (key(a), key(b));
        match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => y.total_cmp(&x),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pandas_column_typing() {
        let mut c = [Val::Int(8), Val::Null];
        let mut r: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut r);
        assert_eq!(c, [Val::Float(8.0), Val::Null]);
        let mut c = [Val::Int(8), Val::Str("x".into()), Val::Null];
        let mut r: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut r);
        assert_eq!(c[0], Val::Int(8));
        let mut c = [Val::Int(8), Val::Int(9)];
        let mut r: Vec<&mut Val> = c.iter_mut().collect();
        normalize(&mut r);
        assert_eq!(c, [Val::Int(8), Val::Int(9)]);
    }

    #[test]
    fn aggregations_keep_int_type() {
        let v = [Val::Int(7), Val::Int(86), Val::Int(10), Val::Int(8)];
        let r: Vec<&Val> = v.iter().collect();
        assert_eq!(Agg::Min.apply(&r), Val::Int(7));
        assert_eq!(Agg::Max.apply(&r), Val::Int(86));
        assert_eq!(Agg::Median.apply(&r), Val::Float(9.0));
        assert_eq!(Agg::Mean.apply(&r), Val::Float(27.75));
        assert_eq!(Agg::Sum.apply(&r), Val::Int(111));
        assert_eq!(round1(Val::Float(3.25)), Val::Float(3.2));
        assert_eq!(round1(Val::Int(10)), Val::Int(10));
    }

    #[test]
    fn key_order_numbers_before_strings() {
        let mut v = [Val::Str("Unknown".into()), Val::Float(3.0), Val::Int(1)];
        v.sort_by(|a, b| a.cmp_key(b));
        assert_eq!(v[0], Val::Int(1));
        assert_eq!(v[2], Val::Str("Unknown".into()));
        assert!(Val::Int(2).same(&Val::Float(2.0)));
        assert!(!Val::Str("(0, 1)".into()).same(&Val::Py("(0, 1)".into())));
    }
}
