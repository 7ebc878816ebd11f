//! Grouping rows by key, the two ways pandas does it:
//!
//! - [`group_first_seen`]: `groupby(..., sort=False)` — groups in the order
//!   their key first appears (an `IndexMap`), for any hashable key (texts,
//!   or [`Key`] rows of values);
//! - [`group_sorted`]: `groupby(...)` with its default `sort=True` — groups
//!   in ascending key order ([`Value::key_cmp`]: numbers < text < reprs <
//!   missing), optionally dropping rows whose key has a missing value
//!   (`dropna=True`).
//!
//! Either way each group lists its rows in table order.

use std::hash::Hash;

use indexmap::IndexMap;

use super::{Key, Value, cmp_rows};

/// One group: its key and its member rows (indices, in table order).
pub type Group<K> = (K, Vec<usize>);

/// Groups rows by key in order of first appearance; `keys` yields one key
/// per row, row 0 first. Each group keeps the first row's key.
pub fn group_first_seen<K: Hash + Eq>(keys: impl IntoIterator<Item = K>) -> Vec<Group<K>> {
    let mut groups: IndexMap<K, Vec<usize>> = IndexMap::new();
    for (i, k) in keys.into_iter().enumerate() {
        groups.entry(k).or_default().push(i);
    }
    groups.into_iter().collect()
}

/// Groups rows by key in ascending key order; `keys` yields one key row per
/// table row, row 0 first. With `drop_missing`, rows whose key holds a
/// missing value are left out. Each group keeps its first row's key.
pub fn group_sorted(
    keys: impl IntoIterator<Item = Vec<Value>>,
    drop_missing: bool,
) -> Vec<Group<Vec<Value>>> {
    let mut keyed: Vec<(Vec<Value>, usize)> = keys
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, i))
        .filter(|(k, _)| !drop_missing || !k.iter().any(Value::is_missing))
        .collect();
    // Stable: equal keys keep table order.
    keyed.sort_by(|a, b| cmp_rows(&a.0, &b.0));
    let mut out: Vec<Group<Vec<Value>>> = Vec::new();
    for (k, i) in keyed {
        match out.last_mut() {
            Some((lk, idx)) if cmp_rows(lk, &k).is_eq() => idx.push(i),
            _ => out.push((k, vec![i])),
        }
    }
    out
}

/// Groups rows by a key of values in order of first appearance, with
/// Python's key equality ([`Value::key_eq`]: `2 == 2.0`, missing equals
/// missing).
pub fn group_first_seen_values(
    keys: impl IntoIterator<Item = Vec<Value>>,
) -> Vec<Group<Vec<Value>>> {
    group_first_seen(keys.into_iter().map(Key))
        .into_iter()
        .map(|(k, rows)| (k.0, rows))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    #[test]
    fn first_seen_order() {
        // pd.DataFrame({"k": list("bab")}).groupby("k", sort=False).groups
        let g = group_first_seen(["b", "a", "b", "c", "a"]);
        assert_eq!(
            g,
            vec![("b", vec![0, 2]), ("a", vec![1, 4]), ("c", vec![3])]
        );
        assert!(group_first_seen(Vec::<String>::new()).is_empty());
        // Text keys: "None" and a missing value are the same key once both
        // are rendered with str() (how ops_unique_args keys its groups).
        let g = group_first_seen([Value::Null, t("None")].iter().map(Value::py_str));
        assert_eq!(g, vec![("None".to_string(), vec![0, 1])]);
    }

    #[test]
    fn first_seen_with_value_keys() {
        let g = group_first_seen_values(vec![
            vec![Value::Int(2), t("x")],
            vec![Value::Null, t("x")],
            vec![Value::Float(2.0), t("x")],
            vec![Value::Float(f64::NAN), t("x")],
            vec![Value::Int(2), Value::Py("x".into())],
        ]);
        assert_eq!(
            g,
            vec![
                (vec![Value::Int(2), t("x")], vec![0, 2]),
                (vec![Value::Null, t("x")], vec![1, 3]),
                (vec![Value::Int(2), Value::Py("x".into())], vec![4]),
            ]
        );
    }

    #[test]
    fn sorted_numbers_before_text_nulls_last() {
        // groupby(dropna=False) on an object column: numbers, str, None.
        let keys = [
            t("Unknown"),
            Value::Int(3),
            Value::Null,
            Value::Float(1.5),
            t("Unknown"),
            Value::Float(3.0),
        ];
        let g = group_sorted(keys.iter().map(|k| vec![k.clone()]), false);
        assert_eq!(
            g,
            vec![
                (vec![Value::Float(1.5)], vec![3]),
                // 3 == 3.0: one group, keyed by its first row.
                (vec![Value::Int(3)], vec![1, 5]),
                (vec![t("Unknown")], vec![0, 4]),
                (vec![Value::Null], vec![2]),
            ]
        );
    }

    #[test]
    fn sorted_drops_missing_keys() {
        // groupby(["a", "b"]) with its default dropna=True.
        let keys = vec![
            vec![Value::Int(1), t("x")],
            vec![Value::Int(1), Value::Null],
            vec![Value::Float(f64::NAN), t("x")],
            vec![Value::Int(0), t("y")],
            vec![Value::Int(1), t("x")],
        ];
        let g = group_sorted(keys.clone(), true);
        assert_eq!(
            g,
            vec![
                (vec![Value::Int(0), t("y")], vec![3]),
                (vec![Value::Int(1), t("x")], vec![0, 4]),
            ]
        );
        // Kept, missing keys sort last and group together.
        let g = group_sorted(keys, false);
        let members: Vec<Vec<usize>> = g.into_iter().map(|(_, r)| r).collect();
        assert_eq!(members, [vec![3], vec![0, 4], vec![1], vec![2]]);
    }

    #[test]
    fn sorted_separates_str_from_repr() {
        let keys = [Value::Py("(0, 1)".into()), t("(0, 1)"), t("(0, 1)")];
        let g = group_sorted(keys.iter().map(|k| vec![k.clone()]), false);
        assert_eq!(
            g,
            vec![
                (vec![t("(0, 1)")], vec![1, 2]),
                (vec![Value::Py("(0, 1)".into())], vec![0]),
            ]
        );
        assert!(group_sorted(Vec::new(), true).is_empty());
    }
}
