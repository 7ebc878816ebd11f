//! The files of `tracelens diff`: the reference's six TraceDiff outputs,
//! the CSVs as pandas writes them and the JSON maps as Python's
//! `json.dump(indent=2, ensure_ascii=False)` does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::csv::table_to_csv;
use super::json::record_text;
use super::staging::Staging;
use super::{Document, Record, Rendered, WriteError, Writer};
use crate::analysis::commands::diff::opmap::{CommonMap, OpKernels, SideMap};
use crate::analysis::commands::diff::{TraceDiff, Which};

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

/// Writes a document's tree diff as the reference's files in `dir`.
#[derive(Debug, Clone)]
pub struct TraceDiffFiles {
    /// The folder the files go to.
    pub dir: PathBuf,
}

impl Writer for TraceDiffFiles {
    /// The files of [`write_files`], none without a tree diff.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        let mut files = Vec::new();
        if let Some(d) = doc.trace_diff {
            write_files::<WriteError>(d, |name, bytes| {
                files.push(Rendered {
                    name: self.dir.join(name),
                    bytes: bytes.to_vec(),
                });
                Ok(())
            })?;
        }
        Ok(files)
    }

    /// Stages the files one at a time, each rendered just before it is
    /// written.
    fn stage_files(
        &self,
        doc: &Document,
        dir: &Path,
        staging: &mut Staging,
    ) -> Result<usize, WriteError> {
        staging.create_dir_all(dir)?;
        match doc.trace_diff {
            Some(d) => write_files(d, |name, bytes| staging.put(&self.dir.join(name), bytes)),
            None => Ok(0),
        }
    }
}

// The JSON maps go through the project's JSON writer ([`record_text`]):
// serde_json's pretty printer spells JSON exactly as Python's
// `json.dump(indent=2, ensure_ascii=False)` does (`": "` after keys, empty
// containers as `[]` and `{}`, no trailing newline).

fn names(set: &BTreeSet<String>) -> Record {
    Record::List(set.iter().map(|s| Record::Str(s.clone())).collect())
}

fn side_record(m: &SideMap) -> Record {
    Record::Map(vec![
        ("kernels".into(), names(&m.kernels)),
        ("nn_module_parents".into(), names(&m.nn_module_parents)),
    ])
}

/// `cpu_op_map_trace1.json` / `…trace2.json`.
pub fn op_kernels_json(map: &OpKernels) -> String {
    record_text(&Record::Map(
        map.iter().map(|(op, k)| (op.clone(), names(k))).collect(),
    ))
}

/// `cpu_op_map.json`; with `identical`, each op maps straight to the
/// baseline's entry.
pub fn common_json(map: &CommonMap, identical: bool) -> String {
    let entry = |sides: &std::collections::BTreeMap<Which, SideMap>| {
        if identical {
            sides
                .get(&Which::Base)
                .map_or(Record::Map(Vec::new()), side_record)
        } else {
            Record::Map(
                sides
                    .iter()
                    .map(|(w, m)| (w.label().to_string(), side_record(m)))
                    .collect(),
            )
        }
    };
    record_text(&Record::Map(
        map.iter()
            .map(|(op, sides)| (op.clone(), entry(sides)))
            .collect(),
    ))
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
