//! The outer join of one table per report on a sheet group's keys and the
//! `<col>__<tag>_diff` / `_pct` columns added to it (the reference's
//! `build_df_dff`).

use std::cmp::Ordering;
use std::sync::LazyLock;

use regex::Regex;

use super::{CompareError, Result, fail};
use crate::names::col::{DIFF_SEPARATOR, DIFF_SUFFIX, PCT_SUFFIX, TAG_SEPARATOR};
use crate::table::typing::widen_ints;
use crate::table::{Column, Table, Value};

/// Most rows a join may produce; a many-to-many join of two large tables
/// on a repeated key could otherwise exhaust memory.
const MAX_JOIN_ROWS: usize = 1_000_000;

/// `v - b` as pandas computes it for two numeric columns: int minus int
/// stays int, anything with a float is float, a missing operand is missing.
fn sub(v: &Value, b: &Value) -> Value {
    match (v.num(), b.num()) {
        (Some(x), Some(y)) => (x - y).value(),
        _ => Value::Null,
    }
}

/// `100 * (diff / base)`, missing when either is missing or base is zero.
fn pct(diff: &Value, base: &Value) -> Value {
    match (diff.as_f64(), base.as_f64()) {
        (Some(d), Some(b)) if b != 0.0 => Value::Float(100.0 * (d / b)),
        _ => Value::Null,
    }
}

/// Compares row `a` of `ta` with row `b` of `tb` on key columns `ka`/`kb`
/// ([`Value::key_cmp`]).
fn key_cmp(ta: &Table, ka: &[usize], a: usize, tb: &Table, kb: &[usize], b: usize) -> Ordering {
    for (&ja, &jb) in ka.iter().zip(kb) {
        match ta.value(a, ja).key_cmp(tb.value(b, jb)) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

/// Indices of `keys` in `t`, or an error naming the first one missing.
fn key_indices(t: &Table, keys: &[String], what: &str) -> Result<Vec<usize>> {
    keys.iter()
        .map(|k| {
            t.column_index(k)
                .ok_or_else(|| CompareError(format!("{what} has no column {k:?}")))
        })
        .collect()
}

/// One output row of an outer join: its left row and its right row (one of
/// them missing for an unmatched row).
type Pair = (Option<usize>, Option<usize>);

/// The output rows of an outer join, in order.
type Pairs = Vec<Pair>;

/// pandas `merge(left, right, on=keys, how="outer")` followed by moving the
/// keys first: rows sorted by key (missing keys last, and equal to each
/// other), equal keys paired as a cross product (left order, then right
/// order), unmatched rows with missing values on the other side. Columns:
/// keys, left's other columns, right's other columns.
fn outer_merge(left: &Table, right: &Table, keys: &[String], rwhat: &str) -> Result<Table> {
    let lk = key_indices(left, keys, "the joined table")?;
    let rk = key_indices(right, keys, rwhat)?;
    let pairs = merge_pairs(left, &lk, right, &rk, keys)?;
    // Column `j` of `t` over the output rows, from the side `pick` names.
    let side = |t: &Table, j: usize, pick: fn(&Pair) -> Option<usize>| {
        let values = pairs
            .iter()
            .map(|p| pick(p).map_or(Value::Null, |i| t.value(i, j).clone()))
            .collect();
        Column::new(&t.columns[j].name, values)
    };
    let mut out = Table::new(&left.name, &[]);
    for (&jl, &jr) in lk.iter().zip(&rk) {
        let values = pairs
            .iter()
            .map(|&(a, b)| match (a, b) {
                (Some(a), _) => left.value(a, jl).clone(),
                (None, Some(b)) => right.value(b, jr).clone(),
                (None, None) => Value::Null,
            })
            .collect();
        out.columns
            .push(Column::new(&left.columns[jl].name, values));
    }
    for jl in (0..left.ncols()).filter(|j| !lk.contains(j)) {
        out.columns.push(side(left, jl, |p| p.0));
    }
    for jr in (0..right.ncols()).filter(|j| !rk.contains(j)) {
        out.columns.push(side(right, jr, |p| p.1));
    }
    for c in &mut out.columns {
        widen_ints(&mut c.values);
    }
    Ok(out)
}

/// The row pairs of [`outer_merge`], in output order.
fn merge_pairs(
    left: &Table,
    lk: &[usize],
    right: &Table,
    rk: &[usize],
    keys: &[String],
) -> Result<Pairs> {
    let mut lo: Vec<usize> = (0..left.nrows()).collect();
    lo.sort_by(|&a, &b| key_cmp(left, lk, a, left, lk, b));
    let mut ro: Vec<usize> = (0..right.nrows()).collect();
    ro.sort_by(|&a, &b| key_cmp(right, rk, a, right, rk, b));

    let mut pairs: Pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < lo.len() || j < ro.len() {
        let ord = if i == lo.len() {
            Ordering::Greater
        } else if j == ro.len() {
            Ordering::Less
        } else {
            key_cmp(left, lk, lo[i], right, rk, ro[j])
        };
        let mut ie = i;
        if ord != Ordering::Greater {
            ie = i + 1;
            while ie < lo.len() && key_cmp(left, lk, lo[i], left, lk, lo[ie]) == Ordering::Equal {
                ie += 1;
            }
        }
        let mut je = j;
        if ord != Ordering::Less {
            je = j + 1;
            while je < ro.len() && key_cmp(right, rk, ro[j], right, rk, ro[je]) == Ordering::Equal {
                je += 1;
            }
        }
        match ord {
            Ordering::Less => pairs.extend(lo[i..ie].iter().map(|&a| (Some(a), None))),
            Ordering::Greater => pairs.extend(ro[j..je].iter().map(|&b| (None, Some(b)))),
            Ordering::Equal => {
                if pairs.len() + (ie - i) * (je - j) > MAX_JOIN_ROWS {
                    return fail(format!(
                        "joining on {keys:?} would produce more than {MAX_JOIN_ROWS} rows"
                    ));
                }
                for &a in &lo[i..ie] {
                    pairs.extend(ro[j..je].iter().map(|&b| (Some(a), Some(b))));
                }
            }
        }
        i = ie;
        j = je;
    }
    Ok(pairs)
}

/// `re.match(r".*__.*_diff|.*__.*_pct", col)`: a diff or percentage column.
static DIFF_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:.*__.*_diff|.*__.*_pct)").expect("valid regex"));
/// `re.search(r"__(.+?)_(diff|pct)$", col)`, capturing the variant tag.
pub(super) static DIFF_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"__(.+?)_(?:diff|pct)$").expect("valid regex"));

/// `<tag>::<column>`: a report's column in a joined table.
pub(super) fn tagged(tag: &str, column: &str) -> String {
    format!("{tag}{TAG_SEPARATOR}{column}")
}

/// The reference's `build_df_dff`: prefix, outer-join, diff
/// and percentage columns, then keys, diff columns, the rest.
pub(super) fn build_diff(
    tables: Vec<Table>,
    tags: &[&str],
    sheet: &str,
    keys: &[String],
    diff: &[&str],
) -> Result<Table> {
    let mut prefixed = Vec::with_capacity(tables.len());
    for (mut t, tag) in tables.into_iter().zip(tags) {
        key_indices(&t, keys, &format!("sheet {sheet:?} of report {tag:?}"))?;
        for c in t.columns.iter_mut() {
            if !keys.contains(&c.name) {
                c.name = tagged(tag, &c.name);
            }
        }
        prefixed.push(t);
    }
    let mut it = prefixed.into_iter();
    let Some(first) = it.next() else {
        return fail("nothing to compare");
    };
    let mut merged = first;
    for (t, tag) in it.zip(&tags[1..]) {
        merged = outer_merge(
            &merged,
            &t,
            keys,
            &format!("sheet {sheet:?} of report {tag:?}"),
        )?;
    }
    let base = tags[0];
    let missing = |tag: &str, d: &str| {
        CompareError(format!(
            "sheet {sheet:?} of report {tag:?} has no column {d:?}"
        ))
    };
    for d in diff {
        let b = merged
            .column_index(&tagged(base, d))
            .ok_or_else(|| missing(base, d))?;
        for tag in &tags[1..] {
            let v = merged
                .column_index(&tagged(tag, d))
                .ok_or_else(|| missing(tag, d))?;
            let base_col = &merged.columns[b].values;
            let mut dcol: Vec<Value> = merged.columns[v]
                .values
                .iter()
                .zip(base_col)
                .map(|(v, b)| sub(v, b))
                .collect();
            widen_ints(&mut dcol);
            let pcol: Vec<Value> = dcol.iter().zip(base_col).map(|(d, b)| pct(d, b)).collect();
            let stem = format!("{d}{DIFF_SEPARATOR}{tag}");
            merged.push_column(Column::new(&format!("{stem}{DIFF_SUFFIX}"), dcol));
            merged.push_column(Column::new(&format!("{stem}{PCT_SUFFIX}"), pcol));
        }
    }
    let key_idx = key_indices(&merged, keys, "the joined table")?;
    let diff_idx: Vec<usize> = (0..merged.ncols())
        .filter(|j| !key_idx.contains(j) && DIFF_NAME.is_match(&merged.columns[*j].name))
        .collect();
    let rest: Vec<usize> = (0..merged.ncols())
        .filter(|j| !key_idx.contains(j) && !diff_idx.contains(j))
        .collect();
    let order: Vec<usize> = key_idx.into_iter().chain(diff_idx).chain(rest).collect();
    merged.select_columns(&order);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::commands::compare::tests::{input, sheet, t};
    use crate::analysis::commands::compare::{SheetGroup, compare};

    fn f(x: f64) -> Value {
        Value::Float(x)
    }

    #[test]
    fn merge_sorts_keys_pairs_duplicates_and_widens_ints() {
        let a = sheet(
            "ops_summary",
            &["name", "total_direct_kernel_time_ms", "Count"],
            vec![
                vec![t("b"), f(2.0), Value::Int(4)],
                vec![t("a"), f(1.0), Value::Int(2)],
                vec![Value::Null, f(0.5), Value::Int(1)],
            ],
        );
        let b = sheet(
            "ops_summary",
            &["name", "total_direct_kernel_time_ms", "Count"],
            vec![
                vec![t("a"), f(1.5), Value::Int(2)],
                vec![t("c"), f(3.0), Value::Int(1)],
                vec![Value::Null, f(0.25), Value::Int(1)],
            ],
        );
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::OpsSummary],
        )
        .unwrap();
        let s = &out.sheets[0];
        assert_eq!(
            s.column_names(),
            vec![
                "name",
                "total_direct_kernel_time_ms__y_diff",
                "total_direct_kernel_time_ms__y_pct",
                "Count__y_diff",
                "Count__y_pct",
                "x::total_direct_kernel_time_ms",
                "x::Count",
                "y::total_direct_kernel_time_ms",
                "y::Count",
            ]
        );
        // Sorted by x's time descending, missing last: b, a, (null), c.
        assert_eq!(*s.value(0, 0), t("b"));
        assert_eq!(*s.value(1, 0), t("a"));
        assert_eq!(*s.value(2, 0), Value::Null);
        assert_eq!(*s.value(3, 0), t("c"));
        // a: 1.5 - 1.0 = 0.5, 50%; counts became floats (c and b missing).
        assert_eq!(
            s.row(1).to_vec()[1..],
            [
                f(0.5),
                f(50.0),
                f(0.0),
                f(0.0),
                f(1.0),
                f(2.0),
                f(1.5),
                f(2.0),
            ]
        );
        // The null keys matched each other: 0.25 - 0.5.
        assert_eq!(*s.value(2, 1), f(-0.25));
        assert_eq!(*s.value(3, 1), Value::Null);
    }

    #[test]
    fn int_diffs_stay_int_and_zero_base_gives_empty_pct() {
        let a = sheet(
            "gpu_timeline",
            &["type", "time ms"],
            vec![
                vec![t("busy_time"), Value::Int(0)],
                vec![t("idle"), Value::Int(4)],
            ],
        );
        let b = sheet(
            "gpu_timeline",
            &["type", "time ms"],
            vec![
                vec![t("busy_time"), Value::Int(3)],
                vec![t("idle"), Value::Int(5)],
            ],
        );
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::GpuTimeline],
        )
        .unwrap();
        let s = &out.sheets[0];
        assert_eq!(s.row(0).to_vec()[1..3], [Value::Int(3), Value::Null]);
        assert_eq!(s.row(1).to_vec()[1..3], [Value::Int(1), f(25.0)]);
    }

    #[test]
    fn many_to_many_join_is_a_cross_product() {
        let k = |n: &str, x: f64| vec![t(n), f(x), f(x), Value::Int(1)];
        let cols = &[
            "Kernel name",
            "Kernel duration (µs)_sum",
            "Kernel duration (µs)_mean",
            "Kernel duration (µs)_count",
        ];
        let a = sheet("kernel_summary", cols, vec![k("k", 1.0), k("k", 2.0)]);
        let b = sheet("kernel_summary", cols, vec![k("k", 10.0), k("k", 20.0)]);
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::KernelSummary],
        )
        .unwrap();
        let diffs: Vec<Value> = out.sheets[0].columns[1].values.clone();
        // x=2 pairs first (sorted by x's sum, descending), each with y=10, 20.
        assert_eq!(diffs, vec![f(8.0), f(18.0), f(9.0), f(19.0)]);
    }
}
