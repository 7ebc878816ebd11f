//! The names TraceDiff compares: a normalised form of each
//! event's name, interned so that comparisons are integer comparisons.

use std::sync::LazyLock;

use regex::Regex;
use rustc_hash::FxHashMap;

/// A normalised name, interned in a [`NameTable`] shared by both traces.
pub type NameId = u32;

static HEX: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"0x[0-9a-fA-F]+").expect("valid"));
static PY_LINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\.py\(\d+\):").expect("valid"));
// Python's `$` also matches before a final newline, which these keep.
static TRAILING_DETAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r":\s+\S+(\n?)\z").expect("valid"));
static PY_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A.*/([^/]+\.py)(\n?)\z").expect("valid"));

static COUNTS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\(\d+\)").expect("valid"));

/// A name with every `(<digits>)` removed (the reference's LCA label).
pub fn strip_counts(name: &str) -> String {
    COUNTS.replace_all(name, "").into_owned()
}

/// The name TraceDiff matches on: every hex literal becomes `0xXXXX`,
/// `.py(<line>):` becomes `.py:`; with `strip_details` a trailing
/// `: <detail>` and any directory before a `.py` file are dropped too; the
/// driver-level launch calls of both vendors read as one name.
pub fn normalize(name: &str, strip_details: bool) -> String {
    let mut s = if name.contains("0x") {
        HEX.replace_all(name, "0xXXXX").into_owned()
    } else {
        name.to_string()
    };
    if s.contains(".py(") {
        s = PY_LINE.replace_all(&s, ".py:").into_owned();
    }
    if strip_details {
        s = TRAILING_DETAIL.replace(&s, "$1").into_owned();
        s = PY_PATH.replace(&s, "$1$2").into_owned();
    }
    match s.as_str() {
        "hipModuleLaunchKernel" | "cuLaunchKernel" => "__kernel_launch__".to_string(),
        _ => s,
    }
}

/// Interned normalised names of both traces.
#[derive(Debug, Default)]
pub struct NameTable {
    ids: FxHashMap<String, NameId>,
}

impl NameTable {
    /// The id of the normalised name `s`.
    pub fn intern(&mut self, s: String) -> NameId {
        let next = self.ids.len() as NameId;
        *self.ids.entry(s).or_insert(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_follows_the_reference() {
        assert_eq!(normalize("a 0x7f3A b 0x1", false), "a 0xXXXX b 0xXXXX");
        assert_eq!(normalize("x/y.py(12): f", false), "x/y.py: f");
        assert_eq!(normalize("x/y.py(12): f", true), "y.py");
        assert_eq!(normalize("cuLaunchKernel", false), "__kernel_launch__");
        assert_eq!(
            normalize("hipModuleLaunchKernel", true),
            "__kernel_launch__"
        );
        assert_eq!(normalize("hipLaunchKernel", false), "hipLaunchKernel");
        // Only a trailing `: detail` goes; a path without `.py` stays.
        assert_eq!(normalize("a: b c", true), "a: b c");
        assert_eq!(normalize("a:  bc", true), "a");
        assert_eq!(normalize("dir/f.txt", true), "dir/f.txt");
        // Python's `$` before a final newline.
        assert_eq!(normalize("f: x\n", true), "f\n");
    }

    #[test]
    fn interning_is_stable() {
        let mut t = NameTable::default();
        let a = t.intern("a".into());
        let b = t.intern("b".into());
        assert_ne!(a, b);
        assert_eq!(t.intern("a".into()), a);
    }
}
