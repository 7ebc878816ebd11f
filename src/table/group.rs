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
//! Either way each group lists its rows in table order. The op sheets'
//! variant, [`group_first_seen_text`], keys by the cells' text and shows
//! each group's first present key cells.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use indexmap::IndexMap;
use indexmap::map::Entry;
use rustc_hash::FxBuildHasher;

use super::{Key, Value, cmp_rows};

/// One group: its key and its member rows (indices, in table order).
pub type Group<K> = (K, Vec<usize>);

/// Groups rows by key in order of first appearance; `keys` yields one key
/// per row, row 0 first. Each group keeps the first row's key.
pub fn group_first_seen<K: Hash + Eq>(keys: impl IntoIterator<Item = K>) -> Vec<Group<K>> {
    let mut groups: IndexMap<K, Vec<usize>, FxBuildHasher> = IndexMap::default();
    for (i, k) in keys.into_iter().enumerate() {
        groups.entry(k).or_default().push(i);
    }
    groups.into_iter().collect()
}

/// The table rows of each distinct identity (`ids`, one per table row),
/// identities in first-seen order, rows ascending: sheets whose key rows are
/// a pure function of a cheap identity build each distinct key row once,
/// group those ([`group_first_seen_text`], [`group_first_seen_values`]) and
/// take the table rows back with [`expand_groups`].
pub fn rows_by_identity<I: Hash + Eq>(ids: impl IntoIterator<Item = I>) -> Vec<Vec<usize>> {
    group_first_seen(ids)
        .into_iter()
        .map(|(_, rows)| rows)
        .collect()
}

/// Groups of table rows from `groups` of distinct identities (indexes into
/// `by_id`, see [`rows_by_identity`]): each keeps its key, its rows are its
/// identities' rows, ascending.
pub fn expand_groups<K>(groups: Vec<Group<K>>, mut by_id: Vec<Vec<usize>>) -> Vec<Group<K>> {
    groups
        .into_iter()
        .map(|(key, distinct)| {
            let rows = if let [d] = distinct[..] {
                std::mem::take(&mut by_id[d])
            } else {
                let mut all: Vec<usize> = distinct
                    .iter()
                    .flat_map(|&d| by_id[d].iter().copied())
                    .collect();
                all.sort_unstable();
                all
            };
            (key, rows)
        })
        .collect()
}

/// [`group_first_seen_text`] for key rows that are a pure function of a
/// cheap identity (`ids`, one per table row): `cells` renders the key row
/// of each distinct identity once, given its first table row.
pub fn group_first_seen_text_by<I: Hash + Eq>(
    ids: impl IntoIterator<Item = I>,
    mut cells: impl FnMut(usize) -> Vec<Value>,
) -> Vec<Group<Vec<Value>>> {
    let by_id = rows_by_identity(ids);
    let keys: Vec<Vec<Value>> = by_id.iter().map(|rows| cells(rows[0])).collect();
    expand_groups(group_first_seen_text(keys), by_id)
}

/// Groups rows by key in ascending key order; `keys` yields one key row per
/// table row, row 0 first. With `drop_missing`, rows whose key holds a
/// missing value are left out. Each group keeps its first row's key.
pub fn group_sorted(
    keys: impl IntoIterator<Item = Vec<Value>>,
    drop_missing: bool,
) -> Vec<Group<Vec<Value>>> {
    let keyed = keys.into_iter().enumerate().map(|(i, k)| {
        let keep = !drop_missing || !k.iter().any(Value::is_missing);
        keep.then_some((i, k))
    });
    group_sorted_by(keyed.flatten(), |a, b| cmp_rows(a, b))
}

/// Groups `(row, key)` pairs in ascending order of `cmp` (the one sorted
/// grouping: [`group_sorted`] is it with pandas' key order; a sheet keyed
/// by plain text passes `Ord::cmp`). Rows may be left out; each group keeps
/// its first row's key and lists its rows in table order.
pub fn group_sorted_by<K>(
    keyed: impl IntoIterator<Item = (usize, K)>,
    cmp: impl Fn(&K, &K) -> Ordering,
) -> Vec<Group<K>> {
    let mut keyed: Vec<(usize, K)> = keyed.into_iter().collect();
    // Stable: equal keys keep table order.
    keyed.sort_by(|a, b| cmp(&a.1, &b.1));
    let mut out: Vec<Group<K>> = Vec::new();
    for (i, k) in keyed {
        match out.last_mut() {
            Some((lk, idx)) if cmp(lk, &k).is_eq() => idx.push(i),
            _ => out.push((k, vec![i])),
        }
    }
    out
}

/// `groupby(keys, sort=False)` over key cells compared as their Python
/// `str()` (so a missing cell and the text `None` are one key), as the op
/// sheets group. Each group shows, per key column, its first present cell
/// (pandas `first`), or `Null` when it has none.
pub fn group_first_seen_text(keys: impl IntoIterator<Item = Vec<Value>>) -> Vec<Group<Vec<Value>>> {
    // Rows repeat their keys a lot (an op per layer and step): group
    // identical key rows first, then render each distinct row's text once.
    // Identical cells have the same text, so each text group is a union of
    // identical groups; their cells are constant, so visiting them in
    // first-seen order finds the same first present cells as visiting rows.
    let identical = group_first_seen(keys.into_iter().map(Identical));
    // Text key -> (shown cells, the row lists of its identical groups).
    type Parts = (Vec<Value>, Vec<Vec<usize>>);
    let mut groups: IndexMap<Vec<String>, Parts, FxBuildHasher> = IndexMap::default();
    for (Identical(cells), rows) in identical {
        let text: Vec<String> = cells.iter().map(Value::py_str).collect();
        match groups.entry(text) {
            Entry::Occupied(mut e) => {
                let (shown, parts) = e.get_mut();
                for (slot, cell) in shown.iter_mut().zip(cells) {
                    if slot.is_missing() && !cell.is_missing() {
                        *slot = cell;
                    }
                }
                parts.push(rows);
            }
            Entry::Vacant(e) => {
                e.insert((cells, vec![rows]));
            }
        }
    }
    groups
        .into_values()
        .map(|(cells, mut parts)| {
            let rows = if parts.len() == 1 {
                parts.pop().unwrap_or_default()
            } else {
                let mut all: Vec<usize> = parts.concat();
                all.sort_unstable();
                all
            };
            (cells, rows)
        })
        .collect()
}

/// A key row compared by identical cells ([`Value`]'s `==`), hashed to
/// agree: finer than text equality, so it can pre-group rows for it.
struct Identical(Vec<Value>);

impl PartialEq for Identical {
    fn eq(&self, other: &Identical) -> bool {
        self.0 == other.0
    }
}

impl Eq for Identical {}

impl Hash for Identical {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.len().hash(state);
        for v in &self.0 {
            match v {
                Value::Null => 0u8.hash(state),
                Value::Int(i) => (1u8, i).hash(state),
                // Every NaN is identical to every NaN: one hash for all.
                Value::Float(x) if x.is_nan() => 2u8.hash(state),
                Value::Float(x) => (3u8, x.to_bits()).hash(state),
                Value::Bool(b) => (4u8, b).hash(state),
                Value::Text(t) => (5u8, t).hash(state),
                Value::Py(t) => (6u8, t).hash(state),
            }
        }
    }
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

    /// Grouping by identity first gives the groups of the full key rows:
    /// identities 1 and 3 render to the same text (Int 2 and text "2") and
    /// join, with rows interleaved; identity 2 stays apart.
    #[test]
    fn identity_groups_equal_key_row_groups() {
        let ids = [1, 2, 1, 3, 2, 3, 1];
        let cells = |id: i32| match id {
            1 => vec![t("a"), Value::Int(2)],
            2 => vec![t("b"), Value::Null],
            _ => vec![t("a"), t("2")],
        };
        let full = group_first_seen_text(ids.iter().map(|&i| cells(i)));
        let by = group_first_seen_text_by(ids, |row| cells(ids[row]));
        assert_eq!(by, full);
        assert_eq!(by[0].1, [0, 2, 3, 5, 6]);
        let by_id = rows_by_identity(ids);
        assert_eq!(by_id, [vec![0, 2, 6], vec![1, 4], vec![3, 5]]);
        let values = group_first_seen_values(by_id.iter().map(|r| cells(ids[r[0]])));
        let full = group_first_seen_values(ids.iter().map(|&i| cells(i)));
        assert_eq!(expand_groups(values, by_id), full);
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
    fn first_seen_text_fills_missing_key_cells() {
        let g = group_first_seen_text(vec![
            vec![t("mm"), Value::Null],
            vec![t("add"), t("x")],
            vec![t("mm"), t("None")],
            vec![t("mm"), Value::Null],
        ]);
        assert_eq!(
            g,
            vec![
                // None and "None" are one key; the first present cell shows.
                (vec![t("mm"), t("None")], vec![0, 2, 3]),
                (vec![t("add"), t("x")], vec![1]),
            ]
        );
        assert!(group_first_seen_text(Vec::new()).is_empty());
    }

    #[test]
    fn first_seen_text_floats_by_text() {
        let nan = Value::Float(f64::NAN);
        let other_nan = Value::Float(f64::from_bits(f64::NAN.to_bits() | 1));
        let g = group_first_seen_text(vec![
            vec![Value::Float(0.0)],
            vec![nan],
            vec![Value::Float(-0.0)],
            vec![other_nan],
            vec![Value::Float(0.0)],
        ]);
        let members: Vec<Vec<usize>> = g.into_iter().map(|(_, r)| r).collect();
        // 0.0 and -0.0 print differently; every NaN prints `nan`.
        assert_eq!(members, [vec![0, 4], vec![1, 3], vec![2]]);
    }

    #[test]
    fn sorted_by_plain_order() {
        let keys = ["b", "a", "b", "c"];
        let g = group_sorted_by(
            keys.into_iter().enumerate().filter(|(i, _)| *i != 3),
            Ord::cmp,
        );
        assert_eq!(g, vec![("a", vec![1]), ("b", vec![0, 2])]);
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
