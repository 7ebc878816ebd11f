//! Aggregations and orderings with pandas' semantics: [`Agg`] over a
//! group's cells, [`nan_stats`] over floats, [`percentages`] of a sorted
//! column, and stable descending orders with missing values last.
//!
//! The bit-exact reductions themselves (Kahan sum, pairwise sum, Welford
//! std, median) are in [`crate::numeric`].

use std::cmp::Ordering;

use super::{Num, Value};
use crate::numeric::{kahan_sum, median, pairwise_sum, welford_std};

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
    /// Every aggregation, in declaration order.
    pub const ALL: [Agg; 6] = [
        Agg::Mean,
        Agg::Median,
        Agg::Min,
        Agg::Max,
        Agg::Std,
        Agg::Sum,
    ];

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

    /// The header of this aggregation of column `base`: `<base>_<name>`
    /// (`comm_latency_mean`, `Kernel Time (µs)_sum`).
    pub fn column(self, base: &str) -> String {
        format!("{base}_{}", self.name())
    }

    /// Parses a pandas aggregation name.
    pub fn parse(s: &str) -> Option<Agg> {
        Agg::ALL.into_iter().find(|a| a.name() == s)
    }

    /// The groupby aggregation of `values`, as pandas computes it over an
    /// object column of numbers: missing values (and anything that is not
    /// an `Int` or `Float`) are skipped; `min`, `max` and the `sum` of only
    /// ints keep ints; `mean` is the Kahan sum over the count, `std` is
    /// Welford's. A result pandas would hold as NaN (nothing to aggregate,
    /// one value for `std`) is `Null`, except `sum`, which is `0.0` then.
    pub fn apply<'a>(self, values: impl IntoIterator<Item = &'a Value>) -> Value {
        let nums: Vec<Num> = values.into_iter().filter_map(Value::num).collect();
        let floats: Vec<f64> = nums.iter().map(|n| n.f64()).collect();
        let all_int = nums.iter().all(|n| matches!(n, Num::Int(_)));
        match self {
            Agg::Mean if nums.is_empty() => Value::Null,
            Agg::Mean => Value::float_or_null(kahan_sum(&floats) / floats.len() as f64),
            Agg::Median => Value::float_or_null(median(&floats)),
            Agg::Min => num_min(nums).map_or(Value::Null, Num::value),
            Agg::Max => num_max(nums).map_or(Value::Null, Num::value),
            Agg::Std => welford_std(&floats).map_or(Value::Null, Value::float_or_null),
            Agg::Sum if all_int && !nums.is_empty() => num_sum(nums).value(),
            Agg::Sum => Value::Float(kahan_sum(&floats)),
        }
    }
}

/// The headers of `aggs` of column `base`, in order ([`Agg::column`]).
pub fn agg_columns<'a>(base: &'a str, aggs: &'a [Agg]) -> impl Iterator<Item = String> + 'a {
    aggs.iter().map(move |a| a.column(base))
}

/// The largest number (the first of equal ones), `None` for none.
pub fn num_max(values: impl IntoIterator<Item = Num>) -> Option<Num> {
    values.into_iter().fold(None, |m, x| {
        Some(m.map_or(x, |m: Num| if m.lt(x) { x } else { m }))
    })
}

/// The smallest number (the first of equal ones), `None` for none.
pub fn num_min(values: impl IntoIterator<Item = Num>) -> Option<Num> {
    values.into_iter().fold(None, |m, x| {
        Some(m.map_or(x, |m: Num| if x.lt(m) { x } else { m }))
    })
}

/// Python `sum()` from `0` over the numbers, left to right (ints stay ints
/// until a float or an overflow).
pub fn num_sum(values: impl IntoIterator<Item = Num>) -> Num {
    values.into_iter().fold(Num::Int(0), |a, b| a + b)
}

/// pandas `Series.sum()` of a column of numbers: an int column sums
/// exactly (as Python ints, a float on overflow), any float makes numpy's
/// pairwise float sum. (A groupby's `sum` is [`Agg::Sum`], a Kahan sum.)
pub fn series_sum(values: &[Num]) -> Num {
    if values.iter().all(|n| matches!(n, Num::Int(_))) {
        num_sum(values.iter().copied())
    } else {
        let f: Vec<f64> = values.iter().map(|n| n.f64()).collect();
        Num::Float(pairwise_sum(&f))
    }
}

/// The first present value (pandas `first` in a groupby), `Null` for none.
pub fn first_present<'a>(values: impl IntoIterator<Item = &'a Value>) -> Value {
    values
        .into_iter()
        .find(|v| !v.is_missing())
        .cloned()
        .unwrap_or(Value::Null)
}

/// The first non-NaN float (pandas `first` of a float column), NaN for none.
pub fn first_non_nan(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().find(|v| !v.is_nan()).unwrap_or(f64::NAN)
}

/// numpy's `round(x, 1)`: `rint(x * 10) / 10`; ints stay ints.
pub fn round1(v: Value) -> Value {
    match v {
        Value::Float(x) => Value::Float((x * 10.0).round_ties_even() / 10.0),
        other => other,
    }
}

/// The statistics [`nan_stats`] returns, in its order (their names head
/// the sheets' `<column>_<stat>` columns).
pub const NAN_STATS: [Agg; 5] = [Agg::Mean, Agg::Median, Agg::Std, Agg::Min, Agg::Max];

/// mean, median, sample std, min and max of the non-NaN values, as a
/// pandas groupby of a float column gives them: NaN for all five when
/// there is none; std is NaN for a single value.
pub fn nan_stats(values: &[f64]) -> [f64; 5] {
    let v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return [f64::NAN; 5];
    }
    [
        kahan_sum(&v) / v.len() as f64,
        median(&v),
        welford_std(&v).unwrap_or(f64::NAN),
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ]
}

/// `Percentage (%)` and `Cumulative Percentage (%)` of a column already in
/// output order: each value over the column's numpy (pairwise) total,
/// times 100, and the running sum of those, left to right.
pub fn percentages(values: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let total = pairwise_sum(values);
    let pct: Vec<f64> = values.iter().map(|v| (v / total) * 100.0).collect();
    let mut run = 0.0;
    let cum = pct
        .iter()
        .map(|p| {
            run += p;
            run
        })
        .collect();
    (pct, cum)
}

/// Descending order of two floats with NaN last (equal to each other);
/// other values by `total_cmp`, as every f64 sort of the sheets does.
/// Chain `.then(...)` for a tie-breaker.
pub fn desc_nan_last(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => b.total_cmp(&a),
        (x, y) => x.cmp(&y),
    }
}

/// Ascending order of two floats with NaN last (equal to each other);
/// other values by `total_cmp`.
pub fn asc_nan_last(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.total_cmp(&b),
        (x, y) => x.cmp(&y),
    }
}

/// Indices of `keys` in stable descending order, NaN last
/// ([`desc_nan_last`]).
pub fn order_desc(keys: &[f64]) -> Vec<usize> {
    order_desc_by(keys, |_, _| Ordering::Equal)
}

/// Indices of `keys` in descending order, NaN last ([`desc_nan_last`]),
/// equal keys ordered by `tie(a, b)` and then kept in place (a stable sort).
pub fn order_desc_by(keys: &[f64], tie: impl Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.sort_by(|&a, &b| desc_nan_last(keys[a], keys[b]).then_with(|| tie(a, b)));
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().copied().map(Value::Int).collect()
    }

    #[test]
    fn aggregations_keep_int_type() {
        // From collectives/values.rs: pd.Series([7, 86, 10, 8]).
        let v = ints(&[7, 86, 10, 8]);
        assert_eq!(Agg::Min.apply(&v), Value::Int(7));
        assert_eq!(Agg::Max.apply(&v), Value::Int(86));
        assert_eq!(Agg::Median.apply(&v), Value::Float(9.0));
        assert_eq!(Agg::Mean.apply(&v), Value::Float(27.75));
        assert_eq!(Agg::Sum.apply(&v), Value::Int(111));
        // pandas 3.1: pd.Series([7, 86, 10, 8]).std() == 38.853356783337695.
        assert_eq!(Agg::Std.apply(&v), Value::Float(38.853356783337695));
        assert_eq!(round1(Value::Float(3.25)), Value::Float(3.2));
        assert_eq!(round1(Value::Float(3.35)), Value::Float(3.4));
        assert_eq!(round1(Value::Int(10)), Value::Int(10));
        assert_eq!(round1(Value::Null), Value::Null);
    }

    #[test]
    fn aggregations_skip_missing() {
        let v = vec![
            Value::Int(4),
            Value::Null,
            Value::Float(f64::NAN),
            Value::Int(2),
            Value::Text("x".into()),
            Value::Bool(true),
        ];
        assert_eq!(Agg::Mean.apply(&v), Value::Float(3.0));
        assert_eq!(Agg::Median.apply(&v), Value::Float(3.0));
        assert_eq!(Agg::Min.apply(&v), Value::Int(2));
        assert_eq!(Agg::Max.apply(&v), Value::Int(4));
        assert_eq!(Agg::Sum.apply(&v), Value::Int(6));
        assert_eq!(Agg::Std.apply(&v), Value::Float(2f64.sqrt()));
    }

    #[test]
    fn aggregations_of_nothing() {
        let none: Vec<Value> = vec![Value::Null, Value::Float(f64::NAN)];
        for a in [Agg::Mean, Agg::Median, Agg::Min, Agg::Max, Agg::Std] {
            assert_eq!(a.apply(&none), Value::Null, "{a:?}");
        }
        // pandas: the sum of nothing is 0 (a float in an all-NaN column).
        assert_eq!(Agg::Sum.apply(&none), Value::Float(0.0));
        assert_eq!(Agg::Sum.apply(&[]), Value::Float(0.0));
        // One value has no sample std.
        assert_eq!(Agg::Std.apply(&[Value::Int(5)]), Value::Null);
    }

    #[test]
    fn aggregations_of_mixed_numbers() {
        let v = vec![Value::Int(3), Value::Float(1.5), Value::Int(3)];
        assert_eq!(Agg::Sum.apply(&v), Value::Float(7.5));
        // min/max keep the winner's own type; the first of equals wins.
        assert_eq!(Agg::Max.apply(&v), Value::Int(3));
        assert_eq!(Agg::Min.apply(&v), Value::Float(1.5));
        let v = vec![Value::Float(2.0), Value::Int(2)];
        assert_eq!(Agg::Max.apply(&v), Value::Float(2.0));
        assert_eq!(Agg::Min.apply(&v), Value::Float(2.0));
        // Kahan: ten 0.1s sum to exactly 1.0.
        assert_eq!(
            Agg::Sum.apply(&vec![Value::Float(0.1); 10]),
            Value::Float(1.0)
        );
        // Int sums overflow into floats rather than wrapping.
        let v = ints(&[i64::MAX, 1]);
        assert_eq!(Agg::Sum.apply(&v), Value::Float(i64::MAX as f64 + 1.0));
        // Refs work as well as values.
        let r: Vec<&Value> = v.iter().collect();
        assert_eq!(Agg::Max.apply(r.iter().copied()), Value::Int(i64::MAX));
    }

    #[test]
    fn agg_names() {
        for a in Agg::ALL {
            assert_eq!(Agg::parse(a.name()), Some(a));
        }
        assert_eq!(Agg::parse("count"), None);
        assert_eq!(Agg::Std.name(), "std");
        assert_eq!(Agg::Mean.column("TB/s"), "TB/s_mean");
        let cols: Vec<String> = agg_columns("x", &NAN_STATS).collect();
        assert_eq!(cols, ["x_mean", "x_median", "x_std", "x_min", "x_max"]);
    }

    #[test]
    fn num_folds() {
        let n = [Num::Int(2), Num::Float(2.0), Num::Int(1)];
        assert_eq!(num_max(n), Some(Num::Int(2)));
        assert_eq!(num_min(n), Some(Num::Int(1)));
        assert_eq!(num_sum(n), Num::Float(5.0));
        assert_eq!(num_sum([Num::Int(2), Num::Int(1)]), Num::Int(3));
        assert_eq!(num_sum([]), Num::Int(0));
        assert_eq!(num_max([]), None);
        assert_eq!(series_sum(&[Num::Int(2), Num::Int(1)]), Num::Int(3));
        assert_eq!(series_sum(&[]), Num::Int(0));
        // Nine values: numpy's pairwise sum, not a left-to-right one.
        let mut v = vec![Num::Float(1e16)];
        v.extend([Num::Int(1); 8]);
        let f: Vec<f64> = v.iter().map(|n| n.f64()).collect();
        assert_eq!(series_sum(&v), Num::Float(pairwise_sum(&f)));
    }

    #[test]
    fn firsts() {
        let v = [
            Value::Null,
            Value::Float(f64::NAN),
            Value::Int(3),
            Value::Int(4),
        ];
        assert_eq!(first_present(&v), Value::Int(3));
        assert_eq!(first_present(&[Value::Null]), Value::Null);
        assert_eq!(first_non_nan([f64::NAN, 2.0, 3.0]), 2.0);
        assert!(first_non_nan([f64::NAN]).is_nan());
    }

    #[test]
    fn nan_stats_like_pandas() {
        // pd.Series([1.0, NaN, 4.0, 2.0]): mean 7/3, median 2, std 1.527..
        let [mean, med, std, min, max] = nan_stats(&[1.0, f64::NAN, 4.0, 2.0]);
        assert_eq!(mean, 7.0 / 3.0);
        assert_eq!(med, 2.0);
        assert!((std - 1.5275252316519468).abs() < 1e-15, "{std}");
        assert_eq!((min, max), (1.0, 4.0));
        assert!(nan_stats(&[f64::NAN]).iter().all(|x| x.is_nan()));
        assert!(nan_stats(&[]).iter().all(|x| x.is_nan()));
        let one = nan_stats(&[5.0]);
        assert_eq!([one[0], one[1], one[3], one[4]], [5.0; 4]);
        assert!(one[2].is_nan());
    }

    #[test]
    fn percentages_pairwise_total_running_sum() {
        let (pct, cum) = percentages(&[3.0, 1.0]);
        assert_eq!(pct, [75.0, 25.0]);
        assert_eq!(cum, [75.0, 100.0]);
        // The total is numpy's pairwise sum: with nine values it differs
        // from a left-to-right sum (see numeric::pairwise_differs_from_naive).
        let v = [1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let (pct, _) = percentages(&v);
        assert_eq!(pct[0], 1e16 / (1e16 + 8.0) * 100.0);
        // The running sum adds the rounded percentages left to right:
        // np.cumsum([0.1, 0.2, 0.7] / 1.0 * 100).
        let (pct, cum) = percentages(&[0.1, 0.2, 0.7]);
        let mut run = 0.0;
        for (p, c) in pct.iter().zip(&cum) {
            run += p;
            assert_eq!(run, *c);
        }
        let (pct, cum) = percentages(&[]);
        assert!(pct.is_empty() && cum.is_empty());
        // A zero total gives NaN percentages, as numpy does.
        let (pct, _) = percentages(&[0.0]);
        assert!(pct[0].is_nan());
    }

    #[test]
    fn descending_orders() {
        let keys = [1.0, f64::NAN, 3.0, 1.0, 5.0, f64::NAN, 3.0];
        assert_eq!(order_desc(&keys), [4, 2, 6, 0, 3, 1, 5]);
        assert_eq!(order_desc(&[]), Vec::<usize>::new());
        assert_eq!(desc_nan_last(2.0, 1.0), Ordering::Less);
        assert_eq!(asc_nan_last(2.0, 1.0), Ordering::Greater);
        assert_eq!(asc_nan_last(f64::NAN, 1.0), Ordering::Greater);
        assert_eq!(desc_nan_last(f64::NAN, f64::NAN), Ordering::Equal);
        // A tie-breaker chains on (unified: sum desc, then ex_UID asc).
        let keys = [2.0, 2.0, 3.0];
        let uid = [9, 4, 1];
        let mut idx = vec![0, 1, 2];
        idx.sort_by(|&a, &b| desc_nan_last(keys[a], keys[b]).then(uid[a].cmp(&uid[b])));
        assert_eq!(idx, [2, 1, 0]);
        assert_eq!(order_desc_by(&keys, |a, b| uid[a].cmp(&uid[b])), [2, 1, 0]);
    }
}
