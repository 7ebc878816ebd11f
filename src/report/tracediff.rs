//! The files of `tracelens diff`: the reference's six TraceDiff outputs,
//! the CSVs as pandas writes them and the JSON maps as Python's
//! `json.dump(indent=2, ensure_ascii=False)` does.

use super::csv::table_to_csv;
use crate::analysis::diff::opmap::{CommonMap, OpKernels, SideMap};
use crate::analysis::diff::{TraceDiff, Which};

/// The reference's output files, in its write order (the CSVs only when
/// they have rows).
pub const FILES: [&str; 6] = [
    "merged_tree_output.txt",
    "diff_stats.csv",
    "diff_stats_unique_args_summary.csv",
    "cpu_op_map_trace1.json",
    "cpu_op_map_trace2.json",
    "cpu_op_map.json",
];

/// Calls `write` with each output file of `d`: its name and contents, one
/// file at a time (each is rendered just before it is handed over, so only
/// one rendered file is in memory at once). The CSVs are left out when
/// they would be empty, as the reference leaves them out. Returns how many
/// files were handed over.
pub fn write_files<E>(
    d: &TraceDiff,
    mut write: impl FnMut(&str, &[u8]) -> Result<(), E>,
) -> Result<usize, E> {
    let mut n = 0;
    for name in FILES {
        let bytes: std::borrow::Cow<[u8]> = match name {
            "merged_tree_output.txt" => d.tree_text.as_bytes().into(),
            "diff_stats.csv" => match &d.stats {
                Some(t) => table_to_csv(t).into_bytes().into(),
                None => continue,
            },
            "diff_stats_unique_args_summary.csv" => match &d.summary {
                Some(t) => table_to_csv(t).into_bytes().into(),
                None => continue,
            },
            "cpu_op_map_trace1.json" => op_kernels_json(&d.op_kernels[0]).into_bytes().into(),
            "cpu_op_map_trace2.json" => op_kernels_json(&d.op_kernels[1]).into_bytes().into(),
            _ => common_json(&d.common, d.identical).into_bytes().into(),
        };
        write(name, &bytes)?;
        n += 1;
    }
    Ok(n)
}

// JSON text as Python's `json.dump(indent=2, ensure_ascii=False)` writes it:
// `": "` after keys, `","` plus a newline between items, empty containers
// as `[]` and `{}`, no trailing newline.

fn string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a string serialises"));
}

fn list<'a>(out: &mut String, items: impl ExactSizeIterator<Item = &'a String>, indent: usize) {
    if items.len() == 0 {
        out.push_str("[]");
        return;
    }
    out.push('[');
    let pad = " ".repeat(indent + 2);
    for (k, s) in items.enumerate() {
        out.push_str(if k == 0 { "\n" } else { ",\n" });
        out.push_str(&pad);
        string(out, s);
    }
    out.push('\n');
    out.push_str(&" ".repeat(indent));
    out.push(']');
}

/// Writes an object of `entries`, each value written by `value` at
/// the given indent.
fn object<K: AsRef<str>, V>(
    out: &mut String,
    entries: impl ExactSizeIterator<Item = (K, V)>,
    indent: usize,
    mut value: impl FnMut(&mut String, V, usize),
) {
    if entries.len() == 0 {
        out.push_str("{}");
        return;
    }
    out.push('{');
    let pad = " ".repeat(indent + 2);
    for (k, (key, v)) in entries.enumerate() {
        out.push_str(if k == 0 { "\n" } else { ",\n" });
        out.push_str(&pad);
        string(out, key.as_ref());
        out.push_str(": ");
        value(out, v, indent + 2);
    }
    out.push('\n');
    out.push_str(&" ".repeat(indent));
    out.push('}');
}

/// `cpu_op_map_trace1.json` / `…trace2.json`.
pub fn op_kernels_json(map: &OpKernels) -> String {
    let mut out = String::new();
    object(&mut out, map.iter(), 0, |o, v, i| list(o, v.iter(), i));
    out
}

fn side_map(out: &mut String, m: &SideMap, indent: usize) {
    let fields = [
        ("kernels", &m.kernels),
        ("nn_module_parents", &m.nn_module_parents),
    ];
    object(out, fields.into_iter(), indent, |o, v, i| {
        list(o, v.iter(), i)
    });
}

/// `cpu_op_map.json`; with `identical`, each op maps straight to the
/// baseline's entry.
pub fn common_json(map: &CommonMap, identical: bool) -> String {
    let mut out = String::new();
    object(&mut out, map.iter(), 0, |o, sides, i| {
        if identical {
            match sides.get(&Which::Base) {
                Some(m) => side_map(o, m, i),
                None => o.push_str("{}"),
            }
        } else {
            object(o, sides.iter().map(|(w, m)| (w.label(), m)), i, side_map);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[&str]) -> std::collections::BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    // Expected texts printed by Python 3's json.dumps(..., indent=2,
    // ensure_ascii=False) on the same data.
    #[test]
    fn json_is_written_as_python_writes_it() {
        let mut m = OpKernels::new();
        m.insert("aten::mm".into(), set(&["k\"1", "é\u{1}\t"]));
        m.insert("z".into(), set(&[]));
        assert_eq!(
            op_kernels_json(&m),
            "{\n  \"aten::mm\": [\n    \"k\\\"1\",\n    \"é\\u0001\\t\"\n  ],\n  \"z\": []\n}"
        );
        assert_eq!(op_kernels_json(&OpKernels::new()), "{}");
        let mut c = CommonMap::new();
        let side = SideMap {
            kernels: set(&["a"]),
            nn_module_parents: set(&["root"]),
        };
        c.entry("op".into()).or_default().insert(Which::Base, side);
        let want = "{\n  \"op\": {\n    \"trace1\": {\n      \"kernels\": [\n        \"a\"\n      ],\n      \"nn_module_parents\": [\n        \"root\"\n      ]\n    }\n  }\n}";
        assert_eq!(common_json(&c, false), want);
        // Identical traces: the op maps straight to the baseline's entry.
        assert_eq!(
            common_json(&c, true),
            "{\n  \"op\": {\n    \"kernels\": [\n      \"a\"\n    ],\n    \"nn_module_parents\": [\n      \"root\"\n    ]\n  }\n}"
        );
    }
}
