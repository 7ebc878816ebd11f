//! The order in which Python iterates a `set` of integers. The reference
//! collects an iteration's correlation ids, and the batch sizes it sees, in
//! sets and writes events (and numbers steps) in the sets' order, so the
//! same order is worked out here: CPython's open-addressing table (size 8,
//! grown to the next power of two above 4x the entries — 2x past 50,000 —
//! when three fifths full; ten linear probes, then perturbed jumps).

/// Slots probed one after another before jumping.
const LINEAR_PROBES: usize = 9;
/// How far the perturbation shifts on each jump.
const PERTURB_SHIFT: u32 = 5;
/// A new set's table size.
const MIN_SIZE: usize = 8;

/// Python's `hash()` of an integer: its value modulo 2^61 − 1 with the
/// sign kept, −1 becoming −2; as the unsigned word the table uses.
pub(super) fn int_hash(v: i128) -> u64 {
    const MODULUS: u128 = (1 << 61) - 1;
    let h = (v.unsigned_abs() % MODULUS) as i64;
    let h = if v < 0 { -h } else { h };
    (if h == -1 { -2 } else { h }) as u64
}

/// The distinct `keys` (each with its hash) in the order a set built by
/// adding them one by one iterates them.
pub(super) fn set_order<K: PartialEq>(keys: impl IntoIterator<Item = (K, u64)>) -> Vec<K> {
    let mut table: Vec<Option<(K, u64)>> = (0..MIN_SIZE).map(|_| None).collect();
    let mut used = 0usize;
    for (key, hash) in keys {
        if insert(&mut table, key, hash) {
            used += 1;
            let mask = table.len() - 1;
            if used * 5 >= mask * 3 {
                let min_used = if used > 50_000 { used * 2 } else { used * 4 };
                table = resized(table, min_used);
            }
        }
    }
    table.into_iter().flatten().map(|(k, _)| k).collect()
}

/// Adds `key` unless an equal key is there; whether it was added.
fn insert<K: PartialEq>(table: &mut [Option<(K, u64)>], key: K, hash: u64) -> bool {
    let mask = table.len() - 1;
    let mut i = (hash as usize) & mask;
    let mut perturb = hash as usize;
    loop {
        let probes = if i + LINEAR_PROBES <= mask {
            LINEAR_PROBES
        } else {
            0
        };
        for slot in &mut table[i..=i + probes] {
            match slot {
                None => {
                    *slot = Some((key, hash));
                    return true;
                }
                Some((k, h)) if *h == hash && *k == key => return false,
                Some(_) => {}
            }
        }
        perturb >>= PERTURB_SHIFT;
        i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb)) & mask;
    }
}

/// The table grown to the smallest power of two above `min_used`, the
/// entries re-placed in their old table order.
fn resized<K: PartialEq>(old: Vec<Option<(K, u64)>>, min_used: usize) -> Vec<Option<(K, u64)>> {
    let mut size = MIN_SIZE;
    while size <= min_used {
        size <<= 1;
    }
    let mut table: Vec<Option<(K, u64)>> = (0..size).map(|_| None).collect();
    for (key, hash) in old.into_iter().flatten() {
        insert(&mut table, key, hash);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(keys: &[i128]) -> Vec<i128> {
        set_order(keys.iter().map(|&k| (k, int_hash(k))))
    }

    /// Expected orders printed by CPython 3.11 (`list(set(keys))`, keys
    /// added in the order shown).
    #[test]
    fn integer_sets_iterate_as_cpython_iterates_them() {
        assert_eq!(order(&[3, 1, 2]), vec![1, 2, 3]);
        assert_eq!(order(&[9, 1, 17]), vec![9, 1, 17]);
        let ids: Vec<i128> = (100..140).collect();
        assert_eq!(
            order(&ids),
            [
                128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 100, 101, 102, 103,
                104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119,
                120, 121, 122, 123, 124, 125, 126, 127
            ]
        );
        assert_eq!(order(&[32, 20, 44, 20, 14]), vec![32, 20, 44, 14]);
        assert_eq!(order(&[-1, -2, 0, 7, 15]), vec![0, 7, 15, -2, -1]);
        assert_eq!(order(&[8, 16, 24, 32, 40, 48]), vec![32, 8, 40, 16, 48, 24]);
        // 300 scattered ids: the table is resized three times.
        let ids: Vec<i128> = (0..300).map(|i| (i * 7919 * 7919) % 1_000_003).collect();
        let got = order(&ids);
        assert_eq!(got.len(), 300);
        assert_eq!(
            got[..12],
            [
                0, 354305, 708610, 299525, 653830, 244745, 599050, 189965, 544270, 135185, 489490,
                80405
            ]
        );
        assert_eq!(got[294..], [518645, 872950, 463865, 818170, 409085, 763390]);
    }
}
