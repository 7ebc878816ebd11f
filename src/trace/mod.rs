//! The trace data model, knowing no file format: one flat arena of events
//! addressed by typed handles ([`EventId`], …), names interned once, op
//! arguments parsed once into a table of distinct values.
//!
//! A [`TraceBuilder`] makes a [`Trace`]; decoders of input formats (in
//! `load`) feed it. For a full load an event's index is its position in the
//! input, which is also the reference's `UID`.

pub mod annotation;
pub mod args;
pub mod builder;
pub mod capture;
pub mod dispatch;
pub mod edit;
pub mod event_set;
pub mod handle;
pub mod needs;
pub mod perfetto;
pub mod tree;
pub mod xla;

use rustc_hash::FxHashMap;

pub use args::{ArgValue, Args, CollectiveArgs, OpArgs};
pub use builder::TraceBuilder;
pub use event_set::EventSet;
pub use handle::{ArgsId, EventId, IdentId, StrId, ValueId};
pub use needs::Needs;

/// A string table: every distinct string is stored once and named by a [`StrId`].
#[derive(Debug, Default)]
pub struct Interner {
    map: FxHashMap<Box<str>, StrId>,
    strings: Vec<Box<str>>,
}

impl Interner {
    /// The id of `s`, adding it to the table if it is new.
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = StrId::new(self.strings.len());
        self.strings.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned, without adding it.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.map.get(s).copied()
    }

    /// The string behind `id`.
    pub fn get(&self, id: StrId) -> &str {
        &self.strings[id.index()]
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when no string was interned.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

/// The `cat` of an event, reduced to the categories any pass looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cat {
    /// `cpu_op`: host operators (aten::…).
    CpuOp,
    /// `cuda_runtime`: CUDA and HIP runtime calls.
    CudaRuntime,
    /// `cuda_driver`: driver API calls (cuLaunchKernel…).
    CudaDriver,
    /// `python_function`: Python frames, incl. `nn.Module: …`.
    PythonFunction,
    /// `kernel`: a GPU kernel.
    Kernel,
    /// `gpu_memcpy`: a GPU copy.
    GpuMemcpy,
    /// `gpu_memset`: a GPU fill.
    GpuMemset,
    /// `ac2g`: launch flow arrows.
    Ac2g,
    /// `user_annotation`: record_function ranges on host rows.
    UserAnnotation,
    /// `gpu_user_annotation`: record_function ranges on GPU rows.
    GpuUserAnnotation,
    /// `cuda_sync`: the GPU's side of a synchronisation (`Stream Sync`,
    /// `Context Sync`, `Event Sync`, `Stream Wait Event`).
    CudaSync,
    /// Any other category.
    Other,
    /// No `cat` field.
    Missing,
}

impl Cat {
    /// Classifies a `cat` string (exact, case-sensitive, as the reference does).
    pub fn parse(s: &str) -> Cat {
        Cat::named(s.as_bytes()).unwrap_or(Cat::Other)
    }

    /// [`Cat::parse`] of a `cat` string's raw bytes, as the loader finds
    /// them; None when they are not UTF-8 (not a string a parser accepts).
    pub fn from_bytes(b: &[u8]) -> Option<Cat> {
        // Only the categories no name matches pay for the check.
        Cat::named(b).or_else(|| std::str::from_utf8(b).is_ok().then_some(Cat::Other))
    }

    /// The category a known name stands for; None for any other bytes.
    fn named(b: &[u8]) -> Option<Cat> {
        Some(match b {
            b"cpu_op" => Cat::CpuOp,
            b"cuda_runtime" => Cat::CudaRuntime,
            b"cuda_driver" => Cat::CudaDriver,
            b"python_function" => Cat::PythonFunction,
            b"kernel" => Cat::Kernel,
            b"gpu_memcpy" => Cat::GpuMemcpy,
            b"gpu_memset" => Cat::GpuMemset,
            b"ac2g" => Cat::Ac2g,
            b"user_annotation" => Cat::UserAnnotation,
            b"gpu_user_annotation" => Cat::GpuUserAnnotation,
            b"cuda_sync" => Cat::CudaSync,
            _ => return None,
        })
    }

    /// The category's name as written in traces.
    pub fn as_str(self) -> &'static str {
        match self {
            Cat::CpuOp => "cpu_op",
            Cat::CudaRuntime => "cuda_runtime",
            Cat::CudaDriver => "cuda_driver",
            Cat::PythonFunction => "python_function",
            Cat::Kernel => "kernel",
            Cat::GpuMemcpy => "gpu_memcpy",
            Cat::GpuMemset => "gpu_memset",
            Cat::Ac2g => "ac2g",
            Cat::UserAnnotation => "user_annotation",
            Cat::GpuUserAnnotation => "gpu_user_annotation",
            Cat::CudaSync => "cuda_sync",
            Cat::Other => "other",
            Cat::Missing => "None",
        }
    }

    /// GPU work: kernels, copies and fills.
    pub fn is_gpu(self) -> bool {
        matches!(self, Cat::Kernel | Cat::GpuMemcpy | Cat::GpuMemset)
    }

    /// Host runtime or driver API calls (the launchers of GPU work).
    pub fn is_runtime(self) -> bool {
        matches!(self, Cat::CudaRuntime | Cat::CudaDriver)
    }
}

/// The `ph` (phase) of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `X`: complete event with `ts` and `dur`.
    Complete,
    /// `M`: metadata.
    Metadata,
    /// `s`: flow start.
    FlowStart,
    /// `f`: flow end.
    FlowEnd,
    /// `i` / `I`: instant.
    Instant,
    /// Any other phase (carried but inert).
    Other,
}

/// A `pid` or `tid` value: the reference compares them with Python equality,
/// so integer `0` and string `"0"` are different.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ident {
    /// No value (field absent or null).
    Null,
    /// An integer id.
    Int(i64),
    /// A string id such as `"Spans"`.
    Str(Box<str>),
}

/// One trace event, compact. Times are microseconds as written in the input.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    /// `ts`, or NaN when absent.
    pub ts: f64,
    /// `dur`, or NaN when absent.
    pub dur: f64,
    /// Interned `name`, when present.
    pub name: Option<StrId>,
    /// Interned `pid`.
    pub pid: IdentId,
    /// Interned `tid`.
    pub tid: IdentId,
    /// The event's args record, when it has `args`.
    pub args: Option<ArgsId>,
    /// Category.
    pub cat: Cat,
    /// Phase.
    pub ph: Phase,
    /// True when `ts` was written as an integer.
    pub ts_is_int: bool,
    /// True when `dur` was written as an integer.
    pub dur_is_int: bool,
}

impl Event {
    /// `ts + dur`, the end time used by every interval computation.
    #[inline]
    pub fn t_end(&self) -> f64 {
        self.ts + self.dur
    }
}

/// Process and thread names from metadata events.
#[derive(Debug, Clone, Default)]
pub struct ThreadMeta {
    /// `process_name` (`args.name`).
    pub process_name: Option<String>,
    /// `process_labels` (`args.labels`).
    pub process_labels: Option<String>,
    /// `thread_name` (`args.name`).
    pub thread_name: Option<String>,
}

/// Facts about the trace as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceInfo {
    /// `distributedInfo.rank`, when the trace has it.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`, when the trace has it.
    pub world_size: Option<i64>,
    /// Number of devices described (`deviceProperties` entries; 0 when absent).
    pub device_count: usize,
    /// The described devices' (name, memory in bytes): Kineto's
    /// `deviceProperties` `name` (empty when absent) and `totalGlobalMem`.
    /// Empty for the other formats.
    pub devices: Vec<(String, Option<u64>)>,
    /// Size of the decoded (uncompressed) input in bytes.
    pub input_bytes: u64,
    /// Which profiler wrote the trace (it decides the report's sheets).
    pub profiler: Profiler,
}

/// The profiler that wrote a trace: each has its own report layout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Profiler {
    /// The PyTorch profiler (Kineto).
    #[default]
    PyTorch,
    /// JAX / XLA (XPlane).
    Jax,
    /// rocprofv3.
    Rocprof,
    /// rocprofv3's Perfetto output (`.pftrace`, or traceconv's JSON of it).
    Perfetto,
}

/// True when a kernel name is a collective's: it contains `nccl`,
/// `rccl` or `cross_device_reduce`, in any case.
pub fn is_collective_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("nccl") || lower.contains("rccl") || lower.contains("cross_device_reduce")
}

/// A stub's entry in [`Trace::kept_positions`].
pub(crate) const NOT_KEPT: u32 = u32::MAX;

/// Slot values from here on name a stub: `STUB_SLOT + category`.
const STUB_SLOT: u32 = u32::MAX - 16;

/// Every category, in declaration order (`Cat as usize` indexes it).
const CATS: [Cat; 13] = [
    Cat::CpuOp,
    Cat::CudaRuntime,
    Cat::CudaDriver,
    Cat::PythonFunction,
    Cat::Kernel,
    Cat::GpuMemcpy,
    Cat::GpuMemset,
    Cat::Ac2g,
    Cat::UserAnnotation,
    Cat::GpuUserAnnotation,
    Cat::CudaSync,
    Cat::Other,
    Cat::Missing,
];

/// The event a stub of category `cat` reads as: its place and category,
/// nothing else (no times, name, pid/tid or args).
const fn stub_event(cat: Cat) -> Event {
    Event {
        ts: f64::NAN,
        dur: f64::NAN,
        name: None,
        // A built trace interns the null pid/tid first.
        pid: IdentId::FIRST,
        tid: IdentId::FIRST,
        args: None,
        cat,
        ph: Phase::Other,
        ts_is_int: false,
        dur_is_int: false,
    }
}

/// The stub events, one per category (indexed like [`CATS`]).
static STUB_EVENTS: [Event; CATS.len()] = {
    let mut out = [stub_event(Cat::Missing); CATS.len()];
    let mut i = 0;
    while i < CATS.len() {
        out[i] = stub_event(CATS[i]);
        i += 1;
    }
    out
};

/// Flow ids by event, in two columns sorted by event id (loaders add them
/// in input order, so an insert is a push).
#[derive(Debug, Default)]
struct FlowIds {
    events: Vec<EventId>,
    ids: Vec<i64>,
}

impl FlowIds {
    fn get(&self, event: EventId) -> Option<i64> {
        let at = self.events.binary_search(&event).ok()?;
        Some(self.ids[at])
    }

    /// Gives back unused capacity (once loading is done).
    fn shrink_to_fit(&mut self) {
        self.events.shrink_to_fit();
        self.ids.shrink_to_fit();
    }

    /// Sets the flow id of `event`.
    fn insert(&mut self, event: EventId, id: i64) {
        // Loaders add events in order: a push, without a search.
        if self.events.last().is_none_or(|&last| last < event) {
            self.events.push(event);
            self.ids.push(id);
            return;
        }
        match self.events.binary_search(&event) {
            Ok(at) => self.ids[at] = id,
            Err(at) => {
                self.events.insert(at, event);
                self.ids.insert(at, id);
            }
        }
    }
}

/// A loaded trace: the event arena plus its side tables. Made by a
/// [`TraceBuilder`]; read through typed accessors.
#[derive(Debug, Default)]
pub struct Trace {
    /// Events in input order (for a full load, index = UID), then the
    /// events appended after loading ([`edit`]); only the kept ones when
    /// `slots` says where each event is.
    events: Vec<Event>,
    /// Where each event id lives, once a stub was pushed: an index into
    /// `events`, or [`STUB_SLOT`] + the stub's category. Stubs (events no
    /// pass reads, most of a big trace's events) so cost 4 bytes, not 44.
    slots: Option<Vec<u32>>,
    /// How many of `events` were read from the input.
    loaded: usize,
    /// Argument records referenced by [`Event::args`].
    args: args::ArgsTable,
    /// Distinct parsed argument values referenced by [`Args`].
    values: Vec<ArgValue>,
    /// Flow ids of flow start/end events (only flows carry one), by event
    /// id ascending: a third of a hash map's memory.
    flow_ids: FlowIds,
    /// Interned strings (names).
    strings: Interner,
    /// Interned pid/tid values.
    idents: Vec<Ident>,
    /// Metadata by (pid, tid).
    meta: FxHashMap<(IdentId, IdentId), ThreadMeta>,
    /// Collective metadata of the kernels that carry any.
    collective_args: FxHashMap<EventId, CollectiveArgs>,
    /// Facts about the trace as a whole.
    info: TraceInfo,
    /// Non-fatal problems noticed while loading.
    warnings: Vec<String>,
    /// XLA modules and statistics (JAX profiles only).
    xla: Option<Box<xla::XlaData>>,
    /// Exact dispatch records (rocprofv3 only).
    /// Shared: a report's deferred `kernel_details` reads them while it
    /// is written, after the trace is gone.
    dispatches: Option<std::sync::Arc<dispatch::DispatchData>>,
    /// Slices of a Perfetto-style trace (rocprofv3 `.pftrace` or its JSON).
    perfetto: Option<Box<perfetto::PerfettoData>>,
}

impl Trace {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.slots.as_ref().map_or(self.events.len(), Vec::len)
    }

    /// Number of events read from the input: later ones were appended
    /// (copies of a capture trace's events, synthetic events).
    pub fn loaded_len(&self) -> usize {
        self.loaded
    }

    /// True when the trace holds no event.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The event `id`.
    #[inline]
    pub fn event(&self, id: EventId) -> &Event {
        match &self.slots {
            None => &self.events[id.index()],
            Some(slots) => {
                let slot = slots[id.index()];
                if slot < STUB_SLOT {
                    &self.events[slot as usize]
                } else {
                    &STUB_EVENTS[(slot - STUB_SLOT) as usize]
                }
            }
        }
    }

    /// The event `id`, to change it (a stub becomes a kept event first).
    fn event_mut(&mut self, id: EventId) -> &mut Event {
        let Some(slots) = &mut self.slots else {
            return &mut self.events[id.index()];
        };
        let slot = &mut slots[id.index()];
        if *slot >= STUB_SLOT {
            self.events.push(STUB_EVENTS[(*slot - STUB_SLOT) as usize]);
            *slot = (self.events.len() - 1) as u32;
        }
        &mut self.events[*slot as usize]
    }

    /// Appends an event; its id.
    fn push_event(&mut self, e: Event) -> EventId {
        let id = EventId::new(self.len());
        if let Some(slots) = &mut self.slots {
            slots.push(self.events.len() as u32);
        }
        self.events.push(e);
        id
    }

    /// Appends a stub of category `cat` (see `slots`); its id.
    fn push_stub(&mut self, cat: Cat) -> EventId {
        let id = EventId::new(self.len());
        self.slots_reserved(0).push(STUB_SLOT + cat as u32);
        id
    }

    /// The `slots` column, made (every event so far is kept: the identity)
    /// when there is none, with room for `more` entries beyond the events
    /// so far (nothing happens when memory says no).
    fn slots_reserved(&mut self, more: usize) -> &mut Vec<u32> {
        let n = self.events.len();
        let slots = self.slots.get_or_insert_with(|| {
            let mut identity = Vec::with_capacity(n.max(self.events.capacity()));
            identity.extend(0..n as u32);
            identity
        });
        let _ = slots.try_reserve(more);
        slots
    }

    /// Number of kept events (the others are stubs).
    pub(crate) fn kept_len(&self) -> usize {
        self.events.len()
    }

    /// For each event id, its position among the kept events, or
    /// [`NOT_KEPT`] for a stub; None when no event is a stub (the position
    /// is the id). Per-event tables that stubs never use index by it.
    pub(crate) fn kept_positions(&self) -> Option<Vec<u32>> {
        let slots = self.slots.as_ref()?;
        Some(
            slots
                .iter()
                .map(|&s| if s < STUB_SLOT { s } else { NOT_KEPT })
                .collect(),
        )
    }

    /// The kept events, in no promised order (for changes that apply to
    /// every event of some categories; stubs have no name or times).
    fn kept_events_mut(&mut self) -> impl Iterator<Item = &mut Event> {
        self.events.iter_mut()
    }

    /// Every event with its id, in arena order.
    pub fn events(
        &self,
    ) -> impl DoubleEndedIterator<Item = (EventId, &Event)> + ExactSizeIterator + Clone + '_ {
        self.ids().map(move |i| (i, self.event(i)))
    }

    /// Every event id, in arena order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = EventId> + ExactSizeIterator + Clone {
        (0..self.len()).map(EventId::new)
    }

    /// The event's name (empty when it has none).
    #[inline]
    pub fn name(&self, id: EventId) -> &str {
        self.name_of(self.event(id))
    }

    /// The name of an event of this trace (empty when it has none).
    #[inline]
    pub fn name_of(&self, e: &Event) -> &str {
        e.name.map_or("", |s| self.strings.get(s))
    }

    /// The string behind `id`.
    #[inline]
    pub fn string(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    /// The string table.
    pub fn strings(&self) -> &Interner {
        &self.strings
    }

    /// The event's args record, if any.
    #[inline]
    pub fn args(&self, id: EventId) -> Option<Args> {
        self.event(id).args.map(|a| self.args.get(a))
    }

    /// The parsed argument value `id`.
    #[inline]
    pub fn value(&self, id: ValueId) -> &ArgValue {
        &self.values[id.index()]
    }

    /// The event's recorded op arguments (all `None` when it has none).
    pub fn op_args(&self, id: EventId) -> OpArgs<'_> {
        match self.args(id) {
            None => OpArgs::default(),
            Some(a) => {
                let v = |h: Option<ValueId>| h.map(|h| self.value(h));
                OpArgs {
                    dims: v(a.input_dims),
                    types: v(a.input_type),
                    strides: v(a.input_strides),
                    concrete: v(a.concrete_inputs),
                }
            }
        }
    }

    /// The collective metadata of a kernel, when it carries any.
    pub fn collective_args(&self, id: EventId) -> Option<&CollectiveArgs> {
        self.collective_args.get(&id)
    }

    /// True when some kernel carries collective metadata.
    pub fn has_collective_args(&self) -> bool {
        !self.collective_args.is_empty()
    }

    /// The flow id of a flow start/end event.
    pub fn flow_id(&self, id: EventId) -> Option<i64> {
        self.flow_ids.get(id)
    }

    /// How many events carry a flow id.
    pub fn flow_count(&self) -> usize {
        self.flow_ids.events.len()
    }

    /// Every event with a flow id, and the id, in event order (a walk, not
    /// a search per event).
    pub fn flows(&self) -> impl Iterator<Item = (EventId, i64)> + '_ {
        self.flow_ids
            .events
            .iter()
            .copied()
            .zip(self.flow_ids.ids.iter().copied())
    }

    /// The pid/tid value behind `id`.
    pub fn ident(&self, id: IdentId) -> &Ident {
        &self.idents[id.index()]
    }

    /// The interned id of a pid/tid value, if it occurs in the trace.
    pub fn find_ident(&self, v: &Ident) -> Option<IdentId> {
        self.idents.iter().position(|i| i == v).map(IdentId::new)
    }

    /// The interned id of an integer ident, if that value occurs in the trace.
    pub fn int_ident(&self, v: i64) -> Option<IdentId> {
        self.find_ident(&Ident::Int(v))
    }

    /// The metadata record for (pid, tid), if any.
    pub fn thread_meta(&self, pid: IdentId, tid: IdentId) -> Option<&ThreadMeta> {
        self.meta.get(&(pid, tid))
    }

    /// Facts about the trace as a whole.
    pub fn info(&self) -> &TraceInfo {
        &self.info
    }

    /// The XLA modules and statistics of a JAX profile.
    pub fn xla(&self) -> Option<&xla::XlaData> {
        self.xla.as_deref()
    }

    /// The exact dispatch records of a rocprofv3 trace.
    pub fn dispatches(&self) -> Option<&dispatch::DispatchData> {
        self.dispatches.as_deref()
    }

    /// The slices of a Perfetto-style trace.
    pub fn perfetto(&self) -> Option<&perfetto::PerfettoData> {
        self.perfetto.as_deref()
    }

    /// The dispatch records, shared (see [`Trace::dispatches`]).
    pub fn shared_dispatches(&self) -> Option<std::sync::Arc<dispatch::DispatchData>> {
        self.dispatches.clone()
    }

    /// Non-fatal problems noticed while loading.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_ids_by_event() {
        let mut f = FlowIds::default();
        for (e, id) in [(3, 30), (7, 70), (5, 50), (7, 71)] {
            f.insert(EventId::new(e), id);
        }
        let got: Vec<Option<i64>> = (0..9).map(|e| f.get(EventId::new(e))).collect();
        let want = [
            None,
            None,
            None,
            Some(30),
            None,
            Some(50),
            None,
            Some(71),
            None,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn stub_events_are_indexed_by_category() {
        for (i, &cat) in CATS.iter().enumerate() {
            assert_eq!(cat as usize, i);
            assert_eq!(STUB_EVENTS[i].cat, cat);
        }
    }

    #[test]
    fn collective_names() {
        assert!(is_collective_name("ncclKernel_AllReduce_RING_LL_Sum_float"));
        assert!(is_collective_name("RCCL_x"));
        assert!(is_collective_name(
            "void sglang::Cross_Device_Reduce_2stage"
        ));
        assert!(!is_collective_name("gemm_kernel"));
    }
}
