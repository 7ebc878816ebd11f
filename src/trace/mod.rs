//! The trace data model: one flat arena of events addressed by `u32` index,
//! with names interned once.
//!
//! An event's index in [`Trace::events`] is its index in the file's
//! `traceEvents` array, which is also the reference's `UID`.

pub mod args;
pub mod handle;
pub mod needs;
pub mod tree;

use std::collections::HashMap;

use rustc_hash::FxHashMap;

/// Marker for "no value" in `u32` handle fields.
pub const NONE: u32 = u32::MAX;
/// Marker for "no value" in the integer argument fields of [`Args`].
pub const NO_INT: i64 = i64::MIN;

/// Handle of an interned string.
pub type StrId = u32;

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
        let id = self.strings.len() as StrId;
        self.strings.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned, without adding it.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.map.get(s).copied()
    }

    /// The string behind `id`; the empty string for [`NONE`].
    pub fn get(&self, id: StrId) -> &str {
        if id == NONE {
            ""
        } else {
            &self.strings[id as usize]
        }
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
    /// Any other category.
    Other,
    /// No `cat` field.
    Missing,
}

impl Cat {
    /// Classifies a `cat` string (exact, case-sensitive, as the reference does).
    pub fn parse(s: &str) -> Cat {
        match s {
            "cpu_op" => Cat::CpuOp,
            "cuda_runtime" => Cat::CudaRuntime,
            "cuda_driver" => Cat::CudaDriver,
            "python_function" => Cat::PythonFunction,
            "kernel" => Cat::Kernel,
            "gpu_memcpy" => Cat::GpuMemcpy,
            "gpu_memset" => Cat::GpuMemset,
            "ac2g" => Cat::Ac2g,
            "user_annotation" => Cat::UserAnnotation,
            "gpu_user_annotation" => Cat::GpuUserAnnotation,
            _ => Cat::Other,
        }
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

/// Handle of an interned [`Ident`].
pub type IdentId = u32;

/// One trace event, compact. Times are microseconds as written in the file.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    /// `ts`, or NaN when absent.
    pub ts: f64,
    /// `dur`, or NaN when absent.
    pub dur: f64,
    /// Interned `name` ([`NONE`] when absent).
    pub name: StrId,
    /// Interned `pid`.
    pub pid: IdentId,
    /// Interned `tid`.
    pub tid: IdentId,
    /// Index into [`Trace::args`], or [`NONE`] when the event has no `args`.
    pub args: u32,
    /// Category.
    pub cat: Cat,
    /// Phase.
    pub ph: Phase,
    /// True when `dur` was written as a JSON integer.
    pub dur_is_int: bool,
}

impl Event {
    /// `ts + dur`, the end time used by every interval computation.
    #[inline]
    pub fn t_end(&self) -> f64 {
        self.ts + self.dur
    }
}

/// The `args` fields the passes read. Integer fields use [`NO_INT`] for
/// "absent"; shape-like fields keep their JSON text, interned, and are
/// turned into Python reprs only by the passes that print them.
#[derive(Debug, Clone, Copy)]
pub struct Args {
    /// `args.correlation`.
    pub correlation: i64,
    /// `args["External id"]`.
    pub external_id: i64,
    /// `args.stream`.
    pub stream: i64,
    /// `args["Sequence number"]`.
    pub sequence: i64,
    /// `args["Input Dims"]` JSON text.
    pub input_dims: StrId,
    /// `args["Input type"]` JSON text.
    pub input_type: StrId,
    /// `args["Input Strides"]` JSON text.
    pub input_strides: StrId,
    /// `args["Concrete Inputs"]` JSON text.
    pub concrete_inputs: StrId,
    /// `args.kernel_file` JSON text.
    pub kernel_file: StrId,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            correlation: NO_INT,
            external_id: NO_INT,
            stream: NO_INT,
            sequence: NO_INT,
            input_dims: NONE,
            input_type: NONE,
            input_strides: NONE,
            concrete_inputs: NONE,
            kernel_file: NONE,
        }
    }
}

/// Process and thread names from `ph: "M"` events.
#[derive(Debug, Clone, Default)]
pub struct ThreadMeta {
    /// `process_name` (`args.name`).
    pub process_name: Option<String>,
    /// `process_labels` (`args.labels`).
    pub process_labels: Option<String>,
    /// `thread_name` (`args.name`).
    pub thread_name: Option<String>,
}

/// A loaded trace: the event arena plus its side tables.
#[derive(Debug, Default)]
pub struct Trace {
    /// All events of `traceEvents`, in file order (index = UID).
    pub events: Vec<Event>,
    /// Argument records referenced by [`Event::args`].
    pub args: Vec<Args>,
    /// Flow ids of `s`/`f` events, by event index (only flows carry one).
    pub flow_ids: HashMap<u32, i64>,
    /// Interned strings (names, argument JSON texts).
    pub strings: Interner,
    /// Interned pid/tid values.
    pub idents: Vec<Ident>,
    /// Metadata by (pid, tid).
    pub meta: HashMap<(IdentId, IdentId), ThreadMeta>,
    /// Collective metadata (`Collective name`, `Process Group Name`, …) of
    /// the kernel events that carry any, by event index.
    pub collective_args: FxHashMap<u32, crate::load::collectives::CollectiveArgs>,
    /// Top-level keys other than `traceEvents`, as JSON text.
    pub top_level: Vec<(String, String)>,
    /// Non-fatal problems noticed while loading.
    pub warnings: Vec<String>,
    /// Uncompressed size of the JSON document in bytes.
    pub json_bytes: u64,
}

impl Trace {
    /// The event's name.
    pub fn name(&self, ev: u32) -> &str {
        self.strings.get(self.events[ev as usize].name)
    }

    /// The event's args record, if any.
    pub fn args_of(&self, ev: u32) -> Option<&Args> {
        let a = self.events[ev as usize].args;
        (a != NONE).then(|| &self.args[a as usize])
    }

    /// The interned id of an integer ident, if that value occurs in the trace.
    pub fn int_ident(&self, v: i64) -> Option<IdentId> {
        self.idents
            .iter()
            .position(|i| *i == Ident::Int(v))
            .map(|p| p as IdentId)
    }

    /// The metadata record for (pid, tid), if any.
    pub fn thread_meta(&self, pid: IdentId, tid: IdentId) -> Option<&ThreadMeta> {
        self.meta.get(&(pid, tid))
    }
}
