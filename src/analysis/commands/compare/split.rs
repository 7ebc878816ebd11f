//! The split of a diffed per-shape table into `_intersect_`,
//! `_only_baseline_` and `_only_variant_` tables per variant (the
//! reference's `split_df_diff`).

use super::join::{DIFF_TAG, tagged};
use crate::names::col::TAG_SEPARATOR;
use crate::names::sheet::{INTERSECT, ONLY_BASELINE, ONLY_VARIANT};
use crate::table::Table;

/// The reference's `split_df_diff`: for each variant, the rows
/// on both sides, on the baseline only and on the variant only, each sorted
/// and stripped of the other reports' columns and of all-empty columns.
pub(super) fn split(
    name: &str,
    diff: &Table,
    tags: &[&str],
    presence: &str,
    sort: &str,
) -> Vec<Table> {
    let base = tags[0];
    let present = |tag: &str| -> Vec<bool> {
        match diff.column(&tagged(tag, presence)) {
            Some(c) => c.values.iter().map(|v| !v.is_missing()).collect(),
            None => vec![false; diff.nrows()],
        }
    };
    let in_base = present(base);
    let mut out = Vec::new();
    for tag in &tags[1..] {
        let in_var = present(tag);
        let rows = |want_b: bool, want_v: bool| -> Vec<usize> {
            (0..diff.nrows())
                .filter(|&i| in_base[i] == want_b && in_var[i] == want_v)
                .collect()
        };
        let parts = [
            (INTERSECT, rows(true, true), base, vec![base, *tag]),
            (ONLY_BASELINE, rows(true, false), base, vec![base]),
            (ONLY_VARIANT, rows(false, true), *tag, vec![*tag]),
        ];
        for (kind, idx, sort_tag, kept) in parts {
            let mut t = diff.take_rows(&idx);
            if let Some(j) = t.column_index(&tagged(sort_tag, sort)) {
                t.sort_desc_by(j);
            }
            strip_other_tags(&mut t, &kept);
            t.name = format!("{name}_{kind}_{tag}");
            out.push(t);
        }
    }
    out
}

/// Keeps key columns, columns of the kept tags and diff columns whose tags
/// are all kept; then drops every all-empty column (all of them when there
/// are no rows).
fn strip_other_tags(t: &mut Table, kept: &[&str]) {
    let keep: Vec<usize> = (0..t.ncols())
        .filter(|&j| {
            let name = &t.columns[j].name;
            let is_diff = DIFF_TAG.is_match(name);
            if !name.contains(TAG_SEPARATOR) && !is_diff {
                return true;
            }
            if let Some((tag, _)) = name.split_once(TAG_SEPARATOR) {
                return kept.contains(&tag);
            }
            DIFF_TAG
                .captures_iter(name)
                .all(|c| kept.contains(&c.get(1).map_or("", |m| m.as_str())))
        })
        .filter(|&j| t.columns[j].values.iter().any(|v| !v.is_missing()))
        .collect();
    t.select_columns(&keep);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::commands::compare::tests::{input, sheet, t};
    use crate::analysis::commands::compare::{SheetGroup, compare};
    use crate::table::{Column, Value};

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
                Value::Null,
                Value::Float(x),
                Value::Float(x),
                Value::Int(1),
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
        assert_eq!(i.nrows(), 1);
        assert_eq!(
            i.row(0).get_named("total_direct_kernel_time_sum__y_diff"),
            Some(&Value::Float(2.0))
        );
        // operation_count widened to float by the join, even in the intersect.
        assert_eq!(
            i.row(0).get_named("x::operation_count"),
            Some(&Value::Float(1.0))
        );
        let ob = &out.sheets[1];
        assert!(
            ob.column_names()
                .iter()
                .all(|c| !c.starts_with("y::") && !c.contains("_diff"))
        );
        assert_eq!(ob.nrows(), 1);
        let ov = &out.sheets[2];
        assert!(ov.column_names().iter().all(|c| !c.starts_with("x::")));
        assert_eq!(*ov.value(0, 0), t("c"));
    }

    #[test]
    fn empty_split_has_no_columns() {
        let mut t = Table::from_columns(
            "t",
            vec![Column::new("a", vec![]), Column::new("x::b", vec![])],
        );
        strip_other_tags(&mut t, &["x"]);
        assert_eq!(t.ncols(), 0);
    }
}
