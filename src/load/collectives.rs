//! A lean loader for the collective analysis: from one rank's trace it keeps
//! only the collective kernels (NCCL, RCCL, custom all-reduce) with the few
//! fields the analysis reads, plus `distributedInfo` and the number of
//! `deviceProperties` entries. Everything else is skipped as it streams by,
//! so memory grows with the number of collectives, not with the trace.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use rustc_hash::FxHashMap as HashMap;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use super::scan::{self, ScanError, Sink};
use super::{LoadError, Packing};

/// An argument value as the reference keeps it after `json.load`: numbers,
/// strings and booleans as they are, arrays and objects as Python tuples /
/// dicts.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A JSON integer that fits 64 bits.
    Int(i64),
    /// Any other JSON number.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// A string, printed verbatim (`"[0, 1]"` stays `[0, 1]`).
    Str(String),
    /// An array or object, printed as a Python tuple (`(0, 1)`) or dict.
    Json(Value),
}

impl ArgValue {
    /// The value of a parsed JSON value; `None` for `null`.
    pub fn from_json(v: Value) -> Option<ArgValue> {
        Some(match v {
            Value::Null => return None,
            Value::Bool(b) => ArgValue::Bool(b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => ArgValue::Int(i),
                None => ArgValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => ArgValue::Str(s),
            other => ArgValue::Json(other),
        })
    }

    /// The value behind raw JSON text; `None` for `null` or unparsable text.
    pub fn from_raw(raw: &RawValue) -> Option<ArgValue> {
        serde_json::from_str::<Value>(raw.get())
            .ok()
            .and_then(ArgValue::from_json)
    }

    /// Python's `str()` of the value (lists as tuples, strings unquoted).
    pub fn py_str(&self) -> String {
        match self {
            ArgValue::Int(i) => i.to_string(),
            ArgValue::Float(x) => crate::pyfmt::float_repr(*x),
            ArgValue::Bool(true) => "True".into(),
            ArgValue::Bool(false) => "False".into(),
            ArgValue::Str(s) => s.clone(),
            ArgValue::Json(v) => crate::pyfmt::json_to_py(v, true),
        }
    }
}

/// The collective metadata PyTorch writes into a collective kernel's `args`
/// (each `None` when absent or `null`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectiveArgs {
    /// `Process Group Name`, e.g. `"0"`.
    pub pg_name: Option<ArgValue>,
    /// `Process Group Ranks`, usually a string such as `"[0, 1]"`.
    pub pg_ranks: Option<ArgValue>,
    /// `Collective name`, e.g. `allreduce`, `_allgather_base`.
    pub coll_name: Option<ArgValue>,
    /// `Group size`.
    pub group_size: Option<ArgValue>,
    /// `dtype`, e.g. `Float`, `BFloat16`.
    pub dtype: Option<ArgValue>,
    /// `In msg nelems`.
    pub in_nelems: Option<ArgValue>,
    /// `Out msg nelems`.
    pub out_nelems: Option<ArgValue>,
    /// `In split size` (`"[]"` except for all_to_allv).
    pub in_split: Option<ArgValue>,
    /// `Out split size`.
    pub out_split: Option<ArgValue>,
}

/// The `args` keys of [`CollectiveArgs`], in the order of
/// [`CollectiveArgs::from_raw`]'s input.
pub const COLLECTIVE_ARG_KEYS: [&str; 9] = [
    "Process Group Name",
    "Process Group Ranks",
    "Collective name",
    "Group size",
    "dtype",
    "In msg nelems",
    "Out msg nelems",
    "In split size",
    "Out split size",
];

impl CollectiveArgs {
    /// Builds the record from the raw values of [`COLLECTIVE_ARG_KEYS`], in
    /// that order.
    pub fn from_raw(raw: [Option<&RawValue>; 9]) -> CollectiveArgs {
        let [a, b, c, d, e, f, g, h, i] = raw.map(|r| r.and_then(ArgValue::from_raw));
        CollectiveArgs {
            pg_name: a,
            pg_ranks: b,
            coll_name: c,
            group_size: d,
            dtype: e,
            in_nelems: f,
            out_nelems: g,
            in_split: h,
            out_split: i,
        }
    }

    /// True when the kernel carries none of the keys.
    pub fn is_empty(&self) -> bool {
        *self == CollectiveArgs::default()
    }
}

/// A timestamp or duration as written: integers stay integers, as in the
/// reference's DataFrames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A JSON integer.
    Int(i64),
    /// A JSON float.
    Float(f64),
}

impl Num {
    /// The value as a float.
    pub fn f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }
}

/// One collective kernel of a rank.
#[derive(Debug, Clone)]
pub struct CollectiveEvent {
    /// Index of the kernel name in [`RankCollectives::names`].
    pub name: u32,
    /// Start, µs.
    pub ts: Num,
    /// Duration, µs.
    pub dur: Num,
    /// `args.stream`.
    pub stream: Option<ArgValue>,
    /// The collective metadata.
    pub args: CollectiveArgs,
}

/// What the collective analysis needs of one rank's trace.
#[derive(Debug, Clone, Default)]
pub struct RankCollectives {
    /// Collective kernels in file order.
    pub events: Vec<CollectiveEvent>,
    /// Distinct kernel names, referenced by [`CollectiveEvent::name`].
    pub names: Vec<String>,
    /// `distributedInfo.rank`, when the trace has it.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`, when the trace has it.
    pub world_size: Option<i64>,
    /// Number of entries of the top-level `deviceProperties` list (0 when absent).
    pub device_count: usize,
    /// Non-fatal problems noticed while loading.
    pub warnings: Vec<String>,
    /// Uncompressed size of the JSON document in bytes.
    pub json_bytes: u64,
}

impl RankCollectives {
    /// The kernel name of `ev`.
    pub fn name(&self, ev: &CollectiveEvent) -> &str {
        self.names.get(ev.name as usize).map_or("", |s| s.as_str())
    }

    /// Adds a collective kernel, interning its name.
    pub fn push(&mut self, name: &str, ev: CollectiveEvent, index: &mut HashMap<String, u32>) {
        let id = match index.get(name) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.names.push(name.to_string());
                index.insert(name.to_string(), id);
                id
            }
        };
        self.events.push(CollectiveEvent { name: id, ..ev });
    }
}

/// True when a kernel name is a collective's (A1): it contains `nccl`,
/// `rccl` or `cross_device_reduce`, in any case.
pub fn is_collective_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("nccl") || lower.contains("rccl") || lower.contains("cross_device_reduce")
}

/// Why a rank's trace could not be used.
#[derive(Debug)]
pub enum RankLoadError {
    /// Valid JSON, but not a profiler trace (no `traceEvents`): a file to skip.
    NotATrace(String),
    /// A trace that cannot be read.
    Invalid(LoadError),
}

impl fmt::Display for RankLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RankLoadError::NotATrace(m) => f.write_str(m),
            RankLoadError::Invalid(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RankLoadError {}

#[derive(Deserialize)]
struct LeanArgs<'a> {
    #[serde(borrow, default)]
    correlation: Option<&'a RawValue>,
    #[serde(rename = "External id", borrow, default)]
    external_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    stream: Option<&'a RawValue>,
    #[serde(rename = "Process Group Name", borrow, default)]
    pg_name: Option<&'a RawValue>,
    #[serde(rename = "Process Group Ranks", borrow, default)]
    pg_ranks: Option<&'a RawValue>,
    #[serde(rename = "Collective name", borrow, default)]
    coll_name: Option<&'a RawValue>,
    #[serde(rename = "Group size", borrow, default)]
    group_size: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dtype: Option<&'a RawValue>,
    #[serde(rename = "In msg nelems", borrow, default)]
    in_nelems: Option<&'a RawValue>,
    #[serde(rename = "Out msg nelems", borrow, default)]
    out_nelems: Option<&'a RawValue>,
    #[serde(rename = "In split size", borrow, default)]
    in_split: Option<&'a RawValue>,
    #[serde(rename = "Out split size", borrow, default)]
    out_split: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct LeanEvent<'a> {
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<LeanArgs<'a>>,
}

#[derive(Deserialize)]
struct DistributedInfo {
    #[serde(default)]
    rank: Option<Value>,
    #[serde(default)]
    world_size: Option<Value>,
}

/// A JSON number's text as a [`Num`]; `None` for anything else.
fn parse_num(raw: &RawValue) -> Option<Num> {
    let t = raw.get();
    if !t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return None;
    }
    if !t.contains(['.', 'e', 'E'])
        && let Ok(i) = t.parse::<i64>()
    {
        return Some(Num::Int(i));
    }
    t.parse::<f64>().ok().map(Num::Float)
}

fn int_of(v: &Option<Value>) -> Option<i64> {
    match v {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|x| x.fract() == 0.0).map(|x| x as i64)),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Collects the collective kernels while the splitter walks the document.
#[derive(Default)]
struct CollSink {
    out: RankCollectives,
    index: HashMap<String, u32>,
    without_ts: usize,
    without_dur: usize,
}

impl Sink for CollSink {
    fn event(&mut self, index: usize, json: &[u8]) -> Result<(), String> {
        // Most events are not kernels: their category is read from the raw
        // bytes and they are never parsed.
        if let Some(cat) = super::pytorch::quick_cat(json)
            && cat != b"kernel"
        {
            return Ok(());
        }
        let ev: LeanEvent = serde_json::from_slice(json)
            .map_err(|e| format!("event #{index} of traceEvents: {}", strip_position(&e)))?;
        if ev.cat.as_deref() != Some("kernel") {
            return Ok(());
        }
        let name = ev.name.as_deref().unwrap_or("");
        if !is_collective_name(name) {
            return Ok(());
        }
        let Some(args) = ev.args else {
            return Ok(());
        };
        // Unlinked kernels (no correlation, no External id) are left out (A1).
        if args.correlation.is_none() && args.external_id.is_none() {
            return Ok(());
        }
        let ts = match ev.ts {
            None => {
                self.without_ts += 1;
                return Ok(());
            }
            Some(raw) => parse_num(raw).ok_or_else(|| {
                format!("event #{index} of traceEvents ({name}): \"ts\" is not a number")
            })?,
        };
        let dur = match ev.dur {
            None => {
                self.without_dur += 1;
                Num::Int(0)
            }
            Some(raw) => parse_num(raw).ok_or_else(|| {
                format!("event #{index} of traceEvents ({name}): \"dur\" is not a number")
            })?,
        };
        if dur.f64() < 0.0 {
            return Err(format!(
                "event #{index} of traceEvents ({name}) has a negative duration"
            ));
        }
        let coll = CollectiveArgs::from_raw([
            args.pg_name,
            args.pg_ranks,
            args.coll_name,
            args.group_size,
            args.dtype,
            args.in_nelems,
            args.out_nelems,
            args.in_split,
            args.out_split,
        ]);
        let stream = args.stream.and_then(ArgValue::from_raw);
        self.out.push(
            name,
            CollectiveEvent {
                name: 0,
                ts,
                dur,
                stream,
                args: coll,
            },
            &mut self.index,
        );
        Ok(())
    }

    fn other(&mut self, key: &str, json: &[u8]) -> Result<(), String> {
        match key {
            "distributedInfo" => {
                // A malformed distributedInfo only costs the rank hint.
                if let Ok(d) = serde_json::from_slice::<DistributedInfo>(json) {
                    self.out.rank = int_of(&d.rank);
                    self.out.world_size = int_of(&d.world_size);
                }
            }
            "deviceProperties" => {
                if let Ok(v) = serde_json::from_slice::<Vec<IgnoredAny>>(json) {
                    self.out.device_count = v.len();
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn strip_position(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

/// Counts bytes as they pass.
struct Counted<R> {
    inner: R,
    bytes: u64,
}

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Loads the collective kernels of one rank's trace (`.json`, `.json.gz` or
/// `.zip`, detected by content).
pub fn load_collectives(path: &Path) -> Result<RankCollectives, RankLoadError> {
    let (reader, packing) = super::open(path).map_err(RankLoadError::Invalid)?;
    let mut counted = Counted {
        inner: reader,
        bytes: 0,
    };
    let mut sink = CollSink::default();
    let outline = scan::split(&mut counted, &mut sink).map_err(|e| {
        RankLoadError::Invalid(match e {
            ScanError::Io(io) => {
                let what = match packing {
                    Packing::Gzip => "truncated or corrupt gzip data",
                    Packing::Zip => "cannot read the zip member",
                    Packing::Plain => "read error",
                };
                LoadError(format!("{what}: {io}"))
            }
            ScanError::Syntax(m) => LoadError(m),
            ScanError::Callback(m) => LoadError(format!("invalid trace: {m}")),
        })
    })?;
    if !outline.has_trace_events {
        return Err(RankLoadError::NotATrace(
            "not a trace: the JSON object has no \"traceEvents\" array".into(),
        ));
    }
    let mut out = sink.out;
    out.json_bytes = counted.bytes;
    if sink.without_ts > 0 {
        out.warnings.push(format!(
            "{} collective kernel(s) without \"ts\" were left out",
            sink.without_ts
        ));
    }
    if sink.without_dur > 0 {
        out.warnings.push(format!(
            "{} collective kernel(s) without \"dur\" were counted as zero-length",
            sink.without_dur
        ));
    }
    out.events.shrink_to_fit();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_str(doc: &str) -> Result<RankCollectives, RankLoadError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        std::fs::write(&p, doc).unwrap();
        load_collectives(&p)
    }

    #[test]
    fn keeps_only_linked_collective_kernels() {
        let doc = r#"{"distributedInfo": {"rank": 3, "world_size": 8},
          "deviceProperties": [{}, {}],
          "traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic", "ts": 10, "dur": 5,
             "args": {"correlation": 1, "stream": 7, "Collective name": "allreduce",
                      "Process Group Ranks": [0, 1], "In split size": "[]", "Group size": 2}},
            {"ph": "X", "cat": "kernel", "name": "NCCL_thing", "ts": 11.5, "dur": 1, "args": {"stream": 7}},
            {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 12, "dur": 1, "args": {"correlation": 2}},
            {"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "ts": 12, "dur": 1, "args": {"External id": 2}},
            {"ph": "X", "cat": "kernel", "name": "void vllm::cross_device_reduce_1stage<float>", "ts": 20.25, "dur": 3,
             "args": {"External id": 4, "Collective name": null}}
          ]}"#;
        let r = load_str(doc).unwrap();
        assert_eq!(r.rank, Some(3));
        assert_eq!(r.world_size, Some(8));
        assert_eq!(r.device_count, 2);
        assert_eq!(r.events.len(), 2);
        let e = &r.events[0];
        assert_eq!(r.name(e), "ncclDevKernel_Generic");
        assert_eq!(e.ts, Num::Int(10));
        assert_eq!(e.stream, Some(ArgValue::Int(7)));
        assert_eq!(e.args.coll_name, Some(ArgValue::Str("allreduce".into())));
        assert_eq!(e.args.pg_ranks.as_ref().unwrap().py_str(), "(0, 1)");
        assert_eq!(e.args.in_split.as_ref().unwrap().py_str(), "[]");
        assert_eq!(e.args.group_size, Some(ArgValue::Int(2)));
        let e = &r.events[1];
        assert_eq!(e.ts, Num::Float(20.25));
        assert!(e.args.is_empty(), "null is absent");
    }

    #[test]
    fn not_a_trace_and_bad_numbers() {
        assert!(matches!(
            load_str(r#"{"a": 1}"#),
            Err(RankLoadError::NotATrace(_))
        ));
        assert!(matches!(
            load_str(r#"{"traceEvents": [{"cat": "kernel""#),
            Err(RankLoadError::Invalid(_))
        ));
        let e = load_str(
            r#"{"traceEvents": [{"cat": "kernel", "name": "nccl", "ts": "5", "dur": 1, "args": {"correlation": 1}}]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("\"ts\" is not a number"), "{e}");
        let r = load_str(r#"{"traceEvents": []}"#).unwrap();
        assert!(r.events.is_empty());
    }

    #[test]
    fn names() {
        assert!(is_collective_name("ncclKernel_AllReduce_RING_LL_Sum_float"));
        assert!(is_collective_name("RCCL_x"));
        assert!(is_collective_name(
            "void sglang::Cross_Device_Reduce_2stage"
        ));
        assert!(!is_collective_name("gemm_kernel"));
    }
}
