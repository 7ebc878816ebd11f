//! The JSON writer: a document's [`Record`] as pretty-printed JSON (the
//! compare verdict, `docs/compare-json.md`).

use std::path::PathBuf;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::{Document, Record, Rendered, WriteError, Writer};

/// Writes a document's record as JSON to `path`.
#[derive(Debug, Clone)]
pub struct Json {
    /// Target file (`-`: standard output, printed by the caller).
    pub path: PathBuf,
}

impl Writer for Json {
    /// One file when the document has a record, none otherwise.
    fn render(&self, doc: &Document) -> Result<Vec<Rendered>, WriteError> {
        Ok(doc
            .record
            .iter()
            .map(|r| Rendered {
                name: self.path.clone(),
                bytes: record_text(r).into_bytes(),
            })
            .collect())
    }
}

/// `record` as pretty-printed JSON (two-space indent, no final newline);
/// non-finite floats become `null`.
pub fn record_text(record: &Record) -> String {
    serde_json::to_string_pretty(record).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Record::Null => s.serialize_unit(),
            Record::Bool(b) => s.serialize_bool(*b),
            Record::Int(i) => s.serialize_i64(*i),
            Record::UInt(u) => s.serialize_u64(*u),
            // serde_json writes non-finite floats as null.
            Record::Float(x) => s.serialize_f64(*x),
            Record::Str(t) => s.serialize_str(t),
            Record::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Record::Map(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_ordered_and_nulls() {
        let r = Record::Map(vec![
            ("z".into(), Record::Int(-1)),
            ("a".into(), Record::Float(50.0)),
            ("nan".into(), Record::Float(f64::NAN)),
            (
                "list".into(),
                Record::List(vec![Record::Bool(true), Record::Null, Record::UInt(7)]),
            ),
            ("empty".into(), Record::List(vec![])),
            ("s".into(), Record::Str("a\"b".into())),
        ]);
        assert_eq!(
            record_text(&r),
            "{\n  \"z\": -1,\n  \"a\": 50.0,\n  \"nan\": null,\n  \"list\": [\n    true,\n    null,\n    7\n  ],\n  \"empty\": [],\n  \"s\": \"a\\\"b\"\n}"
        );
    }
}
