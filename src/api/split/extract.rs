//! Cutting a window of execution roots out of the trace, as the reference
//! cuts it: for each root, the timed events of its thread that lie inside
//! it (in trace order), then the flow events and the GPU events of the
//! correlation ids they carry (in the order Python iterates the set of
//! ids); the meta events last. Overlapping roots copy events twice, as
//! the reference does.

use std::collections::HashMap;
use std::io::{self, Write};

use super::index::{Key, Num, Root, Thread, Timed, TraceIndex};
use super::pyset;

/// Operators whose first input dimension is the step's batch size.
const BATCH_OPS: [&str; 2] = [
    "vllm::unified_attention_with_output",
    "sgl_kernel::sgl_per_token_group_quant_8bit",
];

/// One window cut out of the trace.
#[derive(Debug)]
pub struct Extracted {
    /// The events, as indices into `traceEvents`, in output order.
    pub events: Vec<u32>,
    /// GPU events among them.
    pub num_gpu_events: usize,
    /// Σ over roots of (last GPU end − first GPU start), µs.
    pub gpu_duration: Num,
    /// Σ of the GPU events' durations (not their union), µs.
    pub gpu_busy: Num,
    /// The distinct batch sizes the batch operators saw, in Python's set
    /// order; None when one is not an integer.
    pub batch_sizes: Option<Vec<i128>>,
}

/// Cuts `roots` out of the indexed trace; `timed` holds the timed events
/// of every root's thread ([`TraceIndex::timed_on`]).
pub fn extract(ix: &TraceIndex, timed: &HashMap<Thread, Vec<Timed>>, roots: &[&Root]) -> Extracted {
    let mut out = Extracted {
        events: Vec::new(),
        num_gpu_events: 0,
        gpu_duration: Num::Int(0),
        gpu_busy: Num::Int(0),
        batch_sizes: None,
    };
    for root in roots {
        let inside = inside(timed.get(&root.thread).map_or(&[], Vec::as_slice), root);
        let ids = python_set(inside.iter().filter_map(|t| t.correlation.clone()));
        out.events.extend(inside.iter().map(|t| t.index));
        for id in &ids {
            if let Some(flows) = ix.flows.get(id) {
                out.events.extend(flows);
            }
        }
        let mut first: Option<Num> = None;
        let mut last: Option<Num> = None;
        for id in &ids {
            for g in ix.gpu.get(id).map_or(&[][..], Vec::as_slice) {
                out.events.push(g.index);
                let end = g.ts.add(g.dur);
                // Python's min and max keep the first of equal values.
                if first.is_none_or(|f| g.ts.f64() < f.f64()) {
                    first = Some(g.ts);
                }
                if last.is_none_or(|l| end.f64() > l.f64()) {
                    last = Some(end);
                }
                out.gpu_busy = out.gpu_busy.add(g.dur);
                out.num_gpu_events += 1;
            }
        }
        if let (Some(f), Some(l)) = (first, last) {
            out.gpu_duration = out.gpu_duration.add(l.sub(f));
        }
    }
    out.events.extend(&ix.meta);
    out.batch_sizes = batch_sizes(ix, &out.events);
    out
}

/// The timed events of the root's thread inside it (start and end within
/// the root, ends included), in trace order.
fn inside<'t>(thread: &'t [Timed], root: &Root) -> Vec<&'t Timed> {
    let (start, end) = (root.ts.f64(), root.end());
    let from = thread.partition_point(|t| t.ts < start);
    let mut hits: Vec<&Timed> = thread[from..]
        .iter()
        .take_while(|t| t.ts <= end)
        .filter(|t| t.end <= end)
        .collect();
    hits.sort_by_key(|t| t.index);
    hits
}

/// The distinct `keys` in the order a Python set of them iterates: worked
/// out for integers; other keys (whose hashes Python salts) keep their
/// first-seen order.
pub fn python_set(keys: impl Iterator<Item = Key>) -> Vec<Key> {
    let keys: Vec<Key> = keys.collect();
    let hashes: Option<Vec<u64>> = keys.iter().map(Key::int_hash).collect();
    match hashes {
        Some(h) => pyset::set_order(keys.into_iter().zip(h)),
        None => {
            let mut seen = Vec::new();
            for k in keys {
                if !seen.contains(&k) {
                    seen.push(k);
                }
            }
            seen
        }
    }
}

/// The first input dimension of every batch operator among `events`, as a
/// Python set of them; None when one is not an integer.
fn batch_sizes(ix: &TraceIndex, events: &[u32]) -> Option<Vec<i128>> {
    let mut seen = Vec::new();
    for &i in events {
        let text = ix.text(i);
        if !BATCH_OPS.iter().any(|op| text.contains(op)) {
            continue;
        }
        let Ok(e) = super::index::Fields::parse(text, i as usize) else {
            continue;
        };
        if !e
            .text("name")
            .is_some_and(|n| BATCH_OPS.iter().any(|op| n.contains(op)))
        {
            continue;
        }
        let Some(dims) = e.arg_text("Input Dims") else {
            continue;
        };
        let Ok(serde_json::Value::Array(dims)) = serde_json::from_str(&dims) else {
            continue;
        };
        if let Some(serde_json::Value::Array(first)) = dims.first()
            && let Some(v) = first.first()
        {
            seen.push(Key::of(&v.to_string())?);
        }
    }
    python_set(seen.into_iter())
        .into_iter()
        .map(|k| match k {
            Key::Int(i) => Some(i),
            _ => None,
        })
        .collect()
}

/// Writes the trace of `events`: the input's top-level object with its
/// other keys kept in place and `traceEvents` holding the events (a bare
/// array of events becomes `{"traceEvents": [...]}`).
pub fn write_trace(ix: &TraceIndex, events: &[u32], out: &mut dyn Write) -> io::Result<()> {
    let write_events = |out: &mut dyn Write| -> io::Result<()> {
        out.write_all(b"[")?;
        for (n, &i) in events.iter().enumerate() {
            if n > 0 {
                out.write_all(b",\n")?;
            }
            out.write_all(ix.text(i).as_bytes())?;
        }
        out.write_all(b"]")
    };
    let top: Vec<(&str, &str)> = ix.doc.top.entries().collect();
    if top.is_empty() {
        out.write_all(b"{\"traceEvents\": ")?;
        write_events(out)?;
        return out.write_all(b"}\n");
    }
    out.write_all(b"{")?;
    for (n, (k, v)) in top.iter().enumerate() {
        if n > 0 {
            out.write_all(b",\n")?;
        }
        serde_json::to_writer(&mut *out, k)?;
        out.write_all(b": ")?;
        if *k == "traceEvents" {
            write_events(out)?;
        } else {
            out.write_all(v.as_bytes())?;
        }
    }
    out.write_all(b"}\n")
}
