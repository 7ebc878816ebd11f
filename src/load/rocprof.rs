//! rocprofv3 JSON (`rocprofiler-sdk-tool`): a parallel streaming decoder.
//!
//! The document is read once, front to back, by the shape-driven splitter
//! ([`scan::split_shaped`]), which walks `rocprofiler-sdk-tool[0]` and
//! hands over only what the report reads: the kernel-dispatch and
//! memory-copy records of `buffer_records` and the entries of
//! `kernel_symbols` one at a time, `metadata`, `agents` and `strings`
//! whole. Everything else is passed over unread. Records are packed into
//! batches that worker threads parse (kernel dispatches with a hand-written
//! reader where it can, everything else with serde_json); the batches are
//! merged in document order (`Ordered`:
//! whichever thread finishes the next one merges it), keeping, record by
//! record, the kernel dispatches, memory copies and kernel names. Memory grows
//! with the number of records, not with the size of the document.
//!
//! `kernel_symbols` may come before or after the dispatches: a dispatch
//! keeps its kernel id until the end, when ids become names. The result is
//! the exact records ([`DispatchData`], integer nanoseconds) plus one
//! Kineto-like GPU event per record (microseconds) for the passes that read
//! events.

use std::io::Read;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::error::Category;

use super::Packing;
use super::fast_json::{Reader, read_whole};
use super::kineto::Counted;
use super::ordered::{Merge, Ordered};
use super::scan::{self, Node, Shape, ShapeSink};
use crate::error::LoadError;
use crate::trace::builder::{EventInput, IdentRef, Time};
use crate::trace::dispatch::LaunchConfig;
use crate::trace::dispatch::{DispatchData, KernelDispatch, MemoryCopy};
use crate::trace::handle::MAX_INDEX;
use crate::trace::{Cat, Needs, Phase, Profiler, Trace, TraceBuilder};

/// The top-level key of a rocprofv3 document.
const TOOL_KEY: &str = "rocprofiler-sdk-tool";

/// What the splitter reads of a rocprofv3 document.
static DOC: Node = Node {
    label: "",
    expecting: "a JSON object",
    shape: Shape::Object(&[(TOOL_KEY, TOOLS)]),
};

/// The `rocprofiler-sdk-tool` list: element 0 is read, the others counted.
const TOOLS: Node = Node {
    label: TOOL_KEY,
    expecting: "a list of profile objects",
    shape: Shape::First(&TOOL),
};

/// `rocprofiler-sdk-tool[0]`.
static TOOL: Node = Node {
    label: TOOL_KEY,
    expecting: "a profile object",
    shape: Shape::Object(&[
        ("metadata", whole(METADATA)),
        ("agents", whole(AGENTS)),
        ("strings", whole(STRINGS)),
        (
            "kernel_symbols",
            Node {
                label: SYMBOLS,
                expecting: "a list of kernel symbols",
                shape: Shape::Elements,
            },
        ),
        (
            "buffer_records",
            Node {
                label: "rocprofiler-sdk-tool[0].buffer_records",
                expecting: "an object of record lists",
                shape: Shape::Object(&[
                    ("kernel_dispatch", records(DISPATCHES)),
                    ("memory_copy", records(COPIES)),
                ]),
            },
        ),
    ]),
};

const METADATA: &str = "rocprofiler-sdk-tool[0].metadata";
const AGENTS: &str = "rocprofiler-sdk-tool[0].agents";
const STRINGS: &str = "rocprofiler-sdk-tool[0].strings";
const SYMBOLS: &str = "rocprofiler-sdk-tool[0].kernel_symbols";
const DISPATCHES: &str = "buffer_records.kernel_dispatch";
const COPIES: &str = "buffer_records.memory_copy";

/// A value read whole (serde_json reports its type errors).
const fn whole(label: &'static str) -> Node {
    Node {
        label,
        expecting: "",
        shape: Shape::Whole,
    }
}

/// A list of records, read one at a time.
const fn records(label: &'static str) -> Node {
    Node {
        label,
        expecting: "a list of records",
        shape: Shape::Elements,
    }
}

/// A batch is handed to a worker once it holds this many bytes of records.
/// Kept under the binary's 1 MiB threshold for blocks mapped on their own
/// (`large_alloc`): at 1 MiB each batch was a fresh mapping, faulted in
/// page by page and unmapped after parsing (x4: 64,000 page faults against
/// 41,000, 11% more CPU); under it, freed batches are reused by the heap.
const BATCH_BYTES: usize = 512 << 10;

/// Decodes a rocprofv3 JSON document from `reader` (already unpacked):
/// splits on the calling thread, parses records on worker threads, keeps
/// them in document order (see the module docs).
pub fn decode<R: Read>(reader: R, packing: Packing, needs: &Needs) -> Result<Trace, LoadError> {
    let max_value = scan::max_value_bytes().map_err(LoadError::Limit)?;
    let mut counted = Counted {
        inner: reader,
        bytes: 0,
    };
    let workers = super::worker_count();
    // Two batches per worker and two more in flight: the bound the queue
    // to the merger thread had before the merge moved to the workers.
    let ordered = Ordered::new(State::default(), 2 * workers + 2);
    let (jobs_tx, jobs_rx) = channel::<Job>();
    let jobs_rx = Mutex::new(jobs_rx);
    // Parsed batches' buffers go back to the splitter for the next ones:
    // the batches in flight reuse the same pages.
    let (spare_tx, spare_rx) = channel::<Batch>();
    let work = |job: Job| {
        let Job { batch, seq } = job;
        ordered.work(seq, || {
            let parsed = batch.parse();
            // The splitter may have finished: then nobody takes it.
            let _ = spare_tx.send(batch);
            Element::Batch(parsed)
        });
    };
    let (split, flushed, tools) = std::thread::scope(|scope| {
        super::spawn_workers(scope, &jobs_rx, &work)?;
        let mut sink = Splitter {
            jobs: jobs_tx,
            ordered: &ordered,
            spare: spare_rx,
            batch: None,
            tools: None,
        };
        let split = scan::split_shaped(&mut counted, &DOC, &mut sink, max_value);
        // Records before a syntax error are still checked: their errors come first.
        let flushed = sink.flush();
        Ok::<_, LoadError>((split, flushed, sink.tools))
    })?;
    let st = ordered.into_merged()?;
    split.map_err(|e| super::scan_error(packing, e))?;
    flushed.map_err(LoadError::Invalid)?;
    st.finish(tools, needs, counted.bytes)
}

/// A serde_json error of the value at `place` as a [`LoadError`]: syntax
/// as syntax, content errors with the place.
fn json_error(place: &str, e: serde_json::Error) -> LoadError {
    match e.classify() {
        Category::Syntax | Category::Eof | Category::Io => {
            LoadError::Syntax(format!("invalid JSON: {e}"))
        }
        Category::Data => LoadError::Invalid(format!("{place}: {e}")),
    }
}

/// Parses the value at `place`.
fn parse<T: DeserializeOwned>(place: &str, json: &[u8]) -> Result<T, LoadError> {
    serde_json::from_slice(json).map_err(|e| json_error(place, e))
}

/// Parses record `index` of the list `label`, with `fast` where it can
/// (else serde, which decides and words any error), and makes it what the
/// merger keeps (the place is written only for an error).
fn parse_record<T: DeserializeOwned, K>(
    label: &str,
    index: usize,
    json: &[u8],
    fast: fn(&[u8]) -> Option<T>,
    keep: impl FnOnce(T) -> Result<K, String>,
) -> Result<K, LoadError> {
    let place = || format!("{label}[{index}]");
    let raw = match fast(json) {
        Some(raw) => raw,
        None => serde_json::from_slice(json).map_err(|e| json_error(&place(), e))?,
    };
    keep(raw).map_err(|e| LoadError::Invalid(format!("{}: {e}", place())))
}

/// No fast reader: serde reads every record (lists too short to matter).
fn serde_only<T>(_: &[u8]) -> Option<T> {
    None
}

/// The record lists the splitter batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    Kernels,
    Copies,
    Symbols,
}

impl List {
    fn of(node: &Node) -> Option<List> {
        match node.label {
            DISPATCHES => Some(List::Kernels),
            COPIES => Some(List::Copies),
            SYMBOLS => Some(List::Symbols),
            _ => None,
        }
    }
}

/// Consecutive records of one list, as JSON text.
struct Batch {
    /// The list's node.
    node: &'static Node,
    first_index: usize,
    buf: Vec<u8>,
    ends: Vec<usize>,
}

/// A batch handed to a worker, with its place in document order.
struct Job {
    batch: Batch,
    seq: u64,
}

/// The records of a batch as a worker read them, up to the first error.
enum Records {
    /// Kernel id, dispatch (its name and configuration not yet set) and
    /// launch configuration.
    Kernels(Vec<(u64, KernelDispatch, LaunchConfig)>),
    Copies(Vec<CopyRecord>),
    /// Kernel id and the name the reference picks.
    Symbols(Vec<(u64, String)>),
}

struct Parsed {
    records: Records,
    /// The error of the record after the last one read.
    error: Option<LoadError>,
}

impl Batch {
    /// Reads every record of the batch (a worker's part).
    fn parse(&self) -> Parsed {
        match List::of(self.node) {
            Some(List::Kernels) => read_all(self, Records::Kernels, |i, json| {
                parse_record(DISPATCHES, i, json, fast_dispatch, RawDispatch::dispatch)
            }),
            Some(List::Copies) => read_all(self, Records::Copies, |i, json| {
                parse_record(COPIES, i, json, serde_only, RawCopy::record)
            }),
            Some(List::Symbols) => read_all(self, Records::Symbols, |_, json| {
                let sym: RawSymbol = parse(SYMBOLS, json)?;
                Ok((sym.kernel_id, sym.name()))
            }),
            None => Parsed {
                records: Records::Copies(Vec::new()),
                error: Some(LoadError::Internal),
            },
        }
    }
}

/// Reads the records of `batch` one by one with `read` (given each one's
/// index in its list), up to the first error.
fn read_all<T>(
    batch: &Batch,
    records: fn(Vec<T>) -> Records,
    mut read: impl FnMut(usize, &[u8]) -> Result<T, LoadError>,
) -> Parsed {
    let mut out = Vec::with_capacity(batch.ends.len());
    let mut start = 0;
    let mut error = None;
    for (i, &end) in batch.ends.iter().enumerate() {
        match read(batch.first_index + i, &batch.buf[start..end]) {
            Ok(r) => out.push(r),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
        start = end;
    }
    Parsed {
        records: records(out),
        error,
    }
}

/// What is merged, in document order.
enum Element {
    /// A parsed batch.
    Batch(Parsed),
    /// A value read whole: its node's label and JSON text.
    Whole(&'static str, Vec<u8>),
}

/// The splitter's sink: packs records into batches and sends them to the
/// workers, numbered for the ordered merge.
struct Splitter<'m> {
    jobs: Sender<Job>,
    ordered: &'m Ordered<State>,
    /// Batches the workers have parsed, for reuse.
    spare: Receiver<Batch>,
    batch: Option<Batch>,
    /// The length of the `rocprofiler-sdk-tool` list, once read.
    tools: Option<usize>,
}

impl Splitter<'_> {
    fn flush(&mut self) -> Result<(), String> {
        let Some(batch) = self.batch.take() else {
            return Ok(());
        };
        let seq = self.ordered.place()?;
        if self.jobs.send(Job { batch, seq }).is_err() {
            return Err(self.ordered.lost(seq).into());
        }
        Ok(())
    }
}

impl ShapeSink for Splitter<'_> {
    fn whole(&mut self, node: &'static Node, json: &[u8]) -> Result<(), String> {
        self.flush()?;
        let whole = Element::Whole(node.label, json.to_vec());
        Ok(self.ordered.add_own(whole)?)
    }
    fn element(&mut self, node: &'static Node, index: usize, json: &[u8]) -> Result<(), String> {
        // Batches hold one list: a new node starts a new batch.
        if self
            .batch
            .as_ref()
            .is_some_and(|b| !std::ptr::eq(b.node, node))
        {
            self.flush()?;
        }
        let batch = match &mut self.batch {
            Some(batch) => batch,
            None => {
                let mut batch = self.spare.try_recv().unwrap_or_else(|_| Batch {
                    node,
                    first_index: index,
                    buf: Vec::with_capacity(BATCH_BYTES + (64 << 10)),
                    ends: Vec::new(),
                });
                batch.node = node;
                batch.first_index = index;
                batch.buf.clear();
                batch.ends.clear();
                self.batch.insert(batch)
            }
        };
        let size = super::append_to_batch(&mut batch.buf, &mut batch.ends, json, || {
            format!("{}[{index}]", node.label)
        })?;
        if size >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn count(&mut self, _node: &'static Node, n: usize) -> Result<(), String> {
        self.tools = Some(n);
        Ok(())
    }
}

/// Keeps what each batch and whole value holds, in document order.
impl Merge for State {
    type Item = Element;
    type Spare = ();
    type Error = LoadError;

    fn merge(&mut self, element: Element) -> Result<Option<()>, LoadError> {
        match element {
            Element::Batch(p) => {
                match p.records {
                    Records::Kernels(ks) => {
                        for (id, k, config) in ks {
                            self.push_kernel(id, k, config)
                                .map_err(LoadError::Invalid)?;
                        }
                    }
                    Records::Copies(cs) => self.copies.extend(cs),
                    // A repeated id: the last entry wins, as in a Python dict.
                    Records::Symbols(syms) => self.symbols.extend(syms),
                }
                if let Some(e) = p.error {
                    return Err(e);
                }
            }
            Element::Whole(label, json) => self.whole(label, &json)?,
        }
        Ok(None)
    }

    fn internal(_what: &str) -> LoadError {
        LoadError::Internal
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

/// What the merger keeps while the document streams by.
#[derive(Debug, Default)]
struct State {
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
    /// The distinct launch configurations, and each one's index.
    configs: Vec<LaunchConfig>,
    config_ids: FxHashMap<LaunchConfig, u32>,
    copies: Vec<CopyRecord>,
}

/// `{"handle": n}` (agents, queues, streams).
#[derive(Debug, Default, PartialEq, Deserialize)]
struct Handle {
    #[serde(default)]
    handle: i64,
}

/// Grid or workgroup size; a missing axis is 1, as in the reference.
#[derive(Debug, PartialEq, Deserialize)]
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
#[derive(Debug, PartialEq, Deserialize)]
struct RawDispatch {
    start_timestamp: i64,
    end_timestamp: i64,
    dispatch_info: RawDispatchInfo,
    #[serde(default)]
    stream_id: Handle,
    #[serde(default)]
    thread_id: i64,
}

#[derive(Debug, PartialEq, Deserialize)]
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

/// A `kernel_dispatch` record read as serde reads it into
/// [`RawDispatch`], by the hand-written reader: None for anything it
/// leaves to serde (escapes, duplicate fields, numbers other than plain
/// integers, `null`s, invalid JSON, ...). Serde's field-by-field reading
/// was a quarter of a rocprof report's CPU.
fn fast_dispatch(json: &[u8]) -> Option<RawDispatch> {
    // The shaped splitter does not note ASCII: checked here.
    read_whole(json, false, (), |r| {
        r.eat(b'{')?;
        let (mut start, mut end, mut info, mut stream, mut thread) = (None, None, None, None, None);
        r.members(|r, key| match key {
            "start_timestamp" => first(&mut start, r.int()?),
            "end_timestamp" => first(&mut end, r.int()?),
            "dispatch_info" => first(&mut info, fast_dispatch_info(r)?),
            "stream_id" => first(&mut stream, fast_handle(r)?),
            "thread_id" => first(&mut thread, r.int()?),
            _ => r.skip(1),
        })?;
        Some(RawDispatch {
            start_timestamp: start?,
            end_timestamp: end?,
            dispatch_info: info?,
            stream_id: stream.unwrap_or_default(),
            thread_id: thread.unwrap_or_default(),
        })
    })
}

/// [`fast_dispatch`]'s `dispatch_info`.
fn fast_dispatch_info(r: &mut Reader<'_, ()>) -> Option<RawDispatchInfo> {
    r.eat(b'{')?;
    let (mut kernel, mut dispatch, mut agent, mut grid, mut block) = (None, None, None, None, None);
    r.members(|r, key| match key {
        "kernel_id" => first(&mut kernel, u64::try_from(r.int()?).ok()?),
        "dispatch_id" => first(&mut dispatch, r.int()?),
        "agent_id" => first(&mut agent, fast_handle(r)?),
        "grid_size" => first(&mut grid, fast_dim3(r)?),
        "workgroup_size" => first(&mut block, fast_dim3(r)?),
        _ => r.skip(2),
    })?;
    Some(RawDispatchInfo {
        kernel_id: kernel?,
        dispatch_id: dispatch.unwrap_or_default(),
        agent_id: agent.unwrap_or_default(),
        grid_size: grid.unwrap_or_default(),
        workgroup_size: block.unwrap_or_default(),
    })
}

/// [`fast_dispatch`]'s [`Handle`].
fn fast_handle(r: &mut Reader<'_, ()>) -> Option<Handle> {
    r.eat(b'{')?;
    let mut handle = None;
    r.members(|r, key| match key {
        "handle" => first(&mut handle, r.int()?),
        _ => r.skip(3),
    })?;
    Some(Handle {
        handle: handle.unwrap_or_default(),
    })
}

/// [`fast_dispatch`]'s [`Dim3`].
fn fast_dim3(r: &mut Reader<'_, ()>) -> Option<Dim3> {
    r.eat(b'{')?;
    let (mut x, mut y, mut z) = (None, None, None);
    r.members(|r, key| match key {
        "x" => first(&mut x, r.int()?),
        "y" => first(&mut y, r.int()?),
        "z" => first(&mut z, r.int()?),
        _ => r.skip(3),
    })?;
    Some(Dim3 {
        x: x.unwrap_or_else(one),
        y: y.unwrap_or_else(one),
        z: z.unwrap_or_else(one),
    })
}

/// Fills `slot` with `value` unless a field filled it before (serde
/// refuses a repeated field: left to it).
fn first<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

impl RawDispatch {
    /// The kernel id, the dispatch (its name and configuration still
    /// unset) and its launch configuration.
    fn dispatch(self) -> Result<(u64, KernelDispatch, LaunchConfig), String> {
        check_times(self.start_timestamp, self.end_timestamp)?;
        let info = self.dispatch_info;
        let (g, b) = (info.grid_size, info.workgroup_size);
        let k = KernelDispatch {
            name: 0,
            config: 0,
            start_ns: self.start_timestamp,
            end_ns: self.end_timestamp,
            dispatch_id: info.dispatch_id,
        };
        let config = LaunchConfig {
            stream: self.stream_id.handle,
            grid: [g.x, g.y, g.z],
            block: [b.x, b.y, b.z],
            agent_id: info.agent_id.handle,
            thread_id: self.thread_id,
        };
        Ok((info.kernel_id, k, config))
    }
}

impl RawCopy {
    fn record(self) -> Result<CopyRecord, String> {
        check_times(self.start_timestamp, self.end_timestamp)?;
        Ok(CopyRecord {
            start_ns: self.start_timestamp,
            end_ns: self.end_timestamp,
            operation: self.operation,
            agent_id: self.dst_agent_id.handle,
            stream: self.stream_id.handle,
        })
    }
}

/// The dense index of `key`: its entry in `ids`, or a new one at the end of
/// `list`; None past `u32`.
fn dense_id<K: Copy + Eq + std::hash::Hash>(
    ids: &mut FxHashMap<K, u32>,
    list: &mut Vec<K>,
    key: K,
) -> Option<u32> {
    if let Some(&i) = ids.get(&key) {
        return Some(i);
    }
    let i = u32::try_from(list.len()).ok()?;
    list.push(key);
    ids.insert(key, i);
    Some(i)
}

impl State {
    /// Keeps a dispatch of kernel `kernel_id`, naming it by a dense index
    /// until the names are known.
    fn push_kernel(
        &mut self,
        kernel_id: u64,
        mut k: KernelDispatch,
        config: LaunchConfig,
    ) -> Result<(), String> {
        k.config = dense_id(&mut self.config_ids, &mut self.configs, config)
            .ok_or("too many distinct launch configurations")?;
        k.name = dense_id(&mut self.dense, &mut self.kernel_ids, kernel_id)
            .ok_or("too many distinct kernel ids")?;
        // The report indexes dispatches in 32 bits, as the trace does events.
        if self.kernels.len() >= MAX_INDEX {
            return Err(format!(
                "the trace has more than {MAX_INDEX} kernel dispatches"
            ));
        }
        self.kernels.push(k);
        Ok(())
    }

    /// Keeps what a value read whole (`metadata`, `agents`, `strings`)
    /// says.
    fn whole(&mut self, label: &str, json: &[u8]) -> Result<(), LoadError> {
        match label {
            METADATA => {
                let md: RawMetadata = parse(label, json)?;
                self.init_time_ns = md.init_time;
                self.fini_time_ns = md.fini_time;
            }
            AGENTS => {
                let agents: Vec<RawAgent> = parse(label, json)?;
                self.gpu_agents = agents.iter().filter(|a| a.kind == AGENT_GPU).count();
            }
            STRINGS => {
                let strings: RawStrings = parse(label, json)?;
                if let Some(k) = strings
                    .buffer_records
                    .into_iter()
                    .find(|k| k.kind == "MEMORY_COPY")
                {
                    self.copy_ops = k.operations;
                }
            }
            _ => return Err(LoadError::Internal),
        }
        Ok(())
    }

    /// The trace: kernel ids become names, records become events.
    /// `tools`: the length of the `rocprofiler-sdk-tool` list, None
    /// without one.
    fn finish(
        mut self,
        tools: Option<usize>,
        needs: &Needs,
        input_bytes: u64,
    ) -> Result<Trace, LoadError> {
        let tools = tools.ok_or_else(|| {
            LoadError::NotATrace(format!(
                "not a rocprofv3 trace: the JSON object has no \"{TOOL_KEY}\" key"
            ))
        })?;
        if tools == 0 {
            return Err(LoadError::NotATrace(format!(
                "\"{TOOL_KEY}\" is an empty list: no profile to read"
            )));
        }
        let mut builder = TraceBuilder::new(needs);
        if tools > 1 {
            builder.warn(format!(
                "only the first of the {tools} \"{TOOL_KEY}\" entries was read"
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
            configs: std::mem::take(&mut self.configs),
            copies: Vec::with_capacity(self.copies.len()),
        };
        if needs.dispatch_events {
            push_events(&mut builder, &data, &self.copies, &self.copy_ops)?;
        }
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

/// A rocprof trace built from dispatch records read from another of
/// rocprofv3's outputs (its kernel-trace CSV): the same trace the JSON
/// decoder makes of the same records.
#[derive(Debug, Default)]
pub struct DispatchRecords {
    state: State,
}

impl DispatchRecords {
    /// No records yet.
    pub fn new() -> DispatchRecords {
        DispatchRecords::default()
    }

    /// Keeps one dispatch of kernel `kernel_id`, whose name is `name` unless
    /// an earlier record of the same id named it first. `k`'s name and
    /// configuration indices are set here.
    pub fn push(
        &mut self,
        kernel_id: u64,
        name: &str,
        k: KernelDispatch,
        config: LaunchConfig,
    ) -> Result<(), String> {
        check_times(k.start_ns, k.end_ns)?;
        self.state
            .symbols
            .entry(kernel_id)
            .or_insert_with(|| name.to_string());
        self.state.push_kernel(kernel_id, k, config)
    }

    /// The trace: profiling from `init_ns` to `fini_ns`, `gpu_agents`
    /// GPUs, `input_bytes` read.
    pub fn finish(
        mut self,
        init_ns: Option<i64>,
        fini_ns: Option<i64>,
        gpu_agents: usize,
        input_bytes: u64,
        needs: &Needs,
    ) -> Result<Trace, LoadError> {
        self.state.init_time_ns = init_ns;
        self.state.fini_time_ns = fini_ns;
        self.state.gpu_agents = gpu_agents;
        self.state.finish(Some(1), needs, input_bytes)
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
        let config = data.config(k);
        (
            Cat::Kernel,
            data.name(k),
            config.agent_id,
            config.stream,
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
                config: 0,
                start_ns: 2000,
                end_ns: 2500,
                dispatch_id: 1,
            }
        );
        assert_eq!(
            *d.config(&d.kernels[0]),
            LaunchConfig {
                stream: 4,
                grid: [64, 2, 1],
                block: [32, 1, 1],
                agent_id: 9,
                thread_id: 7,
            }
        );
        // Defaults: grid/block 1, ids 0; the last two dispatches share
        // their launch configuration.
        let c = d.config(&d.kernels[1]);
        assert_eq!(
            (c.grid, c.block, c.stream, c.agent_id, c.thread_id),
            ([1; 3], [1; 3], 0, 0, 0)
        );
        assert_eq!(d.configs.len(), 2);
        assert_eq!(d.kernels[2].config, d.kernels[1].config);
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
    fn without_dispatch_events_only_the_records_are_kept() {
        let lean = Needs {
            dispatch_events: false,
            ..Needs::ALL
        };
        let t = decode(DOC.as_bytes(), Packing::Plain, &lean).unwrap();
        let full = decode_str(DOC).unwrap();
        assert_eq!((t.len(), full.len()), (0, 4));
        let (d, f) = (t.dispatches().unwrap(), full.dispatches().unwrap());
        assert_eq!(
            (&d.kernels, &d.copies, &d.names),
            (&f.kernels, &f.copies, &f.names)
        );
        assert_eq!(t.warnings(), full.warnings());
    }

    #[test]
    fn many_batches_keep_document_order_and_the_first_error_wins() {
        // 30,000 dispatches, about 3 MiB of records: several batches.
        let n = 30_000;
        let recs: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"start_timestamp": {}, "end_timestamp": {}, "dispatch_info": {{"kernel_id": {}, "dispatch_id": {i}}}}}"#,
                    1000 + 10 * i,
                    1005 + 10 * i,
                    i % 7
                )
            })
            .collect();
        let doc = |recs: &[String]| {
            let syms: Vec<String> = (0..7)
                .map(|k| format!(r#"{{"kernel_id": {k}, "kernel_name": "k{k}"}}"#))
                .collect();
            format!(
                r#"{{"rocprofiler-sdk-tool": [{{"buffer_records": {{"kernel_dispatch": [{}]}}, "kernel_symbols": [{}]}}]}}"#,
                recs.join(", "),
                syms.join(", ")
            )
        };
        let t = decode_str(&doc(&recs)).unwrap();
        let d = t.dispatches().unwrap();
        assert_eq!(d.kernels.len(), n);
        for (i, k) in d.kernels.iter().enumerate() {
            assert_eq!(k.dispatch_id, i as i64);
            assert_eq!(k.start_ns, 1000 + 10 * i as i64);
            assert_eq!(d.name(k), format!("k{}", i % 7));
        }
        let mut bad = recs.clone();
        bad[25_001] = r#"{"start_timestamp": 1}"#.to_string();
        let e = decode_str(&doc(&bad)).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "invalid trace: buffer_records.kernel_dispatch[25001]: missing field `end_timestamp`"
            ),
            "{e}"
        );
        bad[20_000] =
            r#"{"start_timestamp": 9, "end_timestamp": 5, "dispatch_info": {"kernel_id": 1}}"#
                .to_string();
        let e = decode_str(&doc(&bad)).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid trace: buffer_records.kernel_dispatch[20000]: end_timestamp 5 is before start_timestamp 9"
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
            "invalid trace: rocprofiler-sdk-tool: invalid type: map, expected a list of profile objects"
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
        assert!(e.starts_with("truncated JSON: input ended inside "), "{e}");
        // A syntax error is found by the splitter or, inside a value read
        // whole or a record, by serde_json.
        let e = err(r#"{"rocprofiler-sdk-tool": [{"metadata": {},}]}"#);
        assert!(e.starts_with("invalid JSON at byte 42: "), "{e}");
        let e = err(r#"{"rocprofiler-sdk-tool": [{"metadata": {"pid": 1,}}]}"#);
        assert!(e.starts_with("invalid JSON: trailing comma"), "{e}");
        let e = rec(r#"{"start_timestamp": 1,, "end_timestamp": 2}"#);
        assert!(e.starts_with("invalid JSON: "), "{e}");
    }

    /// A record as rocprofv3 writes it, with every field the reader takes.
    const RECORD: &str = r#"{"size":184,"kind":11,"operation":2,"thread_id":908,"correlation_id":{"internal":1,"external":0},"start_timestamp":63857982592000,"end_timestamp":63857982594840,"dispatch_info":{"size":72,"agent_id":{"handle":37946},"queue_id":{"handle":16},"kernel_id":8,"dispatch_id":1,"private_segment_size":0,"group_segment_size":0,"workgroup_size":{"x":512,"y":1,"z":1},"grid_size":{"x":512,"y":2,"z":3}},"stream_id":{"handle":5}}"#;

    /// What serde reads from `json`, or its error's text.
    fn by_serde(json: &str) -> Result<RawDispatch, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn dispatches_read_fast_as_serde_reads_them() {
        let want = by_serde(RECORD).unwrap();
        assert_eq!(want.dispatch_info.grid_size, Dim3 { x: 512, y: 2, z: 3 });
        for json in [
            RECORD.to_string(),
            // Spaced out, fields reordered, optional ones left out.
            RECORD.replace(',', " ,\n\t").replace(':', " : "),
            r#"{"dispatch_info": {"kernel_id": 0}, "end_timestamp": -5, "start_timestamp": 7}"#
                .into(),
            r#"{"start_timestamp":1,"end_timestamp":2,"dispatch_info":{"kernel_id":999999999999999999,"grid_size":{"y":4},"workgroup_size":{},"agent_id":{}},"stream_id":{"other":[1,{"a":null}]}}"#
                .into(),
        ] {
            assert_eq!(fast_dispatch(json.as_bytes()), Some(by_serde(&json).unwrap()), "{json}");
        }
    }

    #[test]
    fn unusual_dispatches_are_left_to_serde() {
        for json in [
            // Repeated fields, which serde refuses.
            r#"{"start_timestamp":1,"start_timestamp":1,"end_timestamp":2,"dispatch_info":{"kernel_id":1}}"#,
            r#"{"start_timestamp":1,"end_timestamp":2,"dispatch_info":{"kernel_id":1,"kernel_id":1}}"#,
            // Numbers serde does not read as i64 / u64 the plain way.
            r#"{"start_timestamp":1.0,"end_timestamp":2,"dispatch_info":{"kernel_id":1}}"#,
            r#"{"start_timestamp":-0,"end_timestamp":2,"dispatch_info":{"kernel_id":1}}"#,
            r#"{"start_timestamp":1,"end_timestamp":2,"dispatch_info":{"kernel_id":-1}}"#,
            r#"{"start_timestamp":1,"end_timestamp":2,"dispatch_info":{"kernel_id":18446744073709551615}}"#,
            // null, strings, escapes, structs as arrays, missing fields.
            r#"{"start_timestamp":1,"end_timestamp":2,"thread_id":null,"dispatch_info":{"kernel_id":1}}"#,
            r#"{"start_timestamp":"1","end_timestamp":2,"dispatch_info":{"kernel_id":1}}"#,
            r#"{"start_timestamp":1,"end_\u0074imestamp":2,"dispatch_info":{"kernel_id":1}}"#,
            r#"{"start_timestamp":1,"end_timestamp":2,"dispatch_info":[1]}"#,
            r#"{"start_timestamp":1,"dispatch_info":{"kernel_id":1}}"#,
            // Not JSON, or more after the record.
            r#"{"start_timestamp":1,"end_timestamp":2,"dispatch_info":{"kernel_id":1},}"#,
            r#"{"start_timestamp":1,"end_timestamp":2,"dispatch_info":{"kernel_id":1}} 1"#,
        ] {
            assert_eq!(fast_dispatch(json.as_bytes()), None, "{json}");
        }
    }

    #[test]
    fn damaged_dispatches_read_fast_only_as_serde_reads_them() {
        // Every damage the fast reader accepts, serde reads the same way.
        let mut draw = crate::test_support::draws(0x2545_f491_4f6c_dd1d);
        let bytes = b"{}[]:,\"0123456789-.e xhnul\\";
        let (mut fast, mut rounds) = (0, 0);
        while rounds < 20_000 {
            let mut json = RECORD.as_bytes().to_vec();
            for _ in 0..1 + draw(3) {
                let at = draw(json.len());
                match draw(3) {
                    0 => json[at] = bytes[draw(bytes.len())],
                    1 => {
                        json.remove(at);
                    }
                    _ => json.insert(at, bytes[draw(bytes.len())]),
                }
            }
            let Ok(text) = std::str::from_utf8(&json) else {
                continue;
            };
            rounds += 1;
            if let Some(got) = fast_dispatch(&json) {
                fast += 1;
                assert_eq!(Ok(got), by_serde(text), "{text}");
            }
        }
        // Most damage is to values the reader skips or reads the same.
        assert!(fast > 2_000, "{fast}");
    }
}
