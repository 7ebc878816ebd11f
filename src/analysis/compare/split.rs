//! The split of a diffed per-shape table into `_intersect_`,
//! `_only_baseline_` and `_only_variant_` tables per variant (the
//! reference's `split_df_diff`).

use super::frame::{Frame, is_null};
use super::join::DIFF_TAG;
use crate::report::Sheet;

/// The reference's `split_df_diff` (spec 04 §B4): for each variant, the rows
/// on both sides, on the baseline only and on the variant only, each sorted
/// and stripped of the other reports' columns and of all-empty columns.
pub(super) fn split(
    name: &str,
    diff: &Frame,
    tags: &[&str],
    presence: &str,
    sort: &str,
) -> Vec<Sheet> {
    let base = tags[0];
    let present = |tag: &str| -> Vec<bool> {
        match diff.col(&format!("{tag}::{presence}")) {
            Some(j) => diff.cols[j].iter().map(|c| !is_null(c)).collect(),
            None => vec![false; diff.nrows],
        }
    };
    let in_base = present(base);
    let mut out = Vec::new();
    for tag in &tags[1..] {
        let in_var = present(tag);
        let rows = |want_b: bool, want_v: bool| -> Vec<usize> {
            (0..diff.nrows)
                .filter(|&i| in_base[i] == want_b && in_var[i] == want_v)
                .collect()
        };
        let parts = [
            ("intersect", rows(true, true), base, vec![base, *tag]),
            ("only_baseline", rows(true, false), base, vec![base]),
            ("only_variant", rows(false, true), *tag, vec![*tag]),
        ];
        for (kind, idx, sort_tag, kept) in parts {
            let mut f = diff.take_rows(&idx);
            if let Some(j) = f.col(&format!("{sort_tag}::{sort}")) {
                f = f.sort_desc(j);
            }
            strip_other_tags(&mut f, &kept);
            out.push(f.into_sheet(&format!("{name}_{kind}_{tag}")));
        }
    }
    out
}

/// Keeps key columns, columns of the kept tags and diff columns whose tags
/// are all kept; then drops every all-empty column (all of them when there
/// are no rows).
fn strip_other_tags(f: &mut Frame, kept: &[&str]) {
    let keep: Vec<usize> = (0..f.names.len())
        .filter(|&j| {
            let name = &f.names[j];
            let is_diff = DIFF_TAG.is_match(name);
            if !name.contains("::") && !is_diff {
                return true;
            }
            if let Some((tag, _)) = name.split_once("::") {
                return kept.contains(&tag);
            }
            DIFF_TAG
                .captures_iter(name)
                .all(|c| kept.contains(&c.get(1).map_or("", |m| m.as_str())))
        })
        .filter(|&j| f.cols[j].iter().any(|c| !is_null(c)))
        .collect();
    f.select_cols(&keep);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::tests::{input, sheet, t};
    use crate::analysis::compare::{SheetGroup, compare};
    use crate::report::Cell;

    #[test]
    fn split_strips_tags_and_empty_columns() {
        let cols = &[
            "name",
            "Input type",
            "Input Dims",
            "Input Strides",
            "Concrete Inputs",
            "total_direct_kernel_time_sum",
            "total_direct_kernel_time_mean",
            "operation_count",
        ];
        let row = |n: &str, x: f64| {
            vec![
                t(n),
                t("('float',)"),
                t("((2,),)"),
                t("((1,),)"),
                Cell::Empty,
                Cell::Float(x),
                Cell::Float(x),
                Cell::Int(1),
            ]
        };
        let a = sheet("ops_unique_args", cols, vec![row("a", 1.0), row("b", 2.0)]);
        let b = sheet("ops_unique_args", cols, vec![row("a", 3.0), row("c", 5.0)]);
        let out = compare(
            &[input("x", vec![a]), input("y", vec![b])],
            &[SheetGroup::OpsAll],
        )
        .unwrap();
        let names: Vec<&str> = out.sheets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "ops_unique_args_intersect_y",
                "ops_unique_args_only_baseline_y",
                "ops_unique_args_only_variant_y"
            ]
        );
        let i = &out.sheets[0];
        // Concrete Inputs is empty everywhere: dropped.
        assert!(i.column("Concrete Inputs").is_none());
        assert_eq!(i.rows.len(), 1);
        assert_eq!(
            i.rows[0][i.column("total_direct_kernel_time_sum__y_diff").unwrap()],
            Cell::Float(2.0)
        );
        // operation_count widened to float by the join, even in the intersect.
        assert_eq!(
            i.rows[0][i.column("x::operation_count").unwrap()],
            Cell::Float(1.0)
        );
        let ob = &out.sheets[1];
        assert!(
            ob.columns
                .iter()
                .all(|c| !c.starts_with("y::") && !c.contains("_diff"))
        );
        assert_eq!(ob.rows.len(), 1);
        let ov = &out.sheets[2];
        assert!(ov.columns.iter().all(|c| !c.starts_with("x::")));
        assert_eq!(ov.rows[0][0], t("c"));
    }

    #[test]
    fn empty_split_has_no_columns() {
        let mut f = Frame {
            names: vec!["a".into(), "x::b".into()],
            cols: vec![vec![], vec![]],
            nrows: 0,
        };
        strip_other_tags(&mut f, &["x"]);
        assert!(f.names.is_empty());
    }
}
