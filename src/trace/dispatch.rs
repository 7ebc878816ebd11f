//! What dispatch-level profilers (rocprofv3) record beyond events: each
//! GPU dispatch's exact integer times and launch geometry. Format-free:
//! the rocprofv3 decoder fills it in, the rocprof report reads it.

/// The dispatch side of a trace.
#[derive(Debug, Clone, Default)]
pub struct DispatchData {
    /// Start of profiling (ns, the profiler's clock), when recorded.
    pub init_time_ns: Option<i64>,
    /// End of profiling (ns), when recorded.
    pub fini_time_ns: Option<i64>,
    /// Distinct kernel names; [`KernelDispatch::name`] indexes them (one
    /// copy per name, not per dispatch).
    pub names: Vec<String>,
    /// Kernel dispatches, in input order.
    pub kernels: Vec<KernelDispatch>,
    /// Memory copies, in input order.
    pub copies: Vec<MemoryCopy>,
}

impl DispatchData {
    /// The kernel name of a dispatch.
    pub fn name(&self, k: &KernelDispatch) -> &str {
        &self.names[k.name as usize]
    }
}

/// One kernel dispatch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelDispatch {
    /// Index of the kernel name in [`DispatchData::names`] (as the profiler
    /// wrote it; rocprofv3 truncates templates).
    pub name: u32,
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Stream id.
    pub stream: i64,
    /// Dispatch id.
    pub dispatch_id: i64,
    /// Grid size x, y, z.
    pub grid: [i64; 3],
    /// Workgroup size x, y, z.
    pub block: [i64; 3],
    /// Agent (device) id.
    pub agent_id: i64,
    /// Host thread that dispatched it.
    pub thread_id: i64,
}

impl KernelDispatch {
    /// Duration, ns.
    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// One memory copy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryCopy {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
}
