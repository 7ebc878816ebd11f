//! The cpu-op ↔ kernel maps: per trace, which kernels each op
//! launched; and across both, op names paired under the same LCA renamed
//! to a common name.

use std::collections::{BTreeMap, BTreeSet};

use indexmap::IndexMap;

use super::push_unique;
use super::side::Which;
use crate::names::diff::col;
use crate::table::{Table, Value};

/// Kernel names per cpu_op name, keys and lists sorted.
pub type OpKernels = BTreeMap<String, BTreeSet<String>>;

/// The kernels and modules of one side of a renamed op.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideMap {
    /// Distinct kernel names, sorted.
    pub kernels: BTreeSet<String>,
    /// Distinct nn.Module parents, sorted.
    pub nn_module_parents: BTreeSet<String>,
}

/// `cpu_op_map.json`: renamed op → the side(s) that ran it.
pub type CommonMap = IndexMap<String, BTreeMap<Which, SideMap>>;

fn text(v: &Value) -> String {
    v.py_str()
}

/// The summary rows of one side as op → kernels (before renaming).
pub fn op_kernels(summary: &Table, which: Which) -> OpKernels {
    let mut out = OpKernels::new();
    let (Some(src), Some(op), Some(name)) = (
        summary.column(col::SOURCE),
        summary.column(col::CPU_OP_NAME),
        summary.column(col::NAME),
    ) else {
        return out;
    };
    for k in 0..summary.nrows() {
        if src.values[k].as_str() == Some(which.label()) {
            out.entry(text(&op.values[k]))
                .or_default()
                .insert(text(&name.values[k]));
        }
    }
    out
}

/// The common name of two op names paired under one LCA, if any.
fn common_name(n1: &str, n2: &str, modules: &IndexMap<String, Vec<String>>) -> Option<String> {
    let c1 = n1.rsplit("::").next().unwrap_or(n1);
    let c2 = n2.rsplit("::").next().unwrap_or(n2);
    if c1 == c2 || c2.contains(c1) {
        return Some(c1.to_string());
    }
    if c1.contains(c2) {
        return Some(c2.to_string());
    }
    let head = |s: &str| s.chars().take(20).collect::<String>();
    if head(c1) == head(c2) {
        return Some(format!("{c1}/{c2}"));
    }
    match (
        modules.get(n1).map(Vec::as_slice),
        modules.get(n2).map(Vec::as_slice),
    ) {
        (Some([m1]), Some([m2])) if m1 == m2 => Some(m1.replace(' ', "")),
        _ => None,
    }
}

/// The renames: for each LCA with rows of both sides, its op names paired
/// (positionally when equally many, else greedily) and mapped to a common
/// name. `stats` is the detailed table.
pub fn rename_map(stats: &Table) -> IndexMap<String, String> {
    let mut renames = IndexMap::new();
    let Some(rows) = LcaRows::of(stats) else {
        return renames;
    };
    let mut visited: Vec<String> = Vec::new();
    for sides in rows.by_lca.values() {
        let (Some(l1), Some(l2)) = (sides.get("trace1"), sides.get("trace2")) else {
            continue;
        };
        if l1.iter().chain(l2).all(|o| visited.contains(o)) {
            continue;
        }
        visited.extend(l1.iter().cloned());
        visited.extend(l2.iter().cloned());
        if l1.len() == l2.len() {
            pair_positionally(l1, l2, &rows.modules, &mut renames);
        } else {
            pair_greedily(l1, l2, &rows.modules, &mut renames);
        }
    }
    renames
}

/// The detailed table's rows as the renaming reads them.
struct LcaRows {
    /// LCA (first-seen) -> side -> op names (first-seen).
    by_lca: IndexMap<String, BTreeMap<String, Vec<String>>>,
    /// Op -> its module parents, the variant's rows winning over the
    /// baseline's.
    modules: IndexMap<String, Vec<String>>,
}

impl LcaRows {
    /// The rows of `stats`; `None` when a column the renaming reads is
    /// missing.
    fn of(stats: &Table) -> Option<LcaRows> {
        let (Some(lca), Some(src), Some(op), Some(module)) = (
            stats.column(col::LCA_ID),
            stats.column(col::SOURCE),
            stats.column(col::CPU_OP_NAME),
            stats.column(col::NN_MODULE_PARENT),
        ) else {
            return None;
        };
        let mut by_lca: IndexMap<String, BTreeMap<String, Vec<String>>> = IndexMap::new();
        // Op -> side -> module parents.
        let mut per_side: IndexMap<String, BTreeMap<String, Vec<String>>> = IndexMap::new();
        for k in 0..stats.nrows() {
            let s = text(&src.values[k]);
            let o = text(&op.values[k]);
            per_side
                .entry(o.clone())
                .or_default()
                .entry(s.clone())
                .and_modify(|v| push_unique(v, text(&module.values[k])))
                .or_insert_with(|| vec![text(&module.values[k])]);
            // Rows without an LCA match no LCA (NaN is unequal to itself).
            if lca.values[k].is_missing() {
                continue;
            }
            let names = by_lca
                .entry(text(&lca.values[k]))
                .or_default()
                .entry(s)
                .or_default();
            push_unique(names, o);
        }
        let modules = per_side
            .into_iter()
            .map(|(o, sides)| (o, sides.into_values().next_back().unwrap_or_default()))
            .collect();
        Some(LcaRows { by_lca, modules })
    }
}

/// Renames the `k`-th op of one side with the `k`-th of the other, when
/// the two differ and have a common name.
fn pair_positionally(
    l1: &[String],
    l2: &[String],
    modules: &IndexMap<String, Vec<String>>,
    renames: &mut IndexMap<String, String>,
) {
    for (n1, n2) in l1.iter().zip(l2) {
        if n1 != n2
            && let Some(c) = common_name(n1, n2, modules)
        {
            renames.insert(n2.clone(), c.clone());
            renames.insert(n1.clone(), c);
        }
    }
}

/// Sets aside the op names both sides share, then renames each remaining
/// baseline op with the first remaining variant op it has a common name
/// with, each variant op used once.
fn pair_greedily(
    l1: &[String],
    l2: &[String],
    modules: &IndexMap<String, Vec<String>>,
    renames: &mut IndexMap<String, String>,
) {
    let mut left1 = l1.to_vec();
    let mut left2 = l2.to_vec();
    for n1 in l1 {
        if let Some(p) = left2.iter().position(|n2| n2 == n1) {
            left2.remove(p);
            let q = left1.iter().position(|x| x == n1).expect("present");
            left1.remove(q);
        }
    }
    for n1 in left1 {
        let hit = left2
            .iter()
            .enumerate()
            .find_map(|(p, n2)| common_name(&n1, n2, modules).map(|c| (p, c)));
        if let Some((p, c)) = hit {
            let n2 = left2.remove(p);
            renames.insert(n1, c.clone());
            renames.insert(n2, c);
        }
    }
}

/// `cpu_op_map.json` from the renamed summary: op (first-seen) → per side,
/// its distinct kernels and module parents, sorted.
pub fn common_map(summary: &Table) -> CommonMap {
    let mut out = CommonMap::new();
    let (Some(op), Some(name), Some(module)) = (
        summary.column(col::CPU_OP_NAME),
        summary.column(col::NAME),
        summary.column(col::NN_MODULE_PARENT),
    ) else {
        return out;
    };
    let src = summary.column(col::SOURCE);
    for k in 0..summary.nrows() {
        let which = match src.and_then(|s| s.values[k].as_str()) {
            Some("trace2") => Which::Variant,
            _ => Which::Base,
        };
        let entry = out
            .entry(text(&op.values[k]))
            .or_default()
            .entry(which)
            .or_default();
        entry.kernels.insert(text(&name.values[k]));
        entry.nn_module_parents.insert(text(&module.values[k]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_names_follow_the_reference_rules() {
        let none = IndexMap::new();
        // The part after the last `::`, equal or contained.
        assert_eq!(
            common_name("aten::mm", "other::mm", &none).as_deref(),
            Some("mm")
        );
        assert_eq!(
            common_name("aten::addmm", "aten::mm", &none).as_deref(),
            Some("mm")
        );
        assert_eq!(
            common_name("aten::mm", "aten::addmm", &none).as_deref(),
            Some("mm")
        );
        // Same first 20 characters.
        assert_eq!(
            common_name(
                "aten::_scaled_dot_product_flash",
                "aten::_scaled_dot_product_efficient",
                &none
            )
            .as_deref(),
            Some("_scaled_dot_product_flash/_scaled_dot_product_efficient")
        );
        // One shared module parent, spaces removed.
        let mut modules = IndexMap::new();
        modules.insert(
            "aten::miopen_convolution".to_string(),
            vec!["nn.Module: Conv 0".to_string()],
        );
        modules.insert(
            "aten::cudnn_convolution".to_string(),
            vec!["nn.Module: Conv 0".to_string()],
        );
        assert_eq!(
            common_name(
                "aten::miopen_convolution",
                "aten::cudnn_convolution",
                &modules
            )
            .as_deref(),
            Some("nn.Module:Conv0")
        );
        assert_eq!(common_name("aten::relu", "aten::gelu", &none), None);
    }
}
