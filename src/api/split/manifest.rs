//! The split's manifest: `execution_details.json` (Python's
//! `json.dump(indent=2)` layout) and `execution_details.csv` (pandas'
//! `to_csv(float_format="%.2f")`: a duration column holding any float is
//! written with two decimals throughout).

use std::path::PathBuf;

use super::index::Num;
use super::steady::PhaseSummary;
use crate::pyfmt::float_repr;
use crate::trace::annotation::StepCounts;

/// The JSON manifest's name.
pub const JSON_NAME: &str = "execution_details.json";
/// The CSV manifest's name.
pub const CSV_NAME: &str = "execution_details.csv";

/// One trace written.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The root's index (single iterations), else 0.
    pub idx: usize,
    /// The file: the output folder as given joined with its name.
    pub output_path: PathBuf,
    /// Events in it.
    pub event_count: usize,
    /// GPU events in it.
    pub num_gpu_events: usize,
    /// Σ over roots of (last GPU end − first GPU start), µs.
    pub gpu_duration: Num,
    /// Σ of the GPU events' durations, µs.
    pub gpu_busy_duration: Num,
    /// Each step's counts.
    pub steps: Vec<StepCounts>,
    /// The window's phase summary.
    pub phase: PhaseSummary,
}

/// A number as Python's `json` writes it.
fn num(n: Num) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => float_repr(f),
    }
}

/// A string as Python's `json` writes it (non-ASCII as `\u` escapes).
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `execution_details.json`.
pub fn json(entries: &[Entry]) -> String {
    let mut out = String::from("[");
    for (n, e) in entries.iter().enumerate() {
        out.push_str(if n == 0 { "\n" } else { ",\n" });
        let path = e.output_path.to_string_lossy();
        out.push_str(&format!(
            "  {{\n    \"idx\": {},\n    \"output_path\": {},\n    \"event_count\": {},\n    \
             \"num_gpu_events\": {},\n    \"gpu_duration\": {},\n    \"gpu_busy_duration\": {},\n    \
             \"steps\": ",
            e.idx,
            string(&path),
            e.event_count,
            e.num_gpu_events,
            num(e.gpu_duration),
            num(e.gpu_busy_duration)
        ));
        if e.steps.is_empty() {
            out.push_str("[]");
        } else {
            out.push('[');
            for (k, s) in e.steps.iter().enumerate() {
                out.push_str(if k == 0 { "\n" } else { ",\n" });
                out.push_str(&format!(
                    "      {{\n        \"batch_size\": {},\n        \"num_requests\": {},\n        \
                     \"context_requests\": {},\n        \"context_sum\": {},\n        \
                     \"generation_requests\": {},\n        \"generation_sum\": {}\n      }}",
                    s.batch_size,
                    s.num_requests(),
                    s.context_requests,
                    s.context_sum,
                    s.generation_requests,
                    s.generation_sum
                ));
            }
            out.push_str("\n    ]");
        }
        let p = &e.phase;
        out.push_str(&format!(
            ",\n    \"phase\": {{\n      \"num_prefill\": {},\n      \"num_prefilldecode\": {},\n      \
             \"num_decode\": {},\n      \"avg_bs\": {},\n      \"avg_conc\": {}\n    }}\n  }}",
            p.num_prefill, p.num_prefilldecode, p.num_decode, p.avg_bs, p.avg_conc
        ));
    }
    out.push_str(if entries.is_empty() { "]" } else { "\n]" });
    out
}

/// A duration column's cells: integers, or every cell with two decimals
/// when any is a float (the column is then a float column).
fn duration_cells(values: impl Iterator<Item = Num> + Clone) -> Vec<String> {
    let float = values.clone().any(|v| matches!(v, Num::Float(_)));
    values
        .map(|v| match (v, float) {
            (Num::Int(i), false) => i.to_string(),
            (v, _) => format!("{:.2}", v.f64()),
        })
        .collect()
}

/// `execution_details.csv`.
pub fn csv(entries: &[Entry]) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let header = [
        "idx",
        "output_path",
        "event_count",
        "num_gpu_events",
        "gpu_duration",
        "gpu_busy_duration",
        "phase_num_prefill",
        "phase_num_prefilldecode",
        "phase_num_decode",
        "phase_avg_bs",
        "phase_avg_conc",
        "num_steps",
    ];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    let span = duration_cells(entries.iter().map(|e| e.gpu_duration));
    let busy = duration_cells(entries.iter().map(|e| e.gpu_busy_duration));
    for (i, e) in entries.iter().enumerate() {
        let p = &e.phase;
        rows.push(vec![
            e.idx.to_string(),
            e.output_path.to_string_lossy().into_owned(),
            e.event_count.to_string(),
            e.num_gpu_events.to_string(),
            span[i].clone(),
            busy[i].clone(),
            p.num_prefill.to_string(),
            p.num_prefilldecode.to_string(),
            p.num_decode.to_string(),
            p.avg_bs.to_string(),
            p.avg_conc.to_string(),
            e.steps.len().to_string(),
        ]);
    }
    for r in rows {
        w.write_record(&r).expect("writing to memory cannot fail");
    }
    String::from_utf8(w.into_inner().expect("writing to memory cannot fail"))
        .expect("cells are UTF-8 text")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_duration_columns_are_written_as_python_and_pandas_write_them() {
        assert_eq!(string("a\"é\n\u{1F600}"), r#""a\"\u00e9\n\ud83d\ude00""#);
        let cells = duration_cells([Num::Int(0), Num::Float(560.0)].into_iter());
        assert_eq!(cells, ["0.00", "560.00"]);
        let cells = duration_cells([Num::Int(0), Num::Int(7)].into_iter());
        assert_eq!(cells, ["0", "7"]);
    }
}
