//! rocprofv3 JSON (`rocprofiler-sdk-tool`): a streaming decoder.
//!
//! The document is read once, front to back, by serde_json's streaming
//! deserializer; visitors walk `rocprofiler-sdk-tool[0]` and keep, record by
//! record, only what the report reads: the kernel-dispatch and memory-copy
//! records of `buffer_records`, the kernel names of `kernel_symbols`, the
//! memory-copy operation names of `strings`, `metadata.init_time` /
//! `fini_time` and the number of GPU agents. Nothing else is kept, so memory
//! grows with the number of records, not with the size of the document.
//!
//! `kernel_symbols` may come before or after the dispatches: a dispatch
//! keeps its kernel id until the end, when ids become names. The result is
//! the exact records ([`DispatchData`], integer nanoseconds) plus one
//! Kineto-like GPU event per record (microseconds) for the passes that read
//! events.

use std::fmt;
use std::io::{self, BufReader, Read};

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;

use super::Packing;
use super::kineto::Counted;
use super::scan;
use crate::error::LoadError;
use crate::trace::builder::{EventInput, IdentRef, Time};
use crate::trace::dispatch::{DispatchData, KernelDispatch, MemoryCopy};
use crate::trace::{Cat, Needs, Phase, Profiler, Trace, TraceBuilder};

/// The top-level key of a rocprofv3 document.
const TOOL_KEY: &str = "rocprofiler-sdk-tool";

/// Decodes a rocprofv3 JSON document from `reader` (already unpacked).
pub fn decode<R: Read>(reader: R, packing: Packing, needs: &Needs) -> Result<Trace, LoadError> {
    let mut counted = Counted {
        inner: reader,
        bytes: 0,
    };
    let mut st = State::default();
    let max_value = scan::max_value_bytes().map_err(LoadError::Limit)?;
    {
        // serde_json collects each string, key and number in a buffer that
        // grows without bound: cap one token (TRACELENS_MAX_VALUE_MB).
        let limited = scan::TokenLimit::new(&mut counted, max_value);
        // serde_json reads a reader byte by byte: buffer it.
        let input = BufReader::with_capacity(1 << 16, limited);
        let mut de = serde_json::Deserializer::from_reader(input);
        let parsed = Doc(&mut st).deserialize(&mut de).and_then(|()| de.end());
        parsed.map_err(|e| json_error(packing, st.at, e))?;
    }
    st.finish(needs, counted.bytes)
}

/// Where the parser is, for error messages.
#[derive(Debug, Clone, Copy, Default)]
enum Place {
    /// Outside `rocprofiler-sdk-tool[0]`.
    #[default]
    Top,
    /// In `rocprofiler-sdk-tool`, or in one of `[0]`'s keys.
    Tool(&'static str),
    /// In record `.1` of `buffer_records.<.0>`.
    Record(&'static str, usize),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Place::Top => Ok(()),
            Place::Tool("") => write!(f, "{TOOL_KEY}"),
            Place::Tool(key) => write!(f, "{TOOL_KEY}[0].{key}"),
            Place::Record(kind, i) => write!(f, "buffer_records.{kind}[{i}]"),
        }
    }
}

/// A serde_json error as a [`LoadError`]: read failures (a truncated
/// gzip) as such, syntax as syntax, and content errors with the place.
fn json_error(packing: Packing, at: Place, e: serde_json::Error) -> LoadError {
    match e.classify() {
        Category::Io => LoadError::read(packing, io::Error::from(e)),
        Category::Eof => LoadError::Syntax(format!("truncated JSON: {e}")),
        Category::Syntax => LoadError::Syntax(format!("invalid JSON: {e}")),
        Category::Data => LoadError::Invalid(match at {
            Place::Top => e.to_string(),
            at => format!("{at}: {e}"),
        }),
    }
}

/// A memory copy as read, before its name is known.
#[derive(Debug, Clone, Copy)]
struct CopyRecord {
    start_ns: i64,
    end_ns: i64,
    operation: i64,
    agent_id: i64,
    stream: i64,
}

/// What the visitors keep while the document streams by.
#[derive(Debug, Default)]
struct State {
    at: Place,
    /// The document has the `rocprofiler-sdk-tool` key.
    has_tool_key: bool,
    /// Elements of the `rocprofiler-sdk-tool` list.
    tools: usize,
    init_time_ns: Option<i64>,
    fini_time_ns: Option<i64>,
    gpu_agents: usize,
    /// Kernel id -> name, from `kernel_symbols`.
    symbols: FxHashMap<u64, String>,
    /// Names of the memory-copy operations (`strings.buffer_records`).
    copy_ops: Vec<String>,
    /// Kernel id -> dense index held in [`KernelDispatch::name`] until the
    /// names are known.
    dense: FxHashMap<u64, u32>,
    /// Dense index -> kernel id.
    kernel_ids: Vec<u64>,
    kernels: Vec<KernelDispatch>,
    copies: Vec<CopyRecord>,
}

/// `{"handle": n}` (agents, queues, streams).
#[derive(Debug, Default, Deserialize)]
struct Handle {
    #[serde(default)]
    handle: i64,
}

/// Grid or workgroup size; a missing axis is 1, as in the reference.
#[derive(Debug, Deserialize)]
struct Dim3 {
    #[serde(default = "one")]
    x: i64,
    #[serde(default = "one")]
    y: i64,
    #[serde(default = "one")]
    z: i64,
}

fn one() -> i64 {
    1
}

impl Default for Dim3 {
    fn default() -> Self {
        Dim3 { x: 1, y: 1, z: 1 }
    }
}

/// `buffer_records.kernel_dispatch[i]`: the fields read. Times and the
/// kernel id are required; the rest defaults as in the reference.
#[derive(Debug, Deserialize)]
struct RawDispatch {
    start_timestamp: i64,
    end_timestamp: i64,
    dispatch_info: RawDispatchInfo,
    #[serde(default)]
    stream_id: Handle,
    #[serde(default)]
    thread_id: i64,
}

#[derive(Debug, Deserialize)]
struct RawDispatchInfo {
    kernel_id: u64,
    #[serde(default)]
    dispatch_id: i64,
    #[serde(default)]
    agent_id: Handle,
    #[serde(default)]
    grid_size: Dim3,
    #[serde(default)]
    workgroup_size: Dim3,
}

/// `buffer_records.memory_copy[i]`: the fields read.
#[derive(Debug, Deserialize)]
struct RawCopy {
    start_timestamp: i64,
    end_timestamp: i64,
    #[serde(default)]
    operation: i64,
    #[serde(default)]
    dst_agent_id: Handle,
    #[serde(default)]
    stream_id: Handle,
}

/// `kernel_symbols[i]`: the id and the names the reference picks from.
#[derive(Debug, Deserialize)]
struct RawSymbol {
    kernel_id: u64,
    #[serde(default)]
    truncated_kernel_name: Option<String>,
    #[serde(default)]
    formatted_kernel_name: Option<String>,
    #[serde(default)]
    kernel_name: Option<String>,
}

impl RawSymbol {
    /// The first non-empty of the truncated and formatted names, else the
    /// raw name (even empty), else `unknown_kernel_<id>`: the reference's
    /// `a or b or c.get(..., default)`.
    fn name(self) -> String {
        [self.truncated_kernel_name, self.formatted_kernel_name]
            .into_iter()
            .flatten()
            .find(|n| !n.is_empty())
            .or(self.kernel_name)
            .unwrap_or_else(|| unknown_kernel(self.kernel_id))
    }
}

fn unknown_kernel(id: u64) -> String {
    format!("unknown_kernel_{id}")
}

#[derive(Debug, Deserialize)]
struct RawMetadata {
    #[serde(default)]
    init_time: Option<i64>,
    #[serde(default)]
    fini_time: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct RawAgent {
    #[serde(rename = "type", default)]
    kind: i64,
}

/// rocprofiler's agent type of a GPU.
const AGENT_GPU: i64 = 2;

#[derive(Debug, Deserialize)]
struct RawStrings {
    #[serde(default)]
    buffer_records: Vec<RawKindNames>,
}

/// One entry of `strings.buffer_records`: a record kind and the names of
/// its operations, by operation number.
#[derive(Debug, Deserialize)]
struct RawKindNames {
    kind: String,
    #[serde(default)]
    operations: Vec<String>,
}

impl State {
    fn push_kernel(&mut self, r: RawDispatch) -> Result<(), String> {
        check_times(r.start_timestamp, r.end_timestamp)?;
        let info = r.dispatch_info;
        let dense = match self.dense.get(&info.kernel_id) {
            Some(&d) => d,
            None => {
                let d = u32::try_from(self.kernel_ids.len())
                    .map_err(|_| "too many distinct kernel ids".to_string())?;
                self.kernel_ids.push(info.kernel_id);
                self.dense.insert(info.kernel_id, d);
                d
            }
        };
        let (g, b) = (info.grid_size, info.workgroup_size);
        self.kernels.push(KernelDispatch {
            name: dense,
            start_ns: r.start_timestamp,
            end_ns: r.end_timestamp,
            stream: r.stream_id.handle,
            dispatch_id: info.dispatch_id,
            grid: [g.x, g.y, g.z],
            block: [b.x, b.y, b.z],
            agent_id: info.agent_id.handle,
            thread_id: r.thread_id,
        });
        Ok(())
    }

    fn push_copy(&mut self, r: RawCopy) -> Result<(), String> {
        check_times(r.start_timestamp, r.end_timestamp)?;
        self.copies.push(CopyRecord {
            start_ns: r.start_timestamp,
            end_ns: r.end_timestamp,
            operation: r.operation,
            agent_id: r.dst_agent_id.handle,
            stream: r.stream_id.handle,
        });
        Ok(())
    }

    /// The trace: kernel ids become names, records become events.
    fn finish(mut self, needs: &Needs, input_bytes: u64) -> Result<Trace, LoadError> {
        if !self.has_tool_key {
            return Err(LoadError::NotATrace(format!(
                "not a rocprofv3 trace: the JSON object has no \"{TOOL_KEY}\" key"
            )));
        }
        if self.tools == 0 {
            return Err(LoadError::NotATrace(format!(
                "\"{TOOL_KEY}\" is an empty list: no profile to read"
            )));
        }
        let mut builder = TraceBuilder::new(needs);
        if self.tools > 1 {
            builder.warn(format!(
                "only the first of the {} \"{TOOL_KEY}\" entries was read",
                self.tools
            ));
        }
        let names = self.resolve_names(&mut builder);
        // The report runs with these in memory: no spare capacity.
        self.kernels.shrink_to_fit();
        let mut data = DispatchData {
            init_time_ns: self.init_time_ns,
            fini_time_ns: self.fini_time_ns,
            names,
            kernels: std::mem::take(&mut self.kernels),
            copies: Vec::with_capacity(self.copies.len()),
        };
        push_events(&mut builder, &data, &self.copies, &self.copy_ops)?;
        data.copies.extend(self.copies.iter().map(|c| MemoryCopy {
            start_ns: c.start_ns,
            end_ns: c.end_ns,
        }));
        let info = builder.info_mut();
        info.profiler = Profiler::Rocprof;
        info.input_bytes = input_bytes;
        info.device_count = self.gpu_agents;
        builder.set_dispatches(data);
        Ok(builder.finish())
    }

    /// Replaces the dense kernel indices of the dispatches by indices into
    /// the returned list of distinct names (kernel ids sharing a truncated
    /// name share an entry).
    fn resolve_names(&mut self, builder: &mut TraceBuilder) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let mut index: FxHashMap<String, u32> = FxHashMap::default();
        let mut unknown = 0;
        let remap: Vec<u32> = self
            .kernel_ids
            .iter()
            .map(|id| {
                let name = self.symbols.remove(id).unwrap_or_else(|| {
                    unknown += 1;
                    unknown_kernel(*id)
                });
                *index.entry(name).or_insert_with_key(|n| {
                    names.push(n.clone());
                    (names.len() - 1) as u32
                })
            })
            .collect();
        for k in &mut self.kernels {
            k.name = remap[k.name as usize];
        }
        if unknown > 0 {
            builder.warn(format!(
                "{unknown} kernel id(s) of dispatches have no kernel_symbols entry (named unknown_kernel_<id>)"
            ));
        }
        names
    }
}

fn check_times(start: i64, end: i64) -> Result<(), String> {
    if end < start {
        return Err(format!(
            "end_timestamp {end} is before start_timestamp {start}"
        ));
    }
    Ok(())
}

/// One Kineto-like GPU event per record (times in µs), for the passes that
/// read events: kernels on (agent, stream), then copies.
fn push_events(
    builder: &mut TraceBuilder,
    data: &DispatchData,
    copies: &[CopyRecord],
    copy_ops: &[String],
) -> Result<(), LoadError> {
    let mut no_parse = |_: &str| None;
    let us = |ns: i64| Time {
        value: ns as f64 / 1000.0,
        is_int: false,
    };
    let kernels = data.kernels.iter().map(|k| {
        (
            Cat::Kernel,
            data.name(k),
            k.agent_id,
            k.stream,
            k.start_ns,
            k.end_ns,
        )
    });
    let copies = copies.iter().map(|c| {
        let name = usize::try_from(c.operation)
            .ok()
            .and_then(|i| copy_ops.get(i))
            .map_or("MEMORY_COPY", String::as_str);
        (
            Cat::GpuMemcpy,
            name,
            c.agent_id,
            c.stream,
            c.start_ns,
            c.end_ns,
        )
    });
    for (index, (cat, name, agent, stream, start, end)) in kernels.chain(copies).enumerate() {
        let ev = EventInput {
            cat,
            ph: Phase::Complete,
            name: Some(name),
            pid: IdentRef::Int(agent),
            tid: IdentRef::Int(stream),
            ts: Some(us(start)),
            dur: Some(us(end - start)),
            flow_id: None,
            // The stream is the tid; an args record per dispatch would
            // cost memory no pass of this report reads.
            args: None,
        };
        builder
            .push_event(index, ev, &mut no_parse)
            .map_err(LoadError::Invalid)?;
    }
    Ok(())
}

/// Makes a visitor its own seed: `seed!(Type, deserialize_map)` asks the
/// deserializer for the JSON type the visitor walks.
macro_rules! seed {
    ($t:ident, $how:ident) => {
        impl<'de> DeserializeSeed<'de> for $t<'_> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.$how(self)
            }
        }
    };
}

/// The document: an object whose `rocprofiler-sdk-tool` key is read.
struct Doc<'s>(&'s mut State);

seed!(Doc, deserialize_map);

impl<'de> Visitor<'de> for Doc<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(key) = m.next_key::<String>()? {
            if key == TOOL_KEY {
                self.0.has_tool_key = true;
                self.0.at = Place::Tool("");
                m.next_value_seed(Tools(&mut *self.0))?;
                self.0.at = Place::Top;
            } else {
                m.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The `rocprofiler-sdk-tool` list: element 0 is read, the others skipped.
struct Tools<'s>(&'s mut State);

seed!(Tools, deserialize_seq);

impl<'de> Visitor<'de> for Tools<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of profile objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        if s.next_element_seed(Tool(&mut *self.0))?.is_none() {
            return Ok(());
        }
        self.0.tools = 1;
        self.0.at = Place::Tool("");
        while s.next_element::<IgnoredAny>()?.is_some() {
            self.0.tools += 1;
        }
        Ok(())
    }
}

/// `rocprofiler-sdk-tool[0]`.
struct Tool<'s>(&'s mut State);

seed!(Tool, deserialize_map);

impl<'de> Visitor<'de> for Tool<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a profile object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        let st = self.0;
        while let Some(key) = m.next_key::<String>()? {
            match key.as_str() {
                "metadata" => {
                    st.at = Place::Tool("metadata");
                    let md: RawMetadata = m.next_value()?;
                    st.init_time_ns = md.init_time;
                    st.fini_time_ns = md.fini_time;
                }
                "agents" => {
                    st.at = Place::Tool("agents");
                    let agents: Vec<RawAgent> = m.next_value()?;
                    st.gpu_agents = agents.iter().filter(|a| a.kind == AGENT_GPU).count();
                }
                "strings" => {
                    st.at = Place::Tool("strings");
                    let strings: RawStrings = m.next_value()?;
                    if let Some(k) = strings
                        .buffer_records
                        .into_iter()
                        .find(|k| k.kind == "MEMORY_COPY")
                    {
                        st.copy_ops = k.operations;
                    }
                }
                "kernel_symbols" => {
                    st.at = Place::Tool("kernel_symbols");
                    m.next_value_seed(Symbols(&mut *st))?;
                }
                "buffer_records" => {
                    st.at = Place::Tool("buffer_records");
                    m.next_value_seed(Buffers(&mut *st))?;
                }
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
            st.at = Place::Tool("");
        }
        Ok(())
    }
}

/// `kernel_symbols`: id -> name, one symbol at a time.
struct Symbols<'s>(&'s mut State);

seed!(Symbols, deserialize_seq);

impl<'de> Visitor<'de> for Symbols<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of kernel symbols")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        while let Some(sym) = s.next_element::<RawSymbol>()? {
            // A repeated id: the last entry wins, as in a Python dict.
            self.0.symbols.insert(sym.kernel_id, sym.name());
        }
        Ok(())
    }
}

/// `buffer_records`: the kernel-dispatch and memory-copy lists.
struct Buffers<'s>(&'s mut State);

seed!(Buffers, deserialize_map);

impl<'de> Visitor<'de> for Buffers<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of record lists")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(key) = m.next_key::<String>()? {
            match key.as_str() {
                "kernel_dispatch" => m.next_value_seed(Records {
                    st: &mut *self.0,
                    kind: RecordKind::Kernel,
                })?,
                "memory_copy" => m.next_value_seed(Records {
                    st: &mut *self.0,
                    kind: RecordKind::Copy,
                })?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
            self.0.at = Place::Tool("buffer_records");
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
enum RecordKind {
    Kernel,
    Copy,
}

/// A list of records of one kind, each kept as it is read.
struct Records<'s> {
    st: &'s mut State,
    kind: RecordKind,
}

seed!(Records, deserialize_seq);

impl<'de> Visitor<'de> for Records<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of records")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        let st = self.st;
        for i in 0.. {
            let kept = match self.kind {
                RecordKind::Kernel => {
                    st.at = Place::Record("kernel_dispatch", i);
                    match s.next_element::<RawDispatch>()? {
                        None => break,
                        Some(r) => st.push_kernel(r),
                    }
                }
                RecordKind::Copy => {
                    st.at = Place::Record("memory_copy", i);
                    match s.next_element::<RawCopy>()? {
                        None => break,
                        Some(r) => st.push_copy(r),
                    }
                }
            };
            kept.map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_str(doc: &str) -> Result<Trace, LoadError> {
        decode(doc.as_bytes(), Packing::Plain, &Needs::ALL)
    }

    const DOC: &str = r#"{"rocprofiler-sdk-tool": [{
        "metadata": {"pid": 1, "init_time": 1000, "fini_time": 901000},
        "agents": [{"type": 1}, {"type": 2}, {"type": 2}],
        "strings": {"buffer_records": [{"kind": "MEMORY_COPY",
            "operations": ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_DEVICE"]}]},
        "buffer_records": {
          "kernel_dispatch": [
            {"thread_id": 7, "start_timestamp": 2000, "end_timestamp": 2500,
             "dispatch_info": {"agent_id": {"handle": 9}, "kernel_id": 3, "dispatch_id": 1,
               "grid_size": {"x": 64, "y": 2, "z": 1}, "workgroup_size": {"x": 32}},
             "stream_id": {"handle": 4}},
            {"start_timestamp": 3000, "end_timestamp": 3001,
             "dispatch_info": {"kernel_id": 5}},
            {"start_timestamp": 4000, "end_timestamp": 4000,
             "dispatch_info": {"kernel_id": 6}}
          ],
          "memory_copy": [{"start_timestamp": 100, "end_timestamp": 300, "operation": 1,
             "dst_agent_id": {"handle": 9}}],
          "hip_api": []
        },
        "kernel_symbols": [
          {"kernel_id": 3, "kernel_name": "k3.kd", "truncated_kernel_name": "k3"},
          {"kernel_id": 5, "kernel_name": "k5.kd", "truncated_kernel_name": "", "formatted_kernel_name": "k5f"},
          {"kernel_id": 7, "truncated_kernel_name": "k3"}
        ]
    }]}"#;

    #[test]
    fn records_names_and_events() {
        let t = decode_str(DOC).unwrap();
        assert_eq!(t.info().profiler, Profiler::Rocprof);
        assert_eq!(t.info().input_bytes, DOC.len() as u64);
        assert_eq!(t.info().device_count, 2);
        let d = t.dispatches().unwrap();
        assert_eq!((d.init_time_ns, d.fini_time_ns), (Some(1000), Some(901000)));
        let names: Vec<&str> = d.kernels.iter().map(|k| d.name(k)).collect();
        // Symbols come after the dispatches; id 6 has none.
        assert_eq!(names, ["k3", "k5f", "unknown_kernel_6"]);
        assert_eq!(
            d.kernels[0],
            KernelDispatch {
                name: d.kernels[0].name,
                start_ns: 2000,
                end_ns: 2500,
                stream: 4,
                dispatch_id: 1,
                grid: [64, 2, 1],
                block: [32, 1, 1],
                agent_id: 9,
                thread_id: 7,
            }
        );
        // Defaults: grid/block 1, ids 0.
        let k = &d.kernels[1];
        assert_eq!(
            (k.grid, k.block, k.stream, k.agent_id),
            ([1; 3], [1; 3], 0, 0)
        );
        assert_eq!(
            d.copies,
            [MemoryCopy {
                start_ns: 100,
                end_ns: 300
            }]
        );
        assert_eq!(t.len(), 4);
        let (first, copy) = (
            t.event(crate::trace::EventId::new(0)),
            t.event(crate::trace::EventId::new(3)),
        );
        assert_eq!((first.cat, first.ts, first.dur), (Cat::Kernel, 2.0, 0.5));
        assert_eq!(t.name_of(copy), "MEMORY_COPY_HOST_TO_DEVICE");
        assert_eq!((copy.cat, copy.ts, copy.dur), (Cat::GpuMemcpy, 0.1, 0.2));
        assert_eq!(
            t.warnings(),
            [
                "1 kernel id(s) of dispatches have no kernel_symbols entry (named unknown_kernel_<id>)"
            ]
        );
    }

    #[test]
    fn errors_are_one_line_and_say_where() {
        let err = |doc: &str| decode_str(doc).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"a": 1}"#),
            "not a rocprofv3 trace: the JSON object has no \"rocprofiler-sdk-tool\" key"
        );
        assert_eq!(
            err(r#"{"rocprofiler-sdk-tool": []}"#),
            "\"rocprofiler-sdk-tool\" is an empty list: no profile to read"
        );
        assert_eq!(
            err(r#"{"rocprofiler-sdk-tool": {}}"#),
            "invalid trace: rocprofiler-sdk-tool: invalid type: map, expected a list of profile objects at line 1 column 26"
        );
        let doc = |r: &str| {
            format!(
                r#"{{"rocprofiler-sdk-tool": [{{"buffer_records": {{"kernel_dispatch": [{r}]}}}}]}}"#
            )
        };
        let rec = |r: &str| err(&doc(r));
        let ok = r#"{"start_timestamp": 1, "end_timestamp": 2, "dispatch_info": {"kernel_id": 1}}"#;
        assert_eq!(
            decode_str(&doc(ok))
                .unwrap()
                .dispatches()
                .unwrap()
                .kernels
                .len(),
            1
        );
        let e = rec(&format!(
            r#"{ok}, {{"start_timestamp": 1, "dispatch_info": {{"kernel_id": 1}}}}"#
        ));
        assert!(
            e.starts_with(
                "invalid trace: buffer_records.kernel_dispatch[1]: missing field `end_timestamp`"
            ),
            "{e}"
        );
        let e = rec(
            r#"{"start_timestamp": "1", "end_timestamp": 2, "dispatch_info": {"kernel_id": 1}}"#,
        );
        assert!(
            e.starts_with("invalid trace: buffer_records.kernel_dispatch[0]: invalid type: string \"1\", expected i64"),
            "{e}"
        );
        let e =
            rec(r#"{"start_timestamp": 5, "end_timestamp": 2, "dispatch_info": {"kernel_id": 1}}"#);
        assert!(
            e.contains("end_timestamp 2 is before start_timestamp 5"),
            "{e}"
        );
        let e = err(r#"{"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"st"#);
        assert!(e.starts_with("truncated JSON: EOF while parsing"), "{e}");
        let e = err(r#"{"rocprofiler-sdk-tool": [{"metadata": {},}]}"#);
        assert!(e.starts_with("invalid JSON: "), "{e}");
    }
}
