//! The outer join of one table per report on a sheet group's keys and the
//! `<col>__<tag>_diff` / `_pct` columns added to it (the reference's
//! `build_df_dff`).

use std::cmp::Ordering;
use std::sync::LazyLock;

use regex::Regex;

use super::frame::{Frame, cell_cmp, normalize, pct, sub};
use super::{CompareError, Result, fail};
use crate::report::Cell;

/// Most rows a join may produce; a many-to-many join of two large tables
/// on a repeated key could otherwise exhaust memory.
const MAX_JOIN_ROWS: usize = 1_000_000;

/// Compares row `a` of `fa` with row `b` of `fb` on key columns `ka`/`kb`.
fn key_cmp(fa: &Frame, ka: &[usize], a: usize, fb: &Frame, kb: &[usize], b: usize) -> Ordering {
    for (&ja, &jb) in ka.iter().zip(kb) {
        match cell_cmp(&fa.cols[ja][a], &fb.cols[jb][b]) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

/// Indices of `keys` in `f`, or an error naming the first one missing.
fn key_indices(f: &Frame, keys: &[String], what: &str) -> Result<Vec<usize>> {
    keys.iter()
        .map(|k| {
            f.col(k)
                .ok_or_else(|| CompareError(format!("{what} has no column {k:?}")))
        })
        .collect()
}

/// pandas `merge(left, right, on=keys, how="outer")` followed by moving the
/// keys first: rows sorted by key (missing keys last, and equal to each
/// other), equal keys paired as a cross product (left order, then right
/// order), unmatched rows with missing values on the other side. Columns:
/// keys, left's other columns, right's other columns.
fn outer_merge(left: &Frame, right: &Frame, keys: &[String], rwhat: &str) -> Result<Frame> {
    let lk = key_indices(left, keys, "the joined table")?;
    let rk = key_indices(right, keys, rwhat)?;
    let mut lo: Vec<usize> = (0..left.nrows).collect();
    lo.sort_by(|&a, &b| key_cmp(left, &lk, a, left, &lk, b));
    let mut ro: Vec<usize> = (0..right.nrows).collect();
    ro.sort_by(|&a, &b| key_cmp(right, &rk, a, right, &rk, b));

    let mut pairs: Vec<(Option<usize>, Option<usize>)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < lo.len() || j < ro.len() {
        let ord = if i == lo.len() {
            Ordering::Greater
        } else if j == ro.len() {
            Ordering::Less
        } else {
            key_cmp(left, &lk, lo[i], right, &rk, ro[j])
        };
        let mut ie = i;
        if ord != Ordering::Greater {
            ie = i + 1;
            while ie < lo.len() && key_cmp(left, &lk, lo[i], left, &lk, lo[ie]) == Ordering::Equal {
                ie += 1;
            }
        }
        let mut je = j;
        if ord != Ordering::Less {
            je = j + 1;
            while je < ro.len() && key_cmp(right, &rk, ro[j], right, &rk, ro[je]) == Ordering::Equal
            {
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

    let mut out = Frame {
        nrows: pairs.len(),
        ..Frame::default()
    };
    for (key, (&jl, &jr)) in keys.iter().zip(lk.iter().zip(&rk)) {
        out.names.push(key.clone());
        out.cols.push(
            pairs
                .iter()
                .map(|&(a, b)| match (a, b) {
                    (Some(a), _) => left.cols[jl][a].clone(),
                    (None, Some(b)) => right.cols[jr][b].clone(),
                    (None, None) => Cell::Empty,
                })
                .collect(),
        );
    }
    for (jl, name) in left.names.iter().enumerate() {
        if lk.contains(&jl) {
            continue;
        }
        out.names.push(name.clone());
        out.cols.push(
            pairs
                .iter()
                .map(|&(a, _)| a.map_or(Cell::Empty, |a| left.cols[jl][a].clone()))
                .collect(),
        );
    }
    for (jr, name) in right.names.iter().enumerate() {
        if rk.contains(&jr) {
            continue;
        }
        out.names.push(name.clone());
        out.cols.push(
            pairs
                .iter()
                .map(|&(_, b)| b.map_or(Cell::Empty, |b| right.cols[jr][b].clone()))
                .collect(),
        );
    }
    for col in &mut out.cols {
        normalize(col);
    }
    Ok(out)
}

/// `re.match(r".*__.*_diff|.*__.*_pct", col)`: a diff or percentage column.
static DIFF_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:.*__.*_diff|.*__.*_pct)").expect("valid regex"));
/// `re.search(r"__(.+?)_(diff|pct)$", col)`, capturing the variant tag.
pub(super) static DIFF_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"__(.+?)_(?:diff|pct)$").expect("valid regex"));

/// The reference's `build_df_dff` (spec 04 §B2): prefix, outer-join, diff
/// and percentage columns, then keys, diff columns, the rest.
pub(super) fn build_diff(
    frames: Vec<Frame>,
    tags: &[&str],
    sheet: &str,
    keys: &[String],
    diff: &[&str],
) -> Result<Frame> {
    let mut prefixed = Vec::with_capacity(frames.len());
    for (mut f, tag) in frames.into_iter().zip(tags) {
        key_indices(&f, keys, &format!("sheet {sheet:?} of report {tag:?}"))?;
        for name in f.names.iter_mut() {
            if !keys.contains(name) {
                *name = format!("{tag}::{name}");
            }
        }
        prefixed.push(f);
    }
    let mut it = prefixed.into_iter();
    let Some(first) = it.next() else {
        return fail("nothing to compare");
    };
    let mut merged = first;
    for (f, tag) in it.zip(&tags[1..]) {
        merged = outer_merge(
            &merged,
            &f,
            keys,
            &format!("sheet {sheet:?} of report {tag:?}"),
        )?;
    }
    let base = tags[0];
    for d in diff {
        let b = merged.col(&format!("{base}::{d}")).ok_or_else(|| {
            CompareError(format!(
                "sheet {sheet:?} of report {base:?} has no column {d:?}"
            ))
        })?;
        for tag in &tags[1..] {
            let v = merged.col(&format!("{tag}::{d}")).ok_or_else(|| {
                CompareError(format!(
                    "sheet {sheet:?} of report {tag:?} has no column {d:?}"
                ))
            })?;
            let mut dcol: Vec<Cell> = merged.cols[v]
                .iter()
                .zip(&merged.cols[b])
                .map(|(v, b)| sub(v, b))
                .collect();
            normalize(&mut dcol);
            let pcol: Vec<Cell> = dcol
                .iter()
                .zip(&merged.cols[b])
                .map(|(d, b)| pct(d, b))
                .collect();
            merged.names.push(format!("{d}__{tag}_diff"));
            merged.cols.push(dcol);
            merged.names.push(format!("{d}__{tag}_pct"));
            merged.cols.push(pcol);
        }
    }
    let key_idx = key_indices(&merged, keys, "the joined table")?;
    let diff_idx: Vec<usize> = (0..merged.names.len())
        .filter(|j| !key_idx.contains(j) && DIFF_NAME.is_match(&merged.names[*j]))
        .collect();
    let rest: Vec<usize> = (0..merged.names.len())
        .filter(|j| !key_idx.contains(j) && !diff_idx.contains(j))
        .collect();
    let order: Vec<usize> = key_idx.into_iter().chain(diff_idx).chain(rest).collect();
    merged.select_cols(&order);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::tests::{input, sheet, t};
    use crate::analysis::compare::{SheetGroup, compare};

    #[test]
    fn merge_sorts_keys_pairs_duplicates_and_widens_ints() {
        let a = sheet(
            "ops_summary",
            &["name", "total_direct_kernel_time_ms", "Count"],
            vec![
                vec![t("b"), Cell::Float(2.0), Cell::Int(4)],
                vec![t("a"), Cell::Float(1.0), Cell::Int(2)],
                vec![Cell::Empty, Cell::Float(0.5), Cell::Int(1)],
            ],
        );
        let b = sheet(
            "ops_summary",
            &["name", "total_direct_kernel_time_ms", "Count"],
            vec![
                vec![t("a"), Cell::Float(1.5), Cell::Int(2)],
                vec![t("c"), Cell::Float(3.0), Cell::Int(1)],
                vec![Cell::Empty, Cell::Float(0.25), Cell::Int(1)],
            ],
        );
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::OpsSummary],
        )
        .unwrap();
        let s = &out.sheets[0];
        assert_eq!(
            s.columns,
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
        assert_eq!(s.rows[0][0], t("b"));
        assert_eq!(s.rows[1][0], t("a"));
        assert_eq!(s.rows[2][0], Cell::Empty);
        assert_eq!(s.rows[3][0], t("c"));
        // a: 1.5 - 1.0 = 0.5, 50%; counts became floats (c and b missing).
        assert_eq!(
            s.rows[1][1..],
            [
                Cell::Float(0.5),
                Cell::Float(50.0),
                Cell::Float(0.0),
                Cell::Float(0.0),
                Cell::Float(1.0),
                Cell::Float(2.0),
                Cell::Float(1.5),
                Cell::Float(2.0),
            ]
        );
        // The null keys matched each other: 0.25 - 0.5.
        assert_eq!(s.rows[2][1], Cell::Float(-0.25));
        assert_eq!(s.rows[3][1], Cell::Empty);
    }

    #[test]
    fn int_diffs_stay_int_and_zero_base_gives_empty_pct() {
        let a = sheet(
            "gpu_timeline",
            &["type", "time ms"],
            vec![
                vec![t("busy_time"), Cell::Int(0)],
                vec![t("idle"), Cell::Int(4)],
            ],
        );
        let b = sheet(
            "gpu_timeline",
            &["type", "time ms"],
            vec![
                vec![t("busy_time"), Cell::Int(3)],
                vec![t("idle"), Cell::Int(5)],
            ],
        );
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::GpuTimeline],
        )
        .unwrap();
        let s = &out.sheets[0];
        assert_eq!(s.rows[0][1..3], [Cell::Int(3), Cell::Empty]);
        assert_eq!(s.rows[1][1..3], [Cell::Int(1), Cell::Float(25.0)]);
    }

    #[test]
    fn many_to_many_join_is_a_cross_product() {
        let k = |n: &str, x: f64| vec![t(n), Cell::Float(x), Cell::Float(x), Cell::Int(1)];
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
        let diffs: Vec<Cell> = out.sheets[0].rows.iter().map(|r| r[1].clone()).collect();
        // x=2 pairs first (sorted by x's sum, descending), each with y=10, 20.
        assert_eq!(
            diffs,
            vec![
                Cell::Float(8.0),
                Cell::Float(18.0),
                Cell::Float(9.0),
                Cell::Float(19.0)
            ]
        );
    }
}
